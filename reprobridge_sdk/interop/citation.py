"""``CITATION.cff`` (Citation File Format 1.2.0) from the manifest's ``artifact`` part.

What is written
    The artifact is the cited work (``type: software``): ``title`` is ``artifact.title``,
    ``version`` and ``license`` come from the artifact, ``authors`` from ``artifact.authors``
    (ORCID as ``https://orcid.org/...``, e-mail kept). The paper it reproduces is the
    ``preferred-citation``: ``conference-paper`` when a ``venue`` is given (as the
    conference's name), else ``article``; with ``title``, ``year``, ``doi``, ``url`` (the
    paper's ``url``, else the arXiv abstract page) and ``authors`` from ``paper.authors``
    (format 1.1).

Edge cases
    * A person's name is split at its last space (``Ada King Lovelace`` -> given names
      ``Ada King``, family names ``Lovelace``); a name without a space is written as an entity
      (``name:``), which CFF allows for organisations and mononyms alike.
    * ``license`` is written only when it is a single SPDX identifier; an expression such as
      ``MIT OR Apache-2.0`` cannot be a CFF license and is left out.
    * Without ``artifact.authors`` the paper's authors are the artifact's too; with neither,
      :class:`~reprobridge_sdk.errors.UsageError` with E018 at ``/artifact/authors``.
    * Without ``paper.authors`` there is no ``preferred-citation`` (CFF requires authors for
      it); the paper is then still named in ``message``.
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
