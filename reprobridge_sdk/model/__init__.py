"""The data model of the RRA format: one module per part of the manifest.

This package is the ground floor of the SDK and imports nothing else of it. Its names are
imported when first used, so that a command reaches only the models it uses (importing
``reprobridge_sdk.model.environment`` does not build the evidence or launcher models).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reprobridge_sdk._lazy import lazy_names

if TYPE_CHECKING:
    from ._base import ID_PATTERN, SpecModel, required_version
    from .artifact import Artifact, Author, Paper
    from .codebase import Codebase, Patch, RefinedCode, Upstream, UpstreamBundle
    from .environment import (
        Accelerator,
        DataItem,
        DataSource,
        Environment,
        Lock,
        ResolvedFor,
        SystemPackage,
    )
    from .evidence import (
        EVIDENCE_VERSION,
        RECORD_NAME,
        Distribution,
        EnvironmentSnapshot,
        EvidenceRecord,
        Failure,
        FileDigest,
        GpuInfo,
        LandmarkHit,
        LostAttempt,
        MeasuredValue,
        OutputRecord,
    )
    from .guide import Ambiguity, Change, Discrepancy, Guide, OpenChoice, Pitfall
    from .launcher import (
        CsvExtractor,
        Extractor,
        JsonExtractor,
        Landmark,
        Launcher,
        Measurement,
        Output,
        PluginExtractor,
        RegexExtractor,
        Resources,
        Sample,
        Transform,
        YamlExtractor,
    )
    from .manifest import FORMAT_VERSION, FORMAT_VERSIONS, MANIFEST_NAME, NEWEST_FORMAT, Manifest
    from .task import (
        Location,
        Observation,
        Provenance,
        ProvenanceRun,
        Published,
        Reference,
        Statistic,
        Task,
    )

__all__ = [
    "EVIDENCE_VERSION",
    "FORMAT_VERSION",
    "FORMAT_VERSIONS",
    "ID_PATTERN",
    "MANIFEST_NAME",
    "NEWEST_FORMAT",
    "RECORD_NAME",
    "Accelerator",
    "Ambiguity",
    "Artifact",
    "Author",
    "Change",
    "Codebase",
    "CsvExtractor",
    "DataItem",
    "DataSource",
    "Discrepancy",
    "Distribution",
    "Environment",
    "EnvironmentSnapshot",
    "EvidenceRecord",
    "Extractor",
    "Failure",
    "FileDigest",
    "GpuInfo",
    "Guide",
    "JsonExtractor",
    "Landmark",
    "LandmarkHit",
    "Launcher",
    "Location",
    "Lock",
    "LostAttempt",
    "Manifest",
    "MeasuredValue",
    "Measurement",
    "Observation",
    "OpenChoice",
    "Output",
    "OutputRecord",
    "Paper",
    "Patch",
    "Pitfall",
    "PluginExtractor",
    "Provenance",
    "ProvenanceRun",
    "Published",
    "Reference",
    "RefinedCode",
    "RegexExtractor",
    "ResolvedFor",
    "Resources",
    "Sample",
    "SpecModel",
    "Statistic",
    "SystemPackage",
    "Task",
    "Transform",
    "Upstream",
    "UpstreamBundle",
    "YamlExtractor",
    "required_version",
]

_WHERE = {
    "._base": "ID_PATTERN SpecModel required_version",
    ".artifact": "Artifact Author Paper",
    ".codebase": "Codebase Patch RefinedCode Upstream UpstreamBundle",
    ".environment": "Accelerator DataItem DataSource Environment Lock ResolvedFor SystemPackage",
    ".evidence": "EVIDENCE_VERSION RECORD_NAME Distribution EnvironmentSnapshot EvidenceRecord "
    "Failure FileDigest GpuInfo LandmarkHit LostAttempt MeasuredValue OutputRecord",
    ".guide": "Ambiguity Change Discrepancy Guide OpenChoice Pitfall",
    ".launcher": "CsvExtractor Extractor JsonExtractor Landmark Launcher Measurement Output "
    "PluginExtractor RegexExtractor Resources Sample Transform YamlExtractor",
    ".manifest": "FORMAT_VERSION FORMAT_VERSIONS MANIFEST_NAME NEWEST_FORMAT Manifest",
    ".task": "Location Observation Provenance ProvenanceRun Published Reference Statistic Task",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__)
