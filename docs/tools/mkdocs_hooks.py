"""MkDocs hook: links from the documentation to the rest of the repository.

A page may link to a file outside ``docs/`` (a part of the specification, an example, the
contributing guide) by its relative path, as on a repository browser. MkDocs sees no such
file among the pages, so this hook checks that the file exists (and, for a Markdown file,
that the anchor does), then points the link at the file in the repository. A link to a file
or anchor that does not exist is a warning, which ``mkdocs build --strict`` turns into a
failure.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

log = logging.getLogger(f"mkdocs.plugins.{__name__}")

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1", re.M | re.S)
_ANCHOR = re.compile(r"""<a\s+id=["']([^"']+)["']""")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)


def _slug(heading: str) -> str:
    """The anchor a repository browser gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file: explicit ``<a id>`` and one per heading."""
    text = _FENCE.sub("", path.read_text("utf-8"))
    return set(_ANCHOR.findall(text)) | {_slug(h) for h in _HEADING.findall(text)}


def _outside(target: str, page: Any, config: Any) -> str | None:
    """The repository URL of ``target`` when it leaves ``docs/``, after checking it."""
    if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", target):
        return None
    docs = Path(config["docs_dir"]).resolve()
    repo = Path(config["config_file_path"]).resolve().parent
    name, _, anchor = target.partition("#")
    resolved = Path(posixpath.normpath(Path(page.file.abs_src_path).parent / name))
    if resolved == docs or docs in resolved.parents:
        return None
    where = page.file.src_uri
    if repo not in resolved.parents or not resolved.exists():
        log.warning("%s: the link '%s' names no file of the repository", where, target)
        return None
    if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
        log.warning("%s: the link '%s' names no anchor of %s", where, target, resolved.name)
    kind = "tree" if resolved.is_dir() else "blob"
    relative = resolved.relative_to(repo).as_posix()
    return f"{config['repo_url'].rstrip('/')}/{kind}/main/{relative}" + (
        f"#{anchor}" if anchor else ""
    )


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Rewrite each checked link to a file outside ``docs/``; code blocks are left alone."""

    def rewrite(match: re.Match[str]) -> str:
        url = _outside(match.group(1), page, config)
        return match.group(0) if url is None else f"]({url})"

    out, last = [], 0
    for fence in _FENCE.finditer(markdown):
        out.append(_LINK.sub(rewrite, markdown[last : fence.start()]))
        out.append(fence.group(0))
        last = fence.end()
    out.append(_LINK.sub(rewrite, markdown[last:]))
    return "".join(out)
