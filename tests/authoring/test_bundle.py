"""``pack`` carries an upstream nobody else can fetch as a git bundle; materialization uses it.

An artifact kept inside its paper's repository pins ``repository: ..``. Its archive holds
``upstream/<commit>.bundle`` and a manifest declaring it, so it is checked out, validated and
rerun with the original repository gone. A bundle that does not hold up is refused: another
commit or extra refs (C026), a damaged file (C025), a digest other than the declared one
(C024). Real git repositories, made in the test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from authoring_support import (
    DEFECT_LINE,
    FIXED_LINE,
    GIT_ENV,
    make_paper_repo,
    reprobridge,
    run_git,
)

from reprobridge_sdk import api
from reprobridge_sdk.authoring.codebase import import_code, materialize, record_patch
from reprobridge_sdk.authoring.pack import pack, unpack
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.checkout import CodebaseError
from reprobridge_sdk.digest import file_sha256


def _inside_paper(tmp_path: Path) -> tuple[Path, str]:
    """The paper's repository with the artifact inside it (upstream ``..``), one fix recorded."""
    commit = make_paper_repo(tmp_path / "paper")
    root = tmp_path / "paper" / "artifact"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    train = root / "code" / "train.py"
    train.write_text(train.read_text("utf-8").replace(DEFECT_LINE, FIXED_LINE), "utf-8")
    record_patch(root, kind="correctness-fix", why="Seed the generator.")
    art = api.load(root)
    assert art.manifest.codebase.upstream.repository == ".."
    smoke, scored = art.manifest.launchers
    smoke.argv = ["python", "code/train.py", "--seed", "1", "--steps", "20"]
    scored.argv = ["python", "code/train.py", "--seed", "{seed}"]
    art.save()
    return root, commit


def _unpacked(archive: Path, dest: Path) -> Path:
    return unpack(archive, dest, validate_after=False).root


def _codes(caught: pytest.ExceptionInfo[CodebaseError]) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in caught.value.findings]


def test_pack_carries_a_local_upstream_and_the_copy_rebuilds_offline(tmp_path: Path) -> None:
    root, commit = _inside_paper(tmp_path)
    before = (root / "rra.yaml").read_bytes()
    first = pack(root, tmp_path / "one.tar")
    second = pack(root, tmp_path / "two.tar")
    assert first.bundle == f"upstream/{commit}.bundle"
    assert (tmp_path / "one.tar").read_bytes() == (tmp_path / "two.tar").read_bytes()
    assert (root / "rra.yaml").read_bytes() == before  # the artifact itself is not changed
    assert not (root / "upstream").exists()
    declared = api.load(root).manifest.codebase.tree_digest
    # the original repository goes away; the cache too (another machine)
    shutil.rmtree(tmp_path / "paper")
    copy = unpack(
        tmp_path / "one.tar", tmp_path / "copy" / "artifact", expected_digest=second.digest
    )
    assert [f.code for f in copy.findings if f.severity.value == "error"] == []
    art = api.load(copy.root)
    bundle = art.manifest.codebase.upstream.bundle
    assert bundle is not None and bundle.path == first.bundle
    assert bundle.sha256 == file_sha256(copy.root / first.bundle)
    assert art.manifest.rra_version == "1.1"
    checkout = materialize(copy.root)
    assert (checkout / "train.py").read_text("utf-8").count(FIXED_LINE) == 1
    assert api.load(copy.root).manifest.codebase.tree_digest == declared


def test_an_upstream_anyone_can_fetch_is_not_bundled(tmp_path: Path) -> None:
    root, _ = _inside_paper(tmp_path)
    art = api.load(root)
    art.manifest.codebase.upstream.repository = "https://example.org/paper.git"
    art.save()
    assert pack(root, tmp_path / "a.tar").bundle is None


def _bundle_of(repo: Path, dest: Path, *refs: str) -> Path:
    subprocess.run(
        ["git", "bundle", "create", "-q", str(dest), *refs],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**GIT_ENV, "PATH": "/usr/local/bin:/usr/bin:/bin"},
    )
    return dest


def _swap_bundle(root: Path, source: Path) -> None:
    """Put ``source`` where the manifest's bundle is and declare its digest (a forger would)."""
    art = api.load(root)
    bundle = art.manifest.codebase.upstream.bundle
    assert bundle is not None
    if source != root / bundle.path:
        shutil.copyfile(source, root / bundle.path)
    bundle.sha256 = file_sha256(root / bundle.path)
    art.save()


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path, str]:
    """An unpacked archive with a bundle, and the paper's repository (for forged bundles)."""
    root, commit = _inside_paper(tmp_path)
    pack(root, tmp_path / "a.tar")
    copy = _unpacked(tmp_path / "a.tar", tmp_path / "copy")
    return copy, tmp_path / "paper", commit


def test_a_bundle_of_another_commit_is_c026(
    hostile: tuple[Path, Path, str], tmp_path: Path
) -> None:
    copy, paper, _ = hostile
    (paper / "extra.txt").write_text("later work\n")
    run_git("add", "-A", cwd=paper)
    run_git("commit", "-q", "-m", "later", cwd=paper)
    _swap_bundle(copy, _bundle_of(paper, tmp_path / "other.bundle", "main"))
    with pytest.raises(CodebaseError) as caught:
        materialize(copy)
    assert _codes(caught) == [("C026", "/codebase/upstream/bundle")]
    found = [(f.code, f.path) for f in api.load(copy).validate().findings if f.code[0] == "C"]
    assert found == [("C026", "/codebase/upstream/bundle")]


def test_a_bundle_with_extra_refs_is_c026(hostile: tuple[Path, Path, str], tmp_path: Path) -> None:
    copy, paper, commit = hostile
    run_git("branch", "side", commit, cwd=paper)
    run_git("tag", "v1", commit, cwd=paper)
    _swap_bundle(copy, _bundle_of(paper, tmp_path / "extra.bundle", "main", "side", "v1"))
    with pytest.raises(CodebaseError) as caught:
        materialize(copy)
    assert _codes(caught) == [("C026", "/codebase/upstream/bundle")]


def test_a_bundle_without_the_whole_history_is_c025(
    hostile: tuple[Path, Path, str], tmp_path: Path
) -> None:
    copy, paper, _ = hostile
    (paper / "extra.txt").write_text("later work\n")
    run_git("add", "-A", cwd=paper)
    run_git("commit", "-q", "-m", "later", cwd=paper)
    _swap_bundle(copy, _bundle_of(paper, tmp_path / "thin.bundle", "main~1..main"))
    with pytest.raises(CodebaseError) as caught:
        materialize(copy)
    assert _codes(caught) == [("C025", "/codebase/upstream/bundle")]


@pytest.mark.parametrize("damage", ["truncated", "garbage", "not-a-bundle"])
def test_a_corrupt_bundle_is_c025(hostile: tuple[Path, Path, str], damage: str) -> None:
    copy, _, _ = hostile
    bundle = api.load(copy).manifest.codebase.upstream.bundle
    assert bundle is not None
    path = copy / bundle.path
    data = path.read_bytes()
    header = data[: data.index(b"\n\n") + 2]
    damaged = {
        "truncated": data[: len(header) + 40],
        "garbage": header + b"PACK" + bytes(range(256)) * 4,
        "not-a-bundle": b"just some text\n\nand more\n",
    }[damage]
    path.write_bytes(damaged)
    _swap_bundle(copy, path)
    with pytest.raises(CodebaseError) as caught:
        materialize(copy)
    assert _codes(caught) == [("C025", "/codebase/upstream/bundle")]


def test_a_bundle_that_differs_from_its_digest_is_c024(hostile: tuple[Path, Path, str]) -> None:
    copy, _, _ = hostile
    bundle = api.load(copy).manifest.codebase.upstream.bundle
    assert bundle is not None
    with (copy / bundle.path).open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(CodebaseError) as caught:
        materialize(copy)
    assert _codes(caught) == [("C024", "/codebase/upstream/bundle")]


def test_a_declared_bundle_that_is_missing_is_f004(hostile: tuple[Path, Path, str]) -> None:
    copy, _, _ = hostile
    bundle = api.load(copy).manifest.codebase.upstream.bundle
    assert bundle is not None
    (copy / bundle.path).unlink()
    found = [(f.code, f.path) for f in api.load(copy).validate().findings if f.code[0] in "CF"]
    assert found == [("F004", "/codebase/upstream/bundle/path")]
    with pytest.raises(CodebaseError) as caught:
        materialize(copy)
    assert _codes(caught) == [("C025", "/codebase/upstream/bundle")]


@pytest.mark.slow
def test_check_of_the_archive_needs_no_original_repository(tmp_path: Path) -> None:
    """The author path with upstream ``..``: pack, remove the repository, check the archive."""
    root, _ = _inside_paper(tmp_path)
    packed = reprobridge(
        "pack", str(root), "-o", str(tmp_path / "tiny.tar.gz"), "--format", "json", cwd=tmp_path
    )
    assert packed.returncode == 0, packed.stderr
    assert json.loads(packed.stdout)["bundle"].startswith("upstream/")
    shutil.move(tmp_path / "tiny.tar.gz", tmp_path / "elsewhere.tar.gz")
    shutil.rmtree(tmp_path / "paper")
    checked = reprobridge(
        "check", str(tmp_path / "elsewhere.tar.gz"), "--format", "json", cwd=tmp_path
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    assert [(s["name"], s["ok"]) for s in report["steps"]] == [
        ("copy", True),
        ("validate", True),
        ("smoke", True),
        ("audit", True),
    ]


def test_a_bundle_outside_the_artifact_is_refused(
    hostile: tuple[Path, Path, str], tmp_path: Path
) -> None:
    """Hostile: the declared bundle leaves the artifact (a ``..`` path, or a link out)."""
    copy, _, _ = hostile
    art = api.load(copy)
    bundle = art.manifest.codebase.upstream.bundle
    assert bundle is not None
    outside = tmp_path / "outside.bundle"
    shutil.copyfile(copy / bundle.path, outside)
    (copy / "upstream" / "link.bundle").symlink_to(outside)
    for path, code in (("../outside.bundle", "F002"), ("upstream/link.bundle", "F003")):
        bundle.path = path
        art.save()
        with pytest.raises(CodebaseError) as caught:
            materialize(copy)
        assert _codes(caught) == [("C025", "/codebase/upstream/bundle")]
        found = {f.code for f in api.load(copy).validate().findings}
        assert code in found
