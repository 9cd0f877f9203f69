"""The working checkout of the refined code (``spec/manifest.md#patch-series``), one
implementation for every consumer; :mod:`reprobridge_sdk.authoring.codebase` adds the
authoring side. Importing any part of it loads the whole (as every command that reads
an artifact's codebase does).
"""

from __future__ import annotations

from ._apply import init_checkout
from ._git import GitError, git, git_available
from .materialize import (
    CHECKOUT_DIR,
    BundleRef,
    Checkout,
    CodebaseError,
    SeriesPatch,
    bundle_of,
    cached_upstream,
    fetch_upstream,
    materialize_series,
    series_from_data,
    working_changes,
)

__all__ = [
    "CHECKOUT_DIR",
    "BundleRef",
    "Checkout",
    "CodebaseError",
    "GitError",
    "SeriesPatch",
    "bundle_of",
    "cached_upstream",
    "fetch_upstream",
    "git",
    "git_available",
    "init_checkout",
    "materialize_series",
    "series_from_data",
    "working_changes",
]
