"""The files layer on hostile trees: symlink loops and escapes, NUL bytes, overlong paths."""

from __future__ import annotations

import shutil
from pathlib import Path

import reprobridge_sdk as rb

VECTORS = Path(__file__).parent / "vectors"


def _artifact(tmp_path: Path, edit: dict[str, str]) -> Path:
    root = tmp_path / "artifact"
    shutil.copytree(VECTORS / "valid-minimal", root)
    text = (root / "rra.yaml").read_text("utf-8")
    for old, new in edit.items():
        assert old in text
        text = text.replace(old, new)
    (root / "rra.yaml").write_text(text, "utf-8")
    return root


def _found(root: Path) -> set[tuple[str, str]]:
    return {(f.code, f.path) for f in rb.validate(root).findings}


def test_symlink_loop_is_f004(tmp_path: Path) -> None:
    root = _artifact(tmp_path, {"      - log: samples/seed1.log": "      - log: samples/loop-a"})
    (root / "samples" / "loop-a").symlink_to("loop-b")
    (root / "samples" / "loop-b").symlink_to("loop-a")
    assert _found(root) == {("F004", "/launchers/0/samples/0/log")}


def test_symlink_escaping_through_a_path_field_and_in_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "secret.log"
    outside.write_text("accuracy: 0.9010\n")
    root = _artifact(tmp_path, {"      - log: samples/seed1.log": "      - log: samples/link.log"})
    (root / "samples" / "link.log").symlink_to(outside)
    (root / "stray").symlink_to(tmp_path)
    found = rb.validate(root).findings
    assert {(f.code, f.path) for f in found} == {
        ("F003", "/launchers/0/samples/0/log"),
        ("F003", ""),
    }
    stray = next(f for f in found if not f.path)
    assert stray.file.endswith("stray")


def test_nul_byte_and_overlong_paths(tmp_path: Path) -> None:
    root = _artifact(
        tmp_path,
        {
            '  python: "3.11"': '  python: "3.11"\n  requirements: "req\\0uirements.txt"',
            "      - log: samples/seed1.log": "      - log: " + "d/" * 2100 + "x.log",
        },
    )
    assert _found(root) == {
        ("F004", "/environment/requirements"),
        ("F004", "/launchers/0/samples/0/log"),
        ("S004", "/launchers/0/samples/0/log"),
    }


def test_component_too_long_for_the_file_system(tmp_path: Path) -> None:
    root = _artifact(tmp_path, {"      - log: samples/seed1.log": "      - log: " + "x" * 300})
    assert _found(root) == {("F004", "/launchers/0/samples/0/log")}


def test_directory_where_a_file_belongs_and_back(tmp_path: Path) -> None:
    root = _artifact(
        tmp_path,
        {
            "      - log: samples/seed1.log": "      - log: samples",
            "    path: code\n": "    path: code/train.py\n",
        },
    )
    assert _found(root) == {
        ("F009", "/launchers/0/samples/0/log"),
        ("F008", "/codebase/refined/path"),
    }


def test_digest_mismatch_of_a_patch_and_missing_digest(tmp_path: Path) -> None:
    root = _artifact(
        tmp_path,
        {
            "    kind: directory\n    path: code\n": (
                "    kind: patches\n    patches:\n"
                "      - {path: fix.patch, sha256: " + "0" * 63 + "a}\n"
                "      - {path: fix.patch}\n"
            ),
        },
    )
    (root / "fix.patch").write_text("--- a\n+++ b\n")
    shutil.rmtree(root / "code")  # beside a series, code/ is the derived checkout (else C008)
    assert _found(root) == {
        ("F005", "/codebase/refined/patches/0/sha256"),
        ("F007", "/codebase/refined/patches/1/sha256"),
        ("C005", "/codebase/upstream"),  # the upstream is not cached: the series is unchecked
    }


def test_paths_through_an_inner_link_dot_parts_and_skipped_directories(tmp_path: Path) -> None:
    """Paths the tree walk cannot answer alone (a link inside, ``.``, a skipped directory)
    are still resolved on disk: these are all valid."""
    root = _artifact(
        tmp_path,
        {
            "      - log: samples/seed1.log": (
                "      - log: logs/seed1.log\n"
                "        seed: 1\n"
                "        expected: {acc: 0.901}\n"
                "      - log: ./samples/./seed1.log\n"
                "        seed: 1\n"
                "        expected: {acc: 0.901}\n"
                "      - log: .git/seed1.log"
            ),
        },
    )
    (root / "logs").symlink_to("samples")
    (root / ".git").mkdir()
    shutil.copy(root / "samples" / "seed1.log", root / ".git" / "seed1.log")
    assert _found(root) == set()


def test_a_file_used_as_a_directory_and_a_missing_child(tmp_path: Path) -> None:
    root = _artifact(
        tmp_path,
        {
            "      - log: samples/seed1.log": (
                "      - log: samples/seed1.log/x.log\n"
                "        seed: 1\n"
                "        expected: {acc: 0.901}\n"
                "      - log: samples/none.log"
            ),
        },
    )
    assert _found(root) == {
        ("F004", "/launchers/0/samples/0/log"),
        ("F004", "/launchers/0/samples/1/log"),
    }


def test_a_path_through_a_directory_link_that_leaves(tmp_path: Path) -> None:
    """The path field is F003, and so is the link itself, found in the tree."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "seed1.log").write_text("accuracy: 0.9010\n")
    root = _artifact(tmp_path, {"      - log: samples/seed1.log": "      - log: logs/seed1.log"})
    (root / "logs").symlink_to(outside)
    assert _found(root) == {("F003", "/launchers/0/samples/0/log"), ("F003", "")}


def test_non_list_change_files_and_measurements_are_structural_findings(tmp_path: Path) -> None:
    """Found by the never-raises property test: ``files: true`` in a guide change and
    ``measurements: true`` in a launcher with samples are S findings, not a crash."""
    root = _artifact(
        tmp_path,
        {
            "    measurements:\n": "    measurements: true\n    unused_measurements:\n",
        },
    )
    with (root / "rra.yaml").open("a", encoding="utf-8") as handle:
        handle.write("guide:\n  path: GUIDE.md\n  changes:\n    - {summary: s, files: true}\n")
    found = _found(root)
    assert ("S003", "/launchers/0/measurements") in found
    assert ("S003", "/guide/changes/0/files") in found


def test_links_deep_in_directories_no_path_names(tmp_path: Path) -> None:
    """A link anywhere in the tree is found, however deep and wherever no manifest path
    points (run directories included): to a file outside, to a directory outside, and a
    link inside a linked-to directory's sibling; a link that stays inside is no finding."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x")
    root = _artifact(tmp_path, {})
    deep = root / "runs" / "train-s0" / "outputs" / "nested"
    deep.mkdir(parents=True)
    (root / "runs" / "train-s0" / "record.json").write_text("{}")
    (deep / "metrics.json").symlink_to(outside / "secret.txt")
    (root / "runs" / "train-s0" / "outputs" / "more").symlink_to(outside)
    (root / "runs" / "train-s1").mkdir()
    (root / "runs" / "train-s1" / "log.txt").symlink_to(root / "samples" / "seed1.log")
    found = rb.validate(root).findings
    assert {(f.code, f.path) for f in found} == {("F003", "")}
    assert sorted(Path(f.file).relative_to(root).as_posix() for f in found) == [
        "runs/train-s0/outputs/more",
        "runs/train-s0/outputs/nested/metrics.json",
    ]


def test_dot_parts_of_a_working_directory(tmp_path: Path) -> None:
    """``.`` names the directory it is in: ``.`` and ``./samples/.`` are directories; a
    ``.`` after a file is that file (F008 where a directory belongs); a link named on the
    way out is F003 even behind ``.``."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = _artifact(
        tmp_path,
        {
            "    scope: scored\n": "    scope: scored\n    workdir: .\n",
            "launchers:\n": (
                "launchers:\n"
                "  - {id: a, argv: [x], scope: smoke, workdir: ./samples/.}\n"
                "  - {id: b, argv: [x], scope: smoke, workdir: samples/seed1.log/.}\n"
                "  - {id: c, argv: [x], scope: smoke, workdir: ./out/.}\n"
                "  - {id: d, argv: [x], scope: smoke, workdir: ./none/.}\n"
            ),
        },
    )
    (root / "out").symlink_to(outside)
    assert _found(root) == {
        ("F008", "/launchers/1/workdir"),
        ("F003", "/launchers/2/workdir"),
        ("F004", "/launchers/3/workdir"),
    }
