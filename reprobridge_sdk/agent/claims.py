"""Reading a claims file: YAML with the loader's limits, then the ``Claims`` model.

Every problem is a B001 finding located at ``file:line:col`` with the JSON Pointer of the
offending value: bad YAML (the loader's own Y finding is carried as B001 with its message),
a document that is not a mapping, an unknown key, a missing field, a claim with both or
neither of ``value`` and ``range``, duplicated claim ids. The file is never executed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.io.pointer import escape_pointer
from reprobridge_sdk.model.claims import Claims

__all__ = ["MAX_PATCH", "ClaimsError", "author_patch", "load_claims"]

#: Largest author patch read (bytes).
MAX_PATCH = 4 * 1024 * 1024


class ClaimsError(UsageError):
    """The claims file cannot be used; ``findings`` (B001) say where and why."""


def _pointer(data: Any, loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    current = data
    for item in loc:
        if isinstance(current, dict) and isinstance(item, str) and item not in current:
            parts.append(item)
            current = None
            continue
        parts.append(str(item))
        if isinstance(current, dict):
            current = current.get(item)
        elif isinstance(current, list) and isinstance(item, int) and item < len(current):
            current = current[item]
        else:
            current = None
    return "".join("/" + escape_pointer(part) for part in parts)


def load_claims(path: str | os.PathLike[str]) -> Claims:
    """The claims file at ``path``; raises :class:`ClaimsError` with B001 findings."""
    name = os.fspath(path)
    try:
        doc = load_document(path)
    except OSError as exc:
        msg = f"cannot read the claims file {name}: {exc.strerror or exc}"
        raise ClaimsError(msg) from None
    if doc.findings and doc.data is None:
        fatal = [
            doc.finding("B001", f"not a claims document: {item.message}", path=item.path)
            for item in doc.findings
        ]
        raise ClaimsError(f"{name} is not valid YAML", fatal)
    if not isinstance(doc.data, dict):
        item = doc.finding(
            "B001", "a claims file is a mapping", hint="start with 'claims_version: \"1.0\"'"
        )
        raise ClaimsError(f"{name} is not a claims document", [item])
    try:
        return Claims.model_validate(doc.data)
    except ValidationError as exc:
        found: list[Finding] = []
        for error in exc.errors():
            pointer = _pointer(doc.data, tuple(error["loc"]))
            message = str(error["msg"]).removeprefix("Value error, ")
            found.append(doc.finding("B001", message, path=pointer, key=error["type"] == "missing"))
        raise ClaimsError(f"{name} is not a valid claims document", found) from None


def author_patch(claims: Claims, path: str | os.PathLike[str]) -> str | None:
    """The text of the patch ``claims`` declares (relative to the claims file at ``path``).

    None when it declares none; a patch that is not a file beside the claims file (a link
    out of its folder, a folder, too large, not UTF-8) raises :class:`ClaimsError` (B001).
    """
    patch = claims.patch
    if patch is None:
        return None
    base = Path(path).resolve().parent
    target = (base / patch.path).resolve()
    pointer = "/patch/path"

    def fail(why: str) -> ClaimsError:
        item = finding("B001", f"the patch {patch.path!r} {why}", path=pointer)
        return ClaimsError(f"{os.fspath(path)}: the patch cannot be used", [item])

    if not target.is_relative_to(base):
        raise fail("is outside the claims file's folder")
    if not target.is_file():
        raise fail("is not a file")
    if target.stat().st_size > MAX_PATCH:
        raise fail(f"is larger than {MAX_PATCH} bytes")
    try:
        return target.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"cannot be read: {exc}") from None
