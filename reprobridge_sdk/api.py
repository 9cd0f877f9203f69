"""The Python API for artifacts: load, create, edit, save and validate.

>>> art = load("examples/demo")                      # doctest: +SKIP
>>> art.manifest.tasks[0].published.value = 0.91     # doctest: +SKIP
>>> art.save()                                       # doctest: +SKIP

:meth:`ArtifactDir.save` writes the model back as a minimal diff of the file: untouched keys
keep their comments and layout, and defaults the file does not spell out are not added. Bad
input raises :class:`ArtifactError` carrying located findings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .digest import file_sha256, tree_digest
from .errors import ArtifactError, UsageError
from .findings import Finding, Severity, finding
from .guide import update_guide_text, write_guide
from .io import yamlio
from .io.atomic import atomic_write_text
from .io.pointer import escape_pointer, from_loc
from .loading import read_manifest
from .model import (
    MANIFEST_NAME,
    NEWEST_FORMAT,
    Change,
    Launcher,
    Manifest,
    Task,
    required_version,
)
from .versions import follow_modeline, manifest_modeline, parse_version, written_version

if TYPE_CHECKING:
    from .validation import ValidationResult
    from .validation.forward import ForwardView

__all__ = ["ArtifactDir", "consumer_view", "create", "load"]


def _select(full: Any, keepers: list[Any]) -> Any:
    """``full`` restricted to the keys that some tree in ``keepers`` has (recursively)."""
    if isinstance(full, dict):
        out: dict[str, Any] = {}
        for key, value in full.items():
            sub = [keep[key] for keep in keepers if isinstance(keep, dict) and key in keep]
            if sub:
                out[key] = _select(value, sub)
        return out
    if isinstance(full, list):
        items: list[Any] = []
        for index, value in enumerate(full):
            sub = [_match(keep, index, value) for keep in keepers if isinstance(keep, list)]
            sub = [item for item in sub if item is not None]
            items.append(_select(value, sub) if sub else value)
        return items
    return full


def _match(items: list[Any], index: int, value: Any) -> Any:
    ident = value.get("id") if isinstance(value, dict) else None
    if isinstance(ident, str):
        for item in items:
            if isinstance(item, dict) and item.get("id") == ident:
                return item
        return None
    return items[index] if index < len(items) else None


def _manifest_data(manifest: Manifest, original: Any = None) -> dict[str, Any]:
    """The plain data to write for ``manifest``.

    A key is written when the original document has it, when it was set on the model, or
    when its value differs from the default; so a saved file does not fill up with defaults.
    """
    options: dict[str, Any] = {"mode": "json", "by_alias": True}
    full = manifest.model_dump(**options)
    keepers = [
        manifest.model_dump(**options, exclude_unset=True),
        manifest.model_dump(**options, exclude_defaults=True),
    ]
    if isinstance(original, dict):
        keepers.append(original)
    result = _integral(_select(full, keepers))
    assert isinstance(result, dict)
    return result


def _integral(value: Any) -> Any:
    """Floats with an integral value written as integers (``timeout: 60``, not ``60.0``)."""
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass
class ArtifactDir:
    """An artifact on disk: its root directory and its typed manifest."""

    root: Path
    manifest: Manifest
    _document: yamlio.YamlDocument | None = field(default=None, repr=False, compare=False)
    #: A newer minor version's document as this SDK reads it (spec "forward-compatibility").
    forward: ForwardView | None = field(default=None, repr=False, compare=False)

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST_NAME

    def path(self, relative: str) -> Path:
        """Resolve a manifest path (relative, POSIX) against the artifact root."""
        return self.root.joinpath(*relative.split("/"))

    # -- reading and writing -------------------------------------------------------------

    def data(self) -> dict[str, Any]:
        """The plain data :meth:`save` would write now."""
        original = self._document.data if self._document is not None else None
        return _manifest_data(self.manifest, original)

    def render(self) -> str:
        """The text of ``rra.yaml`` that :meth:`save` would write now; the file is untouched.

        The same minimal diff as :meth:`save` (the version raised when a newer field is used,
        the model validated first); used to write a changed manifest elsewhere (``pack``).
        """
        version = self._written_version()
        _validated(self.manifest.model_dump(by_alias=True), self.manifest_path)
        data = self.data()
        if self._document is None or not self._document.ok:
            return yamlio.dumps_data(data, header=manifest_modeline(version))
        copy = yamlio.loads(yamlio.dumps(self._document), name=self._document_name())
        yamlio.update(copy, data)
        return follow_modeline(yamlio.dumps(copy), version)

    def save(self) -> bool:
        """Write the manifest back to ``rra.yaml`` as a minimal diff; True if the file changed.

        The model is validated first (:class:`ArtifactError`), so a save never writes a
        manifest the SDK cannot read. ``rra_version`` is raised when a newer field is used,
        never lowered. A newer minor version's manifest read in part is never rewritten (V008).
        """
        self._refuse_partial_rewrite()
        version = self._written_version()
        _validated(self.manifest.model_dump(by_alias=True), self.manifest_path)
        data = self.data()
        if self._document is None or not self._document.ok:
            text = yamlio.dumps_data(data, header=manifest_modeline(version))
            atomic_write_text(self.manifest_path, text)
            self._document = read_manifest(self.root)[1]
            return True
        if not yamlio.update(self._document, data):
            return False
        yamlio.save(
            self._document, self.manifest_path, edit=partial(follow_modeline, version=version)
        )
        return True

    def _written_version(self) -> str:
        """Raise ``rra_version`` to what the manifest's fields need (never lower it), by
        :func:`~reprobridge_sdk.versions.written_version`; the version it is written as."""
        version = written_version(self.manifest.rra_version, required_version(self.manifest))
        if version != self.manifest.rra_version:
            self.manifest.rra_version = version
        return version

    def _refuse_partial_rewrite(self) -> None:
        """V008 when this is a newer minor version's manifest read in part (spec
        "forward-compatibility"): a rewrite from the model would lose what was set aside."""
        if self.forward is None or not self.forward.changed:
            return
        where = [*self.forward.ignored, *self.forward.skipped]
        msg = (
            f"{self.manifest_path} declares rra_version {self.manifest.rra_version}; this SDK "
            f"ignored or set aside {len(where)} part(s) of it and will not rewrite it"
        )
        item = finding(
            "V008",
            msg,
            path=where[0],
            file=str(self.manifest_path),
            hint="edit it with a tool that knows its version",
        )
        raise ArtifactError(msg, [item])

    def reload(self) -> ArtifactDir:
        """A fresh :class:`ArtifactDir` read from disk."""
        return load(self.root)

    def _document_name(self) -> str:
        return str(self.manifest_path)

    def validate(self, **options: Any) -> ValidationResult:
        """Validate the artifact on disk (as saved) with :func:`reprobridge_sdk.validate`."""
        from .validation import validate  # noqa: PLC0415 - a higher layer, loaded on use

        return validate(self.root, **options)

    # -- editing helpers -----------------------------------------------------------------

    def add_task(self, task: Task | Mapping[str, Any]) -> Task:
        """Append a task; a :class:`UsageError` if its id is taken."""
        item = task if isinstance(task, Task) else Task.model_validate(dict(task))
        if any(existing.id == item.id for existing in self.manifest.tasks):
            raise UsageError(f"a task with id {item.id!r} exists already")
        self.manifest.tasks.append(item)
        return item

    def add_launcher(self, launcher: Launcher | Mapping[str, Any]) -> Launcher:
        """Append a launcher; a :class:`UsageError` if its id is taken."""
        item = (
            launcher if isinstance(launcher, Launcher) else Launcher.model_validate(dict(launcher))
        )
        if any(existing.id == item.id for existing in self.manifest.launchers):
            raise UsageError(f"a launcher with id {item.id!r} exists already")
        self.manifest.launchers.append(item)
        return item

    def record_change(
        self,
        change_id: str,
        kind: str,
        summary: str,
        rationale: str,
        *,
        files: Sequence[str] = (),
        patch: str | None = None,
        tasks: Sequence[str] = (),
    ) -> Change:
        """Add an entry to the change record (kind: execution-fix, correctness-fix, convenience).

        Tasks named must exist; a :class:`UsageError` otherwise or if the id is taken.
        """
        known = {task.id for task in self.manifest.tasks}
        unknown = [task for task in tasks if task not in known]
        if unknown:
            raise UsageError(f"unknown task(s): {', '.join(unknown)}")
        if any(existing.id == change_id for existing in self.manifest.guide.changes):
            raise UsageError(f"a change with id {change_id!r} exists already")
        values: dict[str, Any] = {
            "id": change_id,
            "kind": kind,
            "summary": summary,
            "rationale": rationale,
        }
        if files:
            values["files"] = list(files)
        if patch is not None:
            values["patch"] = patch
        if tasks:
            values["tasks"] = list(tasks)
        change = Change.model_validate(values)
        guide = self.manifest.guide
        guide.changes = [*guide.changes, change]
        self.manifest.guide = guide
        return change

    def refresh_digests(self) -> list[str]:
        """Recompute the digests of files present in the artifact; the JSON Pointers changed.

        Covers the tree digest, lock, patches, present data items and samples; absent files are
        left alone. An undeclared sample digest is added only in a format 1.1 manifest (the
        fields are 1.1 additions: refreshing never raises a manifest's version).
        """
        changed: list[str] = []
        codebase = self.manifest.codebase
        refined = codebase.refined
        if refined.kind == "directory" and refined.path and self.path(refined.path).is_dir():
            digest = tree_digest(self.path(refined.path))
            if codebase.tree_digest != digest:
                codebase.tree_digest = digest
                changed.append("/codebase/tree_digest")
        for index, patch in enumerate(refined.patches):
            if self.path(patch.path).is_file():
                digest = file_sha256(self.path(patch.path))
                if patch.sha256 != digest:
                    patch.sha256 = digest
                    changed.append(f"/codebase/refined/patches/{index}/sha256")
        lock = self.manifest.environment.lock
        if lock is not None and self.path(lock.path).is_file():
            digest = file_sha256(self.path(lock.path))
            if lock.sha256 != digest:
                lock.sha256 = digest
                changed.append("/environment/lock/sha256")
        for index, item in enumerate(self.manifest.environment.data):
            if item.destination and self.path(item.destination).is_file():
                target = self.path(item.destination)
                digest, size = file_sha256(target), target.stat().st_size
                if item.sha256 != digest or item.size != size:
                    item.sha256, item.size = digest, size
                    changed.append(f"/environment/data/{index}/sha256")
        changed += self._refresh_samples()
        return changed

    def _refresh_samples(self) -> list[str]:
        add = (parse_version(self.manifest.rra_version) or (1, 0)) >= (1, 1)
        changed: list[str] = []
        for index, launcher in enumerate(self.manifest.launchers):
            for number, sample in enumerate(launcher.samples):
                ptr = f"/launchers/{index}/samples/{number}"
                if sample.log and self.path(sample.log).is_file():
                    digest = file_sha256(self.path(sample.log))
                    if sample.log_sha256 != digest and (add or sample.log_sha256 is not None):
                        sample.log_sha256 = digest
                        changed.append(f"{ptr}/log_sha256")
                for key, rel in sample.outputs.items():
                    if not self.path(rel).is_file():
                        continue
                    digest = file_sha256(self.path(rel))
                    declared = sample.outputs_sha256.get(key)
                    if declared != digest and (add or declared is not None):
                        sample.outputs_sha256[key] = digest
                        changed.append(f"{ptr}/outputs_sha256/{escape_pointer(key)}")
        return changed

    def write_guide(self) -> bool:
        """Render the guide records into the guide file (see :mod:`reprobridge_sdk.guide`).

        V008 for a newer minor version's manifest read in part: the records set aside would
        be missing from the rendering.
        """
        self._refuse_partial_rewrite()
        guide = self.data().get("guide", {})
        return write_guide(self.root, guide, title=self.manifest.artifact.title)


def load(path: str | os.PathLike[str]) -> ArtifactDir:
    """Load the artifact at ``path`` (its directory, or its ``rra.yaml``).

    Raises :class:`ArtifactError` (with findings) when the manifest is missing, cannot be
    read (:func:`reprobridge_sdk.loading.read_manifest`), or does not describe a valid
    manifest.
    """
    root, document = read_manifest(path)
    data, view = consumer_view(document.data)
    manifest = _validated(data, root / MANIFEST_NAME, document)
    return ArtifactDir(root=root, manifest=manifest, _document=document, forward=view)


def consumer_view(data: Any) -> tuple[Any, ForwardView | None]:
    """The data a consumer reads from a manifest's plain ``data``, and how it differs.

    A newer minor version's document is read by spec/manifest.md §4 "forward-compatibility";
    any other as it is (view None).
    """
    version = parse_version(data.get("rra_version")) if isinstance(data, dict) else None
    newest = parse_version(NEWEST_FORMAT) or (1, 0)
    if version is None or version[0] != newest[0] or version[1] <= newest[1]:
        return data, None
    from .validation.forward import forward_view  # noqa: PLC0415 - a higher layer, on use
    from .validation.structure import manifest_schema  # noqa: PLC0415 - a higher layer, on use

    view = forward_view(data, manifest_schema(NEWEST_FORMAT).errors(data))
    return view.data, view


def _validated(
    data: Any, manifest_path: Path, document: yamlio.YamlDocument | None = None
) -> Manifest:
    try:
        # strict: no coercion ("0.9" is not a number), so the model accepts what the schema does
        return Manifest.model_validate(data, strict=True)
    except ValidationError as exc:
        found = _validator_findings(manifest_path.parent) if document is not None else []
        if not found:
            found = _pydantic_findings(exc, data, document, str(manifest_path))
        msg = f"{manifest_path} is not a valid manifest ({len(found)} problem(s))"
        raise ArtifactError(msg, found) from None


def _validator_findings(root: Path) -> list[Finding]:
    """Error findings of the structural and semantic validation of ``root``."""
    from .validation import validate  # noqa: PLC0415 - a higher layer, loaded on use

    result = validate(root, check_files=False)
    return [item for item in result.findings if item.severity == Severity.ERROR]


_UNKNOWN_KEY = re.compile(r"unknown key '([^']*)'")


def _pydantic_findings(
    exc: ValidationError, data: Any, document: yamlio.YamlDocument | None, name: str
) -> list[Finding]:
    found: list[Finding] = []
    for error in exc.errors():
        pointer = from_loc(data, error["loc"])
        kind = error["type"]
        message = str(error["msg"])
        match = _UNKNOWN_KEY.search(message)
        key = False
        if match:
            code = "S001"
            pointer += "/" + escape_pointer(match.group(1))
            message = f"unknown key {match.group(1)!r}"
            key = True
        elif kind == "missing":
            code = "S002"
        elif kind.endswith("_type") or kind in ("model_attributes_type", "dict_type", "list_type"):
            code = "S003"
        else:
            code = "S004"
        line, col = document.locate(pointer, key=key) if document is not None else (0, 0)
        found.append(finding(code, message, path=pointer, file=name, line=line, col=col))
    return found


def create(
    path: str | os.PathLike[str],
    manifest: Manifest,
    *,
    guide_text: str | None = None,
    overwrite: bool = False,
) -> ArtifactDir:
    """Create an artifact directory at ``path`` holding ``manifest`` and its guide.

    The guide file gets ``guide_text`` (or a one-line heading) with the rendered records.
    An existing ``rra.yaml`` is an :class:`ArtifactError` unless ``overwrite`` is true.
    """
    root = Path(path)
    manifest_path = root / MANIFEST_NAME
    if manifest_path.exists() and not overwrite:
        raise ArtifactError(f"{manifest_path} exists already; refusing to overwrite it")
    root.mkdir(parents=True, exist_ok=True)
    version = written_version(manifest.rra_version, required_version(manifest))
    if version != manifest.rra_version:
        manifest = manifest.model_copy(update={"rra_version": version})
    data = _manifest_data(manifest)
    atomic_write_text(manifest_path, yamlio.dumps_data(data, header=manifest_modeline(version)))
    guide_file = root.joinpath(*manifest.guide.path.split("/"))
    if guide_text is not None or overwrite or not guide_file.exists():
        text = guide_text if guide_text is not None else f"# {manifest.artifact.title}\n"
        atomic_write_text(guide_file, update_guide_text(text, data.get("guide", {})))
    return load(root)
