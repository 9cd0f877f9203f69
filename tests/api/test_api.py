"""The artifact API: create, load, edit and save through typed objects; comments survive."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk import api
from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.errors import ArtifactError, UsageError
from reprobridge_sdk.guide import BEGIN_MARKER, END_MARKER
from reprobridge_sdk.model import Launcher, Manifest, Task


def _manifest() -> Manifest:
    return Manifest.model_validate(
        {
            "rra_version": "1.0",
            "artifact": {
                "id": "api-demo",
                "title": "API demo",
                "license": "MIT",
                "paper": {"title": "A paper"},
            },
            "codebase": {
                "upstream": {"repository": "https://example.org/u.git", "commit": "a" * 40},
                "refined": {"kind": "directory", "path": "code"},
            },
            "environment": {"python": "3.11"},
            "tasks": [
                {
                    "id": "acc",
                    "dataset": "digits",
                    "metric": "accuracy",
                    "published": {"value": 0.9},
                    "direction": "higher",
                    "kind": "full",
                }
            ],
            "launchers": [
                {
                    "id": "run",
                    "argv": ["python", "code/run.py", "--seed", "{seed}"],
                    "seeds": [1],
                    "scope": "scored",
                    "measurements": [
                        {
                            "task": "acc",
                            "aggregate": "single",
                            "extract": {"kind": "regex", "pattern": "^acc: ([0-9.]+)$"},
                        }
                    ],
                }
            ],
        }
    )


def _create(root: Path) -> api.ArtifactDir:
    (root / "code").mkdir(parents=True)
    (root / "code" / "run.py").write_text("print('acc: 0.9')\n", "utf-8")
    return api.create(root, _manifest(), guide_text="# Guide\n\nHand-written text.\n")


def test_create_writes_a_schema_comment_and_no_defaults(tmp_path: Path) -> None:
    art = _create(tmp_path / "a")
    text = art.manifest_path.read_text("utf-8")
    assert text.splitlines()[0] == (
        "# yaml-language-server: $schema=https://reprobridge.org/schemas/rra-1.0.schema.json"
    )
    # defaults the author did not write are not spelled out
    assert "shell:" not in text
    assert "accelerator:" not in text
    assert "workdir:" not in text
    assert art.manifest == _manifest()
    guide = (tmp_path / "a" / "GUIDE.md").read_text("utf-8")
    assert guide.startswith("# Guide\n\nHand-written text.\n")
    assert BEGIN_MARKER in guide
    assert END_MARKER in guide


def test_create_refuses_to_overwrite(tmp_path: Path) -> None:
    _create(tmp_path / "a")
    with pytest.raises(ArtifactError):
        api.create(tmp_path / "a", _manifest())
    again = api.create(tmp_path / "a", _manifest(), overwrite=True)
    assert again.manifest.artifact.id == "api-demo"


def test_edit_save_reload_keeps_comments(tmp_path: Path) -> None:
    art = _create(tmp_path / "a")
    path = art.manifest_path
    # an author adds comments by hand
    text = path.read_text("utf-8")
    text = text.replace("  title: API demo\n", "  title: API demo  # short title\n")
    text = text.replace("tasks:\n", "# One task per paper measurement.\ntasks:\n")
    path.write_text(text, "utf-8")

    art = api.load(tmp_path / "a")
    art.manifest.tasks[0].published.value = 0.91
    art.add_task(
        Task(
            id="f1",
            dataset="digits",
            metric="macro F1",
            published={"value": 0.88},  # type: ignore[arg-type]
            direction="higher",
            kind="evaluation",
        )
    )
    art.manifest.launchers[0].measurements.append(
        art.manifest.launchers[0].measurements[0].model_copy(update={"task": "f1"})
    )
    art.record_change(
        "pin-numpy",
        "execution-fix",
        "Pin numpy below 2",
        "The upstream code uses np.float.",
        files=["code/run.py"],
        tasks=["acc"],
    )
    assert art.save() is True
    assert art.save() is False  # nothing left to write

    saved = path.read_text("utf-8")
    assert "  title: API demo  # short title" in saved
    assert "# One task per paper measurement." in saved
    reloaded = api.load(path)
    assert reloaded.manifest.task("acc").published.value == 0.91
    assert reloaded.manifest.task("f1").kind == "evaluation"
    assert [c.id for c in reloaded.manifest.guide.changes] == ["pin-numpy"]
    assert reloaded.manifest == art.manifest

    # edit again through the reloaded object: comments are still there
    reloaded.manifest.artifact.title = "API demo, second edit"
    reloaded.save()
    final = path.read_text("utf-8")
    title = next(line for line in final.splitlines() if line.startswith("  title:"))
    assert title.startswith("  title: API demo, second edit ")
    assert title.endswith(" # short title")
    assert "# One task per paper measurement." in final


def test_editing_helpers_reject_duplicates_and_unknown_tasks(tmp_path: Path) -> None:
    art = _create(tmp_path / "a")
    with pytest.raises(UsageError):
        art.add_task(art.manifest.tasks[0].model_copy())
    with pytest.raises(UsageError):
        art.add_launcher(Launcher(id="run", argv=["x"], scope="smoke"))
    with pytest.raises(UsageError):
        art.record_change("c", "convenience", "s", "r", tasks=["no-such-task"])
    art.record_change("c", "convenience", "s", "r")
    with pytest.raises(UsageError):
        art.record_change("c", "convenience", "s", "r")
    launcher = art.add_launcher({"id": "smoke", "argv": ["true"], "scope": "smoke"})
    assert launcher.id == "smoke"


def test_invalid_edit_is_refused_on_save(tmp_path: Path) -> None:
    art = _create(tmp_path / "a")
    before = art.manifest_path.read_bytes()
    art.manifest.tasks.clear()
    with pytest.raises(ArtifactError) as caught:
        art.save()
    assert [(f.code, f.path) for f in caught.value.findings] == [("S004", "/tasks")]
    assert art.manifest_path.read_bytes() == before


def test_refresh_digests_and_write_guide(tmp_path: Path) -> None:
    art = _create(tmp_path / "a")
    (tmp_path / "a" / "env").mkdir()
    (tmp_path / "a" / "env" / "req.txt").write_text("# empty lock\n", "utf-8")
    art.manifest.environment.lock = {"path": "env/req.txt", "format": "requirements"}  # type: ignore[assignment]
    assert art.refresh_digests() == ["/codebase/tree_digest", "/environment/lock/sha256"]
    assert art.refresh_digests() == []
    art.record_change("c1", "convenience", "Add a flag", "Saves typing.", tasks=["acc"])
    art.save()
    assert art.write_guide() is True
    assert art.write_guide() is False
    reloaded = api.load(tmp_path / "a")
    assert reloaded.manifest.codebase.tree_digest == tree_digest(tmp_path / "a" / "code")
    lock = reloaded.manifest.environment.lock
    assert lock is not None
    assert lock.sha256 == file_sha256(tmp_path / "a" / "env" / "req.txt")
    result = reloaded.validate()
    assert [(f.code, f.path) for f in result.findings] == [
        ("R010", "/tasks/0/reference/observations")  # the test manifest has no references
    ]


def _rewrite(root: Path, old: str, new: str) -> None:
    path = root / "rra.yaml"
    path.write_text(path.read_text("utf-8").replace(old, new), "utf-8")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("  metric: accuracy\n", "  metrik: accuracy\n", {("S001", "/tasks/0/metrik")}),
        ("direction: higher", "direction: up", {("S004", "/tasks/0/direction")}),
        ("rra_version: '1.0'", "rra_version: '1.0'\nrra_version: '1.0'", {("Y003", "")}),
        ("seeds: [1]", "seeds: 1", {("S003", "/launchers/0/seeds")}),
    ],
    ids=["misspelled-key", "bad-enum", "duplicate-key", "wrong-type"],
)
def test_load_errors_carry_located_findings(
    tmp_path: Path, old: str, new: str, expected: set[tuple[str, str]]
) -> None:
    root = tmp_path / "a"
    _create(root)
    _rewrite(root, old, new)
    with pytest.raises(ArtifactError) as caught:
        api.load(root)
    found = caught.value.findings
    assert expected <= {(f.code, f.path if f.code != "Y003" else "") for f in found}
    assert all(f.file.endswith("rra.yaml") and f.line > 0 for f in found)


def test_load_without_manifest_is_y010(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError) as caught:
        api.load(tmp_path)
    assert [f.code for f in caught.value.findings] == ["Y010"]


def test_public_names_are_reexported() -> None:
    code = (
        "import reprobridge_sdk as r; "
        "print(r.load is r.api.load, r.create.__name__, r.ArtifactDir.__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["True", "create", "ArtifactDir"]


def _data(art: api.ArtifactDir) -> dict[str, Any]:
    return art.data()


def test_data_keeps_keys_the_author_wrote_even_when_default(tmp_path: Path) -> None:
    root = tmp_path / "a"
    _create(root)
    _rewrite(root, "    scope: scored\n", "    scope: scored\n    shell: false\n")
    art = api.load(root)
    assert _data(art)["launchers"][0]["shell"] is False
    assert "workdir" not in _data(art)["launchers"][0]


_SCAFFOLD_LINES = (
    (Path(__file__).parent / "fixtures" / "rra.yaml").read_text("utf-8").splitlines(keepends=True)
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(st.integers(min_value=0, max_value=len(_SCAFFOLD_LINES) - 1), max_size=4),
    st.text(max_size=30),
)
def test_load_raises_only_artifact_errors_on_damaged_manifests(
    tmp_path: Path, dropped: list[int], noise: str
) -> None:
    lines = [line for index, line in enumerate(_SCAFFOLD_LINES) if index not in set(dropped)]
    if lines:
        lines[len(noise) % len(lines)] += noise + "\n"
    (tmp_path / "rra.yaml").write_text("".join(lines), "utf-8")
    try:
        art = api.load(tmp_path)
    except ArtifactError as exc:
        assert exc.findings
        assert all(item.code[:1] in "YVSRF" for item in exc.findings)
    else:
        assert isinstance(art.manifest, Manifest)
