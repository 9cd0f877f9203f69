"""The command line's rules (docs/cli.md) hold for every command, found by walking click's tree.

Every command answers ``--help`` on stdout and exits 0. Every command has a failing case in
:data:`FAILING` (a test fails for a command that has none, so a new command is covered): it
exits as docs/cli.md states (1 findings or a failed step, 2 usage or I/O error), its findings
are on stdout in the one line shape (``path:line:col: CODE severity message``, then an
indented ``hint:`` line), and stderr holds no finding, no traceback, and each error once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from reprobridge_sdk.cli import cli
from reprobridge_sdk.cli._executor import EXECUTOR_CHOICE
from reprobridge_sdk.plugins import BUILT_IN, REPORT_FORMATS
from reprobridge_sdk.run.executors import EXECUTORS

#: A finding in the one line shape: ``where: CODE severity message``.
FINDING = re.compile(r"^(?P<where>\S.*?): (?P<code>[A-Z]\d{3}) (?P<sev>error|warning|info) \S")
#: Anything that names a code and a severity, in any order: a finding in some other shape.
CODE_WORDS = re.compile(r"\b[A-Z]\d{3}\b.*\b(error|warning)\b|\b(error|warning)\b.*\b[A-Z]\d{3}\b")


def _walk(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            yield from _walk(command, (*prefix, name))
        else:
            yield (*prefix, name)


COMMANDS = sorted(_walk(cli))

#: A failing invocation of each command, in an empty directory (``{missing}`` is a path that
#: does not exist there), with the exit status docs/cli.md gives it.
FAILING: dict[tuple[str, ...], tuple[list[str], int]] = {
    ("audit",): (["{missing}"], 2),
    ("bench", "judge"): (["{missing}", "{missing}"], 2),
    ("bench", "report"): (["{missing}"], 2),
    ("bench", "run"): (["{missing}", "{missing}", "-o", "out"], 2),
    ("bench", "variants"): (["{missing}", "-o", "out"], 2),
    ("build",): (["{missing}"], 2),
    ("check",): (["{missing}"], 2),
    ("code", "diff"): (["{missing}"], 2),
    ("code", "import"): (["{missing}", "-C", "."], 2),
    ("code", "record"): (["{missing}"], 2),
    ("code", "status"): (["{missing}"], 2),
    ("data", "fetch"): (["{missing}"], 2),
    ("data", "verify"): (["{missing}"], 2),
    ("digest",): (["{missing}"], 2),
    ("env", "check"): (["{missing}"], 2),
    ("env", "create"): (["{missing}"], 2),
    ("env", "snapshot"): (["--python", "{missing}"], 2),
    ("export", "citation"): (["{missing}"], 2),
    ("export", "ro-crate"): (["{missing}", "-o", "out"], 2),
    ("extract",): (["{missing}"], 2),
    ("guide",): (["{missing}"], 2),
    ("init",): (["{missing}", "--yes", "--id", "Not An Id!"], 2),
    ("keys", "generate"): (["bad name/with a slash"], 2),
    ("lock",): (["{missing}"], 2),
    ("pack",): (["{missing}"], 2),
    ("plugins",): (["--format", "yaml"], 2),
    ("references", "add"): (["{missing}", "-C", "."], 2),
    ("references", "import-mlflow"): (["{missing}", "-C", "."], 2),
    ("review",): (["{missing}"], 2),
    ("run",): (["{missing}"], 2),
    ("schema",): (["no-such-schema"], 2),
    ("unpack",): (["{missing}", "dest"], 2),
    ("upgrade",): (["{missing}"], 1),
    ("validate",): (["{missing}"], 2),
}


def _invoke(args: list[str]) -> click.testing.Result:
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def _check_shape(result: click.testing.Result) -> None:
    """Findings on stdout in the one line shape; stderr holds none, and no traceback."""
    lines = result.stdout.splitlines()
    for index, line in enumerate(lines):
        if FINDING.match(line) and index + 1 < len(lines) and "hint:" in lines[index + 1]:
            assert lines[index + 1].startswith("    hint: "), lines[index + 1]
    for line in result.stderr.splitlines():
        assert not FINDING.match(line), f"a finding on stderr: {line!r}"
        assert not CODE_WORDS.search(line), f"a finding in another shape on stderr: {line!r}"
        assert "Traceback" not in line
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == len(set(errors)), f"an error printed twice: {errors}"
    assert not (FINDING_CODES(result.stdout) & FINDING_CODES(result.stderr))


def FINDING_CODES(text: str) -> set[str]:
    return {m["code"] for m in map(FINDING.match, text.splitlines()) if m}


def test_every_command_has_a_failing_case() -> None:
    assert set(COMMANDS) == set(FAILING), set(COMMANDS) ^ set(FAILING)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help(command: tuple[str, ...]) -> None:
    result = _invoke([*command, "--help"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Usage: ")
    assert result.stderr == ""


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_failing_case(
    command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args, status = FAILING[command]
    argv = [arg.replace("{missing}", str(tmp_path / "missing")) for arg in args]
    result = _invoke([*command, *argv])
    assert result.exit_code == status, (result.stdout, result.stderr)
    _check_shape(result)
    assert result.stdout.strip() or result.stderr.strip(), "a failure says why"


def _options(command: tuple[str, ...]) -> list[click.Option]:
    group: click.Command = cli
    ctx = click.Context(cli)
    for name in command:
        assert isinstance(group, click.Group)
        found = group.get_command(ctx, name)
        assert found is not None
        group = found
    return [p for p in group.params if isinstance(p, click.Option)]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_machine_output_is_format_from_one_list(command: tuple[str, ...]) -> None:
    """``--format`` offers values of the one list (lock's deprecated lock formats aside), and
    no command shows a ``--json`` flag any more."""
    legacy = {"requirements", "pylock"} if command == ("lock",) else set()
    for option in _options(command):
        if "--format" in option.opts and isinstance(option.type, click.Choice):
            assert set(option.type.choices) - legacy <= set(BUILT_IN[REPORT_FORMATS])
        if "--json" in option.opts:
            assert option.hidden, f"{' '.join(command)} shows --json"


def test_json_is_a_deprecated_spelling_of_format_json() -> None:
    old = _invoke(["plugins", "--json"])
    new = _invoke(["plugins", "--format", "json"])
    assert old.exit_code == new.exit_code == 0
    assert json.loads(old.stdout) == json.loads(new.stdout)
    assert "--json is deprecated" in old.stderr and "use --format json" in old.stderr
    assert "deprecated" not in new.stderr


@pytest.mark.parametrize("fmt", ["requirements", "pylock"])
def test_lock_format_keeps_its_old_spelling_with_a_warning(tmp_path: Path, fmt: str) -> None:
    old = _invoke(["lock", str(tmp_path / "missing"), "--format", fmt])
    new = _invoke(["lock", str(tmp_path / "missing"), "--lock-format", fmt])
    assert old.exit_code == new.exit_code == 2
    assert old.stdout == new.stdout  # the same finding (Y010), once
    assert f"--format {fmt} is deprecated" in old.stderr
    assert f"--lock-format {fmt}" in old.stderr
    assert "deprecated" not in new.stderr


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [(["valdate"], "validate"), (["env", "chek"], "check"), (["bench", "juge"], "judge")],
)
def test_a_misspelt_command_gets_a_suggestion(argv: list[str], suggestion: str) -> None:
    result = _invoke(argv)
    assert result.exit_code == 2
    assert f"No such command {argv[-1]!r}. Did you mean {suggestion!r}?" in result.stderr
    assert result.stdout == ""


def test_a_word_near_no_command_gets_no_suggestion() -> None:
    result = _invoke(["zzzzzz"])
    assert result.exit_code == 2
    assert "No such command 'zzzzzz'." in result.stderr
    assert "Did you mean" not in result.stderr


def test_executor_offers_its_choices() -> None:
    assert tuple(EXECUTOR_CHOICE.choices) == EXECUTORS
    result = _invoke(["run", ".", "--executor", "nonesuch"])
    assert result.exit_code == 2
    assert "'local', 'dask-local', 'dask', 'slurm'" in result.stderr
    for command in COMMANDS:
        for option in _options(command):
            if "--executor" in option.opts:
                assert option.type is EXECUTOR_CHOICE, command


BROKEN = Path(__file__).parent / "validate" / "vectors" / "misspelled-task-key"
#: The commands that report findings, each with the reporting options.
REPORTING = [
    ("validate",),
    ("audit",),
    ("review",),
    ("check",),
    ("env", "check"),
    ("data", "fetch"),
    ("data", "verify"),
    ("bench", "judge"),
]


@pytest.mark.parametrize("command", REPORTING, ids=" ".join)
def test_the_reporting_commands_have_the_reporting_options(command: tuple[str, ...]) -> None:
    names = {name for option in _options(command) for name in option.opts}
    assert {"-q", "--quiet", "--exit-zero", "--statistics", "--color"} <= names


def test_quiet_prints_the_diagnostics_only() -> None:
    loud = _invoke(["validate", str(BROKEN)])
    quiet = _invoke(["validate", "-q", str(BROKEN)])
    assert loud.exit_code == quiet.exit_code == 1
    assert loud.stdout.splitlines()[-1].startswith("1 artifact checked:")
    assert quiet.stdout.splitlines() == loud.stdout.splitlines()[:-1]
    assert FINDING_CODES(quiet.stdout) == {"S001", "S002"}


def test_exit_zero_and_statistics(tmp_path: Path) -> None:
    result = _invoke(["validate", "--exit-zero", "--statistics", str(BROKEN)])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["    1  S001  unknown-key", "    1  S002  missing-key"]
    # a usage or I/O error is not a finding to waive
    assert _invoke(["validate", "--exit-zero", str(tmp_path / "missing")]).exit_code == 2


def test_statistics_as_json_and_to_a_file(tmp_path: Path) -> None:
    as_json = _invoke(["validate", "--statistics", "--format", "json", str(BROKEN)])
    assert as_json.exit_code == 1
    expected = [
        {"code": "S001", "name": "unknown-key", "count": 1},
        {"code": "S002", "name": "missing-key", "count": 1},
    ]
    assert json.loads(as_json.stdout) == expected
    target = tmp_path / "stats.json"
    to_file = _invoke(
        ["validate", "--statistics", "--format", "json", "-o", str(target), str(BROKEN)]
    )
    assert to_file.exit_code == 1
    assert to_file.stdout == ""
    assert json.loads(target.read_text("utf-8")) == expected
    # another reporting command counts the findings of its own report
    verify = _invoke(["data", "verify", "--statistics", "--format", "json", str(BROKEN)])
    assert verify.exit_code in (0, 1)
    assert isinstance(json.loads(verify.stdout), list)


def test_statistics_to_a_file_that_cannot_be_written_is_an_io_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    target = tmp_path / "a-file" / "stats.txt"
    result = _invoke(["validate", "--statistics", "--exit-zero", "-o", str(target), str(BROKEN)])
    assert result.exit_code == 2
    _check_shape(result)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1
    assert errors[0].startswith(f"error: cannot write {tmp_path / 'a-file'}")
    assert not target.exists()


def test_bench_judge_needs_one_results_file(tmp_path: Path) -> None:
    for argv in ([str(BROKEN)], ["-C", str(BROKEN)], [str(BROKEN), "a.json", "b.json"]):
        result = _invoke(["bench", "judge", *argv])
        assert result.exit_code == 2, argv
        assert "RESULTS" in result.stderr


def test_a_notice_never_precedes_json_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """N030 (the artifact's own configuration, skipped) goes to stderr, also when JSON was
    chosen by the user's configuration rather than a flag."""
    (tmp_path / "reprobridge.toml").write_text('[report]\nformat = "json"\n')
    artifact = tmp_path / "ART"
    artifact.mkdir()
    (artifact / "rra.yaml").write_text((BROKEN / "rra.yaml").read_text("utf-8"))
    (artifact / "reprobridge.toml").write_text('ignore = ["S"]\n')
    monkeypatch.chdir(artifact)
    result = _invoke(["validate", "."])
    assert result.exit_code == 1
    assert {"S001", "S002"} <= {
        f["code"] for a in json.loads(result.stdout)["artifacts"] for f in a["findings"]
    }
    assert ": N030 info " in result.stderr or ": N030 warning " in result.stderr


def test_listings_are_on_stdout() -> None:
    listing = _invoke(["plugins"])
    assert listing.exit_code == 0
    assert "reprobridge.extractors:" in listing.stdout
    assert "reprobridge.extractors" not in listing.stderr
    schemas = _invoke(["schema", "--list"])
    assert schemas.stdout.startswith("rra-")


def test_bench_takes_the_artifact_with_c_too(tmp_path: Path) -> None:
    results = tmp_path / "bench-results.json"
    results.write_text("{}")
    positional = _invoke(["bench", "judge", str(tmp_path / "missing"), str(results)])
    aliased = _invoke(["bench", "judge", "-C", str(tmp_path / "missing"), str(results)])
    assert positional.exit_code == aliased.exit_code == 2
    assert positional.stdout == aliased.stdout
    assert "missing" in positional.stdout + positional.stderr
    variants = _invoke(["bench", "variants", "-C", str(tmp_path / "missing"), "-o", "out"])
    assert variants.exit_code == 2


@pytest.mark.parametrize(
    ("flag", "env", "painted"),
    [
        ("always", {}, True),
        ("always", {"NO_COLOR": "1"}, True),
        ("never", {"FORCE_COLOR": "1"}, False),
        ("auto", {"FORCE_COLOR": "1"}, True),
        ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
        ("auto", {}, False),  # not a terminal
    ],
)
def test_color(flag: str, env: dict[str, str], painted: bool) -> None:
    result = CliRunner(env=env).invoke(cli, ["validate", "--color", flag, str(BROKEN)])
    assert result.exit_code == 1
    assert ("\x1b[" in result.stdout) is painted
    assert ("\x1b[" in result.stderr) is False


ARTIFACT_ARGUMENTS = {"path", "paths", "artifact"}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_positional_artifact_has_the_c_alias(command: tuple[str, ...]) -> None:
    group: click.Command = cli
    for name in command:
        assert isinstance(group, click.Group)
        found = group.get_command(click.Context(cli), name)
        assert found is not None
        group = found
    optional = [
        p
        for p in group.params
        if isinstance(p, click.Argument) and p.name in ARTIFACT_ARGUMENTS and not p.required
    ]
    if optional:
        assert any("-C" in option.opts for option in _options(command)), command


def test_c_is_the_positional_artifact() -> None:
    positional = _invoke(["validate", "--format", "json", str(BROKEN)])
    aliased = _invoke(["validate", "--format", "json", "-C", str(BROKEN)])
    assert positional.exit_code == aliased.exit_code == 1
    assert json.loads(positional.stdout)["artifacts"] == json.loads(aliased.stdout)["artifacts"]
    twice = _invoke(["digest", str(BROKEN), "-C", str(BROKEN.parent)])
    assert twice.exit_code == 2
    assert "named twice" in twice.stderr


def test_c_with_data_items_keeps_the_items(tmp_path: Path) -> None:
    """``data verify -C PATH ITEM``: the positional argument is then an item."""
    result = _invoke(["data", "verify", "-C", str(BROKEN), "no-such-item"])
    assert result.exit_code == 2
    assert "no-such-item" in result.stdout + result.stderr


def test_o_with_a_format_name_still_writes_that_file_but_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = _invoke(["validate", "-o", "json", str(BROKEN)])
    assert result.exit_code == 1
    assert (tmp_path / "json").read_text("utf-8").count("S001") == 1  # the text report
    assert "-o json writes the report to a file named 'json'" in result.stderr
    assert "deprecated: use --format json" in result.stderr
    quiet = _invoke(["validate", "-o", "./json", str(BROKEN)])
    assert "deprecated" not in quiet.stderr


def test_out_is_a_deprecated_spelling_of_output(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    old = _invoke(["keys", "generate", "alice", "--out", str(tmp_path / "old.key")])
    new = _invoke(["keys", "generate", "bob", "-o", str(tmp_path / "new.key")])
    assert old.exit_code == new.exit_code == 0, old.stderr
    assert (tmp_path / "old.key").is_file() and (tmp_path / "new.key").is_file()
    assert "--out is deprecated" in old.stderr and "-o/--output" in old.stderr
    assert "is deprecated" not in new.stderr
    missing = _invoke(["bench", "variants", str(BROKEN)])
    assert missing.exit_code == 2
    assert "Missing option '-o' / '--output'" in missing.stderr


def test_extract_output_is_a_deprecated_spelling_of_file(tmp_path: Path) -> None:
    args = ["extract", str(tmp_path / "missing"), "--launcher", "x"]
    old = _invoke([*args, "--output", "m=metrics.json"])
    new = _invoke([*args, "--file", "m=metrics.json"])
    assert old.exit_code == new.exit_code == 2
    assert old.stdout == new.stdout
    assert "extract --output ID=FILE is deprecated" in old.stderr
    assert "deprecated" not in new.stderr


def _hand_printed_findings(path: Path) -> list[int]:
    """Lines of f-strings that format a finding's ``code`` and ``message`` themselves."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.JoinedStr):
            names = {
                sub.attr
                for part in node.values
                if isinstance(part, ast.FormattedValue)
                for sub in ast.walk(part.value)
                if isinstance(sub, ast.Attribute)
            }
            if {"code", "message"} <= names:
                found.append(node.lineno)
    return found


def test_findings_are_printed_by_the_one_reporter_only() -> None:
    """No module of the command line writes a finding's line itself: the syntax tree of
    each has no f-string with both a ``.code`` and a ``.message``."""
    package = Path(__file__).resolve().parents[1] / "reprobridge_sdk"
    modules = [*sorted((package / "cli").glob("*.py")), package / "validation" / "reporters.py"]
    offenders = {str(m.relative_to(package)): _hand_printed_findings(m) for m in modules}
    assert {name: lines for name, lines in offenders.items() if lines} == {}


def test_json_is_utf_8_from_every_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A report's JSON (a reporter) and a command's own JSON write other than ASCII as UTF-8
    characters alike, never as ``\\u`` escapes; a lone surrogate (a name that is not UTF-8, a
    stranger's) is the one thing escaped, so stdout is always valid UTF-8."""
    artifact = tmp_path / "café"
    artifact.mkdir()
    (artifact / "rra.yaml").write_text((BROKEN / "rra.yaml").read_text("utf-8"))
    report = _invoke(["validate", "--format", "json", str(artifact)])
    assert report.exit_code == 1
    assert "café" in report.stdout_bytes.decode("utf-8")
    assert json.loads(report.stdout)["artifacts"][0]["path"].endswith("café")
    monkeypatch.setenv("RB_NOTE", "café ✓")
    own = _invoke(["env", "snapshot", "--format", "json", "--var", "RB_NOTE"])
    assert own.exit_code == 0
    assert '"RB_NOTE": "café ✓"' in own.stdout_bytes.decode("utf-8")
    monkeypatch.setenv("RB_NOTE", "caf\udce9")  # the bytes ``caf\xe9``, read as a name is
    hostile = _invoke(["env", "snapshot", "--format", "json", "--var", "RB_NOTE"])
    assert hostile.exit_code == 0
    text = hostile.stdout_bytes.decode("utf-8")
    assert '"RB_NOTE": "caf\\udce9"' in text
    assert json.loads(text)["variables"]["RB_NOTE"] == "caf\udce9"


@pytest.mark.parametrize("value", ["noequals", "=FILE", "ID=", "="])
@pytest.mark.parametrize(
    ("argv", "shape"),
    [
        (["extract", "--launcher", "x", "--file"], "ID=FILE"),
        (["references", "import-mlflow", "store", "--experiment", "e", "--metric"], "METRIC=TASK"),
    ],
)
def test_a_key_value_option_without_both_sides_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, argv: list[str], shape: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = _invoke([*argv, value])
    assert result.exit_code == 2
    assert f"Invalid value for {argv[-1]}: {value!r} is not {shape}" in result.stderr
    assert "Traceback" not in result.stderr
