"""The cyclic garbage collector belongs to the program, not to the library: no module of the
package outside the command line switches or tunes it, and the command line sets its
thresholds once, at its entry. The library's results do not depend on the collector."""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobridge_sdk.audit import audit
from reprobridge_sdk.cli import GC_THRESHOLD, main
from reprobridge_sdk.validation import validate

PACKAGE = Path(__file__).resolve().parents[2] / "reprobridge_sdk"
#: The collector's switches and knobs.
SWITCHES = {"disable", "enable", "set_threshold", "freeze", "unfreeze"}


def _gc_calls(path: Path) -> list[str]:
    """``gc.<switch>`` uses in one module, by its syntax tree (``import gc`` and ``from gc``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "gc"
            and node.attr in SWITCHES
        ):
            found.append(f"{path.name}:{node.lineno}: gc.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "gc":
            found.append(f"{path.name}:{node.lineno}: from gc import ...")
    return found


def test_only_the_command_line_touches_the_collector() -> None:
    found = [
        use
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(PACKAGE / "cli")
        for use in _gc_calls(path)
    ]
    assert found == []
    assert _gc_calls(PACKAGE / "cli" / "__init__.py") == ["__init__.py:" + _entry_line()]


def _entry_line() -> str:
    """The one line of ``cli/__init__.py`` that sets the thresholds (found, not hard-coded)."""
    text = (PACKAGE / "cli" / "__init__.py").read_text(encoding="utf-8").splitlines()
    (number,) = [i for i, line in enumerate(text, 1) if "gc.set_threshold(" in line]
    return f"{number}: gc.set_threshold"


def test_the_planted_switch_is_found(tmp_path: Path) -> None:
    """The same walk, on a copy of a module with a switch added, reports it."""
    copy = tmp_path / "planted.py"
    text = (PACKAGE / "findings.py").read_text() + "\n\ndef _f() -> None:\n    gc.disable()\n"
    copy.write_text(text)
    assert _gc_calls(copy) == [f"planted.py:{len(text.splitlines())}: gc.disable"]


@pytest.fixture
def threshold() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_the_command_line_sets_the_thresholds_once_at_its_entry(threshold: None) -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert gc.get_threshold() == GC_THRESHOLD
    assert gc.isenabled()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_library_leaves_the_collector_as_it_was(toy: Path, enabled: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        result = audit(toy)
        assert gc.isenabled() is enabled
        report = validate([toy])
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert {t.attempts[0].verdict for t in result.tasks} == {"compatible"}
    assert report.artifacts[0].findings is not None


def test_the_report_is_the_same_with_the_collector_off(toy: Path) -> None:
    running = audit(toy)
    gc.disable()
    try:
        paused = audit(toy)
    finally:
        gc.enable()
    assert paused.model_dump() == running.model_dump()
