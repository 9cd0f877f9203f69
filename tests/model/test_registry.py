"""The registry of finding codes: one source, equal copies, codes used in code are registered."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

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
    # why and fix have no family default: a new entry is incomplete until they are written.
    assert list(done) == [key for key in tool.KEYS if key not in tool.USER_TEXTS]
    assert tool.problems({"codes": [done]}) == ["E099: missing why, fix"]
    done = tool.complete({**done, "why": "It matters.", "fix": "Fix the field."})
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


def _tool(repo_root: Path) -> ModuleType:
    sys.path.insert(0, str(repo_root / "spec" / "tools"))
    try:
        import registry as tool
    finally:
        sys.path.remove(str(repo_root / "spec" / "tools"))
    return tool


def _entry(code: str, why: object = "It matters.", fix: object = "Fix it.") -> dict[str, object]:
    return {
        "code": code,
        "name": code.lower(),
        "severity": "error",
        "contexts": {"run": "error"},
        "status": "preview",
        "since": "1.1",
        "spec": "runner.md#runner",
        "pointer": '`""`',
        "summary": "s",
        "why": why,
        "fix": fix,
    }


def test_every_code_says_why_it_matters_and_how_to_fix_it() -> None:
    """Each registered code carries its own why and fix texts, as the SARIF help needs."""
    for code, info in registry().items():
        assert info.why.strip() and len(info.why) <= 200, code
        assert info.fix.strip() and len(info.fix) <= 200, code
        assert info.why not in (info.fix, info.summary), code


def test_an_entry_without_why_or_fix_is_refused(repo_root: Path) -> None:
    tool = _tool(repo_root)
    lacking = {key: value for key, value in _entry("E090").items() if key != "fix"}
    assert tool.problems({"codes": [lacking]}) == ["E090: missing fix"]
    empty = _entry("E091", why="  ", fix="")
    assert tool.problems({"codes": [empty]}) == [
        "E091: the why text is empty",
        "E091: the fix text is empty",
    ]
    not_text = _entry("E092", fix=None)
    assert tool.problems({"codes": [not_text]}) == ["E092: the fix text is empty"]
    too_long = _entry("E093", why="x" * 201)
    assert tool.problems({"codes": [too_long]}) == [
        "E093: the why text is longer than 200 characters"
    ]


def test_boilerplate_shared_by_more_than_three_codes_is_refused(repo_root: Path) -> None:
    tool = _tool(repo_root)
    three = [_entry(f"E09{n}", why=f"Reason {n}.", fix="Run the command again.") for n in range(3)]
    assert tool.problems({"codes": three}) == []
    # Spacing and case do not make a text particular.
    fourth = _entry("E093", why="Reason 3.", fix="run the  command AGAIN.")
    assert tool.problems({"codes": [*three, fourth]}) == [
        "E090, E091, E092, E093: one fix text on 4 codes (at most 3); say what is particular "
        "to each"
    ]
    same_why = [_entry(f"E09{n}", why="It matters.", fix=f"Fix {n}.") for n in range(4)]
    assert tool.problems({"codes": same_why}) == [
        "E090, E091, E092, E093: one why text on 4 codes (at most 3); say what is particular "
        "to each"
    ]


def test_the_check_fails_on_a_registry_that_lacks_the_texts(
    repo_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command line check exits 1 and names the code (a copy; the real files untouched)."""
    tool = _tool(repo_root)
    data = json.loads((repo_root / "validators" / "codes.json").read_text("utf-8"))
    first = data["codes"][0]
    del first["why"]
    text = tool.render(data)
    copies = (tmp_path / "a.json", tmp_path / "b.json")
    for path in copies:
        path.write_text(text, "utf-8")
    monkeypatch.setattr(tool, "COPIES", copies)
    assert tool.main(["--check"]) == 1
    assert capsys.readouterr().out == f"registry: {first['code']}: missing why\n"
