"""The human progress of a run on a stream whose encoding cannot show every name."""

from __future__ import annotations

import io

from reprobridge_sdk.run import RunEvent
from reprobridge_sdk.run.progress import LiveProgress


def _shown(encoding: str, launcher: str) -> str:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict")
    progress = LiveProgress(stream, live=False)
    started = {"run_id": "r1", "launcher": launcher, "seed": 0, "run_dir": f"runs/{launcher}"}
    progress(RunEvent("run-started", started))
    finished = {**started, "status": "failed", "duration": 1.0}
    finished["failure"] = {"reason": "exit-code", "detail": f"{launcher} \u2192 1"}
    progress(RunEvent("run-finished", finished))
    finding = {"run_id": "r1", "code": "X002", "severity": "warning", "message": launcher}
    progress(RunEvent("finding", finding))
    stream.flush()
    return raw.getvalue().decode(encoding)


def test_a_name_an_ascii_terminal_cannot_show_is_escaped_not_a_crash() -> None:
    text = _shown("ascii", "训练-ré")
    assert "started \\u8bad\\u7ec3-r\\xe9 seed 0: runs/\\u8bad\\u7ec3-r\\xe9" in text
    assert "\\u2192 1" in text
    assert "X002 warning \\u8bad\\u7ec3-r\\xe9" in text


def test_a_name_the_encoding_can_show_is_written_as_it_is() -> None:
    assert "started ré seed 0" in _shown("latin-1", "ré")
    assert "训练" in _shown("utf-8", "训练")
