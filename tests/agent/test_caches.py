"""The compile caches a build's runs share (``OUT/.rra-build/caches``), never HOME.

Each run's HOME is empty, so a tool that caches what it compiles under HOME (Theano,
Numba, PyTorch extensions, matplotlib's font cache) starts cold in every run. The real
component here is matplotlib's font cache in the shared fixture environment: the first run
of a build writes it, the second finds it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_support import SANDBOX_PROBLEM, SKIP_SANDBOX

from reprobridge_sdk.agent._caches import CACHES, cache_env
from reprobridge_sdk.agent._smoke import run_launcher
from reprobridge_sdk.model.build import LauncherPlan


def test_each_cache_goes_to_its_folder_of_the_builds_caches(tmp_path: Path) -> None:
    env = cache_env(tmp_path / "caches", {})
    caches = (tmp_path / "caches").absolute()
    assert env == {
        "THEANO_FLAGS": f"base_compiledir={caches / 'theano'}",
        "PYTENSOR_FLAGS": f"base_compiledir={caches / 'pytensor'}",
        "AESARA_FLAGS": f"base_compiledir={caches / 'aesara'}",
        "NUMBA_CACHE_DIR": str(caches / "numba"),
        "TORCH_EXTENSIONS_DIR": str(caches / "torch_extensions"),
        "MPLCONFIGDIR": str(caches / "matplotlib"),
    }
    assert sorted(p.name for p in caches.iterdir()) == sorted(f for _, f, _ in CACHES)


def test_a_launchers_own_settings_are_kept_and_its_flags_extended(tmp_path: Path) -> None:
    given = {
        "THEANO_FLAGS": "floatX=float32,device=cpu",
        "PYTENSOR_FLAGS": "compiledir = /scratch/pt",
        "MPLCONFIGDIR": "/etc/mpl",
    }
    env = cache_env(tmp_path, given)
    assert env["THEANO_FLAGS"] == f"base_compiledir={tmp_path / 'theano'},floatX=float32,device=cpu"
    assert "PYTENSOR_FLAGS" not in env and "MPLCONFIGDIR" not in env
    assert not (tmp_path / "pytensor").exists() and not (tmp_path / "matplotlib").exists()


def test_a_cache_path_a_flag_list_cannot_hold_moves_no_flag_list_cache(tmp_path: Path) -> None:
    """A comma would split the flag list: ``base_compiledir=/a,b`` sets a flag ``b``."""
    env = cache_env(tmp_path / "a,b", {})
    assert not {"THEANO_FLAGS", "PYTENSOR_FLAGS", "AESARA_FLAGS"} & set(env)
    assert env["NUMBA_CACHE_DIR"] == str((tmp_path / "a,b" / "numba").absolute())


def test_a_compile_lock_a_killed_run_left_is_removed_before_the_next_run(
    tmp_path: Path,
) -> None:
    """Theano keeps ``lock_dir`` while it compiles; a smoke run killed at its budget leaves
    it, owned by a process id the next sandbox reuses, and the next run waited two minutes a
    module. The compiled modules stay."""
    compiledir = tmp_path / "theano" / "compiledir_Linux-x86_64-3.6"
    (compiledir / "lock_dir").mkdir(parents=True)
    (compiledir / "lock_dir" / "lock").write_text("pid 2\n")
    (compiledir / "mod.so").write_bytes(b"compiled")
    cache_env(tmp_path, {})
    assert not (compiledir / "lock_dir").exists()
    assert (compiledir / "mod.so").read_bytes() == b"compiled"


def test_a_link_a_run_wrote_in_the_caches_is_not_followed(tmp_path: Path) -> None:
    """A run may write links in the caches: a linked compile directory or lock pointing
    outside them is left alone, and what it points at is untouched."""
    outside = tmp_path / "outside"
    (outside / "lock_dir").mkdir(parents=True)
    (outside / "lock_dir" / "keep").write_text("mine")
    theano = tmp_path / "caches" / "theano"
    theano.mkdir(parents=True)
    (theano / "compiledir_linked").symlink_to(outside)
    (theano / "compiledir_real").mkdir()
    (theano / "compiledir_real" / "lock_dir").symlink_to(outside / "lock_dir")
    (theano / "a_file").write_text("x")
    cache_env(tmp_path / "caches", {})
    assert (outside / "lock_dir" / "keep").read_text() == "mine"
    assert (theano / "compiledir_real" / "lock_dir").is_symlink()


_SCRIPT = """\
import os, sys
import matplotlib
folder = matplotlib.get_cachedir()
warm = any(name.startswith("fontlist") for name in os.listdir(folder))
import matplotlib.font_manager
state = os.path.join(os.path.dirname(os.path.dirname(folder)), "report.json")
try:
    with open(state, "w") as handle:
        handle.write("{}")
    wrote = "wrote the build state"
except OSError:
    wrote = "state read-only"
home = os.environ["HOME"]
print("cache:", folder == os.environ["MPLCONFIGDIR"], warm, wrote, folder.startswith(home))
"""


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", [pytest.param(True, id="sandbox"), False])
def test_the_second_run_of_a_build_finds_the_cache_the_first_wrote(
    tmp_path: Path, fixture_python: Path, sandbox: bool
) -> None:
    """Two smoke runs of one build share the font cache; a run of another build starts
    cold. In the sandbox a run writes the cache folder and nothing else of the build's
    state."""
    # where the sandbox cannot run, its half skips, except in CI, which requires it
    if sandbox and SKIP_SANDBOX:
        pytest.skip(f"the sandbox cannot run here: {SANDBOX_PROBLEM}")
    artifacts = [tmp_path / "one", tmp_path / "two"]
    for artifact in artifacts:
        (artifact / "code").mkdir(parents=True)
        (artifact / "code" / "train.py").write_text(_SCRIPT, "utf-8")
        (artifact / ".rra-build").mkdir()
        (artifact / ".rra-build" / "report.json").write_text('{"kept": true}', "utf-8")
    smoke = LauncherPlan(id="smoke", script="train.py", argv=["python", "train.py"], scope="smoke")

    def once(artifact: Path) -> str:
        outcome = run_launcher(
            smoke,
            artifact / "code",
            fixture_python,
            sandbox=sandbox,
            visible=artifact,
            caches=artifact / ".rra-build" / "caches",
        )
        assert outcome.exit_status == 0, outcome.stderr
        return outcome.stdout.strip()

    first, second, other = once(artifacts[0]), once(artifacts[0]), once(artifacts[1])
    state = "state read-only" if sandbox else "wrote the build state"
    assert first.startswith(f"cache: True False {state}")
    assert second.startswith(f"cache: True True {state}")
    assert other.startswith(f"cache: True False {state}")  # another build's cache is its own
    assert first.endswith("False")  # not under the run's HOME
    if sandbox:
        report = artifacts[0] / ".rra-build" / "report.json"
        assert json.loads(report.read_text("utf-8")) == {"kept": True}
