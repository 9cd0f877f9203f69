"""The working checkout of the refined code (``spec/manifest.md#patch-series``), one
implementation for every consumer; :mod:`reprobridge_sdk.authoring.codebase` adds the
authoring side. The names, and the git helpers other layers use, are imported lazily.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Where a name lives that is not in :mod:`.materialize`: the git helpers.
_WHERE = {"GitError": "._git", "git": "._git", "git_available": "._git", "init_checkout": "._apply"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(_WHERE.get(name, ".materialize"), __name__), name)
    globals()[name] = value
    return value
