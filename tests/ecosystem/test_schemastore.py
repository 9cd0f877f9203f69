"""The SchemaStore catalog entries name committed schemas and match the right files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_check import file_match

REPO = Path(__file__).resolve().parents[2]
CATALOG = json.loads((REPO / "schemas" / "catalog" / "schemastore.json").read_text())
IDS = {json.loads(path.read_text())["$id"]: path.name for path in (REPO / "schemas").glob("*.json")}


def _entry(name: str) -> dict[str, object]:
    [entry] = [e for e in CATALOG["schemas"] if e["name"] == name]
    return entry  # type: ignore[no-any-return]


def test_every_url_is_the_id_of_a_committed_schema() -> None:
    for entry in CATALOG["schemas"]:
        assert set(entry) <= {"name", "description", "fileMatch", "url", "versions"}
        urls = [entry["url"], *entry.get("versions", {}).values()]
        assert all(url in IDS for url in urls), entry["name"]
        if "versions" in entry:
            assert entry["url"] in entry["versions"].values()


@pytest.mark.parametrize(
    ("name", "matched", "not_matched"),
    [
        (
            "ReproBridge RRA manifest",
            ["rra.yaml", "papers/a/rra.yaml"],
            ["rra.yml", "RRA.yaml", "xrra.yaml"],
        ),
        (
            "ReproBridge claims file",
            ["rra-claims.yaml", "papers/vit.rra-claims.yaml"],
            ["claims.yaml", "rra.yaml"],
        ),
        (
            "ReproBridge evidence record",
            ["art/runs/20240101T000000Z-smoke-s0/record.json", "runs/r1/record.json"],
            ["record.json", "art/runs/record.json", "art/runs/r1/outputs/record.json"],
        ),
    ],
)
def test_file_match_picks_exactly_the_named_files(
    name: str, matched: list[str], not_matched: list[str]
) -> None:
    patterns = [file_match(p) for p in _entry(name)["fileMatch"]]  # type: ignore[attr-defined]
    for path in matched:
        assert any(p.match(path) for p in patterns), path
    for path in not_matched:
        assert not any(p.match(path) for p in patterns), path


def test_the_manifest_modeline_names_the_catalogued_schema() -> None:
    from reprobridge_sdk.versions import FORMAT_VERSION, manifest_schema_url

    assert manifest_schema_url(FORMAT_VERSION) in IDS
