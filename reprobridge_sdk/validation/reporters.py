"""Render findings as text, JSON, SARIF 2.1.0, JUnit XML or GitHub workflow commands.

:func:`render` takes ``(label, findings)`` pairs (or anything with a ``pairs()`` method), so
every command shares it. The text and JSON shapes are spec ``manifest.md#validate-output``;
the artifact's text passes through :func:`~reprobridge_sdk.findings.terminal_text` except in
``json`` and ``sarif``, which encode it. The other formats:

* ``sarif``: one run; ``tool.driver.rules`` holds the registry's entry of each code that
  fired (summary, why, fix, ``helpUri`` into the spec, as GitHub code scanning requires); a
  result's ``logicalLocation`` is its JSON Pointer.
* ``junit``: a ``testsuite`` per artifact, a ``testcase`` per finding (``failure`` for
  errors), one passing ``testcase`` for an artifact without findings.
* ``github``: ``::error``/``::warning``/``::notice`` per finding, escaped as the Actions
  toolkit does so a hostile message cannot start a command; a finding without a file is on
  the artifact's label.

Other formats come from plugins (``reprobridge.report_formats``, :mod:`reprobridge_sdk.plugins`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from reprobridge_sdk.findings import (
    SPEC_URL,
    CodeInfo,
    Finding,
    Severity,
    finding_line,
    registry,
    terminal_text,
)
from reprobridge_sdk.io.atomic import json_text

__all__ = ["FORMATS", "RENDERERS", "Pairs", "finding_line", "render", "summary", "summary_line"]


Pairs = Sequence[tuple[str, Sequence[Finding]]]

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_RESET = "\033[0m"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_TOOL = "reprobridge"
_TOOL_URI = "https://reprobridge.org"


def _pairs(results: Any) -> list[tuple[str, list[Finding]]]:
    pairs = results.pairs() if hasattr(results, "pairs") else results
    return [(str(label), list(findings)) for label, findings in pairs]


def _counts(findings: Iterable[Finding]) -> dict[str, int]:
    counts = {"errors": 0, "warnings": 0, "infos": 0}
    for item in findings:
        counts[item.severity.value + "s"] += 1
    return counts


def summary(results: Any) -> dict[str, Any]:
    """Counts over all pairs: artifacts, errors, warnings, infos, ok."""
    pairs = _pairs(results)
    counts = _counts(item for _, findings in pairs for item in findings)
    return {"artifacts": len(pairs), **counts, "ok": counts["errors"] == 0}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - lazy

    from reprobridge_sdk import DISTRIBUTION  # noqa: PLC0415 - lazy

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def render(results: Any, fmt: str = "text", *, color: bool = False) -> str:
    """Render ``results`` (``(label, findings)`` pairs or a ValidationResult) as ``fmt``."""
    pairs = _pairs(results)
    if fmt == "text":
        return _text(pairs, color=color)
    if fmt in RENDERERS:
        return RENDERERS[fmt](pairs)
    from reprobridge_sdk.plugins import REPORT_FORMATS, load_plugin  # noqa: PLC0415 - rare

    plugin = load_plugin(REPORT_FORMATS, fmt)
    if plugin is not None:
        return str(plugin(pairs))
    msg = f"unknown format {fmt!r}; one of {', '.join(FORMATS)}"
    raise ValueError(msg)


# --------------------------------------------------------------------------- text


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(results: Any, *, color: bool = False) -> str:
    """``N artifacts checked: N errors, N warnings (ok)``, the last line of ``text``."""
    pairs = _pairs(results)
    total = summary(pairs)
    failed = sum(1 for _, findings in pairs if any(f.severity is Severity.ERROR for f in findings))
    parts = [
        _plural(total["errors"], "error"),
        _plural(total["warnings"], "warning"),
    ]
    if total["infos"]:
        parts.append(_plural(total["infos"], "info"))
    verdict = "ok" if total["ok"] else f"{failed} of {len(pairs)} failed"
    line = f"{_plural(len(pairs), 'artifact')} checked: {', '.join(parts)} ({verdict})"
    if color:
        paint = "\033[32m" if total["ok"] else _COLORS["error"]
        line = f"{paint}{line}{_RESET}"
    return line


def _text(pairs: list[tuple[str, list[Finding]]], *, color: bool) -> str:
    lines = [
        finding_line(item, label, color=color) for label, findings in pairs for item in findings
    ]
    lines.append(summary_line(pairs, color=color))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- json


def _json(pairs: list[tuple[str, list[Finding]]]) -> str:
    artifacts = []
    for label, findings in pairs:
        counts = _counts(findings)
        artifacts.append(
            {
                "path": label,
                "ok": counts["errors"] == 0,
                "counts": counts,
                "findings": [item.to_dict() for item in findings],
            }
        )
    document = {
        "format_version": 1,
        "tool": {"name": _TOOL, "version": _version()},
        "artifacts": artifacts,
        "summary": summary(pairs),
    }
    return json_text(document)


# --------------------------------------------------------------------------- sarif


def _uri(path: str) -> str:
    """A relative path as a relative URI reference; an absolute one as a file:// URI."""
    from urllib.parse import quote  # noqa: PLC0415 - only for this format

    pure = Path(path)
    if pure.is_absolute():
        return pure.as_uri()
    return quote(pure.as_posix())


def _sarif_rule(info: CodeInfo) -> dict[str, Any]:
    """The reporting descriptor of one code, from its registry entry.

    ``fullDescription`` is the summary and why the rule matters (``why``); ``help`` is how to
    fix a finding (``fix``), in Markdown with a link to the spec section that defines the rule.
    The fix for one finding is that finding's hint, in its result's message.
    """
    uri = f"{SPEC_URL}/{info.spec}"
    full = f"{info.summary} {info.why}".strip()
    fix = info.fix or f"See the RRA specification, {info.spec}."
    return {
        "id": info.code,
        "name": info.name,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": full},
        "help": {
            "text": fix,
            "markdown": (
                f"**{info.code} {info.name}**: {fix}\n\n"
                f"The rule is defined in [{info.spec}]({uri}) of the RRA specification; "
                "each result's message ends with a hint for that finding."
            ),
        },
        "helpUri": uri,
        "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity.value]},
        "properties": {"status": info.status, "since": info.since},
    }


def _sarif(pairs: list[tuple[str, list[Finding]]]) -> str:
    known = registry()
    fired = sorted({item.code for _, findings in pairs for item in findings} & known.keys())
    index = {code: position for position, code in enumerate(fired)}
    rules = [_sarif_rule(known[code]) for code in fired]
    results = []
    for label, findings in pairs:
        for item in findings:
            physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(item.file or label)}}
            if item.line:
                physical["region"] = {"startLine": item.line, "startColumn": item.col or 1}
            location: dict[str, Any] = {"physicalLocation": physical}
            if item.path:
                location["logicalLocations"] = [{"fullyQualifiedName": item.path, "kind": "object"}]
            message = item.message + (f" (hint: {item.hint})" if item.hint else "")
            result: dict[str, Any] = {
                "ruleId": item.code,
                "level": _SARIF_LEVEL[item.severity.value],
                "message": {"text": message},
                "locations": [location],
            }
            if item.code in index:
                result["ruleIndex"] = index[item.code]
            results.append(result)
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": _TOOL,
                        "version": _version(),
                        "informationUri": _TOOL_URI,
                        "rules": rules,
                    }
                },
                "invocations": [{"executionSuccessful": True}],
                "results": results,
            }
        ],
    }
    return json_text(document)


# --------------------------------------------------------------------------- junit


def _junit(pairs: list[tuple[str, list[Finding]]]) -> str:
    import xml.etree.ElementTree as ET  # noqa: PLC0415 - only for this format

    root = ET.Element("testsuites", name=_TOOL)
    total_tests = total_failures = 0
    for given, findings in pairs:
        label = terminal_text(given)  # XML 1.0 holds no control characters, even as references
        suite = ET.SubElement(root, "testsuite", name=label)
        failures = 0
        if not findings:
            ET.SubElement(suite, "testcase", classname=label, name="validate")
        for item in findings:
            name = terminal_text(f"{item.code} {item.path or item.location or label}")
            case = ET.SubElement(suite, "testcase", classname=label, name=name)
            message = terminal_text(item.message)
            text = finding_line(item, label)
            if item.severity is Severity.ERROR:
                failures += 1
                failure = ET.SubElement(case, "failure", message=message, type=item.code)
                failure.text = text
            else:
                ET.SubElement(case, "system-out").text = text
        tests = max(1, len(findings))
        suite.attrib.update(tests=str(tests), failures=str(failures), errors="0")
        total_tests += tests
        total_failures += failures
    root.attrib.update(tests=str(total_tests), failures=str(total_failures), errors="0")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


# --------------------------------------------------------------------------- github

_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    # CR and LF are the workflow command's to encode (%0D, %0A); every other control
    # character is shown, never sent
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return terminal_text(text)


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(pairs: list[tuple[str, list[Finding]]]) -> str:
    lines: list[str] = []
    for label, findings in pairs:
        for item in findings:
            props = [f"file={_escape_property(item.file or label)}"]
            if item.line:
                props += [f"line={item.line}", f"col={item.col or 1}"]
            props.append(f"title={_escape_property(f'{item.code} {item.path}'.strip())}")
            message = item.message + (f"\nhint: {item.hint}" if item.hint else "")
            command = _GITHUB_COMMAND[item.severity.value]
            lines.append(f"::{command} {','.join(props)}::{_escape_data(message)}")
    lines.append(summary_line(pairs))
    return "\n".join(lines) + "\n"


#: The renderer of each format of findings but text; its name is in the one list of report
#: formats (``plugins.BUILT_IN``), which a plugin cannot take.
RENDERERS: dict[str, Callable[[list[tuple[str, list[Finding]]]], str]] = {
    "json": _json,
    "sarif": _sarif,
    "junit": _junit,
    "github": _github,
}
#: The formats :func:`render` writes findings in.
FORMATS = ("text", *RENDERERS)
