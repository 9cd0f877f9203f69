"""The registry of finding codes: one source, equal copies, codes used in code are registered."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from reprobridge_sdk.findings import Severity, finding, registry

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


def test_every_entry_has_its_contexts_pointer_and_lifecycle(repo_root: Path) -> None:
    """The registry's own check (spec/tools/registry.py): complete entries, copies equal."""
    sys.path.insert(0, str(repo_root / "spec" / "tools"))
    try:
        import registry as tool
    finally:
        sys.path.remove(str(repo_root / "spec" / "tools"))
    data = json.loads((repo_root / "validators" / "codes.json").read_text("utf-8"))
    assert tool.problems(data) == []
    assert tool.completed(data) == data  # nothing left for a completion to fill


def test_a_new_entry_is_completed_from_its_family(repo_root: Path) -> None:
    sys.path.insert(0, str(repo_root / "spec" / "tools"))
    try:
        import registry as tool
    finally:
        sys.path.remove(str(repo_root / "spec" / "tools"))
    entry = {"code": "E099", "name": "n", "severity": "warning", "status": "preview"}
    done = tool.complete({**entry, "since": "1.1", "spec": "runner.md#runner", "summary": "s"})
    assert done["contexts"] == {"run": "warning"}
    assert done["pointer"] == tool.FAMILY_POINTERS["E"]
    assert list(done) == list(tool.KEYS)
    assert tool.problems({"codes": [done]}) == []
    broken = {**done, "contexts": {"validation": "warning", "run": "error"}}
    assert tool.problems({"codes": [broken]}) == [
        "E099: severity is not the most severe of its contexts"
    ]


def test_a_code_takes_the_severity_of_its_context() -> None:
    info = registry()["D015"]
    assert info.severity is Severity.ERROR
    assert info.severity_in("validation") is Severity.WARNING
    assert info.severity_in("run") is Severity.ERROR
    assert finding("D015", "m", context="validation").severity is Severity.WARNING
    assert finding("D015", "m").severity is Severity.ERROR
    assert info.pointer == "the data item's `source/url`"
