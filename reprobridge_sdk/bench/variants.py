"""The workspace variants of an artifact (preview): what an agent is given, one variant per
part of the artifact held back (``refined``, ``masked-*``, ``expert``, ``raw``).

What each variant holds is spec/bench.md §18.1; generation is a function of the artifact's
bytes and the upstream commit, so the same artifact gives the same variants anywhere.
"""

from __future__ import annotations

import copy
import os
import posixpath
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from reprobridge_sdk.api import ArtifactDir, load
from reprobridge_sdk.checkout import GitError
from reprobridge_sdk.checkout.materialize import CodebaseError
from reprobridge_sdk.contents import RUNS_DIR, artifact_files, files_digest
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io import yamlio
from reprobridge_sdk.io.atomic import atomic_directory, json_text
from reprobridge_sdk.loading import read_manifest
from reprobridge_sdk.model import MANIFEST_NAME, Launcher, Manifest
from reprobridge_sdk.model.bench import HeldBack, VariantFile, VariantRecord

from ._raw import upstream_tree

__all__ = [
    "CLAIMS_NAME",
    "EXPERT_NAME",
    "RECORD_NAME",
    "VARIANTS",
    "WORKSPACE_DIR",
    "generate_variants",
]

VARIANTS = (
    "raw",
    "refined",
    "masked-environment",
    "masked-launchers",
    "masked-extraction",
    "masked-guide",
    "expert",
)
RECORD_NAME = "variant.json"
WORKSPACE_DIR = "workspace"
CLAIMS_NAME = "rra-claims.json"
EXPERT_NAME = "expert-commands.json"

#: The fields of a launcher that say how to run it (held back by ``masked-launchers``).
RUN_FIELDS = (
    "argv",
    "shell",
    "workdir",
    "env",
    "seeds",
    "params",
    "timeout",
    "needs",
    "data",
    "resources",
    "deterministic",
)


@dataclass
class _Workspace:
    """What a workspace will hold: files copied from a source or written from bytes."""

    copied: dict[str, Path] = field(default_factory=dict)
    written: dict[str, bytes] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    held: list[HeldBack] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: str = "artifact"

    def drop(self, path: str, why: str) -> None:
        """Hold back a file, or every file under a directory."""
        prefix = path.rstrip("/") + "/"
        names = [n for n in (*self.copied, *self.links) if n == path or n.startswith(prefix)]
        for name in names:
            self.copied.pop(name, None)
            self.links.pop(name, None)
            self.held.append(HeldBack(what=name, why=why))


def _json_bytes(data: Any) -> bytes:
    return json_text(data, sort_keys=True).encode()


def _pop(item: dict[str, Any], key: str, pointer: str, why: str, ws: _Workspace) -> Any:
    if key not in item:
        return None
    ws.held.append(HeldBack(what=f"#{pointer}/{key}", why=why))
    return item.pop(key)


def _refine(data: dict[str, Any], ws: _Workspace) -> None:
    for index, task in enumerate(data.get("tasks") or []):
        if isinstance(task, dict):
            _pop(task, "reference", f"/tasks/{index}", "reference observations: the judge's", ws)


def _launchers(data: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    items = data.get("launchers") or []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]


def _mask_environment(data: dict[str, Any], manifest: Manifest, ws: _Workspace) -> None:
    why = "masked-environment: the lock and the data list"
    environment = data.get("environment") or {}
    _pop(environment, "lock", "/environment", why, ws)
    _pop(environment, "data", "/environment", why, ws)
    if manifest.environment.lock is not None:
        ws.drop(manifest.environment.lock.path, why)
    for item in manifest.environment.data:
        if item.destination:
            ws.drop(item.destination, why)
    for index, launcher in _launchers(data):
        _pop(launcher, "data", f"/launchers/{index}", why, ws)


def _mask_launchers(data: dict[str, Any], ws: _Workspace) -> None:
    why = "masked-launchers: how each launcher runs"
    for index, launcher in _launchers(data):
        for key in RUN_FIELDS:
            _pop(launcher, key, f"/launchers/{index}", why, ws)
    ws.notes.append("the manifest's launchers have no argv: it is not a valid RRA manifest")


def _mask_extraction(data: dict[str, Any], manifest: Manifest, ws: _Workspace) -> None:
    why = "masked-extraction: the measurements' extractors and their samples"
    for index, launcher in _launchers(data):
        _pop(launcher, "measurements", f"/launchers/{index}", why, ws)
        _pop(launcher, "samples", f"/launchers/{index}", why, ws)
    for declared in manifest.launchers:
        for sample in declared.samples:
            for path in [sample.log, *sample.outputs.values()]:
                if path:
                    ws.drop(path, why)


def _mask_guide(data: dict[str, Any], manifest: Manifest, ws: _Workspace) -> None:
    why = "masked-guide: the guide and its records"
    _pop(data, "guide", "", why, ws)
    ws.drop(manifest.guide.path, why)


def _scored_launcher(manifest: Manifest, task_id: str) -> Launcher | None:
    measuring = [
        launcher
        for launcher in manifest.launchers
        if any(m.task == task_id for m in launcher.measurements)
    ]
    scored = [launcher for launcher in measuring if launcher.scope == "scored"]
    chosen = scored or measuring
    return chosen[0] if chosen else None


def _expert_commands(manifest: Manifest) -> dict[str, Any]:
    from reprobridge_sdk.extract.extraction import ExtractionError  # noqa: PLC0415
    from reprobridge_sdk.run._execute import render_argv  # noqa: PLC0415 - one rendering
    from reprobridge_sdk.run.measure import template_context  # noqa: PLC0415

    tasks: list[dict[str, Any]] = []
    for task in manifest.tasks:
        launcher = _scored_launcher(manifest, task.id)
        if launcher is None:
            tasks.append({"task": task.id, "launcher": None, "runs": []})
            continue
        runs = []
        seeds: list[int | None] = list(launcher.seeds) or [None]
        for seed in seeds:
            run_dir = f"runs/{launcher.id}" + ("" if seed is None else f"-seed{seed}")
            seen_from_workdir = posixpath.relpath(run_dir, launcher.workdir)
            context = template_context(launcher.params, seed, Path(seen_from_workdir))
            try:
                argv = render_argv(launcher, context)
            except ExtractionError:
                argv = list(launcher.argv)
            runs.append({"seed": seed, "run_dir": run_dir, "argv": argv})
        tasks.append(
            {
                "task": task.id,
                "launcher": launcher.id,
                "workdir": launcher.workdir,
                "env": dict(launcher.env),
                "shell": launcher.shell,
                "runs": runs,
            }
        )
    return {"bench_version": "1.0", "tasks": tasks}


def _claims(manifest: Manifest) -> dict[str, Any]:
    paper = manifest.artifact.paper.model_dump(mode="json", exclude_none=True)
    claims = [
        {
            "task": task.id,
            "title": task.title,
            "location": task.location.model_dump(mode="json", exclude_none=True),
            "dataset": task.dataset,
            "metric": task.metric,
            "statistic": task.statistic.model_dump(mode="json"),
            "published": task.published.model_dump(mode="json", exclude_none=True),
            "direction": task.direction,
        }
        for task in manifest.tasks
    ]
    return {"bench_version": "1.0", "paper": paper, "claims": claims}


def _artifact_workspace(art: ArtifactDir) -> _Workspace:
    ws = _Workspace()
    for name in artifact_files(art.root, art.manifest):
        if name == MANIFEST_NAME:
            continue
        path = art.root / name
        if path.is_symlink():
            ws.links[name] = str(path.readlink())
        else:
            ws.copied[name] = path
    if (art.root / RUNS_DIR).exists():
        ws.held.append(HeldBack(what=f"{RUNS_DIR}/", why="evidence: the judge's"))
    return ws


def _manifest_variant(art: ArtifactDir, variant: str) -> _Workspace:
    ws = _artifact_workspace(art)
    _, document = read_manifest(art.root)
    data = copy.deepcopy(document.data)
    _refine(data, ws)
    if variant == "masked-environment":
        _mask_environment(data, art.manifest, ws)
    elif variant == "masked-launchers":
        _mask_launchers(data, ws)
    elif variant == "masked-extraction":
        _mask_extraction(data, art.manifest, ws)
    elif variant == "masked-guide":
        _mask_guide(data, art.manifest, ws)
    elif variant == "expert":
        ws.written[EXPERT_NAME] = _json_bytes(_expert_commands(art.manifest))
    yamlio.update(document, data)
    ws.written[MANIFEST_NAME] = yamlio.dumps(document).encode("utf-8")
    return ws


def _raw_workspace(art: ArtifactDir, *, fetch: bool) -> _Workspace:
    ws = _Workspace()
    tree = upstream_tree(art, fetch=fetch)
    ws.source = tree.source
    ws.notes.extend(tree.notes)
    ws.written.update(tree.files)
    ws.links.update(tree.links)
    ws.copied.update(tree.copied)
    ws.held.extend(tree.skipped)
    if CLAIMS_NAME in ws.written or CLAIMS_NAME in ws.links or CLAIMS_NAME in ws.copied:
        ws.notes.append(f"the upstream's own {CLAIMS_NAME} is replaced by the claims")
        ws.links.pop(CLAIMS_NAME, None)
        ws.copied.pop(CLAIMS_NAME, None)
    ws.written[CLAIMS_NAME] = _json_bytes(_claims(art.manifest))
    why = "raw: the artifact (manifest, lock, launchers, guide) is not given"
    ws.held.append(HeldBack(what=MANIFEST_NAME, why=why))
    ws.held.extend(
        HeldBack(what=name, why=why)
        for name in artifact_files(art.root, art.manifest)
        if name != MANIFEST_NAME
    )
    return ws


def _safe_name(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return (
        bool(parts)
        and not PurePosixPath(name).is_absolute()
        and all(part not in {"", ".", "..", ".git"} for part in parts)
    )


def _write(ws: _Workspace, target: Path) -> list[VariantFile]:
    names = sorted({*ws.copied, *ws.written, *ws.links}, key=lambda n: n.encode("utf-8"))
    files: list[VariantFile] = []
    for name in names:
        if not _safe_name(name):
            ws.held.append(HeldBack(what=name, why="a path that would leave the workspace"))
            continue
        path = target.joinpath(*name.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        if name in ws.links:
            path.symlink_to(ws.links[name])
            files.append(VariantFile(path=name, link=ws.links[name]))
            continue
        if name in ws.written:
            path.write_bytes(ws.written[name])
        else:
            shutil.copyfile(ws.copied[name], path, follow_symlinks=False)
        files.append(VariantFile(path=name, sha256=file_sha256(path), size=path.stat().st_size))
    return files


def _record(art: ArtifactDir, variant: str, ws: _Workspace, files: list[VariantFile]) -> bytes:
    upstream = art.manifest.codebase.upstream
    record = VariantRecord(
        variant=variant,
        artifact=art.manifest.artifact.id,
        artifact_version=art.manifest.artifact.version,
        manifest_sha256=file_sha256(art.manifest_path),
        artifact_files_sha256=files_digest(art.root, art.manifest),
        source=ws.source,
        upstream=upstream.repository if variant == "raw" else None,
        commit=upstream.commit if variant == "raw" else None,
        files=files,
        held_back=sorted(ws.held, key=lambda h: (h.what.encode("utf-8"), h.why)),
        notes=ws.notes,
    )
    return _json_bytes(record.model_dump(mode="json", exclude_none=True))


def _check_variants(variants: Iterable[str]) -> list[str]:
    wanted = list(dict.fromkeys(variants))
    unknown = [name for name in wanted if name not in VARIANTS]
    if unknown:
        message = f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}"
        raise UsageError(message, [finding("N004", message, hint="e.g. --variants raw,refined")])
    return wanted


def _check_target(target: Path) -> None:
    if target.is_symlink() or target.is_file():
        message = f"{target} exists and is not a variant folder"
        raise UsageError(message, [finding("N004", message, hint="choose another -o folder")])
    if target.is_dir() and any(target.iterdir()) and not (target / RECORD_NAME).is_file():
        message = f"{target} is not empty and holds no {RECORD_NAME}: not replacing it"
        raise UsageError(message, [finding("N004", message, hint="choose another -o folder")])


def generate_variants(
    artifact: str | os.PathLike[str],
    out: str | os.PathLike[str],
    variants: Sequence[str] = VARIANTS,
    *,
    fetch: bool = False,
) -> list[VariantRecord]:
    """Write ``OUT/<variant>/{workspace/, variant.json}`` for each variant; their records.

    Raises :class:`ArtifactError` when the artifact (or ``raw``'s upstream) cannot be read,
    :class:`UsageError` for an unknown variant or a bad output folder. Written atomically.
    """
    wanted = _check_variants(variants)
    art = load(artifact)
    records: list[VariantRecord] = []
    for variant in wanted:
        target = Path(out) / variant
        _check_target(target)
        try:
            ws = (
                _raw_workspace(art, fetch=fetch)
                if variant == "raw"
                else _manifest_variant(art, variant)
            )
        except GitError as exc:
            message = f"git failed while reading the upstream: {exc.stderr}"
            raise CodebaseError(message, [finding("C001", message)]) from None
        with atomic_directory(target, replace=True, fresh=False) as building:
            files = _write(ws, building / WORKSPACE_DIR)
            record_bytes = _record(art, variant, ws, files)
            (building / RECORD_NAME).write_bytes(record_bytes)
        records.append(VariantRecord.model_validate_json(record_bytes))
    return records
