"""The Reproducer's fix library: classify a failed run from its traceback, propose a fix.

A failed run's stderr is read into a :class:`Failure`: the exception type and message of
the last traceback, and the innermost frame that lies inside the repository (file relative
to the repository root, line). Frames of the standard library and of installed packages
are skipped: a fix only ever edits the repository's own files.

Each rule of :data:`RULES` looks at a failure and, when it recognises it, returns a
:class:`Fix`: new texts for some files of the repository, or a change of the launcher (its
working directory or environment), with the kind the change record will carry. A rule never
writes anything; the Reproducer applies the fix, re-runs, and keeps it only when the error
it targeted is gone (its gate). The rules, in order:

* ``python2``: a ``SyntaxError`` in a file that is Python 2 -> fissix's default fixers
  (print statements, ``except X, e``, ``dict.iteritems``, ``xrange``, ``raw_input``, ...),
  without ``fix_import`` (which would turn a script's sibling imports into package-relative
  ones that fail when the file runs as a script).
* ``python2-lists``: a ``TypeError`` from indexing what Python 3 makes lazy (``'map' object
  is not subscriptable``, ``dict_keys``, ``zip``, ``filter``) in code that parses as Python 3
  -> fissix's ``map``, ``filter``, ``zip`` and ``dict`` fixers on the failing file.
* ``python2-names``: a ``NameError`` for a builtin Python 3 removed (``xrange``,
  ``unicode``, ``basestring``, ``long``, ``raw_input``, ``reduce``, ...; :data:`PY2_NAMES`)
  in code that parses as Python 3 -> fissix's fixer of each such name that the failing file
  and its siblings read and never bind.
* ``python2-modules``: ``No module named 'X'`` for a standard-library module under its
  Python 2 name (``cPickle``, ``StringIO``, ``ConfigParser``, ``urllib2``, ...) in code that
  parses as Python 3 -> fissix's ``imports``, ``imports2`` and ``urllib`` fixers on the
  failing file and its siblings that import such a name.
* ``python2-pickle``: a pickle Python 2 wrote, read by Python 3 (``'utf-8' codec can't
  decode byte 0x80``, ``a bytes-like object is required, not 'str'``) on a line calling
  ``pickle.load`` -> the ``open`` it reads opens in binary mode and the call decodes with
  ``encoding="latin1"``.
* ``python2-pickle-write``: a pickle written to a file opened as text (``write() argument
  must be str, not bytes``) on a line calling ``pickle.dump`` or ``f.write(pickle.dumps(...))``
  -> the ``open`` it writes to opens in binary mode (``"w"`` to ``"wb"``).
* ``implicit-relative-import``: ``No module named 'X'`` raised in a module of a package
  whose folder holds ``X`` (Python 2 imported a sibling implicitly) -> fissix's
  ``fix_import`` on every module of that folder (``from X import`` becomes
  ``from .X import``, only where the sibling exists).
* ``self-import``: ``No module named 'X'`` where the code imports ``X.models`` and
  ``models/`` is at the repository root (the authors' checkout folder was ``X``) -> a
  package ``X/`` at the root whose modules are the root's (its ``__path__``), which the
  launcher has on ``PYTHONPATH``: the code runs as written, a convenience change.
* ``repository-url``: a download that fails for want of a network (``URLError``, name
  resolution) of a URL serving a file of this repository raw (GitHub's ``/raw/`` and
  ``raw.githubusercontent.com``, the path present here) -> the URL becomes that file's
  ``file:`` URI, computed from ``__file__``.
* ``integer-division``: a float used as an index or a count (``slice indices must be
  integers``, ``'float' object cannot be interpreted as an integer``, ``list indices must be
  integers``) -> ``/`` becomes ``//`` in the failing line, in the assignments of the
  names that line uses, and in the body of a function of the same file whose result they
  are (``idx = minibatch(i, n, size)``).
* ``float-index``: ``slice indices must be integers`` with no ``/`` behind it (a bound from
  ``np.round`` or ``n * 0.9``) -> each slice bound of the failing line wrapped in ``int()``;
  a bound that is a name, at its last assignment before the line instead.
* ``removed-api``: the renamed or removed APIs of :data:`RENAMED`, matched on the error
  message: ``scipy.misc.logsumexp``/``comb``/``imread``, ``scipy.sparse.linalg.eigen.arpack``,
  ``autograd.scipy.misc``,
  ``np.float``/``np.int``/
  ``np.bool``/``np.object``/``np.str``, ``sklearn.cross_validation``/``grid_search``,
  ``sklearn.externals.joblib``, ``collections.Mapping`` and its siblings, ``time.clock``,
  pandas ``.ix``.
* ``pandas-append``: ``DataFrame.append`` (removed in pandas 2) -> ``pd.concat`` on the
  failing line.
* ``yaml-load``: ``yaml.load`` without a ``Loader`` -> ``yaml.safe_load``.
* ``lightning-hparams``: ``AttributeError`` on ``self.hparams = x`` in a LightningModule
  (read-only since PyTorch Lightning 1.3, before the era of much code that uses it) ->
  ``self.save_hyperparameters(x)`` on that line.
* ``gui-backend``: an interactive matplotlib backend that cannot load headless ->
  ``matplotlib.use("Agg")``.
* ``cuda-device``: a CUDA error (no device, no driver, not compiled with CUDA) ->
  ``"cuda"``/``"cuda:N"`` device literals, and ``"cuda:" + str(...)`` or ``f"cuda:{...}"``
  device names, become ``"cpu"`` in the repository files of the
  traceback (device checks such as ``startswith("cuda")`` are left alone); ``.cuda(...)``
  becomes ``.cpu()``, ``torch.cuda.FloatTensor`` and its kin the CPU tensor types, and a
  statement that only selects a device (``torch.cuda.set_device(...)``) becomes ``pass``.
* ``working-directory``: ``FileNotFoundError`` for a relative path that exists relative to
  the script's directory or the repository root -> the launcher's working directory.
* ``missing-import``: ``NameError`` for a name the failing file never imports, which exactly
  one module of a package the file already imports from defines at its top level
  (``Dist=eval("Normal")`` with ``class Normal`` in ``pkg/distns/normal.py``) -> ``from
  <module> import <name>`` after the file's last top-level import, from the highest package
  above that module that re-exports it (``pkg.distns``); modules that only import the name
  for their own use do not count, and two definers are a guess, so no fix.
* ``own-distribution-metadata``: ``PackageNotFoundError`` (``DistributionNotFound``) for the
  repository's own distribution, whose package runs from the checkout, not installed ->
  a metadata-only ``<name>-<version>.dist-info`` in the folder on ``sys.path`` that holds
  that package (:mod:`reprobridge_sdk.agent.own_distribution`), a convenience change.

A failure no rule recognises gets no fix (the advisor may be asked, if enabled). A rule that
recognises a failure but cannot fix it safely returns the finding that says why (a warning,
collected by :func:`propose`).

What the build writes about a failure uses :meth:`Failure.portable`: paths of this machine
(the artifact's directory, installed packages, the standard library, the home directory) are
made relative or replaced by a placeholder (:func:`portable`), so phase records, findings and
the change record read the same on every machine.
"""

from __future__ import annotations

import ast
import re
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.utils import canonicalize_name

from reprobridge_sdk.agent.intake import repository_files
from reprobridge_sdk.agent.own_distribution import (
    dist_info_files,
    missing_distribution,
    own_distribution,
    place_problem,
    self_package_files,
)
from reprobridge_sdk.model.build import BuildFinding, PrepareStep

__all__ = [
    "RENAMED",
    "RULES",
    "Failure",
    "Fix",
    "classify",
    "portable",
    "propose",
]

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)
_EXC = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|DistributionNotFound)"
    r"|[A-Z]\w*Error)(?::\s?(?P<message>.*))?$"
)


@dataclass(frozen=True)
class Failure:
    """What a failed run's traceback says."""

    type: str
    message: str
    file: str | None = None
    line: int | None = None
    frames: tuple[tuple[str, int], ...] = ()
    tail: str = ""

    @property
    def signature(self) -> str:
        """Type, message and place: two failures with the same signature are the same error."""
        return f"{self.type}: {self.message} @ {self.file}:{self.line}"

    def same_error(self, other: Failure) -> bool:
        """Same type, message and file: the error a fix targeted is still there.

        The line is left out: a fix that adds or removes lines moves the error without
        removing it.
        """
        return (self.type, self.message, self.file) == (other.type, other.message, other.file)

    def portable(self, artifact: Path) -> Failure:
        """This failure with the machine's paths in its message and traceback made portable.

        What the build writes (phase records, findings, the change record, the advisor's
        transcript) uses this form; the fix rules read the failure as the run reported it.
        """
        return replace(
            self, message=portable(self.message, artifact), tail=portable(self.tail, artifact)
        )


@dataclass(frozen=True)
class Fix:
    """A change that should make a failure go away."""

    rule: str
    kind: str  # "execution-fix" | "convenience"
    summary: str
    files: dict[str, str] = field(default_factory=dict)
    workdir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: Why a change no error called for was made, and what showed it works (convenience).
    evidence: str = ""
    #: Warnings met while the fix was made (e.g. metadata it could not use).
    notes: tuple[BuildFinding, ...] = ()
    #: The steps the launcher runs first, in order (:mod:`reprobridge_sdk.agent.prerequisite`).
    prepare: tuple[PrepareStep, ...] = ()


_INSTALLED = re.compile(r"""(?:[A-Za-z]:)?(?:[/\\][^/\\\s"':]+)*[/\\](?:site|dist)-packages[/\\]""")
_STDLIB = re.compile(r"""(?:/[^/\s"':]+)*/lib/python3\.\d+/""")


def portable(text: str, artifact: Path) -> str:
    """``text`` (a traceback, an error message) with no path of this machine in it.

    * A path into an installed package becomes ``<site-packages>/...`` (any environment's,
      the build's own under the artifact included).
    * A path into the standard library becomes ``<stdlib>/...``.
    * A path inside ``artifact`` becomes relative to it (``code/train.py``), and the artifact
      itself ``.``; both its given and its resolved spelling are recognised.
    * What is left under the user's home directory starts with ``~/``.
    Other text, relative paths included, is kept as it is.
    """
    text = _INSTALLED.sub("<site-packages>/", text)
    stdlib = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib")}
    for prefix in sorted((p.rstrip("/") for p in stdlib if p), key=len, reverse=True):
        if prefix:
            text = text.replace(prefix + "/", "<stdlib>/")
    text = _STDLIB.sub("<stdlib>/", text)
    prefixes = {str(artifact).rstrip("/"), str(artifact.resolve()).rstrip("/")}
    for prefix in sorted((p for p in prefixes if p), key=len, reverse=True):
        text = text.replace(prefix + "/", "")
        text = re.sub(re.escape(prefix) + r"(?![\w.-])", ".", text)
    home = str(Path.home()).rstrip("/")
    if len(home) > 1:
        text = text.replace(home + "/", "~/")
    return text


def _inside(root: Path, path: str, cwd: Path) -> str | None:
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = cwd / candidate
    try:
        resolved = candidate.resolve()
        rel = resolved.relative_to(root.resolve())
    except (OSError, ValueError):
        return None
    if {"site-packages", "dist-packages"} & set(rel.parts):
        return None  # an installed package, even when it sits inside the repository
    return rel.as_posix() if resolved.is_file() else None


def classify(stderr: str, root: Path, cwd: Path | None = None) -> Failure | None:
    """The failure a run's stderr reports, or None when there is no exception line."""
    lines = stderr.rstrip().splitlines()
    exc_index = None
    for index in range(len(lines) - 1, -1, -1):
        if _EXC.match(lines[index].strip()) and not lines[index].startswith((" ", "\t")):
            exc_index = index
            break
    if exc_index is None:
        return None
    match = _EXC.match(lines[exc_index].strip())
    assert match is not None
    head = "\n".join(lines[: exc_index + 1])
    last_tb = head.rfind("Traceback (most recent call last):")
    body = head[last_tb:] if last_tb >= 0 else head
    frames: list[tuple[str, int]] = []
    for frame in _FRAME.finditer(body):
        rel = _inside(root, frame.group("file"), cwd or root)
        if rel is not None:
            frames.append((rel, int(frame.group("line"))))
    file, line = frames[-1] if frames else (None, None)
    exc_type = match.group("type").rsplit(".", 1)[-1]
    message = (match.group("message") or "").strip() or _continued(lines[exc_index + 1 :])
    if exc_type == "SyntaxError" and file is None:
        # A syntax error has no frame of the file itself, only '  File "x.py", line N'.
        plain = list(_FRAME.finditer(head))
        if plain:
            rel = _inside(root, plain[-1].group("file"), cwd or root)
            if rel is not None:
                file, line = rel, int(plain[-1].group("line"))
    return Failure(
        type=exc_type,
        message=message[:500],
        file=file,
        line=line,
        frames=tuple(frames),
        tail="\n".join(lines[max(0, exc_index - 12) : exc_index + 1])[-2000:],
    )


def _continued(after: list[str]) -> str:
    """The message of an exception whose text starts on the line after its type
    (PyTorch 1.4 without a driver prints ``AssertionError: ``, then ``Found no NVIDIA
    driver ...``): the lines up to the first blank one, joined by spaces."""
    text: list[str] = []
    for line in after[:10]:
        if not line.strip():
            break
        text.append(line.strip())
    return " ".join(text)


# ------------------------------------------------------------------------------ rules


def _read(root: Path, rel: str) -> str:
    return (root / rel).read_text("utf-8")


def _python2(failure: Failure, root: Path, script: str) -> Fix | None:
    if failure.type not in {"SyntaxError", "TabError", "IndentationError"} or not failure.file:
        return None
    from fissix import refactor  # noqa: PLC0415 - only for Python 2 files

    fixers = [
        name
        for name in refactor.get_fixers_from_package("fissix.fixes")
        if not name.endswith(".fix_import")
    ]
    tool = refactor.RefactoringTool(fixers)
    converted = _fissix(tool, root, failure.file)
    if converted is None:
        return None
    files = {failure.file: converted}
    folder = (root / failure.file).parent
    for module in sorted(folder.glob("*.py")):  # its Python 2 siblings: one change, not many
        rel = module.relative_to(root).as_posix()
        if rel in files or module.is_symlink() or not _python2_only(module):
            continue
        if (new := _fissix(tool, root, rel)) is not None:
            files[rel] = new
    where = (
        failure.file
        if len(files) == 1
        else f"{len(files)} files of {folder.relative_to(root).as_posix() or '.'}"
    )
    return Fix(
        rule="python2",
        kind="execution-fix",
        summary=f"Python 2 syntax of {where} converted with fissix",
        files=files,
    )


#: Python 3's lazy views and iterators used as Python 2's lists.
_PY2_LISTS = re.compile(
    r"'(map|filter|zip|range|dict_keys|dict_values|dict_items)' object "
    r"(?:is not subscriptable|does not support indexing|has no attribute 'sort')|"
    r"object of type '(map|filter|zip)' has no len\(\)"
)


def _python2_lists(failure: Failure, root: Path, script: str) -> Fix | None:
    """Code of Python 2 that parses as Python 3 but indexes what ``map``, ``filter``, ``zip``
    or ``dict.keys()`` return: fissix's ``map``, ``filter``, ``zip`` and ``dict`` fixers on
    the failing file, which wrap them in ``list(...)`` where the result is used as a list."""
    if failure.type != "TypeError" or not failure.file:
        return None
    found = _PY2_LISTS.search(failure.message)
    if found is None:
        return None
    from fissix import refactor  # noqa: PLC0415 - only for Python 2 code

    tool = refactor.RefactoringTool(
        [f"fissix.fixes.fix_{name}" for name in ("map", "filter", "zip", "dict")]
    )
    converted = _fissix(tool, root, failure.file)
    if converted is None:
        return None
    name = next(g for g in found.groups() if g)
    return Fix(
        rule="python2-lists",
        kind="execution-fix",
        summary=f"Python 2 list results of {failure.file} ({name} and its kin) made lists",
        files={failure.file: converted},
    )


#: Builtins of Python 2 that Python 3 removed, and the fissix fixer that ports each.
PY2_NAMES = {
    "xrange": "xrange",
    "unicode": "unicode",
    "unichr": "unicode",
    "basestring": "basestring",
    "long": "long",
    "raw_input": "raw_input",
    "reduce": "reduce",
    "execfile": "execfile",
    "intern": "intern",
    "apply": "apply",
    "buffer": "buffer",
    "reload": "reload",
    "StandardError": "standarderror",
}


def _python2_names(failure: Failure, root: Path, script: str) -> Fix | None:
    """Code of Python 2 that parses as Python 3 but calls a removed builtin (``xrange``,
    ``unicode``, ``reduce``, ...): fissix's fixer of each such name that a file uses and
    never binds, on the failing file and its siblings (one change, not one per file)."""
    if failure.type != "NameError" or not failure.file:
        return None
    match = _NAME_ERROR.match(failure.message)
    if match is None or match.group(1) not in PY2_NAMES:
        return None
    from fissix import refactor  # noqa: PLC0415 - only for Python 2 code

    def tool(text: str) -> Any:
        names = _unbound_python2_names(text)
        fixers = [f"fissix.fixes.fix_{PY2_NAMES[n]}" for n in names]
        return refactor.RefactoringTool(fixers) if names else None

    converted = _with_siblings(root, failure.file, tool)
    if converted is None:
        return None
    files, where = converted
    return Fix(
        rule="python2-names",
        kind="execution-fix",
        summary=f"Python 2 builtins ({match.group(1)} and its kin) of {where} ported with fissix",
        files=files,
    )


#: The fissix fixers that port Python 2's standard-library module names (``cPickle``,
#: ``StringIO``, ``ConfigParser``, ``urllib2``, ``anydbm``, ...): each fixer's module map.
_PY2_MODULE_FIXERS = ("imports", "imports2", "urllib")


def _python2_module_names() -> frozenset[str]:
    from fissix.fixes import fix_imports, fix_imports2, fix_urllib  # noqa: PLC0415

    return frozenset(fix_imports.MAPPING) | set(fix_imports2.MAPPING) | set(fix_urllib.MAPPING)


def _python2_modules(failure: Failure, root: Path, script: str) -> Fix | None:
    """Code of Python 2 that parses as Python 3 but imports a standard-library module under
    its Python 2 name (``No module named 'cPickle'``): fissix's ``imports``, ``imports2`` and
    ``urllib`` fixers on the failing file and on its siblings that import such a name (one
    change, not one per file). A module of the repository with that name is not touched."""
    if failure.type not in {"ModuleNotFoundError", "ImportError"} or not failure.file:
        return None
    match = _NO_TOP.match(failure.message)
    names = _python2_module_names()
    if match is None or match.group(1) not in names:
        return None
    name = match.group(1)
    if (root / name).exists() or (root / f"{name}.py").exists():
        return None
    from fissix import refactor  # noqa: PLC0415 - only for Python 2 code

    fixer = refactor.RefactoringTool([f"fissix.fixes.fix_{n}" for n in _PY2_MODULE_FIXERS])
    imports = re.compile(
        r"^\s*(?:import|from)\s+(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\b",
        re.M,
    )
    converted = _with_siblings(root, failure.file, lambda text: imports.search(text) and fixer)
    if converted is None:
        return None
    files, where = converted
    return Fix(
        rule="python2-modules",
        kind="execution-fix",
        summary=f"Python 2 module names ({name} and its kin) of {where} ported with fissix",
        files=files,
    )


def _with_siblings(
    root: Path, file: str, tool: Callable[[str], Any]
) -> tuple[dict[str, str], str] | None:
    """``file`` and each ``.py`` sibling of its folder (not a link) converted with fissix by
    the tool ``tool(text)`` gives for it (none: left as it is), as one change: the files
    converted and where they are (``file``, or "N files of <file>'s folder"). None when
    ``file`` itself is not converted."""
    folder = (root / file).parent
    siblings = [m.relative_to(root).as_posix() for m in sorted(folder.glob("*.py"))]
    files: dict[str, str] = {}
    for rel in dict.fromkeys([file, *siblings]):
        if rel != file and (root / rel).is_symlink():
            continue
        try:
            fixer = tool(_read(root, rel))
        except (OSError, UnicodeDecodeError):
            continue
        if fixer and (converted := _fissix(fixer, root, rel)) is not None:
            files[rel] = converted
    if file not in files:
        return None
    where = file if len(files) == 1 else f"{len(files)} files of {file}'s folder"
    return files, where


def _unbound_python2_names(text: str) -> list[str]:
    """The names of :data:`PY2_NAMES` that ``text`` reads and never binds (a variable of the
    file named ``long`` is the file's own, not the builtin), sorted."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    read: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return sorted(n for n in PY2_NAMES if n in read and n not in bound)


def _python2_only(path: Path) -> bool:
    """Whether ``path`` is a file that does not parse as Python 3."""
    try:
        ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return True
    except (OSError, RecursionError, MemoryError):
        return False
    return False


def _fissix(tool: Any, root: Path, rel: str) -> str | None:
    """``rel`` converted by ``tool``, or None when it cannot be read, parsed or changed."""
    try:
        text = _read(root, rel)
        new = str(tool.refactor_string(text if text.endswith("\n") else text + "\n", rel))
    except Exception:  # a file fissix cannot read or parse gets no fix
        return None
    return None if new in {text, text + "\n"} else new


_NO_MODULE = re.compile(r"^No module named '([A-Za-z_]\w*)")


def _implicit_relative(failure: Failure, root: Path, script: str) -> Fix | None:
    """``No module named 'X'`` raised by a module of a package whose folder holds ``X``:
    Python 2's implicit relative imports, made explicit in every module of that folder with
    fissix's ``fix_import`` (which rewrites an import only when the sibling exists)."""
    if failure.type not in {"ModuleNotFoundError", "ImportError"} or not failure.file:
        return None
    match = _NO_MODULE.match(failure.message)
    folder = (root / failure.file).parent
    if match is None or not (folder / "__init__.py").is_file():
        return None
    name = match.group(1)
    if not ((folder / f"{name}.py").is_file() or (folder / name / "__init__.py").is_file()):
        return None
    from fissix import refactor  # noqa: PLC0415 - only for Python 2 imports

    tool = refactor.RefactoringTool(["fissix.fixes.fix_import"])
    files: dict[str, str] = {}
    for module in sorted(folder.glob("*.py")):
        if module.is_symlink() or not module.is_file():
            continue
        try:
            text = module.read_text("utf-8")
            new = str(
                tool.refactor_string(text if text.endswith("\n") else text + "\n", str(module))
            )
        except Exception:  # noqa: S112 - a file fissix cannot read or parse stays as it is
            continue
        if new != text and new != text + "\n":
            files[module.relative_to(root).as_posix()] = new
    if failure.file not in files:
        return None
    package = folder.relative_to(root).as_posix()
    return Fix(
        rule="implicit-relative-import",
        kind="execution-fix",
        summary=f"Python 2 implicit relative imports of the package {package} made explicit",
        files=files,
    )


#: The whole message of a missing top-level module (``No module named 'X'``, X undotted).
_NO_TOP = re.compile(r"^No module named '([A-Za-z_]\w*)'$")


def _self_import(failure: Failure, root: Path, script: str) -> Fix | None:
    """``No module named 'X'`` (X itself, not a module inside it) where no ``X`` is in the
    repository but its code imports ``X.models`` (or ``from X import models``) and
    ``models`` is at its root: the authors' checkout folder was named ``X``. The fix is
    ``X/__init__.py`` at the root, a package whose modules are the root's
    (:func:`~reprobridge_sdk.agent.own_distribution.self_package_files`); the launcher
    already has the root on ``PYTHONPATH``. The code is not touched: writing its imports
    from the root instead would let a module beside the script (``training/training.py``
    run as ``training/example.py``) shadow the root's package of the same name."""
    if failure.type not in {"ModuleNotFoundError", "ImportError"}:
        return None
    match = _NO_TOP.match(failure.message)
    if match is None:
        return None
    name = match.group(1)
    if (root / name).exists() or (root / f"{name}.py").exists():
        return None
    through = re.compile(
        rf"^\s*(?:from\s+{name}\.(\w+)|import\s+{name}\.(\w+)|from\s+{name}\s+import\s+(\w+))",
        re.M,
    )
    reached: set[str] = set()
    for rel in _python_files(root):
        try:
            text = _read(root, rel)
        except (OSError, UnicodeDecodeError):
            continue
        reached.update(next(g for g in m.groups() if g) for m in through.finditer(text))
    at_root = sorted(t for t in reached if (root / t).is_dir() or (root / f"{t}.py").is_file())
    if not at_root:
        return None
    files = self_package_files(root, name)
    if files is None:
        return None
    return Fix(
        rule="self-import",
        kind="convenience",
        summary=f"the repository importable as {name!r} (its authors' folder name), the "
        f"package {name}/ standing for its root ({', '.join(at_root)})",
        files=files,
    )


#: A network failure's exception types and message parts (the build has no network).
_NETWORK_TYPES = frozenset(
    {"URLError", "HTTPError", "ConnectionError", "gaierror", "ConnectionRefusedError"}
)
_NETWORK_MESSAGES = ("name resolution", "Network is unreachable", "Connection refused")
#: A quoted URL of a file in a GitHub repository, served raw: the path is group 3.
_RAW_URL = re.compile(
    r"""(['"])(https?://(?:github\.com/[\w.-]+/[\w.-]+/raw/[\w.-]+|"""
    r"""raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[\w.-]+)/([\w./-]+))\1"""
)


def _repository_url(failure: Failure, root: Path, script: str) -> Fix | None:
    """A download that fails for want of a network, of a URL that serves a file of this very
    repository raw (``https://github.com/o/r/raw/master/data.pkl``, with ``data.pkl`` at the
    root): the URL becomes the ``file:`` URI of that file, computed from ``__file__`` so the
    artifact runs anywhere; ``urlopen``, ``urlretrieve``, pandas and matplotlib read it."""
    network = failure.type in _NETWORK_TYPES or any(
        part in failure.message for part in _NETWORK_MESSAGES
    )
    if not network or not failure.file:
        return None
    files: dict[str, str] = {}
    for rel in dict.fromkeys([failure.file, *(frame for frame, _ in failure.frames)]):
        if not (root / rel).is_file() or not rel.endswith(".py"):
            continue
        text = _read(root, rel)
        depth = rel.count("/")

        def local(match: re.Match[str], depth: int = depth) -> str:
            path = PurePosixPath(match.group(3))
            if ".." in path.parts or not (root / path).is_file():
                return match.group(0)
            return (
                f'__import__("pathlib").Path(__file__).resolve().parents[{depth}]'
                f".joinpath({str(path)!r}).as_uri()"
            )

        new = _RAW_URL.sub(local, text)
        if new != text:
            files[rel] = new
    if not files:
        return None
    return Fix(
        rule="repository-url",
        kind="execution-fix",
        summary="downloads of the repository's own files read from the repository instead",
        files=files,
    )


_INT_MESSAGES = (
    "slice indices must be integers",
    "object cannot be interpreted as an integer",
    "indices must be integers",
    "must be an integer",
)


def _division(failure: Failure, root: Path, script: str) -> Fix | None:
    if failure.type != "TypeError" or not failure.file or not failure.line:
        return None
    if not any(m in failure.message for m in _INT_MESSAGES):
        return None
    text = _read(root, failure.file)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    used: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) == failure.line and isinstance(node, ast.Name):
            used.add(node.id)
    divisions: list[ast.BinOp] = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Div)
        and node.lineno == failure.line
    ]
    called: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if names & used and node.value is not None:
                divisions += _divisions(node.value)
                called |= {
                    sub.func.id
                    for sub in ast.walk(node.value)
                    if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)
                }
    # a name the line uses that a function of the same file returned (an index or a slice
    # computed from a count): the divisions of that function's body
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in called:
            divisions += [sub for statement in node.body for sub in _divisions(statement)]
    if not divisions:
        return None
    lines = text.splitlines(keepends=True)
    edits: dict[int, list[tuple[int, int]]] = {}
    for node in divisions:
        if node.left.end_lineno != node.right.lineno:
            continue
        row = node.right.lineno - 1
        edits.setdefault(row, []).append((node.left.end_col_offset or 0, node.right.col_offset))
    for row, spans in edits.items():
        line = lines[row].encode("utf-8")
        for start, end in sorted(spans, reverse=True):
            between = line[start:end]
            if between.count(b"/") != 1:
                continue
            line = line[:start] + between.replace(b"/", b"//") + line[end:]
        lines[row] = line.decode("utf-8")
    new = "".join(lines)
    if new == text:
        return None
    return Fix(
        rule="integer-division",
        kind="execution-fix",
        summary=f"Python 2 integer division in {failure.file} written as '//'",
        files={failure.file: new},
    )


def _divisions(node: ast.AST) -> list[ast.BinOp]:
    return [
        sub for sub in ast.walk(node) if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div)
    ]


def _float_index(failure: Failure, root: Path, script: str) -> Fix | None:
    """A float used as a slice bound at the failing line (``x[0 : np.round(n * 0.9)]``: NumPy
    1.12 and Python 3 refuse what older NumPy truncated) is wrapped in ``int()``. A bound that
    is a plain name is converted where it is last assigned before the line instead, so that
    its other uses as a bound are fixed too (``size = np.round(...)``, then ``x[:size]`` and
    ``x[size:]`` on two lines). The integer-division rule goes first, for the ``/`` that made
    most such floats."""
    if failure.type != "TypeError" or not failure.file or not failure.line:
        return None
    if "slice indices must be integers" not in failure.message:
        return None
    text = _read(root, failure.file)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    bounds = [
        bound
        for node in ast.walk(tree)
        if isinstance(node, ast.Slice) and getattr(node, "lineno", failure.line) == failure.line
        for bound in (node.lower, node.upper, node.step)
        if bound is not None
        and not isinstance(bound, ast.Constant)
        and bound.lineno == bound.end_lineno == failure.line
        and not _is_int_call(bound)
    ]
    wrap: dict[tuple[int, int], ast.expr] = {}
    for bound in bounds:
        target = (
            _last_assignment(tree, bound, failure.line) if isinstance(bound, ast.Name) else None
        )
        node = target if target is not None else bound
        wrap[(node.lineno, node.col_offset)] = node
    if not wrap:
        return None
    offsets = [0]
    for line in text.encode("utf-8").splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    data = text.encode("utf-8")
    for node in sorted(wrap.values(), key=lambda n: (n.lineno, n.col_offset), reverse=True):
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[(node.end_lineno or node.lineno) - 1] + (node.end_col_offset or 0)
        data = data[:start] + b"int(" + data[start:end] + b")" + data[end:]
    return Fix(
        rule="float-index",
        kind="execution-fix",
        summary=f"a float slice bound in {failure.file}:{failure.line} converted with int()",
        files={failure.file: data.decode("utf-8")},
    )


def _is_int_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) == "int"


def _last_assignment(tree: ast.Module, name: ast.Name, line: int) -> ast.expr | None:
    """The value of the last ``name = value`` before ``line`` in the scope that holds the line
    (the innermost function around it, else the module), unless it is already ``int(...)``."""
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
            and (scope is tree or node.lineno > getattr(scope, "lineno", 0))
        ):
            scope = node
    found: ast.expr | None = None
    for node in _own_statements(scope):
        if (
            isinstance(node, ast.Assign)
            and node.lineno < line
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name.id
            and (found is None or node.lineno > found.lineno)
        ):
            found = node.value
    if found is None or _is_int_call(found) or isinstance(found, ast.Constant):
        return None
    return found


def _own_statements(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a scope, without the bodies of the functions and classes defined in it."""
    nodes: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        nodes.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return nodes


#: (message pattern, [(regex, replacement)], summary) of renamed or removed APIs.
#: The abstract base classes ``collections`` re-exported until Python 3.10.
_ABCS = frozenset(
    (
        "Mapping",
        "MutableMapping",
        "Sequence",
        "MutableSequence",
        "Iterable",
        "Iterator",
        "Callable",
        "Set",
        "MutableSet",
        "Hashable",
        "Sized",
        "Container",
    )
)


def _abc_import(match: re.Match[str]) -> str:
    """``from collections import defaultdict, Iterable`` as two imports: the abstract base
    classes from ``collections.abc``, the rest (``as`` names kept) from ``collections``."""
    indent, names = match.group(1), [n.strip() for n in match.group(2).split(",") if n.strip()]
    abcs = [n for n in names if n.split()[0] in _ABCS]
    rest = [n for n in names if n.split()[0] not in _ABCS]
    if not abcs:
        return match.group(0)
    lines = [f"{indent}from collections import {', '.join(rest)}"] if rest else []
    lines.append(f"{indent}from collections.abc import {', '.join(abcs)}")
    return "\n".join(lines)


#: ``(message, [(regex, replacement)], summary)``: a replacement is a text or a function of
#: the match, as :func:`re.sub` takes.
RENAMED: list[
    tuple[re.Pattern[str], list[tuple[str, str | Callable[[re.Match[str]], str]]], str]
] = [
    (
        re.compile(
            r"cannot import name '(logsumexp|comb|factorial)' from 'scipy\.misc'|"
            r"module 'scipy\.misc' has no attribute '(logsumexp|comb|factorial)'|"
            # scipy 1.10-1.14: the deprecated module's own message
            r"scipy\.misc is deprecated and has no attribute (logsumexp|comb|factorial)\b"
        ),
        [
            (r"from scipy\.misc import", "from scipy.special import"),
            (r"\bscipy\.misc\.(logsumexp|comb|factorial)\b", r"scipy.special.\1"),
            (r"\bmisc\.(logsumexp|comb|factorial)\b", r"special.\1"),
        ],
        "scipy.misc.{name} moved to scipy.special",
    ),
    (
        re.compile(
            r"cannot import name 'imread' from 'scipy\.misc'|"
            r"module 'scipy\.misc' has no attribute 'imread'|"
            r"scipy\.misc is deprecated and has no attribute imread\b"
        ),
        [
            (r"from scipy\.misc import imread", "from matplotlib.pyplot import imread"),
            (r"\bscipy\.misc\.imread\b", "matplotlib.pyplot.imread"),
        ],
        "scipy.misc.imread was removed; matplotlib.pyplot.imread reads the image",
    ),
    (
        re.compile(
            r"No module named 'scipy\.sparse\.linalg\.eigen\.arpack'|"
            r"No module named 'scipy\.sparse\.linalg\.eigen'|"
            r"module 'scipy\.sparse\.linalg' has no attribute 'eigen'"
        ),
        [
            (
                r"from scipy\.sparse\.linalg\.eigen\.arpack import",
                "from scipy.sparse.linalg import",
            ),
            (
                r"import scipy\.sparse\.linalg\.eigen\.arpack as (\w+)",
                r"import scipy.sparse.linalg as \1",
            ),
            (
                r"from scipy\.sparse\.linalg\.eigen import arpack\b",
                "from scipy.sparse import linalg as arpack",
            ),
            (r"\bscipy\.sparse\.linalg\.eigen\.arpack\.", "scipy.sparse.linalg."),
        ],
        "scipy.sparse.linalg.eigen.arpack was removed; its functions are in scipy.sparse.linalg",
    ),
    (
        re.compile(
            r"No module named 'autograd\.scipy\.misc'|"
            r"module 'autograd\.scipy' has no attribute 'misc'"
        ),
        [
            (r"from autograd\.scipy import misc\b", "from autograd.scipy import special as misc"),
            (r"\bautograd\.scipy\.misc\b", "autograd.scipy.special"),
        ],
        "autograd.scipy.misc was removed; logsumexp is in autograd.scipy.special",
    ),
    (
        re.compile(r"module 'numpy' has no attribute '(float|int|bool|object|str|complex|long)'"),
        [(r"\b(?:np|numpy)\.(float|int|bool|object|str|complex)\b", r"\1")],
        "the removed numpy alias np.{name} replaced by the builtin",
    ),
    (
        re.compile(r"No module named 'sklearn\.(cross_validation|grid_search|learning_curve)'"),
        [
            (
                r"\bsklearn\.(cross_validation|grid_search|learning_curve)\b",
                "sklearn.model_selection",
            )
        ],
        "sklearn.{name} moved to sklearn.model_selection",
    ),
    (
        re.compile(
            r"cannot import name 'joblib' from 'sklearn\.externals'|"
            r"No module named 'sklearn\.externals\.joblib'"
        ),
        [
            (r"from sklearn\.externals import joblib", "import joblib"),
            (r"import sklearn\.externals\.joblib as (\w+)", r"import joblib as \1"),
            (r"\bsklearn\.externals\.joblib\b", "joblib"),
        ],
        "sklearn.externals.joblib was removed; joblib is imported directly",
    ),
    (
        re.compile(
            r"cannot import name '(\w+)' from 'collections'|"
            r"module 'collections' has no attribute '(\w+)'"
        ),
        [
            (
                r"\bcollections\.(Mapping|MutableMapping|Sequence|MutableSequence|Iterable|"
                r"Iterator|Callable|Set|MutableSet|Hashable|Sized|Container)\b",
                r"collections.abc.\1",
            ),
            (r"^([ \t]*)from collections import ([\w ,]+?)[ \t]*$", _abc_import),
            (r"^(\s*)import collections\s*$", r"\1import collections\n\1import collections.abc"),
        ],
        "collections.{name} moved to collections.abc",
    ),
    (
        re.compile(r"module 'time' has no attribute 'clock'"),
        [(r"\btime\.clock\(", "time.perf_counter(")],
        "time.clock was removed; time.perf_counter measures the same interval",
    ),
    (
        re.compile(r"object has no attribute 'ix'"),
        [(r"\.ix\[", ".loc[")],
        "pandas .ix was removed; .loc selects by label",
    ),
]


def _renamed(failure: Failure, root: Path, script: str) -> Fix | None:
    if not failure.file:
        return None
    for pattern, replacements, summary in RENAMED:
        match = pattern.search(failure.message)
        if not match:
            continue
        name = next((g for g in match.groups() if g), "")
        files: dict[str, str] = {}
        for rel in dict.fromkeys(f for f, _ in failure.frames) or [failure.file]:
            text = _read(root, rel)
            new = text
            for regex, replacement in replacements:
                new = re.sub(regex, replacement, new, flags=re.MULTILINE)
            if new != text:
                files[rel] = new
        if files:
            return Fix(
                rule="removed-api",
                kind="execution-fix",
                summary=summary.format(name=name),
                files=files,
            )
    return None


def _line_edit(failure: Failure, root: Path, edit: Callable[[str], str]) -> dict[str, str] | None:
    if not failure.file or not failure.line:
        return None
    text = _read(root, failure.file)
    lines = text.splitlines(keepends=True)
    if failure.line > len(lines):
        return None
    before = lines[failure.line - 1]
    after = edit(before)
    if after == before:
        return None
    lines[failure.line - 1] = after
    return {failure.file: "".join(lines)}


def _pandas_append(failure: Failure, root: Path, script: str) -> Fix | None:
    if failure.type != "AttributeError" or "has no attribute 'append'" not in failure.message:
        return None
    if "DataFrame" not in failure.message and "Series" not in failure.message:
        return None

    def edit(line: str) -> str:
        pattern = (
            r"([\w.\[\]'\"]+)\.append\(([^()]*(?:\([^()]*\))*[^()]*?)"
            r"(,\s*ignore_index\s*=\s*True)?\)"
        )

        def concat(match: re.Match[str]) -> str:
            keyword = ", ignore_index=True" if match.group(3) else ""
            return f"pd.concat([{match.group(1)}, {match.group(2)}]{keyword})"

        return re.sub(pattern, concat, line, count=1)

    files = _line_edit(failure, root, edit)
    if not files:
        return None
    text = next(iter(files.values()))
    if not re.search(r"^\s*import pandas as pd\b", text, re.MULTILINE):
        text = "import pandas as pd\n" + text
        files = {failure.file or "": text}
    return Fix(
        rule="pandas-append",
        kind="execution-fix",
        summary="pandas DataFrame.append was removed; pd.concat joins the frames",
        files=files,
    )


def _yaml_load(failure: Failure, root: Path, script: str) -> Fix | None:
    if "missing 1 required positional argument: 'Loader'" not in failure.message:
        return None
    files = _line_edit(
        failure, root, lambda line: re.sub(r"\byaml\.load\(", "yaml.safe_load(", line)
    )
    if not files:
        return None
    return Fix(
        rule="yaml-load",
        kind="execution-fix",
        summary="yaml.load without a Loader replaced by yaml.safe_load",
        files=files,
    )


#: A pickle load call (``pickle.load(``, ``cPickle.load(``, ``pkl.load(``).
_PICKLE_LOAD = re.compile(r"\b(?:c?[Pp]ickle|pkl)\.load\(")
#: What Python 3 raises reading a pickle Python 2 wrote: from a file opened as text, or the
#: byte strings of its objects decoded as ASCII.
_PICKLE_ERRORS = re.compile(r"codec can't decode byte|a bytes-like object is required, not 'str'")


def _closing(text: str, start: int) -> int | None:
    """The index of the parenthesis that closes the one before ``start``, strings skipped."""
    depth, quote, index = 1, "", start
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _arguments(args: str) -> list[str]:
    """A call's arguments, split at its own commas (not those inside brackets or strings:
    ``"data/{}.{}".format(a, b)`` is one)."""
    parts: list[str] = []
    depth, quote, start, index = 0, "", 0, 0
    while index < len(args):
        char = args[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(args[start:index])
            start = index + 1
        index += 1
    parts.append(args[start:])
    return parts


def _binary_open(args: str, write: bool = False) -> str | None:
    """``open``'s arguments in binary mode: for reading, a missing mode added as ``"rb"`` and
    ``"r"`` made ``"rb"``; for writing, ``"w"``, ``"a"``, ``"x"`` (and their ``+``) given their
    ``b``. None when they already are binary or are not understood."""
    parts = [part.strip() for part in _arguments(args)]
    if not write and len(parts) == 1 and parts[0] and "=" not in parts[0]:
        return f'{args}, "rb"'
    modes = r"[wax]\+?" if write else "r"
    mode = (
        re.fullmatch(rf"""(?:mode\s*=\s*)?(['"])(?:{modes})\1""", parts[1])
        if len(parts) == 2
        else None
    )
    if mode is None:
        return None
    return f"{parts[0]}, {parts[1][:-1]}b{parts[1][-1]}"


def _binary_handle(lines: list[str], number: int, handle: str, write: bool) -> bool:
    """Open in binary mode the file ``handle`` names, where the 30 lines above line index
    ``number`` open it (``with open(...) as handle:`` or ``handle = open(...)``); whether
    one was changed (in ``lines``)."""
    name = re.escape(handle)
    opened = re.compile(
        rf"(?:with\s+open\((?P<a>.*)\)\s+as\s+{name}\s*:|\b{name}\s*=\s*open\((?P<b>.*)\))"
    )
    for index in range(number - 1, max(number - 30, -1), -1):
        match = opened.search(lines[index])
        if match is None:
            continue
        group = "a" if match.group("a") is not None else "b"
        inside = match.group(group)
        close = _closing(inside + ")", 0) if inside else None
        binary = _binary_open(inside, write) if close == len(inside) else None
        if binary is None:
            return False
        start, stop = match.span(group)
        lines[index] = lines[index][:start] + binary + lines[index][stop:]
        return True
    return False


def _failing_lines(failure: Failure, root: Path) -> tuple[str, list[str], int] | None:
    """The failing file, its lines (ends kept) and the failing line's index, or None when
    the failure names no line of a readable file."""
    if not failure.file or not failure.line:
        return None
    try:
        lines = _read(root, failure.file).splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return None
    return (failure.file, lines, failure.line - 1) if failure.line <= len(lines) else None


def _python2_pickle(failure: Failure, root: Path, script: str) -> Fix | None:
    """A pickle Python 2 wrote, read by Python 3 (Planetoid's ``pickle.load(open(path))``):
    the file opened as text fails to decode (``'utf-8' codec can't decode byte 0x80``) or
    gives ``str`` where pickle wants bytes, and Python 2's byte strings (NumPy arrays) fail
    as ASCII. On the failing line's load call: the ``open`` it reads (on that line, or the
    ``with open(...) as f`` / ``f = open(...)`` above it that the call reads) opens in binary
    mode, and the call decodes as ``encoding="latin1"``, pickle's documented way to read
    Python 2's pickles of NumPy arrays."""
    if failure.type not in {"UnicodeDecodeError", "TypeError"}:
        return None
    read = _failing_lines(failure, root) if _PICKLE_ERRORS.search(failure.message) else None
    if read is None:
        return None
    file, lines, number = read
    line = lines[number]
    found = _PICKLE_LOAD.search(line)
    end = _closing(line, found.end()) if found else None
    if found is None or end is None:
        return None
    args = line[found.end() : end]
    changed = False
    inner = re.match(r"\s*open\(", args)
    if inner is not None:
        close = _closing(args, inner.end())
        binary = _binary_open(args[inner.end() : close]) if close is not None else None
        if binary is not None and close is not None:
            args = f"{args[: inner.end()]}{binary}{args[close:]}"
            changed = True
    elif re.fullmatch(r"\s*\w+\s*", args):
        changed = _binary_handle(lines, number, args.strip(), write=False)
    if "encoding" not in args:
        args = f'{args}, encoding="latin1"'
        changed = True
    if not changed:
        return None
    lines[number] = f"{line[: found.end()]}{args}{line[end:]}"
    return Fix(
        rule="python2-pickle",
        kind="execution-fix",
        summary=f"the Python 2 pickle read at {file}:{failure.line} opened in binary "
        'mode and decoded with encoding="latin1"',
        files={file: "".join(lines)},
    )


#: A pickle written on the failing line: ``pickle.dump(obj, f)``, or ``f.write(pickle.dumps(obj))``.
_PICKLE_DUMP = re.compile(r"\b(?:c?[Pp]ickle|pkl)\.dump\(")
_PICKLE_WRITE = re.compile(r"\b(?P<handle>\w+)\.write\((?=.*\b(?:c?[Pp]ickle|pkl)\.dumps\()")
#: What Python 3's text file raises when given bytes.
_BYTES_TO_TEXT = re.compile(r"write\(\) argument must be str, not bytes")


def _python2_pickle_write(failure: Failure, root: Path, script: str) -> Fix | None:
    """A pickle written to a file opened as text, which Python 2 allowed (Planetoid's
    ``cPickle.dump(params, fout)`` after ``fout = open(path, 'w')``) and Python 3's text file
    refuses (``write() argument must be str, not bytes``). The file that the failing line's
    ``pickle.dump`` (or ``f.write(pickle.dumps(...))``) writes to, opened on that line or by
    ``with open(...) as f`` / ``f = open(...)`` above it, opens in binary mode (``"w"`` to
    ``"wb"``). Reading it back as text then fails in its turn, which ``python2-pickle``
    fixes."""
    if failure.type != "TypeError" or not _BYTES_TO_TEXT.search(failure.message):
        return None
    read = _failing_lines(failure, root)
    if read is None:
        return None
    file, lines, number = read
    line = lines[number]
    handle = None
    found = _PICKLE_DUMP.search(line)
    if found is not None:
        end = _closing(line, found.end())
        parts = _arguments(line[found.end() : end]) if end is not None else []
        if len(parts) < 2:
            return None
        target = re.match(r"\s*(?:file\s*=\s*)?(?:(?P<open>open\()|(?P<name>\w+)\s*$)", parts[1])
        if target is None:
            return None
        if target.group("open"):
            inner = found.end() + len(parts[0]) + 1 + target.end()
            close = _closing(line, inner)
            binary = _binary_open(line[inner:close], write=True) if close is not None else None
            if binary is None:
                return None
            lines[number] = f"{line[:inner]}{binary}{line[close:]}"
        else:
            handle = target.group("name")
    else:
        written = _PICKLE_WRITE.search(line)
        if written is None:
            return None
        handle = written.group("handle")
    if handle is not None and not _binary_handle(lines, number, handle, write=True):
        return None
    return Fix(
        rule="python2-pickle-write",
        kind="execution-fix",
        summary=f"the file the pickle at {file}:{failure.line} is written to opened in binary mode",
        files={file: "".join(lines)},
    )


#: ``self.hparams = x`` assigned whole: read-only since PyTorch Lightning 1.3.
_HPARAMS_SET = re.compile(r"^(\s*)self\.hparams\s*=\s*(?![=])(.+?)\s*(#.*)?$")
_NO_SETTER = re.compile(r"^can't set attribute(?: 'hparams')?$|^property 'hparams' of .* no setter")


def _lightning_hparams(failure: Failure, root: Path, script: str) -> Fix | None:
    """``self.hparams = hparams`` in a LightningModule, which PyTorch Lightning 1.3 made
    read-only (``AttributeError: can't set attribute``, or Python 3.11's ``property 'hparams'
    ... has no setter``) -> ``self.save_hyperparameters(hparams)``, Lightning's own
    replacement: ``self.hparams`` then holds the same values."""
    if failure.type != "AttributeError" or not _NO_SETTER.match(failure.message):
        return None

    def edit(line: str) -> str:
        match = _HPARAMS_SET.match(line.rstrip("\r\n"))
        if match is None or match.group(2).endswith(("\\", "(", "[", "{", ",")):
            return line  # not one whole assignment on this line
        end = line[len(line.rstrip("\r\n")) :]
        comment = f"  {match.group(3)}" if match.group(3) else ""
        return f"{match.group(1)}self.save_hyperparameters({match.group(2)}){comment}{end}"

    files = _line_edit(failure, root, edit)
    if not files:
        return None
    return Fix(
        rule="lightning-hparams",
        kind="execution-fix",
        summary=f"self.hparams assigned in {failure.file}:{failure.line} (read-only since "
        "PyTorch Lightning 1.3) saved with self.save_hyperparameters instead",
        files=files,
    )


def _gui_backend(failure: Failure, root: Path, script: str) -> Fix | None:
    markers = ("Cannot load backend", "no display name", "tkinter")
    if not any(marker in failure.message for marker in markers):
        return None
    files: dict[str, str] = {}
    for rel in dict.fromkeys(f for f, _ in failure.frames):
        text = _read(root, rel)
        new = re.sub(
            r"""\b(matplotlib|mpl)\.use\(\s*['"](?!agg['"])\w+['"]""",
            r'\1.use("Agg"',
            text,
            flags=re.IGNORECASE,
        )
        if new != text:
            files[rel] = new
    if not files:
        return None
    return Fix(
        rule="gui-backend",
        kind="execution-fix",
        summary="an interactive matplotlib backend replaced by the non-interactive 'Agg'",
        files=files,
    )


_CUDA_MESSAGES = (
    "no CUDA-capable device",
    "Torch not compiled with CUDA",
    "Found no NVIDIA driver",
    "CUDA driver",
    "CUDA error",
    "cuda runtime error",
    "Attempting to deserialize object on a CUDA device",
)
_CUDA_LITERAL = re.compile(r"""(?<![\w.]startswith\()(?P<q>['"])cuda(?::\d+)?(?P=q)""")
#: A device index built at run time: ``"cuda:" + str(args.dev)``, ``f"cuda:{args.gpu}"``.
_CUDA_INDEXED = re.compile(
    r"""(?P<q>['"])cuda:(?P=q)\s*\+\s*str\((?:[^()\n]|\([^()\n]*\))*\)"""
    r"""|\bf(?P<f>['"])cuda:\{[^{}'"\n]*\}(?P=f)"""
)


#: ``.cuda()``, ``.cuda(device)``, ``.cuda(args.gpu)``: a move to a GPU (one level of nesting).
_CUDA_MOVE = re.compile(r"\.cuda\((?:[^()\n]|\([^()\n]*\))*\)")
#: ``torch.cuda.FloatTensor`` and its kin: a GPU tensor type named directly.
_CUDA_TENSOR_TYPE = re.compile(
    r"\btorch\.cuda\.(?=(?:Float|Double|Half|BFloat16|Long|Int|Short|Char|Byte|Bool)Tensor\b)"
)
#: A line that only selects the GPU to use: ``torch.cuda.set_device(args.cuda_device)``.
_CUDA_SELECT = re.compile(
    r"^(?P<indent>[ \t]*)torch\.cuda\.set_device\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*(?:#.*)?$",
    re.MULTILINE,
)


def _cuda_device(failure: Failure, root: Path, script: str) -> Fix | None:
    if not any(m.lower() in failure.message.lower() for m in _CUDA_MESSAGES):
        return None
    files: dict[str, str] = {}
    for rel in dict.fromkeys(f for f, _ in failure.frames):
        text = _read(root, rel)
        new = _CUDA_INDEXED.sub('"cpu"', text)
        new = _CUDA_LITERAL.sub(lambda m: f"{m.group('q')}cpu{m.group('q')}", new)
        new = _CUDA_MOVE.sub(".cpu()", new)
        new = _CUDA_TENSOR_TYPE.sub("torch.", new)
        new = _CUDA_SELECT.sub(r"\g<indent>pass  # no GPU to select on a CPU run", new)
        if new != text:
            files[rel] = new
    if not files:
        return None
    return Fix(
        rule="cuda-device",
        kind="execution-fix",
        summary="hard-coded CUDA devices replaced by the CPU",
        files=files,
    )


def _working_directory(failure: Failure, root: Path, script: str) -> Fix | None:
    if failure.type != "FileNotFoundError":
        return None
    match = re.search(r"No such file or directory: '([^']+)'", failure.message)
    if not match or match.group(1).startswith("/"):
        return None
    missing = match.group(1)
    folder = PurePosixPath(script).parent
    candidates = [folder, *folder.parents]
    for directory in candidates:
        if (root / directory / missing).exists():
            return Fix(
                rule="working-directory",
                kind="convenience",
                summary=f"run from {directory.as_posix() or '.'}, where {missing!r} resolves",
                workdir=directory.as_posix() or ".",
            )
    return None


def _package_folder(root: Path, rel: str) -> str | None:
    """The folder on ``sys.path`` that holds the top package of the module file ``rel``."""
    folder = PurePosixPath(rel).parent
    if not (root / folder / "__init__.py").is_file():
        return None
    while str(folder) != "." and (root / folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder.parent.as_posix()


def _own_metadata(failure: Failure, root: Path, script: str) -> Fix | BuildFinding | None:
    missing = missing_distribution(failure.type, failure.message)
    if missing is None:
        return None
    distribution, problems = own_distribution(root)
    if distribution is None:
        return problems[0] if problems else None
    if canonicalize_name(missing) != canonicalize_name(distribution.name):
        return None
    folders = [_package_folder(root, rel) for rel, _ in reversed(failure.frames)]
    folders += [
        base
        for base in (".", "src")
        if (root / base / distribution.import_name / "__init__.py").is_file()
    ]
    folder = next((f for f in folders if f is not None), None)
    if folder is None:
        return None
    problem = place_problem(root, folder, distribution)
    if problem is not None:
        return problem
    where = "the repository root" if folder == "." else f"{folder}/"
    return Fix(
        rule="own-distribution-metadata",
        kind="convenience",
        summary=(
            f"{distribution.folder_name} at {where} makes {distribution.name} "
            f"{distribution.version} discoverable without installing it (name from "
            f"{distribution.source}, version from {distribution.version_source})"
        ),
        files=dist_info_files(folder, distribution),
        notes=tuple(problems),
    )


_NAME_ERROR = re.compile(r"^name '([A-Za-z_]\w*)' is not defined")
#: Files read to find where a name is defined: a repository's own modules, capped in number.
_MAX_MODULES = 2000


def _top_names(tree: ast.Module, *, imports: bool = True) -> set[str]:
    """The names a module defines at its top level, and with ``imports`` those it imports
    there too (what ``from it import`` takes)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif imports and isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
    return names


def _module_name(rel: str) -> str | None:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod`` (``__init__`` names its package); None for a path
    that is no importable dotted name."""
    parts = PurePosixPath(rel).with_suffix("").parts
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _missing_import(failure: Failure, root: Path, script: str) -> Fix | None:
    if failure.type != "NameError" or not failure.file:
        return None
    match = _NAME_ERROR.match(failure.message)
    if match is None:
        return None
    name = match.group(1)
    text = _read(root, failure.file)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    if name in _top_names(tree):
        return None  # defined or imported here: the NameError is about order or scope
    imported: set[str] = set()
    last = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.add(node.module.split(".")[0])
            last = node.end_lineno or node.lineno
        elif isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
            last = node.end_lineno or node.lineno
    definers: list[str] = []
    exporters: list[str] = []  # packages that import the name in their __init__
    for count, rel in enumerate(_python_files(root)):
        if count >= _MAX_MODULES:
            break
        module = _module_name(rel)
        if module is None or module.split(".")[0] not in imported or rel == failure.file:
            continue
        try:
            tree_of = ast.parse(_read(root, rel))
        except (SyntaxError, ValueError, OSError, UnicodeDecodeError):
            continue
        if name in _top_names(tree_of, imports=False):
            definers.append(module)
        elif rel.endswith("/__init__.py") and name in _top_names(tree_of):
            exporters.append(module)
    if len(definers) != 1:
        return None  # defined nowhere near, or in two modules: which one is meant is a guess
    [definer] = definers
    # a package above the definer that re-exports the name is how its users import it
    above = [p for p in exporters if definer.startswith(f"{p}.")]
    source = min(above, key=lambda p: p.count(".")) if above else definer
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    lines.insert(last, f"from {source} import {name}\n")
    return Fix(
        rule="missing-import",
        kind="execution-fix",
        summary=f"{failure.file} uses {name} without importing it; {definer} defines it",
        files={failure.file: "".join(lines)},
    )


def _python_files(root: Path) -> list[str]:
    """The repository's Python files (POSIX, sorted), no links and no hidden folders."""
    return [rel for rel in repository_files(root) if rel.endswith(".py")]


#: ``rule(failure, root, script)``: a fix, the finding that says why the failure it
#: recognises cannot be fixed safely, or None (not recognised).
Rule = Callable[[Failure, Path, str], "Fix | BuildFinding | None"]
#: The rules in the order they are tried.
RULES: list[tuple[str, Rule]] = [
    ("python2", _python2),
    ("python2-lists", _python2_lists),
    ("python2-names", _python2_names),
    ("python2-modules", _python2_modules),
    ("python2-pickle", _python2_pickle),
    ("python2-pickle-write", _python2_pickle_write),
    ("implicit-relative-import", _implicit_relative),
    ("repository-url", _repository_url),
    ("integer-division", _division),
    ("float-index", _float_index),
    ("removed-api", _renamed),
    ("self-import", _self_import),
    ("pandas-append", _pandas_append),
    ("yaml-load", _yaml_load),
    ("lightning-hparams", _lightning_hparams),
    ("gui-backend", _gui_backend),
    ("cuda-device", _cuda_device),
    ("working-directory", _working_directory),
    ("missing-import", _missing_import),
    ("own-distribution-metadata", _own_metadata),
]


def propose(
    failure: Failure, root: Path, script: str, refused: list[BuildFinding] | None = None
) -> Fix | None:
    """The first rule's fix for ``failure`` in the repository at ``root``, or None.

    A rule that recognises the failure but refuses to fix it adds its finding to ``refused``
    (once) and the next rule is tried.
    """
    for _name, rule in RULES:
        try:
            fix = rule(failure, root, script)
        except (OSError, UnicodeDecodeError):
            continue
        if isinstance(fix, BuildFinding):
            if refused is not None and fix not in refused:
                refused.append(fix)
        elif fix is not None:
            return fix
    return None
