"""The pylock.toml reader finds every package's line in one pass (large and odd layouts)."""

from __future__ import annotations

from pathlib import Path

from reprobridge_sdk.locks.lockfile import check_lock

_WHEEL = (
    '[[packages.wheels]]\nname = "{n}-1.0-py3-none-any.whl"\n'
    'url = "https://files.example.org/{n}-1.0-py3-none-any.whl"\n'
    'hashes = {{sha256 = "{h}"}}\n'
)


def _package(name: str, *, hashed: bool = True, marker: str | None = None) -> str:
    text = f'[[packages]]\nname = "{name}"\nversion = "1.0"\n'
    if marker:
        text += f"marker = {marker!r}\n"
    wheel = _WHEEL.format(n=name, h="a" * 64)
    return text + (
        wheel if hashed else wheel.replace('hashes = {sha256 = "' + "a" * 64 + '"}\n', "")
    )


def test_findings_point_at_the_right_package_among_many(tmp_path: Path) -> None:
    parts = ['lock-version = "1.0"\ncreated-by = "test"\n']
    for index in range(600):
        parts.append(_package(f"pkg{index}", hashed=index != 517))
    parts.append(_package("pkg3", marker="python_version < '3'"))  # same name, another marker
    parts.append(_package("pkg3", marker="python_version < '3'"))  # and again: L008
    text = "".join(parts)
    lock = tmp_path / "pylock.toml"
    lock.write_text(text)
    lines = text.splitlines()
    name_lines = [n for n, line in enumerate(lines, start=1) if line == 'name = "pkg517"']
    pkg3 = [n for n, line in enumerate(lines, start=1) if line == 'name = "pkg3"']
    found = [(f.code, f.line, f.path) for f in check_lock(lock, "pylock")]
    assert ("L002", name_lines[0], "/packages/517/wheels/0/hashes") in found
    assert ("L008", pkg3[2], "/packages/601") in found


def test_inline_tables_and_look_alike_keys(tmp_path: Path) -> None:
    text = (
        'lock-version = "1.0"\ncreated-by = "test"\n'
        "packages = [\n"
        '  {package-name = "six", name = "six", version = "1.0"},\n'
        "]\n"
    )
    lock = tmp_path / "pylock.toml"
    lock.write_text(text)
    found = [(f.code, f.line) for f in check_lock(lock, "pylock")]
    assert ("L002", 4) in found  # the line of name = "six", not of package-name
