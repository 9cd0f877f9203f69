"""The errors of extraction and templates (shared by :mod:`.extraction` and :mod:`.template`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import finding
from reprobridge_sdk.io.safefs import UnsafeFileError

__all__ = ["REASONS", "ExtractionError", "Reason", "TemplateError", "plugin_hint", "replayed"]


@dataclass(frozen=True)
class Reason:
    """What an extraction failure of one reason means to the layers that meet it."""

    #: The finding an :class:`ExtractionError` of this reason carries (None: none).
    code: str | None
    #: Who reports it when a shipped sample fails this way (spec §9): ``replay`` (the
    #: sample's fault, an X finding of the replay layer), or the layer that already reports
    #: its cause (a missing file F004, a template R014, a pattern X004, a missing plugin X005,
    #: a broken extractor S): then replay says nothing more.
    reporter: str = "replay"
    #: The auditor's code when it cannot re-extract a value this way and the evidence is not
    #: at fault (None: the evidence is, A008).
    audit: str | None = None
    #: What to do about it, in the finding (None: the message says it).
    hint: str | None = None


_PLUGIN_BUG = "the plugin failed on this file: report it to the plugin's maintainers"
#: Why an extraction can fail (``ExtractionError.reason``) and its code: the one table from
#: extraction reasons to finding codes. A new reason is one entry here.
REASONS: Mapping[str, Reason] = {
    "no-match": Reason("X001"),
    "not-number": Reason("X002"),
    "bad-json-pointer": Reason("X001"),
    "bad-csv": Reason("X001"),
    "bad-yaml": Reason("X001"),
    "decode": Reason("X001"),
    "plugin-failed": Reason("X006", audit="A062", hint=_PLUGIN_BUG),
    "plugin-timeout": Reason(
        "X007",
        audit="A062",
        hint="the plugin hangs on this file: report it to the plugin's maintainers",
    ),
    "no-plugin": Reason(
        "X005",
        "semantic",
        audit="A061",
        hint="install the distribution that provides this kind (an entry point in the group "
        "'reprobridge.extractors'); 'reprobridge plugins' lists the installed ones",
    ),
    "missing-file": Reason(None, "files"),
    "unsafe-file": Reason(None, "files"),
    "bad-regex": Reason(None, "semantic"),
    "template": Reason(None, "semantic"),
    "aggregate": Reason(None, "semantic"),
    "bad-extractor": Reason(None, "structure"),
}


def replayed(reason: str) -> str | None:
    """The code the replay layer reports for a sample that fails with ``reason``, or None
    when another layer reports the failure's cause."""
    entry = REASONS.get(reason)
    return entry.code if entry is not None and entry.reporter == "replay" else None


def plugin_hint(reason: str) -> str:
    """What to do about a plugin extractor's failure of ``reason``."""
    return REASONS[reason].hint or _PLUGIN_BUG


class ExtractionError(ReproBridgeError):
    """A value could not be extracted; ``reason`` is one of :data:`REASONS`."""

    def __init__(
        self, reason: str, message: str, *, source: str = "", dialect: bool = False
    ) -> None:
        code = "X004" if dialect else REASONS[reason].code
        hint = REASONS[reason].hint
        findings = () if code is None else (finding(code, message, hint=hint),)
        super().__init__(message, findings)
        self.reason = reason
        self.source = source
        #: For reason ``"unsafe-file"``: the safe file layer's refusal (its reason and limit).
        self.refusal: UnsafeFileError | None = None


class TemplateError(ExtractionError):
    """A template names something the context lacks, or has an unescaped brace."""

    def __init__(self, message: str) -> None:
        super().__init__("template", message)
