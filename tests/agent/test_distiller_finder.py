"""The Distiller's number finder: label, closeness, scale, extractor that replays, landmarks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reprobridge_sdk import extract_value
from reprobridge_sdk.agent.distiller import (
    extractor_pattern,
    find_in_json,
    find_number,
    stable_lines,
)
from reprobridge_sdk.model.claims import Claim

LOG = """\
loading digits
epoch 0 loss 0.5000 accuracy 0.8000
epoch 1 loss 0.2500 accuracy 0.8100
epoch 2 loss 0.1667 accuracy 0.8200
train accuracy: 0.9993
test accuracy: 0.9711
test error: 0.0289
done
"""


def _claim(**values: object) -> Claim:
    data: dict[str, object] = {"id": "acc", "measured": "test accuracy", "direction": "higher"}
    data.update(values)
    return Claim.model_validate(data)


def _replay(tmp_path: Path, pattern: str, log: str = LOG) -> float:
    path = tmp_path / "log.txt"
    path.write_text(log, "utf-8")
    spec = {"kind": "regex", "pattern": pattern, "group": "value", "occurrence": "last"}
    got = extract_value(spec, log=path, files_base=tmp_path, outputs={}, context={})
    return got.values[-1]


def test_the_label_picks_the_number_among_many_similar_ones(tmp_path: Path) -> None:
    best = find_number(LOG, _claim(value=0.97, hints={"label": "test accuracy"}))[0]
    assert (best.line_number, best.value, best.label_score) == (6, 0.9711, 1.0)
    pattern = extractor_pattern(best)
    assert pattern.startswith("^test accuracy: ")
    assert _replay(tmp_path, pattern) == 0.9711


def test_without_a_label_the_words_of_measured_and_closeness_decide() -> None:
    best = find_number(LOG, _claim(value=0.97))[0]
    assert best.value == 0.9711


def test_a_percentage_claim_finds_the_fraction_with_a_scale() -> None:
    best = find_number(LOG, _claim(value=97.1, unit="%", hints={"label": "test accuracy"}))[0]
    assert (best.value, best.scale) == (0.9711, 100.0)
    assert best.scaled == pytest.approx(97.11)


@pytest.mark.parametrize("published", [0.2, 9.0, 0.002])
def test_a_claim_no_unit_brings_near_is_read_as_printed(published: float) -> None:
    """0.9711 against 0.2: divided by 100 it would be nearer (0.0097), yet no unit explains a
    gap of that size; the number stays as printed and the claim is judged on it."""
    best = find_number(LOG, _claim(value=published, hints={"label": "test accuracy"}))[0]
    assert (best.line_number, best.value, best.scale) == (6, 0.9711, 1.0)


def test_a_range_counts_as_its_midpoint() -> None:
    best = find_number(LOG, _claim(range=[0.02, 0.04], measured="test error"))[0]
    assert best.value == 0.0289


def test_digits_in_the_prefix_are_generalised(tmp_path: Path) -> None:
    log = "epoch 9 val_acc 0.91\nepoch 10 val_acc 0.93\n"
    best = find_number(log, _claim(value=0.93, hints={"label": "val_acc"}))[0]
    pattern = extractor_pattern(best)
    assert re.search(r"\\d\+", pattern)
    assert _replay(tmp_path, pattern, log) == 0.93


@pytest.mark.parametrize(
    "log",
    ["", "nothing here\n", "f1 score: nan\n", "x" * 20_000 + " 0.97\n", "acc: inf\n"],
)
def test_no_candidate_when_nothing_qualifies(log: str) -> None:
    assert find_number(log, _claim(value=0.97, hints={"label": "test accuracy"})) == []


def test_stable_lines_are_those_every_run_printed_without_digits() -> None:
    other = LOG.replace("loading digits", "loading digits\nrandom line")
    assert stable_lines([LOG, other]) == ["loading digits", "done"]
    assert stable_lines([]) == []


def test_find_in_json_gives_a_pointer() -> None:
    document = {"train": {"accuracy": 0.99}, "test": {"accuracy": 0.9711, "loss": 0.1}}
    best = find_in_json(document, _claim(value=0.97, hints={"label": "test accuracy"}))[0]
    assert (best.pointer, best.value) == ("/test/accuracy", 0.9711)
    assert find_in_json({"a/b": [True, "x"]}, _claim(value=5.0)) == []


def test_an_advised_line_is_used_only_when_nothing_qualifies_and_must_replay(
    tmp_path: Path,
) -> None:
    from reprobridge_sdk.agent.distiller import _choose

    log = "step 1\nfinal: 0.5 / 0.8123\n"
    path = tmp_path / "log.txt"
    path.write_text(log, "utf-8")
    claim = _claim(value=0.81, hints={"label": "test accuracy"})
    asked: list[int] = []

    def ask(_claim: Claim, _text: str) -> int:
        asked.append(2)
        return 2

    choice = _choose(path, log, claim, ask)
    assert choice is not None
    candidate, pattern = choice
    assert (candidate.value, asked) == (0.8123, [2])
    assert _replay(tmp_path, pattern, log) == 0.8123
    assert _choose(path, log, claim, lambda _c, _t: 1) is None  # 'step 1' is far from 0.81
    assert _choose(path, log, claim, lambda _c, _t: 99) is None
    labelled = _claim(value=0.97, hints={"label": "test accuracy"})
    assert _choose(tmp_path / "x.txt", LOG, labelled, lambda _c, _t: pytest.fail("asked")) is None


TRACEBACKS = """\
Traceback (most recent call last):
  File "/home/someone/repo/train.py", line 6, in <module>
    import numpy as np
ModuleNotFoundError: No module named 'numpy'
Traceback (most recent call last):
  File "/home/someone/repo/train.py", line 83, in <module>
    acc = evaluate(model)
          ^^^^^^^^^^^^^^^
  File "/home/someone/repo/eval.py", line 12, in evaluate
    raise ValueError("accuracy 83.1 is above the 80 cap")
ValueError: accuracy 83.1 is above the 80 cap
"""


def test_no_number_and_no_landmark_comes_from_a_traceback() -> None:
    """A driver whose child scripts crashed (exit 0 through os.system): the line numbers,
    the error's numbers and the traceback header are never a result or a landmark."""
    claim = _claim(value=83.0, hints={"label": "accuracy"})
    assert find_number(TRACEBACKS, claim) == []
    assert stable_lines([TRACEBACKS, TRACEBACKS]) == []
    with_result = TRACEBACKS + "final accuracy 83.2\n"
    [best, *_] = find_number(with_result, claim)
    assert (best.value, best.line_number) == (83.2, 12)
    assert stable_lines([with_result, with_result]) == []


def test_a_timestamp_is_never_the_number() -> None:
    """neural-fingerprint's log: thousands of library warnings stamped ``[08:13:52]``, whose
    ``52`` read as a percentage is the published 0.52 exactly, and one result line. The
    result is the number, although it lies far from the published value."""
    stamped = "[08:13:52] DEPRECATION WARNING: please use GetValence instead\n" * 50
    log = (
        stamped
        + "2024-05-01 12:00:52,520 INFO done\n"
        + "Iteration 50 loss 0.57 train RMSE 1.19 Validation RMSE 50 : 1.526969485743855\n"
        + "Iteration 70 loss 0.5006094576937321\n"  # near 0.52, but nothing names it
        + "Morgan test RMSE: 1.6726716060924645 Neural test RMSE: 0.8204662571767664\n"
    )
    claim = _claim(
        id="rmse",
        measured="test RMSE of the neural fingerprint network on the Delaney solubility data",
        value=0.52,
        direction="lower",
    )
    [best, *_] = find_number(log, claim)
    assert (best.value, best.scale) == (0.8204662571767664, 1.0)
    assert all("WARNING" not in c.line and "INFO" not in c.line for c in find_number(log, claim))


def test_an_integer_is_scaled_only_when_a_percent_sign_follows() -> None:
    claim = _claim(measured="test accuracy", value=0.52, direction="higher")
    [best] = find_number("test accuracy 52 %\n", claim)
    assert (best.value, best.scale) == (52.0, 0.01)
    assert find_number("test accuracy 52\n", claim)[0].scale == 1.0


def _trainings_log(finals: list[float]) -> str:
    """A run that trains one model after another, each printing the same line every 1000
    steps (the MNIST-1D notebook's ``step N, ..., test_acc X``), a blank line between them."""
    blocks = []
    for final in finals:
        lines = [
            f"step {step}, dt 0.18s, train_loss 1.5e+00, train_acc 90.1, test_acc "
            f"{final - (3000 - step) / 1000:.1f}"
            for step in (1000, 2000, 3000)
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def test_the_trainings_of_one_run_are_told_apart_by_a_counter_that_starts_again() -> None:
    from reprobridge_sdk.agent.distiller import training_starts

    log = _trainings_log([92.8, 85.0, 31.5]).splitlines()
    pattern = r"^step \d+, dt \d+\.\d+s, .*test_acc (?P<value>[0-9.]+)"
    assert training_starts(pattern, log) == [1, 5, 9]  # a blank line between trainings
    one = _trainings_log([92.8]).splitlines()  # one training: its counter only grows
    assert training_starts(pattern, one) is None
    bare = ["test_acc 92.8", "test_acc 31.5"]  # no counter: nothing tells trainings apart
    assert training_starts(r"^test_acc (?P<value>[0-9.]+)", bare) is None


def test_a_claim_of_an_earlier_training_is_not_read_off_the_last_one(tmp_path: Path) -> None:
    """Eight models trained in one run print the same line; the claim is the first model's.
    An extractor of that line reads the last model's number, so no extractor is made and the
    reason says why (before, the last model's 31.5 was measured as the CNN's accuracy)."""
    from reprobridge_sdk.agent.distiller import _choose

    log = _trainings_log([92.8, 85.0, 31.5])
    path = tmp_path / "log.txt"
    path.write_text(log, "utf-8")
    claim = _claim(value=94.0, unit="%", hints={"label": "test_acc"})
    why: list[str] = []
    assert _choose(path, log, claim, why=why) is None
    assert why and "3 trainings" in why[0] and "training 1" in why[0]
    # the claim of the last training is its last line, read as before
    last = _claim(value=31.0, unit="%", hints={"label": "test_acc"})
    choice = _choose(path, log, last, why=(why := []))
    assert choice is not None and choice[0].value == 31.5 and why == []
    # one training printing every 1000 steps: its last line, as before
    one = _trainings_log([92.8])
    path.write_text(one, "utf-8")
    choice = _choose(path, one, claim, why=why)
    assert choice is not None and choice[0].value == 92.8 and why == []
