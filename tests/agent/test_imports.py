"""The import closure of an entry point, and the dependency files' requirement lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobridge_sdk.agent.dependencies import dependency_files
from reprobridge_sdk.agent.imports import closure


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return tmp_path


def test_only_what_the_script_reaches_and_why_an_import_is_optional(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "pkg/__init__.py": "from .model import fit\n",
            "pkg/model.py": (
                "import numpy as np\n"
                "try:\n    import numba\nexcept ImportError:\n    numba = None\n"
                "def fit():\n    import torch\n"
                "if __name__ == '__main__':\n    import matplotlib\n"
            ),
            "scripts/train.py": (
                "import os, sys\n"
                "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'side'))\n"
                "from pkg import fit\nimport helper\nimport json\n"
                "if __name__ == '__main__':\n    import scipy\n"
            ),
            "side/helper.py": "import yaml\n",
            "side/other.py": "import theano\n",
            "setup.py": "from setuptools import setup\n",
        },
    )
    reached = closure(root, "scripts/train.py")
    assert reached.files == [
        "scripts/train.py",
        "pkg/__init__.py",
        "side/helper.py",
        "pkg/model.py",
    ]
    assert {name: use.optional for name, use in reached.third_party.items()} == {
        "matplotlib": "behind another module's __main__ guard",
        "numba": "under try/except ImportError",
        "numpy": None,
        "scipy": None,  # the entry script's own __main__ block runs
        "torch": "in function fit()",
        "yaml": None,
    }
    assert (reached.rooted, reached.rooted_modules) == (["."], ["pkg"])


def test_relative_imports_packages_and_a_module_beside_the_script(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "src/app/__init__.py": "",
            "src/app/cli.py": "from . import core\nfrom .util.io import read\n",
            "src/app/core.py": "import pandas\n",
            "src/app/util/__init__.py": "",
            "src/app/util/io.py": "from ..core import x\nimport h5py\n",
            "tools/run.py": "import helpers\nimport app.cli\n",
            "tools/helpers.py": "import requests\n",
        },
    )
    reached = closure(root, "tools/run.py")
    assert set(reached.third_party) == {"h5py", "pandas", "requests"}
    assert (reached.rooted, reached.rooted_modules) == (["src"], ["app"])
    as_module = closure(root, "src/app/cli.py", workdir="src", module=True)
    assert as_module.rooted == []  # python -m runs with its working directory on sys.path


def test_a_python2_implicit_relative_import_is_the_packages_own_module(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "lib/__init__.py": "from build_net import build\n",
            "lib/build_net.py": "import autograd\n",
            "lib/util.py": "import json\n",
            "examples/run.py": "import sys\nsys.path.append('..')\nimport lib\nimport sklearn\n",
            "scripts/top.py": "import build_net\n",  # not in a package: a real top-level name
        },
    )
    reached = closure(root, "examples/run.py", workdir="examples")
    assert set(reached.third_party) == {"autograd", "sklearn"}
    assert "lib/build_net.py" in reached.files
    assert set(closure(root, "scripts/top.py").third_party) == {"build_net"}


def test_a_required_import_wins_over_an_optional_one_and_python2_files_are_read(
    tmp_path: Path,
) -> None:
    root = _repo(
        tmp_path,
        {
            "main.py": "import lib\ndef f():\n    import numpy\n",
            "lib.py": (
                "print 'python 2'\nimport numpy\nimport cPickle\nfrom urllib2 import urlopen\n"
            ),
        },
    )
    reached = closure(root, "main.py")
    assert {n: u.optional for n, u in reached.third_party.items()} == {"numpy": None}


def test_a_python2_scripts_sys_path_addition_finds_its_own_modules(tmp_path: Path) -> None:
    """A Python 2 script (no syntax tree) that puts a folder on sys.path by a literal and
    imports a module from it (``sys.path.append('PBP_net/')`` then ``import PBP_net``): the
    module is the repository's own, and its imports are followed, never a requirement."""
    root = _repo(
        tmp_path,
        {
            "theano/test_net.py": (
                "import sys\nsys.path.append('net/')\nimport net_model\nprint 'rmse: %f' % 0.5\n"
            ),
            "theano/net/net_model.py": "import numpy\nimport theano\n",
        },
    )
    reached = closure(root, "theano/test_net.py", workdir="theano")
    assert set(reached.third_party) == {"numpy", "theano"}
    assert "theano/net/net_model.py" in reached.files


def test_an_import_cycle_and_a_hostile_sys_path_end(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "a.py": "import b\nimport sys\nsys.path.append('/etc')\nsys.path.insert(0, '../..')\n",
            "b.py": "import a\nimport scipy\n",
        },
    )
    reached = closure(root, "a.py")
    assert reached.files == ["a.py", "b.py"]
    assert list(reached.third_party) == ["scipy"]


def test_requirement_lines_of_every_dependency_file(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "requirements.txt": "numpy==1.16.0  # old\n-r other.txt\n\nscipy\n",
            "setup.py": "REQ = ['torch>=1.0', 'tqdm']\nsetup(name='x', install_requires=REQ)\n",
            "setup.cfg": "[options]\ninstall_requires =\n    pandas<2\n    six\n",
            "pyproject.toml": "[project]\nname = 'x'\ndependencies = ['jax>=0.4']\n",
            "environment.yml": "dependencies:\n  - python=3.8\n  - pip:\n    - gym==0.21\n",
            "broken/setup.py": "setup(",
            "deep/er/requirements.txt": "never-read\n",
        },
    )
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    found = {f.path: (f.kind, f.requirements) for f in dependency_files(root, files)}
    assert found == {
        "requirements.txt": ("requirements", ["numpy==1.16.0", "scipy"]),
        "setup.py": ("setup.py", ["torch>=1.0", "tqdm"]),
        "setup.cfg": ("setup.cfg", ["pandas<2", "six"]),
        "pyproject.toml": ("pyproject", ["jax>=0.4"]),
        "environment.yml": ("conda", ["gym==0.21"]),
        "broken/setup.py": ("setup.py", []),
    }


def test_a_link_out_of_the_repository_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("import leaked_module\n", "utf-8")
    root = _repo(tmp_path / "repo", {"main.py": "import secret\nimport lib.x\n"})
    (root / "secret.py").symlink_to(outside / "secret.py")
    (root / "lib").symlink_to(outside)
    reached = closure(root, "main.py")
    assert reached.files == ["main.py"]
    assert reached.third_party == {}  # 'secret' and 'lib' are the repository's, unread


def test_a_script_started_as_a_command_is_an_entry_point_too(tmp_path: Path) -> None:
    """A driver that runs ``os.system("python3 train.py ...")``: what train.py imports (and
    its own ``__main__`` guard) is required, and a name no repository file has is ignored."""
    root = _repo(
        tmp_path,
        {
            "codes/run_cora.py": (
                "import os\n"
                "cmd = 'python3 train.py'\n"
                "opt = {'seed': 1}\n"
                "os.system(cmd + ' --seed %d' % opt['seed'])\n"
                "os.system('python -u ../tools/prep.py')\n"
                "os.system('python not_here.py')\n"
            ),
            "codes/train.py": "import numpy as np\nimport trainer\n",
            "codes/trainer.py": "import torch\nif __name__ == '__main__':\n    import tqdm\n",
            "tools/prep.py": "if __name__ == '__main__':\n    import scipy\n",
            "side.py": "import tensorflow\n",
        },
    )
    reached = closure(root, "codes/run_cora.py", workdir="codes")
    required = {name for name, r in reached.third_party.items() if r.optional is None}
    assert required == {"numpy", "scipy", "torch"}
    assert reached.third_party["tqdm"].optional is not None  # an imported module's guard
    assert {"codes/train.py", "codes/trainer.py", "tools/prep.py"} <= set(reached.files)


def test_a_repository_that_imports_itself_by_its_folder_name_is_no_requirement(
    tmp_path: Path,
) -> None:
    """``from chomsky.training import helper`` with ``training/`` at the root: the authors'
    checkout was named ``chomsky``. The root's modules are reached (their imports are the
    requirements), the root goes on ``PYTHONPATH``, and ``chomsky`` is no distribution."""
    root = _repo(
        tmp_path,
        {
            "training/example.py": (
                "from chomsky.training import helper\nfrom chomsky.models import rnn as m\n"
                "import chomsky\n"
            ),
            "training/helper.py": "import numpy\n",
            "models/__init__.py": "",
            "models/rnn.py": "import jax\n",
            "tasks/other.py": "import torch\n",
        },
    )
    reached = closure(root, "training/example.py")
    assert sorted(reached.third_party) == ["jax", "numpy"]
    assert reached.self_named == ["chomsky"]
    assert reached.rooted == ["."]
    assert {"training/helper.py", "models/rnn.py"} <= set(reached.files)


def test_an_unknown_dotted_import_whose_tail_is_not_in_the_root_stays_third_party(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path, {"run.py": "from google.protobuf import text_format\n"})
    reached = closure(root, "run.py")
    assert sorted(reached.third_party) == ["google"]
    assert reached.self_named == []


@pytest.mark.parametrize(
    ("files", "script", "third"),
    [
        # torch's own utils beside a root utils.py: torch stays a requirement
        (
            {"train.py": "from torch.utils.data import DataLoader\nimport utils\n", "utils.py": ""},
            "train.py",
            ["torch"],
        ),
        (
            {"train.py": "from torch.utils import data\nimport utils\n", "utils.py": ""},
            "train.py",
            ["torch"],
        ),
        # SGC: its own metrics.py imports scikit-learn's metrics
        (
            {
                "citation.py": "from metrics import accuracy\n",
                "metrics.py": "from sklearn.metrics import f1_score\n",
            },
            "citation.py",
            ["sklearn"],
        ),
        # a package name that is no index package's, but whose path runs through a module
        # (utils.py is no package, so foo.utils.data is not the repository's)
        (
            {"run.py": "from foo.utils.data import Loader\n", "utils.py": ""},
            "run.py",
            ["foo"],
        ),
    ],
)
def test_an_index_package_beside_a_root_module_of_its_submodules_name_stays_third_party(
    tmp_path: Path, files: dict[str, str], script: str, third: list[str]
) -> None:
    """Hostile: a repository's own ``utils.py`` or ``metrics.py`` is not the submodule of a
    package from the index that the code imports; taking it so dropped the package from the
    requirements and put the root on ``PYTHONPATH`` with a false reason."""
    root = _repo(tmp_path, files)
    reached = closure(root, script)
    assert sorted(reached.third_party) == third
    assert reached.self_named == []
    assert reached.rooted == []
