"""JSON Schemas of the format, generated from the SDK's pydantic models.

The models in :mod:`reprobridge_sdk.model` are the single source of truth. This module turns
them into JSON Schema 2020-12 documents with a stable ``$id``, a title and a "generated, do
not edit" ``$comment``, and writes them in two places with identical bytes:

* ``schemas/<name>.schema.json`` in a source checkout (what tool builders read), and
* ``reprobridge_sdk/_data/schemas/<name>.schema.json`` (the copy shipped in the package,
  which the validator loads).

Generation is deterministic: ``$defs`` are sorted by name, property order follows the
model's field order (which is meaningful to readers), the JSON is indented by two spaces and
ends with a newline. No keyword is added beyond what pydantic emits, so the validator's
in-house evaluator and independent validators read the same document.

The registry of schemas is :data:`SCHEMAS`, a dict from name to :class:`SchemaSpec`. A part
of the SDK that defines another document format adds an entry to ``_BUILTIN`` below (with a
``"module:attribute"`` reference so nothing is imported until a schema is generated);
programs may call :func:`register_schema` at run time.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError
from .io._fs import atomic_write_text

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
    "source_schema_dir",
    "write_schemas",
]

#: The JSON Schema dialect of every generated schema.
DRAFT = "https://json-schema.org/draft/2020-12/schema"
#: Base of the stable ``$id`` of every schema: ``<base><name>.schema.json``.
SCHEMA_BASE_URL = "https://reprobridge.org/schemas/"

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
    ),
    SchemaSpec(
        "evidence-1.0",
        "reprobridge_sdk.model.evidence:EvidenceRecord",
        "ReproBridge evidence record 1.0 (record.json)",
        aliases=("evidence", "record"),
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
        "claims-1.0",
        "reprobridge_sdk.model.claims:Claims",
        "ReproBridge claims file 1.0 (the paper's targets for reprobridge build)",
        aliases=("claims",),
    ),
    SchemaSpec(
        "build-intake-1.0",
        "reprobridge_sdk.model.build:IntakeRecord",
        "ReproBridge build state 1.0: the Intake phase (.rra-build/intake.json)",
    ),
    SchemaSpec(
        "build-planner-1.0",
        "reprobridge_sdk.model.build:PlanRecord",
        "ReproBridge build state 1.0: the Planner phase (.rra-build/planner.json)",
    ),
    SchemaSpec(
        "build-builder-1.0",
        "reprobridge_sdk.model.build:BuilderRecord",
        "ReproBridge build state 1.0: the Builder phase (.rra-build/builder.json)",
    ),
    SchemaSpec(
        "build-reproducer-1.0",
        "reprobridge_sdk.model.build:ReproducerRecord",
        "ReproBridge build state 1.0: the Reproducer phase (.rra-build/reproducer.json)",
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


def generate_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the registered schema ``name``, as a plain dict."""
    spec = resolve_name(name)
    body = spec.model_class().model_json_schema(mode="validation")
    body.pop("title", None)
    defs = body.pop("$defs", None)
    schema: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": spec.id,
        "title": spec.title,
        "$comment": _COMMENT,
    }
    schema.update(body)
    if defs:
        schema["$defs"] = {key: defs[key] for key in sorted(defs)}
    return schema


def render_schema(name: str) -> str:
    """The text of the generated schema ``name`` exactly as it is written to disk."""
    return json.dumps(generate_schema(name), indent=2, ensure_ascii=False) + "\n"


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
    changed: list[Path] = []
    for name in names or list(SCHEMAS):
        spec = resolve_name(name)
        text = render_schema(spec.name)
        for target in _targets(spec):
            try:
                current = target.read_text("utf-8")
            except OSError:
                current = None
            if current != text:
                atomic_write_text(target, text)
                changed.append(target)
    return changed


def check_schemas(names: list[str] | None = None) -> list[Path]:
    """The schema files that differ from a fresh generation (missing files count)."""
    stale: list[Path] = []
    for name in names or list(SCHEMAS):
        spec = resolve_name(name)
        text = render_schema(spec.name)
        for target in _targets(spec):
            try:
                current = target.read_text("utf-8")
            except OSError:
                current = None
            if current != text:
                stale.append(target)
    return stale
