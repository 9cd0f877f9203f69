"""A real headless Chromium (Debian's ``chromium``) for the tests of the HTML reports."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

F = TypeVar("F", bound=Callable[..., object])


def needs_chromium(test: F) -> F:
    """Mark ``test`` as a browser test, skipped where Chromium is not installed."""
    skip = pytest.mark.skipif(
        CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)"
    )
    return pytest.mark.browser(skip(test))  # type: ignore[no-any-return]


def chromium(page: Path, profile: Path, *args: str, fragment: str = "") -> str:
    """What headless Chromium prints for ``page`` (its DOM with ``--dump-dom``), offline,
    with its own ``profile`` folder."""
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
            page.as_uri() + fragment,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    return done.stdout
