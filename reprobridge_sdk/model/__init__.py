"""The data model of the RRA format: one module per part of the manifest.

This package is the ground floor of the SDK and imports nothing else of it.
"""

from __future__ import annotations

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
    RegexExtractor,
    Resources,
    Sample,
    Transform,
    YamlExtractor,
)
from .manifest import FORMAT_VERSION, FORMAT_VERSIONS, MANIFEST_NAME, NEWEST_FORMAT, Manifest
from .task import Location, Observation, Provenance, Published, Reference, Statistic, Task

__all__ = [
    "EVIDENCE_VERSION",
    "FORMAT_VERSION",
    "FORMAT_VERSIONS",
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
    "Provenance",
    "Published",
    "Reference",
    "RefinedCode",
    "RegexExtractor",
    "ResolvedFor",
    "Resources",
    "Sample",
    "Statistic",
    "SystemPackage",
    "Task",
    "Transform",
    "Upstream",
    "UpstreamBundle",
    "YamlExtractor",
]
