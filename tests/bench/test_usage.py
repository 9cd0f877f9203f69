"""The usage channel (``bench-usage.jsonl``): what an agent reports spending, read from a file
the agent controls. Junk, a link, a FIFO, negative or non-finite amounts and a line nested past
the parser's depth are skipped; none of them can raise, block or lower the cost the cap sees."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from reprobridge_sdk.bench.outcome import MAX_USAGE_BYTES, MAX_USAGE_LINES, USAGE_NAME, read_usage
from reprobridge_sdk.io.atomic import json_text


def _channel(workspace: Path, *lines: str | bytes) -> Path:
    path = workspace / USAGE_NAME
    path.write_bytes(b"".join((x.encode() if isinstance(x, str) else x) + b"\n" for x in lines))
    return path


def test_lines_are_summed_with_the_last_currency(tmp_path: Path) -> None:
    _channel(
        tmp_path,
        json.dumps({"tokens": 10, "cost": 0.25}),
        json.dumps({"tokens": 5, "cost": 1, "currency": "EUR"}),
        json.dumps({"note": "no amounts"}),
    )
    usage = read_usage(tmp_path)
    assert (usage.tokens, usage.cost, usage.currency, usage.lines) == (15, 1.25, "EUR", 3)


def test_no_channel_reports_nothing(tmp_path: Path) -> None:
    usage = read_usage(tmp_path)
    assert (usage.tokens, usage.cost, usage.lines) == (None, None, 0)


def test_junk_and_hostile_lines_are_skipped(tmp_path: Path) -> None:
    _channel(
        tmp_path,
        b"\xff\xfe not utf-8",
        "{not json",
        "[1, 2]",
        "[" * 100_000,  # past the parser's depth: RecursionError, not a crash
        json.dumps({"tokens": True, "cost": False}),
        json.dumps({"tokens": "9", "cost": "9.5"}),
        json.dumps({"tokens": -1000, "cost": -100.0}),  # would hide earlier spending
        '{"cost": NaN}',
        '{"cost": Infinity}',
        '{"cost": ' + "9" * 400 + "}",  # an integer past any float
        json.dumps({"tokens": 3, "cost": 0.5, "currency": "a currency name too long"}),
    )
    usage = read_usage(tmp_path)
    assert (usage.tokens, usage.cost, usage.currency) == (3, 0.5, None)
    # the report stays strict JSON: no NaN or Infinity from the agent's lines
    json.loads(json_text(usage.model_dump(mode="json")), parse_constant=_no_constant)


def _no_constant(name: str) -> float:
    raise AssertionError(f"{name} in the report")


def test_sums_stay_finite(tmp_path: Path) -> None:
    _channel(tmp_path, *[json.dumps({"cost": sys.float_info.max, "tokens": 1 << 62})] * 3)
    usage = read_usage(tmp_path)
    assert usage.cost == sys.float_info.max
    assert usage.tokens == (1 << 63) - 1


def test_only_the_first_lines_and_bytes_count(tmp_path: Path) -> None:
    line = json.dumps({"tokens": 1})
    _channel(tmp_path, *[line] * (MAX_USAGE_LINES + 5))
    assert read_usage(tmp_path).tokens == MAX_USAGE_LINES
    padded = json.dumps({"tokens": 1, "pad": "x" * 1000})
    _channel(tmp_path, *[padded] * (2 * MAX_USAGE_BYTES // len(padded)))
    usage = read_usage(tmp_path)
    assert usage.tokens is not None
    assert usage.tokens <= MAX_USAGE_BYTES // len(padded)


def test_a_link_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere.jsonl"
    secret.write_text(json.dumps({"tokens": 7, "cost": 7.0}) + "\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / USAGE_NAME).symlink_to(secret)
    assert read_usage(workspace).lines == 0


def test_a_fifo_does_not_block_the_reader(tmp_path: Path) -> None:
    """A FIFO (which the cost watch could meet while the agent runs) is not a channel: the
    read returns at once instead of waiting for a writer that never comes."""
    os.mkfifo(tmp_path / USAGE_NAME)
    found: list[object] = []
    reader = threading.Thread(target=lambda: found.append(read_usage(tmp_path)), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive()
    assert [getattr(u, "lines", None) for u in found] == [0]
    (tmp_path / USAGE_NAME).unlink()
    (tmp_path / USAGE_NAME).mkdir()  # a folder neither
    assert read_usage(tmp_path).lines == 0
