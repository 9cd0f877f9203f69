"""What verifying a run needs of its launcher: its command as the runner records it, and
each task's value re-extracted from the run's own files with the launcher's extractor
(A007, A008, A018, A019, A035, A061, A062). See spec §11.2."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path

from reprobridge_sdk.env.snapshot import redact_text
from reprobridge_sdk.extract.extraction import (
    ExtractionCache,
    ExtractionError,
    OpenedFile,
    extract_value,
)
from reprobridge_sdk.extract.template import shell_template_matches, template_matches
from reprobridge_sdk.findings import Severity
from reprobridge_sdk.model import EvidenceRecord, Launcher, MeasuredValue, Measurement, OutputRecord

from ._artifact import ArtifactFacts
from ._evidence import RunEvidence

__all__: list[str] = []


def _argv_matches(launcher: Launcher, record: EvidenceRecord, plan: _Plan | None = None) -> bool:
    """The record's argv is the launcher's argv with templates filled in.

    The program (``argv[0]``) may have been resolved to a path (an interpreter in a virtual
    environment); its file name must then start with the declared one's. Template values
    come from the seed and the params; unknown templates match anything. ``plan``: the
    launcher's (its redacted argv and program name made once).
    """
    want = plan.argv if plan is not None else _redacted_argv(tuple(launcher.argv))
    got = record.argv
    if len(want) != len(got) or not got:
        return False
    values: dict[str, object] = {**launcher.params, **record.params}
    if record.seed is not None:
        values["seed"] = record.seed
    if launcher.shell:
        # The command line is rendered with every value quoted for the shell where it stands
        # (the runner's render_argv): match it with the same quoting.
        first = want[0] == got[0] or shell_template_matches(want[0], got[0], values)
        return first and all(
            _arg_matches(w, g, values) for w, g in zip(want[1:], got[1:], strict=True)
        )
    program = _file_name(got[0])
    declared = plan.program if plan is not None else _file_name(launcher.argv[0])
    if got[0] != launcher.argv[0] and not (
        program.startswith(declared)
        or (declared.startswith("python") and program.startswith("python"))
    ):
        return False
    return all(_arg_matches(w, g, values) for w, g in zip(want[1:], got[1:], strict=True))


def _file_name(path: str) -> str:
    """``PurePosixPath(path).name`` without the path object: the last component that is not
    empty or ``.`` (``""`` when there is none)."""
    if "/" not in path:
        return "" if path == "." else path
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return parts[-1] if parts else ""


def _arg_matches(want: str, got: str, values: Mapping[str, object]) -> bool:
    """:func:`~reprobridge_sdk.extract.template.template_matches`, answered without building a
    pattern for an argument without braces: such a template is one literal, rendered as
    itself, so it matches exactly the equal string (a regex compiled per run's argument
    missed ``re``'s cache on every run of a large attempt)."""
    if "{" not in want and "}" not in want:
        return want == got
    return template_matches(want, got, values)


@functools.lru_cache(maxsize=1024)
def _redacted_argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    """A launcher's argv with credentials redacted (:func:`redact_text`), as the runner records
    it: made once per launcher (its runs share it), each word redacted once per process (the
    launchers of an artifact repeat most words)."""
    return tuple(_redacted_word(w) for w in argv)


@functools.lru_cache(maxsize=4096)
def _redacted_word(word: str) -> str:
    """:func:`redact_text` of one word: it depends on the string alone, so a kept result is
    the one recomputing would give."""
    return redact_text(word)


class _Plan:
    """What verifying a run needs of its launcher, made once per launcher and attempt: the
    outputs the measurements read, the launcher's argv as the runner records it and its
    program's file name."""

    __slots__ = ("argv", "launcher", "program", "wanted")

    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher
        self.wanted = {m.extract.output for m in launcher.measurements if m.extract.file is None}
        self.argv = _redacted_argv(tuple(launcher.argv))
        self.program = _file_name(launcher.argv[0]) if launcher.argv else ""


#: The plans of an attempt's launchers, by launcher id.
_Plans = dict[str, _Plan]


def _plan(launcher: Launcher, plans: _Plans) -> _Plan:
    plan = plans.get(launcher.id)
    if plan is None or plan.launcher is not launcher:
        plan = plans[launcher.id] = _Plan(launcher)
    return plan


def _template_context(run: RunEvidence, record: EvidenceRecord) -> dict[str, object]:
    """The values the run's extractors' templates are rendered with."""
    context: dict[str, object] = {**record.params, "run_dir": str(run.path)}
    if record.seed is not None:
        context["seed"] = record.seed
    return context


def _measure(
    run: RunEvidence,
    *,
    add: Callable[..., None],
    measurement: Measurement,
    record: EvidenceRecord,
    outputs: dict[str, tuple[OutputRecord, str | None, bool]],
    facts: ArtifactFacts,
    log_path: str | None,
    log_ok: bool,
    pointer: str,
    claimed: MeasuredValue | None,
    cache: ExtractionCache | None,
    kept: Mapping[str | None, OpenedFile] | None = None,
) -> float | None:
    """Re-extract one task's value from the run's files; ``None`` when it does not count.

    A file kept open (``kept``, the one whose digest was just checked) is read through its
    descriptor, never opened again by name."""
    extractor = measurement.extract
    task = measurement.task
    source: str | None
    trusted: bool
    if extractor.output is not None:
        entry = outputs.get(extractor.output)
        if entry is None:
            add("A008", f"task {task}: output {extractor.output} is not recorded", pointer)
            return None
        output, source, trusted = entry
        if output.preexisting:
            add("A018", f"task {task}: output {output.id} existed before the run", pointer)
            return None
        if source is not None and output.sha256 in facts.shipped:
            add(
                "A019",
                f"task {task}: output {output.id} is a file shipped in the artifact's code",
                pointer,
            )
            return None
        if source is not None and output.sha256 in facts.samples:
            add(
                "A035",
                f"task {task}: output {output.id} is byte-identical to a declared sample",
                pointer,
                hint="expected of a deterministic experiment; the value counts",
            )
            run.task_notes.setdefault(task, []).append(run.findings[-1])
    elif extractor.file is not None:
        add(
            "A008",
            f"task {task}: the value is read from a file the record does not cover",
            pointer,
            hint="declare the file as an output so the run records its digest",
            severity=Severity.WARNING,
        )
        return None
    else:
        source, trusted = log_path, log_ok
    if source is None or not trusted:
        return None  # the digest finding already says why

    opened = None if kept is None else kept.get(extractor.output)
    try:
        extracted = extract_value(
            facts.extractor(record.launcher, measurement),
            log=Path(source),
            files_base=run.path,
            outputs={},
            context=_template_context(run, record),
            cache=cache,
            root=run.path,
            transform=measurement.transform,
            opened=opened,
        )
        # As the runner does: each value transformed; several ('all') count as their mean.
        return extracted.mean
    except ExtractionError as exc:
        if exc.why.audit is not None:
            # Not the evidence's fault: this auditor cannot read the value (A061, A062).
            code = exc.why.audit
            hint = exc.findings[0].hint if exc.findings else None
            add(code, f"task {task}: cannot re-extract the value: {exc}", pointer, hint=hint)
            run.unread[task] = run.findings[-1]
            return None
        severity = Severity.WARNING if claimed is None or claimed.value is None else None
        add(
            "A008",
            f"task {task}: cannot re-extract the value: {exc}",
            pointer,
            severity=severity,
        )
        return None
