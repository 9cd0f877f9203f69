"""The registry of finding codes: one source, equal copies, codes used in code are registered."""

from __future__ import annotations

import json
import re
from pathlib import Path

from reprobridge_sdk.findings import registry

PACKAGE = Path(__file__).resolve().parents[2] / "reprobridge_sdk"


def test_language_neutral_copy_equals_the_package_copy(repo_root: Path) -> None:
    shipped = json.loads((PACKAGE / "_data" / "codes.json").read_text("utf-8"))
    neutral = json.loads((repo_root / "validators" / "codes.json").read_text("utf-8"))
    assert neutral == shipped


def test_registry_entries_are_well_formed() -> None:
    codes = registry()
    names = [info.name for info in codes.values()]
    assert len(names) == len(set(names))
    for code, info in codes.items():
        assert re.fullmatch(r"[A-Z]\d{3}", code), code
        assert info.status in {"stable", "preview", "deprecated", "removed"}
        assert re.fullmatch(r"\d+\.\d+", info.since)
        assert info.summary


def test_every_code_used_in_the_sdk_is_registered() -> None:
    used: set[str] = set()
    pattern = re.compile(r"""(?:finding|_finding|_emit|code)\(\s*["']([A-Z]\d{3})["']""")
    for path in PACKAGE.rglob("*.py"):
        used.update(pattern.findall(path.read_text("utf-8")))
    missing = sorted(used - set(registry()))
    assert not missing, missing
