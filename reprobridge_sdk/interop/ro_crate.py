"""An RO-Crate of an artifact and its runs: a Process Run Crate (profile 0.5), with ``rocrate``.

The artifact is the root entity, each launcher a ``SoftwareApplication`` and each recorded
run a ``CreateAction`` with its record, log and outputs (``spec/runner.md#exports``). Files
are copied into the crate; one a hostile record names outside its run folder is left out.
Needs the ``ro-crate`` extra (E015 without it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from reprobridge_sdk.errors import UsageError, require_extra
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io.atomic import atomic_directory
from reprobridge_sdk.model.manifest import MANIFEST_MEDIA_TYPE
from reprobridge_sdk.run.evidence import iter_runs
from reprobridge_sdk.versions import MANIFEST_NAME

__all__ = ["PROCESS_RUN_CRATE", "export_ro_crate"]

#: The profile the crate conforms to.
PROCESS_RUN_CRATE = "https://w3id.org/ro/wfrun/process/0.5"
RO_CRATE_1_1 = "https://w3id.org/ro/crate/1.1"
_SPDX = "https://spdx.org/licenses/"


def _inside(base: Path, relative: str) -> Path | None:
    path = (base / relative).resolve()
    if not path.is_file():
        return None
    try:
        path.relative_to(base.resolve())
    except ValueError:
        return None
    return path


def export_ro_crate(artifact_dir: str | os.PathLike[str], output: str | os.PathLike[str]) -> Path:
    """Write the RO-Crate of the artifact at ``artifact_dir`` into the directory ``output``."""
    require_extra("rocrate", "ro-crate", feature="export ro-crate")
    from rocrate.rocrate import ROCrate  # noqa: PLC0415 - optional extra

    from reprobridge_sdk.api import load  # noqa: PLC0415 - upper layer, loaded on use

    art = load(artifact_dir)
    root = art.root
    target = Path(output)
    _require_empty(target)
    manifest = art.manifest
    crate = ROCrate()
    _describe(crate, manifest.artifact)
    manifest_file = _add_documents(crate, root, manifest)
    upstream = manifest.codebase.upstream
    code_url = upstream.repository if upstream.repository.startswith("https://") else MANIFEST_NAME
    tools: dict[str, Any] = {
        launcher.id: _tool_entity(crate, launcher.id, code_url, upstream.commit)
        for launcher in manifest.launchers
    }
    actions = []
    runs_dir = root / "runs"
    for run_dir, record in iter_runs(runs_dir) if runs_dir.is_dir() else []:
        tool = tools.get(record.launcher)
        if tool is None:  # a run of a launcher the manifest no longer declares
            tool = tools[record.launcher] = _tool_entity(
                crate, record.launcher, code_url, upstream.commit
            )
        results = _run_results(crate, run_dir, record)
        action = _run_action(crate, record)
        action["instrument"] = tool
        action["object"] = manifest_file
        action["result"] = results
        actions.append(action)
    if actions:
        crate.root_dataset["mentions"] = actions if len(actions) > 1 else actions[0]
    # Written beside the target and renamed into place (over the empty directory checked
    # above, if any): a crate is whole or absent.
    with atomic_directory(target) as staging:
        crate.write(staging)
    return target / "ro-crate-metadata.json"


def _require_empty(target: Path) -> None:
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        item = finding(
            "E018",
            f"the crate directory {target} exists and is not empty",
            hint="name a new or empty directory with -o",
        )
        raise UsageError(f"cannot write the crate into {target}", [item])


def _describe(crate: Any, meta: Any) -> None:
    """The crate's name, description, licence and the profiles it conforms to."""
    from rocrate.model.contextentity import ContextEntity  # noqa: PLC0415 - optional extra

    crate.name = meta.title
    crate.description = f"Refined Reproducible Artifact of the paper: {meta.paper.title}"
    crate.license = _SPDX + meta.license if " " not in meta.license else meta.license
    profile = crate.add(
        ContextEntity(
            crate,
            PROCESS_RUN_CRATE,
            properties={
                "@type": ["CreativeWork", "Profile"],
                "name": "Process Run Crate",
                "version": "0.5",
            },
        )
    )
    crate.root_dataset["conformsTo"] = profile
    # The Process Run Crate 0.5 profile is defined on RO-Crate 1.1, whose terms this crate
    # also follows: the descriptor names both specifications.
    written = crate.metadata.get("conformsTo")
    written = written if isinstance(written, list) else [written] if written else []
    versions = [{"@id": w} if isinstance(w, str) else w for w in written]
    if RO_CRATE_1_1 not in {v.get("@id") for v in versions if isinstance(v, dict)}:
        versions.append({"@id": RO_CRATE_1_1})
    crate.metadata["conformsTo"] = versions


def _add_documents(crate: Any, root: Path, manifest: Any) -> Any:
    """Add the manifest, the guide and the lock; the manifest's file entity."""
    manifest_file = crate.add_file(
        root / MANIFEST_NAME,
        dest_path=MANIFEST_NAME,
        properties={"name": "Manifest", "encodingFormat": MANIFEST_MEDIA_TYPE},
    )
    for relative, name in [("GUIDE.md", "Reproduction guide")]:
        if (root / relative).is_file():
            crate.add_file(root / relative, dest_path=relative, properties={"name": name})
    lock = manifest.environment.lock
    if lock is not None and _inside(root, lock.path) is not None:
        crate.add_file(root / lock.path, dest_path=lock.path, properties={"name": "Lock"})
    return manifest_file


def _tool_entity(crate: Any, launcher_id: str, code_url: str, commit: str) -> Any:
    from rocrate.model.contextentity import ContextEntity  # noqa: PLC0415 - optional extra

    return crate.add(
        ContextEntity(
            crate,
            f"#launcher-{launcher_id}",
            properties={
                "@type": "SoftwareApplication",
                "name": f"launcher {launcher_id}",
                "url": code_url,
                "version": commit,
            },
        )
    )


def _run_results(crate: Any, run_dir: Path, record: Any) -> list[Any]:
    """Add a run's record, log and outputs; their file entities."""
    base = f"runs/{run_dir.name}"
    results = [
        crate.add_file(
            run_dir / "record.json",
            dest_path=f"{base}/record.json",
            properties={"name": f"Evidence record of {record.run_id}"},
        )
    ]
    named = [record.log.path] if record.log else []
    named += [output.path for output in record.outputs]
    for relative in named:
        found = _inside(run_dir, relative)
        if found is not None:
            rel = found.relative_to(run_dir.resolve()).as_posix()
            results.append(crate.add_file(found, dest_path=f"{base}/{rel}"))
    return results


def _run_action(crate: Any, record: Any) -> Any:
    """The run's ``CreateAction``."""
    from rocrate.model.contextentity import ContextEntity  # noqa: PLC0415 - optional extra

    properties: dict[str, Any] = {
        "@type": "CreateAction",
        "name": f"Run {record.run_id} of launcher {record.launcher}"
        + (f", seed {record.seed}" if record.seed is not None else ""),
        "startTime": record.started_at,
        "actionStatus": {
            "@id": "http://schema.org/CompletedActionStatus"
            if record.status == "succeeded"
            else "http://schema.org/FailedActionStatus"
        },
    }
    if record.ended_at:
        properties["endTime"] = record.ended_at
    if record.status != "succeeded":
        detail = record.failure.reason if record.failure else record.status
        properties["error"] = str(detail)
    return crate.add(ContextEntity(crate, f"#run-{record.run_id}", properties=properties))
