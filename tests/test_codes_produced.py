"""Every registered finding code is produced by at least one test (see ``code_census``).

New codes join the check by being registered: the registry is the list of what must be
produced. The check needs the census of the whole suite, so it runs last, and only when the
whole suite was collected with nothing deselected (``pytest`` or ``pytest tests``); run on part
of the suite, it is skipped and the summary says why.
"""

from __future__ import annotations

import code_census
import pytest

from reprobridge_sdk.findings import registry


def test_every_registered_code_is_produced() -> None:
    reason = code_census.complete()
    if reason is not None:
        pytest.skip(f"the census needs the whole suite: {reason}")
    missing = sorted(set(registry()) - set(code_census.PRODUCED))
    assert missing == [], f"registered codes no test produces in process: {missing}"


def test_the_census_records_findings_built_in_a_test(request: pytest.FixtureRequest) -> None:
    from reprobridge_sdk.findings import finding

    finding("V001", "recorded by the census")
    assert request.node.nodeid in code_census.PRODUCED["V001"]
