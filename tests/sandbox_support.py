"""Whether the tests that need the runner's sandbox run here.

Where the sandbox cannot run (no bubblewrap, no user namespaces) those tests skip with the
reason, except where ``REPROBRIDGE_REQUIRE_SANDBOX=1`` (CI sets it): there they run and fail,
so that a missing sandbox never passes unnoticed.
"""

from __future__ import annotations

import os

import pytest

from reprobridge_sdk.run.sandbox import check_sandbox

#: Why the sandbox cannot run here, or None.
SANDBOX_PROBLEM = check_sandbox()
#: Whether the tests that need the sandbox skip here.
SKIP_SANDBOX = SANDBOX_PROBLEM is not None and os.environ.get("REPROBRIDGE_REQUIRE_SANDBOX") != "1"
#: Marks a test that needs the sandbox.
needs_sandbox = pytest.mark.skipif(
    SKIP_SANDBOX, reason=f"the sandbox cannot run here: {SANDBOX_PROBLEM}"
)
