"""``reprobridge bench``: workspace variants of an artifact, and the judge of an agent's results.

A thin layer over :mod:`reprobridge_sdk.bench` (preview). Text goes to stderr, JSON to stdout
alone or to ``--output FILE`` (written atomically), as ``audit`` does.
"""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reprobridge_sdk.cli._env_output import echo
from reprobridge_sdk.findings import terminal_text

if TYPE_CHECKING:
    from reprobridge_sdk.errors import ReproBridgeError
    from reprobridge_sdk.model.bench import BenchJudgement

__all__ = ["bench"]


def _error(exc: ReproBridgeError) -> None:
    echo(f"error: {exc.message}", err=True)
    for item in exc.findings:
        where = item.location or item.path
        echo(terminal_text(f"  {item.code} {where}: {item.message}".rstrip()), err=True)
        if item.hint:
            echo(f"    hint: {terminal_text(item.hint)}", err=True)
    sys.exit(2)


@click.group("bench")
def bench() -> None:
    """Measure whether an artifact helps a reproducing agent (preview).

    \b
    Exit codes: 0 done, 2 usage or I/O error.
    """


@bench.command("variants")
@click.argument("artifact")
@click.option(
    "-o",
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="The folder that receives one folder per variant.",
)
@click.option(
    "--variants",
    "names",
    default=None,
    help="Comma-separated variants (default: all): raw, refined, masked-environment, "
    "masked-launchers, masked-extraction, masked-guide, expert.",
)
@click.option("--fetch", is_flag=True, help="raw: fetch the upstream over the network if needed.")
@click.option("--json", "as_json", is_flag=True, help="Print the variants' records as JSON.")
def variants(artifact: str, out: Path, names: str | None, fetch: bool, as_json: bool) -> None:
    """Write the workspaces an agent is given, each with its variant.json record.

    ARTIFACT is an artifact folder, its rra.yaml or a packed archive.
    """
    from reprobridge_sdk.authoring.submissions import open_artifact
    from reprobridge_sdk.bench.variants import VARIANTS, generate_variants
    from reprobridge_sdk.errors import ReproBridgeError

    wanted = [n.strip() for n in names.split(",") if n.strip()] if names else list(VARIANTS)
    try:
        with open_artifact(artifact) as opened:
            assert opened.root is not None  # open_artifact raises otherwise
            records = generate_variants(opened.root, out, wanted, fetch=fetch)
    except ReproBridgeError as exc:
        _error(exc)
    except OSError as exc:
        echo(f"error: cannot write {exc.filename}: {exc.strerror}", err=True)
        sys.exit(2)
    if as_json:
        data = [record.model_dump(mode="json", exclude_none=True) for record in records]
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        return
    for record in records:
        echo(
            f"{record.variant}: {len(record.files)} file(s), {len(record.held_back)} held back"
            f" (source {record.source}) -> {out / record.variant}",
            err=True,
        )


def _text(judgement: BenchJudgement) -> str:
    lines = [f"bench judge: {judgement.artifact}"]
    for claim in judgement.claims:
        value = "-" if claim.value is None else f"{claim.value:g}"
        extracted = "-" if claim.extracted is None else f"{claim.extracted:g}"
        interval = "" if claim.low is None else f" in [{claim.low:.4g}, {claim.high:.4g}]"
        progress = claim.landmarks.progress
        marks = "" if progress is None else f", landmarks {progress:.0%}"
        lines.append(
            f"  {claim.task}: {claim.verdict} ({claim.icml}), {claim.support};"
            f" value {value}, from logs {extracted}{interval}{marks}"
        )
        lines.extend(f"    {f.code}: {f.message}" for f in claim.findings)
    counts = ", ".join(f"{name} {count}" for name, count in judgement.icml_counts.items())
    lines.append(f"  ICML: {counts}")
    if judgement.progress is not None:
        lines.append(f"  landmark progress: {judgement.progress:.0%}")
    return terminal_text("\n".join(lines), lines=True) + "\n"


@bench.command("judge")
@click.argument("artifact")
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--workspace",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The agent's workspace (default: the results file's folder).",
)
@click.option("--level", type=float, default=0.95, show_default=True, help="Interval level.")
@click.option("--floor", type=float, default=0.01, show_default=True, help="Relative floor.")
@click.option(
    "--max-log-bytes",
    type=click.IntRange(min=1),
    default=64 * 1024 * 1024,
    show_default=True,
    help="The largest log or output read.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text on stderr, json on stdout.",
)
@click.option("--output", "-o", metavar="FILE", help="Write the judgement to FILE.")
def judge(  # noqa: PLR0917 - click passes every option as an argument
    artifact: str,
    results: Path,
    workspace: Path | None,
    level: float,
    floor: float,
    max_log_bytes: int,
    fmt: str,
    output: str | None,
) -> None:
    """Judge the results file an agent left (never believing it).

    ARTIFACT is the artifact (with its reference observations); RESULTS the agent's
    bench-results.json.
    """
    from reprobridge_sdk.authoring.submissions import open_artifact
    from reprobridge_sdk.bench.judge import judge_results
    from reprobridge_sdk.errors import ReproBridgeError
    from reprobridge_sdk.io._fs import atomic_write_bytes

    try:
        with open_artifact(artifact) as opened:
            assert opened.root is not None  # open_artifact raises otherwise
            judgement = judge_results(
                opened.root,
                results,
                workspace=workspace,
                level=level,
                floor=floor,
                max_log_bytes=max_log_bytes,
            )
        if fmt == "json":
            text = json.dumps(judgement.model_dump(mode="json"), indent=2) + "\n"
        else:
            text = _text(judgement)
        if output is not None:
            atomic_write_bytes(output, text.encode("utf-8"))
            echo(f"wrote {output}", err=True)
        else:
            (sys.stdout if fmt == "json" else sys.stderr).write(text)
    except ReproBridgeError as exc:
        _error(exc)
    except OSError as exc:
        echo(f"error: cannot write {exc.filename}: {exc.strerror}", err=True)
        sys.exit(2)
