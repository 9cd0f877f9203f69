"""Fill the generated parts of the specification and write its example artifacts.

Usage: ``python spec/tools/build_spec.py [--check]`` from the repository root.

The parts of the specification (``spec/*.md``) are hand-written except for blocks between
``<!-- begin generated: KIND ARGS -->`` and ``<!-- end generated -->``:

* ``fields NAME...``: a table per object of the newest manifest schema
  (``schemas/rra-1.1.schema.json``), a field or value added after 1.0 marked "Since 1.1";
* ``evidence-fields NAME...``: the same for the evidence record schema;
* ``example PATH``: the file ``spec/examples/PATH`` verbatim;
* ``additions VERSION``: every field and enumeration value marked ``since VERSION`` in the
  newest manifest and evidence schemas, linked to its field table;
* ``contexts``: the codes of each context, required (stable, deprecated) and preview;
* ``pointers CONTEXT``: the table of pointer rules (spec §9.2) of every code the registry
  lists in CONTEXT, from each entry's ``pointer``;
* ``codes``: the catalogue of finding codes from the SDK's registry
  (``reprobridge_sdk/_data/codes.json``), each code of the manifest families with an invalid
  and a valid excerpt taken from the conformance cases (their choice is recorded in
  ``spec/examples/codes.json``); the codes reported by other commands (environment check,
  data, runner, audit, and L010) with the snippets of ``_runtime_examples.py``.

The example artifacts under ``spec/examples/`` are written from the same definitions as the
conformance cases. The registry is completed and checked first (``registry.py``: entries
added without ``contexts`` or ``pointer`` get their family's). ``--check`` changes nothing and
exits 1 when the registry is incomplete or a generated part is stale; a test runs it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import registry as code_registry
from _casekit import write_case
from _runtime_examples import RUNTIME_EXAMPLES
from build_cases import cases

from reprobridge_sdk.io.document import load_document
from reprobridge_sdk.model._fieldnotes import NOTES
from reprobridge_sdk.validation import reporters, validate
from reprobridge_sdk.versions import NEWEST_FORMAT, parse_since

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "spec"
#: The part that defines the extension keys every field table links to.
EXTENSIONS = ("manifest", "unknown-keys")
EXAMPLES = REPO / "spec" / "examples"
CASES = REPO / "validators" / "cases"

#: Conformance cases that are also the spec's example artifacts.
EXAMPLE_CASES = (
    "minimal-valid",
    "full-featured",
    "patches-codebase",
    "pylock-lock",
    "extension-keys",
    "templates-and-escapes",
)
#: The case whose `reprobridge validate --format json` output the spec shows (version elided).
OUTPUT_CASE = "validators/cases/unknown-key-under-known-version"
#: Valid cases the catalogue takes its "valid" excerpts from, in order of preference.
VALID_SOURCES = (
    "minimal-valid",
    "full-featured",
    "sample-replay-transform",
    "pylock-lock",
    "patches-codebase",
    "templates-and-escapes",
    "gated-data-with-instructions",
)
MANIFEST_FAMILIES = "YVSRFLXG"
#: The case whose excerpt illustrates a code, where the automatic choice (the case with the
#: fewest findings) is not the clearest.
CANONICAL = {
    "S001": "unknown-key-under-known-version",
    "S003": "wrong-type-argv-string",
    "S004": "invalid-enum-direction",
    "R002": "unknown-task-in-measurement",
    "F003": "symlink-escapes-as-lock",
}
#: Where the valid excerpt of a code is taken when the invalid pointer names a wrong key.
VALID_POINTER = {"S001": "/tasks/0/metric", "S005": "/tasks/0/metric"}
#: Worked examples of the compatibility interval (section 11), level 0.95 and floor 0.01.
#: Observations are strings so that "nan" can be written in JSON; null bounds: no interval;
#: ``scores``: value -> [z, p] (null: no score, n < 2).
INTERVAL_EXAMPLES: list[dict[str, Any]] = [
    {
        "observations": ["0.905", "0.912", "0.915", "0.909", "0.918"],
        "mean": 0.9118,
        "sd": 0.0050695,
        "t": 2.7764451,
        "half_width": 0.0154186,
        "low": 0.8963814,
        "high": 0.9272186,
        "floor_only": False,
        "compatible": {"0.90": True, "0.93": False, "0.8963": False},
        "scores": {"0.90": [-2.1248331, 0.1007922], "0.93": [3.2772849, 0.0305787]},
    },
    {
        "observations": ["2.0", "2.0", "2.0"],
        "mean": 2.0,
        "sd": 0.0,
        "t": 4.3026527,
        "half_width": 0.02,
        "low": 1.98,
        "high": 2.02,
        "floor_only": False,
        "compatible": {"2.02": True, "2.0201": False},
        "scores": {"2.0201": [4.3241660, 0.0495400]},
    },
    {
        "observations": ["0.5"],
        "mean": 0.5,
        "sd": None,
        "t": None,
        "half_width": 0.005,
        "low": 0.495,
        "high": 0.505,
        "floor_only": True,
        "compatible": {"0.5": True, "0.51": False},
        "scores": {"0.5": None},
    },
    {"observations": [], "low": None, "high": None, "compatible": {"0.5": False}},
    {"observations": ["1.0", "nan"], "low": None, "high": None, "compatible": {"1.0": False}},
]
#: Worked example of Holm's step-down adjustment (section 11.2); null: not in the family.
HOLM_EXAMPLE: dict[str, list[float | None]] = {
    "p": [0.01, 0.04, 0.03, None, 0.2],
    "adjusted": [0.04, 0.09, 0.09, None, 0.2],
}
_BLOCK_RE = re.compile(
    r"(<!-- begin generated: (?P<args>[^>]*?) -->\n)(?P<body>.*?)(<!-- end generated -->)",
    re.DOTALL,
)
_WINDOW = 3
_MAX_LINES = 14


# --------------------------------------------------------------------------- field tables


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = _ref_name(schema["$ref"])
        return f"[{name}](#obj-{name.lower()})"
    if "oneOf" in schema:
        return " or ".join(_type(s) for s in schema["oneOf"]) + " (by `kind`)"
    if "anyOf" in schema:
        parts = list(dict.fromkeys(_type(s) for s in schema["anyOf"] if s.get("type") != "null"))
        nullable = any(s.get("type") == "null" for s in schema["anyOf"])
        return " or ".join(parts) + (" or null" if nullable else "")
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, dict):
            return f"map of string to {_type(values)}"
        return "object"
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind or "any")


def _constraints(schema: dict[str, Any]) -> str:
    parts: list[str] = []
    for branch in [schema, *schema.get("anyOf", [])]:
        if "pattern" in branch:
            marker = parse_since(branch.get("$comment"))
            since = "" if marker is None else f"since {marker[0][0]}.{marker[0][1]}: "
            parts.append(f"{since}pattern `{branch['pattern']}`")
        for key, label in (
            ("minLength", "length ≥"),
            ("maxLength", "length ≤"),
            ("minimum", "≥"),
            ("maximum", "≤"),
            ("exclusiveMinimum", ">"),
            ("exclusiveMaximum", "<"),
            ("minItems", "items ≥"),
            ("maxItems", "items ≤"),
        ):
            if key in branch:
                parts.append(f"{label} {branch[key]}")
        items = branch.get("items")
        if isinstance(items, dict) and "pattern" in items:
            parts.append(f"items match `{items['pattern']}`")
    return "; ".join(parts).replace("|", "\\|")


def _default(schema: dict[str, Any]) -> str:
    if "default" not in schema:
        return ""
    return f"`{json.dumps(schema['default'])}`"


def _link(part: str, target_part: str, anchor: str) -> str:
    """A link from ``part`` to ``anchor`` of ``target_part`` (both file stems)."""
    return f"#{anchor}" if part == target_part else f"{target_part}.md#{anchor}"


def _added_branches(
    prop: dict[str, Any], objects: dict[str, dict[str, Any]]
) -> list[tuple[str, str]]:
    """The union branches of ``prop`` marked ``since`` (a marked ``$defs`` object or a
    marked branch): ``(version, what)`` each."""
    found: list[tuple[str, str]] = []
    for branch in [*prop.get("oneOf", []), *prop.get("anyOf", [])]:
        target = branch
        name = None
        if "$ref" in branch:
            name = _ref_name(branch["$ref"])
            target = objects.get(name, {})
        marker = parse_since(target.get("$comment"))
        if marker is None or marker[1] is not None:
            continue
        version = f"{marker[0][0]}.{marker[0][1]}"
        what = _type(branch) if name else f"a value matching `{branch.get('pattern', '')}`"
        found.append((version, what))
    return found


def field_table(
    name: str,
    obj: dict[str, Any],
    part: str = "manifest",
    objects: dict[str, dict[str, Any]] | None = None,
) -> str:
    lines = [f'<a id="obj-{name.lower()}"></a>', f"#### {name}", ""]
    whole = parse_since(obj.get("$comment"))
    if whole is not None and whole[1] is None:
        lines += [f"*Since {whole[0][0]}.{whole[0][1]}.*", ""]
    if obj.get("description"):
        lines += [" ".join(obj["description"].split()), ""]
    required = set(obj.get("required", []))
    lines += [
        "| Key | Type | Req. | Default | Constraints | Meaning |",
        "|---|---|---|---|---|---|",
    ]
    for key, prop in obj.get("properties", {}).items():
        meaning = prop.get("description") or NOTES.get(f"{name}.{key}", "")
        marker = parse_since(prop.get("$comment"))
        if marker is not None:
            (major, minor), values = marker
            added = "" if values is None else " values " + ", ".join(f"`{v}`" for v in values)
            meaning = f"*Since {major}.{minor}{added}.* {meaning}".strip()
        for version, what in _added_branches(prop, objects or {}):
            meaning = f"*Since {version} also {what}.* {meaning}".strip()
        lines.append(
            f"| `{key}` | {_type(prop)} | {'yes' if key in required else ''} | "
            f"{_default(prop)} | {_constraints(prop)} | {meaning.replace('|', '/')} |"
        )
    extensions = _link(part, *EXTENSIONS)
    lines += ["", f"Keys starting with `x-` are extensions (see [Extensions]({extensions})).", ""]
    return "\n".join(lines)


def _objects(schema_file: str, root_name: str) -> dict[str, dict[str, Any]]:
    schema = json.loads((REPO / "schemas" / schema_file).read_text("utf-8"))
    objects: dict[str, dict[str, Any]] = dict(schema.get("$defs", {}))
    objects[root_name] = schema
    return objects


def additions_table(
    version: str,
    part: str,
    manifest_objects: dict[str, dict[str, Any]],
    evidence_objects: dict[str, dict[str, Any]],
) -> str:
    """Every field and enumeration value marked ``since VERSION``, with a link to its table."""
    rows: list[str] = []
    for document, target, objects in (
        ("manifest", "manifest", manifest_objects),
        ("evidence record", "runner", evidence_objects),
    ):
        for name in sorted(objects):
            for key, prop in objects[name].get("properties", {}).items():
                marker = parse_since(prop.get("$comment"))
                if marker is None or f"{marker[0][0]}.{marker[0][1]}" != version:
                    continue
                what = (
                    "field"
                    if marker[1] is None
                    else "values " + ", ".join(f"`{v}`" for v in marker[1])
                )
                link = _link(part, target, f"obj-{name.lower()}")
                meaning = " ".join((prop.get("description") or "").split()).replace("|", "/")
                rows.append(f"| {document} | [{name}]({link}).`{key}` | {what} | {meaning} |")
            for key, prop in objects[name].get("properties", {}).items():
                for added, what in _added_branches(prop, objects):
                    if added != version:
                        continue
                    link = _link(part, target, f"obj-{name.lower()}")
                    rows.append(
                        f"| {document} | [{name}]({link}).`{key}` | "
                        f"alternative: {what.replace('|', '/')} | |"
                    )
    if not rows:
        return f"No field or value is marked since {version} yet.\n"
    head = ["| Document | Where | Addition | Meaning |", "|---|---|---|---|"]
    return "\n".join(head + rows) + "\n"


# --------------------------------------------------------------------------- code catalogue


def _expected(case: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CASES / case / "expected.json").read_text("utf-8"))
    return data


def _choose_invalid(code: str) -> tuple[str, dict[str, Any]] | None:
    best: tuple[int, str, dict[str, Any]] | None = None
    names = sorted(p.name for p in CASES.iterdir())
    if code in CANONICAL:
        names = [CANONICAL[code]]
    for case in names:
        findings = _expected(case)["findings"]
        for item in findings:
            if item["code"] == code and (best is None or len(findings) < best[0]):
                best = (len(findings), case, item)
    return None if best is None else (best[1], best[2])


def _pointer_depth(case: str, pointer: str) -> int:
    doc = load_document(CASES / case / "rra.yaml", name="rra.yaml")
    parts = pointer.split("/")[1:] if pointer else []
    for depth in range(len(parts), -1, -1):
        if ("/" + "/".join(parts[:depth]) if depth else "") in doc.positions:
            return depth
    return 0


def _line_of(case: str, pointer: str) -> int:
    doc = load_document(CASES / case / "rra.yaml", name="rra.yaml")
    parts = pointer.split("/")[1:] if pointer else []
    for depth in range(len(parts), 0, -1):
        sub = "/" + "/".join(parts[:depth])
        keys = getattr(doc, "key_positions", {})
        if sub in keys:
            return int(keys[sub][0])
        if sub in doc.positions:
            return int(doc.positions[sub][0])
    return 1


def _window(path: Path, line: int) -> tuple[int, int]:
    total = len(path.read_bytes().splitlines())
    if line <= 0:
        return 1, min(total, 8)
    return max(1, line - _WINDOW), min(total, line + _WINDOW)


def _reported_line(case: str, code: str, pointer: str) -> int:
    for item in validate(CASES / case).findings:
        if item.code == code and item.path == pointer:
            return item.line
    return 0


def choose_examples() -> dict[str, Any]:
    """Code -> the invalid and valid excerpts (case, file, first and last line)."""
    registry = json.loads((REPO / "reprobridge_sdk" / "_data" / "codes.json").read_text("utf-8"))[
        "codes"
    ]
    chosen: dict[str, Any] = {}
    for entry in registry:
        code = entry["code"]
        if code[0] not in MANIFEST_FAMILIES:
            continue
        picked = _choose_invalid(code)
        if picked is None:
            continue
        case, item = picked
        file = item.get("file", "rra.yaml")
        path = CASES / case / file
        if not path.is_file():
            invalid: dict[str, Any] = {"case": case, "file": None, "lines": None}
        else:
            line = _reported_line(case, code, item["path"])
            first, last = _window(path, line)
            invalid = {"case": case, "file": file, "lines": [first, last]}
        if file == "rra.yaml" and item["path"]:
            pointer = VALID_POINTER.get(code, item["path"])
            source = max(
                VALID_SOURCES,
                key=lambda c: (_pointer_depth(c, pointer), -VALID_SOURCES.index(c)),
            )
            first, last = _window(CASES / source / file, _line_of(source, pointer))
            valid: dict[str, Any] = {"case": source, "file": file, "lines": [first, last]}
        else:
            source = "pylock-lock" if file.endswith(".toml") else "minimal-valid"
            if not (CASES / source / file).is_file():
                file = "rra.yaml"
            first, last = _window(CASES / source / file, 0)
            valid = {"case": source, "file": file, "lines": [first, last]}
        chosen[code] = {"invalid": invalid, "valid": valid}
    return chosen


def _excerpt(spec: dict[str, Any]) -> str:
    if spec["file"] is None:
        case_dir = CASES / spec["case"]
        listing = sorted(p.name for p in case_dir.iterdir() if p.name != "expected.json")
        files = "\n".join(f"{spec['case']}/{n}" for n in listing)
        return f"`validators/cases/{spec['case']}/`, which holds only:\n\n```text\n{files}\n```"
    path = CASES / spec["case"] / spec["file"]
    first, last = spec["lines"]
    raw = path.read_bytes().splitlines()[first - 1 : last]
    text = [line.decode("utf-8", "backslashreplace")[:120] for line in raw]
    if len(text) > _MAX_LINES:
        text = [*text[: _MAX_LINES - 1], "# ..."]
    lang = {".yaml": "yaml", ".toml": "toml", ".md": "markdown"}.get(path.suffix, "text")
    where = f"`validators/cases/{spec['case']}/{spec['file']}`, lines {first} to {last}"
    return f"{where}:\n\n```{lang}\n" + "\n".join(text) + "\n```"


def _registry() -> list[dict[str, Any]]:
    path = REPO / "reprobridge_sdk" / "_data" / "codes.json"
    codes: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))["codes"]
    return codes


def _ranges(codes: list[str]) -> str:
    """``Y001, Y002, Y004`` with runs of three or more consecutive codes as ``V001\u2013V004``
    (an en dash)."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) >= 3:
            out.append(f"{run[0]}\u2013{run[-1]}")
        else:
            out.extend(run)
        run.clear()

    for code in codes:
        if run and (code[0] != run[-1][0] or int(code[1:]) != int(run[-1][1:]) + 1):
            flush()
        run.append(code)
    flush()
    return ", ".join(out)


def pointer_table(context: str) -> str:
    """The pointer rule of every code reported in ``context``, codes with one rule together."""
    rows: dict[str, list[str]] = {}
    for entry in _registry():
        if context in entry["contexts"] and entry["status"] != "removed":
            rows.setdefault(entry["pointer"], []).append(entry["code"])
    ordered = sorted(rows.items(), key=lambda item: code_registry._order(item[1][0]))
    lines = ["| Codes | Pointer |", "|---|---|"]
    lines += [f"| {_ranges(codes)} | {_cell(rule)} |" for rule, codes in ordered]
    return "\n".join(lines) + "\n"


def context_table() -> str:
    """Each context with the codes the registry lists in it, by status."""
    lines = ["| Context | Required codes (stable, deprecated) | Preview codes |", "|---|---|---|"]
    for context in code_registry.CONTEXTS:
        entries = [e for e in _registry() if context in e["contexts"]]
        required = [e["code"] for e in entries if e["status"] in ("stable", "deprecated")]
        preview = [e["code"] for e in entries if e["status"] == "preview"]
        lines.append(f"| {context} | {_ranges(required) or '—'} | {_ranges(preview) or '—'} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """``text`` for a Markdown table cell (a ``|`` escaped)."""
    return text.replace("|", "\\|")


def _contexts(entry: dict[str, Any]) -> str:
    return ", ".join(f"{name}: {severity}" for name, severity in entry["contexts"].items())


def code_catalogue(examples: dict[str, Any]) -> str:
    registry = _registry()
    out: list[str] = []
    family = ""
    for entry in registry:
        code = entry["code"]
        if code[0] != family:
            family = code[0]
            out += [f"### {family}: {code_registry.FAMILY_TITLES.get(family, family)}", ""]
        out += [
            f'<a id="{code}"></a>',
            f"#### {code} {entry['name']}",
            "",
            f"**{entry['severity']}** · {entry['status']} · since {entry['since']} · "
            f"[{entry['spec']}]({entry['spec']})",
            "",
            entry["summary"],
            "",
            f"> **Note (informative).** *Why it matters:* {entry['why']}",
            ">",
            f"> *How to fix it:* {entry['fix']}",
            "",
            f"Severity by context: {_contexts(entry)}. Pointer: {entry['pointer']}.",
            "",
        ]
        example = examples.get(code)
        if example is None:
            lang, reported, fine = RUNTIME_EXAMPLES[code]
            out += [
                "Shown by a command line, not by a manifest excerpt: it needs state that a "
                "conformance case does not hold (runs, a checkout, a cache, the network, an "
                "installed plugin). For example, reported for:",
                "",
                f"```{lang}\n{reported}\n```",
                "",
                "Not reported for:",
                "",
                f"```{lang}\n{fine}\n```",
                "",
            ]
            continue
        out += [f"Reported for {_excerpt(example['invalid'])}", ""]
        out += [f"Not reported for {_excerpt(example['valid'])}", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- assembly


def render_spec(text: str, examples: dict[str, Any], examples_dir: Path, part: str) -> str:
    # The newest schemas: every field, additions marked "Since 1.1".
    manifest_objects = _objects(f"rra-{NEWEST_FORMAT}.schema.json", "Manifest")
    evidence_objects = _objects(f"evidence-{NEWEST_FORMAT}.schema.json", "EvidenceRecord")

    def block(match: re.Match[str]) -> str:
        kind, *args = match.group("args").split()
        if kind == "fields":
            body = "\n".join(
                field_table(name, manifest_objects[name], part, manifest_objects) for name in args
            )
        elif kind == "evidence-fields":
            body = "\n".join(
                field_table(name, evidence_objects[name], part, evidence_objects) for name in args
            )
        elif kind == "example":
            path = examples_dir / args[0]
            lang = {".yaml": "yaml", ".toml": "toml", ".json": "json"}.get(path.suffix, "text")
            body = f"```{lang}\n{path.read_text('utf-8')}```\n"
        elif kind == "codes":
            body = code_catalogue(examples) + "\n"
        elif kind == "contexts":
            body = context_table()
        elif kind == "pointers":
            body = pointer_table(args[0])
        elif kind == "additions":
            body = additions_table(args[0], part, manifest_objects, evidence_objects)
        else:
            msg = f"unknown generated block {kind!r}"
            raise ValueError(msg)
        return match.group(1) + body + match.group(4)

    return _BLOCK_RE.sub(block, text)


def write_examples(target: Path) -> dict[str, Any]:
    """Write the example artifacts and ``codes.json`` into ``target``; return the latter."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    by_name = {case.name: case for case in cases()}
    for name in EXAMPLE_CASES:
        write_case(by_name[name], target)
        (target / name / "expected.json").unlink()
    interval = {
        "$comment": "Worked examples of spec sections 11 to 11.2 (level 0.95, floor 0.01).",
        "level": 0.95,
        "floor": 0.01,
        "tolerance": 5e-7,
        "cases": INTERVAL_EXAMPLES,
        "holm": HOLM_EXAMPLE,
    }
    (target / "interval.json").write_text(json.dumps(interval, indent=2) + "\n", "utf-8")
    output = json.loads(reporters.render(validate(OUTPUT_CASE), "json"))
    output["tool"]["version"] = "<version>"
    (target / "validate-output.json").write_text(json.dumps(output, indent=2) + "\n", "utf-8")
    examples = choose_examples()
    (target / "codes.json").write_text(json.dumps(examples, indent=2) + "\n", "utf-8")
    return examples


def _same_tree(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*"))
    files_b = sorted(p.relative_to(b) for p in b.rglob("*"))
    if files_a != files_b:
        return False
    for rel in files_a:
        pa, pb = a / rel, b / rel
        if pa.is_symlink() or pb.is_symlink():
            if not (pa.is_symlink() and pb.is_symlink()) or pa.readlink() != pb.readlink():
                return False
        elif pa.is_file() and pa.read_bytes() != pb.read_bytes():
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    status = code_registry.main(["--check"] if check else [])
    if status:
        return status
    os.chdir(REPO)  # the JSON output example names paths relative to the repository root
    with tempfile.TemporaryDirectory() as tmp:
        fresh_examples = Path(tmp) / "examples"
        examples = write_examples(fresh_examples)
        parts = sorted(SPEC_DIR.glob("*.md"))
        texts = {path: path.read_text("utf-8") for path in parts}
        rendered = {
            path: render_spec(text, examples, fresh_examples, path.stem)
            for path, text in texts.items()
        }
        if check:
            stale = [str(p.relative_to(REPO)) for p in parts if rendered[p] != texts[p]]
            if not EXAMPLES.exists() or not _same_tree(fresh_examples, EXAMPLES):
                stale.append(str(EXAMPLES.relative_to(REPO)))
            for item in stale:
                sys.stdout.write(f"stale: {item}\n")
            return 1 if stale else 0
        if EXAMPLES.exists():
            shutil.rmtree(EXAMPLES)
        shutil.copytree(fresh_examples, EXAMPLES, symlinks=True)
        for path in parts:
            if rendered[path] != texts[path]:
                path.write_text(rendered[path], "utf-8")
    sys.stderr.write(f"wrote {SPEC_DIR.relative_to(REPO)}/*.md and {EXAMPLES.relative_to(REPO)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
