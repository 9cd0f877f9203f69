"""Hostile template values in a shell launcher's command line.

A shell launcher's ``argv[0]`` is run by ``/bin/sh -c``. Its template values (``{run_dir}``
from ``--runs-dir``, params) were quoted for the shell as if they stood outside any quotes,
so ``"{run_dir}"`` inside double quotes with a runs directory holding ``"`` and ``$(...)``
ran the command. Each value is now quoted for the place it stands in (outside quotes, inside
double or single quotes); where no quoting holds (backticks, ``${...}``, ``$((...))``, a
here-document) a value with shell characters is a template error, never run. The real
``/bin/sh`` checks every rendering.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from reprobridge_sdk.extract.template import (
    TemplateError,
    render_shell_template,
    shell_template_matches,
)
from reprobridge_sdk.run import run

HOSTILE = [
    'x"; touch PWNED1; echo "',
    "x$(touch PWNED2)",
    "x`touch PWNED3`",
    "x'; touch PWNED4; echo '",
    "with spaces  and\ttabs",
    'x\\"$(touch PWNED5)\\',
    "new\nline; touch PWNED6",
    "$HOME and ${HOME}",
    "",
    "plain-value_1.0",
]


def _sh(command: str, cwd: Path) -> str:
    done = subprocess.run(
        ["/bin/sh", "-c", command], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize(
    "template",
    [
        "printf '%s' {v}",
        "printf '%s' \"{v}\"",
        "printf '%s' '{v}'",
        "printf '%s' \"a{v}b\"",
        "printf '%s' 'a{v}b'",
        "printf '%s' \"$(printf '%s' \"{v}\")\"",
        "printf '%s' \"$(printf '%s' '{v}')\"",
        "# a comment, don't mind it\nprintf '%s' \"{v}\"",
    ],
)
def test_a_value_is_one_literal_word_wherever_it_stands(
    tmp_path: Path, template: str, value: str
) -> None:
    command = render_shell_template(template, {"v": value})
    out = _sh(command, tmp_path)
    assert out == (f"a{value}b" if "a{v}b" in template else value)
    assert not list(tmp_path.glob("PWNED*"))
    assert shell_template_matches(template, command, {"v": value})
    assert shell_template_matches(template, command, {})


@pytest.mark.parametrize(
    "template",
    [
        "printf '%s' `echo {v}`",
        "printf '%s' \"${{X:-{v}}}\"",
        "printf '%s' $(( {v} ))",
        "cat <<EOF\n{v}\nEOF",
    ],
)
def test_a_value_with_shell_characters_where_no_quoting_holds_is_refused(
    template: str,
) -> None:
    with pytest.raises(TemplateError):
        render_shell_template(template, {"v": "x$(touch PWNED)"})
    assert render_shell_template(template, {"v": "42"}).count("42") == 1


def _artifact(root: Path, command: str) -> Path:
    (root / "code").mkdir(parents=True)
    manifest = {
        "rra_version": "1.0",
        "artifact": {"id": "quoted", "title": "Q", "license": "MIT", "paper": {"title": "Q"}},
        "codebase": {
            "upstream": {"repository": "https://example.org/q.git", "commit": "0" * 40},
            "refined": {"kind": "directory", "path": "code"},
        },
        "environment": {"python": f"{sys.version_info.major}.{sys.version_info.minor}"},
        "tasks": [
            {
                "id": "acc",
                "dataset": "d",
                "metric": "m",
                "published": {"value": 1.0},
                "direction": "higher",
                "kind": "full",
            }
        ],
        "launchers": [
            {"id": "sh", "shell": True, "argv": [command], "scope": "smoke", "workdir": "code"}
        ],
    }
    (root / "rra.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def test_a_crafted_runs_dir_inside_double_quotes_runs_nothing(tmp_path: Path) -> None:
    command = "touch \"{run_dir}/double\"; touch '{run_dir}/single'; touch {run_dir}/bare"
    root = _artifact(tmp_path / "art", command)
    runs = tmp_path / "r \"$(touch PWNED1)\" `touch PWNED2` '; touch PWNED3; '"
    (result,) = run(root, ["sh"], env_mode="current", runs_dir=runs).results
    assert result.record.status == "succeeded", result.record.failure
    assert not list(tmp_path.rglob("PWNED*"))
    assert not list((root / "code").glob("PWNED*"))
    for name in ("double", "single", "bare"):
        assert (result.run_dir / name).is_file()
