"""A number printed alone (``print rmse``) is named by the print statement that wrote it.

The scripts here are small stand-ins for research code that ends with bare prints, Python 2
and 3; the Distiller's finder, extractor and replay are checked on their logs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobridge_sdk import extract_value
from reprobridge_sdk.agent._printed import BarePrint, launcher_outputs, printed_lines
from reprobridge_sdk.agent.distiller import _choose, _measurement, find_number
from reprobridge_sdk.model.claims import Claim

#: Python 2: a module prints its iteration counter alone; the script ends with two bare prints.
PY2_SCRIPT = """\
import math
import sys
import numpy as np
sys.path.append('lib/')
import trainer

np.random.seed(1)
data = np.loadtxt('data.txt')
model = trainer.Trainer(data, n_epochs=3)
m, v = model.predict(data)

rmse = np.sqrt(np.mean((data - m)**2))

print rmse

test_ll = np.mean(-0.5 * np.log(2 * math.pi * v))

print test_ll
"""
PY2_MODULE = """\
import sys
class Trainer(object):
    def __init__(self, data, n_epochs):
        for i in range(n_epochs):
            sys.stdout.write('{}\\n'.format(i))
            sys.stdout.flush()
"""
PY2_LOG = "0\n1\n2\n2.53129577637\n-2.46011943\n"


def _claim(**values: object) -> Claim:
    data: dict[str, object] = {
        "id": "rmse",
        "measured": "test RMSE of the network on Boston Housing",
        "value": 3.014,
        "direction": "lower",
    }
    data.update(values)
    return Claim.model_validate(data)


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    return tmp_path


def _outputs(tmp_path: Path, script: str, files: dict[str, str]) -> list[BarePrint | str]:
    return launcher_outputs(_repo(tmp_path, files), script, workdir=str(Path(script).parent))


def _named(tmp_path: Path, script: str, files: dict[str, str], log: str) -> dict[int, str]:
    found = printed_lines(_outputs(tmp_path, script, files), log)
    return {number: site.expression for number, site in found.items()}


def _replay(tmp_path: Path, log: str, spec: dict[str, object]) -> float:
    path = tmp_path / "replay.txt"
    path.write_text(log, "utf-8")
    got = extract_value(spec, log=path, files_base=tmp_path, outputs={}, context={})
    return got.values[-1]


def test_python2_bare_prints_name_their_lines_and_the_extractor_replays(tmp_path: Path) -> None:
    """The counters are integers alone too; rmse is the first fraction alone on a line."""
    files = {"src/run.py": PY2_SCRIPT, "src/lib/trainer.py": PY2_MODULE, "src/data.txt": "1\n"}
    outputs = _outputs(tmp_path / "repo", "src/run.py", files)
    assert [o.expression for o in outputs if isinstance(o, BarePrint)] == ["rmse", "test_ll"]
    printed = printed_lines(outputs, PY2_LOG)
    assert {n: s.expression for n, s in printed.items()} == {4: "rmse", 5: "test_ll"}
    claim = _claim()
    assert find_number(PY2_LOG, claim) == []  # 16% from the published value, and unnamed
    [best] = find_number(PY2_LOG, claim, printed)  # test_ll shares fewer words: no name
    assert (best.line_number, best.value, best.scale) == (4, 2.53129577637, 1.0)
    log = tmp_path / "log.txt"
    log.write_text(PY2_LOG, "utf-8")
    choice = _choose(log, PY2_LOG, claim, None, printed)
    assert choice is not None
    candidate, pattern = choice
    measurement = _measurement("rmse", candidate, pattern, None)
    spec = measurement.extract.model_dump()
    assert spec["occurrence"] == "first"
    assert _replay(tmp_path, PY2_LOG, spec) == 2.53129577637
    # a reference run of the same script: other values, the same shape
    other = "0\n1\n2\n3.1\n-2.7\n"
    assert _replay(tmp_path, other, spec) == 3.1


@pytest.mark.parametrize(
    ("statement", "words"),
    [
        ("print(rmse)", {"rmse"}),
        ("print(np.mean(test_rmse_per_split))", {"mean", "test", "rmse", "per", "split"}),
        ('print("%.3f" % rmse)', {"rmse"}),
        ('print("{:.4f}".format(testRMSE))', {"test", "rmse"}),
        ('print(f"{rmse:.2f}")', {"rmse"}),
        ('print(results["test_rmse"], flush=True)', {"results", "test", "rmse"}),
        ("print rmse", {"rmse"}),
        ('print "%f" % (rmse)', {"rmse"}),
    ],
)
def test_the_printed_expressions_names_are_the_label(
    tmp_path: Path, statement: str, words: set[str]
) -> None:
    script = f"import numpy as np\nrmse = test_rmse_per_split = testRMSE = 1.0\n{statement}\n"
    [site] = _outputs(tmp_path, "run.py", {"run.py": script})
    assert isinstance(site, BarePrint)
    assert set(site.words) == words


@pytest.mark.parametrize(
    "tail",
    [
        'print("rmse:", rmse)',  # a label of its own: the ordinary finder reads it
        'print("%.3f %.3f" % (rmse, ll))',  # two numbers on one line
        "print rmse,",  # Python 2: the line goes on
        "print >>sys.stderr, rmse",  # Python 2: to a file
        "print(rmse, file=sys.stderr)",
        "print(rmse, end='')",
        "sys.stdout.write('%f\\n' % rmse)",
        "model.report()",  # a method of an object: what it prints is unknown
        "for split in range(3):\n    print(rmse)",
        'print("a\\nb")',
    ],
)
def test_an_output_of_unknown_shape_ends_the_reading(tmp_path: Path, tail: str) -> None:
    script = f"import sys\nrmse = ll = 1.0\n{tail}\n"
    assert _outputs(tmp_path, "run.py", {"run.py": script}) == []


def test_main_and_its_guard_are_followed_into_the_repository(tmp_path: Path) -> None:
    """``if __name__ == "__main__": sys.exit(main())``, main imported from a module that ends
    with a bare print after the quiet calls of numpy and the standard library."""
    files = {
        "pkg/__init__.py": "",
        "pkg/evaluate.py": (
            "import os\nimport numpy as np\n\n"
            "def run():\n    errors = np.zeros(3)\n    os.path.join('a', 'b')\n"
            "    print('evaluating')\n    print(np.mean(errors))\n    return 0\n"
        ),
        "main.py": (
            "import sys\nfrom pkg.evaluate import run\n\n"
            "def main():\n    return run()\n\n"
            'if __name__ == "__main__":\n    sys.exit(main())\n'
        ),
    }
    log = "loading\nevaluating\n0.25\n"
    assert _named(tmp_path, "main.py", files, log) == {3: "np.mean(errors)"}


def test_a_script_that_does_not_tokenize_or_is_empty_names_nothing(tmp_path: Path) -> None:
    for text in ("", "print 'unterminated\n", "x = (\n", "\tif x:\n  print x\n", "\x00\x01"):
        assert _outputs(tmp_path, "run.py", {"run.py": text}) == []
    assert _outputs(tmp_path, "missing.py", {}) == []
    # guards nested past any depth a script has, and a function that calls itself
    nested = (
        "".join(" " * depth + 'if __name__ == "__main__":\n' for depth in range(200))
        + " " * 3000
        + "print(rmse)\n"
    )
    assert _outputs(tmp_path, "run.py", {"run.py": nested}) == []
    recursive = "def main():\n    main()\n    print(rmse)\n\nmain()\n"
    sites = _outputs(tmp_path, "run.py", {"run.py": recursive})
    assert sites and all(isinstance(s, BarePrint) and s.expression == "rmse" for s in sites)
    assert launcher_outputs(tmp_path, "run.sh") == []


@pytest.mark.parametrize(
    "log",
    [
        "0.5\n[1. 2. 3.]\n0.9\n",  # an array where a number was expected
        "0.5\n0.9\nsaved the model\n",  # a line some other code wrote after them
        "0.9\n",  # fewer lines than prints
        "",
        "nan\n0.9\n",
    ],
)
def test_a_log_that_disagrees_with_the_prints_names_no_line(tmp_path: Path, log: str) -> None:
    script = "rmse = 0.5\nacc = 0.9\nprint(rmse)\nprint(acc)\n"
    assert _named(tmp_path, "run.py", {"run.py": script}, log) == {}


def test_warnings_and_blank_lines_between_the_prints_are_left_out(tmp_path: Path) -> None:
    script = "import numpy as np\nrmse = 0.5\nprint(rmse)\nprint()\nacc = np.log(0)\nprint(acc)\n"
    log = (
        "0.5\n\nrun.py:5: RuntimeWarning: divide by zero encountered in log\n"
        "  acc = np.log(0)\n-3.5\n"
    )
    assert _named(tmp_path, "run.py", {"run.py": script}, log) == {1: "rmse", 5: "acc"}


def test_a_print_sharing_no_word_with_the_claim_leaves_its_line_unnamed(tmp_path: Path) -> None:
    script = "loss = 2.5\nelapsed = 3.0\nprint(loss)\nprint(elapsed)\n"
    log = "2.5\n3.0\n"
    printed = printed_lines(_outputs(tmp_path, "run.py", {"run.py": script}), log)
    assert len(printed) == 2
    assert find_number(log, _claim(value=2.0), printed) == []


def test_two_prints_named_equally_well_name_no_line(tmp_path: Path) -> None:
    """Two ``rmse`` printed (a train and a test split): neither is picked by its closeness."""
    script = "rmse = 2.6\nprint(rmse)\nrmse = 2.5\nprint(rmse)\n"
    log = "2.6\n2.5\n"  # both more than 5% from the published 3.014
    printed = printed_lines(_outputs(tmp_path, "run.py", {"run.py": script}), log)
    assert len(printed) == 2
    assert find_number(log, _claim(), printed) == []


def test_the_better_name_wins_and_the_other_stays_unnamed(tmp_path: Path) -> None:
    script = "print(train_rmse)\nprint(test_rmse)\n"
    log = "2.9\n2.5\n"
    printed = printed_lines(_outputs(tmp_path, "run.py", {"run.py": script}), log)
    [best] = find_number(log, _claim(), printed)
    assert (best.line_number, best.value) == (2, 2.5)
    log_path = tmp_path / "log.txt"
    log_path.write_text(log, "utf-8")
    choice = _choose(log_path, log, _claim(), None, printed)
    assert choice is not None
    assert choice[0].occurrence == "last"


def test_a_bare_number_no_pattern_singles_out_is_not_extracted(tmp_path: Path) -> None:
    """The same shape before and after it (fractions alone on three lines, the middle one
    named): no first or last line reads it, so no extractor is written."""
    script = "print(a)\nprint(rmse)\nprint(b)\n"
    log = "2.9\n2.5\n2.7\n"
    printed = printed_lines(_outputs(tmp_path, "run.py", {"run.py": script}), log)
    [best] = find_number(log, _claim(), printed)
    assert best.line_number == 2
    log_path = tmp_path / "log.txt"
    log_path.write_text(log, "utf-8")
    assert _choose(log_path, log, _claim(), None, printed) is None
