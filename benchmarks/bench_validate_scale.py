"""Benchmark: ``validate`` as the manifest grows (100 -> 1k -> 10k tasks), against ajv.

The manifests are the audit scaling benchmark's (``bench_audit_scale.build``: ``T`` tasks,
``T / 10`` launchers), written as JSON text so that ajv reads the very same bytes (a copy
named ``.json``). Both sides are whole processes, timed as alternated pairs, medians of wall
and CPU seconds, peak memory of each command alone (GNU ``time``; see
``bench_audit_scale.measure``):

* ours: ``python -m reprobridge_sdk validate DIR --format json``: every layer (YAML with a
  position for every value, version, schema, semantics, files, lock, replay, guide);
* ajv: ``ajv validate --spec=draft2020 --all-errors -s rra-1.0.schema.json -d rra.json``
  (npm ``ajv-cli``): the schema only, no positions. Give its path with ``--ajv`` or put it on
  ``PATH``.

Target (issue 14): 10k tasks within 3x ajv; exponent at most 1.1.

The manifests are JSON text, which the reader parses with :mod:`json` (the subset YAML reads
alike). With ``--variants`` the largest size is also measured in the two cases that take the
slower paths: the same manifest written as block YAML (libyaml composes it; ajv still reads
the JSON copy), and the JSON manifest with one unknown key in its last task (a finding: the
positions are computed, by composing the text as YAML; ajv reports the same key).

Run: ``python benchmarks/bench_validate_scale.py [--sizes 100 1000 10000 --repeats 5]``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_audit_scale import _json_lines, build, exponent, pairs

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ajv", default=shutil.which("ajv"), help="the ajv-cli executable")
    parser.add_argument(
        "--variants", action="store_true", help="also block YAML and one finding, largest size"
    )
    args = parser.parse_args()
    if not args.ajv:
        raise SystemExit("ajv not found: npm install ajv-cli, then --ajv PATH")
    schema = REPO / "schemas" / "rra-1.0.schema.json"
    ours_c, ajv_c = [], []
    with tempfile.TemporaryDirectory() as tmp:
        print(
            f"{'tasks':>6} {'ours s':>7} {'ajv s':>7} {'ratio':>6} {'ours cpu':>8} "
            f"{'ajv cpu':>8} {'ratio':>6} {'ours MiB':>8} {'ajv MiB':>8}"
        )
        for size in args.sizes:
            root = Path(tmp) / f"a{size}"
            build(root, size, random.Random(size))
            copy = root / "rra.json"
            shutil.copyfile(root / "rra.yaml", copy)
            ours = [sys.executable, "-m", "reprobridge_sdk", "validate", str(root)]
            ours += ["--format", "json"]
            ajv = [args.ajv, "validate", "--spec=draft2020", "--strict=false", "--all-errors"]
            ajv += ["-s", str(schema), "-d", str(copy)]
            got = pairs({"ours": ours, "ajv": ajv}, args.repeats, ok=(0,))
            (o, oc, o_kib), (a, ac, a_kib) = got["ours"], got["ajv"]
            ours_c.append(oc)
            ajv_c.append(ac)
            print(
                f"{size:>6} {o:>7.2f} {a:>7.2f} {o / a:>6.2f} {oc:>8.2f} {ac:>8.2f} "
                f"{oc / ac:>6.2f} {o_kib / 1024:>8.0f} {a_kib / 1024:>8.0f}"
            )
        if args.variants:
            _variants(Path(tmp) / "variants", max(args.sizes), args, schema)
    if len(args.sizes) > 1:
        print(
            f"fitted exponent, CPU time ~ tasks^k: ours {exponent(args.sizes, ours_c):.2f}, "
            f"ajv {exponent(args.sizes, ajv_c):.2f}"
        )


def _variants(root: Path, size: int, args: argparse.Namespace, schema: Path) -> None:
    """The largest manifest as block YAML, and as JSON with one finding (see the docstring)."""
    build(root, size, random.Random(size))
    data = json.loads((root / "rra.yaml").read_text("utf-8"))
    copy = root / "rra.json"
    copy.write_text(json.dumps(data), "utf-8")
    ajv = [args.ajv, "validate", "--spec=draft2020", "--strict=false", "--all-errors"]
    ajv += ["-s", str(schema), "-d", str(copy)]
    ours = [sys.executable, "-m", "reprobridge_sdk", "validate", str(root), "--format", "json"]
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    got = pairs({"ours": ours, "ajv": ajv}, args.repeats, ok=(0,))
    _row(f"{size} as block YAML", got)
    data["tasks"][-1]["metirc"] = "score"
    (root / "rra.yaml").write_text(_json_lines(data), "utf-8")  # as built, under 8 MiB
    copy.write_text(json.dumps(data), "utf-8")
    got = pairs({"ours": ours, "ajv": ajv}, args.repeats, ok=(1,))
    _row(f"{size}, one unknown key", got)


def _row(label: str, got: dict[str, tuple[float, float, int]]) -> None:
    (o, oc, o_kib), (a, ac, a_kib) = got["ours"], got["ajv"]
    print(
        f"{label}: {o:.2f} / {a:.2f} s (ratio {o / a:.2f}), CPU {oc:.2f} / {ac:.2f} s "
        f"(ratio {oc / ac:.2f}), {o_kib / 1024:.0f} / {a_kib / 1024:.0f} MiB"
    )


if __name__ == "__main__":
    main()
