"""Every command that takes an artifact takes the archive ``reprobridge pack`` writes.

``validate``, ``audit``, ``review``, ``extract``, ``export`` and ``check`` run in real
subprocesses on an archive and on the folder it was packed from, and say the same, naming the
archive (``ARCHIVE#MEMBER`` inside it), never the temporary directory it was unpacked into.
Hostile archives (``..`` members, absolute names, links out, a bomb, a truncated gzip, a file
named ``.tar.gz`` that is not gzip, two artifacts side by side) give a finding with a code in
every command, never a traceback, and leave no temporary directory behind: each subprocess
gets a fresh ``TMPDIR`` that must be empty when it ends.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from toy_study import make_artifact

from reprobridge_sdk.authoring.pack import MAX_BYTES
from reprobridge_sdk.run import run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"
BLOCK = 512


def _cli(tmp: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``reprobridge ARGS`` with a fresh TMPDIR under ``tmp``, which must end empty."""
    scratch = tmp / f"tmpdir-{len(list(tmp.glob('tmpdir-*')))}"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert "internal error" not in done.stderr, done.stderr
    assert list(scratch.iterdir()) == [], f"{args} left {list(scratch.iterdir())}"
    return done


def _same(text: str, folder: Path | str, archive: Path | str) -> str:
    """``text`` with the folder's and the archive's names made one."""
    for given, sep in ((str(archive), "#"), (str(folder), "/")):
        text = text.replace(given + sep, "ARTIFACT/").replace(given, "ARTIFACT")
    return text


@pytest.fixture(scope="module")
def digits(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The bundled example and the archive ``reprobridge pack`` writes of it."""
    base = tmp_path_factory.mktemp("digits")
    folder = base / "digits-logreg"
    shutil.copytree(EXAMPLE, folder)
    archive = base / "digits-logreg.tar.gz"
    _cli(base, "pack", str(folder), "-o", str(archive))
    assert archive.is_file()
    return folder, archive


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The toy study with recorded honest runs, and its evidence submission (--with-runs)."""
    base = tmp_path_factory.mktemp("toy")
    folder = make_artifact(base / "toy")
    summary = run(folder, ["scored"], env_mode="current", seeds=[0, 1, 2])
    assert all(r.record.status == "succeeded" for r in summary.results)
    archive = base / "toy.tar"
    _cli(base, "pack", str(folder), "--with-runs", "-o", str(archive))
    return folder, archive


# --------------------------------------------------------------------------- the same answer


def test_validate_says_of_the_archive_what_it_says_of_the_folder(
    digits: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, archive = digits
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    with (broken / "code" / "train.py").open("a") as handle:
        handle.write("# changed after the digest was taken\n")
    packed = tmp_path / "broken.tar.gz"
    _cli(tmp_path, "pack", str(broken), "-o", str(packed))
    for source, target in ((folder, archive), (broken, packed)):
        on_folder = _cli(tmp_path, "validate", str(source), "--format", "json")
        on_archive = _cli(tmp_path, "validate", str(target), "--format", "json")
        assert on_archive.returncode == on_folder.returncode
        assert _same(on_archive.stdout, source, target) == _same(on_folder.stdout, source, target)
    report = json.loads(on_archive.stdout)
    assert report["artifacts"][0]["path"] == str(packed)
    assert [f["code"] for f in report["artifacts"][0]["findings"]] == ["F006"]
    assert report["artifacts"][0]["findings"][0]["file"] == f"{packed}#rra.yaml"
    text = _cli(tmp_path, "validate", str(packed))
    assert f"{packed}#rra.yaml:" in text.stdout
    assert "rb-" not in text.stdout + on_archive.stdout  # no temporary directory named


def test_a_folder_of_submissions_is_its_subfolders_and_its_archives(
    digits: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, archive = digits
    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copytree(folder, batch / "a-folder")
    shutil.copy(archive, batch / "b-packed.tar.gz")
    (batch / "notes.txt").write_text("not a submission\n")
    done = _cli(tmp_path, "validate", str(batch), "--format", "json")
    assert done.returncode == 0, done.stdout
    report = json.loads(done.stdout)
    assert report["summary"]["artifacts"] == 2
    assert [a["path"] for a in report["artifacts"]] == [
        str(batch / "a-folder"),
        str(batch / "b-packed.tar.gz"),
    ]
    table = _cli(tmp_path, "audit", "--table", str(batch), "--format", "json")
    rows = json.loads(table.stdout)["rows"]
    assert [r["path"] for r in rows] == [str(batch / "a-folder"), str(batch / "b-packed.tar.gz")]
    assert [r["status"] for r in rows] == ["failed", "failed"]  # no runs: not executed
    assert rows[0]["archive_sha256"] is None
    assert rows[1]["archive_sha256"] is not None


def _audit_view(report: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": report["path"],
        "passed": report["passed"],
        "badges": report["badges"],
        "counts": report["counts"],
        "tasks": [
            (t["id"], [(v["attempt"], v["verdict"]) for v in t["attempts"]])
            for t in report["tasks"]
        ],
        "findings": sorted((f["code"], f.get("file") or "") for f in report["findings"]),
        "attempts": [(a["label"], a.get("runs")) for a in report["attempts"]],
    }


def test_audit_of_an_evidence_archive_is_the_audit_of_its_folder(
    toy: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, archive = toy
    on_folder = _cli(tmp_path, "audit", str(folder), "--format", "json")
    on_archive = _cli(tmp_path, "audit", str(archive), "--format", "json")
    assert on_archive.returncode == on_folder.returncode == 0, on_archive.stderr
    mine, theirs = json.loads(on_archive.stdout), json.loads(on_folder.stdout)
    assert mine["path"] == str(archive)
    assert _audit_view(mine) == {**_audit_view(theirs), "path": str(archive)}
    assert _same(on_archive.stdout, folder, archive).count("ARTIFACT") > 0
    assert "rb-archive-" not in on_archive.stdout


def test_review_reexecutes_the_runs_of_an_evidence_archive(
    toy: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, archive = toy
    copy = tmp_path / "toy"
    shutil.copytree(folder, copy)
    # --no-sandbox: the toy writes into the artifact, which the sandbox keeps read-only
    args = ["--env", "current", "--no-sandbox", "--format", "json"]
    on_folder = _cli(tmp_path, "review", str(copy), *args)
    on_archive = _cli(tmp_path, "review", str(archive), *args)
    assert on_archive.returncode == on_folder.returncode == 0, on_archive.stderr
    mine, theirs = json.loads(on_archive.stdout), json.loads(on_folder.stdout)
    assert _audit_view(mine) == {**_audit_view(theirs), "path": str(archive)}
    reran = [a for a in mine["attempts"] if a.get("reran")]
    assert reran, mine["attempts"]
    assert "rb-archive-" not in on_archive.stdout


def test_extract_replays_the_samples_of_an_archive(
    digits: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, archive = digits
    on_folder = _cli(tmp_path, "extract", str(folder), "--samples", "--format", "json")
    on_archive = _cli(tmp_path, "extract", str(archive), "--samples", "--format", "json")
    assert on_archive.returncode == on_folder.returncode == 0, on_archive.stderr
    assert _same(on_archive.stdout, folder, archive) == _same(on_folder.stdout, folder, archive)
    assert json.loads(on_archive.stdout)["samples"]
    sample = folder / "samples" / "smoke-seed0"
    replay = ["--launcher", "smoke", "--log", str(sample / "log.txt")]
    replay += ["--file", f"metrics={sample / 'metrics.json'}", "--format", "json"]
    by_log = [_cli(tmp_path, "extract", "-C", str(path), *replay) for path in (folder, archive)]
    assert by_log[0].returncode == by_log[1].returncode == 0, by_log[1].stderr
    assert by_log[1].stdout == by_log[0].stdout
    assert len(json.loads(by_log[1].stdout)["measurements"]) == 3
    assert _same(by_log[1].stderr, folder, archive) == _same(by_log[0].stderr, folder, archive)
    as_run = _cli(tmp_path, "extract", str(archive))  # an archive is no run directory
    assert as_run.returncode == 2
    assert "is a packed artifact, not a run directory" in as_run.stdout + as_run.stderr


def test_export_writes_the_same_citation_and_crate_from_an_archive(
    digits: tuple[Path, Path], tmp_path: Path
) -> None:
    folder, archive = digits
    on_folder = _cli(tmp_path, "export", "citation", str(folder), "-o", "-")
    on_archive = _cli(tmp_path, "export", "citation", str(archive), "-o", "-")
    assert on_archive.returncode == on_folder.returncode == 0, on_archive.stderr
    assert on_archive.stdout == on_folder.stdout
    beside = _cli(tmp_path, "export", "citation", str(archive))
    assert beside.returncode == 0, beside.stderr
    assert (archive.parent / "CITATION.cff").read_text() == on_folder.stdout  # by the archive
    pytest.importorskip("rocrate")
    crates = [tmp_path / "crate-folder", tmp_path / "crate-archive"]
    for source, crate in zip((folder, archive), crates, strict=True):
        done = _cli(tmp_path, "export", "ro-crate", str(source), "-o", str(crate))
        assert done.returncode == 0, done.stderr
    files = [sorted(p.relative_to(c).as_posix() for p in c.rglob("*")) for c in crates]
    assert files[0] == files[1]
    # the crates differ in the time they were written, and only in it
    when = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[^\"]*")
    metadata = [when.sub("WHEN", (c / "ro-crate-metadata.json").read_text()) for c in crates]
    assert _same(metadata[1], folder, archive) == _same(metadata[0], folder, archive)


def _checks(tmp_path: Path, sources: tuple[Path, Path], *flags: str) -> list[Any]:
    """``check --json`` of each source: its exit status and its steps."""
    reports = []
    for source in sources:
        done = _cli(tmp_path, "check", str(source), "--format", "json", *flags, timeout=1800)
        report = json.loads(done.stdout)
        assert report["source"] == str(source)
        reports.append((done.returncode, [(s["name"], s["ok"]) for s in report["steps"]], report))
    return reports


def test_check_runs_the_clean_room_on_an_archive_as_on_its_folder(
    toy: tuple[Path, Path], tmp_path: Path
) -> None:
    """The toy needs no distribution: its clean room builds offline, in seconds."""
    folder, _evidence = toy
    archive = tmp_path / "toy.tar.gz"
    _cli(tmp_path, "pack", str(folder), "-o", str(archive))  # what check packs: no runs
    # --no-sandbox: the toy writes into the artifact, which the sandbox keeps read-only
    (on_folder, on_archive) = _checks(tmp_path, (folder, archive), "--scored", "--no-sandbox")
    assert on_archive[:2] == on_folder[:2]
    assert on_archive[0] == 0, on_archive[2]
    assert [name for name, _ok in on_archive[1]][-1] == "audit-scored"
    copy = on_archive[2]["steps"][0]["detail"]
    assert f"from {archive.name}" in copy
    assert on_archive[2]["archive_sha256"] == on_folder[2]["archive_sha256"]


@pytest.mark.slow
def test_check_of_the_packed_example_is_the_check_of_the_example(
    digits: tuple[Path, Path], tmp_path: Path
) -> None:
    """The clean-room check builds the example's environment from an index: slow."""
    (on_folder, on_archive) = _checks(tmp_path, digits, "--no-sandbox")
    assert on_archive[:2] == on_folder[:2]
    assert on_archive[2]["archive_sha256"] == on_folder[2]["archive_sha256"]
    if on_archive[0] != 0 and "cannot build the environment" in json.dumps(on_archive[2]):
        pytest.skip("the example's environment cannot be built here (no package index)")
    assert on_archive[0] == 0, on_archive[2]


# --------------------------------------------------------------------------- hostile archives


def _header(name: str, kind: bytes, size: int, *, linkname: str = "") -> bytes:
    """One ustar header block, checksum included (written by hand: no tar writer's checks)."""
    size_field = f"{size:011o}\0".encode() if size < 8**11 else b"\x80" + size.to_bytes(11, "big")
    fields = [
        name.encode().ljust(100, b"\0"),
        b"0000644\0",
        b"0000000\0",
        b"0000000\0",
        size_field,
        b"00000000000\0",
        b" " * 8,
        kind,
        linkname.encode().ljust(100, b"\0"),
        b"ustar\x0000",
    ]
    block = b"".join(fields).ljust(BLOCK, b"\0")
    checksum = f"{sum(block):06o}\0 ".encode()
    return block[:148] + checksum + block[156:]


def _member(name: str, data: bytes) -> bytes:
    return _header(name, b"0", len(data)) + data + b"\0" * (-len(data) % BLOCK)


def _tar(*members: bytes) -> bytes:
    return b"".join(members) + b"\0" * (2 * BLOCK)


def _manifest() -> bytes:
    return (EXAMPLE / "rra.yaml").read_bytes()


def _hostile(kind: str, where: Path, digits_archive: Path) -> tuple[Path, str]:
    """A hostile archive of ``kind`` under ``where`` and the code it must give."""
    manifest = _member("rra.yaml", _manifest())
    if kind == "dotdot":
        body, code = _tar(manifest, _member("code/../../escape.txt", b"bad\n")), "C017"
    elif kind == "absolute":
        body, code = _tar(manifest, _member("/tmp/escape.txt", b"bad\n")), "C017"
    elif kind == "link-out":
        body, code = _tar(manifest, _header("code/out", b"2", 0, linkname="../../..")), "C017"
    elif kind == "bomb":
        # a member declaring more than the unpacker's cap, its zeros compressed a thousandfold
        zeros = b"\0" * (8 << 20)
        body, code = _tar(manifest, _header("big.bin", b"0", MAX_BYTES + 1) + zeros), "C018"
    elif kind == "two-roots":
        body = _tar(_member("a/rra.yaml", _manifest()), _member("b/rra.yaml", _manifest()))
        code = "Y010"
    elif kind == "truncated":
        data = digits_archive.read_bytes()
        path = where / f"{kind}.tar.gz"
        path.write_bytes(data[: len(data) // 2])
        return path, "C017"
    else:  # "not-gzip": a manifest under an archive's name
        path = where / f"{kind}.tar.gz"
        path.write_bytes(_manifest())
        return path, "C017"
    path = where / f"{kind}.tar.gz"
    path.write_bytes(gzip.compress(body, mtime=0))
    return path, code


HOSTILE = ["dotdot", "absolute", "link-out", "bomb", "truncated", "not-gzip", "two-roots"]

COMMANDS: dict[str, list[str]] = {
    "validate": ["validate", "{}"],
    "audit": ["audit", "{}"],
    "audit-table": ["audit", "--table", "{}", "--format", "json"],
    "review": ["review", "{}", "--no-sandbox"],
    "extract": ["extract", "{}", "--samples"],
    "export": ["export", "citation", "{}", "-o", "-"],
    "check": ["check", "{}", "--no-sandbox"],
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_archive_is_a_finding_in_every_command(
    kind: str, digits: tuple[Path, Path], tmp_path: Path
) -> None:
    archive, code = _hostile(kind, tmp_path, digits[1])
    outside = tmp_path.parent
    before = sorted(p.name for p in outside.iterdir())
    for command, template in COMMANDS.items():
        done = _cli(tmp_path, *[part.format(archive) for part in template])
        said = done.stdout + done.stderr
        assert done.returncode in {1, 2}, (command, said)
        assert re.search(rf"\b{code}\b", said), (command, said)
        assert str(archive) in said or archive.name in said, (command, said)
        assert "rb-archive-" not in said and "rb-submissions-" not in said, (command, said)
    assert not (tmp_path / "escape.txt").exists()
    assert sorted(p.name for p in outside.iterdir()) == before


def test_a_hostile_archive_in_a_folder_of_submissions_is_an_error_of_its_own(
    digits: tuple[Path, Path], tmp_path: Path
) -> None:
    _folder, archive = digits
    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copy(archive, batch / "good.tar.gz")
    hostile, _code = _hostile("dotdot", batch, archive)
    done = _cli(tmp_path, "validate", str(batch), "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert [(a["path"], a["ok"]) for a in report["artifacts"]] == [
        (str(hostile), False),
        (str(batch / "good.tar.gz"), True),
    ]
    (refused,) = report["artifacts"][0]["findings"]
    assert refused["code"] == "C017"
    assert refused["file"] == f"{hostile}#code/../../escape.txt"


@pytest.mark.parametrize("named", ["artifact.zip", "artifact.bin"])
def test_a_zip_file_is_refused_as_no_supported_archive(
    named: str, digits: tuple[Path, Path], tmp_path: Path
) -> None:
    """A zip of a valid artifact (by name, or by its ``PK`` bytes alone) is C017 with the
    hint to pack it, in validate and audit; never a YAML error of its bytes read as a manifest."""
    folder = digits[0]
    target = tmp_path / named
    with zipfile.ZipFile(target, "w") as packed:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                packed.write(path, path.relative_to(folder).as_posix())
    for args in (
        ("validate", str(target)),
        ("audit", str(target)),
        ("audit", "--table", str(target), "--format", "json"),
    ):
        done = _cli(tmp_path, *args)
        said = done.stdout + done.stderr
        assert done.returncode in {1, 2}, (args, said)
        assert re.search(r"\bC017\b", said), (args, said)
        assert f"{target} is a zip file" in said, (args, said)
        assert "pack the artifact with `reprobridge pack` (tar.gz)" in said, (args, said)
        assert "YAML" not in said and "Y001" not in said, (args, said)
    done = _cli(tmp_path, "validate", str(target), "--format", "json")
    report = json.loads(done.stdout)
    (refused,) = report["artifacts"][0]["findings"]
    assert (refused["code"], refused["file"]) == ("C017", str(target))
