"""The bench report's formats: text, CSV (safe to open) and HTML rendered by a real headless
Chromium (the page needs nothing but itself), from a report with hostile text in it."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from chromium_support import chromium, needs_chromium

from reprobridge_sdk.bench.harness import BenchOptions
from reprobridge_sdk.bench.html import STUDY, render_html
from reprobridge_sdk.bench.report import (
    CSV_COLUMNS,
    CSV_TABLES,
    PAIRED_COLUMNS,
    RATE_COLUMNS,
    build_report,
    report_csv,
    report_text,
)
from reprobridge_sdk.model.bench import BenchReport, BenchRun, Usage

HOSTILE = "=cmd|' /C calc'!A0 <script>alert(1)</script>\x1b]52;c;cHdu\x07"


def _run(agent: str, variant: str, task: str, verified: bool, repeat: int = 0) -> BenchRun:
    return BenchRun(
        submission="toy",
        artifact="toy-study",
        task=task,
        variant=variant,
        repeat=repeat,
        agent=agent,
        outcome="finished",
        exit_code=0,
        seconds=2.0,
        support="log-backed",
        verdict="compatible" if verified else "incompatible",
        icml="verified" if verified else "falsified",
        value=90.1,
        extracted=90.1,
        progress=1.0 if verified else 0.5,
        folder=f"runs/toy/{task}/{variant}/r{repeat}",
    )


def _report() -> BenchReport:
    runs = []
    for index in range(12):
        task = f"t{index}"
        runs.append(_run(HOSTILE, "raw", task, verified=index < 3))
        runs.append(_run(HOSTILE, "refined", task, verified=index < 11))
    return build_report(
        runs,
        suite="suite.toml",
        suite_sha256="0" * 64,
        agents=[HOSTILE],
        options=BenchOptions(variants=("raw", "refined")),
        findings=[],
    )


def test_the_report_counts_rates_intervals_and_pairs() -> None:
    report = _report()
    raw, refined = report.rates
    assert (raw.runs, raw.successes, refined.successes) == (12, 3, 11)
    assert raw.wilson is not None and refined.wilson is not None
    assert raw.wilson.high < refined.wilson.low + 0.2
    assert refined.seconds_per_success == pytest.approx(24 / 11)
    (pair,) = report.paired
    assert (pair.a, pair.b, pair.only_a, pair.only_b, pair.both) == ("refined", "raw", 8, 0, 3)
    assert pair.p_value == pytest.approx(2 * 0.5**8) and pair.method == "exact"
    assert pair.difference == pytest.approx(8 / 12)


def test_text_and_csv_are_safe_to_show_and_open() -> None:
    report = _report()
    text = report_text(report)
    assert "\x1b" not in text and "\x07" not in text
    raw = report_csv(report)
    assert raw.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(raw.removeprefix("\ufeff"))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == 1 + len(report.runs)
    assert all(row[0].startswith("'=") for row in rows[1:])  # no formula runs
    assert "\x1b" not in raw


@pytest.mark.parametrize("executor", [None, "dask-local", "slurm"])
def test_the_csv_names_the_executor_on_every_row(executor: str | None) -> None:
    """report.json, the text and the HTML name the executor; so does every CSV row."""
    base = _report()
    report = build_report(
        list(base.runs),
        suite="suite.toml",
        suite_sha256="0" * 64,
        agents=[HOSTILE],
        options=BenchOptions(variants=("raw", "refined"), executor=executor),
        findings=[],
    )
    rows = list(csv.DictReader(io.StringIO(report_csv(report).removeprefix("\ufeff"))))
    assert {row["executor"] for row in rows} == {executor or "local"}
    assert len(rows) == len(report.runs)


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


@needs_chromium
def test_the_html_page_renders_in_chromium(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render_html(_report()), encoding="utf-8")
    done = chromium(page, tmp_path / "profile", "--dump-dom")
    dom = _Dom()
    dom.feed(done)
    tags = [tag for tag, _ in dom.tags]
    assert "script" not in tags  # the agent's text stayed text
    assert "<script>alert(1)</script>" in done.replace("&lt;", "<").replace("&gt;", ">")
    bars = [a for t, a in dom.tags if t == "rect" and a.get("class") == "bar"]
    study = [a for t, a in dom.tags if t == "rect" and a.get("class") == "study"]
    assert len(bars) == 2 and len(study) == len(STUDY)
    assert [t for t, a in dom.tags if t == "line" and a.get("class") == "whisker"]
    widths = [int(a["width"]) for a in bars]
    assert widths[0] < widths[1]  # raw 25% is shorter than refined 91.7%
    rows = dict.fromkeys(("rates", "paired", "runs"), 0)
    current = None
    for tag, attrs in dom.tags:
        if tag == "table":
            current = attrs.get("id")
        elif tag == "tr" and current in rows:
            rows[current] += 1
    assert rows == {"rates": 3, "paired": 2, "runs": 25}  # a header row each


def test_the_reference_reporter_passes_the_conformance_cases() -> None:
    suite = Path(__file__).resolve().parents[2] / "validators" / "bench-cases"
    done = subprocess.run(
        [sys.executable, str(suite / "run_bench_suite.py")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert "0 of 4 case(s) failed" in done.stdout


def test_a_reporter_that_miscounts_fails_the_cases(tmp_path: Path) -> None:
    """A reporter that counts every finished run as a success is caught."""
    liar = tmp_path / "liar.py"
    liar.write_text(
        "import json, sys\n"
        "from reprobridge_sdk.bench.report import load_report, rebuild\n"
        "r = load_report(sys.argv[1])\n"
        "for run in r.runs:\n"
        "    run.icml = 'verified' if run.outcome == 'finished' else run.icml\n"
        "print(json.dumps(rebuild(r).model_dump(mode='json')))\n",
        encoding="utf-8",
    )
    suite = Path(__file__).resolve().parents[2] / "validators" / "bench-cases"
    done = subprocess.run(
        [
            sys.executable,
            str(suite / "run_bench_suite.py"),
            "--command",
            f"{sys.executable} {liar} {{input}}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1
    assert "FAIL wilson-exact-mcnemar" in done.stdout


def test_bench_report_rerenders_a_report(tmp_path: Path) -> None:
    source = tmp_path / "report.json"
    source.write_text(_report().model_dump_json(), encoding="utf-8")
    for fmt in ("json", "csv", "html"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "reprobridge_sdk",
                "bench",
                "report",
                str(source),
                "--format",
                fmt,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert done.stdout
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": "no"}', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "bench", "report", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "N004" in done.stdout


def test_the_report_names_its_executor_in_every_form(tmp_path: Path) -> None:
    report = _report()
    assert report.executor == "local"  # no --executor: this machine's processes
    slurm = build_report(
        report.runs,
        suite="suite.toml",
        suite_sha256="0" * 64,
        agents=report.agents,
        options=BenchOptions(variants=("raw", "refined"), executor="slurm"),
        findings=[],
    )
    assert slurm.model_dump(mode="json")["executor"] == "slurm"
    assert "executor slurm, sandbox" in report_text(slurm).splitlines()[0]
    assert "executor slurm, sandbox" in render_html(slurm)
    # a report another tool wrote is read back only with an executor the format knows
    hostile = slurm.model_dump(mode="json") | {"executor": "<script>x</script>"}
    source = tmp_path / "report.json"
    source.write_text(json.dumps(hostile), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "bench", "report", str(source)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and "N004" in done.stdout
    source.write_text(json.dumps(slurm.model_dump(mode="json")), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "bench", "report", str(source)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "executor slurm," in done.stdout


def _priced_report() -> BenchReport:
    """Two agents over six claims, raw and refined; ``b`` reports what it spent."""
    runs = []
    for index in range(6):
        task = f"t{index}"
        for agent, wins in (("a", {"raw": 1, "refined": 5}), ("b", {"raw": 0, "refined": 2})):
            for variant in ("raw", "refined"):
                run = _run(agent, variant, task, verified=index < wins[variant])
                if agent == "b":
                    run.usage = Usage(tokens=1000, cost=0.5, currency="USD", lines=1)
                runs.append(run)
    return build_report(
        runs,
        suite="suite.toml",
        suite_sha256="0" * 64,
        agents=["a", "b"],
        options=BenchOptions(variants=("raw", "refined")),
        findings=[],
    )


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))


def test_every_format_holds_rates_pairs_agents_landmarks_time_and_cost() -> None:
    """Issue 27: text, JSON, HTML and CSV each give the rate with its Wilson interval, the
    paired McNemar tests of variants and of agents, landmark progress, time and cost per
    success and the per-claim verdicts."""
    report = _priced_report()
    b_refined = next(s for s in report.rates if (s.agent, s.variant) == ("b", "refined"))
    assert b_refined.cost_per_success == pytest.approx(6 * 0.5 / 2)
    assert b_refined.wilson is not None
    text = report_text(report)
    row = next(line for line in text.splitlines() if line.startswith("b          refined"))
    assert row.split()[2:5] == ["6", "2", "33.3%"]
    assert "cost/success" in text and " 1.5 " in row  # 3.0 spent over 2 successes
    assert "refined - raw" in text and "agents (McNemar)" in text
    rates = _csv(report_csv(report, "rates"))
    assert tuple(rates[0]) == RATE_COLUMNS
    by = {(r["agent"], r["variant"]): r for r in rates}
    assert set(by) == {(a, v) for a in "ab" for v in ("raw", "refined")}
    cell = by[("b", "refined")]
    assert float(cell["rate"]) == pytest.approx(2 / 6)
    assert float(cell["wilson_low"]) == pytest.approx(b_refined.wilson.low)
    assert float(cell["wilson_high"]) == pytest.approx(b_refined.wilson.high)
    assert float(cell["cost_per_success"]) == pytest.approx(1.5)
    assert float(cell["seconds_per_success"]) == pytest.approx(6 * 2.0 / 2)
    assert float(cell["progress"]) == pytest.approx((2 * 1.0 + 4 * 0.5) / 6)
    assert by[("a", "raw")]["cost_per_success"] == ""  # a reported no cost
    paired = _csv(report_csv(report, "paired"))
    assert tuple(paired[0]) == PAIRED_COLUMNS
    kinds = {(r["kind"], r["agent"] or r["variant"], r["a"], r["b"]): r for r in paired}
    variants = kinds[("variants", "a", "refined", "raw")]
    assert (variants["only_a"], variants["only_b"], variants["method"]) == ("4", "0", "exact")
    assert float(variants["p_value"]) == pytest.approx(0.125)
    versus = kinds[("agents", "refined", "a", "b")]
    assert (versus["pairs"], versus["only_a"], versus["only_b"]) == ("6", "3", "0")
    runs = _csv(report_csv(report))
    assert {r["verdict"] for r in runs} == {"compatible", "incompatible"}
    assert {r["cost"] for r in runs if r["agent"] == "b"} == {"0.5"}
    page = render_html(report)
    assert 'id="versus"' in page and "cost/success" in page and ">1.5<" in page
    data = json.loads(report.model_dump_json())
    assert {c["task"] for c in data["claims"]} == {f"t{i}" for i in range(6)}


def test_bench_report_writes_a_csv_table(tmp_path: Path) -> None:
    """--table picks the CSV table (every table's columns: the test above)."""
    source = tmp_path / "report.json"
    source.write_text(_priced_report().model_dump_json(), encoding="utf-8")
    done = subprocess.run(
        [*_BENCH_REPORT, str(source), "--format", "csv", "--table", "paired"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = _csv(done.stdout)
    assert tuple(rows[0]) == CSV_TABLES["paired"]
    assert [r["kind"] for r in rows] == ["variants", "variants", "agents", "agents"]


_BENCH_REPORT = (sys.executable, "-m", "reprobridge_sdk", "bench", "report")
