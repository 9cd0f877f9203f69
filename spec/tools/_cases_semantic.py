"""Semantic cases (R codes)."""

from __future__ import annotations

from _casedata import CKPT, EXTRACT, M0, PATCH, f, obs, scored, task, with_sample
from _casekit import Case, add, delete, fake_hash, put


def semantic_cases() -> list[Case]:
    c: list[Case] = []
    # ------------------------------------------------------------------ semantics
    c.append(
        Case(
            "duplicate-task-id",
            "Two tasks share an id.",
            [f("R001", "/tasks/1/id")],
            mutate=[add("/tasks", task("accuracy"))],
        )
    )
    c.append(
        Case(
            "duplicate-launcher-id",
            "Two launchers share an id.",
            [f("R001", "/launchers/1/id")],
            mutate=[add("/launchers", scored("train", "accuracy"))],
        )
    )
    c.append(
        Case(
            "duplicate-output-id",
            "Two outputs of one launcher share an id.",
            [f("R001", "/launchers/0/outputs/1/id")],
            mutate=[
                put(
                    "/launchers/0/outputs",
                    [
                        {"id": "metrics", "path": "{run_dir}/metrics.json"},
                        {"id": "metrics", "path": "{run_dir}/metrics-2.json"},
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "duplicate-guide-record-id",
            "Two pitfalls share an id.",
            [f("R001", "/guide/pitfalls/1/id")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/pitfalls",
                    [
                        {"id": "threads", "summary": "BLAS threads change results."},
                        {"id": "threads", "summary": "So does the BLAS vendor."},
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "unknown-task-in-measurement",
            "A measurement names a task that does not exist; the real task is then unmeasured.",
            [f("R002", M0 + "/task"), f("R006", "/tasks/0")],
            mutate=[put(M0 + "/task", "acuracy")],
        )
    )
    c.append(
        Case(
            "unknown-task-in-change-record",
            "A change record names a task that does not exist.",
            [f("R002", "/guide/changes/0/tasks/1")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/changes",
                    [
                        {
                            "id": "seed-flag",
                            "kind": "execution-fix",
                            "summary": "Add a --seed flag.",
                            "rationale": "The upstream script seeded from the clock.",
                            "tasks": ["accuracy", "top5"],
                        }
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "unknown-task-in-ambiguity",
            "An ambiguity names a task that does not exist.",
            [f("R002", "/guide/ambiguities/0/tasks/0")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/ambiguities",
                    [
                        {
                            "id": "split",
                            "source": "paper §4.1",
                            "gap": "The test split size is not stated.",
                            "resolution": "25%, as in the upstream script.",
                            "tasks": ["acc"],
                        }
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "unknown-task-in-sample-expected",
            "A sample expects a value for a task that does not exist.",
            [f("R002", "/launchers/0/samples/0/expected/top5")],
            mutate=[with_sample({"accuracy": 0.912, "top5": 0.99})],
            files={"samples/train.log": "final accuracy: 0.912\n"},
        )
    )
    c.append(
        Case(
            "x-key-in-expected-map",
            "The keys of a sample's 'expected' are task ids, not object keys: 'x-note' is not an"
            " extension there but a task that does not exist.",
            [f("R002", "/launchers/0/samples/0/expected/x-note")],
            mutate=[with_sample({"accuracy": 0.912, "x-note": 1.0})],
            files={"samples/train.log": "final accuracy: 0.912\n"},
        )
    )
    c.append(
        Case(
            "x-key-in-env-map",
            "The keys of 'env' are environment variable names, not object keys: 'x-trace' is a"
            " variable like any other (no finding).",
            [],
            mutate=[put("/launchers/0/env", {"OMP_NUM_THREADS": "1", "x-trace": "on"})],
        )
    )
    c.append(
        Case(
            "unknown-launcher-in-needs",
            "needs names a launcher that does not exist.",
            [f("R003", "/launchers/0/needs/0")],
            mutate=[put("/launchers/0/needs", ["prepare"])],
        )
    )
    c.append(
        Case(
            "unknown-output-in-extractor",
            "An extractor reads an output the launcher does not declare (it has no 'outputs':"
            " an absent optional list is empty, so the reference is checked).",
            [f("R004", EXTRACT + "/output")],
            mutate=[put(M0 + "/extract", {"kind": "json", "output": "metrics", "pointer": "/acc"})],
        )
    )
    c.append(
        Case(
            "unknown-output-in-sample",
            "A sample ships a file for an output the launcher does not declare (no 'outputs':"
            " an absent optional list is empty).",
            [f("R004", "/launchers/0/samples/0/outputs/metrics")],
            mutate=[
                put(
                    "/launchers/0/samples",
                    [{"outputs": {"metrics": "samples/metrics.json"}, "expected": {}}],
                )
            ],
            files={"samples/metrics.json": "{}\n"},
        )
    )
    c.append(
        Case(
            "unknown-data-in-launcher",
            "A launcher reads a data item that does not exist (no 'environment.data': an"
            " absent optional list is empty, so the reference is checked).",
            [f("R005", "/launchers/0/data/0")],
            mutate=[put("/launchers/0/data", ["imagenet"])],
        )
    )
    c.append(
        Case(
            "data-reference-into-a-non-list",
            "'environment.data' is present but not a list: S003, and references into it are"
            " not resolved (no R005).",
            [f("S003", "/environment/data")],
            mutate=[put("/environment/data", {}), put("/launchers/0/data", ["imagenet"])],
        )
    )
    c.append(
        Case(
            "output-reference-into-a-non-list",
            "A launcher's 'outputs' is present but not a list: S003, and its extractor is not"
            " resolved against it (no R004).",
            [f("S003", "/launchers/0/outputs")],
            mutate=[
                put("/launchers/0/outputs", "metrics"),
                put(M0 + "/extract", {"kind": "json", "output": "metrics", "pointer": "/acc"}),
            ],
        )
    )
    c.append(
        Case(
            "task-measured-only-by-smoke",
            "Only a smoke launcher measures the task: nothing scored does.",
            [f("R006", "/tasks/0")],
            mutate=[put("/launchers/0/scope", "smoke")],
        )
    )
    c.append(
        Case(
            "second-task-not-measured",
            "The second task has no measurement.",
            [f("R006", "/tasks/1")],
            mutate=[add("/tasks", task("top5", value=0.99, reference=obs(0.99, 0.991, 0.989)))],
        )
    )
    c.append(
        Case(
            "published-missing",
            "published has neither a value nor a range.",
            [f("R007", "/tasks/0/published")],
            mutate=[put("/tasks/0/published", {"unit": "fraction"})],
        )
    )
    c.append(
        Case(
            "published-value-and-range",
            "published has both a value and a range.",
            [f("R007", "/tasks/0/published")],
            mutate=[put("/tasks/0/published", {"value": 0.912, "range": [0.905, 0.919]})],
        )
    )
    c.append(
        Case(
            "seeds-more-than-statistic",
            "Five seeds for a mean over three.",
            [f("R008", "/launchers/0/seeds")],
            mutate=[put("/launchers/0/seeds", [0, 1, 2, 3, 4])],
        )
    )
    c.append(
        Case(
            "std-statistic-is-not-a-single-run",
            "A standard deviation is never the value of one run, so a mean does not stand in.",
            [f("R009", M0 + "/aggregate")],
            mutate=[
                put("/tasks/0/statistic", {"aggregate": "std", "seeds": 1}),
                put("/launchers/0/seeds", [0]),
            ],
        )
    )
    c.append(
        Case(
            "published-range-inverted",
            "The range's low end is above its high end.",
            [f("R007", "/tasks/0/published")],
            mutate=[put("/tasks/0/published", {"range": [0.919, 0.905]})],
        )
    )
    c.append(
        Case(
            "seeds-fewer-than-statistic",
            "The paper reports a mean over 3 seeds; the scored launcher runs one.",
            [f("R008", "/launchers/0/seeds")],
            mutate=[put("/launchers/0/seeds", [0])],
        )
    )
    c.append(
        Case(
            "seeds-missing-for-statistic",
            "No seeds (one run) for a statistic over 3 seeds.",
            [f("R008", "/launchers/0/seeds")],
            mutate=[
                delete("/launchers/0/seeds"),
                put("/launchers/0/argv", ["python", "code/train.py"]),
            ],
        )
    )
    c.append(
        Case(
            "aggregate-differs-from-statistic",
            "The paper reports a median; the measurement aggregates by mean.",
            [f("R009", M0 + "/aggregate")],
            mutate=[put("/tasks/0/statistic/aggregate", "median")],
        )
    )
    c.append(
        Case(
            "aggregate-differs-in-smoke-launcher",
            "A smoke launcher's measurement aggregates by median, the task reports a mean: no"
            " R009, since smoke values are never evidence (R008 and R009 apply to scored"
            " launchers only).",
            [],
            mutate=[
                add(
                    "/launchers",
                    {
                        "id": "smoke",
                        "argv": ["python", "code/train.py", "--seed", "{seed}"],
                        "seeds": [0],
                        "scope": "smoke",
                        "measurements": [
                            {
                                "task": "accuracy",
                                "extract": {
                                    "kind": "regex",
                                    "pattern": r"final accuracy: ([0-9.]+)",
                                },
                                "aggregate": "median",
                            }
                        ],
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "one-reference-observation",
            "One reference observation: the interval is floor-only.",
            [f("R010", "/tasks/0/reference/observations")],
            tags=["required", "compatibility-interval"],
            mutate=[put("/tasks/0/reference", obs(0.912))],
        )
    )
    c.append(
        Case(
            "no-reference-observations",
            "No reference at all: the interval is undefined.",
            [f("R010", "/tasks/0/reference/observations")],
            tags=["required", "compatibility-interval"],
            mutate=[delete("/tasks/0/reference")],
        )
    )
    c.append(
        Case(
            "task-not-measured-with-reason",
            "A second task says why it is not measured: no observations and no scored "
            "measurement are needed (since 1.1).",
            [],
            tags=["required", "compatibility-interval"],
            mutate=[
                put("/rra_version", "1.1"),
                add(
                    "/tasks",
                    task(
                        "top5",
                        value=0.99,
                        reference={"not_measured": "the build's time held no reference run"},
                    ),
                ),
            ],
        )
    )
    c.append(
        Case(
            "not-measured-with-observations",
            "A task says it is not measured and has reference observations too.",
            [f("R040", "/tasks/0/reference/not_measured")],
            tags=["required", "compatibility-interval"],
            mutate=[
                put("/rra_version", "1.1"),
                put("/tasks/0/reference/not_measured", "no reference run fitted"),
            ],
        )
    )
    c.append(
        Case(
            "published-outside-references",
            "The paper's 0.95 lies far above every reference run (0.80 to 0.82).",
            [f("R011", "/tasks/0/published")],
            tags=["required", "compatibility-interval"],
            mutate=[
                put("/tasks/0/published", {"value": 0.95}),
                put("/tasks/0/reference", obs(0.80, 0.81, 0.82, 0.805, 0.815)),
            ],
        )
    )
    c.append(
        Case(
            "published-outside-references-with-discrepancy",
            "The paper's 0.95 lies far above every reference run, and a discrepancy of the "
            "guide names the task: no R011.",
            [],
            tags=["required", "compatibility-interval"],
            mutate=[
                put("/tasks/0/published", {"value": 0.95}),
                put("/tasks/0/reference", obs(0.80, 0.81, 0.82, 0.805, 0.815)),
                put(
                    "/guide/discrepancies",
                    [
                        {
                            "id": "accuracy-below-paper",
                            "paper": "The paper reports an accuracy of 0.95.",
                            "code": "Five reference runs give 0.80 to 0.82.",
                            "followed": "code",
                            "tasks": ["accuracy"],
                        }
                    ],
                ),
            ],
        )
    )
    c.append(
        Case(
            "refined-directory-without-path",
            "kind 'directory' needs 'path'.",
            [f("R012", "/codebase/refined")],
            mutate=[delete("/codebase/refined/path")],
        )
    )
    c.append(
        Case(
            "refined-directory-with-patches",
            "kind 'directory' must not also list patches.",
            [f("R012", "/codebase/refined")],
            tags=["required", "digests"],
            mutate=[
                put(
                    "/codebase/refined/patches",
                    [
                        {
                            "path": "patches/0001-seed-flag.patch",
                            "sha256": "@sha256:patches/0001-seed-flag.patch",
                        }
                    ],
                )
            ],
            files={"patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "shell-with-several-argv-elements",
            "A shell launcher must have exactly one argv element.",
            [f("R013", "/launchers/0/argv")],
            mutate=[put("/launchers/0/shell", True)],
        )
    )
    c.append(
        Case(
            "template-unresolved-in-argv",
            "argv names a template that is neither seed, run_dir nor a param.",
            [f("R014", "/launchers/0/argv/5")],
            mutate=[add("/launchers/0/argv", "--lr"), add("/launchers/0/argv", "{lr}")],
        )
    )
    c.append(
        Case(
            "template-unresolved-in-env",
            "An environment variable names an unknown template.",
            [f("R014", "/launchers/0/env/OUT_DIR")],
            mutate=[put("/launchers/0/env", {"OUT_DIR": "{outdir}/results"})],
        )
    )
    c.append(
        Case(
            "template-unresolved-in-output-path",
            "An output path names an unknown template.",
            [f("R014", "/launchers/0/outputs/0/path")],
            mutate=[put("/launchers/0/outputs", [{"id": "m", "path": "{run_dir}/{split}.json"}])],
        )
    )
    c.append(
        Case(
            "template-unresolved-in-extract-file",
            "An extractor's file names an unknown template.",
            [f("R014", EXTRACT + "/file")],
            mutate=[put(EXTRACT + "/file", "results/{name}.log")],
        )
    )
    c.append(
        Case(
            "template-seed-without-seeds",
            "A launcher without seeds runs once with no seed, so '{seed}' names nothing.",
            [f("R014", "/launchers/0/argv/3")],
            mutate=[
                delete("/launchers/0/seeds"),
                put("/tasks/0/statistic", {"aggregate": "single", "seeds": 1}),
                put(M0 + "/aggregate", "single"),
            ],
        )
    )
    c.append(
        Case(
            "template-lone-brace",
            "A lone '{' that is not written '{{'.",
            [f("R014", "/launchers/0/argv/4")],
            mutate=[add("/launchers/0/argv", "--format={json")],
        )
    )
    c.append(
        Case(
            "unknown-task-in-open-choice",
            "An open choice names a task that does not exist.",
            [f("R002", "/guide/open_choices/0/tasks/0")],
            tags=["required", "guide"],
            mutate=[
                put(
                    "/guide/open_choices",
                    [{"id": "max-iter", "question": "How many iterations?", "tasks": ["top5"]}],
                )
            ],
        )
    )
    c.append(
        Case(
            "dependency-cycle",
            "Two launchers need each other.",
            [f("R015", "/launchers/0/needs")],
            mutate=[
                put("/launchers/0/needs", ["prepare"]),
                add(
                    "/launchers",
                    {"id": "prepare", "argv": ["true"], "scope": "smoke", "needs": ["train"]},
                ),
            ],
        )
    )
    c.append(
        Case(
            "dependency-cycle-reported-once",
            "Three launchers need each other through two loops (one group): a single R015, at"
            " the launcher of the group that comes first in the document, not where a"
            " traversal from 'train' enters the group.",
            [f("R015", "/launchers/1/needs")],
            mutate=[
                put("/launchers/0/needs", ["fit"]),
                add(
                    "/launchers",
                    {"id": "prepare", "argv": ["true"], "scope": "smoke", "needs": ["fit"]},
                ),
                add(
                    "/launchers",
                    {
                        "id": "fit",
                        "argv": ["true"],
                        "scope": "smoke",
                        "needs": ["prepare", "evaluate"],
                    },
                ),
                add(
                    "/launchers",
                    {"id": "evaluate", "argv": ["true"], "scope": "smoke", "needs": ["fit"]},
                ),
            ],
        )
    )
    c.append(
        Case(
            "dependency-on-itself",
            "A launcher needs itself.",
            [f("R015", "/launchers/0/needs")],
            mutate=[put("/launchers/0/needs", ["train"])],
        )
    )
    c.append(
        Case(
            "invalid-regex-in-extractor",
            "An unbalanced parenthesis in an extractor's pattern.",
            [f("R016", EXTRACT + "/pattern")],
            mutate=[put(EXTRACT + "/pattern", "final accuracy: ([0-9.]+")],
        )
    )
    c.append(
        Case(
            "invalid-regex-in-landmark",
            "An unclosed character class in a landmark's pattern.",
            [f("R016", "/launchers/0/landmarks/0/pattern")],
            mutate=[put("/launchers/0/landmarks", [{"id": "epoch", "pattern": "[epoch"}])],
        )
    )
    c.append(
        Case(
            "regex-backreference-in-extractor",
            "A backreference is outside the pattern dialect (RE2 has none).",
            [f("X004", EXTRACT + "/pattern")],
            mutate=[put(EXTRACT + "/pattern", r"(acc)uracy: \1 ([0-9.]+)")],
        )
    )
    c.append(
        Case(
            "regex-foreign-constructs-whatever-the-engine",
            "Constructs the pattern grammar lists as foreign are X004 whatever an engine makes of "
            "them: \\z (end of text in RE2 and newer Pythons), a*+ (possessive) and a "
            "backreference to a group that does not exist.",
            [
                f("X004", "/launchers/0/landmarks/0/pattern"),
                f("X004", "/launchers/0/landmarks/1/pattern"),
                f("X004", "/launchers/0/landmarks/2/pattern"),
            ],
            mutate=[
                put(
                    "/launchers/0/landmarks",
                    [
                        {"id": "end", "pattern": r"done\z"},
                        {"id": "possessive", "pattern": r"epoch [0-9]*+"},
                        {"id": "backreference", "pattern": r"epoch \1"},
                    ],
                )
            ],
            spec=("manifest.md#patterns", "manifest.md#pattern-foreign"),
        )
    )
    c.append(
        Case(
            "regex-lookahead-in-landmark",
            "A lookahead in a landmark's pattern is outside the pattern dialect.",
            [f("X004", "/launchers/0/landmarks/0/pattern")],
            mutate=[put("/launchers/0/landmarks", [{"id": "epoch", "pattern": "epoch (?=1)"}])],
        )
    )
    c.append(
        Case(
            "regex-named-group-missing",
            "The extractor names a group the pattern does not define.",
            [f("R017", EXTRACT + "/group")],
            mutate=[put(EXTRACT + "/group", "acc")],
        )
    )
    c.append(
        Case(
            "regex-without-group",
            "A pattern without a capturing group and no 'group' (default 1): R017 at the"
            " pointer 'group' would have.",
            [f("R017", EXTRACT + "/group")],
            mutate=[put(EXTRACT + "/pattern", "final accuracy: [0-9.]+")],
        )
    )
    c.append(
        Case(
            "regex-group-number-too-high",
            "Group 2 of a pattern with one group.",
            [f("R017", EXTRACT + "/group")],
            mutate=[put(EXTRACT + "/group", 2)],
        )
    )
    c.append(
        Case(
            "data-without-source",
            "A data item must name exactly one source; this one names none.",
            [f("R018", "/environment/data/0/source")],
            mutate=[add("/environment/data", {"id": "digits", "source": {}})],
        )
    )
    c.append(
        Case(
            "data-with-two-sources",
            "A data item names both a URL and a package.",
            [f("R018", "/environment/data/0/source")],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "digits",
                        "source": {"url": "https://example.org/digits.npz", "package": "sklearn"},
                        "sha256": fake_hash("digits.npz"),
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "gated-data-without-instructions",
            "A gated item that does not say how to obtain it.",
            [f("R019", "/environment/data/0")],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "faces",
                        "source": {"url": "https://example.org/faces.tar.gz"},
                        "sha256": fake_hash("faces"),
                        "access": "gated",
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "manual-data-without-instructions",
            "A manual item that does not say how to obtain it.",
            [f("R019", "/environment/data/0")],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "scans",
                        "source": {"url": "https://example.org/scans"},
                        "sha256": fake_hash("scans"),
                        "access": "manual",
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "checkpoint-substitutes-full-task",
            "A launcher measuring a full-procedure task reads a checkpoint that may stand in "
            "for training.",
            [f("R020", "/launchers/0/data/0")],
            mutate=[add("/environment/data", CKPT), put("/launchers/0/data", ["weights"])],
        )
    )
    # ------------------------------------------------------------------ resources (1.1)
    c.append(
        Case(
            "launcher-resources",
            "A launcher declares the cores, memory, GPUs and wall time one run needs.",
            [],
            mutate=[
                put("/rra_version", "1.1"),
                put("/environment/accelerator", {"kind": "cuda", "cuda": "12.1", "gpus": 1}),
                put("/launchers/0/timeout", 3600),
                put(
                    "/launchers/0/resources",
                    {"cpus": 4, "memory": "16GiB", "gpus": 1, "walltime": 7200},
                ),
            ],
        )
    )
    c.append(
        Case(
            "resources-memory-without-unit",
            "A launcher's memory need is a bare number, not a size with a unit.",
            [f("S004", "/launchers/0/resources/memory")],
            mutate=[put("/rra_version", "1.1"), put("/launchers/0/resources", {"memory": "16"})],
        )
    )
    c.append(
        Case(
            "resources-walltime-below-timeout",
            "A launcher's resources reserve less wall time than its timeout allows.",
            [f("R025", "/launchers/0/resources/walltime")],
            mutate=[
                put("/rra_version", "1.1"),
                put("/launchers/0/timeout", 3600),
                put("/launchers/0/resources", {"cpus": 2, "memory": "4GiB", "walltime": 600}),
            ],
        )
    )
    c.append(
        Case(
            "resources-gpus-without-accelerator",
            "A launcher asks for a GPU while the environment declares no accelerator.",
            [f("R026", "/launchers/0/resources/gpus")],
            mutate=[put("/rra_version", "1.1"), put("/launchers/0/resources", {"gpus": 1})],
        )
    )
    # ------------------------------------------------------------------ plugins (1.1)
    plugin_kind = {"kind": "x-no-such-plugin", "x-tag": "eval/accuracy"}
    c.append(
        Case(
            "plugin-extractor-not-installed",
            "A measurement is read by an x- extractor kind that no installed plugin provides "
            "(a warning: this validator cannot extract it).",
            [f("X005", EXTRACT + "/kind")],
            mutate=[put("/rra_version", "1.1"), put(EXTRACT, plugin_kind)],
        )
    )
    c.append(
        Case(
            "plugin-extractor-in-1-0",
            "A 1.0 manifest uses a plugin extractor kind, an addition of 1.1.",
            [f("V005", EXTRACT + "/kind"), f("X005", EXTRACT + "/kind")],
            mutate=[put(EXTRACT, plugin_kind)],
        )
    )
    c.append(
        Case(
            "plugin-extractor-kind-malformed",
            "An extractor kind that is neither built in nor 'x-' and lower case.",
            [f("S004", EXTRACT + "/kind")],
            mutate=[put("/rra_version", "1.1"), put(EXTRACT, {"kind": "x-Tensor"})],
        )
    )
    plugin_item = {**CKPT, "source": {"url": "x-store://models/model-v1.pt"}}
    c.append(
        Case(
            "plugin-data-scheme-not-installed",
            "A data item is downloaded through a plugin's x- URL scheme (format 1.1) that no "
            "installed plugin provides (a warning: this validator cannot fetch it).",
            [f("D015", "/environment/data/0/source/url")],
            mutate=[put("/rra_version", "1.1"), add("/environment/data", plugin_item)],
        )
    )
    c.append(
        Case(
            "plugin-data-scheme-in-1-0",
            "A 1.0 manifest names a plugin's x- URL scheme, an addition of 1.1.",
            [
                f("V005", "/environment/data/0/source/url"),
                f("D015", "/environment/data/0/source/url"),
            ],
            mutate=[add("/environment/data", plugin_item)],
        )
    )
    c.append(
        Case(
            "lock-build-dependencies-in-1-0",
            "A 1.0 manifest records the undeclared build requirements of a source "
            "distribution in its lock, an addition of 1.1.",
            [f("V005", "/environment/lock/build_dependencies")],
            mutate=[
                put("/environment/lock/build_dependencies", {"scikit-garden": ["numpy==1.17.0"]})
            ],
        )
    )

    return c
