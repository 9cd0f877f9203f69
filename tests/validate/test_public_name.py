"""``reprobridge_sdk.validate`` is the function, whatever was imported before it."""

from __future__ import annotations

import subprocess
import sys
import types


def test_validate_stays_a_function_after_importing_the_validation_package() -> None:
    code = (
        "import inspect\n"
        "import reprobridge_sdk.validation.structure\n"
        "import reprobridge_sdk\n"
        "from reprobridge_sdk import validate, ValidationResult\n"
        "print(inspect.isfunction(reprobridge_sdk.validate), validate.__module__,"
        " ValidationResult.__module__)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert proc.stdout.split() == [
        "True",
        "reprobridge_sdk.validation",
        "reprobridge_sdk.validation",
    ]


def test_validation_is_an_ordinary_module() -> None:
    from reprobridge_sdk import validation

    assert type(validation) is types.ModuleType
    assert not callable(validation)
