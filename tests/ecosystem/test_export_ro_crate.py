"""``reprobridge export ro-crate``: a Process Run Crate validated by roc-validator, offline.

The bundled example is run for real (its smoke launcher in this interpreter), exported, and
checked by ``rocrate-validator`` in ``--offline`` mode inside a network namespace of its own
(``unshare -n``: no network at all). Its HTTP cache is seeded beforehand with the JSON-LD
context that the ``rocrate`` package ships (see ``eco_rocrate``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from eco_rocrate import seed_cache

from reprobridge_sdk.errors import MissingExtraError
from reprobridge_sdk.interop.ro_crate import export_ro_crate

pytestmark = pytest.mark.slow  # a real run of the example and two validator processes

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPROBRIDGE_")}
    return subprocess.run(
        [sys.executable, "-m", "reprobridge", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    art = tmp_path_factory.mktemp("ro") / "digits"
    shutil.copytree(REPO / "examples" / "digits-logreg", art, ignore=shutil.ignore_patterns("runs"))
    proc = _cli("run", "-C", str(art), "--scope", "smoke", "--env", "current")
    assert proc.returncode == 0, proc.stderr
    return art


def _validator(crate: Path, cache: Path, *profile: str) -> dict[str, object]:
    validator = str(Path(sys.executable).with_name("rocrate-validator"))
    if subprocess.run(["unshare", "-n", "true"], check=False).returncode != 0:
        pytest.skip("no network namespaces here (unshare -n needs CAP_SYS_ADMIN)")
    report = crate.parent / f"report{len(profile)}.json"
    proc = subprocess.run(
        ["unshare", "-n", validator, "-y", "--disable-color", "validate", "--offline",
         "--cache-path", str(cache), "-f", "json", "-o", str(report), *profile, str(crate)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert report.is_file(), proc.stdout + proc.stderr
    return json.loads(report.read_text())  # type: ignore[no-any-return]


def test_the_crate_passes_roc_validator_offline(ran: Path, tmp_path: Path) -> None:
    crate = tmp_path / "crate"
    proc = _cli("export", "ro-crate", str(ran), "-o", str(crate))
    assert proc.returncode == 0, proc.stderr
    cache = tmp_path / "http-cache" / "cache"
    cache.parent.mkdir()
    seed_cache(cache)
    for profile in ((), ("-p", "process-run-crate-0.5")):
        report = _validator(crate, cache, *profile)
        assert report["issues"] == []
        assert report["passed"] is True
    assert "process-run-crate-0.5" in report["validation_settings"]["profile_identifiers"]  # type: ignore[index]


def test_each_run_is_a_create_action_with_its_files(ran: Path, tmp_path: Path) -> None:
    crate = tmp_path / "crate"
    export_ro_crate(ran, crate)
    graph = {
        e["@id"]: e for e in json.loads((crate / "ro-crate-metadata.json").read_text())["@graph"]
    }
    [run_dir] = [p for p in (ran / "runs").iterdir() if (p / "record.json").is_file()]
    record = json.loads((run_dir / "record.json").read_text())
    action = graph[f"#run-{record['run_id']}"]
    assert action["@type"] == "CreateAction"
    assert action["instrument"] == {"@id": f"#launcher-{record['launcher']}"}
    assert action["actionStatus"] == {"@id": "http://schema.org/CompletedActionStatus"}
    assert (action["startTime"], action["endTime"]) == (record["started_at"], record["ended_at"])
    results = {r["@id"] for r in action["result"]}
    base = f"runs/{run_dir.name}"
    assert {f"{base}/record.json", f"{base}/{record['log']['path']}"} <= results
    assert all((crate / r).is_file() for r in results)
    assert graph["./"]["conformsTo"] == {"@id": "https://w3id.org/ro/wfrun/process/0.5"}


def test_a_hostile_record_cannot_pull_files_from_outside(ran: Path, tmp_path: Path) -> None:
    art = tmp_path / "art"
    shutil.copytree(ran, art)
    [run_dir] = [p for p in (art / "runs").iterdir() if (p / "record.json").is_file()]
    record = json.loads((run_dir / "record.json").read_text())
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the crate")
    record["outputs"] = [
        {**record["outputs"][0], "path": "../../../secret.txt"},
        {**record["outputs"][0], "id": "abs", "path": str(secret)},
    ]
    (run_dir / "record.json").write_text(json.dumps(record))
    crate = tmp_path / "crate"
    export_ro_crate(art, crate)
    copied = [p.read_text() for p in crate.rglob("*") if p.is_file() and p.name != "record.json"]
    assert "not for the crate" not in copied


def test_a_non_empty_target_is_e018_and_the_extra_is_named(
    ran: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("keep")
    proc = _cli("export", "ro-crate", str(ran), "-o", str(tmp_path / "busy"))
    assert proc.returncode == 2
    assert " E018 error " in proc.stdout
    assert (tmp_path / "busy" / "x").read_text() == "keep"
    monkeypatch.setitem(sys.modules, "rocrate", None)
    with pytest.raises(MissingExtraError) as info:
        export_ro_crate(ran, tmp_path / "new")
    assert info.value.findings[0].hint == "pip install 'reprobridge[ro-crate]'"
