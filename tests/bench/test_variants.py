"""The workspace variants of ``reprobridge bench``: what each holds, what it holds back, and
that they are written byte for byte the same from the same artifact."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from toy_study import make_artifact

from reprobridge_sdk.bench.variants import (
    CLAIMS_NAME,
    EXPERT_NAME,
    RECORD_NAME,
    VARIANTS,
    WORKSPACE_DIR,
    generate_variants,
)
from reprobridge_sdk.digest import file_sha256
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.model import Manifest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits-logreg"


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under ``root``: a file's bytes, a link's target."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[name] = f"-> {path.readlink()}"
        elif path.is_file():
            out[name] = path.read_bytes()
    return out


def _manifest(out: Path, variant: str) -> dict:
    return yaml.safe_load((out / variant / WORKSPACE_DIR / "rra.yaml").read_text("utf-8"))


@pytest.fixture(scope="module")
def example_variants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("variants") / "out"
    generate_variants(EXAMPLE, out)
    return out


def test_every_variant_is_written_twice_byte_for_byte(
    example_variants: Path, tmp_path: Path
) -> None:
    again = tmp_path / "elsewhere" / "out"
    generate_variants(EXAMPLE, again)
    first, second = _tree(example_variants), _tree(again)
    assert sorted(first) == sorted(second)
    assert first == second
    assert {name.split("/")[0] for name in first} == set(VARIANTS)


def test_each_record_lists_every_file_with_its_digest(example_variants: Path) -> None:
    for variant in VARIANTS:
        record = json.loads((example_variants / variant / RECORD_NAME).read_text("utf-8"))
        workspace = example_variants / variant / WORKSPACE_DIR
        on_disk = sorted(
            p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if p.is_file()
        )
        assert [f["path"] for f in record["files"]] == on_disk
        for item in record["files"]:
            assert item["sha256"] == file_sha256(workspace / item["path"])
        assert record["variant"] == variant
        assert record["artifact"] == "digits-logreg"
        assert record["manifest_sha256"] == file_sha256(EXAMPLE / "rra.yaml")


def test_no_variant_holds_runs_or_the_reference_observations(example_variants: Path) -> None:
    for variant in VARIANTS:
        workspace = example_variants / variant / WORKSPACE_DIR
        assert not (workspace / "runs").exists()
        for path in workspace.rglob("*.yaml"):
            text = path.read_text("utf-8")
            assert "observations" not in text
            assert "96.8444" not in text  # the first reference observation of logreg-accuracy
    refined = _manifest(example_variants, "refined")
    assert all("reference" not in task for task in refined["tasks"])
    record = json.loads((example_variants / "refined" / RECORD_NAME).read_text("utf-8"))
    held = {item["what"] for item in record["held_back"]}
    assert held == {"#/tasks/0/reference", "#/tasks/1/reference", "#/tasks/2/reference"}


def test_refined_is_a_valid_manifest_that_keeps_the_comments(example_variants: Path) -> None:
    workspace = example_variants / "refined" / WORKSPACE_DIR
    Manifest.model_validate(_manifest(example_variants, "refined"))
    assert "# The bundled example artifact of ReproBridge" in (workspace / "rra.yaml").read_text()
    assert (workspace / "code" / "train.py").read_bytes() == (
        EXAMPLE / "code" / "train.py"
    ).read_bytes()
    assert (workspace / "GUIDE.md").is_file()
    assert (workspace / "environment" / "requirements.lock").is_file()


def test_each_mask_removes_its_part_and_only_it(example_variants: Path) -> None:
    env = _manifest(example_variants, "masked-environment")
    assert "lock" not in env["environment"] and "data" not in env["environment"]
    assert all("data" not in launcher for launcher in env["launchers"])
    assert not (
        example_variants / "masked-environment" / WORKSPACE_DIR / "environment/requirements.lock"
    ).exists()
    assert env["launchers"][1]["argv"][0] == "python"

    launchers = _manifest(example_variants, "masked-launchers")
    for launcher in launchers["launchers"]:
        assert not {"argv", "workdir", "env", "seeds", "timeout"} & set(launcher)
        assert launcher["measurements"] and launcher["landmarks"]
    assert "lock" in launchers["environment"]

    extraction = _manifest(example_variants, "masked-extraction")
    for launcher in extraction["launchers"]:
        assert "measurements" not in launcher and "samples" not in launcher
        assert launcher["argv"] and launcher["landmarks"]
    assert not (example_variants / "masked-extraction" / WORKSPACE_DIR / "samples").exists()

    guide = _manifest(example_variants, "masked-guide")
    assert "guide" not in guide
    assert not (example_variants / "masked-guide" / WORKSPACE_DIR / "GUIDE.md").exists()
    assert guide["launchers"][1]["measurements"]


def test_expert_holds_the_rendered_scored_commands(example_variants: Path) -> None:
    commands = json.loads(
        (example_variants / "expert" / WORKSPACE_DIR / EXPERT_NAME).read_text("utf-8")
    )
    by_task = {item["task"]: item for item in commands["tasks"]}
    assert set(by_task) == {"logreg-accuracy", "logreg-macro-f1", "knn-accuracy"}
    first = by_task["logreg-accuracy"]
    assert first["launcher"] == "scored" and first["workdir"] == "code"
    assert [run["seed"] for run in first["runs"]] == [0, 1, 2, 3, 4]
    assert first["runs"][0]["argv"] == [
        "python",
        "train.py",
        "--seed",
        "0",
        "--out",
        "../runs/scored-seed0/metrics.json",
    ]


def test_raw_holds_the_upstream_tree_and_the_claims(example_variants: Path) -> None:
    workspace = example_variants / "raw" / WORKSPACE_DIR
    record = json.loads((example_variants / "raw" / RECORD_NAME).read_text("utf-8"))
    claims = json.loads((workspace / CLAIMS_NAME).read_text("utf-8"))
    assert [c["task"] for c in claims["claims"]] == [
        "logreg-accuracy",
        "logreg-macro-f1",
        "knn-accuracy",
    ]
    first = claims["claims"][0]
    assert first["published"] == {"value": 96.9, "unit": "%"}
    assert first["direction"] == "higher" and first["location"]["table"] == "1"
    assert not (workspace / "rra.yaml").exists() and not (workspace / "GUIDE.md").exists()
    assert record["commit"] == "4bda317396f43dfec09d59688ed7360839b7ee91"
    # The upstream is the repository that encloses the example: a local fetch when its
    # history is here, the refined code otherwise (a shallow clone); the record says which.
    if record["source"] == "upstream":
        original = workspace / "examples" / "digits-logreg" / "code" / "train.py"
        assert "multi_class" in original.read_text("utf-8")  # the upstream script, unfixed
    else:
        assert record["source"] == "refined-code"
    held = {item["what"] for item in record["held_back"]}
    assert {"rra.yaml", "GUIDE.md", "environment/requirements.lock"} <= held


def test_raw_without_a_reachable_upstream_uses_the_refined_code(tmp_path: Path) -> None:
    """The toy study's upstream is a network address: offline, the refined code stands in."""
    toy = make_artifact(tmp_path / "toy")
    (toy / "runs" / "r1").mkdir(parents=True)
    (toy / "runs" / "r1" / "log.txt").write_text("test accuracy: 90.0000\n")
    records = {r.variant: r for r in generate_variants(toy, tmp_path / "out")}
    raw = records["raw"]
    assert raw.source == "refined-code"
    assert any("refined code" in note for note in raw.notes)
    assert sorted(f.path for f in raw.files) == [CLAIMS_NAME, "train.py"]
    for variant, record in records.items():
        if variant != "raw":
            assert "runs/" in {item.what for item in record.held_back}
        assert not (tmp_path / "out" / variant / WORKSPACE_DIR / "runs").exists()


def test_links_inside_the_artifact_stay_links(tmp_path: Path) -> None:
    toy = make_artifact(tmp_path / "toy")
    (toy / "docs").mkdir()
    (toy / "docs" / "guide-link.md").symlink_to("../GUIDE.md")
    records = {r.variant: r for r in generate_variants(toy, tmp_path / "out", ["refined"])}
    entry = next(f for f in records["refined"].files if f.path == "docs/guide-link.md")
    assert entry.link == "../GUIDE.md" and entry.sha256 is None
    assert (tmp_path / "out/refined/workspace/docs/guide-link.md").is_symlink()


def test_an_unknown_variant_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        generate_variants(EXAMPLE, tmp_path / "out", ["refined", "masked-everything"])
    assert caught.value.findings[0].code == "N004"
    assert not (tmp_path / "out").exists()


def test_a_folder_that_is_not_a_variant_is_never_replaced(tmp_path: Path) -> None:
    precious = tmp_path / "out" / "refined"
    precious.mkdir(parents=True)
    (precious / "thesis.tex").write_text("years of work")
    with pytest.raises(UsageError, match="not replacing"):
        generate_variants(EXAMPLE, tmp_path / "out", ["refined"])
    assert (precious / "thesis.tex").read_text() == "years of work"
    # an earlier generation is replaced whole
    shutil.rmtree(precious)
    generate_variants(EXAMPLE, tmp_path / "out", ["refined"])
    (tmp_path / "out" / "refined" / WORKSPACE_DIR / "stray.txt").write_text("agent output")
    generate_variants(EXAMPLE, tmp_path / "out", ["refined"])
    assert not (tmp_path / "out" / "refined" / WORKSPACE_DIR / "stray.txt").exists()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "bench", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_the_command_writes_the_variants_asked_for(tmp_path: Path) -> None:
    done = _cli(
        "variants",
        str(EXAMPLE),
        "-o",
        str(tmp_path / "o"),
        "--variants",
        "refined,expert",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    assert [r["variant"] for r in records] == ["refined", "expert"]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["expert", "refined"]
    bad = _cli("variants", str(EXAMPLE), "-o", str(tmp_path / "p"), "--variants", "nope")
    assert bad.returncode == 2
    assert "N004" in bad.stdout and "unknown variant" in bad.stdout
    assert "Traceback" not in bad.stderr


def _member_sha256(archive: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    """A file's SHA-256, or a link's: that of its target's text."""
    if member.issym():
        return hashlib.sha256(member.linkname.encode("utf-8")).hexdigest()
    handle = archive.extractfile(member)
    assert handle is not None
    return hashlib.sha256(handle.read()).hexdigest()


def test_a_packed_archive_gives_the_same_workspaces(example_variants: Path, tmp_path: Path) -> None:
    """An archive is unpacked for the command; the refined workspace is the folder's, byte for
    byte. Unpacked elsewhere, the example's '..' upstream names no repository: raw says what
    stands in for it (the bundle, when pack carried one; else the refined code)."""
    archive = tmp_path / "digits.tar.gz"
    packed = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk", "pack", str(EXAMPLE), "-o", str(archive)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert packed.returncode == 0, packed.stderr
    done = _cli(
        "variants",
        str(archive),
        "-o",
        str(tmp_path / "o"),
        "--variants",
        "raw,refined",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    records = {r["variant"]: r for r in json.loads(done.stdout)}
    assert _tree(tmp_path / "o" / "refined") == {
        name.removeprefix("refined/"): data
        for name, data in _tree(example_variants).items()
        if name.startswith("refined/")
    }
    # the records name the artifact by digests anyone can recompute from the archive alone
    # (spec: one line '<sha256>  <path>' per file pack carries, in byte order of the paths)
    with tarfile.open(archive) as packed_files:
        members = sorted(
            (m for m in packed_files.getmembers() if m.isfile() or m.issym()),
            key=lambda m: m.name.encode("utf-8"),
        )
        text = "".join(f"{_member_sha256(packed_files, m)}  {m.name}\n" for m in members)
        lines = text.encode("utf-8")
        manifest = packed_files.extractfile("rra.yaml")
        assert manifest is not None
        manifest_sha256 = hashlib.sha256(manifest.read()).hexdigest()
    for record in records.values():
        assert record["artifact_files_sha256"] == hashlib.sha256(lines).hexdigest()
        assert record["manifest_sha256"] == manifest_sha256
    folder = json.loads((example_variants / "refined" / RECORD_NAME).read_text("utf-8"))
    assert folder["artifact_files_sha256"] == records["refined"]["artifact_files_sha256"]
    raw_files = _tree(tmp_path / "o" / "raw" / WORKSPACE_DIR)
    assert CLAIMS_NAME in raw_files
    if records["raw"]["source"] == "refined-code":
        assert raw_files["train.py"] == (EXAMPLE / "code" / "train.py").read_bytes()
    else:
        assert records["raw"]["source"] == "upstream-bundle"
        assert "examples/digits-logreg/code/train.py" in raw_files
