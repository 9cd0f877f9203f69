"""Benchmark: reading a JSON manifest by the fast path, against a bare ``json.loads``.

The manifest is the audit scaling benchmark's (``T`` tasks, ``T / 10`` launchers: 5.3 MB at
10k tasks), in two layouts: one task or launcher a line (what the benchmarks write) and
``json.dumps(indent=1)`` (what tools write). Both sides run in this process, the collector
paused (as ``load_document`` pauses it), timed as pairs whose order alternates, medians of CPU
seconds reported:

* ours: ``reprobridge_sdk.io._jsonfast._json_subset`` (every rule of the subset checked, the
  duplicate-key hook, the nesting measured);
* the baseline: ``json.loads`` of the same text, which checks nothing.

Printed per layout: both medians and their ratio. Issue 14 asked for 0.10 s or less at 10k
tasks (0.28 s before, 6.4x the bare parse).

Run: ``python benchmarks/bench_jsonfast.py [--tasks 10000 --repeats 9]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import json_lines, json_only_launchers, manifest, task_item, write_code

from reprobridge_sdk.io._jsonfast import _json_subset


def _data(tasks: int) -> dict[str, Any]:
    """The audit scaling benchmark's manifest data (without its runs)."""
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as scratch:
        tree, lock = write_code(Path(scratch))
    items = [task_item(f"t{t}", rng)[0] for t in range(tasks)]
    launchers = json_only_launchers(tasks)
    data = manifest("scale", items, launchers, tree=tree, lock=lock)
    data["artifact"]["paper"]["title"] = "s"
    return data


def _cpu(call: Callable[[], object]) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    data = _data(args.tasks)
    texts = {"one item a line": json_lines(data), "indent=1": json.dumps(data, indent=1)}
    print(f"{args.tasks} tasks, medians of {args.repeats} alternated pairs, CPU seconds")
    print(f"{'layout':<16} {'MB':>5} {'ours':>7} {'json':>7} {'ratio':>6}")
    for name, text in texts.items():
        if _json_subset(text) != json.loads(text):
            raise SystemExit(f"{name}: the fast path does not read the text as json does")
        ours: list[float] = []
        base: list[float] = []
        gc.disable()
        try:
            for repeat in range(args.repeats):
                pair = [
                    (ours, lambda text=text: _json_subset(text)),
                    (base, lambda text=text: json.loads(text)),
                ]
                for times, call in pair if repeat % 2 == 0 else pair[::-1]:
                    times.append(_cpu(call))
        finally:
            gc.enable()
        mine, theirs = statistics.median(ours), statistics.median(base)
        size = len(text) / 1e6
        print(f"{name:<16} {size:5.1f} {mine:7.3f} {theirs:7.3f} {mine / theirs:6.2f}")


if __name__ == "__main__":
    main()
