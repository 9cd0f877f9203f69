"""Write the audit-report conformance cases (``validators/audit-cases/cases/``).

Usage: ``python spec/tools/build_audit_cases.py [--out DIR]`` from the repository root. The
cases are data and are committed; this script is how they were authored (digests computed,
records written as a runner writes them) and regenerates them byte for byte. The expected
report fields are written here by hand from the specification (``spec/audit.md`` and
``spec/runner.md#evidence``), never from an auditor's output. Interval bounds are the
formulas of spec §11 with t(0.975, 4) = 2.7764451 (worked by hand and by SciPy).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _audit_kit import Case, Run, honest, rewrite_log, run_id, write_case

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "validators" / "audit-cases"

ACC = "/tasks/[id=acc]"
F1 = "/tasks/[id=f1]"
S0 = f"/attempts/0/runs/[run={run_id('train-s0')}]/findings"
# m = 90, s = sqrt(2.5), h = 2.7764451 * 1.5811388 * sqrt(1.2) = 4.8089440 (floor 0.9 unused)
BASE_HALF_WIDTH = 4.808943986628495


def _field(pointer: str, value: Any, tolerance: float | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"pointer": pointer, "value": value}
    if tolerance is not None:
        item["tolerance"] = tolerance
    return item


def _codes(pointer: str, codes: list[str], *, includes: bool = False) -> dict[str, Any]:
    item: dict[str, Any] = {"pointer": pointer, "codes": codes}
    if includes:
        item["match"] = "includes"
    return item


def _verdict(task: str, verdict: str, icml: str | None = None) -> list[dict[str, Any]]:
    out = [_field(f"{task}/attempts/0/verdict", verdict)]
    if icml is not None:
        out.append(_field(f"{task}/attempts/0/icml", icml))
    return out


def _badges(available: bool, functional: bool, reproduced: bool) -> list[dict[str, Any]]:
    return [
        _field("/badges/available", available),
        _field("/badges/functional", functional),
        _field("/badges/reproduced", reproduced),
    ]


def _all_runs() -> list[Run]:
    return [*honest(), *honest("smoke", (0,))]


def _refs(task: int, values: list[float]) -> Any:
    def change(data: dict[str, Any]) -> None:
        data["tasks"][task]["reference"]["observations"] = [
            {"value": v, "provenance": {"source": "artifact maintainers"}} for v in values
        ]

    return change


# --------------------------------------------------------------------------- verdicts


def verdict_cases() -> list[Case]:
    def no_reference(data: dict[str, Any]) -> None:
        del data["tasks"][0]["reference"]

    def unmeasured(data: dict[str, Any]) -> None:
        extra = dict(data["tasks"][0], id="extra")
        data["tasks"].append(extra)

    def smoke_three_seeds(data: dict[str, Any]) -> None:
        data["launchers"][1]["seeds"] = [0, 1, 2]

    def append_line(run_dir: Path) -> None:
        with (run_dir / "log.txt").open("a") as log:
            log.write("done\n")

    return [
        Case(
            "verdict-compatible",
            "Every run honest and every value inside its interval: compatible, all badges.",
            ["required", "verdict", "badge"],
            _all_runs(),
            0,
            fields=[
                *_verdict(ACC, "compatible", "verified"),
                _field(f"{ACC}/attempts/0/value", 90.1),
                _field(f"{ACC}/interval/defined", True),
                _field(f"{ACC}/interval/n", 5),
                _field(f"{ACC}/interval/mean", 90.0),
                _field(f"{ACC}/interval/half_width", BASE_HALF_WIDTH, 1e-6),
                _field(f"{ACC}/interval/low", 90.0 - BASE_HALF_WIDTH, 1e-6),
                _field(f"{ACC}/interval/high", 90.0 + BASE_HALF_WIDTH, 1e-6),
                _field(f"{ACC}/interval/floor_bound", False),
                _field(f"{ACC}/stable", True),
                *_verdict(F1, "compatible", "verified"),
                _field(f"{F1}/attempts/0/value", 89.1),
                *_badges(True, True, True),
                _field("/passed", True),
            ],
            codes=[_codes(f"{ACC}/attempts/0/reasons", []), _codes("/findings", [])],
        ),
        Case(
            "verdict-incompatible",
            "Honest runs whose values lie above the interval: incompatible (A029).",
            ["required", "verdict", "badge"],
            [
                *[Run(f"train-s{s}", seed=s, acc=95.0 + s / 10) for s in (0, 1, 2)],
                *honest("smoke", (0,)),
            ],
            1,
            fields=[
                *_verdict(ACC, "incompatible", "falsified"),
                _field(f"{ACC}/attempts/0/value", 95.1),
                *_verdict(F1, "compatible"),
                *_badges(True, True, False),
                _field("/passed", False),
            ],
            codes=[
                _codes(f"{ACC}/attempts/0/reasons", ["A029"]),
                _codes("/badges/reasons/reproduced", ["A029"]),
            ],
        ),
        Case(
            "verdict-toy-smoke",
            "Only smoke-scope runs, with every seed of the statistic: toy (A016).",
            ["required", "verdict", "badge"],
            honest("smoke"),
            1,
            manifest=smoke_three_seeds,
            fields=[*_verdict(ACC, "toy", "toy"), *_badges(True, False, False)],
            codes=[
                _codes(f"{ACC}/attempts/0/reasons", ["A016"]),
                _codes("/badges/reasons/functional", ["A024"]),
            ],
        ),
        Case(
            "verdict-toy-seeds",
            "The scored launcher ran two of the statistic's three seeds: toy (A017).",
            ["required", "verdict"],
            [*honest("train", (0, 1)), *honest("smoke", (0,))],
            1,
            fields=_verdict(ACC, "toy", "toy"),
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A017"])],
        ),
        Case(
            "verdict-not-executed",
            "An attempt without runs: not executed (A024); neither functional nor reproduced.",
            ["required", "verdict", "badge"],
            [],
            1,
            fields=[
                *_verdict(ACC, "not-executed", "inconclusive"),
                *_verdict(F1, "not-executed"),
                *_badges(True, False, False),
            ],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A024"])],
        ),
        Case(
            "verdict-not-executed-failed",
            "Every run failed: not executed, the runs' A021 as the reasons.",
            ["required", "verdict"],
            [
                *[Run(f"train-s{s}", seed=s, status="failed") for s in (0, 1, 2)],
                Run("smoke-s0", launcher="smoke", status="failed"),
            ],
            1,
            fields=_verdict(ACC, "not-executed", "inconclusive"),
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A021"] * 4)],
        ),
        Case(
            "verdict-invalid-evidence",
            "A log changed after its record (A004) taints every task of its launcher.",
            ["required", "verdict", "tampering"],
            [Run("train-s0", files=append_line), *_all_runs()[1:]],
            1,
            fields=[
                *_verdict(ACC, "invalid-evidence", "inconclusive"),
                *_verdict(F1, "invalid-evidence"),
                _field(f"/attempts/0/runs/[run={run_id('train-s0')}]/valid", False),
                _field("/passed", False),
            ],
            codes=[_codes(S0, ["A004"]), _codes(f"{ACC}/attempts/0/reasons", ["A004"])],
        ),
        Case(
            "verdict-inconclusive-unmeasured",
            "A task no launcher measures: inconclusive (A034); the validator's R006 withholds"
            " 'available'.",
            ["required", "verdict", "badge"],
            _all_runs(),
            1,
            manifest=unmeasured,
            fields=[
                *_verdict("/tasks/[id=extra]", "inconclusive", "inconclusive"),
                *_verdict(ACC, "compatible"),
                _field("/badges/available", False),
            ],
            codes=[
                _codes("/tasks/[id=extra]/attempts/0/reasons", ["A034"]),
                _codes("/badges/reasons/available", ["R006"]),
            ],
        ),
        Case(
            "interval-no-reference",
            "n = 0: no interval, the task is inconclusive (A025).",
            ["required", "interval", "verdict"],
            _all_runs(),
            1,
            manifest=no_reference,
            fields=[
                *_verdict(ACC, "inconclusive", "inconclusive"),
                _field(f"{ACC}/interval/defined", False),
                _field(f"{ACC}/interval/n", 0),
                _field(f"{ACC}/interval/low", None),
                _field(f"{ACC}/stable", None),
            ],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A025"])],
        ),
    ]


# --------------------------------------------------------------------------- interval


def interval_cases() -> list[Case]:
    def infinite_value(data: dict[str, Any]) -> None:
        data["launchers"][0]["measurements"][0]["extract"]["pattern"] = r"test accuracy: ([0-9.e]+)"

    return [
        Case(
            "interval-single-reference",
            "n = 1: the floor-only interval 90 +- 0.9, flagged (A026); 90.1 is compatible.",
            ["required", "interval"],
            _all_runs(),
            0,
            manifest=_refs(0, [90.0]),
            fields=[
                *_verdict(ACC, "compatible"),
                _field(f"{ACC}/interval/n", 1),
                _field(f"{ACC}/interval/floor_only", True),
                _field(f"{ACC}/interval/half_width", 0.9, 1e-9),
                _field(f"{ACC}/interval/low", 89.1, 1e-9),
                _field(f"{ACC}/interval/high", 90.9, 1e-9),
                _field(f"{ACC}/attempts/0/z", None),
                _field(f"{ACC}/attempts/0/p", None),
            ],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A026"])],
        ),
        Case(
            "interval-zero-spread",
            "Equal observations: s = 0, the floor sets h = 0.01 * 90.",
            ["required", "interval"],
            _all_runs(),
            0,
            manifest=_refs(0, [90.0, 90.0, 90.0]),
            fields=[
                *_verdict(ACC, "compatible"),
                _field(f"{ACC}/interval/sd", 0.0),
                _field(f"{ACC}/interval/floor_bound", True),
                _field(f"{ACC}/interval/half_width", 0.9, 1e-9),
                _field(f"{ACC}/interval/low", 89.1, 1e-9),
            ],
            codes=[_codes(f"{ACC}/attempts/0/reasons", [])],
        ),
        Case(
            "interval-floor-binds",
            "s = 0.1 over 90, 90.1, 90.2: t-width 0.4968 < floor 0.901, so h = 0.901.",
            ["required", "interval"],
            [Run(f"train-s{s}", seed=s, acc=91.0) for s in (0, 1, 2)] + honest("smoke", (0,)),
            0,
            manifest=_refs(0, [90.0, 90.1, 90.2]),
            fields=[
                *_verdict(ACC, "compatible"),
                _field(f"{ACC}/interval/floor_bound", True),
                _field(f"{ACC}/interval/half_width", 0.901, 1e-9),
                _field(f"{ACC}/interval/high", 91.001, 1e-9),
            ],
        ),
        Case(
            "interval-floor-excludes",
            "With floor 0 the same observations give h = 0.4968: 91.0 is incompatible.",
            ["required", "interval"],
            [Run(f"train-s{s}", seed=s, acc=91.0) for s in (0, 1, 2)] + honest("smoke", (0,)),
            1,
            manifest=_refs(0, [90.0, 90.1, 90.2]),
            options={"level": 0.95, "floor": 0.0},
            fields=[
                *_verdict(ACC, "incompatible"),
                _field(f"{ACC}/interval/floor_bound", False),
                # 4.3026527 * 0.1 * sqrt(4/3)
                _field(f"{ACC}/interval/half_width", 0.49682675, 1e-6),
            ],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A029"])],
        ),
        Case(
            "interval-non-finite-reference",
            "A reference observation that is NaN: the manifest's numbers are JSON's, so the"
            " artifact cannot be loaded (S004), a usage or I/O error.",
            ["required", "interval"],
            _all_runs(),
            2,
            manifest=_refs(0, [90.0, float("nan"), 90.2]),
        ),
        Case(
            "interval-non-finite-value",
            "A reproduced value that is infinite (1e999): compatible with no interval,"
            " incompatible (A028).",
            ["required", "interval"],
            [Run(f"train-s{s}", seed=s, acc="1e999") for s in (0, 1, 2)] + honest("smoke", (0,)),
            1,
            manifest=infinite_value,
            fields=[*_verdict(ACC, "incompatible"), _field(f"{ACC}/attempts/0/z", None)],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A028"])],
        ),
        Case(
            "interval-beyond-float-range",
            "Observations near the largest double: the interval's bound overflows (A063).",
            ["required", "interval"],
            _all_runs(),
            1,
            manifest=_refs(0, [1.79e308, 1.79e308]),
            fields=[*_verdict(ACC, "inconclusive"), _field(f"{ACC}/interval/defined", False)],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A063"])],
        ),
    ]


# --------------------------------------------------------------------------- badges


def badge_cases() -> list[Case]:
    def edit_code(root: Path) -> None:
        with (root / "code" / "train.py").open("a") as code:
            code.write("# changed after the digest\n")

    def edit_lock(root: Path) -> None:
        with (root / "environment" / "requirements.lock").open("a") as lock:
            lock.write("# changed after the digest\n")

    def placeholder(data: dict[str, Any]) -> None:
        data["codebase"]["upstream"]["commit"] = "0" * 40

    def broken_ledger(root: Path) -> None:
        (root / "runs" / "ledger.jsonl").write_text("not a ledger entry\n")

    return [
        Case(
            "badge-available-code-modified",
            "The refined code on disk differs from the manifest's digest (A010): not available;"
            " the exit status follows the verdicts only.",
            ["required", "badge", "tampering"],
            _all_runs(),
            0,
            artifact=edit_code,
            fields=[_field("/badges/available", False)],
            codes=[
                _codes("/badges/reasons/available", ["A010"], includes=True),
                _codes("/findings", ["A010"], includes=True),
            ],
        ),
        Case(
            "badge-available-lock-modified",
            "The lock on disk differs from the manifest's digest (A012): not available; the"
            " exit status follows the verdicts only.",
            ["required", "badge", "tampering"],
            _all_runs(),
            0,
            artifact=edit_lock,
            fields=[_field("/badges/available", False)],
            codes=[
                _codes("/badges/reasons/available", ["A012"], includes=True),
                _codes("/findings", ["A012"], includes=True),
            ],
        ),
        Case(
            "badge-placeholder",
            "An all-zero upstream commit is a placeholder (P003): no badge, no pass.",
            ["required", "badge"],
            _all_runs(),
            1,
            manifest=placeholder,
            fields=[*_badges(False, False, False), _field("/passed", False)],
            codes=[_codes("/badges/reasons/available", ["P003"], includes=True)],
        ),
        Case(
            "badge-functional-launcher",
            "A launcher without a succeeded run withholds 'functional' only; the audit passes.",
            ["required", "badge"],
            honest(),
            0,
            fields=[*_badges(True, False, True), _field("/passed", True)],
            codes=[_codes("/badges/reasons/functional", ["A024"])],
        ),
        Case(
            "badge-ledger-broken",
            "A run ledger that is not a hash chain (A051): the attempt's tasks are invalid"
            " evidence; neither 'functional' nor 'reproduced'.",
            ["required", "badge", "tampering", "ledger"],
            _all_runs(),
            1,
            artifact=broken_ledger,
            fields=[*_verdict(ACC, "invalid-evidence"), *_badges(True, False, False)],
            codes=[
                _codes("/attempts/0/findings", ["A051"], includes=True),
                _codes("/badges/reasons/functional", ["A051"], includes=True),
                _codes("/badges/reasons/reproduced", ["A051"], includes=True),
            ],
        ),
    ]


# --------------------------------------------------------------------------- tampering


def _tampered(  # noqa: PLR0917 - a row of the table of tampering cases
    name: str,
    finding: str,
    what: str,
    run: Run,
    verdict: str = "invalid-evidence",
    where: str | None = None,
    **extra: Any,
) -> Case:
    """One tampered run beside honest ones (every other run of ``_all_runs``): the run (or the
    run directory ``where``) is tainted, so every task of its launcher gets ``verdict``."""
    runs = [run, *[r for r in _all_runs() if r.name != run.name]]
    pointer = f"/attempts/0/runs/[run={where or run_id(run.name)}]/findings"
    return Case(
        f"tamper-{name}",
        f"{what} ({finding}): the run is tainted, its launcher's tasks are {verdict}.",
        ["required", "tampering"],
        runs,
        1,
        fields=[*_verdict(ACC, verdict), *_verdict(F1, verdict)],
        codes=[_codes(pointer, [finding], includes=True)],
        **extra,
    )


def _ledger_case(name: str, finding: str, what: str, **extra: Any) -> Case:
    """An attempt whose run ledger shows ``finding`` (an attempt-level error, spec
    runner.md#ledger): its tasks are invalid evidence and the audit fails."""
    return Case(
        f"ledger-{name}",
        f"{what} ({finding}): the attempt's tasks are invalid evidence.",
        ["required", "tampering", "ledger"],
        _all_runs(),
        1,
        fields=[*_verdict(ACC, "invalid-evidence"), *_badges(True, False, False)],
        codes=[
            _codes("/attempts/0/findings", [finding], includes=True),
            _codes("/badges/reasons/reproduced", [finding], includes=True),
        ],
        **extra,
    )


def _set(**changes: Any) -> Any:
    return lambda record: record.update(changes)


def _output(change: Any) -> Any:
    return lambda record: change(record["outputs"][0])


def tamper_cases() -> list[Case]:
    def no_log(run_dir: Path) -> None:
        (run_dir / "log.txt").unlink()

    def no_output(run_dir: Path) -> None:
        (run_dir / "outputs" / "metrics" / "metrics-0.json").unlink()

    def edited_output(run_dir: Path) -> None:
        (run_dir / "outputs" / "metrics" / "metrics-0.json").write_text('{"test":{"f1":89.0}}')

    def no_value(run_dir: Path) -> None:
        rewrite_log(run_dir, "the experiment printed nothing\n")

    def linked_log(run_dir: Path) -> None:
        (run_dir / "log.txt").rename(run_dir / "real-log.txt")
        (run_dir / "log.txt").symlink_to("real-log.txt")

    def unreadable(run_dir: Path) -> None:
        (run_dir / "record.json").write_text("{not json\n")

    def copy_run(root: Path) -> None:
        shutil.copytree(root / "runs" / run_id("train-s0"), root / "runs" / "train-s0-copy")

    fake_env = "e" * 64

    def named_snapshot(record: dict[str, Any]) -> None:
        record.update(record_version="1.1", environment=None, environment_sha256=fake_env)

    def altered_snapshot(root: Path) -> None:
        (root / "runs" / ".env").mkdir()
        (root / "runs" / ".env" / f"{fake_env}.json").write_text('{"python": "3.11.9"}\n')

    def same(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return entries

    def edit_after_ledger(root: Path) -> None:
        path = root / "runs" / run_id("train-s0") / "record.json"
        path.write_text(path.read_text().replace('"duration": 1.0', '"duration": 2.0'))

    def delete_run(root: Path) -> None:
        shutil.rmtree(root / "runs" / run_id("train-s2"))

    def reorder(root: Path) -> None:
        path = root / "runs" / "ledger.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join([lines[1], lines[0], *lines[2:]]))

    other_code = "sha256-tree1:" + "0" * 64
    return [
        _tampered("record-unreadable", "A001", "A record that is not JSON; the run is ignored,"
                  " two seeds remain, so the tasks are toy", Run("train-s0", files=unreadable),
                  verdict="toy"),
        _tampered("record-foreign", "A002", "A record naming another artifact",
                  Run("train-s0", edit=_set(artifact="other-artifact"))),
        _tampered("log-missing", "A003", "A record whose log is gone",
                  Run("train-s0", files=no_log)),
        _tampered("output-missing", "A005", "A listed output that is gone",
                  Run("train-s0", files=no_output)),
        _tampered("output-digest", "A006", "An output changed after its record",
                  Run("train-s0", files=edited_output)),
        _tampered("value-not-reproducible", "A007", "A recorded value the log does not say",
                  Run("train-s0", edit=lambda r: r["measurements"][0].update(value=95.0))),
        _tampered("value-not-extractable", "A008", "A log that holds no value, digest updated",
                  Run("train-s0", files=no_value)),
        _tampered("code-tree-mismatch", "A009", "A run of other code",
                  Run("train-s0", edit=_set(code_tree_digest=other_code))),
        _tampered("lock-mismatch", "A011", "A run in another locked environment",
                  Run("train-s0", edit=_set(lock_digest="0" * 64))),
        _tampered("scope-mismatch", "A014", "A scored launcher's run recorded as smoke",
                  Run("train-s0", edit=_set(scope="smoke"))),
        _tampered("argv-mismatch", "A015", "A run of another command",
                  Run("train-s0", edit=lambda r: r["argv"].__setitem__(1, "code/other.py"))),
        _tampered("output-preexisting", "A018", "A measured output that predates the run",
                  Run("train-s0", edit=_output(lambda o: o.update(preexisting=True)))),
        _tampered("output-shipped", "A019", "A measured output identical to a file of the code",
                  Run("train-s0"), code={"scores.json": json.dumps({"test": {"f1": 89.0}})}),
        _tampered("seed-undeclared", "A037", "A run of a seed the launcher does not declare",
                  Run("train-s0", edit=_set(seed=7))),
        _tampered("evidence-duplicated", "A038", "Seed 1's log and output are seed 0's",
                  Run("train-s1", seed=1, acc=90.0, f1=89.0)),
        _tampered("run-relabelled", "A039", "A run id started for another launcher",
                  Run("train-s0", edit=_set(seed=1))),
        _tampered("evidence-link", "A040", "A log that is a symbolic link",
                  Run("train-s0", files=linked_log)),
        _tampered("run-duplicated", "A053", "A copy of a run directory beside it (one run id,"
                  " two directories; the ledger lists it once)", Run("train-s0"),
                  where="train-s0-copy", artifact=copy_run, ledger=same),
        _tampered("run-not-in-ledger", "A055", "A finished run the ledger does not list",
                  Run("train-s0"), ledger=lambda entries: entries[1:]),
        _tampered("record-not-as-ledgered", "A056", "A record changed after the ledger took"
                  " its digest", Run("train-s0"), ledger=same, artifact=edit_after_ledger),
        _tampered("snapshot-altered", "A066", "A named environment snapshot that is not the"
                  " file its digest names", Run("train-s0", edit=named_snapshot),
                  artifact=altered_snapshot),
        _ledger_case("run-deleted", "A052", "A run the ledger lists was deleted",
                     ledger=same, artifact=delete_run),
        _ledger_case("reordered", "A054", "Ledger entries, each intact, out of chain order",
                     ledger=same, artifact=reorder),
    ]  # fmt: skip


def cases() -> list[Case]:
    """Every audit conformance case."""
    return [*verdict_cases(), *interval_cases(), *badge_cases(), *tamper_cases()]


def main(argv: list[str] | None = None) -> int:
    """Write every case; ``--out DIR`` writes the suite elsewhere (to compare with git)."""
    args = sys.argv[1:] if argv is None else argv
    suite = Path(args[1]) if len(args) == 2 and args[0] == "--out" else SUITE
    cases_dir = suite / "cases"
    all_cases = cases()
    names = [case.name for case in all_cases]
    if len(set(names)) != len(names):
        sys.stderr.write("duplicate case names\n")
        return 1
    cases_dir.mkdir(parents=True, exist_ok=True)
    for existing in cases_dir.iterdir():
        if existing.name not in names and existing.is_dir():
            shutil.rmtree(existing)
    for case in all_cases:
        write_case(case, cases_dir)
    sys.stderr.write(f"wrote {len(all_cases)} cases to {cases_dir}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
