"""Builder: a source distribution whose setup.py imports a build requirement it does not declare.

Old research packages (scikit-garden 0.1.3) ship only an sdist whose ``setup.py`` imports
numpy at its top level to build C extensions against it. The stand-ins here are real: a
``setup.py`` sdist with a C extension that includes a header of ``buildhelp`` (a numpy
stand-in whose ``get_include()`` names its include folder), served with ``buildhelp`` and a
wheel of the running setuptools from a PEP 503 index on loopback; uv builds it with the
machine's C compiler.
"""

from __future__ import annotations

import gzip
import io
import sys
import tarfile
import uuid
import zipfile
from importlib.metadata import distribution
from pathlib import Path

import pytest

from reprobridge_sdk.agent.builder import build_environment, relaxation_decision
from reprobridge_sdk.agent.sdists import failed_builds, read_needs
from reprobridge_sdk.env import lock_artifact
from reprobridge_sdk.errors import UsageError
from reprobridge_sdk.model.build import Gate, ImportUse, IntakeRecord, PythonEra

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
from eco_wheelhouse import build_wheel, serve_index, write_index

ZERO = "0" * 64

_SETUP_NEEDS_BUILDHELP = """\
import buildhelp
from setuptools import Extension, setup

setup(
    name="standin",
    version="1.0",
    packages=["standin"],
    ext_modules=[
        Extension("standin._speed", ["standin/_speed.c"], include_dirs=[buildhelp.get_include()])
    ],
)
"""

_SPEED_C = """\
#include <Python.h>
#include "buildhelp.h"

static PyObject *answer(PyObject *self, PyObject *args) { return PyLong_FromLong(ANSWER); }
static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
"""

_SETUP_FAILS = """\
from setuptools import setup

raise RuntimeError("standin-refusal: this package does not build on this platform")
"""


def _intake(imports: list[str]) -> IntakeRecord:
    return IntakeRecord(
        inputs_digest=ZERO,
        seconds=0,
        gate=Gate(passed=True),
        source="repo",
        repo_name="repo",
        commit="a" * 40,
        imports=[ImportUse(module=m, files=["train.py"]) for m in imports],
        python=PythonEra(syntax="3", commit_date="2019-01-01T00:00:00+00:00", target="3.11"),
    )


def _sdist(directory: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A ``.tar.gz`` source distribution; a token makes its digest unique, so that no build
    of an earlier test is taken from the installer's cache."""
    root = f"{name}-{version}"
    files = {
        "PKG-INFO": f"Metadata-Version: 1.1\nName: {name}\nVersion: {version}\n",
        f"{name}/_token.py": f"TOKEN = {uuid.uuid4().hex!r}\n",
        **files,
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{root}.tar.gz"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{root}/{rel}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(raw.getvalue(), mtime=0))
    return path


def _installed_wheel(directory: Path, name: str) -> Path:
    """A wheel of the distribution ``name`` as installed here (its RECORD's files)."""
    dist = distribution(name)
    tag = "py3-none-any"
    path = directory / f"{name}-{dist.version}-{tag}.whl"
    directory.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in dist.files or []:
            if "__pycache__" in file.parts or file.name in {"INSTALLER", "direct_url.json"}:
                continue
            located = Path(str(file.locate()))
            if located.is_file():
                archive.write(located, file.as_posix())
    return path


def _standin(directory: Path, setup_py: str) -> Path:
    return _sdist(
        directory,
        "standin",
        "1.0",
        {
            "setup.py": setup_py,
            "standin/__init__.py": "from standin._speed import answer\n",
            "standin/_speed.c": _SPEED_C,
        },
    )


@pytest.fixture
def dists(tmp_path: Path) -> Path:
    """The distributions of the index: ``buildhelp`` and setuptools; a test adds its sdist."""
    build = tmp_path / "dists"
    build_wheel(
        build,
        "buildhelp",
        "1.0",
        modules={
            "buildhelp/__init__.py": "import os\n\n\ndef get_include():\n"
            "    return os.path.join(os.path.dirname(__file__), 'include')\n",
            "buildhelp/include/buildhelp.h": "#define ANSWER 42\n",
        },
    )
    _installed_wheel(build, "setuptools")
    return build


def _serve(tmp_path: Path, build: Path) -> Path:
    write_index(tmp_path / "index", sorted(build.iterdir()))
    return tmp_path / "index"


@pytest.mark.slow
def test_an_sdist_whose_setup_py_imports_numpy_builds_with_it_supplied(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, dists: Path
) -> None:
    build = dists
    _standin(build, _SETUP_NEEDS_BUILDHELP)
    with serve_index(_serve(tmp_path, build)) as url:
        monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
        record = build_environment(
            _intake(["standin"]), tmp_path / "state", inputs_digest=ZERO, cache_dir=env_cache
        )
    assert record.gate.passed, record.gate.findings
    assert [(s.name, s.ok, s.source_builds) for s in record.steps] == [
        ("newest", False, False),
        ("source-build", False, True),
        ("build-dependencies", True, True),
    ]
    supplied = record.steps[-1]
    assert supplied.build_dependencies == {"standin": ["buildhelp"]}
    # wheels only, but for the one distribution built from source
    assert "--no-binary=standin" in supplied.argv
    assert supplied.argv[supplied.argv.index("--only-binary") + 1] == ":all:"
    assert record.pins == ["buildhelp==1.0", "standin==1.0"]
    assert record.build_dependencies == {"standin": ["buildhelp==1.0"]}
    assert record.imports_checked == ["standin"]
    # the lock's record carries them, so that the environment builds again elsewhere
    manifest = (tmp_path / "state" / "env" / "rra.yaml").read_text("utf-8")
    assert '{"standin": ["buildhelp==1.0"]}' in manifest
    decision = relaxation_decision(record, ["accuracy"])
    assert decision is not None
    assert decision.resolution.startswith("step 'build-dependencies'")


@pytest.mark.slow
def test_an_sdist_that_fails_for_another_reason_is_b005_with_its_reason(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, dists: Path
) -> None:
    build = dists
    _standin(build, _SETUP_FAILS)
    with serve_index(_serve(tmp_path, build)) as url:
        monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
        record = build_environment(
            _intake(["standin"]), tmp_path / "state", inputs_digest=ZERO, cache_dir=env_cache
        )
    assert not record.gate.passed
    assert record.gate.findings[0].code == "B005"
    assert "build-dependencies" not in {s.name for s in record.steps}
    assert record.build_dependencies == {}
    # the package's own reason is in the records of the step that built it
    assert any("standin-refusal" in (s.error or "") for s in record.steps if s.source_builds)


@pytest.mark.slow
def test_a_c_extension_without_a_compiler_is_b005_saying_so(
    tmp_path: Path, env_cache: Path, monkeypatch: pytest.MonkeyPatch, dists: Path
) -> None:
    build = dists
    _standin(build, _SETUP_NEEDS_BUILDHELP)
    monkeypatch.setenv("CC", str(tmp_path / "no-such-compiler"))
    with serve_index(_serve(tmp_path, build)) as url:
        monkeypatch.setenv("REPROBRIDGE_INDEX_URL", url)
        record = build_environment(
            _intake(["standin"]), tmp_path / "state", inputs_digest=ZERO, cache_dir=env_cache
        )
    assert not record.gate.passed
    assert record.gate.findings[0].code == "B005"
    supplied = [s for s in record.steps if s.name == "build-dependencies"]
    assert supplied, [s.name for s in record.steps]
    # not run: the build would fail in the compiler; the step names what it would supply
    assert next((s.ok, s.argv, s.build_dependencies) for s in supplied) == (
        False,
        [],
        {"standin": ["buildhelp"]},
    )
    assert any("C compiler" in (f.hint or "") for f in record.gate.findings if f.code == "B005")


def test_the_distributions_an_error_names_are_read_from_its_structured_part() -> None:
    # the same facts in several wordings: a requirement with ==, with @, and a file name
    assert failed_builds("Failed to build `scikit-garden==0.1.3`") == [("scikit-garden", "0.1.3")]
    assert failed_builds("`Scikit_Garden@0.1.3` depends on `numpy`") == [("scikit-garden", "0.1.3")]
    assert failed_builds("building scikit-garden-0.1.3.tar.gz failed") == [
        ("scikit-garden", "0.1.3")
    ]
    assert failed_builds("a == b, python 3.6, x@y, no version here") == []


def test_what_an_sdist_needs_is_read_from_its_setup_py() -> None:
    setup = (
        "import os, sys\nimport numpy as np\nfrom Cython.Build import cythonize\n"
        "import versioneer\nfrom setuptools import setup\n"
        "try:\n    import torch\nexcept ImportError:\n    torch = None\n"
        "if sys.platform == 'linux':\n    import scipy\n"
        "def configure():\n    import pandas\n"
        "setup(name='pkg', setup_requires=['cython>=0.23', 'pytest-runner', 42, 'not a req!'])\n"
    )
    members: dict[str, bytes | None] = {
        "setup.py": setup.encode(),
        "versioneer.py": None,
        "pkg/_fast.pyx": None,
        "pyproject.toml": b'[build-system]\nrequires = ["setuptools", "Cython>=0.29"]\n',
    }
    needs = read_needs("pkg", "1.0", members)
    # numpy at the top, scipy under a top-level if; Cython is declared, versioneer its own,
    # torch optional, pandas only in a function; what setup_requires asks for is supplied
    # too (the backend would take its newest release, not the environment's)
    assert needs.requirements == ("numpy", "scipy", "cython", "pytest-runner")
    assert needs.compiled
    assert not read_needs("pkg", "1.0", {"setup.py": b"from setuptools import setup\n"}).compiled


def test_hostile_setup_py_files_are_read_without_running_them() -> None:
    python2 = b"import numpy\nprint 'building'\nexec open('x').read()\n"
    assert read_needs("old", "0.1", {"setup.py": python2}).requirements == ("numpy",)
    binary = bytes(range(256))
    assert read_needs("bin", "0.1", {"setup.py": binary}).requirements == ()
    assert read_needs("none", "0.1", {}).requirements == ()


@pytest.mark.parametrize(
    ("build_dependencies", "pointer"),
    [
        ("[numpy]", "/environment/lock/build_dependencies"),
        ("{'bad name!': [numpy]}", "/environment/lock/build_dependencies/bad name!"),
        (
            "{pkg: ['numpy @ https://example.org/numpy.whl']}",
            "/environment/lock/build_dependencies/pkg/0",
        ),
        (
            "{pkg: ['numpy; sys_platform == \"win32\"']}",
            "/environment/lock/build_dependencies/pkg/0",
        ),
        ("{pkg: [3]}", "/environment/lock/build_dependencies/pkg/0"),
    ],
)
def test_a_lock_refuses_build_dependencies_that_are_not_plain_requirements(
    tmp_path: Path, build_dependencies: str, pointer: str
) -> None:
    (tmp_path / "requirements.in").write_text("six\n", "utf-8")
    (tmp_path / "rra.yaml").write_text(
        "rra_version: '1.1'\nenvironment:\n  python: '3.11'\n  requirements: requirements.in\n"
        "  lock:\n    path: requirements.txt\n    format: requirements\n"
        f"    build_dependencies: {build_dependencies}\n",
        "utf-8",
    )
    with pytest.raises(UsageError) as raised:
        lock_artifact(tmp_path)
    assert [(f.code, f.path) for f in raised.value.findings] == [("L011", pointer)]
    assert not (tmp_path / "requirements.txt").exists()


def _index_page(root: Path, project: str, files: dict[str, bytes], digest: str | None) -> None:
    """A PEP 503 page for ``project`` listing ``files``, each with ``digest`` as its sha256
    fragment (the real one when None)."""
    import hashlib

    (root / "files").mkdir(parents=True, exist_ok=True)
    anchors = ""
    for name, data in files.items():
        (root / "files" / name).write_bytes(data)
        fragment = digest or hashlib.sha256(data).hexdigest()
        anchors += f'<a href="../../files/{name}#sha256={fragment}">{name}</a>\n'
    (root / "simple" / project).mkdir(parents=True, exist_ok=True)
    (root / "simple" / project / "index.html").write_text(f"<html><body>{anchors}</body></html>")


def _zip_sdist(name: str, version: str, files: dict[str, str]) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as archive:
        for rel, text in files.items():
            archive.writestr(f"{name}-{version}/{rel}", text)
    return raw.getvalue()


@pytest.mark.parametrize("case", ["tar", "zip", "wrong-hash", "not-an-archive", "not-listed"])
def test_the_sdist_is_read_from_the_index_and_a_hostile_one_gives_nothing(
    tmp_path: Path, case: str
) -> None:
    """The index a build resolves against is a stranger's: an sdist whose digest is not the
    one the index lists is not read, nor one that is no archive (then only the error's own
    ``No module named`` speaks, when it names one); nothing is extracted or run."""
    from reprobridge_sdk.agent.sdists import build_needs

    files = {"setup.py": "import numpy\nfrom setuptools import setup\nsetup()\n"}
    data = {
        "tar": _sdist(tmp_path / "made", "oldpkg", "0.3", files).read_bytes(),
        "zip": _zip_sdist("oldpkg", "0.3", files),
        "wrong-hash": _zip_sdist("oldpkg", "0.3", files),
        "not-an-archive": b"\x1f\x8b not really gzip",
        "not-listed": _zip_sdist("oldpkg", "0.4", files),
    }[case]
    suffix = ".tar.gz" if case in {"tar", "not-an-archive"} else ".zip"
    version = "0.4" if case == "not-listed" else "0.3"
    _index_page(
        tmp_path / "index",
        "oldpkg",
        {f"oldpkg-{version}{suffix}": data},
        "0" * 64 if case == "wrong-hash" else None,
    )
    error = "Failed to build `oldpkg==0.3`\nModuleNotFoundError: No module named 'Cython'"
    with serve_index(tmp_path / "index") as url:
        found = build_needs(error, url)
        silent = build_needs(error.splitlines()[0], url)
    expected = {
        "tar": [("oldpkg", "0.3", ("numpy",), False)],
        "zip": [("oldpkg", "0.3", ("numpy",), False)],
        "wrong-hash": [],
        # an archive that does not read: the error's own words name the module
        "not-an-archive": [("oldpkg", "0.3", ("Cython",), False)],
        "not-listed": [],
    }[case]
    assert [(n.name, n.version, n.requirements, n.compiled) for n in found] == expected
    if case != "not-an-archive":
        assert [n.requirements for n in silent] == [e[2] for e in expected]
    else:
        assert silent == []


def test_an_index_page_linking_outside_http_is_not_followed(tmp_path: Path) -> None:
    """An index page is a stranger's: a link to a ``file:`` URL (a file on the building
    machine) is not read, so nothing is learnt from it."""
    from reprobridge_sdk.agent.sdists import build_needs

    files = {"setup.py": "import numpy\nfrom setuptools import setup\nsetup()\n"}
    local = _sdist(tmp_path / "made", "oldpkg", "0.3", files)
    page = tmp_path / "index" / "simple" / "oldpkg"
    page.mkdir(parents=True)
    (page / "index.html").write_text(f'<a href="{local.as_uri()}">oldpkg-0.3.tar.gz</a>')
    with serve_index(tmp_path / "index") as url:
        assert build_needs("Failed to build `oldpkg==0.3`", url) == []


@pytest.mark.parametrize(
    ("output", "line"),
    [
        (
            "gcc -c /tmp/build/x/skgarden/tree/_tree.c\n"
            "   skgarden/tree/_tree.c:194:21: error: 'PyThreadState' has no member 'exc_type'\n"
            "   skgarden/tree/_tree.c:195:21: error: a second one\n",
            "skgarden/tree/_tree.c:194:21: error: 'PyThreadState' has no member 'exc_type'",
        ),
        (
            "/home/u/.cache/b/_speed.c:2:10: fatal error: buildhelp.h: No such file\n",
            "_speed.c:2:10: fatal error: buildhelp.h: No such file",
        ),
        (
            '  File "/home/u/.cache/b/setup.py", line 6, in <module>\n    import numpy\n'
            "ModuleNotFoundError: No module named 'numpy'\n\nhint: whatever the tool says\n",
            "ModuleNotFoundError: No module named 'numpy'",
        ),
        ("a tool's own words, and no structured line", None),
    ],
)
def test_the_line_a_source_build_failed_on_is_its_structured_part(
    output: str, line: str | None
) -> None:
    """The outcome of a failed environment names the compiler's first error or Python's
    exception, with no path of this machine, instead of the tool's last words."""
    from reprobridge_sdk.agent.builder import build_error_line

    assert build_error_line(output) == line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # SVGD's era environment: the tail of a source build, folders of this machine and
        # all, was cut at 200 characters in the middle of a path into the guide
        (
            "NameError: name 'CCompiler' is not defined; File \"/root/.cache/uv/sdists-v9/"
            'pypi/numpy/1.12.1/src/numpy/distutils/__init__.py", line 8, in <module>\n'
            "    from . import ccompiler",
            "NameError: name 'CCompiler' is not defined; File \"__init__.py\", line 8, in "
            "<module> from . import ccompiler",
        ),
        # uv's hint, cut after a whole word instead of inside a date
        (
            "hint: `tensorflow` was filtered by `exclude-newer` to only include packages "
            "uploaded before 2020-09-25T18:30:21Z. The latest version satisfying the "
            "requirement is v1.15.5, published at 2021-01-06T17:12:00Z",
            "hint: `tensorflow` was filtered by `exclude-newer` to only include packages "
            "uploaded before 2020-09-25T18:30:21Z. The latest version satisfying the "
            "requirement is v1.15.5, published at...",
        ),
        ("short", "short"),
        # one word longer than the limit: cut inside it, still within the limit
        ("x" * 300, "x" * 197 + "..."),
    ],
)
def test_an_outcome_the_guide_quotes_is_one_line_without_this_machines_folders(
    text: str, expected: str
) -> None:
    from reprobridge_sdk.agent.builder import brief

    assert brief(text) == expected
    assert len(brief(text)) <= 200
