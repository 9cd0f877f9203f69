"""The version a manifest is written as has one owner (``versions.written_version``), and the
modeline (the ``yaml-language-server`` comment) follows it: a saved manifest names the
committed schema of the very version it declares, and validates against that schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from reprobridge_sdk import api
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
