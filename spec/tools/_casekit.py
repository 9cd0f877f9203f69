"""Building blocks for the conformance cases: a base artifact and the functions that write cases.

A case is a directory under ``validators/cases/`` holding an artifact and ``expected.json``.
The cases are data: this module (and ``build_cases.py``) only help to author them
consistently (digests computed, GUIDE.md rendered from the records); the committed files are
what validators are tested against.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reprobridge_sdk.digest import file_sha256, tree_digest
from reprobridge_sdk.findings import code_info
from reprobridge_sdk.guide import update_guide_text
from reprobridge_sdk.versions import NEWEST_FORMAT

__all__ = [
    "BEYOND_SCHEMA",
    "GUIDE",
    "SCHEMA_CODES",
    "Case",
    "Symlink",
    "add",
    "base_files",
    "base_manifest",
    "delete",
    "fake_hash",
    "lock_line",
    "put",
    "rename",
    "write_case",
    "write_conformance",
]

Manifest = dict[str, Any]
Mutator = Callable[[Manifest], None]

#: The tag of the cases a JSON Schema validator alone cannot judge (``Case.all_tags``).
BEYOND_SCHEMA = "beyond-schema"
#: The codes of the schema's own errors: a case that expects only these is structural.
SCHEMA_CODES = frozenset({"S001", "S002", "S003", "S004"})
#: The version a case's rra.yaml declares (a minor of major 1), and the newest this suite knows.
_DECLARED = re.compile(rb"^rra_version: *['\"]?1\.(0|[1-9][0-9]*)['\"]? *\r?$", re.MULTILINE)
_NEWEST = tuple(int(part) for part in NEWEST_FORMAT.split("."))


@dataclass(frozen=True)
class Symlink:
    """A symbolic link to write instead of a regular file."""

    target: str


class _Guide:
    """Placeholder: a GUIDE.md whose records block is rendered from the case's manifest."""

    def __init__(
        self,
        before: str = "",
        after: str = "",
        markers: bool = True,
        records: dict[str, Any] | None = None,
    ) -> None:
        self.before = before
        self.after = after
        self.markers = markers
        self.records = records  # render these instead of the manifest's records


GUIDE = _Guide(
    before="# Reproduction guide\n\nRun the scored launcher; it takes a minute on a CPU.\n\n",
    after="\n## Notes\n\nNothing else to know.\n",
)

FileContent = str | bytes | Symlink | _Guide


def fake_hash(name: str) -> str:
    """A stable, well-formed SHA-256 (of the name) for hashes in example locks."""
    return hashlib.sha256(name.encode()).hexdigest()


def lock_line(name: str, version: str) -> str:
    """One hashed requirement in pip's format."""
    return f"{name}=={version} \\\n    --hash=sha256:{fake_hash(name + version)}\n"


LOCK = (
    "# Resolved for CPython 3.11 on linux-x86_64.\n"
    + lock_line("numpy", "1.26.4")
    + lock_line("scikit-learn", "1.5.2")
    + lock_line("scipy", "1.14.1")
)

TRAIN_PY = '''"""Train the model and print its test accuracy."""
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
print(f"seed {args.seed}")
print("epoch 1 loss 0.41")
print("final accuracy: 0.912")
'''

SAMPLE_LOG = "seed 0\nepoch 1 loss 0.41\nfinal accuracy: 0.912\n"

OBSERVATIONS = [0.905, 0.912, 0.915, 0.909, 0.918]


def base_manifest(artifact_id: str = "conformance-base") -> Manifest:
    """A complete, valid manifest (every digest pinned, no warnings)."""
    return {
        "rra_version": "1.0",
        "artifact": {
            "id": artifact_id,
            "title": "Logistic regression on a small image dataset",
            "license": "Apache-2.0",
            "paper": {"title": "A study of linear baselines"},
        },
        "codebase": {
            "upstream": {
                "repository": "https://github.com/example/linear-baselines.git",
                "commit": "3f9c2a7e1b4d5c6e7f8091a2b3c4d5e6f7a8b9c0",
            },
            "refined": {"kind": "directory", "path": "code"},
            "tree_digest": "@tree:code",
        },
        "environment": {
            "python": "3.11",
            "lock": {
                "path": "environment/requirements.txt",
                "format": "requirements",
                "sha256": "@sha256:environment/requirements.txt",
                "resolved_for": {"python": "3.11.9", "platform": "linux-x86_64"},
            },
        },
        "tasks": [
            {
                "id": "accuracy",
                "location": {"table": "2", "row": "LogReg", "column": "Acc."},
                "dataset": "digits",
                "metric": "accuracy",
                "statistic": {"aggregate": "mean", "seeds": 3},
                "published": {"value": 0.912},
                "direction": "higher",
                "kind": "full",
                "reference": {
                    "observations": [
                        {"value": v, "provenance": {"source": "artifact maintainers"}}
                        for v in OBSERVATIONS
                    ]
                },
            }
        ],
        "launchers": [
            {
                "id": "train",
                "argv": ["python", "code/train.py", "--seed", "{seed}"],
                "seeds": [0, 1, 2],
                "scope": "scored",
                "measurements": [
                    {
                        "task": "accuracy",
                        "extract": {"kind": "regex", "pattern": r"final accuracy: ([0-9.]+)"},
                        "aggregate": "mean",
                    }
                ],
            }
        ],
        "guide": {"path": "GUIDE.md"},
    }


def base_files() -> dict[str, FileContent]:
    """The files of the base artifact (besides rra.yaml)."""
    return {
        "GUIDE.md": GUIDE,
        "code/train.py": TRAIN_PY,
        "environment/requirements.txt": LOCK,
    }


@dataclass
class Case:
    """One conformance case."""

    name: str
    description: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    tags: list[str] = field(default_factory=lambda: ["required"])
    mutate: Iterable[Mutator] = ()
    files: dict[str, FileContent | None] = field(default_factory=dict)
    raw: bytes | None = None  # rra.yaml written verbatim instead of from the manifest
    manifest: Manifest | None = None  # replaces the base manifest
    base: bool = True  # start from the base files
    text_edit: Callable[[str], str] | None = None  # applied to the dumped rra.yaml text
    write_manifest: bool = True  # False: the artifact has no rra.yaml
    #: The spec sections (``part.md#anchor``) the case rests on; default: the sections the
    #: registry names for its expected codes.
    spec: tuple[str, ...] = ()
    #: The lowest format version a validator must implement to judge the case, when it is
    #: higher than what the case shows (``format_version``).
    needs_format: str | None = None

    def schema_decides(self) -> bool:
        """True when a JSON Schema validator alone gives this case's findings (see ``all_tags``)."""
        return (
            self.write_manifest
            and "yaml" not in self.tags
            and all(item["code"] in SCHEMA_CODES for item in self.findings)
        )

    def all_tags(self) -> list[str]:
        """The case's tags, with ``beyond-schema`` when the schema alone cannot judge it.

        ``beyond-schema`` (validators/README.md, "Tag"): the case has no ``rra.yaml``, or it
        exercises the format's own YAML rules (tag ``yaml``: a generic YAML loader reads it
        otherwise, or JSON cannot carry its data), or it expects a finding that is not one of
        the schema's own (S001-S004: unknown key, missing key, wrong type, invalid value).
        Every other case is *structural*: its data is the same to every YAML 1.2 loader and
        the schema alone gives its verdict.
        """
        if self.schema_decides():
            return list(self.tags)
        return [*self.tags, BEYOND_SCHEMA]

    def format_version(self, rra_yaml: bytes | None) -> str:
        """The lowest format version a validator needs for this case (spec: conformance,
        "Versions of the suite"): the highest of the version the case declares (when it is
        a version this suite knows), the ``since`` of every expected code and
        ``needs_format``."""
        versions = [(1, 0)]
        declared = _DECLARED.search(rra_yaml or b"")
        if declared is not None:
            version = (1, int(declared.group(1)))
            if version <= _NEWEST:
                versions.append(version)
        for item in self.findings:
            major, minor = code_info(item["code"]).since.split(".")
            versions.append((int(major), int(minor)))
        if self.needs_format is not None:
            major, minor = self.needs_format.split(".")
            versions.append((int(major), int(minor)))
        highest = max(versions)
        return f"{highest[0]}.{highest[1]}"

    def sections(self) -> list[str]:
        """The spec sections the case cites (``spec``, else its codes' registry sections)."""
        if self.spec:
            return list(self.spec)
        return sorted({code_info(item["code"]).spec for item in self.findings})

    def valid(self) -> bool:
        for item in self.findings:
            severity = item.get("severity") or code_info(item["code"]).severity_in("validation")
            if severity == "error":
                return False
        return True


def _render_guide(spec: _Guide, guide: Any) -> str:
    if not spec.markers:
        return spec.before + spec.after
    records = guide if isinstance(guide, dict) else {}
    skeleton = (
        spec.before
        + "<!-- reprobridge:records:begin -->\n<!-- reprobridge:records:end -->\n"
        + spec.after
    )
    return str(update_guide_text(skeleton, records))


def _resolve_digests(node: Any, root: Path) -> Any:
    if isinstance(node, dict):
        return {key: _resolve_digests(value, root) for key, value in node.items()}
    if isinstance(node, list):
        return [_resolve_digests(value, root) for value in node]
    if isinstance(node, str) and node.startswith("@sha256:"):
        return file_sha256(root / node.removeprefix("@sha256:"))
    if isinstance(node, str) and node.startswith("@tree:"):
        return tree_digest(root / node.removeprefix("@tree:"))
    return node


def _write_file(path: Path, content: FileContent, manifest: Manifest | None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, Symlink):
        path.symlink_to(content.target)
    elif isinstance(content, _Guide):
        guide = manifest.get("guide") if isinstance(manifest, dict) else None
        if content.records is not None:
            guide = content.records
        path.write_text(_render_guide(content, guide), "utf-8")
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, "utf-8")


def _parent(manifest: Manifest, pointer: str) -> tuple[Any, str]:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    node: Any = manifest
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    return node, parts[-1]


def put(pointer: str, value: Any) -> Mutator:
    """Set the value at ``pointer`` (creating mappings on the way)."""

    def mutate(manifest: Manifest) -> None:
        node, key = _parent(manifest, pointer)
        if isinstance(node, list):
            node[int(key)] = copy.deepcopy(value)
        else:
            node[key] = copy.deepcopy(value)

    return mutate


def delete(pointer: str) -> Mutator:
    """Remove the value at ``pointer``."""

    def mutate(manifest: Manifest) -> None:
        node, key = _parent(manifest, pointer)
        del node[int(key) if isinstance(node, list) else key]

    return mutate


def add(pointer: str, value: Any) -> Mutator:
    """Append ``value`` to the list at ``pointer`` (created if absent)."""

    def mutate(manifest: Manifest) -> None:
        node, key = _parent(manifest, pointer)
        node.setdefault(key, []).append(copy.deepcopy(value))

    return mutate


def rename(pointer: str, new_key: str) -> Mutator:
    """Rename the key at ``pointer`` in place (the key order is kept)."""

    def mutate(manifest: Manifest) -> None:
        node, key = _parent(manifest, pointer)
        items = [(new_key if k == key else k, v) for k, v in node.items()]
        node.clear()
        node.update(items)

    return mutate


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_manifest(manifest: Manifest) -> str:
    """The manifest as block-style YAML, keys in insertion order, no anchors."""
    return yaml.dump(
        manifest, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True, width=100
    )


def write_case(case: Case, cases_dir: Path) -> Path:
    """Write ``case`` into ``cases_dir/<name>/`` (replacing what was there)."""
    target = cases_dir / case.name
    if target.exists() or target.is_symlink():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    manifest: Manifest | None = None
    if case.raw is None:
        manifest = copy.deepcopy(case.manifest) if case.manifest else base_manifest()
        if isinstance(manifest.get("artifact"), dict):
            manifest["artifact"]["id"] = case.name
        for mutate in case.mutate:
            mutate(manifest)
    files: dict[str, FileContent | None] = dict(base_files()) if case.base else {}
    files.update(case.files)
    # GUIDE.md is rendered last from the final manifest; digests are computed after all files.
    for rel, content in sorted(files.items(), key=lambda item: isinstance(item[1], _Guide)):
        if content is not None:
            _write_file(target / rel, content, manifest)
    if not case.write_manifest:
        pass
    elif case.raw is not None:
        (target / "rra.yaml").write_bytes(case.raw)
    elif manifest is not None:
        manifest = _resolve_digests(manifest, target)
        text = dump_manifest(manifest)
        if case.text_edit is not None:
            text = case.text_edit(text)
        (target / "rra.yaml").write_text(text, "utf-8")
    manifest_path = target / "rra.yaml"
    written = manifest_path.read_bytes() if manifest_path.is_file() else None
    expected: dict[str, Any] = {
        "description": case.description,
        "format": case.format_version(written),
        "tags": case.all_tags(),
        "valid": case.valid(),
        "findings": case.findings,
    }
    if case.sections():
        expected["spec"] = case.sections()
    (target / "expected.json").write_text(json.dumps(expected, indent=2) + "\n", "utf-8")
    return target


def write_conformance(cases: Iterable[Case], path: Path) -> None:
    """The manifest of the suite, in the style of CWL's conformance_tests.yaml."""
    lines = [
        "# The conformance cases of RRA 1.x (spec/conformance.md; generated with",
        "# spec/tools/build_cases.py; a test checks that it lists exactly the directories under",
        "# cases/ with their expected.json). format: the lowest format version a validator needs.",
    ]
    for case in sorted(cases, key=lambda item: item.name):
        expected = json.loads((path.parent / "cases" / case.name / "expected.json").read_text())
        lines += [
            f"- id: {case.name}",
            f"  doc: {json.dumps(case.description, ensure_ascii=False)}",
            f"  path: cases/{case.name}",
            f'  format: "{expected["format"]}"',
            f"  tags: [{', '.join(case.all_tags())}]",
            f"  should_fail: {'false' if case.valid() else 'true'}",
        ]
    path.write_text("\n".join(lines) + "\n", "utf-8")
