"""``occurrence: all`` streams: a summary of every value, bounded samples, flat memory.

The value is the mean of every (transformed) value; ``count`` says how many; only the first
``KEPT_VALUES`` values and ``KEPT_RAW`` matched texts are kept, whatever the log holds.
"""

from __future__ import annotations

import math
import statistics
import struct
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reprobridge_sdk import ExtractionError, extract_value
from reprobridge_sdk.extract._allvalues import AllValues
from reprobridge_sdk.extract.extraction import (
    KEPT_RAW,
    KEPT_VALUES,
    aggregate,
    apply_transform,
    parse_number,
)
from reprobridge_sdk.model import Launcher
from reprobridge_sdk.run.measure import measure

ALL = {"kind": "regex", "pattern": r"loss=([0-9.]+)", "occurrence": "all"}


def _log(path: Path, values: list[float]) -> Path:
    path.write_text("".join(f"step {i} loss={v!r} lr=0.1\n" for i, v in enumerate(values)))
    return path


def _extract(log: Path, transform: dict[str, object] | None = None, chunk: int = 1 << 20):
    return extract_value(
        ALL,
        log=log,
        files_base=log.parent,
        outputs={},
        context={},
        chunk_size=chunk,
        transform=transform,
    )


def test_every_value_counts_but_only_the_first_are_kept(tmp_path: Path) -> None:
    values = [(i % 97) / 7 for i in range(5000)]
    got = _extract(_log(tmp_path / "log.txt", values), chunk=4096)  # many chunks
    assert got.count == 5000
    assert got.values == tuple(values[:KEPT_VALUES])
    assert got.raw == tuple(repr(v) for v in values[:KEPT_RAW])
    assert got.mean == pytest.approx(statistics.fmean(values), rel=1e-12)
    assert got.value == values[0]


def test_each_value_is_transformed_before_the_mean(tmp_path: Path) -> None:
    values = [0.123456, 0.5, 0.987654, 0.25]
    transform = {"scale": 100, "round": 1}  # rounding is not linear: mean of rounded values
    got = _extract(_log(tmp_path / "log.txt", values), transform)
    rounded = [apply_transform(v, transform) for v in values]
    assert got.values == tuple(rounded)
    assert got.mean == pytest.approx(statistics.fmean(rounded), rel=1e-12)
    assert got.mean != pytest.approx(statistics.fmean(values) * 100, rel=1e-9)


def test_a_text_that_is_no_number_fails_as_before(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("loss=1.0\nloss=1.0.0\nloss=2.0\n")
    with pytest.raises(ExtractionError) as caught:
        _extract(log)
    assert caught.value.reason == "not-number"


def test_no_match_is_no_match(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("nothing here\n")
    with pytest.raises(ExtractionError) as caught:
        _extract(log)
    assert caught.value.reason == "no-match"


def test_non_finite_values_give_a_defined_mean(tmp_path: Path) -> None:
    spec = {**ALL, "pattern": r"loss=(\S+)"}
    for values, expected in (
        ([1.0, math.inf, 2.0], math.inf),
        ([math.inf, -math.inf], math.nan),
        ([1.0, math.nan], math.nan),
        ([1e308, 1e308], 1e308),  # the sum overflows, the mean does not (scaled)
        ([1e308, math.inf], math.inf),
    ):
        log = tmp_path / "log.txt"
        log.write_text("".join(f"loss={v!r}\n" for v in values))
        got = extract_value(spec, log=log, files_base=tmp_path, outputs={}, context={})
        assert got.count == len(values)
        if math.isnan(expected):
            assert math.isnan(got.mean)
        else:
            assert got.mean == expected


HUGE = [
    [1e308, 1e308],
    [1.7e308, 1.7e308, -1e308, 3.0],
    [-1.7e308, -1.7e308, -1.7e308],
    [1.7976931348623157e308] * 5 + [1e-300, -2.5],
    [1.5e308, 1.5e308, 1.5e308, -1.5e308, 0.1],
]


@pytest.mark.parametrize("values", HUGE)
def test_an_overflowing_sum_gives_the_mean_aggregate_gives(
    tmp_path: Path, values: list[float]
) -> None:
    """``occurrence: all`` and the ``mean`` aggregate agree bit for bit on finite values
    whose sum overflows (both scale the sum by a power of two): a finite mean."""
    log = tmp_path / "log.txt"
    log.write_text("".join(f"loss={v!r}\n" for v in values))
    spec = {**ALL, "pattern": r"loss=(\S+)"}
    got = extract_value(spec, log=log, files_base=tmp_path, outputs={}, context={})
    expected = aggregate(values, "mean")
    assert math.isfinite(expected)
    assert struct.pack("<d", got.mean) == struct.pack("<d", expected)


@pytest.mark.parametrize("values", HUGE)
@pytest.mark.parametrize("cut", [1, 2, 3])
def test_an_overflowing_sum_streamed_in_pieces(values: list[float], cut: int) -> None:
    """Cut into chunks (the sum overflows between chunks, or inside one), the mean is the
    aggregate's to within one rounding of each chunk's sum."""
    summary = AllValues()
    for start in range(0, len(values), cut):
        summary.add([repr(v) for v in values[start : start + cut]], parse_number, None)
    assert summary.mean == pytest.approx(aggregate(values, "mean"), rel=1e-15)


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_chunk_that_rounds_its_sum_leaves_the_mean_unchanged(cut: int) -> None:
    """[1, 1e-16] rounds to 1 as one chunk; the mean is still fmean's to the bit."""
    values = [1.0, 1e-16, 1e-16]
    summary = AllValues()
    for start in range(0, len(values), cut):
        summary.add([repr(v) for v in values[start : start + cut]], parse_number, None)
    assert struct.pack("<d", summary.mean) == struct.pack("<d", statistics.fmean(values))


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.floats(allow_nan=False, allow_infinity=False, max_value=1e300, min_value=-1e300),
        min_size=1,
        max_size=60,
    ),
    cut=st.integers(1, 10),
)
def test_the_streamed_mean_is_fmean_however_the_values_are_cut(
    values: list[float], cut: int
) -> None:
    """To the bit: the sum is exact whatever the chunks, so every reading path (the chunked
    scan, the mapped literal search) gives the same mean."""
    summary = AllValues()
    for start in range(0, len(values), cut):
        summary.add([repr(v) for v in values[start : start + cut]], parse_number, None)
    assert summary.count == len(values)
    assert struct.pack("<d", summary.mean) == struct.pack("<d", statistics.fmean(values))
    assert summary.minimum == min(values)
    assert summary.maximum == max(values)
    assert summary.last == values[-1]


def _peak(log: Path) -> int:
    tracemalloc.start()
    try:
        _extract(log, chunk=1 << 16)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_is_flat_in_the_number_of_matches(tmp_path: Path) -> None:
    small = _log(tmp_path / "small.txt", [0.5] * 10_000)
    large = _log(tmp_path / "large.txt", [0.5] * 100_000)
    # ten times the matches (and the log), the same peak: one chunk and its matches
    assert _peak(large) < 1.5 * _peak(small)


def test_the_record_keeps_the_count_and_bounded_samples(tmp_path: Path) -> None:
    values = [i / 1000 for i in range(2500)]
    log = _log(tmp_path / "log.txt", values)
    launcher = Launcher.model_validate(
        {
            "id": "train",
            "argv": ["python", "train.py"],
            "scope": "scored",
            "measurements": [{"task": "loss", "extract": ALL, "transform": {"scale": 2}}],
        }
    )
    (measured,) = measure(launcher, log=log, files_base=tmp_path, outputs={}, context={})
    assert measured.count == 2500
    assert measured.values == [2 * v for v in values[:KEPT_VALUES]]
    assert measured.raw == "\n".join(repr(v) for v in values[:KEPT_RAW])
    assert measured.value == pytest.approx(2 * statistics.fmean(values), rel=1e-12)
