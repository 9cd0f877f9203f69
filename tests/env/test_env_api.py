"""The env package's public names and the CLI's error paths (no network needed)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk import env
from reprobridge_sdk.env import check_environment
from reprobridge_sdk.env.snapshot import REDACTED, select_variables


def test_public_names_resolve() -> None:
    for name in env.__all__:
        assert getattr(env, name) is not None
    assert sorted(dir(env)) == sorted(env.__all__)


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


def test_env_create_without_lock(make_artifact: Callable[..., Path], tmp_path: Path) -> None:
    art = make_artifact(tmp_path / "art", "six\n")
    proc = _cli("env", "create", str(art), "--cache-dir", str(tmp_path / "cache"))
    assert proc.returncode == 2
    assert "E012" in proc.stdout
    assert "E012" not in proc.stderr
    assert not (tmp_path / "cache" / "envs").exists() or not any(
        p for p in (tmp_path / "cache" / "envs").iterdir() if not p.name.endswith(".lock")
    )


def test_env_check_json_without_lock(make_artifact: Callable[..., Path], tmp_path: Path) -> None:
    art = make_artifact(tmp_path / "art", "six\n")
    proc = _cli("env", "check", str(art), "--format", "json")
    assert proc.returncode == 1
    found = json.loads(proc.stdout)["artifacts"][0]["findings"]
    assert [(f["code"], f["path"], f["file"]) for f in found] == [
        ("E012", "/environment", "rra.yaml")
    ]


def test_env_check_options_exclude_each_other(
    make_artifact: Callable[..., Path], tmp_path: Path
) -> None:
    # A readable artifact, so that exit 2 can only come from the options, not a missing manifest.
    art = make_artifact(tmp_path / "art", "six\n")
    proc = _cli("env", "check", str(art), "--current", "--python", sys.executable)
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert "--current" in last
    assert "--python" in last
    assert proc.stdout == ""


def test_missing_manifest_is_an_io_error(tmp_path: Path) -> None:
    for args in (("env", "check"), ("data", "verify"), ("lock",), ("env", "create")):
        proc = _cli(*args, str(tmp_path / "nowhere"))
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert str(tmp_path / "nowhere" / "rra.yaml") in proc.stdout + proc.stderr, args


_TOKENS = st.one_of(
    st.from_regex(r"ghp_[A-Za-z0-9]{36}", fullmatch=True),
    st.from_regex(r"hf_[A-Za-z0-9]{34}", fullmatch=True),
    st.from_regex(r"AKIA[0-9A-Z]{16}", fullmatch=True),
    st.from_regex(r"sk-[A-Za-z0-9]{40}", fullmatch=True),
)


@settings(max_examples=50, deadline=None)
@given(prefix=st.text(alphabet="abc =:/", max_size=10), token=_TOKENS)
def test_credential_values_never_leak(prefix: str, token: str) -> None:
    value = prefix + token
    assert select_variables({"CUDA_NOTE": value}) == {"CUDA_NOTE": REDACTED}


def test_distributions_not_in_the_lock_are_listed(tmp_path: Path) -> None:
    """E003 (info) for what this interpreter has beyond a lock that pins only pytest."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    (tmp_path / "rra.yaml").write_text(
        f'rra_version: "1.0"\nenvironment:\n  python: "{python}"\n'
        "  lock:\n    path: requirements.txt\n    format: requirements\n",
        "utf-8",
    )
    pinned = f"pytest=={metadata.version('pytest')} \\\n    --hash=sha256:{'0' * 64}\n"
    (tmp_path / "requirements.txt").write_text(pinned, "utf-8")
    findings = check_environment(tmp_path, python=sys.executable)
    assert {(f.code, f.severity.value) for f in findings} == {("E003", "info")}
    paths = {f.path for f in findings}
    assert "/distributions/hypothesis" in paths  # installed here, not in the lock
    assert "/distributions/pytest" not in paths  # in the lock at the installed version
    assert "/distributions/pip" not in paths  # seeded by venv itself, never an extra


def test_a_python_that_cannot_start_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    from reprobridge_sdk.env.interpreters import version_of
    from reprobridge_sdk.env.venv import EnvironmentBuildError, find_python

    text = tmp_path / "notes.txt"
    text.write_text("print('hi')\n", "utf-8")  # exists, not executable
    fails = tmp_path / "fails"
    fails.write_text("#!/bin/sh\nexit 3\n", "utf-8")
    fails.chmod(0o755)
    talks = tmp_path / "talks"
    talks.write_text("#!/bin/sh\necho not-a-version\n", "utf-8")
    talks.chmod(0o755)
    for bad in (text, fails, talks, tmp_path, tmp_path / "absent", "no-such-python-9.9"):
        assert version_of(bad) is None
        try:
            find_python("3.11", bad)
        except EnvironmentBuildError as exc:
            assert [(f.code, bool(f.hint)) for f in exc.findings] == [("E004", True)], bad
        else:
            raise AssertionError(bad)
    assert find_python("3.11", sys.executable)[1] == version_of(sys.executable)
