"""Names of a package imported when first used (PEP 562), so that importing the package, and
the command line's start, do not pay for modules a command never reaches.

This module imports nothing of the SDK, so that any layer may use it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, modules: Mapping[str, str], listed: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: ``modules`` maps each module,
    relative to ``package``, to the names (separated by blanks) imported from it when first
    used; ``listed`` is what ``dir()`` shows (the package's ``__all__``). A name once imported
    is kept on the package.
    """
    where = {name: module for module, names in modules.items() for name in names.split()}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    shown = sorted(listed)

    def __dir__() -> list[str]:
        return list(shown)

    return __getattr__, __dir__
