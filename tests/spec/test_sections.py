"""Section numbers are global across the parts, so every "§N" names one section.

Also: the media type and file name the spec declares are the ones the SDK uses.

spec/README.md: "a reference such as §8 names one section whatever part it is read in". Held
here: no two headings of the parts share a number, and every section cited as "§N" in the
parts, the committed schemas and the field notes (the one source of the schemas'
descriptions) exists. The tree digest is cited at the digests section (it once cited §3.7).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from reprobridge_sdk.model import MANIFEST_NAME
from reprobridge_sdk.model.manifest import MANIFEST_MEDIA_TYPE

REPO = Path(__file__).resolve().parents[2]
PARTS = sorted((REPO / "spec").glob("*.md"))
_NUMBERED = re.compile(r"^#+ (\d+(?:\.\d+)*)\.? ", re.MULTILINE)
#: "§8", "§ 6.9"; not a paper's own section ("paper §4.2", an example of a guide record) nor
#: an RFC's ("RFC 6838 §5.6").
_CITED = re.compile(r"(?<!paper )(?<!RFC \d{4} )§ ?(\d+(?:\.\d+)*)")


def _sections() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for part in PARTS:
        for number in _NUMBERED.findall(part.read_text("utf-8")):
            found.setdefault(number, []).append(part.name)
    return found


def test_no_two_sections_share_a_number() -> None:
    assert {n: parts for n, parts in _sections().items() if len(parts) > 1} == {}


def test_every_cited_section_exists() -> None:
    sections = _sections()
    sources = [
        *PARTS,
        *sorted((REPO / "schemas").glob("*.json")),
        REPO / "reprobridge_sdk" / "model" / "_fieldnotes.py",
    ]
    missing = [
        f"{source.name}: §{number}"
        for source in sources
        for number in _CITED.findall(source.read_text("utf-8"))
        if number not in sections
    ]
    assert missing == []


def test_the_tree_digest_cites_the_digests_section() -> None:
    manifest = (REPO / "spec" / "manifest.md").read_text("utf-8")
    digests = re.search(r'<a id="digests"></a>\n#+ (\d+)\. ', manifest)
    assert digests is not None
    schema = json.loads((REPO / "schemas" / "rra-1.0.schema.json").read_text("utf-8"))
    described = schema["$defs"]["Codebase"]["properties"]["tree_digest"]["description"]
    assert _CITED.findall(described) == [digests.group(1)]


def test_the_media_type_and_file_name_are_the_sdks() -> None:
    part = (REPO / "spec" / "media-types.md").read_text("utf-8")
    section = part[part.index('<a id="media-type"></a>') :].split("\n<a id=")[0]
    assert f"named exactly `{MANIFEST_NAME}`" in section
    assert f"`{MANIFEST_MEDIA_TYPE}`" in section
