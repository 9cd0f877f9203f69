"""Lock, replay and guide cases (L, X and G codes)."""

from __future__ import annotations

from _casedata import EXTRACT, LOCK, M0, f, pylock, use_pylock, with_lock, with_sample
from _casekit import GUIDE, Case, _Guide, fake_hash, lock_line, put


def tool_cases() -> list[Case]:
    c: list[Case] = []
    # ------------------------------------------------------------------ locks
    c.append(
        Case(
            "lock-unpinned-requirement",
            "A requirement pinned with '>=' instead of '=='.",
            [f("L001", "", file=LOCK)],
            tags=["locks"],
            files=with_lock(
                lock_line("numpy", "1.26.4")
                + f"scipy>=1.14 \\\n    --hash=sha256:{fake_hash('scipy')}\n"
            ),
        )
    )
    c.append(
        Case(
            "lock-unhashed-requirement",
            "A requirement without --hash.",
            [f("L002", "", file=LOCK)],
            tags=["locks"],
            files=with_lock(lock_line("numpy", "1.26.4") + "scipy==1.14.1\n"),
        )
    )
    c.append(
        Case(
            "lock-unparseable-line",
            "A line that is not a requirement.",
            [f("L003", "", file=LOCK)],
            tags=["locks"],
            files=with_lock(lock_line("numpy", "1.26.4") + "numpy===?? (latest)\n"),
        )
    )
    c.append(
        Case(
            "lock-local-find-links",
            "The lock points pip at a machine-local wheel directory.",
            [f("L004", "", file=LOCK)],
            tags=["locks"],
            files=with_lock("--find-links /home/alice/wheels\n" + lock_line("numpy", "1.26.4")),
        )
    )
    c.append(
        Case(
            "lock-file-index-url",
            "The lock's index is a file:// URL.",
            [f("L004", "", file=LOCK)],
            tags=["locks"],
            files=with_lock("--index-url file:///srv/pypi/simple\n" + lock_line("numpy", "1.26.4")),
        )
    )
    c.append(
        Case(
            "lock-includes-another-file",
            "The lock includes another requirements file with -r.",
            [f("L009", "", file=LOCK)],
            tags=["locks"],
            files=with_lock("-r base.txt\n" + lock_line("numpy", "1.26.4")),
        )
    )
    c.append(
        Case(
            "lock-duplicate-requirement",
            "numpy is pinned twice.",
            [f("L008", "", file=LOCK)],
            tags=["locks"],
            files=with_lock(lock_line("numpy", "1.26.4") + lock_line("numpy", "1.26.3")),
        )
    )
    c.append(
        Case(
            "lock-python-mismatch",
            "The lock was resolved for Python 3.10; the environment declares 3.11.",
            [f("L007", "/environment/lock/resolved_for/python")],
            tags=["locks"],
            mutate=[put("/environment/lock/resolved_for/python", "3.10.14")],
        )
    )
    c.append(
        Case(
            "lock-cpu-pins-cuda-build",
            "The lock says it targets the CPU build but pins a CUDA runtime wheel.",
            [f("L012", "", file=LOCK)],
            tags=["locks"],
            mutate=[
                put("/rra_version", "1.1"),
                put("/environment/lock/resolved_for/accelerator", "cpu"),
            ],
            files=with_lock(
                lock_line("torch", "2.5.1+cpu") + lock_line("nvidia-cublas-cu12", "12.4.5.8")
            ),
        )
    )
    c.append(
        Case(
            "pylock-unknown-major",
            "pylock.toml lock-version 2.0.",
            [f("L005", "/lock-version", file="environment/pylock.toml")],
            tags=["locks", "pylock"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": pylock("2.0")},
        )
    )
    c.append(
        Case(
            "pylock-newer-minor",
            "pylock.toml lock-version 1.9: a warning.",
            [f("L006", "/lock-version", file="environment/pylock.toml")],
            tags=["locks", "pylock"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": pylock("1.9")},
        )
    )
    c.append(
        Case(
            "pylock-unhashed-wheel",
            "A pylock wheel without hashes.",
            [f("L002", "/packages/0/wheels/0/hashes", file="environment/pylock.toml")],
            tags=["locks", "pylock"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": pylock(hashed=False)},
        )
    )
    c.append(
        Case(
            "pylock-not-toml",
            "pylock.toml is not valid TOML.",
            [f("L003", "", file="environment/pylock.toml")],
            tags=["locks", "pylock"],
            mutate=[use_pylock],
            files={LOCK: None, "environment/pylock.toml": 'lock-version = "1.0"\n[[packages]\n'},
        )
    )

    # ------------------------------------------------------------------ extraction replay
    c.append(
        Case(
            "extraction-no-match",
            "The shipped sample log has no line the pattern matches.",
            [f("X001", EXTRACT)],
            tags=["replay"],
            mutate=[with_sample()],
            files={"samples/train.log": "epoch 1 loss 0.41\ntraining interrupted\n"},
        )
    )
    c.append(
        Case(
            "extraction-not-a-number",
            "The pattern captures a word, not a number.",
            [f("X002", EXTRACT)],
            tags=["replay"],
            mutate=[put(EXTRACT + "/pattern", r"final accuracy: (\S+)"), with_sample()],
            files={"samples/train.log": "final accuracy: high\n"},
        )
    )
    c.append(
        Case(
            "extraction-value-differs",
            "The sample log says 0.905; the sample expects 0.912.",
            [f("X003", "/launchers/0/samples/0/expected/accuracy")],
            tags=["replay"],
            mutate=[with_sample()],
            files={"samples/train.log": "final accuracy: 0.905\n"},
        )
    )
    c.append(
        Case(
            "extraction-within-absolute-tolerance",
            "1e-13 against an expected 0: equal within the absolute tolerance 1e-12 (no X003).",
            [],
            tags=["replay"],
            mutate=[with_sample({"accuracy": 0.0})],
            files={"samples/train.log": "final accuracy: 0.0000000000001\n"},
        )
    )
    c.append(
        Case(
            "extraction-past-absolute-tolerance",
            "2e-12 against an expected 0: past the absolute tolerance 1e-12, X003.",
            [f("X003", "/launchers/0/samples/0/expected/accuracy")],
            tags=["replay"],
            mutate=[with_sample({"accuracy": 0.0})],
            files={"samples/train.log": "final accuracy: 0.000000000002\n"},
        )
    )
    c.append(
        Case(
            "extraction-within-relative-tolerance",
            "1.0000000005 against an expected 1: equal within the relative tolerance 1e-9.",
            [],
            tags=["replay"],
            mutate=[with_sample({"accuracy": 1.0})],
            files={"samples/train.log": "final accuracy: 1.0000000005\n"},
        )
    )
    c.append(
        Case(
            "extraction-past-relative-tolerance",
            "1.000000002 against an expected 1: past the relative tolerance 1e-9, X003.",
            [f("X003", "/launchers/0/samples/0/expected/accuracy")],
            tags=["replay"],
            mutate=[with_sample({"accuracy": 1.0})],
            files={"samples/train.log": "final accuracy: 1.000000002\n"},
        )
    )
    c.append(
        Case(
            "landmark-not-in-samples",
            "The landmark waits for a line the shipped sample log never prints.",
            [f("R034", "/launchers/0/landmarks/0/pattern")],
            tags=["replay"],
            mutate=[
                with_sample(),
                put("/launchers/0/landmarks", [{"id": "early-stop", "pattern": "^early stop"}]),
            ],
            files={"samples/train.log": "epoch 1\nfinal accuracy: 0.912\n"},
        )
    )
    c.append(
        Case(
            "landmark-in-samples",
            "The sample log prints the landmark's line: the landmark is reached (no R034).",
            [],
            tags=["replay"],
            mutate=[
                with_sample(),
                put("/launchers/0/landmarks", [{"id": "epoch", "pattern": r"^epoch \d+"}]),
            ],
            files={"samples/train.log": "epoch 1\nfinal accuracy: 0.912\n"},
        )
    )
    c.append(
        Case(
            "extraction-json-pointer-absent",
            "The JSON pointer names a key the sample output does not have.",
            [f("X001", EXTRACT)],
            tags=["replay"],
            mutate=[
                put("/launchers/0/outputs", [{"id": "metrics", "path": "{run_dir}/metrics.json"}]),
                put(
                    M0 + "/extract",
                    {"kind": "json", "output": "metrics", "pointer": "/test/accuracy"},
                ),
                put(
                    "/launchers/0/samples",
                    [
                        {
                            "outputs": {"metrics": "samples/metrics.json"},
                            "expected": {"accuracy": 0.912},
                        }
                    ],
                ),
            ],
            files={"samples/metrics.json": '{"validation": {"accuracy": 0.9}}\n'},
        )
    )
    c.append(
        Case(
            "extraction-csv-not-a-number",
            "The CSV cell holds 'n/a'.",
            [f("X002", EXTRACT)],
            tags=["replay"],
            mutate=[
                put("/launchers/0/outputs", [{"id": "results", "path": "{run_dir}/results.csv"}]),
                put(
                    M0 + "/extract",
                    {"kind": "csv", "output": "results", "column": "accuracy", "row": -1},
                ),
                put(
                    "/launchers/0/samples",
                    [
                        {
                            "outputs": {"results": "samples/results.csv"},
                            "expected": {"accuracy": 0.9},
                        }
                    ],
                ),
            ],
            files={"samples/results.csv": "split,accuracy\ntest,n/a\n"},
        )
    )

    # ------------------------------------------------------------------ guide
    c.append(
        Case(
            "guide-missing",
            "GUIDE.md does not exist.",
            [f("G001", "/guide/path")],
            tags=["required", "guide"],
            files={"GUIDE.md": None},
        )
    )
    c.append(
        Case(
            "guide-out-of-date",
            "GUIDE.md renders other records than the manifest holds.",
            [f("G002", "", file="GUIDE.md")],
            tags=["guide"],
            mutate=[
                put(
                    "/guide/pitfalls",
                    [{"id": "threads", "summary": "BLAS threads change results."}],
                )
            ],
            files={"GUIDE.md": _Guide(GUIDE.before, GUIDE.after, records={})},
        )
    )
    c.append(
        Case(
            "guide-records-rendered",
            "GUIDE.md renders every kind of record as the spec's grammar says (whitespace runs "
            "joined, Markdown and HTML characters escaped, ids as code spans): no G002.",
            [],
            tags=["guide"],
            mutate=[
                put(
                    "/guide/ambiguities",
                    [
                        {
                            "id": "split",
                            "source": "paper  §4,\ttable <2>",
                            "gap": "The split is [not] stated & the seed\nis not either.",
                            "resolution": "Use a\\b as the `official` split.",
                            "sensitivity": "low",
                            "tasks": ["accuracy"],
                        }
                    ],
                ),
                put(
                    "/guide/changes",
                    [
                        {
                            "id": "pin-numpy",
                            "kind": "execution-fix",
                            "summary": "Pin numpy.",
                            "rationale": "It moved.",
                            "files": ["code/train.py", "a`b.py"],
                            "tasks": ["accuracy"],
                        }
                    ],
                ),
                put(
                    "/guide/pitfalls",
                    [{"id": "threads", "summary": "BLAS threads change results.", "remedy": ""}],
                ),
                put(
                    "/guide/open_choices",
                    [
                        {
                            "id": "lr",
                            "question": "Which learning rate?",
                            "options": ["0.1", "0.01"],
                            "default": "0.1",
                        }
                    ],
                ),
            ],
        )
    )
    c.append(
        Case(
            "guide-record-of-wrong-type",
            "A pitfall's summary is a number: S003, and no G002 for the out-of-date block, since "
            "the rendering is defined only for records of the right types.",
            [f("S003", "/guide/pitfalls/0/summary")],
            tags=["guide"],
            mutate=[put("/guide/pitfalls", [{"id": "threads", "summary": 3}])],
            files={"GUIDE.md": _Guide(GUIDE.before, GUIDE.after, records={})},
        )
    )
    c.append(
        Case(
            "guide-without-markers",
            "GUIDE.md has no generated-records block.",
            [f("G003", "", file="GUIDE.md")],
            tags=["required", "guide"],
            files={"GUIDE.md": "# Reproduction guide\n\nRun the scored launcher.\n"},
        )
    )
    return c
