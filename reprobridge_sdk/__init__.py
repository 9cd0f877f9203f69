"""ReproBridge SDK: read, write, validate, run and audit Refined Reproducible Artifacts.

:data:`PUBLIC_API` declares what is stable: the modules listed and, in each, the names
listed. Everything else (a module or name not listed, or one with a leading underscore) is
private and may change in any release. The top-level names are imported lazily (PEP 562) so
that importing the package, and running the command line, stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _forward, _lazy

if TYPE_CHECKING:
    from ._forward import DocumentView
    from .api import ArtifactDir, create, load
    from .authoring.pack import PackError, pack, unpack
    from .errors import ArtifactError, MissingExtraError, ReproBridgeError, UsageError
    from .extract.extraction import ExtractionError, extract_value
    from .findings import Finding, Severity
    from .locks.lockfile import LockError, check_lock, read_lock
    from .model import EvidenceRecord, Manifest
    from .validation import ValidationResult, validate

#: The distribution's name on the package index (``pip install reprobridge``); the import
#: package is ``reprobridge_sdk``. Defined here, not in a submodule, so that ``--version``
#: costs no import.
DISTRIBUTION = "reprobridge"

#: The stable modules, each with its stable names (its ``__all__``, which a test holds equal).
#: Adding a name here is a promise to keep it; ``docs/reference/api.md`` is generated from it.
_STABLE = {
    "reprobridge_sdk": """
        DISTRIBUTION PUBLIC_API ArtifactDir ArtifactError EvidenceRecord ExtractionError
        Finding LockError Manifest MissingExtraError PackError ReproBridgeError Severity
        UsageError ValidationResult check_lock create extract_value load pack read_lock
        unpack validate
    """,
    "reprobridge_sdk.api": """
        ArtifactDir consumer_view create load
    """,
    "reprobridge_sdk.errors": """
        ArtifactError MissingExtraError ReproBridgeError UsageError require_extra
    """,
    "reprobridge_sdk.findings": """
        SPEC_URL CodeInfo Finding Severity code_info finding finding_line registry
        terminal_text
    """,
    "reprobridge_sdk.versions": """
        FORMAT_VERSION FORMAT_VERSIONS MANIFEST_NAME NEWEST_FORMAT RECORD_NAME
        SCHEMA_BASE_URL VERSION_PATTERN follow_modeline manifest_modeline manifest_schema_url
        parse_since parse_version since written_version
    """,
    "reprobridge_sdk.digest": """
        MAX_TREE_FILE_BYTES TREE_DIGEST_PREFIX TREE_EXCLUDES WrittenFiles file_sha256
        files_sha256 handle_sha256 iter_tree_entries tree_digest
    """,
    "reprobridge_sdk.model": """
        EVIDENCE_VERSION FORMAT_VERSION FORMAT_VERSIONS ID_PATTERN MANIFEST_NAME
        NEWEST_FORMAT RECORD_NAME Accelerator Ambiguity Artifact Author Change Codebase
        CsvExtractor DataItem DataSource Discrepancy Distribution Environment
        EnvironmentSnapshot EvidenceRecord Extractor Failure FileDigest GpuInfo Guide
        JsonExtractor Landmark LandmarkHit Launcher Location Lock LostAttempt Manifest
        MeasuredValue Measurement Observation OpenChoice Output OutputRecord Paper Patch
        Pitfall PluginExtractor Provenance ProvenanceRun Published Reference RefinedCode
        RegexExtractor ResolvedFor Resources Sample SpecModel Statistic SystemPackage
        Task Transform Upstream UpstreamBundle YamlExtractor required_version
    """,
    "reprobridge_sdk.io.yamlio": """
        YamlDocument dumps dumps_data load loads save to_plain update
    """,
    "reprobridge_sdk.io.atomic": """
        atomic_directory atomic_open atomic_write_bytes atomic_write_json atomic_write_text
        json_text
    """,
    "reprobridge_sdk.io.pointer": """
        PointerError ancestors escape_pointer from_loc pointer_of resolve tokens_of
        unescape_pointer walk
    """,
    "reprobridge_sdk.validation": """
        MANIFEST_NAME ArtifactResult Mapper ValidationResult discover validate
        validate_artifact
    """,
    "reprobridge_sdk.run": """
        RecordError RunEvent RunResult RunSummary SampleCheck TaskValue check_samples
        iter_runs load_record read_snapshot replay_log replay_run run
    """,
    "reprobridge_sdk.env": """
        DataResult LockResult cache_root capture_snapshot check_environment
        ensure_environment environment_path fetch_data lock_artifact verify_data
    """,
    "reprobridge_sdk.audit": """
        Interval Score audit audit_table compatibility_interval holm load_artifact score
    """,
    "reprobridge_sdk.signing": """
        AUDIT_PREDICATE ENVELOPE_NAME KEY_ENV PAYLOAD_TYPE RUN_PREDICATE STATEMENT_TYPE
        Envelope SigningKey TrustedKeys audit_statement generate_key keyid_of
        load_signing_key load_trusted_keys pae parse_trusted_keys run_statement
        sign_payload verify_envelope
    """,
    "reprobridge_sdk.locks.lockfile": """
        PYLOCK_VERSION Lock LockEntry LockError LockFormat check_lock detect_format
        is_local_location read_lock
    """,
    "reprobridge_sdk.authoring.pack": """
        EPOCH MAX_BYTES MAX_FILES PackError PackResult UnpackResult hidden_left_out pack
        packed_files unpack
    """,
    "reprobridge_sdk.checkout": """
        CHECKOUT_DIR BundleRef Checkout CodebaseError GitError SeriesPatch bundle_of
        cached_upstream fetch_upstream git git_available init_checkout
        materialize_series series_from_data working_changes
    """,
}
#: The public API: each stable module and its stable names, in one place.
PUBLIC_API: dict[str, tuple[str, ...]] = {
    module: tuple(names.split()) for module, names in _STABLE.items()
}

__all__ = [
    "DISTRIBUTION",
    "PUBLIC_API",
    "ArtifactDir",
    "ArtifactError",
    "EvidenceRecord",
    "ExtractionError",
    "Finding",
    "LockError",
    "Manifest",
    "MissingExtraError",
    "PackError",
    "ReproBridgeError",
    "Severity",
    "UsageError",
    "ValidationResult",
    "check_lock",
    "create",
    "extract_value",
    "load",
    "pack",
    "read_lock",
    "unpack",
    "validate",
]

#: Each module of a lazily imported top-level name, with its names.
_LAZY = {
    ".api": "ArtifactDir create load",
    ".authoring.pack": "PackError pack unpack",
    ".errors": "ArtifactError MissingExtraError ReproBridgeError UsageError",
    ".extract.extraction": "ExtractionError extract_value",
    ".findings": "Finding Severity",
    ".locks.lockfile": "LockError check_lock read_lock",
    ".model": "EvidenceRecord Manifest",
    ".validation": "ValidationResult validate",
}


def _consumer_view(data: Any) -> tuple[Any, DocumentView | None]:
    """The forward-compatibility reader of the layers below the API (see :mod:`._forward`):
    the API's own, imported by name when a newer-minor document is first read (as the public
    names are, by :func:`__getattr__`)."""
    view: tuple[Any, DocumentView | None] = importlib.import_module(".api", __name__).consumer_view(
        data
    )
    return view


_forward.register(_consumer_view)


__getattr__, __dir__ = _lazy.lazy_names(__name__, _LAZY, __all__)
