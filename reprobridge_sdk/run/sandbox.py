"""The sandbox of ``reprobridge run --sandbox``: untrusted launchers under bubblewrap.

Built the way Flatpak uses bubblewrap: no privileges (every namespace, no capabilities, uid
65534), the seccomp filter of :mod:`._seccomp`, no network, and a file system and an
environment that are allow-lists (:data:`ETC_ENTRIES`, :func:`sandbox_env`, N023 for a
``PATH`` entry left out). :func:`sandbox_command` builds the command line;
:func:`check_sandbox` runs it once and says why the sandbox cannot work here (N011) before
anything runs: it never falls back to running unconfined. Spec: ``spec/security.md#sandbox``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ._seccomp import filter_program, native_architecture

__all__ = [
    "BWRAP",
    "ETC_ENTRIES",
    "check_sandbox",
    "interpreter_paths",
    "may_bind",
    "private_tree",
    "sandbox_command",
    "sandbox_env",
    "seccomp_fd",
]

#: The bubblewrap executable looked up on ``PATH``.
BWRAP = "bwrap"
#: The uid and gid of the launcher inside the sandbox (see the module docstring).
INSIDE_ID = "65534"
#: What a program may need of ``/etc``: the dynamic linker's cache and configuration, user and
#: group names, name service switch, hosts, time zone, TLS certificates and OpenSSL's
#: configuration (Debian's ``ssl/certs``, Red Hat's ``pki/tls/certs`` and ``pki/ca-trust``;
#: never the ``private`` directories beside them, whose keys a root caller's launcher could
#: read as their owner), the alternatives that ``/usr/bin`` links point into, protocol and
#: service names, and the OS release. Entries the host lacks are left out; a link is
#: recreated as a link (its target must lie in the sandbox to resolve).
ETC_ENTRIES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "localtime",
    "timezone",
    "ssl/certs",
    "ssl/openssl.cnf",
    "pki/tls/certs",
    "pki/ca-trust",
    "ca-certificates.conf",
    "alternatives",
    "protocols",
    "services",
    "os-release",
)
#: The top-level names that merged-``/usr`` systems make links into ``/usr`` (and others keep
#: as directories): recreated as links, or bound read-only where they are directories.
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: Environment variables of the caller that reach a sandboxed launcher (besides ``LC_*`` and
#: ``REPRO_*``): the locale and the time zone.
LOCALE = ("LANG", "LANGUAGE", "TZ")
#: What the runner itself sets and a sandboxed launcher keeps.
RUNNER_SET = ("VIRTUAL_ENV", "PYTHONUNBUFFERED")

#: Never bound, neither themselves nor through a directory above them.
_NEVER = ("/", "/tmp", "/run", "/var", "/home", "/root", "/etc", "/proc", "/dev", "/sys")  # noqa: S108

_PROBE = (
    "grep -q '^Seccomp:[[:space:]]*2$' /proc/self/status || { echo 'no seccomp filter' >&2; "
    "exit 1; }; grep -q '^NoNewPrivs:[[:space:]]*1$' /proc/self/status || "
    "{ echo 'no-new-privileges is not set' >&2; exit 1; }; "
    "grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status || "
    "{ echo 'capabilities were not dropped' >&2; exit 1; }"
)


@contextlib.contextmanager
def seccomp_fd() -> Iterator[int]:
    """A readable descriptor holding the compiled filter, for ``--seccomp FD``: the read end
    of a pipe (the program is a few hundred bytes, far below a pipe's buffer), inherited by
    bubblewrap only (``pass_fds``) and closed when the block ends.

    Raises :class:`OSError` on an architecture without a filter table (see
    :func:`check_sandbox`, which reports it first).
    """
    machine = native_architecture()
    if machine is None:
        raise OSError(f"no seccomp filter for this architecture ({os.uname().machine})")
    read, write = os.pipe()
    try:
        with os.fdopen(write, "wb") as handle:
            handle.write(filter_program(machine))
        yield read
    finally:
        os.close(read)


def may_bind(path: Path) -> bool:
    """Whether ``path`` may be bound into the sandbox: never ``/``, ``/tmp``, ``/run``,
    ``/var``, ``/home``, ``/root``, ``/etc``, ``/proc``, ``/dev``, ``/sys``, the caller's
    home, nor a directory that holds one of them."""
    resolved = Path(os.path.realpath(path))
    never = [Path(p) for p in _NEVER]
    home = os.environ.get("HOME")
    if home:
        never.append(Path(os.path.realpath(home)))
    return not any(place.is_relative_to(resolved) for place in never)


def interpreter_paths(prefix: Path) -> list[Path]:
    """What the interpreter of the environment at ``prefix`` needs: the prefix and, for a
    virtual environment, its base interpreter's prefix (named by ``pyvenv.cfg``'s ``home``,
    and the one its ``python`` link leads to; a pyenv or uv interpreter lives under a home)."""
    paths = [prefix]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        for line in (prefix / "pyvenv.cfg").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                paths.append(Path(os.path.realpath(value.strip())).parent)
    for name in ("python", "python3"):
        real = Path(os.path.realpath(prefix / "bin" / name))
        if real.is_file():
            paths.append(real.parent.parent)
            break
    return paths


def current_interpreter_paths() -> list[Path]:
    """:func:`interpreter_paths` of the running interpreter, with its base prefixes."""
    paths = interpreter_paths(Path(sys.prefix))
    for prefix in (sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix):
        paths.append(Path(prefix))
    paths.append(Path(os.path.realpath(sys.executable)).parent.parent)
    return paths


def _unique(paths: Iterable[Path]) -> list[Path]:
    """Absolute, existing, bindable paths, each once, in order."""
    seen: list[Path] = []
    for path in paths:
        real = Path(os.path.realpath(path))
        if real not in seen and real.exists() and may_bind(real):
            seen.append(real)
    return seen


def visible_roots(readable: Sequence[Path], writable: Sequence[Path]) -> list[Path]:
    """Every tree a sandboxed launcher sees: ``/usr``, the host's system directories that are
    directories, and the bound paths."""
    roots = [Path("/usr")]
    roots += [Path("/", name) for name in SYSTEM_DIRS if _is_real_dir(Path("/", name))]
    return roots + _unique((*readable, *writable))


def _is_real_dir(path: Path) -> bool:
    return not path.is_symlink() and path.is_dir()


def filter_path(value: str, roots: Sequence[Path]) -> tuple[str, list[str]]:
    """``PATH`` with only the entries inside ``roots`` (each as the directory it resolves to),
    and the entries left out: relative ones and those that lead elsewhere. Never raises: an
    entry that cannot be read is judged by where it leads."""
    kept: list[str] = []
    dropped: list[str] = []
    for entry in value.split(os.pathsep):
        if not entry:
            continue
        real = os.path.realpath(entry) if Path(entry).is_absolute() else None
        if real is None or not any(Path(real).is_relative_to(root) for root in roots):
            if entry not in dropped:
                dropped.append(entry)
        elif real not in kept:
            kept.append(real)
    return os.pathsep.join(kept), dropped


def sandbox_env(
    caller: Mapping[str, str],
    declared: Mapping[str, str],
    *,
    run_dir: Path,
    roots: Sequence[Path],
) -> tuple[dict[str, str], list[str]]:
    """A sandboxed launcher's environment (see the module docstring) and the ``PATH`` entries
    left out. ``caller`` is the runner's environment (the caller's, with the environment's
    ``bin`` first on ``PATH``); ``declared`` is the launcher's ``env``, templated."""
    env = {
        name: value
        for name, value in caller.items()
        if name in LOCALE or name in RUNNER_SET or name.startswith(("LC_", "REPRO_"))
    }
    env["HOME"] = str(run_dir)
    env.update(declared)
    env["PATH"], dropped = filter_path(declared.get("PATH", caller.get("PATH", "")), roots)
    return env, dropped


@contextlib.contextmanager
def private_tree(tree: Path) -> Iterator[Path]:
    """A copy of ``tree`` of one run's own, removed when the block ends: the sandbox shows it,
    writable, in place of ``tree`` (``private`` of :func:`sandbox_command`), so a launcher
    that writes beside its code (``results/``, a checkpoint) runs as it would unconfined,
    and the artifact stays as it was. Links are copied as links, never followed; FIFOs,
    sockets and devices are left out."""
    with tempfile.TemporaryDirectory(prefix="rb-tree-", ignore_cleanup_errors=True) as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(tree, copy, symlinks=True, ignore=_special_files)
        yield copy


def _special_files(directory: str, names: list[str]) -> set[str]:
    kept = (stat.S_ISDIR, stat.S_ISREG, stat.S_ISLNK)
    left = set()
    for name in names:
        try:
            mode = (Path(directory) / name).lstat().st_mode
        except OSError:
            left.add(name)
            continue
        if not any(test(mode) for test in kept):
            left.add(name)
    return left


def _system_args() -> list[str]:
    """``/usr``, its companions at the top level and the chosen files of ``/etc``."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in SYSTEM_DIRS:
        path = Path("/", name)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in ETC_ENTRIES:
        path = Path("/etc", name)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), str(path)]
        elif path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


def sandbox_command(
    argv: Sequence[str],
    *,
    workdir: Path,
    run_dir: Path,
    seccomp: int,
    readable: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    private: Mapping[Path, Path] | None = None,
    network: bool = False,
    tmp_size: int | None = None,
) -> list[str]:
    """``argv`` wrapped in bubblewrap (see the module docstring).

    ``readable`` names what must stay visible, read-only: the artifact, the environment's
    interpreter and packages (:func:`interpreter_paths`); ``writable`` adds directories the
    launcher may write besides ``run_dir``; ``private`` maps a read-only tree to the copy
    (:func:`private_tree`) shown, writable, in its place. Paths that do not exist, or that
    :func:`may_bind` refuses, are left out. ``seccomp`` is a descriptor from
    :func:`seccomp_fd`, which the caller passes to the process (``pass_fds``). ``network``
    keeps the host's network (``--share-net``: ``bench --network open``); every other
    namespace stays new. ``tmp_size`` bounds the private ``/tmp`` (a tmpfs, held in memory
    that no resource limit of the process counts) to that many bytes: the runner and bench
    give :attr:`~reprobridge_sdk.run.process.ResourceLimits.tmp_size`.
    """
    exe = shutil.which(BWRAP) or BWRAP
    command = [
        exe,
        "--unshare-all",
        "--unshare-user",
        *(["--share-net"] if network else []),
        "--uid",
        INSIDE_ID,
        "--gid",
        INSIDE_ID,
        "--cap-drop",
        "ALL",
        "--new-session",
        "--die-with-parent",
        "--seccomp",
        str(seccomp),
        *_system_args(),
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        *(["--size", str(tmp_size)] if tmp_size else []),
        "--tmpfs",
        "/tmp",  # noqa: S108 - the sandbox's own, empty /tmp
    ]
    for path in _unique(readable):
        if not path.is_relative_to("/usr"):  # a system interpreter: /usr is bound already
            command += ["--ro-bind", str(path), str(path)]
    for path in _unique((run_dir, *writable)):
        command += ["--bind", str(path), str(path)]
    for place, copy in (private or {}).items():
        command += ["--bind", str(copy), str(place)]
    command += ["--remount-ro", "/", "--chdir", str(workdir), "--", *argv]
    return command


def check_sandbox() -> str | None:
    """``None`` when the sandbox works here, else the reason it does not.

    The probe is :func:`sandbox_command` itself, with the running interpreter visible and a
    temporary run directory, so it fails where a real run would.
    """
    exe = shutil.which(BWRAP)
    if exe is None:
        return (
            "bubblewrap (bwrap) is not installed; install it (Debian: apt-get install bubblewrap)"
        )
    if native_architecture() is None:
        return f"no seccomp filter is defined for this architecture ({os.uname().machine})"
    with tempfile.TemporaryDirectory(prefix="reprobridge-sandbox-probe-") as tmp:
        probe_dir = Path(tmp)
        try:
            with seccomp_fd() as fd:
                probe = sandbox_command(
                    ["/bin/sh", "-c", _PROBE],
                    workdir=probe_dir,
                    run_dir=probe_dir,
                    seccomp=fd,
                    readable=current_interpreter_paths(),
                )
                proc = subprocess.run(
                    probe,
                    capture_output=True,
                    text=True,
                    timeout=30,
                    check=False,
                    pass_fds=(fd,),
                    env={"PATH": "/usr/bin:/bin"},
                )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap cannot start: {exc}"
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "no detail"
        return f"bubblewrap cannot confine a process here: {detail}"
    return None
