"""Dead code: vulture over the whole package, ``agent/`` included, finds no unused function,
method, class, property, import or unreachable code.

Only the package counts as a use: a function that only a test calls is dead. Unused variables
and attributes are reported only at vulture's full confidence (an unused argument or local):
at lower confidence they are pydantic fields and dataclass fields, read by serialisation
rather than by name. False positives that are used from outside the package are listed in
``dead_code_whitelist.py``.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import vulture

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reprobridge_sdk"
WHITELIST = Path(__file__).resolve().parent / "dead_code_whitelist.py"
#: Called by a framework, not by name: pydantic validators, click commands and groups.
IGNORE_DECORATORS = [
    "@field_validator",
    "@model_validator",
    "@click.command",
    "@click.group",
    "@*.command",
    "@*.group",
]
#: Module hooks (PEP 562).
IGNORE_NAMES = ["__getattr__", "__dir__"]
#: Types reported from vulture's lowest confidence (60%); the others only at 100%.
ALWAYS = {"function", "method", "class", "property", "import", "unreachable_code"}


def _dead() -> list[str]:
    scan = vulture.Vulture(ignore_names=IGNORE_NAMES, ignore_decorators=IGNORE_DECORATORS)
    scan.scavenge([str(PACKAGE), str(WHITELIST)])
    found = []
    for item in scan.get_unused_code(min_confidence=60):
        path = Path(item.filename).resolve()
        if path == WHITELIST:
            continue
        if item.typ in ALWAYS or item.confidence >= 100:
            found.append(item.get_report(add_size=False))
    return found


def test_no_dead_code() -> None:
    dead = _dead()
    assert dead == [], "remove it, or list a false positive in dead_code_whitelist.py:\n" + (
        "\n".join(dead)
    )


def test_every_whitelist_entry_exists() -> None:
    """The whitelist's references are real: importing it fails on a stale entry."""
    module = importlib.import_module("dead_code_whitelist")
    assert module.ArtifactDir.add_task is not None


def test_the_check_finds_a_planted_dead_function(tmp_path: Path) -> None:
    """The same scan, on a copy of one module with an unused function added, reports it."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        (PACKAGE / "findings.py").read_text() + "\n\ndef never_called_anywhere() -> None:\n"
        "    return None\n"
    )
    scan = vulture.Vulture(ignore_names=IGNORE_NAMES, ignore_decorators=IGNORE_DECORATORS)
    scan.scavenge([str(PACKAGE), str(planted)])
    names = {item.name for item in scan.get_unused_code(min_confidence=60)}
    assert "never_called_anywhere" in names
