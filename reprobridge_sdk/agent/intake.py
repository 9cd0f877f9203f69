"""Intake: an inventory of a raw repository, read without running any of its code.

Rules and edge cases, in the order the inventory is taken:

* **Source.** ``SOURCE`` is a git URL or a local path; it is cloned (never modified) into
  the build directory and checked out at ``--commit`` (default: its ``HEAD``). A source that
  cannot be cloned or a commit that does not exist is B003.
* **Files.** Every ``*.py`` file outside ``.git``, virtual environments and ``__pycache__``
  is read as UTF-8 with replacement; files above 2 MiB are skipped (generated code, not a
  script anyone runs).
* **Syntax.** A file that ``ast`` cannot parse but that parses after fissix's print fixer
  (or that has a ``print x`` statement) is Python 2; such files are scanned line by line.
* **Imports.** Top-level module names of absolute imports, minus the standard library
  (``sys.stdlib_module_names``) and the repository's own modules and packages.
* **Dependency files.** ``requirements*.txt``, ``setup.py``, ``setup.cfg``, ``pyproject.toml``,
  ``environment.yml``/``.yaml`` and ``Pipfile``; requirement lines are kept as written.
* **Entry points.** Files with ``if __name__ == "__main__"``, argparse ``add_argument`` calls
  or click options, plus scripts named in the README's commands. Options are read from the
  syntax tree: flags, default and type as source text. A readable Jupyter notebook with code
  cells is an entry point too (``notebook``), read from its code cells
  (:mod:`reprobridge_sdk.agent.notebooks`); its saved outputs are never read.
* **Data, seeds, outputs, GPU.** Line scans: URLs and quoted paths with data extensions;
  seed calls (``random.seed``, ``np.random.seed``, ``torch.manual_seed``, ``random_state=``);
  writes (``open(..., "w")``, ``savefig``, ``np.save``, ``json.dump``, ``to_csv``); CUDA use.
* **Python era.** Syntax, ``python_requires`` and the commit date; the build always uses
  the interpreter it runs under (``target``): no interpreter is ever downloaded.

* **Commands.** The READMEs (at most two folders deep; one in a folder runs from there) are
  read by :mod:`reprobridge_sdk.agent.commands`: code blocks, prompts, ``cd``, variables,
  ``python -m``, shell scripts followed to their Python command. A line that runs a console
  script of the repository's own package (its packaging metadata's ``console_scripts``,
  :mod:`reprobridge_sdk.agent.console_scripts`) is read as the Python command that runs it
  without installing the package.

The gate never stops the build on a hint: a ``hints.script`` not in the repository is B002
and a ``hints.command`` that cannot be a launcher is B022 (both warnings: the claim is
planned without the hint). A command whose script is not where it says but where a README
``cd``s to, or in the one folder that holds it, is read there (:func:`hint_command`).
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from reprobridge_sdk.agent.commands import (
    Command,
    locate,
    markdown_commands,
    parse_command,
    resolve,
)
from reprobridge_sdk.agent.console_scripts import console_scripts
from reprobridge_sdk.agent.dependencies import dependency_files
from reprobridge_sdk.agent.gates import build_finding, gate_from
from reprobridge_sdk.agent.notebooks import (
    convert,
    has_code,
    notebook_in_command,
    read_notebook,
)
from reprobridge_sdk.model.build import (
    BuildFinding,
    CommandLine,
    DataReference,
    EntryOption,
    EntryPoint,
    ImportUse,
    IntakeRecord,
    PythonEra,
    SourceLine,
)
from reprobridge_sdk.model.claims import Claims

__all__ = [
    "SourceError",
    "Tree",
    "checkout",
    "command_line",
    "command_script",
    "hint_command",
    "inventory",
    "is_python2",
    "options_of",
    "read_tree",
    "readme_commands",
    "repository_files",
]

_MAX_FILE = 2 * 1024 * 1024
_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "env", ".tox", "node_modules", ".rra-build"}
_DATA_EXT: tuple[str, ...] = (".csv", ".tsv", ".npy", ".npz", ".pkl", ".pickle", ".h5", ".hdf5")
_DATA_EXT += (".txt", ".json", ".gz", ".zip", ".tar", ".parquet", ".mat", ".bin", ".pt", ".pth")
_URL = re.compile(r"""https?://[^\s'"<>)\]]+""")
_QUOTED = re.compile(r"""['"]([^'"\n]{1,200})['"]""")
_SEED = re.compile(
    r"\b(?:random\.seed|np\.random\.seed|numpy\.random\.seed|torch\.manual_seed|"
    r"torch\.cuda\.manual_seed(?:_all)?|tf\.random\.set_seed|set_seed|seed_everything)\s*\(|"
    r"\brandom_state\s*=|\bdefault_rng\s*\("
)
_OUTPUT = re.compile(
    r"""\bopen\s*\([^)]*['"][wa]b?\+?['"]|\.savefig\s*\(|\bnp\.save[z]?\s*\(|"""
    r"""\bjson\.dump\s*\(|\.to_csv\s*\(|\btorch\.save\s*\(|\bpickle\.dump\s*\("""
)
_GPU = re.compile(r"""\bcuda\b|\.cuda\s*\(|CUDA_VISIBLE_DEVICES|\bgpu\b""", re.IGNORECASE)
_PY2_PRINT = re.compile(r"^\s*print\s+[^\s(=]")
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([\w., ]+))")
_LICENSES = (
    ("Apache License", "Apache-2.0"),
    ("MIT License", "MIT"),
    ("Permission is hereby granted, free of charge", "MIT"),
    ("GNU GENERAL PUBLIC LICENSE", "GPL-3.0-or-later"),
    ("BSD 3-Clause", "BSD-3-Clause"),
    ("Redistribution and use in source and binary forms", "BSD-3-Clause"),
    ("Mozilla Public License", "MPL-2.0"),
)


class SourceError(Exception):
    """The source cannot be cloned or checked out; ``finding`` (B003) says why."""

    def __init__(self, item: BuildFinding) -> None:
        super().__init__(item.message)
        self.finding = item


def _git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, env=env
    )


def checkout(source: str, dest: Path, commit: str | None = None) -> tuple[str, str]:
    """Clone ``source`` into ``dest`` at ``commit``; return ``(full commit, committer date)``.

    ``dest`` is replaced. The source itself is only read. Raises :class:`SourceError` (B003).
    """
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    local = Path(source)
    origin = str(local.resolve()) if local.exists() else source
    if origin.startswith("-"):
        raise SourceError(build_finding("B003", f"source {source!r} is not a repository"))
    clone = _git("clone", "--quiet", "--no-hardlinks", "--", origin, str(dest))
    if clone.returncode != 0:
        raise SourceError(
            build_finding(
                "B003",
                f"cannot clone {source!r}: {clone.stderr.strip()[-300:]}",
                hint="give a git URL or the path of a local git repository",
            )
        )
    if commit is not None:
        if not re.fullmatch(r"[0-9a-fA-F]{4,64}|[\w./-]{1,200}", commit) or commit.startswith("-"):
            raise SourceError(build_finding("B003", f"{commit!r} is not a commit"))
        done = _git("checkout", "--quiet", "--detach", commit, cwd=dest)
        if done.returncode != 0:
            raise SourceError(
                build_finding(
                    "B003",
                    f"commit {commit!r} is not in {source!r}",
                    hint="give a full commit id of the repository",
                )
            )
    head = _git("rev-parse", "HEAD", cwd=dest)
    date = _git("show", "-s", "--format=%cI", "HEAD", cwd=dest)
    if head.returncode != 0 or date.returncode != 0:
        raise SourceError(build_finding("B003", f"{source!r} has no commit to build from"))
    return head.stdout.strip(), date.stdout.strip()


def code_date(root: Path, paths: list[str], commit_date: str) -> str | None:
    """Author date (ISO 8601) of the newest change to one of ``paths``: the era of that code,
    often years before the repository's last commit (a README edit, a licence).

    The author date is when a change was written; the committer date is when it was applied,
    which for code published as one squashed "Initial commit", or rebased, is months after
    the code and its libraries (code of April built against the releases of October). Of the
    commits that changed ``paths`` the newest author date is taken. Never later than
    ``commit_date`` (the checked-out commit's own). None when git cannot say (no path has
    history, or ``root`` is not a repository).
    """
    if not paths or not root.is_dir():
        return None
    # literal pathspecs: a file name such as ':(exclude)x' is a name, never git's magic
    try:
        found = _git("--literal-pathspecs", "log", "--format=%aI", "HEAD", "--", *paths, cwd=root)
    except OSError:  # no git on this machine
        return None
    if found.returncode != 0:
        return None
    dates: list[tuple[datetime, str]] = []
    for line in found.stdout.split():
        try:
            dates.append((datetime.fromisoformat(line), line))
        except ValueError:  # not a date git could print as one
            continue
    if not dates:
        return None
    try:
        newest = max(dates)
        earlier = newest[0] < datetime.fromisoformat(commit_date)
    except (TypeError, ValueError):  # not a date, or one without its offset
        return None
    return newest[1] if earlier else commit_date


@dataclass(frozen=True)
class PyFile:
    """One Python file of the tree: its path, text and syntax tree (None for Python 2)."""

    path: str
    text: str
    tree: ast.Module | None
    python2: bool


@dataclass(frozen=True)
class Tree:
    """The files of a repository that the inventory reads."""

    root: Path
    files: list[str]
    python: list[PyFile]

    def local_modules(self) -> set[str]:
        names: set[str] = set()
        for rel in self.files:
            parts = Path(rel).parts
            if rel.endswith(".py"):
                names.add(Path(parts[-1]).stem)
            if len(parts) > 1:
                names.add(parts[0])
                if (self.root / parts[0] / "__init__.py").exists():
                    names.add(parts[0])
        # src layout: packages under src/
        src = self.root / "src"
        if src.is_dir():
            names.update(p.name for p in src.iterdir() if p.is_dir())
        return names


def is_python2(text: str) -> bool:
    """True when ``text`` is not Python 3 but parses as Python 2 (fissix's grammar)."""
    try:
        ast.parse(text)
    except SyntaxError:
        pass
    else:
        return False
    from fissix import pygram, pytree  # noqa: PLC0415 - only for files ast cannot parse
    from fissix.pgen2 import driver  # noqa: PLC0415

    grammar = pygram.python_grammar  # print as a statement
    try:
        driver.Driver(grammar, convert=pytree.convert).parse_string(
            text if text.endswith("\n") else text + "\n"
        )
    except Exception:
        return any(_PY2_PRINT.match(line) for line in text.splitlines())
    return True


def repository_files(root: Path) -> Iterator[str]:
    """The files of the checkout at ``root`` (POSIX, sorted; no links, no hidden folders,
    no virtual environments)."""
    for current, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            path = Path(current) / name
            if path.is_symlink() or not path.is_file():
                continue
            yield path.relative_to(root).as_posix()


def read_tree(root: Path) -> Tree:
    """Read the repository at ``root`` (files and parsed Python sources)."""
    files = list(repository_files(root))
    python: list[PyFile] = []
    for rel in files:
        if not rel.endswith(".py"):
            continue
        path = root / rel
        if path.stat().st_size > _MAX_FILE:
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        try:
            tree: ast.Module | None = ast.parse(text)
        except SyntaxError:
            tree = None
        python.append(PyFile(rel, text, tree, tree is None and is_python2(text)))
    return Tree(root, files, python)


def _imports(file: PyFile) -> set[str]:
    names: set[str] = set()
    if file.tree is not None:
        for node in ast.walk(file.tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        return names
    for line in file.text.splitlines():
        match = _IMPORT_LINE.match(line)
        if match and match.group(1):
            names.add(match.group(1).split(".")[0])
        elif match and match.group(2):
            for part in match.group(2).split(","):
                token = part.strip().split(" ")[0]
                if token:
                    names.add(token.split(".")[0])
    return names


def _third_party(tree: Tree) -> list[ImportUse]:
    local = tree.local_modules()
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    used: dict[str, list[str]] = {}
    for file in tree.python:
        for name in sorted(_imports(file)):
            if name in stdlib or name in local or not name.isidentifier():
                continue
            used.setdefault(name, []).append(file.path)
    return [ImportUse(module=name, files=files) for name, files in sorted(used.items())]


def _python_requires(tree: Tree) -> str | None:
    for name in ("setup.py", "setup.cfg", "pyproject.toml"):
        path = tree.root / name
        if path.is_file():
            text = path.read_text("utf-8", "replace")
            match = re.search(
                r"""(?:python_requires|requires-python)\s*[=:]\s*['"]?([^'"\n,]+)""", text
            )
            if match:
                return match.group(1).strip()
    return None


def _source_text(node: ast.AST | None, text: str) -> str | None:
    if node is None:
        return None
    segment = ast.get_source_segment(text, node)
    return segment[:200] if segment else None


def _argparse_options(file: PyFile, within: ast.AST | None = None) -> list[EntryOption]:
    """The argparse (or click) options declared in ``file`` (in ``within``, one of its nodes,
    when given)."""
    assert file.tree is not None
    options: list[EntryOption] = []
    for node in ast.walk(within or file.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in {"add_argument", "option"}:
            continue
        flags = [
            arg.value
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        ]
        if not flags:
            continue
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        help_node = keywords.get("help")
        options.append(
            EntryOption(
                flags=flags,
                default=_source_text(keywords.get("default"), file.text),
                type=_source_text(keywords.get("type"), file.text),
                help=help_node.value[:200]
                if isinstance(help_node, ast.Constant) and isinstance(help_node.value, str)
                else None,
            )
        )
    return options


_PARSES = frozenset({"parse_args", "parse_known_args"})


def _borrowed_options(file: PyFile, by_path: dict[str, PyFile]) -> list[EntryOption]:
    """The options of a parser that a function of a repository module builds and parses for
    the script (SGC's ``args = get_citation_args()`` from its ``args.py``): the script
    declares none itself. The module is looked up beside the script, then at the root; the
    function must be called by the script, by name (``from args import f``) or through its
    module (``import args`` then ``args.f()``)."""
    assert file.tree is not None
    called: set[tuple[str, str]] = set()  # (module, function)
    imported: dict[str, tuple[str, str]] = {}  # a name the script calls -> (module, function)
    modules: dict[str, str] = {}  # a name the script binds -> module
    for node in file.tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                imported[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name] = alias.name
    for call in ast.walk(file.tree):
        if not isinstance(call, ast.Call):
            continue
        if isinstance(call.func, ast.Name) and call.func.id in imported:
            called.add(imported[call.func.id])
        elif (
            isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id in modules
        ):
            called.add((modules[call.func.value.id], call.func.attr))
    folder = posixpath.dirname(file.path)
    for module, function in sorted(called):
        rel = module.replace(".", "/") + ".py"
        source = by_path.get(posixpath.join(folder, rel)) or by_path.get(rel)
        if source is None or source.tree is None:
            continue
        for defined in source.tree.body:
            if not (isinstance(defined, ast.FunctionDef) and defined.name == function):
                continue
            parses = any(
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in _PARSES
                for sub in ast.walk(defined)
            )
            options = _argparse_options(source, defined) if parses else []
            if options:
                return options
    return []


def options_of(text: str) -> list[EntryOption]:
    """The argparse (or click) options of the Python source ``text``; none when it does not
    parse as Python 3."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return _argparse_options(PyFile("", text, tree, python2=False))


def _prints(file: PyFile) -> list[str]:
    texts: list[str] = []
    if file.tree is None:
        for line in file.text.splitlines():
            if re.match(r"\s*print\b", line):
                texts.extend(m.group(1) for m in _QUOTED.finditer(line))
        return texts[:50]
    for node in ast.walk(file.tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name not in {"print", "info", "write", "log", "warning"}:
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value.strip():
                texts.append(sub.value[:200])
    return texts[:50]


def command_script(command: str) -> str | None:
    """The ``*.py`` script a command line runs (``python x.py``, ``python -m pkg.mod``),
    relative to the repository root after the line's ``cd``s; None when it runs none."""
    parsed = parse_command(command)
    if parsed is None or parsed.problem is not None:
        return None
    if parsed.module is not None:
        return posixpath.join(parsed.runs_in, parsed.module.replace(".", "/") + ".py").removeprefix(
            "./"
        )
    if parsed.script_arg is None:
        return None
    return posixpath.normpath(posixpath.join(parsed.runs_in, parsed.script_arg))


def command_line(command: Command, source: str) -> CommandLine:
    """The record of a command read as a launcher."""
    return CommandLine(
        source=source,
        text=command.text[:4096],
        workdir=command.workdir,
        env=dict(command.env),
        argv=list(command.argv),
        script=command.script,
        module=command.module,
        shell=command.shell,
        via=command.via,
        problem=command.problem,
        console_script=command.console_script,
    )


def _readmes(tree: Tree) -> Iterator[tuple[str, str]]:
    """``(README path, its folder)`` for the READMEs at most two folders deep."""
    for rel in tree.files:
        path = PurePosixPath(rel)
        if len(path.parts) > 3 or not path.name.lower().startswith("readme"):
            continue
        yield rel, str(path.parent)


def readme_commands(tree: Tree) -> list[CommandLine]:
    """The Python commands of the READMEs (a README runs from its own folder), resolved."""
    found: list[CommandLine] = []
    seen: set[tuple[str, str]] = set()
    scripts = console_scripts(tree.root)
    for rel, folder in _readmes(tree):
        if (tree.root / rel).stat().st_size > _MAX_FILE:
            continue
        text = (tree.root / rel).read_text("utf-8", "replace")
        for command in markdown_commands(text, workdir=folder, scripts=scripts):
            done = resolve(command, tree.root)
            if (done.text, done.workdir) in seen:
                continue
            seen.add((done.text, done.workdir))
            found.append(command_line(done, rel))
    return found


def _as_command(line: CommandLine) -> Command:
    return Command(
        line.text,
        line.workdir,
        dict(line.env),
        list(line.argv),
        module=line.module,
        script=line.script,
        shell=line.shell,
        problem=line.problem,
        via=line.via,
        console_script=line.console_script,
    )


def hint_command(
    text: str, root: Path, known: list[CommandLine], files: list[str]
) -> tuple[CommandLine, str]:
    """A claim's ``hints.command`` read as a launcher, and how its folder was found."""
    parsed = parse_command(text, scripts=console_scripts(root))
    if parsed is None:
        parsed = Command(text, problem="the command runs no Python script")
    done, how = locate(parsed, root, [_as_command(k) for k in known], files)
    return command_line(done, "hint"), how


def _entry_points(tree: Tree, readme: list[CommandLine]) -> list[EntryPoint]:
    by_script: dict[str, list[str]] = {}
    for command in readme:
        if command.script and command.problem is None:
            by_script.setdefault(command.script, []).append(command.text)
    points: list[EntryPoint] = []
    by_path = {file.path: file for file in tree.python}
    for file in tree.python:
        kinds: list[str] = []
        text = file.text
        if re.search(r"""__name__\s*==\s*['"]__main__['"]""", text):
            kinds.append("main")
        if "argparse" in text and "add_argument" in text:
            kinds.append("argparse")
        if re.search(r"@click\.(command|option|group)", text):
            kinds.append("click")
        if file.path in by_script:
            kinds.append("readme")
        top_level_script = file.tree is not None and any(
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            for node in file.tree.body
        )
        if not kinds and file.python2 and re.search(r"^print\b", text, re.MULTILINE):
            top_level_script = True
        if not kinds and not top_level_script:
            continue
        if not kinds:
            kinds.append("main")  # a flat script: statements run at import
        options = _argparse_options(file) if file.tree is not None else []
        if not options and file.tree is not None:
            options = _borrowed_options(file, by_path)
        points.append(
            EntryPoint(
                path=file.path,
                kinds=kinds,
                options=options,
                readme_commands=by_script.get(file.path, []),
                prints=_prints(file),
            )
        )
    return [*points, *_notebooks(tree, by_script)]


def _notebooks(tree: Tree, by_script: dict[str, list[str]]) -> Iterator[EntryPoint]:
    """Each readable notebook with code to run: an entry point whose prints are its code's (never
    its saved outputs)."""
    for rel in tree.files:
        if not rel.endswith(".ipynb"):
            continue
        notebook = read_notebook(tree.root, rel)
        if notebook.problem is not None or not notebook.cells:
            continue
        converted = convert(notebook)
        if not has_code(converted):
            continue
        text = converted.text
        try:
            parsed: ast.Module | None = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError):
            parsed = None
        file = PyFile(rel, text, parsed, python2=parsed is None)
        yield EntryPoint(
            path=rel,
            kinds=["notebook", *(["readme"] if rel in by_script else [])],
            options=_argparse_options(file) if parsed is not None else [],
            readme_commands=by_script.get(rel, []),
            prints=_prints(file),
        )


def _scan(
    tree: Tree,
) -> tuple[list[DataReference], list[SourceLine], list[SourceLine], list[SourceLine]]:
    data: list[DataReference] = []
    seeds: list[SourceLine] = []
    outputs: list[SourceLine] = []
    gpu: list[SourceLine] = []
    seen: set[str] = set()
    for file in tree.python:
        for number, line in enumerate(file.text.splitlines(), start=1):
            stripped = line.strip()
            if stripped.startswith("#"):
                continue
            where = SourceLine(file=file.path, line=number, text=stripped[:300])
            for url in _URL.findall(line):
                if url not in seen:
                    seen.add(url)
                    data.append(DataReference(kind="url", value=url, where=where))
            for quoted in _QUOTED.findall(line):
                if quoted.lower().endswith(_DATA_EXT) and " " not in quoted and quoted not in seen:
                    if _OUTPUT.search(line):
                        continue
                    seen.add(quoted)
                    data.append(DataReference(kind="path", value=quoted, where=where))
            if _SEED.search(line):
                seeds.append(where)
            if _OUTPUT.search(line):
                outputs.append(where)
            if _GPU.search(line):
                gpu.append(where)
    for rel in tree.files:
        name = Path(rel).name.lower()
        if name.startswith(("download", "get_data", "fetch")) and name.endswith((".py", ".sh")):
            data.append(DataReference(kind="script", value=rel))
    return data, seeds, outputs, gpu


def _license(tree: Tree) -> str | None:
    for rel in tree.files:
        if "/" in rel or not Path(rel).name.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
            continue
        head = (tree.root / rel).read_text("utf-8", "replace")[:4000]
        for marker, spdx in _LICENSES:
            if marker.lower() in head.lower():
                return spdx
    return None


def _hint_findings(tree: Tree, claims: Claims, readme: list[CommandLine]) -> list[BuildFinding]:
    present = set(tree.files)
    items: list[BuildFinding] = []
    for index, claim in enumerate(claims.claims):
        hints = claim.hints
        if hints.script and hints.script.removeprefix("./") not in present:
            items.append(
                build_finding(
                    "B002",
                    f"claim {claim.id!r}: {hints.script!r} is not in the repository; "
                    "the claim is planned without it",
                    path=f"/claims/{index}/hints/script",
                    hint="name a script relative to the repository root",
                )
            )
        if hints.command and notebook_in_command(hints.command) is None:
            line, _how = hint_command(hints.command, tree.root, readme, tree.files)
            if line.problem is not None:
                items.append(
                    build_finding(
                        "B022",
                        f"claim {claim.id!r}: the hinted command cannot be a launcher "
                        f"({line.problem}); the claim is planned without it",
                        path=f"/claims/{index}/hints/command",
                        hint="write it as the README does, e.g. 'cd DIR && python script.py "
                        "--option value'",
                    )
                )
    return items


def inventory(
    root: Path,
    claims: Claims,
    *,
    source: str,
    commit: str,
    commit_date: str,
    inputs_digest: str,
    seconds: float = 0.0,
) -> IntakeRecord:
    """The inventory of the checkout at ``root`` and the Intake gate against ``claims``."""
    tree = read_tree(root)
    readme = readme_commands(tree)
    data, seeds, outputs, gpu = _scan(tree)
    py2 = sorted(f.path for f in tree.python if f.python2)
    target = f"{sys.version_info.major}.{sys.version_info.minor}"
    name = re.sub(r"\.git$", "", source.rstrip("/").rsplit("/", 1)[-1]) or "repository"
    return IntakeRecord(
        inputs_digest=inputs_digest,
        seconds=seconds,
        gate=gate_from(_hint_findings(tree, claims, readme)),
        source=source,
        repo_name=name,
        commit=commit,
        dependency_files=dependency_files(tree.root, tree.files),
        imports=_third_party(tree),
        python=PythonEra(
            syntax="2" if py2 else "3",
            python2_files=py2,
            python_requires=_python_requires(tree),
            commit_date=commit_date,
            target=target,
        ),
        entry_points=_entry_points(tree, readme),
        readme_commands=[c.text for c in readme],
        commands=readme,
        data=data,
        seeds=seeds,
        outputs=outputs,
        gpu=gpu,
        license=_license(tree),
    )
