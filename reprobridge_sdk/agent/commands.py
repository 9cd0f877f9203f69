"""Commands as people write them: a command line of a README, a paper or a claim's hint,
read into a launcher (working directory, environment, argv) without running anything.

Grammar (a hand-written lexer: ``shlex`` unquotes words but cannot tell a quoted ``|`` from
a pipe, which decides whether the line needs a shell)::

    line     = segment (("&&" | ";") segment)* ["&"]
    segment  = "cd" DIR | "export" ASSIGN+ | setup | ASSIGN* ["env" ASSIGN*] wrapper* program
    setup    = install | activate               (left out: see below)
    wrapper  = "time" | "nohup" | ("pipenv" | "poetry" | "pdm" | "hatch" | "rye" | "uv") "run"
             | CONDA "run" (("-n" | "--name" | "-p" | "--prefix") NAME | "--no-capture-output")*
    program  = PYTHON popt* (SCRIPT | "-m" MODULE) ARG*
             | ("bash" | "sh") SHELLSCRIPT ARG* | "./" SHELLSCRIPT ARG*
             | "make" (("-C" | "-f") VALUE | "-s" | "-k" | "-jN")* [TARGET] ASSIGN*
    PYTHON   = python | python2 | python3 | python2.N | python3.N | ipython (a path ending in
               one too)
    popt     = -u | -B | -O | -OO | -E | -s | -S | -I | -b | -bb | -q | (-W | -X) VALUE
    install  = ("pip" | "pip3" | PYTHON "-m" "pip" | "uv" "pip") "install" ARG*
             | PYTHON "setup.py" ("install" | "develop") ARG* | "uv" "sync" ARG*
             | CONDA ("install" | "create" | "env" ("create" | "update")) ARG*
             | ("poetry" | "pipenv" | "pdm") ("install" | "sync") ARG*
    activate = CONDA ("activate" | "deactivate") ARG* | ("source" | ".") ("activate" | PATH
               ending in "/activate") ARG* | "workon" NAME | "deactivate"
    CONDA    = conda | mamba | micromamba

Rules and edge cases:

* ``cd DIR`` segments before the program move the working directory (``..`` and ``.`` are
  normalised); a ``cd`` to an absolute path, ``~``, ``-`` or out of the repository makes the
  command unusable (``problem``). ``ASSIGN`` words (``NAME=value``) and ``export`` set the
  environment. ``python2``/``python3``/``python3.N`` and ``ipython`` become ``python`` (the
  environment's interpreter).
* Installs and activations (``setup``) are left out: the build makes the environment from
  its lock, and a sandboxed run reaches no index. A wrapper that only times, detaches or
  starts the program in an environment is dropped, and so is a trailing ``&`` (a launcher
  runs in the foreground). A Python step that is no install (``python setup.py build_ext
  --inplace``, ``python -m pip download``) is a program that runs before the command, which
  is the next Python command of the line.
* A line needs a shell (``shell``) when it has a pipe, a redirection, ``||``, ``&``, a
  subshell, an expansion (``$``, a backquote, a leading ``~``) or an unquoted glob, or
  runs a program after the Python command. It is then kept whole (``argv`` is the line, the
  working directory the repository's) and the Python script it runs is still found.
* ``python -c`` and a line with no Python program give ``None`` from :func:`parse_command`
  (not a Python command) or a ``problem`` (a ``-c`` program is not a script). Unbalanced
  quotes and lines over :data:`MAX_LINE` characters are a ``problem``, never an exception.
* ``bash x.sh`` / ``sh x.sh`` / ``./x.sh`` are followed by :func:`resolve`: the script's
  lines are read as commands (with its own ``cd``s, from the caller's working directory);
  exactly one Python command in it is the launcher, several are a ``problem``.
* ``make [target]`` is followed by :func:`resolve` through the Makefile
  (:mod:`._makefiles`): the recipe's lines, prerequisites' first, each in a shell of its own
  from the Makefile's folder; exactly one Python command among them is the launcher.
* README code blocks (:func:`markdown_commands`): fenced blocks (any info string but a
  language that is not a shell's), indented blocks (reStructuredText's ``::`` blocks too)
  and ``$ `` prompt lines; ``\\`` joins continuation lines, and so does a line of a block
  that starts with an option (``--x``: a README wraps a long command without ``\\``, and
  no shell runs a line that starts with one), except in a block with ``$`` prompts, whose
  other lines are output; a ``cd`` on its own line moves every later command of its block.
* Console scripts of the repository's own package (``scripts``, from
  :mod:`reprobridge_sdk.agent.console_scripts`): a line whose program is one of them is read
  as the Python command that runs it uninstalled (``python -m module`` or the wrapper's
  ``python -c`` call) with the line's arguments; ``console_script`` keeps its name. A line
  that needs a shell is unusable then (``problem``): no shell finds the command uninstalled.
* An option the build passes (:func:`with_option`: a seed, a short smoke scope) is passed
  once: an earlier ``flag``, ``flag=value`` or argparse abbreviation of it (``--num-shuffle``
  for ``--num-shuffles``, which argparse accepts when the prefix is no option itself and
  begins no other; :func:`argparse_flags`) is dropped, and ``flag value`` comes last.
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from reprobridge_sdk.agent._loops import joined_lines, unrolled
from reprobridge_sdk.agent._makefiles import recipe
from reprobridge_sdk.agent.console_scripts import ConsoleScript

__all__ = [
    "MAX_LINE",
    "Command",
    "argparse_flags",
    "locate",
    "markdown_commands",
    "output_file",
    "parse_command",
    "parse_lines",
    "resolve",
    "with_option",
]

#: Longest command line read (characters); longer lines are unusable.
MAX_LINE = 4096
_MAX_SCRIPT = 256 * 1024
_PYTHON = re.compile(r"^(?:.*/)?i?python(?P<major>[23](?:\.\d{1,2})?)?$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_FLAGS_NO_VALUE = {"-u", "-B", "-O", "-OO", "-E", "-s", "-S", "-I", "-b", "-bb", "-q"}
_FLAGS_VALUE = {"-W", "-X"}
_OPERATORS = ("&&", "||", ";;", ">>", "<<", ";", "|", "&", "<", ">", "(", ")")
_SHELL_LANGS = {"", "sh", "bash", "shell", "console", "zsh", "shell-session", "terminal"}
_MODULE = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*$")


@dataclass(frozen=True)
class Command:
    """One command line read as a launcher."""

    #: The line as written (continuations joined).
    text: str
    #: Working directory relative to the repository root (POSIX, ``.`` for the root).
    workdir: str = "."
    env: dict[str, str] = field(default_factory=dict)
    #: ``["python", opts..., script | "-m", module, args...]``; with ``shell``, ``[line]``.
    argv: list[str] = field(default_factory=list)
    #: The Python script as written in the command (relative to ``workdir``), if any.
    script_arg: str | None = None
    module: str | None = None
    #: Where the Python program runs (``workdir``, or for a shell line the ``cd``'s target).
    runs_in: str = "."
    #: The script's path relative to the repository root, once :func:`resolve` found it.
    script: str | None = None
    shell: bool = False
    #: Why the command cannot be a launcher (None: it can).
    problem: str | None = None
    #: The shell script the command was followed through, if any.
    via: str | None = None
    #: A shell script to follow (``bash run.sh``), before :func:`resolve`.
    shell_script: str | None = None
    #: The console script of the repository's package the line runs, if any.
    console_script: str | None = None
    #: ``make``'s words after ``make`` (a Makefile target to follow), before :func:`resolve`.
    make: tuple[str, ...] | None = None

    @property
    def args(self) -> list[str]:
        """The arguments after the script or module."""
        if self.shell:
            return []
        if self.console_script is not None:
            return self.argv[3:]  # after ``python -m module`` or ``python -c code``
        for index, word in enumerate(self.argv):
            if self.module is not None and word == "-m":
                return self.argv[index + 2 :]
            if self.module is None and index > 0 and word == self.script_arg:
                return self.argv[index + 1 :]
        return []


@dataclass
class _Word:
    raw: str
    expands: bool = False
    globs: bool = False
    #: An operator follows with no blank between (``2>``: the word is a descriptor).
    glued: bool = False


@dataclass
class _Lexed:
    items: list[_Word | str]  # str: an operator
    error: str | None = None


def _lex(line: str) -> _Lexed:
    """Words and operators of ``line``; a ``#`` at a word start ends it."""
    items: list[_Word | str] = []
    word: _Word | None = None
    quote = ""
    index = 0
    while index < len(line):
        char = line[index]
        if quote == "'":
            if char == "'":
                quote = ""
            assert word is not None
            word.raw += char
            index += 1
            continue
        if quote == '"':
            assert word is not None
            if char == "\\" and index + 1 < len(line):
                word.raw += line[index : index + 2]
                index += 2
                continue
            if char in "$`":
                word.expands = True
            if char == '"':
                quote = ""
            word.raw += char
            index += 1
            continue
        if char.isspace():
            if word is not None:
                items.append(word)
                word = None
            index += 1
            continue
        if char == "#" and word is None:
            break
        operator = next((op for op in _OPERATORS if line.startswith(op, index)), None)
        if operator is not None:
            if word is not None:
                word.glued = True
                items.append(word)
                word = None
            items.append(operator)
            index += len(operator)
            continue
        if word is None:
            word = _Word("")
            if char == "~":
                word.expands = True
        if char == "\\" and index + 1 < len(line):
            word.raw += line[index : index + 2]
            index += 2
            continue
        if char in "'\"":
            quote = char
        elif char in "$`":
            word.expands = True
        elif char in "*?[":
            word.globs = True
        word.raw += char
        index += 1
    if quote:
        return _Lexed(items, "an unbalanced quote")
    if word is not None:
        items.append(word)
    return _Lexed(items)


def _unquote(word: _Word) -> str:
    try:
        parts = shlex.split(word.raw)  # one word: the lexer split on every unquoted blank
    except ValueError:  # a lone trailing backslash
        return word.raw
    return "".join(parts)


def _plain(item: _Word | str) -> bool:
    return isinstance(item, _Word) and not (item.expands or item.globs)


def _is(item: _Word | str, text: str) -> bool:
    return isinstance(item, _Word) and item.raw == text


def _descriptor(item: _Word | str, number: str) -> bool:
    return isinstance(item, _Word) and item.glued and item.raw == number


def _output_tail(items: list[_Word | str]) -> int:
    """How many items at the end of ``items`` send the output somewhere the run's log
    already has it: a trailing ``&``, ``> FILE``, ``>> FILE``, ``2> FILE``, ``2>&1``,
    ``&> FILE`` or ``| tee [-a] FILE`` (0: none)."""
    count = len(items)
    last = items[-1] if items else ""
    if count > 1 and last == "&":  # a launcher runs in the foreground
        return 1
    if count > 4 and items[-4] == "|" and _is(items[-3], "tee") and _is(items[-2], "-a"):
        return 4 if _plain(last) else 0
    if count > 3 and items[-3] == "|" and _is(items[-2], "tee"):
        return 3 if _plain(last) else 0
    if count > 4 and _descriptor(items[-4], "2") and items[-3:-1] == [">", "&"]:
        return 4 if _is(last, "1") else 0  # 2>&1
    if count > 2 and items[-2] in (">", ">>") and _plain(last):
        before = items[-3]
        if _descriptor(before, "1") or _descriptor(before, "2") or before == "&":
            return 3 if count > 3 else 0  # 2> FILE, &> FILE
        return 2
    return 0


def _to_the_log(items: list[_Word | str]) -> list[_Word | str]:
    """``items`` without the redirections of :func:`_output_tail` at their end: the runner
    sends the program's output and errors to the run's log, where the build reads them."""
    while (tail := _output_tail(items)) and tail < len(items):
        items = items[:-tail]
    return items


def output_file(text: str) -> str | None:
    """The file the end of ``text`` sends its output to (``> FILE``, ``>> FILE``, ``&> FILE``,
    ``| tee FILE``), which :func:`parse_command` drops for the run's log; None when none."""
    lexed = _lex(text.strip())
    items = lexed.items if lexed.error is None else []
    while (tail := _output_tail(items)) and tail < len(items):
        last = items[-1]
        errors_only = tail == 3 and _descriptor(items[-3], "2")
        if tail != 1 and isinstance(last, _Word) and not _is(last, "1") and not errors_only:
            return _unquote(last)
        items = items[:-tail]
    return None


def _segments(items: list[_Word | str]) -> tuple[list[list[_Word]], bool]:
    """Split on ``&&`` and ``;``; True when another operator makes a shell necessary."""
    segments: list[list[_Word]] = [[]]
    needs_shell = False
    for item in items:
        if isinstance(item, str):
            if item in {"&&", ";"}:
                segments.append([])
            else:
                needs_shell = True
                segments[-1].append(_Word(item))
        else:
            segments[-1].append(item)
    return [s for s in segments if s], needs_shell


def _cd(workdir: str, target: str) -> str | None:
    if not target or target.startswith(("/", "~", "-")):
        return None
    moved = posixpath.normpath(posixpath.join(workdir, target))
    if moved == ".." or moved.startswith("../"):
        return None
    return moved


@dataclass
class _Reader:
    workdir: str
    env: dict[str, str] = field(default_factory=dict)


_TIMERS = frozenset({"time", "nohup"})
_RUNNERS = frozenset({"pipenv", "poetry", "pdm", "hatch", "rye", "uv"})
_CONDA = frozenset({"conda", "mamba", "micromamba"})
_CONDA_NAMED = frozenset({"-n", "--name", "-p", "--prefix"})


def _unwrapped(words: list[str]) -> list[str] | None:
    """``words`` without their first wrapper (see the grammar), or None when there is none."""
    head, second = words[0], words[1] if len(words) > 1 else ""
    if head in _TIMERS and len(words) > 1:
        return words[1:]
    if head in _RUNNERS and second == "run" and len(words) > 2 and not words[2].startswith("-"):
        return words[2:]
    if head in _CONDA and second == "run":
        index = 2
        while index < len(words) and words[index].startswith("-"):
            word = words[index]
            index += 2 if word in _CONDA_NAMED else 1
        return words[index:] or None
    return None


def _program(words: list[str]) -> tuple[dict[str, str], list[str]]:
    env: dict[str, str] = {}
    rest = list(words)
    while rest:
        if rest[0] == "env":
            rest = rest[1:]
        elif _ASSIGN.match(rest[0]):
            name, _, value = rest[0].partition("=")
            env[name] = value
            rest = rest[1:]
        elif (inner := _unwrapped(rest)) is not None:
            rest = inner
        else:
            break
    return env, rest


def _is_setup(rest: list[str]) -> bool:
    """An install or an environment's activation (the grammar's ``setup``)."""
    head, tail = rest[0], rest[1:4]
    python = bool(_PYTHON.match(head))
    installs = (
        (head in {"pip", "pip3"} and tail[:1] == ["install"])
        or (python and tail == ["-m", "pip", "install"])
        or (python and tail[:1] == ["setup.py"] and tail[1:2] in (["install"], ["develop"]))
        or (head == "uv" and (tail[:2] == ["pip", "install"] or tail[:1] == ["sync"]))
        or (head in _CONDA and tail[:1] in (["install"], ["create"]))
        or (head in _CONDA and tail[:2] in (["env", "create"], ["env", "update"]))
        or (head in {"poetry", "pipenv", "pdm"} and tail[:1] in (["install"], ["sync"]))
    )
    activates = (
        (head in _CONDA and tail[:1] in (["activate"], ["deactivate"]))
        or (head in {"source", "."} and bool(tail) and tail[0].endswith("activate"))
        or head in {"workon", "deactivate"}
    )
    return installs or activates


def _prepares(rest: list[str]) -> bool:
    """A Python step that builds or fetches rather than runs the experiment: the setup
    script's other commands and pip's other commands (``build_ext --inplace``)."""
    if not _PYTHON.match(rest[0]):
        return False
    return rest[1:2] == ["setup.py"] or rest[1:3] == ["-m", "pip"]


def _python_command(text: str, reader: _Reader, words: list[str]) -> Command | None:
    """``words`` start with a Python interpreter: the command, or None for ``python`` alone."""
    index = 1
    options: list[str] = []
    while index < len(words):
        word = words[index]
        if word in _FLAGS_NO_VALUE:
            options.append(word)
            index += 1
        elif word in _FLAGS_VALUE and index + 1 < len(words):
            options += words[index : index + 2]
            index += 2
        elif word[:2] in _FLAGS_VALUE and len(word) > 2:
            options.append(word)
            index += 1
        else:
            break
    base = Command(text, reader.workdir, dict(reader.env), runs_in=reader.workdir)
    if index >= len(words):
        return None
    head = words[index]
    if head == "-c":
        return replace(base, problem="a 'python -c' program is not a script of the repository")
    if head == "-m":
        if index + 1 >= len(words) or not _MODULE.match(words[index + 1]):
            return replace(base, problem="'python -m' names no module")
        module = words[index + 1]
        argv = ["python", *options, "-m", module, *words[index + 2 :]]
        return replace(base, argv=argv, module=module)
    if head.startswith("-"):
        return replace(base, problem=f"the interpreter option {head!r} is not understood")
    argv = ["python", *options, head, *words[index + 1 :]]
    return replace(base, argv=argv, script_arg=head)


def _segment_command(
    text: str, reader: _Reader, words: list[str], scripts: Mapping[str, ConsoleScript]
) -> Command | None:
    env, rest = _program(words)
    if not rest:
        reader.env.update(env)  # ``FOO=1`` alone: a shell variable the later commands see
        return None
    reader_env = _Reader(reader.workdir, {**reader.env, **env})
    program = rest[0]
    if _PYTHON.match(program):
        return _python_command(text, reader_env, rest)
    if program in scripts:
        entry = scripts[program]
        return Command(
            text,
            reader.workdir,
            reader_env.env,
            argv=[*entry.head, *rest[1:]],
            module=entry.module,
            runs_in=reader.workdir,
            script=entry.file,
            console_script=entry.name,
        )
    followed = Command(text, reader.workdir, reader_env.env, rest, runs_in=reader.workdir)
    if program in {"bash", "sh"} and len(rest) > 1 and rest[1].endswith(".sh"):
        return replace(followed, shell_script=rest[1])
    if program.endswith(".py") and not program.startswith("-"):
        # ``./scripts/train.py`` (an executable script with a shebang): run by the
        # environment's interpreter, as ``python scripts/train.py`` would
        return _python_command(text, reader_env, ["python", posixpath.normpath(program), *rest[1:]])
    if program == "make":
        return replace(followed, make=tuple(rest[1:]))
    if program.startswith("./") and program.endswith(".sh"):
        return replace(followed, shell_script=program)
    return None


def parse_command(
    text: str, *, workdir: str = ".", scripts: Mapping[str, ConsoleScript] | None = None
) -> Command | None:
    """``text`` read as a launcher from ``workdir``; None when it runs no Python program.

    A line that is a ``for`` loop is read as its commands (:mod:`._loops`): a loop over
    seeds is one command; a loop over several configurations is a ``problem`` (a launcher
    runs one).
    """
    if unrolled([text]) != [text]:
        commands = parse_lines([text], workdir=workdir, scripts=scripts)
        if len(commands) > 1:
            why = f"the line is a loop of {len(commands)} commands; a launcher runs one"
            return Command(text, workdir, problem=why)
        return commands[0] if commands else None
    command, _ = _parse(text, _Reader(workdir), scripts or {})
    return command


def _parse(
    text: str, reader: _Reader, scripts: Mapping[str, ConsoleScript]
) -> tuple[Command | None, _Reader]:
    """The command of one line and the reader's state after it (its ``cd``s and exports)."""
    text = text.strip()
    if len(text) > MAX_LINE:
        if not re.search(r"\bpython|\.sh\b", text[:MAX_LINE]):
            return None, reader
        return Command(text[:200], reader.workdir, problem="the line is too long"), reader
    lexed = _lex(text)
    if lexed.error is not None:
        mentions = bool(re.search(r"\bpython[23.\d]*\s", text)) or ".sh" in text
        problem = Command(text, reader.workdir, problem=lexed.error)
        return (problem if mentions else None), reader
    segments, needs_shell = _segments(_to_the_log(lexed.items))
    start = _Reader(reader.workdir, dict(reader.env))
    found: Command | None = None
    after = False  # a program runs after the Python command
    lost = False  # a ``cd`` to a place this reader cannot follow
    for segment in segments:
        words = [_unquote(w) for w in segment]
        if any(w.expands or w.globs for w in segment):
            needs_shell = True
        if found is not None:
            after = True
            continue
        if words[0] == "cd":
            moved = _cd(reader.workdir, words[1] if len(words) > 1 else "")
            if moved is None or len(words) != 2 or any(w.expands for w in segment):
                lost = True
            else:
                reader.workdir = moved
            continue
        if words[0] == "export":
            for word in words[1:]:
                if _ASSIGN.match(word):
                    name, _, value = word.partition("=")
                    reader.env[name] = value
            continue
        rest = _program(words)[1]
        if rest and _is_setup(rest):
            continue  # the build makes the environment from its lock
        if rest and _prepares(rest):
            after = True  # it runs before the command, in the same shell
            continue
        found = _segment_command(text, reader, words, scripts)
        if found is None and rest:
            after = True  # another program (mkdir, make, ...) runs before it
    if found is None:
        return None, reader
    if lost:
        lost_why = "a 'cd' out of the repository or to a place only the shell knows"
        return Command(text, start.workdir, problem=lost_why), reader
    if (needs_shell or after) and found.console_script is not None:
        why = f"{found.console_script!r} runs only installed, and the line needs a shell"
        return Command(text, start.workdir, problem=why), reader
    if needs_shell or after:
        whole = replace(  # noqa: S604 - a record's field: nothing runs here
            found, shell=True, argv=[text], workdir=start.workdir, env=start.env
        )
        return whole, reader
    return found, reader


def parse_lines(
    lines: list[str], *, workdir: str = ".", scripts: Mapping[str, ConsoleScript] | None = None
) -> list[Command]:
    """The commands of consecutive shell lines; each ``cd`` moves the lines after it."""
    reader = _Reader(workdir)
    found: list[Command] = []
    for line in unrolled(joined_lines(lines, MAX_LINE)):
        command, reader = _parse(line, reader, scripts or {})
        if command is not None:
            found.append(command)
    return found


def _prompt(line: str) -> str:
    stripped = line.strip()
    for prompt in ("$ ", "% ", "> ", ">>> "):
        if stripped.startswith(prompt):
            return stripped[len(prompt) :]
    return stripped


_OPTION_START = re.compile(r"^\s*--?[A-Za-z][\w-]*")


def _rewrapped(lines: list[str]) -> list[str]:
    """A block's lines with a line that starts with an option joined to the line before
    (not in a block with ``$`` prompts: there a line without one is output)."""
    if any(line.strip().startswith("$ ") for line in lines):
        return lines
    out: list[str] = []
    for line in lines:
        previous = out[-1].rstrip() if out else ""
        if previous and _OPTION_START.match(line) and not previous.endswith("\\"):
            out[-1] = out[-1].rstrip() + " " + line.strip()
        else:
            out.append(line)
    return out


def markdown_commands(
    text: str, *, workdir: str = ".", scripts: Mapping[str, ConsoleScript] | None = None
) -> list[Command]:
    """The commands of a README's code blocks and prompt lines (run from ``workdir``); a line
    that runs a console script of ``scripts`` is read as its Python command."""
    scripts = scripts or {}
    names = "".join(rf"|{re.escape(name)}\s" for name in sorted(scripts))
    inline_start = re.compile(rf"^\$?\s*(?:cd\s|[A-Z_]+=|python[23.\d]*\s|bash\s|sh\s{names})")

    def read(block: list[str]) -> list[Command]:
        lines = [_prompt(b) for b in _rewrapped(block)]
        return parse_lines(lines, workdir=workdir, scripts=scripts)

    found: list[Command] = []
    block: list[str] = []
    fence = ""
    shell_block = False
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence):
                if shell_block:
                    found += read(block)
                block, fence = [], ""
            else:
                block.append(line)
            index += 1
            continue
        match = re.match(r"^(`{3,}|~{3,})\s*([\w+-]*)", stripped)
        if match:
            fence = match.group(1)
            shell_block = match.group(2).lower() in _SHELL_LANGS
            index += 1
            continue
        if line.startswith(("    ", "\t")) and stripped:
            indented: list[str] = []
            while index < len(lines) and (
                lines[index].startswith(("    ", "\t")) or not lines[index].strip()
            ):
                indented.append(lines[index])
                index += 1
            found += read([b for b in indented if b.strip()])
            continue
        if stripped.startswith("$ "):
            found += read([stripped])
        else:
            for inline in re.findall(r"`([^`\n]{1,500})`", line):
                if inline_start.match(inline):
                    found += read([inline.removeprefix("$")])
        index += 1
    return found


def _inside(root: Path, rel: str) -> bool:
    try:
        (root / rel).resolve().relative_to(root.resolve())
    except (ValueError, OSError):
        return False
    return True


def _module_file(root: Path, workdir: str, module: str) -> str | None:
    base = module.replace(".", "/")
    for candidate in (f"{base}.py", f"{base}/__main__.py"):
        rel = posixpath.normpath(posixpath.join(workdir, candidate))
        if _inside(root, rel) and (root / rel).is_file():
            return rel
    return None


def resolve(command: Command, root: Path) -> Command:
    """``command`` with its script found in the repository at ``root`` (or a ``problem``).

    A shell script is followed to its one Python command. ``script`` is set only for a file
    that exists inside the repository.
    """
    if command.problem is not None:
        return command
    if command.console_script is not None and command.script is not None:
        return command  # its module's file, found where the package is (root or src/)
    if command.shell_script is not None:
        return _follow(command, root)
    if command.make is not None:
        return _follow_make(command, command.make, root)
    if command.module is not None:
        found = _module_file(root, command.runs_in, command.module)
        if found is None:
            return replace(command, problem=f"module {command.module!r} is not in the repository")
        return replace(command, script=found)
    if command.script_arg is None:
        return replace(command, problem="the command names no Python script")
    rel = posixpath.normpath(posixpath.join(command.runs_in, command.script_arg))
    if command.script_arg.startswith(("/", "~")) or not _inside(root, rel):
        return replace(command, problem=f"{command.script_arg!r} is outside the repository")
    if not (root / rel).is_file():
        return replace(command, problem=f"{rel!r} is not in the repository")
    return replace(command, script=rel)


_PLAIN = re.compile(r"^[\w.,:/=+@%-]*$")
_PARAMETER = re.compile(r'"\$@"|\$\{@\}|\$@|\$\*|\$\{(\d)(?:(:?-)([^}]*))?\}|\$(\d)')
_DIRNAME = re.compile(
    r'"?\$\(\s*dirname\s+"?\$(?:0|\{0\}|\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE)"?\s*\)"?'
    r'|`dirname\s+"?\$0"?`'
)


def _with_arguments(lines: list[str], script: str, args: list[str]) -> list[str]:
    """A followed script's lines with its positional parameters given (``$1``, ``${2:-x}``,
    ``"$@"``, ``$0``) and ``$(dirname "$0")`` its folder, as the shell would expand them
    for the caller's arguments; nothing is expanded when an argument or a default is not a
    plain word (the line then stays a shell line)."""
    if not all(_PLAIN.match(a) for a in [*args, script]):
        return lines
    folder = posixpath.dirname(script) or "."

    def expand(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole in {'"$@"', "${@}", "$@", "$*"}:
            return " ".join(args)
        number = int(match.group(1) or match.group(4))
        given = script if number == 0 else (args[number - 1] if number <= len(args) else None)
        if match.group(2) is not None and (given is None or (given == "" and ":" in whole)):
            default = match.group(3)
            return default if _PLAIN.match(default) else whole
        return given or ""

    return [_PARAMETER.sub(expand, _DIRNAME.sub(folder, line)) for line in lines]


_MAKE_VALUED = {"-C": "directory", "--directory": "directory", "-f": "file", "--file": "file"}
_MAKE_FLAGS = re.compile(r"^(?:-[sSkBiwe]+|-j\d*|--jobs(?:=\d+)?|--silent|--keep-going)$")


def _make_words(words: tuple[str, ...]) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """``make``'s arguments: its options (``directory``, ``file``), variables given, targets;
    an option it does not know is ``unknown``."""
    options: dict[str, str] = {}
    given: dict[str, str] = {}
    targets: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        name, eq, value = word.partition("=")
        if word in _MAKE_VALUED and index + 1 < len(words):
            options[_MAKE_VALUED[word]] = words[index + 1]
            index += 2
            continue
        if eq and name in {"--directory", "--file", "--makefile"}:
            options["directory" if name == "--directory" else "file"] = value
        elif eq and _ASSIGN.match(word):
            given[name] = value
        elif word.startswith("-") and not _MAKE_FLAGS.match(word):
            options["unknown"] = word
        elif not word.startswith("-"):
            targets.append(word)
        index += 1
    return options, given, targets


def _follow_make(command: Command, words: tuple[str, ...], root: Path) -> Command:
    """``make [target]`` read as the one Python command its recipe runs (each recipe line
    in a shell of its own, from the Makefile's folder), prerequisites' recipes included."""
    options, given, targets = _make_words(words)
    if "unknown" in options or len(targets) > 1:
        why = f"make {options.get('unknown') or ' '.join(targets)}: only make can run it"
        return replace(command, problem=why)
    folder = _cd(command.runs_in, options.get("directory", "."))
    if folder is None:
        return replace(command, problem="make -C names a folder outside the repository")
    read = recipe(root, folder, options.get("file"), targets[0] if targets else None, given)
    if isinstance(read, str):
        return replace(command, problem=read)
    makefile, lines = read
    inner = [found for line in lines if (found := _parse(line, _Reader(folder), {})[0]) is not None]
    if len(inner) != 1:
        return replace(command, problem=f"the make target runs {len(inner)} Python commands")
    done = resolve(inner[0], root)
    return replace(done, env={**command.env, **done.env}, via=makefile, text=command.text)


def _follow(command: Command, root: Path) -> Command:
    assert command.shell_script is not None
    rel = posixpath.normpath(posixpath.join(command.runs_in, command.shell_script))
    path = root / rel
    if not _inside(root, rel) or not path.is_file():
        return replace(command, problem=f"{rel!r} is not in the repository")
    if path.stat().st_size > _MAX_SCRIPT:
        return replace(command, problem=f"{rel!r} is too large to read")
    lines = path.read_bytes().decode("utf-8", "replace").splitlines()
    args = command.argv[2:] if command.argv[0] in {"bash", "sh"} else command.argv[1:]
    lines = _with_arguments(lines, command.shell_script, args)
    inner = [c for c in parse_lines(lines, workdir=command.runs_in) if c.shell_script is None]
    if not inner:
        return replace(command, problem=f"{rel!r} runs no Python command")
    if len(inner) > 1:
        return replace(command, problem=f"{rel!r} runs {len(inner)} Python commands")
    found = resolve(inner[0], root)
    env = {**command.env, **found.env}
    return replace(found, env=env, via=rel, text=command.text)


def locate(
    command: Command, root: Path, known: list[Command], files: list[str]
) -> tuple[Command, str]:
    """A hint's command resolved in the repository, and how its folder was found.

    A ``python x.py`` whose script is not in its working directory runs where a README runs
    the same command (after its ``cd``), else in the one folder of the repository that holds
    ``x.py``; several such folders leave the ``problem``.
    """
    done = resolve(command, root)
    if done.problem is None or command.script_arg is None or command.shell:
        return done, "as written"
    if command.workdir != "." or command.script_arg.startswith(("/", "..")):
        return done, "as written"
    for other in known:
        if other.script is not None and not other.shell and other.argv == command.argv:
            moved = replace(command, workdir=other.workdir, runs_in=other.workdir)
            again = resolve(replace(moved, env={**other.env, **command.env}), root)
            if again.problem is None:
                return again, f"the README runs it in {other.workdir}/"
    suffix = "/" + posixpath.normpath(command.script_arg)
    holders = sorted(f[: -len(suffix)] for f in files if f.endswith(suffix))
    if len(holders) == 1:
        moved = replace(command, workdir=holders[0], runs_in=holders[0])
        again = resolve(moved, root)
        if again.problem is None:
            return again, f"the only {command.script_arg} of the repository is in {holders[0]}/"
    if len(holders) > 1:
        where = ", ".join(h + "/" for h in holders[:5])
        return replace(
            done, problem=f"{command.script_arg!r} is in {len(holders)} folders ({where})"
        ), "as written"
    return done, "as written"


#: ``.add_argument("--name"`` or ``.add_option('-n', '--name'``, in a script of Python 2.
_ADDED_FLAG = re.compile(
    r"""\.add_(?:argument|option)\(\s*(?:(['"])-\w\1\s*,\s*)?(['"])(--[\w-]+)\2"""
)


def argparse_flags(text: str) -> frozenset[str]:
    """The long options the argparse (or optparse) parsers of the script ``text`` define,
    ``--help`` with them: what an abbreviation is read against. None when the script
    defines none or turns abbreviations off (``allow_abbrev=False``); a script that does not
    parse as Python 3 (Python 2) is read by a pattern of ``add_argument("--name"``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        found = {match.group(3) for match in _ADDED_FLAG.finditer(text[:1_000_000])}
        return frozenset(found | {"--help"}) if found else frozenset()
    flags: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute | ast.Name):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        if name == "ArgumentParser" and any(
            k.arg == "allow_abbrev" and not (isinstance(k.value, ast.Constant) and k.value.value)
            for k in node.keywords
        ):
            return frozenset()
        if name in {"add_argument", "add_option"}:
            flags.update(
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
                and arg.value.startswith("--")
            )
    return frozenset(flags | {"--help"}) if flags else frozenset()


def _abbreviates(word: str, flag: str, flags: Collection[str]) -> bool:
    """Whether ``word`` is argparse's abbreviation of ``flag`` among ``flags``."""
    return (
        len(word) > 2
        and word.startswith("--")
        and flag.startswith(word)
        and word != flag
        and flag in flags
        and word not in flags
        and not any(other != flag and other.startswith(word) for other in flags)
    )


def with_option(argv: list[str], flag: str, value: str, flags: Collection[str] = ()) -> list[str]:
    """``argv`` passing ``flag value`` once: an earlier ``flag``, ``flag=...`` or, among the
    parser's long options ``flags`` (:func:`argparse_flags`), an abbreviation of it is
    dropped with its value."""
    out: list[str] = []
    skip = False
    for index, word in enumerate(argv):
        if skip:
            skip = False
            continue
        name, equals, _ = word.partition("=")
        if name == flag or _abbreviates(name, flag, flags):
            skip = not equals and index + 1 < len(argv)
            continue
        out.append(word)
    return [*out, flag, value]
