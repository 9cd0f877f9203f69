"""A real plugin distribution, built as a wheel and pip-installed into a venv made for the tests.

``rb-test-plugins`` declares entry points in all three plugin groups, well-behaved and hostile
ones alike. :func:`install_plugin_venv` makes a virtual environment whose interpreter also sees
the running interpreter's packages (a ``.pth`` file that adds its site directories, so the SDK
under test is importable without reinstalling it) and installs the wheel into it with pip's
public command line (``pip --python VENV install``). Subprocess tests run that venv's
interpreter; in-process tests put its ``site-packages`` on ``sys.path`` (:func:`on_path`).
"""

from __future__ import annotations

import contextlib
import site
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from eco_wheelhouse import build_wheel

__all__ = ["DISTRIBUTION", "PluginVenv", "install_plugin_venv", "on_path"]

DISTRIBUTION = "rb-test-plugins"

MODULE = '''
"""Plugins of every group for the ReproBridge tests: well-behaved and hostile ones."""

import math
import os
import re
import shutil
import sys
import threading
from pathlib import Path

# ---------------------------------------------------------------- report formats

def count(pairs):
    return "".join(f"{label}\\t{len(findings)}\\n" for label, findings in pairs)


def sneaky_json(pairs):
    return "not the built-in json\\n"


not_callable = 42

# ---------------------------------------------------------------- extractors

_NUMBER = re.compile(r"[-+]?[0-9]+(?:\\.[0-9]+)?")


def last_number(path, spec):
    """The first number after the spec's ``parameters.marker`` (a 1.1 draft's ``x-marker``)
    on the last line that holds both."""
    marker = spec.get("parameters", {}).get("marker", spec.get("x-marker", ""))
    found = None
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if marker in line:
                numbers = _NUMBER.findall(line.split(marker, 1)[1])
                if numbers:
                    found = numbers[0]
    if found is None:
        raise LookupError(f"no line with {marker!r} holds a number")
    return float(found) if "." in found else int(found)


def picky(path, spec):
    """``last_number``, unless ``RB_TEST_PLUGIN_FAIL`` is set (a plugin that changed since
    the runs were made, as an upgrade might)."""
    if os.environ.get("RB_TEST_PLUGIN_FAIL"):
        raise RuntimeError("this version of the plugin cannot read the log")
    return last_number(path, spec)


def raises(path, spec):
    raise ValueError("the plugin cannot read this log")


def hangs(path, spec):
    threading.Event().wait(120)
    return 1.0


def returns_nan(path, spec):
    return math.nan


def returns_text(path, spec):
    return "0.5"


def returns_bool(path, spec):
    return True


def exits(path, spec):
    sys.exit(3)

# ---------------------------------------------------------------- data schemes

def copy_fetch(url, destination, *, size, sha256, timeout):
    """``x-copy:///absolute/path``: copy a local file (a stand-in for a remote store)."""
    shutil.copyfile(url[len("x-copy://"):], destination)


def failing_fetch(url, destination, *, size, sha256, timeout):
    raise ConnectionError("the store refused the request")


def lazy_fetch(url, destination, *, size, sha256, timeout):
    return None


def slow_fetch(url, destination, *, size, sha256, timeout):
    threading.Event().wait(120)
'''

#: Plugins that print to stdout every way a plugin can: ``print`` (also at import time), a
#: write to descriptor 1, a subprocess, and a thread that prints after the call has returned.
LOUD = '''
"""Plugins that write to stdout while they work (they must never reach the machine output)."""

import os
import shutil
import subprocess
import sys
import threading

print("LOUD: imported")


def _shout(what):
    print(f"LOUD: {what} print")
    sys.stdout.flush()
    os.write(1, f"LOUD: {what} fd\\n".encode())
    subprocess.run([sys.executable, "-c", f"print('LOUD: {what} subprocess')"], check=True)
    late = threading.Thread(target=_late, args=(what,), daemon=True)
    late.start()


def _late(what):
    threading.Event().wait(0.3)
    print(f"LOUD: {what} thread")
    sys.stdout.flush()


def extract(path, spec):
    _shout("extractor")
    return 90.1


def fetch(url, destination, *, size, sha256, timeout):
    _shout("scheme")
    shutil.copyfile(url[len("x-loud://"):], destination)


def render(pairs):
    _shout("format")
    return "".join(f"{label}\\t{len(findings)}\\n" for label, findings in pairs)
'''

ENTRY_POINTS = """\
[reprobridge.report_formats]
loud = rb_test_plugins.loud:render
count = rb_test_plugins.plugins:count
json = rb_test_plugins.plugins:sneaky_json
broken = rb_missing_module:render
inert = rb_test_plugins.plugins:not_callable
Bad_Name = rb_test_plugins.plugins:count

[reprobridge.extractors]
x-loud = rb_test_plugins.loud:extract
x-last-number = rb_test_plugins.plugins:last_number
x-picky = rb_test_plugins.plugins:picky
x-raises = rb_test_plugins.plugins:raises
x-hangs = rb_test_plugins.plugins:hangs
x-nan = rb_test_plugins.plugins:returns_nan
x-text = rb_test_plugins.plugins:returns_text
x-bool = rb_test_plugins.plugins:returns_bool
x-exits = rb_test_plugins.plugins:exits
x-broken = rb_missing_module:extract
regex = rb_test_plugins.plugins:returns_nan
last-number = rb_test_plugins.plugins:last_number

[reprobridge.data_schemes]
x-loud = rb_test_plugins.loud:fetch
x-copy = rb_test_plugins.plugins:copy_fetch
x-fail = rb_test_plugins.plugins:failing_fetch
x-lazy = rb_test_plugins.plugins:lazy_fetch
x-slow = rb_test_plugins.plugins:slow_fetch
s3 = rb_test_plugins.plugins:failing_fetch
myscheme = rb_test_plugins.plugins:copy_fetch
"""


@dataclass(frozen=True)
class PluginVenv:
    """The venv holding the plugin distribution."""

    root: Path
    python: Path
    site_packages: Path


def install_plugin_venv(directory: Path) -> PluginVenv:
    """Build the plugin wheel and pip-install it into a new venv under ``directory``."""
    wheel = build_wheel(
        directory / "wheels",
        DISTRIBUTION,
        "0.1",
        modules={"rb_test_plugins/plugins.py": MODULE, "rb_test_plugins/loud.py": LOUD},
        entry_points=ENTRY_POINTS,
    )
    root = directory / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120
    )
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    site_packages = Path(purelib)
    # The venv sees the packages of the interpreter running the tests (the SDK under test and
    # its dependencies), after its own: addsitedir also runs their .pth files (editable SDK).
    parents = [p for p in {sysconfig.get_paths()["purelib"], *site.getsitepackages()} if p]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in sorted(parents))
    (site_packages / "zz_test_parent_site.pth").write_text(lines)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "--quiet",
            str(wheel.path),
        ],
        check=True,
        timeout=300,
    )
    return PluginVenv(root, python, site_packages)


@contextlib.contextmanager
def on_path(venv: PluginVenv) -> Iterator[None]:
    """The venv's site-packages on ``sys.path`` of this process, entry points read afresh."""
    from reprobridge_sdk import plugins

    sys.path.insert(0, str(venv.site_packages))
    plugins.forget()
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(venv.site_packages))
        for name in ("rb_test_plugins.plugins", "rb_test_plugins.loud", "rb_test_plugins"):
            sys.modules.pop(name, None)
        plugins.forget()
