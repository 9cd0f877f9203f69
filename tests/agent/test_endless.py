"""A script that never ends on its own: read from its code, and what the build makes of it."""

from __future__ import annotations

import pytest

from reprobridge_sdk.agent._endless import EndlessLoop, endless_loop

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
