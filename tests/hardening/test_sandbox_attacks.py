"""Attacks on ``reprobridge run --sandbox``: a hostile launcher tries what broke the sandbox.

One artifact, two hostile launchers, run through the real command line under the real
bubblewrap, once as the test's user (root in CI, as CI runs) and once as ``nobody``
(uid 65534, dropped to with ``setpriv``). The launchers try, from inside:

* ``umount -l /tmp`` and ``mount -o remount,bind,rw /``, and the same as raw system calls,
  then to read a secret in the host's ``/tmp`` and in the caller's home and to write files
  on the host;
* to read a secret directory named in ``PATH`` (the launcher's ``env``, and the caller's);
* to read the caller's ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY`` and ``SSH_AUTH_SOCK``;
* to reach listening unix sockets on the host (in its ``/tmp``, in ``/run``, abstract);
* to find a capability, no-new-privileges off, or a system call of the seccomp filter's list
  that a user namespace alone would allow (``keyctl``, ``unshare(CLONE_NEWUSER)``).

The ``nobody`` variant runs the command line inside a helper mount namespace (bubblewrap run
by root, not the sandbox under test) that only makes the interpreter's prefix and the
project's source reachable where they lie under a private directory; it is skipped, with the
reason, where privileges cannot be dropped or the project cannot be imported as that user.
Where the sandbox cannot run at all the tests skip, except in CI
(``REPROBRIDGE_REQUIRE_SANDBOX=1``), where they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from sandbox_support import needs_sandbox

from reprobridge_sdk.run.sandbox import ETC_ENTRIES

pytestmark = needs_sandbox

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # the shape of a GitHub token
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SECRET_TEXT = "the-host-secret-4f1c"
#: What may reach a sandboxed launcher's environment (spec: security.md#sandbox); bubblewrap
#: sets PWD (the working directory) itself.
ALLOWED_NAMES = {
    *("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "VIRTUAL_ENV", "PYTHONUNBUFFERED", "PWD"),
}

HOSTILE = r"""
import ctypes, errno, json, os, platform, socket, subprocess, sys
from pathlib import Path

cfg = json.loads(Path(sys.argv[1]).read_text())
libc = ctypes.CDLL(None, use_errno=True)

def say(key, value):
    print(f"{key}={value}", flush=True)

def call(fn, *args):
    ctypes.set_errno(0)
    result = fn(*args)
    return "ok" if result != -1 else errno.errorcode.get(ctypes.get_errno(), "?")

for name, argv in (("umount", ["umount", "-l", "/tmp"]),
                   ("remount", ["mount", "-o", "remount,bind,rw", "/"])):
    try:
        done = subprocess.run(argv, capture_output=True, timeout=20)
        say(f"cmd-{name}", "ok" if done.returncode == 0 else "refused")
    except OSError as exc:
        say(f"cmd-{name}", f"refused {type(exc).__name__}")
libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_void_p]
say("sys-umount2", call(libc.umount2, b"/tmp", 2))  # MNT_DETACH
say("sys-remount", call(libc.mount, b"none", b"/", None, 32 | 4096, None))  # MS_REMOUNT|MS_BIND
numbers = {"x86_64": {"keyctl": 250, "clone3": 435}, "aarch64": {"keyctl": 219, "clone3": 435}}
nr = numbers[platform.machine()]
libc.syscall.restype = ctypes.c_long
say("sys-keyctl", call(libc.syscall, ctypes.c_long(nr["keyctl"]), ctypes.c_long(0),
                       ctypes.c_long(-3), ctypes.c_long(1)))  # KEYCTL_GET_KEYRING_ID, session
say("sys-unshare-user", call(libc.unshare, 0x10000000))  # CLONE_NEWUSER
say("sys-clone3", call(libc.syscall, ctypes.c_long(nr["clone3"]), None, ctypes.c_long(0)))

for key, path in cfg["secrets"].items():
    try:
        say(f"read-{key}", "read:" + Path(path).read_text())
    except OSError as exc:
        say(f"read-{key}", f"refused {errno.errorcode.get(exc.errno, '?')}")
for key, path in cfg["drops"].items():
    try:
        Path(path).write_text("planted")
        say(f"drop-{key}", "written")
    except OSError as exc:
        say(f"drop-{key}", f"refused {errno.errorcode.get(exc.errno, '?')}")
for key, path in cfg["sockets"].items():
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(3)
    try:
        client.connect(path.replace("@", "\0", 1) if path.startswith("@") else path)
        say(f"sock-{key}", "reached")
    except OSError as exc:
        say(f"sock-{key}", f"unreachable {type(exc).__name__}")
    finally:
        client.close()
for directory in cfg["listed"]:
    try:
        say(f"ls-{directory}", json.dumps(sorted(os.listdir(directory))))
    except OSError as exc:
        say(f"ls-{directory}", f"absent {errno.errorcode.get(exc.errno, '?')}")
status = dict(line.split(":\t", 1) for line in Path("/proc/self/status").read_text().splitlines()
              if ":\t" in line)
for key in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp", "Uid"):
    say(f"status-{key}", status[key].split()[0])
say("env", json.dumps(dict(os.environ)))
say("which-secret-tool", str(__import__("shutil").which("secret-tool")))
print("acc=1")
"""


@dataclass
class Attack:
    """One run of the hostile artifact and what the host looked like around it."""

    user: str
    base: Path
    tag: str
    runs: dict[str, dict[str, str]] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    records: dict[str, str] = field(default_factory=dict)
    events: list[dict[str, object]] = field(default_factory=list)
    planted: list[Path] = field(default_factory=list)
    sockets_accepted: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr: str = ""


def _nobody_problem() -> str | None:
    if os.geteuid() != 0:
        return "the tests do not run as root, so they cannot drop to another user"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    probe = _as_nobody([sys.executable, "-c", "import reprobridge_sdk.cli"])
    done = subprocess.run(
        probe,
        env={**os.environ, "PYTHONPATH": str(REPO), "HOME": "/"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1:] or ["no detail"]
        return f"the project cannot be imported as uid {NOBODY}: {last[0]}"
    return None


def _as_nobody(argv: list[str]) -> list[str]:
    """``argv`` run as uid/gid 65534, with the interpreter's prefixes and the project's source
    made reachable where they lie under a private directory (root's home for a pyenv
    interpreter, a temporary directory for a checkout): a mount namespace of the test's own
    (bubblewrap as root, with the host's tree), not the sandbox under test."""
    helper = [shutil.which("bwrap") or "bwrap", "--dev-bind", "/", "/", "--die-with-parent"]
    exposed = {
        Path(os.path.realpath(p))
        for p in (sys.prefix, sys.base_prefix, Path(sys.executable).parent.parent, REPO)
    }
    hidden: set[Path] = set()
    for path in sorted(exposed):
        blocked = [p for p in [*reversed(path.parents), path] if not _searchable(p)]
        if not blocked:
            continue
        top = blocked[0]
        if top not in hidden:
            helper += ["--perms", "0755", "--tmpfs", str(top)]
            hidden.add(top)
        for between in [p for p in reversed(path.parents) if p.is_relative_to(top)][1:]:
            helper += ["--perms", "0755", "--dir", str(between)]
        helper += ["--ro-bind", str(path), str(path)]
    drop = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
    return [*helper, "--", *drop, "--", *argv]


def _searchable(path: Path) -> bool:
    """Whether users other than the owner may enter ``path``."""
    return bool(path.stat().st_mode & stat.S_IXOTH)


@contextlib.contextmanager
def _unix_listener(address: str, accepted: list[str]) -> Iterator[None]:
    server = socket.socket(socket.AF_UNIX)
    server.bind(address.replace("@", "\0", 1) if address.startswith("@") else address)
    if not address.startswith("@"):
        Path(address).chmod(0o777)
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(address)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        server.close()


def _write_artifact(root: Path, cfg: dict[str, object], secret_dir: Path) -> None:
    (root / "code").mkdir(parents=True)
    (root / "code" / "hostile.py").write_text(HOSTILE)
    (root / "code" / "cfg.json").write_text(json.dumps(cfg))
    python = os.path.realpath(sys.executable)
    launcher = {"argv": [python, "hostile.py", "cfg.json"], "workdir": "code", "scope": "smoke"}
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
            {
                **launcher,
                "id": "hostile",
                "env": {"PATH": f"{secret_dir}:/usr/bin:/bin", "REPRO_MODE": "attack"},
            },
            {**launcher, "id": "callerpath"},
        ],
    }
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))


def _parse(log: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in log.splitlines() if "=" in line)


@pytest.fixture(scope="module", params=["caller", "nobody"])
def attack(request: pytest.FixtureRequest) -> Iterator[Attack]:
    user = str(request.param)
    if user == "nobody" and (problem := _nobody_problem()) is not None:
        pytest.skip(f"cannot drop privileges here: {problem}")
    tag = uuid.uuid4().hex[:10]
    base = Path(tempfile.mkdtemp(prefix="rb-sandbox-attack-"))
    run_dirs = [Path("/run") / f"rb-sandbox-{tag}"]
    host_tmp = Path("/tmp") / f"rb-sandbox-host-{tag}"
    result = Attack(user=user, base=base, tag=tag)
    try:
        base.chmod(0o755)
        home = base / "home"
        secret_dir = base / "secret-bin"
        caller_secret = base / "caller-secret-bin"
        locked = base / "locked"
        for directory in (home, secret_dir, caller_secret, locked / "bin", host_tmp):
            directory.mkdir(parents=True)
            directory.chmod(0o755)
        (home / "secret.txt").write_text(SECRET_TEXT)
        (secret_dir / "secret.txt").write_text(SECRET_TEXT)
        (secret_dir / "secret-tool").write_text("#!/bin/sh\necho pwned\n")
        (secret_dir / "secret-tool").chmod(0o755)
        (caller_secret / "secret.txt").write_text(SECRET_TEXT)
        (host_tmp / "secret.txt").write_text(SECRET_TEXT)
        for secret in (home / "secret.txt", secret_dir / "secret.txt", host_tmp / "secret.txt"):
            secret.chmod(0o644)
        (caller_secret / "secret.txt").chmod(0o644)
        locked.chmod(0)  # an unreadable PATH entry below it
        for directory in run_dirs:
            directory.mkdir(mode=0o755)
        planted = {
            "root": Path(f"/rb-sandbox-{tag}.txt"),
            "hosttmp": host_tmp / "planted.txt",
            "tmp": Path(f"/tmp/rb-sandbox-planted-{tag}.txt"),
            "home": home / "planted.txt",
            "artifact": base / "art" / "planted.txt",
            "code": base / "art" / "code" / "planted.txt",
        }
        result.planted = list(planted.values())
        sockets = {
            "hosttmp": str(host_tmp / "s.sock"),
            "run": str(run_dirs[0] / "s.sock"),
            "abstract": f"@rb-sandbox-{tag}",
        }
        cfg = {
            "secrets": {
                "hosttmp": str(host_tmp / "secret.txt"),
                "home": str(home / "secret.txt"),
                "pathdir": str(secret_dir / "secret.txt"),
                "callerpath": str(caller_secret / "secret.txt"),
            },
            "drops": {key: str(path) for key, path in planted.items()},
            "sockets": sockets,
            "listed": ["/root", "/home", "/run", "/var", "/tmp", "/etc", "/etc/ssl", str(base)],
        }
        art = base / "art"
        _write_artifact(art, cfg, secret_dir)
        runs = base / "runs"
        runs.mkdir()
        cache = base / "cache"
        cache.mkdir()
        if user == "nobody":
            os.chown(runs, NOBODY, NOBODY)
            os.chown(cache, NOBODY, NOBODY)
            os.chown(home, NOBODY, NOBODY)
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "HOME": str(home),
            "REPROBRIDGE_CACHE_DIR": str(cache),
            "PATH": f"{locked / 'bin'}:{caller_secret}:{os.environ.get('PATH', '/usr/bin')}",
            "GITHUB_TOKEN": TOKEN,
            "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "SSH_AUTH_SOCK": sockets["hosttmp"],
            "LANG": "C.UTF-8",
            "REPRO_FROM_CALLER": "1",
        }
        argv = [  # the interpreter under test, its virtual environment included
            sys.executable,
            "-m",
            "reprobridge_sdk",
            "run",
            str(art),
            "--sandbox",
            "--env",
            "current",
            "--format",
            "json",
            "--no-validate",
            "--runs-dir",
            str(runs),
        ]
        if user == "nobody":
            argv = _as_nobody(argv)
        with contextlib.ExitStack() as stack:
            for address in sockets.values():
                stack.enter_context(_unix_listener(address, result.sockets_accepted))
            done = subprocess.run(
                argv, env=env, cwd=base, capture_output=True, text=True, timeout=300, check=False
            )
        result.stdout, result.stderr = done.stdout, done.stderr
        result.events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        for event in result.events:
            if event["event"] == "run-finished":
                run_dir = Path(str(event["run_dir"]))
                launcher = str(event["launcher"])
                result.logs[launcher] = (run_dir / "log.txt").read_text(errors="replace")
                result.records[launcher] = (run_dir / "record.json").read_text()
                result.runs[launcher] = _parse(result.logs[launcher])
        yield result
    finally:
        for path in result.planted:
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(OSError):
            (base / "locked").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(host_tmp, ignore_errors=True)
        for directory in run_dirs:
            shutil.rmtree(directory, ignore_errors=True)


def _run(attack: Attack, launcher: str) -> dict[str, str]:
    assert launcher in attack.runs, (attack.stdout, attack.stderr)
    record = json.loads(attack.records[launcher])
    assert record["status"] == "succeeded", (record.get("failure"), attack.logs[launcher])
    return attack.runs[launcher]


@pytest.mark.parametrize("launcher", ["hostile", "callerpath"])
def test_mount_and_umount_are_refused_and_nothing_outside_is_read_or_written(
    attack: Attack, launcher: str
) -> None:
    seen = _run(attack, launcher)
    assert seen["cmd-umount"].startswith("refused")
    assert seen["cmd-remount"].startswith("refused")
    assert seen["sys-umount2"] == "EPERM"
    assert seen["sys-remount"] == "EPERM"
    for key in ("hosttmp", "home", "pathdir", "callerpath"):
        assert seen[f"read-{key}"].startswith("refused"), key
    assert seen["drop-root"].startswith("refused")
    assert seen["drop-hosttmp"].startswith("refused")
    assert seen["drop-home"].startswith("refused")
    assert seen["drop-artifact"].startswith("refused")
    assert seen["drop-code"] == "written"  # the run's own copy of the code ...
    assert seen["drop-tmp"] == "written"  # ... and the sandbox's own /tmp ...
    assert [path for path in attack.planted if path.exists()] == []  # ... and none on the host
    assert SECRET_TEXT not in attack.logs[launcher]


@pytest.mark.parametrize("launcher", ["hostile", "callerpath"])
def test_the_host_file_system_is_an_allow_list(attack: Attack, launcher: str) -> None:
    seen = _run(attack, launcher)
    assert seen["ls-/run"].startswith("absent")
    assert seen["ls-/var"].startswith("absent")
    assert seen["ls-/home"].startswith("absent")
    # the private /tmp: the file planted just now, the way to the artifact, and the way to
    # the interpreter's prefix when it lies there (a virtual environment in /tmp)
    prefixes = {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix)}
    to_prefix = {p.parts[2] for p in prefixes if p.is_relative_to("/tmp") and len(p.parts) > 2}
    assert (
        set(json.loads(seen["ls-/tmp"]))
        == {f"rb-sandbox-planted-{attack.tag}.txt"}
        | ({attack.base.name} if attack.base.parent == Path("/tmp") else set())
        | to_prefix
    )
    # /etc: only the listed files a program needs (no shadow, no ssh keys, no machine-id)
    assert set(json.loads(seen["ls-/etc"])) <= {entry.split("/")[0] for entry in ETC_ENTRIES}
    if not seen["ls-/etc/ssl"].startswith("absent"):  # certificates, never private keys
        assert set(json.loads(seen["ls-/etc/ssl"])) <= {"certs", "openssl.cnf"}
    # the artifact's parent: only the artifact and the runs directory that holds the run
    assert set(json.loads(seen[f"ls-{attack.base}"])) == {"art", "runs"}
    # root's home: nothing but the way to the interpreter's prefix, when it lies there
    if not seen["ls-/root"].startswith("absent"):
        prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
        for name in json.loads(seen["ls-/root"]):
            assert any(p.startswith(f"/root/{name}/") for p in prefixes), name


def test_a_path_entry_naming_a_secret_directory_exposes_nothing(attack: Attack) -> None:
    hostile = _run(attack, "hostile")
    callerpath = _run(attack, "callerpath")
    assert hostile["which-secret-tool"] == "None"
    assert hostile["read-pathdir"].startswith("refused ENOENT")
    assert callerpath["read-callerpath"].startswith("refused ENOENT")
    findings = [e for e in attack.events if e["event"] == "finding"]
    assert {e["code"] for e in findings} == {"N023"}
    assert {e["severity"] for e in findings} == {"warning"}
    # one finding per source (the launcher's env, the caller's PATH), naming its entries
    by_source = {str(e["path"]): str(e["message"]) for e in findings}
    assert len(by_source) == len(findings) == 2
    base = attack.base
    assert repr(str(base / "secret-bin")) in by_source["/launchers/hostile/env/PATH"]
    assert repr(str(base / "caller-secret-bin")) in by_source[""]
    assert repr(str(base / "locked" / "bin")) in by_source[""]  # unreadable: no error
    for seen in (hostile, callerpath):
        path = json.loads(seen["env"])["PATH"].split(os.pathsep)
        assert not any(entry.startswith(str(base)) for entry in path), path


def test_the_callers_credentials_stay_out_of_the_run(attack: Attack) -> None:
    for launcher in ("hostile", "callerpath"):
        seen = _run(attack, launcher)
        env = json.loads(seen["env"])
        assert "GITHUB_TOKEN" not in env
        assert "AWS_SECRET_ACCESS_KEY" not in env
        assert "AWS_ACCESS_KEY_ID" not in env
        assert "SSH_AUTH_SOCK" not in env
        for text in (attack.logs[launcher], attack.records[launcher]):
            assert TOKEN not in text
            assert AWS_SECRET not in text
        names = {n for n in env if not n.startswith(("LC_", "REPRO_"))}
        assert names <= ALLOWED_NAMES, names - ALLOWED_NAMES
        assert env["LANG"] == "C.UTF-8"
        assert env["REPRO_FROM_CALLER"] == "1"
        record = json.loads(attack.records[launcher])
        assert env["HOME"] == str(attack.base / "runs" / record["run_id"])
    assert json.loads(_run(attack, "hostile")["env"])["REPRO_MODE"] == "attack"


@pytest.mark.parametrize("launcher", ["hostile", "callerpath"])
def test_host_unix_sockets_are_unreachable(attack: Attack, launcher: str) -> None:
    seen = _run(attack, launcher)
    assert seen["sock-hosttmp"].startswith("unreachable")
    assert seen["sock-run"].startswith("unreachable")
    assert seen["sock-abstract"].startswith("unreachable")
    assert attack.sockets_accepted == []


@pytest.mark.parametrize("launcher", ["hostile", "callerpath"])
def test_no_capabilities_no_new_privileges_and_the_filter_refuses(
    attack: Attack, launcher: str
) -> None:
    seen = _run(attack, launcher)
    assert int(seen["status-CapEff"], 16) == 0
    assert int(seen["status-CapPrm"], 16) == 0
    assert int(seen["status-CapBnd"], 16) == 0
    assert seen["status-NoNewPrivs"] == "1"
    assert seen["status-Seccomp"] == "2"
    assert seen["status-Uid"] == str(NOBODY)
    assert seen["sys-keyctl"] == "EPERM"
    assert seen["sys-unshare-user"] == "EPERM"
    assert seen["sys-clone3"] == "ENOSYS"  # so the C library falls back to clone
