"""Extractor kinds from a real plugin distribution pip-installed into a venv (format 1.1).

The artifact is a tiny real experiment run by the real runner; its ``acc`` task is read by
the plugin kind ``x-last-number``. In-process tests put the plugin venv's site-packages on
``sys.path`` (``eco_plugins.on_path``); the end-to-end test runs the venv's own interpreter.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import toy_study
import yaml
from eco_plugins import PluginVenv, on_path

from reprobridge_sdk import ExtractionError, extract_value, plugins
from reprobridge_sdk.audit import audit
from reprobridge_sdk.model import Manifest, required_version
from reprobridge_sdk.model.launcher import PLUGIN_KIND_PATTERN
from reprobridge_sdk.run import check_samples, run
from reprobridge_sdk.run.progress import format_summary
from reprobridge_sdk.validation import validate

pytestmark = pytest.mark.slow  # the plugin venv is built with pip once per session


def make_artifact(root: Path, kind: str = "x-last-number") -> Path:
    """The shared toy study (format 1.1) with one task, ``acc``, read by ``kind``, one scored
    launcher and a sample of seed 1."""
    return toy_study.make_artifact(
        root,
        version="1.1",
        acc_extract={"kind": kind, "parameters": {"marker": "test accuracy"}},
        tasks=("acc",),
        launchers=("scored",),
        sample=True,
        guide=True,
    )


def set_kind(root: Path, kind: str) -> None:
    data = yaml.safe_load((root / "rra.yaml").read_text())
    data["launchers"][0]["measurements"][0]["extract"]["kind"] = kind
    (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture
def with_plugins(plugin_venv: PluginVenv) -> Iterator[None]:
    with on_path(plugin_venv):
        yield


@pytest.fixture(scope="module")
def ran_with_plugin(plugin_venv: PluginVenv, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The artifact with its three scored runs, made while the plugin was installed."""
    root = make_artifact(tmp_path_factory.mktemp("ran") / "study")
    with on_path(plugin_venv):
        summary = run(root, ["scored"], env_mode="current")
    assert [r.record.status for r in summary.results] == ["succeeded"] * 3
    return root


@pytest.fixture
def ran(ran_with_plugin: Path, tmp_path: Path) -> Path:
    target = tmp_path / "study"
    shutil.copytree(ran_with_plugin, target)
    return target


def _codes(findings: Any) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in findings)


# ------------------------------------------------------------------------ with the plugin


def test_the_runner_records_the_plugins_values(ran: Path) -> None:
    records = sorted((ran / "runs").glob("*/record.json"))
    values = sorted(json.loads(p.read_text())["measurements"][0]["value"] for p in records)
    assert values == [90.0, 90.1, 90.2]
    raws = {json.loads(p.read_text())["measurements"][0]["raw"] for p in records}
    assert raws == {"90.0", "90.1", "90.2"}  # the repr of what the plugin returned


def test_validate_replays_the_sample_with_the_plugin(tmp_path: Path, with_plugins: None) -> None:
    root = make_artifact(tmp_path / "study")
    assert _codes(validate(root).findings) == []
    (root / "samples" / "log.txt").write_text(toy_study.SAMPLE_LOG.replace("90.1000", "91.5"))
    assert _codes(validate(root).findings) == [("X003", "/launchers/0/samples/0/expected/acc")]


def test_extract_samples_uses_the_plugin(tmp_path: Path, with_plugins: None) -> None:
    root = make_artifact(tmp_path / "study")
    [check] = check_samples(root)
    assert (check.task, check.value, check.error, check.ok) == ("acc", 90.1, None, True)


def test_the_auditor_re_extracts_with_the_plugin(ran: Path, with_plugins: None) -> None:
    result = audit(ran)
    [task] = result.tasks
    attempt = task.attempts[0]
    assert attempt.verdict == "compatible"
    assert attempt.values == [90.0, 90.1, 90.2]
    assert all(r.valid for r in result.attempts[0].runs)


# ------------------------------------------------------------------------ without it


def test_without_the_plugin_validate_warns_x005(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "study")
    result = validate(root)
    assert _codes(result.findings) == [("X005", "/launchers/0/measurements/0/extract/kind")]
    assert result.ok  # a warning: the artifact is fine, this machine lacks the plugin


def test_without_the_plugin_the_run_succeeds_with_the_value_not_extracted(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "study")
    summary = run(root, ["scored"], env_mode="current", seeds=[0])
    [result] = summary.results
    assert result.record.status == "succeeded"
    [measured] = result.record.measurements
    assert measured.value is None
    assert measured.error is not None
    assert measured.error.startswith("no-plugin: ")
    [task] = summary.tasks
    assert (task.value, task.error) == (None, measured.error)
    assert "warning X005: " in format_summary(summary)
    [check] = check_samples(root)
    assert (check.value, check.ok) == (None, False)
    assert check.error is not None
    assert check.error.startswith("no-plugin: ")


def test_without_the_plugin_the_audit_is_inconclusive_a061(ran: Path) -> None:
    result = audit(ran)
    attempt = result.tasks[0].attempts[0]
    assert attempt.verdict == "inconclusive"
    assert attempt.icml == "inconclusive"
    assert [r.code for r in attempt.reasons] == ["A061", "A061", "A061"]
    assert {r.severity for r in attempt.reasons} == {"warning"}
    assert len(attempt.runs) == 3


def test_a_plugin_that_fails_at_audit_time_is_inconclusive_a062(
    tmp_path: Path, plugin_venv: PluginVenv, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_artifact(tmp_path / "study", kind="x-picky")
    with on_path(plugin_venv):
        assert [r.record.status for r in run(root, ["scored"], env_mode="current").results] == [
            "succeeded"
        ] * 3
        monkeypatch.setenv("RB_TEST_PLUGIN_FAIL", "1")  # the plugin's own switch
        result = audit(root)
    attempt = result.tasks[0].attempts[0]
    assert attempt.verdict == "inconclusive"
    assert [r.code for r in attempt.reasons] == ["A062", "A062", "A062"]


# ------------------------------------------------------------------------ hostile plugins


def _extract(root: Path, kind: str) -> float:
    return extract_value(
        {"kind": kind, "x-marker": "test accuracy"},
        log=root / "samples" / "log.txt",
        files_base=root,
        outputs={},
        context={},
        root=root,
    ).value


def test_the_plugin_receives_its_parameters_and_extension_keys_as_written(
    tmp_path: Path, with_plugins: None
) -> None:
    root = make_artifact(tmp_path / "study")
    log = root / "samples" / "log.txt"
    log.write_text("test accuracy 0.25\nother 0.5\n")

    def value(spec: dict[str, object]) -> float:
        got = extract_value(spec, log=log, files_base=root, outputs={}, context={}, root=root)
        return got.value

    assert value({"kind": "x-last-number", "parameters": {"marker": "other"}}) == 0.5
    assert value({"kind": "x-last-number", "x-marker": "test accuracy"}) == 0.25  # a 1.1 draft's


@pytest.mark.parametrize("kind", ["x-raises", "x-nan", "x-text", "x-bool", "x-exits", "x-broken"])
def test_a_failing_plugin_is_x006_never_a_traceback(
    tmp_path: Path, with_plugins: None, kind: str
) -> None:
    root = make_artifact(tmp_path / "study")
    with pytest.raises(ExtractionError) as caught:
        _extract(root, kind)
    assert caught.value.reason == "plugin-failed"
    assert [f.code for f in caught.value.findings] == ["X006"]
    assert caught.value.source == "log"


def test_a_plugin_that_fails_on_a_sample_is_x006_in_validation(
    tmp_path: Path, with_plugins: None
) -> None:
    root = make_artifact(tmp_path / "study", kind="x-raises")
    assert _codes(validate(root).findings) == [("X006", "/launchers/0/measurements/0/extract/kind")]


def test_a_plugin_that_hangs_is_x007(
    tmp_path: Path, with_plugins: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_artifact(tmp_path / "study", kind="x-hangs")
    monkeypatch.setattr(plugins, "TIME_LIMIT", 0.3)
    with pytest.raises(ExtractionError) as caught:
        _extract(root, "x-hangs")
    assert (caught.value.reason, [f.code for f in caught.value.findings]) == (
        "plugin-timeout",
        ["X007"],
    )
    assert _codes(validate(root).findings) == [("X007", "/launchers/0/measurements/0/extract/kind")]


def test_a_plugin_named_without_x_or_after_a_built_in_is_refused_x008(
    tmp_path: Path, with_plugins: None
) -> None:
    assert "x-last-number" in plugins.plugin_names(plugins.EXTRACTORS)
    assert "regex" not in plugins.plugin_names(plugins.EXTRACTORS)
    assert "last-number" not in plugins.plugin_names(plugins.EXTRACTORS)
    refused = [f for f in plugins.refusals() if f.code == "X008"]
    assert sorted(f.path for f in refused) == [
        "/plugins/reprobridge.extractors/last-number",
        "/plugins/reprobridge.extractors/regex",
    ]
    # The built-in kind still reads with the SDK's own regex, not the shadowing plugin's NaN.
    root = make_artifact(tmp_path / "study")
    value = extract_value(
        {"kind": "regex", "pattern": r"test accuracy: ([0-9.]+)"},
        log=root / "samples" / "log.txt",
        files_base=root,
        outputs={},
        context={},
    ).value
    assert value == 90.1


def test_the_model_and_the_plugin_registry_agree_on_kind_names() -> None:
    assert f"^{plugins.EXTRACTOR_KIND}$" == PLUGIN_KIND_PATTERN


def test_a_1_0_manifest_using_a_plugin_kind_is_v005(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "study")
    text = (root / "rra.yaml").read_text().replace("rra_version: '1.1'", "rra_version: '1.0'")
    (root / "rra.yaml").write_text(text)
    found = _codes(validate(root, select=("V", "S")).findings)
    assert found == [("V005", "/launchers/0/measurements/0/extract/kind")]


def test_a_manifest_using_a_plugin_kind_needs_format_1_1(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "study")
    data = yaml.safe_load((root / "rra.yaml").read_text())
    assert required_version(Manifest.model_validate(data)) == (1, 1)
    data["launchers"][0]["measurements"][0]["extract"] = {"kind": "regex", "pattern": "([0-9]+)"}
    assert required_version(Manifest.model_validate(data)) == (1, 0)
    data["environment"]["data"] = [
        {"id": "w", "source": {"url": "x-store://w.bin"}, "destination": "w.bin"}
    ]
    assert required_version(Manifest.model_validate(data)) == (1, 1)


def test_a_malformed_plugin_kind_is_s004_naming_the_built_in_kinds(tmp_path: Path) -> None:
    root = make_artifact(tmp_path / "study", kind="x-last-number")
    set_kind(root, "x-Last")
    [item] = [f for f in validate(root).findings if f.code == "S004"]
    assert item.path == "/launchers/0/measurements/0/extract/kind"


# ------------------------------------------------------------------------ end to end


def _cli(venv: PluginVenv, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv.python), "-m", "reprobridge", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=300,
    )


def test_the_commands_use_the_plugin_installed_in_the_venv(
    plugin_venv: PluginVenv, tmp_path: Path
) -> None:
    root = make_artifact(tmp_path / "study")
    assert _cli(plugin_venv, "validate", ".", cwd=root).returncode == 0
    proc = _cli(plugin_venv, "run", ".", "scored", "--env", "current", "--seeds", "0", cwd=root)
    assert proc.returncode == 0, proc.stderr
    proc = _cli(plugin_venv, "extract", ".", "--samples", "--format", "json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["samples"][0]["value"] == 90.1
    [run_dir] = [p for p in (root / "runs").iterdir() if (p / "record.json").is_file()]
    proc = _cli(plugin_venv, "extract", ".", "--run", str(run_dir), "--format", "json", cwd=root)
    assert json.loads(proc.stdout)["measurements"][0]["value"] == 90.0
    proc = _cli(plugin_venv, "plugins", "--format", "json", cwd=root)
    listed = json.loads(proc.stdout)
    kinds = {p["name"] for p in listed["plugins"] if p["group"] == plugins.EXTRACTORS}
    assert "x-last-number" in kinds
    assert {f["code"] for f in listed["findings"]} == {"X008", "D017", "E026"}
    proc = _cli(plugin_venv, "plugins", cwd=root)
    assert proc.returncode == 0
    assert "x-last-number" in proc.stdout  # the listing is on stdout, with the findings
    assert "X008 warning" in proc.stdout


# ------------------------------------------------------------- references from repetitions


def test_references_add_refuses_a_repetition_it_cannot_re_extract_c012(ran: Path) -> None:
    from reprobridge_sdk.authoring.references import ReferencesError, add_references

    before = (ran / "rra.yaml").read_bytes()
    with pytest.raises(ReferencesError) as caught:
        add_references(ran, [str(ran / "runs")])
    assert [f.code for f in caught.value.findings] == ["C012"] * 3
    assert {Path(f.file).name for f in caught.value.findings} == {"record.json"}
    assert (ran / "rra.yaml").read_bytes() == before


def test_references_add_values_the_repetition_with_the_plugin(
    ran: Path, with_plugins: None
) -> None:
    from reprobridge_sdk.authoring.references import add_references

    result = add_references(ran, [str(ran / "runs")], replace=True)
    [observation] = result.added["acc"]
    assert observation.value == pytest.approx(90.1)
    assert [item.seed for item in observation.provenance.runs or ()] == [0, 1, 2]
