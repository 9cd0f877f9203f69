"""The public API is declared once, in ``reprobridge_sdk.PUBLIC_API``, and means what it says.

* every declared module imports, and its ``__all__`` is exactly its declared names (a name
  added to or removed from a stable module is a change of the declaration too);
* every declared name imports from its module and is public (no leading underscore), and a
  top-level name is the object its home module defines;
* the declared modules are public (no underscore in their dotted name);
* ``docs/reference/api.md`` is generated from the declaration (``gen_reference.py --check``
  runs in ``tests/docs``; here, each declared module has its section).
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

import reprobridge_sdk
from reprobridge_sdk import PUBLIC_API

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", sorted(PUBLIC_API))
def test_all_agrees_with_the_declaration(module: str) -> None:
    imported = importlib.import_module(module)
    assert sorted(imported.__all__) == sorted(PUBLIC_API[module]), (
        f"{module}.__all__ and PUBLIC_API in reprobridge_sdk/__init__.py differ: change both"
    )


@pytest.mark.parametrize("module", sorted(PUBLIC_API))
def test_every_declared_name_imports_and_is_public(module: str) -> None:
    imported = importlib.import_module(module)
    assert not any(part.startswith("_") for part in module.split("."))
    names = PUBLIC_API[module]
    assert len(set(names)) == len(names), f"{module} declares a name twice"
    for name in names:
        assert not name.startswith("_"), f"{module}.{name}"
        assert hasattr(imported, name), f"{module}.{name} does not import"


def test_the_top_level_names_are_their_home_modules_objects() -> None:
    for name in PUBLIC_API["reprobridge_sdk"]:
        value = getattr(reprobridge_sdk, name)
        home = getattr(value, "__module__", None)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert home is not None
            assert getattr(importlib.import_module(home), name) is value, name


def test_the_top_level_exports_what_users_need() -> None:
    from reprobridge_sdk import ExtractionError, extract_value
    from reprobridge_sdk.authoring.pack import PackError, pack, unpack
    from reprobridge_sdk.locks.lockfile import LockError, check_lock, read_lock

    assert (reprobridge_sdk.pack, reprobridge_sdk.unpack) == (pack, unpack)
    assert (reprobridge_sdk.read_lock, reprobridge_sdk.check_lock) == (read_lock, check_lock)
    assert reprobridge_sdk.extract_value is extract_value
    errors = (reprobridge_sdk.PackError, reprobridge_sdk.ExtractionError, reprobridge_sdk.LockError)
    assert errors == (PackError, ExtractionError, LockError)
    for error in (*errors, reprobridge_sdk.MissingExtraError):
        assert issubclass(error, reprobridge_sdk.ReproBridgeError)


def test_an_unknown_top_level_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute '_private'"):
        _ = reprobridge_sdk._private  # type: ignore[attr-defined]
    assert "PUBLIC_API" in dir(reprobridge_sdk)
    assert "_STABLE" not in dir(reprobridge_sdk)


def test_the_reference_page_has_a_section_per_stable_module() -> None:
    page = (REPO / "docs" / "reference" / "api.md").read_text("utf-8")
    for module in PUBLIC_API:
        assert f"## `{module}`" in page
        for name in PUBLIC_API[module]:
            assert f"`{name}`" in page
