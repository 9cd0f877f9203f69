"""``reprobridge code``: import, record, diff, status and the patch-series checkout.

Every test uses real git repositories made in the test (and a loopback ``git daemon``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from authoring_support import (
    DEFECT_LINE,
    FIXED_LINE,
    git_daemon,
    make_paper_repo,
    reprobridge,
    run_git,
)

from reprobridge_sdk import api, validate
from reprobridge_sdk.authoring.codebase import (
    code_diff,
    code_status,
    import_code,
    materialize,
    record_patch,
)
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.checkout import CodebaseError
from reprobridge_sdk.digest import tree_digest


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(cache))
    return cache


def _artifact(tmp_path: Path) -> Path:
    root = tmp_path / "artifact"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    return root


def _codes(root: Path) -> list[str]:
    return sorted(f.code for f in validate(root).findings)


def _fix(root: Path) -> None:
    train = root / "code" / "train.py"
    train.write_text(train.read_text("utf-8").replace(DEFECT_LINE, FIXED_LINE), "utf-8")


def test_import_as_patches_starts_an_empty_series_and_validates(tmp_path: Path) -> None:
    commit = make_paper_repo(tmp_path / "paper")
    root = _artifact(tmp_path)
    result = import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    assert result.commit == commit
    art = api.load(root)
    codebase = art.manifest.codebase
    assert codebase.upstream.repository == (tmp_path / "paper").resolve().as_uri()
    assert codebase.upstream.commit == commit
    assert codebase.refined.kind == "patches"
    assert codebase.refined.patches == []
    assert art.manifest.rra_version == "1.1"  # an empty series is a format 1.1 feature
    assert codebase.tree_digest == tree_digest(root / "code")
    assert (root / "code" / "train.py").is_file()
    assert "C" not in "".join(code[0] for code in _codes(root))


def test_record_turns_working_changes_into_the_next_patch(tmp_path: Path) -> None:
    make_paper_repo(tmp_path / "paper")
    root = _artifact(tmp_path)
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    _fix(root)
    diff = code_diff(root)
    assert "+" + FIXED_LINE.rstrip("\n") in diff.splitlines()
    assert "C008" in _codes(root)  # run would refuse code/ as it stands: an error, not C006
    change = record_patch(
        root,
        kind="correctness-fix",
        why="Seed the generator so runs repeat.",
        tasks=["main-result"],
    )
    assert change.kind == "correctness-fix"
    assert change.patch == "patches/0001-seed-the-generator-so-runs-repeat.patch"
    assert change.files == ["train.py"]
    assert change.tasks == ["main-result"]
    art = api.load(root)
    patches = art.manifest.codebase.refined.patches
    assert [p.path for p in patches] == [change.patch]
    assert art.manifest.codebase.tree_digest == tree_digest(root / "code")
    assert [c.id for c in art.manifest.guide.changes] == ["correctness-fix-1"]
    assert code_diff(root) == ""
    assert not [c for c in _codes(root) if c.startswith(("C", "F"))]
    # The checkout is derived: without it, materialize rebuilds the same tree.
    before = tree_digest(root / "code")
    import shutil

    shutil.rmtree(root / "code")
    assert materialize(root) == root / "code"
    assert tree_digest(root / "code") == before
    assert FIXED_LINE in (root / "code" / "train.py").read_text("utf-8")


def test_nothing_to_record_is_c007(tmp_path: Path) -> None:
    make_paper_repo(tmp_path / "paper")
    root = _artifact(tmp_path)
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    with pytest.raises(CodebaseError) as caught:
        record_patch(root, kind="convenience", why="nothing")
    assert [f.code for f in caught.value.findings] == ["C007"]


def test_a_patch_that_does_not_apply_names_the_patch_and_hunk(tmp_path: Path) -> None:
    make_paper_repo(tmp_path / "paper")
    root = _artifact(tmp_path)
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    _fix(root)
    record_patch(root, kind="correctness-fix", why="Seed the generator.")
    art = api.load(root)
    patch = root / art.manifest.codebase.refined.patches[0].path
    patch.write_text(patch.read_text("utf-8").replace("rng = random.Random()", "rng = Rng()"))
    art.refresh_digests()
    art.save()
    status = code_status(root)
    assert [(p.position, p.state) for p in status.patches] == [(1, "fails")]
    item = status.patches[0].finding
    assert item is not None and item.code == "C003"
    assert item.path == "/codebase/refined/patches/0"
    assert "hunk 1 of train.py" in item.message
    with pytest.raises(CodebaseError) as caught:
        materialize(root, force=True)
    assert [f.code for f in caught.value.findings] == ["C003"]


def test_materialize_never_discards_unrecorded_changes(tmp_path: Path) -> None:
    make_paper_repo(tmp_path / "paper")
    root = _artifact(tmp_path)
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    _fix(root)
    record_patch(root, kind="correctness-fix", why="Seed the generator.")
    (root / "code" / "notes.txt").write_text("scratch\n", "utf-8")
    # another series on disk (the patch list changed by hand): rebuilding would lose notes.txt
    art = api.load(root)
    art.manifest.codebase.refined.patches = []
    art.save()
    with pytest.raises(CodebaseError) as caught:
        materialize(root)
    assert [f.code for f in caught.value.findings] == ["C008"]
    assert (root / "code" / "notes.txt").is_file()


def test_validate_never_fetches_and_warns_c005_without_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_paper_repo(tmp_path / "paper")
    root = _artifact(tmp_path)
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    import shutil

    shutil.rmtree(root / "code")
    assert "C005" not in _codes(root)  # the upstream is in the cache: the series is checked
    monkeypatch.setenv("REPROBRIDGE_CACHE_DIR", str(tmp_path / "empty-cache"))
    found = [f for f in validate(root).findings if f.code.startswith(("C", "F"))]
    assert [(f.code, f.severity.value, f.path) for f in found] == [
        ("C005", "warning", "/codebase/upstream")
    ]
    assert not (tmp_path / "empty-cache" / "upstream").exists() or not any(
        (tmp_path / "empty-cache" / "upstream").glob("*.git")
    )


def test_import_over_a_loopback_git_daemon_with_the_cli(tmp_path: Path) -> None:
    commit = make_paper_repo(tmp_path / "served" / "paper.git")
    root = _artifact(tmp_path)
    with git_daemon(tmp_path / "served") as base:
        url = f"{base}/paper.git"
        done = reprobridge(
            "code", "import", url, "-C", str(root), "--as", "patches", "--force", cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        art = api.load(root)
        assert art.manifest.codebase.upstream.repository == url
        assert art.manifest.codebase.upstream.commit == commit
        _fix(root)
        shown = reprobridge("code", "diff", "-C", str(root), cwd=tmp_path)
        assert shown.returncode == 1
        assert "+" + FIXED_LINE.rstrip("\n") in shown.stdout.splitlines()
        recorded = reprobridge(
            "code",
            "record",
            "-C",
            str(root),
            "--kind",
            "execution-fix",
            "--why",
            "Seed it.",
            cwd=tmp_path,
        )
        assert recorded.returncode == 0, recorded.stderr
    # the daemon is gone: the cache keyed by repository and commit still serves the series
    import shutil

    shutil.rmtree(root / "code")
    status = reprobridge("code", "status", "-C", str(root), "--format", "json", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert [(p["position"], p["state"]) for p in data["patches"]] == [(1, "applies")]
    assert data["tree_digest"] == data["declared_digest"]


def test_the_enclosing_repository_is_named_by_dot_dot_segments(tmp_path: Path) -> None:
    commit = make_paper_repo(tmp_path / "paper")
    root = tmp_path / "paper" / "rra"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    result = import_code(root, str(tmp_path / "paper"), as_="directory", force=True)
    assert result.repository == ".."
    assert result.commit == commit
    assert (root / "code" / "train.py").is_file()
    run_git("status", "--porcelain", cwd=tmp_path / "paper")  # the outer repo stays usable


def test_an_unreachable_upstream_is_c001_with_gits_message(tmp_path: Path) -> None:
    root = _artifact(tmp_path)
    with pytest.raises(CodebaseError) as caught:
        import_code(root, "git://127.0.0.1:9/none.git", commit="a" * 40, force=True)
    assert [f.code for f in caught.value.findings] == ["C001"]


def test_a_commit_the_upstream_lacks_is_c002_and_a_short_id_c009(tmp_path: Path) -> None:
    make_paper_repo(tmp_path / "paper")
    root = _artifact(tmp_path)
    with pytest.raises(CodebaseError) as caught:
        import_code(root, str(tmp_path / "paper"), commit="1" * 40, force=True)
    assert [(f.code, f.path) for f in caught.value.findings] == [
        ("C002", "/codebase/upstream/commit")
    ]
    with pytest.raises(CodebaseError) as caught:
        import_code(root, str(tmp_path / "paper"), commit="abc1234", force=True)
    assert [f.code for f in caught.value.findings] == ["C009"]


def test_without_git_on_path_is_c010(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _artifact(tmp_path)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(CodebaseError) as caught:
        import_code(root, "https://example.org/paper.git", commit="a" * 40, force=True)
    assert [f.code for f in caught.value.findings] == ["C010"]


def test_recording_in_a_scaffold_or_a_stale_checkout_is_refused(tmp_path: Path) -> None:
    root = _artifact(tmp_path)
    with pytest.raises(CodebaseError) as caught:
        record_patch(root, kind="convenience", why="x")
    assert [f.code for f in caught.value.findings] == ["C016"]
    make_paper_repo(tmp_path / "paper")
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    _fix(root)
    record_patch(root, kind="correctness-fix", why="Seed the generator.")
    art = api.load(root)
    art.manifest.codebase.refined.patches = []  # the manifest no longer lists the patch
    art.save()
    (root / "code" / "notes.txt").write_text("x\n", "utf-8")
    with pytest.raises(CodebaseError) as caught:
        record_patch(root, kind="convenience", why="Notes.")
    assert [(f.code, f.path) for f in caught.value.findings] == [
        ("C011", "/codebase/refined/patches")
    ]


def test_a_tree_other_than_the_declared_one_is_c004(tmp_path: Path) -> None:
    make_paper_repo(tmp_path / "paper")
    root = _artifact(tmp_path)
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    art = api.load(root)
    art.manifest.codebase.tree_digest = "sha256-tree1:" + "0" * 64
    art.save()
    with pytest.raises(CodebaseError) as caught:
        materialize(root)
    assert [(f.code, f.path) for f in caught.value.findings] == [("C004", "/codebase/tree_digest")]
    assert "C004" in _codes(root)  # validate reads the checkout in place


def test_a_relative_upstream_must_name_the_enclosing_repository(tmp_path: Path) -> None:
    root = _artifact(tmp_path)  # not inside any git repository
    art = api.load(root)
    art.manifest.codebase.refined = type(art.manifest.codebase.refined)(kind="patches")
    art.manifest.codebase.upstream.repository = "../somewhere"
    art.manifest.codebase.upstream.commit = "a" * 40
    art.save()
    import shutil

    shutil.rmtree(root / "code")
    with pytest.raises(CodebaseError) as caught:
        materialize(root)
    assert [(f.code, f.path) for f in caught.value.findings] == [
        ("C001", "/codebase/upstream/repository")
    ]
