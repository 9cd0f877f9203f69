"""The manifest (``rra.yaml``): the root object of an artifact (spec §6)."""

from __future__ import annotations

from pydantic import Field

from reprobridge_sdk.versions import FORMAT_VERSION, FORMAT_VERSIONS, MANIFEST_NAME, NEWEST_FORMAT

from ._base import SpecModel
from .artifact import Artifact
from .codebase import Codebase
from .environment import Environment
from .guide import Guide
from .launcher import Launcher
from .task import Task

__all__ = [
    "FORMAT_VERSION",
    "FORMAT_VERSIONS",
    "MANIFEST_MEDIA_TYPE",
    "MANIFEST_NAME",
    "NEWEST_FORMAT",
    "Manifest",
]


#: Media type of a manifest exchanged on its own (spec media-types.md, "media-type").
MANIFEST_MEDIA_TYPE = "application/vnd.rra+yaml"


class Manifest(SpecModel):
    """An RRA manifest."""

    rra_version: str = Field(
        pattern=r"^1\.(0|[1-9][0-9]*)$",
        description=(
            "Format version 'MAJOR.MINOR' the document follows (decimal digits, no leading"
            " zero); this schema is major 1."
        ),
    )
    artifact: Artifact
    codebase: Codebase
    environment: Environment
    tasks: list[Task] = Field(min_length=1)
    launchers: list[Launcher] = Field(min_length=1)
    guide: Guide = Field(default_factory=Guide)

    def task(self, task_id: str) -> Task:
        """The task with this id; ``KeyError`` if there is none."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def launcher(self, launcher_id: str) -> Launcher:
        """The launcher with this id; ``KeyError`` if there is none."""
        for launcher in self.launchers:
            if launcher.id == launcher_id:
                return launcher
        raise KeyError(launcher_id)
