"""Every command that needs an optional extra gives E015 when the extra is missing, not an
internal error (exit 3) or a traceback.

The extra is made missing for real, in a real ``reprobridge`` subprocess: a
``sitecustomize`` module on ``PYTHONPATH`` puts a finder first in ``sys.meta_path`` that
refuses the extra's package and its submodules, so their import raises
``ModuleNotFoundError`` as on a machine without them (in the command's own child processes
too). The table of commands is checked against the extras the distribution declares, so a new
extra without a case here fails. The main job (validate, run, audit) needs no extra: it works
with every agent-only package blocked.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import metadata
from pathlib import Path

import pytest
import yaml
from toy_study import make_artifact

from reprobridge_sdk import DISTRIBUTION

SITECUSTOMIZE = """\
import os, sys

class _Blocked:
    \"\"\"Refuses the named packages and their submodules, as a machine without them.\"\"\"

    names = {n for n in os.environ.get("REPROBRIDGE_TEST_HIDE", "").split(",") if n}

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname.partition(".")[0] in cls.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None

sys.meta_path.insert(0, _Blocked)
"""
#: Extras that no command needs on its own: ``all`` gathers the others, ``test`` is ours.
NOT_COMMANDS = {"all", "test"}


@dataclass(frozen=True)
class Case:
    extra: str
    command: str  # the command's name, for the test's id
    hidden: str  # the module made unimportable
    argv: Callable[[Path], list[str]]  # the command, given a scratch directory
    status: int  # 2: a missing extra stops every command
    env: tuple[tuple[str, str], ...] = ()


def _toy(work: Path, *, single_seed: bool = False) -> str:
    root = make_artifact(work / "toy")
    if single_seed:  # an MLflow run is one observation: a task over one seed
        data = yaml.safe_load((root / "rra.yaml").read_text())
        data["tasks"][0]["statistic"]["seeds"] = 1
        (root / "rra.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return str(root)


def _to_lock(work: Path) -> str:
    root = work / "lockable"
    root.mkdir()
    (root / "rra.yaml").write_text(
        'rra_version: "1.0"\nenvironment:\n'
        f'  python: "{sys.version_info[0]}.{sys.version_info[1]}"\n'
        "  requirements: requirements.in\n"
    )
    (root / "requirements.in").write_text("six\n")
    return str(root)


def _with_data(work: Path, scheme: str) -> str:
    root = work / scheme
    root.mkdir()
    (root / "rra.yaml").write_text(
        'rra_version: "1.0"\nenvironment:\n  python: "3.11"\n  data:\n'
        f'    - id: w\n      source: {{url: "{scheme}://bucket/key.bin"}}\n'
        f"      sha256: {hashlib.sha256(b'x').hexdigest()}\n      size: 1\n"
        "      destination: data/w.bin\n"
    )
    return str(root)


def _to_build(work: Path) -> list[str]:
    source = work / "repo"
    source.mkdir()
    (source / "main.py").write_text("print 'accuracy', 0.9\n")  # Python 2: the agent's case
    (work / "claims.yaml").write_text("claims: []\n")
    return ["build", str(source), "--claims", str(work / "claims.yaml"), "-o", str(work / "out")]


CASES = [
    Case("agent", "build", "fissix", _to_build, 2),
    Case(
        "pip-tools",
        "lock",
        "piptools",
        lambda w: ["lock", _to_lock(w), "--resolver", "pip-tools"],
        2,
    ),
    Case("signing", "keys generate", "cryptography", lambda w: ["keys", "generate", "alice"], 2),
    Case(
        "signing",
        "run --sign",
        "cryptography",
        lambda w: ["run", _toy(w), "scored", "--env", "current", "--sign"],
        2,
        env=(("REPROBRIDGE_SIGNING_KEY", "a key the missing extra never reads"),),
    ),
    Case(
        "dask",
        "run --executor dask-local",
        "distributed",
        lambda w: ["run", _toy(w), "scored", "--env", "current", "--executor", "dask-local"],
        2,
    ),
    Case(
        "slurm",
        "run --executor slurm",
        "dask_jobqueue",
        lambda w: ["run", _toy(w), "scored", "--env", "current", "--executor", "slurm"],
        2,
    ),
    Case("s3", "data fetch", "s3fs", lambda w: ["data", "fetch", _with_data(w, "s3")], 2),
    Case(
        "gcs",
        "data fetch --exit-zero",
        "gcsfs",
        lambda w: ["data", "fetch", _with_data(w, "gs"), "--exit-zero"],
        2,
    ),
    Case(
        "ro-crate",
        "export ro-crate",
        "rocrate",
        lambda w: ["export", "ro-crate", _toy(w), "-o", str(w / "c")],
        2,
    ),
    Case(
        "mlflow",
        "references import-mlflow",
        "mlflow",
        lambda w: [
            "references",
            "import-mlflow",
            str(w / "mlruns"),
            "-C",
            _toy(w, single_seed=True),
            "--experiment",
            "x",
            "--metric",
            "accuracy=acc",
        ],
        2,
    ),
]


def _without(
    hidden: str, argv: list[str], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    shim = cwd / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join(p for p in (str(shim), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-m", "reprobridge", *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        timeout=300,
        env={**os.environ, **env, "PYTHONPATH": path, "REPROBRIDGE_TEST_HIDE": hidden},
    )


def test_keys_generate_without_the_signing_extra_is_e015(tmp_path: Path) -> None:
    proc = _without("cryptography", ["keys", "generate", "alice"], tmp_path, {})
    assert proc.returncode == 2, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "E015 error signing needs the optional extra 'signing'" in proc.stdout
    assert "[/extras/signing]\n    hint: pip install 'reprobridge[signing]'" in proc.stdout
    assert "E015" not in proc.stderr  # printed once
    assert not (tmp_path / "alice.key").exists() and not (tmp_path / "alice.pub").exists()


def test_every_extra_has_a_command_case() -> None:
    extras = set(metadata(DISTRIBUTION).get_all("Provides-Extra") or [])
    assert {case.extra for case in CASES} == extras - NOT_COMMANDS


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c.extra}-{c.command.replace(' ', '-')}" for c in CASES]
)
def test_a_command_without_its_extra_is_e015(case: Case, tmp_path: Path) -> None:
    proc = _without(case.hidden, case.argv(tmp_path), tmp_path, dict(case.env))
    assert proc.returncode == case.status, proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "E015" in proc.stdout
    assert f"needs the optional extra {case.extra!r}" in proc.stdout
    assert f"hint: pip install 'reprobridge[{case.extra}]'" in proc.stdout


def test_the_hidden_module_is_really_missing(tmp_path: Path) -> None:
    """The shim's finder makes the package unimportable even though it is installed."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SITECUSTOMIZE)
    probe = "import importlib.util as u; import fissix.pgen2"
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(shim), "REPROBRIDGE_TEST_HIDE": "fissix"},
    )
    assert proc.returncode == 1
    assert "ModuleNotFoundError: No module named 'fissix'" in proc.stderr
    assert subprocess.run([sys.executable, "-c", probe], check=False, timeout=60).returncode == 0


def test_build_without_the_agent_extra_does_no_work(tmp_path: Path) -> None:
    proc = _without("fissix", _to_build(tmp_path), tmp_path, {})
    assert proc.returncode == 2, proc.stderr
    assert "E015" in proc.stdout and "build needs the optional extra 'agent'" in proc.stdout
    assert "hint: pip install 'reprobridge[agent]'" in proc.stdout
    assert not (tmp_path / "out").exists()


#: The packages only the build agent imports: the lean install has none of them.
AGENT_ONLY = "fissix"


def test_the_package_imports_without_the_agent_only_packages(tmp_path: Path) -> None:
    probe = (
        "import reprobridge_sdk, reprobridge_sdk.api, reprobridge_sdk.audit, "
        "reprobridge_sdk.run, reprobridge_sdk.validation, reprobridge_sdk.agent.pipeline; "
        "import sys; print(sorted(m for m in sys.modules if m.startswith('fissix')))"
    )
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(SITECUSTOMIZE)
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(shim), "REPROBRIDGE_TEST_HIDE": AGENT_ONLY},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_validate_run_and_audit_work_without_the_agent_only_packages(tmp_path: Path) -> None:
    toy = _toy(tmp_path)
    validated = _without(AGENT_ONLY, ["validate", toy], tmp_path, {})
    assert validated.returncode == 0, validated.stdout + validated.stderr
    ran = _without(AGENT_ONLY, ["run", toy, "scored", "--env", "current"], tmp_path, {})
    assert ran.returncode == 0, ran.stderr
    runs = sorted(p.name for p in (Path(toy) / "runs").glob("scored-*"))
    assert len(runs) == 3, runs  # the scored launcher's three seeds
    audited = _without(AGENT_ONLY, ["audit", toy, "--format", "json"], tmp_path, {})
    assert audited.returncode == 0, audited.stderr
    report = json.loads(audited.stdout)
    assert {t["attempts"][0]["verdict"] for t in report["tasks"]} == {"compatible"}
