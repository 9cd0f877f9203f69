"""The import closure of an entry point: the modules a launcher's script actually reaches.

Read from the syntax trees only (nothing is imported or run). Rules:

* **Start.** The script of the launcher; with ``python -m`` its module file; for a
  notebook (``.ipynb``) its code cells (:mod:`reprobridge_sdk.agent.notebooks`), every cell's
  imports counted and no saved output read. ``sys.path[0]``
  is the script's folder (``python x.py``) or the working directory (``python -m``).
* **Local modules.** An absolute import resolves against, in order: ``sys.path[0]``, the
  folders the reached files put on ``sys.path`` (``sys.path.insert``/``append`` of a literal
  path, ``os.path.dirname(__file__)``, ``os.path.join``/``abspath``/``realpath``/
  ``dirname`` of those, ``Path(__file__).parent``, ``..``), then the repository root and
  ``src/``. A module found only through the last two is *rooted*: the launcher must put that
  folder on ``PYTHONPATH`` (see :attr:`Closure.rooted`). ``import a.b.c`` reaches
  ``a/__init__.py``, ``a/b/__init__.py`` and ``a/b/c.py`` (or its package); ``from a import
  b`` also reaches ``a/b.py`` when it exists. Relative imports resolve from the file's
  package. An import that resolves nowhere else, made by a module of a package whose
  folder holds that name, is Python 2's implicit relative import of the sibling: local.
  A reached file that starts another repository script as a command (a string holding
  ``python train.py``, as ``os.system`` or a one-string ``subprocess`` call passes it) reaches
  that script as an entry point, its folder searched as its ``sys.path[0]``.
  Every reached file is followed in turn; files no reached module imports (side
  scripts, ``setup.py``) are never read for requirements.
* **Third party.** A top-level name that is neither local nor in the standard library
  (Python 3's ``sys.stdlib_module_names`` plus Python 2's renamed modules).
* **Optional.** An import is optional when it sits under a ``try`` whose handlers catch
  ``ImportError``, ``ModuleNotFoundError``, ``Exception`` or everything; inside a function
  (it runs only if the function is called); or behind an ``if __name__ == "__main__"``
  guard of a module other than the entry script (never run on import). The entry script's
  own guard runs, so its imports are required. Whatever an optional import reaches is
  optional too. A module that is required anywhere is required.
* **Python 2 files** (no syntax tree): import lines are read as text; all are required. A
  ``sys.path`` addition on a line that parses on its own is followed as in a Python 3 file.
* **Limits.** Only files inside the repository are read (a link out of it is not a module);
  files above 2 MiB are read as empty; a file that does not parse is read as Python 2 text.
"""

from __future__ import annotations

import ast
import posixpath
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.agent.distributions import INDEX_PACKAGES
from reprobridge_sdk.agent.notebooks import code_text

__all__ = ["PY2_STDLIB", "Closure", "Reached", "closure"]

#: Python 2 standard-library modules renamed or removed in Python 3 (never requirements).
PY2_STDLIB = frozenset(
    {
        "__builtin__",
        "ConfigParser",
        "Queue",
        "SocketServer",
        "StringIO",
        "Tkinter",
        "cPickle",
        "cStringIO",
        "commands",
        "cookielib",
        "copy_reg",
        "dummy_thread",
        "htmlentitydefs",
        "httplib",
        "HTMLParser",
        "md5",
        "sets",
        "sha",
        "thread",
        "urllib2",
        "urlparse",
        "xmlrpclib",
    }
)
_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"} | PY2_STDLIB
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([\w., ]+))")
_CATCHES = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
_MAX_FILE = 2 * 1024 * 1024


@dataclass(frozen=True)
class Reached:
    """A third-party module the entry point reaches."""

    module: str
    files: tuple[str, ...]
    #: Why it is optional (None: required).
    optional: str | None = None


@dataclass
class Closure:
    """What an entry point reaches."""

    script: str
    #: Repository files reached, in the order they were found (the script first).
    files: list[str] = field(default_factory=list)
    third_party: dict[str, Reached] = field(default_factory=dict)
    #: Folders (``.`` or ``src``) that must be on ``PYTHONPATH`` for a reached local module.
    rooted: list[str] = field(default_factory=list)
    #: Local modules reached only through ``rooted`` folders.
    rooted_modules: list[str] = field(default_factory=list)
    #: Names under which the code imports the repository itself (``from repo_name.models
    #: import x``, where ``models/`` is at the root): the checkout's folder name, not a
    #: distribution (see :func:`reprobridge_sdk.agent.fixes` ``self-import``).
    self_named: list[str] = field(default_factory=list)
    #: By reached file, the names its imports bind to the repository's own modules: a name
    #: to the module file and, for ``from m import name`` of what ``m`` defines, that name
    #: (None: the name is the module itself). Files read as Python 2 text bind none.
    bound: dict[str, dict[str, tuple[str, str | None]]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Import:
    names: tuple[str, ...]  # dotted candidates, most specific last
    level: int
    optional: str | None
    #: Repository scripts started as commands (see :func:`_launched_scripts`), not a module.
    launched: tuple[str, ...] = ()
    #: The names it binds: (name, dotted name from its level), ``import a.b`` binding ``a``.
    binds: tuple[tuple[str, str], ...] = ()


def _catches_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        kind = handler.type
        if kind is None:
            return True
        kinds = kind.elts if isinstance(kind, ast.Tuple) else [kind]
        if any(isinstance(k, ast.Name) and k.id in _CATCHES for k in kinds):
            return True
    return False


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    if not (isinstance(test, ast.Compare) and len(test.comparators) == 1):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return bool(names and consts)


def _imports(tree: ast.Module, *, entry: bool) -> Iterator[_Import]:
    """Every import of ``tree`` with why it is optional (None: required)."""

    def visit(nodes: list[ast.stmt], why: str | None) -> Iterator[_Import]:
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    bind = (alias.asname, alias.name) if alias.asname else (parts[0], parts[0])
                    yield _Import(
                        tuple(".".join(parts[: i + 1]) for i in range(len(parts))),
                        0,
                        why,
                        binds=(bind,),
                    )
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                parts = base.split(".") if base else []
                names = [".".join(parts[: i + 1]) for i in range(len(parts))]
                subs = [f"{base}.{a.name}" if base else a.name for a in node.names if a.name != "*"]
                binds = tuple(
                    (a.asname or a.name, f"{base}.{a.name}" if base else a.name)
                    for a in node.names
                    if a.name != "*"
                )
                yield _Import((*names, *subs), node.level, why, binds=binds)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(node.body, why or f"in function {node.name}()")
            elif isinstance(node, ast.Try):
                inner = why or (
                    "under try/except ImportError" if _catches_import_error(node) else None
                )
                yield from visit(node.body, inner)
                for handler in node.handlers:
                    yield from visit(handler.body, why)
                yield from visit(node.orelse, why)
                yield from visit(node.finalbody, why)
            elif isinstance(node, ast.If) and _is_main_guard(node) and not entry:
                yield from visit(node.body, why or "behind another module's __main__ guard")
                yield from visit(node.orelse, why)
            else:
                for child_field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    children = getattr(node, child_field, None)
                    if isinstance(children, list):
                        stmts: list[ast.stmt] = []
                        for child in children:
                            if isinstance(child, ast.stmt):
                                stmts.append(child)
                            elif hasattr(child, "body"):  # except handlers, match cases
                                stmts.extend(child.body)
                        yield from visit(stmts, why)

    yield from visit(tree.body, None)


def _text_imports(text: str) -> Iterator[_Import]:
    for line in text.splitlines():
        match = _IMPORT_LINE.match(line)
        if match and match.group(1):
            parts = match.group(1).split(".")
            yield _Import(tuple(".".join(parts[: i + 1]) for i in range(len(parts))), 0, None)
        elif match and match.group(2):
            for part in match.group(2).split(","):
                token = part.strip().split(" ")[0]
                if token:
                    parts = token.split(".")
                    yield _Import(
                        tuple(".".join(parts[: i + 1]) for i in range(len(parts))), 0, None
                    )


class _PathEval:
    """Evaluate a ``sys.path`` entry to a folder of the repository (or None)."""

    def __init__(self, file: str, workdir: str) -> None:
        self.folder = posixpath.dirname(file) or "."
        self.workdir = workdir

    def __call__(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.startswith("/"):
                return None
            return posixpath.normpath(posixpath.join(self.workdir, node.value or "."))
        if isinstance(node, ast.Name) and node.id == "__file__":
            return posixpath.join(self.folder, "__file__")
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            args = [self(a) for a in node.args]
            if name in {"os.path.dirname", "dirname"} and args and args[0]:
                return posixpath.dirname(args[0]) or "."
            if name in {"os.path.abspath", "os.path.realpath", "abspath", "realpath", "str"}:
                return args[0] if args else None
            if name in {"Path", "pathlib.Path"}:
                return args[0] if args else None
            if name in {"os.path.join", "join"} and args and all(args):
                return posixpath.normpath(posixpath.join(*[a for a in args if a]))
            if isinstance(node.func, ast.Attribute) and node.func.attr in {"resolve", "absolute"}:
                return self(node.func.value)
            return None
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            inner = self(node.value)
            return (posixpath.dirname(inner) or ".") if inner else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self(node.left), self(node.right)
            if left and right:
                return posixpath.normpath(
                    posixpath.join(left, posixpath.relpath(right, self.workdir))
                )
        return None


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _path_insertions(tree: ast.Module, file: str, workdir: str) -> list[str]:
    found: list[str] = []
    evaluate = _PathEval(file, workdir)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if _dotted(node.func) not in {"sys.path.insert", "sys.path.append"}:
            continue
        arg = node.args[-1] if node.args else None
        folder = evaluate(arg) if arg is not None else None
        if folder is not None and not folder.startswith(".."):
            found.append(folder)
    return found


def _text_path_insertions(text: str, file: str, workdir: str) -> list[str]:
    """The ``sys.path`` additions of a file that does not parse (Python 2): each line that
    names ``sys.path.`` and parses on its own (``sys.path.append('lib/')``) is read as
    :func:`_path_insertions` reads a whole file."""
    found: list[str] = []
    for line in text.splitlines():
        if "sys.path." not in line:
            continue
        try:
            tree = ast.parse(line.strip())
        except SyntaxError:
            continue
        found += _path_insertions(tree, file, workdir)
    return found


class _Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.real = root.resolve()
        self.parsed: dict[str, tuple[ast.Module | None, str]] = {}

    def _inside(self, rel: str) -> Path | None:
        """The path of ``rel`` when it stays in the repository (a link out is not)."""
        if rel.startswith(("..", "/")):
            return None
        path = self.root / rel
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return None
        return path if real.is_relative_to(self.real) else None

    def linked(self, base: str) -> bool:
        """True when ``base`` (a package) or ``base.py`` is a link in the repository."""
        if base.startswith(("..", "/")):
            return False
        return any((self.root / rel).is_symlink() for rel in (base, f"{base}.py"))

    def is_file(self, rel: str) -> bool:
        path = self._inside(rel)
        return path is not None and path.is_file()

    def is_dir(self, rel: str) -> bool:
        path = self._inside(rel)
        return path is not None and path.is_dir()

    def read(self, rel: str) -> tuple[ast.Module | None, str]:
        if rel not in self.parsed:
            path = self.root / rel
            text = ""
            if rel.endswith(".ipynb"):
                text = code_text(self.root, rel)  # its code cells; never its saved outputs
            elif path.stat().st_size <= _MAX_FILE:
                text = path.read_bytes().decode("utf-8", "replace")
            try:
                tree: ast.Module | None = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError):
                tree = None
            self.parsed[rel] = (tree, text)
        return self.parsed[rel]

    def module_files(self, folder: str, dotted: str) -> list[str] | None:
        """The files ``import dotted`` runs from ``folder`` (packages' __init__ first)."""
        parts = dotted.split(".")
        files: list[str] = []
        current = folder
        for index, part in enumerate(parts):
            base = posixpath.normpath(posixpath.join(current, part))
            last = index == len(parts) - 1
            if self.is_file(f"{base}/__init__.py"):
                files.append(f"{base}/__init__.py")
            elif self.is_dir(base) and not last:
                pass  # a namespace package
            elif last and self.is_file(f"{base}.py"):
                files.append(f"{base}.py")
            elif self.linked(base):
                return files  # the repository's module, behind a link out: never read
            else:
                return None
            current = base
        return files


def closure(root: Path, script: str, *, workdir: str = ".", module: bool = False) -> Closure:
    """The modules ``script`` (a repository path) reaches when run from ``workdir``."""
    repo = _Repo(root)
    result = Closure(script=script)
    first = posixpath.normpath(workdir) if module else (posixpath.dirname(script) or ".")
    search = [first]
    fallbacks = [f for f in (".", "src") if f not in search and repo.is_dir(f)]
    optional_of: dict[str, str | None] = {script: None}
    queue = [script]
    seen: set[str] = set()
    entries: set[str] = set()
    third: dict[str, list[str]] = {}
    third_why: dict[str, str | None] = {}
    while queue:
        file = queue.pop(0)
        if file in seen or not repo.is_file(file):
            continue
        seen.add(file)
        result.files.append(file)
        why_file = optional_of.get(file)
        tree, text = repo.read(file)
        if tree is not None:
            for folder in _path_insertions(tree, file, workdir):
                if folder not in search:
                    search.append(folder)
            found = list(_imports(tree, entry=file == script or file in entries))
        else:
            for folder in _text_path_insertions(text, file, workdir):
                if folder not in search:
                    search.append(folder)
            found = list(_text_imports(text))
        launched = _launched_scripts(repo, text, file, workdir)
        entries.update(launched)  # each runs as __main__: its own guard's imports run
        for folder in [posixpath.dirname(f) or "." for f in launched]:
            if folder not in search:
                search.append(folder)
        found += [_Import((), 0, None, launched=tuple(launched))] if launched else []
        for item in found:
            why = why_file or item.optional
            targets = list(item.launched) or _resolve(
                repo, file, item, search=search, fallbacks=fallbacks, result=result
            )
            for name, dotted in item.binds if targets else ():
                where = _Where(repo, file, item.level, search, fallbacks, result)
                binding = _bound(where, dotted)
                if binding is not None:
                    result.bound.setdefault(file, {})[name] = binding
            if targets is None:
                top = item.names[0].split(".")[0] if item.names else ""
                if item.level or not top or top in _STDLIB or not top.isidentifier():
                    continue
                third.setdefault(top, []).append(file)
                if why is None:
                    third_why[top] = None  # required anywhere: required
                elif top not in third_why:
                    third_why[top] = why
                continue
            for target in targets:
                before = optional_of.get(target, "unseen")
                if before == "unseen" or (before is not None and why is None):
                    optional_of[target] = why
                    if target in seen and why is None and before is not None:
                        seen.discard(target)  # now required: follow it again as required
                        result.files.remove(target)
                    queue.append(target)
    result.third_party = {
        name: Reached(name, tuple(dict.fromkeys(files)), third_why.get(name))
        for name, files in sorted(third.items())
        if name not in result.self_named
    }
    return result


_LAUNCHED = re.compile(r"\bpython(?:[23](?:\.\d+)?)?\s+(?:-[uOB]+\s+)*([\w./-]+\.py)\b")


def _launched_scripts(repo: _Repo, text: str, file: str, workdir: str) -> list[str]:
    """Repository scripts that ``file`` starts as commands (``os.system("python3 train.py")``,
    a ``subprocess`` argv written as one string): each is an entry point of the launcher too.
    A name is looked up beside ``file``, in the working directory, then at the root."""
    found: list[str] = []
    for match in _LAUNCHED.finditer(text):
        name = match.group(1)
        for base in (posixpath.dirname(file) or ".", workdir, "."):
            rel = posixpath.normpath(posixpath.join(base, name))
            if not rel.startswith("..") and repo.is_file(rel) and rel not in found:
                found.append(rel)
                break
    return found


def _resolve(
    repo: _Repo,
    file: str,
    item: _Import,
    *,
    search: list[str],
    fallbacks: list[str],
    result: Closure,
) -> list[str] | None:
    """The repository files ``item`` runs, or None when it is not a local module."""
    if item.level:
        package = posixpath.dirname(file) or "."
        for _ in range(item.level - 1):
            package = posixpath.dirname(package) or "."
        files: list[str] = []
        init = posixpath.join(package, "__init__.py")
        if repo.is_file(init):
            files.append(init)
        for name in item.names:
            found = repo.module_files(package, name)
            if found:
                files.extend(found)
        return files
    if not item.names:
        return None
    top = item.names[0].split(".")[0]
    for folder in [*search, *fallbacks]:
        resolved = [repo.module_files(folder, name) for name in item.names]
        if all(found is None for found in resolved):
            continue
        files = [f for found in resolved if found for f in found]
        if folder in fallbacks and folder not in search:
            if folder not in result.rooted:
                result.rooted.append(folder)
            if top not in result.rooted_modules:
                result.rooted_modules.append(top)
        return files
    package = posixpath.dirname(file) or "."
    if package != "." and repo.is_file(posixpath.join(package, "__init__.py")):
        # Python 2's implicit relative import: a module of a package names its sibling
        sibling = [repo.module_files(package, name) for name in item.names]
        if sibling[0] is not None:
            return [f for found in sibling if found for f in found]
    return _self_import(repo, item, result, file)


@dataclass(frozen=True)
class _Where:
    """Where an import of ``file`` at ``level`` is resolved from (:func:`_resolve`'s inputs)."""

    repo: _Repo
    file: str
    level: int
    search: list[str]
    fallbacks: list[str]
    result: Closure


def _bound(where: _Where, dotted: str) -> tuple[str, str | None] | None:
    """What a name an import binds to ``dotted`` is in the repository: the module file and
    None (``dotted`` is a module), or the file of the module that defines it and its name
    (``from m import name``); None when it is no module of the repository."""
    module = _module_file(where, dotted)
    if module is not None:
        return module, None
    parent, _, name = dotted.rpartition(".")
    if not parent and not where.level:
        return None
    owner = _module_file(where, parent)
    return (owner, name) if owner is not None else None


def _module_file(where: _Where, dotted: str) -> str | None:
    """The file of the repository's module ``dotted`` (its ``__init__.py`` for a package;
    ``""`` at a level: the importing file's package), or None."""
    item = _Import((dotted,) if dotted else (), where.level, None)
    files = _resolve(
        where.repo,
        where.file,
        item,
        search=where.search,
        fallbacks=where.fallbacks,
        result=where.result,
    )
    if not files:
        return None
    last = files[-1]
    stem = posixpath.splitext(last)[0]
    tail = dotted.replace(".", "/")
    ends = {tail, f"{tail}/__init__"} if tail else {"__init__"}
    return last if any(stem == end or stem.endswith(f"/{end}") for end in ends) else None


def _self_import(repo: _Repo, item: _Import, result: Closure, file: str = "") -> list[str] | None:
    """``from repo_name.models import rnn`` where ``models/`` is at the repository root: the
    code imports the repository itself under its checkout folder's name. The files are the
    root's, the root goes on ``PYTHONPATH``, and the name is no requirement. Not when the
    name is a package of the index (``INDEX_PACKAGES``), when a name before the last is no
    module of the root (``torch.utils.data`` beside a ``utils.py``), or when the importing
    ``file`` would import itself."""
    head = item.names[0]
    inner = [name.partition(".")[2] for name in item.names[1:]]
    if "." in head or not inner or head in INDEX_PACKAGES:
        return None
    found = [repo.module_files(".", name) for name in inner]
    through = zip(inner[:-1], found[:-1], strict=True)
    if any(files is None and not repo.is_dir(name.replace(".", "/")) for name, files in through):
        return None  # a name before the last is neither a module nor a folder of the root
    if all(files is None for files in found):
        return None
    if any(file in files for files in found if files):
        return None
    if head not in result.self_named:
        result.self_named.append(head)
    if "." not in result.rooted:
        result.rooted.append(".")
    for name in inner:
        top = name.split(".")[0]
        if top not in result.rooted_modules:
            result.rooted_modules.append(top)
    return [f for files in found if files for f in files]
