"""Benchmark: ``validate`` as the manifest grows (100 -> 1k -> 10k tasks), against ajv.

The manifests are the audit scaling benchmark's, without their runs (``_synthetic.grow``): by
default the realistic shape, the bundled example grown to ``T`` tasks (``ceil(T / 3)`` copies of
its scored launcher, each with one regex and two JSON-pointer measurements and a shipped sample
of a log and a metrics file, which ``validate`` replays; the example's guide and five seeds);
``--shape csv-yaml`` with CSV and YAML extractors in place of the JSON ones; ``--shape json-
only`` the labelled best case (``T / 10`` launchers of ten JSON pointers, no samples). Both
sides are whole processes (ours with its bytecode written first:
``bench_audit_scale.compile_bytecode``), timed as alternated pairs, medians of wall and CPU
seconds, peak memory of each command alone (GNU ``time``; see ``bench_audit_scale.measure``):

* ours: ``python -m reprobridge_sdk validate DIR --format json``: every layer (YAML with a
  position for every finding, version, schema, semantics, files, lock, replay, guide);
* ajv: ``ajv validate --spec=draft2020 --all-errors -s rra-1.0.schema.json -d FILE`` (npm
  ``ajv-cli``) on the very manifest text ours reads: the schema only, no positions. A block
  case's file is named ``.yaml``, which ajv-cli reads with js-yaml, so each side parses the
  same YAML (before 2026-12-04 ajv read the JSON of the same data in every case). Give its
  path with ``--ajv`` or put it on ``PATH``.

Every size is measured in each case (one reader, PyYAML's composer and the converter that
records every position, reads them all):

* ``json``: the manifest as JSON text, one task or launcher a line;
* ``block``: the same data as block YAML with flow-style leaves (``_block``);
* ``json, 1 finding``: the JSON manifest with an unknown key in its last task (S001);
* ``json, T/10 findings``: an unknown key in every tenth task (1,000 findings at 10k);
* ``block, 1 finding``: the block YAML manifest with the unknown key in its last task.

Printed: the shape and the machine's load (``uptime``) before and after, one row per case and
size (the CPU ratio's target beside it at the largest size for ``json`` and ``block``), then per
case the exponent fitted to CPU time ~ tasks^k on both sides, over all sizes and from the last
but one size to the last. Targets (issue 24, on the realistic shape): ``json`` and ``block``
(YAML) at 10k tasks within 3x ajv; every exponent from 1k to 10k at most 1.1.

``--quick`` runs 30 and 90 tasks once each: a check that the benchmark runs and prints its
table, not a measurement.

``--before DIR`` times the same command on an earlier version of the package as a third side
(``bench_audit_scale.before_side``) and prints this version's ratios to it below each row.

Run: ``python benchmarks/bench_validate_scale.py [--shape example|csv-yaml|json-only]
[--sizes 100 1000 10000 --repeats 5] [--quick] [--before DIR]``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import SHAPES, grow, json_lines
from bench_audit_scale import (
    TARGET_RATIO,
    before_side,
    compile_bytecode,
    exponents,
    load,
    pairs,
    print_before,
    target,
)

REPO = Path(__file__).resolve().parent.parent
CASES = ("json", "block", "json, 1 finding", "json, T/10 findings", "block, 1 finding")


def _block(data: dict[str, Any]) -> str:
    """Block YAML whose innermost collections are in flow style (``{kind: json, ...}``), as
    the bundled example writes its extractors: a 10k-task manifest stays under the reader's
    8 MiB where all-block YAML of the grown example would not."""
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def _texts(data: dict[str, Any]) -> dict[str, str]:
    """Per case: the manifest's text (both sides read it)."""
    one = json.loads(json.dumps(data))
    one["tasks"][-1]["metirc"] = "score"
    many = json.loads(json.dumps(data))
    for task in many["tasks"][::10]:
        task["metirc"] = "score"
    return {
        "json": json_lines(data),
        "block": _block(data),
        "json, 1 finding": json_lines(one),
        "json, T/10 findings": json_lines(many),
        "block, 1 finding": _block(one),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--ajv", default=shutil.which("ajv"), help="the ajv-cli executable")
    parser.add_argument(
        "--shape",
        choices=SHAPES,
        default="example",
        help="the grown example (default), with CSV/YAML extractors, or the JSON-pointer-only "
        "best case",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes, once: a smoke test")
    parser.add_argument(
        "--before", help="a directory with an earlier reprobridge_sdk, timed as a third side"
    )
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.repeats = [30, 90], 1
    if not args.ajv:
        raise SystemExit("ajv not found: npm install ajv-cli, then --ajv PATH")
    best = " (best case: no real artifact looks like it)" if args.shape == "json-only" else ""
    print(f"shape: {args.shape}{best}; {args.repeats} alternated pairs, medians")
    compile_bytecode(Path(args.before) / "reprobridge_sdk" if args.before else None)
    print(f"load before: {load()}")
    schema = REPO / "schemas" / "rra-1.0.schema.json"
    cpu: dict[str, tuple[list[float], list[float]]] = {case: ([], []) for case in args.cases}
    print(
        f"{'case':<20} {'tasks':>6} {'ours s':>7} {'ajv s':>7} {'ratio':>6} {'ours cpu':>8} "
        f"{'ajv cpu':>8} {'ratio':>6} {'ours MiB':>8} {'ajv MiB':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            root = Path(tmp) / f"a{size}"
            grow(root, size, random.Random(size), args.shape, runs=False)
            data = json.loads((root / "rra.yaml").read_text("utf-8"))
            ours = [sys.executable, "-m", "reprobridge_sdk", "validate", str(root)]
            ours += ["--format", "json"]
            ajv_args = [args.ajv, "validate", "--spec=draft2020", "--strict=false"]
            ajv_args += ["--all-errors", "-s", str(schema), "-d"]
            texts = _texts(data)
            for case in args.cases:
                text = texts[case]
                (root / "rra.yaml").write_text(text, "utf-8")
                # ajv reads the very same text, named for the reader it takes
                copy = Path(tmp) / f"rra{size}.{'yaml' if case.startswith('block') else 'json'}"
                copy.write_text(text, "utf-8")
                ajv = [*ajv_args, str(copy)]
                ok = (0,) if "finding" not in case else (1,)
                sides = {"ours": ours, "ajv": ajv, **before_side(ours, args.before)}
                got = pairs(sides, args.repeats, ok=ok)
                (o, oc, o_kib), (a, ac, a_kib) = got["ours"], got["ajv"]
                cpu[case][0].append(oc)
                cpu[case][1].append(ac)
                print(
                    f"{case:<20} {size:>6} {o:>7.2f} {a:>7.2f} {o / a:>6.2f} {oc:>8.2f} "
                    f"{ac:>8.2f} {oc / ac:>6.2f} {o_kib / 1024:>8.0f} {a_kib / 1024:>8.0f}",
                    flush=True,
                )
                print_before(got)
                if size == args.sizes[-1] and case in ("json", "block"):
                    print(
                        f"  CPU ratio of {case} at {size} tasks: {oc / ac:.2f} "
                        f"{target(oc / ac, TARGET_RATIO)}"
                    )
    print(f"load after: {load()}")
    if len(args.sizes) > 1:
        for case, (ours_c, ajv_c) in cpu.items():
            exponents(f"tasks ({case})", args.sizes, ours_c, ajv_c, "ajv")


if __name__ == "__main__":
    main()
