"""The ``reprobridge`` command line: a thin layer over the Python API.

Commands are imported only when they are invoked, so ``reprobridge --help`` and
``reprobridge validate`` do not pay for the imports of other commands.

Exit codes are spec/conformance.md §16.9's, plus 3 for an internal error (a bug, see
:func:`main`). Shell completion is click's (``_REPROBRIDGE_COMPLETE=bash_source``).
"""

from __future__ import annotations

import functools
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from reprobridge_sdk import DISTRIBUTION

__all__ = [
    "COMMANDS",
    "COMPLETE_VAR",
    "DEBUG_VAR",
    "EXIT_INTERNAL",
    "SuggestingGroup",
    "artifact_alias",
    "main",
]

F = TypeVar("F", bound=Callable[..., Any])

#: The cyclic collector's thresholds for the whole command (Python's default: 700, 10, 10).
GC_THRESHOLD = (100_000, 50, 100)
#: Exit status of an internal error.
EXIT_INTERNAL = 3
#: Set to 1 (or true, yes) to print the traceback of an internal error.
DEBUG_VAR = "REPROBRIDGE_DEBUG"
_debug = False

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
    "export": ("_export", "export", "Export CITATION.cff or an RO-Crate."),
    "keys": ("_keys", "keys", "Create signing keys for signed evidence."),
    "review": ("_review", "review", "Re-execute recorded runs and audit them."),
    "code": ("_code", "code", "Import an upstream and record fixes as a patch series."),
    "references": ("_references", "references", "Turn recorded runs into reference values."),
    "digest": ("_digest", "digest", "Recompute the artifact's digests (--update writes them)."),
    "pack": ("_pack", "pack", "Pack the artifact into one deterministic archive."),
    "check": ("_check", "check", "Clean-room check: copy, clean shell, validate, run, audit."),
    "unpack": ("_pack", "unpack", "Unpack an archive safely and verify its digests."),
    "build": ("_build", "build", "Build an artifact from a raw repository and its claims."),
    "upgrade": ("_upgrade", "upgrade", "Rewrite a manifest as a newer format version."),
    "plugins": ("_plugins", "plugins", "List the installed plugins (extractors, data, formats)."),
    "bench": ("_bench", "bench", "Variants of an artifact for agents, and the judge (preview)."),
}


class SuggestingGroup(click.Group):
    """A group that suggests the nearest command for a misspelt one, as click does for an
    option (``No such command 'valdate'. Did you mean 'validate'?``)."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0]) if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            import difflib  # noqa: PLC0415 - only for a misspelt command

            near = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f" Did you mean {near[0]!r}?" if near else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)


def pairs(values: tuple[str, ...], shape: str, option: str) -> dict[str, str]:
    """An option's ``KEY=VALUE`` values as a mapping; a value not of that ``shape`` (e.g.
    ``"ID=FILE"``, an empty side included) is a usage error of ``option``."""
    found: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or not rest:
            msg = f"{value!r} is not {shape}"
            raise click.BadParameter(msg, param_hint=option)
        found[key] = rest
    return found


def artifact_alias(name: str = "path", *, rest: str | None = None) -> Callable[[F], F]:
    """``-C PATH``, an alias of the command's positional artifact argument ``name``.

    A command with one artifact takes ``-C PATH`` or ``PATH``, not both; a command with many
    (``validate``, ``audit``) adds ``-C PATH`` to them. With ``rest`` (the command's further
    positional arguments, ``data verify``'s items), a positional PATH given with ``-C`` is the
    first of them.
    """

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, artifact_alias: str | None = None, **kwargs: Any) -> Any:
            if artifact_alias is None:
                return f(*args, **kwargs)
            given = kwargs.get(name)
            if isinstance(given, tuple):  # many artifacts: -C adds one
                kwargs[name] = (*given, artifact_alias)
                return f(*args, **kwargs)
            if given is not None and str(given) != ".":
                if rest is None:
                    msg = f"the artifact is named twice ({given} and -C {artifact_alias})"
                    raise click.UsageError(msg)
                kwargs[rest] = (str(given), *kwargs[rest])
            kwargs[name] = artifact_alias if given is None else type(given)(artifact_alias)
            return f(*args, **kwargs)

        return click.option(  # type: ignore[return-value]
            "-C",
            "--artifact",
            "artifact_alias",
            metavar="PATH",
            help="The artifact, as the positional PATH names it (an alias).",
        )(wrapper)

    return decorate


class _LazyGroup(SuggestingGroup):
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
@click.option(
    "--debug",
    is_flag=True,
    help=f"Print the traceback of an internal error (also: {DEBUG_VAR}=1).",
)
@click.option(
    "--isolated",
    is_flag=True,
    help="Read no configuration file (REPROBRIDGE_* variables and flags still apply).",
)
@click.option(
    "--config",
    "config_file",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Read the settings from FILE (reprobridge.toml or pyproject.toml) and search for no "
    "other.",
)
def cli(debug: bool, isolated: bool, config_file: str | None) -> None:
    """ReproBridge: author, validate, run and audit Refined Reproducible Artifacts.

    Settings come from flags, then REPROBRIDGE_* variables, then one configuration file:
    --config FILE, else the nearest reprobridge.toml or [tool.reprobridge] of a
    pyproject.toml from the current directory upwards, else the user's
    ~/.config/reprobridge/reprobridge.toml. A file inside an artifact is never read
    (N030): an artifact does not configure its own check.

    Exit codes: 0 clean, 1 findings or a failed run or audit, 2 usage or I/O error,
    3 internal error.
    """
    from reprobridge_sdk import config  # noqa: PLC0415 - light, and needed by every command

    from ._output import reset  # noqa: PLC0415 - light, and needed by every command

    global _debug  # noqa: PLW0603 - read by main() after click has returned or raised
    _debug = _debug or debug
    if isolated and config_file is not None:
        raise click.UsageError("--isolated and --config exclude each other")
    config.choose_config(isolated=isolated, file=config_file)
    reset()
    # the choice is this invocation's: a later one in the same process starts afresh
    click.get_current_context().call_on_close(config.choose_config)


#: The environment variable of click's shell completion.
COMPLETE_VAR = "_REPROBRIDGE_COMPLETE"


def main(argv: list[str] | None = None, *, prog_name: str = "reprobridge") -> Any:
    """Entry point of the ``reprobridge`` console script (and of ``python -m reprobridge``).

    An exception that escapes a command is a bug, never the user's input: it exits 3 with one
    line on stderr, ``reprobridge: internal error: <type>: <message> (at <file>:<line>)``, and
    the traceback only with ``--debug`` or ``REPROBRIDGE_DEBUG=1``.
    """
    global _debug  # noqa: PLW0603 - reset per call: main() may run many times in a process
    _debug = os.environ.get(DEBUG_VAR, "").strip().lower() in ("1", "true", "yes")
    # A command holds a manifest's data while it allocates: collect young objects rarely, so
    # that full collections do not rescan it (the library itself leaves the collector alone).
    gc.set_threshold(*GC_THRESHOLD)
    try:
        return cli.main(
            args=argv, prog_name=prog_name, complete_var=COMPLETE_VAR, standalone_mode=True
        )
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as exc:  # the one place that turns a bug into exit 3
        if _debug:
            traceback.print_exc(file=sys.stderr)
        from reprobridge_sdk.findings import terminal_text  # noqa: PLC0415 - on failure only

        sys.stderr.write(f"{prog_name}: internal error: {terminal_text(_describe(exc))}\n")
        if not _debug:
            sys.stderr.write(f"run again with --debug or {DEBUG_VAR}=1 for the traceback\n")
        sys.exit(EXIT_INTERNAL)


def _describe(exc: BaseException) -> str:
    """``Type: message (at file:line)`` of the innermost frame of ``exc``."""
    message = str(exc).splitlines()[0] if str(exc) else ""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text + where
