"""The sandbox's seccomp filter: a classic-BPF program that bubblewrap loads (``--seccomp FD``).

Namespaces and an empty capability set already deny most of what a hostile launcher would try;
the filter refuses the system calls that reach the kernel's shared state anyway, or that a
kernel bug would turn into an escape (the same idea as Flatpak's and Docker's default
filters, kept short). Each refused call returns ``EPERM``; ``clone3`` returns ``ENOSYS``
because its flags sit in memory a filter cannot read, and the C library falls back to
``clone`` (whose flags it can) only on ``ENOSYS``.

The refused calls and why are :data:`REFUSED` and the argument checks of
:func:`filter_program` (``spec/security.md#sandbox``).

The program first checks the audit architecture: x86-64 and AArch64 have their own tables;
a call made through another ABI (the i386 ABI of an x86-64 kernel, or x32, whose numbers carry
bit 30) is refused whole, since its numbers differ and the table would not match them.
Argument checks read the low 32 bits of an argument (the namespace flags and the ioctl
request all lie there; the kernel reads the ioctl request as 32 bits too).
"""

from __future__ import annotations

import errno
import platform
import struct
import sys

__all__ = ["ARCHITECTURES", "REFUSED", "filter_program", "native_architecture"]

# The classic-BPF opcodes used (linux/filter.h, linux/bpf_common.h).
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

# Return values (linux/seccomp.h).
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_EPERM = _ERRNO | errno.EPERM
_ENOSYS = _ERRNO | errno.ENOSYS

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
_NR = 0
_ARCH = 4
_LOW_WORD = 0 if sys.byteorder == "little" else 4


def _arg(index: int) -> int:
    """Offset of the low 32 bits of argument ``index``."""
    return 16 + 8 * index + _LOW_WORD


# The namespace flags of clone and unshare (linux/sched.h). CLONE_NEWTIME (0x80) only for
# unshare: in clone's flags that bit belongs to the exit signal.
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
_CLONE_NAMESPACES |= 0x20000000 | 0x40000000
_UNSHARE_NAMESPACES = _CLONE_NAMESPACES | 0x00000080
_TIOCSTI = 0x5412  # typing into the terminal that started the run, or the console
_TIOCLINUX = 0x541C

#: The calls refused whatever their arguments, by name (the tables give their numbers).
REFUSED = (
    # changing the file system view: undoing the read-only binds or the private /tmp (a root
    # launcher's `umount -l /tmp` and `mount -o remount,bind,rw /`)
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    # opening a file by its handle reaches files outside the binds (the "shocker" escape)
    "open_by_handle_at",
    "name_to_handle_at",
    # a new namespace (a user namespace first) gives back every capability inside it; unshare and
    # clone with a namespace flag are checked by their arguments, clone3 is ENOSYS
    "setns",
    # reading or steering another process
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    # the kernel keyring is not namespaced: keys of the host's user
    "keyctl",
    "add_key",
    "request_key",
    # large kernel attack surfaces a launcher has no use for (seccomp cannot see io_uring's
    # operations at all)
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    # the kernel and the machine's own state (iopl and ioperm on x86-64 only)
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "settimeofday",
    "clock_settime",
    "syslog",
    "quotactl",
    "quotactl_fd",
    "lookup_dcookie",
    "vhangup",
    "iopl",
    "ioperm",
)

# System call numbers: arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/
# unistd.h (AArch64). A call an architecture lacks (iopl on AArch64) is left out of its table.
_X86_64 = {
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "move_mount": 429,
    "open_tree": 428, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "open_by_handle_at": 304, "name_to_handle_at": 303, "setns": 308,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163,
    "settimeofday": 164, "clock_settime": 227, "syslog": 103, "quotactl": 179,
    "quotactl_fd": 443, "lookup_dcookie": 212, "vhangup": 153, "iopl": 172, "ioperm": 173,
    "unshare": 272, "clone": 56, "clone3": 435, "ioctl": 16,
}  # fmt: skip
_AARCH64 = {
    "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "move_mount": 429,
    "open_tree": 428, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "open_by_handle_at": 265, "name_to_handle_at": 264, "setns": 268,
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
    "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280, "perf_event_open": 241,
    "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
    "delete_module": 106, "reboot": 142, "swapon": 224, "swapoff": 225, "acct": 89,
    "settimeofday": 170, "clock_settime": 112, "syslog": 116, "quotactl": 60,
    "quotactl_fd": 443, "lookup_dcookie": 18, "vhangup": 58,
    "unshare": 97, "clone": 220, "clone3": 435, "ioctl": 29,
}  # fmt: skip

#: By ``platform.machine()``: the audit architecture (linux/audit.h) and the call numbers.
ARCHITECTURES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, _X86_64),
    "aarch64": (0xC00000B7, _AARCH64),
}
_X32_BIT = 0x40000000


def native_architecture() -> str | None:
    """This machine's entry of :data:`ARCHITECTURES`, or ``None`` when it has none."""
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return machine if machine in ARCHITECTURES else None


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _refuse_with_flags(number: int, offset: int, mask: int) -> list[bytes]:
    """Refuse call ``number`` when its argument at ``offset`` has a bit of ``mask`` set."""
    return [
        _insn(_JEQ, number, 0, 4),  # another call: go on with the next check
        _insn(_LD_ABS, offset),
        _insn(_JSET, mask, 0, 1),
        _insn(_RET, _EPERM),
        _insn(_RET, _ALLOW),
    ]


def _refuse_request(number: int, requests: tuple[int, ...]) -> list[bytes]:
    """Refuse call ``number`` when its second argument (an ioctl request) is in ``requests``."""
    body = [_insn(_LD_ABS, _arg(1))]
    for position, request in enumerate(requests):
        body.append(_insn(_JEQ, request, len(requests) - position, 0))
    body += [_insn(_RET, _ALLOW), _insn(_RET, _EPERM)]
    return [_insn(_JEQ, number, 0, len(body)), *body]


def filter_program(machine: str) -> bytes:
    """The compiled filter for ``machine`` (a key of :data:`ARCHITECTURES`), as bubblewrap
    reads it from ``--seccomp FD``: an array of ``struct sock_filter``."""
    audit_arch, numbers = ARCHITECTURES[machine]
    program = [
        _insn(_LD_ABS, _ARCH),
        _insn(_JEQ, audit_arch, 1, 0),
        _insn(_RET, _EPERM),  # another ABI: nothing of it is allowed
        _insn(_LD_ABS, _NR),
    ]
    if machine == "x86_64":
        program += [_insn(_JGE, _X32_BIT, 0, 1), _insn(_RET, _EPERM)]
    for name in REFUSED:
        if name in numbers:
            program += [_insn(_JEQ, numbers[name], 0, 1), _insn(_RET, _EPERM)]
    program += [_insn(_JEQ, numbers["clone3"], 0, 1), _insn(_RET, _ENOSYS)]
    program += _refuse_with_flags(numbers["unshare"], _arg(0), _UNSHARE_NAMESPACES)
    program += _refuse_with_flags(numbers["clone"], _arg(0), _CLONE_NAMESPACES)
    program += _refuse_request(numbers["ioctl"], (_TIOCSTI, _TIOCLINUX))
    program.append(_insn(_RET, _ALLOW))
    return b"".join(program)
