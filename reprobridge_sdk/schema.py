"""JSON Schemas of the format, generated from the SDK's pydantic models (the one source).

Generation is deterministic; the same bytes go to ``schemas/`` and ``_data/schemas/``.
The models describe the newest minor version; a schema registered with a ``format_version``
drops every newer addition, so ``rra-1.0`` stays 1.0 (spec/manifest.md §4).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .io.atomic import atomic_write_text
from .versions import SCHEMA_BASE_URL, parse_since

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "DRAFT",
    "SCHEMAS",
    "SCHEMA_BASE_URL",
    "SchemaSpec",
    "check_schemas",
    "generate_schema",
    "packaged_schema_text",
    "register_schema",
    "render_schema",
    "resolve_name",
    "restrict_to_version",
    "source_schema_dir",
    "write_schemas",
]

#: The JSON Schema dialect of every generated schema.
DRAFT = "https://json-schema.org/draft/2020-12/schema"

_COMMENT = (
    "generated from the SDK's models, do not edit; regenerate with `reprobridge schema --write`"
)


@dataclass(frozen=True)
class SchemaSpec:
    """One registered schema: its name, the model it comes from and its title."""

    name: str
    model: str | type[BaseModel]
    title: str
    aliases: tuple[str, ...] = ()
    #: Remove the additions newer than this format version (None: keep everything).
    format_version: str | None = None
    #: For a schema of several versions: the registered schema of each, oldest first.
    versions: tuple[str, ...] = ()
    #: The key that holds a document's version (when ``versions`` is set).
    version_key: str = ""

    @property
    def id(self) -> str:
        """The stable ``$id`` of the schema."""
        return f"{SCHEMA_BASE_URL}{self.name}.schema.json"

    @property
    def filename(self) -> str:
        return f"{self.name}.schema.json"

    def model_class(self) -> type[BaseModel]:
        """The pydantic model, imported on first use when registered by reference."""
        if not isinstance(self.model, str):
            return self.model
        module_name, _, attribute = self.model.partition(":")
        model = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(model, type)
        return model


_BUILTIN = (
    SchemaSpec(
        "rra-1.0",
        "reprobridge_sdk.model.manifest:Manifest",
        "ReproBridge RRA 1.0 manifest (rra.yaml)",
        aliases=("rra", "manifest"),
        format_version="1.0",
    ),
    SchemaSpec(
        "rra-1.1",
        "reprobridge_sdk.model.manifest:Manifest",
        "ReproBridge RRA 1.1 manifest (rra.yaml), draft",
        format_version="1.1",
    ),
    SchemaSpec(
        "evidence-1.0",
        "reprobridge_sdk.model.evidence:EvidenceRecord",
        "ReproBridge evidence record 1.0 (record.json)",
        aliases=("evidence", "record"),
        format_version="1.0",
    ),
    SchemaSpec(
        "evidence-1.1",
        "reprobridge_sdk.model.evidence:EvidenceRecord",
        "ReproBridge evidence record 1.1 (record.json), draft",
        format_version="1.1",
    ),
    SchemaSpec(
        "evidence-1",
        "reprobridge_sdk.model.evidence:EvidenceRecord",
        "ReproBridge evidence record, every 1.x version (record.json), by its record_version",
        versions=("evidence-1.0", "evidence-1.1"),
        version_key="record_version",
    ),
    SchemaSpec(
        "audit-1.0",
        "reprobridge_sdk.model.audit:AuditResult",
        "ReproBridge audit report 1.0 (reprobridge audit --format json)",
        aliases=("audit",),
    ),
    SchemaSpec(
        "audit-table-1.0",
        "reprobridge_sdk.model.audit:AuditTable",
        "ReproBridge audit table 1.0 (reprobridge audit --table --format json)",
        aliases=("audit-table",),
    ),
    SchemaSpec(
        "batch-1.0",
        "reprobridge_sdk.model.batch:BatchFile",
        "ReproBridge batch file 1.0 (reprobridge audit --table --submissions FILE, TOML)",
        aliases=("batch", "submissions"),
    ),
    SchemaSpec(
        "rra-run-predicate-1",
        "reprobridge_sdk.model.attestation:RunPredicate",
        "ReproBridge RRA run predicate v1 (in-toto predicateType "
        "https://reprobridge.org/predicates/rra-run/v1)",
        aliases=("run-predicate",),
    ),
    SchemaSpec(
        "rra-audit-predicate-1",
        "reprobridge_sdk.model.attestation:AuditPredicate",
        "ReproBridge RRA audit predicate v1 (in-toto predicateType "
        "https://reprobridge.org/predicates/rra-audit/v1)",
        aliases=("audit-predicate",),
    ),
    SchemaSpec(
        "rra-check-predicate-1",
        "reprobridge_sdk.model.attestation:CheckPredicate",
        "ReproBridge RRA clean-room check predicate v1 (in-toto predicateType "
        "https://reprobridge.org/predicates/rra-check/v1)",
        aliases=("check-predicate",),
    ),
    SchemaSpec(
        "claims-1.0",
        "reprobridge_sdk.model.claims:Claims",
        "ReproBridge claims file 1.0 (the paper's targets for reprobridge build)",
        aliases=("claims",),
    ),
    SchemaSpec(
        "bench-results-1.0",
        "reprobridge_sdk.model.bench:BenchResults",
        "ReproBridge bench results file 1.0 (what an agent leaves: values and their logs)",
        aliases=("bench-results",),
    ),
    SchemaSpec(
        "bench-judgement-1.0",
        "reprobridge_sdk.model.bench:BenchJudgement",
        "ReproBridge bench judgement 1.0 (reprobridge bench judge --format json)",
        aliases=("bench-judgement",),
    ),
    SchemaSpec(
        "bench-variant-1.0",
        "reprobridge_sdk.model.bench:VariantRecord",
        "ReproBridge bench variant record 1.0 (variant.json beside each workspace)",
        aliases=("bench-variant",),
    ),
    SchemaSpec(
        "bench-report-1.0",
        "reprobridge_sdk.model.bench:BenchReport",
        "ReproBridge bench report 1.0 (reprobridge bench run: report.json)",
        aliases=("bench-report",),
    ),
    *(
        SchemaSpec(
            f"build-{phase}-1.0",
            f"reprobridge_sdk.model.build:{model}",
            f"ReproBridge build state 1.0: {what} (.rra-build/{phase}.json)",
        )
        for phase, model, what in (
            ("intake", "IntakeRecord", "the Intake phase"),
            ("planner", "PlanRecord", "the Planner phase"),
            ("builder", "BuilderRecord", "the Builder phase"),
            ("reproducer", "ReproducerRecord", "the Reproducer phase"),
            ("distiller", "DistillerRecord", "the Distiller phase"),
            ("packager", "PackagerRecord", "the Packager phase"),
            ("reviewer", "ReviewRecord", "the Independent Reviewer"),
        )
    ),
    SchemaSpec(
        "build-report-1.0",
        "reprobridge_sdk.model.build:BuildReport",
        "ReproBridge build report 1.0 (.rra-build/report.json, reprobridge build --json)",
    ),
)

#: Registered schemas by name, in registration order.
SCHEMAS: dict[str, SchemaSpec] = {spec.name: spec for spec in _BUILTIN}


def register_schema(
    name: str,
    model: str | type[BaseModel],
    *,
    title: str,
    aliases: tuple[str, ...] = (),
) -> SchemaSpec:
    """Register a schema generated from ``model`` (a class or ``"module:attribute"``).

    ``name`` is the file stem and the tail of the ``$id``, e.g. ``"audit-report-1.0"``.
    Registering the same name twice with a different model is a :class:`UsageError`.
    """
    spec = SchemaSpec(name, model, title, aliases)
    existing = SCHEMAS.get(name)
    if existing is not None and existing != spec:
        msg = f"schema {name!r} is already registered"
        raise UsageError(msg)
    SCHEMAS[name] = spec
    return spec


def resolve_name(name: str) -> SchemaSpec:
    """The registered schema called ``name`` or one of its aliases."""
    if name in SCHEMAS:
        return SCHEMAS[name]
    for spec in SCHEMAS.values():
        if name in spec.aliases or name == spec.filename:
            return spec
    known = ", ".join(SCHEMAS)
    msg = f"unknown schema {name!r} (known: {known})"
    raise UsageError(msg)


def _version(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor)


def _strip_values(node: Any, values: tuple[str, ...]) -> None:
    """Remove ``values`` from every ``enum`` under ``node`` (not following ``$ref``)."""
    if isinstance(node, list):
        for item in node:
            _strip_values(item, values)
        return
    if not isinstance(node, dict):
        return
    if isinstance(node.get("enum"), list):
        node["enum"] = [v for v in node["enum"] if v not in values]
    for key, child in node.items():
        if key not in ("enum", "$ref"):
            _strip_values(child, values)


def _newer(node: Any, version: tuple[int, int]) -> bool:
    """Whether ``node`` (a schema) is a whole addition marked ``since`` a newer version."""
    marker = parse_since(_comment(node))
    return marker is not None and marker[1] is None and marker[0] > version


def _drop_branches(node: Any, version: tuple[int, int], defs: dict[str, Any]) -> None:
    """Remove the ``oneOf``/``anyOf`` branches added after ``version``: a branch marked
    itself, or a ``$ref`` to a ``$defs`` entry marked as a whole (a union member added in a
    minor version, such as the plugin extractor of 1.1)."""
    if isinstance(node, list):
        for item in node:
            _drop_branches(item, version, defs)
        return
    if not isinstance(node, dict):
        return
    for keyword in ("oneOf", "anyOf"):
        branches = node.get(keyword)
        if isinstance(branches, list):
            kept = []
            for branch in branches:
                ref = branch.get("$ref") if isinstance(branch, dict) else None
                target = defs.get(ref[len("#/$defs/") :]) if isinstance(ref, str) else None
                if not (_newer(branch, version) or _newer(target, version)):
                    kept.append(branch)
            node[keyword] = kept
    for child in node.values():
        _drop_branches(child, version, defs)


def restrict_to_version(node: Any, version: tuple[int, int]) -> None:
    """Remove, in place, every addition marked ``since`` a version newer than ``version``."""
    if isinstance(node, dict) and isinstance(node.get("$defs"), dict):
        _drop_branches(node, version, node["$defs"])
    if isinstance(node, list):
        for item in node:
            restrict_to_version(item, version)
        return
    if not isinstance(node, dict):
        return
    marker = parse_since(node.get("$comment"))
    if marker is not None and marker[1] is not None and marker[0] > version:
        _strip_values(node, marker[1])
        del node["$comment"]
    properties = node.get("properties")
    if isinstance(properties, dict):
        for key in list(properties):
            field = parse_since(_comment(properties[key]))
            if field is not None and field[1] is None and field[0] > version:
                del properties[key]
                if key in node.get("required", []):
                    node["required"] = [k for k in node["required"] if k != key]
    for child in node.values():
        restrict_to_version(child, version)


def _comment(node: Any) -> Any:
    return node.get("$comment") if isinstance(node, dict) else None


def _prune_defs(schema: dict[str, Any]) -> None:
    """Drop the ``$defs`` no ``$ref`` reaches any more (after :func:`restrict_to_version`)."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return
    reached: set[str] = set()
    pending: list[Any] = [{k: v for k, v in schema.items() if k != "$defs"}]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/") :]
                if name not in reached and name in defs:
                    reached.add(name)
                    pending.append(defs[name])
            pending.extend(node.values())
    schema["$defs"] = {name: defs[name] for name in defs if name in reached}
    if not schema["$defs"]:
        del schema["$defs"]


def _standard_keywords(node: Any) -> None:
    """Drop pydantic's OpenAPI ``discriminator`` keyword (not JSON Schema; ajv's strict mode
    rejects it). The ``oneOf`` it annotates stays: each branch requires its own ``const`` tag,
    which is standard and decides alone."""
    if isinstance(node, dict):
        node.pop("discriminator", None)
        for value in node.values():
            _standard_keywords(value)
    elif isinstance(node, list):
        for value in node:
            _standard_keywords(value)


def _by_version(spec: SchemaSpec) -> dict[str, Any]:
    """The body of a schema of several versions: each embedded, one chosen by the version key.

    ``if`` the key holds version V ``then`` V's schema, checked newest first; a document
    without the key is of the oldest version; any other version of the same major is checked
    for its key alone.
    """
    parts = [resolve_name(name) for name in spec.versions]
    oldest, major = parts[0], _version(parts[0].format_version or "1.0")[0]
    key = spec.version_key
    known = [part.format_version for part in parts]
    choice: dict[str, Any] = {
        "if": {"required": [key], "properties": {key: {"not": {"enum": known}}}},
        "then": {"properties": {key: {"type": "string", "pattern": rf"^{major}\.[0-9]+$"}}},
        "else": {"$ref": oldest.id},
    }
    for part in reversed(parts[1:]):
        choice = {
            "if": {"required": [key], "properties": {key: {"const": part.format_version}}},
            "then": {"$ref": part.id},
            "else": choice,
        }
    embedded = {}
    for part in parts:
        schema = generate_schema(part.name)
        schema.pop("$comment", None)
        embedded[part.name] = schema
    return {"type": "object", **choice, "$defs": embedded}


def generate_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the registered schema ``name``, as a plain dict."""
    spec = resolve_name(name)
    if spec.versions:
        body = _by_version(spec)
    else:
        body = spec.model_class().model_json_schema(mode="validation")
        body.pop("title", None)
        _standard_keywords(body)
        if spec.format_version is not None:
            restrict_to_version(body, _version(spec.format_version))
            _prune_defs(body)
    defs = body.pop("$defs", None)
    head = {"$schema": DRAFT, "$id": spec.id, "title": spec.title, "$comment": _COMMENT}
    schema: dict[str, Any] = head | body
    if defs:  # a schema of several versions keeps them oldest first; a model's, by name
        schema["$defs"] = defs if spec.versions else {key: defs[key] for key in sorted(defs)}
    return schema


def render_schema(name: str) -> str:
    """The text of the generated schema ``name`` exactly as it is written to disk."""
    from reprobridge_sdk.io.atomic import json_text  # noqa: PLC0415 - when writing

    return json_text(generate_schema(name))


def packaged_schema_text(name: str) -> str:
    """The schema shipped in the package (what the validator loads), without generating it."""
    spec = resolve_name(name)
    package = __package__ or "reprobridge_sdk"
    path = resources.files(package).joinpath(f"_data/schemas/{spec.filename}")
    return path.read_text("utf-8")


def _package_schema_dir() -> Path:
    return Path(__file__).resolve().parent / "_data" / "schemas"


def source_schema_dir() -> Path | None:
    """``schemas/`` of the source checkout the package runs from, if it runs from one."""
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and (root / "reprobridge_sdk").is_dir():
        return root / "schemas"
    return None


def _targets(spec: SchemaSpec) -> list[Path]:
    targets = [_package_schema_dir() / spec.filename]
    source = source_schema_dir()
    if source is not None:
        targets.insert(0, source / spec.filename)
    return targets


def write_schemas(names: list[str] | None = None) -> list[Path]:
    """Regenerate the schemas (all when ``names`` is None); return the files changed."""
    stale = _stale(names)
    for target, text in stale:
        atomic_write_text(target, text)
    return [target for target, _ in stale]


def check_schemas(names: list[str] | None = None) -> list[Path]:
    """The schema files that differ from a fresh generation (missing files count)."""
    return [target for target, _ in _stale(names)]


def _stale(names: list[str] | None) -> list[tuple[Path, str]]:
    """Each schema file that differs from a fresh generation, with the text it should hold."""
    stale: list[tuple[Path, str]] = []
    for name in names or list(SCHEMAS):
        spec = resolve_name(name)
        text = render_schema(spec.name)
        for target in _targets(spec):
            try:
                current = target.read_text("utf-8")
            except OSError:
                current = None
            if current != text:
                stale.append((target, text))
    return stale
