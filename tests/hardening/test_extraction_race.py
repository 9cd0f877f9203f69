"""Hostile: a directory swapped for a link to the outside while a measurement is extracted.

A run's output ``d/m.*`` is read by each extractor kind while a second process renames ``d``
away, plants a symbolic link to an outside directory in its place and puts ``d`` back, in a
tight loop (as in ``test_safefs_race.py``). The outside directory holds files of the same
names with another value. Extraction opens the file once, component by component from the
run directory's descriptor, and reads it only through that descriptor: every attempt gives the
inside value or a refusal (``unsafe-file``, or ``missing-file`` while ``d`` is away), never
the outside value.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from reprobridge_sdk import ExtractionError, extract_value
from reprobridge_sdk.extract.extraction import ExtractionCache

SWAPPER = """
import os, sys
root, outside = sys.argv[1], sys.argv[2]
real, away = os.path.join(root, "d"), os.path.join(root, "d.away")
print("ready", flush=True)
while True:
    os.rename(real, away)
    os.symlink(outside, real)
    os.unlink(real)
    os.rename(away, real)
"""

#: Extractions attempted at least (each is well under a millisecond).
ATTEMPTS = 3000

#: The file each kind reads and its content, inside (value 1) and outside (value 999).
FILES = {
    "regex": ("m.log", "loss 0.5\nacc {v}\n", {"kind": "regex", "pattern": r"acc (\d+)"}),
    "json": ("m.json", '{{"acc": {v}}}', {"kind": "json", "pointer": "/acc"}),
    "csv": ("m.csv", "acc\n{v}\n", {"kind": "csv", "column": "acc"}),
    "yaml": ("m.yaml", "acc: {v}\n", {"kind": "yaml", "key": "acc"}),
}


@pytest.mark.parametrize("kind", sorted(FILES))
@pytest.mark.parametrize("cached", [False, True], ids=["alone", "batch"])
def test_a_swapped_directory_never_leads_an_extraction_outside(
    tmp_path: Path, kind: str, cached: bool
) -> None:
    name, template, extractor = FILES[kind]
    root = tmp_path / "run"
    (root / "d").mkdir(parents=True)
    (root / "d" / name).write_text(template.format(v=1))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / name).write_text(template.format(v=999))
    spec = {**extractor, "file": f"d/{name}"}
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), str(outside)],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: dict[object, int] = {}
    cache = ExtractionCache() if cached else None
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        deadline = time.monotonic() + 60
        attempts = 0
        while True:
            attempts += 1
            try:
                found = extract_value(
                    spec,
                    log=None,
                    files_base=root,
                    outputs={},
                    context={},
                    root=root,
                    cache=cache,
                )
            except ExtractionError as exc:
                outcome: object = exc.reason
            else:
                outcome = found.value
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            swapped = outcomes.get("unsafe-file", 0) + outcomes.get("missing-file", 0)
            if attempts >= ATTEMPTS and outcomes.get(1.0, 0) and swapped:
                break
            if time.monotonic() > deadline:
                break
        assert swapper.poll() is None, "the swapper stopped: the race was not exercised"
    finally:
        swapper.kill()
        swapper.wait()
        if swapper.stdout is not None:
            swapper.stdout.close()
    assert 999.0 not in outcomes, outcomes
    assert set(outcomes) <= {1.0, "unsafe-file", "missing-file"}, outcomes
    assert outcomes.get(1.0, 0) > 0, outcomes
    assert outcomes.get("unsafe-file", 0) + outcomes.get("missing-file", 0) > 0, outcomes
