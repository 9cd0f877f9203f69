"""Build a local package index (PEP 503 "simple" layout) for the slow tests.

    python .ci/wheelhouse.py DIR [--python-version X.Y ...]

Downloads, with ``pip download`` from the configured index, every wheel the slow tests
install: ``.ci/wheelhouse.txt`` for each Python version given (default: the running one), the
package's own dependencies and build backend with theirs (the pre-commit test installs this
checkout into a hook environment of its own), and the bundled example's hashed lock for the
Python its manifest declares. Then writes
``DIR/simple/<project>/index.html`` pages that link the files with their SHA-256, so pip and
uv can use ``file://DIR/simple`` as their index.
Point the tests at it with ``REPROBRIDGE_INDEX_URL=file://DIR/simple`` (``.ci/run
--wheelhouse`` does both).
"""

from __future__ import annotations

import argparse
import hashlib
import html
import re
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PINS = HERE / "wheelhouse.txt"
EXAMPLE = REPO / "examples" / "digits-logreg"
MANIFEST = EXAMPLE / "rra.yaml"
LOCK = EXAMPLE / "environment" / "requirements.lock"


def _project(filename: str) -> str:
    """The normalized project name of a wheel or sdist file name (PEP 503)."""
    name = re.split(r"-\d", filename, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip_download(files: Path, version: str, *requirements: str, deps: bool = False) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            *([] if deps else ["--no-deps"]),
            "--only-binary=:all:",
            "--python-version",
            version,
            "--dest",
            str(files),
            *requirements,
        ],
        check=True,
    )


def download(files: Path, versions: list[str]) -> None:
    pins = [
        line.strip()
        for line in PINS.read_text("utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    own = [*project["project"]["dependencies"], *project["build-system"]["requires"]]
    for version in versions:
        for pin in pins:  # one at a time: several versions of one project may be wanted
            _pip_download(files, version, pin)
        _pip_download(files, version, *own, deps=True)
    # The example's environment is built for the Python its manifest declares, whatever runs
    # the tests.
    declared = re.search(r"^\s*python:\s*['\"]?([0-9.]+)", MANIFEST.read_text("utf-8"), re.M)
    assert declared is not None, f"{MANIFEST} declares no Python"
    _pip_download(files, declared.group(1), "-r", str(LOCK))


def write_index(root: Path, files: Path) -> None:
    projects: dict[str, list[Path]] = {}
    for path in sorted(files.iterdir()):
        projects.setdefault(_project(path.name), []).append(path)
    simple = root / "simple"
    links = []
    for project, paths in sorted(projects.items()):
        page = simple / project
        page.mkdir(parents=True, exist_ok=True)
        anchors = []
        for path in paths:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            href = f"../../files/{html.escape(path.name)}#sha256={digest}"
            anchors.append(f'<a href="{href}">{html.escape(path.name)}</a><br>')
        page.joinpath("index.html").write_text(
            "<!DOCTYPE html><html><body>\n" + "\n".join(anchors) + "\n</body></html>\n", "utf-8"
        )
        links.append(f'<a href="{project}/">{project}</a><br>')
    simple.joinpath("index.html").write_text(
        "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n", "utf-8"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--python-version", action="append", dest="versions")
    args = parser.parse_args()
    versions = args.versions or [f"{sys.version_info[0]}.{sys.version_info[1]}"]
    files = args.root / "files"
    files.mkdir(parents=True, exist_ok=True)
    download(files, versions)
    write_index(args.root, files)
    print(f"file://{args.root.resolve()}/simple")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
