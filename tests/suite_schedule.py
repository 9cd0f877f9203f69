"""The order in which pytest-xdist hands the suite's files to its workers (``--dist loadfile``).

pytest-xdist sends one file at a time to a worker that is running low, in the order of the
files' number of tests. A file with few tests can still take minutes (it builds environments
or runs real examples): sent last, it runs alone on one worker while the other has finished,
and the suite's wall time grows by that file's time. Here the files known to take longest go
first, longest first, so the short files fill in around them at the end.

The build agent's end-to-end file is split by fixture: the tests of one fixture are one unit
(they share its build), so the fixtures' builds spread over the workers instead of holding one
worker for all of them.

A stale or missing weight costs only time, never a test: every file still runs, whole, on one
worker, as before.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from xdist.scheduler import LoadFileScheduling

#: Files whose tests are split into one unit per parameter (the text in ``[...]``).
SPLIT_BY_PARAMETER = frozenset({"tests/agent/test_build_e2e.py"})

#: Seconds a unit took, measured on a loaded two-core machine: only their order matters. A
#: unit not named here counts as 0 (it keeps pytest-xdist's place, after these).
WEIGHTS: dict[str, float] = {
    "tests/audit/test_committee_example_batch.py": 1800,
    "tests/run/test_executors.py": 900,
    "tests/authoring/test_archive_commands.py": 680,
    "tests/bench/test_harness.py": 600,
    "tests/agent/test_distiller_packager_gates.py": 275,
    "tests/agent/test_build_era.py": 270,
    "tests/bench/test_report.py": 210,
    "tests/authoring/test_same_seed_suggestion.py": 200,
    "tests/agent/test_builder.py": 200,
    "tests/agent/test_build_failure.py": 170,
    "tests/test_benchmark_quick.py": 150,
    "tests/bench/test_records.py": 150,
    "tests/agent/test_build_e2e.py": 130,  # each fixture's unit (2,500 for the nineteen)
    "tests/agent/test_build_resume.py": 120,
    "tests/examples/test_digits_logreg.py": 110,
    "tests/agent/test_pipeline.py": 85,
    "tests/conformance/test_audit_cases.py": 75,
    "tests/test_build_corpus.py": 70,
    "tests/run/test_runner_faults.py": 70,
    "tests/agent/test_reviewer.py": 100,
    "tests/audit/test_facts.py": 45,
}


def scope(nodeid: str) -> str:
    """The unit of ``nodeid``: its file, or its file and parameter in a split file."""
    path = nodeid.split("::", 1)[0]
    if path in SPLIT_BY_PARAMETER and nodeid.endswith("]") and "[" in nodeid:
        return f"{path}[{nodeid[nodeid.index('[') + 1 : -1]}]"
    return path


def weight(unit: str) -> float:
    """The measured seconds of ``unit`` (a split file's unit weighs as its file says)."""
    return WEIGHTS.get(unit.split("[", 1)[0], 0.0)


def heaviest_to_front(queue: OrderedDict[str, Any]) -> None:
    """Move the first of the heaviest units of ``queue`` to its front (ties keep their order)."""
    queue.move_to_end(max(queue, key=weight), last=False)


class HeaviestFirst(LoadFileScheduling):
    """``--dist loadfile``, heaviest unit first."""

    def _split_scope(self, nodeid: str) -> str:
        return scope(nodeid)

    def _assign_work_unit(self, node: Any) -> None:
        heaviest_to_front(self.workqueue)
        super()._assign_work_unit(node)
