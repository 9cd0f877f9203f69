"""``CITATION.cff`` (Citation File Format 1.2.0) from the manifest's ``artifact`` part.

The artifact is the cited work (``type: software``) and the paper its ``preferred-citation``
(``spec/runner.md#exports``). A name is split at its last space, or written as an entity; a
license expression that is not one SPDX id is left out; no author at all is E018.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.model import Manifest

__all__ = ["citation", "citation_text"]

CFF_VERSION = "1.2.0"
_SPDX_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+-]*")


def _person(name: str, *, email: str | None = None, orcid: str | None = None) -> dict[str, str]:
    name = " ".join(name.split())
    given, _, family = name.rpartition(" ")
    person = {"given-names": given, "family-names": family} if given else {"name": name}
    if email:
        person["email"] = email
    if orcid:
        person["orcid"] = f"https://orcid.org/{orcid}"
    return person


def citation(manifest: Manifest) -> dict[str, Any]:
    """The CITATION.cff document of ``manifest`` as a mapping, in CFF's key order."""
    artifact = manifest.artifact
    paper = artifact.paper
    paper_authors = [_person(name) for name in paper.authors]
    authors = [_person(a.name, email=a.email, orcid=a.orcid) for a in artifact.authors]
    if not authors and not paper_authors:
        item = finding(
            "E018",
            "CITATION.cff needs at least one author; the manifest names none",
            path="/artifact/authors",
            hint="add artifact.authors (or, in format 1.1, artifact.paper.authors)",
        )
        raise UsageError("cannot write CITATION.cff without authors", [item])
    document: dict[str, Any] = {
        "cff-version": CFF_VERSION,
        "message": (
            "If you use this artifact, please cite it and the paper it reproduces: "
            + " ".join(paper.title.split())
        ),
        "type": "software",
        "title": artifact.title,
        "authors": authors or paper_authors,
    }
    if artifact.version:
        document["version"] = artifact.version
    if _SPDX_ID.fullmatch(artifact.license):
        document["license"] = artifact.license
    if paper_authors:
        reference: dict[str, Any] = {
            "type": "conference-paper" if paper.venue else "article",
            "title": paper.title,
            "authors": paper_authors,
        }
        if paper.venue:
            reference["conference"] = {"name": paper.venue}
        if paper.year is not None:
            reference["year"] = paper.year
        if paper.doi:
            reference["doi"] = paper.doi
        url = paper.url or (f"https://arxiv.org/abs/{paper.arxiv}" if paper.arxiv else None)
        if url:
            reference["url"] = url
        document["preferred-citation"] = reference
    return document


def citation_text(manifest: Manifest) -> str:
    """The CITATION.cff file's text."""
    body = yaml.safe_dump(
        citation(manifest), sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
    )
    return f"# Written by 'reprobridge export citation' from rra.yaml.\n{body}"
