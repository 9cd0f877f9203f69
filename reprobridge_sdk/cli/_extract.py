"""``reprobridge extract``: replay extraction on a run directory, a sample log, or samples."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from reprobridge_sdk.cli._output import deprecated, echo, json_format, print_error

if TYPE_CHECKING:
    from reprobridge_sdk.model import MeasuredValue

__all__ = ["extract"]


def _outputs(values: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for value in values:
        key, sep, file = value.partition("=")
        if not sep or not key or not file:
            msg = f"{value!r} is not ID=FILE"
            raise click.BadParameter(msg, param_hint="--file")
        found[key] = file
    return found


def _old_outputs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    """``--output ID=FILE``, the old spelling of ``--file`` (an input, not an output path)."""
    if value:
        deprecated("extract --output ID=FILE", "--file ID=FILE")
        ctx.meta["reprobridge.outputs"] = value


def _show(measured: list[MeasuredValue], as_json: bool) -> int:
    if as_json:
        data = [m.model_dump(mode="json") for m in measured]
        sys.stdout.write(json.dumps({"measurements": data}, indent=2) + "\n")
    else:
        for m in measured:
            if m.value is None:
                echo(f"{m.task}: FAILED from {m.source}: {m.error}", err=True)
            else:
                echo(f"{m.task}: {m.value!r} (raw {m.raw!r} from {m.source})", err=True)
    return 1 if any(m.value is None for m in measured) else 0


@click.command("extract", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("target", required=False)
@click.option("-C", "--artifact", help="The artifact (default: the run's <artifact>/runs/..).")
@click.option("--log", "log", type=click.Path(dir_okay=False), help="A sample log to read.")
@click.option("--launcher", help="Whose measurements to replay on --log/--file.")
@click.option(
    "--file", "outputs", multiple=True, help="ID=FILE: the file of a declared output, to read."
)
@click.option(
    "--output",
    "old_outputs",
    multiple=True,
    hidden=True,
    callback=_old_outputs,
    expose_value=False,
    help="Deprecated: --file ID=FILE.",
)
@click.option("--seed", type=int, help="The seed for templates (default: the first).")
@click.option("--samples", is_flag=True, help="Check every shipped sample's expected values.")
@json_format("JSON on stdout.")
def extract(  # noqa: PLR0917 - click passes options as arguments
    target: str | None,
    artifact: str | None,
    log: str | None,
    launcher: str | None,
    outputs: tuple[str, ...],
    seed: int | None,
    samples: bool,
    as_json: bool,
) -> None:
    """Replay measurement extraction without running anything.

    \b
    reprobridge extract RUN_DIR                     re-extract a recorded run
    reprobridge extract [PATH] --launcher ID --log FILE [--file ID=FILE]
    reprobridge extract [PATH] --samples [--launcher ID]

    PATH (or -C) may be a packed archive: it is unpacked safely into a temporary
    directory that is removed afterwards, and the output names the archive.

    \b
    Exit codes: 0 every value extracted (and matching, for --samples), 1 otherwise,
    2 usage or I/O error.
    """
    from reprobridge_sdk.authoring.submissions import (  # noqa: PLC0415 - lazy
        is_archive,
        open_artifact,
    )
    from reprobridge_sdk.errors import ReproBridgeError  # noqa: PLC0415 - lazy
    from reprobridge_sdk.run.replay import (  # noqa: PLC0415 - lazy
        check_samples,
        replay_log,
        replay_run,
    )

    outputs = outputs + click.get_current_context().meta.get("reprobridge.outputs", ())
    replaying = log is not None or bool(outputs) or launcher is not None
    if replaying and launcher is None:
        raise click.UsageError("--log and --output need --launcher ID")
    if not samples and not replaying and target is None:
        raise click.UsageError("give a RUN_DIR, or --launcher with --log")
    if not samples and not replaying and is_archive(target or ""):
        msg = f"{target} is a packed artifact, not a run directory: add --samples, or --launcher"
        raise click.UsageError(msg)
    # the artifact: -C, else TARGET (unless TARGET is a run directory); an archive is unpacked
    path = artifact if artifact is not None or not (samples or replaying) else target or "."
    try:
        with open_artifact(path or ".") as opened:
            root = None if path is None else opened.target
            if samples:
                checks = opened.relabel(
                    check_samples(root or ".", [launcher] if launcher else None)
                )
                sys.exit(_show_samples(checks, as_json))
            if replaying:
                assert launcher is not None
                measured = replay_log(
                    root or ".", launcher, log, outputs=_outputs(outputs), seed=seed
                )
            else:
                assert target is not None
                measured = replay_run(target, root)
            measured = opened.relabel(measured)
    except ReproBridgeError as exc:
        print_error(exc)
        sys.exit(2)
    sys.exit(_show(measured, as_json))


def _show_samples(checks: list[Any], as_json: bool) -> int:
    if as_json:
        data: Any = {"samples": [c.to_dict() for c in checks]}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    for check in checks if not as_json else []:
        mark = "ok  " if check.ok else "DIFF"
        got = check.error if check.value is None else repr(check.value)
        echo(
            f"{mark} {check.launcher}[{check.sample}] {check.task}: "
            f"expected {check.expected!r}, got {got}",
            err=True,
        )
    return 0 if all(c.ok for c in checks) else 1
