"""Convenience changes as code transformations: a seed option and a smoke knob.

Each transformed script is run for real (a subprocess of this interpreter, which has numpy and
click): with a seed, two runs print the same values; without one, the script behaves as
before (it is not seeded, and its own options still work).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reprobridge_sdk.agent.commands import argparse_flags, with_option
from reprobridge_sdk.agent.convenience import (
    SEED_ENV,
    add_seed_option,
    fixed_seed,
    is_iteration_count,
    smoke_knob,
)

RANDOM = "print(random.random(), np.random.rand())\n"

SEED_CASES: dict[str, tuple[str, str, list[str]]] = {
    # name: (script, how, extra arguments the script's own parser takes)
    "argparse-another-parser-name-and-alias": (
        '"""Train."""\n'
        "from __future__ import annotations\n"
        "import argparse as A; import random\n"
        "import numpy as np\n"
        "ap = A.ArgumentParser(\n"
        '    description="x",  # a comment inside the call\n'
        ")\n"
        'ap.add_argument("--lr", type=float, default=0.1); args, rest = ap.parse_known_args()\n'
        + RANDOM,
        "argparse",
        ["--lr", "0.5", "--unknown", "1"],
    ),
    "argparse-in-main-with-a-guard-and-tabs": (
        "import random\n"
        "from argparse import ArgumentParser as AP\n"
        "import numpy as np\n\n\n"
        "def main():\n"
        "\tparser = AP()\n"
        '\tparser.add_argument("--n", type=int, default=3)\n'
        "\targs = vars(parser.parse_args())\n"
        "\tassert args['n'] == 3\n"
        "\t" + RANDOM + "\n\n"
        'if __name__ == "__main__":\n'
        "\tmain()\n",
        "argparse",
        [],
    ),
    "argparse-flat-script-crlf-and-semicolons": (
        "import argparse, random\r\n"
        "import numpy as np\r\n"
        "p = argparse.ArgumentParser(); p.add_argument('--k', default='a')\r\n"
        "a = p.parse_args()\r\n" + RANDOM.replace("\n", "\r\n"),
        "argparse",
        ["--k", "b"],
    ),
    "argparse-inside-the-main-guard": (
        "import random\nimport argparse\nimport numpy as np\n"
        'if __name__ == "__main__":\n'
        "    parser = argparse.ArgumentParser()  # the only parser\n"
        "    opts = parser.parse_args()\n"
        "    " + RANDOM,
        "argparse",
        [],
    ),
    "argparse-as-an-attribute": (
        "import argparse\nimport random\nimport numpy as np\n\n\n"
        "class App:\n"
        "    def __init__(self):\n"
        "        self.parser = argparse.ArgumentParser()\n"
        "        self.args = self.parser.parse_args()\n\n\n"
        "App()\n" + RANDOM,
        "argparse",
        [],
    ),
    "click-command-imported-by-name": (
        "import random\n"
        "import numpy as np\n"
        "from click import command, option\n\n\n"
        "@command()\n"
        "@option('--n', default=3)\n"
        "def main(n):\n"
        "    assert n == 3\n"
        "    " + RANDOM + "\n\n"
        'if __name__ == "__main__":\n'
        "    main()\n",
        "click",
        [],
    ),
    "no-parser-reads-sys-argv": (
        "import random, sys\nimport numpy as np\nassert sys.argv[1:] in ([], ['x'])\n" + RANDOM,
        "env",
        ["x"],
    ),
}


def _only_insertions(old: str, new: str) -> bool:
    """Whether ``new`` is ``old`` with text inserted (``old`` is a subsequence of ``new``)."""
    rest = iter(new)
    return all(char in rest for char in old)


def _run(script: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        cwd=script.parent,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", sorted(SEED_CASES))
def test_a_seed_option_seeds_the_script_and_changes_nothing_without_a_seed(
    tmp_path: Path, name: str
) -> None:
    text, how, extra = SEED_CASES[name]
    option = add_seed_option(text)
    assert option is not None
    assert (option.how, option.seeds) == (how, ("random", "numpy"))
    script = tmp_path / "script.py"
    script.write_bytes(option.text.encode("utf-8"))
    ast.parse(option.text)
    if how == "env":
        assert option.flag == SEED_ENV
        first = _run(script, *extra, env={SEED_ENV: "7"})
        second = _run(script, *extra, env={SEED_ENV: "7"})
        unseeded = _run(script, *extra, env={SEED_ENV: ""})
    else:
        assert option.flag == "--seed"
        first = _run(script, *extra, "--seed", "7")
        second = _run(script, "--seed", "7", *extra)
        unseeded = _run(script, *extra)
    assert first == second
    assert unseeded != first
    assert _only_insertions(text, option.text)


def test_the_seed_option_keeps_crlf_line_endings() -> None:
    text, _, _ = SEED_CASES["argparse-flat-script-crlf-and-semicolons"]
    option = add_seed_option(text)
    assert option is not None
    assert option.text.count("\r\n") == option.text.count("\n")


def test_torch_is_seeded_when_the_script_imports_it() -> None:
    # torch is not installed here: the generated code is checked, not run.
    option = add_seed_option("import torch\nimport random\nprint(random.random())\n")
    assert option is not None
    assert option.seeds == ("random", "torch")
    calls = {
        ast.unparse(node.func)
        for node in ast.walk(ast.parse(option.text))
        if isinstance(node, ast.Call)
    }
    assert {"random.seed", "torch.manual_seed"} <= calls
    assert "numpy.random.seed" not in calls


def test_a_script_that_names_seed_already_gets_another_flag() -> None:
    text = (
        "import argparse, random\np = argparse.ArgumentParser()\n"
        "p.add_argument('--seed-file')\np.parse_args()\n"
    )
    option = add_seed_option(text.replace("--seed-file", "--seed"))
    assert option is not None and option.flag == "--repro-seed"


@pytest.mark.parametrize(
    "text",
    [
        "print 'python 2'\n",  # does not parse as Python 3
        "def _repro_seed(value):\n    return value\n",  # changed already
        '"""Only a docstring."""\n',  # nothing to put the function before
    ],
)
def test_no_seed_option_for_what_cannot_be_changed(text: str) -> None:
    assert add_seed_option(text) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("--epochs", True),
        ("--n-epochs", True),
        ("max_iter", True),
        ("N_ESTIMATORS", True),
        ("--num-train-steps", True),
        ("maxiter", True),
        ("nIter", True),
        ("numepochs", True),
        ("maximum", False),
        ("nitrogen", False),
        ("--warmup-steps", False),
        ("--log-steps", False),
        ("flush_logs_every_n_steps", False),  # a period (Lightning's Trainer), not a bound
        ("check_val_every_n_epoch", False),
        ("--save-every-n-iters", False),
        ("eval_freq_steps", False),
        ("--anneal_lr_steps", False),  # a schedule's length, not the training's
        ("lr_decay_steps", False),
        ("--lr", False),
        ("--seed", False),
    ],
)
def test_iteration_counts(name: str, expected: bool) -> None:
    assert is_iteration_count(name) is expected


KNOB_SCRIPT = 'import random\n{body}total = 0\n{loop}    total += 1\nprint("iterations:", total)\n'


@pytest.mark.parametrize(
    "case",
    [
        (
            "EPOCHS = 40  # the paper's\n",
            "for _ in range(EPOCHS):\n",
            "constant",
            "REPRO_EPOCHS",
            40,
        ),
        (
            "def fit(n_estimators=3):\n    return n_estimators\n",
            "for _ in range(fit(n_estimators=1_000)):\n",
            "keyword",
            "REPRO_N_ESTIMATORS",
            1000,
        ),
        (
            "def minimize(options):\n    return options['maxiter']\n",
            "for _ in range(minimize(options={'maxiter': 50000, 'ftol': 1.0})):\n",
            "keyword",
            "REPRO_MAXITER",
            50000,
        ),
        (
            "",
            "for _ in range(300):\n    for _b in range(2000): pass\n",
            "loop",
            "REPRO_ITERATIONS",
            300,
        ),
    ],
)
def test_a_smoke_knob_is_patched_in_and_the_default_is_unchanged(
    tmp_path: Path, case: tuple[str, str, str, str, int]
) -> None:
    body, loop, kind, variable, full = case
    text = KNOB_SCRIPT.format(body=body, loop=loop)
    knob = smoke_knob(text, ["python", "script.py"])
    assert knob is not None and knob.text is not None
    assert (knob.kind, list(knob.env)) == (kind, [variable])
    script = tmp_path / "script.py"
    script.write_text(knob.text, "utf-8")
    small = int(knob.env[variable])
    assert _run(script) == f"iterations: {full}\n"
    assert _run(script, env=knob.env) == f"iterations: {small}\n"
    assert small < full


def test_an_iteration_option_is_passed_small_without_a_patch() -> None:
    text = (
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--warmup-steps', type=int, default=100)\n"
        "p.add_argument('-r', '--n-rounds', type=int, default=300)\n"
        "EPOCHS = 10\np.parse_args()\n"
    )
    knob = smoke_knob(text, ["python", "x.py"])
    assert knob is not None
    assert (knob.kind, knob.args, knob.text, knob.default) == (
        "option",
        ("--n-rounds", "5"),
        None,
        "300",
    )
    # passed already (by the planner): the next knob, the constant
    knob = smoke_knob(text, ["python", "x.py", "--n-rounds", "5"])
    assert knob is not None and (knob.kind, knob.env) == ("constant", {"REPRO_EPOCHS": "1"})


_SPLITS_SCRIPT = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--epochx", type=int, default=10)
args = parser.parse_args()
EPOCHS = 40
n_splits = int(open("n_splits.txt").read())
done = 0
for split in range(int(n_splits)):
    for epoch in range(EPOCHS * args.epochx):
        done += 1
print("runs:", n_splits, done)
"""


def test_a_loop_over_splits_is_one_split_in_the_smoke_run(tmp_path: Path) -> None:
    """The training's length (``EPOCHS``) and the loop over a file's count of splits are
    shortened together, in one edit of the script; without the variables it runs as
    published."""
    knob = smoke_knob(_SPLITS_SCRIPT, ["python", "x.py", "--epochx", "10"])
    assert knob is not None and knob.also is not None
    assert (knob.kind, knob.env) == ("constant", {"REPRO_EPOCHS": "1"})
    also = knob.also
    assert (also.kind, also.name, also.default, also.env) == (
        "loop",
        "n_splits",
        "int(n_splits)",
        {"REPRO_N_SPLITS": "1"},
    )
    assert also.text is not None and also.text.count("def _repro_knob(") == 1
    (tmp_path / "n_splits.txt").write_text("20\n", "utf-8")
    script = tmp_path / "x.py"
    script.write_text(also.text, "utf-8")
    assert _run(script) == "runs: 20 8000\n"
    assert _run(script, env={**knob.env, **also.env}) == "runs: 20 10\n"


@pytest.mark.parametrize(
    ("text", "argv", "expected"),
    [
        (  # DeepWalk's scoring: an option for the number of shuffles, no iteration count
            "import argparse\np = argparse.ArgumentParser()\n"
            "p.add_argument('--num-shuffles', default=2, type=int)\np.parse_args()\n",
            ["python", "scoring.py"],
            ("option", ("--num-shuffles", "1"), {}),
        ),
        (
            "N_FOLDS = 10\nfor fold in range(N_FOLDS):\n    pass\n",
            ["python", "cv.py"],
            ("constant", (), {"REPRO_N_FOLDS": "1"}),
        ),
        (
            "import sys\nfor r in range(sys.flags.num_repeats):\n    pass\n",
            ["python", "r.py"],
            ("loop", (), {"REPRO_NUM_REPEATS": "1"}),
        ),
    ],
)
def test_a_count_of_repetitions_alone_is_a_knob(
    text: str, argv: list[str], expected: tuple[str, tuple[str, ...], dict[str, str]]
) -> None:
    knob = smoke_knob(text, argv)
    assert knob is not None and knob.also is None
    assert (knob.kind, knob.args, knob.env) == expected


@pytest.mark.parametrize(
    "text",
    [
        # passed by the launcher already, one already, a loop over a list, not a count
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--n-splits', default=5)\n",
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--n-folds', default=1)\n",
        "splits = [1, 2]\nfor s in splits:\n    pass\n",
        "for s in range(len(splits)):\n    pass\nsplit_ratio = 3\n",
        "n_splits = 1\nfor s in range(n_splits):\n    pass\n",
    ],
)
def test_no_repetition_knob_where_nothing_repeats(text: str) -> None:
    assert smoke_knob(text, ["python", "x.py", "--n-splits", "2"]) is None


def test_a_repetition_count_given_abbreviated_is_shortened_in_its_place() -> None:
    """The README's ``--num-shuffle 10`` is argparse's ``--num-shuffles``: the knob's value
    replaces it, as the smoke shortening passes it (one option, not two that only work
    because argparse keeps the last)."""
    text = (
        "from argparse import ArgumentParser\n"
        "def main():\n"
        "    parser = ArgumentParser('scoring')\n"
        "    parser.add_argument('--emb', required=True)\n"
        "    parser.add_argument('--num-shuffles', default=2, type=int)\n"
        "    parser.add_argument('--all', default=False, action='store_true')\n"
        "    args = parser.parse_args()\n"
    )
    argv = ["python", "scoring.py", "--emb", "e", "--num-shuffle", "10", "--all"]
    knob = smoke_knob(text, argv)
    assert knob is not None and knob.args == ("--num-shuffles", "1")
    shortened = with_option(argv, *knob.args, argparse_flags(text))
    assert shortened == ["python", "scoring.py", "--emb", "e", "--all", "--num-shuffles", "1"]


def test_no_knob_for_a_script_without_an_iteration_count() -> None:
    text = "import time\nwhile time.monotonic() < 0:\n    pass\nfor x in range(3):\n    pass\n"
    assert smoke_knob(text, ["python", "x.py"]) is None
    assert smoke_knob("print 'py2'\n", ["python", "x.py"]) is None


@pytest.mark.parametrize(
    ("text", "seed"),
    [
        ("import numpy as np\nnp.random.seed(0)\n", 0),
        ("import tensorflow as tf\nseed = 123\ntf.set_random_seed(seed)\n", 123),
        ("import torch\ntorch.manual_seed(7)\n", 7),
        ("from gcn.utils import *\nnp.random.seed(5)\n", 5),  # np from a star import
        ("import random\nrandom.seed()\n", None),  # seeded from the clock
        ("import numpy as np\nnp.random.seed(args.seed)\n", None),  # an option
        ("import numpy as np\ns = 1\ns = 2\nnp.random.seed(s)\n", None),  # reassigned
        ("import numpy as np\nnp.random.seed(1.5)\n", None),
        ("def f(:\n", None),  # not Python 3
    ],
)
def test_a_seed_the_script_fixes_itself_is_found(text: str, seed: int | None) -> None:
    assert fixed_seed(text) == seed


#: APPNP's shape: the script sets a model's propagation iterations (``niter``) and imports
#: the training's length from an early-stopping module.
_STOPPING_MODULE = (
    "# max_epochs = 7 in a comment is no count\n"
    "stopping_args = dict(patience=100, max_epochs=10_000, warmup_epochs=5)\n"
)
_PROPAGATING_SCRIPT = (
    "from training.stopping import stopping_args\n\n"
    "def propagation(alpha, niter):\n    return niter\n\n"
    "prop = propagation(alpha=0.1, niter=10)\n"
    "epochs = 0\n"
    "for _ in range(stopping_args['max_epochs']):\n    epochs += 1\n"
    "print('propagation', prop, 'epochs', epochs)\n"
)


def test_the_knob_prefers_the_training_length_of_an_imported_module_to_niter(
    tmp_path: Path,
) -> None:
    modules = {"training/stopping.py": _STOPPING_MODULE, "training/__init__.py": ""}
    knob = smoke_knob(_PROPAGATING_SCRIPT, ["python", "train.py"], modules)
    assert knob is not None and knob.text is not None
    assert (knob.kind, knob.name, knob.default, knob.file) == (
        "keyword",
        "max_epochs",
        "10_000",
        "training/stopping.py",
    )
    assert knob.env == {"REPRO_MAX_EPOCHS": "1"}
    (tmp_path / "training").mkdir()
    (tmp_path / "training" / "__init__.py").write_text("", "utf-8")
    (tmp_path / "training" / "stopping.py").write_text(knob.text, "utf-8")
    (tmp_path / "train.py").write_text(_PROPAGATING_SCRIPT, "utf-8")
    # the script is unchanged; the scored run (no variable) trains as long as before
    assert _run(tmp_path / "train.py") == "propagation 10 epochs 10000\n"
    assert _run(tmp_path / "train.py", env=knob.env) == "propagation 10 epochs 1\n"


@pytest.mark.parametrize(
    ("script", "modules", "chosen"),
    [
        # alone, the script's niter is its knob (the modules have no count, or do not parse)
        (_PROPAGATING_SCRIPT, {}, ("niter", None)),
        (
            _PROPAGATING_SCRIPT,
            {"m.py": "patience = 10\n", "bad.py": "print 'py2'\n"},
            ("niter", None),
        ),
        # a module's iteration name does not displace the script's own
        (_PROPAGATING_SCRIPT, {"m.py": "N_ITERS = 500\n"}, ("niter", None)),
        # the script's own training length wins over the module's
        ("EPOCHS = 3\n" + _PROPAGATING_SCRIPT, {"s.py": _STOPPING_MODULE}, ("EPOCHS", None)),
        # within the script: epochs before an earlier niter
        ("f(niter=10)\nfit(n_epochs=200)\n", {}, ("n_epochs", None)),
        # a script without any count follows a module's, even an iteration name
        ("import m\nm.run()\n", {"m.py": "MAX_ITER = 300\n"}, ("MAX_ITER", "m.py")),
    ],
)
def test_the_knob_ranks_training_lengths_first(
    script: str, modules: dict[str, str], chosen: tuple[str, str | None]
) -> None:
    knob = smoke_knob(script, ["python", "x.py"], modules)
    assert knob is not None
    assert (knob.name, knob.file) == chosen


#: openai/grok's shape: the script parses the arguments of a parser its package builds, whose
#: options include a schedule's length and an override without a default before the count.
_PARSER_MODULE = (
    "import argparse\n\n"
    "def add_args():\n"
    "    parser = argparse.ArgumentParser()\n"
    '    parser.add_argument("--anneal_lr_steps", type=int, default=100000)\n'
    '    parser.add_argument("--max_epochs", type=int, default=None)\n'
    '    parser.add_argument("--max_steps", type=int, default=100_000)\n'
    "    return parser\n\n"
    "def train(args):\n"
    "    done = 0\n"
    "    for _ in range(args.max_steps):\n"
    "        done += 1\n"
    "    return done\n"
)
_BORROWING_SCRIPT = (
    "import pkg.training\n\n"
    "parser = pkg.training.add_args()\n"
    "hparams = parser.parse_args()\n"
    'print("steps", pkg.training.train(hparams))\n'
)


def test_a_script_parsing_a_parser_its_package_builds_takes_the_modules_count(
    tmp_path: Path,
) -> None:
    modules = {"pkg/__init__.py": "", "pkg/training.py": _PARSER_MODULE}
    knob = smoke_knob(_BORROWING_SCRIPT, ["python", "scripts/train.py"], modules)
    assert knob is not None
    assert (knob.kind, knob.args, knob.default, knob.file) == (
        "option",
        ("--max_steps", "5"),
        "100000",
        "pkg/training.py",
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", "utf-8")
    (tmp_path / "pkg" / "training.py").write_text(_PARSER_MODULE, "utf-8")
    (tmp_path / "train.py").write_text(_BORROWING_SCRIPT, "utf-8")
    assert _run(tmp_path / "train.py", *knob.args) == "steps 5\n"
    # a script that builds its own parser declares its own options: the module's are not
    own = "import argparse\nimport pkg.training\nargparse.ArgumentParser().parse_args()\n"
    assert smoke_knob(own, ["python", "x.py"], modules) is None


#: ironjr/grokfast's shape: an option named for a budget of steps, not a count, bounds the
#: outermost loop through an expression, inside a progress bar.
_BUDGET_SCRIPT = (
    "import argparse\n\n"
    "def progress(items):\n    return items\n\n"
    "def main(args):\n"
    "    data = list(range(20))\n"
    "    for i in range(len(data)):\n        data[i] += 1\n"
    "    steps_per_epoch = 4\n"
    "    epochs = 0\n"
    "    for e in progress(range(int(args.budget) // steps_per_epoch)):\n"
    "        for _ in range(steps_per_epoch):\n            pass\n"
    "        epochs += 1\n"
    '    print("epochs", epochs)\n\n'
    'if __name__ == "__main__":\n'
    "    parser = argparse.ArgumentParser()\n"
    '    parser.add_argument("--budget", type=int, default=3e5)\n'
    '    parser.add_argument("--label", default="")\n'
    "    main(parser.parse_args())\n"
)


def test_an_option_that_bounds_the_outermost_loop_is_its_knob(tmp_path: Path) -> None:
    knob = smoke_knob(_BUDGET_SCRIPT, ["python", "main.py", "--label", "x"])
    assert knob is not None and knob.text is not None
    assert (knob.kind, knob.default, knob.env) == (
        "loop",
        "int(args.budget) // steps_per_epoch",
        {"REPRO_ITERATIONS": "5"},
    )
    (tmp_path / "main.py").write_text(knob.text, "utf-8")
    assert _run(tmp_path / "main.py", "--budget", "40") == "epochs 10\n"  # as published
    assert _run(tmp_path / "main.py", env=knob.env) == "epochs 5\n"
    # a loop over the data's length reads no option: no knob; nor one over an option the
    # smoke launcher passes already, or over repetitions (their own knob's)
    plain = _BUDGET_SCRIPT.replace("int(args.budget) // steps_per_epoch", "len(data)")
    assert smoke_knob(plain, ["python", "main.py"]) is None
    assert smoke_knob(_BUDGET_SCRIPT, ["python", "main.py", "--budget=8"]) is None
    shuffles = _BUDGET_SCRIPT.replace("budget", "num_shuffles")
    knob = smoke_knob(shuffles, ["python", "main.py"])
    assert knob is not None and (knob.kind, knob.args) == ("option", ("--num_shuffles", "1"))


_FIXED = (
    "import numpy as np\n"
    "# seed = 5 in a comment, and np.random.seed(6)\n"
    "seed = 123\n"
    "np.random.seed(seed)\n"
    'print("np.random.seed(7)", np.random.rand())\n'
)


def test_a_constant_seed_reads_the_launchers_seed_and_is_the_default(tmp_path: Path) -> None:
    """GCN's shape: a seed given before the script's own seeding would be overridden, so the
    constant itself becomes a read of the launcher's seed, with the constant as default."""
    option = add_seed_option(_FIXED)
    assert option is not None
    assert (option.how, option.flag, option.fixed, option.seeds) == (
        "env",
        SEED_ENV,
        123,
        ("np.random.seed",),
    )
    assert "seed = _repro_seed_or(123)\n" in option.text
    assert "# seed = 5 in a comment, and np.random.seed(6)\n" in option.text
    assert 'print("np.random.seed(7)", np.random.rand())' in option.text
    script = tmp_path / "run.py"
    script.write_text(_FIXED, "utf-8")
    published = _run(script)
    script.write_text(option.text, "utf-8")
    assert _run(script) == published == _run(script, env={SEED_ENV: "123"})
    assert _run(script, env={SEED_ENV: "124"}) != published
    assert _run(script, env={SEED_ENV: "124"}) == _run(script, env={SEED_ENV: "124"})


@pytest.mark.parametrize(
    ("text", "replaced"),
    [
        # literal arguments, each replaced; the file's other numbers untouched
        (
            "import random, torch\nrandom.seed(0); torch.manual_seed(7)\nx = 7\n",
            "random.seed(_repro_seed_or(0)); torch.manual_seed(_repro_seed_or(7))\nx = 7\n",
        ),
        # a variable named seed that no seeding call reads is not a seed: the plain option
        ("import random\nseed = 5\nprint(seed)\n", None),
        # read from the command line, not a constant
        ("import sys, random\nseed = int(sys.argv[1])\nrandom.seed(seed)\n", None),
    ],
)
def test_only_a_constant_a_seeding_call_reads_is_replaced(text: str, replaced: str | None) -> None:
    option = add_seed_option(text)
    assert option is not None
    if replaced is None:
        assert option.fixed is None and "_repro_seed_or" not in option.text
    else:
        assert option.fixed == 0 and option.text.endswith(replaced)


#: SVGD's shape: the training's length is one item of a tuple assignment inside the
#: ``__main__`` block, passed on by name; a loop's counter and a lookalike stay as they are.
_MAIN_BLOCK_SCRIPT = (
    "def train(max_iter=1000):\n"
    "    done = 0\n"
    "    for _ in range(max_iter):\n"
    "        done += 1\n"
    "    return done\n\n"
    "if __name__ == '__main__':\n"
    "    step = 0\n"
    "    batch_size, n_hidden, max_iter = 100, 50, 2000  # a trade-off\n"
    "    a, b = c = 1, 2\n"
    "    print('iterations:', train(max_iter=max_iter))\n"
)


def test_the_knob_reads_a_tuple_assignment_in_the_main_block(tmp_path: Path) -> None:
    knob = smoke_knob(_MAIN_BLOCK_SCRIPT, ["python", "bayesian_nn.py"])
    assert knob is not None and knob.text is not None
    assert (knob.kind, knob.name, knob.default, knob.env) == (
        "constant",
        "max_iter",
        "2000",
        {"REPRO_MAX_ITER": "5"},
    )
    script = tmp_path / "bayesian_nn.py"
    script.write_text(knob.text, "utf-8")
    assert _run(script) == "iterations: 2000\n"
    assert _run(script, env=knob.env) == "iterations: 5\n"
    # a main block of another test (``if name == ...``) is not read
    other = _MAIN_BLOCK_SCRIPT.replace("__name__ ==", "'x' ==")
    assert smoke_knob(other, ["python", "x.py"]) is None


#: greydanus/mnist1d's shape: a notebook's cell sets the count on the arguments object
#: (``args.total_steps = 6000``) that a module's training loop reads, prints its label only
#: every ``print_every`` steps, and a later cell's figure keeps its own copy of the count.
_ATTRIBUTE_MODULE = (
    "class View:\n"
    "    def __init__(self, d):\n"
    "        self.__dict__ = d\n\n\n"
    "def get_model_args():\n"
    "    return View({'total_steps': 8000, 'print_every': 1000, 'eval_every': 250})\n\n\n"
    "def train_model(args):\n"
    "    results = []\n"
    "    for step in range(args.total_steps + 1):\n"
    "        if args.eval_every > 0 and step % args.eval_every == 0:\n"
    "            results.append(step)\n"
    "        if step > 0 and step % args.print_every == 0:\n"
    '            print("step {}, test_acc {:.1f}".format(step, 90.0))\n'
    "    return results\n"
)
_ATTRIBUTE_SCRIPT = (
    "# %% cell 1\n"
    "from train import get_model_args, train_model\n\n"
    "args = get_model_args()\n"
    "args.total_steps = 6000\n"
    "results = train_model(args)\n"
    "# %% cell 2\n"
    "steps = 6000\n"
    "eval_every = 250\n"
    "t = range(0, steps + 1, eval_every)\n"
    "assert len(t) == len(results), (len(t), len(results))\n"
    'print("points", len(t))\n'
)


def test_a_count_assigned_to_an_attribute_a_loop_reads_is_the_knob(tmp_path: Path) -> None:
    """Not the figure's ``steps``: the attribute the training loop reads, small enough for a
    smoke run but long enough for one print of the label; the figure's copy follows it."""
    modules = {"train.py": _ATTRIBUTE_MODULE}
    knob = smoke_knob(_ATTRIBUTE_SCRIPT, ["python", "nb.py"], modules, labels=["test_acc"])
    assert knob is not None and knob.text is not None
    assert (knob.kind, knob.name, knob.default, knob.file) == (
        "attribute",
        "args.total_steps",
        "6000",
        None,
    )
    assert knob.env == {"REPRO_TOTAL_STEPS": "1001"}  # one print period and one step
    assert 'steps = _repro_knob("REPRO_TOTAL_STEPS", 6000)' in knob.text
    (tmp_path / "train.py").write_text(_ATTRIBUTE_MODULE, "utf-8")
    script = tmp_path / "nb.py"
    script.write_text(knob.text, "utf-8")
    assert _run(script).splitlines()[-1] == "points 25"  # as published: 6000 steps
    assert _run(script, env=knob.env).splitlines() == ["step 1000, test_acc 90.0", "points 5"]
    # without the claims' labels the count is the smallest
    plain = smoke_knob(_ATTRIBUTE_SCRIPT, ["python", "nb.py"], modules)
    assert plain is not None and plain.env == {"REPRO_TOTAL_STEPS": "5"}


@pytest.mark.parametrize(
    ("script", "modules", "chosen"),
    [
        # a method's attribute a while loop reads
        (
            "class Model:\n"
            "    def __init__(self):\n"
            "        self.n_iter = 5000\n"
            "        self.it = 0\n"
            "    def fit(self):\n"
            "        while self.it < self.n_iter:\n"
            "            self.it += 1\n"
            "Model().fit()\n",
            {},
            ("attribute", "self.n_iter", "REPRO_N_ITER"),
        ),
        # a config's epochs that a module's loop reads
        (
            "import trainer\nconfig = trainer.Config()\nconfig.epochs = 200\ntrainer.fit(config)\n",
            {"trainer.py": "def fit(cfg):\n    for _ in range(cfg.epochs):\n        pass\n"},
            ("attribute", "config.epochs", "REPRO_EPOCHS"),
        ),
        # an attribute no loop reads bounds nothing seen: no knob
        ("import m\nconfig = m.Config()\nconfig.epochs = 200\nm.fit(config)\n", {}, None),
        # a name still comes first when it is earlier
        (
            "EPOCHS = 30\nargs.epochs = 200\nfor _ in range(args.epochs * EPOCHS):\n    pass\n",
            {},
            ("constant", "EPOCHS", "REPRO_EPOCHS"),
        ),
    ],
)
def test_an_attribute_is_a_knob_only_when_a_loop_reads_it(
    script: str, modules: dict[str, str], chosen: tuple[str, str, str] | None
) -> None:
    knob = smoke_knob(script, ["python", "x.py"], modules)
    if chosen is None:
        assert knob is None
    else:
        assert knob is not None and (knob.kind, knob.name, *knob.env) == chosen


_PERIODIC = (
    "import argparse\n"
    "parser = argparse.ArgumentParser()\n"
    'parser.add_argument("--print-every", type=int, default=200)\n'
    "args = parser.parse_args()\n"
    "PRINT_EVERY = 500\n"
    "EPOCHS = 4000\n"
    "for epoch in range(EPOCHS):\n"
    "    loss = 1.0 / (epoch + 1)\n"
    "    {guard}\n"
    '        print("epoch", epoch, "test accuracy", 0.9)\n'
    "{after}"
)


@pytest.mark.parametrize(
    ("guard", "after", "small"),
    [
        # true at the first step: no more than the smallest count
        ("if epoch % 1000 == 0:", "", "1"),
        ("if not epoch % 1000:", "", "1"),
        # the first print comes after one period
        ("if (epoch + 1) % 1000 == 0:", "", "1001"),
        ("if epoch > 0 and epoch % PRINT_EVERY == 0:", "", "501"),
        ("if epoch and epoch % args.print_every == 0:", "", "201"),
        # a period of another counter, or one the code gives no value, is not the loop's
        ("if loss % 1000 == 0:", "", "1"),
        ("if epoch and epoch % args.unknown == 0:", "", "1"),
        # printed outside the period too, or after the loop: nothing to wait for
        ("if epoch % 1000 == 999:\n        pass\n    else:", "", "1"),
        ("if epoch and epoch % 1000 == 0:", 'print("test accuracy", 0.9)\n', "1001"),
        ("if False:", 'print("test accuracy", 0.9)\n', "1"),
    ],
)
def test_a_count_is_not_shortened_below_one_print_of_the_label(
    guard: str, after: str, small: str
) -> None:
    text = _PERIODIC.format(guard=guard, after=after)
    knob = smoke_knob(text, ["python", "x.py"], labels=["Test Accuracy"])
    assert knob is not None and (knob.name, knob.env) == ("EPOCHS", {"REPRO_EPOCHS": small})
    # a count smaller than the period is the whole count
    knob = smoke_knob(
        text.replace("EPOCHS = 4000", "EPOCHS = 700"), ["x.py"], labels=["test accuracy"]
    )
    assert knob is not None and int(knob.env["REPRO_EPOCHS"]) <= 700
