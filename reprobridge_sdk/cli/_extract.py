"""``reprobridge extract``: replay extraction on a run directory, a sample log, or samples."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

from reprobridge_sdk.cli import pairs
from reprobridge_sdk.cli._output import deprecated, failing, format_option, say, write_json

__all__ = ["extract"]


def _old_outputs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
    """``--output ID=FILE``, the old spelling of ``--file`` (an input, not an output path)."""
    if value:
        deprecated("extract --output ID=FILE", "--file ID=FILE")
        ctx.meta["reprobridge.outputs"] = value


def _show(measured: Sequence[Mapping[str, Any]], fmt: str) -> int:
    """Measured values, each with every field of a record's (``measured_json``)."""
    if fmt == "json":
        write_json({"measurements": measured})
    else:
        for m in measured:
            if m["value"] is None:
                say(f"{m['task']}: FAILED from {m['source']}: {m['error']}")
            else:
                say(f"{m['task']}: {m['value']!r} (raw {m['raw']!r} from {m['source']})")
    return 1 if any(m["value"] is None for m in measured) else 0


def _target(
    path: str | None, artifact: str | None, run_dir: str | None, mode: bool
) -> tuple[str | None, str | None]:
    """The artifact and the run directory, from PATH, -C and --run; ``mode`` is whether
    --samples, --log, --file or --launcher chose what to do. The old spelling
    ``extract RUN_DIR [-C ARTIFACT]`` still works, with a deprecation warning."""
    from reprobridge_sdk.authoring.submissions import is_archive  # noqa: PLC0415 - lazy

    if run_dir is None and not mode and path is not None:
        if is_archive(path):
            msg = f"{path} is a packed artifact, not a run directory: add --samples or --launcher"
            raise click.UsageError(msg)
        deprecated("extract RUN_DIR", "extract [PATH] --run RUN_DIR")
        return artifact, path
    if artifact is not None and path is not None:
        msg = f"the artifact is named twice ({path} and -C {artifact})"
        raise click.UsageError(msg)
    if run_dir is None and not mode:
        raise click.UsageError("give --run RUN_DIR, --samples, or --launcher with --log")
    return artifact or path, run_dir


@click.command("extract", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("path", required=False)
@click.option(
    "-C", "--artifact", metavar="PATH", help="The artifact, as the positional PATH names it."
)
@click.option("--run", "run_dir", metavar="DIR", help="A recorded run directory to re-extract.")
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
@format_option("text", "json")
def extract(  # noqa: PLR0917 - click passes options as arguments
    path: str | None,
    artifact: str | None,
    run_dir: str | None,
    log: str | None,
    launcher: str | None,
    outputs: tuple[str, ...],
    seed: int | None,
    samples: bool,
    fmt: str,
) -> None:
    """Replay measurement extraction without running anything.

    \b
    reprobridge extract [PATH] --run RUN_DIR        re-extract a recorded run
    reprobridge extract [PATH] --launcher ID --log FILE [--file ID=FILE]
    reprobridge extract [PATH] --samples [--launcher ID]

    PATH (or -C) is the artifact (default: '.'; with --run, the run's <artifact>/runs/..).
    It may be a packed archive: it is unpacked safely into a temporary directory that is
    removed afterwards, and the output names the archive.

    \b
    Exit codes: 0 every value extracted (and matching, for --samples), 1 otherwise,
    2 usage or I/O error.
    """
    from reprobridge_sdk.authoring.submissions import open_artifact  # noqa: PLC0415 - lazy
    from reprobridge_sdk.run.measure import measured_json  # noqa: PLC0415 - lazy
    from reprobridge_sdk.run.replay import (  # noqa: PLC0415 - lazy
        check_samples,
        replayed_log,
        replayed_run,
    )

    outputs = outputs + click.get_current_context().meta.get("reprobridge.outputs", ())
    replaying = log is not None or bool(outputs) or launcher is not None
    if replaying and launcher is None:
        raise click.UsageError("--log and --file need --launcher ID")
    path, run_dir = _target(path, artifact, run_dir, samples or replaying)
    with failing(), open_artifact(path or ".") as opened:
        root = None if path is None else opened.target
        if samples:
            checks = check_samples(root or ".", [launcher] if launcher else None)
            sys.exit(_show_samples(opened.relabel(checks), fmt))
        if run_dir is not None:  # plain values: the models are not loaded
            found = replayed_run(run_dir, root)
        else:
            assert launcher is not None
            named = pairs(outputs, "ID=FILE", "--file")
            found = replayed_log(root or ".", launcher, log, outputs=named, seed=seed)
        measured = opened.relabel([measured_json(m) for m in found])
    sys.exit(_show(measured, fmt))


def _show_samples(checks: list[Any], fmt: str) -> int:
    if fmt == "json":
        data: Any = {"samples": [c.to_dict() for c in checks]}
        write_json(data)
    for check in checks if fmt != "json" else []:
        mark = "ok  " if check.ok else "DIFF"
        got = check.error if check.value is None else repr(check.value)
        say(
            f"{mark} {check.launcher}[{check.sample}] {check.task}: "
            f"expected {check.expected!r}, got {got}",
        )
    return 0 if all(c.ok for c in checks) else 1
