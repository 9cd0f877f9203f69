"""Building blocks of the audit-report conformance cases (``build_audit_cases.py``).

Every case is one artifact (``artifact/``) with one attempt, its ``runs/`` directory, and an
``expected.json`` (``validators/audit-cases/case.schema.json``). The base artifact has two
tasks, ``acc`` (read from the log) and ``f1`` (read from a declared output), a scored
launcher ``train`` (seeds 0, 1, 2) and a smoke launcher ``smoke`` (seed 0); each case changes
the manifest, the runs or both.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.guide import update_guide_text
from reprobridge_sdk.model.attestation import LedgerLink
from reprobridge_sdk.model.evidence import EvidenceRecord
from reprobridge_sdk.run.ledger import GENESIS, entry_hash
from reprobridge_sdk.signing.dsse import sign_payload
from reprobridge_sdk.signing.keys import SigningKey, keyid_of, public_line
from reprobridge_sdk.signing.statement import ENVELOPE_NAME, run_statement, statement_bytes

TRAIN = '''"""The experiment of the audit cases: prints its accuracy, writes its F1."""
import json
import sys
from pathlib import Path

args = sys.argv[1:]
seed = int(args[args.index("--seed") + 1])
out = Path(args[args.index("--out") + 1])
acc = 90.0 + (seed % 3) * 0.1
print(f"seed {seed}")
print(f"test accuracy: {acc:.4f}")
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps({"test": {"f1": round(acc - 1.0, 4)}}))
'''
LOCK = "# the experiment needs only the standard library\n"
CODES = Path(__file__).resolve().parents[2] / "validators" / "codes.json"
REFS = [88.0, 89.0, 90.0, 91.0, 92.0]  # m 90, s 1.5811: h = 4.8088, the floor (0.9) not binding
F1_REFS = [87.0, 88.0, 89.0, 90.0, 91.0]
SNAPSHOT = {
    "captured_at": "2026-01-01T00:00:00Z",
    "python": "3.11.9",
    "implementation": "CPython",
    "executable": "python",
    "platform": "linux-x86_64",
    "machine": "x86_64",
    "gpus": [],
    "distributions": [],
    "variables": {},
}


def _observations(values: list[float]) -> list[dict[str, Any]]:
    return [{"value": v, "provenance": {"source": "artifact maintainers"}} for v in values]


def _launcher(launcher_id: str, scope: str, seeds: list[int]) -> dict[str, Any]:
    argv = ["python", "code/train.py", "--seed", "{seed}", "--out", "results/metrics-{seed}.json"]
    return {
        "id": launcher_id,
        "argv": argv,
        "seeds": seeds,
        "scope": scope,
        "outputs": [{"id": "metrics", "path": "results/metrics-{seed}.json"}],
        "measurements": [
            {
                "task": "acc",
                "extract": {"kind": "regex", "pattern": r"test accuracy: ([0-9.]+)"},
                "aggregate": "mean",
            },
            {
                "task": "f1",
                "extract": {"kind": "json", "output": "metrics", "pointer": "/test/f1"},
                "aggregate": "mean",
            },
        ],
    }


def base_manifest() -> dict[str, Any]:
    """The base artifact's manifest (digests filled in when it is written)."""
    task = {
        "dataset": "toy",
        "statistic": {"aggregate": "mean", "seeds": 3},
        "direction": "higher",
        "kind": "full",
    }
    return {
        "rra_version": "1.0",
        "artifact": {
            "id": "audit-case",
            "title": "An audit conformance case",
            "license": "Apache-2.0",
            "paper": {"title": "A toy paper", "doi": "10.5281/zenodo.1234567"},
        },
        "codebase": {
            "upstream": {"repository": "https://example.org/toy.git", "commit": "a" * 40},
            "refined": {"kind": "directory", "path": "code"},
            "tree_digest": "",
        },
        "environment": {
            "python": "3.11",
            "lock": {"path": "environment/requirements.lock", "format": "requirements"},
        },
        "tasks": [
            {
                "id": "acc",
                "metric": "accuracy (%)",
                "published": {"value": 90.0},
                "reference": {"observations": _observations(REFS)},
                **task,
            },
            {
                "id": "f1",
                "metric": "F1 (%)",
                "published": {"value": 89.0},
                "reference": {"observations": _observations(F1_REFS)},
                **task,
            },
        ],
        "launchers": [_launcher("train", "scored", [0, 1, 2]), _launcher("smoke", "smoke", [0])],
        "guide": {"path": "GUIDE.md"},
    }


@dataclass
class Run:
    """One run directory of the attempt, as the runner writes it."""

    name: str
    launcher: str = "train"
    seed: int = 0
    acc: float | str = 90.0
    f1: float | None = None  # default: 89.0 + seed / 10, so no two seeds' outputs are equal
    status: str = "succeeded"
    #: Changes to the record after it is written (digests stay as computed).
    edit: Callable[[dict[str, Any]], None] | None = None
    #: Changes to the run directory's files after the record is written.
    files: Callable[[Path], None] | None = None
    #: The run id's time stamp, so that two runs of one launcher and seed have two ids.
    stamp: str = "20260101T000000000000Z"


@dataclass
class Case:
    name: str
    description: str
    tags: list[str]
    runs: list[Run]
    exit_status: int
    fields: list[dict[str, Any]] = field(default_factory=list)
    codes: list[dict[str, Any]] = field(default_factory=list)
    manifest: Callable[[dict[str, Any]], None] | None = None
    artifact: Callable[[Path], None] | None = None  # after the digests are computed
    code: dict[str, str] = field(default_factory=dict)  # more files of code/, before them
    #: Write the attempt's run ledger (ledger.jsonl), one entry per run in this order; the
    #: function may change the entries' list first (chained after it).
    ledger: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    #: The audit's options (case.schema.json); a callable value is computed from the written
    #: artifact (e.g. the ledger head the author submits).
    options: dict[str, Any] = field(default_factory=dict)
    #: The spec sections the case rests on ("part.md#anchor"); by default those of its tags
    #: and of every code it expects (the registry's section of the code).
    spec: list[str] = field(default_factory=list)
    #: With exit status 2: the codes of the usage or I/O error (not compared).
    refusal: list[str] = field(default_factory=list)
    #: Sign every run (after the ledger) with this key: record.dsse.json, as a runner does.
    signer: SigningKey | None = None
    #: More files of the case directory, beside artifact/ (e.g. a KEYS file).
    case_files: dict[str, str] = field(default_factory=dict)


@dataclass
class TableCase:
    """A case of the audit table: several artifacts, ``artifacts/<name>/``, audited in order."""

    name: str
    description: str
    tags: list[str]
    #: (directory name, the artifact's case or None for a directory that holds no artifact);
    #: the rows' order. A name may be given twice (one artifact given twice).
    artifacts: list[tuple[str, Case | None]]
    exit_status: int
    fields: list[dict[str, Any]] = field(default_factory=list)
    codes: list[dict[str, Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    spec: list[str] = field(default_factory=list)
    #: More files of the case directory, beside artifacts/ (e.g. a submissions file).
    case_files: dict[str, str] = field(default_factory=dict)
    #: Packed archives to write under artifacts/: file name -> the artifact directory packed.
    archives: dict[str, str] = field(default_factory=dict)
    #: With exit status 2: the codes of the usage or I/O error (not compared).
    refusal: list[str] = field(default_factory=list)
    #: False when the artifacts are not given on the command line (a submissions file lists
    #: them): the expected report names no ``artifacts``.
    given: bool = True


def test_key(name: str) -> SigningKey:
    """A fixed ed25519 key of the cases, derived from its public name: a test key, never a
    secret (anyone can derive its private half from this source)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    seed = hashlib.sha256(f"RRA audit conformance test key: {name}".encode()).digest()
    private = Ed25519PrivateKey.from_private_bytes(seed)
    raw = private.public_key().public_bytes_raw()
    return SigningKey(private=private, public_raw=raw, keyid=keyid_of(raw))


def keys_line(name: str, role: str | None = None) -> str:
    """The KEYS line that trusts the test key ``name`` under that name (with ``role``)."""
    return public_line(name, test_key(name), role) + "\n"


def _write_artifact(root: Path, case: Case) -> dict[str, Any]:
    (root / "code").mkdir(parents=True)
    (root / "code" / "train.py").write_text(TRAIN)
    for name, text in case.code.items():
        (root / "code" / name).write_text(text)
    (root / "environment").mkdir()
    (root / "environment" / "requirements.lock").write_text(LOCK)
    data = base_manifest()
    data["codebase"]["tree_digest"] = tree_digest(root / "code")
    data["environment"]["lock"]["sha256"] = file_sha256(root / "environment" / "requirements.lock")
    if case.manifest is not None:
        case.manifest(data)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    (root / "rra.yaml").write_text(text)
    skeleton = "# Reproduction guide\n\n<!-- reprobridge:records:begin -->\n"
    skeleton += "<!-- reprobridge:records:end -->\n"
    (root / "GUIDE.md").write_text(update_guide_text(skeleton, {}))
    return data


def run_id(name: str, stamp: str = "20260101T000000000000Z") -> str:
    """The run id (and directory name) of the run called ``name``, in the runner's shape."""
    return f"{name}-{stamp}-00000000"


def ledger_head(artifact: Path) -> str:
    """The head of the artifact's run ledger: the hash of its last entry."""
    last = (artifact / "runs" / "ledger.jsonl").read_text().splitlines()[-1]
    return str(json.loads(last)["hash"])


def _sign_runs(runs_dir: Path, case: Case) -> None:
    assert case.signer is not None
    links: dict[str, LedgerLink] = {}
    ledger = runs_dir / "ledger.jsonl"
    if ledger.is_file():
        for line in ledger.read_text().splitlines():
            entry = json.loads(line)
            links[entry["run_id"]] = LedgerLink(seq=entry["seq"], entry=entry["hash"])
    for run in case.runs:
        run_dir = runs_dir / run_id(run.name, run.stamp)
        record = EvidenceRecord.model_validate_json((run_dir / "record.json").read_bytes())
        statement = run_statement(run_dir, record, links.get(record.run_id))
        envelope = sign_payload(statement_bytes(statement), case.signer).to_json()
        (run_dir / ENVELOPE_NAME).write_text(json.dumps(envelope, indent=2) + "\n")


def _write_ledger(runs_dir: Path, case: Case) -> None:
    entries = []
    for run in case.runs:
        raw = (runs_dir / run_id(run.name, run.stamp) / "record.json").read_bytes()
        record = json.loads(raw)
        entries.append(
            {
                "run_id": record["run_id"],
                "launcher": record["launcher"],
                "seed": record["seed"],
                "scope": record["scope"],
                "status": record["status"],
                "record_sha256": hashlib.sha256(raw).hexdigest(),
            }
        )
    assert case.ledger is not None
    chained, prev = [], GENESIS
    for seq, entry in enumerate(case.ledger(entries), start=1):
        item = {**entry, "seq": seq, "prev": prev}
        item["hash"] = prev = entry_hash(item)
        chained.append(item)
    lines = [json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n" for e in chained]
    (runs_dir / "ledger.jsonl").write_text("".join(lines))


def _value_text(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:.4f}"


def _write_run(artifact: Path, data: dict[str, Any], run: Run) -> None:
    run_dir = artifact / "runs" / run_id(run.name, run.stamp)
    run_dir.mkdir(parents=True)
    launcher = next(item for item in data["launchers"] if item["id"] == run.launcher)
    rid = run_id(run.name, run.stamp)
    argv = [
        a.replace("{seed}", str(run.seed)).replace("{run_dir}", f"runs/{rid}")
        for a in launcher["argv"]
    ]
    record: dict[str, Any] = {
        "record_version": "1.0",
        "run_id": run_id(run.name, run.stamp),
        "artifact": data["artifact"]["id"],
        "launcher": run.launcher,
        "argv": argv,
        "shell": False,
        "workdir": ".",
        "seed": run.seed,
        "scope": launcher["scope"],
        "params": {},
        "status": run.status,
        "started_at": "2026-01-01T00:00:00.000000Z",
        "ended_at": "2026-01-01T00:00:01.000000Z",
        "duration": 1.0,
        "exit_code": 0,
        "failure": None,
        "env_mode": "cached",
        "code_tree_digest": tree_digest(artifact / "code"),
        "lock_digest": file_sha256(artifact / "environment" / "requirements.lock"),
        "environment": SNAPSHOT,
        "drift": [],
        "log": None,
        "outputs": [],
        "landmarks": [],
        "measurements": [],
    }
    if run.status == "failed":
        record.update(exit_code=1, failure={"reason": "exit-status", "detail": "exit status 1"})
        (run_dir / "log.txt").write_text("Traceback (most recent call last):\nRuntimeError\n")
    elif run.status != "succeeded":
        record.update(exit_code=None, failure={"reason": "interrupted", "detail": "killed"})
        (run_dir / "log.txt").write_text(f"seed {run.seed}\n")
    else:
        (run_dir / "log.txt").write_text(
            f"seed {run.seed}\ntest accuracy: {_value_text(run.acc)}\n"
        )
        output = run_dir / "outputs" / "metrics" / f"metrics-{run.seed}.json"
        output.parent.mkdir(parents=True)
        f1 = 89.0 + run.seed / 10 if run.f1 is None else run.f1
        output.write_text(json.dumps({"test": {"f1": f1}}))
        record["outputs"] = [
            {
                "path": output.relative_to(run_dir).as_posix(),
                "sha256": file_sha256(output),
                "size": output.stat().st_size,
                "id": "metrics",
                "preexisting": False,
            }
        ]
        acc = float(run.acc)
        record["measurements"] = [
            {"task": "acc", "value": acc if math.isfinite(acc) else None,
             "raw": _value_text(run.acc), "source": "log", "error": None},
            {"task": "f1", "value": f1, "raw": repr(f1), "source": "output:metrics",
             "error": None},
        ]  # fmt: skip
    log = run_dir / "log.txt"
    record["log"] = {"path": "log.txt", "sha256": file_sha256(log), "size": log.stat().st_size}
    if run.edit is not None:
        run.edit(record)
    (run_dir / "record.json").write_text(json.dumps(record, indent=2) + "\n")
    if run.files is not None:
        run.files(run_dir)


def honest(launcher: str = "train", seeds: tuple[int, ...] = (0, 1, 2)) -> list[Run]:
    accs = {0: 90.0, 1: 90.1, 2: 90.2}
    return [
        Run(f"{launcher}-s{s}", launcher=launcher, seed=s, acc=accs[s], f1=accs[s] - 1.0)
        for s in seeds
    ]


def rewrite_log(run_dir: Path, text: str) -> None:
    """Replace the run's log and make its record's digest agree (a consistent forgery)."""
    log = run_dir / "log.txt"
    log.write_text(text)
    record_path = run_dir / "record.json"
    record = json.loads(record_path.read_text())
    record["log"].update(sha256=file_sha256(log), size=log.stat().st_size)
    record_path.write_text(json.dumps(record, indent=2) + "\n")


def _write_tree(case: Case, artifact: Path) -> dict[str, Any]:
    """The case's artifact and attempt at ``artifact``; its options, callables computed."""
    data = _write_artifact(artifact, case)
    (artifact / "runs").mkdir()
    for run in case.runs:
        _write_run(artifact, data, run)
    if case.ledger is not None:
        _write_ledger(artifact / "runs", case)
    if case.signer is not None:
        _sign_runs(artifact / "runs", case)
    options = {k: v(artifact) if callable(v) else v for k, v in case.options.items()}
    if case.artifact is not None:
        case.artifact(artifact)
    return options


#: The sections a case of each tag rests on.
TAG_SECTIONS = {
    "verdict": "audit.md#verdicts",
    "interval": "audit.md#compatibility-interval",
    "badge": "audit.md#badges",
    "tampering": "runner.md#evidence",
    "ledger": "runner.md#ledger",
    "rerun": "audit.md#re-execution",
    "signing": "signing.md#signatures",
    "holm": "audit.md#holm",
    "curation": "audit.md#curation",
    "table": "audit.md#table",
}


def citations(
    tags: list[str], codes: list[dict[str, Any]], refusal: list[str], given: list[str]
) -> list[str]:
    """The sections a case cites: ``given``, else those of its tags and the registry's
    section of every code it expects."""
    if given:
        return given
    registry = {e["code"]: e for e in json.loads(CODES.read_text())["codes"]}
    cited = {TAG_SECTIONS[t] for t in tags if t in TAG_SECTIONS} | {"audit.md#audit"}
    cited |= {registry[c]["spec"] for item in codes for c in item["codes"]}
    cited |= {registry[c]["spec"] for c in refusal}
    return sorted(cited)


def _expected(
    case: Case | TableCase, options: dict[str, Any], refusal: list[str]
) -> dict[str, Any]:
    expected: dict[str, Any] = {
        "description": case.description,
        "tags": case.tags,
        "spec": citations(case.tags, case.codes, refusal, case.spec),
    }
    if isinstance(case, TableCase):
        expected["report"] = "table"
        if case.given:
            expected["artifacts"] = [name for name, _ in case.artifacts]
    expected["exit_status"] = case.exit_status
    if options:
        expected["options"] = options
    if refusal:
        expected["refusal"] = refusal
    expected["fields"] = case.fields
    expected["codes"] = case.codes
    return expected


def write_case(case: Case, cases_dir: Path) -> None:
    target = cases_dir / case.name
    if target.exists():
        shutil.rmtree(target)
    options = _write_tree(case, target / "artifact")
    for name, text in case.case_files.items():
        (target / name).write_text(text)
    expected = _expected(case, options, case.refusal)
    (target / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


def write_table_case(case: TableCase, cases_dir: Path) -> None:
    target = cases_dir / case.name
    if target.exists():
        shutil.rmtree(target)
    (target / "artifacts").mkdir(parents=True)
    for name, artifact in case.artifacts:
        where = target / "artifacts" / name
        if where.exists():
            continue  # one artifact given twice
        if artifact is None:
            where.mkdir()
            (where / "README.md").write_text("This directory holds no artifact.\n")
        else:
            _write_tree(artifact, where)
    for archive, packed in case.archives.items():
        from reprobridge_sdk.authoring.pack import pack  # noqa: PLC0415 - only for archives

        pack(target / "artifacts" / packed, target / "artifacts" / archive)
    for name, text in case.case_files.items():
        (target / name).write_text(text)
    expected = _expected(case, dict(case.options), case.refusal)
    (target / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


__all__ = [
    "TAG_SECTIONS",
    "Case",
    "Run",
    "TableCase",
    "base_manifest",
    "citations",
    "honest",
    "keys_line",
    "ledger_head",
    "rewrite_log",
    "run_id",
    "test_key",
    "write_case",
    "write_table_case",
]
