"""A newer minor version's document as every consumer reads it (spec "forward-compatibility").

Unknown keys are ignored (S005); an unknown enumeration value sets aside the list item that
carries it (S006), with what refers to it; nothing left is V007; a closed enumeration's
unknown value is S004; ``save()`` refuses to lose what was set aside (V008).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from reprobridge_sdk import validate
from reprobridge_sdk.api import load
from reprobridge_sdk.audit import audit, load_artifact
from reprobridge_sdk.env import verify_data
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.run.dryrun import dry_run
from reprobridge_sdk.validation.forward import carrier

CASES = Path(__file__).resolve().parents[2] / "validators" / "cases"


def _copy(tmp_path: Path, case: str) -> Path:
    target = tmp_path / case
    shutil.copytree(CASES / case, target)
    return target


def _edit(root: Path, change: Any) -> None:
    path = root / "rra.yaml"
    data = yaml.safe_load(path.read_text("utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")


def _codes(root: Path) -> list[tuple[str, str]]:
    return sorted((f.code, f.path) for f in validate(root, check_files=False).findings)


def test_an_unknown_key_is_ignored_and_save_refuses_to_lose_it(tmp_path: Path) -> None:
    root = _copy(tmp_path, "newer-minor-with-unknown-key")
    art = load(root)
    assert art.forward is not None
    assert art.forward.ignored == ("/tasks/0/baseline",)
    assert art.forward.skipped == ()
    assert art.manifest.tasks[0].extensions() == {}
    before = (root / "rra.yaml").read_bytes()
    with pytest.raises(ArtifactError) as caught:
        art.save()
    assert [(f.code, f.path) for f in caught.value.findings] == [("V008", "/tasks/0/baseline")]
    assert (root / "rra.yaml").read_bytes() == before
    guide = (root / "GUIDE.md").read_bytes()
    with pytest.raises(ArtifactError) as caught:
        art.write_guide()  # the guide's records are rendered from the manifest: same refusal
    assert [f.code for f in caught.value.findings] == ["V008"]
    assert (root / "GUIDE.md").read_bytes() == guide


def test_a_newer_minor_document_read_whole_is_saved(tmp_path: Path) -> None:
    root = _copy(tmp_path, "newer-minor-version")
    art = load(root)
    assert art.forward is not None and not art.forward.changed
    art.manifest.tasks[0].metric = "top-1 accuracy"
    assert art.save() is True
    assert load(root).manifest.rra_version == "1.9"


def test_an_unknown_value_sets_aside_its_task_and_the_measurement_of_it(tmp_path: Path) -> None:
    root = _copy(tmp_path, "newer-minor-with-unknown-value")
    art = load(root)
    assert art.forward is not None
    assert art.forward.skipped == ("/launchers/0/measurements/0", "/tasks/0")
    assert [t.id for t in art.manifest.tasks] == ["accuracy-top5"]
    assert [m.task for m in art.manifest.launchers[0].measurements] == ["accuracy-top5"]
    facts = load_artifact(root)  # the auditor reads it the same way
    assert [t.id for t in facts.manifest.tasks] == ["accuracy-top5"]
    assert [p.launcher for p in dry_run(root, env_mode="current")] == ["train"] * 3
    assert art.forward.to_document("/tasks/0/reference") == "/tasks/1/reference"
    assert art.forward.to_document("/launchers/0/measurements/0") == "/launchers/0/measurements/1"
    # the auditor's own findings point into the document, not into the view
    report = audit(root).model_dump()  # no runs: A024 on the task
    assert report["tasks"][0]["id"] == "accuracy-top5"
    assert _task_pointers(report) and all(p.startswith("/tasks/1") for p in _task_pointers(report))


def _task_pointers(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [value["path"]] if str(value.get("path", "")).startswith("/tasks/") else []
        return found + [p for item in value.values() for p in _task_pointers(item)]
    if isinstance(value, list):
        return [p for item in value for p in _task_pointers(item)]
    return []


def test_set_aside_data_items_take_their_launchers_along(tmp_path: Path) -> None:
    root = _copy(tmp_path, "newer-minor-with-unknown-value")

    def change(data: dict[str, Any]) -> None:
        data["tasks"][0]["direction"] = "higher"
        data["environment"]["data"] = [
            {"id": "digits", "source": {"url": "https://example.org/d"}, "access": "torrent"},
            {"id": "extra", "source": {"url": "https://example.org/e"}},
        ]
        train = data["launchers"][0]
        prepare = {"id": "prepare", "argv": ["python"], "scope": "smoke", "data": ["digits"]}
        evaluate = {**train, "id": "evaluate", "needs": ["prepare"], "data": ["extra"]}
        guide = data.setdefault("guide", {})
        guide["changes"] = [
            {"id": "c1", "kind": "style-fix", "summary": "s", "rationale": "r"},
            {"id": "c2", "kind": "convenience", "summary": "s", "rationale": "r"},
        ]
        data["launchers"] = [prepare, evaluate, train]

    _edit(root, change)
    assert _codes(root) == [
        ("S006", "/environment/data/0/access"),
        ("S006", "/guide/changes/0/kind"),
        ("V003", "/rra_version"),
    ]
    art = load(root)
    assert art.forward is not None
    assert art.forward.skipped == (
        "/environment/data/0",
        "/guide/changes/0",
        "/launchers/0",
        "/launchers/1",
    )
    assert [item.id for item in art.manifest.environment.data] == ["extra"]
    assert [launcher.id for launcher in art.manifest.launchers] == ["train"]
    assert [change.id for change in art.manifest.guide.changes] == ["c2"]


def test_nothing_left_is_v007_to_the_validator_and_to_load(tmp_path: Path) -> None:
    root = _copy(tmp_path, "newer-minor-nothing-left")
    assert ("V007", "/tasks") in _codes(root)
    with pytest.raises(ArtifactError) as caught:
        load(root)
    assert ("V007", "/tasks") in [(f.code, f.path) for f in caught.value.findings]


def test_a_closed_enumeration_is_an_error_whatever_the_minor_version(tmp_path: Path) -> None:
    root = _copy(tmp_path, "newer-minor-value-in-closed-enumeration")
    assert ("S004", "/environment/lock/format") in _codes(root)
    with pytest.raises(ArtifactError) as caught:
        load(root)
    assert ("S004", "/environment/lock/format") in [(f.code, f.path) for f in caught.value.findings]


@pytest.mark.parametrize(
    ("pointer", "element"),
    [
        ("/launchers/2/measurements/0/extract/kind", "/launchers/2/measurements/0"),
        ("/launchers/10/scope", "/launchers/10"),
        ("/tasks/3/statistic/aggregate", "/tasks/3"),
        ("/environment/data/1/access", "/environment/data/1"),
        ("/guide/open_choices/0/x", "/guide/open_choices/0"),
        ("/codebase/refined/kind", None),
        ("/environment/lock/format", None),
        ("/environment/accelerator/kind", None),
        ("/tasks", None),
        ("/tasks/0x", None),
    ],
)
def test_the_carrier_of_a_value(pointer: str, element: str | None) -> None:
    assert carrier(pointer) == element


def test_run_says_what_it_sets_aside_before_it_prepares(tmp_path: Path) -> None:
    root = _copy(tmp_path, "newer-minor-with-unknown-value")
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "run", "--dry-run", "--env", "current", root],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert " V003 warning " in done.stdout
    assert " S006 warning " in done.stdout
    assert "Traceback" not in done.stderr


def test_the_environment_commands_read_the_same_view(tmp_path: Path) -> None:
    root = _copy(tmp_path, "newer-minor-version")

    def change(data: dict[str, Any]) -> None:
        data["environment"]["containers"] = ["docker"]  # a key of a later minor version
        data["environment"]["data"] = [
            {"id": "net", "source": {"url": "https://example.org/n"}, "access": "torrent"},
            {"id": "local", "source": {"url": "https://example.org/l"}, "destination": "d.txt"},
        ]

    _edit(root, change)
    assert not [f for f in validate(root).findings if f.severity.value == "error"]
    result = verify_data(root)  # no S001 for the key; the torrent item is set aside
    assert result.present == []
    assert [(f.code, f.path) for f in result.findings if f.code == "D001"] == [
        ("D001", "/environment/data/1")  # the document's index, not the view's 0
    ]


ENV_ALONE = """
import json, sys
from reprobridge_sdk.env.data import verify_data
root = sys.argv[1]
before = "reprobridge_sdk.api" in sys.modules
result = verify_data(root)
print(json.dumps({
    "api_before": before,
    "d001": [f.path for f in result.findings if f.code == "D001"],
}))
"""


def test_the_environment_layer_alone_reads_the_view_without_importing_the_api_first(
    tmp_path: Path,
) -> None:
    """A process that uses only the environment layer: the reader the package registers (the
    dependency inverted, no import of the API by the layer) gives the same view."""
    root = _copy(tmp_path, "newer-minor-version")

    def change(data: dict[str, Any]) -> None:
        data["environment"]["data"] = [
            {"id": "net", "source": {"url": "https://example.org/n"}, "access": "torrent"},
            {"id": "local", "source": {"url": "https://example.org/l"}, "destination": "d.txt"},
        ]

    _edit(root, change)
    done = subprocess.run(
        [sys.executable, "-c", ENV_ALONE, str(root)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == {"api_before": False, "d001": ["/environment/data/1"]}
