"""``reprobridge pack``/``unpack``: deterministic archives, safe extraction; ``digest``."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import time
from pathlib import Path

import pytest
from authoring_support import reprobridge

from reprobridge_sdk import api
from reprobridge_sdk.authoring.digests import refresh
from reprobridge_sdk.authoring.pack import PackError, pack, packed_files, unpack
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.model import Output
from reprobridge_sdk.validation import validate


def _artifact(tmp_path: Path, name: str = "art") -> Path:
    root = tmp_path / name
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    return root


def test_the_same_artifact_packs_to_the_same_bytes_and_digest(tmp_path: Path) -> None:
    one = _artifact(tmp_path, "one")
    (one / "runs" / "r1").mkdir(parents=True)
    (one / "runs" / "r1" / "log.txt").write_text("x\n")
    (one / "code" / "__pycache__").mkdir()
    (one / "code" / "__pycache__" / "experiment.cpython-311.pyc").write_bytes(b"\0")
    first = pack(one, tmp_path / "one.tar.gz")
    # another copy, written later, with another umask and other mtimes
    old = os.umask(0o077)
    try:
        two = _artifact(tmp_path, "two")
    finally:
        os.umask(old)
    for path in two.rglob("*"):
        os.utime(path, (time.time() - 86400, time.time() - 86400))
    (two / "GUIDE.md").write_bytes((one / "GUIDE.md").read_bytes())
    (two / "rra.yaml").write_bytes((one / "rra.yaml").read_bytes())
    second = pack(two, tmp_path / "two.tar.gz")
    assert first.digest == second.digest
    assert (tmp_path / "one.tar.gz").read_bytes() == (tmp_path / "two.tar.gz").read_bytes()
    plain = pack(one, tmp_path / "one.tar")
    assert (
        plain.digest
        == first.digest
        == hashlib.sha256((tmp_path / "one.tar").read_bytes()).hexdigest()
    )
    with tarfile.open(tmp_path / "one.tar") as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names, key=str.encode)
    assert not [n for n in names if n.startswith("runs/") or "__pycache__" in n]
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {
        (315532800, 0, 0, "", "")
    }
    assert {m.mode for m in members} <= {0o644, 0o755}
    with_runs = packed_files(one, with_runs=True)
    assert "runs/r1/log.txt" in with_runs


def test_unpack_round_trips_and_verifies_every_digest(tmp_path: Path) -> None:
    root = _artifact(tmp_path)
    packed = pack(root, tmp_path / "a.tar.gz")
    result = unpack(tmp_path / "a.tar.gz", tmp_path / "out", expected_digest=packed.digest)
    assert result.digest == packed.digest
    assert [f for f in result.findings if not f.code.startswith("P")] == []  # scaffold: P only
    assert (tmp_path / "out" / "rra.yaml").read_bytes() == (root / "rra.yaml").read_bytes()
    wrong = unpack(tmp_path / "a.tar.gz", tmp_path / "out2", expected_digest="0" * 64)
    assert [f.code for f in wrong.findings if not f.code.startswith("P")] == ["C019"]


def test_a_tampered_file_is_caught_after_unpacking(tmp_path: Path) -> None:
    root = _artifact(tmp_path)
    (root / "code" / "experiment.py").write_text("print('other')\n")  # tree digest now stale
    pack(root, tmp_path / "a.tar")
    result = unpack(tmp_path / "a.tar", tmp_path / "out")
    assert "F006" in [f.code for f in result.findings]


def _hostile(tmp_path: Path, *members: tuple[tarfile.TarInfo, bytes | None]) -> Path:
    path = tmp_path / "hostile.tar"
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _special(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info, None


@pytest.mark.parametrize(
    ("members", "code"),
    [
        ([_file("/etc/evil")], "C017"),
        ([_file("../evil")], "C017"),
        ([_file("a/../../evil")], "C017"),
        ([_special("link", tarfile.SYMTYPE, "/etc")], "C017"),
        ([_special("link", tarfile.SYMTYPE, "../../outside")], "C017"),
        ([_special("d/link", tarfile.SYMTYPE, ".."), _file("d/link/evil")], "C017"),
        ([_special("hard", tarfile.LNKTYPE, "/etc/passwd")], "C017"),
        ([_special("dev", tarfile.CHRTYPE)], "C017"),
        ([_special("fifo", tarfile.FIFOTYPE)], "C017"),
        ([_file("a"), _file("a")], "C017"),
    ],
    ids=[
        "absolute",
        "dotdot",
        "inner-dotdot",
        "abs-link",
        "link-out",
        "below-link",
        "hardlink",
        "device",
        "fifo",
        "duplicate",
    ],
)
def test_hostile_archives_are_refused(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], code: str
) -> None:
    archive = _hostile(tmp_path, *members)
    with pytest.raises(PackError) as caught:
        unpack(archive, tmp_path / "out", validate_after=False)
    assert [f.code for f in caught.value.findings] == [code]
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "evil").exists()


def test_size_and_count_caps_and_a_non_empty_destination(tmp_path: Path) -> None:
    archive = _hostile(tmp_path, _file("a", b"1234"), _file("b", b"5678"))
    with pytest.raises(PackError) as caught:
        unpack(archive, tmp_path / "o1", max_files=1, validate_after=False)
    assert [f.code for f in caught.value.findings] == ["C018"]
    with pytest.raises(PackError) as caught:
        unpack(archive, tmp_path / "o2", max_bytes=6, validate_after=False)
    assert [f.code for f in caught.value.findings] == ["C018"]
    (tmp_path / "o3").mkdir()
    (tmp_path / "o3" / "keep").write_text("mine")
    with pytest.raises(PackError) as caught:
        unpack(archive, tmp_path / "o3", validate_after=False)
    assert [f.code for f in caught.value.findings] == ["C018"]
    assert (tmp_path / "o3" / "keep").read_text() == "mine"
    (tmp_path / "junk.tar").write_bytes(b"not a tar at all" * 100)
    with pytest.raises(PackError) as caught:
        unpack(tmp_path / "junk.tar", tmp_path / "o4", validate_after=False)
    assert [f.code for f in caught.value.findings] == ["C017"]


def test_pack_refuses_a_link_that_leaves_the_artifact(tmp_path: Path) -> None:
    root = _artifact(tmp_path)
    (root / "data-link").symlink_to(tmp_path)
    with pytest.raises(PackError) as caught:
        pack(root, tmp_path / "a.tar")
    assert [f.code for f in caught.value.findings] == ["C017"]


def test_digest_shows_changes_and_writes_only_with_update(tmp_path: Path) -> None:
    root = _artifact(tmp_path)
    (root / "code" / "experiment.py").write_text("print('fixed')\n")
    before = (root / "rra.yaml").read_bytes()
    shown = reprobridge("digest", str(root), "--format", "json", cwd=tmp_path)
    assert shown.returncode == 1
    data = json.loads(shown.stdout)
    assert [c["path"] for c in data["changes"]] == ["/codebase/tree_digest"]
    assert (root / "rra.yaml").read_bytes() == before
    updated = reprobridge("digest", str(root), "--update", cwd=tmp_path)
    assert updated.returncode == 0, updated.stderr
    assert api.load(root).manifest.codebase.tree_digest == data["changes"][0]["new"]
    assert refresh(root) == []


def test_pack_cli_prints_the_digest(tmp_path: Path) -> None:
    root = _artifact(tmp_path)
    done = reprobridge("pack", str(root), "-o", str(tmp_path / "x.tar.gz"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    digest, _, path = done.stdout.strip().partition("  ")
    assert digest == "sha256:" + pack(root, tmp_path / "y.tar").digest
    assert path == str(tmp_path / "x.tar.gz")
    out = reprobridge(
        "unpack", str(tmp_path / "x.tar.gz"), str(tmp_path / "u"), "--digest", digest, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr


def test_digest_covers_sample_files(tmp_path: Path) -> None:
    """The samples' log and output digests (format 1.1) are recomputed, shown, then written."""
    root = _artifact(tmp_path)
    (root / "samples" / "metrics.json").write_text('{"accuracy": 0.9}\n')
    art = api.load(root)
    art.manifest.rra_version = "1.1"
    art.manifest.launchers[1].outputs = [Output(id="metrics", path="metrics.json")]
    art.manifest.launchers[1].samples[0].outputs = {"metrics": "samples/metrics.json"}
    art.save()
    log_ptr = "/launchers/1/samples/0/log_sha256"
    out_ptr = "/launchers/1/samples/0/outputs_sha256/metrics"
    # the 1.1 digests are missing: digest adds them, and only --update writes them
    shown = reprobridge("digest", str(root), "--format", "json", cwd=tmp_path)
    assert shown.returncode == 1, shown.stderr
    changes = {c["path"]: (c["old"], c["new"]) for c in json.loads(shown.stdout)["changes"]}
    log_digest = hashlib.sha256((root / "samples" / "scored-seed1.log").read_bytes()).hexdigest()
    out_digest = hashlib.sha256((root / "samples" / "metrics.json").read_bytes()).hexdigest()
    assert changes == {log_ptr: (None, log_digest), out_ptr: (None, out_digest)}
    assert api.load(root).manifest.launchers[1].samples[0].log_sha256 is None
    assert reprobridge("digest", str(root), "--update", cwd=tmp_path).returncode == 0
    sample = api.load(root).manifest.launchers[1].samples[0]
    assert (sample.log_sha256, sample.outputs_sha256) == (log_digest, {"metrics": out_digest})
    assert not [f for f in validate(root).findings if f.code in {"F005", "R004"}]
    # a changed sample file is F005 at its digest until `digest --update`
    (root / "samples" / "metrics.json").write_text('{"accuracy": 0.8}\n')
    found = [(f.code, f.path) for f in validate(root).findings if f.code == "F005"]
    assert found == [("F005", out_ptr)]
    before = (root / "rra.yaml").read_bytes()
    assert [c.pointer for c in refresh(root)] == [out_ptr]
    assert (root / "rra.yaml").read_bytes() == before
    assert [c.pointer for c in refresh(root, write=True)] == [out_ptr]
    assert refresh(root) == []
    assert not [f for f in validate(root).findings if f.code == "F005"]


def test_sample_digests_are_not_added_to_a_1_0_manifest(tmp_path: Path) -> None:
    """Refreshing never raises the format version: 1.0 manifests get no new sample digests."""
    root = _artifact(tmp_path)
    assert api.load(root).manifest.rra_version == "1.0"
    assert refresh(root) == []


def test_a_digest_of_an_output_the_sample_does_not_list_is_r004(tmp_path: Path) -> None:
    """Hostile: ``outputs_sha256`` naming an output the sample does not ship."""
    root = _artifact(tmp_path)
    art = api.load(root)
    art.manifest.rra_version = "1.1"
    art.manifest.launchers[1].samples[0].outputs_sha256 = {"ghost": "0" * 64}
    art.save()
    found = [(f.code, f.path) for f in validate(root).findings if f.code == "R004"]
    assert found == [("R004", "/launchers/1/samples/0/outputs_sha256/ghost")]


def test_pack_leaves_out_hidden_directories_at_the_root_unless_the_manifest_names_them(
    tmp_path: Path,
) -> None:
    root = _artifact(tmp_path)
    for rel in (
        ".rra-build/state.json",  # the build agent's state
        ".venv/bin/python",  # a tool's environment
        ".pytest_cache/v/cache/lastfailed",
        ".tools/prepare.py",  # named by a launcher's argv: kept
        ".work/keep.txt",  # a launcher's workdir: kept
        ".python-version",  # a hidden file at the root: kept
        "code/.settings/config.ini",  # inside the refined code: its tree digest covers it
    ):
        path = root.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    art = api.load(root)
    art.manifest.launchers[0].argv = ["python", ".tools/prepare.py", "--out=.pytest_cache2/x"]
    art.manifest.launchers[1].workdir = ".work"
    art.save()
    assert [c.pointer for c in refresh(root, write=True)] == ["/codebase/tree_digest"]
    names = packed_files(root)
    assert [n for n in names if n.startswith(".") or "/." in n] == [
        ".python-version",
        ".tools/prepare.py",
        ".work/keep.txt",
        "code/.settings/config.ini",
    ]
    pack(root, tmp_path / "a.tar")
    copy = unpack(tmp_path / "a.tar", tmp_path / "copy")
    assert [f.code for f in copy.findings if f.code in {"F004", "F005", "F006"}] == []
