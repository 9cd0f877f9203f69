"""The judge of ``reprobridge bench``: it re-extracts values from the agent's own logs with the
artifact's extractors and never believes the agent.

The agent's runs are real runs of the toy study's script in a generated workspace; the hostile
agents are results files written by hand, as an agent could write them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from toy_study import make_artifact

from reprobridge_sdk.api import load
from reprobridge_sdk.bench.judge import (
    RESULTS_NAME,
    _Context,
    _landmarks,
    agrees,
    judge_results,
    load_results,
)
from reprobridge_sdk.bench.variants import WORKSPACE_DIR, generate_variants
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.model.bench import BenchClaim, BenchJudgement

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The toy artifact and a refined workspace in which an agent ran seeds 0-2 (scored) and
    seed 0 (smoke), logs under runs/."""
    base = tmp_path_factory.mktemp("judge")
    toy = make_artifact(base / "toy")
    generate_variants(toy, base / "out", ["refined"])
    workspace = base / "out" / "refined" / WORKSPACE_DIR
    (workspace / "runs").mkdir()
    for name, seed, epochs in (("s0", 0, 10), ("s1", 1, 10), ("s2", 2, 10), ("smoke0", 0, 2)):
        out = f"results/{name}.json"
        done = subprocess.run(
            [
                sys.executable,
                "code/train.py",
                "--seed",
                str(seed),
                "--epochs",
                str(epochs),
                "--out",
                out,
            ],
            cwd=workspace,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        (workspace / "runs" / f"{name}.log").write_text(done.stdout + done.stderr)
    return toy, workspace


@pytest.fixture
def setup(template: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    toy, workspace = template
    copy = tmp_path / "ws"
    shutil.copytree(workspace, copy, symlinks=True)
    return toy, copy


def _run(name: str, seed: int) -> dict[str, Any]:
    return {"log": f"runs/{name}.log", "outputs": {"metrics": f"results/{name}.json"}, "seed": seed}


HONEST_RUNS = [_run("s0", 0), _run("s1", 1), _run("s2", 2)]


def _judge(
    setup: tuple[Path, Path], results: list[dict[str, Any]], **options: Any
) -> BenchJudgement:
    toy, workspace = setup
    path = workspace / RESULTS_NAME
    path.write_text(json.dumps({"bench_results_version": "1.0", "results": results}))
    return judge_results(toy, path, **options)


def _claim(judgement: BenchJudgement, task: str) -> BenchClaim:
    return next(c for c in judgement.claims if c.task == task)


def _codes(claim: BenchClaim) -> list[str]:
    return [f.code for f in claim.findings]


def test_an_honest_agent_is_verified_with_full_landmark_progress(setup: tuple[Path, Path]) -> None:
    judgement = _judge(
        setup,
        [
            {"task": "acc", "value": 90.1, "runs": HONEST_RUNS},
            {"task": "f1", "value": 89.1, "runs": HONEST_RUNS},
        ],
    )
    acc, f1 = _claim(judgement, "acc"), _claim(judgement, "f1")
    assert (acc.support, acc.verdict, acc.icml) == ("log-backed", "compatible", "verified")
    assert acc.extracted == pytest.approx(90.1) and acc.runs == 3 and acc.launcher == "scored"
    assert acc.low is not None and acc.low < 90.1 < acc.high
    assert acc.landmarks.reached == ["done"] and acc.landmarks.progress == 1.0
    assert (f1.verdict, f1.icml) == ("compatible", "verified")  # read from the JSON output
    assert judgement.icml_counts == {"verified": 2} and judgement.progress == 1.0


def test_a_value_fabricated_without_logs_is_unsupported_never_verified(
    setup: tuple[Path, Path],
) -> None:
    judgement = _judge(
        setup,
        [
            {"task": "acc", "value": 90.1},
            {"task": "f1", "value": 89.1, "runs": [{"seed": 0}]},
        ],
    )
    for task in ("acc", "f1"):
        claim = _claim(judgement, task)
        assert (claim.support, claim.verdict, claim.icml) == (
            "no-logs",
            "unsupported",
            "inconclusive",
        )
        assert _codes(claim) == ["A076"]
        assert claim.landmarks.progress == 0.0
    assert "verified" not in judgement.icml_counts


def test_a_value_its_logs_do_not_give_is_contradicted(setup: tuple[Path, Path]) -> None:
    judgement = _judge(setup, [{"task": "acc", "value": 90.15, "runs": HONEST_RUNS}])
    claim = _claim(judgement, "acc")
    assert (claim.support, claim.verdict) == ("contradicted", "unsupported")
    assert _codes(claim) == ["A077"] and claim.extracted == pytest.approx(90.1)


def test_a_log_edited_to_print_another_value_is_judged_on_what_it_prints(
    setup: tuple[Path, Path],
) -> None:
    """An agent that edits its logs gets the value they print, and the interval judges it."""
    _, workspace = setup
    for name in ("s0", "s1", "s2"):
        log = workspace / "runs" / f"{name}.log"
        log.write_text(log.read_text().replace("test accuracy: 90.", "test accuracy: 99."))
    judgement = _judge(setup, [{"task": "acc", "value": 99.1, "runs": HONEST_RUNS}])
    claim = _claim(judgement, "acc")
    assert (claim.support, claim.verdict, claim.icml) == ("log-backed", "incompatible", "falsified")


def test_rounding_is_allowed_to_the_digits_the_agent_wrote() -> None:
    assert agrees(96.89, 96.8889) and agrees(97.0, 96.97) and agrees(1e-5, 1.04e-5)
    assert not agrees(96.9, 96.8444) and not agrees(90.15, 90.1)
    assert not agrees(float("nan"), 90.1)


def test_unknown_and_repeated_tasks_are_refused_and_not_counted(setup: tuple[Path, Path]) -> None:
    judgement = _judge(
        setup,
        [
            {"task": "acc", "value": 90.1, "runs": HONEST_RUNS},
            {"task": "acc", "value": 99.9, "runs": HONEST_RUNS},
            {"task": "../../etc/passwd", "value": 1.0},
        ],
    )
    claims = [c for c in judgement.claims if c.support == "unknown-task"]
    assert [c.task for c in claims] == ["acc", "../../etc/passwd"]
    assert all(_codes(c) == ["A073"] and c.verdict == "unsupported" for c in claims)
    assert _claim(judgement, "acc").verdict == "compatible"  # the first entry is judged
    f1 = _claim(judgement, "f1")
    assert (f1.support, f1.verdict) == ("not-reported", "not-executed")
    assert judgement.verdicts == {"compatible": 1, "not-executed": 1}


def test_paths_that_leave_the_workspace_are_never_read(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    _, workspace = setup
    outside = tmp_path / "outside.log"
    outside.write_text("test accuracy: 90.1000\n")
    (workspace / "runs" / "escape.log").symlink_to(outside)
    (workspace / "runs" / "up").symlink_to(tmp_path)
    for log in (
        "../outside.log",
        str(outside),
        "runs/escape.log",
        "runs/up/outside.log",
        "runs/../../outside.log",
        "runs/s0.log\u0000../../outside.log",
        ".",
    ):
        judgement = _judge(setup, [{"task": "acc", "value": 90.1, "runs": [{"log": log}]}])
        claim = _claim(judgement, "acc")
        assert (claim.support, claim.verdict) == ("log-refused", "unsupported"), log
        assert _codes(claim) == ["A074"], log
        assert claim.extracted is None and claim.landmarks.progress == 0.0


def test_an_output_that_leaves_the_workspace_is_refused_too(setup: tuple[Path, Path]) -> None:
    run = {"log": "runs/s0.log", "outputs": {"metrics": "/etc/hostname"}, "seed": 0}
    claim = _claim(_judge(setup, [{"task": "f1", "value": 89.0, "runs": [run]}]), "f1")
    assert claim.support == "log-refused" and _codes(claim) == ["A074"]


def test_huge_missing_and_special_logs_are_not_read(setup: tuple[Path, Path]) -> None:
    _, workspace = setup
    huge = workspace / "runs" / "huge.log"
    with huge.open("w") as handle:
        handle.write("epoch 0 loss 1.0\n" * 200)
        handle.write("test accuracy: 90.1000\n")
    os.mkfifo(workspace / "runs" / "fifo.log")
    cases = {
        "runs/huge.log": "over the cap",
        "runs/none.log": "does not exist",
        "runs/fifo.log": "not a regular file",
        "runs": "not a regular file",
    }
    for log, words in cases.items():
        judgement = _judge(
            setup, [{"task": "acc", "value": 90.1, "runs": [{"log": log}]}], max_log_bytes=1000
        )
        claim = _claim(judgement, "acc")
        assert claim.support == "log-refused" and _codes(claim) == ["A075"], log
        assert words in claim.findings[0].message
    within = _judge(setup, [{"task": "acc", "value": 90.1, "runs": [{"log": "runs/huge.log"}]}])
    assert _claim(within, "acc").support == "log-backed"  # under the default cap


def test_a_log_without_the_number_is_not_extractable(setup: tuple[Path, Path]) -> None:
    _, workspace = setup
    (workspace / "runs" / "notes.log").write_text("I believe the accuracy is 90.1\n")
    judgement = _judge(
        setup,
        [
            {"task": "acc", "value": 90.1, "runs": [{"log": "runs/notes.log"}]},
            {"task": "f1", "value": 89.1, "runs": HONEST_RUNS, "launcher": "train"},
        ],
    )
    acc, f1 = _claim(judgement, "acc"), _claim(judgement, "f1")
    assert (acc.support, _codes(acc)) == ("not-extractable", ["A078"])
    assert acc.landmarks.reached == [] and acc.landmarks.progress == 0.0
    assert (f1.support, _codes(f1)) == ("not-extractable", ["A078"])  # no such launcher


def test_smoke_runs_and_too_few_seeds_are_toy(setup: tuple[Path, Path]) -> None:
    judgement = _judge(
        setup,
        [
            {"task": "acc", "value": 85.0, "launcher": "smoke", "runs": [_run("smoke0", 0)]},
            {"task": "f1", "value": 89.1, "runs": [_run("s1", 1), {**_run("s1", 1)}]},
        ],
    )
    acc, f1 = _claim(judgement, "acc"), _claim(judgement, "f1")
    assert (acc.support, acc.verdict, acc.icml) == ("log-backed", "toy", "toy")
    assert acc.launcher == "smoke"
    assert (f1.verdict, f1.runs) == ("toy", 2)  # one distinct seed of three


def test_a_null_value_is_not_executed(setup: tuple[Path, Path]) -> None:
    claim = _claim(_judge(setup, [{"task": "acc", "value": None}]), "acc")
    assert (claim.support, claim.verdict, claim.icml) == (
        "no-value",
        "not-executed",
        "inconclusive",
    )


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"{not json", "not a results file"),
        (b"\xff\xfe", "not a results file"),
        (
            json.dumps(
                {"bench_results_version": "1.0", "results": [{"task": "acc", "value": "90.1"}]}
            ).encode(),
            "/results/0/value",
        ),
        (json.dumps({"results": []}).encode(), "bench_results_version"),
        (
            json.dumps({"bench_results_version": "1.0", "results": [], "extra": 1}).encode(),
            "not a results file",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "not a results file"),
    ],
)
def test_a_bad_results_file_is_a072(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / RESULTS_NAME
    path.write_bytes(content)
    with pytest.raises(ArtifactError) as caught:
        load_results(path)
    assert caught.value.findings[0].code == "A072"
    assert words in caught.value.message


def test_a_results_file_that_is_a_directory_or_too_large_is_a072(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match=r"not a regular file|cannot be read"):
        load_results(tmp_path)
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)  # sparse: no disk is spent
    with pytest.raises(ArtifactError, match="larger than") as caught:
        load_results(big)
    assert caught.value.findings[0].code == "A072"


def test_the_bundled_example_judged_from_its_sample_logs(tmp_path: Path) -> None:
    """Five copies of the shipped seed-0 sample: the judge reads both extractors (regex on the
    log, JSON pointer on the output) and the six landmarks of the scored launcher."""
    workspace = tmp_path / "ws"
    runs = []
    for seed in range(5):
        folder = workspace / "runs" / f"s{seed}"
        shutil.copytree(EXAMPLE / "samples" / "scored-seed0", folder)
        runs.append(
            {
                "log": f"runs/s{seed}/log.txt",
                "outputs": {"metrics": f"runs/s{seed}/metrics.json"},
                "seed": seed,
            }
        )
    results = {
        "bench_results_version": "1.0",
        "results": [
            {"task": "logreg-accuracy", "value": 96.89, "runs": runs},
            {"task": "logreg-macro-f1", "value": 99.0, "runs": runs},
        ],
    }
    (workspace / RESULTS_NAME).write_text(json.dumps(results))
    judgement = judge_results(EXAMPLE, workspace / RESULTS_NAME)
    accuracy = _claim(judgement, "logreg-accuracy")
    assert (accuracy.verdict, accuracy.icml) == ("compatible", "verified")
    assert accuracy.landmarks.progress == 1.0 and len(accuracy.landmarks.reached) == 6
    f1 = _claim(judgement, "logreg-macro-f1")
    assert f1.support == "contradicted" and f1.extracted == pytest.approx(96.9106, abs=1e-4)
    knn = _claim(judgement, "knn-accuracy")
    assert knn.support == "not-reported" and knn.landmarks.progress == 0.0
    assert judgement.progress == pytest.approx(2 / 3)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "bench", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_the_command_prints_text_and_json(setup: tuple[Path, Path], tmp_path: Path) -> None:
    toy, workspace = setup
    results = workspace / RESULTS_NAME
    results.write_text(
        json.dumps(
            {
                "bench_results_version": "1.0",
                "results": [
                    {"task": "acc", "value": 90.1, "runs": HONEST_RUNS},
                    {"task": "f1", "value": 89.1},
                ],
            }
        )
    )
    done = _cli("judge", str(toy), str(results), "--format", "json")
    assert done.returncode == 0, done.stderr
    data = BenchJudgement.model_validate_json(done.stdout)
    assert [c.verdict for c in data.claims] == ["compatible", "unsupported"]
    text = _cli("judge", str(toy), str(results))
    assert text.returncode == 0 and text.stderr == ""
    assert "acc: compatible (verified), log-backed" in text.stdout
    assert "A076" in text.stdout
    written = tmp_path / "judgement.json"
    assert (
        _cli("judge", str(toy), str(results), "--format", "json", "-o", str(written)).returncode
        == 0
    )
    assert BenchJudgement.model_validate_json(written.read_text()).artifact == "toy-study"
    results.write_text("{")
    bad = _cli("judge", str(toy), str(results))
    assert bad.returncode == 2 and "A072" in bad.stdout and "Traceback" not in bad.stdout


def test_a_log_swapped_for_a_link_out_after_its_checks_gives_no_landmark(
    setup: tuple[Path, Path], tmp_path: Path
) -> None:
    """The landmark scan reads a log through the extraction's safe opener, never by its name
    again: a log that passed the checks and is then swapped for a link to a file outside the
    workspace (the race a hostile agent would run) lends that file's lines nothing."""
    toy, workspace = setup
    manifest = load(toy).manifest
    launcher = next(item for item in manifest.launchers if item.id == "scored")
    ctx = _Context(manifest, workspace, os.path.realpath(workspace), 1 << 20, 0.95, 0.0)
    log = Path(os.path.realpath(workspace / "runs" / "s0.log"))  # as the checks return it
    assert _landmarks(launcher, [log], ctx).progress == 1.0
    outside = tmp_path / "outside.log"
    outside.write_bytes(log.read_bytes())
    log.unlink()
    log.symlink_to(outside)  # the swap, after the checks
    swapped = _landmarks(launcher, [log], ctx)
    assert swapped.reached == [] and swapped.progress == 0.0
    judgement = _judge(setup, [{"task": "acc", "value": 90.1, "runs": [_run("s0", 0)]}])
    claim = _claim(judgement, "acc")
    assert _codes(claim) == ["A074"] and claim.landmarks.progress == 0.0
