"""What each command imports: a command loads only what its path needs.

Each case runs the real command line in a subprocess under ``python -X importtime`` and reads
the names of the modules it imported from that trace (names only, never times: speed is
measured by ``benchmarks/bench_startup.py``). The rules:

- ``reprobridge --help``, every command's ``--help`` and shell completion (of a command name,
  of an option) load neither the YAML reader, nor pydantic and the format's models, nor
  numpy/scipy;
- extraction as the runner and the auditor call it (``extract_value`` in a bare process)
  loads no model, no YAML, no plugin registry (``importlib.metadata``: read only when a
  plugin's extractor kind is asked for) and none of ``statistics``, ``csv``,
  ``concurrent.futures`` (loaded when a value is aggregated, a CSV read, files hashed in
  parallel);
- ``extract`` and ``validate`` never load numpy/scipy, jsonschema or referencing (the
  schema layer is the project's own evaluator), nor the auditor;
- ``extract --log`` of one log loads no pydantic and no model (the launcher read as plain
  data, ``run/recorded.py``);
- ``extract --run`` of a recorded run loads no pydantic and no model (the record and the
  launcher read as plain data, ``run/recorded.py``), no API, no YAML writer, no validation,
  no TOML reader (no configuration file) and no ``statistics`` (one value has no mean to
  compute);
- ``validate`` loads no pydantic (it checks the plain data), and reads the plugins' entry
  points (``importlib.metadata``) for its ``--format`` choices only when they are asked for
  (help, completion, a format that is not built in);
- unpacking an archive (``unpack``, and ``validate`` given one) loads none of what only
  packing uses: the API, pydantic and the models, and (for an artifact that is no patch
  series) the checkout;
- ``audit`` never loads numpy or scipy (the Student-t quantile and tails are the project's
  own): an artifact whose task has three reference observations is audited, its interval
  and score computed, without them (the positive control: the trace does see the auditor's
  Student-t module).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "digits-logreg"

#: Modules never loaded for help text.
HEAVY = ("yaml", "pydantic", "pydantic_core", "reprobridge_sdk.model", "numpy", "scipy")
#: Modules no extraction or validation path needs.
NEVER_FOR_CHECKS = ("numpy", "scipy", "jsonschema", "referencing", "reprobridge_sdk.audit")

MANIFEST = """
rra_version: "1.0"
artifact: {id: startup, title: Start-up, license: MIT, paper: {title: Start-up}}
codebase:
  upstream:
    repository: "https://example.org/b.git"
    commit: "0123456789abcdef0123456789abcdef01234567"
  refined: {kind: directory, path: code}
environment: {python: "PYVER"}
guide: {path: GUIDE.md}
tasks:
  - id: t
    dataset: d
    metric: m
    published: {value: 0.5}
    direction: higher
    kind: fullREFERENCE
launchers:
  - id: trivial
    argv: [python, -c, "print('acc=0.5')"]
    seeds: [0]
    scope: scored
    measurements: [{task: t, extract: {kind: regex, pattern: 'acc=([0-9.]+)'}}]
"""

REFERENCE = """
    reference:
      observations:
        - {value: 0.49, provenance: {source: test, date: "2026-01-01"}}
        - {value: 0.50, provenance: {source: test, date: "2026-01-01"}}
        - {value: 0.51, provenance: {source: test, date: "2026-01-01"}}"""


def _imported(
    *argv: str,
    module: bool = True,
    expect: tuple[int, ...] = (0,),
    env: dict[str, str] | None = None,
) -> set[str]:
    """The names of every module imported by ``python -X importtime -m reprobridge_sdk ARGV``
    (or ``python -X importtime -c ARGV[0]`` with ``module=False``), with ``env`` added to the
    environment."""
    head = ["-m", "reprobridge_sdk"] if module else ["-c"]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *head, *argv],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode in expect, done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "[us]" not in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "reprobridge_sdk" in names or not module  # the trace was read
    return names


def _loaded(names: set[str], packages: tuple[str, ...]) -> list[str]:
    """The ``packages`` (or any of their submodules) among ``names``."""
    return sorted(p for p in packages if any(n == p or n.startswith(p + ".") for n in names))


def _artifact(root: Path, *, reference: bool) -> Path:
    (root / "code").mkdir(parents=True)
    (root / "code" / "README").write_text("startup\n")
    (root / "GUIDE.md").write_text("# Start-up\n")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    text = MANIFEST.replace("PYVER", version).replace("REFERENCE", REFERENCE if reference else "")
    (root / "rra.yaml").write_text(text)
    (root / "sample.log").write_text("step 1\nacc=0.5\n")
    return root


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("extract", "--help"),
        ("validate", "--help"),
        ("run", "--help"),
        ("audit", "--help"),
        ("lock", "--help"),
        ("digest", "--help"),
    ],
)
def test_help_loads_no_reader_model_or_science(argv: tuple[str, ...]) -> None:
    assert _loaded(_imported(*argv), HEAVY) == []


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [
        ("reprobridge ex", "1", "plain,extract"),
        ("reprobridge extract --sa", "2", "plain,--samples"),
    ],
)
def test_shell_completion_answers_without_reader_model_or_science(
    words: str, cword: str, expected: str
) -> None:
    env = {"COMP_WORDS": words, "COMP_CWORD": cword, "_REPROBRIDGE_COMPLETE": "bash_complete"}
    done = subprocess.run(
        [sys.executable, "-m", "reprobridge_sdk"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, **env},
    )
    assert expected in done.stdout.splitlines()
    assert _loaded(_imported(env=env), HEAVY) == []


def test_extraction_loads_only_its_own_needs() -> None:
    names = _imported("from reprobridge_sdk.extract.extraction import extract_value", module=False)
    assert "reprobridge_sdk.extract.extraction" in names
    never = (*HEAVY, "importlib.metadata", "statistics", "csv", "concurrent.futures")
    assert _loaded(names, never) == []


def test_extract_on_a_log_loads_no_model_science_schema_or_auditor(tmp_path: Path) -> None:
    artifact = _artifact(tmp_path / "a", reference=True)
    log = str(artifact / "sample.log")
    names = _imported("extract", str(artifact), "--launcher", "trivial", "--log", log)
    assert "reprobridge_sdk.extract.extraction" in names
    assert "reprobridge_sdk.run.recorded" in names  # the plain reading ran
    models = ("pydantic", "pydantic_core", "reprobridge_sdk.model", "reprobridge_sdk.api")
    assert _loaded(names, (*NEVER_FOR_CHECKS, *models, "reprobridge_sdk.validation")) == []


def test_extract_of_a_recorded_run_loads_no_model(tmp_path: Path) -> None:
    artifact = _artifact(tmp_path / "a", reference=True)
    runs = tmp_path / "runs"
    run = ["run", str(artifact), "trivial", "--env", "current", "--runs-dir", str(runs)]
    subprocess.run([sys.executable, "-m", "reprobridge_sdk", *run], check=True, timeout=120)
    (recorded,) = (p for p in runs.iterdir() if (p / "record.json").is_file())
    names = _imported("extract", str(artifact), "--run", str(recorded))
    assert "reprobridge_sdk.run.recorded" in names  # the plain reading ran
    not_needed = (
        "pydantic",
        "pydantic_core",
        "reprobridge_sdk.model",
        "reprobridge_sdk.api",
        "reprobridge_sdk.io.yamlio",
        "reprobridge_sdk.validation",
        "tomllib",
        "statistics",
    )
    assert _loaded(names, (*NEVER_FOR_CHECKS, *not_needed)) == []


def test_validate_loads_no_model_science_or_auditor() -> None:
    names = _imported("validate", str(EXAMPLE))
    assert "reprobridge_sdk.validation.structure" in names
    assert _loaded(names, (*NEVER_FOR_CHECKS, "pydantic", "reprobridge_sdk.model")) == []
    assert "importlib.metadata" not in names  # no plugin format asked for: no entry point read


def test_validate_help_reads_the_plugin_formats() -> None:
    """The help lists the plugins' report formats: their entry points are read for it."""
    assert "importlib.metadata" in _imported("validate", "--help")


def test_audit_computes_intervals_without_numpy_or_scipy(tmp_path: Path) -> None:
    without = _imported("audit", str(_artifact(tmp_path / "a", reference=False)), expect=(1,))
    assert "reprobridge_sdk.audit.auditor" in without
    assert _loaded(without, ("scipy", "numpy")) == []
    with_reference = _imported("audit", str(_artifact(tmp_path / "b", reference=True)), expect=(1,))
    assert "reprobridge_sdk.audit._studentt" in with_reference
    assert _loaded(with_reference, ("scipy", "numpy")) == []


def test_an_archive_is_unpacked_and_validated_without_the_models(tmp_path: Path) -> None:
    archive = tmp_path / "example.tar.gz"
    pack = [sys.executable, "-m", "reprobridge_sdk", "pack", str(EXAMPLE), "-o", str(archive)]
    subprocess.run(pack, check=True, capture_output=True, timeout=120)
    only_packing = ("pydantic", "reprobridge_sdk.model", "reprobridge_sdk.api")
    validated = _imported("validate", str(archive))
    assert "reprobridge_sdk.authoring.pack" in validated  # the archive was unpacked
    assert _loaded(validated, (*NEVER_FOR_CHECKS, *only_packing)) == []
    unpacked = _imported("unpack", str(archive), str(tmp_path / "out"))
    assert "reprobridge_sdk.validation.structure" in unpacked  # and validated
    assert _loaded(unpacked, (*only_packing, "reprobridge_sdk.checkout")) == []


def test_env_create_loads_the_environment_model_alone(tmp_path: Path) -> None:
    """``env create`` reads the manifest's ``environment`` part with its model: importing it
    builds no other model (the model package's names load on first use), and stamping the
    cache marker's time does not import the evidence models. An artifact without a lock
    stops at E012 after the part is read, which is all this needs."""
    root = _artifact(tmp_path / "artifact", reference=False)
    names = _imported("env", "create", str(root), expect=(1, 2))
    assert "reprobridge_sdk.model.environment" in names  # the positive control
    others = ("evidence", "launcher", "manifest", "task", "guide", "codebase", "artifact")
    assert _loaded(names, tuple(f"reprobridge_sdk.model.{name}" for name in others)) == []
