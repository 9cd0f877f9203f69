"""The errors of extraction and templates (shared by :mod:`.extraction` and :mod:`.template`)."""

from __future__ import annotations

from reprobridge_sdk.errors import ReproBridgeError
from reprobridge_sdk.findings import Finding, finding
from reprobridge_sdk.io.safefs import UnsafeFileError

__all__ = ["REASONS", "ExtractionError", "TemplateError", "plugin_hint"]

#: Why an extraction can fail (``ExtractionError.reason``).
REASONS = frozenset(
    {
        "no-match",
        "not-number",
        "missing-file",
        "bad-json-pointer",
        "bad-csv",
        "bad-yaml",
        "bad-regex",
        "template",
        "decode",
        "aggregate",
        "bad-extractor",
        "unsafe-file",
        "no-plugin",
        "plugin-failed",
        "plugin-timeout",
    }
)
#: The reasons of a plugin extractor kind (:mod:`reprobridge_sdk.plugins`) and their codes.
_PLUGIN_CODES = {"no-plugin": "X005", "plugin-failed": "X006", "plugin-timeout": "X007"}


def plugin_hint(reason: str) -> str:
    """What to do about a plugin extractor's failure of ``reason``."""
    if reason == "no-plugin":
        return (
            "install the distribution that provides this kind (an entry point in the group "
            "'reprobridge.extractors'); 'reprobridge plugins' lists the installed ones"
        )
    if reason == "plugin-timeout":
        return "the plugin hangs on this file: report it to the plugin's maintainers"
    return "the plugin failed on this file: report it to the plugin's maintainers"


class ExtractionError(ReproBridgeError):
    """A value could not be extracted; ``reason`` is one of :data:`REASONS`."""

    def __init__(
        self, reason: str, message: str, *, source: str = "", dialect: bool = False
    ) -> None:
        findings: tuple[Finding, ...] = ()
        if dialect:
            findings = (finding("X004", message),)
        elif reason == "no-match":
            findings = (finding("X001", message),)
        elif reason == "not-number":
            findings = (finding("X002", message),)
        elif reason in _PLUGIN_CODES:
            findings = (finding(_PLUGIN_CODES[reason], message, hint=plugin_hint(reason)),)
        super().__init__(message, findings)
        self.reason = reason
        self.source = source
        #: For reason ``"unsafe-file"``: the safe file layer's refusal (its reason and limit).
        self.refusal: UnsafeFileError | None = None


class TemplateError(ExtractionError):
    """A template names something the context lacks, or has an unescaped brace."""

    def __init__(self, message: str) -> None:
        super().__init__("template", message)
