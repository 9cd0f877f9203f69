"""The package's copies in ``reprobridge_sdk/_data/`` are their sources' bytes, by one command
(``spec/tools/data_copies.py``): nobody edits two copies by hand."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "spec" / "tools" / "data_copies.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOL), *args], capture_output=True, text=True, check=False
    )


def _tree(tmp_path: Path) -> Path:
    """The sources and their copies, in a tree of their own."""
    root = tmp_path / "repo"
    for part in ("validators/codes.json", "schemas", "reprobridge_sdk/_data"):
        source, target = REPO / part, root / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
    return root


def test_the_committed_copies_are_their_sources() -> None:
    done = _run("--check")
    assert done.returncode == 0, done.stdout
    assert done.stdout == ""


def test_a_copy_edited_by_hand_is_named_and_rewritten(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    copy = root / "reprobridge_sdk/_data/schemas/rra-1.0.schema.json"
    copy.write_text(copy.read_text("utf-8").replace('"title"', '"titel"', 1), "utf-8")
    (root / "reprobridge_sdk/_data/codes.json").unlink()
    done = _run("--check", "--root", str(root))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "data copies: reprobridge_sdk/_data/codes.json: missing (copy of validators/codes.json)",
        "data copies: reprobridge_sdk/_data/schemas/rra-1.0.schema.json: differs from "
        "schemas/rra-1.0.schema.json",
    ]
    assert _run("--write", "--root", str(root)).returncode == 0
    assert _run("--check", "--root", str(root)).returncode == 0
    assert copy.read_bytes() == (REPO / "schemas/rra-1.0.schema.json").read_bytes()


def test_a_copy_without_a_source_is_named_and_removed(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    stray = root / "reprobridge_sdk/_data/schemas/stray-1.0.schema.json"
    stray.write_text("{}\n", "utf-8")
    done = _run("--root", str(root))
    assert done.returncode == 1
    assert "stray-1.0.schema.json: no source schemas/stray-1.0.schema.json" in done.stdout
    assert _run("--write", "--root", str(root)).returncode == 0
    assert not stray.exists()
