"""Complete and check the registry of finding codes (``validators/codes.json``).

Usage: ``python spec/tools/registry.py [--check]`` from the repository root; ``build_spec.py``
runs it first, so ``python spec/tools/build_spec.py`` is the one command after a change.

Every entry carries, besides its code, name, summary and ``spec`` anchor:

* ``status``: ``stable``, ``preview``, ``deprecated`` or ``removed`` (spec: conformance,
  "Lifecycle");
* ``contexts``: the severity of the code in each context that reports it, of ``validation``,
  ``run``, ``audit``, ``authoring`` and ``bench`` (spec: conformance, "Contexts");
  ``severity`` is kept for readers of registry 1.0 and is the most severe of them;
* ``pointer``: where a finding with the code points (spec §9.2 for the validation context);
* ``why`` and ``fix``: for a user who meets a finding, why it matters and how to fix it, each a
  sentence or two of at most :data:`TEXT_LIMIT` characters (registry 1.2). They have no family
  default: a new code is incomplete until they are written, and a text shared by more than
  :data:`MAX_SHARED` codes is boilerplate, not an answer, so the check refuses it.

An entry added without ``contexts`` or ``pointer`` (a new code written by hand) is completed
here from its family's defaults (:data:`FAMILY_CONTEXTS`, :data:`FAMILY_POINTERS`), so codes
added in parallel are completed mechanically at merge time; review the completed rule after.
Both copies of the registry (``validators/codes.json`` and ``reprobridge_sdk/_data/codes.json``)
are written equal, in code order. ``--check`` writes nothing and exits 1 when an entry is
incomplete, a field is malformed or the copies differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
COPIES = (REPO / "validators" / "codes.json", REPO / "reprobridge_sdk" / "_data" / "codes.json")

#: The registry format: 1.1 added ``contexts`` and ``pointer``, 1.2 ``why`` and ``fix``.
REGISTRY_VERSION = "1.2"
CONTEXTS = ("validation", "run", "audit", "authoring", "bench")
STATUSES = ("stable", "preview", "deprecated", "removed")
SEVERITIES = ("error", "warning", "info")
#: The key order of an entry as written.
KEYS = (
    "code",
    "name",
    "severity",
    "contexts",
    "status",
    "since",
    "spec",
    "pointer",
    "summary",
    "why",
    "fix",
)
#: The texts written for a user, by hand, for every code.
USER_TEXTS = ("why", "fix")
#: The longest a ``why`` or ``fix`` text may be, in characters.
TEXT_LIMIT = 200
#: The most codes that may share one ``why`` or one ``fix`` text.
MAX_SHARED = 3

#: The contexts in which the codes of a family are reported, when an entry does not say.
FAMILY_CONTEXTS: dict[str, tuple[str, ...]] = {
    "Y": ("validation",),
    "V": ("validation",),
    "S": ("validation",),
    "R": ("validation",),
    "F": ("validation",),
    "L": ("validation",),
    "X": ("validation",),
    "G": ("validation",),
    "P": ("validation",),
    "E": ("run",),
    "D": ("run",),
    "N": ("run",),
    "A": ("audit",),
    "K": ("audit",),
    "C": ("authoring",),
    "B": ("authoring",),
}

#: The title of each family of codes, by its letter.
FAMILY_TITLES: dict[str, str] = {
    "Y": "YAML and layout",
    "V": "Versioning",
    "S": "Structure",
    "R": "References and semantics",
    "F": "Files, paths and digests",
    "L": "Locks",
    "X": "Extraction replay",
    "G": "Guide",
    "E": "Environment checks",
    "D": "Data acquisition",
    "A": "Evidence and audit",
    "N": "Runner",
    "B": "Build agent",
    "K": "Keys and signatures",
    "C": "Codebase and authoring",
    "P": "Placeholders",
}

#: The pointer rule of a family, when an entry does not state its own.
FAMILY_POINTERS: dict[str, str] = {
    "Y": '`""` (the whole document)',
    "V": "`/rra_version`",
    "S": "the value",
    "R": "the value the rule judges",
    "F": "the path field",
    "L": '`""` in the lock file (`file`)',
    "X": "the measurement's `extract`",
    "G": '`""` in the guide file (`file`)',
    "P": "the placeholder value",
    "E": '`""`, or the manifest field the check compares (`/environment/...`)',
    "D": "the data item (`/environment/data/N`)",
    "N": '`""`, or the launcher the request names (`/launchers/N`)',
    "A": "the task or launcher judged (`/tasks/N`, `/launchers/N`), or, with `file` naming a "
    'run\'s record or ledger, a pointer into that file (`""` for the whole file)',
    "K": '`""` in the signed file or envelope (`file`)',
    "C": '`""`, or the manifest field the operation judges (`/codebase/...`, `/tasks/N/...`)',
    "B": '`""`, or the claim judged (`/claims/N`) in the claims file',
}
_RANK = {"info": 0, "warning": 1, "error": 2}


def complete(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with ``contexts`` and ``pointer`` filled from its family, keys in order."""
    family = entry["code"][0]
    out = dict(entry)
    if "contexts" not in out:
        out["contexts"] = dict.fromkeys(FAMILY_CONTEXTS.get(family, ("run",)), out["severity"])
    if "pointer" not in out:
        out["pointer"] = FAMILY_POINTERS.get(family, '`""`')
    contexts = out["contexts"]
    out["contexts"] = {c: contexts[c] for c in CONTEXTS if c in contexts}
    out["severity"] = max(out["contexts"].values(), key=_RANK.__getitem__)
    ordered = {key: out[key] for key in KEYS if key in out}
    ordered.update({key: value for key, value in out.items() if key not in ordered})
    return ordered


def problems(data: dict[str, Any]) -> list[str]:
    """What is wrong with a registry document (an empty list when it is sound)."""
    found: list[str] = []
    codes = [entry.get("code", "?") for entry in data.get("codes", [])]
    if codes != sorted(codes, key=_order):
        found.append("the codes are not in registry order")
    for entry in data.get("codes", []):
        code = entry.get("code", "?")
        missing = [key for key in KEYS if key not in entry]
        if missing:
            found.append(f"{code}: missing {', '.join(missing)}")
            continue
        if entry["status"] not in STATUSES:
            found.append(f"{code}: unknown status {entry['status']!r}")
        contexts = entry["contexts"]
        if not contexts or set(contexts) - set(CONTEXTS):
            found.append(f"{code}: contexts must be a non-empty subset of {CONTEXTS}")
        elif any(value not in SEVERITIES for value in contexts.values()):
            found.append(f"{code}: a context's severity is not one of {SEVERITIES}")
        elif entry["severity"] != max(contexts.values(), key=_RANK.__getitem__):
            found.append(f"{code}: severity is not the most severe of its contexts")
        if not isinstance(entry["pointer"], str) or not entry["pointer"].strip():
            found.append(f"{code}: the pointer rule is empty")
    return found + _text_problems(data.get("codes", []))


def _text_problems(entries: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the ``why`` and ``fix`` texts: empty, too long or shared boilerplate."""
    found: list[str] = []
    users: dict[tuple[str, str], list[str]] = {}
    for entry in entries:
        code = entry.get("code", "?")
        for key in USER_TEXTS:
            text = entry.get(key)
            if key not in entry:
                continue  # reported as missing with the other keys
            if not isinstance(text, str) or not text.strip():
                found.append(f"{code}: the {key} text is empty")
            elif len(text) > TEXT_LIMIT:
                found.append(f"{code}: the {key} text is longer than {TEXT_LIMIT} characters")
            else:
                users.setdefault((key, " ".join(text.split()).lower()), []).append(code)
    for (key, _), codes in users.items():
        if len(codes) > MAX_SHARED:
            found.append(
                f"{', '.join(codes)}: one {key} text on {len(codes)} codes "
                f"(at most {MAX_SHARED}); say what is particular to each"
            )
    return found


_FAMILY_ORDER = "YVSRFLEDXAGNBCKP"


def _order(code: str) -> tuple[int, str]:
    family = _FAMILY_ORDER.find(code[0])
    return (family if family >= 0 else len(_FAMILY_ORDER), code)


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def completed(data: dict[str, Any]) -> dict[str, Any]:
    """The registry document with every entry completed and the codes in order."""
    out = dict(data)
    out["registry_version"] = REGISTRY_VERSION
    out["codes"] = sorted((complete(e) for e in data["codes"]), key=lambda e: _order(e["code"]))
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    texts = [path.read_text("utf-8") for path in COPIES]
    if "--check" in args:
        found = problems(json.loads(texts[0]))
        if texts[0] != texts[1]:
            found.append("validators/codes.json and reprobridge_sdk/_data/codes.json differ")
        for problem in found:
            sys.stdout.write(f"registry: {problem}\n")
        return 1 if found else 0
    # Both copies may hold entries the other lacks (added on two branches): merge by code.
    merged: dict[str, dict[str, Any]] = {}
    for text in texts:
        for entry in json.loads(text)["codes"]:
            merged.setdefault(entry["code"], {}).update(entry)
    data = json.loads(texts[0])
    data["codes"] = list(merged.values())
    text = render(completed(data))
    for path in COPIES:
        if path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")
    found = problems(json.loads(text))
    for problem in found:
        sys.stdout.write(f"registry: {problem}\n")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
