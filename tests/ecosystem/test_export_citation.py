"""``reprobridge export citation``: CITATION.cff checked with the Citation File Format schema.

The schema is the one check-jsonschema vendors from SchemaStore (``vendor.citation-file-format``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]

PAPER = """\
  paper:
    title: "Deep \\"nets\\":\\n a study \u2013 of things"
    venue: ICML
    year: 2026
    doi: 10.1234/abc.5678
    arxiv: 2401.01234v2
    authors: ["  Ada   King  Lovelace ", "Plato", "Grace Hopper"]
  authors:
    - name: Alan Turing
      email: alan@example.org
      orcid: 0000-0002-1825-0097
"""


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    target = tmp_path / "art"
    shutil.copytree(
        REPO / "examples" / "digits-logreg", target, ignore=shutil.ignore_patterns("runs")
    )
    text = (target / "rra.yaml").read_text()
    start = text.index("  paper:\n")
    end = text.index("codebase:")
    text = text[:start] + PAPER + "\n" + text[end:]
    (target / "rra.yaml").write_text(text.replace('rra_version: "1.0"', 'rra_version: "1.1"'))
    return target


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPROBRIDGE_")}
    return subprocess.run(
        [sys.executable, "-m", "reprobridge", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def _check_cff(path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema",
         "vendor.citation-file-format", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_citation_cites_the_artifact_and_prefers_the_paper(artifact: Path) -> None:
    proc = _cli("export", "citation", str(artifact))
    assert proc.returncode == 0, proc.stderr
    cff = artifact / "CITATION.cff"
    _check_cff(cff)
    data = yaml.safe_load(cff.read_text())
    assert data["cff-version"] == "1.2.0"
    assert (data["type"], data["version"], data["license"]) == ("software", "1.0.0", "Apache-2.0")
    assert data["authors"] == [
        {
            "given-names": "Alan",
            "family-names": "Turing",
            "email": "alan@example.org",
            "orcid": "https://orcid.org/0000-0002-1825-0097",
        }
    ]
    paper = data["preferred-citation"]
    assert paper["type"] == "conference-paper"
    assert paper["title"] == 'Deep "nets":\n a study \u2013 of things'
    assert paper["authors"] == [
        {"given-names": "Ada King", "family-names": "Lovelace"},
        {"name": "Plato"},
        {"given-names": "Grace", "family-names": "Hopper"},
    ]
    assert (paper["conference"], paper["year"], paper["doi"]) == (
        {"name": "ICML"},
        2026,
        "10.1234/abc.5678",
    )
    assert paper["url"] == "https://arxiv.org/abs/2401.01234v2"


def test_the_bundled_example_exports_a_valid_citation(tmp_path: Path) -> None:
    out = tmp_path / "CITATION.cff"
    proc = _cli("export", "citation", str(REPO / "examples" / "digits-logreg"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    _check_cff(out)
    assert "preferred-citation" not in yaml.safe_load(out.read_text())  # no paper authors


def test_a_license_expression_is_left_out(artifact: Path) -> None:
    manifest = artifact / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("Apache-2.0", "MIT OR Apache-2.0", 1))
    proc = _cli("export", "citation", str(artifact), "-o", "-")
    assert "license" not in yaml.safe_load(proc.stdout)


def test_no_author_at_all_is_e018(artifact: Path) -> None:
    manifest = artifact / "rra.yaml"
    text = manifest.read_text()
    start = text.index("    authors: [")
    end = text.index("codebase:")
    manifest.write_text(text[:start] + "  authors: []\n\n" + text[end:])
    proc = _cli("export", "citation", str(artifact))
    assert proc.returncode == 2
    assert " E018 error " in proc.stdout
    assert not (artifact / "CITATION.cff").exists()
