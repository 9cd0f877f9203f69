"""What a generated document names: commands of this SDK and paths of the artifact.

``problems(out)`` reads the README section the build writes and the rendered GUIDE.md, runs
each ``reprobridge`` command they name with ``--help`` (as ``python -m reprobridge_sdk``)
and checks each path they name exists in the artifact (or, for a path of the code, under
``code/``). It returns what is wrong, as ``(kind, name)`` pairs: empty when every word holds.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from reprobridge_sdk.agent.packager import README_MARKER

_TICKED = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"```(?:sh|console|bash)?\n(.*?)```", re.S)
_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]*)*$")


def generated_texts(out: Path, *, guide: bool = True) -> list[str]:
    """The README section the Packager owns and (``guide``) the guide, as written."""
    readme = (out / "README.md").read_text("utf-8")
    assert README_MARKER in readme
    texts = [readme.split(README_MARKER, 1)[1]]
    return [*texts, (out / "GUIDE.md").read_text("utf-8")] if guide else texts


def named_commands(text: str) -> list[tuple[str, ...]]:
    """The subcommand words of every ``reprobridge`` command ``text`` names."""
    lines = [m.group(1) for m in _TICKED.finditer(text)]
    for block in _FENCE.findall(text):
        lines += [line.lstrip("$ ").strip() for line in block.splitlines()]
    found: list[tuple[str, ...]] = []
    for line in lines:
        words = line.split()
        if not words or words[0] != "reprobridge":
            continue
        sub = []
        for word in words[1:]:
            if not re.fullmatch(r"[a-z][a-z-]*", word):
                break
            sub.append(word)
        if tuple(sub) not in found:
            found.append(tuple(sub))
    return found


def named_paths(text: str) -> list[str]:
    """The artifact paths ``text`` names: ticked words with a ``/`` or a file suffix, links."""
    names = [m.group(1) for m in _LINK.finditer(text) if "://" not in m.group(1)]
    for match in _TICKED.finditer(text):
        word = match.group(1)
        if word.startswith("reprobridge") or not _PATH.fullmatch(word):
            continue
        if "/" in word or re.search(r"\.(md|py|lock|txt|yaml|json|patch)$", word):
            names.append(word)
    return list(dict.fromkeys(names))


def problems(out: Path, *, guide: bool = True) -> list[tuple[str, str]]:
    """Every named command that has no ``--help`` and every named path that is not there
    (``guide=False``: the README section only, for an artifact whose guide a person wrote)."""
    wrong: list[tuple[str, str]] = []
    texts = generated_texts(out, guide=guide)
    commands = [c for text in texts for c in named_commands(text)]
    assert commands, "the generated documents name no command"
    for words in dict.fromkeys(commands):
        done = subprocess.run(
            [sys.executable, "-m", "reprobridge_sdk", *words, "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            wrong.append(("command", " ".join(["reprobridge", *words])))
    for text in texts:
        for name in named_paths(text):
            if not ((out / name).exists() or (out / "code" / name).exists()):
                wrong.append(("path", name))
    return wrong
