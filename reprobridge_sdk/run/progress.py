"""Progress reporting for :func:`reprobridge_sdk.run.run`: JSON lines or a live display.

Both are ``on_event`` callbacks. :class:`JsonEvents` writes one JSON object per event and
line (``run-started``, ``landmark``, ``finding``, ``run-finished``, ``summary``).
:class:`LiveProgress` writes human text: a line per finished run and per finding and, on a
terminal, a status line redrawn twice a second (runs done, running, failed, elapsed). Colour as
:func:`reprobridge_sdk.config.color_enabled` decides (``NO_COLOR``, ``FORCE_COLOR``, a terminal).
"""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace
from typing import Any, TextIO

from reprobridge_sdk.config import color_enabled
from reprobridge_sdk.findings import finding_line
from reprobridge_sdk.findings import terminal_text as _t

from .measure import NO_PLUGIN as _NO_PLUGIN
from .results import RunEvent, RunSummary

__all__ = ["JsonEvents", "LiveProgress", "format_summary"]


class JsonEvents:
    """Write each event as one line of JSON."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: RunEvent) -> None:
        self.stream.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
        self.stream.flush()


def _encodable(text: str, stream: TextIO) -> str:
    """``text`` with what the stream's encoding cannot show escaped (``\\u8bad``), so a
    launcher or run named in another script never stops a run on an ASCII terminal."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:  # an encoding Python does not know: write as it is
        return text
    return text


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class LiveProgress:
    """Human progress on ``stream`` (normally stderr); a live status line on a terminal.

    A run's findings are diagnostics: they go to ``findings`` (the command line gives stdout),
    in the one line shape of :func:`~reprobridge_sdk.findings.finding_line`.
    """

    def __init__(
        self, stream: TextIO, *, live: bool | None = None, findings: TextIO | None = None
    ) -> None:
        self.stream = stream
        self.findings = stream if findings is None else findings
        tty = _is_tty(stream)
        self.live = tty if live is None else live
        self.color = color_enabled(stream)
        self.started = time.monotonic()
        self.running: set[str] = set()
        self.done = 0
        self.failed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> LiveProgress:
        if self.live:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self._clear()

    def _paint(self, text: str, colour: str) -> str:
        if not self.color:
            return text
        codes = {"green": "32", "red": "31", "yellow": "33", "dim": "2"}
        return f"\x1b[{codes[colour]}m{text}\x1b[0m"

    def _status(self) -> str:
        elapsed = time.monotonic() - self.started
        return (
            f"runs: {self.done} done, {len(self.running)} running, {self.failed} failed"
            f" | {elapsed:.1f} s"
        )

    def _clear(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                self.stream.write("\r\x1b[K" + self._paint(self._status(), "dim"))
                self.stream.flush()

    def _line(self, text: str, stream: TextIO | None = None) -> None:
        self._clear()
        target = self.stream if stream is None else stream
        target.write(_encodable(text, target) + "\n")
        if target is not self.stream:
            target.flush()
        if self.live:
            self.stream.write(self._paint(self._status(), "dim"))
        self.stream.flush()

    def __call__(self, event: RunEvent) -> None:
        data = event.data
        with self._lock:
            if event.event == "run-started":
                self.running.add(str(data["run_id"]))
                seed = "" if data.get("seed") is None else f" seed {data['seed']}"
                self._line(f"started {_t(data['launcher'])}{seed}: {_t(data['run_dir'])}")
            elif event.event == "run-finished":
                self.running.discard(str(data["run_id"]))
                self.done += 1
                self._line(self._finished(data))
            elif event.event == "finding":
                fields = {"file": None, "line": None, "col": None, "path": "", "hint": None}
                shown = finding_line(
                    SimpleNamespace(**{**fields, **data}), str(data.get("run_id") or "")
                )
                self._line(shown, self.findings)
            elif event.event == "summary":
                self._clear()

    def _finished(self, data: Any) -> str:
        seed = "" if data.get("seed") is None else f" seed {data['seed']}"
        duration = data.get("duration")
        took = "" if duration is None else f" in {duration:.2f} s"
        if data["status"] == "succeeded":
            return f"{self._paint('ok', 'green')}     {_t(data['launcher'])}{seed}{took}"
        self.failed += 1
        failure = data.get("failure") or {}
        reason = _t(str(failure.get("reason", data["status"])))
        detail = _t(str(failure.get("detail") or ""))
        landmark = _t(str(failure.get("last_landmark") or ""))
        where = f" (last landmark: {landmark})" if landmark else " (no landmark reached)"
        label = "interrupted" if data["status"] == "interrupted" else "FAILED"
        colour = "yellow" if data["status"] == "interrupted" else "red"
        return (
            f"{self._paint(label, colour)} {_t(data['launcher'])}{seed}{took}: {reason}"
            f"{': ' + detail if detail else ''}{where}\n       log: {_t(data['run_dir'])}/log.txt"
        )


def format_summary(summary: RunSummary) -> str:
    """A short human summary: runs, then each task's value over seeds."""
    lines = [
        f"{len(summary.results)} runs: {summary.succeeded} succeeded, {summary.failed} failed"
        + (", interrupted" if summary.interrupted else "")
        + f" ({summary.elapsed:.1f} s)"
    ]
    for task in summary.tasks:
        value = "n/a" if task.value is None else f"{task.value:.6g}"
        n = len(task.values)
        lines.append(f"  {task.task:<28} {value:>12}  {task.aggregate} of {n} ({task.launcher})")
        if task.error is not None and task.error.startswith(_NO_PLUGIN):
            lines.append(f"    warning X005: {task.error[len(_NO_PLUGIN) :]}")
        elif task.error is not None:
            lines.append(f"    not extracted: {task.error}")
    if summary.ledger_head:
        lines.append(f"ledger head: {summary.ledger_head}")
    return "\n".join(lines)
