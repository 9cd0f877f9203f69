"""The sandbox's seccomp filter: its tables, its program, and every refused call refused.

The tables are checked against the kernel's own headers where they are installed (Debian's
``linux-libc-dev``), since a wrong number would leave a call open without any other sign. The
calls are made for real inside the real sandbox, with arguments that would give another error
(``EFAULT``, ``EINVAL``, ``ESRCH``) or succeed without the filter, so ``EPERM`` can only come
from the filter.
"""

from __future__ import annotations

import json
import os
import platform
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_support import needs_sandbox

from reprobridge_sdk.run._seccomp import (
    ARCHITECTURES,
    REFUSED,
    filter_program,
    native_architecture,
)
from reprobridge_sdk.run.sandbox import (
    current_interpreter_paths,
    sandbox_command,
    seccomp_fd,
)

HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),
}


@pytest.mark.parametrize("machine", sorted(ARCHITECTURES))
def test_the_tables_match_the_kernel_headers(machine: str) -> None:
    header = HEADERS[machine]
    if not header.is_file():
        pytest.skip(f"{header} is not installed (Debian: linux-libc-dev)")
    text = header.read_text()
    _, numbers = ARCHITECTURES[machine]
    for name, number in numbers.items():
        found = re.search(rf"#define __NR(?:3264)?_{name}\s+(\d+)\b", text)
        assert found is not None, name
        assert int(found.group(1)) == number, name
    missing = [n for n in REFUSED if n not in numbers]
    assert missing == ([] if machine == "x86_64" else ["iopl", "ioperm"])


@pytest.mark.parametrize("machine", sorted(ARCHITECTURES))
def test_the_program_checks_the_architecture_first_and_ends_allowing(machine: str) -> None:
    program = filter_program(machine)
    assert len(program) % 8 == 0
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    assert len(insns) < 4096  # BPF_MAXINSNS
    audit_arch, numbers = ARCHITECTURES[machine]
    assert insns[0] == (0x20, 0, 0, 4)  # load the architecture
    assert insns[1] == (0x15, 1, 0, audit_arch)
    assert insns[2] == (0x06, 0, 0, 0x00050000 | 1)  # another ABI: EPERM
    assert insns[-1] == (0x06, 0, 0, 0x7FFF0000)
    compared = {k for code, _, _, k in insns if code == 0x15}
    assert {numbers[n] for n in REFUSED if n in numbers} <= compared
    for code, jt, jf, _ in insns:
        if code & 0x07 == 0x05:  # a jump stays inside the program
            assert max(jt, jf) < len(insns)


def test_the_native_architecture_has_a_filter() -> None:
    machine = platform.machine()
    if machine not in ("x86_64", "aarch64", "amd64", "arm64"):
        pytest.skip(f"no filter is defined for {machine}; the sandbox refuses with N011 there")
    assert native_architecture() in ARCHITECTURES


CALLS = r"""
import ctypes, errno, json, os, sys
numbers = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(number, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    if result == 0 and number == numbers["clone"]:
        os._exit(0)  # a child made by a clone the filter let through
    return "ok" if result != -1 else errno.errorcode.get(ctypes.get_errno(), "?")
# PTRACE_ATTACH to a pid that does not exist: ESRCH without the filter
special = {"ptrace": (16, 999999, 0, 0)}
out = {name: call(numbers[name], *special.get(name, (0, 0, 0, 0, 0)))
       for name in json.loads(sys.argv[2])}
out["clone-newuser"] = call(numbers["clone"], 0x10000000 | 17, 0, 0, 0, 0)
out["unshare-newns"] = call(numbers["unshare"], 0x00020000)
out["unshare-files"] = call(numbers["unshare"], 0x00000400)  # CLONE_FILES: no namespace
out["clone3"] = call(numbers["clone3"], 0, 0)
out["ioctl-tiocsti"] = call(numbers["ioctl"], 0, 0x5412, 0)
out["ioctl-tiocsti-high-bits"] = call(numbers["ioctl"], 0, 0x1_0000_5412, 0)
print(json.dumps(out))
"""


@needs_sandbox
def test_every_call_on_the_list_is_refused_inside_and_others_are_not(tmp_path: Path) -> None:
    machine = native_architecture()
    assert machine is not None
    _, numbers = ARCHITECTURES[machine]
    refused = [n for n in REFUSED if n in numbers]
    with seccomp_fd() as fd:
        python = os.path.realpath(sys.executable)
        command = sandbox_command(
            [python, "-I", "-c", CALLS, json.dumps(numbers), json.dumps(refused)],
            workdir=tmp_path,
            run_dir=tmp_path,
            seccomp=fd,
            readable=current_interpreter_paths(),
        )
        done = subprocess.run(
            command,
            pass_fds=(fd,),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin"},
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert {name: seen[name] for name in refused} == dict.fromkeys(refused, "EPERM")
    assert seen["clone-newuser"] == "EPERM"
    assert seen["unshare-newns"] == "EPERM"
    assert seen["unshare-files"] == "ok"
    assert seen["clone3"] == "ENOSYS"
    assert seen["ioctl-tiocsti"] == "EPERM"
    assert seen["ioctl-tiocsti-high-bits"] == "EPERM"  # the kernel reads 32 bits; so do we
