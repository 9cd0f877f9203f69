"""Write the audit-report conformance cases (``validators/audit-cases/cases/``).

Usage: ``python spec/tools/build_audit_cases.py [--out DIR]`` from the repository root. The
cases are data and are committed; this script is how they were authored (digests computed,
records written as a runner writes them) and regenerates them byte for byte. The expected
report fields are written here by hand from the specification (``spec/audit.md`` and
``spec/runner.md#evidence``), never from an auditor's output. Interval bounds are the
formulas of spec §11 with t(0.975, 4) = 2.7764451 (worked by hand and by SciPy).
"""

from __future__ import annotations

import base64
import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _audit_kit import (
    REFS,
    Case,
    Run,
    TableCase,
    honest,
    keys_line,
    ledger_head,
    rewrite_log,
    run_id,
    test_key,
    write_case,
    write_table_case,
)

from reprobridge_sdk.api import load
from reprobridge_sdk.audit.clean_room import check_record, write_check_record
from reprobridge_sdk.contents import files_digest
from reprobridge_sdk.signing.dsse import PAYLOAD_TYPE as PAYLOAD
from reprobridge_sdk.signing.dsse import pae

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


def _badges(
    available: bool, functional: bool, reproduced: bool, results: str | None = None
) -> list[dict[str, Any]]:
    """The badges; ``results`` (the results' state) when the case states it."""
    out = [
        _field("/badges/available", available),
        _field("/badges/functional", functional),
        _field("/badges/reproduced", reproduced),
    ]
    if results is not None:
        out.append(_field("/badges/results", results))
    return out


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
            "Every run honest and every value inside its interval: compatible, available and"
            " functional; the authors' runs alone make the results consistent (author"
            " evidence), never 'reproduced' (A084 per task).",
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
                *_badges(True, True, False, "consistent"),
                _field("/badges/reusable", False),
                _field("/passed", True),
            ],
            codes=[
                _codes("/badges/reasons/reproduced", ["A084", "A084"]),
                # no clean-room check is on record: never reusable (yet)
                _codes("/badges/reasons/reusable", ["A086"], includes=True),
                _codes(f"{ACC}/attempts/0/reasons", []),
                _codes("/findings", []),
                _codes("/attempts/0/findings", ["A050"]),
            ],
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
                *_badges(True, True, False, "not-reproduced"),
                _field("/passed", False),
            ],
            codes=[
                _codes(f"{ACC}/attempts/0/reasons", ["A029"]),
                _codes("/badges/reasons/reproduced", ["A029", "A084", "A084"]),
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
                _field(f"{ACC}/interval/floor_alone", "one-reference"),
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
            "Equal observations: s = 0, the floor sets h = 0.01 * 90; the interval is the floor"
            " alone (identical references).",
            ["required", "interval"],
            _all_runs(),
            0,
            manifest=_refs(0, [90.0, 90.0, 90.0]),
            fields=[
                *_verdict(ACC, "compatible"),
                _field(f"{ACC}/interval/sd", 0.0),
                _field(f"{ACC}/interval/floor_bound", True),
                _field(f"{ACC}/interval/floor_alone", "identical-references"),
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
            refusal=["S004"],
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

    def no_doi(data: dict[str, Any]) -> None:
        del data["artifact"]["paper"]["doi"]

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
            "badge-available-no-identifier",
            "No DOI and no archive the committee holds (A085): not available; the other"
            " badges as before.",
            ["badge"],
            _all_runs(),
            0,
            manifest=no_doi,
            fields=[*_badges(False, True, False, "consistent"), _field("/passed", True)],
            codes=[_codes("/badges/reasons/available", ["A085"])],
        ),
        Case(
            "badge-placeholder",
            "An all-zero upstream commit is a placeholder (P003, and the auditor's A046): no"
            " badge, no pass.",
            ["required", "badge"],
            _all_runs(),
            1,
            manifest=placeholder,
            fields=[*_badges(False, False, False), _field("/passed", False)],
            codes=[
                _codes("/badges/reasons/available", ["P003"], includes=True),
                _codes("/badges/reasons/functional", ["A046"], includes=True),
                _codes("/findings", ["A046"], includes=True),
            ],
        ),
        Case(
            "badge-functional-launcher",
            "A launcher without a succeeded run withholds 'functional' only; the audit passes.",
            ["required", "badge"],
            honest(),
            0,
            fields=[*_badges(True, False, False, "consistent"), _field("/passed", True)],
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


# --------------------------------------------------------------------------- notes and warnings


def _run(name: str, pointer_end: str = "findings", stamp: str | None = None) -> str:
    rid = run_id(name) if stamp is None else run_id(name, stamp)
    return f"/attempts/0/runs/[run={rid}]/{pointer_end}"


LATER = "20260101T000001000000Z"  # a second run of one launcher and seed


def note_cases() -> list[Case]:
    """The findings that leave the evidence standing (warnings and notes of spec
    runner.md#evidence, audit.md#verdicts and authoring.md) and the planted run folder."""

    def checkpoint(data: dict[str, Any]) -> None:
        data["environment"]["data"] = [
            {
                "id": "weights",
                "kind": "checkpoint",
                "source": {"url": "https://example.org/weights.bin"},
                "sha256": "b" * 64,
                "substitutes_training": True,
            }
        ]
        data["launchers"][0]["data"] = ["weights"]

    def sample(data: dict[str, Any]) -> None:
        data["launchers"][0]["samples"] = [
            {"outputs": {"metrics": "samples/metrics-0.json"}, "seed": 0,
             "expected": {"f1": 89.0}}
        ]  # fmt: skip

    def ship_sample(root: Path) -> None:
        (root / "samples").mkdir()
        (root / "samples" / "metrics-0.json").write_text(json.dumps({"test": {"f1": 89.0}}))

    def cite_run(data: dict[str, Any]) -> None:
        # observation 2 is 90.0, the value train-s0 recorded (another value would be A083)
        data["tasks"][0]["reference"]["observations"][2]["provenance"]["run"] = run_id("train-s0")

    def plugin_kind(data: dict[str, Any]) -> None:
        data["rra_version"] = "1.1"
        data["launchers"][0]["measurements"][1]["extract"] = {
            "kind": "x-audit-case-reader",
            "output": "metrics",
        }

    fake_env = "e" * 64

    def named_snapshot(record: dict[str, Any]) -> None:
        record.update(record_version="1.1", environment=None, environment_sha256=fake_env)

    def started_later(record: dict[str, Any]) -> None:  # the latest by started_at counts
        record.update(
            started_at="2026-01-01T00:00:01.000000Z", ended_at="2026-01-01T00:00:02.000000Z"
        )

    def link_run(root: Path) -> None:
        (root / "runs" / "train-s0-link").symlink_to(run_id("train-s0"))

    return [
        Case(
            "note-record-untied",
            "A record without a code tree digest cannot be tied to the artifact (A013, a warning).",
            ["required", "tampering"],
            [Run("train-s0", edit=_set(code_tree_digest=None)), *_all_runs()[1:]],
            0,
            fields=[_field(f"/attempts/0/runs/[run={run_id('train-s0')}]/valid", True)],
            codes=[_codes(_run("train-s0"), ["A013"])],
        ),
        Case(
            "note-checkpoint-substitutes",
            "A full task measured by a launcher that reads a checkpoint standing in for"
            " training: toy (A020).",
            ["required", "verdict"],
            _all_runs(),
            1,
            manifest=checkpoint,
            fields=_verdict(ACC, "toy", "toy"),
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A020"])],
        ),
        Case(
            "note-run-interrupted",
            "An interrupted run beside the honest ones gives no value (A022); the others stand.",
            ["required", "verdict"],
            [*_all_runs(), Run("train-s0", stamp=LATER, status="interrupted")],
            0,
            fields=_verdict(ACC, "compatible"),
            codes=[_codes(_run("train-s0", stamp=LATER), ["A022"])],
        ),
        Case(
            "note-seed-repeated",
            "Two succeeded runs of seed 0: the later counts, noted (A033).",
            ["required", "verdict"],
            [*_all_runs(), Run("train-s0", stamp=LATER, acc=90.05, edit=started_later)],
            0,
            fields=[
                *_verdict(ACC, "compatible"),
                _field(f"{ACC}/attempts/0/value", (90.05 + 90.1 + 90.2) / 3, 1e-9),
            ],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A033"])],
        ),
        Case(
            "note-output-is-sample",
            "A measured output byte-identical to the launcher's declared sample: the value"
            " counts, noted (A035).",
            ["required", "verdict"],
            _all_runs(),
            0,
            manifest=sample,
            artifact=ship_sample,
            fields=_verdict(F1, "compatible"),
            codes=[
                _codes(_run("train-s0"), ["A035"]),
                _codes(f"{F1}/attempts/0/reasons", ["A035"]),
            ],
        ),
        Case(
            "note-environment-drift",
            "A run whose record lists drift from the lock: the value counts, noted (A036).",
            ["required", "verdict"],
            [
                Run("train-s0", edit=_set(drift=["numpy 2.0.0, the lock says 1.26.4"])),
                *_all_runs()[1:],
            ],
            0,
            fields=_verdict(ACC, "compatible"),
            codes=[
                _codes(_run("train-s0"), ["A036"]),
                _codes(f"{ACC}/attempts/0/reasons", ["A036"], includes=True),
            ],
        ),
        Case(
            "note-references-are-runs",
            "A reference observation cites a run the audit judges (A045, a warning).",
            ["required"],
            _all_runs(),
            0,
            manifest=cite_run,
            codes=[_codes("/findings", ["A045"], includes=True)],
        ),
        Case(
            "note-plugin-not-installed",
            "A value read by an x- extractor kind that no installed plugin provides:"
            " inconclusive (A061).",
            ["required", "verdict"],
            _all_runs(),
            1,
            manifest=plugin_kind,
            fields=[*_verdict(F1, "inconclusive", "inconclusive"), *_verdict(ACC, "compatible")],
            codes=[_codes(f"{F1}/attempts/0/reasons", ["A061"], includes=True)],
        ),
        Case(
            "note-snapshot-missing",
            "A record naming an environment snapshot the runs directory lacks: the value"
            " counts (A065, a warning).",
            ["required", "verdict"],
            [Run("train-s0", edit=named_snapshot), *_all_runs()[1:]],
            0,
            fields=_verdict(ACC, "compatible"),
            codes=[_codes(_run("train-s0"), ["A065"])],
        ),
        Case(
            "tamper-run-folder-link",
            "A run folder that is a symbolic link to another run is planted (A067): never"
            " followed, the run is invalid; the runs themselves still count.",
            ["required", "tampering"],
            _all_runs(),
            0,
            artifact=link_run,
            fields=[_field("/attempts/0/runs/[run=train-s0-link]/valid", False)],
            codes=[_codes("/attempts/0/runs/[run=train-s0-link]/findings", ["A067"])],
        ),
    ]


# --------------------------------------------------------------------------- options


def option_cases() -> list[Case]:
    """Holm's correction, curation and the submitted ledger head."""

    def published(task: int, value: float) -> Any:
        def change(data: dict[str, Any]) -> None:
            data["tasks"][task]["published"] = {"value": value}

        return change

    def unpublished(task: int) -> Any:
        def change(data: dict[str, Any]) -> None:
            data["tasks"][task]["published"] = {}

        return change

    def both(*changes: Any) -> Any:
        return lambda data: [change(data) for change in changes]

    # z = 5 / (s * sqrt(1.2)) = 2.8867513 on 4 degrees of freedom: p = 0.0447086, and Holm
    # over the two tasks (f1's p is 0.957) adjusts it to 2p = 0.0894172 (SciPy's t)
    holm_runs = [Run(f"train-s{s}", seed=s, acc=94.9 + s / 10) for s in (0, 1, 2)]
    return [
        Case(
            "holm-turns-incompatible",
            "95.0 lies just outside [85.19, 94.81] (p 0.045); Holm over two tasks adjusts it"
            " to 0.089: compatible (A030).",
            ["holm", "verdict"],
            [*holm_runs, *honest("smoke", (0,))],
            0,
            options={"holm": True},
            fields=[
                *_verdict(ACC, "compatible", "verified"),
                _field(f"{ACC}/attempts/0/value", 95.0, 1e-9),
                _field(f"{ACC}/attempts/0/z", 2.886751345948129, 1e-6),
                _field(f"{ACC}/attempts/0/p", 0.044708587279680585, 1e-6),
                _field(f"{ACC}/attempts/0/p_adjusted", 0.08941717455936117, 1e-6),
            ],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A030"], includes=True)],
        ),
        Case(
            "holm-off",
            "The same evidence without Holm's correction: incompatible (A029).",
            ["required", "verdict"],
            [*holm_runs, *honest("smoke", (0,))],
            1,
            fields=[*_verdict(ACC, "incompatible"), _field(f"{ACC}/attempts/0/p_adjusted", None)],
            codes=[_codes(f"{ACC}/attempts/0/reasons", ["A029"])],
        ),
        Case(
            "curation-published",
            "Curation: a published value outside its interval (A031) and a task without a"
            " published value (A032).",
            ["curation", "verdict"],
            [],
            1,
            manifest=both(published(0, 99.0), unpublished(1)),
            options={"curation": True},
            fields=[
                _field(f"{ACC}/attempts/[attempt=published]/verdict", "incompatible"),
                _field(f"{F1}/attempts/[attempt=published]/verdict", "inconclusive"),
                _field(f"{ACC}/published_compatible", False),
            ],
            codes=[
                _codes(f"{ACC}/attempts/[attempt=published]/reasons", ["A031"]),
                _codes(f"{F1}/attempts/[attempt=published]/reasons", ["A032"]),
            ],
        ),
        Case(
            "ledger-head-expected",
            "The ledger's head is the head the author submitted: nothing to report.",
            ["required", "ledger"],
            _all_runs(),
            0,
            ledger=lambda entries: entries,
            options={"expect_head": ledger_head},
            fields=[*_verdict(ACC, "compatible"), _field("/passed", True)],
            codes=[_codes("/attempts/0/findings", [])],
        ),
        Case(
            "ledger-head-mismatch",
            "The ledger's head is not the head the author submitted (A057): the attempt's"
            " tasks are invalid evidence.",
            ["required", "ledger", "tampering", "badge"],
            _all_runs(),
            1,
            ledger=lambda entries: entries,
            options={"expect_head": "f" * 64},
            fields=[*_verdict(ACC, "invalid-evidence"), *_badges(True, False, False)],
            codes=[
                _codes("/attempts/0/findings", ["A057"]),
                _codes("/badges/reasons/functional", ["A057"], includes=True),
            ],
        ),
        Case(
            "ledger-head-without-ledger",
            "A head submitted for an attempt that has no ledger (A057, in place of the A050"
            " warning).",
            ["required", "ledger", "tampering"],
            _all_runs(),
            1,
            options={"expect_head": "f" * 64},
            fields=_verdict(ACC, "invalid-evidence"),
            codes=[_codes("/attempts/0/findings", ["A057"])],
        ),
    ]


# --------------------------------------------------------------------------- re-execution


def rerun_cases() -> list[Case]:
    """Re-execution of every succeeded run (``rerun: all``, so that the sample, which is not
    normative, does not matter): the experiment (code/train.py) is a few lines of Python
    without network or data that prints the honest runs' values."""

    def runnable(data: dict[str, Any]) -> None:
        """Outputs written into the run directory, the one place a sandboxed run may write."""
        for launcher in data["launchers"]:
            launcher["argv"][-1] = "{run_dir}/metrics-{seed}.json"
            launcher["outputs"][0]["path"] = "{run_dir}/metrics-{seed}.json"

    def broken(data: dict[str, Any]) -> None:
        runnable(data)
        data["launchers"][0]["argv"][1] = "code/broken.py"

    def declared(data: dict[str, Any]) -> None:
        runnable(data)
        data["rra_version"] = "1.1"
        data["tasks"][0]["same_seed_tolerance"] = 10.0

    def tolerant(data: dict[str, Any]) -> None:
        """Same-seed tolerances declared below the half-widths (4.81 for both)."""
        runnable(data)
        data["rra_version"] = "1.1"
        data["tasks"][0]["same_seed_tolerance"] = 4.0
        data["tasks"][1]["same_seed_tolerance"] = 0.5

    rerun = {"rerun": "all"}
    later = _set(started_at="2026-01-01T00:00:02.000000Z", ended_at="2026-01-01T00:00:03.000000Z")
    copied_output = Run("train-s1", seed=1, acc=90.1, f1=89.0, stamp=LATER, edit=later)
    return [
        Case(
            "rerun-seed-effect-shows-copy",
            "Seed 1's output is seed 0's (F1 89.0) with its own identity and times: A079 until"
            " re-execution, where seeds 0 and 1 give F1 89.0 and 89.1: the seed has an effect,"
            " so the output was copied (A038), although 89.0 is within seed 1's declared"
            " same-seed tolerance (0.5).",
            ["rerun", "tampering"],
            [copied_output, *[r for r in _all_runs() if r.name != "train-s1"]],
            1,
            manifest=tolerant,
            options=rerun,
            fields=[
                *_verdict(F1, "invalid-evidence"),
                _field(f"{_run('train-s1', 'rerun', stamp=LATER)}/[task=f1]/held", True),
            ],
            codes=[_codes(_run("train-s1", stamp=LATER), ["A038"])],
        ),
        Case(
            "rerun-holds",
            "Every run re-executed gives its recorded values and bytes, and so does each"
            " launcher's repeat: compatible, all badges; each launcher is proposed"
            " 'deterministic: true' (C027, information).",
            ["rerun", "verdict"],
            _all_runs(),
            0,
            manifest=runnable,
            options=rerun,
            fields=[
                *_verdict(ACC, "compatible"),
                _field("/attempts/0/reran", 4),
                _field("/attempts/0/rerun_mismatches", 0),
                _field(f"/attempts/0/runs/[run={run_id('train-s0')}]/reran", True),
                # recorded beside re-executed; nothing declared: the launcher's first run,
                # executed twice, gives one value (a spread of 0), but the runs' snapshot is
                # the case's portable one, which names no real machine: the spread observed
                # on the auditor's machine does not bound them, the half-width does
                _field(f"{_run('train-s1', 'rerun')}/[task=acc]/recorded", 90.1),
                _field(f"{_run('train-s1', 'rerun')}/[task=acc]/rerun", 90.1),
                _field(f"{_run('train-s1', 'rerun')}/[task=acc]/difference", 0.0),
                _field(f"{_run('train-s1', 'rerun')}/[task=acc]/basis", "half-width"),
                _field(f"{_run('train-s1', 'rerun')}/[task=acc]/held", True),
                # four runs measure acc: the paired t test of a shift finds none
                _field("/attempts/0/shift_tests/[task=acc]/n", 4),
                _field("/attempts/0/shift_tests/[task=acc]/shifted", False),
                # the committee re-executed runs of every task: results reproduced
                *_badges(True, True, True, "reproduced"),
            ],
            codes=[_codes("/findings", ["C027", "C027"])],
        ),
        Case(
            "rerun-shift",
            "Every run's accuracy recorded 3 points above what re-execution gives: each is"
            " within the declared same-seed tolerance 4 (below the half-width 4.81), the four"
            " differences are not (paired t test, A070).",
            ["rerun", "tampering", "badge"],
            [replace(r, acc=float(r.acc) + 3.0) for r in _all_runs()],
            1,
            manifest=tolerant,
            options=rerun,
            fields=[
                *_verdict(ACC, "invalid-evidence"),
                _field("/attempts/0/rerun_mismatches", 0),
                _field("/attempts/0/shift_tests/[task=acc]/shifted", True),
                _field("/attempts/0/shift_tests/[task=acc]/mean_difference", 3.0, 1e-9),
                _field("/attempts/0/shift_tests/[task=f1]/shifted", False),
                _field("/badges/reproduced", False),
            ],
            codes=[
                _codes(_run("train-s0"), []),
                _codes("/attempts/0/findings", ["A070"], includes=True),
                _codes("/badges/reasons/reproduced", ["A070"]),
            ],
        ),
        Case(
            "rerun-value-mismatch",
            "A fabricated log (99.0, consistently recorded) that re-execution gives as 90.0,"
            " beyond its tolerance (A058; even the half-width 4.81): the run is tainted.",
            ["rerun", "tampering", "badge"],
            [Run("train-s0", acc=99.0), *_all_runs()[1:]],
            1,
            manifest=runnable,
            options=rerun,
            fields=[
                *_verdict(ACC, "invalid-evidence"),
                _field("/attempts/0/rerun_mismatches", 1),
                _field("/badges/reproduced", False),
            ],
            codes=[
                _codes(_run("train-s0"), ["A058"]),
                _codes("/badges/reasons/reproduced", ["A058"], includes=True),
            ],
        ),
        Case(
            "rerun-declared-tolerance",
            "A declared same-seed tolerance (format 1.1) of 10, not below the half-width 4.81"
            " (A071): re-execution holds runs to the half-width, and a log fabricated 6 points"
            " above what re-execution gives is A058.",
            ["rerun", "tampering"],
            [Run("train-s0", acc=96.0), *_all_runs()[1:]],
            1,
            manifest=declared,
            options=rerun,
            fields=[
                _field(f"{_run('train-s0', 'rerun')}/[task=acc]/basis", "declared"),
                _field(f"{_run('train-s0', 'rerun')}/[task=acc]/tolerance", 4.80894, 1e-5),
                _field(f"{_run('train-s0', 'rerun')}/[task=acc]/held", False),
                _field(f"{_run('train-s1', 'rerun')}/[task=acc]/held", True),
            ],
            codes=[
                # the smoke launcher's runs agree byte for byte: C027 for it, not for train
                _codes("/findings", ["A071", "C027"]),
                _codes(_run("train-s0"), ["A058"]),
            ],
        ),
        Case(
            "rerun-failed",
            "Records of success for an experiment that fails when re-executed (A059): its"
            " runs are tainted.",
            ["rerun", "tampering"],
            _all_runs(),
            1,
            manifest=broken,
            code={"broken.py": "raise SystemExit('this experiment cannot run')\n"},
            options=rerun,
            fields=[
                *_verdict(ACC, "invalid-evidence"),
                _field("/attempts/0/reran", 4),
                _field("/attempts/0/rerun_mismatches", 3),
            ],
            codes=[_codes(_run("train-s0"), ["A059"]), _codes(_run("smoke-s0"), [])],
        ),
    ]


# --------------------------------------------------------------------------- signatures

SIGNER = "case-signer"


CHAIR = "case-chair"


def _committee_check(root: Path) -> None:
    """The record a passing ``check --scored --record --sign`` with the chair's key writes."""
    steps = ["copy", "validate", "smoke", "audit", "scored", "audit-scored"]
    data = check_record(
        "audit-case",
        files_digest(root, load(root).manifest),
        [(step, True) for step in steps],
        scored=True,
        archive_sha256=None,
    )
    data["finished"] = "2026-01-01T00:00:00Z"  # the case is the same bytes at every build
    write_check_record(root, data, test_key(CHAIR))


def _envelope(root: Path, name: str) -> Path:
    return root / "runs" / run_id(name) / "record.dsse.json"


def signed_cases() -> list[Case]:
    """Runs signed with the cases' public test key (``test_key``), audited with ``trust``,
    the case's KEYS file, which trusts that key."""
    key = test_key(SIGNER)

    def signed(name: str, what: str, finding: str, change: Any, **extra: Any) -> Case:
        return Case(
            f"signed-{name}",
            f"{what} ({finding}): under trust the run is tainted, 'reproduced' withheld.",
            ["signing", "tampering"],
            _all_runs(),
            1,
            ledger=lambda entries: entries,
            signer=key,
            case_files={"KEYS": keys_line(SIGNER)},
            options={"trust": "KEYS"},
            artifact=change,
            fields=[*_verdict(ACC, "invalid-evidence"), _field("/badges/reproduced", False)],
            codes=[
                _codes(_run("train-s0"), [finding], includes=True),
                _codes("/badges/reasons/reproduced", [finding], includes=True),
            ],
            **extra,
        )

    def unsigned(root: Path) -> None:
        _envelope(root, "train-s0").unlink()

    def bad_signature(root: Path) -> None:
        path = _envelope(root, "train-s0")
        envelope = json.loads(path.read_text())
        forged = base64.b64encode(key.sign(b"another message")).decode()
        envelope["signatures"][0]["sig"] = forged
        path.write_text(json.dumps(envelope, indent=2) + "\n")

    def stranger(root: Path) -> None:
        path = _envelope(root, "train-s0")
        envelope = json.loads(path.read_text())
        other = test_key("stranger")
        payload = base64.b64decode(envelope["payload"])
        envelope["signatures"] = [
            {"keyid": other.keyid, "sig": base64.b64encode(other.sign(pae(PAYLOAD, payload)))
             .decode()}
        ]  # fmt: skip
        path.write_text(json.dumps(envelope, indent=2) + "\n")

    def other_run(root: Path) -> None:
        shutil.copyfile(_envelope(root, "train-s1"), _envelope(root, "train-s0"))

    def planted(root: Path) -> None:
        _plant_link(root / "runs" / run_id("train-s0"))

    def malformed(root: Path) -> None:
        _envelope(root, "train-s0").write_text(
            json.dumps({"payloadType": PAYLOAD, "payload": "not base64!", "signatures": []})
        )

    return [
        Case(
            "signed-verified",
            "Every run signed with a trusted key: compatible, each run names its signer.",
            ["signing", "verdict"],
            _all_runs(),
            0,
            ledger=lambda entries: entries,
            signer=key,
            case_files={"KEYS": "# the cases' public test key\n" + keys_line(SIGNER)},
            options={"trust": "KEYS"},
            fields=[
                *_verdict(ACC, "compatible"),
                _field(f"/attempts/0/runs/[run={run_id('train-s0')}]/signer", SIGNER),
                *_badges(True, True, False, "consistent"),
            ],
            codes=[_codes("/findings", []), _codes(_run("train-s0"), [])],
        ),
        Case(
            "signed-committee",
            "Every run signed with a key the KEYS file marks 'committee': runs the committee"
            " made, so the results are reproduced without re-execution.",
            ["signing", "badge"],
            _all_runs(),
            0,
            ledger=lambda entries: entries,
            signer=key,
            case_files={"KEYS": "# the committee's key\n" + keys_line(SIGNER, "committee")},
            options={"trust": "KEYS"},
            fields=[
                _field(f"/attempts/0/runs/[run={run_id('train-s0')}]/signer", SIGNER),
                *_badges(True, True, True, "reproduced"),
            ],
            codes=[_codes("/findings", [])],
        ),
        Case(
            "signed-check-committee",
            "Runs signed by their author, and a passing scored clean-room check of the files as"
            " they are whose record a key the KEYS file marks 'committee' signed: the"
            " committee's re-execution, so the results are reproduced; the report names the"
            " record's signer.",
            ["signing", "badge"],
            _all_runs(),
            0,
            ledger=lambda entries: entries,
            signer=key,
            artifact=_committee_check,
            case_files={
                "KEYS": "# an author's key and the committee's\n"
                + keys_line(SIGNER)
                + keys_line(CHAIR, "committee")
            },
            options={"trust": "KEYS"},
            fields=[
                *_badges(True, True, True, "reproduced"),
                _field("/badges/check_record/state", "signed"),
                _field("/badges/check_record/signer", CHAIR),
                _field("/badges/check_record/role", "committee"),
            ],
            codes=[_codes("/findings", [])],
        ),
        signed("unsigned", "A run without an envelope", "K001", unsigned),
        signed(
            "bad-signature",
            "An envelope whose signature by the trusted key fails",
            "K002",
            bad_signature,
        ),
        signed(
            "unknown-signer", "A run signed by a key the KEYS file does not trust", "K003", stranger
        ),
        signed("statement-mismatch", "A run's envelope is another run's", "K004", other_run),
        signed("malformed-envelope", "An envelope that is not DSSE", "K007", malformed),
        signed(
            "run-folder-entry-planted",
            "A symbolic link planted in a signed run's folder, beside its signed files",
            "A069",
            planted,
        ),
        Case(
            "signed-keys-invalid",
            "A KEYS file with a line of another algorithm (K005): a usage error, exit 2.",
            ["signing"],
            _all_runs(),
            2,
            ledger=lambda entries: entries,
            signer=key,
            case_files={"KEYS": "case-signer rsa AAAAB3NzaC1yc2E=\n"},
            options={"trust": "KEYS"},
            refusal=["K005"],
        ),
        Case(
            "signed-without-ledger",
            "Signed runs without their run ledger under trust (A068): the attempt's tasks"
            " are invalid evidence.",
            ["signing", "ledger", "tampering"],
            _all_runs(),
            1,
            signer=key,
            case_files={"KEYS": keys_line(SIGNER)},
            options={"trust": "KEYS"},
            fields=_verdict(ACC, "invalid-evidence"),
            codes=[_codes("/attempts/0/findings", ["A068"], includes=True)],
        ),
    ]


# --------------------------------------------------------------------------- tables


def table_cases() -> list[TableCase]:
    """The audit table (spec audit.md#table): its rows, labels, counts and rates. The
    table's JSON numbers are not rounded (only its text prints rounded rates)."""

    def renamed(new_id: str) -> Any:
        return lambda data: data["artifact"].update(id=new_id)

    def honest_case() -> Case:
        return Case("a", "", [], _all_runs(), 0)

    def append_line(run_dir: Path) -> None:
        with (run_dir / "log.txt").open("a") as log:
            log.write("more\n")

    failing = Case(
        "b",
        "",
        [],
        [
            *(Run(f"train-s{s}", seed=s, acc=95.0 + s / 10) for s in (0, 1, 2)),
            *honest("smoke", (0,)),
        ],
        1,
        manifest=renamed("case-b"),
    )
    stale = Run("train-s0", edit=_set(code_tree_digest="sha256-tree1:" + "0" * 64))
    edited = Run("train-s1", seed=1, acc=90.1, f1=89.1, files=append_line)
    tampered = Case("t", "", [], [stale, edited, *_all_runs()[2:]], 1, manifest=renamed("case-t"))

    def remove_runs(root: Path) -> None:
        (root / "runs").rmdir()

    no_runs = Case("e", "", [], [], 1, manifest=renamed("case-e"), artifact=remove_runs)
    row = "/rows/{}".format
    return [
        TableCase(
            "table-rows",
            "Rows in the order given, each named by its path in the batch folder: passed,"
            " failed, and a directory that holds no artifact (an error row whose why is A001,"
            " counted as 0 in every rate).",
            ["required", "table"],
            [("a", honest_case()), ("b", failing), ("c", None)],
            1,
            fields=[
                _field(row(0) + "/label", "a"),
                _field(row(0) + "/claims/0/icml", "verified"),
                _field(row(0) + "/status", "passed"),
                _field(row(0) + "/tasks", 2),
                _field(row(0) + "/task_success", 1.0),
                _field(row(0) + "/runs", 4),
                _field(row(0) + "/badges/reproduced", False),
                _field(row(0) + "/badges/results", "consistent"),
                _field(row(1) + "/label", "b"),
                _field(row(1) + "/status", "failed"),
                _field(row(1) + "/task_success", 0.5),
                _field(row(1) + "/badges/reproduced", False),
                _field(row(2) + "/label", "c"),
                _field(row(2) + "/why/code", "A001"),
                _field(row(2) + "/path", "artifacts/c"),
                _field(row(2) + "/status", "error"),
                _field(row(2) + "/artifact", None),
                _field(row(2) + "/badges", None),
                # tasks: a 1, 1; b 0, 1; c one task at 0
                _field("/task_level", 0.6),
                _field("/paper_macro", 0.5),
                _field("/labels/[label=runs]/success_rate", 0.6),
                _field("/label_spread", None),
                _field("/passed", False),
            ],
            codes=[_codes(row(2) + "/findings", ["A001"]), _codes("/errors", ["A001"])],
        ),
        TableCase(
            "table-labels",
            "Rows are named by their path in the batch folder, never by the manifest's id that"
            " two artifacts share; one path given twice is numbered.",
            ["required", "table"],
            [("a", honest_case()), ("b", honest_case()), ("b", honest_case())],
            0,
            fields=[
                _field(row(0) + "/artifact", "audit-case"),
                _field(row(1) + "/artifact", "audit-case"),
                _field(row(0) + "/label", "a"),
                _field(row(1) + "/label", "b"),
                _field(row(2) + "/label", "b #2"),
                _field(row(2) + "/path", "artifacts/b"),
                _field("/paper_macro", 1.0),
                _field("/passed", True),
            ],
        ),
        TableCase(
            "table-run-counts",
            "A row counts its runs, the invalid ones (an error-level finding) and the stale"
            " ones (other code: A009); the table fails with the artifact.",
            ["required", "table", "tampering"],
            [("a", honest_case()), ("t", tampered)],
            1,
            fields=[
                _field(row(1) + "/runs", 4),
                _field(row(1) + "/invalid_runs", 2),
                _field(row(1) + "/stale_runs", 1),
                _field(row(1) + "/status", "failed"),
                _field(row(1) + "/task_success", 0.0),
                _field(row(0) + "/invalid_runs", 0),
                _field(row(0) + "/stale_runs", 0),
                _field("/task_level", 0.5),
                _field("/passed", False),
            ],
            codes=[_codes("/errors", [])],
        ),
        TableCase(
            "table-missing-attempt",
            "An artifact without its runs directory: an attempt without runs, its tasks not"
            " executed and counted as 0 in the rates.",
            ["required", "table"],
            [("a", honest_case()), ("e", no_runs)],
            1,
            fields=[
                _field(row(1) + "/status", "failed"),
                _field(row(1) + "/runs", 0),
                _field(row(1) + "/task_success", 0.0),
                _field(row(1) + "/badges/functional", False),
                _field("/task_level", 0.5),
                _field("/paper_macro", 0.5),
                _field("/labels/[label=runs]/success_rate", 0.5),
                _field("/passed", False),
            ],
        ),
    ]


def submissions_cases() -> list[TableCase]:
    """A committee's submissions file (spec audit.md#submissions): a file that is not TOML
    (A090) or not valid (A091) is refused whole; a path that leaves its folder is an error row
    (A092); an archive that is not the one recorded is audited and fails (A093)."""

    def honest_case() -> Case:
        return Case("a", "", [], _all_runs(), 0)

    head = 'batch_version = "1.0"\n'
    row = "/rows/{}".format
    given = {"submissions": "submissions.toml"}
    return [
        TableCase(
            "submissions-not-toml",
            "A submissions file that is not TOML (a string not closed) is refused whole,"
            " before anything is audited.",
            ["required", "table"],
            [("a", honest_case())],
            2,
            options=given,
            case_files={"submissions.toml": f"{head}\n[[submission]]\nid = 'p1\n"},
            refusal=["A090"],
            given=False,
        ),
        TableCase(
            "submissions-unknown-key",
            "A submissions file with a key the schema does not know (a misspelt expect_head)"
            " is refused whole: no row is audited with a setting the committee did not mean.",
            ["required", "table"],
            [("a", honest_case())],
            2,
            options=given,
            case_files={
                "submissions.toml": f'{head}\n[[submission]]\nid = "p1"\n'
                f'path = "artifacts/a"\nexpect_hed = "{"0" * 64}"\n'
            },
            refusal=["A091"],
            given=False,
        ),
        TableCase(
            "submissions-path-outside",
            "A submission whose path leaves the file's folder is a row in error (A092), named"
            " by its id; the other submissions are audited.",
            ["required", "table"],
            [("a", honest_case())],
            1,
            options=given,
            case_files={
                "submissions.toml": f'{head}\n[[submission]]\nid = "p1"\npath = "artifacts/a"\n'
                '\n[[submission]]\nid = "p2"\npath = "../elsewhere"\n'
            },
            fields=[
                _field(row(0) + "/label", "p1"),
                _field(row(0) + "/status", "passed"),
                _field(row(1) + "/label", "p2"),
                _field(row(1) + "/status", "error"),
                _field(row(1) + "/why/code", "A092"),
                _field("/passed", False),
            ],
            codes=[_codes(row(1) + "/findings", ["A092"])],
            given=False,
        ),
        TableCase(
            "submissions-archive-mismatch",
            "A submission whose archive does not have the recorded SHA-256 is audited, fails"
            " with A093 as its why, reads as tampered evidence and earns no badge.",
            ["required", "table", "tampering"],
            [("a", honest_case())],
            1,
            options=given,
            archives={"a.tar": "a"},
            case_files={
                "submissions.toml": f'{head}\n[[submission]]\nid = "p1"\n'
                f'path = "artifacts/a.tar"\narchive_sha256 = "{"0" * 64}"\n'
            },
            fields=[
                _field(row(0) + "/label", "p1"),
                _field(row(0) + "/status", "failed"),
                _field(row(0) + "/why/code", "A093"),
                _field(row(0) + "/evidence", "tampered"),
                _field(row(0) + "/badges/available", False),
                _field(row(0) + "/badges/functional", False),
                _field(row(0) + "/badges/reproduced", False),
                _field("/passed", False),
            ],
            codes=[_codes(row(0) + "/findings", ["A093"], includes=True)],
            given=False,
        ),
    ]


def _plant_link(run_dir: Path) -> None:
    """A link below a run folder, not at its log or outputs, to a file outside the folder.
    Git stores a symbolic link, so a case holds one; a FIFO, socket or device cannot be kept
    in a repository, so those kinds have no case (the SDK's tests plant them)."""
    (run_dir / "cache").mkdir()
    (run_dir / "cache" / "key").symlink_to("../../../rra.yaml")


# --------------------------------------------------------------------------- plausibility


def _acc_refs(values: list[float], unit: str | None = None) -> Any:
    def change(data: dict[str, Any]) -> None:
        _refs(0, values)(data)
        if unit is not None:
            data["tasks"][0]["published"]["unit"] = unit

    return change


def plausible_cases() -> list[Case]:
    """Byte-identical evidence of a seed without effect (A079), implausible references
    (A080-A083, spec audit.md#plausible-references) and curation's placeholder rule."""

    def cites_s0(data: dict[str, Any]) -> None:
        data["tasks"][0]["reference"]["observations"][0] = {
            "value": 88.0,  # the run recorded 90.0
            "provenance": {"source": "artifact maintainers", "run": run_id("train-s0")},
        }

    def placeholder_commit(data: dict[str, Any]) -> None:
        data["codebase"]["upstream"]["commit"] = "0" * 40

    later = _set(started_at="2026-01-01T00:00:02.000000Z", ended_at="2026-01-01T00:00:03.000000Z")
    same_output = Run("train-s1", seed=1, acc=90.1, f1=89.0, stamp=LATER, edit=later)
    return [
        Case(
            "seed-without-effect",
            "Seed 1's output is byte-identical to seed 0's, but the runs share no identity and"
            " no timestamp: the seed has no effect (A079, information), the values count.",
            ["required", "tampering"],
            [same_output, *[r for r in _all_runs() if r.name != "train-s1"]],
            0,
            fields=[*_verdict(ACC, "compatible"), *_verdict(F1, "compatible"),
                    _field("/passed", True)],
            codes=[_codes(_run("train-s1", stamp=LATER), ["A079"])],
        ),
        Case(
            "reference-outside-domain",
            "Accuracy in the unit 'fraction' with observations near 90: every observation and"
            " the published value are outside [0, 1] (A080, an error): the audit fails.",
            ["required", "verdict"],
            _all_runs(),
            1,
            manifest=_acc_refs(REFS, "fraction"),
            fields=[*_verdict(ACC, "compatible"), _field("/passed", False)],
            codes=[_codes("/findings", ["A080"] * 6)],
        ),
        Case(
            "interval-implausible",
            "Percentages 80 ... 99 give an interval past 100 (A081) wider than 25% of the"
            " published 90 (A082): warnings, the audit passes.",
            ["required", "verdict"],
            _all_runs(),
            0,
            manifest=_acc_refs([80.0, 99.0, 90.0, 85.0, 98.0], "%"),
            fields=[*_verdict(ACC, "compatible"), _field("/passed", True)],
            codes=[_codes("/findings", ["A081", "A082"])],
        ),
        Case(
            "reference-provenance-mismatch",
            "A reference observation cites the audited run train-s0 with 88.0, but the run"
            " recorded 90.0 (A083, an error; A045: the cited run is audited too).",
            ["required", "verdict"],
            _all_runs(),
            1,
            manifest=cites_s0,
            fields=[_field("/passed", False)],
            codes=[_codes("/findings", ["A045", "A083"])],
        ),
        Case(
            "curation-placeholder",
            "Curation of an artifact whose upstream commit is the scaffold's placeholder: the"
            " published values lie in their intervals, but no placeholder passes (A046).",
            ["curation", "badge"],
            [],
            1,
            manifest=placeholder_commit,
            options={"curation": True},
            fields=[_field(f"{ACC}/published_compatible", True), _field("/passed", False)],
            codes=[_codes("/findings", ["A046"], includes=True)],
        ),
    ]  # fmt: skip


def planted_cases() -> list[Case]:
    """A run folder with a symbolic link planted below it (A069, a warning without trust;
    under trust an error: ``signed_cases``)."""
    return [
        Case(
            "run-folder-entry-planted",
            "A symbolic link planted in a run folder, not at its log or outputs (A069): a "
            "warning, the values still count.",
            ["tampering", "run-folder-scan"],
            [Run("train-s0", files=_plant_link), *[r for r in _all_runs() if r.name != "train-s0"]],
            0,
            fields=[*_verdict(ACC, "compatible"), *_verdict(F1, "compatible")],
            codes=[
                _codes(f"/attempts/0/runs/[run={run_id('train-s0')}]/findings", ["A069"]),
            ],
        )
    ]


def cases() -> list[Case | TableCase]:
    """Every audit conformance case."""
    return [
        *verdict_cases(),
        *interval_cases(),
        *badge_cases(),
        *tamper_cases(),
        *note_cases(),
        *option_cases(),
        *rerun_cases(),
        *signed_cases(),
        *table_cases(),
        *submissions_cases(),
        *planted_cases(),
        *plausible_cases(),
    ]


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
        if isinstance(case, TableCase):
            write_table_case(case, cases_dir)
        else:
            write_case(case, cases_dir)
    sys.stderr.write(f"wrote {len(all_cases)} cases to {cases_dir}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
