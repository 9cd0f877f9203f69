"""Builder: requirements, versions of the code's era, a hashed lock and a fresh environment.

Rules, in order:

1. **Requirements.** The claims file's ``requirements`` first (they replace the
   repository's line for the same distribution); then the first ``requirements*.txt``/
   ``.in`` the Intake found (top level first), else the ``install_requires`` of ``setup.py``
   or ``setup.cfg``, the ``[project] dependencies`` of ``pyproject.toml``, or the ``pip``
   section of ``environment.yml``, pins as written. Then every third-party module the
   planned scripts reach (their import closure, :mod:`reprobridge_sdk.agent.imports`; a
   module only a side script imports is no requirement) that no requirement provides is
   added through :data:`IMPORT_TO_DISTRIBUTION` (a maintained map of import names to
   distributions; an unknown name is its own distribution name), recorded, and marked
   optional when its import is. Build tools (:data:`BUILD_TOOLS`) are never inferred from
   ``setup.py``; ``pkg_resources`` in the code requires setuptools, unpinned.
   ``-r``/``-e``/URL lines and environment markers that do not apply are dropped, recorded.
2. **Platform-bound pins.** ``nvidia-*``, ``triton`` and ``pytorch-triton`` pins are
   CUDA-only wheels: they are dropped (their CPU equivalent is nothing: the CPU builds of the
   frameworks that need them bundle what they use), and a ``+cuXYZ`` local version of a
   framework pin is cut to the public version. Nothing is downloaded to decide this.
3. **Versions.** Resolution (``uv pip compile``, wheels only, for the installed
   interpreter) goes step by step and stops at the first step that resolves:

   a. ``declared``: the requirements as declared, nothing newer than the commit date;
   b. ``lower-bounds``: exact and upper bounds relaxed to lower bounds (``==1.2`` becomes
      ``>=1.2``), still bounded by the commit date (skipped when nothing changes);
   c. ``newest``: as declared, the newest versions (no date bound);
   d. ``newest-lower-bounds``: relaxed, the newest versions (skipped as b);
   e. ``required-only``: relaxed and newest, without the requirements added only for
      optional imports (skipped when there are none);
   f. ``source-build``: when a step failed because a requirement has no wheel for the
      interpreter, the relaxed requirements, newest, with source distributions allowed (a
      pure-Python sdist builds anywhere; one that needs a compiler fails when the
      environment is built, B005). No date bound: it would hold back the build backend
      (setuptools) the sdist builds with.

   Nothing resolves to the lowest versions. Each step is recorded with its reason and,
   when it fails, the resolver's last lines. No step resolving is B005.
4. **Lock.** The chosen versions (every distribution of the resolution, exactly pinned)
   become ``environment/requirements.in``; ``reprobridge lock`` (the env API) turns them
   into the hashed lock. The interpreter is the one running the build: no interpreter is
   ever downloaded.
5. **Environment and gate.** The environment is built from the lock in the SDK's cache
   (shared by every artifact with the same lock). Gate: every required third-party module
   of the closure imports there (B006 for each that does not, with the error's last line
   and its reason when it is the network or a GPU); an optional one that does not, or whose
   requirement was left out, is B023 (a warning).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from reprobridge_sdk.agent._sandbox import confined
from reprobridge_sdk.agent.distributions import BUILD_TOOLS, IMPORT_TO_DISTRIBUTION
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.env._resolvers import index_url, isolated_environ
from reprobridge_sdk.env.lock import lock_artifact
from reprobridge_sdk.env.venv import EnvironmentBuildError, ensure_environment
from reprobridge_sdk.io._fs import atomic_write_text
from reprobridge_sdk.locks.lockfile import LockError
from reprobridge_sdk.model.build import (
    BuilderRecord,
    BuildFinding,
    IntakeRecord,
    PlanRecord,
    ReachedImport,
    Replacement,
    ResolveStep,
    ResolveStepName,
)
from reprobridge_sdk.model.claims import Claims
from reprobridge_sdk.model.guide import Ambiguity

__all__ = [
    "BUILD_TOOLS",
    "CUDA_ONLY",
    "ENV_DIR",
    "IMPORT_TO_DISTRIBUTION",
    "build_environment",
    "declared_requirements",
    "relaxation_decision",
    "relaxed",
    "resolve_steps",
]

#: Directory (inside the build state) of the scratch artifact the environment is locked in.
ENV_DIR = "env"

#: Distributions that exist only as CUDA builds (matched on the canonical name).
CUDA_ONLY = re.compile(r"^(nvidia-.+|triton|pytorch-triton(-rocm)?|cupy-cuda.+)$")
_LOCAL_CUDA = re.compile(r"\+(cu\d+|rocm[\d.]+)$")


@dataclass(frozen=True)
class Declared:
    """The requirements the build starts from and what was changed on the way."""

    requirements: list[str]
    replaced: list[Replacement]
    #: Requirements added only for optional imports (left out when nothing else resolves).
    optional: list[str] = field(default_factory=list)


def _provides(requirement: str) -> str:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return canonicalize_name(re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0])


def _uses(intake: IntakeRecord, plan: PlanRecord | None) -> list[ReachedImport]:
    """The imports the environment serves: the planned scripts' closure when there is a
    plan, else every import of the repository but build tools only ``setup.py`` imports."""
    if plan is not None:
        return list(plan.imports)
    uses = []
    for use in intake.imports:
        if use.module in BUILD_TOOLS and all(
            PurePosixPath(f).name == "setup.py" for f in use.files
        ):
            continue
        uses.append(ReachedImport(module=use.module, files=list(use.files)))
    return uses


def _declared_lines(intake: IntakeRecord) -> tuple[list[str], str]:
    files = [f for f in intake.dependency_files if f.kind == "requirements"]
    files.sort(key=lambda f: (f.path.count("/"), "dev" in f.path or "test" in f.path, f.path))
    if files:
        return list(files[0].requirements), files[0].path
    order = {"setup.py": 0, "setup.cfg": 1, "pyproject": 2, "conda": 3, "pipfile": 4}
    others = sorted(
        (f for f in intake.dependency_files if f.requirements and f.kind in order),
        key=lambda f: (f.path.count("/"), order[f.kind]),
    )
    if others:
        return list(others[0].requirements), others[0].path
    return [], "the imports"


def declared_requirements(
    intake: IntakeRecord, plan: PlanRecord | None = None, claims: Claims | None = None
) -> Declared:
    """Steps 1 and 2: the requirements from the dependency files, the claims and imports."""
    lines, source = _declared_lines(intake)
    kept: list[str] = []
    replaced: list[Replacement] = []
    given = list(claims.requirements) if claims is not None else []
    overridden = {_provides(line) for line in given}
    for line in given:
        replaced.append(
            Replacement(original=None, replacement=line, why="declared by the claims file")
        )
    for line in lines:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            replaced.append(
                Replacement(original=line, replacement=None, why=f"not a requirement ({source})")
            )
            continue
        name = canonicalize_name(requirement.name)
        if name in overridden:
            replaced.append(
                Replacement(
                    original=line, replacement=None, why="the claims file declares it instead"
                )
            )
            continue
        if requirement.url:
            replaced.append(
                Replacement(
                    original=line, replacement=None, why="a URL requirement is not lockable"
                )
            )
            continue
        if requirement.marker is not None and not requirement.marker.evaluate():
            replaced.append(
                Replacement(original=line, replacement=None, why="its marker does not apply here")
            )
            continue
        if CUDA_ONLY.match(name):
            replaced.append(
                Replacement(
                    original=line,
                    replacement=None,
                    why="a CUDA-only wheel; the CPU builds need no replacement for it",
                )
            )
            continue
        specs = [str(spec) for spec in requirement.specifier]
        if any(_LOCAL_CUDA.search(spec) for spec in specs):
            public = ",".join(_LOCAL_CUDA.sub("", spec) for spec in specs)
            new = f"{requirement.name}{public}"
            replaced.append(
                Replacement(original=line, replacement=new, why="the CUDA build's public version")
            )
            kept.append(new)
            continue
        kept.append(str(requirement))
    kept = [*given, *kept]
    provided = {_provides(line) for line in kept}
    optional: list[str] = []
    for use in _uses(intake, plan):
        distribution = IMPORT_TO_DISTRIBUTION.get(use.module, use.module)
        if canonicalize_name(distribution) in provided:
            continue
        provided.add(canonicalize_name(distribution))
        kept.append(distribution)
        how = f"imported as {use.module!r} in {use.files[0]} but not declared"
        if use.optional is not None:
            optional.append(distribution)
            how += f" (optional: {use.optional})"
        replaced.append(Replacement(original=None, replacement=distribution, why=how))
    return Declared(sorted(kept, key=str.lower), replaced, sorted(optional, key=str.lower))


def relaxed(requirements: list[str]) -> list[str]:
    """Exact and upper bounds turned into lower bounds (``==1.2`` -> ``>=1.2``)."""
    out = []
    for line in requirements:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            out.append(line)
            continue
        lower = []
        for spec in requirement.specifier:
            if spec.operator in {"==", "~=", "===", ">="}:
                version = spec.version.removesuffix(".*")
                lower.append(f">={version}")
            elif spec.operator == ">":
                lower.append(str(spec))
        extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
        out.append(f"{requirement.name}{extras}{','.join(sorted(set(lower)))}")
    return out


def _uv() -> str:
    from uv import find_uv_bin  # noqa: PLC0415 - only when resolving

    return str(find_uv_bin())


def _compile(
    requirements: list[str],
    work: Path,
    *,
    python: str,
    exclude_newer: str | None,
    wheels_only: bool = True,
) -> tuple[list[str] | None, list[str], str]:
    source = work / "step.in"
    output = work / "step.txt"
    atomic_write_text(source, "\n".join(requirements) + "\n")
    output.unlink(missing_ok=True)
    argv = [
        _uv(),
        "pip",
        "compile",
        "--quiet",
        "--no-config",
        "--no-header",
        "--no-annotate",
        *(["--only-binary", ":all:"] if wheels_only else []),
        "--index-url",
        index_url(),
        "--python-version",
        python,
        "--output-file",
        str(output),
    ]
    if exclude_newer:
        argv += ["--exclude-newer", exclude_newer]
    argv.append(str(source))
    proc = subprocess.run(
        argv, capture_output=True, text=True, check=False, env=isolated_environ(), cwd=work
    )
    shown = ["uv", *(Path(a).name if a.startswith(str(work)) else a for a in argv[1:])]
    if proc.returncode != 0 or not output.is_file():
        return None, shown, proc.stderr.strip()[-1500:]
    pins = [
        line.strip()
        for line in output.read_text("utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return pins, shown, ""


def _date_bound(commit_date: str) -> str:
    return datetime.fromisoformat(commit_date).isoformat()


_NO_WHEEL = re.compile(r"no (usable )?wheels|building from source is disabled|only-binary", re.I)


@dataclass(frozen=True)
class _Step:
    name: ResolveStepName
    requirements: list[str]
    exclude_newer: str | None
    why: str
    wheels_only: bool = True


def _plan_steps(
    requirements: list[str], optional: list[str], *, python: str, bound: str
) -> list[_Step]:
    loose = relaxed(requirements)
    steps = [
        _Step(
            "declared",
            requirements,
            bound,
            "the versions of the code's era: nothing newer than the commit",
        ),
    ]
    if loose != requirements:
        steps.append(
            _Step(
                "lower-bounds",
                loose,
                bound,
                "exact and upper bounds relaxed to lower bounds "
                "(a recorded decision), still of the code's era",
            )
        )
    steps.append(
        _Step(
            "newest",
            requirements,
            None,
            f"the newest versions with wheels for Python {python}: the code's era has none",
        )
    )
    if loose != requirements:
        steps.append(
            _Step(
                "newest-lower-bounds",
                loose,
                None,
                "exact and upper bounds relaxed to lower "
                "bounds (a recorded decision), newest versions",
            )
        )
    if optional:
        dropped = {canonicalize_name(o) for o in optional}
        required = [r for r in loose if _provides(r) not in dropped]
        steps.append(
            _Step(
                "required-only",
                required,
                None,
                "without the requirements of optional "
                f"imports ({', '.join(optional)}): they are left out",
            )
        )
    return steps


def resolve_steps(
    requirements: list[str],
    work: Path,
    *,
    python: str,
    commit_date: str,
    optional: list[str] | None = None,
) -> tuple[list[ResolveStep], list[str] | None]:
    """Step 3: resolve, relaxing step by step; return the steps and the pins (None: none)."""
    work.mkdir(parents=True, exist_ok=True)
    bound = _date_bound(commit_date)
    if not requirements:
        step = ResolveStep(
            name="declared",
            requirements=[],
            exclude_newer=bound,
            lowest=False,
            ok=True,
            why="nothing to resolve",
            argv=[],
            pins=[],
        )
        return [step], []
    steps: list[ResolveStep] = []
    todo = _plan_steps(requirements, optional or [], python=python, bound=bound)
    no_wheel = False
    while todo:
        current = todo.pop(0)
        pins, argv, error = _compile(
            current.requirements,
            work,
            python=python,
            exclude_newer=current.exclude_newer,
            wheels_only=current.wheels_only,
        )
        steps.append(
            ResolveStep(
                name=current.name,
                requirements=current.requirements,
                exclude_newer=current.exclude_newer,
                lowest=False,
                source_builds=not current.wheels_only,
                ok=pins is not None,
                why=current.why,
                argv=argv,
                pins=pins or [],
                error=error or None,
            )
        )
        if pins is not None:
            return steps, pins
        no_wheel = no_wheel or bool(current.wheels_only and _NO_WHEEL.search(error))
        if not todo and no_wheel:
            no_wheel = False
            todo.append(
                _Step(
                    "source-build",
                    relaxed(requirements),
                    None,  # an era bound would hold back the build backend too
                    "source distributions allowed for what has no wheel for Python "
                    f"{python} (pure-Python ones build anywhere), newest versions",
                    wheels_only=False,
                )
            )
    return steps, None


_MANIFEST = """\
# Scratch manifest of the build agent: only the environment part, for locking.
environment:
  python: "{python}"
  requirements: environment/requirements.in
  lock:
    path: environment/requirements.lock
    format: requirements
"""


_REASONS = (
    (
        re.compile(
            r"URLError|ConnectionError|gaierror|Name or service not known|"
            r"Temporary failure in name resolution|HTTPError|timed out|Network is unreachable"
        ),
        "its import needs the network",
    ),
    (re.compile(r"CUDA|cuda|libcu\w+\.so|nvidia|NVIDIA|GPU|no GPU|ROCm"), "its import needs a GPU"),
)


def _reason(text: str) -> str | None:
    for pattern, reason in _REASONS:
        if pattern.search(text):
            return reason
    return None


def _probe_imports(
    python: Path,
    modules: list[str],
    cwd: Path,
    *,
    optional: dict[str, str] | None = None,
    sandbox: bool = False,
) -> list[BuildFinding]:
    """Import each module in the built environment (in the sandbox with ``sandbox``: an
    import runs the package's code); ``optional`` maps a module the entry point imports only
    optionally to how it does."""
    findings: list[BuildFinding] = []
    extra = {"MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    env = {**os.environ, **extra}
    optional = optional or {}
    for module in modules:
        argv = [str(python), "-c", f"import {module}"]
        if sandbox:
            with confined(
                argv,
                workdir=cwd.absolute(),
                visible=[cwd],
                environment=python.absolute().parent.parent,
                caller=env,
                declared=extra,
            ) as (command, inside, fds):
                proc = _probe(command, cwd, inside, fds)
        else:
            proc = _probe(argv, cwd, env, ())
        if proc.returncode == 0:
            continue
        last = (proc.stderr.strip().splitlines() or ["exit status " + str(proc.returncode)])[-1]
        reason = _reason(proc.stderr[-4000:])
        because = f" ({reason})" if reason else ""
        if module in optional:
            findings.append(
                build_finding(
                    "B023",
                    f"{module!r} does not import in the built environment{because}: "
                    f"{last[:300]}; the entry point imports it only optionally "
                    f"({optional[module]})",
                    hint="the launchers run without it; declare it in the claims file's "
                    "requirements if a run needs it",
                )
            )
            continue
        findings.append(
            build_finding(
                "B006",
                f"{module!r} does not import in the built environment{because}: {last[:300]}",
                hint="declare its distribution in the repository's requirements"
                if reason is None
                else "run the build where that is available, or patch the import out",
            )
        )
    return findings


def _probe(
    argv: list[str], cwd: Path, env: dict[str, str], fds: tuple[int, ...]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env=env,
        timeout=300,
        pass_fds=fds,
    )


def build_environment(
    intake: IntakeRecord,
    state_dir: Path,
    *,
    inputs_digest: str,
    plan: PlanRecord | None = None,
    claims: Claims | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    started: float | None = None,
    sandbox: bool = False,
) -> BuilderRecord:
    """Run the Builder: declared requirements, resolution steps, lock, environment, gate.

    With ``plan`` the environment serves its launchers' import closure; without, every
    import of the repository. Resolving and installing run outside the sandbox; the import
    probes run in it with ``sandbox``.
    """
    begin = time.monotonic() if started is None else started
    python = intake.python.target
    declared = declared_requirements(intake, plan, claims)
    scratch = state_dir / ENV_DIR
    steps, pins = resolve_steps(
        declared.requirements,
        scratch / "resolve",
        python=python,
        commit_date=intake.python.commit_date,
        optional=declared.optional,
    )

    def record(findings: list[BuildFinding], **extra: object) -> BuilderRecord:
        return BuilderRecord(
            inputs_digest=inputs_digest,
            seconds=round(time.monotonic() - begin, 3),
            gate=gate_from(findings),
            python=python,
            requirements=declared.requirements,
            replaced=declared.replaced,
            steps=steps,
            **extra,
        )

    if pins is None:
        last = steps[-1].error or ""
        return record(
            [
                build_finding(
                    "B005",
                    f"the requirements do not resolve for Python {python}: {last[-300:]}",
                    hint="pin versions that have wheels for this interpreter in requirements.txt",
                )
            ]
        )
    atomic_write_text(scratch / "environment" / "requirements.in", "\n".join(pins) + "\n")
    atomic_write_text(scratch / "rra.yaml", _MANIFEST.format(python=python))
    try:
        # auto: the CPU builds of torch & co. unless this machine has a GPU (claims name none)
        locked = lock_artifact(scratch, accelerator="auto")
        interpreter = ensure_environment(scratch, cache_dir=cache_dir)
    except (LockError, EnvironmentBuildError) as exc:
        detail = "; ".join(item.message for item in exc.findings)[-500:] or exc.message
        return record(
            [build_finding("B005", f"locking or building the environment failed: {detail}")],
            pins=pins,
        )
    uses = _uses(intake, plan)
    left_out = {canonicalize_name(o) for o in declared.optional} - {_provides(p) for p in pins}
    findings: list[BuildFinding] = []
    modules: list[str] = []
    optional: dict[str, str] = {}
    for use in uses:
        distribution = canonicalize_name(IMPORT_TO_DISTRIBUTION.get(use.module, use.module))
        if use.optional is not None and distribution in left_out:
            findings.append(
                build_finding(
                    "B023",
                    f"{use.module!r} is left out: its requirement does not resolve with the "
                    f"others and the entry point imports it only optionally ({use.optional})",
                    hint="declare a version that resolves in the claims file's requirements",
                )
            )
            continue
        modules.append(use.module)
        if use.optional is not None:
            optional[use.module] = use.optional
    findings += _probe_imports(interpreter, modules, scratch, optional=optional, sandbox=sandbox)
    return record(
        findings,
        pins=pins,
        lock_sha256=locked.sha256,
        interpreter=str(interpreter),
        imports_checked=modules,
    )


#: Steps whose success changed what the repository declared: a decision the guide records.
_RELAXING = {"lower-bounds", "newest-lower-bounds", "required-only", "source-build"}


def relaxation_decision(record: BuilderRecord, tasks: list[str]) -> Ambiguity | None:
    """The guide record of a resolution that relaxed the declared requirements, if any."""
    chosen = next((step for step in reversed(record.steps) if step.ok), None)
    if chosen is None or chosen.name not in _RELAXING:
        return None
    failed = [step.name for step in record.steps if not step.ok]
    pinned = [line for line in record.requirements if re.search(r"[=<>~!]", line)]
    return Ambiguity(
        id="environment-requirements-relaxed",
        source=", ".join(pinned[:10]) or "the declared requirements",
        gap=(
            f"the requirements as declared do not resolve for Python {record.python} "
            f"(steps that failed: {', '.join(failed)})"
        ),
        resolution=f"step {chosen.name!r}: {chosen.why}; the lock holds the versions used",
        sensitivity="medium",
        tasks=tasks,
    )


def interpreter_version() -> str:
    """``X.Y`` of the running interpreter (the only one the build uses)."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"
