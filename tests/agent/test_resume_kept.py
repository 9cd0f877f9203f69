"""The author's recorded changes across the Reproducer's re-assembly of the artifact.

Real git repositories and a real ``code record``; the re-assembly is played by its two
effects on the artifact (the change record emptied, ``code/`` imported afresh), which is
what :func:`reprobridge_sdk.agent.packager.assemble` does without needing a locked
environment.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "authoring"))

from authoring_support import DEFECT_LINE, FIXED_LINE, make_paper_repo

from reprobridge_sdk.agent.gates import passed
from reprobridge_sdk.agent.pipeline import (
    BuildOptions,
    _author_changes,
    _forget_patches,
    _record_kept,
    _Stop,
    reproducer_digest,
)
from reprobridge_sdk.agent.state import BuildState
from reprobridge_sdk.api import load
from reprobridge_sdk.authoring.codebase import import_code, record_patch
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.model.build import AppliedFix, ReproducerRecord


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
