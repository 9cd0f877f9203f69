"""A script that never ends on its own: read from its code, and what the build makes of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobridge_sdk.agent._endless import MAX_DEPTH, EndlessLoop, endless_loop
from reprobridge_sdk.agent.imports import closure

#: The Planetoid class: training in a loop that prints the accuracy at every step and never
#: exits (the published code is stopped by hand).
PLANETOID = (
    "import numpy as np\n"
    "\n"
    "rng = np.random.default_rng(0)\n"
    "weights = rng.normal(size=4)\n"
    "step = 0\n"
    "while True:\n"
    "    weights -= 0.01 * weights\n"
    "    step += 1\n"
    '    print("step %d accuracy 0.71" % step, flush=True)\n'
)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (PLANETOID, EndlessLoop(6, "while True:")),
        # in the function that the __main__ block calls, through another function
        (
            "def train():\n"
            "    while 1:\n"
            "        print('accuracy 0.71')\n\n"
            "def main():\n"
            "    train()\n\n"
            "if __name__ == '__main__':\n"
            "    main()\n",
            EndlessLoop(2, "while 1:"),
        ),
        # a break of an inner loop leaves the inner loop only
        (
            "while True:\n    for i in range(3):\n        if i:\n            break\n",
            EndlessLoop(1, "while True:"),
        ),
        # a return of a nested function or a lambda: not run by the loop
        (
            "while True:\n    def stop():\n        return 1\n    f = lambda: 0\n",
            EndlessLoop(1, "while True:"),
        ),
    ],
)
def test_an_endless_loop_the_run_reaches_is_found_with_its_line(
    text: str, found: EndlessLoop
) -> None:
    assert endless_loop(text) == found


@pytest.mark.parametrize(
    "text",
    [
        # a break behind a condition: the loop ends when it holds
        "acc = 0.0\nwhile True:\n    acc += 0.1\n    if acc > 0.7:\n        break\n",
        # a loop in a function never called
        "def serve():\n    while True:\n        pass\n\nprint('accuracy 0.71')\n",
        # a loop that ends by raise, by sys.exit, by os._exit, by return, by next()
        "while True:\n    if input():\n        raise RuntimeError('done')\n",
        "import sys\nwhile True:\n    sys.exit(0)\n",
        "import os\nwhile True:\n    os._exit(0)\n",
        "def main():\n    while True:\n        return 1\nmain()\n",
        "it = iter(range(3))\nwhile True:\n    print(next(it))\n",
        # a way out in a function of the script that the loop calls
        "import sys\ndef check(a):\n    if a > 1:\n        sys.exit()\nwhile True:\n    check(2)\n",
        # a break in the else of an inner loop is the outer loop's
        "while True:\n    for i in range(3):\n        pass\n    else:\n        break\n",
        # a generator's loop: its consumer stops it
        "def batches():\n    while True:\n        yield 1\nfor b in batches():\n    break\n",
        # a script that hangs without any loop
        "import time\ntime.sleep(3600)\n",
        # a loop that is not written always true, and a script that does not parse
        "n = 0\nwhile n < 10:\n    n += 1\n",
        "while True print 'python 2'\n",
    ],
)
def test_a_loop_with_a_way_out_or_no_loop_is_not_endless(text: str) -> None:
    assert endless_loop(text) is None


# ------------------------------------------------------------------ into the repository's modules


def _in_repository(tmp_path: Path, files: dict[str, str]) -> EndlessLoop | None:
    """The endless loop ``train.py`` reaches in a repository of ``files``, its calls followed
    through its import closure."""
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    reached = closure(tmp_path, "train.py")
    return endless_loop(files["train.py"], tmp_path, reached)


_TRAINER = (
    "class Trainer:\n"
    "    def __init__(self, lr):\n"
    "        self.lr = lr\n"
    "    def step(self):\n"
    "        self.lr *= 0.99\n"
    "    def train(self):\n"
    "        while True:\n"
    "            self.step()\n"
)


@pytest.mark.parametrize(
    ("files", "found"),
    [
        # a method of an instance of a class another module defines (its line there)
        (
            {
                "train.py": "from models.x import Trainer\nmodel = Trainer(0.1)\nmodel.train()\n",
                "models/__init__.py": "",
                "models/x.py": _TRAINER,
            },
            EndlessLoop(7, "while True:", "models/x.py"),
        ),
        # a function of a module imported under another name, from the __main__ block
        (
            {
                "train.py": "import models.loop as ml\n\n"
                "if __name__ == '__main__':\n    ml.run(3)\n",
                "models/__init__.py": "",
                "models/loop.py": "def run(n):\n    while 1:\n        n += 1\n",
            },
            EndlessLoop(2, "while 1:", "models/loop.py"),
        ),
        # a method the class inherits from a base of another module, through a package's
        # re-export and a relative import
        (
            {
                "train.py": "from models import Net\n\ndef main():\n    net = Net()\n"
                "    net.fit()\n\nmain()\n",
                "models/__init__.py": "from .net import Net\n",
                "models/net.py": "from .base import Base\n\nclass Net(Base):\n    pass\n",
                "models/base.py": "class Base:\n    def fit(self):\n        while True:\n"
                "            print('accuracy 0.71')\n",
            },
            EndlessLoop(3, "while True:", "models/base.py"),
        ),
        # Planetoid: the script's loop calls methods that draw batches with next() from an
        # endless generator of their own: that next() is no way out of the script's loop
        (
            {
                "train.py": "from trans_model import trans_model as model\nm = model()\n"
                "while True:\n    m.step_train()\n    print('accuracy 0.71')\n",
                "trans_model.py": "from base_model import base_model\n\n"
                "class trans_model(base_model):\n    def step_train(self):\n"
                "        x = next(self.batches)\n        self.comp_iter(x)\n",
                "base_model.py": "class base_model(object):\n    def __init__(self):\n"
                "        self.batches = self.gen()\n    def gen(self):\n        while True:\n"
                "            yield 1\n    def comp_iter(self, x):\n        return x\n",
            },
            EndlessLoop(3, "while True:"),
        ),
    ],
    ids=["method-of-an-instance", "module-function", "inherited-method", "planetoid"],
)
def test_an_endless_loop_in_a_module_the_script_calls_is_found_there(
    tmp_path: Path, files: dict[str, str], found: EndlessLoop
) -> None:
    assert _in_repository(tmp_path, files) == found


@pytest.mark.parametrize(
    "files",
    [
        # the loop of the module calls a function of a third module that exits
        {
            "train.py": "from models.x import Trainer\nt = Trainer(0.1)\nt.train()\n",
            "models/__init__.py": "",
            "models/x.py": "from models.stop import check\n"
            + _TRAINER.replace("self.step()", "check(self.lr)"),
            "models/stop.py": "import sys\ndef check(lr):\n    if lr < 1e-3:\n"
            "        sys.exit(0)\n",
        },
        # a loop of the module with a break behind a condition, or a raise
        {
            "train.py": "from models.x import Trainer\nt = Trainer(0.1)\nt.train()\n",
            "models/__init__.py": "",
            "models/x.py": _TRAINER.replace(
                "self.step()", "if self.lr < 1:\n                break"
            ),
        },
        {
            "train.py": "import loop\nloop.run()\n",
            "loop.py": "def run():\n    while True:\n        raise StopIteration\n",
        },
        # a module of Python 2 is not read: its loop is not claimed endless
        {
            "train.py": "import loop\nloop.run()\n",
            "loop.py": "def run():\n    while True:\n        print 'step'\n",
        },
        # a method of a name the rules cannot type (a factory's result) is not followed
        {
            "train.py": "from models.x import Trainer\nt = make(Trainer)\nt.train()\n",
            "models/__init__.py": "",
            "models/x.py": _TRAINER,
        },
        # a function of a file the script does not import is not read
        {
            "train.py": "run()\n",
            "loop.py": "def run():\n    while True:\n        pass\n",
        },
    ],
    ids=[
        "exit-in-a-third-module",
        "break-in-the-module",
        "raise-in-the-module",
        "python2-module",
        "untyped-instance",
        "not-imported",
    ],
)
def test_a_module_loop_with_a_way_out_or_out_of_reach_is_not_endless(
    tmp_path: Path, files: dict[str, str]
) -> None:
    assert _in_repository(tmp_path, files) is None


def test_calls_are_followed_at_most_max_depth_deep(tmp_path: Path) -> None:
    """A chain of calls through modules: a loop one call past the bound is not read."""

    def chain(length: int) -> dict[str, str]:
        files = {"train.py": "import m1\nm1.f()\n"}
        for index in range(1, length):
            files[f"m{index}.py"] = f"import m{index + 1}\ndef f():\n    m{index + 1}.f()\n"
        files[f"m{length}.py"] = "def f():\n    while True:\n        pass\n"
        return files

    assert _in_repository(tmp_path / "in", chain(MAX_DEPTH)) == EndlessLoop(
        2, "while True:", f"m{MAX_DEPTH}.py"
    )
    assert _in_repository(tmp_path / "past", chain(MAX_DEPTH + 1)) is None
