"""Packager: the artifact's manifest, guide and README, written through the authoring API.

Two steps, at two moments of the build:

* :func:`assemble` (after the Builder) makes the artifact the later phases work in: a
  manifest built from the claims and the plan (one task per planned claim; a smoke and a
  scored launcher per planned script, working directory under ``code/``), the environment
  part and files from the Builder's lock, then ``code import`` of the source at the pinned
  commit into ``code/`` (a git checkout, so that ``code record`` can turn each fix into a
  patch). A claim without a plan gets no task: the build report lists it as not run.
* :func:`finalize` (after the Distiller) adds the guide records (ambiguities, pitfalls,
  discrepancies; the change record is already written by ``code record``), renders the guide,
  writes the README section and validates with ``--strict``. Gate: no finding at all
  (B011 for each error or warning). The README names only commands that do what they say:
  a scored launcher that never ends on its own (its claims un-planned by the Reproducer,
  B061) is not in a plain ``--scope scored`` run (which would run until its timeout); it is
  named alone with its timeout, with why and how a reader reads what it reached, and the
  other scored launchers by name.

Task fields the claims file does not give are filled with what the build knows, never with
placeholders: ``dataset`` is ``hints.dataset`` or the data the Intake found for the script,
else "as loaded by <script>"; ``metric`` is ``measured``; ``kind`` is ``full`` (the launcher
runs the whole procedure); ``statistic`` is the claim's statistic over the scored
launcher's seeds when the Planner planned one (``ClaimPlan.statistic``), else the default
(one seed).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.agent.prerequisite import compose
from reprobridge_sdk.api import ArtifactDir, create, load
from reprobridge_sdk.authoring.codebase import import_code
from reprobridge_sdk.io import yamlio
from reprobridge_sdk.io.atomic import atomic_write_text
from reprobridge_sdk.model import Manifest
from reprobridge_sdk.model.build import (
    BuildFinding,
    IntakeRecord,
    LauncherPlan,
    PlanRecord,
)
from reprobridge_sdk.model.claims import Claims
from reprobridge_sdk.model.guide import Discrepancy
from reprobridge_sdk.validation import validate
from reprobridge_sdk.versions import NEWEST_FORMAT

__all__ = ["README_MARKER", "assemble", "finalize", "manifest_launcher", "replace_environment"]

#: First line of the README section the Packager owns (replaced on every build).
README_MARKER = "<!-- reprobridge build: generated section -->"
_SMOKE_TIMEOUT = 600
_SCORED_TIMEOUT = 3600


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (slug or "artifact")[:60]


def manifest_launcher(item: LauncherPlan) -> dict[str, Any]:
    """The manifest form of a planned launcher (working directory under ``code/``; its
    prerequisite steps first, in one shell line)."""
    workdir = "code" if item.workdir in {"", "."} else f"code/{item.workdir}"
    argv, shell = compose(item)
    data: dict[str, Any] = {
        "id": item.id,
        "description": (
            f"{'Short smoke run' if item.scope == 'smoke' else 'Scored run'} of {item.script}"
        ),
        "argv": argv,
        "workdir": workdir,
        "scope": item.scope,
        "timeout": _SMOKE_TIMEOUT if item.scope == "smoke" else _SCORED_TIMEOUT,
    }
    if item.env:
        data["env"] = dict(item.env)
    if shell:
        data["shell"] = True
    if item.seed_flag and item.seeds:
        # a scored launcher of a claim over several seeds declares them all
        data["seeds"] = list(item.seeds) if item.scope == "scored" else [item.seeds[0]]
    return data


def _dataset(script: str, claim_dataset: str | None, intake: IntakeRecord) -> str:
    if claim_dataset:
        return claim_dataset
    paths = [d.value for d in intake.data if d.where is not None and d.where.file == script]
    if paths:
        return ", ".join(paths[:3])
    return f"as loaded by {script}"


_ENV_FILES = ("environment/requirements.in", "environment/requirements.lock")


def replace_environment(out: Path, env_dir: Path) -> None:
    """Make the Builder's environment at ``env_dir`` the artifact's: its requirements and
    lock files, and the manifest's ``environment`` (interpreter, lock digest, resolved_for)."""
    for rel in _ENV_FILES:
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(env_dir / rel, target)
    environment = yamlio.load(env_dir / "rra.yaml").data["environment"]
    art = load(out)
    art.manifest.environment = type(art.manifest.environment).model_validate(environment)
    art.save()


def assemble(
    out: Path,
    source: str,
    *,
    claims: Claims,
    intake: IntakeRecord,
    plan: PlanRecord,
    env_dir: Path,
) -> ArtifactDir:
    """Create the artifact in ``out`` and import the source into ``code/``."""
    env_doc = yamlio.load(env_dir / "rra.yaml")
    environment = dict(env_doc.data["environment"])
    for rel in _ENV_FILES:
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(env_dir / rel, target)
    by_claim = {c.id: c for c in claims.claims}
    scripts = {item.id: item.script for item in plan.launchers}
    planned = {item.id: item for item in plan.launchers}
    tasks = []
    for claim_plan in plan.claims:
        if claim_plan.status != "planned" or claim_plan.scored is None:
            continue
        claim = by_claim[claim_plan.claim]
        published: dict[str, Any] = (
            {"value": claim.value} if claim.value is not None else {"range": claim.range}
        )
        if claim.unit:
            published["unit"] = claim.unit
        task: dict[str, Any] = {
            "id": claim.id,
            "title": claim.measured,
            "dataset": _dataset(scripts[claim_plan.scored], claim.hints.dataset, intake),
            "metric": claim.measured,
            "published": published,
            "direction": claim.direction,
            "kind": "full",
        }
        if claim_plan.statistic is not None:
            scored = planned[claim_plan.scored]
            task["statistic"] = {"aggregate": claim_plan.statistic, "seeds": len(scored.seeds)}
        if claim.location:
            task["location"] = {"section": claim.location}
        tasks.append(task)
    paper = claims.paper.model_dump(mode="json", exclude_none=True)
    data = {
        "rra_version": NEWEST_FORMAT,  # references carry 1.1 provenance (record digests)
        "artifact": {
            "id": _slug(intake.repo_name),
            "title": f"Reproduction of: {claims.paper.title}",
            "license": intake.license or "NOASSERTION",
            "paper": paper,
        },
        "codebase": {
            "upstream": {
                "repository": "https://example.invalid/pending.git",
                "commit": intake.commit,
            },
            "refined": {"kind": "directory", "path": "code"},
        },
        "environment": environment,
        "tasks": tasks,
        "launchers": [manifest_launcher(item) for item in plan.launchers],
    }
    if plan.conveniences:  # how the code runs, recorded without a patch (the Planner's)
        data["guide"] = {
            "changes": [c.model_dump(mode="json", exclude_none=True) for c in plan.conveniences]
        }
    manifest = Manifest.model_validate(data)
    if (out / "code").exists():
        shutil.rmtree(out / "code")
    art = create(out, manifest, overwrite=True)
    import_code(art, source, commit=intake.commit, as_="directory", force=True)
    return art.reload()


_README_TEXT = """{marker}
## Reproducing this artifact

This artifact was built by `reprobridge build` from {source} at commit `{commit}`.
{code}

```sh
reprobridge validate --strict .
reprobridge env create .           # the environment from {lock}
{runs}reprobridge audit .                # judged against the reference observations
```
{endless}
| Task | Published | References (mean) | Reproduced |
|---|---|---|---|
{rows}
"""
_COMPARED = "# the runs whose values are compared with the paper"


def _endless(plan: PlanRecord, manifest: Manifest) -> dict[str, str]:
    """The scored launchers that never end on their own, with why: those of the claims the
    Reproducer un-planned (B061), which keep their scored launcher (a claim the Planner left
    unplanned has none)."""
    ids = {launcher.id for launcher in manifest.launchers if launcher.scope == "scored"}
    return {
        claim.scored: claim.reason or "its run never ends on its own"
        for claim in plan.claims
        if claim.status == "unplanned" and claim.scored in ids
    }


def _run_commands(manifest: Manifest, endless: dict[str, str]) -> tuple[str, str]:
    """The README's run lines and, for launchers that never end on their own, what a reader
    does instead: the plain scored run would run until its timeout, so each is named alone,
    with its timeout, and the others by name."""
    lines = []
    if any(launcher.scope == "smoke" for launcher in manifest.launchers):
        lines.append("reprobridge run . --scope smoke    # a short check that everything works")
    scored = [launcher for launcher in manifest.launchers if launcher.scope == "scored"]
    if not endless:
        return "\n".join([*lines, f"reprobridge run . --scope scored   {_COMPARED}", ""]), ""
    ended = [launcher.id for launcher in scored if launcher.id not in endless]
    if ended:
        lines.append(f"reprobridge run . {' '.join(ended)}   {_COMPARED}")
    notes = []
    for launcher in (item for item in scored if item.id in endless):
        stop = f" --timeout {launcher.timeout:g}" if launcher.timeout is not None else ""
        lines.append(f"reprobridge run . {launcher.id}{stop}   # never ends on its own: see below")
        until = (
            f"it is stopped after its timeout of {launcher.timeout:g} s (give another with "
            "`--timeout`) or by Ctrl-C"
            if launcher.timeout is not None
            else "it runs until it is stopped by Ctrl-C"
        )
        notes.append(
            f"About `{launcher.id}`: {endless[launcher.id]}. When run, "
            f"{until}; what it printed until then is in the log.txt of its run directory, "
            "where the last value printed is the one it reached. The build took no reference "
            "observations from it, so the audit finds its tasks inconclusive (not measured)."
        )
    return "\n".join([*lines, ""]), "".join(f"\n{note}\n" for note in notes)


def _code_sentence(root: Path, guide: str, changes: int) -> str:
    """What the README says of ``code/``: the patches only when the artifact holds them."""
    patches = sorted((root / "patches").glob("*.patch")) if (root / "patches").is_dir() else []
    if patches:
        return (
            f"The refined code is in `code/`; each of the {len(patches)} change(s) to the "
            f"upstream code is a patch under `patches/`, listed in the change record of "
            f"[the guide]({guide})."
        )
    if changes:
        return (
            f"The refined code is in `code/`; its {changes} change(s) to the upstream code are "
            f"listed in the change record of [the guide]({guide})."
        )
    return "The refined code is in `code/`: the upstream code at that commit, unchanged."


def finalize(
    art: ArtifactDir,
    plan: PlanRecord,
    discrepancies: list[Discrepancy],
    rows: list[tuple[str, str, str, str]],
) -> list[BuildFinding]:
    """Write the guide records and the README section, save, and validate strictly."""
    manifest = art.manifest
    tasks = {t.id for t in manifest.tasks}
    guide = manifest.guide
    guide.ambiguities = [
        a.model_copy(update={"tasks": [t for t in a.tasks if t in tasks]}) for a in plan.ambiguities
    ]
    guide.pitfalls = [
        p.model_copy(update={"tasks": [t for t in p.tasks if t in tasks]}) for p in plan.pitfalls
    ]
    guide.discrepancies = discrepancies
    manifest.guide = guide
    art.save()
    art.write_guide()
    readme = art.root / "README.md"
    text = readme.read_text("utf-8") if readme.is_file() else f"# {manifest.artifact.title}\n\n"
    if README_MARKER in text:
        text = text.split(README_MARKER, 1)[0].rstrip() + "\n\n"
    guide_path = PurePosixPath(manifest.guide.path).as_posix()
    lock = manifest.environment.lock
    runs, endless = _run_commands(manifest, _endless(plan, manifest))
    section = _README_TEXT.format(
        marker=README_MARKER,
        source=manifest.codebase.upstream.repository,
        commit=manifest.codebase.upstream.commit,
        code=_code_sentence(art.root, guide_path, len(manifest.guide.changes)),
        lock=lock.path if lock is not None else "the environment part of rra.yaml",
        # no smoke launcher when the only script never ends on its own (B061)
        runs=runs,
        endless=endless,
        rows="\n".join(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows) or "| - | - | - | - |",
    )
    atomic_write_text(readme, text + section)
    result = validate(art.root, strict=True)
    return [
        build_finding(
            "B011",
            f"{item.code} {item.message}",
            path=item.path,
            hint=item.hint,
        )
        for item in result.findings
        if item.severity.value in {"error", "warning"}
    ]
