"""Drift with ``--env current``: only what matters to reproduction, read once per invocation.

Real runs of the toy artifact in the current interpreter, with a lock written to pin real
installed distributions at their versions, one at another version and one that is absent.
"""

from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml

from reprobridge_sdk.env.check import lock_drift
from reprobridge_sdk.model import Environment
from reprobridge_sdk.run import load_record, read_snapshot, run

_HASH = "--hash=sha256:" + "0" * 64


def _with_lock(root: Path, lines: list[str], python: str | None = None) -> None:
    (root / "requirements.lock").write_text(
        "".join(f"{line} \\\n    {_HASH}\n" for line in lines), "utf-8"
    )
    path = root / "rra.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text("utf-8"))
    data["environment"]["lock"] = {"path": "requirements.lock", "format": "requirements"}
    if python is not None:
        data["environment"]["python"] = python
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")


def _codes(drift: list[str]) -> list[str]:
    return [item.split(":", 1)[0] for item in drift]


def test_drift_names_only_lock_entries_that_differ(toy: Path) -> None:
    click_version = metadata.version("click")
    _with_lock(
        toy,
        [
            f"click=={click_version}",  # installed at the pinned version: no drift
            "pydantic==0.0.1",  # installed at another version
            "definitely-not-installed-rb==1.0",  # missing
            'pyyaml==0.0.2 ; python_version < "3"',  # a marker that does not apply here
        ],
    )
    summary = run(toy, ["ok"], env_mode="current", seeds=[0, 1])
    assert summary.exit_code == 0
    for result in summary.results:
        record = load_record(result.run_dir)
        assert record.env_mode == "current"
        assert _codes(record.drift) == ["E002", "E001"]  # in the lock's order
        assert record.drift[0].startswith("E002: pydantic ")
        assert record.drift[1].startswith("E001: definitely-not-installed-rb==1.0 ")
        # hundreds of distributions are installed here; none of the extras is drift
        snapshot = read_snapshot(result.run_dir, record)
        assert len(snapshot.distributions if snapshot else []) > 10


def test_other_python_minor_is_drift(toy: Path) -> None:
    major, minor, _ = platform.python_version_tuple()
    _with_lock(toy, [], python=f"{major}.{int(minor) + 1}")
    summary = run(toy, ["ok"], env_mode="current", seeds=[0])
    (result,) = summary.results
    assert _codes(load_record(result.run_dir).drift) == ["E004"]


def test_same_python_other_patch_is_not_drift(tmp_path: Path) -> None:
    major, minor, patch = platform.python_version_tuple()
    other = f"{major}.{minor}.{int(patch) + 1}"
    env = Environment.model_validate({"python": other})
    assert lock_drift(tmp_path, env, python_full=platform.python_version(), installed={}) == []


def test_names_are_compared_canonically(tmp_path: Path) -> None:
    (tmp_path / "r.lock").write_text(f"Typing_Extensions==4.0.0 \\\n    {_HASH}\n", "utf-8")
    env = Environment.model_validate(
        {"python": "3.11", "lock": {"path": "r.lock", "format": "requirements"}}
    )
    found = lock_drift(
        tmp_path, env, python_full="3.11.9", installed={"typing-extensions": "4.0.0"}
    )
    assert found == []
    found = lock_drift(tmp_path, env, python_full="3.11.9", installed={"typing.extensions": "4.1"})
    assert [(f.code, f.path, f.file, f.line) for f in found] == [
        ("E002", "/distributions/typing-extensions", "r.lock", 1)
    ]


def test_unreadable_lock_is_reported_as_drift(tmp_path: Path) -> None:
    env = Environment.model_validate(
        {"python": "3.11", "lock": {"path": "missing.lock", "format": "requirements"}}
    )
    found = lock_drift(tmp_path, env, python_full="3.11.9", installed={})
    # L003: the lock cannot be read.
    assert [(f.code, f.file) for f in found] == [("L003", str(tmp_path / "missing.lock"))]


def test_installed_distributions_are_scanned_once_per_invocation(
    toy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A spy on the real scan (it still runs): three runs, one scan, no interpreter started.
    _with_lock(toy, [f"click=={metadata.version('click')}"])
    calls: list[int] = []
    real = metadata.distributions

    def counting(**kwargs: Any) -> Any:
        calls.append(1)
        return real(**kwargs)

    monkeypatch.setattr(metadata, "distributions", counting)
    summary = run(toy, ["ok"], env_mode="current", seeds=[0, 1, 2])
    assert summary.exit_code == 0
    assert len(calls) == 1
    assert all(load_record(r.run_dir).drift == [] for r in summary.results)
