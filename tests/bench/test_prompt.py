"""The prompt an agent is given: the default template is the one the guide documents, and it
renders the claim, the workspace's layout and what to leave (spec bench.md#bench-run)."""

from __future__ import annotations

import re
from pathlib import Path

from reprobridge_sdk.api import load
from reprobridge_sdk.bench.prompt import PROMPT_FIELDS, PROMPT_TEMPLATE, render_prompt

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "digits-logreg"


def test_the_guide_documents_the_default_template_and_its_fields() -> None:
    guide = (ROOT / "docs" / "bench.md").read_text("utf-8")
    section = guide.partition("## The default prompt\n")[2].partition("\n## ")[0]
    block = re.search(r"```text\n(.*?)```", section, re.DOTALL)
    assert block is not None
    assert block.group(1) == PROMPT_TEMPLATE
    assert all(f"`{{{name}}}`" in section for name in PROMPT_FIELDS)


def test_the_default_prompt_of_the_bundled_example(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "rra.yaml").write_text("")
    manifest = load(EXAMPLE).manifest
    text = render_prompt(PROMPT_TEMPLATE, manifest, "logreg-accuracy", "refined", tmp_path, "none")
    task = manifest.task("logreg-accuracy")
    assert f"research artifact: `{manifest.artifact.id}`" in text
    assert f"- task: `logreg-accuracy` ({task.title})" in text
    assert f"- metric: {task.metric}" in text and f"- dataset: {task.dataset}" in text
    assert "the paper reports: 96.9 % (higher is better); in the paper: table 1" in text
    assert "- `code/`\n- `rra.yaml`" in text  # the layout
    assert "the network is off" in text
    assert '"task": "logreg-accuracy"' in text  # the results file to leave, for this task
    assert "`bench-results.json`" in text and "`bench-usage.jsonl`" in text
    assert "{" not in text.replace("{{", "").replace('{"', "")  # every field filled
