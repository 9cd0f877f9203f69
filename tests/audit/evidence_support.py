"""Helpers of the trust tests (ledger, signatures, re-execution): forgeries as files.

Every forgery here is what a dishonest producer can do with the files alone: edit a log and
recompute its digest, write a run directory by hand, delete runs, rewrite the ledger.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.io.atomic import atomic_write_json
from reprobridge_sdk.model import RECORD_NAME
from reprobridge_sdk.model.attestation import LedgerLink
from reprobridge_sdk.run import load_record, run
from reprobridge_sdk.run.ledger import GENESIS, LEDGER_NAME, entry_hash
from reprobridge_sdk.signing import ENVELOPE_NAME, SigningKey, run_statement, sign_payload
from reprobridge_sdk.signing.statement import statement_bytes


def honest_runs(
    artifact: Path, launcher: str, seeds: list[int], key: SigningKey | None = None
) -> list[Path]:
    """Run ``launcher`` with the real runner (current environment); the run directories."""
    summary = run(artifact, [launcher], env_mode="current", seeds=seeds, sign_key=key)
    assert all(r.record.status == "succeeded" for r in summary.results)
    return [r.run_dir for r in sorted(summary.results, key=lambda r: r.record.seed or 0)]


def consistent_edit(run_dir: Path, accuracy: float) -> None:
    """Change the accuracy in the log and make the record agree: digests and value."""
    log = run_dir / "log.txt"
    text = log.read_text()
    start = text.index("test accuracy: ")
    end = text.index("\n", start)
    log.write_text(f"{text[:start]}test accuracy: {accuracy:.4f}{text[end:]}")
    record_path = run_dir / RECORD_NAME
    data = json.loads(record_path.read_text())
    data["log"]["sha256"] = file_sha256(log)
    data["log"]["size"] = log.stat().st_size
    for item in data["measurements"]:
        if item["task"] == "acc":
            item["value"] = accuracy
            item["raw"] = f"{accuracy:.4f}"
    record_path.write_text(json.dumps(data, indent=2))


def fabricate(template: Path, target: Path, accuracy: float) -> Path:
    """A run directory written by hand after an honest one (same seed), claiming ``accuracy``."""
    shutil.copytree(template, target)
    for name in ("record.dsse.json",):
        (target / name).unlink(missing_ok=True)
    record_path = target / RECORD_NAME
    data = json.loads(record_path.read_text())
    data["run_id"] = target.name
    record_path.write_text(json.dumps(data, indent=2))
    consistent_edit(target, accuracy)
    return target


def ledger_lines(runs_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (runs_dir / LEDGER_NAME).read_text().splitlines()]


def write_ledger(runs_dir: Path, entries: list[dict[str, Any]], *, rechain: bool) -> None:
    """Write ``entries`` as the ledger; with ``rechain`` recompute seq, prev and hash."""
    out: list[dict[str, Any]] = []
    prev = GENESIS
    for index, entry in enumerate(entries, start=1):
        item = dict(entry)
        if rechain:
            item.update(seq=index, prev=prev)
            item["hash"] = entry_hash(item)
            prev = item["hash"]
        out.append(item)
    text = "".join(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n" for e in out)
    (runs_dir / LEDGER_NAME).write_text(text)


def record_digest(run_dir: Path) -> str:
    return hashlib.sha256((run_dir / RECORD_NAME).read_bytes()).hexdigest()


def forge_ledger_and_signatures(runs_dir: Path, key: SigningKey) -> None:
    """What a key holder does after editing runs: record the new record digests in a
    rewritten ledger and sign every run again, with its new ledger link."""
    entries = ledger_lines(runs_dir)
    for entry in entries:
        entry["record_sha256"] = record_digest(runs_dir / entry["run_id"])
    write_ledger(runs_dir, entries, rechain=True)
    for entry in ledger_lines(runs_dir):
        target = runs_dir / entry["run_id"]
        link = LedgerLink(seq=entry["seq"], entry=entry["hash"])
        statement = run_statement(target, load_record(target), link)
        envelope = sign_payload(statement_bytes(statement), key)
        atomic_write_json(target / ENVELOPE_NAME, envelope.to_json())
