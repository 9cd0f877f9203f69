"""One rule for what is part of an artifact: ``pack`` packs it, a distributed executor ships it.

The remote executor (workers without the client's file system) ships exactly what ``pack``
packs, plus one thing runs need: a patch series' working checkout ``code/`` (the files its tree
digest covers), in which runs execute and which workers do not materialize again. Real git
repositories, a real Dask ``LocalCluster`` for the run on a worker.
"""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest
from authoring_support import DEFECT_LINE, FIXED_LINE, make_paper_repo

from reprobridge_sdk import api
from reprobridge_sdk.authoring.codebase import import_code, record_patch
from reprobridge_sdk.authoring.pack import PackError, pack, packed_files
from reprobridge_sdk.authoring.scaffold import InitOptions, scaffold
from reprobridge_sdk.contents import artifact_files
from reprobridge_sdk.digest import iter_tree_entries
from reprobridge_sdk.errors import ArtifactError
from reprobridge_sdk.run.executors._remote import pack_artifact, shipped_files

#: Files no consumer moves: runs, build state, tool caches, byte code, version control.
LEFT_OUT = (
    "runs/r1/log.txt",
    ".rra-build/state.json",
    ".venv/bin/python",
    ".pytest_cache/v/cache/lastfailed",
    "code/__pycache__/train.cpython-311.pyc",
    "helpers/cache.pyc",
    ".git/HEAD",
)
#: Files every consumer moves: hidden files, hidden entries below the root, a hidden
#: directory the manifest names.
KEPT = (".python-version", "helpers/.settings.ini", ".tools/prepare.py")


def _litter(root: Path) -> None:
    for rel in LEFT_OUT + KEPT:
        path = root.joinpath(*rel.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


def _inside_paper(tmp_path: Path) -> Path:
    """A patch series kept inside its paper's repository (upstream ``..``), one fix recorded."""
    make_paper_repo(tmp_path / "paper")
    root = tmp_path / "paper" / "artifact"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    import_code(root, str(tmp_path / "paper"), as_="patches", force=True)
    train = root / "code" / "train.py"
    train.write_text(train.read_text("utf-8").replace(DEFECT_LINE, FIXED_LINE), "utf-8")
    record_patch(root, kind="correctness-fix", why="Seed the generator.")
    art = api.load(root)
    assert art.manifest.codebase.upstream.repository == ".."
    smoke, scored = art.manifest.launchers
    smoke.argv = ["python", "code/train.py", "--seed", "1", "--steps", "20"]
    scored.argv = ["python", "code/train.py", "--seed", "{seed}", "--tools", ".tools/prepare.py"]
    art.save()
    return root


def _tar_names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        return [member.name for member in tar.getmembers()]


def test_a_directory_artifact_ships_exactly_what_pack_packs(tmp_path: Path) -> None:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    art = api.load(root)
    art.manifest.launchers[0].argv = ["python", ".tools/prepare.py"]
    art.save()
    _litter(root)
    packed = packed_files(root)
    assert not set(LEFT_OUT) & set(packed)
    assert set(KEPT) <= set(packed)
    shipped = shipped_files(root, art.manifest, root / "runs")
    assert shipped == packed == artifact_files(root, art.manifest)
    assert sorted(_tar_names(pack_artifact(root, art.manifest, root / "runs"))) == sorted(packed)
    pack(root, tmp_path / "a.tar")
    with tarfile.open(tmp_path / "a.tar") as tar:
        assert tar.getnames() == packed


def test_a_patch_series_ships_what_pack_packs_plus_the_checkout_runs_execute_in(
    tmp_path: Path,
) -> None:
    root = _inside_paper(tmp_path)
    _litter(root)
    manifest = api.load(root).manifest
    packed = packed_files(root)
    assert not [name for name in packed if name.startswith(("code/", "runs/", ".rra-build/"))]
    assert set(KEPT) <= set(packed)
    shipped = shipped_files(root, manifest, root / "runs")
    checkout = sorted("code/" + path for _, path, _ in iter_tree_entries(root / "code"))
    assert "code/train.py" in checkout
    assert not [name for name in checkout if "/.git/" in name or name.endswith(".pyc")]
    assert sorted(set(shipped) - set(packed)) == checkout
    assert set(packed) <= set(shipped)
    assert sorted(_tar_names(pack_artifact(root, manifest, root / "runs"))) == sorted(shipped)
    # the archive adds only the bundle of the upstream and the manifest declaring it
    result = pack(root, tmp_path / "a.tar")
    with tarfile.open(tmp_path / "a.tar") as tar:
        names = tar.getnames()
    assert result.bundle is not None
    assert sorted(set(names) - set(packed)) == [result.bundle]


def test_a_runs_directory_elsewhere_under_the_root_is_not_shipped(tmp_path: Path) -> None:
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    (root / "evidence" / "r1").mkdir(parents=True)
    (root / "evidence" / "r1" / "log.txt").write_text("x\n")
    shipped = shipped_files(root, api.load(root).manifest, root / "evidence")
    assert not [name for name in shipped if name.startswith("evidence/")]


def test_a_link_out_of_the_artifact_is_c017_for_every_consumer(tmp_path: Path) -> None:
    """Hostile: a link to a secret outside the artifact travels nowhere."""
    root = tmp_path / "art"
    scaffold(root, InitOptions(id="tiny", title="Tiny"))
    (tmp_path / "secret").write_text("key\n")
    os.symlink(tmp_path / "secret", root / "code" / "secret")
    manifest = api.load(root).manifest
    with pytest.raises(ArtifactError) as shipped:
        pack_artifact(root, manifest, root / "runs")
    with pytest.raises(PackError) as packed:
        pack(root, tmp_path / "a.tar")
    assert [(f.code, f.file) for f in shipped.value.findings] == [("C017", "code/secret")]
    assert [(f.code, f.file) for f in packed.value.findings] == [("C017", "code/secret")]
    assert not (tmp_path / "a.tar").exists()


def test_a_patch_series_runs_on_a_worker_without_the_client_file_system(tmp_path: Path) -> None:
    """The shipped checkout is enough: the worker neither fetches ``..`` nor materializes."""
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    from reprobridge_sdk.run import run
    from reprobridge_sdk.run.executors import ExecutorOptions

    root = _inside_paper(tmp_path)
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        host="127.0.0.1",
    ) as cluster:
        options = ExecutorOptions(scheduler=cluster.scheduler_address, shared_fs=False)
        summary = run(
            root, ["smoke"], env_mode="current", executor="dask", executor_options=options
        )
    assert summary.exit_code == 0
    [result] = summary.results
    assert result.record.status == "succeeded"
    assert result.record.executor == "dask"
    assert result.record.code_tree_digest == api.load(root).manifest.codebase.tree_digest
