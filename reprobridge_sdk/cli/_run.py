"""``reprobridge run``: a thin call into :func:`reprobridge_sdk.run.run`."""

from __future__ import annotations

import codecs
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import click

from reprobridge_sdk.cli._output import (
    deprecated,
    echo_finding,
    error,
    failing,
    format_option,
    note,
    say,
    write_json,
)
from reprobridge_sdk.findings import terminal_text
from reprobridge_sdk.versions import MANIFEST_NAME

from ._executor import executor_options, options_from_flags

if TYPE_CHECKING:
    from reprobridge_sdk.run.process import ResourceLimits

__all__ = ["TerminalBytes", "run", "split_target"]


def split_target(args: tuple[str, ...], artifact: str | None) -> tuple[str, list[str]]:
    """The artifact PATH and the launcher ids: ``run [PATH] [LAUNCHER...]``.

    With ``-C/--artifact`` every argument is a launcher id; otherwise the first is PATH. The
    old spelling ``run LAUNCHER...`` (PATH left out) still works, with a deprecation
    warning, where the first argument is no path on disk and the current directory holds
    an ``rra.yaml`` (launcher ids never contain ``/``).
    """
    if artifact is not None or not args:
        return artifact or ".", list(args)
    first = args[0]
    if "/" not in first and not Path(first).exists() and Path(MANIFEST_NAME).is_file():
        deprecated("run LAUNCHER... without PATH", f"run . {' '.join(args)}")
        return ".", list(args)
    return first, list(args[1:])


def _seeds(text: str | None) -> list[int] | None:
    from reprobridge_sdk.errors import UsageError  # noqa: PLC0415 - lazy
    from reprobridge_sdk.findings import finding  # noqa: PLC0415 - lazy

    if text is None:
        return None
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        seeds = []
    if not seeds:
        msg = f"--seeds {text!r} is not a comma-separated list of integers"
        raise UsageError(msg, [finding("N003", msg, hint="e.g. --seeds 0,1,2")])
    return seeds


#: The findings that say how a newer minor version's manifest is read (spec
#: "forward-compatibility"): printed as warnings before a run.
_FORWARD = frozenset({"V003", "S005", "S006"})


def _validate_first(path: str, *, refuse: bool) -> None:
    """Validate the artifact; print its errors; exit 1 on errors when ``refuse``."""
    from reprobridge_sdk.findings import Severity  # noqa: PLC0415 - lazy
    from reprobridge_sdk.validation import validate  # noqa: PLC0415 - lazy

    result = validate(path)
    for item in result.findings:
        if item.code in _FORWARD and item.severity is not Severity.ERROR:
            # a newer minor version: what the runner ignores or sets aside (spec
            # "forward-compatibility"), said before it runs
            echo_finding(item, path)
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    if not errors or any(f.code.startswith("Y") for f in errors):
        return  # nothing wrong, or no readable manifest: the runner reports that itself
    for item in errors:
        echo_finding(item, path)
    if refuse:
        error(
            f"the artifact has {len(errors)} validation error(s); not running "
            "(--no-validate runs anyway)"
        )
        sys.exit(1)


@click.command("run", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("args", nargs=-1, metavar="[PATH] [LAUNCHER]...")
@click.option(
    "-C", "--artifact", metavar="PATH", help="The artifact (then every argument is a launcher)."
)
@click.option("--scope", type=click.Choice(["smoke", "scored"]), help="Only launchers of it.")
@click.option("--seeds", help="Comma-separated seeds, replacing the launchers' own.")
@click.option(
    "--env",
    "env_mode",
    type=click.Choice(["cached", "current"]),
    default="cached",
    show_default=True,
    help="Run in the environment built from the lock, or in the current interpreter.",
)
@click.option("--timeout", type=float, help="Seconds per run (overrides the manifest).")
@click.option("-j", "--jobs", type=int, default=1, show_default=True, help="Parallel runs.")
@format_option("text", "json", help="json: one JSON event per line.")
@click.option("--runs-dir", type=click.Path(file_okay=False), help="Default: <artifact>/runs.")
@executor_options
@click.option(
    "--no-validate",
    is_flag=True,
    help="Run even when validation reports errors (they are still printed).",
)
@click.option(
    "--kill-grace",
    type=float,
    default=5.0,
    show_default=True,
    help="Seconds between SIGTERM and SIGKILL when stopping a run.",
)
@click.option(
    "--sign",
    "sign",
    is_flag=True,
    help="Sign each final record (record.dsse.json) with --key or $REPROBRIDGE_SIGNING_KEY "
    "(also the setting 'sign').",
)
@click.option("--key", "key_file", type=click.Path(dir_okay=False), help="Signing key file.")
@click.option(
    "--sandbox",
    is_flag=True,
    help="Run launchers under bubblewrap: no network, read-only but the run directory, "
    "a private /tmp of at most 1 GiB or --sandbox-tmp (for untrusted artifacts; N011 where "
    "unavailable).",
)
@click.option(
    "--sandbox-tmp",
    "sandbox_tmp",
    metavar="SIZE",
    help="With --sandbox: the size of its private /tmp, held in memory, e.g. 512MiB or 4GiB "
    "(1MiB to 1TiB; default 1GiB). A write past it fails with 'No space left on device'.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Prepare every run (templates, paths, environment choice) and print it; start none.",
)
def run(  # noqa: PLR0917 - click passes options as arguments
    args: tuple[str, ...],
    artifact: str | None,
    scope: str | None,
    seeds: str | None,
    env_mode: str,
    timeout: float | None,
    jobs: int,
    fmt: str,
    runs_dir: str | None,
    executor: str | None,
    scheduler: str | None,
    shared_fs: bool | None,
    job_extra: tuple[str, ...],
    no_validate: bool,
    kill_grace: float,
    sign: bool,
    key_file: str | None,
    sandbox: bool,
    sandbox_tmp: str | None,
    dry_run: bool,
) -> None:
    """Run launchers (default: all) over their seeds and record evidence.

    PATH (default '.', or -C PATH) is the artifact. Each run gets a new directory
    <artifact>/runs/<run_id>/ with record.json, log.txt and outputs/.

    \b
    The artifact is validated first: a manifest with errors is not run (exit 1) unless
    --no-validate is given.

    \b
    Exit codes: 0 every run succeeded, 1 a run failed or validation found errors, 2 usage or
    I/O error (e.g. the runs directory cannot be written), 130 interrupted (Ctrl-C or SIGTERM).
    With --dry-run: 0 every run could start, 1 one could not (its problems are printed).
    """
    from reprobridge_sdk.run.progress import (  # noqa: PLC0415 - lazy
        JsonEvents,
        LiveProgress,
        format_summary,
    )
    from reprobridge_sdk.run.runner import run as run_api  # noqa: PLC0415 - lazy

    path, launcher_ids = split_target(args, artifact)
    with failing():
        seed_list = _seeds(seeds)
        limits = _sandbox_limits(sandbox_tmp, sandbox=sandbox)
        _validate_first(path, refuse=not no_validate)
        from ._safety import settings as cli_settings  # noqa: PLC0415 - lazy

        # the invoking user's settings (from the current directory), never the artifact's
        settings = cli_settings({"executor": executor})
        options = options_from_flags(scheduler, shared_fs, job_extra)
        if dry_run:
            _dry_run(path, launcher_ids, scope, seeds, env_mode, runs_dir, fmt=fmt)
        sign_key = None
        if not sign and key_file is None:
            sign = settings.sign
        if sign or key_file is not None:
            from reprobridge_sdk.signing import load_signing_key  # noqa: PLC0415 - lazy

            sign_key = load_signing_key(key_file)
        common: dict[str, Any] = {
            "scope": scope,
            "seeds": seed_list,
            "env_mode": env_mode,
            "timeout": timeout,
            "jobs": jobs,
            "runs_dir": runs_dir,
            "kill_grace": kill_grace,
            "executor": settings.executor,
            "executor_options": options,
            "sign_key": sign_key,
            "sandbox": sandbox,
            "limits": limits,
        }
        if fmt == "json":
            summary = run_api(path, launcher_ids or None, on_event=JsonEvents(sys.stdout), **common)
        else:
            local_one = jobs == 1 and settings.executor == "local"
            # the runner only writes and flushes: the live output, control characters shown
            echo = cast("BinaryIO", TerminalBytes(sys.stderr.buffer)) if local_one else None
            with LiveProgress(
                sys.stderr, live=False if local_one else None, findings=sys.stdout
            ) as progress:
                summary = run_api(
                    path, launcher_ids or None, on_event=progress, echo=echo, **common
                )
            note(format_summary(summary))
    sys.exit(summary.exit_code)


#: The smallest private /tmp asked for (less holds no program's temporary files, and 0 would
#: leave the tmpfs unbounded) and the largest (more is no bound on a machine's memory).
_MIN_TMP, _MAX_TMP = 1 << 20, 1 << 40


def _sandbox_limits(text: str | None, *, sandbox: bool) -> ResourceLimits | None:
    """The runner's limits for ``--sandbox-tmp SIZE`` (``None``: not given); a size that is
    not one, outside 1 MiB to 1 TiB, or given without ``--sandbox`` is N004."""
    import re  # noqa: PLC0415 - lazy

    from reprobridge_sdk.errors import UsageError  # noqa: PLC0415 - lazy
    from reprobridge_sdk.findings import finding  # noqa: PLC0415 - lazy
    from reprobridge_sdk.model.launcher import MEMORY_PATTERN, memory_bytes  # noqa: PLC0415
    from reprobridge_sdk.run.process import ResourceLimits  # noqa: PLC0415 - lazy

    if text is None:
        return None
    hint = "give a size with its unit, e.g. --sandbox-tmp 512MiB or --sandbox-tmp 4GiB"
    if not sandbox:
        msg = "--sandbox-tmp sizes the sandbox's private /tmp: it needs --sandbox"
        raise UsageError(msg, [finding("N004", msg, hint="add --sandbox")])
    if not re.fullmatch(MEMORY_PATTERN, text):
        msg = (
            f"--sandbox-tmp {text!r} is not a size: a number and a unit, one of B, KB, MB, "
            "GB, TB, KiB, MiB, GiB or TiB"
        )
        raise UsageError(msg, [finding("N004", msg, hint=hint)])
    size = memory_bytes(text)
    if not _MIN_TMP <= size <= _MAX_TMP:
        msg = f"--sandbox-tmp {text!r} is {size} bytes, outside 1MiB to 1TiB"
        raise UsageError(msg, [finding("N004", msg, hint=hint)])
    return ResourceLimits(tmp=size)


def _dry_run(  # noqa: PLR0917 - the options of run, passed on
    path: str,
    launcher_ids: list[str],
    scope: str | None,
    seeds: str | None,
    env_mode: str,
    runs_dir: str | None,
    *,
    fmt: str,
) -> None:

    from reprobridge_sdk.run.dryrun import dry_run as plan_runs  # noqa: PLC0415 - lazy

    with failing():
        plan = plan_runs(
            path,
            launcher_ids or None,
            scope=scope,
            seeds=_seeds(seeds),
            env_mode=env_mode,
            runs_dir=runs_dir,
        )
    if fmt == "json":
        write_json([item.to_dict() for item in plan])
    else:
        for item in plan:
            seed = "" if item.seed is None else f" seed {item.seed}"
            say(f"{item.launcher}{seed}: {' '.join(item.argv)}")
            say(f"  in {item.workdir}; {item.environment}")
            for problem in item.problems:
                say(f"  cannot start: {problem}")
            for refusal in item.findings:
                echo_finding(refusal, item.launcher)
        ready = sum(1 for item in plan if item.ok)
        say(f"{ready} of {len(plan)} run(s) ready; none started")
    sys.exit(0 if all(item.ok for item in plan) else 1)


class TerminalBytes(io.RawIOBase):
    """A byte stream to a terminal that shows control characters (a launcher's live output):
    decoded as UTF-8 as the bytes come (an invalid byte shown as ``\\xNN``), then passed
    through :func:`~reprobridge_sdk.findings.terminal_text` with newlines kept."""

    def __init__(self, sink: BinaryIO) -> None:
        self._sink = sink
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        text = self._decoder.decode(bytes(data))
        self._sink.write(terminal_text(text, lines=True).encode("utf-8"))
        return len(data)

    def flush(self) -> None:
        self._sink.flush()
