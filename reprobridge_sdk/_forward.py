"""How a document of a newer minor version is read by the layers below the API: the
dependency inverted (spec ``manifest.md#forward-compatibility``).

The rule has one implementation, :func:`reprobridge_sdk.api.consumer_view`, which needs the
validation layer; the layers below call it through here, once the package's ``__init__`` has
registered it (:func:`register`). This module imports nothing, so any layer may use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["DocumentView", "Reader", "consumer_view", "register"]


class DocumentView(Protocol):
    """What a reader says of how the data it returns differs from the document
    (:class:`reprobridge_sdk.validation.forward.ForwardView` is one)."""

    @property
    def changed(self) -> bool:
        """Whether anything was ignored or set aside."""
        ...

    def to_document(self, pointer: str) -> str:
        """A pointer into the returned data as a pointer into the document."""
        ...


#: A reader: a manifest's plain data -> the data a consumer reads and how it differs (``None``
#: when it is read as it is).
Reader = Callable[[Any], "tuple[Any, DocumentView | None]"]

_READER: list[Reader] = []


def register(reader: Reader) -> None:
    """Make ``reader`` the implementation :func:`consumer_view` calls."""
    _READER[:] = [reader]


def consumer_view(data: Any) -> tuple[Any, DocumentView | None]:
    """The data a consumer reads from a manifest's plain ``data`` (see the module)."""
    if not _READER:
        msg = "no reader of newer minor versions is registered (reprobridge_sdk registers one)"
        raise RuntimeError(msg)
    return _READER[0](data)
