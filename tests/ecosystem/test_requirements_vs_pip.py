"""The hashed-requirements parser agrees with pip (differential, through pip's command line).

Each case is a lock file. pip reads it with ``pip install --dry-run --report - --no-deps
--ignore-installed -r FILE`` against wheels served on loopback; the SDK reads it with
:func:`check_lock`. Both must agree on the outcome: pip fails exactly when the SDK reports a
parse error (L003), and otherwise they name the same distributions at the same versions.
pip is run as a program, never imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from eco_wheelhouse import Wheel, wheel_index

from reprobridge_sdk.locks.lockfile import check_lock, read_lock

pytestmark = pytest.mark.slow  # a pip process per case (about a second each)

#: id -> lock text; {alpha} and {beta} stand for the sha256 of the served wheels.
CASES: dict[str, str] = {
    "plain": "alpha==1.0 --hash=sha256:{alpha}\n",
    "continued-hash": "alpha==1.0 \\\n    --hash=sha256:{alpha}\n",
    "join-inside-version": "alpha==\\\n1.0 --hash=sha256:{alpha}\n",
    "join-inside-name": "alp\\\nha==1.0 --hash=sha256:{alpha}\n",
    "continuation-after-comment": (
        "alpha==1.0 --hash=sha256:{alpha} # pinned \\\nbeta==2.0 --hash=sha256:{beta}\n"
    ),
    "comment-line-ends-continuation": (
        "alpha==1.0 --hash=sha256:{alpha} \\\n# a comment\nbeta==2.0 --hash=sha256:{beta}\n"
    ),
    "comment-line-with-backslash": "# note \\\nalpha==1.0 --hash=sha256:{alpha}\n",
    "tab-before-hash": "alpha==1.0\t--hash=sha256:{alpha}\n",
    "tab-in-requirement": "alpha\t==1.0 --hash=sha256:{alpha}\n",
    "tab-before-comment": "alpha==1.0 --hash=sha256:{alpha}\t# tab\n",
    "arbitrary-equality": "alpha===1.0 --hash=sha256:{alpha}\n",
    "backslash-then-space": (
        "alpha==1.0 --hash=sha256:{alpha} \\ \nbeta==2.0 --hash=sha256:{beta}\n"
    ),
    "fragment-not-comment": "alpha==1.0#egg --hash=sha256:{alpha}\n",
    "leading-backslash-line": "\\\nalpha==1.0 --hash=sha256:{alpha}\n",
    "backslash-at-eof": "alpha==1.0 --hash=sha256:{alpha} \\",
    "space-separated-hash": "alpha==1.0 --hash sha256:{alpha}\n",
    "two-requirements-one-line": "alpha==1.0 beta==2.0 --hash=sha256:{alpha}\n",
    "hash-glued-to-comment": "alpha==1.0 --hash=sha256:{alpha}#c\n",
    "markers-no-spaces": "alpha==1.0;python_version>='3' --hash=sha256:{alpha}\n",
    "spaces-around": "  alpha == 1.0   --hash=sha256:{alpha}  \n",
    "double-space-before-option": "alpha==1.0  --hash=sha256:{alpha}\n",
    "unknown-option": "alpha==1.0 --hash=sha256:{alpha} --no-binary :all:\n",
    "index-option-line": "--index-url {index}\nalpha==1.0 --hash=sha256:{alpha}\n",
    "crlf": "alpha==1.0 \\\r\n  --hash=sha256:{alpha}\r\nbeta==2.0 --hash=sha256:{beta}\r\n",
    "trailing-comment-after-continuations": (
        "alpha==1.0 \\\n    --hash=sha256:{alpha} \\\n    # via beta\n"
        "beta==2.0 --hash=sha256:{beta}\n"
    ),
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Wheel]]]:
    root = tmp_path_factory.mktemp("index")
    with wheel_index(root, [("alpha", "1.0"), ("beta", "2.0")]) as served:
        yield served


def _pip(lock: Path, index: str, tmp: Path) -> tuple[str, ...] | str:
    proc = subprocess.run(
        [
            sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-",
            "--no-deps", "--ignore-installed", "--no-cache-dir", "--isolated",
            "--disable-pip-version-check", "--index-url", index, "-r", str(lock),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp,
        timeout=120,
    )  # fmt: skip
    if proc.returncode != 0:
        return "error"
    report = json.loads(proc.stdout)
    return tuple(
        sorted(f"{i['metadata']['name']}=={i['metadata']['version']}" for i in report["install"])
    )


def _sdk(lock: Path) -> tuple[str, ...] | str:
    if any(f.code == "L003" for f in check_lock(lock, "requirements")):
        return "error"
    return tuple(sorted(f"{e.name}=={e.version}" for e in read_lock(lock, "requirements").entries))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_parser_agrees_with_pip(
    case: str, index: tuple[str, dict[str, Wheel]], tmp_path: Path
) -> None:
    url, wheels = index
    text = CASES[case].format(
        alpha=wheels["alpha==1.0"].sha256, beta=wheels["beta==2.0"].sha256, index=url
    )
    lock = tmp_path / "requirements.txt"
    lock.write_bytes(text.encode())
    assert _sdk(lock) == _pip(lock, url, tmp_path)
