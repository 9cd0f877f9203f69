"""Builder: requirements, versions of the code's era, a hashed lock and a fresh environment.

Rules, in order:

1. **Requirements.** The first ``requirements*.txt``/``.in`` the Intake found (top level
   first), else none. Every third-party module the code imports that no requirement
   provides is added through :data:`IMPORT_TO_DISTRIBUTION` (a maintained map of import
   names to distributions; an unknown name is taken as its own distribution name), and each
   addition is recorded. ``-r``/``-e``/URL lines and environment markers that do not apply
   are dropped, recorded.
2. **Platform-bound pins.** ``nvidia-*``, ``triton`` and ``pytorch-triton`` pins are
   CUDA-only wheels: they are dropped (their CPU equivalent is nothing: the CPU builds of the
   frameworks that need them bundle what they use), and a ``+cuXYZ`` local version of a
   framework pin is cut to the public version. Nothing is downloaded to decide this.
3. **Versions of the code's era.** Resolution (``uv pip compile``, wheels only, for the
   installed interpreter) goes step by step and stops at the first step that resolves:

   a. the requirements as declared, nothing newer than the commit date;
   b. exact and upper bounds relaxed to lower bounds (``==1.2`` becomes ``>=1.2``), still
      bounded by the commit date (skipped when nothing changes);
   c. the relaxed requirements with the oldest release of each that has a wheel for the
      interpreter (``--resolution lowest-direct``, no date bound).

   Each step is recorded with its reason and, when it fails, the resolver's last lines.
   No step resolving is B005.
4. **Lock.** The chosen versions (every distribution of the resolution, exactly pinned)
   become ``environment/requirements.in``; ``reprobridge lock`` (the env API) turns them
   into the hashed lock. The interpreter is the one running the build: no interpreter is
   ever downloaded.
5. **Environment and gate.** The environment is built from the lock in the SDK's cache
   (shared by every artifact with the same lock). Gate: every third-party module the code
   imports imports there (B006 for each that does not, with the error's last line).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from reprobridge_sdk.agent._sandbox import confined
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
    Replacement,
    ResolveStep,
)

__all__ = [
    "CUDA_ONLY",
    "ENV_DIR",
    "IMPORT_TO_DISTRIBUTION",
    "build_environment",
    "declared_requirements",
    "relaxed",
    "resolve_steps",
]

#: Directory (inside the build state) of the scratch artifact the environment is locked in.
ENV_DIR = "env"

#: Import names whose distribution has another name. Names missing here are taken as their
#: own distribution name (``numpy`` -> ``numpy``).
IMPORT_TO_DISTRIBUTION: dict[str, str] = {
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "cv2": "opencv-python-headless",
    "PIL": "Pillow",
    "yaml": "PyYAML",
    "bs4": "beautifulsoup4",
    "Crypto": "pycryptodome",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "jwt": "PyJWT",
    "attr": "attrs",
    "google.protobuf": "protobuf",
    "tensorflow_datasets": "tensorflow-datasets",
    "tf_keras": "tf-keras",
    "torchvision": "torchvision",
    "gym": "gym",
    "git": "GitPython",
    "magic": "python-magic",
    "serial": "pyserial",
    "usb": "pyusb",
    "wx": "wxPython",
    "OpenGL": "PyOpenGL",
    "Bio": "biopython",
    "mpl_toolkits": "matplotlib",
    "pylab": "matplotlib",
    "sentencepiece": "sentencepiece",
    "fitz": "PyMuPDF",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "Levenshtein": "python-Levenshtein",
    "lightgbm": "lightgbm",
    "xgboost": "xgboost",
    "catboost": "catboost",
    "umap": "umap-learn",
    "hdbscan": "hdbscan",
    "igraph": "python-igraph",
    "community": "python-louvain",
    "sklearn_crfsuite": "sklearn-crfsuite",
    "faiss": "faiss-cpu",
    "jax": "jax",
    "haiku": "dm-haiku",
    "tree": "dm-tree",
    "absl": "absl-py",
    "gflags": "python-gflags",
    "tables": "tables",
    "h5py": "h5py",
    "pkg_resources": "setuptools",
    "setuptools": "setuptools",
    "nltk": "nltk",
    "spacy": "spacy",
    "gensim": "gensim",
    "statsmodels": "statsmodels",
    "seaborn": "seaborn",
    "tqdm": "tqdm",
    "pandas": "pandas",
    "scipy": "scipy",
    "numpy": "numpy",
    "matplotlib": "matplotlib",
    "torch": "torch",
    "tensorflow": "tensorflow",
    "keras": "keras",
    "transformers": "transformers",
    "datasets": "datasets",
    "wandb": "wandb",
    "tensorboardX": "tensorboardX",
    "joblib": "joblib",
    "networkx": "networkx",
    "sympy": "sympy",
    "requests": "requests",
    "click": "click",
    "ruamel": "ruamel.yaml",
    "zmq": "pyzmq",
    "lxml": "lxml",
}

#: Distributions that exist only as CUDA builds (matched on the canonical name).
CUDA_ONLY = re.compile(r"^(nvidia-.+|triton|pytorch-triton(-rocm)?|cupy-cuda.+)$")
_LOCAL_CUDA = re.compile(r"\+(cu\d+|rocm[\d.]+)$")


@dataclass(frozen=True)
class Declared:
    """The requirements the build starts from and what was changed on the way."""

    requirements: list[str]
    replaced: list[Replacement]


def _provides(requirement: str) -> str:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return canonicalize_name(re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0])


def declared_requirements(intake: IntakeRecord) -> Declared:
    """Steps 1 and 2: the requirements from the dependency files and the imports."""
    files = [f for f in intake.dependency_files if f.kind == "requirements"]
    files.sort(key=lambda f: (f.path.count("/"), "dev" in f.path or "test" in f.path, f.path))
    lines = list(files[0].requirements) if files else []
    source = files[0].path if files else "the imports"
    kept: list[str] = []
    replaced: list[Replacement] = []
    for line in lines:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            replaced.append(
                Replacement(original=line, replacement=None, why=f"not a requirement ({source})")
            )
            continue
        name = canonicalize_name(requirement.name)
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
    provided = {_provides(line) for line in kept}
    for use in intake.imports:
        distribution = IMPORT_TO_DISTRIBUTION.get(use.module, use.module)
        if canonicalize_name(distribution) in provided:
            continue
        provided.add(canonicalize_name(distribution))
        kept.append(distribution)
        replaced.append(
            Replacement(
                original=None,
                replacement=distribution,
                why=f"imported as {use.module!r} in {use.files[0]} but not declared",
            )
        )
    return Declared(sorted(kept, key=str.lower), replaced)


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
    lowest: bool,
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
        "--only-binary",
        ":all:",
        "--index-url",
        index_url(),
        "--python-version",
        python,
        "--output-file",
        str(output),
    ]
    if exclude_newer:
        argv += ["--exclude-newer", exclude_newer]
    if lowest:
        argv += ["--resolution", "lowest-direct"]
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


def resolve_steps(
    requirements: list[str], work: Path, *, python: str, commit_date: str
) -> tuple[list[ResolveStep], list[str] | None]:
    """Step 3: resolve, relaxing step by step; return the steps and the pins (None: none)."""
    work.mkdir(parents=True, exist_ok=True)
    bound = _date_bound(commit_date)
    loose = relaxed(requirements)
    plan: list[tuple[str, list[str], str | None, bool, str]] = [
        (
            "declared",
            requirements,
            bound,
            False,
            "the versions of the code's era: nothing newer than the commit",
        ),
    ]
    if loose != requirements:
        plan.append(
            ("lower-bounds", loose, bound, False, "exact and upper bounds relaxed to lower bounds")
        )
    plan.append(
        (
            "oldest-wheel",
            loose,
            None,
            True,
            f"the oldest release of each requirement with a wheel for Python {python}",
        )
    )
    steps: list[ResolveStep] = []
    for name, reqs, exclude, lowest, why in plan:
        if not reqs:
            steps.append(
                ResolveStep(
                    name=name,
                    requirements=[],
                    exclude_newer=exclude,
                    lowest=lowest,
                    ok=True,
                    why="nothing to resolve",
                    argv=[],
                    pins=[],
                )
            )
            return steps, []
        pins, argv, error = _compile(
            reqs, work, python=python, exclude_newer=exclude, lowest=lowest
        )
        steps.append(
            ResolveStep(
                name=name,
                requirements=reqs,
                exclude_newer=exclude,
                lowest=lowest,
                ok=pins is not None,
                why=why,
                argv=argv,
                pins=pins or [],
                error=error or None,
            )
        )
        if pins is not None:
            return steps, pins
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


def _probe_imports(
    python: Path, modules: list[str], cwd: Path, *, sandbox: bool = False
) -> list[BuildFinding]:
    """Import each module in the built environment (in the sandbox with ``sandbox``: an
    import runs the package's code)."""
    findings: list[BuildFinding] = []
    extra = {"MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    env = {**os.environ, **extra}
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
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["exit status " + str(proc.returncode)])[-1]
            findings.append(
                build_finding(
                    "B006",
                    f"{module!r} does not import in the built environment: {last[:300]}",
                    hint="declare its distribution in the repository's requirements",
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
    cache_dir: str | os.PathLike[str] | None = None,
    started: float | None = None,
    sandbox: bool = False,
) -> BuilderRecord:
    """Run the Builder: declared requirements, resolution steps, lock, environment, gate.

    Resolving and installing run outside the sandbox; the import probes run in it with
    ``sandbox``."""
    begin = time.monotonic() if started is None else started
    python = intake.python.target
    declared = declared_requirements(intake)
    scratch = state_dir / ENV_DIR
    steps, pins = resolve_steps(
        declared.requirements,
        scratch / "resolve",
        python=python,
        commit_date=intake.python.commit_date,
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
        locked = lock_artifact(scratch)
        interpreter = ensure_environment(scratch, cache_dir=cache_dir)
    except (LockError, EnvironmentBuildError) as exc:
        detail = "; ".join(item.message for item in exc.findings)[-500:] or exc.message
        return record(
            [build_finding("B005", f"locking or building the environment failed: {detail}")],
            pins=pins,
        )
    modules = [use.module for use in intake.imports]
    findings = _probe_imports(interpreter, modules, scratch, sandbox=sandbox)
    return record(
        findings,
        pins=pins,
        lock_sha256=locked.sha256,
        interpreter=str(interpreter),
        imports_checked=modules,
    )


def interpreter_version() -> str:
    """``X.Y`` of the running interpreter (the only one the build uses)."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"
