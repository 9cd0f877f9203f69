"""``code import``/``record`` and the checkout refuse what they cannot use, each with its code:
a request they cannot use (C009), a commit the upstream lacks (C002), refined code whose digest
is not the declared one (C004), git missing (C010, for every command, whatever the source), a
checkout of another series (C011), a ``code/`` that no import made (C016). Real git
repositories, made in the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from authoring_support import DEFECT_LINE, FIXED_LINE, make_paper_repo

from reprobridge_sdk import api
from reprobridge_sdk.authoring.codebase import code_diff, import_code, materialize, record_patch
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.checkout import CodebaseError


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    make_paper_repo(tmp_path / "paper")
    return tmp_path / "paper"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "artifact"
    scaffold(path, InitOptions(id="tiny", title="Tiny"))
    return path


def _codes(caught: pytest.ExceptionInfo[CodebaseError]) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in caught.value.findings]


def _fix(root: Path) -> None:
    train = root / "code" / "train.py"
    train.write_text(train.read_text("utf-8").replace(DEFECT_LINE, FIXED_LINE), "utf-8")


@pytest.mark.parametrize(
    "request_",
    [
        ("paper", None, "tarball"),  # neither a directory nor a series
        ("not-a-repository", None, "patches"),  # a directory without git
        ("paper", "main-branch-that-does-not-exist", "patches"),  # neither a branch nor a tag
    ],
)
def test_an_import_request_that_cannot_be_used_is_c009(
    paper: Path, root: Path, tmp_path: Path, request_: tuple[str, str | None, str]
) -> None:
    source, commit, as_ = request_
    (tmp_path / "not-a-repository").mkdir()
    before = (root / "rra.yaml").read_bytes()
    with pytest.raises(CodebaseError) as caught:
        import_code(root, str(tmp_path / source), commit=commit, as_=as_, force=True)  # type: ignore[arg-type]
    assert [code for code, _ in _codes(caught)] == ["C009"]
    assert (root / "rra.yaml").read_bytes() == before


@pytest.mark.parametrize(("kind", "why"), [("bugfix", "Seed it."), ("convenience", "  \n")])
def test_a_record_request_that_cannot_be_used_is_c009(
    paper: Path, root: Path, kind: str, why: str
) -> None:
    import_code(root, str(paper), as_="patches", force=True)
    _fix(root)
    with pytest.raises(CodebaseError) as caught:
        record_patch(root, kind=kind, why=why)
    assert [code for code, _ in _codes(caught)] == ["C009"]
    assert api.load(root).manifest.codebase.refined.patches == []


def test_a_commit_the_upstream_does_not_have_is_c002(paper: Path, root: Path) -> None:
    with pytest.raises(CodebaseError) as caught:
        import_code(root, str(paper), commit="f" * 40, as_="patches", force=True)
    assert _codes(caught) == [("C002", "/codebase/upstream/commit")]


def test_git_missing_is_c010(paper: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import_code(root, str(paper), as_="patches", force=True)
    shutil.rmtree(root / "code")
    # A PATH that holds no git: the machine's git is real, only hidden from the SDK, which
    # needs it to check the series out again.
    empty = root.parent / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(CodebaseError) as caught:
        materialize(root)
    assert [code for code, _ in _codes(caught)] == ["C010"]
    assert not (root / "code").exists()


def test_refined_code_with_another_digest_is_c004(paper: Path, root: Path) -> None:
    import_code(root, str(paper), as_="directory", force=True)
    _fix(root)  # a change of the refined code that the manifest's digest does not know
    with pytest.raises(CodebaseError) as caught:
        materialize(root)
    assert _codes(caught) == [("C004", "/codebase/tree_digest")]


def test_a_checkout_of_another_series_is_c011(paper: Path, root: Path) -> None:
    import_code(root, str(paper), as_="patches", force=True)
    _fix(root)
    record_patch(root, kind="correctness-fix", why="Seed the generator.")
    art = api.load(root)
    art.manifest.codebase.refined.patches = []  # the series changed by hand, not the checkout
    art.save()
    train = root / "code" / "train.py"
    train.write_text(train.read_text("utf-8") + "# another change\n", "utf-8")
    with pytest.raises(CodebaseError) as caught:
        record_patch(root, kind="convenience", why="Another change.")
    assert [code for code, _ in _codes(caught)] == ["C011"]


def test_code_that_no_import_made_cannot_be_recorded_c016(root: Path) -> None:
    code = root / "code"
    if code.exists():
        shutil.rmtree(code)
    code.mkdir()
    (code / "train.py").write_text("print('mine')\n", "utf-8")
    with pytest.raises(CodebaseError) as caught:
        record_patch(root, kind="convenience", why="My change.")
    assert [code for code, _ in _codes(caught)] == ["C016"]


@pytest.mark.parametrize(
    "source",
    [
        "paper",  # a local repository: git is needed to find its top level
        "not-a-repository",  # without git, nothing can tell it is not one
        "https://example.org/paper.git",  # a URL: git ls-remote resolves HEAD
    ],
)
def test_code_import_without_git_is_c010_whatever_the_source(
    paper: Path, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    # C009 is for a source, commit or kind that cannot be used; here nothing is wrong with
    # the request: git, which every import needs, is missing (hidden by an empty PATH).
    (tmp_path / "not-a-repository").mkdir()
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    before = (root / "rra.yaml").read_bytes()
    location = source if "://" in source else str(tmp_path / source)
    with pytest.raises(CodebaseError) as caught:
        import_code(root, location, force=True)
    assert [code for code, _ in _codes(caught)] == ["C010"]
    assert caught.value.findings[0].hint
    assert (root / "rra.yaml").read_bytes() == before


def test_code_record_without_git_is_c010(
    paper: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_code(root, str(paper), as_="patches", force=True)
    _fix(root)
    empty = root.parent / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(CodebaseError) as caught:
        record_patch(root, kind="convenience", why="Seed it.")
    assert [code for code, _ in _codes(caught)] == ["C010"]
    assert api.load(root).manifest.codebase.refined.patches == []


def test_code_diff_without_git_is_c010(
    paper: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_code(root, str(paper), as_="patches", force=True)
    _fix(root)
    empty = root.parent / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(CodebaseError) as caught:
        code_diff(root)
    assert [code for code, _ in _codes(caught)] == ["C010"]


def test_an_upstream_missing_an_object_of_its_old_history_still_gives_the_commit(
    tmp_path: Path,
) -> None:
    """A copy of a repository that lost a blob of an earlier commit (a large file dropped
    from a mirror or a partial copy) is a complete source of the commit the artifact pins:
    only that commit's tree is fetched, never the history behind it."""
    from reprobridge_sdk.checkout import fetch_upstream, init_checkout

    source = tmp_path / "source"
    source.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2020-01-01T00:00:00",
        "GIT_COMMITTER_DATE": "2020-01-01T00:00:00",
    }

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=source, env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    (source / "big.bin").write_bytes(b"embeddings " * 1000)
    (source / "train.py").write_text("print('acc=1')\n")
    git("add", "-A")
    git("commit", "-q", "-m", "with the large file")
    lost = git("rev-parse", "HEAD:big.bin")
    git("rm", "-q", "big.bin")
    git("commit", "-q", "-m", "without it")
    commit = git("rev-parse", "HEAD")
    (source / ".git" / "objects" / lost[:2] / lost[2:]).unlink()
    broken = subprocess.run(
        ["git", "fsck"], cwd=source, env=env, capture_output=True, text=True, check=False
    )
    assert lost in broken.stdout + broken.stderr  # the copy really is incomplete

    bare = fetch_upstream(tmp_path / "art", str(source), commit)
    dest = tmp_path / "checkout"
    init_checkout(bare, commit, dest)
    assert sorted(p.name for p in dest.iterdir() if p.name != ".git") == ["train.py"]
