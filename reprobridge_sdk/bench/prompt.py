"""The prompt an agent is given: a template with the claim, the workspace's layout and what
to leave behind. See spec §18.5."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.findings import finding

from .judge import RESULTS_NAME
from .outcome import USAGE_NAME

__all__ = ["PROMPT_FIELDS", "PROMPT_TEMPLATE", "check_template", "render_prompt"]


PROMPT_TEMPLATE = """\
# Reproduce a claim of a paper

You are in a workspace that holds the material of one research artifact: `{artifact}`.
Reproduce this claim of its paper:

- task: `{task}`{title}
- metric: {metric}
- dataset: {dataset}
- the paper reports: {published} ({direction} is better){location}

The workspace (variant `{variant}`) holds:

{layout}

Work only inside the workspace; the network is {network}. When you are done, leave at the
workspace's root:

1. `{results}`: the results file (schema `bench-results-1.0`):
   `{{"bench_results_version": "1.0", "results": [{{"task": "{task}", "value": <number or
   null>, "runs": [{{"log": "<path>", "outputs": {{"<output id>": "<path>"}}, "seed": <int>}}]}}]}}`
   with paths relative to the workspace.
2. The logs (stdout and stderr) and output files of every run your value comes from, at the
   paths the results file names. A value without logs counts as unsupported: the judge
   re-reads every value from your logs and never takes your word for it.

Optionally append usage lines to `{usage}`: `{{"tokens": <int>, "cost": <number>}}`, one
JSON object per line.
"""


def _published(task: Any) -> str:
    published = task.published
    unit = f" {published.unit}" if getattr(published, "unit", None) else ""
    if published.value is not None:
        return f"{published.value:g}{unit}"
    if published.range is not None:
        low, high = published.range
        return f"{low:g} to {high:g}{unit}"
    return "a value"


def _layout(workspace: Path) -> str:
    entries = sorted(workspace.iterdir(), key=lambda p: p.name)
    lines = [f"- `{p.name}{'/' if p.is_dir() and not p.is_symlink() else ''}`" for p in entries]
    if len(lines) > 50:
        lines = [*lines[:50], f"- ... and {len(lines) - 50} more"]
    return "\n".join(lines) or "- (nothing)"


def render_prompt(  # noqa: PLR0917 - the fields of one prompt
    template: str, manifest: Any, task_id: str, variant: str, workspace: Path, network: str
) -> str:
    """The prompt of one run: ``template`` with the claim, the layout and what to leave.

    The fields are spec/bench.md §18.5 (step 2); any other field is a usage error (N004).
    """
    task = manifest.task(task_id)
    location = task.location.model_dump(exclude_none=True) if task.location else {}
    where = ", ".join(f"{k} {v}" for k, v in location.items())
    values = {
        **dict.fromkeys(PROMPT_FIELDS, ""),
        "artifact": manifest.artifact.id,
        "task": task.id,
        "title": f" ({task.title})" if task.title else "",
        "metric": task.metric,
        "dataset": task.dataset,
        "published": _published(task),
        "direction": task.direction,
        "location": f"; in the paper: {where}" if where else "",
        "variant": variant,
        "layout": _layout(workspace),
        "network": "off" if network == "none" else "on",
        "results": RESULTS_NAME,
        "usage": USAGE_NAME,
    }
    try:
        return template.format_map(values)
    except (KeyError, ValueError, IndexError) as exc:
        message = f"the prompt template cannot be rendered: {exc!r}"
        hint = f"use the fields {', '.join(sorted(values))}; write braces as {{{{ and }}}}"
        raise UsageError(message, [finding("N004", message, hint=hint)]) from None


#: The fields a prompt template may name (:func:`render_prompt`).
PROMPT_FIELDS = (
    "artifact",
    "task",
    "title",
    "metric",
    "dataset",
    "published",
    "direction",
    "location",
    "variant",
    "layout",
    "network",
    "results",
    "usage",
)


def check_template(template: str) -> None:
    """Raise :class:`UsageError` (N004) when ``template`` names a field that is not one of
    :data:`PROMPT_FIELDS` or is not a format string, before any agent runs."""
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        names = {f"<{exc}>"}
    unknown = sorted(n for n in names if n not in PROMPT_FIELDS)
    if unknown:
        message = f"the prompt template names unknown field(s): {', '.join(unknown)}"
        hint = f"use the fields {', '.join(PROMPT_FIELDS)}; write braces as {{{{ and }}}}"
        raise UsageError(message, [finding("N004", message, hint=hint)])
