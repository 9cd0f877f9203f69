"""Templates: one implementation renders (runner) and recognises (auditor) argv and paths."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.audit.verify import _argv_matches
from reprobridge_sdk.extract.template import (
    Name,
    TemplateError,
    parse_template,
    render_template,
    template_matches,
    template_names,
)
from reprobridge_sdk.model import EvidenceRecord, Launcher
from reprobridge_sdk.run.measure import template_context


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("--seed={seed}", ("--seed=", Name("seed"))),
        ('{{"lr": {lr}}}', ('{"lr": ', Name("lr"), "}")),
        ("{{{seed}}}", ("{", Name("seed"), "}")),
        ("{{seed}}", ("{seed}",)),
        ("plain", ("plain",)),
        ("", ()),
    ],
)
def test_parse(text: str, parts: tuple[Any, ...]) -> None:
    assert parse_template(text) == parts


@pytest.mark.parametrize("text", ["{", "}", "a}b", "{1}", "{a-b}", "{{x}"])
def test_stray_braces_are_errors(text: str) -> None:
    with pytest.raises(TemplateError):
        parse_template(text)
    assert template_names(text)[1] is True
    assert template_matches(text, text, {}) is False


def test_render_and_match_json_argument() -> None:
    text = '{{"lr": {lr}, "flag": {on}}}'
    rendered = render_template(text, {"lr": 0.1, "on": True})
    assert rendered == '{"lr": 0.1, "flag": true}'
    assert template_matches(text, rendered, {"lr": 0.1, "on": True})
    assert not template_matches(text, rendered, {"lr": 0.2, "on": True})
    assert template_matches(text, rendered, {})  # unknown values match any text


def test_missing_name_is_an_error() -> None:
    with pytest.raises(TemplateError):
        render_template("{nope}", {})


_NAMES = st.sampled_from(["seed", "run_dir", "lr", "epochs", "flag"])
_LITERALS = st.text(st.sampled_from(list("ab{}=-: /.\"'\n")), max_size=6)
_PARTS = st.lists(st.one_of(_LITERALS, _NAMES.map(Name)), max_size=6)
_VALUES = st.one_of(
    st.text(st.sampled_from(list("ab{}.*+?()[]\\$^ 0\n")), max_size=6),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)


def _template(parts: list[Any]) -> str:
    """Template source whose literal braces are escaped."""
    out = []
    for part in parts:
        if isinstance(part, Name):
            out.append("{" + part.name + "}")
        else:
            out.append(part.replace("{", "{{").replace("}", "}}"))
    return "".join(out)


@settings(deadline=None)
@given(
    parts=_PARTS,
    values=st.fixed_dictionaries({}, optional=dict.fromkeys(("lr", "epochs", "flag"), _VALUES)),
    seed=st.none() | st.integers(min_value=0, max_value=2**32),
    known=st.sets(_NAMES),
)
@example(parts=['{"lr": ', Name("lr"), "}"], values={"lr": 0.1}, seed=0, known={"lr", "seed"})
def test_law_whatever_is_rendered_matches_its_template(
    parts: list[Any], values: dict[str, Any], seed: int | None, known: set[str]
) -> None:
    text = _template(parts)
    context = template_context(values, seed, Path("/runs/r1"))
    try:
        rendered = render_template(text, context)
    except TemplateError:
        return  # a name the context lacks: the runner records a failure, not an argv
    visible = {name: value for name, value in context.items() if name in known}
    assert template_matches(text, rendered, visible)


_ARGS = st.lists(st.builds(_template, _PARTS), min_size=0, max_size=4)


@settings(deadline=None)
@given(args=_ARGS, lr=_VALUES, seed=st.integers(min_value=0, max_value=1000))
@example(args=['{{"lr": {lr}}}', "--out={run_dir}/m.json", "{{}}"], lr=0.1, seed=3)
def test_law_the_auditor_accepts_what_the_runner_records(
    args: list[str], lr: Any, seed: int
) -> None:
    launcher = Launcher.model_validate(
        {
            "id": "train",
            "argv": ["python", "train.py", *args],
            "seeds": [seed],
            "scope": "scored",
            "params": {"lr": lr, "epochs": 3, "flag": False},
        }
    )
    context = template_context(launcher.params, seed, Path("/elsewhere/runs/train-0"))
    try:
        argv = [render_template(arg, context) for arg in launcher.argv]
    except TemplateError:
        return  # the runner records a template-error failure; there is no argv to judge
    record = EvidenceRecord.model_validate(
        {
            "run_id": "train-0",
            "artifact": "demo",
            "launcher": "train",
            "argv": argv,
            "workdir": ".",
            "seed": seed,
            "scope": "scored",
            "params": dict(launcher.params),
            "status": "succeeded",
            "started_at": "2026-01-01T00:00:00Z",
        }
    )
    assert _argv_matches(launcher, record)
    if args:  # and another command is not accepted
        other = record.model_copy(update={"argv": [*argv[:-1], argv[-1] + "x"]})
        assert not _argv_matches(launcher, other) or "{run_dir}" in args[-1]


@given(
    value=st.text(
        alphabet=st.sampled_from(list("ab 1;'\"$`\\|&()*?{}\n\t")), min_size=0, max_size=12
    ),
    seed=st.integers(min_value=0, max_value=10**6),
)
@example(value="a b", seed=0)
@example(value="x $(touch PWNED)", seed=1)
@example(value="it's", seed=2)
def test_law_the_auditor_accepts_what_the_runner_records_for_a_shell_launcher(
    value: str, seed: int
) -> None:
    """A shell launcher's command line gets its values quoted for the shell (the runner's own
    render_argv); the auditor matches with the same quoting, so no false A015."""
    from reprobridge_sdk.run._execute import render_argv

    launcher = Launcher.model_validate(
        {
            "id": "train",
            "shell": True,
            "argv": ["python train.py --tag {tag} --seed {seed} > {run_dir}/log && echo {{done}}"],
            "seeds": [seed],
            "scope": "scored",
            "params": {"tag": value},
        }
    )
    context = template_context(launcher.params, seed, Path("/elsewhere/runs/train 0"))
    argv = render_argv(launcher, context)
    record = EvidenceRecord.model_validate(
        {
            "run_id": "train-0",
            "artifact": "demo",
            "launcher": "train",
            "argv": argv,
            "shell": True,
            "workdir": ".",
            "seed": seed,
            "scope": "scored",
            "params": dict(launcher.params),
            "status": "succeeded",
            "started_at": "2026-01-01T00:00:00Z",
        }
    )
    assert _argv_matches(launcher, record)
    unquoted = argv[0].replace(shlex.quote(value), value, 1) if value else argv[0] + " x"
    if unquoted != argv[0]:  # the same command without the runner's quoting is not its command
        tampered = record.model_copy(update={"argv": [unquoted]})
        assert not _argv_matches(launcher, tampered)
