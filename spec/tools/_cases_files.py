"""Path, link, existence and digest cases (F codes)."""

from __future__ import annotations

from _casedata import EXTRACT, LOCK, OTHER_TREE, PATCH, f, with_sample
from _casekit import Case, Symlink, add, delete, fake_hash, put


def file_cases() -> list[Case]:
    c: list[Case] = []
    # ------------------------------------------------------------------ files and paths
    c.append(
        Case(
            "absolute-lock-path",
            "An absolute path (reported as F001 only, not also as a pattern violation).",
            [f("F001", "/environment/lock/path")],
            mutate=[put("/environment/lock/path", "/srv/locks/requirements.txt")],
        )
    )
    c.append(
        Case(
            "absolute-extract-file",
            "An extractor reads an absolute file.",
            [f("F001", EXTRACT + "/file")],
            mutate=[put(EXTRACT + "/file", "/var/log/train.log")],
        )
    )
    c.append(
        Case(
            "lock-path-escapes",
            "The lock path leaves the artifact; nothing outside is read.",
            [f("F002", "/environment/lock/path")],
            mutate=[put("/environment/lock/path", "../requirements.txt")],
        )
    )
    c.append(
        Case(
            "refined-path-escapes-after-normalisation",
            "A path that leaves the artifact once '..' is resolved.",
            [f("F002", "/codebase/refined/path")],
            mutate=[put("/codebase/refined/path", "code/../../code")],
        )
    )
    c.append(
        Case(
            "workdir-escapes",
            "The working directory is the artifact's parent.",
            [f("F002", "/launchers/0/workdir")],
            mutate=[put("/launchers/0/workdir", "..")],
        )
    )
    c.append(
        Case(
            "data-from-codebase-missing",
            "A data item's 'source.codebase' names a file the refined code does not hold: F004"
            " (the path is relative to the refined code directory).",
            [f("F004", "/environment/data/0/source/codebase")],
            mutate=[
                add(
                    "/environment/data",
                    {"id": "labels", "source": {"codebase": "labels.txt"}},
                ),
                put("/launchers/0/data", ["labels"]),
            ],
        )
    )
    c.append(
        Case(
            "output-path-up-from-workdir",
            "From 'workdir: code', the output '../metrics.json' is metrics.json at the root:"
            " inside the artifact, so no F002 (outputs are relative to the working directory).",
            [],
            mutate=[
                put("/launchers/0/workdir", "code"),
                put("/launchers/0/outputs", [{"id": "metrics", "path": "../metrics.json"}]),
            ],
        )
    )
    c.append(
        Case(
            "output-path-out-of-artifact-from-workdir",
            "From 'workdir: code', '../../metrics.json' leaves the artifact: F002.",
            [f("F002", "/launchers/0/outputs/0/path")],
            mutate=[
                put("/launchers/0/workdir", "code"),
                put("/launchers/0/outputs", [{"id": "metrics", "path": "../../metrics.json"}]),
            ],
        )
    )
    c.append(
        Case(
            "windows-drive-workdir",
            "A working directory with a drive letter is absolute.",
            [f("F001", "/launchers/0/workdir")],
            mutate=[put("/launchers/0/workdir", "C:/experiments")],
        )
    )
    c.append(
        Case(
            "data-destination-escapes",
            "A data item would be placed outside the artifact.",
            [f("F002", "/environment/data/0/destination")],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "labels",
                        "source": {"url": "https://example.org/labels.txt"},
                        "sha256": fake_hash("labels"),
                        "destination": "../shared/labels.txt",
                    },
                )
            ],
        )
    )
    c.append(
        Case(
            "dot-segments-that-stay-inside",
            "'.' and '..' segments are fine while the path stays inside the artifact.",
            mutate=[
                put("/codebase/refined/path", "./environment/../code"),
                put("/launchers/0/workdir", "code/.."),
            ],
        )
    )
    c.append(
        Case(
            "symlink-escapes-unreferenced",
            "A symbolic link at the artifact root points outside it.",
            [f("F003", "")],
            tags=["required", "symlinks"],
            files={"hosts": Symlink("/etc/hosts")},
        )
    )
    c.append(
        Case(
            "symlink-escapes-in-refined-code",
            "A symbolic link inside the refined code points outside the artifact.",
            [f("F003", "")],
            tags=["required", "symlinks"],
            files={"code/system": Symlink("../../../../../../../../etc")},
        )
    )
    c.append(
        Case(
            "symlink-escapes-as-lock",
            "The lock file is a symbolic link to a file outside the artifact.",
            [f("F003", "/environment/lock/path")],
            tags=["required", "symlinks"],
            mutate=[put("/environment/lock/sha256", fake_hash("outside"))],
            files={LOCK: Symlink("/etc/hosts")},
        )
    )
    c.append(
        Case(
            "symlink-inside-artifact",
            "A symbolic link that stays inside the artifact is fine.",
            tags=["required", "symlinks"],
            files={"train.py": Symlink("code/train.py")},
        )
    )
    c.append(
        Case(
            "lock-file-missing",
            "The lock file does not exist.",
            [f("F004", "/environment/lock/path")],
            mutate=[put("/environment/lock/sha256", fake_hash("missing"))],
            files={LOCK: None},
        )
    )
    c.append(
        Case(
            "refined-directory-missing",
            "The refined code directory does not exist.",
            [f("F004", "/codebase/refined/path")],
            mutate=[put("/codebase/refined/path", "src"), put("/codebase/tree_digest", OTHER_TREE)],
        )
    )
    c.append(
        Case(
            "patch-file-missing",
            "A patch of the series does not exist.",
            [f("F004", "/codebase/refined/patches/0/path"), f("C005", "/codebase/upstream")],
            mutate=[
                put(
                    "/codebase/refined",
                    {
                        "kind": "patches",
                        "patches": [
                            {"path": "patches/0001-seed-flag.patch", "sha256": fake_hash("p")}
                        ],
                    },
                ),
                delete("/codebase/tree_digest"),
            ],
            files={"code/train.py": None},
        )
    )
    c.append(
        Case(
            "sample-log-missing",
            "A sample names a log that is not shipped.",
            [f("F004", "/launchers/0/samples/0/log")],
            tags=["required", "replay"],
            mutate=[with_sample()],
        )
    )
    c.append(
        Case(
            "workdir-missing",
            "The working directory does not exist.",
            [f("F004", "/launchers/0/workdir")],
            mutate=[put("/launchers/0/workdir", "experiments")],
        )
    )
    c.append(
        Case(
            "requirements-file-missing",
            "The declared requirements file does not exist.",
            [f("F004", "/environment/requirements")],
            mutate=[put("/environment/requirements", "environment/requirements.in")],
        )
    )
    c.append(
        Case(
            "change-record-patch-missing",
            "A change record names a patch file that does not exist.",
            [f("F004", "/guide/changes/0/patch")],
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
                            "files": ["train.py"],
                            "patch": "patches/0001-seed-flag.patch",
                        }
                    ],
                )
            ],
        )
    )
    c.append(
        Case(
            "lock-digest-mismatch",
            "The lock's declared SHA-256 is not the file's.",
            [f("F005", "/environment/lock/sha256")],
            tags=["required", "digests"],
            mutate=[put("/environment/lock/sha256", fake_hash("stale"))],
        )
    )
    c.append(
        Case(
            "patch-digest-mismatch",
            "A patch's declared SHA-256 is not the file's.",
            [f("F005", "/codebase/refined/patches/0/sha256"), f("C005", "/codebase/upstream")],
            tags=["required", "digests"],
            mutate=[
                put(
                    "/codebase/refined",
                    {
                        "kind": "patches",
                        "patches": [
                            {"path": "patches/0001-seed-flag.patch", "sha256": fake_hash("p")}
                        ],
                    },
                ),
                delete("/codebase/tree_digest"),
            ],
            files={"code/train.py": None, "patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "data-digest-mismatch",
            "A data item present at its destination has another SHA-256 than declared.",
            [f("F005", "/environment/data/0/sha256")],
            tags=["required", "digests"],
            mutate=[
                add(
                    "/environment/data",
                    {
                        "id": "labels",
                        "source": {"url": "https://example.org/labels.txt"},
                        "sha256": fake_hash("labels"),
                        "destination": "data/labels.txt",
                    },
                ),
                put("/launchers/0/data", ["labels"]),
            ],
            files={"data/labels.txt": "0\n1\n"},
        )
    )
    c.append(
        Case(
            "tree-digest-mismatch",
            "The refined code changed after its tree digest was taken.",
            [f("F006", "/codebase/tree_digest")],
            tags=["required", "digests"],
            mutate=[put("/codebase/tree_digest", OTHER_TREE)],
        )
    )
    c.append(
        Case(
            "lock-digest-missing",
            "The lock has no declared SHA-256.",
            [f("F007", "/environment/lock/sha256")],
            tags=["required", "digests"],
            mutate=[delete("/environment/lock/sha256")],
        )
    )
    c.append(
        Case(
            "patch-digest-missing",
            "A patch has no declared SHA-256.",
            [f("F007", "/codebase/refined/patches/0/sha256"), f("C005", "/codebase/upstream")],
            tags=["required", "digests"],
            mutate=[
                put(
                    "/codebase/refined",
                    {"kind": "patches", "patches": [{"path": "patches/0001-seed-flag.patch"}]},
                ),
                delete("/codebase/tree_digest"),
            ],
            files={"code/train.py": None, "patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "patch-series-beside-code-directory",
            "A patch series next to a code/ directory that is not its checkout: the runner "
            "would refuse to replace it (C008), so the validator reports it there.",
            [f("C008", "/codebase/refined"), f("C005", "/codebase/upstream")],
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
                            }
                        ],
                    },
                ),
                delete("/codebase/tree_digest"),
            ],
            files={"patches/0001-seed-flag.patch": PATCH},
        )
    )
    c.append(
        Case(
            "data-url-digest-missing",
            "A data item downloaded from a URL has no declared SHA-256.",
            [f("F007", "/environment/data/0/sha256")],
            tags=["required", "digests"],
            mutate=[
                add(
                    "/environment/data",
                    {"id": "digits", "source": {"url": "https://example.org/digits.npz"}},
                )
            ],
        )
    )
    c.append(
        Case(
            "refined-path-is-a-file",
            "The refined code path names a file, not a directory.",
            [f("F008", "/codebase/refined/path")],
            mutate=[put("/codebase/refined/path", "code/train.py")],
        )
    )
    c.append(
        Case(
            "workdir-is-a-file",
            "The working directory names a file.",
            [f("F008", "/launchers/0/workdir")],
            mutate=[put("/launchers/0/workdir", "code/train.py")],
        )
    )
    c.append(
        Case(
            "lock-path-is-a-directory",
            "The lock path names a directory.",
            [f("F009", "/environment/lock/path")],
            mutate=[put("/environment/lock/path", "environment")],
        )
    )
    c.append(
        Case(
            "guide-path-is-a-directory",
            "The guide path names a directory; the guide checks are skipped.",
            [f("F009", "/guide/path")],
            tags=["required", "guide"],
            mutate=[put("/guide/path", "code")],
        )
    )

    return c
