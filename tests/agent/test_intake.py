"""Intake: the inventory of real git repositories with research-code defects."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from build_fixtures import COMMIT_DATE, git

from reprobridge_sdk.agent.claims import load_claims
from reprobridge_sdk.agent.intake import (
    SourceError,
    checkout,
    command_script,
    inventory,
    is_python2,
)
from reprobridge_sdk.agent.planner import plan
from reprobridge_sdk.model.build import IntakeRecord

ZERO = "0" * 64


def _intake(raw_repo, tmp_path: Path, name: str) -> IntakeRecord:  # type: ignore[no-untyped-def]
    repo, claims_file = raw_repo(name)
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    return inventory(
        dest,
        load_claims(claims_file),
        source=str(repo),
        commit=commit,
        commit_date=date,
        inputs_digest=ZERO,
    )


def test_no_dependency_file_still_lists_the_imports_actually_used(raw_repo, tmp_path: Path) -> None:
    record = _intake(raw_repo, tmp_path, "no-deps")
    assert record.dependency_files == []
    assert [use.module for use in record.imports] == ["matplotlib", "numpy", "scipy", "sklearn"]
    assert record.python.syntax == "3"
    assert record.python.commit_date == COMMIT_DATE
    [entry] = record.entry_points
    assert entry.path == "train.py"
    assert set(entry.kinds) == {"argparse", "readme"}
    assert entry.readme_commands == ["python train.py --seed 0"]
    flags = {tuple(option.flags): option.default for option in entry.options}
    assert flags == {("--seed",): "0", ("--max-iter",): "200"}
    assert any(seed.file == "train.py" and "np.random.seed" in seed.text for seed in record.seeds)
    assert record.gate.passed


def test_python2_files_are_recognised_and_still_inventoried(raw_repo, tmp_path: Path) -> None:
    record = _intake(raw_repo, tmp_path, "python2")
    assert record.python.syntax == "2"
    assert record.python.python2_files == ["main.py"]
    assert [use.module for use in record.imports] == ["matplotlib", "numpy", "scipy", "sklearn"]
    assert [d.kind for d in record.dependency_files] == ["requirements"]
    assert record.dependency_files[0].requirements == [
        "numpy",
        "scipy",
        "scikit-learn",
        "matplotlib",
    ]
    assert "holdout accuracy: %.4f" in record.entry_points[0].prints


def test_gpu_assumptions_data_paths_and_local_modules(raw_repo, tmp_path: Path) -> None:
    cuda = _intake(raw_repo, tmp_path / "a", "cuda-device")
    assert {line.file for line in cuda.gpu} == {"device.py", "train.py"}
    assert "device" not in {use.module for use in cuda.imports}  # a module of the repository
    cwd = _intake(raw_repo, tmp_path / "b", "cwd-data")
    assert [(d.kind, d.value) for d in cwd.data] == [("path", "../data/scale.txt")]
    assert cwd.data[0].where is not None and cwd.data[0].where.file == "src/train.py"


def test_cuda_only_pins_are_read_as_written(raw_repo, tmp_path: Path) -> None:
    record = _intake(raw_repo, tmp_path, "cuda-pins")
    assert "triton==2.1.0" in record.dependency_files[0].requirements


def test_a_hinted_script_that_does_not_exist_is_a_b002_warning_not_a_stop(
    raw_repo, tmp_path: Path
) -> None:
    repo, claims_file = raw_repo("no-deps")
    text = claims_file.read_text("utf-8").replace("label: test accuracy", "script: nope.py")
    claims_file.write_text(text, "utf-8")
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    record = inventory(
        dest,
        load_claims(claims_file),
        source=str(repo),
        commit=commit,
        commit_date=date,
        inputs_digest=ZERO,
    )
    assert record.gate.passed
    assert [(f.code, f.severity, f.path) for f in record.gate.findings] == [
        ("B002", "warning", "/claims/0/hints/script")
    ]
    # the Planner goes on without the hint: the one entry point
    planned = plan(load_claims(claims_file), record, root=dest, inputs_digest=ZERO)
    assert [(c.status, c.basis) for c in planned.claims] == [
        ("planned", "printed text matches the claim's words of 'measured'")
    ]


def test_checkout_pins_the_commit_and_never_touches_the_source(raw_repo, tmp_path: Path) -> None:
    repo, _ = raw_repo("no-deps")
    first = git("rev-parse", "HEAD", cwd=repo)
    (repo / "later.py").write_text("print('later')\n", "utf-8")
    git("add", "later.py", cwd=repo)
    git("commit", "-q", "-m", "later", cwd=repo)
    before = sorted(p.name for p in repo.iterdir())
    commit, _ = checkout(str(repo), tmp_path / "co", first)
    assert commit == first
    assert not (tmp_path / "co" / "later.py").exists()
    assert sorted(p.name for p in repo.iterdir()) == before
    assert (
        subprocess.run(
            ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout
        == ""
    )


@pytest.mark.parametrize("commit", ["--upload-pack=touch /tmp/pwned", "deadbeef" * 5, "-b x"])
def test_hostile_or_unknown_commits_give_b003(raw_repo, tmp_path: Path, commit: str) -> None:
    repo, _ = raw_repo("no-deps")
    with pytest.raises(SourceError) as caught:
        checkout(str(repo), tmp_path / "co", commit)
    assert caught.value.finding.code == "B003"


def test_an_unclonable_source_gives_b003(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as caught:
        checkout(str(tmp_path / "absent"), tmp_path / "co")
    assert caught.value.finding.code == "B003"
    with pytest.raises(SourceError):
        checkout("--upload-pack=x", tmp_path / "co")


def test_hostile_repository_content_is_read_without_following_links(
    raw_repo, tmp_path: Path
) -> None:
    repo, claims_file = raw_repo("no-deps")
    secret = tmp_path / "secret.py"
    secret.write_text("import leaked_module\n", "utf-8")
    os.symlink(secret, repo / "link.py")
    (repo / "binary.py").write_bytes(b"\xff\xfe\x00import os\n")
    (repo / "big.py").write_text("x = 1\n" * 400_000, "utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "hostile", cwd=repo)
    record = _intake(lambda _name: (repo, claims_file), tmp_path, "no-deps")
    assert "leaked_module" not in {use.module for use in record.imports}


@pytest.mark.parametrize(
    ("command", "script"),
    [
        ("python train.py --seed 0", "train.py"),
        ("python3 ./src/run.py", "src/run.py"),
        ("python -m pkg.main --x 1", "pkg/main.py"),
        ("bash run.sh", None),
        ("python 'unterminated", None),
    ],
)
def test_command_script(command: str, script: str | None) -> None:
    assert command_script(command) == script


def test_python2_detection() -> None:
    assert is_python2('print "x"\n')
    assert is_python2("exec 'x = 1'\n")
    assert not is_python2('print("x")\n')
    assert not is_python2("def f(:\n")


def test_licence_outputs_urls_download_scripts_click_and_every_dependency_file(
    tmp_path: Path,
) -> None:
    from build_fixtures import Fixture, write_repo

    fixture = Fixture(
        "inventory",
        {
            "LICENSE": "MIT License\n\nPermission is hereby granted, free of charge, ...\n",
            "setup.py": (
                "from setuptools import setup\n"
                "setup(name='x', python_requires='>=3.6', install_requires=['numpy'])\n"
            ),
            "setup.cfg": "[options]\ninstall_requires =\n    scipy\n",
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["click"]\n',
            "environment.yml": "dependencies:\n  - python=3.8\n  - pandas\n",
            "Pipfile": '[packages]\nrequests = "*"\n',
            "scripts/download_data.sh": "curl -O https://example.org/data.csv\n",
            "cli.py": (
                "import json\nimport random\n\nimport click\n\n\n"
                "@click.command()\n"
                "@click.option('--epochs', default=3)\n"
                "def main(epochs):\n"
                "    random.seed(0)\n"
                "    url = 'https://example.org/weights.bin'\n"
                "    with open('metrics.json', 'w') as out:\n"
                "        json.dump({'acc': 0.5, 'url': url}, out)\n"
                "    print('accuracy: 0.5')\n\n\n"
                "if __name__ == '__main__':\n"
                "    main()\n"
            ),
        },
        [{"id": "acc", "measured": "accuracy", "value": 0.5, "direction": "higher"}],
        ("an inventory of every kind",),
    )
    repo, claims_file = write_repo(tmp_path / "raw", fixture)
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    record = inventory(
        dest,
        load_claims(claims_file),
        source=str(repo),
        commit=commit,
        commit_date=date,
        inputs_digest=ZERO,
    )
    assert record.gate.passed
    assert record.license == "MIT"
    assert record.python.python_requires == ">=3.6"
    assert (record.python.syntax, record.python.commit_date) == ("3", COMMIT_DATE)
    assert sorted(d.kind for d in record.dependency_files) == [
        "conda",
        "pipfile",
        "pyproject",
        "setup.cfg",
        "setup.py",
    ]
    assert [use.module for use in record.imports] == ["click", "setuptools"]
    entry = next(point for point in record.entry_points if point.path == "cli.py")
    assert {"click", "main"} <= set(entry.kinds)
    assert [option.flags for option in entry.options] == [["--epochs"]]
    assert [(d.kind, d.value) for d in record.data] == [
        ("url", "https://example.org/weights.bin"),
        ("script", "scripts/download_data.sh"),
    ]
    assert [(s.file, s.line) for s in record.seeds] == [("cli.py", 10)]
    assert [(o.file, o.line) for o in record.outputs] == [("cli.py", 12), ("cli.py", 13)]


_ARGS_PY = (
    "import argparse\n\n\n"
    "def get_citation_args():\n"
    "    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--seed', type=int, default=42, help='Random seed.')\n"
    "    parser.add_argument('--epochs', type=int, default=100)\n"
    "    return parser.parse_args()\n\n\n"
    "def unused_parser():\n"
    "    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--other', default=1)\n"
    "    return parser.parse_args()\n\n\n"
    "def built_not_parsed():\n"
    "    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--never', default=1)\n"
    "    return parser\n"
)


@pytest.mark.parametrize(
    ("script", "flags"),
    [
        # SGC: the function of its own args.py builds and parses the parser
        (
            "from args import get_citation_args\nargs = get_citation_args()\n"
            "print('accuracy', 0.5)\n",
            [["--seed"], ["--epochs"]],
        ),
        # the same through the module
        (
            "import args as a\nconfig = a.get_citation_args()\nprint('accuracy', 0.5)\n",
            [["--seed"], ["--epochs"]],
        ),
        # a function that builds a parser but does not parse it gives the script nothing
        (
            "from args import built_not_parsed\nbuilt_not_parsed()\nprint('accuracy', 0.5)\n",
            [],
        ),
        # imported and never called: not the script's options
        ("from args import unused_parser\nprint('accuracy', 0.5)\n", []),
        # a module of the standard library is no repository module
        ("import argparse\nargparse.ArgumentParser()\nprint('accuracy', 0.5)\n", []),
    ],
)
def test_a_parser_a_repository_module_builds_and_parses_gives_the_script_its_options(
    tmp_path: Path, script: str, flags: list[list[str]]
) -> None:
    """SGC's ``citation.py`` declares no option: ``get_citation_args()`` of its ``args.py``
    builds and parses the parser (``--seed``, default 42; ``--epochs``). Those are the
    script's options, so the Planner passes the seed and shortens the smoke run, instead of
    calling the script unseeded."""
    from build_fixtures import Fixture, write_repo

    claim = {"id": "acc", "measured": "accuracy", "value": 0.5, "direction": "higher"}
    fixture = Fixture(
        "borrowed-parser",
        {"citation.py": script, "args.py": _ARGS_PY, "README.md": "    python citation.py\n"},
        [{**claim, "hints": {"script": "citation.py", "label": "accuracy"}}],
        ("a parser built by a module of the repository",),
    )
    repo, claims_file = write_repo(tmp_path / "raw", fixture)
    dest = tmp_path / "checkout"
    commit, date = checkout(str(repo), dest)
    claims = load_claims(claims_file)
    record = inventory(
        dest, claims, source=str(repo), commit=commit, commit_date=date, inputs_digest=ZERO
    )
    entry = next(point for point in record.entry_points if point.path == "citation.py")
    assert [option.flags for option in entry.options] == flags
    planned = plan(claims, record, root=dest, inputs_digest=ZERO)
    scored = next(item for item in planned.launchers if item.scope == "scored")
    assert (scored.seed_flag == "--seed") == bool(flags)
    assert bool(planned.pitfalls) == (not flags)  # "takes no seed" only when it takes none
