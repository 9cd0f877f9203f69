"""Hostile archives for `unpack` and `audit --table`: link chains, PAX bombs, CVE-2024-6232.

Each archive is written byte by byte here (header blocks included), so the attacks do not
depend on what a tar writer allows. The memory and time limits are enforced on a real
subprocess (``resource.RLIMIT_AS``, a timeout), where a failure cannot take the test run down.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobridge_sdk.authoring import _tarsafe
from reprobridge_sdk.authoring._tarsafe import (
    MAX_GLOBAL_HEADERS,
    MAX_HEADER_BYTES,
    PAX_PARSER_FIXED,
    TARINFO,
    Refused,
    parse_pax,
)
from reprobridge_sdk.authoring.pack import PackError, pack, unpack
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold

BLOCK = 512
REPO = Path(__file__).resolve().parents[2]


def _header(name: str, kind: bytes, size: int, *, linkname: str = "") -> bytes:
    """One ustar header block, checksum included."""
    fields = [
        name.encode().ljust(100, b"\0"),
        b"0000644\0",
        b"0000000\0",
        b"0000000\0",
        f"{size:011o}\0".encode() if size < 8**11 else b"\x80" + size.to_bytes(11, "big"),
        b"00000000000\0",
        b" " * 8,
        kind,
        linkname.encode().ljust(100, b"\0"),
        b"ustar\x0000",
        b"\0" * 32,
        b"\0" * 32,
        b"\0" * 8,
        b"\0" * 8,
        b"\0" * 155,
    ]
    block = b"".join(fields).ljust(BLOCK, b"\0")
    checksum = f"{sum(block):06o}\0 ".encode()
    return block[:148] + checksum + block[156:]


def _sized(field: bytes, data: bytes = b"x\n") -> bytes:
    """A member whose 12-byte size field is ``field`` as written, checksum recomputed."""
    block = _header("f", b"0", 0)
    block = block[:124] + field + block[136:148] + b" " * 8 + block[156:]
    return block[:148] + f"{sum(block):06o}\0 ".encode() + block[156:] + _pad(data)


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % BLOCK)


def _member(name: str, data: bytes = b"x\n") -> bytes:
    return _header(name, b"0", len(data)) + _pad(data)


def _link(name: str, target: str, kind: bytes = b"2") -> bytes:
    return _header(name, kind, 0, linkname=target)


def _extended(kind: bytes, data: bytes, *, declared: int | None = None) -> bytes:
    size = len(data) if declared is None else declared
    return _header("././@PaxHeader", kind, size) + _pad(data)


def _record(keyword: str, value: bytes) -> bytes:
    body = b" " + keyword.encode() + b"=" + value + b"\n"
    length = len(body) + 1
    while len(str(length)) + len(body) != length:
        length = len(str(length)) + len(body)
    return str(length).encode() + body


def _archive(path: Path, *parts: bytes, compress: bool = False) -> Path:
    data = b"".join(parts) + b"\0" * (2 * BLOCK)
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


def _refused(archive: Path, dest: Path) -> tuple[str, str]:
    with pytest.raises(PackError) as caught:
        unpack(archive, dest, validate_after=False)
    assert not dest.exists()  # nothing half-extracted stays behind
    (found,) = caught.value.findings
    assert found.hint
    return found.code, found.file


# --------------------------------------------------------------------------- link chains


@pytest.mark.parametrize(
    ("members", "where"),
    [
        # A -> ., B -> A/.., C -> B/..: each lexically inside, B already at the root's parent
        ([_link("A", "."), _link("B", "A/.."), _link("C", "B/..")], "B"),
        # the link walked through is created after the link through it
        ([_link("d/B", "A/.."), _link("d/A", "..")], "d/B"),
        ([_link("x", "y/../.."), _link("y", "z"), _link("z", "a/b")], "x"),
        # a chain of links, each one step up, ending at /
        (
            [_link("a/b/c/l1", ".."), _link("a/b/c/l2", "l1/.."), _link("a/b/c/l3", "l2/../..")],
            "a/b/c/l3",
        ),
        ([_link("A", "B"), _link("B", "A")], "B"),
        ([_link("abs", "/etc")], "abs"),
        ([_link("hard", "/etc/passwd", b"1")], "hard"),
        ([_link("hard", "../../outside", b"1")], "hard"),
        ([_member("inside"), _link("hard", "inside", b"1")], "hard"),
        ([_member("d/f"), _link("d", ".")], "d"),
    ],
    ids=[
        "A-dot-B-up",
        "link-created-later",
        "through-two-later-links",
        "stepwise-chain",
        "loop",
        "absolute",
        "hard-absolute",
        "hard-up",
        "hard-inside",
        "link-over-directory",
    ],
)
def test_link_chains_that_leave_the_tree_are_refused(
    tmp_path: Path, members: list[bytes], where: str
) -> None:
    archive = _archive(tmp_path / "links.tar", *members)
    assert _refused(archive, tmp_path / "out") == ("C017", where)


def test_links_within_the_tree_are_unpacked(tmp_path: Path) -> None:
    archive = _archive(
        tmp_path / "ok.tar",
        _link("a", "b"),
        _link("b", "c"),
        _member("c/f", b"data\n"),
        _link("d/up", "../c"),
        _link("d/self", "."),
        _link("d/root", "self/.."),
    )
    result = unpack(archive, tmp_path / "out", validate_after=False)
    assert result.files == 6
    assert (tmp_path / "out" / "a" / "f").read_bytes() == b"data\n"
    assert (tmp_path / "out" / "d" / "root").resolve() == (tmp_path / "out").resolve()


# --------------------------------------------------------------------------- header caps


def _limited(archive: Path, dest: Path, *, memory: int = 512 << 20) -> tuple[int, list[str]]:
    """Run ``reprobridge unpack`` with an address-space cap; exit status and codes shown."""
    driver = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))\n"
        "from reprobridge_sdk.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", driver, "unpack", str(archive), str(dest)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    codes = [word for word in done.stdout.split() if word[:1] == "C" and word[1:].isdigit()]
    return done.returncode, codes


def test_a_9_mb_pax_header_is_refused_within_512_mib(tmp_path: Path) -> None:
    records = b"2 " * (9 << 19)  # 9 MiB that a backtracking parser chews on
    archive = _archive(tmp_path / "bomb.tar", _extended(b"x", records), _member("f"))
    assert archive.stat().st_size > 9 << 20
    assert _limited(archive, tmp_path / "out") == (2, ["C018"])
    assert not (tmp_path / "out").exists()


def test_a_compressed_header_claiming_gigabytes_is_refused_within_512_mib(tmp_path: Path) -> None:
    # 64 MiB of zeros follow a header that declares 8 GiB: 64 KiB of gzip
    data = _header("././@PaxHeader", b"x", 8 << 30) + b"\0" * (64 << 20)
    archive = tmp_path / "bomb.tar.gz"
    archive.write_bytes(gzip.compress(data, compresslevel=1, mtime=0))
    assert _limited(archive, tmp_path / "out") == (2, ["C018"])


@pytest.mark.parametrize(
    "parts",
    [
        [_extended(b"L", b"n" * (MAX_HEADER_BYTES + 1) + b"\0"), _member("f")],
        [_extended(b"K", b"n" * (MAX_HEADER_BYTES + 1) + b"\0"), _link("f", "g")],
        [_extended(b"g", _record("comment", b"c")) for _ in range(5)] + [_member("f")],
        [
            part
            for index in range(MAX_GLOBAL_HEADERS + 1)
            for part in (_extended(b"g", _record("comment", b"c")), _member(f"f{index}"))
        ],
        # a PAX size of 0 makes the 1,024 bytes after the member a header: it is checked too
        [
            _extended(b"x", _record("size", b"0")),
            _header("f", b"0", 1024),
            _extended(b"x", b"", declared=MAX_HEADER_BYTES + 1),
        ],
    ],
    ids=["gnu-long-name", "gnu-long-link", "five-in-a-row", "globals", "hidden-by-pax-size"],
)
def test_extended_headers_over_their_caps_are_refused(tmp_path: Path, parts: list[bytes]) -> None:
    archive = _archive(tmp_path / "caps.tar", *parts)
    assert _refused(archive, tmp_path / "out")[0] == "C018"


@pytest.mark.parametrize(
    "parts",
    [
        [_extended(b"x", b"abc=def\n"), _member("f")],
        [_extended(b"x", b"99 path=f\n"), _member("f")],
        [_extended(b"x", b"10 pathxxf\n"), _member("f")],
        [_extended(b"x", _record("path", b"f") + b"junk"), _member("f")],
        [_extended(b"x", _record("GNU.sparse.major", b"1")), _member("f")],
        [_extended(b"x", _record("size", b"-1")), _member("f")],
        [_extended(b"g", _record("size", b"10")), _member("f")],
        [_header("f", b"S", 0)],
        [_header("d", b"5", 1024), _pad(b"x" * 1024)],
        [_member("f")[:148] + b"0000000\0" + _member("f")[156:]],
        [_sized(b"0o000000002\0")],
        [_sized(b"+0000000002\0")],
        [_sized(b"0_000000002\0")],
    ],
    ids=[
        "no-length",
        "length-past-the-end",
        "no-equals",
        "trailing-junk",
        "sparse",
        "negative-size",
        "global-size",
        "sparse-type",
        "directory-with-data",
        "bad-checksum",
        "size-with-0o",
        "size-with-a-sign",
        "size-with-an-underscore",
    ],
)
def test_malformed_headers_are_refused_unread(tmp_path: Path, parts: list[bytes]) -> None:
    archive = _archive(tmp_path / "bad.tar", *parts)
    assert _refused(archive, tmp_path / "out")[0] == "C017"


@pytest.mark.parametrize(("off_by", "accepted"), [(0, True), (1, False), (-256, False)])
def test_a_signed_header_checksum_is_read_and_any_other_refused(
    off_by: int, accepted: bool
) -> None:
    """Old writers summed the header's bytes as signed: a name's bytes above 127 count 256
    less each. That sum is accepted as the unsigned one is; a sum off by one, or by one byte's
    256, is not."""
    block = _header("caf\u00e9-\u00e9t\u00e9", b"0", 2)  # six bytes above 127
    rest = block[:148] + b" " * 8 + block[156:]
    signed = sum(c - 256 if c > 127 else c for c in rest)
    assert signed != sum(rest)
    block = block[:148] + f"{signed + off_by:06o}\0 ".encode() + block[156:]
    scan = _tarsafe.HeaderScan(io.BytesIO(block + _pad(b"x\n") + b"\0" * 2 * BLOCK))
    if accepted:
        assert scan.read().startswith(block)
    else:
        with pytest.raises(Refused, match="bad checksum"):
            scan.read()


# --------------------------------------------------------------------------- CVE-2024-6232


def _packed(tmp_path: Path) -> Path:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    return pack(root, tmp_path / "tiny.tar").path


def _with_header_in_front(packed: Path, header: bytes, out: Path) -> Path:
    """The packed archive with an extended header before its first member, gzipped."""
    out.write_bytes(gzip.compress(header + packed.read_bytes(), mtime=0))
    return out


def _timed(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess that must end within ``timeout`` seconds."""
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert "Traceback" not in done.stderr
    return done


def test_a_1_kb_crafted_pax_header_does_not_hang_unpack_or_audit_table(tmp_path: Path) -> None:
    # 1 MiB of digits: the backtracking regular expressions of tarfile before 3.11.10 take
    # most of an hour on it; gzipped it is about a kilobyte.
    digits = b"1" * (1 << 20)
    archive = tmp_path / "regex.tar.gz"
    archive.write_bytes(gzip.compress(_extended(b"x", digits) + _member("f"), mtime=0))
    assert archive.stat().st_size < 2048
    done = _timed(["unpack", str(archive), str(tmp_path / "out")], timeout=60)
    assert done.returncode == 2
    assert "C018" in done.stdout.split()
    done = _timed(["audit", "--table", str(archive), "--format", "json"], timeout=60)
    report = json.loads(done.stdout)
    (row,) = report["rows"]
    assert [f["code"] for f in row["findings"]] == ["C018"]


def test_a_valid_pax_header_that_backtracks_is_parsed_in_linear_time(tmp_path: Path) -> None:
    # A record of the grammar, just under the cap, whose value is 60,000 digits: the flawed
    # `\d+ hdrcharset=` search takes 10 s of CPU and more on it; the fixed parser a millisecond.
    value = b"1" * 60_000
    header = _extended(b"x", _record("comment", value))
    archive = _with_header_in_front(_packed(tmp_path), header, tmp_path / "slow.tar.gz")
    start = time.process_time()  # CPU time: the same however loaded the machine
    with (
        gzip.open(archive) as stream,
        tarfile.open(fileobj=stream, mode="r|", tarinfo=TARINFO) as tar,
    ):
        first = tar.next()
    assert time.process_time() - start < 2  # the flawed parser: over 10 s
    assert first is not None
    assert first.pax_headers["comment"] == value.decode()
    done = _timed(["unpack", str(archive), str(tmp_path / "out")], timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "rra.yaml").is_file()
    done = _timed(["audit", "--table", str(archive), "--format", "json"], timeout=60)
    (row,) = json.loads(done.stdout)["rows"]
    assert row["path"] == str(archive)
    assert row["findings"] == []


def test_this_interpreter_gets_the_fixed_pax_parser_where_tarfile_has_the_flaw() -> None:
    fixed = sys.version_info >= (3, 13) or (3, 12, 6) <= sys.version_info < (3, 13)
    fixed = fixed or (3, 11, 10) <= sys.version_info < (3, 12)
    if not fixed:  # a distribution may have patched its tarfile: then either is right
        assert PAX_PARSER_FIXED or TARINFO is _tarsafe._FixedPaxInfo
    assert (TARINFO is tarfile.TarInfo) == PAX_PARSER_FIXED


# --------------------------------------------------------------------------- the PAX parser


@pytest.mark.parametrize(
    ("data", "records"),
    [
        (b"", []),
        (b"9 path=f\n", [(b"path", b"f")]),
        (b"9 path=f\n\0\0\0", [(b"path", b"f")]),
        (b"12 path=a=b\n", [(b"path", b"a=b")]),
        (b"12 path=a\nb\n", [(b"path", b"a\nb")]),
        (b"8 path=\n11 size=12\n", [(b"path", b""), (b"size", b"12")]),
    ],
)
def test_the_pax_grammar(data: bytes, records: list[tuple[bytes, bytes]]) -> None:
    assert parse_pax(data) == records


@pytest.mark.parametrize(
    "data",
    [b"x", b"9 path=f", b"0 path=f\n", b"7 path\n", b"9 =pathf\n", b"123456789012345678901 a=b\n"],
)
def test_off_the_pax_grammar(data: bytes) -> None:
    with pytest.raises(Refused) as caught:
        parse_pax(data)
    assert caught.value.code == "C017"


def test_what_tarfile_writes_reads_back_the_same_through_both_parsers(tmp_path: Path) -> None:
    names = ["a" * 150, "dir/ünïcödé.txt", "sp ace/=eq=/x", "d" * 40 + "/" + "e" * 200]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 3
            info.pax_headers = {"comment": "x" * 1000}
            tar.addfile(info, io.BytesIO(b"abc"))
        link = tarfile.TarInfo("l" * 120)
        link.type = tarfile.SYMTYPE
        link.linkname = "a" * 150
        link.pax_headers = {"comment": "x" * 1000}
        tar.addfile(link)
    archive = tmp_path / "pax.tar"
    archive.write_bytes(buffer.getvalue())
    for reader in (tarfile.TarInfo, _tarsafe._FixedPaxInfo):
        buffer.seek(0)
        with tarfile.open(fileobj=buffer, mode="r|", tarinfo=reader) as tar:
            seen = [(m.name, m.linkname, m.size, m.pax_headers.get("comment")) for m in tar]
        assert [name for name, *_ in seen] == [*names, "l" * 120]
        assert seen[-1][1] == "a" * 150
        assert {comment for *_, comment in seen} == {"x" * 1000}
    result = unpack(archive, tmp_path / "out", validate_after=False)
    assert result.files == len(names) + 1
    assert (tmp_path / "out" / "dir" / "ünïcödé.txt").read_bytes() == b"abc"


# --------------------------------------------------------------------------- unprivileged

NOBODY = 65534
DROP = {"user": NOBODY, "group": NOBODY, "extra_groups": []}


def _runs_as_nobody(python: str) -> bool:
    """Whether ``nobody`` can run ``python`` and import the package with it."""
    try:
        probe = subprocess.run(
            [python, "-c", "import reprobridge_sdk.authoring.pack"],
            capture_output=True,
            check=False,
            cwd="/",
            timeout=120,
            **DROP,  # type: ignore[arg-type]
        )
    except PermissionError:  # the interpreter itself: not executable by nobody
        return False
    return probe.returncode == 0


def _system_python() -> str | None:
    """An interpreter of this Python's ``X.Y`` outside any home directory (the system's)."""
    short = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (f"/usr/bin/python{short}", "/usr/bin/python3", "/usr/local/bin/python3"):
        if not Path(candidate).is_file():
            continue
        done = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.stdout.strip() == short:
            return candidate
    return None


@pytest.fixture(scope="module")
def nobody_python() -> Iterator[str]:
    """An interpreter that ``nobody`` can run with the package; skip where none can be had.

    Only root can drop to another user. The running interpreter serves when ``nobody`` can
    read it and the package; where either lives under a private home directory (a CI runner's
    interpreter under root's home), a virtual environment of the system's interpreter of the
    same version, in a world-readable folder, gets the package installed from this tree (the
    installer's cache or the index supplies the dependencies)."""
    if os.geteuid() != 0:
        pytest.skip("only root can run a child as another user")
    if _runs_as_nobody(sys.executable):
        yield sys.executable
        return
    system = _system_python()
    if system is None:
        pytest.skip("no interpreter of this version that an unprivileged user can run")
    with tempfile.TemporaryDirectory(prefix="rb-nobody-env-") as folder:
        Path(folder).chmod(0o755)
        env = Path(folder) / "venv"
        uv = [sys.executable, "-m", "uv"]
        made = subprocess.run(
            [*uv, "venv", "-q", "--python", system, str(env)], capture_output=True, check=False
        )
        python = str(env / "bin" / "python")
        installed = made.returncode == 0 and (
            subprocess.run(
                [*uv, "pip", "install", "-q", "--python", python, str(REPO)],
                capture_output=True,
                check=False,
                timeout=600,
            ).returncode
            == 0
        )
        if not installed or not _runs_as_nobody(python):
            pytest.skip("no environment an unprivileged user can run could be made here")
        yield python


def test_the_attacks_are_refused_the_same_as_an_unprivileged_user(nobody_python: str) -> None:
    with tempfile.TemporaryDirectory(prefix="rb-nobody-") as scratch:
        base = Path(scratch)
        base.chmod(0o777)  # the child, nobody, unpacks here
        archives = {
            "chain": (_archive(base / "chain.tar", _link("A", "."), _link("B", "A/..")), "C017"),
            "hard": (_archive(base / "hard.tar", _link("h", "/etc/shadow", b"1")), "C017"),
            "bomb": (_archive(base / "bomb.tar", _extended(b"x", b"2 " * (1 << 20))), "C018"),
        }
        for name, (archive, code) in archives.items():
            archive.chmod(0o644)
            done = subprocess.run(
                [nobody_python, "-m", "reprobridge_sdk", "unpack", str(archive), str(base / name)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                cwd="/",
                **DROP,  # type: ignore[arg-type]
            )
            assert done.returncode == 2, done.stderr
            assert code in done.stdout.split(), done.stdout
            assert not (base / name).exists()
