"""Write the conformance suite (``validators/cases/``) and its manifest (``conformance.yaml``).

Usage: ``python spec/tools/build_cases.py [--out DIR]`` from the repository root. The cases
are data and are committed; this script is how they were authored (digests computed,
GUIDE.md rendered from each case's records) and regenerates them byte for byte. Expected
findings are written here by hand from the specification (the parts under spec/), never from a
validator's output.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _casekit import Case, write_case, write_conformance
from _cases_files import file_cases
from _cases_semantic import semantic_cases
from _cases_structure import structure_cases
from _cases_tools import tool_cases
from _cases_valid import valid_cases

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "validators" / "cases"


#: The spec sections a case rests on, where the sections its codes' registry entries name are
#: not the whole story (the cases a second implementation, written from the spec alone, once
#: failed on its first run). Together the sections name every code the case expects; the
#: suite's checker holds that.
_PATCHES = ("manifest.md#codebase", "manifest.md#patch-series", "conformance.md#contexts")
_PLUGIN_DATA = ("manifest.md#data", "manifest.md#versioning", "conformance.md#contexts")
CITATIONS: dict[str, tuple[str, ...]] = {
    "empty-patch-series": _PATCHES,
    "empty-patch-series-under-1-0": (*_PATCHES, "manifest.md#format-1-1"),
    "patch-digest-mismatch": (*_PATCHES, "manifest.md#digests"),
    "patch-digest-missing": (*_PATCHES, "manifest.md#digests"),
    "patch-file-missing": (*_PATCHES, "manifest.md#paths"),
    "patches-codebase": _PATCHES,
    "patch-series-beside-code-directory": (*_PATCHES, "manifest.md#checkout-record"),
    "guide-out-of-date": ("manifest.md#guide", "manifest.md#guide-records-grammar"),
    "lock-unparseable-line": ("manifest.md#locks", "manifest.md#requirements-grammar"),
    "plugin-data-scheme-in-1-0": _PLUGIN_DATA,
    "plugin-data-scheme-not-installed": ("manifest.md#data", "conformance.md#contexts"),
    "plugin-extractor-in-1-0": ("manifest.md#plugin-extractors", "manifest.md#versioning"),
    "wrong-type-seeds-string": ("manifest.md#structure", "manifest.md#robustness"),
    "yaml-core-schema-readings": ("manifest.md#yaml", "manifest.md#structure"),
    "seeds-float-integral": ("manifest.md#conventions", "manifest.md#structure"),
}


def cases() -> list[Case]:
    """Every conformance case."""
    every = [*valid_cases(), *structure_cases(), *semantic_cases(), *file_cases(), *tool_cases()]
    return [
        replace(case, spec=CITATIONS[case.name]) if case.name in CITATIONS else case
        for case in every
    ]


def main(argv: list[str] | None = None) -> int:
    """Write every case; ``--out DIR`` writes the suite elsewhere (to compare with git)."""
    args = sys.argv[1:] if argv is None else argv
    suite = Path(args[1]) if len(args) == 2 and args[0] == "--out" else REPO / "validators"
    cases_dir = suite / "cases"
    all_cases = cases()
    names = [case.name for case in all_cases]
    duplicates = {name for name in names if names.count(name) > 1}
    if duplicates:
        sys.stderr.write(f"duplicate case names: {sorted(duplicates)}\n")
        return 1
    cases_dir.mkdir(parents=True, exist_ok=True)
    for existing in cases_dir.iterdir():
        if existing.name not in names and existing.is_dir():
            shutil.rmtree(existing)
    for case in all_cases:
        write_case(case, cases_dir)
    write_conformance(all_cases, suite / "conformance.yaml")
    sys.stderr.write(f"wrote {len(all_cases)} cases to {cases_dir}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
