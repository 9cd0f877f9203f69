"""Terminal safety: an artifact's control sequences never reach the terminal raw.

A clipboard write (OSC 52: ``ESC ] 52 ; c ; ... BEL``), a screen clear (``ESC [ 2 J``), a C1
CSI (U+009B), DEL and CR sit in an artifact's title, in keys and ids, in a log and in a file
name. ``validate``, ``audit`` and ``extract`` run as real subprocesses, with colour off
(``NO_COLOR``) and forced on (``FORCE_COLOR``); their stdout and stderr must hold none of
those characters raw, while ``--format json`` still carries the original text.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from toy_study import make_artifact

from reprobridge_sdk.audit.report import render_junit, render_text
from reprobridge_sdk.cli._run import TerminalBytes
from reprobridge_sdk.findings import finding, terminal_text
from reprobridge_sdk.validation.reporters import render

HOSTILE = "\x1b]52;c;aGVsbG8=\x07\x1b[2J\x9b31m\x7f\r"
_SGR = re.compile("\x1b\\[[0-9;]*m")


def _raw_controls(text: str) -> list[str]:
    """The control characters a terminal would act on: C0 but newline and tab, DEL, C1."""
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def _foreign(text: str) -> list[str]:
    """The raw control characters left once the reporters' own colours (SGR) are taken out."""
    return _raw_controls(_SGR.sub("", text))


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """The toy study with the sequences in its title, an extension key, its sample log and a
    file name."""
    root = make_artifact(tmp_path / "art", sample=True)
    data = yaml.safe_load((root / "rra.yaml").read_text())
    data["artifact"]["title"] = f"Toy {HOSTILE} study"
    data["artifact"][f"x-{HOSTILE}"] = HOSTILE
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    (root / "samples" / "log.txt").write_text(f"epoch 0 {HOSTILE}\ntest accuracy: 90.1000\n")
    (root / "other.log").write_text(f"no value {HOSTILE} here\n")
    (root / f"m{HOSTILE}.json").write_text(f"{{not json {HOSTILE}")
    return root


@pytest.fixture(params=["NO_COLOR", "FORCE_COLOR"])
def colour(request: pytest.FixtureRequest) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"NO_COLOR", "FORCE_COLOR"}}
    env[str(request.param)] = "1"
    return env


def _unknown_key(root: Path) -> Path:
    """``root`` with an unknown key named with the sequences (S001 quotes it)."""
    data = yaml.safe_load((root / "rra.yaml").read_text())
    data["artifact"][f"id{HOSTILE}"] = 1
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    return done


def test_no_control_sequence_of_an_artifact_reaches_the_terminal(
    hostile: Path, colour: dict[str, str]
) -> None:
    invalid = _unknown_key(make_artifact(hostile.parent / "invalid"))
    runs = [
        (["validate", str(invalid)], 1),  # S001 quotes the key
        (["audit", str(hostile)], 1),  # the title; no run yet
        (
            [
                *("extract", str(hostile), "--launcher", "scored"),
                *("--log", str(hostile / "other.log")),
                *("--file", f"metrics={hostile / f'm{HOSTILE}.json'}"),
            ],
            1,
        ),
        (["extract", str(hostile), "--samples"], 0),
    ]
    shown = ""
    for args, status in runs:
        done = _cli(colour, *args)
        assert done.returncode == status, (args, done.stderr)
        assert _foreign(done.stdout) == [], args
        assert _foreign(done.stderr) == [], args
        shown += done.stdout + done.stderr
    escaped = terminal_text(HOSTILE)
    assert f"Toy {escaped} study" in shown  # audit's title, shown
    assert f"m{escaped}.json" in shown  # extract's file name, shown
    assert f"id{escaped}" in shown  # validate's key
    if "NO_COLOR" in colour:
        assert "\x1b" not in shown  # not even a colour


def test_forced_colour_is_only_the_reporters_own(hostile: Path, colour: dict[str, str]) -> None:
    done = _cli(colour, "audit", str(hostile))
    sequences = {part.split("m", 1)[0] for part in done.stdout.split("\x1b[")[1:]}
    assert sequences <= {"0", "2", "31", "32", "33", "36", "1"}  # SGR colours, nothing else
    assert "\x07" not in done.stdout
    assert "\x9b" not in done.stdout


def test_json_carries_the_original_text(hostile: Path, colour: dict[str, str]) -> None:
    report = json.loads(_cli(colour, "audit", str(hostile), "--format", "json").stdout)
    assert report["title"] == f"Toy {HOSTILE} study"
    extracted = _cli(
        colour,
        *("extract", str(hostile), "--launcher", "scored", "--format", "json"),
        *("--log", str(hostile / "other.log")),
        *("--file", f"metrics={hostile / f'm{HOSTILE}.json'}"),
    )
    errors = [m["error"] for m in json.loads(extracted.stdout)["measurements"]]
    assert any(f"m{HOSTILE}.json" in (error or "") for error in errors)
    invalid = _unknown_key(hostile)
    validated = json.loads(_cli(colour, "validate", str(invalid), "--format", "json").stdout)
    pointers = [f["path"] for a in validated["artifacts"] for f in a["findings"]]
    assert f"/artifact/id{HOSTILE}" in pointers  # the key as it is (its message quotes a repr)


@pytest.mark.parametrize(
    ("text", "lines", "shown"),
    [
        ("plain", False, "plain"),
        ("a\tb", False, "a\tb"),
        ("a\nb", False, "a\\nb"),
        ("a\nb", True, "a\nb"),
        ("a\r\nb", True, "a\\r\nb"),
        ("\x1b]52;c;x\x07", False, "\\x1b]52;c;x\\x07"),
        ("\x1b[2J", True, "\\x1b[2J"),
        ("\x00\x7f\x80\x9b\x9f\xa0é", False, "\\x00\\x7f\\x80\\x9b\\x9f\xa0é"),
    ],
)
def test_the_escape(text: str, lines: bool, shown: str) -> None:
    assert terminal_text(text, lines=lines) == shown
    assert _raw_controls(terminal_text(text)) == []


def test_every_text_renderer_escapes_and_json_and_sarif_do_not() -> None:
    found = finding("S001", f"unknown key {HOSTILE}", file=f"f{HOSTILE}", hint=HOSTILE)
    pairs = [(f"label{HOSTILE}", [found])]
    for fmt in ("text", "junit", "github"):
        assert _raw_controls(render(pairs, fmt)) == [], fmt
        assert _foreign(render(pairs, fmt, color=True)) == [], fmt
    assert json.loads(render(pairs, "json"))["artifacts"][0]["findings"][0]["hint"] == HOSTILE
    sarif = json.loads(render(pairs, "sarif"))
    assert sarif["runs"][0]["results"][0]["message"]["text"].startswith("unknown key " + HOSTILE)


def test_the_audit_text_and_junit_reports_escape(hostile: Path) -> None:
    from reprobridge_sdk.audit import audit

    result = audit(hostile)
    assert result.title == f"Toy {HOSTILE} study"
    assert _raw_controls(render_text(result)) == []
    assert _foreign(render_text(result, color=True)) == []
    assert _raw_controls(render_junit(result)) == []


def test_a_launchers_live_output_is_shown_escaped() -> None:
    sink = io.BytesIO()
    live = TerminalBytes(sink)
    data = f"epoch 1 {HOSTILE} é\n".encode()
    for index in range(len(data)):  # one byte at a time: characters split across writes
        live.write(data[index : index + 1])
    assert sink.getvalue().decode() == f"epoch 1 {terminal_text(HOSTILE)} é\n"
