"""The author's patch applied with git apply: cleanly, or not at all (B024)."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_fixtures import git

from reprobridge_sdk.agent.patching import apply_patch


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("print 'accuracy: 0.9'\n", "utf-8")
    git("init", "--quiet", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", "code", cwd=repo)
    return repo


_GOOD = """\
diff --git a/train.py b/train.py
--- a/train.py
+++ b/train.py
@@ -1 +1 @@
-print 'accuracy: 0.9'
+print('accuracy: 0.9')
"""


def test_a_patch_that_applies_changes_the_code(tmp_path: Path) -> None:
    repo = _checkout(tmp_path)
    assert apply_patch(_GOOD, repo, name="py3.diff") is None
    assert (repo / "train.py").read_text("utf-8") == "print('accuracy: 0.9')\n"


@pytest.mark.parametrize(
    "text",
    [
        _GOOD.replace("-print 'accuracy: 0.9'", "-print 'accuracy: 0.8'"),  # another base
        _GOOD.replace("a/train.py", "a/../outside.py").replace("b/train.py", "b/../outside.py"),
        "not a patch at all\n",
        "",
    ],
)
def test_a_patch_that_does_not_apply_is_b024_and_changes_nothing(tmp_path: Path, text: str) -> None:
    repo = _checkout(tmp_path)
    found = apply_patch(text, repo, name="py3.diff")
    assert found is not None and (found.code, found.severity, found.path) == (
        "B024",
        "error",
        "/patch/path",
    )
    assert (repo / "train.py").read_text("utf-8") == "print 'accuracy: 0.9'\n"
    assert not (tmp_path / "outside.py").exists()
