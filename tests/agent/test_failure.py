"""The failure report of a stopped build: class by code, what was tried, commands that exist."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.agent.failure import CLASSES, failure_report
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.agent.pipeline import render_summary
from reprobridge_sdk.agent.state import BuildState, RecordedChange
from reprobridge_sdk.model.build import (
    BuilderRecord,
    BuildReport,
    PhaseName,
    ReproducerRecord,
    ResolveStep,
    SmokeAttempt,
)

_DIGEST = "0" * 64


def _repro(error: str | None, out: Path) -> ReproducerRecord:
    return ReproducerRecord(
        inputs_digest=_DIGEST,
        seconds=1.0,
        gate=gate_from([build_finding("B007", "smoke launcher 'train-smoke' fails")]),
        attempts=[
            SmokeAttempt(
                launcher="train-smoke",
                argv=["python", "train.py"],
                workdir="code",
                exit_status=1,
                seconds=0.5,
                error=error,
            )
        ],
    )


def _report(phase: PhaseName, code: str, out: Path, record=None, **kw):  # type: ignore[no-untyped-def]
    return failure_report(
        phase,
        [build_finding(code, "stopped")],
        record,
        source="/src/repo",
        claims=Path("/src/claims.yaml"),
        out=out,
        **kw,
    )


@pytest.mark.parametrize(
    ("phase", "code", "kind"),
    [
        ("intake", "B002", "hint-not-understood"),
        ("intake", "B003", "source-unavailable"),
        ("builder", "B005", "environment-unresolvable"),
        ("builder", "B006", "import-fails"),
        ("reproducer", "B007", "run-fails"),
        ("reproducer", "B021", "run-fails"),
        ("reproducer", "B040", "recorded-change-fails"),
        ("distiller", "B009", "extraction-fails"),
        ("distiller", "B010", "extraction-fails"),
        ("packager", "B011", "validation-fails"),
        ("reviewer", "B012", "review-fails"),
        ("reviewer", "B016", "over-budget"),
    ],
)
def test_the_class_comes_from_the_first_error_code(
    tmp_path: Path, phase: PhaseName, code: str, kind: str
) -> None:
    report = _report(phase, code, tmp_path / "out")
    assert (report.phase, report.failure_class, report.codes) == (phase, kind, [code])
    assert report.unblock[-1].endswith("--resume")


def test_every_error_code_of_a_gate_has_a_class() -> None:
    from reprobridge_sdk.findings import registry

    stopping = {
        code
        for code, info in registry().items()
        if code.startswith("B") and info.severity.value == "error" and code != "B001"
    }
    assert stopping <= set(CLASSES)  # B001 ends the build before any phase (exit 2)


def test_a_missing_module_of_the_repository_is_own_package_missing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "code/src/mypkg").mkdir(parents=True)
    error = "ModuleNotFoundError: No module named 'mypkg.layers' @ code/src/train.py:3"
    report = _report("reproducer", "B007", out, _repro(error, out))
    assert report.failure_class == "own-package-missing"
    assert report.unblock[0] == f"edit {out / 'code/src/train.py'}"
    # a module the repository does not hold is a plain failing run
    other = _repro("ModuleNotFoundError: No module named 'torch' @ code/src/train.py:1", out)
    assert _report("reproducer", "B007", out, other).failure_class == "run-fails"


_MUTAG = (
    "FileNotFoundError: [Errno 2] No such file or directory: 'dataset/MUTAG/MUTAG.txt' @ util.py:39"
)


def _gin(tmp_path: Path, readme: str, files: tuple[str, ...] = ()) -> list[str]:
    """The steps of a build whose smoke run misses a file (GIN's shape): its README says to
    unpack an archive first."""
    out = tmp_path / "out"
    (out / "code").mkdir(parents=True)
    (out / "code/README.md").write_text(readme, "utf-8")
    for rel in files:
        (out / "code" / rel).write_text("", "utf-8")
    return _report("reproducer", "B007", out, _repro(_MUTAG, out)).unblock


def test_an_archive_the_readme_unpacks_and_the_repository_lacks_is_the_step_to_take(
    tmp_path: Path,
) -> None:
    """GIN: the README says ``unzip dataset.zip`` and the snapshot has no dataset.zip; the
    report says to add it and unpack it, names the README's step and the missing file, and
    then resumes, instead of editing the script that opened the file."""
    add, record, resume = _gin(
        tmp_path, "## Test run\nUnzip the dataset file\n```\nunzip dataset.zip\n```\n"
    )
    code = tmp_path / "out/code"
    assert add.startswith(f"add {code / 'dataset.zip'} ")
    assert "README.md" in add and "unzip dataset.zip" in add and "dataset/MUTAG/MUTAG.txt" in add
    words = shlex.split(record)
    assert words[:3] == ["reprobridge", "code", "record"]
    why = words[words.index("--why") + 1]
    assert "unzip dataset.zip" in why and "dataset/MUTAG/MUTAG.txt" in why
    assert shlex.split(resume)[:2] == ["reprobridge", "build"] and resume.endswith("--resume")


@pytest.mark.parametrize(
    ("readme", "files"),
    [
        # the archive is there: the code is what to look at
        ("```\nunzip dataset.zip\n```\n", ("dataset.zip",)),
        # an archive outside the repository, or one a shell would expand, is not named
        (
            "```\nunzip ../../dataset.zip\nunzip /tmp/dataset.zip\nunzip $HOME/dataset.zip\n```\n",
            (),
        ),
        # an archive whose name has nothing to do with the missing file, alone or among several
        ("```\nunzip models.zip\n```\n", ()),
        ("```\nunzip models.zip\ntar xzf logs.tar.gz\n```\n", ()),
        # no step that unpacks anything
        ("```\npython main.py\n```\n", ()),
    ],
    ids=[
        "archive-present",
        "outside-or-expanded",
        "unrelated-archive",
        "unrelated-archives",
        "no-unpack-step",
    ],
)
def test_without_a_missing_archive_the_step_is_to_edit_the_code(
    tmp_path: Path, readme: str, files: tuple[str, ...]
) -> None:
    edit, _, _ = _gin(tmp_path, readme, files)
    assert edit == f"edit {tmp_path / 'out/code/util.py'}"


def test_hostile_text_in_the_error_and_the_paths_is_quoted_not_run(tmp_path: Path) -> None:
    out = tmp_path / "o u;t"
    (out / "code").mkdir(parents=True)
    error = "NameError: name '$(touch pwned)' is not defined @ code/a b;c.py:7"
    report = _report("reproducer", "B007", out, _repro(error, out))
    edit, record, resume = report.unblock
    assert shlex.split(edit) == ["edit", str(out / "code/a b;c.py")]
    words = shlex.split(record)
    assert words[words.index("--artifact") + 1] == str(out)
    assert words[words.index("--why") + 1] == (
        "The smoke run failed with NameError: name '$(touch pwned)' is not defined"
    )
    assert shlex.split(resume)[-3:] == ["-o", str(out), "--resume"]
    assert "$(" not in record.replace("'$(touch pwned)'", "")  # never in double quotes
    assert report.tried == [f"smoke run 'train-smoke': exit 1: {error}"]


def test_a_message_quoting_a_name_reads_as_typed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "code").mkdir(parents=True)
    error = "NameError: name 'os' is not defined @ train.py:17"
    report = _report("reproducer", "B007", out, _repro(error, out))
    edit, record, _ = report.unblock
    assert edit == f"edit {out / 'code/train.py'}"
    assert record.endswith(
        "--kind execution-fix --why \"The smoke run failed with NameError: name 'os' is not "
        'defined"'
    )


def test_an_error_without_a_place_still_names_code_to_edit(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "code").mkdir(parents=True)
    for error in (None, "garbage that is no signature", "KeyError: 'x' @ None:None"):
        report = _report("reproducer", "B007", out, _repro(error, out))
        assert report.unblock[0] == f"edit {out / 'code'}"
        assert len(report.unblock) == 3


def test_over_budget_resumes_with_twice_the_time_and_repeats_the_options(tmp_path: Path) -> None:
    report = _report(
        "distiller",
        "B016",
        tmp_path / "out",
        options=["--smoke-budget", "30"],
        max_minutes=5,
    )
    words = shlex.split(report.unblock[-1])
    assert words[words.index("--max-minutes") + 1] == "10"
    assert words[words.index("--smoke-budget") + 1] == "30"


def test_the_builder_steps_are_what_was_tried(tmp_path: Path) -> None:
    record = BuilderRecord(
        inputs_digest=_DIGEST,
        seconds=1.0,
        gate=gate_from([build_finding("B005", "no resolution")]),
        python="3.11",
        requirements=["oldpkg"],
        steps=[
            ResolveStep(name="declared", requirements=["oldpkg"], lowest=False, ok=False, why="x")
        ],
    )
    report = _report("builder", "B005", tmp_path / "out", record)
    assert report.tried == ["resolve (declared): failed: x"]
    assert report.unblock[0] == "edit /src/repo/requirements.txt"


def test_every_command_a_report_names_exists(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "code").mkdir(parents=True)
    commands = set()
    for code in sorted(set(CLASSES)):
        phase: PhaseName = "reproducer" if code in {"B007", "B040"} else "builder"
        for step in _report(phase, code, out, max_minutes=1).unblock:
            if not step.startswith(("edit ", "add ")):
                words = shlex.split(step)
                assert words[0] == "reprobridge", step
                commands.add(tuple(w for w in words[1:3] if not w.startswith(("/", "-"))))
    assert commands == {("build",), ("code", "record"), ("code", "status"), ("validate",)}
    for command in sorted(commands):
        done = subprocess.run(
            [sys.executable, "-m", "reprobridge_sdk", *command, "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, (command, done.stderr)


def test_the_summary_prints_the_class_and_the_steps(tmp_path: Path) -> None:
    failure = _report("builder", "B006", tmp_path / "out")
    report = BuildReport(
        source="/src/repo",
        artifact=str(tmp_path / "out"),
        passed=False,
        stopped_at="builder",
        failure=failure,
    )
    lines = render_summary(report).splitlines()
    assert "failure: import-fails at builder (B006)" in lines
    assert [line.strip() for line in lines[-2:]] == [
        f"{n}. {step}" for n, step in enumerate(failure.unblock, start=1)
    ]
    assert BuildReport.model_validate_json(report.model_dump_json()) == report


def test_kept_changes_round_trip_and_are_dropped(tmp_path: Path) -> None:
    state = BuildState(tmp_path)
    assert state.kept_changes() is None
    change = RecordedChange(
        id="execution-fix-1",
        kind="execution-fix",
        summary="import os",
        rationale="os is used and not imported",
        tasks=["accuracy"],
        patch="# execution-fix: import os\n\ndiff --git a/t.py b/t.py\n",
    )
    state.keep_changes([change])
    assert state.kept_changes() == [change]
    state.drop_kept()
    assert state.kept_changes() is None
    # a broken file is no kept change (the manifest's change record is read instead)
    state.root.joinpath("recorded-changes.json").write_text("{not json", "utf-8")
    assert state.kept_changes() is None
