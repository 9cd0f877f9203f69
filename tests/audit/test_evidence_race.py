"""Hostile: the log swapped for a link to the outside while the auditor verifies the run.

A second process (real concurrency, on its own core) replaces the run's log, atomically and in
a tight loop, by a symbolic link to an outside file and back by the inside file. The outside
file is the one the record's digest names: an auditor that hashed it would find the log
intact (no A004, no A040). The inside file differs from the digest (A004). The auditor opens
the log once, every component resolved from the run directory's descriptor with links
refused (``verify.check_run``), and hashes that descriptor: every verification gives
A040 (it met the link) or A004 (it read the inside file), never an intact log, and never a
value read from the outside file.

Also here: a FIFO in place of the log is refused at once (A040), not waited on.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from audit_support import edit_record

from reprobridge_sdk.audit import load_artifact
from reprobridge_sdk.audit.verify import check_run

SWAPPER = """
import os, sys
log, outside, keep = sys.argv[1], sys.argv[2], sys.argv[3]
link, copy = log + ".link", log + ".copy"
print("ready", flush=True)
while True:
    os.symlink(outside, link)
    os.replace(link, log)
    os.link(keep, copy)
    os.replace(copy, log)
"""

#: Verifications attempted while the swapper runs (at least; see the loop).
CHECKS = 300


def test_a_log_swapped_for_a_link_outside_is_never_read(toy: Path, tmp_path: Path) -> None:
    run = toy / "runs" / "scored-s0"
    log = run / "log.txt"
    honest = log.read_bytes()
    outside = tmp_path / "outside.txt"
    outside.write_bytes(honest.replace(b"test accuracy: ", b"test accuracy: 9"))
    assert outside.read_bytes() != honest
    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    edit_record(run, lambda d: d["log"].update(sha256=digest))
    keep = tmp_path / "keep" / "log.txt"  # the inside file, hard-linked back in by the swapper
    keep.parent.mkdir()
    os.link(log, keep)
    facts = load_artifact(toy)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(log), str(outside), str(keep)],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: dict[str, int] = {}
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        deadline = time.monotonic() + 60
        checks = 0
        while True:
            checks += 1
            evidence = check_run(facts, run, "scored-s0")
            codes = {f.code for f in evidence.findings} & {"A003", "A004", "A040"}
            outcome = ",".join(sorted(codes)) or "intact"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if outcome == "intact":
                break  # the outside file was hashed: fail below with the counts
            if checks >= CHECKS and outcomes.get("A004") and outcomes.get("A040"):
                break
            if time.monotonic() > deadline:
                break
        assert swapper.poll() is None, "the swapper stopped: the race was not exercised"
    finally:
        swapper.kill()
        swapper.wait()
        if swapper.stdout is not None:
            swapper.stdout.close()
    assert set(outcomes) <= {"A004", "A040"}, outcomes
    assert outcomes.get("A004") and outcomes.get("A040"), outcomes  # both states were met


def test_a_fifo_in_place_of_the_log_is_refused_without_waiting(toy: Path) -> None:
    run = toy / "runs" / "scored-s0"
    (run / "log.txt").unlink()
    os.mkfifo(run / "log.txt")
    evidence = check_run(load_artifact(toy), run, "scored-s0")
    # A040: the log is not evidence; A069: the run folder's scan names the FIFO too
    assert {f.code for f in evidence.findings} == {"A040", "A069"}
    assert not evidence.valid
