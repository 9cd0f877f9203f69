"""``extract_value(opened=...)``: the file handed by the caller (the auditor's descriptor of
the log or output whose digest it has just checked) gives the value the path gives, and is
read through that descriptor only: a file replaced, swapped for a link or rewritten after it
was opened is never what is read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reprobridge_sdk import ExtractionError, extract_value
from reprobridge_sdk.extract._opened import OpenedFile, open_checked
from reprobridge_sdk.extract.extraction import ExtractionCache
from reprobridge_sdk.io import safefs

CASES = [
    ({"kind": "json", "pointer": "/acc"}, "metrics.json", '{"acc": 0.75}', 0.75),
    ({"kind": "regex", "pattern": r"acc=(\S+)"}, "log.txt", "acc=0.5\nacc=0.625\n", 0.625),
    ({"kind": "csv", "column": "acc", "row": -1}, "m.csv", "acc\n0.1\n0.25\n", 0.25),
    ({"kind": "yaml", "key": "acc"}, "m.yaml", "acc: 0.125\n", 0.125),
]


def _extract(spec: dict[str, object], path: Path, **kw: object) -> float:
    got = extract_value(spec, log=path, files_base=path.parent, outputs={}, context={}, **kw)
    return got.value


def _opened(path: Path, *, pinned: bool = False, held: bool = False) -> OpenedFile:
    if pinned or held:
        handle = safefs.open_regular(path, root=path.parent)
        data = path.read_bytes() if held else None
        return OpenedFile(path, handle, resolve=True, pinned=True, data=data)
    found = open_checked(path, path.parent, None)
    assert found is not None
    return found


Case = tuple[dict[str, object], str, str, float]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("how", ["plain", "pinned", "held"])
def test_the_handed_file_gives_the_value_the_path_gives(
    tmp_path: Path, case: Case, how: str
) -> None:
    spec, name, text, value = case
    path = tmp_path / name
    path.write_text(text)
    by_path = _extract(spec, path, root=tmp_path)
    with _opened(path, pinned=how == "pinned", held=how == "held") as opened:
        assert _extract(spec, path, opened=opened) == by_path == value
        # through a batch cache too (the auditor passes both), and twice (the cache's entry)
        cache = ExtractionCache()
        assert _extract(spec, path, opened=opened, cache=cache) == value
        assert _extract(spec, path, opened=opened, cache=cache) == value
        cache.close()
        # the caller's file: extract_value never closes it
        assert opened.stat().st_size == len(text.encode())


@pytest.mark.parametrize("case", CASES)
def test_a_file_replaced_after_it_was_opened_is_not_read(tmp_path: Path, case: Case) -> None:
    """Hostile: after the check, the name is renamed over by another file: the value is the
    checked file's, read through the descriptor; the path now gives the other one."""
    spec, name, text, value = case
    path = tmp_path / name
    path.write_text(text)
    with _opened(path, pinned=True) as opened:
        other = tmp_path / "other"
        other.write_text(text.replace("0.", "9."))
        os.replace(other, path)
        assert _extract(spec, path, opened=opened) == value
        assert _extract(spec, path, root=tmp_path) == value + 9


def test_a_name_swapped_for_a_link_outside_is_not_followed(tmp_path: Path) -> None:
    """Hostile: the name becomes a link to a file outside the run directory; the handed
    descriptor is read, and the path itself is refused as escaping."""
    run = tmp_path / "run"
    run.mkdir()
    path = run / "metrics.json"
    path.write_text(json.dumps({"acc": 0.5}))
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"acc": 0.99}))
    spec = {"kind": "json", "pointer": "/acc"}
    with _opened(path, pinned=True) as opened:
        path.unlink()
        path.symlink_to(secret)
        assert _extract(spec, path, opened=opened) == 0.5
        with pytest.raises(ExtractionError) as caught:
            _extract(spec, path, root=run)
        assert caught.value.reason == "unsafe-file"


def test_a_file_rewritten_in_place_after_it_was_hashed(tmp_path: Path) -> None:
    """Hostile: the same file (same inode) truncated and rewritten after the caller hashed
    and held its bytes: the JSON parsed is the held bytes, the checked version; without held
    bytes, the rewritten content gives an error with a reason, never a traceback."""
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"acc": 0.5}))
    spec = {"kind": "json", "pointer": "/acc"}
    with _opened(path, held=True) as held, _opened(path, pinned=True) as pinned:
        with path.open("r+") as handle:
            handle.truncate(0)
            handle.write("{not json")
        assert _extract(spec, path, opened=held) == 0.5
        with pytest.raises(ExtractionError) as caught:
            _extract(spec, path, opened=pinned)
        assert caught.value.reason


def test_a_pinned_file_keeps_its_entries_and_a_plain_one_follows_its_version(
    tmp_path: Path,
) -> None:
    """The batch cache answers a pinned file asked again at once without rebuilding its key
    (its version never changes); a file that is not pinned is looked up by its current
    version each time, so a rewrite in place gets new entries."""
    path = tmp_path / "metrics.json"
    path.write_text('{"acc": 0.5}')
    cache = ExtractionCache()
    with _opened(path, pinned=True) as pinned, _opened(path) as plain:
        first = cache.entries(pinned)
        assert first is not None
        assert cache.entries(pinned) is first
        before = cache.entries(plain)
        assert before is not None
        with path.open("r+") as handle:
            handle.write('{"acc": 0.75, "x": 1}')
        os.utime(path, ns=(1, 1))
        assert cache.entries(plain) is not before
        assert cache.entries(pinned) is first  # the version it was pinned to
