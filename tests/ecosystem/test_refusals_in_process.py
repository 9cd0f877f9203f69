"""E018 and E019 built in this process (the CLI tests beside this file see them only as text
from a subprocess): an RO-Crate into a directory that is not empty, an MLflow store that is
not there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reprobridge_sdk.authoring.mlflow_import import import_mlflow
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.interop.ro_crate import export_ro_crate

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    target = tmp_path / "art"
    shutil.copytree(
        REPO / "examples" / "digits-logreg", target, ignore=shutil.ignore_patterns("runs")
    )
    return target


def test_a_crate_into_a_directory_that_is_not_empty_is_e018(artifact: Path, tmp_path: Path) -> None:
    out = tmp_path / "crate"
    out.mkdir()
    (out / "keep.txt").write_text("mine\n")
    with pytest.raises(UsageError) as caught:
        export_ro_crate(artifact, out)
    assert [(f.code, f.hint) for f in caught.value.findings] == [
        ("E018", "name a new or empty directory with -o")
    ]
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_an_mlflow_store_that_is_not_there_is_e019(artifact: Path, tmp_path: Path) -> None:
    before = (artifact / "rra.yaml").read_bytes()
    with pytest.raises(UsageError) as caught:
        import_mlflow(
            artifact,
            tmp_path / "nowhere",
            experiment="digits",
            metrics={},  # the store is read before any metric is looked for
        )
    assert [f.code for f in caught.value.findings] == ["E019"]
    assert (artifact / "rra.yaml").read_bytes() == before


@pytest.mark.parametrize(
    ("name", "value"),
    [("broken", "rb_refusal_missing:render"), ("inert", "rb_refusal_plugin:not_callable")],
)
def test_a_plugin_that_cannot_load_is_e017(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    """A real distribution on sys.path whose entry point names a missing module or an object
    that is not callable (as tests/ecosystem/test_plugins.py does through a subprocess)."""
    from reprobridge_sdk.plugins import _entry_points, load_plugin

    site = tmp_path / "site"
    info = site / "rb_refusal_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "rb_refusal_plugin.py").write_text("not_callable = 42\n")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rb-refusal-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[reprobridge.report_formats]\n{name} = {value}\n")
    (info / "RECORD").write_text("")
    monkeypatch.syspath_prepend(str(site))
    # Entry points are looked up once per process; this test changes what is installed.
    _entry_points.cache_clear()
    try:
        with pytest.raises(UsageError) as caught:
            load_plugin("reprobridge.report_formats", name)
    finally:
        _entry_points.cache_clear()
    assert [(f.code, f.path, f.hint) for f in caught.value.findings] == [
        (
            "E017",
            f"/plugins/reprobridge.report_formats/{name}",
            "reinstall or uninstall rb-refusal-plugin",
        )
    ]
