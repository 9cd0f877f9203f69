"""Round-trip YAML, the artifact API and the schema command, each beside a baseline.

Run: ``python benchmarks/bench_roundtrip.py``. Prints the median of repeated timings and the
ratio ours / baseline (below 1 means ours is faster). Nothing here asserts a time.

* load: ``yamlio.load`` (safety pass with positions + ruamel round-trip tree) vs a bare
  ``ruamel.yaml`` round-trip load, the least any comment-keeping loader must do;
* api.load: the typed, located, round-trip load vs ``Manifest.model_validate(yaml.safe_load())``
  (no comments kept, no positions);
* save: a one-value edit written as a minimal diff (in the text) vs a full ruamel re-dump of
  the tree; save+key: an edit that adds a key (through the round-trip tree, spliced back);
* schema: ``reprobridge schema`` (prints the packaged file) vs generating the schema from the
  models in a fresh interpreter.
"""

from __future__ import annotations

import copy
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _median(func: Callable[[], object], repeats: int) -> float:
    func()  # warm caches and imports
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _row(label: str, ours: float, base: float) -> None:
    print(
        f"{label:<10} ours {ours * 1000:8.2f} ms   baseline {base * 1000:8.2f} ms   "
        f"ratio {ours / base:5.2f}"
    )


def _example() -> Path:
    for candidate in sorted((REPO / "examples").glob("*/rra.yaml")):
        return candidate.parent
    sys.exit("no example artifact under examples/")


def main() -> None:
    import yaml
    from ruamel.yaml import YAML

    from reprobridge_sdk import api
    from reprobridge_sdk.io import yamlio
    from reprobridge_sdk.model import Manifest

    example = _example()
    work = Path(tempfile.mkdtemp()) / example.name
    shutil.copytree(example, work, symlinks=True)
    manifest = work / "rra.yaml"
    text = manifest.read_text("utf-8")
    print(f"example: {example.relative_to(REPO)} ({len(text)} bytes)")

    def ruamel_load() -> object:
        return YAML(typ="rt").load(text)

    _row("load", _median(lambda: yamlio.load(manifest), 30), _median(ruamel_load, 30))

    def plain_api() -> object:
        return Manifest.model_validate(yaml.safe_load(manifest.read_text("utf-8")))

    _row("api.load", _median(lambda: api.load(work), 30), _median(plain_api, 30))

    doc = yamlio.load(manifest)
    data = copy.deepcopy(doc.data)
    data["artifact"]["title"] = "An edited title"

    def ours_save() -> str:
        fresh = yamlio.load(manifest)
        yamlio.update(fresh, data)
        return yamlio.dumps(fresh)

    def full_dump() -> str:
        tree = YAML(typ="rt").load(text)
        tree["artifact"]["title"] = "An edited title"
        out = io.StringIO()
        YAML(typ="rt").dump(tree, out)
        return out.getvalue()

    _row("save", _median(ours_save, 20), _median(full_dump, 20))

    added = copy.deepcopy(data)
    added.setdefault("x-notes", ["a new key, written through the round-trip tree"])

    def ours_structural() -> str:
        fresh = yamlio.load(manifest)
        yamlio.update(fresh, added)
        return yamlio.dumps(fresh)

    _row("save+key", _median(ours_structural, 10), _median(full_dump, 10))

    def cli_schema() -> object:
        return subprocess.run(
            [sys.executable, "-m", "reprobridge_sdk", "schema"], capture_output=True, check=True
        )

    def generate() -> object:
        code = "from reprobridge_sdk.schema import render_schema; render_schema('rra-1.0')"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)

    _row("schema", _median(cli_schema, 7), _median(generate, 7))
    shutil.rmtree(work.parent)


if __name__ == "__main__":
    main()
