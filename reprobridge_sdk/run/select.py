"""Choosing what to run: load the artifact, select launchers, add the launchers they need."""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.model import Launcher, Manifest

from .evidence import iter_runs

__all__ = ["load_artifact", "select_launchers", "usage_error", "with_needs"]


def load_artifact(artifact_dir: str | os.PathLike[str]) -> tuple[Path, Manifest]:
    """Load an artifact for running; :class:`UsageError` (N007) when it cannot be read."""
    from reprobridge_sdk.api import load  # noqa: PLC0415 - YAML only when needed

    try:
        loaded = load(artifact_dir)
    except ValidationError as exc:
        msg = f"{artifact_dir}: the manifest is not valid ({exc.error_count()} errors)"
        hint = "run 'reprobridge validate' for the details"
        raise UsageError(msg, [finding("N007", msg, hint=hint)]) from None
    except Exception as exc:  # ArtifactError, YAML errors: all mean "cannot load"
        msg = f"{artifact_dir}: cannot load the artifact: {exc}"
        raise UsageError(msg, [finding("N007", msg)]) from None
    return loaded.root, loaded.manifest


def usage_error(code: str, message: str, *, path: str = "", hint: str | None = None) -> UsageError:
    return UsageError(message, [finding(code, message, path=path, hint=hint)])


def select_launchers(
    manifest: Manifest, ids: Sequence[str] | None, scope: str | None
) -> list[Launcher]:
    known = [launcher.id for launcher in manifest.launchers]
    if scope not in (None, "smoke", "scored"):
        raise usage_error("N004", f"unknown scope {scope!r}", hint="use smoke or scored")
    if ids:
        chosen: list[Launcher] = []
        for launcher_id in ids:
            if launcher_id not in known:
                close = difflib.get_close_matches(launcher_id, known, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(known)}"
                raise usage_error(
                    "N001", f"no launcher {launcher_id!r}", path="/launchers", hint=hint
                )
            launcher = manifest.launcher(launcher_id)
            if scope is not None and launcher.scope != scope:
                msg = f"launcher {launcher_id!r} has scope {launcher.scope!r}, not {scope!r}"
                raise usage_error("N002", msg)
            if launcher not in chosen:
                chosen.append(launcher)
    else:
        chosen = [lch for lch in manifest.launchers if scope is None or lch.scope == scope]
    if not chosen:
        raise usage_error("N005", "no launcher selected", hint="check the ids and --scope")
    return chosen


def with_needs(manifest: Manifest, chosen: list[Launcher], runs_dir: Path) -> list[Launcher]:
    """Add needed launchers that have no earlier succeeded run."""
    selected = {launcher.id for launcher in chosen}
    if all(need in selected for launcher in chosen for need in launcher.needs):
        return [launcher for launcher in manifest.launchers if launcher.id in selected]
    succeeded = {rec.launcher for _, rec in iter_runs(runs_dir) if rec.status == "succeeded"}
    queue = list(chosen)
    while queue:
        for need in queue.pop().needs:
            if need in selected or need in succeeded:
                continue
            try:
                extra = manifest.launcher(need)
            except KeyError:
                continue  # an undeclared need: the validator reports it (R003)
            selected.add(need)
            queue.append(extra)
    return [launcher for launcher in manifest.launchers if launcher.id in selected]
