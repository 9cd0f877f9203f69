"""Synthetic artifacts and evidence shared by the benchmarks: one generator of every shape.

Two shapes of artifact, each with the run directories an auditor reads:

* **the realistic shape** (:func:`grow_example`, the default of the scaling benchmarks): the
  bundled example ``examples/digits-logreg`` grown to ``T`` tasks. Its code, lock, data,
  ``GUIDE.md`` and guide records are the example's own; each group of three tasks (the
  example's logistic-regression accuracy and macro-F1 and 1-NN accuracy, with the example's
  five reference observations and their provenance) is measured by a copy of its ``scored``
  launcher (five seeds, six landmarks, one regex measurement on the log with a pattern of its
  own, two JSON-pointer measurements on the metrics file), which ships a sample (log and
  metrics file) with its expected values. ``T`` tasks make ``ceil(T / 3)`` launchers and
  samples and ``5 ceil(T / 3)`` runs. With ``extractors="csv-yaml"`` the two JSON
  measurements read a CSV table and a YAML summary instead (:data:`SHAPES`).
  :func:`write_batch` writes a committee's batch of such artifacts (200 of three tasks each).
* **the JSON-pointer-only best case** (:func:`grow_json_only`): ``T`` tasks measured ten a
  launcher from one flat JSON output, three seeds, no samples, no regex, a one-line guide;
  no real artifact looks like it, so its figures are labelled a best case. ``bench_audit.py``
  (many small artifacts, many attempts) builds on its parts (:func:`task_item`,
  :func:`manifest`, :func:`write_code`, :func:`write_run`).

Every run directory holds the log, the outputs and the ``record.json`` the runner would have
written (digests of every file, the code and lock digests, the argv with the seed and run
directory filled in, the measured values after the transform). Manifests are written as JSON
text, one task or launcher a line (YAML reads JSON), so a plain script can read the same file.
"""

from __future__ import annotations

import copy
import csv
import functools
import io
import json
import math
import random
import shutil
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.guide import update_guide_text
from reprobridge_sdk.model import (
    RECORD_NAME,
    EvidenceRecord,
    FileDigest,
    MeasuredValue,
    OutputRecord,
)
from reprobridge_sdk.run.ledger import append_run

__all__ = [
    "EXAMPLE",
    "SEEDS",
    "SHAPES",
    "Grown",
    "grow",
    "grow_example",
    "grow_json_only",
    "json_lines",
    "json_only_launchers",
    "manifest",
    "task_item",
    "write_batch",
    "write_code",
    "write_run",
]

#: The bundled example that the realistic shape grows.
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "digits-logreg"

#: The shapes :func:`grow` writes: the example's extractor mix (regex + two JSON), the same
#: with CSV and YAML extractors in place of the JSON ones, and the JSON-pointer-only best case.
SHAPES = ("example", "csv-yaml", "json-only")

#: The seeds of every launcher (three seeded runs per launcher).
SEEDS = (0, 1, 2)


def write_code(root: Path) -> tuple[str, str]:
    """The artifact's refined code, lock and guide; returns the code tree's and lock's digests."""
    (root / "code").mkdir(parents=True)
    (root / "code" / "main.py").write_text("print('synthetic')\n")
    (root / "requirements.lock").write_text("# no distributions\n")
    (root / "GUIDE.md").write_text("# Guide\n")
    return tree_digest(root / "code"), file_sha256(root / "requirements.lock")


def task_item(task_id: str, rng: random.Random) -> tuple[dict[str, Any], float]:
    """One task with five reference observations around a random centre, and their mean."""
    centre = rng.uniform(20, 95)
    refs = [round(rng.gauss(centre, 0.4), 4) for _ in range(5)]
    item = {
        "id": task_id,
        "dataset": "synthetic",
        "metric": "score",
        "statistic": {"aggregate": "mean", "seeds": len(SEEDS)},
        "published": {"value": round(centre, 2)},
        "direction": "higher",
        "kind": "full",
        "reference": {
            "observations": [{"value": v, "provenance": {"source": "ref"}} for v in refs]
        },
    }
    return item, statistics.fmean(refs)


def manifest(
    artifact_id: str,
    tasks: list[dict[str, Any]],
    launchers: list[dict[str, Any]],
    *,
    tree: str,
    lock: str,
) -> dict[str, Any]:
    """The manifest of a synthetic artifact (format 1.0) with these tasks and launchers."""
    return {
        "rra_version": "1.0",
        "artifact": {
            "id": artifact_id,
            "title": artifact_id,
            "license": "MIT",
            "paper": {"title": artifact_id},
        },
        "codebase": {
            "upstream": {"repository": "https://example.org/x.git", "commit": "b" * 40},
            "refined": {"kind": "directory", "path": "code"},
            "tree_digest": tree,
        },
        "environment": {
            "python": "3.11",
            "lock": {"path": "requirements.lock", "format": "requirements", "sha256": lock},
        },
        "tasks": tasks,
        "launchers": launchers,
    }


def write_run(
    run_dir: Path,
    *,
    artifact: str,
    launcher: dict[str, Any],
    tree: str,
    lock: str,
    seed: int,
    values: dict[str, float],
) -> None:
    """One succeeded run of ``launcher`` (a manifest entry) with ``seed``: the log, the JSON
    output ``metrics`` holding ``values`` and the record with their digests."""
    run_dir.mkdir(parents=True)
    log = run_dir / "log.txt"
    log.write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
    out = run_dir / "outputs" / "metrics" / "metrics.json"
    out.parent.mkdir(parents=True)
    out.write_text(json.dumps(values))
    record = EvidenceRecord(
        run_id=run_dir.name,
        artifact=artifact,
        launcher=launcher["id"],
        argv=[str(seed) if a == "{seed}" else a for a in launcher["argv"]],
        workdir=".",
        seed=seed,
        scope="scored",
        status="succeeded",
        started_at=f"2026-01-01T{seed // 3600:02d}:{seed // 60 % 60:02d}:{seed % 60:02d}Z",
        code_tree_digest=tree,
        lock_digest=lock,
        log=FileDigest(path="log.txt", sha256=file_sha256(log), size=log.stat().st_size),
        outputs=[
            OutputRecord(
                id="metrics",
                path="outputs/metrics/metrics.json",
                sha256=file_sha256(out),
                size=out.stat().st_size,
            )
        ],
        measurements=[
            MeasuredValue(task=k, value=v, source="output:metrics") for k, v in values.items()
        ],
    )
    (run_dir / RECORD_NAME).write_text(record.model_dump_json(exclude_none=True))


def json_lines(manifest: dict[str, Any]) -> str:
    """Compact JSON with one task or launcher a line (a 10k-task manifest stays readable by
    line-oriented tools; YAML reads it as the same data)."""

    def dump(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"))

    parts = []
    for key, value in manifest.items():
        if isinstance(value, list):
            items = ",\n ".join(dump(v) for v in value)
            parts.append(f"{dump(key)}:[\n {items}]")
        else:
            parts.append(f"{dump(key)}:{dump(value)}")
    return "{" + ",\n".join(parts) + "}\n"


@dataclass
class Grown:
    """What a generator wrote: the artifact's root, its tasks, launchers and run directories,
    and the verdict its runs are written to earn, per task (empty for the best case, whose
    runs are all drawn around the reference mean)."""

    root: Path
    tasks: int
    launchers: int
    runs: int
    verdicts: dict[str, str] = field(default_factory=dict)


def grow(
    root: Path,
    tasks: int,
    rng: random.Random,
    shape: str = "example",
    *,
    runs: bool = True,
    seeds: int | None = None,
) -> Grown:
    """Write an artifact of ``shape`` (one of :data:`SHAPES`) with ``tasks`` tasks, and with
    its runs unless ``runs`` is false; ``seeds`` seeds a launcher instead of the shape's own
    (the example's five, the best case's three)."""
    if shape == "json-only":
        count = len(SEEDS) if seeds is None else seeds
        return grow_json_only(root, tasks, rng, seeds=count if runs else 0)
    return grow_example(root, tasks, rng, extractors=shape, runs=runs, seeds=seeds)


# --- the JSON-pointer-only best case ---------------------------------------------------------

#: Tasks a launcher measures in the best case.
PER_LAUNCHER = 10


def json_only_launchers(tasks: int, seeds: int = len(SEEDS)) -> list[dict[str, Any]]:
    """``tasks / PER_LAUNCHER`` launchers with ``seeds`` seeds each, each measuring its ten
    tasks from one JSON output."""
    launchers = []
    for k in range(max(1, tasks // PER_LAUNCHER)):
        mine = [f"t{t}" for t in range(k * PER_LAUNCHER, min(tasks, (k + 1) * PER_LAUNCHER))]
        launchers.append(
            {
                "id": f"l{k}",
                "argv": ["python", "code/main.py", "--part", str(k), "--seed", "{seed}"],
                "scope": "scored",
                "seeds": list(range(seeds)),
                "outputs": [{"id": "metrics", "path": "metrics.json"}],
                "measurements": [
                    {
                        "task": t,
                        "extract": {"kind": "json", "output": "metrics", "pointer": f"/{t}"},
                    }
                    for t in mine
                ],
            }
        )
    return launchers


def grow_json_only(root: Path, tasks: int, rng: random.Random, seeds: int = len(SEEDS)) -> Grown:
    """The best case: ``tasks`` tasks, ten a launcher, from one flat JSON output each, with
    ``seeds`` seeds and runs a launcher (a launcher declares at least one seed); no samples,
    no regex, a one-line guide."""
    tree, lock = write_code(root)
    task_items, means = [], {}
    for t in range(tasks):
        item, means[f"t{t}"] = task_item(f"t{t}", rng)
        task_items.append(item)
    launchers = json_only_launchers(tasks, max(1, seeds))
    data = manifest("scale", task_items, launchers, tree=tree, lock=lock)
    data["artifact"]["paper"]["title"] = "s"
    (root / "rra.yaml").write_text(json_lines(data))
    runs = 0
    for launcher in launchers:
        ids = [m["task"] for m in launcher["measurements"]]
        for seed in range(seeds):
            values = {t: round(means[t] + rng.gauss(0, 0.3), 4) for t in ids}
            write_run(
                root / "runs" / f"{launcher['id']}-s{seed}",
                artifact="scale",
                launcher=launcher,
                tree=tree,
                lock=lock,
                seed=seed,
                values=values,
            )
            runs += 1
    return Grown(root, tasks, len(launchers), runs)


# --- the realistic shape: the bundled example grown ------------------------------------------

#: The example's three tasks, in the order its launchers measure them: the first from the log
#: by a regex, the other two from the metrics file.
_TASKS = ("logreg-accuracy", "logreg-macro-f1", "knn-accuracy")
#: Where each task's number is in the metrics JSON, and its name in the log.
_POINTERS = ("/logreg/accuracy", "/logreg/macro_f1", "/knn/accuracy")
_LOG_NAMES = ("logreg_accuracy", "logreg_macro_f1", "knn_accuracy")
#: How far a task of ``shifted`` is moved from its reference (percentage points): far outside
#: any interval of the example's spread.
_SHIFT = 10.0


@functools.cache
def _example_data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((EXAMPLE / "rra.yaml").read_text("utf-8"))
    return data


#: What the copies of the example's first group leave out (the first group keeps it all): the
#: launchers' prose, landmarks and defaults (environment variables, timeout, data, the
#: measurements' default aggregate), the tasks' prose and the provenance of their reference
#: observations but a short source. The manifest reader reads at most 8 MiB, and a 10k-task
#: manifest of full copies is 37 MB; trimmed, it holds the same extractors, transforms,
#: samples, seeds and reference values in about 8 MB.
_TRIMMED = ("description", "landmarks", "env", "timeout", "data")
_TASK_KEYS = ("id", "dataset", "metric", "statistic", "published", "direction", "kind")


def _trim_task(item: dict[str, Any]) -> None:
    observations = item["reference"]["observations"]
    for key in [k for k in item if k not in _TASK_KEYS]:
        del item[key]
    item["dataset"] = "digits"
    item["published"].pop("unit", None)
    item["reference"] = {
        "observations": [
            {"value": o["value"], "provenance": {"source": "maintainers"}} for o in observations
        ]
    }


def _example() -> dict[str, Any]:
    """The example's manifest (a fresh copy: the caller changes it)."""
    return copy.deepcopy(_example_data())


def _log(part: int, seed: int, fractions: list[float | None], elapsed: float) -> str:
    """A log of the example's train.py (its progress lines and one line per metric), with the
    accuracy line named for launcher ``part`` (each launcher's regex is its own)."""
    lines = [
        f"[digits] loaded digits: 1797 images, 64 features, seed={seed}",
        "[digits] split: 1347 train, 450 test (stratified)",
        f"[digits] fitted logistic regression: {30 + seed % 7} lbfgs iterations",
        "[digits] fitted 1-nearest-neighbour baseline",
        "[digits] wrote metrics.json",
    ]
    for j, fraction in enumerate(fractions):
        if fraction is not None:
            name = f"{_LOG_NAMES[j]}_p{part}" if j == 0 else _LOG_NAMES[j]
            lines.append(f"{name}={fraction:.6f}")
    lines.append(f"[digits] done in {elapsed:.2f} s")
    return "\n".join(lines) + "\n"


def _outputs(
    directory: Path, seed: int, fractions: list[float | None], extractors: str, elapsed: float
) -> dict[str, Path]:
    """Write the run's metrics files (with the run's wall time, as the example's code does, so
    no run's file is byte-identical to a sample's); return them by output id."""
    directory.mkdir(parents=True, exist_ok=True)
    logreg = {"accuracy": fractions[0], "macro_f1": fractions[1], "iterations": 30 + seed % 7}
    knn = {"accuracy": fractions[2]}
    if extractors == "example":
        path = directory / "metrics.json"
        body = {"seed": seed, "n_train": 1347, "n_test": 450, "logreg": logreg, "knn": knn}
        path.write_text(json.dumps({**body, "elapsed_seconds": elapsed}, indent=2))
        return {"metrics": path}
    table = directory / "metrics.csv"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["seed", "logreg_accuracy", "logreg_macro_f1", "iterations", "elapsed"])
    writer.writerow(
        [seed, repr(fractions[0]), repr(fractions[1]), logreg["iterations"], repr(elapsed)]
    )
    table.write_text(buffer.getvalue())
    summary = directory / "metrics.yaml"
    summary.write_text(
        yaml.safe_dump({"seed": seed, "knn": knn, "n_test": 450, "elapsed_seconds": elapsed})
    )
    return {"table": table, "summary": summary}


def _extractors(part: int, extractors: str) -> list[dict[str, Any]]:
    """The three extractors of launcher ``part``: the example's regex on the log (named for
    the part), then JSON pointers (or a CSV cell and a YAML key)."""
    regex = {
        "kind": "regex",
        "pattern": f"^logreg_accuracy_p{part}=(?P<value>[0-9.]+)$",
        "group": "value",
        "occurrence": "last",
    }
    if extractors == "example":
        return [
            regex,
            *({"kind": "json", "output": "metrics", "pointer": p} for p in _POINTERS[1:]),
        ]
    return [
        regex,
        {"kind": "csv", "output": "table", "column": "logreg_macro_f1"},
        {"kind": "yaml", "output": "summary", "key": "knn.accuracy"},
    ]


def _launcher(
    template: dict[str, Any], part: int, ids: list[str | None], extractors: str
) -> dict[str, Any]:
    """A copy of the example's ``template`` launcher for part ``part`` measuring ``ids``."""
    launcher = copy.deepcopy(template)
    if part:  # a copy without the prose and landmarks (see _TRIMMED)
        for key in _TRIMMED:
            launcher.pop(key, None)
    launcher["id"] = f"{template['id']}-p{part}"
    launcher["argv"] = [*template["argv"], "--part", str(part)]
    if extractors != "example":
        launcher["outputs"] = [
            {"id": "table", "path": "{run_dir}/metrics.csv"},
            {"id": "summary", "path": "{run_dir}/metrics.yaml"},
        ]
    measurements = []
    for j, (task, extract) in enumerate(zip(ids, _extractors(part, extractors), strict=True)):
        if task is not None:
            measurement = {**template["measurements"][j], "task": task, "extract": extract}
            if part and measurement.get("aggregate") == "mean":
                del measurement["aggregate"]  # the default
            measurements.append(measurement)
    launcher["measurements"] = measurements
    return launcher


def _percent(fraction: float) -> float:
    """The value the example's transform (``scale: 100``) makes of a fraction."""
    return fraction * 100.0 + 0.0


def _sample(
    root: Path, launcher: dict[str, Any], part: int, fractions: list[float | None], extractors: str
) -> None:
    """Ship a sample of ``launcher`` (seed 0): its log and outputs, and the expected values."""
    rel = f"samples/{launcher['id']}-seed0"
    log = root / rel / "log.txt"
    log.parent.mkdir(parents=True)
    log.write_text(_log(part, 0, fractions, 0.18787))
    files = _outputs(root / rel, 0, fractions, extractors, 0.18787)
    rounded = [
        None if f is None else float(f"{f:.6f}") if j == 0 else f for j, f in enumerate(fractions)
    ]
    launcher["samples"] = [
        {
            "log": f"{rel}/log.txt",
            "outputs": {key: f"{rel}/{path.name}" for key, path in files.items()},
            "seed": 0,
            "expected": {
                m["task"]: _percent(rounded[_TASKS.index(m["task"].rsplit("-p", 1)[0])] or 0.0)
                for m in launcher["measurements"]
            },
        }
    ]


def _example_run(
    run_dir: Path,
    *,
    artifact: str,
    launcher: dict[str, Any],
    part: int,
    tree: str,
    lock: str,
    seed: int,
    fractions: list[float | None],
    extractors: str,
) -> None:
    """One succeeded run of an example launcher: its log, outputs and record."""
    run_dir.mkdir(parents=True)
    log = run_dir / "log.txt"
    elapsed = 0.2 + seed / 100 + part / 1e6
    log.write_text(_log(part, seed, fractions, elapsed))
    files = _outputs(run_dir, seed, fractions, extractors, elapsed)
    values = {}
    for m in launcher["measurements"]:
        j = _TASKS.index(m["task"].rsplit("-p", 1)[0])
        fraction = fractions[j]
        assert fraction is not None
        values[m["task"]] = (
            _percent(float(f"{fraction:.6f}")) if j == 0 else _percent(fraction),
            "log" if j == 0 else f"output:{m['extract']['output']}",
        )
    context = {"seed": str(seed), "run_dir": str(run_dir)}
    record = EvidenceRecord(
        run_id=run_dir.name,
        artifact=artifact,
        launcher=launcher["id"],
        argv=[_render(a, context) for a in launcher["argv"]],
        workdir=launcher.get("workdir", "."),
        seed=seed,
        scope=launcher.get("scope", "scored"),
        status="succeeded",
        started_at=f"2026-01-01T{part // 3600 % 24:02d}:{part // 60 % 60:02d}:{part % 60:02d}Z",
        code_tree_digest=tree,
        lock_digest=lock,
        log=FileDigest(path="log.txt", sha256=file_sha256(log), size=log.stat().st_size),
        outputs=[
            OutputRecord(id=key, path=path.name, sha256=file_sha256(path), size=path.stat().st_size)
            for key, path in files.items()
        ],
        measurements=[
            MeasuredValue(task=task, value=value, source=source)
            for task, (value, source) in values.items()
        ],
    )
    (run_dir / RECORD_NAME).write_text(record.model_dump_json(exclude_none=True))
    append_run(
        run_dir.parent,
        run_id=record.run_id,
        launcher=record.launcher,
        seed=seed,
        scope=record.scope,
        status=record.status,
        record_sha256=file_sha256(run_dir / RECORD_NAME),
    )


def _render(template: str, context: dict[str, str]) -> str:
    for key, value in context.items():
        template = template.replace("{" + key + "}", value)
    return template


def grow_example(
    root: Path,
    tasks: int,
    rng: random.Random,
    *,
    extractors: str = "example",
    artifact_id: str | None = None,
    shifted: frozenset[str] = frozenset(),
    runs: bool = True,
    seeds: int | None = None,
) -> Grown:
    """Write the bundled example grown to ``tasks`` tasks at ``root``, with its runs.

    Each group of three tasks is a copy of the example's three (reference observations moved
    to a centre of their own, keeping the example's spread) measured by a copy of its
    ``scored`` launcher; the ``smoke`` launcher stays, measuring the first group. Every
    launcher ships a sample. With ``runs``, every scored launcher has a succeeded run per seed
    under ``runs/``, its values drawn around the task's reference mean, except the tasks named
    in ``shifted`` (moved by 10 points, so incompatible). ``seeds`` gives the scored
    launchers seeds 0 to ``seeds - 1`` (and the tasks that many seeds) in place of the
    example's five, for the benchmarks that grow the runs rather than the tasks.
    """
    if extractors not in ("example", "csv-yaml"):
        raise ValueError(f"unknown extractor mix {extractors!r}")
    example = _example()
    artifact = artifact_id or example["artifact"]["id"]
    root.mkdir(parents=True)
    shutil.copytree(EXAMPLE / "code", root / "code")
    shutil.copytree(EXAMPLE / "environment", root / "environment")
    shutil.copy2(EXAMPLE / "GUIDE.md", root / "GUIDE.md")
    tree = tree_digest(root / "code")
    lock = file_sha256(root / example["environment"]["lock"]["path"])
    templates = {t["id"]: t for t in example["tasks"]}
    by_id = {launcher["id"]: launcher for launcher in example["launchers"]}
    if seeds is not None:
        by_id["scored"]["seeds"] = list(range(seeds))
        for item in templates.values():
            item["statistic"]["seeds"] = seeds
    seed_list = list(by_id["scored"]["seeds"])
    task_items: list[dict[str, Any]] = []
    launchers: list[dict[str, Any]] = []
    verdicts: dict[str, str] = {}
    written = 0
    for part in range(math.ceil(tasks / len(_TASKS))):
        ids: list[str | None] = []
        centres: list[float | None] = []
        for j, name in enumerate(_TASKS):
            if part * len(_TASKS) + j >= tasks:
                ids.append(None)
                centres.append(None)
                continue
            item = copy.deepcopy(templates[name])
            item["id"] = f"{name}-p{part}"
            if part:
                _trim_task(item)
            observations = item["reference"]["observations"]
            mean = statistics.fmean(o["value"] for o in observations)
            centre = rng.uniform(90.0, 99.0)
            for o in observations:
                o["value"] = round(o["value"] - mean + centre, 4)
            item["published"]["value"] = round(centre, 1)
            task_items.append(item)
            ids.append(item["id"])
            centres.append(statistics.fmean(o["value"] for o in observations))
            verdicts[item["id"]] = "incompatible" if item["id"] in shifted else "compatible"
        scored = _launcher(by_id["scored"], part, ids, extractors)
        sample = [None if c is None else c / 100 for c in centres]
        _sample(root, scored, part, sample, extractors)
        if part == 0:
            smoke = _launcher(by_id["smoke"], part, ids, extractors)
            toy = [None if c is None else (c - 2.5) / 100 for c in centres]
            _sample(root, smoke, part, toy, extractors)
            launchers.append(smoke)
            if runs:
                _example_run(
                    root / "runs" / f"{smoke['id']}-s0",
                    artifact=artifact,
                    launcher=smoke,
                    part=part,
                    tree=tree,
                    lock=lock,
                    seed=0,
                    fractions=toy,
                    extractors=extractors,
                )
                written += 1
        launchers.append(scored)
        for seed in seed_list if runs else ():
            fractions: list[float | None] = []
            for task, centre in zip(ids, centres, strict=True):
                if centre is None:
                    fractions.append(None)
                    continue
                shift = _SHIFT if task in shifted else 0.0
                fractions.append((centre + shift + rng.gauss(0, 0.3)) / 100)
            _example_run(
                root / "runs" / f"{scored['id']}-s{seed}",
                artifact=artifact,
                launcher=scored,
                part=part,
                tree=tree,
                lock=lock,
                seed=seed,
                fractions=fractions,
                extractors=extractors,
            )
            written += 1
    data = copy.deepcopy(example)
    data["artifact"]["id"] = artifact
    data["codebase"]["tree_digest"] = tree
    data["tasks"] = task_items
    data["launchers"] = launchers
    for entries in data["guide"].values():
        for entry in entries if isinstance(entries, list) else ():
            if "tasks" in entry:
                entry["tasks"] = [f"{t}-p0" for t in entry["tasks"] if f"{t}-p0" in verdicts]
                if not entry["tasks"]:
                    del entry["tasks"]
    guide = root / data["guide"]["path"]
    guide.write_text(update_guide_text(guide.read_text("utf-8"), data["guide"]), "utf-8")
    (root / "rra.yaml").write_text(json_lines(data))
    return Grown(root, len(task_items), len(launchers), written, verdicts)


def write_batch(
    base: Path, count: int, rng: random.Random, *, extractors: str = "example"
) -> list[Path]:
    """A committee's batch: ``count`` example-shaped artifacts (the example's three tasks, its
    two launchers and samples, five runs of the scored one), each with an id of its own."""
    roots = []
    for i in range(count):
        root = base / f"digits-logreg-{i:03d}"
        grow_example(root, len(_TASKS), rng, extractors=extractors, artifact_id=root.name)
        roots.append(root)
    return roots
