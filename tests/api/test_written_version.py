"""The version a manifest is written as has one owner (``versions.written_version``), and the
modeline (the ``yaml-language-server`` comment) follows it: a saved manifest names the
committed schema of the very version it declares, and validates against that schema.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from reprobridge_sdk import api
from reprobridge_sdk.authoring.codebase import require_version
from reprobridge_sdk.authoring.upgrade import upgrade
from reprobridge_sdk.env._artifact import load_raw
from reprobridge_sdk.model import Manifest
from reprobridge_sdk.versions import manifest_schema_url, written_version

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"
MODELINE = "# yaml-language-server: $schema="


def _data(version: str = "1.0") -> dict[str, Any]:
    return {
        "rra_version": version,
        "artifact": {
            "id": "modeline-demo",
            "title": "Modeline demo",
            "license": "MIT",
            "paper": {"title": "A paper"},
        },
        "codebase": {
            "upstream": {"repository": "https://example.org/u.git", "commit": "a" * 40},
            "refined": {"kind": "directory", "path": "code"},
        },
        "environment": {"python": "3.11"},
        "tasks": [
            {
                "id": "acc",
                "dataset": "digits",
                "metric": "accuracy",
                "published": {"value": 0.9},
                "direction": "higher",
                "kind": "full",
            }
        ],
        "launchers": [
            {
                "id": "run",
                "argv": ["python", "code/run.py", "--seed", "{seed}"],
                "seeds": [1],
                "scope": "scored",
                "measurements": [
                    {
                        "task": "acc",
                        "aggregate": "single",
                        "extract": {"kind": "regex", "pattern": "^acc: ([0-9.]+)$"},
                    }
                ],
            }
        ],
    }


def _create(root: Path, data: dict[str, Any]) -> api.ArtifactDir:
    (root / "code").mkdir(parents=True)
    (root / "code" / "run.py").write_text("print('acc: 0.9')\n", "utf-8")
    return api.create(root, Manifest.model_validate(data))


def _check_file(path: Path, version: str) -> None:
    """``path`` declares ``version``, its modeline names that version's schema, and it
    validates against the committed schema the modeline names."""
    text = path.read_text("utf-8")
    first = text.splitlines()[0]
    assert first.startswith(MODELINE), first
    url = first.removeprefix(MODELINE)
    data = yaml.safe_load(text)
    assert data["rra_version"] == version
    assert url == manifest_schema_url(version)
    schema = json.loads((SCHEMAS / url.rsplit("/", 1)[1]).read_text("utf-8"))
    assert schema["$id"] == url
    jsonschema.Draft202012Validator(schema).validate(data)


def test_a_manifest_that_stays_1_0_names_the_1_0_schema(tmp_path: Path) -> None:
    art = _create(tmp_path / "a", _data())
    _check_file(art.manifest_path, "1.0")
    art.manifest.artifact.title = "Renamed"
    assert art.save()
    _check_file(art.manifest_path, "1.0")


def test_a_save_that_needs_1_1_names_the_1_1_schema(tmp_path: Path) -> None:
    art = _create(tmp_path / "a", _data())
    art.manifest.artifact.paper.authors = ["Ada Lovelace"]  # a 1.1 field
    assert art.save()
    _check_file(art.manifest_path, "1.1")
    data = yaml.safe_load(art.manifest_path.read_text("utf-8"))
    old = json.loads((SCHEMAS / "rra-1.0.schema.json").read_text("utf-8"))
    with pytest.raises(jsonschema.ValidationError):  # the schema the modeline used to name
        jsonschema.Draft202012Validator(old).validate(data)
    assert api.load(art.root).manifest.rra_version == "1.1"


def test_render_and_create_write_the_version_the_fields_need(tmp_path: Path) -> None:
    data = _data()
    data["artifact"]["paper"]["authors"] = ["Ada Lovelace"]
    art = _create(tmp_path / "a", data)
    _check_file(art.manifest_path, "1.1")
    art.manifest.artifact.title = "Renamed"
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(art.render(), "utf-8")
    _check_file(rendered, "1.1")


def test_the_environment_writer_follows_the_same_rule(tmp_path: Path) -> None:
    """``lock`` rewrites the environment part through ``save_raw``: a mapping that needs
    1.1 raises the version, and the modeline follows."""
    art = _create(tmp_path / "a", _data())
    raw = load_raw(art.root)
    raw.save_raw({**raw.raw, "python": "3.12"}, at_least="1.1")
    _check_file(art.manifest_path, "1.1")


@pytest.mark.parametrize(
    ("declared", "needed", "written"),
    [
        ("1.0", (1, 0), "1.0"),
        ("1.0", (1, 1), "1.1"),
        ("1.1", (1, 0), "1.1"),  # never lowered
        ("1.2", (1, 1), "1.2"),
        ("01.0", (1, 1), "01.0"),  # malformed: kept for validation to report (V004)
    ],
)
def test_written_version(declared: str, needed: tuple[int, int], written: str) -> None:
    assert written_version(declared, needed) == written


def _header(path: Path) -> tuple[str, str]:
    """The modeline and the ``rra_version`` line of a manifest."""
    lines = path.read_text("utf-8").splitlines()
    return lines[0], next(line for line in lines if line.startswith("rra_version:"))


def test_every_writer_upgrades_a_1_0_manifest_the_same_way(tmp_path: Path) -> None:
    """``upgrade``, a save whose fields need 1.1, the authoring path's raise and ``lock``'s
    environment writer all turn a 1.0 manifest into the same modeline and ``rra_version``."""
    made = {name: _create(tmp_path / name, _data()) for name in ("up", "save", "auth", "env")}
    upgrade(made["up"].root, to="1.1")
    made["save"].manifest.artifact.paper.authors = ["Ada Lovelace"]
    made["save"].save()
    require_version(made["auth"], "1.1")
    made["auth"].save()
    raw = load_raw(made["env"].root)
    raw.save_raw({**raw.raw, "python": "3.12"}, at_least="1.1")
    headers = {name: _header(art.manifest_path) for name, art in made.items()}
    (modeline, line) = headers["up"]
    assert headers == dict.fromkeys(made, (modeline, line))  # byte for byte, every writer
    assert modeline == MODELINE + manifest_schema_url("1.1")
    assert yaml.safe_load(line) == {"rra_version": "1.1"}
    for art in made.values():
        _check_file(art.manifest_path, "1.1")
        assert api.load(art.root).manifest.rra_version == "1.1"


def test_the_authoring_raise_never_lowers(tmp_path: Path) -> None:
    art = _create(tmp_path / "a", _data("1.1"))
    require_version(art, "1.0")
    assert art.manifest.rra_version == "1.1"


PACKAGE = Path(__file__).resolve().parents[2] / "reprobridge_sdk"
#: The explicit upgrade writes the version it is asked for (checked against the document's).
EXPLICIT = "authoring/upgrade.py"


def _sets_version(node: ast.AST) -> ast.expr | None:
    """The value ``node`` gives ``rra_version`` (an assignment or a ``model_copy`` update)."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            attr = isinstance(target, ast.Attribute) and target.attr == "rra_version"
            key = (
                isinstance(target, ast.Subscript)
                and isinstance(target.slice, ast.Constant)
                and target.slice.value == "rra_version"
            )
            if attr or key:
                return node.value
    if isinstance(node, ast.Dict):
        for key_node, value in zip(node.keys, node.values, strict=True):
            if isinstance(key_node, ast.Constant) and key_node.value == "rra_version":
                return value if isinstance(value, ast.Name) else None
    return None


def _from_owner(value: ast.expr, owned: set[str]) -> bool:
    call = isinstance(value, ast.Call) and getattr(value.func, "id", "") == "written_version"
    return call or (isinstance(value, ast.Name) and value.id in owned)


def _unowned(tree: ast.AST) -> list[int]:
    """Lines that set a manifest's version to something ``written_version`` did not give."""
    lines = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        owned = {
            target.id
            for node in ast.walk(func)
            if isinstance(node, ast.Assign) and _from_owner(node.value, set())
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(func):
            value = _sets_version(node)
            if value is not None and not _from_owner(value, owned):
                lines.append(node.lineno)
    return lines


def test_only_written_version_decides_the_version_written() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == EXPLICIT or rel.startswith("agent/"):
            continue
        found += [f"{rel}:{line}" for line in _unowned(ast.parse(path.read_text("utf-8")))]
    assert found == [], "raise a manifest's version with versions.written_version"
    bad = "def f(art):\n    art.manifest.rra_version = '1.1'\n"
    good = "def f(art, d):\n    v = written_version(d, (1, 1))\n    art.manifest.rra_version = v\n"
    assert _unowned(ast.parse(bad)) == [2]
    assert _unowned(ast.parse(good)) == []
