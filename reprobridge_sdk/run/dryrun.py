"""``run --dry-run``: prepare every run as the runner would, without starting one.

A planned run's *problems* are where the real run would fail before starting, its *findings*
where the runner would refuse the invocation (C008, by the runner's own
:func:`~reprobridge_sdk.checkout.materialize.checkout_blocker`). Nothing is built, written or
fetched. Spec: ``spec/runner.md#runner`` (Preparing without running).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reprobridge_sdk.extract.pattern import PatternError, author_pattern
from reprobridge_sdk.extract.template import TemplateError, render_template
from reprobridge_sdk.findings import Finding

from ._execute import render_argv
from .measure import template_context
from .select import load_artifact, select_launchers, usage_error, with_needs

__all__ = ["PlannedRun", "dry_run"]

#: Stands for the run id in ``{run_dir}`` (a run id is made when the run starts).
RUN_ID_PLACEHOLDER = "<run id>"


@dataclass
class PlannedRun:
    """One run as it would start."""

    launcher: str
    seed: int | None
    run_dir: str
    workdir: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    environment: str = ""
    problems: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The run would start its command."""
        return not self.problems and not self.findings

    def to_dict(self) -> dict[str, Any]:
        """The JSON form printed by ``run --dry-run --json``: the fields, then ``ok``."""
        findings = [item.to_dict() for item in self.findings]
        return {**asdict(self), "findings": findings, "ok": self.ok}


def dry_run(
    artifact_dir: str | os.PathLike[str] = ".",
    launchers: Sequence[str] | None = None,
    *,
    scope: str | None = None,
    seeds: Sequence[int] | None = None,
    env_mode: str = "cached",
    runs_dir: str | os.PathLike[str] | None = None,
) -> list[PlannedRun]:
    """The runs :func:`reprobridge_sdk.run.runner.run` would start, prepared but not started.

    Raises what ``run`` raises for a bad request (:class:`UsageError` with N codes) or an
    unreadable artifact (:class:`ArtifactError`).
    """
    if env_mode not in ("cached", "current"):
        raise usage_error(
            "N004", f"unknown environment mode {env_mode!r}", hint="cached or current"
        )
    root, manifest = load_artifact(artifact_dir)
    root = root.resolve()
    chosen = select_launchers(manifest, launchers, scope)
    runs = Path(runs_dir).resolve() if runs_dir is not None else root / "runs"
    selected = with_needs(manifest, chosen, runs)
    environment, env_problem = _environment(root, manifest, env_mode)
    refusals = _codebase_refusals(root, manifest)
    plan: list[PlannedRun] = []
    for launcher in selected:
        own = list(seeds) if seeds is not None and launcher.seeds else list(launcher.seeds)
        for seed in own or (None,):
            seed_part = "" if seed is None else f"-s{seed}"
            run_dir = runs / f"{launcher.id}{seed_part}-{RUN_ID_PLACEHOLDER}"
            context = template_context(launcher.params, seed, run_dir)
            planned = PlannedRun(
                launcher=launcher.id,
                seed=seed,
                run_dir=str(run_dir),
                workdir=str(root / launcher.workdir),
                argv=list(launcher.argv),
                environment=environment,
                findings=list(refusals),
            )
            if env_problem:
                planned.problems.append(env_problem)
            try:
                planned.argv = render_argv(launcher, context)  # as the run quotes it
                planned.env = {k: render_template(v, context) for k, v in launcher.env.items()}
                planned.outputs = {
                    output.id: str(root / launcher.workdir / render_template(output.path, context))
                    for output in launcher.outputs
                }
            except TemplateError as exc:
                planned.problems.append(f"template-error: {exc.message}")
            if not (root / launcher.workdir).is_dir():
                planned.problems.append(
                    f"environment-error: working directory {launcher.workdir!r} is missing"
                )
            for landmark in launcher.landmarks:
                try:
                    author_pattern(landmark.pattern)
                except PatternError as exc:
                    planned.problems.append(f"landmark {landmark.id!r}: {exc.message}")
            plan.append(planned)
    return plan


def _codebase_refusals(root: Path, manifest: Any) -> list[Finding]:
    """What makes the runner refuse the refined code before any run: the C008 of
    ``checkout_blocker`` for a patch series (the runner's and validator's own decision)."""
    if manifest.codebase.refined.kind != "patches":
        return []
    from reprobridge_sdk.checkout.materialize import (  # noqa: PLC0415 - only for a series
        CHECKOUT_DIR,
        checkout_blocker,
    )

    blocker = checkout_blocker(root / CHECKOUT_DIR)
    return [] if blocker is None else [blocker]


def _environment(root: Path, manifest: Any, env_mode: str) -> tuple[str, str | None]:
    """What runs would execute in, and why that cannot be prepared (None if it can)."""
    if env_mode == "current":
        return f"current interpreter {sys.executable}", None
    lock = manifest.environment.lock
    if lock is None:
        return "cached environment", "environment-error: no lock to build it from (--env current)"
    path = root / lock.path
    description = f"cached environment built from {lock.path} ({lock.format})"
    if not path.is_file():
        return description, f"environment-error: the lock {lock.path} is missing"
    return description, None
