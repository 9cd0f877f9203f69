"""Why a run failed: its failure reason, the first one found winning (the priority is
``spec/runner.md#runner``, Status), and the status that follows from it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from reprobridge_sdk.model.evidence import Failure

if TYPE_CHECKING:
    from .process import ProcessOutcome

__all__ = ["failure_reason", "process_failure", "run_status"]


def failure_reason(current: Failure | None, reason: str, detail: str, last: str | None) -> Failure:
    """``current`` if the run already failed, else a failure for ``reason``."""
    if current is not None:
        return current
    return Failure(reason=reason, detail=detail, last_landmark=last)


def process_failure(
    outcome: ProcessOutcome, *, shell: bool, timeout: float | None, last: str | None
) -> Failure | None:
    """The failure the launcher's process ended with, if any."""
    if outcome.cancelled:
        return Failure(reason="interrupted", detail="stopped by the user", last_landmark=last)
    if outcome.not_found is not None:
        return Failure(reason="command-not-found", detail=outcome.not_found)
    if shell and outcome.exit_code == 127:
        return Failure(
            reason="command-not-found",
            detail="the shell could not find the command (exit 127)",
            last_landmark=last,
        )
    if outcome.timed_out:
        return Failure(reason="timeout", detail=f"stopped after {timeout} s", last_landmark=last)
    if outcome.exit_code != 0:
        return Failure(
            reason="exit-status", detail=f"exit status {outcome.exit_code}", last_landmark=last
        )
    return None


def run_status(failure: Failure | None) -> Literal["succeeded", "interrupted", "failed"]:
    if failure is None:
        return "succeeded"
    if failure.reason == "interrupted":
        return "interrupted"
    return "failed"
