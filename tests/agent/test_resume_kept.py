"""The author's recorded changes across the Reproducer's re-assembly of the artifact.

Real git repositories and a real ``code record``; the re-assembly is played by its two
effects on the artifact (the change record emptied, ``code/`` imported afresh), which is
what :func:`reprobridge_sdk.agent.packager.assemble` does without needing a locked
environment.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "authoring"))

from authoring_support import DEFECT_LINE, FIXED_LINE, TRAIN_PY, make_paper_repo

from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.gates import passed
from reprobridge_sdk.agent.pipeline import (
    CLAIMS_PATCH_CHANGE,
    BuildOptions,
    _agent_made,
    _author_changes,
    _author_patch,
    _forget_patches,
    _record_kept,
    _Stop,
    reproducer_digest,
)
from reprobridge_sdk.agent.state import BuildState
from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.codebase import import_code, record_patch
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.model.build import AppliedFix, PlanRecord, ReproducerRecord


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "cache"))


def _artifact(tmp_path: Path) -> tuple[Path, Path]:
    make_paper_repo(tmp_path / "paper")
    out = tmp_path / "out"
    scaffold(out, InitOptions(id="tiny", title="Tiny"))
    import_code(out, str(tmp_path / "paper"), as_="directory", force=True)
    return out, tmp_path / "paper"


def _author_fix(out: Path) -> str:
    train = out / "code/train.py"
    train.write_text(train.read_text("utf-8").replace(DEFECT_LINE, FIXED_LINE), "utf-8")
    return record_patch(out, kind="correctness-fix", why="seed the generator").id


def _reassemble(out: Path, paper: Path) -> None:
    art = load(out)
    art.manifest.guide.changes = []
    art.save()
    import_code(out, str(paper), as_="directory", force=True)


def test_a_recorded_change_is_kept_once_and_no_patch_is_orphaned(tmp_path: Path) -> None:
    out, paper = _artifact(tmp_path)
    state = BuildState(out)
    agent_train = out / "code/train.py"
    agent_train.write_text(agent_train.read_text("utf-8") + "# agent\n", "utf-8")
    agent_id = record_patch(out, kind="convenience", why="the agent's own change").id
    # the stored Reproducer record names the agent's change: it is not the author's
    state.save(
        ReproducerRecord(
            inputs_digest="0" * 64,
            seconds=0.0,
            gate=passed(),
            fixes=[
                AppliedFix(launcher="l", rule="r", kind="convenience", summary="s", change=agent_id)
            ],
        )
    )
    author_id = _author_fix(out)
    kept = _author_changes(out, state)
    assert [c.id for c in kept] == [author_id]
    options = BuildOptions(source=str(paper), claims=tmp_path / "claims.yaml")
    # a recorded change is an input of the Reproducer: its digest changes
    assert reproducer_digest("b" * 64, options, kept) != reproducer_digest("b" * 64, options)

    state.keep_changes(kept)
    _forget_patches(out)
    assert not any((out / "patches").iterdir())
    _reassemble(out, paper)
    assert DEFECT_LINE in (out / "code/train.py").read_text("utf-8")
    _record_kept(out, kept)
    state.drop_kept()

    [change] = load(out).manifest.guide.changes
    assert (change.id, change.kind, change.rationale) == (
        author_id,
        "correctness-fix",
        "seed the generator",
    )
    assert [p.relative_to(out).as_posix() for p in (out / "patches").iterdir()] == [change.patch]
    assert FIXED_LINE in (out / "code/train.py").read_text("utf-8")
    assert "# agent" not in (out / "code/train.py").read_text("utf-8")


def test_a_kept_change_that_no_longer_applies_stops_with_b040_and_stays_kept(
    tmp_path: Path,
) -> None:
    out, paper = _artifact(tmp_path)
    state = BuildState(out)
    _author_fix(out)
    kept = _author_changes(out, state)
    state.keep_changes(kept)
    _forget_patches(out)
    _reassemble(out, paper)
    # the imported code no longer has the line the patch changes
    train = out / "code/train.py"
    train.write_text(train.read_text("utf-8").replace(DEFECT_LINE, "    rng = None\n"), "utf-8")
    with pytest.raises(_Stop) as stop:
        _record_kept(out, kept)
    assert stop.value.phase == "reproducer"
    assert [f.code for f in stop.value.findings] == ["B040"]
    assert load(out).manifest.guide.changes == []
    # kept in the build state: the next resume finds it there, not lost with the manifest
    assert state.kept_changes() == kept
    assert _author_changes(out, state) == kept


def _claims_with_patch(tmp_path: Path) -> Path:
    """A claims file that declares an author's patch fixing the seed of ``train.py``."""
    folder = tmp_path / "claims"
    folder.mkdir()
    fixed = TRAIN_PY.replace(DEFECT_LINE, FIXED_LINE)
    diff = difflib.unified_diff(
        TRAIN_PY.splitlines(keepends=True),
        fixed.splitlines(keepends=True),
        "a/train.py",
        "b/train.py",
    )
    (folder / "seed.diff").write_text("diff --git a/train.py b/train.py\n" + "".join(diff), "utf-8")
    claims = folder / "claims.yaml"
    claims.write_text(
        "claims_version: '1.0'\n"
        "paper: {title: Tiny, year: 2024}\n"
        "patch: {path: seed.diff, why: the generator takes the seed, kind: correctness-fix}\n"
        "claims:\n"
        "  - {id: main-result, measured: accuracy, value: 0.5, direction: higher}\n",
        "utf-8",
    )
    return claims


def test_the_claims_files_patch_is_no_author_change_on_resume(tmp_path: Path) -> None:
    out, paper = _artifact(tmp_path)
    state = BuildState(out)
    claims_file = _claims_with_patch(tmp_path)
    claims = load_claims(claims_file)
    options = BuildOptions(source=str(paper), claims=claims_file, resume=True)
    _author_patch(options, claims, out, out / "code")
    [recorded] = load(out).manifest.guide.changes
    assert FIXED_LINE in (out / "code/train.py").read_text("utf-8")
    # the build records it again from the claims file on every run: nothing to keep
    assert _author_changes(out, state, _agent_made(claims, _plan())) == []

    # the author records a fix of their own on top: only that one is kept
    train = out / "code/train.py"
    train.write_text(train.read_text("utf-8") + "# the author's note\n", "utf-8")
    author_id = record_patch(out, kind="convenience", why="a note").id
    kept = _author_changes(out, state, _agent_made(claims, _plan()))
    assert [c.id for c in kept] == [author_id]

    # the resume: re-assembly, the kept change, then the claims file's patch again
    state.keep_changes(kept)
    _forget_patches(out)
    _reassemble(out, paper)
    _author_patch(options, claims, out, out / "code")
    _record_kept(out, kept)
    state.drop_kept()
    changes = load(out).manifest.guide.changes
    assert [c.id for c in changes] == [recorded.id, author_id]
    text = (out / "code/train.py").read_text("utf-8")
    assert text.count(FIXED_LINE) == 1 and "# the author's note" in text
    assert sorted(p.name for p in (out / "patches").iterdir()) == sorted(
        Path(c.patch).name for c in changes if c.patch
    )


def _plan() -> PlanRecord:
    return PlanRecord(inputs_digest="0" * 64, seconds=0.0, gate=passed())


def test_without_a_claims_patch_a_change_of_that_id_is_the_authors(tmp_path: Path) -> None:
    out, _ = _artifact(tmp_path)
    state = BuildState(out)
    claims_file = _claims_with_patch(tmp_path)
    text = claims_file.read_text("utf-8")
    kept_lines = [line for line in text.splitlines() if "patch:" not in line]
    claims_file.write_text("\n".join(kept_lines), "utf-8")
    claims = load_claims(claims_file)
    train = out / "code/train.py"
    train.write_text(train.read_text("utf-8").replace(DEFECT_LINE, FIXED_LINE), "utf-8")
    record_patch(out, kind="correctness-fix", why="seed", change_id=CLAIMS_PATCH_CHANGE)
    kept = _author_changes(out, state, _agent_made(claims, _plan()))
    assert [c.id for c in kept] == [CLAIMS_PATCH_CHANGE]
