"""Reading a stranger's tar stream safely: raw header checks, PAX records, links as they will be.

:class:`HeaderScan` checks every 512-byte header before :mod:`tarfile` sees it (checksum,
type, caps on extended headers) and raises :class:`Refused` (C017 unsafe, C018 over a cap)
with the byte offset. :data:`TARINFO` parses PAX records in linear time where the running
``tarfile`` still backtracks (CVE-2024-6232). :class:`LinkTree` resolves links through the
tree as it will be after extraction. Spec: ``spec/authoring.md#archives``.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass, field
from typing import IO, Any

__all__ = [
    "BLOCK",
    "MAX_GLOBAL_HEADERS",
    "MAX_HEADERS_PER_MEMBER",
    "MAX_HEADER_BYTES",
    "PAX_PARSER_FIXED",
    "TARINFO",
    "HeaderScan",
    "LinkTree",
    "Refused",
    "parse_pax",
]

BLOCK = 512
#: Bytes of one extended header's data (a PAX ``x`` or ``g`` header, a GNU long name or link).
MAX_HEADER_BYTES = 64 * 1024
#: Extended headers (``x``, ``g``, ``L``, ``K``) in a row before one member.
MAX_HEADERS_PER_MEMBER = 4
#: Global PAX headers (``g``) in one archive.
MAX_GLOBAL_HEADERS = 16
#: Links followed while resolving one link (Linux's own limit, ``MAXSYMLINKS``).
MAX_LINK_HOPS = 40
#: Path components walked over all link resolutions of one archive.
MAX_LINK_STEPS = 10_000_000

#: The tar module parses PAX records without the backtracking regular expressions
#: (CVE-2024-6232; fixed in CPython 3.11.10, 3.12.6 and 3.13.0, whose tarfile has this name).
PAX_PARSER_FIXED = hasattr(tarfile, "_header_length_prefix_re")

_EXTENDED = frozenset(b"xgLK")
#: Member types whose data blocks follow the header (regular files).
_WITH_DATA = frozenset(b"07\0")
#: Member types with no data blocks: a size other than 0 would desynchronise the stream.
_WITHOUT_DATA = frozenset(b"123456")


class Refused(Exception):
    """The stream is refused: ``code`` (C017, C018), a message, the member or offset."""

    def __init__(self, code: str, message: str, where: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.where = where


# --------------------------------------------------------------------------- PAX records

#: The grammar of a PAX extended header's data (POSIX.1-2008 ``pax``, "extended header"),
#: as :func:`parse_pax` reads it; bytes, not characters:
#:
#: ==========  ===========================================================================
#: data        record* NUL*          (NUL padding only after the last record)
#: record      length SP keyword "=" value LF
#: length      DIGIT{1,20}           (decimal: the byte count of the whole record, its own
#:                                   digits and the LF included)
#: keyword     (any byte but "=", NUL, LF){1,}
#: value       any bytes             (exactly what ``length`` leaves before the final LF)
#: ==========  ===========================================================================
PAX_GRAMMAR = "record = length SP keyword '=' value LF"


def parse_pax(data: bytes) -> list[tuple[bytes, bytes]]:
    """The ``(keyword, value)`` records of a PAX header's data, in order (grammar above).

    Hand-written, one pass, linear in ``len(data)``: each record's length is read first
    and the record is then sliced, never searched. Anything off the grammar raises
    :class:`Refused` (C017) with the record's offset.
    """
    records: list[tuple[bytes, bytes]] = []
    pos = 0
    size = len(data)
    while pos < size and data[pos] != 0:
        start = pos
        digits = 0
        while pos < size and 0x30 <= data[pos] <= 0x39 and digits <= 20:
            pos += 1
            digits += 1
        if not 1 <= digits <= 20 or pos >= size or data[pos] != 0x20:
            raise Refused("C017", f"PAX record at {start}: no length field ('{PAX_GRAMMAR}')")
        length = int(data[start:pos])
        end = start + length
        if length <= pos - start + 3 or end > size or data[end - 1] != 0x0A:
            raise Refused("C017", f"PAX record at {start}: length {length} does not end at LF")
        body = data[pos + 1 : end - 1]
        keyword, equals, value = body.partition(b"=")
        if not equals or not keyword or b"\n" in keyword or b"\0" in keyword:
            raise Refused("C017", f"PAX record at {start}: no 'keyword=value'")
        records.append((keyword, value))
        pos = end
    if data[pos:].strip(b"\0"):
        raise Refused("C017", f"PAX header: bytes after the padding at {pos}")
    return records


# --------------------------------------------------------------------------- header blocks


def _number(field_: bytes) -> int:
    """A numeric header field, octal or GNU base-256 (as ``tarfile.nti`` reads it)."""
    if field_[0] in {0o200, 0o377}:
        value = int.from_bytes(field_[1:], "big")
        return value - 256 ** (len(field_) - 1) if field_[0] == 0o377 else value
    text = field_.split(b"\0", 1)[0].strip()
    if text.strip(b"01234567"):  # a byte that is not an octal digit (no sign, no "0o")
        raise ValueError(field_)
    return int(text or b"0", 8)


#: The bytes above 127, which a signed header checksum counts negative.
_HIGH = bytes(range(128, 256))


def _block(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


@dataclass
class _Header:
    kind: int
    size: int
    name: bytes


def _header(block: bytes, offset: int) -> _Header:
    """The type, size and name field of a header block whose checksum holds (C017 if not)."""
    try:
        checksum = _number(block[148:156])
        size = _number(block[124:136])
    except ValueError:
        raise Refused("C017", f"header at byte {offset}: a number field is not octal") from None
    rest = block[:148] + b" " * 8 + block[156:]
    unsigned = sum(rest)
    high = len(rest) - len(rest.translate(None, _HIGH))
    signed = unsigned - 256 * high  # old writers counted each byte above 127 as negative
    if checksum not in {unsigned, signed}:
        raise Refused("C017", f"header at byte {offset}: bad checksum")
    if size < 0:
        raise Refused("C017", f"header at byte {offset}: negative size")
    return _Header(block[156], size, block[:100].split(b"\0", 1)[0])


@dataclass
class _Pending:
    """The extended headers read before the member they describe."""

    count: int = 0
    kinds: set[int] = field(default_factory=set)
    size: int | None = None


class HeaderScan(io.RawIOBase):
    """A read-only stream that checks every tar header block before passing it on.

    Every header that begins within the bytes a read returns has been checked, and with an
    extended header its data too (it is buffered: at most :data:`MAX_HEADER_BYTES`).
    """

    def __init__(self, source: io.RawIOBase | IO[bytes]) -> None:
        self._source = source
        self._buffer = bytearray()
        self._pos = 0  # offset of self._buffer[0] in the stream
        self._next: int | None = 0  # offset of the next header block, None after the end
        self._eof = False
        self._pending = _Pending()
        self._globals = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while len(self._buffer) < len(buffer) and not self._eof:
            self._pull()
        count = min(len(buffer), len(self._buffer))
        while self._next is not None and self._next < self._pos + count:
            if not self._have(self._next + BLOCK):
                self._next = None  # truncated: the tar module reports it
                break
            self._check(self._next)
        buffer[:count] = self._buffer[:count]
        del self._buffer[:count]
        self._pos += count
        return count

    def _pull(self) -> None:
        data = self._source.read(1 << 16)
        if data:
            self._buffer += data
        else:
            self._eof = True

    def _have(self, end: int) -> bool:
        while self._pos + len(self._buffer) < end and not self._eof:
            self._pull()
        return self._pos + len(self._buffer) >= end

    def _slice(self, start: int, size: int) -> bytes:
        return bytes(self._buffer[start - self._pos : start - self._pos + size])

    def _check(self, offset: int) -> None:
        block = self._slice(offset, BLOCK)
        if not block.strip(b"\0"):
            self._next = None  # end of archive: the tar module stops here too
            return
        head = _header(block, offset)
        if head.kind in _EXTENDED:
            self._extended(head, offset)
            return
        pending, self._pending = self._pending, _Pending()
        size = head.size if pending.size is None else pending.size
        kind = head.kind
        if kind == 0 and head.name.endswith(b"/"):
            kind = ord("5")  # an old-style directory, as the tar module reads it
        if kind in _WITH_DATA:
            self._next = offset + BLOCK + _block(size)
        elif kind in _WITHOUT_DATA:
            if size:
                msg = f"header at byte {offset}: a member of type {chr(kind)!r} with {size} bytes"
                raise Refused("C017", msg)
            self._next = offset + BLOCK
        else:
            msg = f"header at byte {offset}: unsupported member type {bytes([kind])!r}"
            raise Refused("C017", msg)

    def _extended(self, head: _Header, offset: int) -> None:
        kind = chr(head.kind)
        pending = self._pending
        pending.count += 1
        if pending.count > MAX_HEADERS_PER_MEMBER:
            msg = f"header at byte {offset}: more than {MAX_HEADERS_PER_MEMBER} extended headers"
            raise Refused("C018", msg + " before one member")
        if head.kind != ord("g") and head.kind in pending.kinds:
            raise Refused("C017", f"header at byte {offset}: two {kind!r} headers for one member")
        pending.kinds.add(head.kind)
        if head.size > MAX_HEADER_BYTES:
            msg = (
                f"header at byte {offset}: a {kind!r} extended header of {head.size} bytes "
                f"(at most {MAX_HEADER_BYTES})"
            )
            raise Refused("C018", msg)
        if head.kind == ord("g"):
            self._globals += 1
            if self._globals > MAX_GLOBAL_HEADERS:
                msg = f"header at byte {offset}: more than {MAX_GLOBAL_HEADERS} global headers"
                raise Refused("C018", msg)
        start = offset + BLOCK
        if not self._have(start + head.size):
            self._next = None  # truncated: the tar module reports it
            return
        if kind in "xg":
            self._records(parse_pax(self._slice(start, head.size)), kind, offset)
        self._next = start + _block(head.size)

    def _records(self, records: list[tuple[bytes, bytes]], kind: str, offset: int) -> None:
        for keyword, value in records:
            if keyword.startswith(b"GNU.sparse."):
                raise Refused("C017", f"header at byte {offset}: a sparse member")
            if keyword == b"size":
                if kind == "g" or not value.isdigit():
                    msg = f"header at byte {offset}: PAX size {value[:40]!r} in a {kind!r} header"
                    raise Refused("C017", msg)
                self._pending.size = int(value)


# --------------------------------------------------------------------------- tarfile's PAX


def _decode(value: bytes, encoding: str, fallback: str, errors: str) -> str:
    try:
        return value.decode(encoding, "strict")
    except UnicodeDecodeError:
        return value.decode(fallback, errors)


class _FixedPaxInfo(tarfile.TarInfo):
    """A ``TarInfo`` whose PAX headers are parsed by :func:`parse_pax` (CVE-2024-6232).

    ``_proc_pax`` is the tar module's hook for extended headers (its ``_proc_*`` methods are
    meant to be overridden in a subclass); this one does what CPython 3.11.10's does, with
    the records read by :func:`parse_pax`. GNU sparse members never reach it: the
    :class:`HeaderScan` in front refuses them.
    """

    def _proc_pax(self, tarfile_: Any) -> tarfile.TarInfo:
        data = tarfile_.fileobj.read(self._block(self.size))  # type: ignore[attr-defined]
        records = parse_pax(data[: self.size])
        extended = self.type in {tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE}
        headers = tarfile_.pax_headers.copy() if extended else tarfile_.pax_headers
        for keyword, value in records:
            if keyword == b"hdrcharset":
                headers["hdrcharset"] = value.decode("utf-8", "replace")
        binary = headers.get("hdrcharset") == "BINARY"
        names = tarfile.PAX_NAME_FIELDS
        for raw_key, raw_value in records:
            key = _decode(raw_key, "utf-8", "utf-8", tarfile_.errors)
            encoding = tarfile_.encoding if binary and key in names else "utf-8"
            fallback = tarfile_.encoding if key in names else "utf-8"
            headers[key] = _decode(raw_value, encoding, fallback, tarfile_.errors)
        try:
            member = self.fromtarfile(tarfile_)
        except tarfile.HeaderError as exc:
            raise tarfile.ReadError(str(exc)) from None  # as the tar module's next() does
        if extended:
            member._apply_pax_info(headers, tarfile_.encoding, tarfile_.errors)  # type: ignore[attr-defined]
            member.offset = self.offset
            if "size" in headers:
                offset = member.offset_data
                if member.isreg() or member.type not in tarfile.SUPPORTED_TYPES:
                    offset += self._block(member.size)  # type: ignore[attr-defined]
                tarfile_.offset = offset
        return member


#: The ``TarInfo`` class to read a stranger's archive with (see the module docstring).
TARINFO: type[tarfile.TarInfo] = tarfile.TarInfo if PAX_PARSER_FIXED else _FixedPaxInfo


# --------------------------------------------------------------------------- links


class LinkTree:
    """The symbolic links of an archive, resolved through the tree as it will exist.

    A link's target is walked one component at a time from the link's directory: ``.`` stays,
    ``..`` goes up (above the root: the link leaves the tree), a name that is a link already
    in the tree is replaced by that link's own resolution (at most :data:`MAX_LINK_HOPS`
    links in one resolution), any other name is entered as it will be (a directory, a file,
    or nothing yet). So ``A -> .`` then ``B -> A/..`` leaves the tree (``A/..`` is the root's
    parent once ``A`` is a link). The names a resolution walked through as plain names are
    remembered with the links that walked them: when one of those names later becomes a
    link, those links are resolved again, so a link created after a link through it cannot
    change where the first one leads unseen. An absolute target leaves the tree.
    """

    def __init__(self) -> None:
        self._links: dict[tuple[str, ...], str] = {}
        self._through: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
        self._steps = 0

    def add(self, parts: list[str], target: str) -> None:
        """Add the link at ``parts``; :class:`Refused` (C017) when any link now leaves."""
        here = tuple(parts)
        self._links[here] = target
        for link in [here, *sorted(self._through.pop(here, set()))]:
            self._resolve(link, link, list(link[:-1]), [])

    def _resolve(
        self, owner: tuple[str, ...], at: tuple[str, ...], current: list[str], chain: list[str]
    ) -> list[str]:
        """Where the link at ``at`` (met while resolving ``owner``) leads, from ``current``."""
        name = "/".join(owner)
        target = self._links[at]
        chain.append(f"{'/'.join(at)} -> {target}")
        if len(chain) > MAX_LINK_HOPS:
            raise Refused("C017", f"link {name!r}: more than {MAX_LINK_HOPS} links in a row", name)
        if target.startswith("/"):
            raise Refused("C017", f"link {name!r} -> {target!r} is absolute", name)
        for part in target.split("/"):
            self._steps += 1
            if self._steps > MAX_LINK_STEPS:
                raise Refused("C018", f"resolving the links took over {MAX_LINK_STEPS} steps")
            if part in {"", "."}:
                continue
            if part == "..":
                if not current:
                    route = ", then ".join(chain)
                    msg = f"link {name!r} resolves outside the tree ({route})"
                    raise Refused("C017", msg, name)
                current.pop()
                continue
            step = (*current, part)
            if step in self._links:
                current = self._resolve(owner, step, current, chain)
            else:
                self._through.setdefault(step, set()).add(owner)
                current.append(part)
        return current

    def has(self, name: str) -> bool:
        """Whether the POSIX relative path ``name`` is a link of the tree."""
        return tuple(name.split("/")) in self._links
