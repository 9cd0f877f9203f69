"""``reprobridge bench``: workspace variants of an artifact, and the judge of an agent's results.

A thin layer over :mod:`reprobridge_sdk.bench` (preview).
"""

# ruff: noqa: PLC0415 - imports stay inside commands so that the CLI starts fast

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reprobridge_sdk.cli import SuggestingGroup, artifact_alias
from reprobridge_sdk.cli._executor import executor_options, options_from_flags
from reprobridge_sdk.cli._output import (
    count,
    failing,
    format_option,
    note,
    output_option,
    report_options,
    say,
    write_json,
    write_output,
)
from reprobridge_sdk.cli._safety import sandbox_option, settings, warn_unsandboxed
from reprobridge_sdk.findings import finding_line, terminal_text

if TYPE_CHECKING:
    from reprobridge_sdk.model.bench import BenchJudgement

__all__ = ["bench"]


def _required(artifact: str | None) -> str:
    if artifact is None:
        raise click.MissingParameter(param_hint="'ARTIFACT' (or -C)", param_type="argument")
    return artifact


@click.group("bench", cls=SuggestingGroup)
def bench() -> None:
    """Measure whether an artifact helps a reproducing agent (preview).

    \b
    Exit codes: 0 done, 2 usage or I/O error.
    """


@bench.command("variants")
@click.argument("artifact", required=False)
@output_option(
    "The folder that receives one folder per variant.",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
)
@click.option(
    "--variants",
    "names",
    default=None,
    help="Comma-separated variants (default: all): raw, refined, masked-environment, "
    "masked-launchers, masked-extraction, masked-guide, expert.",
)
@click.option("--fetch", is_flag=True, help="raw: fetch the upstream over the network if needed.")
@format_option("text", "json")
@artifact_alias("artifact")
def variants(artifact: str | None, output: Path, names: str | None, fetch: bool, fmt: str) -> None:
    """Write the workspaces an agent is given, each with its variant.json record.

    ARTIFACT is an artifact folder, its rra.yaml or a packed archive.
    """
    from reprobridge_sdk.authoring.submissions import open_artifact
    from reprobridge_sdk.bench.variants import VARIANTS, generate_variants

    wanted = [n.strip() for n in names.split(",") if n.strip()] if names else list(VARIANTS)
    with failing(doing="write"), open_artifact(_required(artifact)) as opened:
        assert opened.root is not None  # open_artifact raises otherwise
        records = generate_variants(opened.root, output, wanted, fetch=fetch)
    if fmt == "json":
        data = [record.model_dump(mode="json", exclude_none=True) for record in records]
        write_json(data, sort_keys=True)
        return
    for record in records:
        say(
            f"{record.variant}: {len(record.files)} file(s), {len(record.held_back)} held back"
            f" (source {record.source}) -> {output / record.variant}",
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
        lines.extend(finding_line(f, claim.task) for f in claim.findings)
    counts = ", ".join(f"{name} {count}" for name, count in judgement.icml_counts.items())
    lines.append(f"  ICML: {counts}")
    if judgement.progress is not None:
        lines.append(f"  landmark progress: {judgement.progress:.0%}")
    return terminal_text("\n".join(lines), lines=True) + "\n"


@bench.command("judge")
@click.argument("artifact", required=False)
@click.argument("results", nargs=-1, type=click.Path(dir_okay=False))
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
@format_option("text", "json")
@output_option("Write the judgement to FILE.", report=True)
@report_options
@artifact_alias("artifact", rest="results")
def judge(  # noqa: PLR0917 - click passes every option as an argument
    artifact: str | None,
    results: tuple[str, ...],
    workspace: Path | None,
    level: float,
    floor: float,
    max_log_bytes: int,
    fmt: str,
    output: str | None,
) -> None:
    """Judge the results file an agent left (never believing it).

    ARTIFACT (or -C) is the artifact (with its reference observations); RESULTS the agent's
    bench-results.json.
    """
    from reprobridge_sdk.authoring.submissions import open_artifact
    from reprobridge_sdk.bench.judge import judge_results

    if len(results) != 1:
        raise click.UsageError("give one RESULTS file after the ARTIFACT")
    with failing(), open_artifact(_required(artifact)) as opened:
        assert opened.root is not None  # open_artifact raises otherwise
        judgement = judge_results(
            opened.root,
            Path(results[0]),
            workspace=workspace,
            level=level,
            floor=floor,
            max_log_bytes=max_log_bytes,
        )
    count(claim.findings for claim in judgement.claims)
    if fmt == "json":
        write_json(judgement.model_dump(mode="json"), output)
    else:
        write_output(_text(judgement), output)


def _bytes_option(text: str | None, name: str) -> int | None:
    """A size option (``512MiB``) in bytes; None when not given."""
    import re

    from reprobridge_sdk.model.launcher import MEMORY_PATTERN, memory_bytes

    if text is None:
        return None
    if not re.fullmatch(MEMORY_PATTERN, text):
        raise click.BadParameter(f"{text!r} is not a size such as 512MiB", param_hint=name)
    return memory_bytes(text)


@bench.command("run")
@click.argument("agent")
@click.argument("suite", type=click.Path(path_type=Path, dir_okay=False))
@output_option(
    "The folder of the runs and the report (report.json, .txt, .csv and .html).",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
)
@click.option(
    "--variants",
    "names",
    default="raw,refined",
    show_default=True,
    help="Comma-separated variants, or 'all'.",
)
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True)
@executor_options
@click.option(
    "--also",
    "others",
    multiple=True,
    help="Another agent to run over the same suite (repeatable): agent-versus-agent rows.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=3600.0,
    show_default=True,
    help="Wall-time seconds per run (a suite budget's time wins).",
)
@click.option(
    "--cpu-time",
    type=click.FloatRange(min=1),
    default=None,
    help="CPU seconds per process (RLIMIT_CPU).",
)
@click.option("--memory", default=None, help="Address space per process, e.g. 4GiB (RLIMIT_AS).")
@click.option(
    "--max-output",
    default="16MiB",
    show_default=True,
    help="Output kept before the run is stopped as a flood.",
)
@click.option(
    "--max-file",
    default="4GiB",
    show_default=True,
    help="Largest file a process may write (RLIMIT_FSIZE).",
)
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    default=None,
    help="Stop a run once the cost the agent reports (bench-usage.jsonl) passes this.",
)
@click.option(
    "--network",
    type=click.Choice(["none", "allow", "open"]),
    default="none",
    show_default=True,
    help="The sandbox's network: none; allow (only the --allow-host hosts, through a proxy "
    "the harness starts); or the host's (open).",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="A host the allow policy lets through (repeatable; '.example.org': its subdomains).",
)
@sandbox_option("the agent")
@click.option(
    "--visible",
    multiple=True,
    type=click.Path(exists=True),
    help="A path the sandboxed agent may read (repeatable): its own program.",
)
@click.option("--pass-env", multiple=True, help="A variable the agent gets (repeatable).")
@click.option(
    "--prompt",
    "prompt_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="A prompt template of your own (fields as the spec lists).",
)
@click.option("--fetch", is_flag=True, help="raw: fetch the upstream over the network if needed.")
@click.option(
    "--rerun",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Re-execute this many of the agent's recorded runs per launcher and task, as the "
    "auditor does (audit --rerun), in the sandbox.",
)
@format_option("text", "json")
def run(  # noqa: PLR0917 - click passes every option as an argument
    agent: str,
    suite: Path,
    output: Path,
    names: str,
    repeats: int,
    jobs: int,
    executor: str | None,
    scheduler: str | None,
    shared_fs: bool | None,
    job_extra: tuple[str, ...],
    others: tuple[str, ...],
    timeout: float,
    cpu_time: float | None,
    memory: str | None,
    max_output: str,
    max_file: str,
    max_cost: float | None,
    network: str,
    allow_hosts: tuple[str, ...],
    sandbox: bool,
    visible: tuple[str, ...],
    pass_env: tuple[str, ...],
    prompt_file: Path | None,
    fetch: bool,
    rerun: int,
    fmt: str,
) -> None:
    """Run AGENT over the SUITE: each task, variant and repeat in a fresh sandboxed workspace,
    judged; then report rates, paired tests and verdicts.

    \b
    AGENT is a reference agent (null, readme, oracle) or a command line, run in the
    workspace; {workspace}, {prompt_file}, {prompt}, {task} and {variant} in it are
    replaced. SUITE is a batch file (schema batch-1.0), as for audit --submissions.
    Exit codes: 0 done (whatever the agents did), 2 usage or I/O error.
    """
    from reprobridge_sdk.bench.harness import PROMPT_TEMPLATE, BenchOptions, Budget, run_bench
    from reprobridge_sdk.bench.html import render_html
    from reprobridge_sdk.bench.report import report_csv, report_text
    from reprobridge_sdk.bench.variants import VARIANTS
    from reprobridge_sdk.io.atomic import atomic_write_bytes

    wanted = (
        list(VARIANTS)
        if names.strip() == "all"
        else [n.strip() for n in names.split(",") if n.strip()]
    )
    budget = Budget(
        timeout=timeout,
        cpu=cpu_time,
        memory=_bytes_option(memory, "--memory"),
        max_output=_bytes_option(max_output, "--max-output") or 1,
        max_file=_bytes_option(max_file, "--max-file"),
        max_cost=max_cost,
    )
    if not sandbox:
        warn_unsandboxed("bench run", "the agent")
    with failing(doing="write"):
        template = prompt_file.read_text("utf-8") if prompt_file else PROMPT_TEMPLATE
        options = BenchOptions(
            variants=tuple(wanted),
            repeats=repeats,
            jobs=jobs,
            executor=settings({"executor": executor}).executor,
            executor_options=options_from_flags(scheduler, shared_fs, job_extra),
            sandbox=sandbox,
            network=network,
            allow_hosts=allow_hosts,
            budget=budget,
            visible=tuple(str(Path(v).resolve()) for v in visible),
            pass_env=pass_env,
            prompt=template,
            fetch=fetch,
            rerun=rerun,
        )
        report = run_bench([agent, *others], suite, output, options)
        text = report_text(report)
        atomic_write_bytes(output / "report.txt", text.encode("utf-8"))
        atomic_write_bytes(output / "report.csv", report_csv(report).encode("utf-8"))
        for table in ("rates", "paired"):
            csv_text = report_csv(report, table).encode("utf-8")
            atomic_write_bytes(output / f"report-{table}.csv", csv_text)
        atomic_write_bytes(output / "report.html", render_html(report).encode("utf-8"))
    if fmt == "json":
        write_json(report.model_dump(mode="json"))
    else:
        sys.stdout.write(text)
        note(
            f"wrote {output / 'report.json'}, report.txt, report.csv (runs), report-rates.csv,"
            " report-paired.csv and report.html"
        )


@bench.command("report")
@click.argument("report_file", metavar="REPORT", type=click.Path(path_type=Path, dir_okay=False))
@format_option("text", "json", "csv", "html")
@click.option(
    "--table",
    type=click.Choice(["runs", "rates", "paired"]),
    default="runs",
    show_default=True,
    help="csv: one row per run, per agent and variant (rates, Wilson intervals, time and "
    "cost per success), or per McNemar test of two variants or two agents.",
)
@output_option("Write the report to FILE.", report=True)
def report(report_file: Path, fmt: str, table: str, output: str | None) -> None:
    """Show a bench report again, its rates, paired tests and claims computed from its runs.

    REPORT is the report.json of bench run (or any file of schema bench-report-1.0, whose
    runs alone count).
    """
    from reprobridge_sdk.bench.html import render_html
    from reprobridge_sdk.bench.report import load_report, rebuild, report_csv, report_text

    with failing():
        again = rebuild(load_report(str(report_file)))
    if fmt == "json":
        write_json(again.model_dump(mode="json"), output, sort_keys=True)
        return
    if fmt == "csv":
        write_output(report_csv(again, table), output)
        return
    renders = {"text": report_text, "html": render_html}
    write_output(renders[fmt](again), output)
