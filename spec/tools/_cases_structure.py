"""Structural cases (S codes)."""

from __future__ import annotations

from _casedata import EXTRACT, M0, f
from _casekit import Case, delete, put, rename


def structure_cases() -> list[Case]:
    c: list[Case] = []
    # ------------------------------------------------------------------ structure
    c.append(
        Case(
            "unknown-key-under-known-version",
            "A misspelled key under version 1.0 is an error (and the real key is missing).",
            [f("S001", "/tasks/0/metrik"), f("S002", "/tasks/0/metric")],
            mutate=[rename("/tasks/0/metric", "metrik")],
        )
    )
    c.append(
        Case(
            "unknown-top-level-key",
            "A key at the top of the document that the format does not define.",
            [f("S001", "/readme")],
            mutate=[put("/readme", "README.md")],
        )
    )
    c.append(
        Case(
            "unknown-key-in-extractor",
            "A misspelled optional key in an extractor.",
            [f("S001", EXTRACT + "/occurence")],
            mutate=[put(EXTRACT + "/occurence", "last")],
        )
    )
    c.append(
        Case(
            "extension-prefix-is-case-sensitive",
            "'X-' is not the extension prefix 'x-'.",
            [f("S001", "/X-notes")],
            mutate=[put("/X-notes", "upper case")],
        )
    )
    c.append(
        Case(
            "unknown-key-in-guide-record",
            "A misspelled key in a change record (and the required key it replaces is missing).",
            [f("S001", "/guide/changes/0/reason"), f("S002", "/guide/changes/0/rationale")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/changes",
                    [
                        {
                            "id": "seed-flag",
                            "kind": "execution-fix",
                            "summary": "Add a --seed flag.",
                            "reason": "The upstream script seeded from the clock.",
                            "tasks": ["accuracy"],
                        }
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "missing-artifact-title",
            "A required key is missing.",
            [f("S002", "/artifact/title")],
            mutate=[delete("/artifact/title")],
        )
    )
    c.append(
        Case(
            "missing-task-dataset",
            "A task without its dataset.",
            [f("S002", "/tasks/0/dataset")],
            mutate=[delete("/tasks/0/dataset")],
        )
    )
    c.append(
        Case(
            "missing-observation-provenance",
            "A reference observation without provenance.",
            [f("S002", "/tasks/0/reference/observations/2/provenance")],
            mutate=[delete("/tasks/0/reference/observations/2/provenance")],
        )
    )
    c.append(
        Case(
            "missing-tasks",
            "No tasks at all: the measurement's reference is not checked against a missing list.",
            [f("S002", "/tasks")],
            mutate=[delete("/tasks")],
        )
    )
    c.append(
        Case(
            "missing-extractor-kind",
            "An extractor without its kind.",
            [f("S002", EXTRACT + "/kind")],
            mutate=[delete(EXTRACT + "/kind")],
        )
    )
    c.append(
        Case(
            "wrong-type-argv-string",
            "argv is a string, not a list of strings.",
            [f("S003", "/launchers/0/argv")],
            mutate=[put("/launchers/0/argv", "python code/train.py --seed {seed}")],
        )
    )
    c.append(
        Case(
            "wrong-type-seeds-string",
            "seeds is a string; the seeds-versus-statistic check is skipped on it.",
            [f("S003", "/launchers/0/seeds")],
            mutate=[put("/launchers/0/seeds", "0,1,2")],
        )
    )
    c.append(
        Case(
            "seeds-float-integral",
            "A seed written 1.0 is the integer 1, as JSON Schema 2020-12 defines integers: valid.",
            [],
            mutate=[put("/launchers/0/seeds", [0, 1.0, 2])],
        )
    )
    c.append(
        Case(
            "wrong-type-nullable",
            "An optional string given as a number.",
            [f("S003", "/artifact/paper/venue")],
            mutate=[put("/artifact/paper/venue", 2026)],
        )
    )
    c.append(
        Case(
            "wrong-type-boolean-as-string",
            "shell: 'yes' is a string (YAML 1.2), not a boolean.",
            [f("S003", "/launchers/0/shell")],
            mutate=[put("/launchers/0/shell", "yes")],
        )
    )
    c.append(
        Case(
            "wrong-type-regex-group",
            "A regex group is a name or a number, not a float.",
            [f("S003", EXTRACT + "/group")],
            mutate=[put(EXTRACT + "/group", 1.5)],
        )
    )
    c.append(
        Case(
            "wrong-type-param-list",
            "A param value is a scalar, not a list.",
            [f("S003", "/launchers/0/params/lr")],
            mutate=[put("/launchers/0/params", {"lr": [0.1, 0.01]})],
        )
    )
    c.append(
        Case(
            "wrong-type-observation-value",
            "An observation value given as a string.",
            [f("S003", "/tasks/0/reference/observations/1/value")],
            mutate=[put("/tasks/0/reference/observations/1/value", "0.912")],
        )
    )
    c.append(
        Case(
            "null-for-required-string",
            "A required string given as null is of the wrong type (the key is present).",
            [f("S003", "/artifact/title")],
            mutate=[put("/artifact/title", None)],
        )
    )
    c.append(
        Case(
            "empty-argv",
            "argv needs at least the command.",
            [f("S004", "/launchers/0/argv")],
            mutate=[put("/launchers/0/argv", [])],
        )
    )
    c.append(
        Case(
            "unknown-keys-need-pointer-escapes",
            "Unknown keys with '/' and '~' are located with RFC 6901 escapes.",
            [f("S001", "/tasks/0/metric~1top1"), f("S001", "/tasks/0/~0notes")],
            mutate=[put("/tasks/0/metric~1top1", "accuracy"), put("/tasks/0/~0notes", "n")],
        )
    )
    c.append(
        Case(
            "published-range-one-number",
            "A published range needs two numbers.",
            [f("S004", "/tasks/0/published/range")],
            mutate=[put("/tasks/0/published", {"range": [0.912]})],
        )
    )
    c.append(
        Case(
            "invalid-enum-direction",
            "direction must be 'higher' or 'lower'.",
            [f("S004", "/tasks/0/direction")],
            mutate=[put("/tasks/0/direction", "up")],
        )
    )
    c.append(
        Case(
            "identifier-with-final-newline",
            "An identifier pattern's '$' does not accept a final newline, in any language.",
            [f("S004", "/artifact/id")],
            mutate=[put("/artifact/id", "digits-logreg\n")],
        )
    )
    c.append(
        Case(
            "arxiv-id-with-non-ascii-digits",
            "Schema patterns use ASCII classes: Arabic-Indic digits are not [0-9].",
            [f("S004", "/artifact/paper/arxiv")],
            mutate=[put("/artifact/paper/arxiv", "2401.\u0660\u0661\u0662\u0663\u0664")],
        )
    )
    c.append(
        Case(
            "invalid-commit-branch-name",
            "The upstream commit is a branch name, not a full commit id.",
            [f("S004", "/codebase/upstream/commit")],
            mutate=[put("/codebase/upstream/commit", "main")],
        )
    )
    c.append(
        Case(
            "invalid-commit-upper-case",
            "A full commit id in upper-case hex: ids and digests are lower case, as git prints"
            " them.",
            [f("S004", "/codebase/upstream/commit")],
            mutate=[
                put("/codebase/upstream/commit", "3F9C2A7E1B4D5C6E7F8091A2B3C4D5E6F7A8B9C0"),
            ],
        )
    )
    c.append(
        Case(
            "invalid-short-commit",
            "An abbreviated commit id is not enough.",
            [f("S004", "/codebase/upstream/commit")],
            mutate=[put("/codebase/upstream/commit", "3f9c2a7")],
        )
    )
    c.append(
        Case(
            "invalid-identifier",
            "Ids are lower-case slugs; the reference to the same id is equally invalid.",
            [f("S004", "/tasks/0/id"), f("S004", M0 + "/task")],
            mutate=[put("/tasks/0/id", "Top-1 Accuracy"), put(M0 + "/task", "Top-1 Accuracy")],
        )
    )
    c.append(
        Case(
            "invalid-empty-tasks",
            "tasks must not be empty; the measurement's task then does not resolve.",
            [f("S004", "/tasks"), f("R002", M0 + "/task")],
            mutate=[put("/tasks", [])],
        )
    )
    c.append(
        Case(
            "invalid-negative-gpus",
            "A negative GPU count.",
            [f("S004", "/environment/accelerator/gpus")],
            mutate=[put("/environment/accelerator", {"kind": "cuda", "cuda": "12.1", "gpus": -1})],
        )
    )
    c.append(
        Case(
            "invalid-zero-timeout",
            "A timeout must be positive.",
            [f("S004", "/launchers/0/timeout")],
            mutate=[put("/launchers/0/timeout", 0)],
        )
    )
    c.append(
        Case(
            "invalid-paper-year",
            "A publication year before 1900.",
            [f("S004", "/artifact/paper/year")],
            mutate=[put("/artifact/paper/year", 1850)],
        )
    )
    c.append(
        Case(
            "invalid-extractor-kind",
            "An extractor kind the format does not define; nothing else is said about it.",
            [f("S004", EXTRACT + "/kind")],
            mutate=[put(EXTRACT + "/kind", "xpath")],
        )
    )
    c.append(
        Case(
            "invalid-change-kind",
            "A change record kind outside execution-fix, correctness-fix, convenience.",
            [f("S004", "/guide/changes/0/kind")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/changes",
                    [
                        {
                            "id": "tidy",
                            "kind": "refactor",
                            "summary": "Rename variables.",
                            "rationale": "Readability.",
                        }
                    ],
                )
            ],
        )
    )

    return c
