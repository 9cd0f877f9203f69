"""The snapshot's distribution list reads only the header block of each distribution's metadata.

It must give exactly the pairs ``importlib.metadata`` gives when it parses the whole text
(``dist.metadata["Name"]``, ``dist.version``), on every layout a package can install, its
long description included: a description is written by the package's author, so one that
looks like headers (``Name: evil``) must not change what is recorded. Compared in a real venv
whose site-packages holds the crafted distributions, through both paths: the probe run by
that interpreter and the in-process reader run by this interpreter with that site-packages
on its path.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from reprobridge_sdk.env.snapshot import installed_distributions

#: (directory or file name, metadata file name or "" for an egg-info file, text)
LAYOUTS = [
    ("plain-1.0.dist-info", "METADATA", "Name: plain\nVersion: 1.0\n\nbody\nName: evil\n"),
    ("crlf-2.0.dist-info", "METADATA", "Name: crlf\r\nVersion: 2.0\r\n\r\nName: evil\r\n"),
    ("mixed-2.1.dist-info", "METADATA", "Name: mixed\nVersion: 2.1\n\r\nName: evil\n"),
    ("folded-3.0.dist-info", "METADATA", "Name: folded\nVersion: 3.0\nSummary: a\n  b\n\nx"),
    ("lonecr-4.0.dist-info", "METADATA", "Name: lonecr\rVersion: 4.0\r\rName: evil\r"),
    ("headers-5.0.dist-info", "METADATA", "Name: headers\nVersion: 5.0\n"),
    ("spaced-6.0.dist-info", "METADATA", "Name: spaced\nVersion: 6.0\n \nName: evil\n\nz"),
    ("large-7.0.dist-info", "METADATA", "Name: large\nVersion: 7.0\n\n" + "Name: e\n" * 100_000),
    ("first-8.0.dist-info", "METADATA", "Name: twice\nName: evil\nVersion: 8.0\n\n"),
    ("noname-9.0.dist-info", "METADATA", "Version: 9.0\n\nName: evil\n"),
    ("empty-10.0.dist-info", "METADATA", ""),
    ("egg.egg-info", "PKG-INFO", "Metadata-Version: 1.1\nName: egg\nVersion: 11.0\n\nName: e\n"),
    ("eggfile.egg-info", "", "Metadata-Version: 1.1\nName: eggfile\nVersion: 12.0\n\nName: e\n"),
    ("dupe-13.0.dist-info", "METADATA", "Name: Plain\nVersion: 13.0\n\n"),
    ("utf8-14.0.dist-info", "METADATA", "Name: utf8\nVersion: 14.0\nAuthor: Zoë\n\nÜ\n"),
]

#: The pairs as ``importlib.metadata`` gives them, parsing the whole text.
REFERENCE = """
import json
from importlib import metadata
found = {}
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    if name:
        found.setdefault(name, dist.version)
print(json.dumps(sorted(found.items(), key=lambda item: item[0].lower())))
"""

OURS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from reprobridge_sdk.env.snapshot import installed_distributions
print(json.dumps([[d.name, d.version] for d in installed_distributions()]))
"""


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A venv without pip whose site-packages holds :data:`LAYOUTS`."""
    root = tmp_path_factory.mktemp("dists") / "v"
    venv.create(root, with_pip=False)
    python = root / "bin" / "python"
    purelib = sysconfig.get_path("purelib", vars={"base": str(root), "platbase": str(root)})
    site = Path(purelib)
    assert site.is_dir()
    for name, member, text in LAYOUTS:
        if member:
            (site / name).mkdir()
            (site / name / member).write_bytes(text.encode())
        else:
            (site / name).write_bytes(text.encode())
    return python, site


def _pairs(python: str | Path, script: str, *args: str) -> list[list[str]]:
    done = subprocess.run(
        [str(python), "-I", "-c", script, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    data = json.loads(done.stdout)
    assert isinstance(data, list)
    return data


def test_the_probe_gives_the_pairs_of_a_full_parse(crafted: tuple[Path, Path]) -> None:
    python, _ = crafted
    reference = _pairs(python, REFERENCE)
    assert [(d.name, d.version) for d in installed_distributions(python)] == [
        tuple(pair) for pair in reference
    ]
    names = [name for name, _ in reference]
    assert "evil" not in names
    assert "e" not in names
    assert {"plain", "crlf", "lonecr", "egg", "eggfile", "twice", "utf8"} <= set(names)


def test_in_process_reader_gives_the_pairs_of_a_full_parse(crafted: tuple[Path, Path]) -> None:
    python, site = crafted
    reference = _pairs(python, REFERENCE)
    ours = _pairs(sys.executable, OURS, str(site))
    # This interpreter also sees its own distributions: the crafted ones come out the same.
    crafted_names = {name for name, _ in reference}
    assert [pair for pair in ours if pair[0] in crafted_names] == reference


def test_this_environment_gives_the_pairs_of_a_full_parse() -> None:
    ours = [[d.name, d.version] for d in installed_distributions()]
    assert ours == _pairs(sys.executable, REFERENCE)
    assert len(ours) > 10
