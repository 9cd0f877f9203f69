"""Property tests over generated file trees: whatever special files an artifact holds where
it names files, validation, the guide and the safe file layer answer (no hang, no traceback),
never read outside the artifact and never write outside it.

Hypothesis replaces files the example artifact references (the guide, a sample log and
output, the lock, a code file) by hostile kinds: links inside and out (to a secret, to
``/dev/zero``, through a linked directory), FIFOs, character devices, sparse files of
gigabytes and deeply nested JSON. An alarm turns a hang into a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import registry
from reprobridge_sdk.guide import write_guide
from reprobridge_sdk.io import safefs
from reprobridge_sdk.validation import validate

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "digits-logreg"
SECRET = "7h3-s3cr3t-0f-7h3-c0mm1773e"
TARGETS = (
    "GUIDE.md",
    "samples/smoke-seed0/log.txt",
    "samples/smoke-seed0/metrics.json",
    "environment/requirements.lock",
    "code/train.py",
)
KINDS = (
    "keep",
    "link-inside",
    "link-secret",
    "link-dev-zero",
    "dir-link-out",
    "fifo",
    "device",
    "sparse",
    "deep-json",
    "link-loop",
)


def _can_mknod() -> bool:
    probe = Path(tempfile.mkdtemp()) / "dev"
    try:
        os.mknod(probe, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except OSError:
        return False
    finally:
        shutil.rmtree(probe.parent)
    return True


_DEVICES = _can_mknod()


@pytest.fixture(scope="module")
def place() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="rb-trees-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _plant(root: Path, outside: Path, relative: str, kind: str) -> None:
    path = root / relative
    if kind == "keep" or not safefs.is_inside(path.parent, root):
        return  # kept, or its directory was already linked out by an earlier entry
    path.unlink(missing_ok=True)
    if kind == "link-inside":
        path.symlink_to(os.path.relpath(root / "rra.yaml", path.parent))
    elif kind == "link-secret":
        path.symlink_to(outside / "secret.txt")
    elif kind == "link-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dir-link-out":
        # The file's directory becomes a link to a directory outside holding the same names.
        target = outside / "mirror" / Path(relative).parent
        target.mkdir(parents=True, exist_ok=True)
        (target / Path(relative).name).write_text(f"{SECRET}\n")
        directory = path.parent
        if directory != root:
            shutil.rmtree(directory)
            directory.symlink_to(target, target_is_directory=True)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        if _DEVICES:
            os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
        else:
            os.mkfifo(path)
    elif kind == "sparse":
        with path.open("wb") as handle:
            handle.truncate(6 * 1024**3)
    elif kind == "deep-json":
        path.write_text("[" * 60_000 + "]" * 60_000)
    elif kind == "link-loop":
        path.symlink_to(path.name)


class _Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Hang


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.fixed_dictionaries({target: st.sampled_from(KINDS) for target in TARGETS}))
def test_hostile_file_trees_get_findings_never_a_hang_or_a_leak(
    place: Path, plan: dict[str, str]
) -> None:
    case = Path(tempfile.mkdtemp(dir=place))
    root, outside = case / "artifact", case / "outside"
    shutil.copytree(EXAMPLE, root)
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    for relative, kind in plan.items():
        _plant(root, outside, relative, kind)
    before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)
    try:
        result = validate(root)
        known = registry()
        for item in result.findings:
            assert item.code in known
            assert SECRET not in item.message
            assert SECRET not in (item.hint or "")
        # Refused or not (a link out, a FIFO...), what matters is what it did not do.
        with contextlib.suppress(ArtifactError):
            write_guide(root, {"pitfalls": [{"id": "p", "summary": "s"}]}, title="T")
        for relative in TARGETS:
            try:
                data = safefs.read_bytes(root / relative, root=root, max_bytes=1 << 20)
            except (ArtifactError, OSError):
                continue
            assert SECRET.encode() not in data
    except _Hang:
        pytest.fail(f"hung on {plan}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    after = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    assert after == before  # nothing outside was written
    shutil.rmtree(case, ignore_errors=True)
