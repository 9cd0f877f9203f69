"""Same seed, same value: the Reproducer's check before any reference run is taken.

After a seeded smoke launcher passes, it runs once more with the same seed. The numbers
after the claims' labels (in the lines that carry them; the whole line when no number
follows) must be the same in both runs; otherwise the
references would record noise as if it were the code's value. The likely cause is found by
trying, in order, the recorded environment settings that remove a known cause, each gated
by two more runs with the seed that must agree:

* ``PYTHONHASHSEED=0``: hash randomisation (``hash()`` of a ``str`` and so the iteration
  order of a set or dict of strings change from one process to the next);
* ``OMP_NUM_THREADS=1`` and its BLAS siblings: thread nondeterminism (reductions summed in
  another order).

A setting that makes the runs agree is kept (B045, warning): every launcher of the script
sets it in its environment, and a decision in the guide says what was seen and why. None
helps: B046 (warning), the likely cause is an unseeded generator, and the runs stay as
they are. A launcher without a seed or a claim without a label is not checked: an unseeded
run is expected to vary, and without a label there is no line known to carry the value
(other lines may print times).
"""

from __future__ import annotations

import re

from reprobridge_sdk.agent._smoke import RunOutcome, _labelled, _passes, _Phase, _values
from reprobridge_sdk.agent.gates import build_finding
from reprobridge_sdk.model.build import LauncherPlan
from reprobridge_sdk.model.guide import Ambiguity

__all__ = ["SETTINGS", "same_seed", "same_seed_decision_id"]

#: The environment settings tried, in order: (cause, variables).
SETTINGS: tuple[tuple[str, dict[str, str]], ...] = (
    ("hash randomisation", {"PYTHONHASHSEED": "0"}),
    (
        "thread nondeterminism",
        {
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "NUMEXPR_NUM_THREADS": "1",
        },
    ),
)


def same_seed_decision_id(script: str) -> str:
    """The id of the guide decision that fixes ``script``'s runs of one seed."""
    slug = re.sub(r"[^a-z0-9]+", "-", script.lower()).strip("-") or "script"
    return f"same-seed-{slug}"[:64].rstrip("-")


def _agree(state: _Phase, launcher: LauncherPlan, labels: list[str]) -> bool:
    """Two runs of ``launcher`` with its first seed: both pass and print the same lines."""
    first = state.run(launcher)
    second = state.run(launcher) if _passes(first, labels) else first
    for outcome in (first, second) if second is not first else (first,):
        status = outcome.exit_status
        state.attempt(
            launcher, outcome, None if status == 0 else f"same-seed run: exit status {status}"
        )
    ok = _passes(first, labels) and _passes(second, labels)
    return ok and _values(first, labels) == _values(second, labels)


def _lines(first: RunOutcome, second: RunOutcome, labels: list[str]) -> list[str]:
    return ["; ".join(_labelled(outcome, labels))[:200] for outcome in (first, second)]


def same_seed(
    state: _Phase, smoke: LauncherPlan, passed: RunOutcome, labels: list[str], tasks: list[str]
) -> list[Ambiguity]:
    """Run ``smoke`` again with its seed; diagnose and fix a difference (see the module)."""
    current = state.launchers[smoke.id]
    if current.seed_flag is None or not current.seeds or not labels:
        return []
    seed = current.seeds[0]
    again = state.run(current)
    state.attempt(
        current,
        again,
        None if again.exit_status == 0 else f"same-seed run: exit status {again.exit_status}",
    )
    if not _passes(again, labels) or _values(again, labels) == _values(passed, labels):
        return []
    seen = _lines(passed, again, labels)
    for cause, variables in SETTINGS:
        if all(current.env.get(key) == value for key, value in variables.items()):
            continue
        trial = current.model_copy(update={"env": {**current.env, **variables}})
        if not _agree(state, trial, labels):
            continue
        setting = " ".join(f"{key}={value}" for key, value in variables.items())
        for item in list(state.launchers.values()):
            if item.script == current.script and item.workdir == current.workdir:
                state.launchers[item.id] = item.model_copy(
                    update={"env": {**item.env, **variables}}
                )
        state.findings.append(
            build_finding(
                "B045",
                f"two smoke runs of {current.id!r} with seed {seed} printed different values "
                f"({seen[0]!r}, then {seen[1]!r}); the likely cause is {cause}: with {setting} "
                "two runs agree, and every launcher of the script sets it",
            )
        )
        return [
            Ambiguity(
                id=same_seed_decision_id(current.script),
                source=f"smoke runs of {current.id}",
                gap=(
                    f"two runs of {current.script} with seed {seed} printed {seen[0]!r} and "
                    f"{seen[1]!r}: the seed alone does not fix the value ({cause})"
                ),
                resolution=(
                    f"every launcher of {current.script} sets {setting} in its environment "
                    f"(a correctness decision, not a change to the code); with it two runs "
                    f"with seed {seed} printed the same values"
                ),
                sensitivity="medium",
                tasks=tasks,
            )
        ]
    tried = ", ".join(
        " ".join(f"{k}={v}" for k, v in variables.items()) for _, variables in SETTINGS
    )
    state.findings.append(
        build_finding(
            "B046",
            f"two smoke runs of {current.id!r} with seed {seed} printed different values "
            f"({seen[0]!r}, then {seen[1]!r}), also with {tried}: the likely cause is an "
            "unseeded generator; the reference runs will measure that noise",
            hint="seed every generator the script uses from its seed, then "
            "'reprobridge code record' the change",
        )
    )
    return []
