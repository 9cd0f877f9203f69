"""A plugin that prints never corrupts machine output (hostile: a stranger writes the plugin).

The test distribution's ``rb_test_plugins.loud`` module prints as it is imported, and each of
its plugins (the extractor kind ``x-loud``, the data scheme ``x-loud`` and the report format
``loud``) prints, writes to descriptor 1, runs a subprocess that prints and starts a thread
that prints after the call has returned. The commands run as real processes of the venv the
wheel is pip-installed into: their stdout must be the machine document alone, and what the
plugin wrote must be on stderr.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from eco_plugins import PluginVenv, on_path
from test_plugin_extractors import make_artifact

from reprobridge_sdk import extract_value

pytestmark = pytest.mark.slow  # the plugin venv is built with pip once per session

#: What every loud plugin writes besides its ``print`` (the late thread's may come too late).
WAYS = ("print", "fd", "subprocess")


def _cli(venv: PluginVenv, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv.python), "-m", "reprobridge", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=300,
    )


def _shouted(stderr: str, what: str) -> list[str]:
    return [way for way in WAYS if f"LOUD: {what} {way}" in stderr]


@pytest.fixture
def study(tmp_path: Path) -> Path:
    return make_artifact(tmp_path / "study", kind="x-loud")


def test_validate_json_with_a_printing_extractor(plugin_venv: PluginVenv, study: Path) -> None:
    for fmt in ("json", "sarif"):
        proc = _cli(plugin_venv, "validate", ".", "--format", fmt, cwd=study)
        assert proc.returncode == 0, proc.stderr
        assert "LOUD" not in proc.stdout
        document = json.loads(proc.stdout)
        assert document["runs" if fmt == "sarif" else "artifacts"]
        assert "LOUD: imported" in proc.stderr
        assert _shouted(proc.stderr, "extractor") == list(WAYS)


def test_extract_json_with_a_printing_extractor(plugin_venv: PluginVenv, study: Path) -> None:
    proc = _cli(plugin_venv, "extract", ".", "--samples", "--format", "json", cwd=study)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["samples"][0]["value"] == 90.1
    assert _shouted(proc.stderr, "extractor") == list(WAYS)


def test_a_printing_report_format_writes_only_its_report(
    plugin_venv: PluginVenv, study: Path
) -> None:
    proc = _cli(plugin_venv, "validate", str(study), "--format", "loud", cwd=study)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{study}\t0\n"
    assert _shouted(proc.stderr, "format") == list(WAYS)


def test_data_fetch_json_with_a_printing_scheme(plugin_venv: PluginVenv, tmp_path: Path) -> None:
    payload = b"weights " * 100
    source = tmp_path / "store.bin"
    source.write_bytes(payload)
    root = tmp_path / "art"
    root.mkdir()
    (root / "rra.yaml").write_text(
        'rra_version: "1.1"\nenvironment:\n  python: "3.11"\n  data:\n'
        f"    - id: weights\n      source: {{url: 'x-loud://{source}'}}\n"
        f"      sha256: {hashlib.sha256(payload).hexdigest()}\n      size: {len(payload)}\n"
        "      destination: data/weights.bin\n"
    )
    proc = _cli(plugin_venv, "data", "fetch", ".", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["artifacts"][0]["findings"] == []
    assert (root / "data" / "weights.bin").read_bytes() == payload
    assert _shouted(proc.stderr, "scheme") == list(WAYS)


@pytest.fixture
def with_plugins(plugin_venv: PluginVenv) -> Iterator[None]:
    with on_path(plugin_venv):
        yield


def test_a_thread_the_plugin_leaves_running_prints_to_stderr(
    study: Path, with_plugins: None, capfd: pytest.CaptureFixture[str]
) -> None:
    spec = {"kind": "x-loud", "x-marker": "test accuracy"}
    before = set(threading.enumerate())
    log = study / "samples" / "log.txt"
    found = extract_value(spec, log=log, files_base=study, outputs={}, context={}, root=study)
    assert found.value == 90.1
    for thread in set(threading.enumerate()) - before:
        thread.join(10)  # the plugin's late thread prints after the call returned
    print("the SDK's own output")  # the machine output after the plugin's call
    out, err = capfd.readouterr()
    assert out == "the SDK's own output\n"
    assert _shouted(err, "extractor") == list(WAYS)
    assert "LOUD: extractor thread" in err
