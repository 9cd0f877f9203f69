"""A plugin's stdout goes to stderr: its prints never corrupt the SDK's machine output.

``reprobridge validate --format json`` (or ``sarif``, ``extract --json`` ...) writes one
document to stdout; a plugin called meanwhile (an extractor, a data scheme, a report format, or
its module being imported) may print. :func:`stdout_to_stderr` sends everything written to
stdout while it is active to stderr instead, at both levels where a write can happen:

* file descriptor 1 is made a duplicate of descriptor 2 (``dup2``): ``os.write(1, ...)``,
  C extensions and every subprocess the plugin starts meanwhile (which inherits descriptor 1
  as it was when it started, so it keeps writing to stderr after the call, too);
* ``sys.stdout`` is a router that writes to ``sys.stderr`` (Python's ``print`` from any
  thread, even where ``sys.stdout`` is not descriptor 1, as under a test runner's capture).

Rules and edge cases
    * Nested and concurrent uses share one redirection (a count under a lock): descriptor 1 and
      ``sys.stdout`` are restored when the last one ends. Every pending write to ``sys.stdout``
      and ``sys.__stdout__`` is flushed before the redirection starts (so the SDK's own earlier
      output keeps its place) and before it ends (so the plugin's buffered output does not
      reach the real stdout later).
    * While it is active, *every* thread's writes to stdout go to stderr, the SDK's included:
      the SDK writes machine output only after the work that calls plugins.
    * Threads that the plugin leaves running (a plugin thread abandoned at its time limit, or a
      thread the plugin started) are remembered: the threads alive at the end that were not
      alive at the start. Their later ``print`` calls still go to stderr (``sys.stdout`` stays
      the router while one of them is alive). Limits: a write such a thread makes to
      descriptor 1 *directly* after the redirection ended, or a subprocess it starts after
      that, reaches the real stdout; a thread started concurrently by the SDK itself during a
      plugin call is treated as the plugin's.
    * Without a usable descriptor 1 or 2 (closed, or not a file descriptor at all), only
      ``sys.stdout`` is redirected.
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
