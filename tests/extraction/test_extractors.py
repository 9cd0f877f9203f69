"""File extractors, sources, templates, transforms and aggregation."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from reprobridge_sdk import ExtractionError, extract_value
from reprobridge_sdk.extract.extraction import (
    aggregate,
    apply_transform,
    parse_number,
    render_template,
)
from reprobridge_sdk.model import Launcher

VECTORS = json.loads((Path(__file__).parent / "vectors" / "cases.json").read_text("utf-8"))


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: c["id"])
def test_vector(tmp_path: Path, case: dict[str, Any]) -> None:
    target = tmp_path / case["file"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(case["text"], encoding="utf-8")
    extractor = dict(case["extract"])
    if "file" not in extractor and extractor["kind"] != "regex":
        extractor["file"] = case["file"]
    kwargs: dict[str, Any] = {
        "log": None,
        "files_base": tmp_path,
        "outputs": {},
        "context": {"seed": 3},
    }
    if "reason" in case:
        with pytest.raises(ExtractionError) as info:
            extract_value(extractor, **kwargs)
        assert info.value.reason == case["reason"]
        return
    got = extract_value(extractor, **kwargs)
    expected = [float(v) for v in case["values"]]
    assert len(got.values) == len(expected)
    for value, want in zip(got.values, expected, strict=True):
        assert (math.isnan(value) and math.isnan(want)) or value == want


def test_sources_log_and_output(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("acc=0.5\n")
    out = tmp_path / "m.json"
    out.write_text('{"acc": 0.25}')
    common: dict[str, Any] = {"files_base": tmp_path, "context": {}}
    got = extract_value(
        {"kind": "regex", "pattern": r"acc=([\d.]+)"}, log=log, outputs={}, **common
    )
    assert (got.values, got.raw, got.source) == ((0.5,), ("0.5",), "log")
    got = extract_value(
        {"kind": "json", "pointer": "/acc", "output": "metrics"},
        log=log,
        outputs={"metrics": out},
        **common,
    )
    assert (got.value, got.source) == (0.25, "output:metrics")
    with pytest.raises(ExtractionError) as info:
        extract_value(
            {"kind": "json", "pointer": "/acc", "output": "other"}, log=log, outputs={}, **common
        )
    assert (info.value.reason, info.value.source) == ("missing-file", "output:other")
    with pytest.raises(ExtractionError) as info:
        extract_value({"kind": "regex", "pattern": "x"}, log=None, outputs={}, **common)
    assert info.value.reason == "missing-file"


def test_pydantic_model_accepted(tmp_path: Path) -> None:
    launcher = Launcher.model_validate(
        {
            "id": "l",
            "argv": ["true"],
            "scope": "smoke",
            "measurements": [
                {
                    "task": "t",
                    "extract": {"kind": "regex", "pattern": r"v=(\d+)"},
                    "transform": {"scale": 100, "round": 1},
                }
            ],
        }
    )
    log = tmp_path / "log.txt"
    log.write_text("v=3\n")
    measurement = launcher.measurements[0]
    got = extract_value(measurement.extract, log=log, files_base=tmp_path, outputs={}, context={})
    assert apply_transform(got.value, measurement.transform) == 300.0


def test_no_match_and_not_number_carry_codes(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    log.write_text("acc=x\n")
    for pattern, code in ((r"f1=(\S+)", "X001"), (r"acc=(\S+)", "X002")):
        with pytest.raises(ExtractionError) as info:
            extract_value(
                {"kind": "regex", "pattern": pattern},
                log=log,
                files_base=tmp_path,
                outputs={},
                context={},
            )
        assert [f.code for f in info.value.findings] == [code]


@pytest.mark.parametrize(
    ("text", "context", "expected"),
    [
        ("--seed={seed}", {"seed": 2}, "--seed=2"),
        ("{run_dir}/out", {"run_dir": "/r"}, "/r/out"),
        ("awk '{{print $1}}'", {}, "awk '{print $1}'"),
        ("--flag={on}", {"on": True}, "--flag=true"),
        ("{{seed}}", {"seed": 1}, "{seed}"),
    ],
)
def test_render_template(text: str, context: dict[str, object], expected: str) -> None:
    assert render_template(text, context) == expected


@pytest.mark.parametrize("text", ["{missing}", "a}b", "{ seed }", "{", "{1}"])
def test_render_template_errors(text: str) -> None:
    with pytest.raises(ExtractionError) as info:
        render_template(text, {"seed": 1})
    assert info.value.reason == "template"


@pytest.mark.parametrize("text", ["1", "-2.5", "+.5", "1e-3", "3.", " 7 ", "NaN", "inf"])
def test_parse_number_accepts(text: str) -> None:
    assert parse_number(text) == float(text) or math.isnan(parse_number(text))


@pytest.mark.parametrize("text", ["95.3%", "1_000", "0x10", "", "1,5", "e3", "--1"])
def test_parse_number_rejects(text: str) -> None:
    with pytest.raises(ExtractionError) as info:
        parse_number(text)
    assert info.value.reason == "not-number"


def test_transform() -> None:
    assert apply_transform(0.91234, None) == 0.91234
    assert apply_transform(0.91234, {"scale": 100, "round": 2}) == 91.23
    assert apply_transform(2.0, {"offset": -1.0}) == 1.0
    assert math.isnan(apply_transform(float("nan"), {"scale": 2, "round": 1}))


@pytest.mark.parametrize(
    ("how", "values", "expected"),
    [
        ("single", [4.0], 4.0),
        ("mean", [1.0, 2.0, 6.0], 3.0),
        ("median", [5.0, 1.0, 3.0, 100.0], 4.0),
        ("min", [2.0, 1.0], 1.0),
        ("max", [2.0, 1.0], 2.0),
        ("std", [1.0, 3.0], math.sqrt(2.0)),
        ("std", [5.0], 0.0),
    ],
)
def test_aggregate(how: str, values: list[float], expected: float) -> None:
    assert aggregate(values, how) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("how", "values", "expected"),
    [
        ("mean", [1e308, 1e308], 1e308),  # the sum overflows, the mean does not
        ("mean", [1.7e308, 1.7e308, 1e308], 1.4666666666666666e308),
        ("mean", [1e308, -1e308], 0.0),
        ("median", [1e308, 1e308], 1e308),  # the two middle values' sum overflows
        ("median", [1.7e308, 1.7e308, 1.7e308, 1e308], 1.7e308),
        ("median", [-1.7e308, -1.7e308], -1.7e308),
    ],
)
def test_aggregate_of_huge_values_never_raises(
    how: str, values: list[float], expected: float
) -> None:
    """A log may print any finite number: the statistic a float can hold, never an
    ``OverflowError`` (which stopped ``run`` and ``audit``)."""
    assert aggregate(values, how) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(("how", "values"), [("single", [1.0, 2.0]), ("mean", []), ("mode", [1.0])])
def test_aggregate_errors(how: str, values: list[float]) -> None:
    with pytest.raises(ExtractionError) as info:
        aggregate(values, how)
    assert info.value.reason == "aggregate"


@pytest.mark.parametrize(("number", "expected"), [(10**400, math.inf), (-(10**400), -math.inf)])
def test_an_integer_beyond_the_float_range_reads_as_infinite(
    tmp_path: Path, number: int, expected: float
) -> None:
    """A JSON or YAML integer too large for a float (hostile output) is read as the float
    literal of that size is, infinite, never an uncaught OverflowError."""
    (tmp_path / "m.json").write_text(json.dumps({"acc": number}))
    (tmp_path / "m.yaml").write_text(f"acc: {number}\n")
    for kind, name in (("json", "m.json"), ("yaml", "m.yaml")):
        spec = (
            {"kind": kind, "file": name, "pointer": "/acc"}
            if kind == "json"
            else {"kind": kind, "file": name, "key": "acc"}
        )
        got = extract_value(spec, log=None, files_base=tmp_path, outputs={}, context={})
        assert got.value == expected
        assert got.raw == (str(number),)
