"""Commands as people write them: the parser, README code blocks and shell scripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobridge_sdk.agent._loops import MAX_LINES, unrolled
from reprobridge_sdk.agent._makefiles import MAX_MAKEFILE, MAX_TEXT
from reprobridge_sdk.agent.commands import (
    MAX_LINE,
    Command,
    argparse_flags,
    locate,
    markdown_commands,
    output_file,
    parse_command,
    parse_lines,
    resolve,
    with_option,
)


def _launch(text: str) -> tuple[str, dict[str, str], list[str], bool]:
    command = parse_command(text)
    assert command is not None and command.problem is None, command
    return command.workdir, command.env, command.argv, command.shell


@pytest.mark.parametrize(
    ("text", "workdir", "env", "argv"),
    [
        ("python train.py --seed 0", ".", {}, ["python", "train.py", "--seed", "0"]),
        ("cd experiments/demo && python demo.py", "experiments/demo", {}, ["python", "demo.py"]),
        ("cd a; cd ../b && python3 x.py", "b", {}, ["python", "x.py"]),
        ("FOO=1 BAR='a b' python x.py", ".", {"FOO": "1", "BAR": "a b"}, ["python", "x.py"]),
        ("env CUDA_VISIBLE_DEVICES=0 python x.py", ".", {"CUDA_VISIBLE_DEVICES": "0"}, None),
        ("export OMP_NUM_THREADS=1 && python x.py", ".", {"OMP_NUM_THREADS": "1"}, None),
        ("python -m pkg.train --lr 0.1", ".", {}, ["python", "-m", "pkg.train", "--lr", "0.1"]),
        ("python2 x.py", ".", {}, ["python", "x.py"]),
        ("python3.8 -u -W ignore x.py", ".", {}, ["python", "-u", "-W", "ignore", "x.py"]),
        ("/usr/bin/python3 x.py", ".", {}, ["python", "x.py"]),
        ('python x.py --name "a|b" ";" "*.txt"', ".", {}, None),
        ("python x.py  # the paper's run", ".", {}, ["python", "x.py"]),
        # an executable script with a shebang, run by the environment's interpreter
        ("./scripts/train.py --lr 1", ".", {}, ["python", "scripts/train.py", "--lr", "1"]),
        ("cd src && ./run.py", "src", {}, ["python", "run.py"]),
        ("SEED=2 scripts/train.py", ".", {"SEED": "2"}, ["python", "scripts/train.py"]),
        # wrappers that time, detach or pick an environment: the program is what runs
        ("time python x.py", ".", {}, ["python", "x.py"]),
        ("nohup python x.py --a 1 &", ".", {}, ["python", "x.py", "--a", "1"]),
        ("python x.py &", ".", {}, ["python", "x.py"]),
        ("OMP_NUM_THREADS=1 time python3 x.py", ".", {"OMP_NUM_THREADS": "1"}, None),
        ("pipenv run python x.py", ".", {}, ["python", "x.py"]),
        ("poetry run python -m pkg.train", ".", {}, ["python", "-m", "pkg.train"]),
        ("uv run x.py --seed 1", ".", {}, ["python", "x.py", "--seed", "1"]),
        ("conda run -n paper python x.py", ".", {}, ["python", "x.py"]),
        ("conda run --no-capture-output -p ./env python x.py", ".", {}, ["python", "x.py"]),
        ("ipython x.py", ".", {}, ["python", "x.py"]),
        # installs and activations: the build makes the environment from its lock
        ("pip install -r requirements.txt && python train.py", ".", {}, ["python", "train.py"]),
        ("python -m pip install -e . && python train.py", ".", {}, ["python", "train.py"]),
        ("python setup.py develop; python train.py", ".", {}, ["python", "train.py"]),
        ("conda activate paper && cd src && python x.py", "src", {}, ["python", "x.py"]),
        ("source venv/bin/activate && python x.py", ".", {}, ["python", "x.py"]),
        (". .venv/bin/activate; python x.py", ".", {}, ["python", "x.py"]),
        ("conda env create -f environment.yml && python x.py", ".", {}, ["python", "x.py"]),
        ("uv sync && uv run python x.py", ".", {}, ["python", "x.py"]),
    ],
)
def test_commands_become_a_workdir_an_env_and_argv(
    text: str, workdir: str, env: dict[str, str], argv: list[str] | None
) -> None:
    got_workdir, got_env, got_argv, shell = _launch(text)
    assert (got_workdir, got_env, shell) == (workdir, env, False)
    if argv is not None:
        assert got_argv == argv


@pytest.mark.parametrize(
    "text",
    [
        "python setup.py build_ext --inplace && python train.py",
        "python -m pip download -d wheels x && python train.py",
    ],
)
def test_a_python_step_that_builds_runs_before_the_command_it_is_not(text: str) -> None:
    """The extension is built where the code runs, so the line stays whole, and the script
    that runs the experiment is the next one, not the setup script or pip."""
    command = parse_command(text)
    assert command is not None and command.problem is None
    assert command.shell and command.argv == [text]
    assert (command.script_arg, command.module) == ("train.py", None)


@pytest.mark.parametrize(
    "text", ["conda run", "uv run --with numpy python x.py", "time -p python x.py"]
)
def test_a_wrapper_with_options_it_does_not_know_is_no_python_command(text: str) -> None:
    """Options of ``uv run`` and ``time`` may change what runs: the line is not read as a
    Python command (a hint then warns) rather than guessed."""
    assert parse_command(text) is None


def test_quoted_operators_stay_arguments() -> None:
    _, _, argv, shell = _launch('python x.py --name "a|b" ";" "*.txt" \'$(x)\'')
    assert not shell
    assert argv == ["python", "x.py", "--name", "a|b", ";", "*.txt", "$(x)"]


@pytest.mark.parametrize(
    "text",
    [
        "python train.py | grep accuracy",
        "python train.py > $LOG",
        "python train.py < input.txt",
        "python train.py || echo failed",
        "python train.py & python eval.py",
        "python train.py --out $HOME/x",
        "python train.py --tag `date`",
        "python train.py --n $(nproc)",
        "python train.py data/*.csv",
        "mkdir -p out && python train.py",
        "python prepare.py && python train.py",
        "(cd src && python train.py)",
    ],
)
def test_only_a_shell_can_run_these_and_the_line_is_kept_whole(text: str) -> None:
    command = parse_command(text)
    assert command is not None and command.problem is None
    assert command.shell
    assert (command.argv, command.workdir) == ([text], ".")
    assert command.script_arg in {"train.py", "prepare.py"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("cd /etc && python x.py", "cd"),
        ("cd ../.. && python x.py", "cd"),
        ("cd ~/code && python x.py", "cd"),
        ("cd $DIR && python x.py", "cd"),
        ('python "unterminated', "quote"),
        ("python -c 'import os; os.system(\"rm -rf /\")'", "-c"),
        ("python -m", "module"),
        ("python -m 'a;b'", "module"),
        ("python " + "x" * MAX_LINE, "too long"),
    ],
)
def test_hostile_or_unusable_lines_are_a_problem_never_an_exception(
    text: str, problem: str
) -> None:
    command = parse_command(text)
    assert command is not None
    assert command.problem is not None and problem in command.problem


@pytest.mark.parametrize(
    "text",
    [
        "echo hi",
        "pip install -r requirements.txt",
        "conda activate paper",
        "python setup.py install",
        "python -m pip install -e .",
        "",
        "   ",
        "x" * 10_000,
    ],
)
def test_lines_that_run_no_python_are_none(text: str) -> None:
    assert parse_command(text) is None


def test_args_are_what_follows_the_script_or_module() -> None:
    command = parse_command("python -u x.py --a 1")
    assert command is not None and command.args == ["--a", "1"]
    module = parse_command("python -m a.b --c")
    assert module is not None and module.args == ["--c"]


def test_a_cd_line_moves_every_later_line_of_the_block() -> None:
    commands = parse_lines(["cd gcn", "python train.py --dataset cora", "cd ..", "python x.py"])
    assert [(c.workdir, c.argv) for c in commands] == [
        ("gcn", ["python", "train.py", "--dataset", "cora"]),
        (".", ["python", "x.py"]),
    ]


def test_readme_blocks_prompts_and_continuations() -> None:
    text = (
        "# Title\n\nInstall with `pip install -e .` then run `python run.py --quick`.\n\n"
        "```bash\n$ cd gcn\n$ python train.py \\\n    --epochs 200 \\\n    --seed 1\n```\n\n"
        "```python\nimport os\nos.system('python evil.py')\n```\n\n"
        "    FOO=1 python3 other.py\n\n"
        "~~~console\n% python -m pkg.eval\n~~~\n"
    )
    commands = markdown_commands(text)
    assert [(c.workdir, c.env, c.argv) for c in commands] == [
        (".", {}, ["python", "run.py", "--quick"]),
        ("gcn", {}, ["python", "train.py", "--epochs", "200", "--seed", "1"]),
        (".", {"FOO": "1"}, ["python", "other.py"]),
        (".", {}, ["python", "-m", "pkg.eval"]),
    ]


def test_a_readme_in_a_folder_runs_from_there() -> None:
    [command] = markdown_commands("```\npython demo.py\n```\n", workdir="experiments/demo")
    assert command.workdir == "experiments/demo"


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return tmp_path


def test_resolve_finds_the_script_and_the_module_in_the_repository(tmp_path: Path) -> None:
    root = _repo(tmp_path, {"a/b/run.py": "", "pkg/__init__.py": "", "pkg/mod/__main__.py": ""})
    done = resolve(_parsed("cd a && python b/run.py"), root)
    assert (done.script, done.problem) == ("a/b/run.py", None)
    module = resolve(_parsed("python -m pkg.mod"), root)
    assert module.script == "pkg/mod/__main__.py"
    missing = resolve(_parsed("python nope.py"), root)
    assert missing.script is None and missing.problem is not None
    outside = resolve(_parsed("python ../../etc/passwd.py"), root)
    assert outside.problem is not None and "outside" in outside.problem


def test_a_symlink_out_of_the_repository_is_not_a_script(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "secret.py").write_text("", "utf-8")
    (root / "link.py").symlink_to(tmp_path / "secret.py")
    done = resolve(_parsed("python link.py"), root)
    assert done.script is None and done.problem is not None


def test_a_shell_script_is_followed_to_its_python_command(tmp_path: Path) -> None:
    root = _repo(
        tmp_path,
        {
            "scripts/run.sh": "#!/bin/bash\nset -e\nexport SEED=1\ncd src\n"
            "python main.py --epochs 5 \\\n  --seed 1\n",
            "src/main.py": "",
            "two.sh": "python a.py\npython b.py\n",
            "a.py": "",
            "b.py": "",
        },
    )
    done = resolve(_parsed("bash scripts/run.sh"), root)
    assert done.problem is None
    assert (done.workdir, done.env, done.argv, done.script, done.via) == (
        "src",
        {"SEED": "1"},
        ["python", "main.py", "--epochs", "5", "--seed", "1"],
        "src/main.py",
        "scripts/run.sh",
    )
    two = resolve(_parsed("sh two.sh"), root)
    assert two.problem is not None and "2 Python commands" in two.problem
    missing = resolve(_parsed("./nothere.sh"), root)
    assert missing.problem is not None


def test_a_hint_without_its_cd_runs_where_the_readme_cds_or_in_the_one_folder(
    tmp_path: Path,
) -> None:
    root = _repo(
        tmp_path, {"gcn/train.py": "", "other/eval.py": "", "x/run.py": "", "y/run.py": ""}
    )
    known = [resolve(c, root) for c in parse_lines(["cd gcn", "python train.py"])]
    files = ["gcn/train.py", "other/eval.py", "x/run.py", "y/run.py"]
    done, how = locate(_parsed("python train.py"), root, known, files)
    assert (done.workdir, done.script, how) == ("gcn", "gcn/train.py", "the README runs it in gcn/")
    alone, how = locate(_parsed("python eval.py"), root, [], files)
    assert (alone.workdir, alone.script) == ("other", "other/eval.py")
    assert how.startswith("the only eval.py")
    both, _ = locate(_parsed("python run.py"), root, [], files)
    assert both.problem is not None and "2 folders" in both.problem


def _parsed(text: str) -> Command:
    command = parse_command(text)
    assert command is not None
    return command


def test_a_cd_the_reader_cannot_follow_alone_is_no_command() -> None:
    assert parse_command("cd /data/imagenet") is None
    assert parse_lines(["cd $ROOT", "echo ready"]) == []


def test_an_executable_script_hint_resolves_to_the_repositorys_file(tmp_path: Path) -> None:
    """``./scripts/train.py`` as a README or a claim hint writes it: the script is found in
    the repository, and a path that leaves it is not a script of the repository."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train.py").write_text("#!/usr/bin/env python\nprint(1)\n")
    done = resolve(_parsed("./scripts/train.py"), tmp_path)
    assert done.problem is None
    assert (done.script, done.argv) == ("scripts/train.py", ["python", "scripts/train.py"])
    outside = resolve(_parsed("../../etc/evil.py"), tmp_path)
    assert outside.script is None and outside.problem is not None


SHUFFLES = frozenset({"--emb", "--num-shuffles", "--all", "--help"})


@pytest.mark.parametrize(
    ("argv", "flags", "expected"),
    [
        # argparse reads --num-shuffle as --num-shuffles: the command carries it once
        (["--num-shuffle", "10", "--all"], SHUFFLES, ["--all", "--num-shuffles", "1"]),
        (["--num-shuffle=10", "--all"], SHUFFLES, ["--all", "--num-shuffles", "1"]),
        (["--num", "10", "--num-shuffles", "3"], SHUFFLES, ["--num-shuffles", "1"]),
        # ambiguous for argparse (it refuses the line): left as written
        (
            ["--num-shuffle", "10"],
            SHUFFLES | {"--num-shuffle-seed"},
            ["--num-shuffle", "10", "--num-shuffles", "1"],
        ),
        # an option of its own, not an abbreviation
        (
            ["--num-shuffle", "10"],
            SHUFFLES | {"--num-shuffle"},
            ["--num-shuffle", "10", "--num-shuffles", "1"],
        ),
        # no parser known (click, abbreviations off): nothing is read as an abbreviation
        (["--num-shuffle", "10"], frozenset(), ["--num-shuffle", "10", "--num-shuffles", "1"]),
        (["--", "-n", "--nu"], SHUFFLES, ["--", "-n", "--num-shuffles", "1"]),  # last: no value
        ([], SHUFFLES, ["--num-shuffles", "1"]),
    ],
)
def test_an_option_or_its_abbreviation_is_passed_once(
    argv: list[str], flags: frozenset[str], expected: list[str]
) -> None:
    assert with_option(argv, "--num-shuffles", "1", flags) == expected


def test_a_shorter_option_of_its_own_is_no_abbreviation_of_a_longer_one() -> None:
    flags = frozenset({"--lr", "--lr-decay"})
    assert with_option(["--lr", "0.1"], "--lr-decay", "0", flags) == [
        "--lr",
        "0.1",
        "--lr-decay",
        "0",
    ]


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        (
            "import argparse\np = argparse.ArgumentParser()\n"
            "p.add_argument('-n', '--num-shuffles', type=int)\np.add_argument('--all')\n",
            {"--num-shuffles", "--all", "--help"},
        ),
        (  # Python 2: read by a pattern
            "import argparse\np = argparse.ArgumentParser()\n"
            "p.add_argument('-n', \"--num-shuffles\", type=int)\nprint 'parsed'\n",
            {"--num-shuffles", "--help"},
        ),
        (
            "import argparse\np = argparse.ArgumentParser(allow_abbrev=False)\n"
            "p.add_argument('--num-shuffles', type=int)\n",
            set(),
        ),
        ("import click\n@click.option('--num-shuffles')\ndef main(n): pass\n", set()),
        ("", set()),
        ("\x00 def (", set()),
    ],
)
def test_the_parsers_long_options_are_what_abbreviations_are_read_against(
    text: str, flags: set[str]
) -> None:
    assert argparse_flags(text) == flags


def _argvs(lines: list[str]) -> list[list[str]]:
    return [c.argv for c in parse_lines(lines)]


def test_a_loop_over_configurations_is_one_command_a_value() -> None:
    assert _argvs(["for d in cora citeseer; do python train.py --dataset $d; done"]) == [
        ["python", "train.py", "--dataset", "cora"],
        ["python", "train.py", "--dataset", "citeseer"],
    ]
    nested = [
        "for lr in 0.1 0.01; do",
        "  for m in gcn gat",
        "  do",
        "    python x.py --lr ${lr} --model $m",
        "  done",
        "done",
    ]
    assert [argv[3::2] for argv in _argvs(nested)] == [
        ["0.1", "gcn"], ["0.1", "gat"], ["0.01", "gcn"], ["0.01", "gat"],
    ]  # fmt: skip


@pytest.mark.parametrize(
    "lines",
    [
        ["for seed in 0 1 2 3 4; do python train.py --seed $seed; done"],
        ["for s in {0..9}", "do", "python train.py --seed=${s}", "done"],
        # GRAND's run100_cora.sh: the seed also names the output file
        ["for num in $(seq 0 99)", "do", '\tpython train.py --seed $num > out/"$num".txt', "done"],
    ],
)
def test_a_loop_over_seeds_is_its_first_seeds_command(lines: list[str]) -> None:
    """The build chooses the seeds and their count: one command, at the loop's first seed."""
    [command] = parse_lines(lines)
    assert command.script_arg == "train.py"
    assert "$" not in " ".join(command.argv)
    assert "0" in " ".join(command.argv)


def test_a_readme_block_with_a_loop_gives_its_commands() -> None:
    text = "```bash\nfor seed in 1 2 3; do\n  python main.py --seed $seed\ndone\n```\n"
    assert [c.argv for c in markdown_commands(text)] == [["python", "main.py", "--seed", "1"]]


@pytest.mark.parametrize(
    "lines",
    [
        ["for f in *.yaml; do python x.py --config $f; done"],  # a glob: only a shell knows
        ["for x in $(ls); do python x.py --n $x; done"],  # a command's output
        ["for x in 1 2", "do", "python x.py --n $x"],  # no done
        ["for x in 1 2", "python x.py --n $x", "done"],  # no do
        ["for x in {1..100000000}; do python x.py --n $x; done"],  # too many values
        ["for x in {1.." + "9" * 5000 + "}; do python x.py --n $x; done"],  # too long a number
    ],
)
def test_a_loop_it_cannot_read_is_left_as_written(lines: list[str]) -> None:
    """Nothing is guessed: the loop's lines are read as they stand (a shell line or none)."""
    assert unrolled(lines) == lines
    assert all(command.shell for command in parse_lines(lines))


def test_nested_loops_unroll_to_a_bounded_number_of_lines() -> None:
    lines = [
        "for a in {1..1000}; do",
        "for b in {1..1000}; do",
        "for c in {1..1000}; do python x.py --a $a --b $b --c $c; done",
        "done",
        "done",
    ]
    assert len(unrolled(lines)) <= MAX_LINES
    assert len(parse_lines(lines)) <= MAX_LINES


def test_a_hint_that_loops_is_read_as_one_launcher_only_over_seeds() -> None:
    seeds = parse_command("for s in 1 2 3; do python train.py --seed $s; done")
    assert seeds is not None and seeds.problem is None and not seeds.shell
    assert seeds.argv == ["python", "train.py", "--seed", "1"]
    configs = parse_command("for d in cora citeseer; do python train.py --dataset $d; done")
    assert configs is not None and configs.problem is not None
    assert "loop of 2 commands" in configs.problem


def test_a_followed_script_gets_the_callers_arguments_and_its_own_folder(
    tmp_path: Path,
) -> None:
    """``bash scripts/run.sh cora``: the script's ``$1`` is ``cora``, ``${2:-200}`` its
    default, and ``cd "$(dirname "$0")"`` moves to the script's folder, as a shell would."""
    root = _repo(
        tmp_path,
        {
            "scripts/run.sh": '#!/bin/bash\ncd "$(dirname "$0")"\n'
            "python train.py --dataset $1 --epochs ${2:-200} --tag ${3}\n",
            "scripts/train.py": "",
        },
    )
    done = resolve(_parsed("bash scripts/run.sh cora"), root)
    assert done.problem is None and not done.shell
    assert (done.workdir, done.script) == ("scripts", "scripts/train.py")
    assert done.argv == ["python", "train.py", "--dataset", "cora", "--epochs", "200", "--tag"]
    again = resolve(_parsed("./scripts/run.sh citeseer 5 x"), root)
    assert again.argv[3:] == ["citeseer", "--epochs", "5", "--tag", "x"]


@pytest.mark.parametrize("arg", ["'a;b'", "'$(id)'", "'x y'", "'`id`'"])
def test_an_argument_that_is_no_plain_word_is_not_put_into_the_script(
    tmp_path: Path, arg: str
) -> None:
    """Nothing a caller passes is spliced into a line unless it is a plain word: the line
    keeps its ``$1`` and stays a shell line."""
    root = _repo(tmp_path, {"run.sh": "python train.py --dataset $1\n", "train.py": ""})
    done = resolve(_parsed(f"bash run.sh {arg}"), root)
    assert done.problem is None and done.shell
    assert done.argv == ["python train.py --dataset $1"]


@pytest.mark.parametrize(
    ("text", "argv"),
    [
        ("python train.py > log.txt", ["python", "train.py"]),
        ("python train.py >> runs/cora.txt", ["python", "train.py"]),
        ("python train.py > out.log 2>&1", ["python", "train.py"]),
        ("python train.py 2>&1 | tee log.txt", ["python", "train.py"]),
        ("python train.py | tee -a log.txt", ["python", "train.py"]),
        ("python train.py &> all.log", ["python", "train.py"]),
        ("python x.py 2> err.txt", ["python", "x.py"]),
        # '2 >' with a blank is an argument and a redirection of the output
        ("python x.py --n 2 > out.txt", ["python", "x.py", "--n", "2"]),
        ("nohup python x.py --n 2 > log 2>&1 &", ["python", "x.py", "--n", "2"]),
    ],
)
def test_output_sent_to_a_file_goes_to_the_runs_log_instead(text: str, argv: list[str]) -> None:
    """The runner writes the program's output and errors to the run's log, where the build
    reads the claim's number: a line's redirection of them to a file is dropped."""
    command = parse_command(text)
    assert command is not None and command.problem is None
    assert (command.argv, command.shell) == (argv, False)


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("python gen.py > data/x.txt", "data/x.txt"),
        ("python gen.py >> a.log 2>&1", "a.log"),
        ("python gen.py 2>&1 | tee -a o.txt", "o.txt"),
        ("python gen.py &> all.log", "all.log"),
        ('python gen.py > "q u.txt" &', "q u.txt"),
        ("python gen.py 2> err.txt", None),  # the errors only
        ("python gen.py", None),
        ("python gen.py > $OUT", None),  # only the shell knows where
    ],
)
def test_the_file_a_line_sends_its_output_to(text: str, target: str | None) -> None:
    assert output_file(text) == target


_MAKEFILE = """PYTHON ?= python3
DATASET = cora
EPOCHS := 200
.PHONY: all train data

all: train

data:
\t@mkdir -p data

train: data  # the paper's run
\t@echo "training on $(DATASET)"
\tcd src && $(PYTHON) train.py --dataset $(DATASET) \\
\t  --epochs ${EPOCHS}

prep:
\t$(PYTHON) prep.py > prep.log 2>&1

two:
\tpython prep.py
\tpython src/train.py

loop = $(loop)
spin:
\tpython prep.py --n $(loop)
"""


_TRAIN = ["python", "train.py", "--dataset", "cora", "--epochs", "200"]


@pytest.mark.parametrize(
    ("text", "workdir", "argv"),
    [
        ("make train", "src", _TRAIN),
        ("make", "src", _TRAIN),
        ("make train DATASET=citeseer", "src", [*_TRAIN[:3], "citeseer", *_TRAIN[4:]]),
        ("cd src && make -C .. train", "src", _TRAIN),
        ("make -s prep", ".", ["python", "prep.py"]),
    ],
)
def test_a_make_target_is_followed_to_the_python_command_of_its_recipe(
    tmp_path: Path, text: str, workdir: str, argv: list[str]
) -> None:
    """Variables (the line's first), prerequisites' recipes, ``@`` prefixes, continuation
    lines, the default target; each recipe line runs in a shell of its own."""
    root = _repo(tmp_path, {"Makefile": _MAKEFILE, "src/train.py": "", "prep.py": ""})
    done = resolve(_parsed(text), root)
    assert done.problem is None, done.problem
    assert (done.workdir, done.argv, done.shell, done.via) == (workdir, argv, False, "Makefile")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("make two", "2 Python commands"),
        ("make nothere", "no target 'nothere'"),
        ("make -n train", "only make can run it"),
        ("make train all", "only make can run it"),
        ("make -C src train", "no Makefile in src/"),
        ("make -C ../.. train", "outside the repository"),
        ("make -f /etc/passwd", "no /etc/passwd"),
        ("make -f ../Makefile train", "no ../Makefile"),
    ],
)
def test_a_make_line_it_cannot_follow_is_a_problem(tmp_path: Path, text: str, problem: str) -> None:
    root = _repo(tmp_path, {"Makefile": _MAKEFILE, "src/train.py": "", "prep.py": ""})
    done = resolve(_parsed(text), root)
    assert done.problem is not None and problem in done.problem


def test_a_makefile_linked_out_of_the_repository_or_too_large_is_not_read(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.mk"
    outside.write_text("train:\n\tpython x.py\n", "utf-8")
    root = _repo(tmp_path / "repo", {"x.py": "", "big/Makefile": "#" * (MAX_MAKEFILE + 1)})
    (root / "Makefile").symlink_to(outside)
    linked = resolve(_parsed("make train"), root)
    assert linked.problem is not None and "no Makefile" in linked.problem
    big = resolve(_parsed("make -C big"), root)
    assert big.problem is not None and "too large" in big.problem


def test_a_variable_made_of_itself_is_left_for_a_shell(tmp_path: Path) -> None:
    """``loop = $(loop)`` (make refuses it): expanded a bounded number of times, then left
    as written, so the line is a shell line rather than a guess."""
    root = _repo(tmp_path, {"Makefile": _MAKEFILE, "src/train.py": "", "prep.py": ""})
    done = resolve(_parsed("make spin"), root)
    assert done.problem is None and done.shell


def test_variables_that_double_at_every_level_are_expanded_once_and_bounded(
    tmp_path: Path,
) -> None:
    """A hostile Makefile whose variables double at each of 40 levels (about a terabyte
    written out): each is expanded once, and none past MAX_TEXT characters."""
    levels = ["A0 = " + "x" * 1000] + [f"A{k} = $(A{k - 1})$(A{k - 1})" for k in range(1, 41)]
    makefile = "\n".join([*levels, "train:", "\tpython x.py --n $(A40)", ""])
    root = _repo(tmp_path, {"Makefile": makefile, "x.py": ""})
    done = resolve(_parsed("make train"), root)  # expanded naively, this never ends
    assert done.problem is None and done.shell
    assert len(done.argv[0]) <= MAX_TEXT
