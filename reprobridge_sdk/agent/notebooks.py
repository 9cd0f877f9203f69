"""Notebooks as entry points: a Jupyter notebook's code cells, turned into a script Python runs.

A paper's number is often computed in a notebook (``x.ipynb``), which ``python x.ipynb`` reads
as a dict literal. The agent runs a script made from it instead (``x_notebook.py`` beside
it, recorded as a convenience change). Rules:

* **Reading.** nbformat 4 JSON, read with the standard ``json`` module through the safe file
  layer: at most :data:`MAX_NOTEBOOK` bytes, inside the repository (a path with ``..`` or
  a link out is refused). Anything else (not JSON, nbformat 3 or unknown, cells that are not
  a list) is a ``problem``, never an exception. A cell's ``source`` is a string or a list of
  strings (joined as written); other cells (markdown, raw) and every saved output are never
  read: a notebook's outputs are not results.
* **IPython-only lines** are commented out, not run: a line magic (``%matplotlib``), a shell
  escape (``!pip``), ``x = !ls`` / ``x = %who``, a help request (``obj?``), a line calling
  ``get_ipython()``. In a cell that parses as Python as it is, only ``get_ipython()`` lines
  are IPython's (a ``?`` or ``%`` there belongs to Python). An indented one becomes ``pass``
  with the line as its comment, so its block stays a block. ``%time stmt`` (``%timeit``,
  ``%prun``, ``%memit``) runs its statement once, untimed. A cell magic (``%%bash``) comments
  out its whole cell, except those whose body is Python (``%%time``, ``%%capture``, ...):
  only their magic line.
* **Displayed values.** Jupyter shows a cell's last bare expression (unless ``;`` ends it). With
  ``display``, the script prints it as ``<expression>: <value>`` (nothing for ``None``);
  without, it stays a statement whose value is dropped, as ``python`` does. The Planner asks
  for ``display`` only when the notebook's own ``print`` calls do not print the claim's
  label or words: then a displayed value is how the notebook shows its number.
* **Name.** ``x.ipynb`` gives ``x_notebook.py``; when that exists, ``x_notebook_2.py`` and
  so on: an existing file is never overwritten.
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.io.safefs import UnsafeFileError, create_exclusive, loads_json, read_bytes
from reprobridge_sdk.model.build import NotebookScript

__all__ = [
    "MAX_NOTEBOOK",
    "Converted",
    "Notebook",
    "code_text",
    "convert",
    "has_code",
    "notebook_in_command",
    "rationale",
    "read_notebook",
    "script_name",
    "write_script",
]

#: Largest notebook read (bytes). Saved outputs (images) make notebooks large; their code
#: never is. A larger one is refused, not truncated.
MAX_NOTEBOOK = 8 * 1024 * 1024
#: Cell magics whose body is Python that runs (the magic only times or captures it).
_PYTHON_BODY = frozenset({"time", "timeit", "capture", "prun", "memit", "debug"})
#: ``%time stmt`` (and ``%timeit``, ``%prun``, ...): a line magic that runs a statement.
_TIMED = re.compile(r"^(\s*)%(time|timeit|prun|memit)\s+([^\s-].*)$")
_SHELL_ASSIGN = re.compile(r"^[\w.\[\], ]+=\s*[!%]")
#: ``obj?``, ``obj??``, ``?obj``: IPython's help on a name.
_HELP = re.compile(r"^(?:\?{1,2}[A-Za-z_][\w.]*|[A-Za-z_][\w.]*\?{1,2})$")
_SHOW = "_notebook_show"
_HELPER = (
    f"def {_SHOW}(label, value):\n"
    '    """What the notebook displays after a cell: its last expression\'s value."""\n'
    "    if value is not None:\n"
    '        print(f"{label}: {value}")\n'
)


@dataclass(frozen=True)
class Notebook:
    """The code cells of a notebook (a repository path), or why it cannot be read."""

    path: str
    cells: tuple[str, ...] = ()
    problem: str | None = None


@dataclass(frozen=True)
class Converted:
    """The script made from a notebook."""

    text: str
    #: The IPython-only lines commented out, as ``cell N: line``.
    commented: list[str] = field(default_factory=list)
    #: Last expressions printed as the notebook displays them.
    shown: int = 0


def read_notebook(root: Path, rel: str) -> Notebook:
    """The code cells of the notebook ``rel`` of the repository at ``root``."""
    normal = posixpath.normpath(rel)
    if rel.startswith("/") or normal == ".." or normal.startswith("../"):
        return Notebook(rel, problem="the path leads outside the repository")
    try:
        raw = read_bytes(root / normal, root=root, max_bytes=MAX_NOTEBOOK)
        data = loads_json(raw, path=root / normal)
    except UnsafeFileError as exc:
        why = {
            "too-large": f"it is larger than {MAX_NOTEBOOK // (1024 * 1024)} MiB",
            "escapes": "it is a link out of the repository",
        }
        return Notebook(normal, problem=why.get(exc.reason, f"it cannot be read ({exc.reason})"))
    except (ValueError, RecursionError):  # not JSON, or not UTF-8
        return Notebook(normal, problem="it is not JSON (not a notebook file)")
    except OSError as exc:
        return Notebook(normal, problem=f"it cannot be read ({exc.strerror or exc})")
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        version = data.get("nbformat") if isinstance(data, dict) else None
        if isinstance(version, int) and version != 4:
            return Notebook(normal, problem=f"its nbformat {version} is not 4")
        return Notebook(normal, problem="it holds no list of cells (not nbformat 4)")
    if data.get("nbformat") != 4:
        return Notebook(normal, problem=f"its nbformat {data.get('nbformat')!r} is not 4")
    cells: list[str] = []
    for cell in data["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            return Notebook(normal, problem="a code cell's source is not text")
        cells.append(source)
    return Notebook(normal, cells=tuple(cells))


def _ipython_only(line: str, *, valid: bool) -> bool:
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return False
    if "get_ipython(" in stripped:
        return True
    if valid:
        return False
    return (
        stripped.startswith("%")
        or (stripped.startswith("!") and not stripped.startswith("!="))
        or bool(_SHELL_ASSIGN.match(stripped) or _HELP.match(stripped))
    )


def _commented(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    note = f"# IPython only: {line.strip()}"
    return f"{indent}pass  {note}" if indent else note


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


def _cell_code(number: int, source: str, commented: list[str]) -> str:
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].strip()[2:].split(" ", 1)[0]
        commented.append(f"cell {number}: {lines[first].strip()}")
        head = [*lines[:first], _commented(lines[first])]
        body = lines[first + 1 :]
        if magic in _PYTHON_BODY:
            lines = [*head, *body]
        else:
            commented.extend(f"cell {number}: {b.strip()}" for b in body if b.strip())
            lines = [*head, *(f"# {b}" if b.strip() else b for b in body)]
        return "\n".join(lines)
    valid = _parses(source)
    out = []
    for line in lines:
        timed = _TIMED.match(line) if not valid else None
        if timed is not None:  # %time stmt: the statement runs, as in Jupyter
            indent, magic, statement = timed.groups()
            out.append(f"{indent}{statement}  # IPython: %{magic}")
        elif _ipython_only(line, valid=valid):
            commented.append(f"cell {number}: {line.strip()}")
            out.append(_commented(line))
        else:
            out.append(line)
    return "\n".join(out)


def _shown(code: str) -> str | None:
    """``code`` with its last bare expression printed as Jupyter displays it, or None."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    last = tree.body[-1]
    lines = code.splitlines()
    end = last.end_lineno or last.lineno
    tail = lines[end - 1][last.end_col_offset or 0 :].split("#", 1)[0].strip()
    if tail.startswith(";") or last.col_offset:
        return None
    segment = ast.get_source_segment(code, last.value)
    if segment is None:
        return None
    label = " ".join(segment.split())
    label = label if len(label) <= 60 else label[:57] + "..."
    wrapped = f"{_SHOW}({label!r}, (\n{segment}\n))"
    return "\n".join([*lines[: last.lineno - 1], wrapped, *lines[end:]])


def convert(notebook: Notebook, *, display: bool = False) -> Converted:
    """The script of ``notebook``: its code cells in order, each headed by its number."""
    commented: list[str] = []
    parts: list[str] = []
    shown = 0
    for number, source in enumerate(notebook.cells, start=1):
        code = _cell_code(number, source, commented)
        if display:
            printed = _shown(code)
            if printed is not None:
                code = printed
                shown += 1
        parts.append(f"# %% cell {number}\n{code.rstrip()}\n")
    head = f"# Generated from {notebook.path}: its code cells in order (outputs not read).\n"
    helper = f"\n\n{_HELPER}" if shown else ""
    body = "\n".join(parts)
    return Converted(text=f"{head}{helper}\n\n{body}", commented=commented, shown=shown)


def script_name(root: Path, notebook: str) -> str:
    """The script's path beside ``notebook``: ``x_notebook.py``, else the first of
    ``x_notebook_2.py``, ``x_notebook_3.py``, ... that does not exist in ``root``."""
    folder, name = posixpath.split(notebook)
    stem = name.removesuffix(".ipynb")
    number = 1
    while True:
        suffix = "" if number == 1 else f"_{number}"
        candidate = posixpath.join(folder, f"{stem}_notebook{suffix}.py")
        path = root / candidate
        if not (path.exists() or path.is_symlink()):
            return candidate
        number += 1


def notebook_in_command(command: str) -> str | None:
    """The notebook a command line runs (``jupyter nbconvert --execute x.ipynb``,
    ``cd DIR && python x.ipynb``), relative to the repository root after its ``cd``s; None
    when it runs none, or passes it to a script (``python run.py x.ipynb``)."""
    workdir = "."
    for segment in re.split(r"&&|;", command):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        if len(words) == 2 and words[0] == "cd":
            workdir = posixpath.normpath(posixpath.join(workdir, words[1]))
            continue
        for index, word in enumerate(words):
            if word.endswith(".ipynb"):
                before = words[:index]
                if "-m" in before or any(w.endswith(".py") for w in before):
                    return None  # a script that takes the notebook as an argument
                return posixpath.normpath(posixpath.join(workdir, word))
    return None


def code_text(root: Path, rel: str) -> str:
    """The Python code of notebook ``rel`` (for import and print scans); empty when unreadable."""
    notebook = read_notebook(root, rel)
    return "" if notebook.problem else convert(notebook).text


def has_code(converted: Converted) -> bool:
    """True when the script runs anything (not only comments)."""
    try:
        tree = ast.parse(converted.text)
    except (SyntaxError, ValueError, RecursionError):
        return True  # it has code; a run will say what is wrong with it
    return bool(tree.body)


def write_script(code: Path, item: NotebookScript) -> Converted | str:
    """Write the script of ``item`` into the refined code ``code``; the text, or why not.

    The notebook is read again from ``code`` (the copy the artifact ships). The file is
    created exclusively: one already at ``item.script`` is never overwritten.
    """
    notebook = read_notebook(code, item.notebook)
    if notebook.problem is not None:
        return notebook.problem
    converted = convert(notebook, display=item.display)
    try:
        handle = create_exclusive(code / item.script, root=code, mode=0o644)
    except FileExistsError:
        return f"{item.script} exists already"
    except (UnsafeFileError, OSError) as exc:
        return f"{item.script} cannot be created ({exc})"
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(converted.text)
    return converted


def rationale(item: NotebookScript, converted: Converted) -> str:
    """Why the script exists and what it holds, for the change record."""
    cells = converted.text.count("\n# %% cell ")
    why = (
        f"{item.notebook} is a Jupyter notebook: 'python {posixpath.basename(item.notebook)}' "
        f"reads it as a dict and runs none of its code. {item.script} holds its {cells} code "
        "cell(s) in order, as a script the launchers run (the notebook's saved outputs are "
        "not read)."
    )
    if converted.commented:
        lines = "; ".join(converted.commented[:10])
        why += f" IPython-only lines are commented out, not run: {lines}."
    if converted.shown:
        why += (
            f" The last expression of {converted.shown} cell(s) is printed as the notebook "
            "displays it: the notebook's own prints do not show the claim's number."
        )
    return why
