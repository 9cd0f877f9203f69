"""Evidence verification details, on fresh runs of the real runner."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from audit_support import make_artifact, run_honestly
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit._reextract import _arg_matches, _file_name, _Plan
from reprobridge_sdk.extract.template import template_matches
from reprobridge_sdk.model import Launcher


def test_all_occurrences_with_rounding_reextract_like_the_runner(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "toy")
    path = root / "rra.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    for launcher in data["launchers"]:
        launcher["measurements"][0] = {
            "task": "acc",
            "extract": {
                "kind": "regex",
                "pattern": r"epoch \d+ loss ([0-9.]+)",
                "occurrence": "all",
            },
            # Rounding each value and then averaging differs from averaging and then rounding.
            "transform": {"scale": 33.3, "round": 1},
        }
        launcher["measurements"][1]["extract"] = {
            "kind": "json",
            "file": "results/metrics-{seed}.json",
            "pointer": "/test/f1",
        }
        launcher["outputs"] = []
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    run_honestly(root, "scored", [0, 1, 2])
    result = audit(root)
    runs = result.attempts[0].runs
    assert all(r.valid for r in runs)
    assert {f.code for r in runs for f in r.findings} == {"A008"}  # the file is not evidence
    acc, f1 = result.tasks
    assert acc.attempts[0].verdict == "incompatible"  # honest, only far from the references
    assert [r.code for r in acc.attempts[0].reasons] == ["A029"]
    assert f1.attempts[0].verdict == "not-executed"
    reasons = f1.attempts[0].reasons
    assert [r.code for r in reasons] == ["A024", "A008", "A008", "A008"]  # one per run
    assert {r.file for r in reasons[1:]} == {f"scored-s{s}/record.json" for s in (0, 1, 2)}
    assert {r.severity for r in reasons[1:]} == {"warning"}
    # The value is the mean of the rounded per-epoch values, as the runner records it.
    losses = [round(33.3 * float(f"{1.0 / (e + 1):.4f}"), 1) for e in range(10)]
    assert acc.attempts[0].value == sum(losses) / len(losses)


@settings(max_examples=300, deadline=None)
@given(
    want=st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=12),
    got=st.text(max_size=12),
)
@example(want="--seed", got="--seed")
@example(want="a.b*", got="aXbb")
@example(want="", got="")
def test_an_argument_without_braces_matches_as_the_template_does(want: str, got: str) -> None:
    """The auditor's shortcut for literal arguments gives ``template_matches``'s answer."""
    for candidate in (got, want):
        assert _arg_matches(want, candidate, {"seed": 1}) is template_matches(
            want, candidate, {"seed": 1}
        )


@settings(max_examples=300)
@given(path=st.text(alphabet="ab./", max_size=8))
@example(path="")
@example(path=".")
@example(path="//")
@example(path="a/.")
@example(path="a/..")
@example(path="/usr/bin/python3/")
def test_the_program_s_file_name_is_the_path_s_name(path: str) -> None:
    """The program name A015 compares is ``PurePosixPath(...).name``, made without the path."""
    assert _file_name(path) == PurePosixPath(path).name


def test_a_launchers_plan_names_the_outputs_read_and_the_recorded_argv() -> None:
    """The launcher's plan, made once per attempt: the outputs its measurements read (those
    kept open for re-extraction) and its argv and program as the runner records them."""
    launcher = Launcher.model_validate(
        {
            "id": "l",
            "argv": ["python", "main.py"],
            "scope": "scored",
            "outputs": [{"id": "m", "path": "m.json"}],
            "measurements": [
                {"task": "a", "extract": {"kind": "json", "output": "m", "pointer": "/first"}},
                {"task": "b", "extract": {"kind": "json", "output": "m", "pointer": "/b"}},
                {
                    "task": "a",
                    "extract": {"kind": "json", "output": "m", "pointer": "/second"},
                    "transform": {"scale": 2.0},
                },
            ],
        }
    )
    plan = _Plan(launcher)
    assert plan.wanted == {"m"}
    assert (plan.argv, plan.program) == (("python", "main.py"), "python")
