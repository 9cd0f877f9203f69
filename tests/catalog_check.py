"""Check files as an editor with SchemaStore's catalog would: the entry whose ``fileMatch``
picks the file names the schema, and check-jsonschema (an independent validator) applies it.

The catalog is ``schemas/catalog/schemastore.json``; its URLs are ``$id`` values of committed
schemas, read from ``schemas/`` (no network). Used by the tests of every executor's records.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CATALOG = REPO / "schemas" / "catalog" / "schemastore.json"

__all__ = ["CATALOG", "catalog_schema", "check_as_catalogued", "file_match"]


def file_match(pattern: str) -> re.Pattern[str]:
    """SchemaStore's ``fileMatch`` semantics (minimatch, matched against the path's end)."""
    out = ""
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out, index = out + "(?:.*/)?", index + 3
        elif pattern[index] == "*":
            out, index = out + "[^/]*", index + 1
        else:
            out, index = out + re.escape(pattern[index]), index + 1
    return re.compile(rf"(?:^|.*/){out}$")


def catalog_schema(path: Path) -> Path:
    """The committed schema file the catalog maps ``path`` to (exactly one entry matches)."""
    ids = {json.loads(p.read_text())["$id"]: p for p in (REPO / "schemas").glob("*.json")}
    entries = json.loads(CATALOG.read_text())["schemas"]
    posix = path.as_posix()
    found = [e for e in entries if any(file_match(p).match(posix) for p in e["fileMatch"])]
    assert len(found) == 1, (posix, [e["name"] for e in found])
    return ids[found[0]["url"]]


def check_as_catalogued(files: list[Path]) -> dict[str, list[str]]:
    """check-jsonschema's errors per file, each file against the schema the catalog maps it to
    (one call per schema; a file without errors maps to an empty list)."""
    by_schema: dict[Path, list[Path]] = {}
    for path in files:
        by_schema.setdefault(catalog_schema(path), []).append(path)
    errors: dict[str, list[str]] = {str(path): [] for path in files}
    for schema, group in by_schema.items():
        command = [sys.executable, "-m", "check_jsonschema", "--schemafile", str(schema)]
        proc = subprocess.run(
            [*command, "-o", "json", *map(str, group)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        report: dict[str, Any] = json.loads(proc.stdout)
        assert report.get("parse_errors", []) == [], report
        for error in report.get("errors", []):
            errors[error["filename"]].append(f"{error['path']}: {error['message']}")
    return errors
