"""``reprobridge bench run``: the harness runs real agents (the reference agents and hostile
scripts) in the sandbox over real artifacts; every ending is an outcome and none stops the
batch. The toy artifacts run in a second; the bundled example's oracle runs its scored
launcher (five seeds)."""

from __future__ import annotations

import csv
import http.server
import json
import shutil
import socketserver
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
import yaml
from chromium_support import CHROMIUM, chromium
from sandbox_support import needs_sandbox
from toy_study import make_artifact

from reprobridge_sdk.bench.harness import BenchOptions, Budget, run_bench
from reprobridge_sdk.bench.proxy import allowed
from reprobridge_sdk.bench.variants import VARIANTS
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.model.bench import BenchReport, BenchRun
from reprobridge_sdk.schema import generate_schema

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
TOY_EXAMPLE = EXAMPLE.parent / "toy-readme"

README = """\
# A toy study

```sh
python code/train.py --seed 0 --epochs 10 --out results/metrics-0.json
python code/train.py --seed 1 --epochs 10 --out results/metrics-1.json
python code/train.py --seed 2 --epochs 10 --out results/metrics-2.json
```
"""


def _toy(root: Path, ident: str, **options: object) -> Path:
    make_artifact(root, **options)
    data = yaml.safe_load((root / "rra.yaml").read_text("utf-8"))
    data["artifact"]["id"] = ident
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (root / "README.md").write_text(README, encoding="utf-8")
    return root


def _suite(folder: Path, entries: list[tuple[str, str, list[str] | None]]) -> Path:
    lines = ['batch_version = "1.0"']
    for ident, path, tasks in entries:
        lines += ["[[submission]]", f'id = "{ident}"', f'path = "{path}"']
        if tasks is not None:
            lines.append(f"tasks = {json.dumps(tasks)}")
    suite = folder / "suite.toml"
    suite.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return suite


@pytest.fixture(scope="module")
def toys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("suite")
    _toy(base / "toy-one", "toy-one")
    _toy(base / "toy-two", "toy-two", tasks=("acc",), launchers=("scored",))
    return base


def _rate(report: BenchReport, agent: str, variant: str) -> float:
    stat = next(s for s in report.rates if s.agent == agent and s.variant == variant)
    assert stat.rate is not None
    return stat.rate


@needs_sandbox
def test_reference_agents_give_the_expected_ordering(toys: Path, tmp_path: Path) -> None:
    """oracle >= readme on refined > readme on raw >= null, over the bundled example and the
    two test artifacts, in every format."""
    (toys / "digits-logreg").exists() or __import__("shutil").copytree(
        EXAMPLE, toys / "digits-logreg"
    )
    suite = _suite(
        toys,
        [
            ("digits", "digits-logreg", ["logreg-accuracy"]),
            ("toy-one", "toy-one", None),
            ("toy-two", "toy-two", None),
        ],
    )
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "bench",
            "run",
            "oracle",
            str(suite),
            "--also",
            "readme",
            "--also",
            "null",
            "-o",
            str(out),
            "--timeout",
            "600",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "report.json").read_text("utf-8"))
    jsonschema.validate(data, generate_schema("bench-report-1.0"))
    report = BenchReport.model_validate(data)
    assert report.sandbox and report.network == "none"
    assert len(report.runs) == 3 * 2 * 4  # agents x variants x (1 + 2 + 1 tasks)
    oracle, readme_refined = _rate(report, "oracle", "refined"), _rate(report, "readme", "refined")
    readme_raw, null = _rate(report, "readme", "raw"), _rate(report, "null", "raw")
    assert oracle >= readme_refined > readme_raw >= null
    assert oracle == 1.0 and null == 0.0 and _rate(report, "null", "refined") == 0.0
    # the example: the oracle verifies it from its own sandboxed runs
    digits = [r for r in report.runs if r.submission == "digits" and r.agent == "oracle"]
    assert {r.variant: r.icml for r in digits} == {"refined": "verified", "raw": "inconclusive"}
    assert all(r.outcome == "finished" for r in report.runs)
    paired = next(p for p in report.paired if p.agent == "readme" and p.a == "refined")
    assert (paired.b, paired.only_a, paired.only_b, paired.pairs) == ("raw", 3, 0, 4)
    assert paired.p_value == pytest.approx(0.25) and paired.method == "exact"
    versus = {(p.variant, p.a, p.b): p for p in report.versus}
    assert len(versus) == 2 * 3  # variants x pairs of agents
    assert versus[("refined", "oracle", "null")].only_a == 4
    assert versus[("refined", "readme", "null")].only_a == 3
    assert versus[("raw", "readme", "null")].pairs == 4
    stat = next(s for s in report.rates if s.agent == "oracle" and s.variant == "refined")
    assert stat.wilson is not None and stat.wilson.high == 1.0 and stat.wilson.low > 0.3
    assert stat.progress == 1.0 and stat.seconds_per_success is not None
    text = (out / "report.txt").read_text("utf-8")
    assert "refined - raw" in text and "95% Wilson" in text and "verified" in text
    with (out / "report.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(report.runs)
    assert {row["icml"] for row in rows if row["agent"] == "oracle"} >= {"verified"}
    page = (out / "report.html").read_text("utf-8")
    assert 'id="rates-chart"' in page and page.count('class="bar"') == 6


#: Places outside the workspace that are not under /tmp (the host's, were the sandbox open).
OUTSIDE = ("/usr/reprobridge-bench-outside.txt", "/reprobridge-bench-outside/x.txt")

HOSTILE = {
    # a results file without any log: unsupported, never verified
    "fabricate": """
import json, sys
from pathlib import Path
ws = Path(sys.argv[1])
(ws / "bench-results.json").write_text(json.dumps({"bench_results_version": "1.0",
    "results": [{"task": "acc", "value": 90.1}]}))
""",
    # edits the workspace's references to match a made-up log: the judge keeps its own copy
    "references": """
import json, sys, yaml
from pathlib import Path
ws = Path(sys.argv[1])
data = yaml.safe_load((ws / "rra.yaml").read_text())
for task in data["tasks"]:
    task["reference"] = {"observations": [{"value": 50.0 + i / 100, "provenance": {"source": "me"}}
                                          for i in range(5)]}
(ws / "rra.yaml").write_text(yaml.safe_dump(data))
runs = []
for seed in range(3):
    (ws / f"s{seed}.log").write_text("test accuracy: 50.0000\\n")
    runs.append({"log": f"s{seed}.log", "seed": seed})
(ws / "bench-results.json").write_text(json.dumps({"bench_results_version": "1.0",
    "results": [{"task": "acc", "value": 50.0, "runs": runs}]}))
""",
    # writes outside its workspace: refused by the sandbox (a path under /tmp lands in the
    # sandbox's own private /tmp, which ends with the run)
    "outside": """
import sys
from pathlib import Path
for target in sys.argv[2:]:
    try:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        Path(target).write_text("pwned")
        print("wrote", target)
    except OSError as exc:
        print("refused:", exc)
""",
    "hang": "import time\ntime.sleep(3600)\n",
    "flood": "import sys\nwhile True:\n    sys.stdout.write('x' * 4096 + '\\n')\n",
    "memory": "block = bytearray(2 << 30)\nprint(len(block))\n",
    "cpu": "while True:\n    pass\n",
    "crash": "raise SystemExit(3)\n",
    # reports a cost over its budget, then works on: stopped
    "spender": """
import json, sys, time
from pathlib import Path
with (Path(sys.argv[1]) / "bench-usage.jsonl").open("a") as channel:
    channel.write(json.dumps({"tokens": 10, "cost": 0.5}) + "\\n")
    channel.write(json.dumps({"tokens": 90, "cost": 4.5, "currency": "USD"}) + "\\n")
time.sleep(3600)
""",
    "link": """
import os, sys
from pathlib import Path
os.symlink("/etc/passwd", Path(sys.argv[1]) / "bench-results.json")
""",
}


@pytest.fixture(scope="module")
def hostile_report(
    toys: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[BenchReport, Path]:
    base = tmp_path_factory.mktemp("hostile")
    scripts = base / "agents"
    scripts.mkdir()
    for name, body in HOSTILE.items():
        (scripts / f"{name}.py").write_text(body, encoding="utf-8")
    secret = base / "host" / "outside.txt"
    out = base / "out"
    source = out / "agent-2" / "variants" / "toy" / "refined" / "workspace" / "rra.yaml"
    agents = []
    for name in HOSTILE:
        extra = f" {secret} {source} {' '.join(OUTSIDE)}" if name == "outside" else ""
        agents.append(f"{sys.executable} {scripts / name}.py {{workspace}}{extra}")
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    options = BenchOptions(
        variants=("refined",),
        budget=Budget(timeout=20, cpu=2, memory=512 << 20, max_output=1 << 20, max_cost=1.0),
        visible=(str(scripts),),
    )
    report = run_bench(agents, suite, out, options)
    assert not secret.exists()
    assert not any(Path(path).exists() for path in OUTSIDE)
    return report, out


@needs_sandbox
def test_an_agent_that_crashes_ends_its_run_with_a101(toys: Path, tmp_path: Path) -> None:
    """In the test's own call (the hostile batch runs in a fixture, which the code census does
    not count): a crashing agent's run ends as ``crash`` with A101, and the report is made."""
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "crash.py").write_text(HOSTILE["crash"], encoding="utf-8")
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    options = BenchOptions(variants=("refined",), budget=Budget(timeout=60), visible=(str(agents),))
    agent = f"{sys.executable} {agents / 'crash.py'} {{workspace}}"
    report = run_bench([agent], suite, tmp_path / "out", options)
    [run] = report.runs
    assert run.outcome == "crash"
    # it ended without finishing (A101) and left no results file (A102)
    assert [f.code for f in run.findings] == ["A101", "A102"]


@needs_sandbox
def test_the_suites_cost_budget_stops_a_spender(toys: Path, tmp_path: Path) -> None:
    """budget.cost of the suite (the committee's batch file) caps what the agent reports, as
    --max-cost does, and wins over it; a negative cost is refused with the suite (A091)."""
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "spender.py").write_text(HOSTILE["spender"], encoding="utf-8")
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    text = suite.read_text("utf-8").replace(
        "[[submission]]", "[defaults]\nbudget = {time = 60, cost = 1.0}\n[[submission]]", 1
    )
    suite.write_text(text, encoding="utf-8")
    options = BenchOptions(
        variants=("refined",), budget=Budget(max_cost=100.0), visible=(str(agents),)
    )
    agent = f"{sys.executable} {agents / 'spender.py'} {{workspace}}"
    [run] = run_bench([agent], suite, tmp_path / "out", options).runs
    assert (run.outcome, run.usage.cost) == ("over-cost", 5.0)
    assert run.seconds < 60
    suite.write_text(text.replace("cost = 1.0", "cost = -1"), encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        run_bench([agent], suite, tmp_path / "again", options)
    assert [f.code for f in caught.value.findings] == ["A091"]
    assert caught.value.findings[0].path == "/defaults/budget/cost"


#: Fills /tmp (a tmpfs: memory that RLIMIT_AS does not count) with up to 1 GiB, then says
#: how much it wrote and where its temporary folder is.
TMP_FILLER = """
import json, os, sys, tempfile
from pathlib import Path
written, chunk = 0, b"x" * (1 << 20)
try:
    with open("/tmp/fill", "wb") as sink:
        while written < (1 << 30):
            sink.write(chunk)
            sink.flush()
            written += len(chunk)
except OSError as exc:
    print("refused:", exc.strerror)
report = {"written": written, "tempdir": tempfile.gettempdir()}
(Path(sys.argv[1]) / "tmp.json").write_text(json.dumps(report))
"""


@needs_sandbox
def test_an_agent_cannot_fill_memory_through_tmp(toys: Path, tmp_path: Path) -> None:
    """/tmp is a tmpfs of the memory budget's size (RLIMIT_AS does not count it), and the
    agent's TMPDIR is a folder of its workspace, on disk."""
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "filler.py").write_text(TMP_FILLER, encoding="utf-8")
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    budget = Budget(timeout=120, memory=256 << 20)
    options = BenchOptions(variants=("refined",), budget=budget, visible=(str(agents),))
    agent = f"{sys.executable} {agents / 'filler.py'} {{workspace}}"
    [run] = run_bench([agent], suite, tmp_path / "out", options).runs
    assert run.outcome == "finished"
    workspace = tmp_path / "out" / run.folder / "workspace"
    seen = json.loads((workspace / "tmp.json").read_text("utf-8"))
    assert 0 < seen["written"] <= 256 << 20
    assert seen["tempdir"] == str(workspace / ".tmp")


def _of(report: BenchReport, name: str) -> BenchRun:
    return next(run for run in report.runs if f"/{name}.py" in run.agent)


@needs_sandbox
def test_every_hostile_agent_gets_its_outcome_and_the_batch_goes_on(
    hostile_report: tuple[BenchReport, Path],
) -> None:
    report, _out = hostile_report
    assert len(report.runs) == len(HOSTILE)  # none stopped the batch
    outcomes = {name: _of(report, name).outcome for name in HOSTILE}
    assert outcomes == {
        "fabricate": "finished",
        "references": "finished",
        "outside": "wrote-outside",
        "hang": "timeout",
        "flood": "flood",
        "memory": "over-memory",
        "cpu": "cpu-limit",
        "crash": "crash",
        "spender": "over-cost",
        "link": "finished",
    }
    spender = _of(report, "spender")
    assert (spender.usage.tokens, spender.usage.cost, spender.usage.currency) == (100, 5.0, "USD")
    assert spender.seconds < 20  # stopped for its cost, before its timeout
    for name in ("outside", "hang", "flood", "memory", "cpu", "crash", "spender"):
        assert _of(report, name).findings[0].code == "A101"
    assert all(run.icml != "verified" for run in report.runs)


@needs_sandbox
def test_a_fabricated_result_is_unsupported(hostile_report: tuple[BenchReport, Path]) -> None:
    run = _of(hostile_report[0], "fabricate")
    assert (run.support, run.verdict, run.icml) == ("no-logs", "unsupported", "inconclusive")
    assert [f.code for f in run.findings] == ["A076"]


@needs_sandbox
def test_edited_references_have_no_effect(
    hostile_report: tuple[BenchReport, Path], toys: Path
) -> None:
    run = _of(hostile_report[0], "references")
    assert run.support == "log-backed" and run.extracted == 50.0
    assert (run.verdict, run.icml) == ("incompatible", "falsified")
    assert "50.0" not in (toys / "toy-one" / "rra.yaml").read_text("utf-8")


@needs_sandbox
def test_writes_outside_are_refused(hostile_report: tuple[BenchReport, Path]) -> None:
    report, out = hostile_report
    run = _of(report, "outside")
    log = (out / run.folder / "agent.log").read_text("utf-8")
    assert log.count("Read-only file system") == len(OUTSIDE)
    source = out / "agent-2" / "variants" / "toy" / "refined" / "workspace" / "rra.yaml"
    assert "pwned" not in source.read_text("utf-8")


@needs_sandbox
def test_a_flood_is_cut_at_the_cap(hostile_report: tuple[BenchReport, Path]) -> None:
    report, out = hostile_report
    run = _of(report, "flood")
    assert (out / run.folder / "agent.log").stat().st_size <= 1 << 20


@needs_sandbox
def test_a_results_file_that_is_a_link_is_not_read(
    hostile_report: tuple[BenchReport, Path],
) -> None:
    run = _of(hostile_report[0], "link")
    assert run.verdict == "unsupported" and [f.code for f in run.findings] == ["A102"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[int]:
    with socketserver.TCPServer(("127.0.0.1", 0), _Quiet) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield server.server_address[1]
        server.shutdown()


NET = """
import socket, sys
from pathlib import Path
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5).close()
    Path(sys.argv[1], "net.txt").write_text("reached")
except OSError as exc:
    Path(sys.argv[1], "net.txt").write_text(f"blocked: {exc}")
"""


@needs_sandbox
@pytest.mark.parametrize(("policy", "expected"), [("none", "blocked"), ("open", "reached")])
def test_network_policy_against_a_loopback_server(
    toys: Path, tmp_path: Path, loopback: int, policy: str, expected: str
) -> None:
    script = tmp_path / "net.py"
    script.write_text(NET, encoding="utf-8")
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    agent = f"{sys.executable} {script} {{workspace}} {loopback}"
    options = BenchOptions(variants=("refined",), network=policy, visible=(str(script),))
    report = run_bench([agent], suite, tmp_path / "out", options)
    assert report.network == policy
    run = report.runs[0]
    text = (tmp_path / "out" / run.folder / "workspace" / "net.txt").read_text("utf-8")
    assert text.startswith(expected)


PROXIED = """
import os, socket, sys, urllib.error, urllib.request
from pathlib import Path
out = []
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[2]}/", timeout=10) as answer:
        out.append(f"proxied {answer.status}")
except urllib.error.HTTPError as exc:
    out.append(f"proxied {exc.code}")
except OSError as exc:
    out.append(f"proxied failed: {exc}")
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=5).close()
    out.append("direct reached")
except OSError:
    out.append("direct blocked")
Path(sys.argv[1], "net.txt").write_text("\\n".join(out))
"""


@needs_sandbox
@pytest.mark.parametrize(
    ("hosts", "expected"),
    [(("127.0.0.1",), "proxied 200"), ((".pypi.org", "files.pythonhosted.org"), "proxied 403")],
)
def test_allow_policy_lets_through_only_its_hosts(
    toys: Path, tmp_path: Path, loopback: int, hosts: tuple[str, ...], expected: str
) -> None:
    """The allow-list proxy against a loopback server: an allowed host is reached through
    the proxy, another is refused (403); a direct connection never leaves the sandbox."""
    script = tmp_path / "proxied.py"
    script.write_text(PROXIED, encoding="utf-8")
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    agent = f"{sys.executable} {script} {{workspace}} {loopback}"
    options = BenchOptions(
        variants=("refined",), network="allow", allow_hosts=hosts, visible=(str(script),)
    )
    report = run_bench([agent], suite, tmp_path / "out", options)
    assert report.network == "allow" and report.allow_hosts == list(hosts)
    run = report.runs[0]
    lines = (tmp_path / "out" / run.folder / "workspace" / "net.txt").read_text("utf-8")
    assert lines.splitlines() == [expected, "direct blocked"]
    assert run.proxy is not None
    assert (run.proxy.allowed, run.proxy.refused) == ((1, 0) if "200" in expected else (0, 1))


def test_the_allow_policy_needs_hosts_and_the_sandbox(toys: Path, tmp_path: Path) -> None:
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    for options in (
        BenchOptions(network="allow"),
        BenchOptions(network="none", allow_hosts=("pypi.org",)),
        BenchOptions(network="allow", allow_hosts=("pypi.org",), sandbox=False),
    ):
        with pytest.raises(UsageError) as caught:
            run_bench(["null"], suite, tmp_path / "out", options)
        assert caught.value.findings[0].code == "N004"


@needs_sandbox
def test_an_unknown_task_is_named_and_the_rest_is_benched(toys: Path, tmp_path: Path) -> None:
    suite = _suite(toys, [("toy", "toy-one", ["acc", "nope"])])
    report = run_bench(["null"], suite, tmp_path / "out", BenchOptions(variants=("raw",)))
    assert [f.code for f in report.findings] == ["A100"]
    assert [run.task for run in report.runs] == ["acc"]
    assert report.runs[0].findings[0].code == "A102"  # the null agent leaves nothing


@needs_sandbox
def test_the_guides_toy_example_shows_what_refined_adds_for_readme(tmp_path: Path) -> None:
    """The bundled example gives readme nothing on any variant (its guide has no literal
    command that runs from the root); examples/toy-readme, the guide's second artifact, shows
    the difference: readme verifies acc from refined (its README's commands, re-read with the
    artifact's extractor) and nothing from raw (the real upstream, from the bundle)."""
    shutil.copytree(TOY_EXAMPLE, tmp_path / "toy-readme")
    suite = _suite(tmp_path, [("toy", "toy-readme", None)])
    options = BenchOptions(variants=("raw", "refined"))
    report = run_bench(["readme"], suite, tmp_path / "out", options)
    verified = {(r.variant, r.task): r.icml == "verified" for r in report.runs}
    assert verified == {
        ("raw", "acc"): False,
        ("raw", "f1"): False,
        ("refined", "acc"): True,
        ("refined", "f1"): False,
    }
    record = json.loads(
        (tmp_path / "out" / "variants" / "toy" / "raw" / "variant.json").read_text()
    )
    assert record["source"] == "upstream-bundle"


def test_a_bad_suite_or_out_folder_is_a_usage_error(toys: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('batch_version = "1.0"\n[[submission]]\nid = "x"\npaht = "y"\n')
    with pytest.raises(UsageError) as caught:
        run_bench(["null"], bad, tmp_path / "out", BenchOptions(sandbox=False))
    assert caught.value.findings[0].code == "A091"
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep")
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    with pytest.raises(UsageError, match="not empty"):
        run_bench(["null"], suite, taken, BenchOptions(sandbox=False))
    assert (taken / "mine.txt").read_text() == "keep"


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@needs_sandbox
def test_variants_are_the_same_bytes_in_every_bench_and_in_parallel(
    toys: Path, tmp_path: Path
) -> None:
    """Two benches of one suite (one of them with two jobs, through the executor's process
    pool) see the same workspaces byte for byte, recorded with the artifact's digests, and
    reach the same verdicts."""
    suite = _suite(toys, [("toy", "toy-one", None)])
    first = run_bench(["null"], suite, tmp_path / "a", BenchOptions(variants=VARIANTS))
    second = run_bench(["null"], suite, tmp_path / "b", BenchOptions(variants=VARIANTS, jobs=2))
    assert _files(tmp_path / "a" / "variants") == _files(tmp_path / "b" / "variants")
    records = [
        json.loads((tmp_path / "a" / "variants" / "toy" / v / "variant.json").read_text())
        for v in VARIANTS
    ]
    assert len({r["artifact_files_sha256"] for r in records}) == 1
    assert len(first.runs) == len(second.runs) == len(VARIANTS) * 2
    strip = [(r.variant, r.task, r.outcome, r.verdict) for r in first.runs]
    assert strip == [(r.variant, r.task, r.outcome, r.verdict) for r in second.runs]


def test_allow_list_matching_is_exact_or_a_subdomain() -> None:
    assert allowed("PyPI.org.", ["pypi.org"])
    assert allowed("files.pypi.org", [".pypi.org"])
    assert not allowed("evilpypi.org", [".pypi.org"])
    assert not allowed("pypi.org.evil.com", ["pypi.org"])
    assert not allowed("files.pypi.org", ["pypi.org"])


@needs_sandbox
def test_the_dask_executor_runs_the_batch(toys: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    options = BenchOptions(variants=("raw", "refined"), executor="dask-local", jobs=2)
    report = run_bench(["null"], suite, tmp_path / "out", options)
    assert [(r.variant, r.outcome) for r in report.runs] == [
        ("raw", "finished"),
        ("refined", "finished"),
    ]
    # a second bench into the same folder replaces the first one's runs
    (tmp_path / "out" / "agent-7").mkdir()
    again = run_bench(["null"], suite, tmp_path / "out", BenchOptions(variants=("raw",)))
    assert len(again.runs) == 1
    assert not (tmp_path / "out" / "agent-7").exists()
    assert not (tmp_path / "out" / "runs" / "toy" / "acc" / "refined").exists()


def test_a_distributed_executor_needs_a_shared_file_system(toys: Path, tmp_path: Path) -> None:
    """dask and slurm workers copy the workspaces from OUT and write the runs into it: without
    --shared-fs nothing is submitted (the Slurm runs: tests/bench/test_bench_slurm.py)."""
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    out = tmp_path / "out"
    for executor in ("slurm", "dask"):
        bench = [sys.executable, "-m", "reprobridge_sdk", "bench", "run", "null", str(suite)]
        done = subprocess.run(
            [*bench, "-o", str(out), "--executor", executor, "--scheduler", "tcp://127.0.0.1:9"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert done.stdout.startswith("-: N004 error"), done.stdout
    assert not out.exists()


@needs_sandbox
def test_rerun_reexecutes_the_agents_recorded_runs(tmp_path: Path) -> None:
    """--rerun: the oracle's records (reprobridge run in its workspace) are re-executed by the
    auditor in the sandbox and hold up; an agent that recorded no run gets no rerun."""
    # the toy writes its metrics into its run folder: a re-execution in the sandbox, where
    # the artifact is read-only, writes nothing else
    root = _toy(tmp_path / "toy-run-dir", "toy-run-dir", tasks=("acc",), launchers=("scored",))
    data = yaml.safe_load((root / "rra.yaml").read_text("utf-8"))
    for launcher in data["launchers"]:
        launcher["argv"][-1] = "{run_dir}/metrics.json"
        launcher["outputs"][0]["path"] = "{run_dir}/metrics.json"
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    suite = _suite(tmp_path, [("toy", "toy-run-dir", None)])
    options = BenchOptions(variants=("refined",), rerun=1)
    report = run_bench(["oracle", "null"], suite, tmp_path / "out", options)
    assert report.rerun == 1
    oracle, null = report.runs
    assert oracle.icml == "verified"
    assert oracle.rerun is not None and oracle.rerun.reran >= 1
    assert oracle.rerun.mismatches == 0
    assert null.rerun is None


#: An agent that says what it was given: its words, its REPRO_BENCH_* variables, its folder,
#: its address-space limit, and whether an earlier run's mark is in its workspace.
WITNESS = """
import json, os, resource, sys
from pathlib import Path
ws = Path(sys.argv[1])
seen = {
    "argv": sys.argv[1:],
    "env": {k: v for k, v in os.environ.items() if k.startswith("REPRO_BENCH_")},
    "cwd": os.getcwd(),
    "stale": (ws / "mark").exists(),
    "memory": resource.getrlimit(resource.RLIMIT_AS)[0],
}
(ws / "mark").write_text("an earlier run was here")
(ws / "seen.json").write_text(json.dumps(seen))
"""


@needs_sandbox
def test_each_repeat_is_a_fresh_run_of_the_command_template(toys: Path, tmp_path: Path) -> None:
    """--repeats N runs each task and variant N times, each in a fresh copy of the variant's
    workspace, with the command template's fields and the REPRO_BENCH_* variables filled and
    the default prompt (the claim, the layout, what to leave). The suite's submission is a
    packed archive with its own budget (it replaces the defaults' whole); an archive that is
    not the one recorded is A093 and is not benched."""
    from reprobridge_sdk.authoring.pack import pack

    script = tmp_path / "witness.py"
    script.write_text(WITNESS, encoding="utf-8")
    (tmp_path / "suite").mkdir()
    digest = pack(toys / "toy-one", tmp_path / "suite" / "toy-one.tar.gz").digest
    suite = tmp_path / "suite" / "suite.toml"
    suite.write_text(
        'batch_version = "1.0"\n[defaults]\nbudget = {time = 300, memory = "1GiB"}\n'
        '[[submission]]\nid = "packed"\npath = "toy-one.tar.gz"\ntasks = ["acc"]\n'
        f'archive_sha256 = "{digest}"\nbudget = {{memory = "3GiB"}}\n'
        '[[submission]]\nid = "wrong"\npath = "toy-one.tar.gz"\n'
        f'archive_sha256 = "{"0" * 64}"\n',
        encoding="utf-8",
    )
    agent = (
        f"{sys.executable} {script} {{workspace}} {{prompt_file}} {{task}} {{variant}} {{prompt}}"
    )
    options = BenchOptions(variants=("raw", "refined"), repeats=2, visible=(str(script),))
    report = run_bench([agent], suite, tmp_path / "out", options)
    assert [f.code for f in report.findings] == ["A093"]
    assert report.repeats == 2
    assert [(r.submission, r.variant, r.repeat) for r in report.runs] == [
        ("packed", "raw", 0),
        ("packed", "raw", 1),
        ("packed", "refined", 0),
        ("packed", "refined", 1),
    ]
    assert {(s.variant, s.runs) for s in report.rates} == {("raw", 2), ("refined", 2)}
    (pair,) = report.paired
    assert (pair.a, pair.b, pair.pairs) == ("refined", "raw", 2)  # paired by repeat
    for run in report.runs:
        folder = tmp_path / "out" / run.folder
        assert run.folder == f"runs/packed/acc/{run.variant}/r{run.repeat}"
        workspace = folder / "workspace"
        seen = json.loads((workspace / "seen.json").read_text("utf-8"))
        prompt = (folder / "prompt.md").read_text("utf-8")
        assert seen["stale"] is False  # no earlier run's mark: a fresh workspace
        assert seen["cwd"] == str(workspace)
        assert seen["argv"] == [
            str(workspace),
            str(folder / "prompt.md"),
            "acc",
            run.variant,
            prompt,
        ]
        assert seen["env"] == {
            "REPRO_BENCH_TASK": "acc",
            "REPRO_BENCH_VARIANT": run.variant,
            "REPRO_BENCH_PROMPT": str(folder / "prompt.md"),
            "REPRO_BENCH_RESULTS": str(workspace / "bench-results.json"),
            "REPRO_BENCH_USAGE": str(workspace / "bench-usage.jsonl"),
        }
        assert seen["memory"] == 3 << 30  # the submission's budget, not the defaults'
        # the default prompt: the claim, the workspace's layout, what to leave
        assert "- task: `acc`" in prompt and "- metric: accuracy (%)" in prompt
        assert "the paper reports: 90.1 (higher is better)" in prompt
        assert "`bench-results.json`" in prompt and "`bench-usage.jsonl`" in prompt
        assert f"(variant `{run.variant}`)" in prompt and "the network is off" in prompt
        entry = "- `rra-claims.json`" if run.variant == "raw" else "- `rra.yaml`"
        assert entry in prompt
        assert run.outcome == "finished" and run.findings[0].code == "A102"


def test_a_prompt_template_with_an_unknown_field_is_refused_first(
    toys: Path, tmp_path: Path
) -> None:
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    for template in ("Reproduce {task} with {secret_key}", "Reproduce {task"):
        with pytest.raises(UsageError) as caught:
            run_bench(["null"], suite, tmp_path / "out", BenchOptions(prompt=template))
        assert caught.value.findings[0].code == "N004"
    assert not (tmp_path / "out").exists()


@needs_sandbox
def test_a_prompt_template_of_ones_own(toys: Path, tmp_path: Path) -> None:
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    template = "Claim {task} ({metric}) of {artifact}: {published}; {{braces}} stay\n"
    report = run_bench(
        ["null"], suite, tmp_path / "out", BenchOptions(variants=("raw",), prompt=template)
    )
    prompt = (tmp_path / "out" / report.runs[0].folder / "prompt.md").read_text("utf-8")
    assert prompt == "Claim acc (accuracy (%)) of toy-one: 90.1; {braces} stay\n"


def test_visible_paths_never_show_the_suite_or_the_output(toys: Path, tmp_path: Path) -> None:
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    out = tmp_path / "out"
    for shown in (toys, toys / "toy-one", toys.parent, tmp_path):
        with pytest.raises(UsageError) as caught:
            run_bench(["null"], suite, out, BenchOptions(visible=(str(shown),)))
        assert caught.value.findings[0].code == "N004"


def test_the_command_without_the_sandbox_warns_and_prints_json(toys: Path, tmp_path: Path) -> None:
    suite = _suite(toys, [("toy", "toy-one", ["acc"])])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "bench",
            "run",
            "null",
            str(suite),
            "--variants",
            "raw",
            "--no-sandbox",
            "--format",
            "json",
            "-o",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert ": N031 warning " in done.stderr  # stdout holds the JSON alone
    report = BenchReport.model_validate_json(done.stdout)
    assert not report.sandbox and [r.outcome for r in report.runs] == ["finished"]
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "bench",
            "run",
            "null",
            str(suite),
            "--memory",
            "lots",
            "-o",
            str(tmp_path / "p"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert bad.returncode == 2 and "--memory" in bad.stderr


@needs_sandbox
def test_every_variant_in_every_format(toys: Path, tmp_path: Path) -> None:
    """The three reference agents over every variant of the bundled example (its scored
    task) and the two test artifacts, as issue 27 asks: each part the oracle needs
    (launchers, extractors) shows as a paired difference against refined."""
    if not (toys / "digits-logreg").exists():
        shutil.copytree(EXAMPLE, toys / "digits-logreg")
    suite = _suite(
        toys,
        [
            ("digits", "digits-logreg", ["logreg-accuracy"]),
            ("toy-one", "toy-one", None),
            ("toy-two", "toy-two", None),
        ],
    )
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "bench",
            "run",
            "oracle",
            str(suite),
            "--also",
            "readme",
            "--also",
            "null",
            "--variants",
            "all",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=3600,  # the example's oracle runs five seeds in four variants
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = BenchReport.model_validate_json((out / "report.json").read_text("utf-8"))
    assert report.variants == list(VARIANTS)
    assert {(s.agent, s.variant) for s in report.rates} == {
        (a, v) for a in ("oracle", "readme", "null") for v in VARIANTS
    }
    oracle = {s.variant: s.successes for s in report.rates if s.agent == "oracle"}
    assert oracle == {
        "raw": 0,
        "refined": 4,
        "masked-environment": 4,
        "masked-launchers": 0,
        "masked-extraction": 0,
        "masked-guide": 4,
        "expert": 4,
    }
    # the example: verified from the oracle's own sandboxed runs wherever its launchers and
    # extractors are there, inconclusive where they are withheld
    digits = {
        r.variant: r.icml for r in report.runs if r.submission == "digits" and r.agent == "oracle"
    }
    assert digits == {
        "raw": "inconclusive",
        "refined": "verified",
        "masked-environment": "verified",
        "masked-launchers": "inconclusive",
        "masked-extraction": "inconclusive",
        "masked-guide": "verified",
        "expert": "verified",
    }
    paired = {(p.agent, p.a, p.b): p for p in report.paired}
    assert paired[("oracle", "refined", "masked-launchers")].only_a == 4
    assert paired[("oracle", "refined", "masked-extraction")].only_a == 4
    for name in (
        "report.txt",
        "report.csv",
        "report-rates.csv",
        "report-paired.csv",
        "report.html",
    ):
        text = (out / name).read_text("utf-8")
        assert all(variant in text for variant in ("masked-guide", "expert"))
    _tables_and_page_hold_the_report(out, report, tmp_path / "profile")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))


def _tables_and_page_hold_the_report(out: Path, report: BenchReport, profile: Path) -> None:
    """The CSV tables of a bench run hold a row per run, per rate and per McNemar test, and
    its report.html, as headless Chromium renders it, has no script, a bar per agent and
    variant beside the format's study, and a table row per rate, test and run."""
    for name, expected in (
        ("report.csv", len(report.runs)),
        ("report-rates.csv", len(report.rates)),
        ("report-paired.csv", len(report.paired) + len(report.versus)),
    ):
        with (out / name).open(encoding="utf-8-sig", newline="") as handle:
            assert len(list(csv.DictReader(handle))) == expected, name
    if CHROMIUM is None:  # the browser tests (tests/bench/test_report.py) say why they skip
        return
    parser = _Tags()
    parser.feed(chromium(out / "report.html", profile, "--dump-dom"))
    tags = parser.tags
    assert "script" not in {tag for tag, _ in tags}
    classes = Counter(attrs.get("class") for tag, attrs in tags if tag == "rect")
    assert classes == {"bar": sum(s.rate is not None for s in report.rates), "study": 2}
    rows: Counter[str | None] = Counter()
    table = None
    for tag, attrs in tags:
        if tag == "table":
            table = attrs.get("id")
        elif tag == "tr":
            rows[table] += 1
    expected = {"rates": report.rates, "paired": report.paired, "runs": report.runs}
    if report.versus:
        expected["versus"] = report.versus
    assert rows == {name: 1 + len(items) for name, items in expected.items()}
