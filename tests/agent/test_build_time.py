"""The build's time limit: the Reviewer's share, reference runs that stop at the limit, and
smoke runs that stop there too.

The sizing is pure arithmetic and is tested as such; the runs that must stop at the limit
are real runs of a scaffolded artifact (standard library only) that sleep past it.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
import yaml

from reprobridge_sdk.agent._references import (
    PACKAGING_SECONDS,
    REFERENCE_JOBS,
    contended,
    references_that_fit,
    references_to_take,
    take_references,
)
from reprobridge_sdk.agent.reviewer import CHECK_SETUP_SECONDS, setup_seconds
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.model.build import Gate, LauncherPlan, ReproducerRecord, SmokeAttempt


@pytest.mark.parametrize(
    ("remaining", "share", "taken"),
    [
        # five runs of 60 s, two at a time (three waves), beside a share of 100 s
        (400.0, 100.0, (5, True)),
        # four fit beside the share (two waves): four, and the Reviewer fits after them;
        # without the share five would be taken and 70 s left for a check of 100 s
        (250.0, 100.0, (4, True)),
        # not even three fit beside the share: the references come first, as many as fit
        (200.0, 100.0, (5, False)),
        (100.0, 100.0, (2, False)),  # below the minimum: the caller takes none (B059)
        (250.0, None, (5, False)),  # no share asked
        (None, 100.0, (5, True)),  # no time limit
    ],
)
def test_the_reviewers_share_is_kept_when_the_minimum_fits_beside_it(
    remaining: float | None, share: float | None, taken: tuple[int, bool]
) -> None:
    assert references_to_take(60.0, 1, remaining, 5, share) == taken


@pytest.mark.parametrize(
    ("remaining", "share", "have", "taken"),
    [
        # APPNP's case: a probe of 112 s, 202 s left: two runs (one wave) fit, three do
        # not; below the minimum the caller takes none (B059), with the probe counted the
        # two make three observations
        (202.0, None, 0, (2, False)),
        (202.0, None, 1, (2, False)),
        # the probe counted, the minimum beside the share is two more: the share is kept
        (250.0, 100.0, 0, (4, False)),
        (250.0, 100.0, 1, (2, True)),
        (600.0, 100.0, 1, (4, True)),  # four more at most: five with the probe
    ],
)
def test_the_probe_counted_as_the_first_observation_leaves_one_fewer_to_run(
    remaining: float, share: float | None, have: int, taken: tuple[int, bool]
) -> None:
    assert references_to_take(112.0, 1, remaining, 5, share, have=have) == taken


@pytest.mark.parametrize(
    ("remaining", "setup", "taken"),
    [
        # GCNII's case: a probe of 751 s, about 800 s left, a check of 65 s besides its scored
        # run. Two more runs in one wave used to start and run into the limit, leaving the
        # Reviewer nothing (B016): with the check's setup kept, none starts (B059, the
        # claim not run) and the Reviewer checks the artifact
        (800.0, 65.0, (0, False)),
        (800.0, 0.0, (2, False)),  # no setup to keep: as before
        (900.0, 65.0, (2, False)),  # the wave fits beside the setup: taken
    ],
)
def test_the_reviewers_setup_is_kept_when_the_references_come_first(
    remaining: float, setup: float, taken: tuple[int, bool]
) -> None:
    share = setup + 751.0
    assert references_to_take(751.0, 1, remaining, 5, share, have=1, setup=setup) == taken


def test_an_unseeded_command_is_sized_one_run_at_a_time() -> None:
    """A launcher without seeds runs once per call of the runner: its reference runs are
    one after another, so 250 s hold four runs of 60 s, not five (two at a time)."""
    assert references_that_fit(60.0, 1, 250.0, side_by_side=1) == 4
    assert references_that_fit(60.0, 1, 250.0) == 5


def test_the_reviewers_setup_counts_the_last_attempt_of_each_smoke_launcher() -> None:
    def attempt(launcher: str, seconds: float) -> SmokeAttempt:
        return SmokeAttempt(launcher=launcher, argv=["python"], workdir=".", seconds=seconds)

    smoke = LauncherPlan(id="train-smoke", script="train.py", argv=["python"], scope="smoke")
    scored = LauncherPlan(id="train-scored", script="train.py", argv=["python"], scope="scored")
    record = ReproducerRecord(
        inputs_digest="0" * 64,
        seconds=0,
        gate=Gate(passed=True),
        # a first attempt past the budget, then the short one that passed
        attempts=[attempt("train-smoke", 180.0), attempt("train-smoke", 4.0)],
        launchers=[smoke, scored],
    )
    assert setup_seconds(record) == CHECK_SETUP_SECONDS + 4.0


def _scored(root: Path, name: str, prelude: str, env: dict[str, str], *, seeded: bool) -> str:
    """A scaffolded artifact whose experiment runs ``prelude`` (lines of ``main``'s body)
    before its work, and whose scored launcher has ``env`` and, unless ``seeded``, no seed;
    its scored launcher's id."""
    scaffold(root, InitOptions(id=name, title=name.title()))
    experiment = root / "code" / "experiment.py"
    text = experiment.read_text("utf-8")
    head = "def main() -> None:\n"
    experiment.write_text(text.replace(head, head + prelude, 1), "utf-8")
    manifest = root / "rra.yaml"
    data = yaml.safe_load(manifest.read_text("utf-8"))
    [scored] = [item for item in data["launchers"] if item["scope"] == "scored"]
    if not seeded:
        scored["argv"] = ["python", "code/experiment.py"]
        scored.pop("seeds")
    scored.pop("samples")
    scored["env"] = env
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    return str(scored["id"])


def _sleepy(root: Path, seconds: float) -> str:
    """A scaffolded artifact whose scored launcher takes no seed and sleeps ``seconds``
    before its work (through the launcher's environment); its launcher id."""
    prelude = "    import os, time\n\n    time.sleep(float(os.environ.get('SLEEP', '0')))\n"
    return _scored(root, "sleepy", prelude, {"SLEEP": f"{seconds:g}"}, seeded=False)


@pytest.mark.slow
def test_reference_runs_slower_than_the_probe_stop_at_the_time_limit(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile, as on a loaded machine: the probe took 1 s, but each reference run of the
    unseeded command sleeps 60 s. With 4 s left before the Packager's share, the first run is
    stopped at the limit (its timeout is the time left), no other starts, and no observation
    is counted: the waves end long before five runs (or one) could sleep out."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    root = tmp_path / "sleepy"
    launcher = _sleepy(root, 60)
    begin = time.monotonic()
    taken = take_references(
        root,
        launcher,
        None,
        5,
        took=1.0,
        deadline=begin + PACKAGING_SECONDS + 4,
        repetitions=tmp_path / "repetitions",
    )
    assert time.monotonic() - begin < 45  # stopped near the limit, not slept out
    assert taken.cut
    assert taken.observations == 0
    assert taken.arguments == [] and taken.directories == []


@pytest.mark.slow
def test_a_run_cut_by_the_limit_leaves_the_reviewers_setup(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe took 1 s but the reference run sleeps 60 s: its timeout is the time left
    less the Packager's share and the Reviewer's setup, so the cut leaves the setup whole."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    root = tmp_path / "sleepy"
    launcher = _sleepy(root, 60)
    begin = time.monotonic()
    deadline = begin + PACKAGING_SECONDS + 30
    taken = take_references(
        root,
        launcher,
        None,
        5,
        took=1.0,
        deadline=deadline,
        reserve=40.0,
        repetitions=tmp_path / "repetitions",
        setup=25.0,
    )
    assert taken.cut
    assert taken.observations == 0
    # the run stopped about 5 s in (30 s left less the 25 s setup), not at 30 s
    assert deadline - time.monotonic() - PACKAGING_SECONDS > 15


@pytest.mark.slow
def test_reference_runs_of_an_unseeded_command_are_taken_one_at_a_time(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a time limit every observation asked for is a run of its own that succeeded."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    root = tmp_path / "sleepy"
    launcher = _sleepy(root, 0)
    taken = take_references(
        root, launcher, None, 2, took=1.0, deadline=None, repetitions=tmp_path / "repetitions"
    )
    assert not taken.cut
    assert taken.observations == 2
    assert len(set(taken.directories)) == 2
    assert all((d / "record.json").is_file() for d in taken.directories)


@pytest.mark.parametrize(
    ("seconds", "runs", "alone", "verdict"),
    [
        (65.0, 2, 60.0, False),  # two side by side in little more than one: they pay
        (95.0, 2, 60.0, False),  # 0.79 of one after another: still worth it
        (157.0, 2, 34.0, True),  # a real multithreaded training: 4.6 times one alone
        (120.0, 2, 60.0, True),  # no gain at all
        (500.0, 1, 60.0, False),  # one run alone is never contended, only slow
        (10.0, 2, 0.0, False),  # no probe time to judge by
    ],
)
def test_runs_side_by_side_are_contended_when_they_gain_too_little(
    seconds: float, runs: int, alone: float, verdict: bool
) -> None:
    assert contended(seconds, runs, alone) is verdict


def _crowded(root: Path, busy: Path) -> str:
    """A scaffolded artifact whose scored launcher takes a seed and sleeps 1 s alone but 4 s
    when another run is under way beside it (marks in ``busy``), as a training that keeps
    every core busy slows beside another; its launcher id."""
    prelude = (
        "    import os, pathlib, time\n\n"
        "    busy = pathlib.Path(os.environ['BUSY'])\n"
        "    mark = busy / str(os.getpid())\n"
        "    mark.touch()\n"
        "    time.sleep(0.5)\n"
        "    time.sleep(4 if len(list(busy.iterdir())) > 1 else 0.5)\n"
        "    mark.unlink()\n"
    )
    return _scored(root, "crowded", prelude, {"BUSY": str(busy)}, seeded=True)


@pytest.mark.slow
def test_runs_that_slow_each_other_side_by_side_go_one_at_a_time(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four runs of one seed, probed at 1 s: the first wave of two takes at least 4.5 s, far
    more than 0.8 of two runs one after another, so the runs after it go one at a time and
    never overlap again."""
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(env_cache))
    busy = tmp_path / "busy"
    busy.mkdir()
    root = tmp_path / "crowded"
    launcher = _crowded(root, busy)
    taken = take_references(
        root, launcher, [0], 4, took=1.0, deadline=None, repetitions=tmp_path / "repetitions"
    )
    assert not taken.cut
    assert taken.observations == 4
    spans = sorted(
        (record["started_at"], record["ended_at"])
        for record in (
            yaml.safe_load((d / "record.json").read_text("utf-8")) for d in taken.directories
        )
    )
    first, later = spans[:REFERENCE_JOBS], spans[REFERENCE_JOBS:]
    assert first[1][0] < first[0][1]  # the first wave ran side by side
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(later))  # then alone
    assert first[1][1] <= later[0][0]


@pytest.mark.slow
def test_a_smoke_retry_past_the_time_limit_ends_the_reproducer_with_b016(
    raw_repo, tmp_path: Path, fixture_python: Path
) -> None:
    """The smoke run passes its budget (10 s of a 20-s training) and is made short; the time
    limit (10.2 s after the start) comes before the short retry can end, which needs a
    quarter of a second for its one epoch. The retry is stopped there (or not started): the
    phase ends with B016, not with a run that outlives the build's limit, and the knob's
    patch is undone."""
    from build_fixtures import EPOCH_SECONDS

    from reprobridge_sdk.agent.claims import load_claims
    from reprobridge_sdk.agent.intake import checkout, inventory
    from reprobridge_sdk.agent.planner import plan
    from reprobridge_sdk.agent.reproducer import reproduce

    repo, claims_file = raw_repo("long-smoke")
    code = tmp_path / "code"
    commit, date = checkout(str(repo), code)
    claims = load_claims(claims_file)
    intake = inventory(
        code, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest="0" * 64
    )
    planned = plan(claims, intake, root=code, inputs_digest="0" * 64)
    budget = 40 * EPOCH_SECONDS
    begin = time.monotonic()
    result = reproduce(
        claims,
        planned,
        code,
        fixture_python,
        inputs_digest="0" * 64,
        record=lambda _fix, _failure, _tasks: None,
        timeout=budget,
        deadline=begin + budget + 0.2,
    )
    assert time.monotonic() - begin < budget + 20  # not the 20-s training, nor a hang
    assert not result.gate.passed
    [late] = [f for f in result.gate.findings if f.code == "B016"]
    assert late.severity == "error" and "train-smoke" in late.message
    assert result.attempts[0].exit_status is None  # the budget's timeout, then made short
    # the short scope never ended, so it is not kept: no change stays in the code unrecorded
    assert result.fixes == []
    assert "_repro_knob" not in (code / "train.py").read_text("utf-8")


def test_no_environment_is_tried_past_the_time_limit(raw_repo, tmp_path: Path) -> None:
    """The Builder tries no environment once the build's limit has passed (as when the
    Reproducer asks for the code's era late in a build): B016, each environment recorded as
    skipped, nothing resolved or installed."""
    from reprobridge_sdk.agent.builder import build_environment
    from reprobridge_sdk.agent.claims import load_claims
    from reprobridge_sdk.agent.intake import checkout, inventory

    repo, claims_file = raw_repo("no-deps")
    commit, date = checkout(str(repo), tmp_path / "checkout")
    intake = inventory(
        tmp_path / "checkout",
        load_claims(claims_file),
        source=str(repo),
        commit=commit,
        commit_date=date,
        inputs_digest="0" * 64,
    )
    record = build_environment(
        intake, tmp_path / "state", inputs_digest="0" * 64, deadline=time.monotonic() - 1
    )
    assert not record.gate.passed
    assert [f.code for f in record.gate.findings] == ["B016"]
    assert record.steps == []
    [skipped] = record.attempts
    assert not skipped.ok and skipped.outcome.startswith("skipped: the build's time limit")
