"""Phase gates: what must hold before the build moves on, as findings of family ``B``.

A gate passes when none of its findings is an error; warnings and infos are kept in the
phase record and the build report. Codes and severities come from the one registry
(``codes.json``); a gate never invents a code.

The gates of the phases, each checked where the phase's facts are:

* Intake: every claim's hinted script and command exist (B002).
* Planner: every claim has a plan or an explicit reason why not (B004); at least one claim
  is planned (B049); a claim's seeds
  without a statistic (B017) are a warning.
* Builder: the requirements resolve (B005) and the entry modules import in the built
  environment (B006).
* Reproducer: each smoke launcher exits 0 and reaches its landmarks (B007); a proposed fix
  that does not make the error go away is rejected (B008) and never recorded; a statistic
  over seeds of a script that took no seed and got no seed option is B018 (a warning).
* Distiller: the number is found (B009) and every extractor replays on its samples (B010).
* Packager: ``validate --strict`` finds no error (B011).
* Independent Reviewer: the clean-room check passes (B012).
"""

from __future__ import annotations

from collections.abc import Iterable

from reprobridge_sdk.findings import finding
from reprobridge_sdk.model.build import BuildFinding, Gate

__all__ = ["build_finding", "gate_from", "passed"]


def build_finding(
    code: str, message: str, *, path: str = "", hint: str | None = None
) -> BuildFinding:
    """A build finding of a registered code (severity from the registry)."""
    item = finding(code, message, path=path, hint=hint)
    return BuildFinding(
        code=item.code, severity=item.severity.value, message=message, path=path, hint=hint
    )


def gate_from(findings: Iterable[BuildFinding]) -> Gate:
    """A gate that passes unless one of ``findings`` is an error."""
    items = list(findings)
    return Gate(passed=not any(item.severity == "error" for item in items), findings=items)


def passed() -> Gate:
    """A gate with nothing to report."""
    return Gate(passed=True)
