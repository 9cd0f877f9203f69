"""``reprobridge lock`` refusals: a request it cannot carry out is a usage error with a code.

Every case is refused before any resolver runs (no index is reached), so these tests are fast.
Each asserts the code, the pointer and the file the finding names, and that nothing was
written.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reprobridge_sdk.env import lock_artifact
from reprobridge_sdk.errors import UsageError


def _refusal(art: Path, **options: object) -> list[tuple[str, str, str]]:
    before = sorted(p.name for p in art.iterdir())
    manifest = (art / "rra.yaml").read_bytes()
    with pytest.raises(UsageError) as caught:
        lock_artifact(art, **options)  # type: ignore[arg-type]
    assert sorted(p.name for p in art.iterdir()) == before
    assert (art / "rra.yaml").read_bytes() == manifest
    assert caught.value.findings, caught.value.message
    assert all(f.hint for f in caught.value.findings)
    return [(f.code, f.path, f.file) for f in caught.value.findings]


@pytest.mark.parametrize(
    ("manifest_extra", "python", "expected"),
    [
        ("", "3", ("L011", "/environment/python", "rra.yaml")),
        ("", "three", ("L011", "/environment/python", "rra.yaml")),
        (
            "  lock: {path: requirements.txt, format: conda}\n",
            None,
            ("L011", "/environment/lock", "rra.yaml"),
        ),
        ("  lock: requirements.txt\n", None, ("L011", "/environment/lock", "rra.yaml")),
    ],
)
def test_a_manifest_that_declares_nothing_lockable_is_l011(
    tmp_path: Path,
    make_artifact: Callable[..., Path],
    manifest_extra: str,
    python: str | None,
    expected: tuple[str, str, str],
) -> None:
    options = {"python": python} if python is not None else {}
    art = make_artifact(tmp_path / "art", "six\n", extra=manifest_extra, **options)
    assert _refusal(art) == [expected]


def test_no_requirements_declared_is_l011(tmp_path: Path) -> None:
    art = tmp_path / "art"
    art.mkdir()
    (art / "rra.yaml").write_text('rra_version: "1.0"\nenvironment: {python: "3.11"}\n', "utf-8")
    assert _refusal(art) == [("L011", "/environment/requirements", "rra.yaml")]


def test_a_requirements_file_that_does_not_exist_is_f004(
    tmp_path: Path, make_artifact: Callable[..., Path]
) -> None:
    art = make_artifact(tmp_path / "art", "six\n")
    (art / "requirements.in").unlink()
    assert _refusal(art) == [("F004", "/environment/requirements", "requirements.in")]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("../outside.txt", ("F002", "", "../outside.txt")),
        ("/etc/outside.txt", ("F001", "", "/etc/outside.txt")),
    ],
)
def test_a_lock_path_outside_the_artifact_is_refused(
    tmp_path: Path, make_artifact: Callable[..., Path], output: str, expected: tuple[str, ...]
) -> None:
    art = make_artifact(tmp_path / "art", "six\n")
    assert _refusal(art, output=output) == [expected]


def test_a_lock_path_through_a_link_out_of_the_artifact_is_f003(
    tmp_path: Path, make_artifact: Callable[..., Path]
) -> None:
    art = make_artifact(tmp_path / "art", "six\n")
    (tmp_path / "elsewhere").mkdir()
    (art / "locks").symlink_to(tmp_path / "elsewhere")
    assert _refusal(art, output="locks/requirements.txt") == [
        ("F003", "", "locks/requirements.txt")
    ]


@pytest.mark.parametrize(
    "options",
    [
        {"fmt": "pylock", "output": "locks.toml"},  # PEP 751 names the file pylock*.toml
        {"fmt": "pylock", "resolver": "pip-tools"},  # only uv writes pylock.toml
        {"resolver": "pip-tools", "python": "2.7"},  # pip-tools resolves for its own Python
    ],
)
def test_options_that_do_not_fit_together_are_l011(
    tmp_path: Path, make_artifact: Callable[..., Path], options: dict[str, str]
) -> None:
    art = make_artifact(tmp_path / "art", "six\n")
    assert _refusal(art, **options) == [("L011", "", "")]


def test_the_cli_reports_the_code_and_exits_2(
    tmp_path: Path, make_artifact: Callable[..., Path]
) -> None:
    art = make_artifact(tmp_path / "art", "six\n")
    (art / "requirements.in").unlink()
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "lock", str(art), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")  # stdout holds JSON or nothing
    assert re.search(r"^\S*requirements\.in(:\d+:\d+)?: F004 error ", done.stderr, re.MULTILINE)
