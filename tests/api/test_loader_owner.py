"""Loading an artifact has one owner, ``reprobridge_sdk/loading.py``: the typed API, the
environment commands and ``upgrade`` find and read ``rra.yaml`` there, so a missing or broken
manifest is refused with the same findings by each. Checked on the syntax tree too: no other
module reads a manifest with the round-trip reader (``yamlio.load``)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reprobridge_sdk import api
from reprobridge_sdk.authoring.upgrade import upgrade
from reprobridge_sdk.env._artifact import load_raw
from reprobridge_sdk.errors import ArtifactError

PACKAGE = Path(__file__).resolve().parents[2] / "reprobridge_sdk"
OWNER = "loading.py"
LOADERS: dict[str, Callable[[Path], Any]] = {
    "api.load": api.load,
    "upgrade": upgrade,
    "load_raw": load_raw,
}


def _codes(loader: Callable[[Path], Any], path: Path) -> list[str]:
    with pytest.raises(ArtifactError) as caught:
        loader(path)
    return [item.code for item in caught.value.findings]


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        (None, ["Y010"]),  # no manifest
        ("- a list\n- not a mapping\n", ["Y002"]),
        ("a: [unclosed\n", None),  # the reader's own Y finding
        ("a: 1\na: 2\n", None),  # a duplicate key
    ],
)
def test_every_loader_refuses_a_manifest_alike(
    tmp_path: Path, text: str | None, codes: list[str] | None
) -> None:
    found = {}
    for name, loader in LOADERS.items():
        root = tmp_path / name.replace(".", "-")
        root.mkdir()
        if text is not None:
            (root / "rra.yaml").write_text(text, "utf-8")
        found[name] = _codes(loader, root)
    first = found["api.load"]
    assert found == dict.fromkeys(LOADERS, first)
    assert first and all(code.startswith("Y") for code in first)
    if codes is not None:
        assert first == codes


def test_a_loader_takes_the_directory_or_its_manifest(tmp_path: Path) -> None:
    (tmp_path / "rra.yaml").write_text("[]\n", "utf-8")
    for loader in LOADERS.values():
        assert _codes(loader, tmp_path / "rra.yaml") == _codes(loader, tmp_path) == ["Y002"]


def _reads(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "load"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "yamlio"
    ]


def test_only_the_owner_reads_a_manifest() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel != OWNER and not rel.startswith("agent/"):
            found += [f"{rel}:{line}" for line in _reads(ast.parse(path.read_text("utf-8")))]
    assert found == [], "read a manifest with reprobridge_sdk.loading.read_manifest"
    assert _reads(ast.parse("doc = yamlio.load(p)\nyaml.load(t)\n")) == [1]
