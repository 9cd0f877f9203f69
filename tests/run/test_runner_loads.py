"""``run`` reads the manifest once per invocation, whatever the environment mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reprobridge_sdk.io import document, yamlio
from reprobridge_sdk.run import run


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Spy on the two manifest readers (they still read): the names of the files read."""
    reads: list[str] = []
    for module, name in ((yamlio, "load"), (document, "load_document")):
        real = getattr(module, name)

        def spy(path: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            reads.append(Path(path).name)
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    return reads


@pytest.mark.parametrize("mode", ["current", "cached"])
def test_manifest_is_read_once(toy: Path, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    reads = _count_reads(monkeypatch)
    summary = run(toy, ["ok"], env_mode=mode, seeds=[0, 1])
    assert len(summary.results) == 2
    assert reads == ["rra.yaml"]
    if mode == "cached":  # the toy declares no lock: the environment cannot be built
        assert {r.record.failure.reason for r in summary.results if r.record.failure} == {
            "environment-error"
        }
        assert all(
            "E012" in (r.record.failure.detail if r.record.failure else "") for r in summary.results
        )
