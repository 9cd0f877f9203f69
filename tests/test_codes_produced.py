"""Every registered finding code is produced by at least one test (see ``code_census``).

New codes join the check by being registered: the registry is the list of what must be
produced. The check needs the census of the whole suite, so it runs last, and only when the
whole suite was collected with nothing deselected (``pytest`` or ``pytest tests``); run on part
of the suite, it is skipped and the summary says why.

A code counts as produced when a test builds its finding in process or in a subprocess it
starts (the CLI, a driver script): see ``code_census``. There is no list of exemptions but
one: a code that no module of the package names yet (registered ahead of the code that will
emit it) cannot be produced; it is exempt until a module names it, and then it must be
produced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import code_census
import pytest


def test_every_registered_code_is_produced(request: pytest.FixtureRequest) -> None:
    if hasattr(request.config, "workerinput"):
        pytest.skip(
            "a pytest-xdist worker sees only its own tests: the controller checks the census"
        )
    reason = code_census.complete()
    if reason is not None:
        pytest.skip(f"the census needs the whole suite: {reason}")
    missing = code_census.missing(code_census.emitted(), code_census.PRODUCED)
    assert missing == [], f"codes the package emits that no test produces: {missing}"


def test_a_code_that_no_test_produces_fails_the_census() -> None:
    emitted = code_census.emitted()
    everything = {code: {"tests/test_x.py::test_x"} for code in emitted}
    assert code_census.missing(emitted, everything) == []
    # one code that no test produced, and one whose set of tests is empty
    produced = {code: tests for code, tests in everything.items() if code != "B016"}
    produced["A023"] = set()
    assert code_census.missing(emitted, produced) == ["A023", "B016"]
    assert code_census.missing(emitted, {}) == sorted(emitted)


def test_the_census_records_findings_built_in_a_test(request: pytest.FixtureRequest) -> None:
    from reprobridge_sdk.findings import finding

    finding("V001", "recorded by the census")
    assert request.node.nodeid in code_census.PRODUCED["V001"]


def test_the_census_records_codes_produced_in_a_subprocess(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # Y010 (no rra.yaml) is built only by the CLI process here, never in this one.
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "validate", str(tmp_path), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    [artifact] = json.loads(done.stdout)["artifacts"]
    assert (done.returncode, [f["code"] for f in artifact["findings"]]) == (1, ["Y010"])
    assert os.environ[code_census.HOOK]
    code_census.harvest()
    assert request.node.nodeid in code_census.PRODUCED["Y010"]


PROBE = (
    "import reprobridge_sdk.findings as f; "
    "f.finding('V001', 'probe'); "
    "print(hasattr(f.Finding, '__post_init__'))"
)


def test_the_sdk_hook_is_off_without_its_variable(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != code_census.HOOK}
    off = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    assert off.stdout.split() == ["False"]
    census = tmp_path / "codes"
    on = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**env, code_census.HOOK: str(census)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert on.stdout.split() == ["True"]
    assert census.read_text("ascii").split() == ["V001"]


def test_the_codes_named_in_the_package_are_found() -> None:
    named = code_census.named_in_the_package()
    assert {"A023", "E009", "Y005", "N006", "B016"} <= named


def test_the_censuses_of_xdist_workers_add_up_to_the_suites() -> None:
    """Each worker runs part of the suite: the controller's census is the union of theirs, and
    a code produced by no worker is still missing."""
    first = code_census.export({"V001": {"tests/a.py::test_a"}, "Y010": {"tests/a.py::test_b"}})
    second = code_census.export({"V001": {"tests/b.py::test_c"}})
    produced: dict[str, set[str]] = {}
    incomplete: list[str] = []
    for exported in (first, second):
        exported["incomplete"] = []
        code_census.merge(exported, produced, incomplete)
    assert produced == {
        "V001": {"tests/a.py::test_a", "tests/b.py::test_c"},
        "Y010": {"tests/a.py::test_b"},
    }
    assert code_census.missing({"V001", "Y010", "A023"}, produced) == ["A023"]
    code_census.merge(
        {"produced": {}, "incomplete": ["3 tests were deselected"]}, produced, incomplete
    )
    assert incomplete == ["3 tests were deselected"]
