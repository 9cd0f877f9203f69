"""Hostile files in an artifact: links out, FIFOs, devices, sparse and deeply nested files.

Each attack of the hardening issue that goes through a file is reproduced on a copy of the
bundled example with real files, real FIFOs and real commands (in a subprocess with a
timeout, so a hang fails the test instead of blocking the suite). Before the safe file layer
each of these hung, read outside the artifact, wrote outside it or ended in a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk import load
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.validation import validate

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "digits-logreg"
TIMEOUT = 60  # seconds; each command finishes in about one


def _cli(
    *args: str | os.PathLike[str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def example(tmp_path: Path) -> Path:
    target = tmp_path / "artifact"
    shutil.copytree(EXAMPLE, target)
    return target


def _codes(proc: subprocess.CompletedProcess[str]) -> set[str]:
    report = json.loads(proc.stdout)
    return {f["code"] for a in report["artifacts"] for f in a["findings"]}


# ------------------------------------------------------------------------ special files


def test_a_fifo_guide_does_not_hang_validate_or_guide(example: Path) -> None:
    (example / "GUIDE.md").unlink()
    os.mkfifo(example / "GUIDE.md")
    proc = _cli("validate", "--format", "json", example)
    assert proc.returncode == 1, proc.stderr
    assert "F009" in _codes(proc)
    proc = _cli("guide", example)
    assert proc.returncode in (1, 2)
    assert "Traceback" not in proc.stderr
    assert (example / "GUIDE.md").is_fifo()  # not replaced by a write through it either


def test_a_guide_linked_to_dev_zero_does_not_hang(example: Path) -> None:
    (example / "GUIDE.md").unlink()
    (example / "GUIDE.md").symlink_to("/dev/zero")
    proc = _cli("validate", "--format", "json", example)
    assert proc.returncode == 1
    assert "F003" in _codes(proc)  # a link out of the artifact
    proc = _cli("guide", "--check", example)
    assert proc.returncode in (0, 1)
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_special_manifest_does_not_hang_validate_audit_or_load(example: Path, kind: str) -> None:
    manifest = example / "rra.yaml"
    manifest.unlink()
    if kind == "fifo":
        os.mkfifo(manifest)
    else:
        manifest.symlink_to("/dev/zero")
    proc = _cli("validate", "--format", "json", example)
    assert proc.returncode == 1
    assert _codes(proc) == {"F009" if kind == "fifo" else "F003"}
    proc = _cli("audit", example)
    assert proc.returncode in (1, 2)
    assert "Traceback" not in proc.stderr
    with pytest.raises(ArtifactError) as caught:
        load(example)
    assert {f.code for f in caught.value.findings} == {"F009" if kind == "fifo" else "F003"}


# ------------------------------------------------------------------------ links out


def test_a_sample_linked_to_a_secret_is_not_read(example: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"logreg": {"macro_f1": "s3cr3t-t0ken"}}))
    sample = example / "samples" / "smoke-seed0" / "metrics.json"
    sample.unlink()
    sample.symlink_to(secret)
    proc = _cli("validate", "--format", "json", example)
    assert "s3cr3t-t0ken" not in proc.stdout + proc.stderr
    assert "F003" in _codes(proc)
    assert "X002" not in _codes(proc)


def test_a_sample_directory_linked_out_is_refused_through_a_linked_root(
    example: Path, tmp_path: Path
) -> None:
    """Replay opens the artifact's root once for every sample read: a root reached through a
    link still reads its own samples, and a sample directory swapped for a link out of it is
    still refused (F003), never read."""
    alias = tmp_path / "alias"
    alias.symlink_to(example, target_is_directory=True)
    clean = validate(alias).findings
    assert not [f for f in clean if f.code.startswith("X")]
    outside = tmp_path / "outside"
    shutil.copytree(example / "samples" / "smoke-seed0", outside)
    (outside / "metrics.json").write_text(json.dumps({"logreg": {"macro_f1": "s3cr3t-t0ken"}}))
    shutil.rmtree(example / "samples" / "smoke-seed0")
    (example / "samples" / "smoke-seed0").symlink_to(outside, target_is_directory=True)
    proc = _cli("validate", "--format", "json", alias)
    assert "s3cr3t-t0ken" not in proc.stdout + proc.stderr
    assert "F003" in _codes(proc)
    assert "X002" not in _codes(proc)


def test_guide_does_not_write_through_a_linked_directory(example: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "GUIDE.md"
    victim.write_text("precious\n")
    (example / "docs").symlink_to(outside, target_is_directory=True)
    manifest = example / "rra.yaml"
    manifest.write_text(manifest.read_text().replace("path: GUIDE.md", "path: docs/GUIDE.md"))
    proc = _cli("guide", example)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in outside.iterdir()) == ["GUIDE.md"]  # no temporary left


# ------------------------------------------------------------------------ bounded work


def test_a_sparse_lock_is_refused_unread(example: Path) -> None:
    lock = example / "environment" / "requirements.lock"
    with lock.open("r+b") as handle:
        handle.truncate(4 * 1024**3)  # sparse: no disk space, but 4 GiB to read
    result = validate(example)
    codes = {f.code for f in result.findings}
    assert "L003" in codes
    assert "F010" in codes  # the digest of the lock is refused too (over the cap of a lock)


def test_a_sparse_code_file_is_refused_unhashed(example: Path) -> None:
    with (example / "code" / "weights.bin").open("wb") as handle:
        handle.truncate(8 * 1024**3)
    result = validate(example)
    refused = [f for f in result.findings if f.path == "/codebase/refined/path"]
    assert [f.code for f in refused] == ["F010"]


def test_deep_json_in_a_sample_is_a_finding_not_a_crash(example: Path) -> None:
    sample = example / "samples" / "smoke-seed0" / "metrics.json"
    sample.write_text("[" * 100_000 + "]" * 100_000)
    result = validate(example)
    replayed = [f for f in result.findings if f.code == "X001"]
    assert replayed
    assert all(f.path.startswith("/launchers/0/measurements/") for f in replayed)


def test_one_hostile_artifact_does_not_stop_a_batch(example: Path, tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "batch" / "b-clean")
    shutil.move(example, tmp_path / "batch" / "a-hostile")
    hostile = tmp_path / "batch" / "a-hostile"
    (hostile / "GUIDE.md").unlink()
    os.mkfifo(hostile / "GUIDE.md")
    (hostile / "samples" / "smoke-seed0" / "metrics.json").write_text("[" * 50_000)
    proc = _cli("validate", "--format", "json", tmp_path / "batch")
    report = json.loads(proc.stdout)
    by_name = {Path(a["path"]).name: a for a in report["artifacts"]}
    assert by_name["b-clean"]["ok"] is True
    assert by_name["a-hostile"]["ok"] is False
