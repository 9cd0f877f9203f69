"""Data URL schemes from a real plugin distribution pip-installed into a venv (format 1.1).

``x-copy:///ABSOLUTE/PATH`` of the test distribution copies a local file (a stand-in for a
remote store); the other schemes fail in the ways a stranger's plugin might. The fetched file
goes through the SDK's own size and SHA-256 checks and atomic placement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from eco_plugins import PluginVenv, on_path

from reprobridge_sdk import plugins
from reprobridge_sdk.env import fetch_data
from reprobridge_sdk.model.environment import PLUGIN_URL_PATTERN
from reprobridge_sdk.validation import validate

pytestmark = pytest.mark.slow  # the plugin venv is built with pip once per session

PAYLOAD = b"weights " * 1000
URL = "/environment/data/0/source/url"


def _artifact(root: Path, url: str, payload: bytes = PAYLOAD, version: str = "1.1") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "rra.yaml").write_text(
        f'rra_version: "{version}"\nenvironment:\n  python: "3.11"\n  data:\n'
        f"    - id: weights\n      source: {{url: {url!r}}}\n"
        f"      sha256: {hashlib.sha256(payload).hexdigest()}\n      size: {len(payload)}\n"
        "      destination: data/weights.bin\n"
    )
    return root


def _codes(result: object) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in result.findings]  # type: ignore[attr-defined]


@pytest.fixture
def with_plugins(plugin_venv: PluginVenv) -> Iterator[None]:
    with on_path(plugin_venv):
        yield


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "store" / "weights.bin"
    path.parent.mkdir()
    path.write_bytes(PAYLOAD)
    return path


def test_a_plugin_scheme_fetches_verifies_and_places(
    tmp_path: Path, source: Path, with_plugins: None
) -> None:
    art = _artifact(tmp_path / "art", f"x-copy://{source}")
    result = fetch_data(art, cache_dir=tmp_path / "cache")
    assert (result.fetched, _codes(result)) == (["weights"], [])
    assert (art / "data" / "weights.bin").read_bytes() == PAYLOAD
    assert list((art / "data").iterdir()) == [art / "data" / "weights.bin"]  # no .part left


@pytest.mark.parametrize(
    ("payload", "code", "pointer"),
    [
        (b"W" + PAYLOAD[1:], "D002", "/environment/data/0/sha256"),  # same size, other bytes
        (b"short", "D003", "/environment/data/0/size"),
    ],
)
def test_a_plugins_file_is_verified_like_any_download(  # noqa: PLR0917 - fixtures and cases
    tmp_path: Path, source: Path, with_plugins: None, payload: bytes, code: str, pointer: str
) -> None:
    art = _artifact(tmp_path / "art", f"x-copy://{source}")
    source.write_bytes(payload)
    result = fetch_data(art, cache_dir=tmp_path / "cache")
    assert _codes(result) == [(code, pointer)]
    assert not (art / "data").exists() or list((art / "data").iterdir()) == []  # nothing placed


@pytest.mark.parametrize("scheme", ["x-fail", "x-lazy"])
def test_a_plugin_that_raises_or_writes_nothing_is_d016(
    tmp_path: Path, with_plugins: None, scheme: str
) -> None:
    art = _artifact(tmp_path / "art", f"{scheme}://bucket/weights.bin")
    result = fetch_data(art, cache_dir=tmp_path / "cache")
    assert _codes(result) == [("D016", URL)]
    assert not (art / "data" / "weights.bin").exists()


def test_a_plugin_that_hangs_is_stopped_at_the_deadline_d016(
    tmp_path: Path, with_plugins: None
) -> None:
    art = _artifact(tmp_path / "art", "x-slow://bucket/weights.bin")
    # The deadline is timeout + size / min_rate: 0.2 s + 8000 B / 80000 B/s = 0.3 s.
    result = fetch_data(art, cache_dir=tmp_path / "cache", timeout=0.2, min_rate=80_000)
    assert _codes(result) == [("D016", URL)]
    assert not (art / "data" / "weights.bin").exists()


def test_a_scheme_no_plugin_provides_is_d015_naming_it(tmp_path: Path) -> None:
    art = _artifact(tmp_path / "art", "x-myscheme://bucket/weights.bin")
    result = fetch_data(art, cache_dir=tmp_path / "cache")
    [item] = result.findings
    assert (item.code, item.path) == ("D015", URL)
    assert "x-myscheme://" in item.message
    assert item.hint is not None
    assert "'x-myscheme'" in item.hint
    assert "reprobridge.data_schemes" in item.hint


def test_validate_warns_d015_for_a_scheme_no_plugin_provides(tmp_path: Path) -> None:
    art = _artifact(tmp_path / "art", "x-myscheme://bucket/weights.bin")
    result = validate(art, select=("D",))
    [item] = result.findings
    assert (item.code, item.severity, item.path, item.line) == ("D015", "warning", URL, 6)
    assert item.hint is not None
    assert "'x-myscheme'" in item.hint
    assert result.ok  # a warning: the manifest is valid, this machine lacks the plugin


def test_validate_is_quiet_about_a_scheme_a_plugin_provides(
    tmp_path: Path, with_plugins: None
) -> None:
    assert validate(_artifact(tmp_path / "a", "x-copy:///store/w.bin"), select=("D",)).ok
    assert _codes(validate(_artifact(tmp_path / "b", "x-nope://w"), select=("D",))) == [
        ("D015", URL)
    ]


@pytest.mark.parametrize(
    "data",
    [
        "  data: x-store://w\n",
        "  data: [x-store://w, 3, null]\n",
        "  data:\n    - {id: a, source: x-store://w}\n",
        "  data:\n    - {id: a, source: {url: [x-store://w]}}\n",
        "  data:\n    - {id: a, source: {url: 'X-Store://w'}}\n",
        "  data:\n    - {id: a, source: {url: 'x-://w'}}\n",
        "  data:\n    - {id: a, source: {url: 'https://x-store://w'}}\n",
    ],
)
def test_a_malformed_data_list_is_never_d015_nor_a_crash(tmp_path: Path, data: str) -> None:
    art = tmp_path / "art"
    art.mkdir()
    (art / "rra.yaml").write_text(f'rra_version: "1.1"\nenvironment:\n  python: "3.11"\n{data}')
    assert [f for f in validate(art).findings if f.code == "D015"] == []


def test_a_plugin_cannot_replace_a_built_in_scheme_d017(with_plugins: None) -> None:
    names = ("x-copy", "x-fail", "x-lazy", "x-loud", "x-slow")
    assert plugins.plugin_names(plugins.DATA_SCHEMES) == names
    refused = sorted(f.path for f in plugins.refusals() if f.code == "D017")
    assert refused == [
        "/plugins/reprobridge.data_schemes/myscheme",
        "/plugins/reprobridge.data_schemes/s3",
    ]


def _at_data(root: Path) -> list[tuple[str, str]]:
    """The V and S findings at the data items (the minimal manifest lacks other parts)."""
    found = validate(root, select=("V", "S")).findings
    return [(f.code, f.path) for f in found if f.path.startswith("/environment/data")]


def test_the_url_pattern_admits_plugin_schemes_only_since_1_1(tmp_path: Path) -> None:
    assert f"^{plugins.DATA_SCHEME}://" == PLUGIN_URL_PATTERN
    assert _at_data(_artifact(tmp_path / "new", "x-copy:///store/weights.bin")) == []
    old = _artifact(tmp_path / "old", "x-copy:///store/weights.bin", version="1.0")
    assert _at_data(old) == [("V005", URL)]
    assert _at_data(_artifact(tmp_path / "other", "ftp://host/weights.bin")) == [("S004", URL)]
