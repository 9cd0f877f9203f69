"""The build corpus (benchmarks/build-corpus) and its benchmark's bookkeeping.

The corpus index is data the benchmark trusts, so its invariants are tested here: every entry
loads with its claims file, the expected statuses name exactly the file's claims, and the
spread the corpus promises (years, frameworks, Python 2, layouts) holds. The benchmark's own
parts run for real: git clones from a local repository, the results file read back after a
run, the failure class of real report shapes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _build_corpus import (  # noqa: E402
    KILLED,
    NO_REPORT,
    SKIPPED,
    Caps,
    CorpusError,
    build_entry,
    census,
    checkout_dir,
    classify,
    clone,
    load_corpus,
    overhead,
    run_corpus,
    runs_by_phase,
)

CORPUS = ROOT / "benchmarks" / "build-corpus"
CLAIMS = """\
claims_version: "1.0"
paper: {title: A paper}
claims:
  - {id: acc, measured: accuracy, value: 90.0, direction: higher}
"""


def _index(tmp_path: Path, entry: str, claims: str = CLAIMS) -> Path:
    (tmp_path / "claims").mkdir(parents=True, exist_ok=True)
    (tmp_path / "claims" / "one.yaml").write_text(claims)
    (tmp_path / "corpus.toml").write_text(entry)
    return tmp_path


GOOD = """\
[[entry]]
id = "one"
url = "https://github.com/owner/name"
commit = "0123456789abcdef0123456789abcdef01234567"
year = 2019
framework = "PyTorch"
python = "3"
claims = "claims/one.yaml"
[entry.expected]
acc = "compatible"
"""


def test_committed_corpus_loads_and_keeps_its_spread() -> None:
    entries = load_corpus(CORPUS)
    assert len(entries) >= 25
    years = {e.year for e in entries}
    assert min(years) <= 2014
    assert max(years) >= 2024
    frameworks = " ".join(e.framework for e in entries).lower()
    for name in ("numpy", "scikit-learn", "pytorch", "tensorflow", "jax", "keras"):
        assert name in frameworks, name
    assert sum(e.python == "2" for e in entries) >= 3
    layouts = {item for e in entries for item in e.layout}
    assert {"cd-command", "package", "notebooks-with-scripts", "generated-data"} <= layouts
    assert {"data-in-repo", "scripts"} <= layouts
    assert all(e.why for e in entries)
    assert len({checkout_dir(e, Path("s")) for e in entries}) == len(entries)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (('commit = "0123456789abcdef0123456789abcdef01234567"', 'commit = "abc123"'), "commit"),
        (('acc = "compatible"', 'acc = "reproduced"'), "status"),
        (('acc = "compatible"', 'other = "compatible"'), "expected verdicts"),
        (('url = "https://github.com/owner/name"', 'url = "ssh://x"'), "url"),
        (('id = "one"', 'id = "One Two"'), "slug"),
        (("year = 2019\n", ""), "year"),
    ],
)
def test_a_defective_entry_is_a_corpus_error(
    tmp_path: Path, change: tuple[str, str], needle: str
) -> None:
    corpus = _index(tmp_path, GOOD.replace(*change))
    with pytest.raises(CorpusError) as caught:
        load_corpus(corpus)
    assert needle in caught.value.message


def test_bad_claims_toml_and_duplicates_are_corpus_errors(tmp_path: Path) -> None:
    corpus = _index(tmp_path, GOOD, claims="claims_version: '1.0'\nclaims: []\n")
    with pytest.raises(CorpusError) as caught:
        load_corpus(corpus)
    assert {f.code for f in caught.value.findings} == {"B001"}
    _index(tmp_path, GOOD + GOOD)
    with pytest.raises(CorpusError, match="twice"):
        load_corpus(tmp_path)
    (tmp_path / "corpus.toml").write_text("[[entry]\n")
    with pytest.raises(CorpusError, match="not TOML"):
        load_corpus(tmp_path)


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_clone_checks_out_the_commit_and_a_missing_source_is_recorded(tmp_path: Path) -> None:
    upstream = tmp_path / "owner" / "name"
    upstream.mkdir(parents=True)
    _git("init", "-q", cwd=upstream)
    (upstream / "train.py").write_text("print('accuracy 90.0')\n")
    _git("add", ".", cwd=upstream)
    env = ["-c", "user.name=t", "-c", "user.email=t@t"]
    _git(*env, "commit", "-qm", "first", cwd=upstream)
    first = _git("rev-parse", "HEAD", cwd=upstream)
    (upstream / "train.py").write_text("print('accuracy 91.0')\n")
    _git(*env, "commit", "-qam", "second", cwd=upstream)
    entry = GOOD.replace("https://github.com/owner/name", upstream.as_uri()).replace(
        "0123456789abcdef0123456789abcdef01234567", first
    )
    corpus = _index(tmp_path / "corpus", entry)
    entries = load_corpus(corpus)
    sources = tmp_path / "sources"
    assert clone(entries, sources) == []
    checkout = sources / "owner__name"
    assert _git("rev-parse", "HEAD", cwd=checkout) == first
    assert (checkout / "train.py").read_text() == "print('accuracy 90.0')\n"
    # no checkout: recorded as a source failure without starting a build, and not built again
    lines: list[str] = []
    work = tmp_path / "work"
    run_corpus(entries, tmp_path / "empty", work, Caps(), log=lines.append)
    stored = json.loads((work / "results.json").read_text())["results"]["one"]
    assert (stored["failure"], stored["success"]) == ("source unavailable", False)
    run_corpus(entries, tmp_path / "empty", work, Caps(), log=lines.append)
    assert sum("building" in line for line in lines) == 1


def test_the_total_cap_skips_the_rest_and_a_resume_builds_them(tmp_path: Path) -> None:
    corpus = _index(tmp_path / "corpus", GOOD)
    entries = load_corpus(corpus)
    work = tmp_path / "work"
    run_corpus(entries, tmp_path / "none", work, Caps(total=10), log=lambda _: None)
    stored = json.loads((work / "results.json").read_text())["results"]["one"]
    assert stored["failure"] == SKIPPED
    run_corpus(entries, tmp_path / "none", work, Caps(), log=lambda _: None)
    stored = json.loads((work / "results.json").read_text())["results"]["one"]
    assert stored["failure"] == "source unavailable"


def test_classify_by_first_error_code_and_smoke_error_type() -> None:
    report = {
        "stopped_at": "reproducer",
        "findings": [
            {"code": "B017", "severity": "warning", "message": "seeds"},
            {"code": "B007", "severity": "error", "message": "the smoke run failed"},
        ],
    }
    attempt = {"error": "ModuleNotFoundError: No module named 'gcn' (train.py:3)"}
    assert classify(report, {"attempts": [attempt]}) == "run fails: ModuleNotFoundError"
    assert classify(report, None) == "run fails"
    resolve = {"stopped_at": "builder", "findings": [{"code": "B005", "severity": "error"}]}
    assert classify(resolve, None) == "environment does not resolve"
    assert classify({"findings": [{"code": "B099", "severity": "error"}]}, None) == ("finding B099")
    assert classify(None, None) == NO_REPORT


def test_overhead_median_and_per_phase_and_census() -> None:
    results = {
        "a": {"id": "a", "wall": 100.0, "failure": None, "phases": {"builder": 40.0,
              "reproducer": 30.0, "distiller": 25.0}, "runs": {"reproducer": 10.0,
              "distiller": 15.0}},
        "b": {"id": "b", "wall": 50.0, "failure": "run fails", "detail": "B007 x",
              "phases": {"builder": 45.0}, "runs": {}},
        "c": {"id": "c", "wall": 30.0, "failure": "run fails", "detail": "B007 y",
              "phases": {"reproducer": 28.0}, "runs": {"reproducer": 20.0}},
    }  # fmt: skip
    median, counted, per_phase = overhead(results)
    assert counted == 2
    assert median == pytest.approx((100 / 25 + 30 / 20) / 2)
    assert per_phase["builder"] == pytest.approx(85.0)
    assert per_phase["reproducer"] == pytest.approx(20.0 + 8.0)
    assert per_phase["distiller"] == pytest.approx(10.0)
    assert per_phase["other"] == pytest.approx(5.0 + 5.0 + 2.0)
    assert per_phase["killed"] == 0.0
    assert census(results) == [("run fails", 2, "b", "B007 x")]
    results["c"]["failure"] = KILLED
    assert overhead(results)[2]["killed"] == pytest.approx(2.0)


@pytest.mark.slow
def test_a_fixture_built_as_a_corpus_entry_succeeds_and_its_runs_are_timed(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the build agent's tests built this fixture's environment already: the build reuses it
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    sys.path.insert(0, str(ROOT / "tests" / "agent"))
    from build_fixtures import write_repo

    from reprobridge_sdk.model.build import PHASES

    repo, claims = write_repo(tmp_path / "upstream" / "owner", "no-deps")
    commit = _git("rev-parse", "HEAD", cwd=repo)
    corpus = tmp_path / "corpus"
    (corpus / "claims").mkdir(parents=True)
    (corpus / "claims" / "one.yaml").write_text(claims.read_text())
    entry = GOOD.replace("https://github.com/owner/name", repo.as_uri()).replace(
        "0123456789abcdef0123456789abcdef01234567", commit
    )
    (corpus / "corpus.toml").write_text(entry.replace("acc = ", "accuracy = "))
    entries = load_corpus(corpus)
    sources = tmp_path / "sources"
    assert clone(entries, sources) == []
    result = build_entry(entries[0], sources, tmp_path / "work", cap=1200, smoke=120)
    assert (result["success"], result["failure"], result["reached"]) == (True, None, "done")
    assert result["claims"] == {"accuracy": "compatible"}
    assert result["strict"] is True
    assert set(result["phases"]) == set(PHASES)
    assert result["runs"]["reproducer"] > 0
    assert result["runs"]["distiller"] > 0
    assert set(result["runs"]) == {"reproducer", "distiller"}
    median, counted, per_phase = overhead({"one": result})
    assert counted == 1
    assert median is not None
    assert median > 1.0
    assert per_phase["killed"] == 0.0


def test_runs_in_parallel_count_once_and_smoke_attempts_add(tmp_path: Path) -> None:
    out = tmp_path / "one-rra"
    state = out / ".rra-build"
    state.mkdir(parents=True)
    (state / "reproducer.json").write_text(json.dumps({"attempts": [{"seconds": 2.5}]}))
    runs = [("a", "10:00:00", 10.0), ("b", "10:00:05", 10.0), ("c", "10:00:30", 4.0)]
    for name, start, duration in runs:
        folder = out / "runs" / name
        folder.mkdir(parents=True)
        record = {"run_id": name, "started_at": f"2026-12-01T{start}Z", "duration": duration}
        (folder / "record.json").write_text(json.dumps(record))
    (out / "runs" / "broken").mkdir()
    (out / "runs" / "broken" / "record.json").write_text("{not json")
    assert runs_by_phase(out) == {"reproducer": 2.5, "distiller": 15.0 + 4.0}


def test_the_benchmark_reports_a_bad_corpus_without_a_traceback(tmp_path: Path) -> None:
    _index(tmp_path, GOOD.replace('acc = "compatible"', 'acc = "maybe"'))
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_build.py"), "--corpus", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "'maybe'" in done.stderr
