"""A plugin's stdout goes to stderr, so its prints never corrupt machine output (spec
``runner.md#plugins``).

:func:`stdout_to_stderr` redirects both descriptor 1 (for C code and subprocesses) and
``sys.stdout`` (for ``print`` from any thread). Nested and concurrent uses share one
redirection; meanwhile the SDK's stdout goes to stderr too, so the SDK writes machine output
only after the work that calls plugins. ``sys.stdout`` stays redirected while a thread the
plugin started lives. Limit: such a thread's later write to descriptor 1, or a subprocess it
starts later, reaches the real stdout.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["stdout_to_stderr"]

_LOCK = threading.RLock()
#: How many redirections are active; the descriptor saved from fd 1; the stdout replaced.
_STATE: dict[str, Any] = {"depth": 0, "saved_fd": None, "stdout": None}
#: Threads a plugin left running: their writes to ``sys.stdout`` go to stderr for good.
_LEFT_RUNNING: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


class _Router:
    """``sys.stdout`` while a plugin runs or a plugin's thread lives: writes go to stderr
    during a redirection and from a plugin's thread, else to the stream it replaced."""

    def __init__(self, target: TextIO) -> None:
        self._target = target

    def _stream(self) -> TextIO:
        if _STATE["depth"] > 0 or threading.current_thread() in _LEFT_RUNNING:
            return sys.stderr
        return self._target

    def write(self, text: str) -> int:
        return self._stream().write(text)

    def writelines(self, lines: Any) -> None:
        self._stream().writelines(lines)

    def flush(self) -> None:
        with contextlib.suppress(Exception):
            self._target.flush()
        with contextlib.suppress(Exception):
            sys.stderr.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, buffer, fileno, isatty ...
        return getattr(self._target, name)


def _flush_stdouts() -> None:
    for stream in (sys.stdout, sys.__stdout__):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.flush()


def _start() -> None:
    _flush_stdouts()
    with contextlib.suppress(OSError):
        saved = os.dup(1)
        try:
            os.dup2(2, 1)
        except OSError:
            os.close(saved)
        else:
            _STATE["saved_fd"] = saved
    if not isinstance(sys.stdout, _Router):
        _STATE["stdout"] = sys.stdout
        sys.stdout = _Router(sys.stdout)


def _stop() -> None:
    _flush_stdouts()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    saved = _STATE["saved_fd"]
    if saved is not None:
        _STATE["saved_fd"] = None
        with contextlib.suppress(OSError):
            os.dup2(saved, 1)
        os.close(saved)
    replaced = _STATE["stdout"]
    if replaced is not None and not any(t.is_alive() for t in _LEFT_RUNNING):
        if isinstance(sys.stdout, _Router):
            sys.stdout = replaced
        _STATE["stdout"] = None


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Everything written to stdout while this is active goes to stderr (see the module)."""
    before = set(threading.enumerate())
    with _LOCK:
        if _STATE["depth"] == 0:
            _start()
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _LEFT_RUNNING.update(t for t in threading.enumerate() if t not in before)
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0:
                _stop()
