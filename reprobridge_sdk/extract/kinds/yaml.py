"""The ``yaml`` kind: a dotted key path into a YAML file, list items by index (spec §6.9)."""

from __future__ import annotations

import re
from typing import Any

from reprobridge_sdk.extract._errors import REASONS, ExtractionError, Reason
from reprobridge_sdk.extract._numbers import as_number
from reprobridge_sdk.io import safefs

from ._base import Extracted, Kind, Request, cached

__all__ = ["KIND"]

BAD_YAML = Reason("bad-yaml", "X001")
_INDEX = re.compile(r"-?\d+")


def _read_yaml(request: Request) -> Any:
    import yaml  # noqa: PLC0415 - only YAML extractors pay for it

    from reprobridge_sdk.io.document import MAX_DEPTH, nests_too_deep  # noqa: PLC0415

    file = request.file
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        text = file.read_bytes(safefs.MAX_EVIDENCE_BYTES).decode("utf-8", "replace")
        if nests_too_deep(text):
            msg = f"{file.name} nests deeper than {MAX_DEPTH} levels"
            raise ExtractionError(BAD_YAML, msg)
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except safefs.UnsafeFileError as exc:
        raise ExtractionError(BAD_YAML, f"{file.name}: {exc.message}") from None
    except yaml.YAMLError as exc:
        raise ExtractionError(BAD_YAML, f"{file.name} is not valid YAML: {exc}") from None


def _step(current: Any, part: str, key: str) -> Any:
    if isinstance(current, dict) and part in current:
        return current[part]
    if isinstance(current, list) and _INDEX.fullmatch(part):
        position = int(part)
        if not -len(current) <= position < len(current):
            msg = f"YAML key {key!r}: no item {part} in a list of {len(current)}"
            raise ExtractionError("no-match", msg)
        return current[position]
    raise ExtractionError("no-match", f"YAML key {key!r}: no {part!r}")


def read(request: Request) -> Extracted:
    current = cached(request.entries, ("yaml",), lambda: _read_yaml(request))
    key = str(request.spec["key"])
    for part in key.split("."):
        current = _step(current, part, key)
    return request.one(*as_number(current, f"YAML key {key!r}"))


KIND = Kind("yaml", "YamlExtractor", read, (BAD_YAML, REASONS["no-match"], REASONS["not-number"]))
