"""The report of ``reprobridge bench run`` (spec/bench.md §18.6; preview).

What it holds, and when a run succeeds, is the spec's; here are its text and CSV forms.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal

from reprobridge_sdk.audit.present import percent as _pct
from reprobridge_sdk.findings import finding_line, terminal_text
from reprobridge_sdk.model.bench import (
    AgentPair,
    BenchReport,
    BenchRun,
    ClaimRow,
    PairedTest,
    RateInterval,
    VariantStat,
)

from .stats import mcnemar, wilson

if TYPE_CHECKING:
    from reprobridge_sdk.model.audit import AuditFinding

    from .harness import BenchOptions

__all__ = [
    "CSV_COLUMNS",
    "CSV_TABLES",
    "PAIRED_COLUMNS",
    "RATE_COLUMNS",
    "build_report",
    "load_report",
    "rebuild",
    "report_csv",
    "report_text",
    "success",
]

CSV_COLUMNS = (
    "agent",
    "submission",
    "artifact",
    "task",
    "variant",
    "repeat",
    "outcome",
    "exit_code",
    "seconds",
    "support",
    "verdict",
    "icml",
    "value",
    "extracted",
    "progress",
    "tokens",
    "cost",
    "folder",
    "executor",
)


def success(run: BenchRun) -> bool:
    """Whether ``run`` reproduced its claim: the judge's ICML label is ``verified``."""
    return run.icml == "verified"


def _stat(agent: str, variant: str, runs: list[BenchRun], level: float) -> VariantStat:
    wins = sum(success(run) for run in runs)
    interval = wilson(wins, len(runs), level)
    progress = [run.progress for run in runs if run.progress is not None]
    costs = [run.usage.cost for run in runs if run.usage.cost is not None]
    return VariantStat(
        agent=agent,
        variant=variant,
        runs=len(runs),
        successes=wins,
        rate=wins / len(runs) if runs else None,
        wilson=RateInterval(low=interval[0], high=interval[1]) if interval else None,
        progress=sum(progress) / len(progress) if progress else None,
        seconds_per_success=sum(run.seconds for run in runs) / wins if wins else None,
        cost_per_success=sum(costs) / wins if wins and costs else None,
        outcomes=dict(sorted(Counter(run.outcome for run in runs).items())),
        icml=dict(sorted(Counter(run.icml for run in runs).items())),
    )


def _counts(
    runs: list[BenchRun], side: Callable[[BenchRun], str], a: str, b: str
) -> dict[str, Any]:
    """The paired counts of sides ``a`` and ``b`` (variants or agents) over the runs of the
    same submission, task and repeat, and McNemar's test of them."""
    keyed: dict[tuple[str, str, int], dict[str, bool]] = defaultdict(dict)
    for run in runs:
        if side(run) in (a, b):
            keyed[(run.submission, run.task, run.repeat)][side(run)] = success(run)
    pairs = [(v[a], v[b]) for v in keyed.values() if a in v and b in v]
    both = sum(x and y for x, y in pairs)
    only_a = sum(x and not y for x, y in pairs)
    only_b = sum(y and not x for x, y in pairs)
    test = mcnemar(only_a, only_b)
    return {
        "a": a,
        "b": b,
        "pairs": len(pairs),
        "both": both,
        "only_a": only_a,
        "only_b": only_b,
        "neither": len(pairs) - both - only_a - only_b,
        "difference": (only_a - only_b) / len(pairs) if pairs else None,
        "p_value": test.p_value,
        "method": "exact" if test.method == "exact" else "chi-square",
    }


def _by_variant(run: BenchRun) -> str:
    return run.variant


def _by_agent(run: BenchRun) -> str:
    return run.agent


def build_report(
    runs: Sequence[BenchRun],
    *,
    suite: str,
    suite_sha256: str,
    agents: list[str],
    options: BenchOptions,
    findings: list[AuditFinding],
) -> BenchReport:
    """The report of ``runs`` (module docstring)."""
    variants = list(options.variants)
    rates: list[VariantStat] = []
    paired: list[PairedTest] = []
    claims: list[ClaimRow] = []
    for agent in agents:
        mine = [run for run in runs if run.agent == agent]
        for variant in variants:
            rates.append(
                _stat(agent, variant, [r for r in mine if r.variant == variant], options.level)
            )
        ordered = _pair_order(variants)
        paired.extend(
            PairedTest(agent=agent, **_counts(mine, _by_variant, a, b)) for a, b in ordered
        )
        grouped: dict[tuple[str, str, str], list[BenchRun]] = defaultdict(list)
        for run in mine:
            grouped[(run.submission, run.task, run.variant)].append(run)
        for (submission, task, variant), group in grouped.items():
            claims.append(
                ClaimRow(
                    agent=agent,
                    submission=submission,
                    task=task,
                    variant=variant,
                    icml=dict(sorted(Counter(r.icml for r in group).items())),
                    verdicts=dict(sorted(Counter(r.verdict for r in group).items())),
                )
            )
    versus = [
        AgentPair(
            variant=variant,
            **_counts([r for r in runs if r.variant == variant], _by_agent, a, b),
        )
        for variant in variants
        for a, b in combinations(agents, 2)
    ]
    return BenchReport(
        suite=suite,
        suite_sha256=suite_sha256,
        agents=agents,
        variants=variants,
        repeats=options.repeats,
        sandbox=options.sandbox,
        executor=_executor(options.executor),
        network=_network(options.network),
        allow_hosts=list(options.allow_hosts),
        budget=asdict(options.budget),
        level=options.level,
        rerun=options.rerun,
        runs=list(runs),
        rates=rates,
        paired=paired,
        versus=versus,
        claims=claims,
        findings=findings,
    )


def _executor(name: str | None) -> Literal["local", "dask-local", "dask", "slurm"]:
    """The executor's name as the report states it (``None`` is the default, ``local``)."""
    for known in ("dask-local", "dask", "slurm"):
        if name == known:
            return known
    return "local"


def _network(policy: str) -> Literal["none", "allow", "open"]:
    if policy == "open":
        return "open"
    return "allow" if policy == "allow" else "none"


def _pair_order(variants: list[str]) -> list[tuple[str, str]]:
    """Each variant against ``raw`` (what the artifact adds), then ``refined`` against each
    masked variant and ``expert`` (what each part adds); without ``raw`` or ``refined``,
    each pair of the variants given."""
    pairs: list[tuple[str, str]] = []
    if "raw" in variants:
        pairs += [(v, "raw") for v in variants if v != "raw"]
    if "refined" in variants:
        pairs += [("refined", v) for v in variants if v not in ("raw", "refined")]
    if not pairs:
        pairs = list(combinations(variants, 2))
    return pairs


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _cost(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _policy(report: BenchReport) -> str:
    if report.network == "allow":
        return f"allow {', '.join(report.allow_hosts)}"
    return report.network


#: Short names of the variants in the claims matrix of the text report.
_SHORT = {
    "masked-environment": "m-env",
    "masked-launchers": "m-launch",
    "masked-extraction": "m-extract",
    "masked-guide": "m-guide",
}


def _claim_matrix(report: BenchReport) -> list[str]:
    variants = report.variants
    width = max([len(_SHORT.get(v, v)) for v in variants] + [5])
    names = sorted({(r.agent, r.submission, r.task) for r in report.claims})
    label = max([len(f"{s}/{t}") for _, s, t in names] + [5]) + 2
    head = f"  {'agent':<10} {'claim':<{label}}" + "".join(
        f" {_SHORT.get(v, v):>{width}}" for v in variants
    )
    rows = [head]
    cells = {(r.agent, r.submission, r.task, r.variant): r for r in report.claims}
    for agent, submission, task in names:
        line = f"  {agent[:10]:<10} {f'{submission}/{task}':<{label}}"
        for variant in variants:
            row = cells.get((agent, submission, task, variant))
            cell = "-" if row is None else f"{row.icml.get('verified', 0)}/{sum(row.icml.values())}"
            line += f" {cell:>{width}}"
        rows.append(line)
    return rows


def _pair_lines(title: str, pairs: list[tuple[str, PairedTest | AgentPair]]) -> list[str]:
    """A McNemar section: the pairs that differ, then how many do not."""
    if not pairs:
        return []
    lines = ["", title]
    differ = [(name, p) for name, p in pairs if p.only_a or p.only_b]
    lines += [
        f"  {name}: {_pct(p.difference)} ({p.pairs} pairs; only a {p.only_a}, only b"
        f" {p.only_b}; p = {p.p_value:.3g}, {p.method})"
        for name, p in differ
    ]
    if len(differ) < len(pairs):
        lines.append(f"  ({len(pairs) - len(differ)} pair(s) with no difference)")
    return lines


def report_text(report: BenchReport) -> str:
    """The report as text: rates, paired tests, claims and what could not be benched."""
    lines = [
        f"bench: {', '.join(report.agents)} over {report.suite}"
        f" ({len(report.runs)} run(s), {report.repeats} repeat(s),"
        f" executor {report.executor}, sandbox {'on' if report.sandbox else 'OFF'},"
        f" network {_policy(report)})",
        "",
        f"{'agent':<10} {'variant':<19} {'runs':>4} {'ok':>3} {'rate':>7}"
        f"  {'95% Wilson':<15} {'landmarks':>9} {'s/success':>9} {'cost/success':>12}"
        "  outcomes",
    ]
    for stat in report.rates:
        interval = f"[{_pct(stat.wilson.low)}, {_pct(stat.wilson.high)}]" if stat.wilson else "-"
        outcomes = ", ".join(f"{k} {v}" for k, v in stat.outcomes.items())
        lines.append(
            f"{stat.agent[:10]:<10} {stat.variant:<19} {stat.runs:>4} {stat.successes:>3}"
            f" {_pct(stat.rate):>7}  {interval:<15} {_pct(stat.progress):>9}"
            f" {_num(stat.seconds_per_success):>9} {_cost(stat.cost_per_success):>12}"
            f"  {outcomes}"
        )
    lines += _pair_lines(
        "paired (McNemar): a - b over the same tasks and repeats",
        [(f"{t.agent[:10]:<10} {t.a} - {t.b}", t) for t in report.paired],
    )
    lines += _pair_lines(
        "agents (McNemar): a - b in each variant, over the same tasks and repeats",
        [(f"{p.variant:<19} {p.a[:20]} - {p.b[:20]}", p) for p in report.versus],
    )
    if report.claims:
        lines += ["", "claims: verified / runs per variant"]
        lines += _claim_matrix(report)
    if report.findings:
        lines += ["", "not benched"]
        lines += [finding_line(item) for item in report.findings]
    return terminal_text("\n".join(lines), lines=True) + "\n"


#: The columns of the rates table (``--table rates``): one row per agent and variant.
RATE_COLUMNS = (
    "agent",
    "variant",
    "runs",
    "successes",
    "rate",
    "wilson_low",
    "wilson_high",
    "level",
    "progress",
    "seconds_per_success",
    "cost_per_success",
    "executor",
)

#: The columns of the paired table (``--table paired``): the variant pairs of each agent
#: (``kind`` ``variants``), then the agent pairs of each variant (``kind`` ``agents``).
PAIRED_COLUMNS = (
    "kind",
    "agent",
    "variant",
    "a",
    "b",
    "pairs",
    "both",
    "only_a",
    "only_b",
    "neither",
    "difference",
    "p_value",
    "method",
)

#: The CSV tables of a report and their columns: ``runs`` (``report.csv``), ``rates`` and
#: ``paired``.
CSV_TABLES = {"runs": CSV_COLUMNS, "rates": RATE_COLUMNS, "paired": PAIRED_COLUMNS}


def _run_rows(report: BenchReport) -> list[dict[str, Any]]:
    rows = []
    for run in report.runs:
        row: dict[str, Any] = run.model_dump(mode="json")
        row["tokens"] = run.usage.tokens
        row["cost"] = run.usage.cost
        row["executor"] = report.executor  # one for the report; on every row, for a filter
        rows.append(row)
    return rows


def _rate_rows(report: BenchReport) -> list[dict[str, Any]]:
    rows = []
    for stat in report.rates:
        row: dict[str, Any] = stat.model_dump(mode="json")
        row["wilson_low"] = stat.wilson.low if stat.wilson else None
        row["wilson_high"] = stat.wilson.high if stat.wilson else None
        row["level"] = report.level
        row["executor"] = report.executor
        rows.append(row)
    return rows


def _paired_rows(report: BenchReport) -> list[dict[str, Any]]:
    pairs = [{"kind": "variants", **p.model_dump(mode="json")} for p in report.paired]
    return pairs + [{"kind": "agents", **p.model_dump(mode="json")} for p in report.versus]


_CSV_ROWS: dict[str, Callable[[BenchReport], list[dict[str, Any]]]] = {
    "runs": _run_rows,
    "rates": _rate_rows,
    "paired": _paired_rows,
}


def report_csv(report: BenchReport, table: str = "runs") -> str:
    """One of the report's CSV tables (:data:`CSV_TABLES`: ``runs``, ``rates``, ``paired``).

    Written as the audit's CSV is (``audit.csv_report.csv_document``).
    """
    from reprobridge_sdk.audit.csv_report import csv_document, csv_text  # noqa: PLC0415

    def cell(value: object) -> str:
        return csv_text(value) if isinstance(value, str) else "" if value is None else str(value)

    columns = CSV_TABLES[table]
    rows = [[cell(row.get(column)) for column in columns] for row in _CSV_ROWS[table](report)]
    return csv_document(columns, rows)


def load_report(path: str) -> BenchReport:
    """The report (``report.json``) at ``path``; :class:`UsageError` (N004) when it is not one."""
    from pydantic import ValidationError  # noqa: PLC0415

    from reprobridge_sdk.errors import UsageError  # noqa: PLC0415
    from reprobridge_sdk.findings import finding  # noqa: PLC0415
    from reprobridge_sdk.io import reading  # noqa: PLC0415

    try:
        return BenchReport.model_validate(reading.read_json(path, unique_keys=True))
    except (reading.Unreadable, ValidationError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        message = f"{path} is not a bench report: {detail}"
        hint = "give the report.json of bench run (schema bench-report-1.0)"
        raise UsageError(message, [finding("N004", message, hint=hint)]) from None


def rebuild(report: BenchReport) -> BenchReport:
    """``report`` with its rates, paired tests and claims computed again from its runs (the
    conformance cases give the runs only)."""
    from .harness import BenchOptions  # noqa: PLC0415

    options = BenchOptions(
        variants=tuple(report.variants),
        repeats=report.repeats,
        sandbox=report.sandbox,
        executor=report.executor,
        network=report.network,
        allow_hosts=tuple(report.allow_hosts),
        level=report.level,
        rerun=report.rerun,
    )
    again = build_report(
        report.runs,
        suite=report.suite,
        suite_sha256=report.suite_sha256,
        agents=list(report.agents),
        options=options,
        findings=list(report.findings),
    )
    again.budget = dict(report.budget)
    return again
