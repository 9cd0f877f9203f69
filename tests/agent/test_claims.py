"""The claims file: model, schema and the reader's findings (B001 with positions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprobridge_sdk.agent.claims import ClaimsError, author_patch, load_claims
from reprobridge_sdk.model.claims import Claims
from reprobridge_sdk.schema import generate_schema

GOOD = """\
claims_version: "1.0"
paper:
  title: A paper
  arxiv: "2401.01234"
claims:
  - id: top1
    measured: top-1 accuracy on the test split
    value: 76.1
    unit: "%"
    direction: higher
    hints:
      script: train.py
      label: top-1
      seeds: [0, 1, 2]
  - id: loss
    measured: validation loss
    range: [0.3, 0.5]
    direction: lower
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text(text, "utf-8")
    return path


def test_a_valid_claims_file_loads_with_its_targets(tmp_path: Path) -> None:
    claims = load_claims(_write(tmp_path, GOOD))
    assert [c.id for c in claims.claims] == ["top1", "loss"]
    assert claims.claims[0].target == 76.1
    assert claims.claims[1].target == pytest.approx(0.4)
    assert claims.claims[0].hints.seeds == [0, 1, 2]


@pytest.mark.parametrize(
    ("text", "path", "line"),
    [
        (GOOD.replace("    direction: lower\n", ""), "/claims/1/direction", 0),
        (GOOD.replace("    value: 76.1\n", ""), "/claims/0", 6),
        (
            GOOD.replace("    range: [0.3, 0.5]\n", "    range: [0.3, 0.5]\n    value: 1\n"),
            "/claims/1",
            15,
        ),
        (GOOD.replace("      label: top-1\n", "      lable: top-1\n"), "/claims/0/hints", 12),
        (GOOD.replace("id: loss", "id: top1"), "/claims", 6),
        (GOOD.replace("id: loss", "id: Not A Slug"), "/claims/1/id", 15),
        (GOOD.replace('"1.0"', '"2.0"'), "/claims_version", 1),
    ],
)
def test_bad_claims_give_b001_at_the_offending_value(
    tmp_path: Path, text: str, path: str, line: int
) -> None:
    with pytest.raises(ClaimsError) as caught:
        load_claims(_write(tmp_path, text))
    items = caught.value.findings
    assert {item.code for item in items} == {"B001"}
    assert path in {item.path for item in items}
    if line:
        located = [item for item in items if item.path == path]
        assert located[0].line == line


@pytest.mark.parametrize(
    "text",
    ["claims: [", "- just\n- a list\n", "", "a: &x [*x]\n", "\xff\xfe"],
)
def test_hostile_claims_files_give_b001_not_a_traceback(tmp_path: Path, text: str) -> None:
    path = tmp_path / "claims.yaml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ClaimsError) as caught:
        load_claims(path)
    assert caught.value.findings
    assert {item.code for item in caught.value.findings} == {"B001"}


def test_a_billion_laughs_claims_file_is_refused(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for n in range(1, 9):
        prev = f"*a{n - 1}"
        lines.append(f"a{n}: &a{n} [{', '.join([prev] * 10)}]")
    path = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ClaimsError) as caught:
        load_claims(path)
    assert {item.code for item in caught.value.findings} == {"B001"}


def test_a_missing_claims_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ClaimsError) as caught:
        load_claims(tmp_path / "absent.yaml")
    assert caught.value.findings == ()


def test_the_committed_claims_schema_accepts_what_the_model_accepts(
    repo_root: Path, tmp_path: Path
) -> None:
    import jsonschema
    import yaml

    schema = json.loads((repo_root / "schemas" / "claims-1.0.schema.json").read_text("utf-8"))
    assert schema == generate_schema("claims-1.0")
    data = yaml.safe_load(GOOD)
    jsonschema.Draft202012Validator(schema).validate(data)
    Claims.model_validate(data)
    data["claims"][0]["unknown"] = 1
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(data))


_WITH = GOOD.replace("claims:\n", 'requirements: ["numpy<1.24", "Theano==1.0.5"]\nclaims:\n', 1)


def test_the_claims_file_declares_requirements_and_a_patch(tmp_path: Path) -> None:
    text = _WITH.replace(
        "claims:\n", "patch: {path: fixes/py3.diff, why: the code is Python 2}\nclaims:\n", 1
    )
    (tmp_path / "fixes").mkdir()
    (tmp_path / "fixes" / "py3.diff").write_text("diff --git a/x b/x\n", "utf-8")
    claims = load_claims(_write(tmp_path, text))
    assert claims.requirements == ["numpy<1.24", "Theano==1.0.5"]
    assert claims.patch is not None
    assert (claims.patch.path, claims.patch.kind) == ("fixes/py3.diff", "execution-fix")
    assert author_patch(claims, tmp_path / "claims.yaml") == "diff --git a/x b/x\n"
    assert author_patch(load_claims(_write(tmp_path, GOOD)), tmp_path / "claims.yaml") is None


@pytest.mark.parametrize(
    ("line", "pointer"),
    [
        ('requirements: ["numpy==="]', "/requirements"),
        ('requirements: ["x @ https://example.org/x.whl"]', "/requirements"),
        ("patch: {path: /etc/passwd, why: x}", "/patch/path"),
        ("patch: {path: x.diff}", "/patch/why"),
        ("patch: {path: x.diff, why: x, kind: rewrite}", "/patch/kind"),
    ],
)
def test_bad_requirements_and_patches_are_b001(tmp_path: Path, line: str, pointer: str) -> None:
    with pytest.raises(ClaimsError) as caught:
        load_claims(_write(tmp_path, GOOD.replace("claims:\n", f"{line}\nclaims:\n", 1)))
    assert [(f.code, f.path) for f in caught.value.findings] == [("B001", pointer)]


@pytest.mark.parametrize("where", ["../outside.diff", "link.diff", "folder", "missing.diff"])
def test_a_patch_that_is_not_a_file_beside_the_claims_file_is_b001(
    tmp_path: Path, where: str
) -> None:
    base = tmp_path / "claims"
    base.mkdir()
    (tmp_path / "outside.diff").write_text("secret", "utf-8")
    (base / "link.diff").symlink_to(tmp_path / "outside.diff")
    (base / "folder").mkdir()
    text = GOOD.replace("claims:\n", f"patch: {{path: '{where}', why: x}}\nclaims:\n", 1)
    path = base / "claims.yaml"
    path.write_text(text, "utf-8")
    claims = load_claims(path)
    with pytest.raises(ClaimsError) as caught:
        author_patch(claims, path)
    assert [(f.code, f.path) for f in caught.value.findings] == [("B001", "/patch/path")]
