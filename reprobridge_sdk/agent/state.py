"""Build state: the typed phase records in ``OUT/.rra-build/`` and resuming by digest.

Rules:

* Each phase writes ``<phase>.json`` atomically once its gate has been decided; a phase
  killed half-way leaves no record, so ``--resume`` runs it again from its start.
* A phase's ``inputs_digest`` is the SHA-256 of the canonical JSON (sorted keys, no spaces)
  of what it read: the source commit, the claims, the options that matter to it, and the
  ``inputs_digest`` of every earlier phase. Changing any input therefore changes the digest
  of that phase and of every phase after it.
* :meth:`BuildState.reusable` returns a stored record only when it parses as its model,
  its digest equals the one asked for and its gate passed. Anything else (a missing file,
  an unreadable or foreign document, another digest) means: run the phase again.
* The changes the author recorded in the artifact with ``reprobridge code record`` (every
  change-record entry with a patch that no Reproducer fix of the stored record made) are
  kept across a resume: :meth:`BuildState.keep_changes` writes them, patch text included,
  to ``recorded-changes.json`` before the Reproducer re-assembles the artifact, and
  :meth:`BuildState.drop_kept` removes that file once they are recorded again. A file left
  by a resume that stopped half-way is read first, so no recorded change is ever lost.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from reprobridge_sdk.io.atomic import atomic_write_text
from reprobridge_sdk.model.build import PhaseName, PhaseRecord

__all__ = ["BUILD_DIR", "BuildState", "RecordedChange", "inputs_digest"]

#: Directory of the build state inside the output artifact.
BUILD_DIR = ".rra-build"

RecordT = TypeVar("RecordT", bound=PhaseRecord)
_KEPT = "recorded-changes.json"


class RecordedChange(BaseModel):
    """A change the author recorded with ``code record``: its entry and its patch's text."""

    id: str
    kind: str
    summary: str
    rationale: str
    tasks: list[str] = Field(default_factory=list)
    patch: str = Field(description="The patch file's text (commentary, then the git diff).")


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return value.as_posix()
    return value


def inputs_digest(**inputs: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``inputs``."""
    text = json.dumps(_plain(inputs), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class BuildState:
    """The phase records of one build, under ``<out>/.rra-build``."""

    def __init__(self, out: Path) -> None:
        self.root = out / BUILD_DIR

    def path(self, phase: PhaseName) -> Path:
        return self.root / f"{phase}.json"

    def save(self, record: PhaseRecord) -> Path:
        """Write ``record`` atomically as ``<phase>.json``."""
        target = self.path(record.phase)
        atomic_write_text(target, record.model_dump_json(indent=2, exclude_none=True) + "\n")
        return target

    def stored(self, phase: PhaseName, model: type[RecordT]) -> RecordT | None:
        """The stored record of ``phase``, or None when there is none or it does not parse."""
        try:
            text = self.path(phase).read_text("utf-8")
            return model.model_validate_json(text)
        except (OSError, ValidationError, UnicodeDecodeError):
            return None

    def reusable(self, phase: PhaseName, model: type[RecordT], digest: str) -> RecordT | None:
        """The stored record when its inputs are unchanged and its gate passed."""
        record = self.stored(phase, model)
        if record is None or record.inputs_digest != digest or not record.gate.passed:
            return None
        return record

    def kept_changes(self) -> list[RecordedChange] | None:
        """The changes kept by :meth:`keep_changes`, or None when none are kept."""
        try:
            text = self.root.joinpath(_KEPT).read_text("utf-8")
            return _CHANGES.validate_json(text)
        except (OSError, ValidationError, UnicodeDecodeError):
            return None

    def keep_changes(self, changes: list[RecordedChange]) -> None:
        """Write ``changes`` atomically, to be recorded again after the re-assembly."""
        atomic_write_text(
            self.root / _KEPT, _CHANGES.dump_json(changes, indent=2).decode("utf-8") + "\n"
        )

    def drop_kept(self) -> None:
        """Forget the kept changes (they are recorded in the artifact again)."""
        self.root.joinpath(_KEPT).unlink(missing_ok=True)


_CHANGES = TypeAdapter(list[RecordedChange])
