"""The guide: render the manifest's records into GUIDE.md between :data:`BEGIN_MARKER` and
:data:`END_MARKER`, keeping the prose around them (spec ``manifest.md#guide``, §6.10).

Everything here works on *plain* mappings as read from YAML (no pydantic), so the validator
can call :func:`check_guide` on documents that are not structurally valid: fields that are
missing or of the wrong type are rendered as best as possible, never raise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .findings import Finding, finding
from .io import safefs
from .io.atomic import atomic_write_text

__all__ = [
    "BEGIN_MARKER",
    "DEFAULT_GUIDE_PATH",
    "END_MARKER",
    "check_guide",
    "clip",
    "guide_path",
    "render_block",
    "render_records",
    "update_guide_text",
    "write_guide",
]

BEGIN_MARKER = "<!-- reprobridge:records:begin -->"
END_MARKER = "<!-- reprobridge:records:end -->"
DEFAULT_GUIDE_PATH = "GUIDE.md"

_NOTE = "<!-- generated from rra.yaml by `reprobridge guide`; edit the records there -->"


#: Characters of record text that Markdown or HTML would interpret, and what is written.
#: ``<``, ``>`` and ``&`` become entities (no raw HTML, no comment, so no marker, can be
#: formed); brackets and backslashes are backslash-escaped (no link or image can be formed,
#: so no ``javascript:`` link). Emphasis and code characters are left as written: they
#: change how text looks, not what it does.
_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "\\": "\\\\",
        "[": "\\[",
        "]": "\\]",
    }
)


def clip(text: str, limit: int) -> str:
    """``text`` as a record's line may show it: at most ``limit`` characters, a longer one cut
    after a whole word (inside a word only when it has no break in its second half) and
    ended with ``...``."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 2)
    return f"{text[: cut if cut > limit // 2 else limit - 3].rstrip(' ,;:')}..."


def _plain(value: Any) -> str:
    """One line of text for a value of a record (multi-line text is joined), unescaped."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, Sequence):
        return ", ".join(_plain(item) for item in value)
    return " ".join(str(value).split())


def _text(value: Any) -> str:
    """One line of Markdown for a value of a record: the plain text, escaped (_ESCAPES)."""
    return _plain(value).translate(_ESCAPES)


def _code(value: Any) -> str:
    """A code span for an id or a file name; text that could leave the span is escaped text."""
    text = _plain(value)
    if not text or any(char in text for char in "`<>&\\"):
        return text.translate(_ESCAPES)
    return f"`{text}`"


def _codes(values: Any) -> str:
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, Sequence) or not values:
        return ""
    return ", ".join(_code(item) for item in values)


def _items(guide: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = guide.get(key)
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [item for item in value if isinstance(item, Mapping)]


def _entry(item: Mapping[str, Any], title: str, fields: list[tuple[str, str]]) -> list[str]:
    head = f"- **{_text(item.get('id')) or '(no id)'}**"
    if title:
        head += f": {title}"
    lines = [head]
    for label, key in fields:
        value = item.get(key)
        if value is None or value in ([], ""):
            continue
        shown = _codes(value) if key in ("tasks", "files") else _text(value)
        lines.append(f"  - {label}: {shown}")
    return lines


_SECTIONS: tuple[tuple[str, str, str, list[tuple[str, str]]], ...] = (
    (
        "ambiguities",
        "Ambiguities",
        "source",
        [
            ("Gap", "gap"),
            ("Resolution", "resolution"),
            ("Sensitivity", "sensitivity"),
            ("Tasks", "tasks"),
        ],
    ),
    (
        "changes",
        "Change record",
        "summary",
        [
            ("Kind", "kind"),
            ("Rationale", "rationale"),
            ("Files", "files"),
            ("Patch", "patch"),
            ("Tasks", "tasks"),
        ],
    ),
    (
        "discrepancies",
        "Paper-code discrepancies",
        "",
        [
            ("Paper", "paper"),
            ("Code", "code"),
            ("Followed", "followed"),
            ("Rationale", "rationale"),
            ("Tasks", "tasks"),
        ],
    ),
    ("pitfalls", "Pitfalls", "summary", [("Remedy", "remedy"), ("Tasks", "tasks")]),
    (
        "open_choices",
        "Open choices",
        "question",
        [("Options", "options"), ("Default", "default"), ("Tasks", "tasks")],
    ),
)


_LISTS = frozenset({"tasks", "files", "options"})


def _renderable(guide: Mapping[str, Any]) -> bool:
    """True when every record field the rendering reads has its schema type (a string or null;
    a list of strings for ``tasks``, ``files`` and ``options``): the spec's rendering, and so
    G002, is defined only then."""
    for key, _heading, title_key, fields in _SECTIONS:
        records = guide.get(key)
        if records is None:
            continue
        if not isinstance(records, list):
            return False
        for item in records:
            if not isinstance(item, Mapping):
                return False
            for name in ("id", title_key, *(field for _label, field in fields)):
                value = item.get(name) if name else None
                if name in _LISTS:
                    if value is not None and not (
                        isinstance(value, list) and all(isinstance(v, str) for v in value)
                    ):
                        return False
                elif value is not None and not isinstance(value, str):
                    return False
    return True


def render_records(guide: Mapping[str, Any]) -> str:
    """Markdown for the structured records of ``guide`` (the manifest's ``guide`` mapping).

    Sections with no records are left out; the output is deterministic and ends with a
    newline.
    """
    if not isinstance(guide, Mapping):
        guide = {}
    parts: list[str] = []
    for key, heading, title_key, fields in _SECTIONS:
        items = _items(guide, key)
        if not items:
            continue
        lines = [f"### {heading}", ""]
        for item in items:
            lines.extend(_entry(item, _text(item.get(title_key)) if title_key else "", fields))
        parts.append("\n".join(lines) + "\n")
    if not parts:
        return "No ambiguities, changes, discrepancies, pitfalls or open choices are recorded.\n"
    return "\n".join(parts)


def render_block(guide: Mapping[str, Any]) -> str:
    """The whole generated block, markers included, ending with a newline."""
    return f"{BEGIN_MARKER}\n{_NOTE}\n\n{render_records(guide)}\n{END_MARKER}\n"


def _block_span(text: str) -> tuple[int, int] | None:
    """Start and end offsets of the generated block in ``text`` (end after the end marker)."""
    start = text.find(BEGIN_MARKER)
    if start < 0:
        return None
    end = text.find(END_MARKER, start)
    if end < 0:
        return start, len(text)
    end += len(END_MARKER)
    if text.startswith("\n", end):
        end += 1
    return start, end


def update_guide_text(text: str, guide: Mapping[str, Any]) -> str:
    """``text`` with its generated block replaced by a fresh render of ``guide``.

    Hand-written text around the markers is kept as it is. Without markers the block is
    appended at the end; a begin marker without an end marker is replaced up to the end.
    """
    block = render_block(guide)
    span = _block_span(text)
    if span is None:
        if text and not text.endswith("\n"):
            text += "\n"
        return f"{text}\n{block}" if text else block
    return text[: span[0]] + block + text[span[1] :]


def guide_path(guide: Mapping[str, Any]) -> str:
    """The guide's file path as the manifest declares it (``GUIDE.md`` by default)."""
    value = guide.get("path") if isinstance(guide, Mapping) else None
    return value if isinstance(value, str) and value else DEFAULT_GUIDE_PATH


def check_guide(root: Path, guide: Mapping[str, Any]) -> list[Finding]:
    """G findings (G001-G003) for the guide of the artifact at ``root``.

    A path that is absolute or escapes the artifact is left to the F checks and not read here.
    """
    if not isinstance(guide, Mapping):
        guide = {}
    relative = guide_path(guide)
    if relative.startswith(("/", "\\")) or ".." in relative.replace("\\", "/").split("/"):
        return []
    path = Path(root).joinpath(*relative.split("/"))
    try:
        text = safefs.read_text(path, root=root)
    except safefs.UnsafeFileError:
        return []  # a link out, a FIFO or device, a huge file: never read; F003/F009 tell
    except FileNotFoundError:
        return [
            finding(
                "G001",
                f"the guide {relative} does not exist",
                path="/guide/path" if "path" in guide else "/guide",
                hint="create it with `reprobridge guide`",
            )
        ]
    except (OSError, UnicodeDecodeError):
        return []  # not a readable UTF-8 file: the file checks report it
    span = _block_span(text)
    if span is None:
        return [
            finding(
                "G003",
                f"{relative} has no block of generated records",
                path="",
                file=relative,
                hint="run `reprobridge guide` to add it",
            )
        ]
    current = text[span[0] : span[1]]
    if not _renderable(guide):
        return []  # a record of the wrong shape: S003 says why, the rendering is not defined
    if current.rstrip("\n") != render_block(guide).rstrip("\n"):
        line = text.count("\n", 0, span[0]) + 1
        return [
            finding(
                "G002",
                f"the records in {relative} differ from the manifest's records",
                path="",
                file=relative,
                line=line,
                col=1,
                hint="run `reprobridge guide` to render them again",
            )
        ]
    return []


def write_guide(root: Path, guide: Mapping[str, Any], *, title: str | None = None) -> bool:
    """Render the records into the guide file of the artifact at ``root``; True if it changed.

    A missing guide is created with a ``# title`` heading and the block. Written atomically.
    """
    if not isinstance(guide, Mapping):
        guide = {}
    path = Path(root).joinpath(*guide_path(guide).split("/"))
    try:
        text = safefs.read_text(path, root=root)
    except FileNotFoundError:
        text = f"# {_text(title) or 'Reproduction guide'}\n"
    new = update_guide_text(text, guide)
    if new == text:
        return False
    atomic_write_text(path, new, root=root)
    return True
