"""The installed distributions of an interpreter, read here or run as a script by another.

Standard library only, in syntax every CPython the resolver serves (3.6 on) reads:
:mod:`reprobridge_sdk.env.snapshot` imports it for the running interpreter and runs this
file as a script with another one (``python -I _distributions.py``), which prints JSON.

Only the header block of each distribution's metadata is parsed (the long description after
the first empty line is most of the text): ``Distribution.metadata`` parses all of it, about
four times the CPU for the same pairs.
"""

import json
import platform
import re
import sys
from email.parser import HeaderParser
from importlib import metadata

try:  # how this interpreter's Distribution.metadata mends indented values (3.10 on)
    from importlib.metadata._adapters import Message as _mend  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - older interpreters, run only as a script
    _mend = None

_BLANK = re.compile(r"\r?\n\r?\n")


def read_distributions():  # type: () -> list[tuple[str, str]]
    """``(name, version)`` pairs sorted by name (case-insensitive; the first of a name wins)."""
    parser = HeaderParser()
    found = {}  # type: dict[str, str]
    for dist in metadata.distributions():
        text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("")
        text = text or ""
        end = _BLANK.search(text)
        head = parser.parsestr(text[: end.end()] if end else text)
        head = head if _mend is None else _mend(head)
        name = head["Name"]
        if name:
            found.setdefault(name, head["Version"])
    return sorted(found.items(), key=lambda item: item[0].lower())


def describe():  # type: () -> dict[str, object]
    """This interpreter's version, implementation, executable and distributions."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
        "distributions": read_distributions(),
    }


if __name__ == "__main__":
    json.dump(describe(), sys.stdout)
