"""Placeholders layer: values a scaffold wrote that only the author can replace (P codes).

The codes and the auditor's badge rules are spec ``authoring.md#placeholders``. P006 is
checked only when files are read. The constants are the scaffold's:
:mod:`reprobridge_sdk.authoring.scaffold` writes them from here, so the two cannot drift,
and which fields are placeholders is :func:`placeholder_pointers`, never a list beside it.
"""

from __future__ import annotations

import hashlib
import random
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from reprobridge_sdk.findings import Finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.document import Document
from reprobridge_sdk.validation._plain import mapping

__all__ = [
    "HINTS",
    "MARK",
    "PAPER_TITLE",
    "PLACEHOLDER_COMMIT",
    "REPOSITORY",
    "SCAFFOLD_SEEDS",
    "SCAFFOLD_SOURCE",
    "ZERO_COMMIT",
    "check_placeholders",
    "experiment_value",
    "is_placeholder_commit",
    "placeholder_pointers",
    "scaffold_sample_digests",
    "scaffold_sample_log",
]

PAPER_TITLE = "Replace with the paper's title"
REPOSITORY = "https://example.org/replace-me/upstream.git"
ZERO_COMMIT = re.compile(r"^0+$")
#: The commit the scaffold writes: the null object id.
PLACEHOLDER_COMMIT = "0" * 40
SCAFFOLD_SOURCE = "reprobridge init"
#: The suffix the scaffold puts on texts the author must rewrite.
MARK = "(placeholder)"
SCAFFOLD_SEEDS = (1, 2, 3, 4, 5)


def experiment_value(seed: int, steps: int = 1000) -> float:
    """The value the scaffolded ``code/experiment.py`` prints for ``seed`` (4 decimals)."""
    rng = random.Random(seed)
    return round(sum(rng.random() < 0.9 for _ in range(steps)) / steps, 4)


def scaffold_sample_log(seed: int) -> str:
    """The sample log the scaffold writes for ``seed``."""
    return f"training started\ntraining finished\naccuracy: {experiment_value(seed):.4f}\n"


@lru_cache(maxsize=1)
def scaffold_sample_digests() -> frozenset[str]:
    """SHA-256 of every sample log the scaffold can write."""
    return frozenset(
        hashlib.sha256(scaffold_sample_log(seed).encode()).hexdigest() for seed in SCAFFOLD_SEEDS
    )


def is_placeholder_commit(commit: Any) -> bool:
    """True for the null object id (all zeros), which no repository has (P003)."""
    return isinstance(commit, str) and ZERO_COMMIT.match(commit) is not None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _scan(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(code, pointer, message)`` of every placeholder in the manifest's data."""
    out: list[tuple[str, str, str]] = []
    artifact = mapping(data.get("artifact"))
    if mapping(artifact.get("paper")).get("title") == PAPER_TITLE:
        out.append(("P001", "/artifact/paper/title", "the paper's title is the scaffold's"))
    upstream = mapping(mapping(data.get("codebase")).get("upstream"))
    if is_placeholder_commit(upstream.get("commit")):
        out.append(("P003", "/codebase/upstream/commit", "the upstream commit is all zeros"))
    if upstream.get("repository") == REPOSITORY:
        out.append(
            ("P004", "/codebase/upstream/repository", "the upstream repository is the scaffold's")
        )
    for index, raw in enumerate(_list(data.get("tasks"))):
        task = mapping(raw)
        for key in ("title", "dataset", "metric"):
            value = task.get(key)
            if isinstance(value, str) and value.endswith(MARK):
                out.append(("P002", f"/tasks/{index}/{key}", f"{value!r} is a scaffold text"))
        observations = _list(mapping(task.get("reference")).get("observations"))
        for number, item in enumerate(observations):
            provenance = item.get("provenance") if isinstance(item, dict) else None
            if isinstance(provenance, dict) and provenance.get("source") == SCAFFOLD_SOURCE:
                out.append(
                    (
                        "P005",
                        f"/tasks/{index}/reference/observations/{number}/provenance/source",
                        "a reference observation made up by the scaffold",
                    )
                )
    return out


def placeholder_pointers(data: dict[str, Any]) -> list[str]:
    """JSON Pointers of the manifest's placeholders (what ``init`` tells the author)."""
    return [pointer for _, pointer, _ in _scan(data)]


#: The hint of each P code.
HINTS = {
    "P001": "write the paper's title",
    "P002": "describe the paper's measurement",
    "P003": "pin the upstream: `reprobridge code import SOURCE`",
    "P004": "pin the upstream: `reprobridge code import SOURCE`",
    "P005": "run the references and `reprobridge references add RUNS --replace`",
    "P006": "ship a log of a real run of the paper's code",
}


def check_placeholders(doc: Document, root: Path | None) -> list[Finding]:
    """P findings of the document; sample logs are read only when ``root`` is given."""
    data = doc.data if isinstance(doc.data, dict) else {}
    out = [
        doc.finding(code, message, path=pointer, hint=HINTS[code])
        for code, pointer, message in _scan(data)
    ]
    if root is None:
        return out
    try:  # opened once for every sample log read below it
        opened: safefs.OpenRoot | None = safefs.OpenRoot(root)
    except (OSError, safefs.UnsafeFileError):
        opened = None
    try:
        out += _scaffold_logs(doc, data, root, opened)
    finally:
        if opened is not None:
            opened.close()
    return out


def _scaffold_logs(
    doc: Document, data: dict[str, Any], root: Path, opened: safefs.OpenRoot | None
) -> list[Finding]:
    """P006 for each sample log that is one the scaffold writes."""
    digests = scaffold_sample_digests()
    out: list[Finding] = []
    for index, launcher in enumerate(_list(data.get("launchers"))):
        for number, sample in enumerate(_list(mapping(launcher).get("samples"))):
            log = mapping(sample).get("log")
            if not isinstance(log, str) or not log or log.startswith(("/", "..")) or ".." in log:
                continue
            path = root.joinpath(*log.split("/"))
            try:  # a small regular file inside the artifact, else not a scaffold sample
                content = safefs.read_bytes(path, root=opened or root, max_bytes=4095)
            except (OSError, safefs.UnsafeFileError):
                continue
            digest = hashlib.sha256(content).hexdigest()
            if digest in digests:
                out.append(
                    doc.finding(
                        "P006",
                        f"the sample log {log!r} is the scaffold's",
                        path=f"/launchers/{index}/samples/{number}/log",
                        hint=HINTS["P006"],
                    )
                )
    return out
