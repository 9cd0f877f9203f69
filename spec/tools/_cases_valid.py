"""Valid artifacts, YAML-level cases and versioning cases."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from _casedata import (
    BILLION_LAUGHS,
    CKPT,
    EXTRACT,
    FULL_FILES,
    LOCK,
    M0,
    PATCH,
    _anchors,
    _insert_after,
    f,
    full_manifest,
    obs,
    pylock,
    use_pylock,
    with_sample,
)
from _casekit import Case, add, delete, fake_hash, put

#: The limits of spec section 3.1 (the reference loader's constants; a test holds them equal).
MAX_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIAS_NODES = 100_000


def _second_task(ident: str) -> Callable[[dict[str, Any]], None]:
    """A mutator: a copy of the first task under ``ident``, measured by the first launcher."""

    def mutate(manifest: dict[str, Any]) -> None:
        task = copy.deepcopy(manifest["tasks"][0])
        task["id"] = ident
        manifest["tasks"].append(task)
        measurement = copy.deepcopy(manifest["launchers"][0]["measurements"][0])
        measurement["task"] = ident
        manifest["launchers"][0]["measurements"].append(measurement)

    return mutate


def _padded_to(size: int) -> Callable[[str], str]:
    """A text edit that pads the manifest with comment lines to exactly ``size`` bytes."""

    def edit(doc: str) -> str:
        missing = size - len(doc.encode("utf-8"))
        line = "# " + "padding " * 12 + "\n"
        count, rest = divmod(missing, len(line))
        if rest and rest < 2:  # the last line needs at least '#' and its line break
            count, rest = count - 1, rest + len(line)
        tail = "#" + " " * (rest - 2) + "\n" if rest else ""
        return doc + line * count + tail

    return edit


def _nested(levels: int) -> Callable[[str], str]:
    """An extension value whose innermost collection is at ``levels`` (the root mapping is 1)."""
    inner = levels - 1
    return lambda doc: doc + "x-deep: " + "[" * inner + "]" * inner + "\n"


def _alias_copies(extra: int) -> Callable[[str], str]:
    """Aliases that produce MAX_ALIAS_NODES nodes (a 100-node list copied 1000 times), plus
    ``extra`` more (one anchored scalar copied ``extra`` times)."""
    anchored = "[" + ", ".join(str(i) for i in range(99)) + "]"  # 1 list + 99 scalars
    copies = MAX_ALIAS_NODES // 100
    text = f"x-anchor: &a {anchored}\nx-copies: [" + ", ".join(["*a"] * copies) + "]\n"
    if extra:
        text += "x-one: &o 1\nx-more: [" + ", ".join(["*o"] * extra) + "]\n"
    return lambda doc: doc + text


def _merge_key(doc: str) -> str:
    """Give the task a merge key that would, if interpreted, supply its dataset."""
    doc = doc.replace("tasks:\n- id: accuracy\n", "tasks:\n- id: accuracy\n  <<: *defaults\n", 1)
    return "x-defaults: &defaults\n  dataset: digits\n" + doc


def valid_cases() -> list[Case]:
    c: list[Case] = []
    # ------------------------------------------------------------------ valid artifacts
    c.append(Case("minimal-valid", "A small complete artifact: every digest pinned, no findings."))
    c.append(
        Case(
            "minimal-without-digests",
            "No tree digest and no lock: valid, with a warning for the unpinned refined code.",
            [f("F007", "/codebase/tree_digest")],
            tags=["required", "digests"],  # F007 is a digest check
            mutate=[delete("/codebase/tree_digest"), delete("/environment/lock")],
            files={LOCK: None},
        )
    )
    c.append(
        Case(
            "full-featured",
            "Every part of the format used at once: paper metadata, data and checkpoints, four "
            "tasks, smoke and scored launchers with all extractor kinds, samples, guide records.",
            tags=["required", "digests", "locks", "replay", "guide"],
            manifest=full_manifest(),
            files=FULL_FILES,
        )
    )
    c.append(
        Case(
            "patches-codebase",
            "The refined code is an ordered series of patches on the upstream commit.",
            [f("C005", "/codebase/upstream")],
            tags=["required", "digests"],
            mutate=[
                put(
                    "/codebase/refined",
                    {
                        "kind": "patches",
                        "patches": [
                            {
                                "path": "patches/0001-seed-flag.patch",
                                "sha256": "@sha256:patches/0001-seed-flag.patch",
                                "summary": "Add a --seed flag.",
                            }
                        ],
                    },
                ),
                delete("/codebase/tree_digest"),
                put("/launchers/0/argv", ["python", "train.py", "--seed", "{seed}"]),
            ],
            files={"code/train.py": None, "patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "pylock-lock",
            "The lock is a PEP 751 pylock.toml with hashed wheels.",
            tags=["locks", "pylock", "digests"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": pylock()},
        )
    )
    c.append(
        Case(
            "extension-keys",
            "Keys starting with 'x-' are allowed on every object and their content is free.",
            mutate=[
                put("/x-generator", {"name": "hand", "Any Key": [1, 2, {"nested": None}]}),
                put("/artifact/x-internal-id", 42),
                put("/tasks/0/x-notes", "checked twice"),
                put("/launchers/0/x-cluster", {"partition": "cpu"}),
                put(EXTRACT + "/x-comment", "last line wins"),
            ],
        )
    )
    c.append(
        Case(
            "newer-minor-with-unknown-key",
            "A newer minor version: the unknown key may be a field added since, so it warns.",
            [f("V003", "/rra_version"), f("S005", "/tasks/0/baseline")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.9"), put("/tasks/0/baseline", 0.8)],
        )
    )
    c.append(
        Case(
            "newer-minor-version",
            "rra_version 1.9 is newer than the newest known: a warning, the document is checked.",
            [f("V003", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.9")],
        )
    )
    c.append(
        Case(
            "newer-minor-with-unknown-value",
            "A newer minor version: an unknown enumeration value may be a value added since; "
            "a consumer sets aside the task that carries it (and its measurement) and uses "
            "the other task.",
            [f("V003", "/rra_version"), f("S006", "/tasks/0/direction")],
            tags=["required", "versioning"],
            mutate=[
                put("/rra_version", "1.9"),
                _second_task("accuracy-top5"),
                put("/tasks/0/direction", "closer"),
            ],
        )
    )
    c.append(
        Case(
            "newer-minor-nothing-left",
            "A newer minor version whose only task carries an unknown enumeration value: a "
            "consumer sets it aside and has no task left (V007).",
            [f("V003", "/rra_version"), f("S006", "/tasks/0/direction"), f("V007", "/tasks")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.9"), put("/tasks/0/direction", "closer")],
        )
    )
    c.append(
        Case(
            "newer-minor-value-in-closed-enumeration",
            "A newer minor version never adds a lock format (a closed enumeration): an unknown "
            "one is S004, not S006.",
            [f("V003", "/rra_version"), f("S004", "/environment/lock/format")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.9"), put("/environment/lock/format", "uv-lock")],
        )
    )
    c.append(
        Case(
            "version-1-1",
            "A document of format 1.1 (the draft) that uses no 1.1 addition is valid.",
            [],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.1")],
        )
    )
    c.append(
        Case(
            "empty-patch-series",
            "Format 1.1: an empty patch series is the upstream commit unchanged (not checked"
            " offline: the upstream is not in the cache).",
            [f("C005", "/codebase/upstream")],
            tags=["required", "versioning"],
            mutate=[
                put("/rra_version", "1.1"),
                put("/codebase/refined", {"kind": "patches", "patches": []}),
                delete("/codebase/tree_digest"),
            ],
            files={"code/train.py": None},
        )
    )
    c.append(
        Case(
            "empty-patch-series-under-1-0",
            "An empty patch series is a 1.1 addition: a 1.0 document may not use it.",
            [f("V005", "/codebase/refined/patches"), f("C005", "/codebase/upstream")],
            tags=["required", "versioning"],
            mutate=[
                put("/codebase/refined", {"kind": "patches", "patches": []}),
                delete("/codebase/tree_digest"),
            ],
            files={"code/train.py": None},
        )
    )
    c.append(
        Case(
            "shell-launcher",
            "A shell launcher with exactly one argv element.",
            mutate=[
                put("/launchers/0/shell", True),
                put("/launchers/0/argv", ["python code/train.py --seed {seed} 2>&1 | tee out.log"]),
            ],
        )
    )
    c.append(
        Case(
            "templates-and-escapes",
            "Templates name the seed, the run directory and params; '{{' and '}}' are literal "
            "braces.",
            mutate=[
                put("/launchers/0/params", {"lr": 0.1, "tag": "base", "fast": True}),
                put(
                    "/launchers/0/argv",
                    [
                        "python",
                        "code/train.py",
                        "--seed",
                        "{seed}",
                        "--lr={lr}",
                        "--tag",
                        "{tag}",
                        "--format",
                        "{{json}}",
                        "--fast={fast}",
                    ],
                ),
                put("/launchers/0/env", {"OUT": "{run_dir}/out", "LITERAL": "{{seed}}"}),
                put("/launchers/0/outputs", [{"id": "log", "path": "{run_dir}/{tag}-{seed}.txt"}]),
            ],
        )
    )
    c.append(
        Case(
            "published-range",
            "The published value is a range; its midpoint counts.",
            mutate=[put("/tasks/0/published", {"range": [0.905, 0.919], "unit": "fraction"})],
        )
    )
    c.append(
        Case(
            "lower-is-better",
            "A task whose metric is better when lower.",
            mutate=[
                put("/tasks/0/metric", "error rate"),
                put("/tasks/0/direction", "lower"),
                put("/tasks/0/published", {"value": 8.8, "unit": "%"}),
                put("/tasks/0/reference", obs(8.7, 8.8, 8.9, 8.85, 8.75)),
                put(EXTRACT + "/pattern", r"error rate: ([0-9.]+)%"),
            ],
        )
    )
    c.append(
        Case(
            "single-run-default-aggregate",
            "A single-run statistic with the measurement's default aggregate (mean of one value).",
            mutate=[
                delete("/tasks/0/statistic"),
                delete("/launchers/0/seeds"),
                delete(M0 + "/aggregate"),
                put("/launchers/0/argv", ["python", "code/train.py"]),
            ],
        )
    )
    c.append(
        Case(
            "same-id-in-different-lists",
            "Ids are unique per list: a task, a launcher and a guide record may share one.",
            mutate=[
                put("/launchers/0/id", "accuracy"),
                add(
                    "/guide/pitfalls",
                    {"id": "accuracy", "summary": "Accuracy varies with the BLAS library."},
                ),
            ],
            tags=["required", "guide"],
        )
    )
    c.append(
        Case(
            "yaml-anchors-within-limits",
            "Anchors and aliases used with restraint are plain YAML.",
            text_edit=_anchors,
        )
    )
    c.append(
        Case(
            "sample-replay-transform",
            "A shipped sample log replays to the expected value after the transform.",
            tags=["replay"],
            mutate=[
                put(EXTRACT + "/pattern", r"accuracy \(%\): ([0-9.]+)"),
                put(M0 + "/transform", {"scale": 0.01, "round": 3}),
                with_sample(),
            ],
            files={"samples/train.log": "epoch 1\naccuracy (%): 91.23\n"},
        )
    )
    c.append(
        Case(
            "gated-data-with-instructions",
            "A gated dataset that says how to obtain it; data need not be present to validate.",
            tags=["required"],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "faces",
                        "source": {"url": "https://example.org/faces.tar.gz"},
                        "sha256": fake_hash("faces"),
                        "size": 2048,
                        "destination": "data/faces.tar.gz",
                        "access": "gated",
                        "instructions": "Request access on the dataset's page.",
                    },
                ),
                put("/launchers/0/data", ["faces"]),
            ],
        )
    )
    c.append(
        Case(
            "evaluation-task-with-checkpoint",
            "An evaluation-only task may read a checkpoint that stands in for training.",
            mutate=[
                put("/tasks/0/kind", "evaluation"),
                add("/environment/data", CKPT),
                put("/launchers/0/data", ["weights"]),
            ],
        )
    )
    c.append(
        Case(
            "data-from-codebase",
            "A data item shipped inside the refined code needs no digest of its own.",
            mutate=[
                add(
                    "/environment/data",
                    {"id": "labels", "source": {"codebase": "labels.txt"}},
                ),
                put("/launchers/0/data", ["labels"]),
            ],
            files={"code/labels.txt": "0\n1\n2\n"},
        )
    )

    # ------------------------------------------------------------------ YAML level
    c.append(
        Case(
            "crlf-line-endings",
            "A manifest written with CRLF line endings is the same document.",
            text_edit=lambda doc: doc.replace("\n", "\r\n"),
        )
    )
    c.append(
        Case(
            "tab-indentation",
            "YAML does not allow tabs for indentation.",
            [f("Y001", "")],
            tags=["required", "yaml"],
            raw=b'rra_version: "1.0"\nartifact:\n\tid: demo\n',
            base=False,
        )
    )
    readings = [
        # (plain scalar, expected code: None for a string, S003 for another type, S004)
        ("1_000", None), ("0b101", None), ("-0x1F", None), ("+0o17", None),
        ("0x1F", "S003"), ("0o17", "S003"), ("012", "S003"), ("+12", "S003"),
        ("-0", "S003"), ("1e3", "S003"), ("1E-2", "S003"), (".5", "S003"), ("1.", "S003"),
        ("yes", None), ("No", None), ("on", None), ("y", None),
        ("True", "S003"), ("FALSE", "S003"), ("tRUE", None),
        ("~", "S003"), ("null", "S003"), ("NULL", "S003"), ("", "S003"),
        ("2024-05-01", None), ("12:30:00", None), ("1,000", None), ("0x", None),
        ("<<", None), (".inf", "S004"), ("-.Inf", "S004"), (".NaN", "S004"),
        ("1e400", "S004"), ("9" * 4301, "S004"),
    ]  # fmt: skip

    def _readings_text(doc: str) -> str:
        for index, (scalar, _) in enumerate(readings):
            doc = doc.replace(f"name: reading-{index:02d}\n", f"name: {scalar}\n")
        return doc

    c.append(
        Case(
            "yaml-core-schema-readings",
            "The spec's table of plain-scalar readings: each scalar is an author's name (a "
            "string), so non-strings are S003 and numbers JSON cannot carry are S004.",
            [
                f(code, f"/artifact/authors/{index}/name")
                for index, (_, code) in enumerate(readings)
                if code is not None
            ],
            tags=["required", "yaml"],
            mutate=[
                put(
                    "/artifact/authors",
                    [{"name": f"reading-{index:02d}"} for index in range(len(readings))],
                )
            ],
            text_edit=_readings_text,
        )
    )
    c.append(
        Case(
            "several-documents",
            "rra.yaml holds two YAML documents; a manifest is one (Y011, not Y001: the text is"
            " well-formed YAML).",
            [f("Y011", "")],
            tags=["required", "yaml"],
            raw=b'rra_version: "1.0"\n---\nrra_version: "1.0"\n',
            base=False,
        )
    )
    c.append(
        Case(
            "merge-key-is-not-interpreted",
            "'<<' is an ordinary key, so it is unknown, and the key it would merge is missing.",
            [f("S001", "/tasks/0/<<"), f("S002", "/tasks/0/dataset")],
            tags=["required", "yaml"],
            mutate=[delete("/tasks/0/dataset")],
            text_edit=_merge_key,
        )
    )
    c.append(
        Case(
            "not-yaml",
            "The manifest is not well-formed YAML (an unclosed flow sequence).",
            [f("Y001", "")],
            tags=["required", "yaml"],
            raw=b'rra_version: "1.0"\nartifact: [unclosed\ntasks: []\n',
            base=False,
        )
    )
    c.append(
        Case(
            "document-is-a-list",
            "The document is a sequence, not a mapping.",
            [f("Y002", "")],
            tags=["required", "yaml"],
            raw=b'- rra_version: "1.0"\n- tasks: []\n',
            base=False,
        )
    )
    c.append(
        Case(
            "empty-manifest",
            "An empty rra.yaml is a null document, not a mapping.",
            [f("Y002", "")],
            tags=["required", "yaml"],
            raw=b"# nothing here yet\n",
            base=False,
        )
    )
    c.append(
        Case(
            "duplicate-key",
            "A key occurs twice in the same mapping.",
            [f("Y003", "/artifact/title")],
            tags=["required", "yaml"],
            text_edit=_insert_after(
                "  title: Logistic regression on a small image dataset\n",
                "  title: Another title\n",
            ),
        )
    )
    c.append(
        Case(
            "alias-bomb",
            "A 'billion laughs' document: aliases expand to 10^9 nodes.",
            [f("Y004", "")],
            tags=["required", "yaml"],
            raw=BILLION_LAUGHS.encode(),
            base=False,
        )
    )
    c.append(
        Case(
            "recursive-alias",
            "An alias inside the node its anchor names.",
            [f("Y004", "")],
            tags=["required", "yaml"],
            raw=b'rra_version: "1.0"\nx-loop: &loop\n  self: *loop\n',
            base=False,
        )
    )
    c.append(
        Case(
            "too-deep",
            "An extension value nested 200 levels deep.",
            [f("Y005", "")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + "x-deep: " + "[" * 200 + "]" * 200 + "\n",
        )
    )
    c.append(
        Case(
            "size-at-limit",
            "A manifest of exactly 8 MiB (8,388,608 bytes), padded with comments: accepted.",
            [],
            tags=["required", "yaml"],
            text_edit=_padded_to(MAX_BYTES),
        )
    )
    c.append(
        Case(
            "size-past-limit",
            "A manifest one byte over 8 MiB (8,388,609 bytes): Y006.",
            [f("Y006", "")],
            tags=["required", "yaml"],
            text_edit=_padded_to(MAX_BYTES + 1),
        )
    )
    c.append(
        Case(
            "depth-at-limit",
            "Collections nested 64 levels deep (the root mapping is level 1): accepted.",
            [],
            tags=["required", "yaml"],
            text_edit=_nested(MAX_DEPTH),
        )
    )
    c.append(
        Case(
            "depth-past-limit",
            "Collections nested 65 levels deep: Y005.",
            [f("Y005", "")],
            tags=["required", "yaml"],
            text_edit=_nested(MAX_DEPTH + 1),
        )
    )
    c.append(
        Case(
            "aliases-at-limit",
            "Aliases that produce exactly 100,000 nodes (a 100-node list copied 1,000 times):"
            " accepted.",
            [],
            tags=["required", "yaml"],
            text_edit=_alias_copies(0),
        )
    )
    c.append(
        Case(
            "aliases-past-limit",
            "Aliases that produce 100,001 nodes: Y004.",
            [f("Y004", "")],
            tags=["required", "yaml"],
            text_edit=_alias_copies(1),
        )
    )
    c.append(
        Case(
            "not-utf8",
            "The title contains a Latin-1 byte.",
            [f("Y007", "")],
            tags=["required", "yaml"],
            raw=b'rra_version: "1.0"\nartifact:\n  title: "R\xe9sum\xe9 of baselines"\n',
            base=False,
        )
    )
    c.append(
        Case(
            "forbidden-python-tag",
            "A Python object tag, which an unsafe loader would execute.",
            [f("Y008", "/x-note")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + "x-note: !!python/object/apply:os.system ['true']\n",
        )
    )
    c.append(
        Case(
            "forbidden-local-tag",
            "A local tag such as '!include' is not part of the core schema.",
            [f("Y008", "/x-include")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + "x-include: !include other.yaml\n",
        )
    )
    c.append(
        Case(
            "local-tag-on-a-number",
            "A tagged plain scalar is read as if untagged: 'seeds: !custom 3' is the integer 3,"
            " so Y008 is the only finding (no S003).",
            [f("Y008", "/tasks/0/statistic/seeds")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc.replace("    seeds: 3\n", "    seeds: !custom 3\n", 1),
        )
    )
    c.append(
        Case(
            "local-tag-on-a-quoted-number",
            "A tagged quoted scalar stays a string: 'seeds: !custom \"3\"' is Y008 and S003.",
            [f("Y008", "/tasks/0/statistic/seeds"), f("S003", "/tasks/0/statistic/seeds")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc.replace("    seeds: 3\n", '    seeds: !custom "3"\n', 1),
        )
    )
    c.append(
        Case(
            "non-string-key",
            "An integer key inside an extension mapping.",
            [f("Y009", "/x-meta")],
            tags=["required", "yaml"],
            text_edit=lambda doc: doc + "x-meta:\n  name: ok\n  42: answer\n",
        )
    )
    c.append(
        Case(
            "manifest-misnamed",
            "The manifest is called rra.yml: the artifact has no rra.yaml.",
            [f("Y010", "")],
            tags=["required", "layout"],
            base=False,
            write_manifest=False,
            files={"rra.yml": 'rra_version: "1.0"\n'},
        )
    )

    # ------------------------------------------------------------------ versioning
    c.append(
        Case(
            "version-missing",
            "No rra_version.",
            [f("V001", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[delete("/rra_version")],
        )
    )
    c.append(
        Case(
            "version-unknown-major",
            "rra_version 2.0: nothing else is checked, since the document's meaning is unknown.",
            [f("V002", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "2.0"), put("/tasks/0/metrik", "accuracy")],
        )
    )
    c.append(
        Case(
            "version-malformed",
            "rra_version must be MAJOR.MINOR.",
            [f("V004", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "v1")],
        )
    )
    c.append(
        Case(
            "version-leading-zero",
            "MAJOR and MINOR are decimal numbers without leading zeros: '01.0' is malformed.",
            [f("V004", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "01.0")],
        )
    )
    c.append(
        Case(
            "version-with-patch",
            "rra_version has no patch component.",
            [f("V004", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", "1.0.0")],
        )
    )
    c.append(
        Case(
            "version-as-number",
            "rra_version written as the YAML float 1.0 instead of the string '1.0'.",
            [f("V004", "/rra_version")],
            tags=["required", "versioning"],
            mutate=[put("/rra_version", 1.0)],
        )
    )

    return c
