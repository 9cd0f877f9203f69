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
   optional when its import is. The steps a launcher runs first
   (:mod:`reprobridge_sdk.agent.prerequisite`) bring their closure too once the Reproducer
   adopts one, optional (the environment is built again with them). Build tools
   (:data:`BUILD_TOOLS`) are never inferred from ``setup.py``; ``pkg_resources`` in the code
   requires setuptools, unpinned.
   ``-r``/``-e``/URL lines and environment markers that do not apply are dropped, recorded.
2. **Platform-bound pins.** ``nvidia-*``, ``triton`` and ``pytorch-triton`` pins are
   CUDA-only wheels: they are dropped (their CPU equivalent is nothing: the CPU builds of the
   frameworks that need them bundle what they use), and a ``+cuXYZ`` local version of a
   framework pin is cut to the public version. Nothing is downloaded to decide this.
3. **Environments.** :data:`ENVIRONMENTS`, in order, until one passes the gate (5):

   * ``newest``: the running interpreter, the newest versions. Resolution (``uv pip
     compile``, wheels only) goes step by step and stops at the first step that resolves:
     ``newest`` (as declared), ``newest-lower-bounds`` (exact and upper bounds relaxed to
     lower bounds of the same major version, ``==1.2`` becomes ``>=1.2,<2``; skipped when
     nothing changes),
     then, with requirements added only for optional imports, those that do not resolve
     are left out one at a time and the others kept (``optional-left-out``, or
     ``required-only`` when none is kept; the ones the resolver's error names, else by
     bisection: :mod:`reprobridge_sdk.agent._optional_search`), ``source-build`` (when a
     step failed because a requirement has no wheel: relaxed, source distributions
     allowed; a pure-Python sdist builds anywhere, one that needs a compiler fails when
     the environment is built, B005), then ``build-dependencies`` when a step that allowed
     source distributions failed on one whose build needs requirements it does not declare
     (its ``setup.py`` imports numpy at its top level: read from the sdist itself,
     :mod:`reprobridge_sdk.agent.sdists`): the step again with them supplied to that
     distribution's build only, and source builds allowed for it alone. The environment
     pins them; the lock records them (``lock.build_dependencies``) pinned to its versions.
     One that compiles extensions where no C compiler is here is not tried: B005 says so;
   * ``era``: the running interpreter, nothing newer than the code's era: the last change
     to the code the launchers run (:func:`era_date`), else the commit date
     (``--exclude-newer``): ``declared``, then ``lower-bounds`` (skipped without
     requirements: it would be the newest environment again), then ``source-build`` of the
     era when a requirement of the era has no wheel (TensorFlow 2.4 needs termcolor 1.1,
     an sdist). For an interpreter older than 3.7 (:data:`LEGACY_BELOW`) every step allows
     source distributions from the first: wheels only, the resolver backtracks to the
     last release that had wheels for every package, not the release of the code's date;
   * ``era-python``: the same steps for each interpreter of the code's era found on this
     machine, newest first (:mod:`reprobridge_sdk.env.interpreters`: PATH, pyenv, uv-managed; never
     downloaded), older than the running one: a **legacy environment**. An era interpreter
     that is not here, or older than the resolver serves, is B048 with the step that
     unblocks the build. When every interpreter of the era is older than the resolver
     serves (Python 2.7, 3.4), the nearest it serves that is found here is tried, resolved
     as of that interpreter's first settled day (or the era, when later): the code is then
     ported forward by the fix rules, each a recorded change. A legacy environment whose
     code then fails (``after``) is followed by the era's older interpreters, newest first.

   Nothing resolves to the lowest versions. Every step (with its interpreter) and every
   environment (with its outcome) is recorded; the one used, when of the era, is B047 (info)
   and a guide decision (:func:`era_decision`). The Reproducer asks for the next
   environment when a smoke run fails in a way no fix rule mends (``after``).
4. **Lock.** The chosen versions (every distribution of the resolution, exactly pinned)
   become ``environment/requirements.in``; ``reprobridge lock`` (the env API) turns them
   into the hashed lock, resolved for the environment's interpreter (its ``resolved_for``
   and ``environment.python`` name it).
5. **Environment and gate.** The environment is built from the lock in the SDK's cache
   (shared by every artifact with the same lock). Gate: every required third-party module
   of the closure imports there (B006 for each that does not, with the error's last line
   and its reason when it is the network or a GPU); an optional one that does not, or whose
   requirement was left out, is B023 (a warning). An import that fails on another module
   no pin provides (Keras 2 without its backend) is an installed package's undeclared
   dependency: that module's distribution is added, unpinned, as a recorded addition. One
   that fails inside an installed package on a line importing another pinned package
   (Lasagne 0.1 on Theano 0.9, which removed ``downsample``) caps that package below the
   pinned minor release, a recorded change. Either way the environment is built again
   (:data:`MAX_MISSING_DEPENDENCIES` times at most). The same undeclared dependency met
   only by a smoke run (Theano 0.8's ``theano.sparse`` imports ``nose_parameterized``;
   ``import theano`` works), raised on an import line of an installed package's file
   (:func:`undeclared_import`), has the Reproducer build the environment in use again with
   that distribution added, once per module, before the era's next environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from reprobridge_sdk.agent._caches import CACHE_DIR, cache_env
from reprobridge_sdk.agent._optional_search import leave_out
from reprobridge_sdk.agent._sandbox import confined
from reprobridge_sdk.agent.distributions import BUILD_TOOLS, IMPORT_TO_DISTRIBUTION, MISNAMED
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.agent.sdists import build_needs, compiler
from reprobridge_sdk.env._resolvers import (
    build_options,
    build_python,
    index_url,
    isolated_environ,
)
from reprobridge_sdk.env.interpreters import (
    RELEASES,
    RESOLVER_MINIMUM,
    SETTLING,
    Interpreter,
    discover,
    era_versions,
    servable,
)
from reprobridge_sdk.env.lock import lock_artifact
from reprobridge_sdk.env.venv import EnvironmentBuildError, ensure_environment
from reprobridge_sdk.guide import clip
from reprobridge_sdk.io.atomic import atomic_write_text
from reprobridge_sdk.locks.lockfile import LockError
from reprobridge_sdk.model.build import (
    BuilderRecord,
    BuildFinding,
    EnvironmentAttempt,
    EnvironmentName,
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
    "ENVIRONMENTS",
    "ENV_DIR",
    "IMPORT_TO_DISTRIBUTION",
    "build_environment",
    "declared_requirements",
    "in_use",
    "relaxation_decision",
    "relaxed",
    "resolve_steps",
    "still_in_use",
    "undeclared_import",
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
        if name in MISNAMED:
            target, why = MISNAMED[name]
            extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
            new = f"{target}{extras}{requirement.specifier}"
            replaced.append(Replacement(original=line, replacement=new, why=why))
            kept.append(new)
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
    """Exact and upper bounds turned into lower bounds within the same major version
    (``==1.2`` -> ``>=1.2,<2``; ``<2.0`` keeps ``<2``): the pinned major is what the code
    was written for (TensorFlow 1 code does not run on TensorFlow 2), the minor and patch
    are what the era's wheels hold back. A 0.x pin, whose releases break anywhere, a build
    tool's pin (``setuptools``, ``wheel``, ``pip``) and a bare lower bound are not capped; a
    build tool's upper bound (``setuptools<82``) is kept."""
    out = []
    for line in requirements:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            out.append(line)
            continue
        lower: list[str] = []
        majors: list[tuple[str, int]] = []
        for spec in requirement.specifier:
            version = spec.version.removesuffix(".*")
            if spec.operator in {"==", "~=", "===", ">="}:
                lower.append(f">={version}")
            elif spec.operator == ">":
                lower.append(str(spec))
            if spec.operator in {"==", "~=", "===", "<", "<="}:
                majors.append((spec.operator, _cap_major(spec.operator, version)))
        # a build tool's pinned major is no API the code was written for (GCN pins setuptools
        # 40, which its own TensorFlow 1.15 pin needs at 41 or newer); its upper bound is kept:
        # the releases it excludes broke something (setuptools 82 removed pkg_resources)
        build_tool = canonicalize_name(requirement.name) in BUILD_TOOLS
        caps = [m for op, m in majors if m >= 1 and (not build_tool or op in {"<", "<="})]
        cap = [f"<{min(caps)}"] if caps else []
        extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
        out.append(f"{requirement.name}{extras}{','.join([*sorted(set(lower)), *cap])}")
    return out


def _cap_major(operator: str, version: str) -> int:
    """The first major version a bound excludes: the next one after a pinned version, or
    a ``<X.0`` bound's own ``X`` (0 when the version does not read as a release)."""
    try:
        release = Version(version).release
    except InvalidVersion:
        return 0
    major = release[0] if release else 0
    if operator == "<" and all(part == 0 for part in release[1:]):
        return major
    return major + 1 if major else 0  # a 0.x release: no major to keep


def _uv() -> str:
    from uv import find_uv_bin  # noqa: PLC0415 - only when resolving

    return str(find_uv_bin())


#: Build tools exempt from an era's date bound when source builds are allowed, and the bound
#: they get instead (none: any release the build interpreter supports).
_BUILD_TOOLS = ("setuptools", "wheel")
_BUILD_TOOLS_BOUND = "2100-01-01T00:00:00Z"


def _portable_argv(argv: list[str], work: Path, python: str) -> list[str]:
    """``argv`` as the build records show it: scratch files by name, an interpreter of this
    machine as ``pythonX.Y``."""
    shown: list[str] = []
    for index, arg in enumerate(argv):
        if index and argv[index - 1] == "--python":
            shown.append(f"python{python}")
        elif arg.startswith(str(work)):
            shown.append(Path(arg).name)
        else:
            shown.append(arg)
    return shown


def _compile(
    requirements: list[str],
    work: Path,
    *,
    python: str,
    exclude_newer: str | None,
    wheels_only: bool = True,
    builds: tuple[str, ...] = (),
    build_dependencies: dict[str, list[str]] | None = None,
) -> tuple[list[str] | None, list[str], str]:
    """One ``uv pip compile``: wheels only (``wheels_only``) but for the distributions of
    ``builds``, built from source with their ``build_dependencies``."""
    source = work / "step.in"
    output = work / "step.txt"
    atomic_write_text(source, "\n".join(requirements) + "\n")
    output.unlink(missing_ok=True)
    argv = [
        _uv(),
        "pip",
        "compile",
        "--quiet",
        *build_options(build_dependencies, work / "build"),
        "--no-header",
        "--no-annotate",
        *(["--only-binary", ":all:"] if wheels_only else []),
        *[f"--no-binary={name}" for name in builds],
        "--index-url",
        index_url(),
        *build_python(python),
        "--python-version",
        python,
        "--output-file",
        str(output),
    ]
    if exclude_newer:
        argv += ["--exclude-newer", exclude_newer]
        if not wheels_only or builds:
            # the build backend is not of the era: uv's default for a setup.py without
            # pyproject.toml is setuptools>=40.8 (late 2018), and a backend only runs
            argv += [
                f"--exclude-newer-package={name}={_BUILD_TOOLS_BOUND}" for name in _BUILD_TOOLS
            ]
    argv.append(str(source))
    proc = subprocess.run(
        argv, capture_output=True, text=True, check=False, env=isolated_environ(), cwd=work
    )
    shown = ["uv", *_portable_argv(argv[1:], work, python)]
    if proc.returncode != 0 or not output.is_file():
        return None, shown, proc.stderr.strip()[-1500:]
    pins = [
        line.strip()
        for line in output.read_text("utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return pins, shown, ""


def _date_bound(commit_date: str) -> str | None:
    """The era's ``--exclude-newer`` bound of a committer date; None when it is not a date.

    git prints what a commit says: an offset out of range (``+99:59``) or, for a date it
    cannot read, the placeholder itself. An offset that is not one is read as UTC."""
    text = commit_date.strip()
    try:
        return datetime.fromisoformat(text).isoformat()
    except (ValueError, OverflowError, TypeError):
        pass
    try:
        # the date and time without the offset (git's %cI: YYYY-MM-DDTHH:MM:SS+HH:MM)
        moment = datetime.fromisoformat(text[:19]) if len(text) > 19 else None
    except (ValueError, OverflowError):
        return None
    return moment.replace(tzinfo=UTC).isoformat() if moment is not None else None


_NO_WHEEL = re.compile(r"no (usable )?wheels|building from source is disabled|only-binary", re.I)


@dataclass(frozen=True)
class _Step:
    name: ResolveStepName
    requirements: list[str]
    exclude_newer: str | None
    why: str
    wheels_only: bool = True
    #: Distributions built from source although the step is wheels only.
    builds: tuple[str, ...] = ()
    build_dependencies: dict[str, list[str]] = field(default_factory=dict)


#: Interpreters older than this are legacy ones: their era's releases often have no wheel
#: for every package, so their era's steps allow source distributions from the first.
LEGACY_BELOW = (3, 7)


def legacy_interpreter(python: str) -> bool:
    """Whether ``python`` (``X.Y``) is older than :data:`LEGACY_BELOW`."""
    try:
        return tuple(int(x) for x in python.split(".")[:2]) < LEGACY_BELOW
    except ValueError:
        return False


def _plan_steps(requirements: list[str], *, python: str, bound: str | None) -> list[_Step]:
    """The steps of one environment: of the code's era with ``bound``, else the newest."""
    loose = relaxed(requirements)
    if bound is not None:
        # a legacy interpreter: wheels only would backtrack to the last release that had
        # wheels for every package (TensorFlow 1.1 for code of TensorFlow 1.4's date)
        sources = legacy_interpreter(python)
        allowed = "; source distributions allowed (a legacy interpreter)" if sources else ""
        steps = [
            _Step(
                "declared",
                requirements,
                bound,
                f"the versions of the code's era for Python {python}: nothing newer than "
                f"the commit{allowed}",
                wheels_only=not sources,
            )
        ]
        if loose != requirements:
            steps.append(
                _Step(
                    "lower-bounds",
                    loose,
                    bound,
                    "exact and upper bounds relaxed to lower bounds of their major version "
                    f"(a recorded decision), still of the code's era{allowed}",
                    wheels_only=not sources,
                )
            )
        return steps
    steps = [
        _Step("newest", requirements, None, f"the newest versions with wheels for Python {python}")
    ]
    if loose != requirements:
        steps.append(
            _Step(
                "newest-lower-bounds",
                loose,
                None,
                "exact and upper bounds relaxed to lower bounds of their major version "
                "(a recorded decision), newest versions",
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
    era: bool = False,
) -> tuple[list[ResolveStep], list[str] | None]:
    """Step 3 for one environment: resolve, relaxing step by step; return the steps and
    the pins (None: none). ``era``: bounded by the commit date, else the newest versions."""
    work.mkdir(parents=True, exist_ok=True)
    bound = _date_bound(commit_date) if era else None
    if era and bound is None:
        raise ValueError(f"the code's date {commit_date[:60]!r} is not a date")
    if not requirements:
        step = ResolveStep(
            name="declared" if era else "newest",
            requirements=[],
            exclude_newer=bound,
            lowest=False,
            ok=True,
            why="nothing to resolve",
            argv=[],
            pins=[],
            python=python,
        )
        return [step], []
    steps: list[ResolveStep] = []
    todo = _plan_steps(requirements, python=python, bound=bound)
    no_wheel = False
    searched = False
    supplied = False
    while todo:
        current = todo.pop(0)
        pins, error = _run_step(current, steps, work, python)
        if pins is not None:
            return steps, pins
        if current.builds and current.wheels_only and _NO_WHEEL.search(error):
            # another distribution needs a source build too: allow them, as the step before
            todo.insert(0, replace(current, wheels_only=False, builds=()))
            continue
        if not supplied and (current.builds or not current.wheels_only):
            supplied = True
            retry = _with_build_dependencies(current, error, steps, python)
            if retry is not None:
                todo.insert(0, retry)
                continue
        no_wheel = no_wheel or bool(current.wheels_only and _NO_WHEEL.search(error))
        if not todo and optional and bound is None and not searched:
            searched = True
            pins = _without_optional(relaxed(requirements), optional, error, steps, work, python)
            if pins is not None:
                return steps, pins
        if not todo and no_wheel:
            no_wheel = False
            todo.append(
                _Step(
                    "source-build",
                    relaxed(requirements),
                    # the era's bound holds back the build backend too: of the same era
                    bound,
                    "source distributions allowed for what has no wheel for Python "
                    f"{python} (pure-Python ones build anywhere), "
                    + ("still of the code's era" if era else "newest versions"),
                    wheels_only=False,
                )
            )
    return steps, None


def _run_step(
    current: _Step, steps: list[ResolveStep], work: Path, python: str
) -> tuple[list[str] | None, str]:
    """Resolve one step and append its record to ``steps``: the pins (None: none) and the
    resolver's error."""
    pins, argv, error = _compile(
        current.requirements,
        work,
        python=python,
        exclude_newer=current.exclude_newer,
        wheels_only=current.wheels_only,
        builds=current.builds,
        build_dependencies=current.build_dependencies,
    )
    steps.append(
        ResolveStep(
            name=current.name,
            requirements=current.requirements,
            exclude_newer=current.exclude_newer,
            lowest=False,
            source_builds=not current.wheels_only or bool(current.builds),
            ok=pins is not None,
            why=current.why,
            argv=argv,
            pins=pins or [],
            error=error or None,
            python=python,
            build_dependencies=current.build_dependencies,
        )
    )
    return pins, error


#: The error of a step that was not run: a source distribution compiles extensions and no
#: C compiler is here (the hint of its B005 says how to get one).
NO_COMPILER = "no C compiler is here"


def _with_build_dependencies(
    failed: _Step, error: str, steps: list[ResolveStep], python: str
) -> _Step | None:
    """The step again with the build requirements that the source distributions its error
    names need and do not declare (:mod:`reprobridge_sdk.agent.sdists`), built from source
    only for them; None when none is named. A distribution that compiles extensions where
    no C compiler is here is a failed step of its own, not run."""
    needs = build_needs(error, index_url())
    if not needs:
        return None
    shown = "; ".join(
        f"{n.name} {n.version} ({n.evidence}: {', '.join(n.requirements)})" for n in needs
    )
    interpreter = (build_python(python) or ["", sys.executable])[1]
    compiled = [n.name for n in needs if n.compiled]
    requirements = list(failed.requirements)
    have = {_provides(r) for r in requirements}
    requirements += sorted(
        {r for n in needs for r in n.requirements if canonicalize_name(r) not in have},
        key=str.lower,
    )
    supplied = {n.name: list(n.requirements) for n in needs}
    if compiled and compiler(interpreter) is None:
        steps.append(
            ResolveStep(
                name="build-dependencies",
                requirements=requirements,
                exclude_newer=failed.exclude_newer,
                source_builds=True,
                ok=False,
                why=f"source distributions that need build requirements they do not "
                f"declare: {shown}",
                error=f"{', '.join(compiled)} compiles C extensions and {NO_COMPILER} "
                f"(CC={os.environ.get('CC') or 'unset'}, the interpreter's compiler not "
                "found either)",
                python=python,
                build_dependencies=supplied,
            )
        )
        return None
    # a legacy interpreter's steps allow source distributions from the first; otherwise
    # only the distributions named are built from source
    narrow = not legacy_interpreter(python)
    return _Step(
        "build-dependencies",
        requirements,
        failed.exclude_newer,
        f"source distributions that need build requirements they do not declare: {shown}; "
        "those are supplied to their builds only, at the versions the environment pins "
        "(added to it where it lacks them); "
        + (
            "every other distribution comes as a wheel"
            if narrow
            else "source distributions allowed (a legacy interpreter)"
        ),
        wheels_only=narrow,
        builds=tuple(n.name for n in needs) if narrow else (),
        build_dependencies=supplied,
    )


def pinned_build_dependencies(steps: list[ResolveStep], pins: list[str]) -> dict[str, list[str]]:
    """The build requirements the resolved step supplied, each pinned to the environment's
    version of it (unpinned when the environment has none)."""
    if not steps or not steps[-1].ok:
        return {}
    versions = {_provides(p): p for p in pins if "==" in p}
    return {
        name: [versions.get(_provides(r), r) for r in needs]
        for name, needs in steps[-1].build_dependencies.items()
    }


def _without_optional(  # noqa: PLR0917 - private helper of resolve_steps
    loose: list[str],
    optional: list[str],
    error: str,
    steps: list[ResolveStep],
    work: Path,
    python: str,
) -> list[str] | None:
    """Leave out the optional requirements that do not resolve, one at a time
    (:mod:`reprobridge_sdk.agent._optional_search`), keeping the others: the pins of the
    resolution kept, or None."""
    left = {canonicalize_name(o) for o in optional}
    required = [r for r in loose if _provides(r) not in left]
    named = {_provides(r): r for r in loose if _provides(r) in left}
    found: list[list[str]] = []

    def attempt(kept: list[str], dropped: list[str], probe: bool) -> str | None:
        if probe:
            why = (
                "a probe for the optional requirement that does not resolve: the required "
                f"ones with {', '.join(kept) or 'no optional one'}"
            )
        else:
            why = (
                f"without the optional requirements that do not resolve ({', '.join(dropped)})"
                ": they are left out" + (f", {', '.join(kept)} kept" if kept else "")
            )
        name: ResolveStepName = "optional-left-out" if kept else "required-only"
        chosen = required + [named.get(canonicalize_name(k), k) for k in kept]
        pins, failed = _run_step(_Step(name, chosen, None, why), steps, work, python)
        if pins is not None and not probe:
            found.append(pins)
        return None if pins is not None else failed

    return found[-1] if leave_out(optional, error, attempt) is not None else None


_MANIFEST = """\
# Scratch manifest of the build agent: only the environment part, for locking.
environment:
  python: "{python}"
  requirements: environment/requirements.in
  lock:
    path: environment/requirements.lock
    format: requirements
"""


#: A compiler's diagnostic (``file.c:12:3: error: ...``, the form GCC and Clang share) and
#: the last line of a Python traceback (``ModuleNotFoundError: No module named 'numpy'``).
_COMPILER_ERROR = re.compile(r"^\s*(?P<line>[^\s:]+:\d+:(?:\d+:)? (?:fatal )?error: .+)$", re.M)
_EXCEPTION = re.compile(
    r"^\s*(?P<line>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception): .+)$", re.M
)


def build_error_line(text: str) -> str | None:
    """The line that says why a source build failed, from the structured part of its
    output: the first compiler error, else the last Python exception; None when neither is
    there. Paths of this machine are cut to the file's name."""
    found = _COMPILER_ERROR.search(text)
    line = found.group("line") if found else None
    if line is None:
        exceptions = list(_EXCEPTION.finditer(text))
        line = exceptions[-1].group("line") if exceptions else None
    if line is None:
        return None
    return brief(line, 300)


#: The folders of an absolute path whose file's name follows.
_FOLDERS = re.compile(r"(?<![^\s\"'(])(?:/[^\s/:]+)+/(?=[^\s/:]+)")


def brief(text: str, limit: int = 200) -> str:
    """``text`` as an outcome the guide may quote: one line, no folder of this machine (a
    path keeps its file's name), at most ``limit`` characters, cut after a whole word."""
    return clip(" ".join(_FOLDERS.sub("", text).split()), limit)


def _build_dependencies_yaml(supplied: dict[str, list[str]]) -> str:
    """The scratch manifest's ``lock.build_dependencies`` (JSON is YAML), or nothing."""
    if not supplied:
        return ""
    import json  # noqa: PLC0415 - only for a lock with build dependencies

    return f"    build_dependencies: {json.dumps(supplied, sort_keys=True)}\n"


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
    caches: Path | None = None,
) -> list[BuildFinding]:
    """Import each module in the built environment (in the sandbox with ``sandbox``: an
    import runs the package's code); ``optional`` maps a module the entry point imports only
    optionally to how it does; ``caches`` is the build's compile caches (Theano compiles
    on import), shared with its runs."""
    findings: list[BuildFinding] = []
    extra = {"MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    if caches is not None:
        extra = {**cache_env(caches, extra), **extra}
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
                writable=[caches.absolute()] if caches is not None else [],
            ) as (command, inside, fds):
                proc = _probe(command, cwd, inside, fds)
        else:
            proc = _probe(argv, cwd, env, ())
        if proc.returncode == 0:
            continue
        last = (proc.stderr.strip().splitlines() or ["exit status " + str(proc.returncode)])[-1]
        where = _failing_frame(proc.stderr)
        if where is not None:
            last = f"{last[:300]} (at {where[0]}: {where[1]})"
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
                f"{module!r} does not import in the built environment{because}: {last[:500]}",
                hint="declare its distribution in the repository's requirements"
                if reason is None
                else "run the build where that is available, or patch the import out",
            )
        )
    return findings


_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+', re.M)


def _failing_frame(stderr: str) -> tuple[str, str] | None:
    """``(file, source line)`` of a traceback's last frame when it is an installed package's
    file (under ``site-packages``), its path from there: the line of a package that fails
    inside another package, such as ``lasagne/layers/pool.py: from theano.tensor.signal
    import downsample``."""
    frames = list(_FRAME.finditer(stderr))
    if not frames:
        return None
    last = frames[-1]
    _, found, inside = last.group("file").replace("\\", "/").rpartition("site-packages/")
    rest = stderr[last.end() :].splitlines()
    source = rest[1].strip() if len(rest) > 1 else ""
    if not found or not inside or not source or source.startswith(("File ", "^")):
        return None
    return inside, source[:200]


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


#: The environments, in the order they are tried.
ENVIRONMENTS: tuple[EnvironmentName, ...] = ("newest", "era", "era-python")


@dataclass(frozen=True)
class _Target:
    """One environment to try: its kind, interpreter and date bound, or why it cannot be."""

    name: EnvironmentName
    python: str
    why: str
    interpreter: Interpreter | None = None
    bound: str | None = None
    unavailable: str | None = None
    hint: str | None = None


def era_date(intake: IntakeRecord, plan: PlanRecord | None) -> str:
    """The date of the code's era: that of the newest change to the code the launchers run
    (the plan's ``code_date``), else the source commit's. A repository's last commit is often
    years after its code (a README, a citation), and the code's library calls are of its own
    era."""
    return (plan.code_date if plan is not None else None) or intake.python.commit_date


def _targets(name: EnvironmentName, intake: IntakeRecord, why: str, era: str) -> list[_Target]:
    running = discover(intake.python.target)
    date = _date_bound(era)
    if name != "newest" and date is None:
        return []
    if name == "newest":
        return [_Target(name, intake.python.target, why, running)]
    if name == "era":
        return [_Target(name, intake.python.target, why, running, date)]
    minors = era_versions(era)
    if intake.python.syntax == "2":
        minors = ["2.7", *[m for m in minors if m != "2.7"]]
    current = tuple(int(x) for x in intake.python.target.split("."))
    older = [m for m in minors if tuple(int(x) for x in m.split(".")) < current]
    targets = []
    for minor in older:
        if not servable(minor):
            targets.append(
                _Target(
                    name,
                    minor,
                    why,
                    unavailable=f"Python {minor} is older than the resolver serves "
                    "(uv builds environments for CPython 3.6 and newer)",
                    hint="port the code forward: fix it in code/, then 'reprobridge code "
                    "record --kind execution-fix --why ...' and 'reprobridge build --resume'",
                )
            )
            continue
        found = discover(minor)
        if found is None:
            targets.append(
                _Target(
                    name,
                    minor,
                    why,
                    unavailable=f"no Python {minor} on this machine (PATH, pyenv or "
                    "uv-managed); none is downloaded",
                    hint=f"install it (for example 'pyenv install {minor}' or 'uv python "
                    f"install {minor}'), then 'reprobridge build --resume'",
                )
            )
            continue
        targets.append(_Target(name, minor, why, found, date))
    if older and not any(servable(minor) for minor in older):
        targets += _nearest_servable(name, intake, why, era, current)
    return targets


def _nearest_servable(
    name: EnvironmentName, intake: IntakeRecord, why: str, era: str, current: tuple[int, ...]
) -> list[_Target]:
    """When every interpreter of the code's era is older than the resolver serves (Python 2.7,
    3.4), the nearest one it does serve, found here: the oldest servable minor older than the
    running one, resolved as of its first settled day (or the era, when later), so that the
    releases are the oldest that interpreter had. The code is then ported forward by the
    fix rules (Python 2 syntax, removed modules), each a recorded change."""
    minimum = ".".join(str(part) for part in RESOLVER_MINIMUM)
    candidates = sorted(
        (m for m in RELEASES if servable(m) and tuple(int(x) for x in m.split(".")) < current),
        key=lambda m: tuple(int(x) for x in m.split(".")),
    )
    for minor in candidates:
        found = discover(minor)
        if found is None:
            continue
        settled = datetime.combine(RELEASES[minor] + SETTLING, datetime.min.time(), UTC)
        moment = datetime.fromisoformat(_date_bound(era) or settled.isoformat())
        moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
        bound = max(moment, settled).isoformat()
        because = (
            f"{why}; none of them is served by the resolver (CPython {minimum} and newer), "
            f"so Python {minor}, the nearest found here, as of {bound[:10]}"
        )
        return [_Target(name, minor, because, found, bound)]
    return []


def _minor(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2])


def _era_python_why(era: str) -> str:
    return f"the code's era ({era[:10]}) is Python {', '.join(era_versions(era))}"


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
    after: BuilderRecord | None = None,
    because: str | None = None,
    again: EnvironmentName | None = None,
    deadline: float | None = None,
) -> BuilderRecord:
    """Run the Builder: declared requirements, then each environment of
    :data:`ENVIRONMENTS` (resolution steps, lock, environment, gate) until one passes.

    With ``plan`` the environment serves its launchers' import closure; without, every
    import of the repository. ``after``: a record whose environment works but whose code
    does not run (``because`` says how); the environments after its own are tried, and the
    record returned carries its attempts and steps too; with ``again`` that environment is
    tried first instead (the requirements changed, not the era). Resolving and installing run
    outside the sandbox; the import probes run in it with ``sandbox``. The environment
    that passes is copied to ``state_dir/env``. No environment is tried past ``deadline`` (a
    :func:`time.monotonic` value, the build's time limit): the record then fails with B016.
    """
    begin = time.monotonic() if started is None else started
    declared = declared_requirements(intake, plan, claims)
    steps: list[ResolveStep] = list(after.steps) if after is not None else []
    attempts: list[EnvironmentAttempt] = list(after.attempts) if after is not None else []
    # after a legacy environment, the era's older interpreters are next (3.8, then 3.7)
    older_than = (
        after.python
        if after is not None and again is None and after.environment == "era-python"
        else None
    )
    start = ENVIRONMENTS.index(after.environment) + 1 if after is not None else 0
    start = start - 1 if older_than is not None else start
    start = ENVIRONMENTS.index(again) if again is not None else start
    unavailable: list[BuildFinding] = []
    last: list[BuildFinding] = []
    compilers: list[BuildFinding] = []
    why = because or "the first environment tried"
    era = era_date(intake, plan)
    era = _date_bound(era) or era  # an offset out of range read as UTC
    for name in ENVIRONMENTS[start:]:
        if name != "newest" and _date_bound(era) is None:
            attempts.append(
                EnvironmentAttempt(
                    name=name,
                    python=intake.python.target,
                    why=why,
                    ok=False,
                    outcome=f"skipped: the code's date {era[:60]!r} is not a date, so it "
                    "bounds no era",
                )
            )
            continue
        if name == "era-python":
            why = f"{why}; {_era_python_why(era)}"
        targets = _targets(name, intake, why, era)
        if older_than is not None and name == "era-python":
            targets = [t for t in targets if _minor(t.python) < _minor(older_than)]
        if not targets:
            attempts.append(
                EnvironmentAttempt(
                    name=name,
                    python=intake.python.target,
                    why=why,
                    ok=False,
                    outcome="skipped: no Python of the code's era is older than the running one"
                    if older_than is None or name != "era-python"
                    else f"skipped: no Python of the code's era is older than {older_than}",
                )
            )
        for target in targets:
            if target.unavailable is not None:
                attempts.append(_attempt(target, ok=False, outcome=target.unavailable))
                unavailable.append(
                    build_finding(
                        "B048",
                        f"the code's era calls for Python {target.python}: {target.unavailable}",
                        hint=target.hint,
                    )
                )
                continue
            if name == "era" and not declared.requirements:
                attempts.append(
                    _attempt(
                        target,
                        ok=False,
                        outcome="skipped: no requirement, so the same environment as the newest",
                    )
                )
                continue
            if deadline is not None and time.monotonic() >= deadline:
                late = f"the build's time limit passed before the {target.name} environment"
                attempts.append(_attempt(target, ok=False, outcome=f"skipped: {late}"))
                last = [build_finding("B016", f"stopped in builder: {late} was tried")]
                unavailable = []
                break
            built = _try(target, intake, declared, state_dir, plan, cache_dir, sandbox)
            built = _with_missing_dependencies(
                built, target, intake, declared, state_dir, plan, cache_dir, sandbox
            )
            steps += built.steps
            attempts.append(_attempt(target, ok=built.ok, outcome=built.outcome))
            if built.ok:
                return _record(
                    built,
                    target,
                    built.declared or declared,
                    steps,
                    attempts,
                    inputs_digest,
                    begin,
                    state_dir,
                )
            last = built.findings
            # what only the machine can mend (a C compiler) is said however the last ends
            compilers += [f for f in last if NO_COMPILER in f.message][: 1 - len(compilers)]
            why = f"{target.name} failed: {built.outcome}"
        if last and last[0].code == "B016":
            break
    findings = [
        *(last or [build_finding("B005", "no environment of the code's era could be tried")]),
        *[f for f in compilers if f not in last],
        *unavailable,
    ]
    python = attempts[-1].python if attempts else intake.python.target
    return BuilderRecord(
        inputs_digest=inputs_digest,
        seconds=round(time.monotonic() - begin, 3),
        gate=gate_from(findings),
        python=python,
        requirements=declared.requirements,
        replaced=declared.replaced,
        steps=steps,
        environment=attempts[-1].name if attempts else "newest",
        attempts=attempts,
        # the environment of ``after`` stays in use when none after it passes
        in_use=after.in_use if after is not None else None,
    )


def _attempt(target: _Target, *, ok: bool, outcome: str) -> EnvironmentAttempt:
    return EnvironmentAttempt(
        name=target.name,
        python=target.python,
        source=target.interpreter.source if target.interpreter is not None else None,
        exclude_newer=target.bound,
        why=target.why,
        ok=ok,
        outcome=outcome,
    )


@dataclass
class _Built:
    ok: bool
    outcome: str
    steps: list[ResolveStep]
    work: Path
    findings: list[BuildFinding] = field(default_factory=list)
    pins: list[str] = field(default_factory=list)
    lock_sha256: str | None = None
    interpreter: Path | None = None
    modules: list[str] = field(default_factory=list)
    #: The requirements it was built from, when a missing dependency was added to them.
    declared: Declared | None = None
    #: Build requirements supplied to source distributions that do not declare them.
    build_dependencies: dict[str, list[str]] = field(default_factory=dict)


#: Changes the Builder makes for an installed package that imports a module it does not
#: declare (Keras 2 without its backend) or a too new one, before it gives up on an environment.
MAX_MISSING_DEPENDENCIES = 3

_NO_MODULE = re.compile(r"No module named '([A-Za-z_][\w.]*)'")


def _missing_dependency(built: _Built) -> tuple[str, str, str] | None:
    """``(module, missing, distribution)`` when an import the gate probed (a third-party
    module) failed on another module that no pin provides and that is not the standard
    library's: an installed package's undeclared dependency (Keras 2 needs TensorFlow)."""
    provided = {_provides(p) for p in built.pins}
    for item in built.findings:
        if item.code != "B006":
            continue
        found = _NO_MODULE.search(item.message)
        module = item.message.split("'")[1] if item.message.count("'") >= 2 else ""
        if found is None or not module:
            continue
        top = found.group(1).split(".")[0]
        distribution = canonicalize_name(IMPORT_TO_DISTRIBUTION.get(top, top))
        if top == module.split(".")[0] or top in sys.stdlib_module_names:
            continue
        if distribution in provided:
            continue
        return module, top, distribution
    return None


_AT = re.compile(r"\(at (?P<file>[^:()]+): (?P<source>.+)\)$")
_IMPORTED = re.compile(r"^\s*(?:from\s+(?P<from>[\w.]+)\s+import|import\s+(?P<import>[\w.]+))")


#: A traceback's frame: its file, and the source line Python shows under it (if any).
_TRACE_FRAME = re.compile(
    r'^\s*File "(?P<file>[^"]+)", line \d+[^\n]*(?:\n(?P<source>(?!\s*File ")[^\n]*))?', re.M
)
#: Where an installed package's files are: a path inside an environment's packages, as run
#: or as the build writes it (``<site-packages>/theano/...``, :func:`fixes.portable`).
_PACKAGES = re.compile(r"(?:^<|[/\\])(?:site|dist)-packages>?[/\\](?P<file>.+)$")
_NO_TOP_MODULE = re.compile(
    r"^(?:\w+\.)*ModuleNotFoundError: No module named '(?P<top>[A-Za-z_]\w*)'$"
)


def undeclared_import(tail: str, pins: list[str]) -> tuple[str, str, str] | None:
    """``(file, module, distribution)`` when a run stopped on ``No module named 'X'`` raised
    by an import statement of an installed package: the traceback's last frame is a file of
    the environment's packages whose line imports ``X``, and no pin provides ``X``. That is
    the package's undeclared dependency on a path the gate's import of the package does not
    take (Theano 0.8's ``theano.sparse`` imports ``nose_parameterized`` through its test
    tools; ``import theano`` alone works). ``file`` is the package's file, relative to the
    packages folder."""
    lines = tail.rstrip().splitlines()
    missing = _NO_TOP_MODULE.match(lines[-1].strip()) if lines else None
    frames = list(_TRACE_FRAME.finditer(tail))
    if missing is None or not frames:
        return None
    top = missing.group("top")
    installed = _PACKAGES.search(frames[-1].group("file"))
    imported = _IMPORTED.match(frames[-1].group("source") or "")
    if installed is None or imported is None or top in sys.stdlib_module_names:
        return None
    if (imported.group("from") or imported.group("import")).split(".")[0] != top:
        return None
    distribution = canonicalize_name(IMPORT_TO_DISTRIBUTION.get(top, top))
    if distribution in {_provides(p) for p in pins}:
        return None
    return installed.group("file").replace("\\", "/"), top, distribution


def _too_new_dependency(built: _Built, declared: Declared) -> tuple[str, Replacement] | None:
    """``(cap, recorded change)`` when an import the gate probed failed inside an installed
    package on a line that imports another pinned package (Lasagne 0.1 imports
    ``theano.tensor.signal.downsample``, which Theano 0.9 removed): that package is too new
    for the one that imports it, and it is capped below the pinned version's minor release
    (``theano==0.9.0`` gives ``<0.9``; ``keras==2.0.0`` gives ``<2``)."""
    pinned = {_provides(p): p.partition("==")[2] for p in built.pins if "==" in p}
    for item in built.findings:
        at = _AT.search(item.message) if item.code == "B006" else None
        imported = _IMPORTED.match(at.group("source")) if at else None
        if at is None or imported is None:
            continue
        top = (imported.group("from") or imported.group("import")).split(".")[0]
        owner = at.group("file").split("/")[0].removesuffix(".py")
        distribution = canonicalize_name(IMPORT_TO_DISTRIBUTION.get(top, top))
        version = pinned.get(distribution)
        if top == owner or top in sys.stdlib_module_names or not version:
            continue
        try:
            release = Version(version).release
        except InvalidVersion:
            continue
        major, minor = release[0], (release[1:] or (0,))[0]
        cap = f"<{major}" if major and not any(release[1:]) else f"<{major}.{minor}"
        if cap == "<0.0":
            continue
        why = (
            f"{at.group('file')} (an installed package) fails on {at.group('source')!r} "
            f"with {distribution} {version}, newer than the code it imports was written "
            f"for: {distribution} is capped {cap}, after the import failed in the built "
            "environment"
        )
        for line in declared.requirements:
            if _provides(line) == distribution:
                requirement = Requirement(line)
                requirement.specifier &= SpecifierSet(cap)
                return cap, Replacement(original=line, replacement=str(requirement), why=why)
        return cap, Replacement(original=None, replacement=f"{distribution}{cap}", why=why)
    return None


def _try(  # noqa: PLR0917 - private helper of build_environment
    target: _Target,
    intake: IntakeRecord,
    declared: Declared,
    state_dir: Path,
    plan: PlanRecord | None,
    cache_dir: str | os.PathLike[str] | None,
    sandbox: bool,
) -> _Built:
    """Resolve, lock, build and gate one environment in its own scratch directory."""
    work = state_dir / f"{ENV_DIR}-{target.name}-{target.python}"
    shutil.rmtree(work, ignore_errors=True)
    steps, pins = resolve_steps(
        declared.requirements,
        work / "resolve",
        python=target.python,
        commit_date=target.bound or intake.python.commit_date,
        optional=declared.optional,
        era=target.bound is not None,
    )
    if pins is None:
        tail = (steps[-1].error or "").strip().splitlines()[-1:] or ["no step resolved"]
        tail = [build_error_line(steps[-1].error or "") or tail[0]]
        no_compiler = NO_COMPILER in (steps[-1].error or "")
        finding = build_finding(
            "B005",
            f"the requirements do not resolve for Python {target.python}: "
            f"{(steps[-1].error or '')[-300:]}",
            hint="install a C compiler (for example 'apt-get install gcc', or set CC to "
            "one), then 'reprobridge build --resume'"
            if no_compiler
            else "pin versions that have wheels for this interpreter in requirements.txt",
        )
        return _Built(False, f"B005: does not resolve ({brief(tail[0])})", steps, work, [finding])
    supplied = pinned_build_dependencies(steps, pins)
    atomic_write_text(work / "environment" / "requirements.in", "\n".join(pins) + "\n")
    atomic_write_text(
        work / "rra.yaml",
        _MANIFEST.format(python=target.python) + _build_dependencies_yaml(supplied),
    )
    try:
        # auto: the CPU builds of torch & co. unless this machine has a GPU (claims name none)
        locked = lock_artifact(work, accelerator="auto")
        interpreter = ensure_environment(
            work,
            cache_dir=cache_dir,
            python=target.interpreter.path if target.interpreter is not None else None,
        )
    except (LockError, EnvironmentBuildError) as exc:
        full = "; ".join(item.message for item in exc.findings)
        detail = full[-500:] or exc.message
        reason = build_error_line(full)
        outcome = f"B005: {reason or brief(detail)}"
        detail = f"{reason}; {detail}" if reason else detail
        finding = build_finding("B005", f"locking or building the environment failed: {detail}")
        return _Built(False, outcome, steps, work, [finding], pins)
    findings, modules = _gate(intake, plan, declared, pins, interpreter, work, sandbox)
    errors = [f for f in findings if f.severity == "error"]
    outcome = (
        "; ".join(f"{f.code}: {brief(f.message)}" for f in errors)
        if errors
        else "resolved, built, and every required import works"
    )
    return _Built(
        not errors,
        outcome,
        steps,
        work,
        findings,
        pins,
        locked.sha256,
        interpreter,
        modules,
        build_dependencies=supplied,
    )


def _with_missing_dependencies(  # noqa: PLR0917 - private helper of build_environment
    built: _Built,
    target: _Target,
    intake: IntakeRecord,
    declared: Declared,
    state_dir: Path,
    plan: PlanRecord | None,
    cache_dir: str | os.PathLike[str] | None,
    sandbox: bool,
) -> _Built:
    """An environment whose gate failed because an installed package imports a module it
    does not declare is built again with that module's distribution added (unpinned, a
    recorded addition), or, when it fails inside an installed package on another pinned
    package, with that one capped (:func:`_too_new_dependency`), up to
    :data:`MAX_MISSING_DEPENDENCIES` times; the first environment's result stands when the
    changes do not pass."""
    first, first_replaced = built, list(declared.replaced)
    for _ in range(MAX_MISSING_DEPENDENCIES):
        if built.ok:
            return built
        current = built.declared or declared
        missing = _missing_dependency(built)
        if missing is not None:
            module, top, distribution = missing
            added = Replacement(
                original=None,
                replacement=distribution,
                why=f"{module!r} imports {top!r} without declaring it (its missing "
                "dependency): added, unpinned, after the import failed in the built "
                "environment",
            )
        else:
            capped = _too_new_dependency(built, current)
            if capped is None:
                break
            added = capped[1]
        kept = [r for r in current.requirements if r != added.original]
        declared = Declared(
            sorted([*kept, added.replacement or ""], key=str.lower),
            [*current.replaced, added],
            current.optional,
        )
        again = _try(target, intake, declared, state_dir, plan, cache_dir, sandbox)
        built = replace(again, steps=[*built.steps, *again.steps], declared=declared)
    if built.ok or built is first:
        return built
    added_names = ", ".join(r.replacement or "" for r in declared.replaced[len(first_replaced) :])
    return replace(
        first,
        steps=built.steps,
        outcome=f"{first.outcome}; with {added_names} added: {built.outcome}"[:1000],
    )


def _gate(  # noqa: PLR0917 - private helper of _try
    intake: IntakeRecord,
    plan: PlanRecord | None,
    declared: Declared,
    pins: list[str],
    interpreter: Path,
    work: Path,
    sandbox: bool,
) -> tuple[list[BuildFinding], list[str]]:
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
    caches = work.parent / CACHE_DIR  # the build state's, shared with the build's runs
    findings += _probe_imports(
        interpreter, modules, work, optional=optional, sandbox=sandbox, caches=caches
    )
    return findings, modules


def _record(  # noqa: PLR0917 - private helper of build_environment
    built: _Built,
    target: _Target,
    declared: Declared,
    steps: list[ResolveStep],
    attempts: list[EnvironmentAttempt],
    inputs_digest: str,
    begin: float,
    state_dir: Path,
) -> BuilderRecord:
    """The record of the environment that passed, copied to ``state_dir/env``."""
    final = state_dir / ENV_DIR
    shutil.rmtree(final, ignore_errors=True)
    shutil.copytree(built.work, final, ignore=shutil.ignore_patterns("resolve", ".*"))
    findings = list(built.findings)
    legacy = None
    if target.name != "newest":
        where = (
            f"Python {target.interpreter.version} ({target.interpreter.source})"
            if target.interpreter is not None
            else f"Python {target.python}"
        )
        earlier = "; ".join(f"{a.name} (Python {a.python}): {a.outcome}" for a in attempts[:-1])
        if target.name == "era-python":
            legacy = (
                f"a legacy environment: {where}, an interpreter of the code's era, with "
                f"versions no newer than {target.bound}; before it, {earlier}"
            )
        findings.append(
            build_finding(
                "B047",
                f"the environment is of the code's era ({target.name}): {where}, versions "
                f"no newer than {target.bound}; before it, {earlier}",
            )
        )
    return BuilderRecord(
        inputs_digest=inputs_digest,
        seconds=round(time.monotonic() - begin, 3),
        gate=gate_from(findings),
        python=target.python,
        requirements=declared.requirements,
        replaced=declared.replaced,
        steps=steps,
        pins=built.pins,
        lock_sha256=built.lock_sha256,
        interpreter=str(built.interpreter),
        imports_checked=built.modules,
        environment=target.name,
        attempts=attempts,
        in_use=attempts[-1],
        legacy=legacy,
        build_dependencies=built.build_dependencies,
    )


#: Steps whose success changed what the repository declared: a decision the guide records.
_RELAXING = {
    "lower-bounds",
    "newest-lower-bounds",
    "optional-left-out",
    "required-only",
    "source-build",
    "build-dependencies",
}


def relaxation_decision(record: BuilderRecord, tasks: list[str]) -> Ambiguity | None:
    """The guide record of a resolution that relaxed the declared requirements, if any."""
    # the step that resolved the environment in use: its pins are the record's (a later
    # environment that resolved and then failed its gate has ok steps too)
    chosen = next(
        (step for step in reversed(record.steps) if step.ok and step.pins == record.pins), None
    )
    if chosen is None or chosen.name not in _RELAXING:
        return None
    # the steps of the chosen step's environment (its interpreter and date bound), each once:
    # the other environments' steps are the era decision's
    failed = dict.fromkeys(
        step.name
        for step in record.steps
        if not step.ok
        and (step.python, step.exclude_newer) == (chosen.python, chosen.exclude_newer)
    )
    bound = f" with versions released by {chosen.exclude_newer}" if chosen.exclude_newer else ""
    pinned = [line for line in record.requirements if re.search(r"[=<>~!]", line)]
    return Ambiguity(
        id="environment-requirements-relaxed",
        source=", ".join(pinned[:10]) or "the declared requirements",
        gap=(
            f"the requirements as declared do not resolve for Python "
            f"{chosen.python or record.python}{bound} (steps that failed: {', '.join(failed)})"
        ),
        resolution=f"step {chosen.name!r}: {chosen.why}; the lock holds the versions used",
        sensitivity="medium",
        tasks=tasks,
    )


def era_decision(record: BuilderRecord, tasks: list[str]) -> Ambiguity | None:
    """The guide record of an environment of the code's era (a legacy one with an older
    interpreter), traced to the Builder's attempts; None for the newest environment."""
    chosen = in_use(record)
    if chosen is None or chosen.name == "newest":
        return None
    legacy = "a legacy environment, " if chosen.name == "era-python" else ""
    return Ambiguity(
        id="environment-era",
        source=f"the date of the code's last change bounds the versions: {chosen.exclude_newer}",
        gap=f"the code does not run in the newest environment: {chosen.why}",
        resolution=(
            f"{legacy}Python {chosen.python} with the versions of the code's era "
            f"(environment {chosen.name!r}: {chosen.outcome}); the lock's resolved_for and "
            "environment.python name the interpreter"
        ),
        sensitivity="medium",
        tasks=tasks,
    )


def in_use(record: BuilderRecord) -> EnvironmentAttempt | None:
    """The environment in use: the record's ``in_use``, else (a record written before it)
    the last attempt that passed. A rebuild that failed later does not change it."""
    if record.in_use is not None:
        return record.in_use
    return next((a for a in reversed(record.attempts) if a.ok), None)


def still_in_use(built: BuilderRecord, failed: BuilderRecord) -> BuilderRecord:
    """The record after a rebuild that failed (``failed``): the environment in use stays
    (its pins, lock, ``in_use`` and guide note), every attempt and step is recorded, and no
    environment is left to try."""
    return built.model_copy(
        update={
            "attempts": failed.attempts,
            "steps": failed.steps,
            "environment": ENVIRONMENTS[-1],
        }
    )
