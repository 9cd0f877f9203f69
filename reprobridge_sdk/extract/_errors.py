"""Extraction's errors and the reasons they carry (spec §6.9, §9).

An :class:`ExtractionError` carries a :class:`Reason` with its finding code, so replay and the
auditor report a new reason without another table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io.safefs import UnsafeFileError

__all__ = ["REASONS", "ExtractionError", "Reason", "TemplateError", "plugin_hint", "replayed"]


@dataclass(frozen=True)
class Reason:
    """Why an extraction failed, and what that means to the layers that meet it."""

    #: The reason's name (``ExtractionError.reason``), e.g. ``"no-match"``.
    name: str
    #: The finding an :class:`ExtractionError` of this reason carries (None: none).
    code: str | None
    #: Who reports a shipped sample failing this way (spec §9): ``replay`` (an X finding),
    #: or the layer that already reports its cause (then replay says nothing more).
    reporter: str = "replay"
    #: The auditor's code when it cannot re-extract a value this way and the evidence is not
    #: at fault (None: the evidence is, A008).
    audit: str | None = None
    #: What to do about it, in the finding (None: the message says it).
    hint: str | None = None


_PLUGIN_BUG = "the plugin failed on this file: report it to the plugin's maintainers"
_COMMON = (
    Reason("no-match", "X001"),
    Reason("not-number", "X002"),
    Reason("plugin-failed", "X006", audit="A062", hint=_PLUGIN_BUG),
    Reason(
        "plugin-timeout",
        "X007",
        audit="A062",
        hint="the plugin hangs on this file: report it to the plugin's maintainers",
    ),
    Reason(
        "no-plugin",
        "X005",
        "semantic",
        audit="A061",
        hint="install the distribution that provides this kind (an entry point in the group "
        "'reprobridge.extractors'); 'reprobridge plugins' lists the installed ones",
    ),
    Reason("missing-file", None, "files"),
    Reason("unsafe-file", None, "files"),
    Reason("template", None, "semantic"),
    Reason("aggregate", None, "semantic"),
    Reason("bad-extractor", None, "structure"),
)
#: The reasons any kind may fail with, by name; a kind's own are in its module.
REASONS: Mapping[str, Reason] = {reason.name: reason for reason in _COMMON}


def replayed(reason: Reason) -> str | None:
    """The code replay reports for a sample failing with ``reason`` (None: another layer's)."""
    return reason.code if reason.reporter == "replay" else None


def plugin_hint(reason: str) -> str:
    """What to do about a plugin extractor's failure of ``reason``."""
    return REASONS[reason].hint or _PLUGIN_BUG


class ExtractionError(ReproBridgeError):
    """A value could not be extracted; ``reason`` names why and ``why`` is its :class:`Reason`.

    A reason given by name is one of :data:`REASONS`; a kind's own is given as its record."""

    def __init__(
        self, reason: str | Reason, message: str, *, source: str = "", dialect: bool = False
    ) -> None:
        why = REASONS[reason] if isinstance(reason, str) else reason
        code = "X004" if dialect else why.code
        findings = () if code is None else (finding(code, message, hint=why.hint),)
        super().__init__(message, findings)
        self.why = why
        self.reason = why.name
        self.source = source
        #: For reason ``"unsafe-file"``: the safe file layer's refusal (its reason and limit).
        self.refusal: UnsafeFileError | None = None


class TemplateError(ExtractionError):
    """A template names something the context lacks, or has an unescaped brace."""

    def __init__(self, message: str) -> None:
        super().__init__("template", message)
