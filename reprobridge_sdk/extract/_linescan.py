"""Line-by-line regular-expression scans of large files (the engine of regex extraction).

What a line and a match are is spec/manifest.md §6.9 (``regex``). Three strategies, one
result: a *literal pre-filter* decodes only lines holding a literal every match contains; a
*chunk search* runs a line-safe pattern over a whole chunk; otherwise *per line*. Memory is
bounded by ``chunk_size + MAX_LINE`` bytes.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import re2

from ._facts import line_safe, required_literal
from .pattern import Match, Regex, author_pattern

if TYPE_CHECKING:
    from ._opened import Readable

__all__ = ["DEFAULT_CHUNK", "MAX_LINE", "scan", "scan_chunks"]

#: Bytes read per step when scanning a file.
DEFAULT_CHUNK = 1 << 20
#: Longest line matched as one piece; longer lines are matched in segments of this size.
MAX_LINE = 8 << 20

#: Above one literal hit per this many bytes, a chunk is scanned without the pre-filter. One
#: RE2 call on a line costs about what one chunk search spends on a few KiB of text.
_DENSE = 4096
#: Candidate lines always tried with the pre-filter before judging it.
_SLACK = 16


@dataclass(frozen=True)
class _Plan:
    rx: Regex
    group: str | int
    literal: bytes | None
    #: Whether a region may be searched at once with the chunk program (see chunk_rx).
    chunkable: bool
    fold: bool = False
    adaptive: bool = False

    @property
    def chunk_rx(self) -> Regex | None:
        """The pattern's ``(?m)`` program for one search of a whole region, compiled on first
        use (a scan that the literal pre-filter finishes, like a sample's replay, needs none),
        or None when the pattern is not chunkable."""
        return author_pattern(self.rx.pattern, multiline=True) if self.chunkable else None

    def budget(self, region: bytes) -> int:
        """Candidate lines to try before the pre-filter is judged slower than a full scan.

        Without a chunk search the alternative is a call per line, never faster than a call
        per candidate line: the pre-filter is kept.
        """
        if self.adaptive and self.chunkable:
            return len(region) // _DENSE + _SLACK
        return len(region) + 1


def _group_value(match: Match | None, group: str | int) -> str | None:
    if match is None:
        return None
    value: str | None = match.group(group)
    return value


def _decode(line: bytes) -> str:
    if line.endswith(b"\r"):
        line = line[:-1]
    return line.decode("utf-8", "replace")


def _lines(region: bytes) -> list[str]:
    text = region.decode("utf-8", "replace")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _chunk_matches(region: bytes, plan: _Plan) -> Iterator[str]:
    """First match of each line, found by one MULTILINE search over the whole region."""
    chunk_rx = plan.chunk_rx
    assert chunk_rx is not None
    text = region.decode("utf-8", "replace").replace("\r\n", "\n")
    if text.endswith("\r"):
        text = text[:-1]  # the last line, without its LF: drop its CR as a line would
    low = _low_level(chunk_rx)
    if low is not None:
        yield from _chunk_matches_utf8(text.encode("utf-8"), low, plan)
        return
    line_end = -1
    # After a final LF there is no line: an (empty) match starting there is not one.
    stop = len(text) - 1 if text.endswith("\n") else len(text)
    for match in chunk_rx.finditer(text):
        start = match.start()
        if start > stop:
            break
        if start <= line_end:
            continue  # not the first match of this line
        line_end = text.find("\n", start)
        if line_end < 0:
            line_end = len(text)
        raw: str | None = match.group(plan.group)
        if raw is not None:
            yield raw


def _low_level(rx: Regex) -> Any:
    """RE2's own matcher behind ``google-re2``'s wrapper, when it has the expected shape.

    The wrapper builds a match object in Python for each match and converts byte offsets to
    character offsets; on a line-per-match log that is most of the scan. The matcher works
    on UTF-8 bytes and returns byte spans. ``None`` (use the wrapper) if it is not there.
    """
    low = getattr(rx, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if low is None or anchor is None or not callable(getattr(low, "Match", None)):
        return None
    return low


def _chunk_matches_utf8(data: bytes, low: Any, plan: _Plan) -> Iterator[str]:
    """:func:`_chunk_matches` on the region as valid UTF-8: the first match of each line.

    Exact because the pattern is line-safe: no match spans a line break.
    """
    chunk_rx = plan.chunk_rx
    assert chunk_rx is not None
    group = plan.group
    index = group if isinstance(group, int) else chunk_rx.groupindex[group]
    anchor = re2._Anchor.UNANCHORED
    size = len(data)
    # After a final LF there is no line: an (empty) match starting there is not one.
    stop = size - 1 if data.endswith(b"\n") else size
    pos = 0
    while pos <= stop:
        spans = low.Match(anchor, data, pos, size)
        start = spans[0][0]
        if start < 0 or start > stop:
            return
        first, last = spans[index]
        if first >= 0:
            yield data[first:last].decode("utf-8")
        line_end = data.find(b"\n", start)
        if line_end < 0:
            return
        pos = line_end + 1


def _region_forward(region: bytes, plan: _Plan) -> Iterator[str]:
    """Values of the matching lines of ``region`` (whole lines) in order."""
    if not region:
        return  # no line at all (not one empty line)
    if plan.literal is None:
        if plan.chunkable:
            yield from _chunk_matches(region, plan)
            return
        for line in _lines(region):
            raw = _group_value(plan.rx.search(line), plan.group)
            if raw is not None:
                yield raw
        return
    literal = plan.literal
    hay = region.lower() if plan.fold else region
    budget = plan.budget(region)
    pos = 0
    size = len(region)
    while True:
        budget -= 1
        if budget < 0:  # the literal is on most lines: scan the rest without it
            yield from _region_forward(region[pos:], replace(plan, literal=None))
            return
        hit = hay.find(literal, pos)
        if hit < 0:
            return
        start = region.rfind(b"\n", 0, hit) + 1
        end = region.find(b"\n", hit)
        if end < 0:
            end = size
        raw = _group_value(plan.rx.search(_decode(region[start:end])), plan.group)
        if raw is not None:
            yield raw
        pos = end + 1


def _region_last(region: bytes, plan: _Plan) -> str | None:
    """The value of the last matching line of ``region`` (whole lines), or ``None``."""
    if not region:
        return None  # no line at all (not one empty line)
    if plan.literal is None:
        if plan.chunkable:
            last: str | None = None
            for value in _chunk_matches(region, plan):
                last = value
            return last
        for line in reversed(_lines(region)):
            raw = _group_value(plan.rx.search(line), plan.group)
            if raw is not None:
                return raw
        return None
    literal = plan.literal
    hay = region.lower() if plan.fold else region
    budget = plan.budget(region)
    end = len(region)
    while end > 0:
        budget -= 1
        if budget < 0:  # the literal is on most lines: scan the rest without it
            return _region_last(region[:end], replace(plan, literal=None))
        hit = hay.rfind(literal, 0, end)
        if hit < 0:
            return None
        start = region.rfind(b"\n", 0, hit) + 1
        stop = region.find(b"\n", hit)
        if stop < 0:
            stop = len(region)
        raw = _group_value(plan.rx.search(_decode(region[start:stop])), plan.group)
        if raw is not None:
            return raw
        end = start
    return None


def _regions(path: Readable, chunk_size: int, start: int = 0) -> Generator[bytes, None, None]:
    """The file as regions of whole lines of about ``chunk_size`` bytes, in order (a line
    longer than :data:`MAX_LINE` is cut into segments of that size).

    From ``start`` (a line's first byte), the reads stay aligned on multiples of
    ``chunk_size`` from the file's start, so a long line is cut where a scan from the start
    cuts it.
    """
    with path.open("rb") as handle:
        handle.seek(start)
        carry = b""
        first = chunk_size - start % chunk_size
        while True:
            block = handle.read(first or chunk_size)
            first = 0
            if not block:
                if carry:
                    yield carry
                return
            buf = carry + block if carry else block
            cut = buf.rfind(b"\n")
            if cut < 0:
                carry = buf
                if len(carry) >= MAX_LINE:
                    yield carry
                    carry = b""
                continue
            carry = buf[cut + 1 :]
            yield buf[: cut + 1]


#: Values handed over at a time by the in-place literal search.
_BATCH = 4096
#: Bytes of the mapped file searched at a time; the pages behind are released.
_WINDOW = 8 << 20


def _mapped_literal(path: Readable, plan: _Plan, chunk_size: int) -> Iterator[list[str]]:
    """:func:`scan_chunks` for a case-sensitive literal, searched in place in the mapped file.

    Only the lines holding the literal are copied and matched (:class:`_InPlace`). It hands
    over to the chunked reader, from the line it has reached, when a candidate line is longer
    than :data:`MAX_LINE` (which the reader cuts into segments) or when the literal turns out
    to be on most lines (then the chunk search is faster).
    """
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if not size:
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            search = _InPlace(view, size, plan)
            yield from search.batches()
            if not search.handover:
                return
    rest = replace(plan, literal=None) if search.dense else plan
    for region in _regions(path, chunk_size, search.floor):
        found = list(_region_forward(region, rest))
        if found:
            yield found


class _InPlace:
    """The literal searched in the mapped file :data:`_WINDOW` bytes at a time, the pages
    behind released (``MADV_DONTNEED``): resident memory stays bounded by the window."""

    def __init__(self, view: mmap.mmap, size: int, plan: _Plan) -> None:
        assert plan.literal is not None
        self.view, self.size, self.plan, self.literal = view, size, plan, plan.literal
        self.floor = 0  # the first byte of the next line not yet matched
        self.search = 0  # where the literal is looked for next
        self.released = 0
        self.tried = 0
        self.handover = False
        self.dense = False

    def _next_hit(self) -> int | None:
        """Where the literal is next, from :attr:`search` (None: nowhere)."""
        view, size, width = self.view, self.size, len(self.literal)
        while self.search < size:
            if self.search - self.released >= _WINDOW:
                upto = self.search - self.search % mmap.PAGESIZE
                view.madvise(mmap.MADV_DONTNEED, self.released, upto - self.released)
                self.released = upto
            stop = min(size, self.search + max(_WINDOW, width))
            hit = view.find(self.literal, self.search, stop)
            if hit >= 0:
                return hit
            if stop == size:
                return None
            self.search = max(self.search + 1, stop - width + 1)
        return None

    def _line(self, hit: int) -> tuple[int, int, bool]:
        """The line around ``hit``: start, end (-1: beyond :data:`MAX_LINE`), and whether it
        is too long to match in place."""
        low = max(self.floor, hit - MAX_LINE - 1)
        start = self.view.rfind(b"\n", low, hit) + 1 or low
        end = self.view.find(b"\n", hit, min(self.size, hit + MAX_LINE + 1))
        if end < 0:
            end = self.size if self.size - hit <= MAX_LINE else -1
        long = end < 0 or (start == low and low > self.floor) or end - start > MAX_LINE
        return start, end, long

    def batches(self) -> Iterator[list[str]]:
        """The group values of the matching lines, :data:`_BATCH` at a time."""
        plan = self.plan
        batch: list[str] = []
        while (hit := self._next_hit()) is not None:
            start, end, long = self._line(hit)
            self.tried += 1
            self.dense = plan.adaptive and plan.chunkable and self.tried > end // _DENSE + _SLACK
            if self.dense or long:
                self.handover = True
                break
            raw = _group_value(plan.rx.search(_decode(self.view[start:end])), plan.group)
            if raw is not None:
                batch.append(raw)
                if len(batch) >= _BATCH:
                    yield batch
                    batch = []
            self.floor = self.search = end + 1
        if batch:
            yield batch


def _scan_forward(path: Readable, plan: _Plan, chunk_size: int) -> Generator[str, None, None]:
    for region in _regions(path, chunk_size):
        yield from _region_forward(region, plan)


def _scan_last(path: Readable, plan: _Plan, chunk_size: int) -> str | None:
    with path.open("rb") as handle:
        pos = handle.seek(0, 2)
        carry = b""  # the start of the file region already read (begins mid-line)
        while pos > 0:
            size = min(chunk_size, pos)
            pos -= size
            handle.seek(pos)
            buf = handle.read(size) + carry
            if pos == 0:
                region, carry = buf, b""
            else:
                first = buf.find(b"\n")
                if first < 0 and len(buf) < MAX_LINE:
                    carry = buf
                    continue
                if first < 0 or first >= MAX_LINE:
                    region, carry = buf, b""  # a very long line: match it in segments
                else:
                    region, carry = buf[first + 1 :], buf[: first + 1]
            raw = _region_last(region, plan)
            if raw is not None:
                return raw
        return None


#: A file of at most this many bytes is scanned line by line: its few lines cost less than
#: the pattern facts (literal, line safety) the other strategies derive from its parse tree.
SMALL_FILE = 4096


def _make_plan(
    rx: Regex, group: str | int, strategy: str | None, path: Readable | None = None
) -> _Plan:
    """How ``path`` is scanned for ``rx``: the ``strategy`` forced, else the fastest one that
    is exact for the pattern, or line by line for a small file (:data:`SMALL_FILE`), whose
    plan needs no fact of the pattern."""
    if strategy is None and path is not None and _small(path):
        strategy = "line"
    if strategy == "line":
        return _Plan(rx=rx, group=group, literal=None, chunkable=False)
    literal_text = required_literal(rx.pattern)
    fold = False
    if literal_text is None:
        literal_text = required_literal(rx.pattern, fold=True)
        fold = literal_text is not None
    safe = line_safe(rx.pattern)
    adaptive = strategy is None
    if strategy is None:
        strategy = "literal" if literal_text else "chunk" if safe else "line"
    literal = literal_text.encode("utf-8") if strategy == "literal" and literal_text else None
    chunkable = safe and (strategy == "chunk" or adaptive)
    return _Plan(
        rx=rx, group=group, literal=literal, chunkable=chunkable, fold=fold, adaptive=adaptive
    )


def _small(path: Readable) -> bool:
    """Whether ``path`` holds at most :data:`SMALL_FILE` bytes (not when it cannot be told:
    the scan itself then reports what it meets)."""
    try:
        return path.stat().st_size <= SMALL_FILE
    except OSError:
        return False


def scan(
    path: Readable,
    rx: Regex,
    group: str | int,
    occurrence: str,
    chunk_size: int = DEFAULT_CHUNK,
    *,
    strategy: str | None = None,
) -> tuple[str, ...]:
    """Group text of the first, last or all matching lines of ``path``.

    ``strategy`` forces ``"literal"``, ``"chunk"`` or ``"line"`` (for tests). ``all`` holds
    every match in memory: :func:`scan_chunks` streams them.
    """
    plan = _make_plan(rx, group, strategy, path)
    if occurrence == "last":
        raw = _scan_last(path, plan, chunk_size)
        return () if raw is None else (raw,)
    if occurrence == "all":
        return tuple(
            raw
            for batch in scan_chunks(path, rx, group, chunk_size, strategy=strategy)
            for raw in batch
        )
    found = _scan_forward(path, plan, chunk_size)
    first = next(found, None)
    found.close()
    return () if first is None else (first,)


def scan_chunks(
    path: Readable,
    rx: Regex,
    group: str | int,
    chunk_size: int = DEFAULT_CHUNK,
    *,
    strategy: str | None = None,
) -> Iterator[list[str]]:
    """Group text of every matching line of ``path``, in order, one list per region read.

    Memory is bounded by one region (about ``chunk_size`` bytes) and its matches, whatever
    the number of matches in the file.
    """
    plan = _make_plan(rx, group, strategy, path)
    if plan.literal is not None and not plan.fold:
        yield from _mapped_literal(path, plan, chunk_size)
        return
    for region in _regions(path, chunk_size):
        found = list(_region_forward(region, plan))
        if found:
            yield found
