"""Validate artifacts: ``validate(paths) -> ValidationResult`` (spec ``manifest.md#validation``).

The layers run in the spec's order, each on plain data (no pydantic on this path): YAML
(:mod:`reprobridge_sdk.io.document`) and an unknown major version (:mod:`.version`) stop
an artifact; structure, semantics, then the layers that read files (:mod:`.files`, locks,
:mod:`.replay`, the guide), skipped with ``check_files=False``. ``select`` / ``ignore`` keep
or drop codes by prefix, like ruff (``ignore=("R01",)`` drops R010-R019).

A path is a manifest file (its directory is the artifact), a directory with an ``rra.yaml``,
or a folder of submissions: its subdirectories with an ``rra.yaml``, in name order. A
directory with neither is Y010.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.findings import Finding, Severity, finding
from reprobridge_sdk.io import safefs
from reprobridge_sdk.io.document import Document, load_document
from reprobridge_sdk.versions import MANIFEST_NAME

#: Spreads a function over items and returns the results in order: ``mapper(fn, items)``.
Mapper = Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]

__all__ = [
    "MANIFEST_NAME",
    "ArtifactResult",
    "Mapper",
    "ValidationResult",
    "discover",
    "validate",
    "validate_artifact",
]


@dataclass
class ArtifactResult:
    """The findings of one artifact; ``label`` is the path as the user gave it."""

    label: str
    root: str
    findings: list[Finding] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for item in self.findings if item.severity is severity)

    @property
    def errors(self) -> int:
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        return self.count(Severity.WARNING)

    @property
    def ok(self) -> bool:
        return self.errors == 0


@dataclass
class ValidationResult:
    """Per-artifact findings, with counts, ``ok`` and the CLI's ``exit_code``."""

    artifacts: list[ArtifactResult] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [item for artifact in self.artifacts for item in artifact.findings]

    @property
    def errors(self) -> int:
        return sum(artifact.errors for artifact in self.artifacts)

    @property
    def warnings(self) -> int:
        return sum(artifact.warnings for artifact in self.artifacts)

    @property
    def infos(self) -> int:
        return sum(artifact.count(Severity.INFO) for artifact in self.artifacts)

    @property
    def ok(self) -> bool:
        return self.errors == 0

    @property
    def exit_code(self) -> int:
        """0 when no errors were found, else 1."""
        return 0 if self.ok else 1

    def counts(self) -> dict[str, int]:
        return {
            "artifacts": len(self.artifacts),
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.infos,
        }

    def pairs(self) -> list[tuple[str, list[Finding]]]:
        """``(label, findings)`` per artifact, the input of :func:`reporters.render`."""
        return [(artifact.label, artifact.findings) for artifact in self.artifacts]


@dataclass(frozen=True)
class _Options:
    strict: bool = False
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_fast: bool = False
    check_files: bool = True


def discover(path: str | os.PathLike[str]) -> list[tuple[str, Path, Path]]:
    """``(label, root, manifest)`` of the artifacts a path names (see the module doc).

    ``ArtifactError`` if the path does not exist.
    """
    given = os.fspath(path)
    target = Path(given)
    try:
        exists = target.exists()
    except (OSError, ValueError):
        exists = False
    if not exists:
        msg = f"{given}: no such file or directory"
        raise ArtifactError(msg, [finding("Y010", msg, file=given)])
    if target.is_file():
        return [(given, target.parent, target)]
    manifest = target / MANIFEST_NAME
    if manifest.exists():
        return [(given, target, manifest)]
    found = []
    try:
        children = sorted(os.scandir(target), key=lambda entry: entry.name)
    except OSError as exc:
        msg = f"{given}: {exc.strerror}"
        raise ArtifactError(msg, [finding("Y010", msg, file=given)]) from exc
    for entry in children:
        child_root = Path(entry.path)
        if entry.is_dir() and (child_root / MANIFEST_NAME).is_file():
            found.append((str(Path(given) / entry.name), child_root, child_root / MANIFEST_NAME))
    if not found:
        return [(given, target, manifest)]
    return found


def _display(label: str, manifest: Path) -> str:
    if Path(label).is_file() or label.endswith((".yaml", ".yml")):
        return label
    return str(Path(label) / manifest.name)


def _prefixed(label_root: str, item: Finding, fallback: Any) -> Finding:
    if item.file == fallback.name:
        return item
    if item.file:
        if Path(item.file).is_absolute() or item.file.startswith(label_root + os.sep):
            return item
        return replace(item, file=str(Path(label_root) / item.file))
    line, col = fallback.locate(item.path)
    return replace(item, file=fallback.name, line=line, col=col)


def validate_artifact(
    label: str,
    root: Path,
    manifest: Path,
    *,
    check_files: bool = True,
    fail_fast: bool = False,
    document: Document | None = None,
) -> list[Finding]:
    """Every finding of one artifact, layer by layer (unfiltered, severities as registered).

    ``document``: the manifest as the caller loaded it with :func:`load_document` under the
    name ``<label>/rra.yaml``; it is then not read again.
    """
    doc = _load(label, manifest, document)
    if isinstance(doc, Finding):
        return [doc]
    out: list[Finding] = list(doc.findings)

    def stop() -> bool:
        return fail_fast and any(item.severity is Severity.ERROR for item in out)

    if not isinstance(doc.data, dict) or stop():
        return out
    if _document_layers(doc, out, stop, root if check_files else None) and check_files:
        label_root = label if not Path(label).is_file() else str(Path(label).parent)
        _tree_layers(doc, root, label_root, out, stop)
    return out


def _load(label: str, manifest: Path, document: Document | None) -> Document | Finding:
    """The manifest's document, or the finding that it cannot be read (Y010, a refusal)."""
    name = _display(label, manifest)
    if not os.path.lexists(manifest):
        message = f"{label} has no {MANIFEST_NAME}"
        return finding("Y010", message, file=label, hint="create one with `reprobridge init`")
    try:
        if document is not None:
            return document
        return load_document(manifest, name=name, root=manifest.parent)
    except safefs.UnsafeFileError as exc:
        return safefs.refusal(exc, file=name)
    except OSError as exc:
        return finding("Y010", f"cannot read {name}: {exc.strerror}", file=name)


def _document_layers(
    doc: Document, out: list[Finding], stop: Callable[[], bool], root: Path | None
) -> bool:
    """The layers that read the manifest alone (version, structure, semantics, placeholders;
    ``root`` for the placeholders' files); False when the next layers must not run."""
    from .version import check_version  # noqa: PLC0415 - lazy: layers load on use

    version = check_version(doc)
    out.extend(version.findings)
    if version.unknown_major or stop():
        return False
    from .structure import check_structure  # noqa: PLC0415 - lazy: layers load on use

    out.extend(check_structure(doc, newer_minor=version.newer_minor, declared=version.version))
    if stop():
        return False
    from .semantic import check_semantics  # noqa: PLC0415 - lazy: layers load on use

    out.extend(check_semantics(doc))
    from .placeholders import check_placeholders  # noqa: PLC0415 - lazy: layers load on use

    out.extend(check_placeholders(doc, root))
    return not stop()


def _tree_layers(
    doc: Document, root: Path, label_root: str, out: list[Finding], stop: Callable[[], bool]
) -> None:
    """The layers that read the artifact's files: files, lock, sample replay, guide."""
    from .files import check_files, usable_path  # noqa: PLC0415 - lazy: layers load on use
    from .replay import check_replay  # noqa: PLC0415 - lazy: layers load on use

    out.extend(_prefixed(label_root, item, doc) for item in check_files(doc, root))
    if stop():
        return
    out.extend(_prefixed(label_root, item, doc) for item in _lock_layer(doc, root))
    if stop():
        return
    out.extend(check_replay(doc, root))
    if stop():
        return
    from reprobridge_sdk.guide import check_guide  # noqa: PLC0415 - lazy: layers load on use

    guide = doc.data.get("guide")
    if isinstance(guide, dict) and "path" in guide and not usable_path(guide["path"]):
        return  # the structural and files layers report the path
    guide_data = guide if isinstance(guide, dict) else {}
    out.extend(_prefixed(label_root, item, doc) for item in check_guide(root, guide_data))


def work_limit(exc: BaseException, *, file: str = "", path: str = "") -> Finding:
    """The finding for an artifact whose checks ran out of recursion depth or memory."""
    what = "recursion depth" if isinstance(exc, RecursionError) else "memory"
    return finding(
        "F011",
        f"checking this artifact exceeded the {what} allowed; its remaining checks were skipped",
        file=file,
        path=path,
        hint="look for deeply nested or very large files among the artifact's evidence",
    )


def _lock_layer(doc: Any, root: Path) -> list[Finding]:
    environment = doc.data.get("environment")
    lock = environment.get("lock") if isinstance(environment, dict) else None
    if not isinstance(lock, dict):
        return []
    text, fmt = lock.get("path"), lock.get("format")
    if not isinstance(text, str) or fmt not in ("requirements", "pylock"):
        return []
    from .files import kind_of, resolve_path, usable_path  # noqa: PLC0415 - lazy: layers load on use

    if not usable_path(text):
        return []
    path = resolve_path(root, root, text)
    if kind_of(path) != "file":
        return []
    if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root)):
        return []  # the files layer reports F003
    from reprobridge_sdk.locks.lockfile import check_lock  # noqa: PLC0415 - lazy: layers load on use

    try:
        found = check_lock(path, fmt, display_name=text)
    except ArtifactError as exc:
        found = list(exc.findings)
    else:
        found += _lock_variant(path, fmt, text, lock.get("resolved_for"))
    return found + _lock_python(doc, environment, lock)


def _lock_variant(path: Path, fmt: Any, text: str, resolved: object) -> list[Finding]:
    """L012 when a lock that records the CPU build pins a CUDA build."""
    if not isinstance(resolved, dict) or resolved.get("accelerator") != "cpu":
        return []
    from reprobridge_sdk.locks.accelerator import variant_findings  # noqa: PLC0415 - lazy
    from reprobridge_sdk.locks.lockfile import read_lock  # noqa: PLC0415 - lazy

    platform = resolved.get("platform")
    try:
        lock = read_lock(path, fmt)
    except ArtifactError:
        return []  # check_lock reported why it cannot be read
    return variant_findings(
        lock, "cpu", file=text, platform=platform if isinstance(platform, str) else None
    )


def _lock_python(doc: Any, environment: dict[str, Any], lock: dict[str, Any]) -> list[Finding]:
    """L007 when the lock was resolved for another Python (major.minor) than declared."""
    declared = environment.get("python")
    resolved = lock.get("resolved_for")
    python = resolved.get("python") if isinstance(resolved, dict) else None
    if not isinstance(declared, str) or not isinstance(python, str):
        return []
    if declared.split(".")[:2] == python.split(".")[:2]:
        return []
    return [
        doc.finding(
            "L007",
            f"the lock was resolved for Python {python}; the environment declares {declared}",
            path="/environment/lock/resolved_for/python",
            hint="resolve the lock again with `reprobridge lock`",
        )
    ]


def _warm() -> None:
    from reprobridge_sdk import guide  # noqa: F401, PLC0415 - warm-up
    from reprobridge_sdk.extract import extraction  # noqa: F401, PLC0415 - warm-up
    from reprobridge_sdk.locks import lockfile  # noqa: F401, PLC0415 - warm-up

    from . import files, replay, semantic, version  # noqa: F401, PLC0415 - warm-up
    from .structure import manifest_schema  # noqa: PLC0415 - warm-up

    manifest_schema()
    manifest_schema("1.0")


def _matches(code: str, prefixes: Sequence[str]) -> bool:
    return any(code.startswith(prefix) for prefix in prefixes)


def _finish(items: list[Finding], options: _Options) -> list[Finding]:
    result = []
    for item in items:
        if options.select and not _matches(item.code, options.select):
            continue
        if options.ignore and _matches(item.code, options.ignore):
            continue
        if options.strict and item.severity is Severity.WARNING:
            item = item.with_severity(Severity.ERROR)  # noqa: PLW2901 - the promoted copy
        result.append(item)
        if options.fail_fast and item.severity is Severity.ERROR:
            break
    result.sort(key=lambda f: (f.file, f.line, f.col, f.code, f.path))
    return result


def _one(job: tuple[str, str, str, _Options]) -> ArtifactResult:
    label, root, manifest, options = job
    try:
        items = validate_artifact(
            label,
            Path(root),
            Path(manifest),
            check_files=options.check_files,
            fail_fast=options.fail_fast,
        )
    except (RecursionError, MemoryError) as exc:
        # Bounded work per artifact: this artifact gets a finding, the batch goes on.
        items = [work_limit(exc, file=_display(label, Path(manifest)))]
    return ArtifactResult(label=label, root=root, findings=_finish(items, options))


def _split(codes: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(codes, str):
        codes = [codes]
    parts = [part.strip().upper() for code in codes for part in code.split(",")]
    return tuple(part for part in parts if part)


def validate(
    paths_or_artifact: Any = ".",
    *,
    strict: bool = False,
    select: Iterable[str] | str = (),
    ignore: Iterable[str] | str = (),
    fail_fast: bool = False,
    check_files: bool = True,
    jobs: int = 1,
    mapper: Mapper | None = None,
) -> ValidationResult:
    """Validate one or more artifacts and return their findings as values.

    ``paths_or_artifact`` is a path, an :class:`~reprobridge_sdk.api.ArtifactDir` (anything
    with a ``root``), or an iterable of those. A path that does not exist raises
    :class:`~reprobridge_sdk.errors.ArtifactError`; anything wrong *in* an artifact is a
    finding. ``jobs`` > 1 validates artifacts in that many processes. ``mapper`` spreads the
    artifacts instead, e.g. over the workers of an executor
    (:meth:`reprobridge_sdk.run.executors.Executor.map`); the result is the same.
    """
    options = _Options(
        strict=strict,
        select=_split(select),
        ignore=_split(ignore),
        fail_fast=fail_fast,
        check_files=check_files,
    )
    if isinstance(paths_or_artifact, (str, os.PathLike)) or hasattr(paths_or_artifact, "root"):
        sources = [paths_or_artifact]
    else:
        sources = list(paths_or_artifact)
    jobs_list: list[tuple[str, str, str, _Options]] = []
    for source in sources:
        path = source if isinstance(source, (str, os.PathLike)) else source.root
        for label, root, manifest in discover(path):
            jobs_list.append((label, str(root), str(manifest), options))
    result = ValidationResult()
    if mapper is not None and len(jobs_list) > 1 and not fail_fast:
        result.artifacts.extend(mapper(_one, jobs_list))
        return result
    if jobs > 1 and len(jobs_list) > 1 and not fail_fast:
        from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415 - only for -j

        _warm()  # forked workers inherit the imported layers and the compiled schema
        chunk = max(1, min(64, len(jobs_list) // (jobs * 4)))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            result.artifacts.extend(pool.map(_one, jobs_list, chunksize=chunk))
        return result
    for job in jobs_list:
        artifact = _one(job)
        result.artifacts.append(artifact)
        if fail_fast and not artifact.ok:
            break
    return result
