"""The repository's own distribution: its metadata read statically, hostile metadata and
places, and the fix rule ``own-distribution-metadata`` on real tracebacks of real runs
(the system interpreter, with ``PYTHONPATH`` as a launcher sets it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reprobridge_sdk.agent.fixes import Fix, classify, propose
from reprobridge_sdk.agent.own_distribution import (
    UNKNOWN_VERSION,
    OwnDistribution,
    own_distribution,
    place_problem,
)
from reprobridge_sdk.model.build import BuildFinding

_READS_OWN = (
    "from importlib.metadata import version\n\n__version__ = version(__name__)\nSECRET = 41\n"
)
_SCRIPT = "import mypkg\n\nprint('version', mypkg.__version__)\nprint('answer', mypkg.SECRET + 1)\n"


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return root


def _codes(findings: list[BuildFinding]) -> list[tuple[str, str]]:
    return [(f.code, f.severity) for f in findings]


# --------------------------------------------------------------------------- reading


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"pyproject.toml": '[project]\nname = "My.Pkg"\nversion = "1.2"\n'},
            ("My.Pkg", "1.2", "pyproject.toml [project]", "pyproject.toml [project] version"),
        ),
        (
            {"pyproject.toml": '[tool.poetry]\nname = "mypkg"\nversion = "0.5.11dev"\n'},
            (
                "mypkg",
                "0.5.11.dev0",
                "pyproject.toml [tool.poetry]",
                "pyproject.toml [tool.poetry] version",
            ),
        ),
        (
            {
                "setup.cfg": "[metadata]\nname = mypkg\nversion = attr: mypkg.__version__\n",
                "mypkg/__init__.py": '__version__ = "2.0.1"\n',
            },
            (
                "mypkg",
                "2.0.1",
                "setup.cfg [metadata]",
                "mypkg/__init__.py __version__ (setup.cfg [metadata] attr)",
            ),
        ),
        (
            {
                "setup.cfg": "[metadata]\nname = mypkg\nversion = file: VERSION\n",
                "VERSION": "3.1\n",
            },
            ("mypkg", "3.1", "setup.cfg [metadata]", "VERSION"),
        ),
        (
            {
                "setup.py": "from setuptools import setup\nNAME = 'mypkg'\n"
                "setup(name=NAME, version='0.1', packages=['mypkg'])\n"
            },
            ("mypkg", "0.1", "setup.py setup()", "setup.py setup() version"),
        ),
        (
            {  # setuptools_scm: dynamic, no pointer; the package's literal is used
                "pyproject.toml": '[project]\nname = "mypkg"\ndynamic = ["version"]\n',
                "src/mypkg/__init__.py": '__version__ = "4.0"\n',
            },
            (
                "mypkg",
                "4.0",
                "pyproject.toml [project]",
                "src/mypkg/__init__.py __version__ (its package)",
            ),
        ),
        (
            {  # an annotated literal counts too
                "pyproject.toml": '[project]\nname = "mypkg"\ndynamic = ["version"]\n',
                "mypkg/__init__.py": '__version__: str = "4.1"\n',
            },
            (
                "mypkg",
                "4.1",
                "pyproject.toml [project]",
                "mypkg/__init__.py __version__ (its package)",
            ),
        ),
        (
            {  # poetry-dynamic-versioning: the literal is a placeholder; nothing else says
                "pyproject.toml": '[tool.poetry]\nname = "mypkg"\nversion = "0.0.0"\n'
                "[tool.poetry-dynamic-versioning]\nenable = true\n",
                "mypkg/__init__.py": "from ._version import __version__\n",
            },
            ("mypkg", UNKNOWN_VERSION, "pyproject.toml [tool.poetry]", f"none: {UNKNOWN_VERSION}"),
        ),
        (
            {  # a version computed by setup.py is never run
                "setup.py": "from setuptools import setup\nsetup(name='mypkg', version=get())\n"
            },
            ("mypkg", UNKNOWN_VERSION, "setup.py setup()", f"none: {UNKNOWN_VERSION}"),
        ),
    ],
    ids=[
        "project",
        "poetry",
        "cfg-attr",
        "cfg-file",
        "setup-py",
        "scm",
        "annotated",
        "poetry-dynamic",
        "setup-call",
    ],
)
def test_name_and_version_are_read_without_running_anything(
    tmp_path: Path, files: dict[str, str], expected: tuple[str, str, str, str]
) -> None:
    distribution, findings = own_distribution(_repo(tmp_path, files))
    assert findings == []
    assert distribution is not None
    got = (
        distribution.name,
        distribution.version,
        distribution.source,
        distribution.version_source,
    )
    assert got == expected


def test_setup_py_is_never_executed(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "setup.py": "open('ran', 'w').write('x')\n"
            "from setuptools import setup\nsetup(name='p', version='1')\n"
        },
    )
    distribution, _ = own_distribution(root)
    assert distribution is not None and distribution.version == "1"
    assert not (root / "ran").exists()


def test_no_metadata_is_no_distribution(tmp_path: Path) -> None:
    assert own_distribution(_repo(tmp_path, {"train.py": "print(1)\n"})) == (None, [])


# --------------------------------------------------------------------------- hostile metadata


def test_a_malformed_pyproject_is_b052_and_setup_cfg_still_counts(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "pyproject.toml": "[project\nname = ",
            "setup.cfg": "[metadata]\nname = mypkg\nversion = 1.0\n",
        },
    )
    distribution, findings = own_distribution(root)
    assert _codes(findings) == [("B052", "warning")]
    assert findings[0].message.startswith("pyproject.toml: ")
    assert distribution is not None and (distribution.name, distribution.version) == (
        "mypkg",
        "1.0",
    )


def test_a_malformed_setup_cfg_is_b052(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"setup.cfg": "name = mypkg\n[metadata\n"})
    distribution, findings = own_distribution(root)
    assert distribution is None
    assert _codes(findings) == [("B052", "warning")]
    assert findings[0].message.startswith("setup.cfg: ")


@pytest.mark.parametrize(
    "name",
    ["my pkg", "../../evil", "pkg\nVersion: 9", "-lead", "trail.", "", "a/b", "x" * 201],
    ids=["space", "dots", "newline", "lead", "trail", "empty", "slash", "long"],
)
def test_an_invalid_distribution_name_is_b052_and_no_distribution(
    tmp_path: Path, name: str
) -> None:
    pyproject = f'[project]\nname = {json.dumps(name)}\nversion = "1.0"\n'
    distribution, findings = own_distribution(_repo(tmp_path, {"pyproject.toml": pyproject}))
    assert distribution is None
    assert _codes(findings) == [("B052", "warning")]
    assert findings[0].message.startswith("pyproject.toml [project]: ")


def test_a_name_that_is_not_a_string_is_b052(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"pyproject.toml": "[project]\nname = 3\n"})
    distribution, findings = own_distribution(root)
    assert distribution is None and _codes(findings) == [("B052", "warning")]


@pytest.mark.parametrize(
    "version",
    ["1.0\nName: other", "../../../etc", "1.0/../../x", "1.0\\x", "{{ version }}", "1.0\rName: x"],
    ids=["newline", "dotdot", "slash", "backslash", "placeholder", "carriage-return"],
)
def test_a_version_that_is_not_pep_440_is_b052_and_the_next_source_is_used(
    tmp_path: Path, version: str
) -> None:
    pyproject = f'[project]\nname = "mypkg"\nversion = {json.dumps(version)}\n'
    root = _repo(
        tmp_path, {"pyproject.toml": pyproject, "mypkg/__init__.py": '__version__ = "\\n/x"\n'}
    )
    distribution, findings = own_distribution(root)
    # the package's literal is no version either: both are B052, then 0+unknown
    assert _codes(findings) == [("B052", "warning"), ("B052", "warning")]
    assert [f.message.split(":")[0] for f in findings] == [
        "pyproject.toml [project]",
        "mypkg/__init__.py",
    ]
    assert distribution is not None
    assert (distribution.version, distribution.version_source) == (
        UNKNOWN_VERSION,
        f"none: {UNKNOWN_VERSION}",
    )
    assert distribution.metadata().count("\n") == 3
    assert "/" not in distribution.folder_name


def test_a_version_file_outside_the_repository_is_b052(tmp_path: Path) -> None:
    (tmp_path / "VERSION").write_text("9.9\n", "utf-8")
    root = _repo(tmp_path, {"setup.cfg": "[metadata]\nname = p\nversion = file: ../VERSION\n"})
    distribution, findings = own_distribution(root)
    assert _codes(findings) == [("B052", "warning")]
    assert distribution is not None and distribution.version == UNKNOWN_VERSION


def test_a_pyproject_that_links_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text('[project]\nname = "stolen"\nversion = "1"\n', "utf-8")
    root = _repo(tmp_path, {"train.py": "print(1)\n"})
    (root / "pyproject.toml").symlink_to(outside)
    assert own_distribution(root) == (None, [])


def test_the_metadata_file_is_three_fields() -> None:
    distribution = OwnDistribution("My.Pkg", "1.2", "s", "v")
    assert distribution.folder_name == "my_pkg-1.2.dist-info"
    assert distribution.metadata() == "Metadata-Version: 2.1\nName: My.Pkg\nVersion: 1.2\n"


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
_PIECES = st.lists(
    st.sampled_from(
        [
            "[project]\n",
            "[tool.poetry]\n",
            "[metadata]\n",
            "[tool.poetry-dynamic-versioning]\nenable = true\n",
            'name = "p"\n',
            "name = p\n",
            'version = "1.0"\n',
            "version = attr: p.__version__\n",
            "version = file: ../V\n",
            'dynamic = ["version"]\n',
            "setup(name='p', version=V)\n",
            "V = '2'\n",
        ]
    )
    | _TEXT,
    max_size=8,
).map("".join)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pyproject=_PIECES, setup_cfg=_PIECES, setup_py=_PIECES, init=_PIECES)
def test_any_metadata_gives_a_value_or_findings_never_a_traceback(
    tmp_path_factory: pytest.TempPathFactory,
    pyproject: str,
    setup_cfg: str,
    setup_py: str,
    init: str,
) -> None:
    root = _repo(
        tmp_path_factory.mktemp("any"),
        {
            "pyproject.toml": pyproject,
            "setup.cfg": setup_cfg,
            "setup.py": setup_py,
            "p/__init__.py": init,
        },
    )
    distribution, findings = own_distribution(root)
    assert {f.code for f in findings} <= {"B052"}
    if distribution is not None:
        assert distribution.metadata().count("\n") == 3
        assert "/" not in distribution.folder_name and "\\" not in distribution.folder_name
        assert distribution.folder_name.endswith(".dist-info")


# --------------------------------------------------------------------------- hostile places

_DIST = OwnDistribution(
    "mypkg", "1.0", "pyproject.toml [project]", "pyproject.toml [project] version"
)


@pytest.mark.parametrize("kind", ["file", "folder", "link", "dangling-link"])
def test_a_dist_info_never_replaces_what_is_there(tmp_path: Path, kind: str) -> None:
    root = _repo(tmp_path, {"mypkg/__init__.py": ""})
    place = root / "mypkg-1.0.dist-info"
    if kind == "file":
        place.write_text("keep", "utf-8")
    elif kind == "folder":
        place.mkdir()
    elif kind == "link":
        place.symlink_to(tmp_path)
    else:
        place.symlink_to(tmp_path / "nowhere")
    problem = place_problem(root, ".", _DIST)
    assert problem is not None
    assert (problem.code, problem.severity) == ("B053", "warning")
    assert problem.message.startswith("mypkg-1.0.dist-info is not written: ")


def test_a_link_on_the_way_is_b053(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"elsewhere/mypkg/__init__.py": ""})
    (root / "src").symlink_to(root / "elsewhere")
    problem = place_problem(root, "src", _DIST)
    assert problem is not None and problem.code == "B053"
    assert problem.message.startswith("src/mypkg-1.0.dist-info is not written: ")


def test_an_ignored_place_is_b053(tmp_path: Path) -> None:
    root = _repo(tmp_path, {".gitignore": "*.dist-info/\n", "mypkg/__init__.py": ""})
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    problem = place_problem(root, ".", _DIST)
    assert problem is not None and problem.code == "B053"
    assert place_problem(_repo(tmp_path / "clean", {"mypkg/__init__.py": ""}), ".", _DIST) is None


# --------------------------------------------------------------------------- the fix rule


def _run(
    root: Path, script: str, pythonpath: str = ".", python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = pythonpath
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [python, script], cwd=root, capture_output=True, text=True, check=False, env=env
    )


def _write(root: Path, fix: Fix) -> None:
    for rel, text in fix.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")


@pytest.mark.parametrize("layout", [".", "src"])
def test_package_not_found_for_the_own_distribution_gets_a_dist_info(
    tmp_path: Path, layout: str
) -> None:
    package = "mypkg/__init__.py" if layout == "." else "src/mypkg/__init__.py"
    root = _repo(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "MyPkg"\nversion = "1.2"\n',
            package: _READS_OWN,
            "scripts/run.py": _SCRIPT,
        },
    )
    before = _run(root, "scripts/run.py", layout)
    failure = classify(before.stderr, root)
    assert failure is not None and failure.type == "PackageNotFoundError"
    assert failure.file == package
    fix = propose(failure, root, "scripts/run.py")
    assert fix is not None
    assert (fix.rule, fix.kind, fix.notes) == ("own-distribution-metadata", "convenience", ())
    folder = "" if layout == "." else "src/"
    metadata = "Metadata-Version: 2.1\nName: MyPkg\nVersion: 1.2\n"
    assert fix.files == {f"{folder}mypkg-1.2.dist-info/METADATA": metadata}
    _write(root, fix)
    after = _run(root, "scripts/run.py", layout)
    assert after.returncode == 0, after.stderr
    assert after.stdout.splitlines() == ["version 1.2", "answer 42"]


@pytest.fixture(scope="module")
def era_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An environment with a setuptools that still ships ``pkg_resources`` (removed in 81),
    as the research code that calls it was written against; installed from the index."""
    venv = tmp_path_factory.mktemp("era") / "venv"
    uv = [sys.executable, "-m", "uv"]
    subprocess.run([*uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([*uv, "pip", "install", "-q", "--python", python, "setuptools<81"], check=True)
    return python


@pytest.mark.slow
def test_distribution_not_found_of_pkg_resources_is_recognised(
    tmp_path: Path, era_python: str
) -> None:
    root = _repo(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='mypkg', version='0.3')\n",
            "mypkg/__init__.py": "import pkg_resources\n\n"
            "__version__ = pkg_resources.get_distribution('mypkg').version\nSECRET = 41\n",
            "run.py": _SCRIPT,
        },
    )
    before = _run(root, "run.py", python=era_python)
    failure = classify(before.stderr, root)
    assert failure is not None and failure.type == "DistributionNotFound", before.stderr
    fix = propose(failure, root, "run.py")
    assert fix is not None and list(fix.files) == ["mypkg-0.3.dist-info/METADATA"]
    _write(root, fix)
    after = _run(root, "run.py", python=era_python)
    assert after.returncode == 0, after.stderr
    assert after.stdout.splitlines()[0] == "version 0.3"


def test_another_distribution_missing_is_not_this_rule(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "mypkg"\nversion = "1.2"\n',
            "mypkg/__init__.py": "from importlib.metadata import version\n\n"
            "__version__ = version('not-installed-anywhere')\nSECRET = 1\n",
            "run.py": _SCRIPT,
        },
    )
    failure = classify(_run(root, "run.py").stderr, root)
    assert failure is not None and failure.type == "PackageNotFoundError"
    refused: list[BuildFinding] = []
    assert propose(failure, root, "run.py", refused) is None
    assert refused == []


def test_an_ignored_place_refuses_the_fix_with_b053(tmp_path: Path) -> None:
    # A file or folder of the dist-info's name would itself be found as the distribution
    # (version None, no error); what leaves the error in place is a path git would not record.
    root = _repo(
        tmp_path,
        {
            ".gitignore": "*.dist-info\n",
            "pyproject.toml": '[project]\nname = "mypkg"\nversion = "1.2"\n',
            "mypkg/__init__.py": _READS_OWN,
            "run.py": _SCRIPT,
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    failure = classify(_run(root, "run.py").stderr, root)
    assert failure is not None
    refused: list[BuildFinding] = []
    assert propose(failure, root, "run.py", refused) is None
    assert _codes(refused) == [("B053", "warning")]
    assert refused[0].message.startswith("mypkg-1.2.dist-info is not written: ")
    assert not (root / "mypkg-1.2.dist-info").exists()


def test_unusable_metadata_refuses_the_fix_with_b052(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "my pkg"\nversion = "1.2"\n',
            "mypkg/__init__.py": _READS_OWN,
            "run.py": _SCRIPT,
        },
    )
    failure = classify(_run(root, "run.py").stderr, root)
    assert failure is not None
    refused: list[BuildFinding] = []
    assert propose(failure, root, "run.py", refused) is None
    assert _codes(refused) == [("B052", "warning")]


def test_a_fallback_version_carries_its_warning_on_the_fix(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "mypkg"\nversion = "1.2\\nName: evil"\n',
            "mypkg/__init__.py": _READS_OWN,
            "run.py": _SCRIPT,
        },
    )
    failure = classify(_run(root, "run.py").stderr, root)
    assert failure is not None
    fix = propose(failure, root, "run.py")
    assert fix is not None
    metadata = "Metadata-Version: 2.1\nName: mypkg\nVersion: 0+unknown\n"
    assert fix.files == {"mypkg-0+unknown.dist-info/METADATA": metadata}
    assert _codes(list(fix.notes)) == [("B052", "warning")]
    _write(root, fix)
    after = _run(root, "run.py")
    assert after.returncode == 0 and after.stdout.splitlines()[0] == "version 0+unknown"
