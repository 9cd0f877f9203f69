"""The ``reprobridge`` command line: a thin layer over the Python API.

Commands are imported only when they are invoked, so ``reprobridge --help`` and
``reprobridge validate`` do not pay for the imports of other commands.

Exit codes (spec §9.3): 0 clean, 1 findings or a failed run or audit, 2 usage or I/O error.

Shell completion is click's: ``_REPROBRIDGE_COMPLETE=bash_source reprobridge`` prints the
bash script (also ``zsh_source`` and ``fish_source``); the variable is the same when the
command line runs as ``python -m reprobridge``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from reprobridge_sdk import DISTRIBUTION

__all__ = ["COMMANDS", "COMPLETE_VAR", "main"]

#: Command name -> (module under ``reprobridge_sdk.cli``, attribute, one-line help).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("_init", "init", "Scaffold a new artifact."),
    "validate": ("_validate", "validate", "Validate artifacts and report findings."),
    "schema": ("_schema", "schema", "Print the JSON Schemas of the format."),
    "guide": ("_guide", "guide", "Render the guide's structured records into GUIDE.md."),
    "lock": ("_lock", "lock", "Resolve the declared requirements into a hashed lock."),
    "env": ("_env", "env", "Build, check and snapshot environments."),
    "data": ("_data", "data", "Fetch and verify data and checkpoints."),
    "run": ("_run", "run", "Run launchers and record evidence."),
    "extract": ("_extract", "extract", "Replay measurement extraction on a run or a log."),
    "audit": ("_audit", "audit", "Audit evidence against compatibility intervals."),
    "code": ("_code", "code", "Import an upstream and record fixes as a patch series."),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = COMMANDS.get(cmd_name)
        if spec is None:
            return None
        module = importlib.import_module(f"{__name__}.{spec[0]}")
        command = getattr(module, spec[1])
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name=DISTRIBUTION, message="%(prog)s %(version)s")
def cli() -> None:
    """ReproBridge: author, validate, run and audit Refined Reproducible Artifacts.

    Exit codes: 0 clean, 1 findings or a failed run or audit, 2 usage or I/O error.
    """


#: The environment variable of click's shell completion.
COMPLETE_VAR = "_REPROBRIDGE_COMPLETE"


def main(argv: list[str] | None = None, *, prog_name: str = "reprobridge") -> Any:
    """Entry point of the ``reprobridge`` console script (and of ``python -m reprobridge``)."""
    try:
        return cli.main(
            args=argv, prog_name=prog_name, complete_var=COMPLETE_VAR, standalone_mode=True
        )
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.stderr.write("interrupted\n")
        sys.exit(130)
