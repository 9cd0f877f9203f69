"""Check (or write) the package's copies of the registry and the schemas.

Usage: ``python spec/tools/data_copies.py [--check | --write] [--root DIR]`` from the
repository root.

The package ships copies of two committed sources so that an installed validator needs no
checkout: ``validators/codes.json`` (the registry of finding codes, kept by
``spec/tools/registry.py``) and ``schemas/*.schema.json`` (generated from the models by
``python -m reprobridge_sdk schema --write``). Their copies in ``reprobridge_sdk/_data/`` are
never edited by hand: the writers above write both, ``--write`` copies the sources over, and
``--check`` (the default; run by ``tests/spec/test_data_copies.py``) exits 1 and names each copy
that differs from its source, is missing, or has no source.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path("reprobridge_sdk") / "_data"


def pairs(root: Path) -> list[tuple[Path, Path]]:
    """``(source, copy)`` for every file the package ships a copy of."""
    found = [(root / "validators" / "codes.json", root / DATA / "codes.json")]
    names = {p.name for p in (root / "schemas").glob("*.schema.json")}
    names |= {p.name for p in (root / DATA / "schemas").glob("*.schema.json")}
    found += [(root / "schemas" / n, root / DATA / "schemas" / n) for n in sorted(names)]
    return found


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def problems(root: Path) -> list[str]:
    """One line for each copy that is not its source's bytes."""
    out: list[str] = []
    for source, copy in pairs(root):
        have, want = _read(copy), _read(source)
        if want is None:
            out.append(f"{copy.relative_to(root)}: no source {source.relative_to(root)}")
        elif have is None:
            out.append(f"{copy.relative_to(root)}: missing (copy of {source.relative_to(root)})")
        elif have != want:
            out.append(f"{copy.relative_to(root)}: differs from {source.relative_to(root)}")
    return out


def write(root: Path) -> list[Path]:
    """Copy every source over its copy; remove a copy without a source. The paths changed."""
    changed: list[Path] = []
    for source, copy in pairs(root):
        want = _read(source)
        if want is None:
            copy.unlink()
            changed.append(copy)
        elif _read(copy) != want:
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(want)
            changed.append(copy)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="check only (the default)")
    group.add_argument("--write", action="store_true", help="copy the sources over the copies")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository root")
    args = parser.parse_args(argv)
    if args.write:
        for path in write(args.root):
            sys.stdout.write(f"wrote {path.relative_to(args.root)}\n")
        return 0
    found = problems(args.root)
    for line in found:
        sys.stdout.write(f"data copies: {line}\n")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
