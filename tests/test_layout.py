"""The test tree collects in any order: no two test modules share a file name.

The test folders are not packages, so pytest imports each module under its bare file name; a
second ``test_x.py`` in another folder fails the whole collection ("import file mismatch").
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_name() -> None:
    names = Counter(
        path.name
        for path in TESTS.rglob("*.py")
        if path.name != "conftest.py"  # pytest imports each conftest under its folder
        and "vectors" not in path.parts
        and "fixtures" not in path.parts
    )
    assert sorted(name for name, count in names.items() if count > 1) == []
