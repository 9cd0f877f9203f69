"""The HTML report rendered by a real headless Chromium (Debian's ``chromium`` package).

The page must need nothing but itself: Chromium runs with networking features off, and the
test checks the DOM Chromium built (``--dump-dom``) and the pixels of a ``--screenshot``.
"""

from __future__ import annotations

import shutil
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from audit_support import edit_record
from chromium_support import CHROMIUM, chromium

from reprobridge_sdk.audit import audit
from reprobridge_sdk.audit.html import render_html

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="Chromium is not installed (apt-get install -y chromium)"
    ),
]


class _Dom(HTMLParser):
    """Collects elements as (tag, attributes) in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def having(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        return [
            a
            for t, a in self.elements
            if t == tag and all(a.get(k.replace("_", "-")) == v for k, v in attrs.items())
        ]

    def with_class(self, tag: str, cls: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and cls in a.get("class", "").split()]


def _png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """Decode an 8-bit RGB or RGBA PNG by hand (chunks, zlib, scanline filters)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytearray] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        previous = line
    pixels = [
        tuple(row[x * channels : x * channels + 3]) for row in rows for x in range(0, width, 2)
    ]
    return width, height, pixels


def test_html_report_in_headlesschromium(toy: Path, tmp_path: Path) -> None:
    attempts = toy / "attempts"
    shutil.copytree(toy / "runs", attempts / "honest")
    shutil.copytree(toy / "runs", attempts / "tampered")
    edit_record(
        attempts / "tampered" / "scored-s0", lambda d: d["measurements"][0].update(value=90.1)
    )
    result = audit(toy, [f"honest={attempts / 'honest'}", f"tampered={attempts / 'tampered'}"])
    page = tmp_path / "report.html"
    page.write_text(render_html(result), encoding="utf-8")
    text = page.read_text()
    # Self-contained: no script, no stylesheet link, no image or font fetched from anywhere.
    for needle in ("<script", "<link", "src=", "href=", "url(", "@import"):
        assert needle not in text

    dom_run = chromium(page, tmp_path / "profile-dom", "--dump-dom")
    dom = _Dom()
    dom.feed(dom_run)
    badges = {a["data-badge"]: a["class"] for a in dom.with_class("span", "badge")}
    # no DOI, no clean-room check, and a tampered attempt beside the honest one: no badge
    # that rests on the runs is earned either
    assert badges == {
        "available": "badge no",
        "functional": "badge no",
        "reusable": "badge no",
        "reproduced": "badge no",
    }
    assert dom.with_class("span", "results") == []  # not consistent: tampered evidence
    # the honest attempt alone: results consistent on the authors' evidence, a mark of its
    # own, never the badge
    honest_page = tmp_path / "honest.html"
    honest_page.write_text(render_html(audit(toy, [f"honest={attempts / 'honest'}"])), "utf-8")
    honest = _Dom()
    honest.feed(chromium(honest_page, tmp_path / "profile-honest", "--dump-dom"))
    marks = honest.with_class("span", "results")
    assert [(m["data-results"], m["class"]) for m in marks] == [
        ("consistent", "results consistent")
    ]
    earned = {a["data-badge"] for a in honest.with_class("span", "badge") if "yes" in a["class"]}
    assert earned == {"functional"}
    rows = dom.with_class("tr", "task")
    assert [(r["data-task"], r["data-attempt"], r["data-verdict"]) for r in rows] == [
        ("acc", "honest", "compatible"),
        ("acc", "tampered", "invalid-evidence"),
        ("f1", "honest", "compatible"),
        ("f1", "tampered", "invalid-evidence"),
    ]
    plots = dom.with_class("svg", "plot")
    assert [p["data-task"] for p in plots] == ["acc", "f1"]
    assert len(dom.with_class("circle", "ref")) == 10  # five references per task
    assert len(dom.with_class("rect", "interval")) == 2
    assert len(dom.with_class("path", "published")) == 2
    reproduced = dom.with_class("circle", "reproduced")
    assert [r["data-verdict"] for r in reproduced] == ["compatible", "compatible"]
    assert len(dom.with_class("circle", "seed")) == 6  # honest seeds of two tasks

    shot = tmp_path / "shot.png"
    chromium(page, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1000,1600")
    width, height, pixels = _png_pixels(shot.read_bytes())
    assert (width, height) == (1000, 1600)
    colours = set(pixels)
    assert len(colours) > 50  # not blank: text, badges, tables and plots
    non_white = sum(p != (255, 255, 255) for p in pixels)
    assert non_white > 0.02 * len(pixels)

    def near(target: tuple[int, int, int]) -> int:
        return sum(all(abs(p[i] - target[i]) <= 6 for i in range(3)) for p in pixels)

    assert near((0xDA, 0xFB, 0xE1)) > 500  # the interval bands (and compatible labels)
    assert near((0x82, 0x50, 0xDF)) > 20  # the published diamonds
    assert near((0x1A, 0x7F, 0x37)) > 100  # badges and compatible reproduced values


def test_re_executed_values_in_headlesschromium(toy: Path, tmp_path: Path) -> None:
    """The re-execution table: each re-executed run's recorded and re-executed values, the
    shift test and the sample seed, as Chromium builds them (the toy's smoke launcher
    re-executed, unsandboxed: it writes into the artifact, see test_rerun.py)."""
    result = audit(toy, rerun=1, rerun_env="current", rerun_sandbox=False)
    page = tmp_path / "report.html"
    page.write_text(render_html(result), encoding="utf-8")
    dom = _Dom()
    dom.feed(chromium(page, tmp_path / "profile", "--dump-dom"))
    rows = dom.with_class("tr", "rerun")
    reran = {r.run for r in result.attempts[0].runs if r.reran}
    assert {r["data-run"] for r in rows} == reran
    assert {r["data-task"] for r in rows} == {"acc", "f1"}
    assert all(r["data-held"] == "true" for r in rows)
    (seed,) = dom.with_class("p", "rerun-seed")
    assert seed["data-seed"] == str(result.options.rerun_seed)
