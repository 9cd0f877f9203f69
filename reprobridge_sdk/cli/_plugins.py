"""``reprobridge plugins``: the installed plugins of every group, and the refused ones.

The listing is human text on stdout; ``--format json`` writes the machine form instead.
"""

from __future__ import annotations

import click

from reprobridge_sdk.cli._output import echo_finding, format_option, say, write_json

__all__ = ["plugins"]


@click.command("plugins", context_settings={"help_option_names": ["-h", "--help"]})
@format_option("text", "json")
def plugins(fmt: str) -> None:
    """List the plugins installed for each entry point group.

    \b
    reprobridge.extractors      extractor kinds (x-NAME) for measurements
    reprobridge.data_schemes    data URL schemes (x-NAME://)
    reprobridge.report_formats  --format values of validate

    An entry point whose name its group does not allow (not x-, or a built-in name) is
    listed as refused, with a warning (X008, D017 or E026) on stderr.

    \b
    Exit codes: 0 (refused entry points are warnings), 2 usage error.
    """
    from reprobridge_sdk import plugins as registry  # noqa: PLC0415 - lazy

    entries = registry.installed()
    refused = registry.refusals()
    if fmt == "json":
        data = {
            "groups": list(registry.GROUPS),
            "plugins": [entry.to_dict() for entry in entries],
            "findings": [
                {"code": f.code, "severity": f.severity.value, "message": f.message, "path": f.path}
                for f in refused
            ],
        }
        write_json(data)
        return
    for group in registry.GROUPS:
        mine = [entry for entry in entries if entry.group == group]
        say(f"{group}:")
        if not mine:
            say("  (none)")
        for entry in mine:
            state = "" if entry.refused is None else "  [refused]"
            where = f"{entry.distribution} {entry.version}".strip()
            say(f"  {entry.name}  {entry.value}  ({where}){state}")
    for item in refused:
        echo_finding(item)
