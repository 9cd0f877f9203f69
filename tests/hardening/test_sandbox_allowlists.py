"""The sandbox's allow-lists, piece by piece: PATH, the environment, what is bound, N011.

The whole attack (real launchers under the real sandbox, as root and as nobody) is in
``test_sandbox_attacks.py``; here each rule is pinned on its own edge cases, with real
directories (an unreadable one, a link, a relative entry).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sandbox_support import needs_sandbox

from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.run import RunEvent, run
from reprobridge_sdk.run.progress import LiveProgress
from reprobridge_sdk.run.sandbox import (
    filter_path,
    interpreter_paths,
    may_bind,
    sandbox_command,
    sandbox_env,
)


def test_path_keeps_entries_inside_and_drops_the_rest_without_raising(tmp_path: Path) -> None:
    inside = tmp_path / "env" / "bin"
    inside.mkdir(parents=True)
    outside = tmp_path / "secret"
    outside.mkdir()
    locked = tmp_path / "locked"
    (locked / "bin").mkdir(parents=True)
    link = tmp_path / "env" / "usr-bin-link"
    link.symlink_to("/usr/bin")
    escape = tmp_path / "env" / "escape"
    escape.symlink_to(outside)
    locked.chmod(0)
    try:
        entries = [inside, outside, locked / "bin", "relative/bin", "", link, escape, inside]
        value = os.pathsep.join([*map(str, entries), "/usr/bin"])
        kept, dropped = filter_path(value, [Path("/usr"), tmp_path / "env"])
    finally:
        locked.chmod(0o755)
    assert kept.split(os.pathsep) == [str(inside), "/usr/bin"]  # links resolved, once each
    assert dropped == [str(outside), str(locked / "bin"), "relative/bin", str(escape)]


def test_the_environment_is_an_allow_list(tmp_path: Path) -> None:
    caller = {
        "PATH": "/usr/bin:/opt/secret/bin",
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "REPRO_EPOCHS": "1",
        "REPROBRIDGE_SIGNING_KEY": "/root/key",
        "VIRTUAL_ENV": "/venv",
        "PYTHONUNBUFFERED": "1",
        "GITHUB_TOKEN": "ghp_x",
        "AWS_SECRET_ACCESS_KEY": "k",
        "SSH_AUTH_SOCK": "/tmp/ssh/agent",
        "PYTHONPATH": "/root/src",
        "LD_PRELOAD": "/root/evil.so",
    }
    env, dropped = sandbox_env(
        caller, {"SEED": "3"}, run_dir=tmp_path / "run", roots=[Path("/usr")]
    )
    assert env == {
        "PATH": "/usr/bin",
        "HOME": str(tmp_path / "run"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "REPRO_EPOCHS": "1",
        "VIRTUAL_ENV": "/venv",
        "PYTHONUNBUFFERED": "1",
        "SEED": "3",
    }
    assert dropped == ["/opt/secret/bin"]
    declared = {"PATH": "/opt/other:/usr/bin", "HOME": "/elsewhere"}
    env, dropped = sandbox_env(caller, declared, run_dir=tmp_path, roots=[Path("/usr")])
    assert (env["PATH"], env["HOME"], dropped) == ("/usr/bin", "/elsewhere", ["/opt/other"])


def test_the_places_never_shown_are_never_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / "user"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for place in ("/", "/tmp", "/run", "/var", "/home", "/root", "/etc", tmp_path / "home"):
        assert not may_bind(Path(place)), place
    assert not may_bind(home)
    assert may_bind(home / "project")
    assert may_bind(Path("/usr/lib"))
    command = sandbox_command(
        ["true"],
        workdir=tmp_path,
        run_dir=home / "project",
        seccomp=3,
        readable=[Path("/"), home, Path("/run"), tmp_path / "missing"],
    )
    binds = {command[i + 1] for i, arg in enumerate(command) if arg in ("--bind", "--ro-bind")}
    assert binds.isdisjoint({"/", str(home), "/run", str(tmp_path / "missing")})
    assert str(home / "project") in binds
    assert "--cap-drop" in command
    assert command[command.index("--uid") + 1] == "65534"
    assert {"--unshare-all", "--unshare-user", "--new-session", "--die-with-parent"} <= set(command)


def test_a_venv_brings_its_base_interpreter_prefix(tmp_path: Path) -> None:
    base = Path(os.path.realpath(sys.base_prefix))
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    (venv / "pyvenv.cfg").write_text(f"home = {Path(os.path.realpath(sys.executable)).parent}\n")
    paths = interpreter_paths(venv)
    assert paths[0] == venv
    assert base in paths


def _artifact(root: Path) -> Path:
    (root / "code").mkdir(parents=True)
    manifest = {
        "rra_version": "1.0",
        "artifact": {"id": "sbx", "title": "Sandbox", "license": "MIT", "paper": {"title": "S"}},
        "codebase": {
            "upstream": {"repository": "https://example.org/s.git", "commit": "0" * 40},
            "refined": {"kind": "directory", "path": "code"},
        },
        "environment": {"python": f"{sys.version_info.major}.{sys.version_info.minor}"},
        "tasks": [
            {
                "id": "acc",
                "dataset": "d",
                "metric": "m",
                "published": {"value": 1.0},
                "direction": "higher",
                "kind": "full",
            }
        ],
        "launchers": [
            {"id": "one", "argv": ["python", "-c", "print(1)"], "workdir": "code", "scope": "smoke"}
        ],
    }
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


@needs_sandbox
def test_an_artifact_that_is_the_callers_home_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _artifact(tmp_path / "home")
    monkeypatch.setenv("HOME", str(root))
    with pytest.raises(UsageError) as caught:
        run(root, ["one"], env_mode="current", sandbox=True)
    assert [(f.code, f.path) for f in caught.value.findings] == [("N011", "")]
    assert not (root / "runs").exists()


def test_a_finding_event_is_printed_as_a_coded_warning() -> None:
    stream, findings = io.StringIO(), io.StringIO()
    with LiveProgress(stream, live=False, findings=findings) as progress:
        progress(
            RunEvent(
                "finding",
                {
                    "run_id": "r1",
                    "code": "N023",
                    "severity": "warning",
                    "message": "PATH entry '/opt/x' lies outside",
                    "path": "/launchers/one/env/PATH",
                    "hint": "put the program in the artifact",
                },
            )
        )
    assert stream.getvalue() == ""  # progress only: the finding is a diagnostic
    lines = findings.getvalue().splitlines()
    assert lines[0] == "r1: N023 warning PATH entry '/opt/x' lies outside [/launchers/one/env/PATH]"
    assert lines[1] == "    hint: put the program in the artifact"


@needs_sandbox
def test_where_user_namespaces_are_not_permitted_nothing_runs(tmp_path: Path) -> None:
    """A real host without user namespaces: bubblewrap's --disable-userns sets the limit of
    new user namespaces to none for the command line under test (no mock of the check)."""
    root = _artifact(tmp_path / "art")
    no_userns = [shutil.which("bwrap") or "bwrap", "--dev-bind", "/", "/", "--unshare-user"]
    cli = [sys.executable, "-m", "reprobridge_sdk", "run", str(root)]  # its venv too
    done = subprocess.run(
        [
            *no_userns,
            "--disable-userns",
            "--",
            *cli,
            "--sandbox",
            "--env",
            "current",
            "--no-validate",
        ],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert len([line for line in done.stdout.splitlines() if ": N011 error " in line]) == 1
    assert not (root / "runs").exists()


@needs_sandbox
def test_the_api_reports_a_dropped_path_entry_once_as_a_finding_event(tmp_path: Path) -> None:
    root = _artifact(tmp_path / "art")
    secret = tmp_path / "secret-bin"
    secret.mkdir()
    manifest = yaml.safe_load((root / "rra.yaml").read_text())
    manifest["launchers"][0]["argv"] = [os.path.realpath(sys.executable), "-c", "print(1)"]
    manifest["launchers"][0]["env"] = {"PATH": f"{secret}:/usr/bin"}
    manifest["launchers"][0]["seeds"] = [1, 2]
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    events: list[RunEvent] = []
    summary = run(root, ["one"], env_mode="current", sandbox=True, on_event=events.append)
    assert [r.status for r in summary.results] == ["succeeded", "succeeded"]
    from_env = [
        e.data
        for e in events
        if e.event == "finding" and e.data["path"] == "/launchers/one/env/PATH"
    ]
    assert [(d["code"], d["severity"]) for d in from_env] == [("N023", "warning")]  # once
    assert repr(str(secret)) in str(from_env[0]["message"])


@pytest.mark.slow
@needs_sandbox
def test_the_environment_built_from_the_lock_runs_inside_with_its_base_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment is cached under the caller's home (as ``~/.cache/reprobridge`` is),
    and its base interpreter may live under a home too (pyenv): both are shown read-only,
    the rest of the home is not."""
    home = tmp_path / "home"
    (home / "private").mkdir(parents=True)
    (home / "private" / "secret.txt").write_text("x")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(home / ".cache" / "reprobridge"))
    root = _artifact(tmp_path / "art")
    (root / "environment").mkdir()
    (root / "environment" / "requirements.lock").write_text("# no distributions\n")
    manifest = yaml.safe_load((root / "rra.yaml").read_text())
    manifest["environment"]["lock"] = {
        "path": "environment/requirements.lock",
        "format": "requirements",
        "sha256": file_sha256(root / "environment" / "requirements.lock"),
    }
    probe = (
        "import os, sys; print('prefix=' + sys.prefix); print('venv=' + os.environ['VIRTUAL_ENV'])"
        f"; print('home-secret=' + str(os.path.exists({str(home / 'private')!r})))"
    )
    manifest["launchers"][0]["argv"] = ["python", "-c", probe]
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    (result,) = run(root, ["one"], env_mode="cached", sandbox=True).results
    log = (result.run_dir / "log.txt").read_text()
    assert result.status == "succeeded", log
    seen = dict(line.split("=", 1) for line in log.splitlines() if "=" in line)
    assert seen["prefix"] == seen["venv"]
    assert Path(seen["prefix"]).is_relative_to(home / ".cache" / "reprobridge")
    assert seen["home-secret"] == "False"
