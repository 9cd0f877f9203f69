"""Which print statement wrote a bare number: the name of a log line that has none.

A script that ends ``print rmse`` and ``print test_ll`` leaves two lines that are only numbers;
the expression each print statement prints (``rmse``, ``np.mean(errors)``, the names of a
format string such as ``"%.3f" % rmse``) is the label the line lacks.

**The final outputs** (:func:`final_outputs`): the statements that run last, read backwards
from the script's end (the body of ``if __name__ == "__main__":`` and of a function of the
repository called there, such as ``main()``, included) while each is a print statement or
*quiet*: a definition, or a simple statement whose calls all go to third-party modules or to
harmless builtins (``np.mean``, ``len``, a string's ``format``). Any other statement (a loop,
a condition, a call of the repository's code or of an object's method, a write to
``sys.stdout``, ``print x,`` without its newline, a print to a file) ends the reading: what ran
before it is unknown. Tokens, not a syntax tree, so that Python 2 reads as well as Python 3.

**The attribution** (:func:`printed_lines`): these outputs are the last lines of the log, one
line each (blank lines and the two lines of a Python warning left out). They are matched from
the first bare print on, position by position: a bare print against a line that is only a
number, a print with text against one that is not. Any disagreement (an array printed where a
number was expected, a line some other code wrote) and no line is named: a wrong name is worse
than none.
"""

from __future__ import annotations

import ast
import io
import keyword
import math
import re
import sys
import tokenize
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from tokenize import TokenInfo

from reprobridge_sdk.agent.imports import closure

__all__ = ["BarePrint", "final_outputs", "launcher_outputs", "printed_lines"]

#: A print whose output is a line of text (not a bare number): one non-blank log line.
TEXT = "text"
_BLANK = "blank"
_STOP = "stop"

#: The deepest chain of blocks followed (a guard, ``main()`` calling ``run()`` ...).
_DEPTH = 4
#: Builtins that print nothing.
_QUIET_BUILTINS = frozenset(
    [
        "abs",
        "all",
        "any",
        "bool",
        "dict",
        "divmod",
        "enumerate",
        "float",
        "format",
        "int",
        "isinstance",
        "len",
        "list",
        "map",
        "max",
        "min",
        "open",
        "pow",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "sorted",
        "str",
        "sum",
        "tuple",
        "zip",
    ]
)
#: Names in a printed expression that say nothing of what it is.
_NOT_NAMES = _QUIET_BUILTINS | {"print", "self", "item", "numpy", "cpu", "detach", "tolist"}
#: Standard modules whose calls print nothing a log line would be (``os.system`` and
#: ``sys.stdout`` are :data:`_NOISY`).
_QUIET_STANDARD = frozenset(sys.stdlib_module_names) - {
    "builtins",
    "code",
    "importlib",
    "logging",
    "pdb",
    "pprint",
    "runpy",
    "subprocess",
}
_NOISY = frozenset({("sys", "stdout"), ("sys", "stderr"), ("os", "system"), ("os", "popen")})
_COMPOUND = frozenset(
    ["if", "elif", "else", "for", "while", "try", "except", "finally", "with", "async"]
)
_PLACEHOLDER = re.compile(r"%[-+ #0]*(?:\d+|\*)?(?:\.\d+)?[diouxXeEfFgGrsa]|\{[^{}]*\}")
_BARE_LINE = re.compile(r"\s*[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?\s*")
_WARNING = re.compile(r"^\S.*:\d+: [A-Za-z_]\w*Warning: ")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class BarePrint:
    """A print statement whose output is one value alone: where it is, what it prints, and
    the words of its names (``test_ll`` gives ``test``, ``ll``)."""

    file: str
    line: int
    expression: str
    words: frozenset[str]


Output = BarePrint | str


@dataclass
class _Statement:
    tokens: list[TokenInfo]
    body: list[_Statement] = field(default_factory=list)

    @property
    def head(self) -> str:
        return self.tokens[0].string


@dataclass(frozen=True)
class Source:
    """A file of the repository as the walk reads it: its top-level statements, the names
    its imports bind (a third-party module, or a file of the repository and the name
    imported from it: ``None`` for the module itself)."""

    file: str
    statements: list[_Statement]
    third_party: frozenset[str]
    bound: Mapping[str, tuple[str, str | None]]


def statements(text: str) -> list[_Statement] | None:
    """The logical lines of ``text`` as a tree of blocks, or None when it does not tokenize."""
    top: list[_Statement] = []
    stack = [top]
    current: list[TokenInfo] = []
    skip = {tokenize.NL, tokenize.COMMENT, tokenize.ENCODING, tokenize.ENDMARKER}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in skip:
                continue
            if token.type == tokenize.INDENT:
                if not stack[-1]:
                    return None
                stack.append(stack[-1][-1].body)
            elif token.type == tokenize.DEDENT:
                if len(stack) > 1:
                    stack.pop()
            elif token.type == tokenize.NEWLINE:
                if current:
                    stack[-1].append(_Statement(current))
                current = []
            else:
                current.append(token)
    except (tokenize.TokenError, SyntaxError):
        return None
    if current:
        stack[-1].append(_Statement(current))
    return top


def _parts(words: list[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for word in words:
        if word == ",":
            parts.append([])
        elif word not in ("(", ")"):
            parts[-1].append(word)
    return [part for part in parts if part and part[0] != "*"]


def _imports(tokens: list[TokenInfo]) -> list[tuple[str, str]]:
    """The names an import statement binds, each with the top-level module it comes from
    (none for a relative import: the repository's own)."""
    words = [t.string for t in tokens]
    if words[0] == "from":
        if "import" not in words or len(words) < 2 or words[1].startswith("."):
            return []
        return [(part[-1], words[1]) for part in _parts(words[words.index("import") + 1 :])]
    return [(part[-1] if "as" in part else part[0], part[0]) for part in _parts(words[1:])]


def source(
    file: str, text: str, third_party: frozenset[str], bound: Mapping[str, tuple[str, str | None]]
) -> Source | None:
    """``text`` read for the walk (None: it does not tokenize); ``third_party`` are the
    top-level modules of installed distributions, ``bound`` the repository's names."""
    tree = statements(text[:1_000_000])
    if tree is None:
        return None
    aliases = {
        name
        for statement in tree
        if statement.head in ("import", "from")
        for name, top in _imports(statement.tokens)
        if top in third_party and name not in bound
    }
    return Source(file, tree, frozenset(aliases), bound)


def _split_arguments(tokens: list[TokenInfo]) -> list[list[TokenInfo]]:
    parts: list[list[TokenInfo]] = [[]]
    depth = 0
    for token in tokens:
        if token.string in "([{" and token.type == tokenize.OP:
            depth += 1
        elif token.string in ")]}" and token.type == tokenize.OP:
            depth -= 1
        if depth == 0 and token.string == "," and token.type == tokenize.OP:
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def _literal(token: TokenInfo) -> str | None:
    """The text of a string token, f-strings' fields as written; None when unreadable."""
    text = token.string
    prefix = re.match(r"[A-Za-z]*", text)
    letters = prefix.group(0).lower() if prefix else ""
    if "f" in letters:
        text = text[: len(letters)].replace("f", "").replace("F", "") + text[len(letters) :]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _words(names: Sequence[str]) -> frozenset[str]:
    out: set[str] = set()
    for name in names:
        for piece in re.split(r"[_\W]+", name):
            out.update(word.lower() for word in _CAMEL.findall(piece) if not word.isdigit())
    return frozenset(out)


def _print_output(statement: _Statement, file: str, aliases: frozenset[str]) -> Output:
    """What a print statement writes: a :class:`BarePrint`, a line of text, a blank line,
    or :data:`_STOP` when its output's shape is unknown."""
    tokens = statement.tokens[1:]
    wrapped = bool(tokens) and tokens[0].string == "(" and _closes_at_end(tokens)
    arguments = _split_arguments(tokens[1:-1] if wrapped else tokens)
    if not wrapped and tokens and tokens[-1].string == ",":
        return _STOP  # Python 2 ``print x,``: the next print goes on the same line
    if tokens and tokens[0].string in (">>", ">"):
        return _STOP  # Python 2 ``print >>f, x``
    keywords = [a for a in arguments if len(a) >= 2 and a[1].string == "=" and wrapped]
    if any(a[0].string not in ("flush", "sep") for a in keywords):
        return _STOP  # end= or file=: not one line of the log
    values = [a for a in arguments if a and a not in keywords]
    if not values:
        return _BLANK
    if len(values) > 1:
        return TEXT
    [value] = values
    names: list[str] = []
    depth = 0
    text = False
    for token in value:
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        if token.type == tokenize.STRING:
            literal = _literal(token)
            if literal is None or "\n" in literal:
                return _STOP
            if depth == 0:
                # text around the value, or two values ("%.3f %.3f"): no bare number
                text = text or bool(_PLACEHOLDER.sub("", literal).strip())
                text = text or len(_PLACEHOLDER.findall(literal)) > 1
                fields = [re.split("[:!]", f[1:-1])[0] for f in re.findall(r"\{[^{}]*\}", literal)]
                names.extend(re.findall(r"[A-Za-z_]\w*", " ".join(fields)))
            else:
                names.append(literal)  # a key: ``results["test_rmse"]``
        elif token.type == tokenize.NAME and not keyword.iskeyword(token.string):
            names.append(token.string)
    if text or (not names and all(t.type == tokenize.STRING for t in value)):
        return TEXT
    kept = [n for n in names if n not in aliases and n not in _NOT_NAMES]
    first, last = value[0], value[-1]
    expression = (
        first.line[first.start[1] : last.end[1]]
        if first.start[0] == last.end[0]
        else " ".join(t.string for t in value)
    )
    return BarePrint(file, statement.tokens[0].start[0], expression[:200], _words(kept))


def _closes_at_end(tokens: list[TokenInfo]) -> bool:
    """Whether the parenthesis opening ``tokens`` is the one that closes it."""
    depth = 0
    for index, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
            if depth == 0:
                return index == len(tokens) - 1
    return False


def _calls(tokens: list[TokenInfo]) -> list[list[str]] | None:
    """The dotted names called in ``tokens`` (``np.mean`` as ``["np", "mean"]``; a string's
    method as ``[""]``), or None when a call's target is no name (``f()()``, ``x[0]()``)."""
    found = []
    for index, token in enumerate(tokens):
        if token.string != "(" or token.type != tokenize.OP or index == 0:
            continue
        before = tokens[index - 1]
        if before.type == tokenize.NAME and keyword.iskeyword(before.string):
            continue
        if before.type == tokenize.OP:
            if before.string in (")", "]", "}"):
                return None
            continue  # a parenthesised expression
        if before.type != tokenize.NAME:
            continue
        chain = [before.string]
        at = index - 2
        while at >= 1 and tokens[at].string == "." and tokens[at - 1].type == tokenize.NAME:
            chain.insert(0, tokens[at - 1].string)
            at -= 2
        if at >= 0 and tokens[at].string == ".":
            if at < 1 or tokens[at - 1].type != tokenize.STRING:
                return None  # a method of a call's result or of a subscript
            chain = [""]  # a string's method
        found.append(chain)
    return found


def _unreadable(statement: _Statement) -> bool:
    """Whether a token of ``statement`` is no Python (an unterminated string, a backtick)."""
    return any(t.type == tokenize.ERRORTOKEN and t.string.strip() for t in statement.tokens)


def _main_guard(statement: _Statement) -> bool:
    words = [t.string for t in statement.tokens]
    return (
        statement.head == "if"
        and "__name__" in words
        and any("__main__" in w for w in words)
        and words[-1] == ":"
    )


class _Walk:
    """The backward reading of :func:`final_outputs`."""

    def __init__(self, sources: Mapping[str, Source]) -> None:
        self.sources = sources

    def function(self, file: str, name: str) -> tuple[Source, list[_Statement]] | None:
        found = self.sources.get(file)
        if found is None:
            return None
        for statement in found.statements:
            words = [t.string for t in statement.tokens]
            if words[:2] == ["def", name] and statement.body:
                return found, statement.body
        return None

    def target(
        self, where: Source, chain: list[str]
    ) -> tuple[Source, list[_Statement]] | bool | None:
        """What a call runs: True when quiet, a function's body to read, None when unknown."""
        root = chain[0]
        if tuple(chain[:2]) in _NOISY or (root == "os" and chain[-1].startswith(("exec", "spawn"))):
            return None
        if root == "" or root in where.third_party:
            return True
        if len(chain) == 1 and root in _QUIET_BUILTINS:
            return True
        if len(chain) == 1:
            own = self.function(where.file, root)
            if own is not None:
                return own
        bound = where.bound.get(root)
        if bound is not None:
            file, imported = bound
            name = imported if imported is not None else (chain[1] if len(chain) == 2 else None)
            if name is not None and len(chain) == (1 if imported is not None else 2):
                return self.function(file, name)
        return None

    def read(self, where: Source, body: list[_Statement], depth: int) -> tuple[list[Output], bool]:
        """The outputs at the end of ``body`` in order, and whether every statement of it
        was read (False: the reading stopped at one whose output is unknown)."""
        found: list[Output] = []
        for statement in reversed(body):
            head = statement.head
            if head in ("def", "class", "@", "import", "from", "pass", "global"):
                if head in ("import", "from") and not all(
                    name in where.third_party for name, _top in _imports(statement.tokens)
                ):
                    return found, False  # importing the repository's code runs it
                continue
            if _main_guard(statement):
                if depth >= _DEPTH:
                    return found, False
                inner, whole = self.read(where, statement.body, depth + 1)
                found[:0] = inner
                if not whole:
                    return found, False
                continue
            if head in _COMPOUND or statement.body or _unreadable(statement):
                return found, False
            if head == "print":
                output = _print_output(statement, where.file, where.third_party)
                if output == _STOP:
                    return found, False
                calls = _calls(statement.tokens[1:])
                if calls is None or any(self.target(where, c) is not True for c in calls):
                    return found, False
                if output != _BLANK:
                    found.insert(0, output)
                continue
            calls = _calls(statement.tokens)
            if calls is None:
                return found, False
            targets = [self.target(where, chain) for chain in calls]
            bodies = [t for t in targets if isinstance(t, tuple)]
            if any(t is None or t is False for t in targets) or len(bodies) > 1:
                return found, False
            if bodies:
                if depth >= _DEPTH:
                    return found, False
                inner_source, inner_body = bodies[0]
                inner, whole = self.read(inner_source, inner_body, depth + 1)
                found[:0] = inner
                if not whole:
                    return found, False
        return found, True


def final_outputs(script: str, sources: Mapping[str, Source]) -> list[Output]:
    """The outputs the run of ``script`` (a key of ``sources``) ends with, in order, from
    its first bare print on (empty: none is known)."""
    where = sources.get(script)
    if where is None:
        return []
    found, _whole = _Walk(sources).read(where, where.statements, 0)
    for index, output in enumerate(found):
        if isinstance(output, BarePrint):
            return found[index:]
    return []


def printed_lines(outputs: Sequence[Output], log: str) -> dict[int, BarePrint]:
    """The log's bare-number lines (1-based) that ``outputs`` wrote, by the print that wrote
    each; empty unless the log's last lines agree with ``outputs`` position by position."""
    if not outputs:
        return {}
    kept: list[tuple[int, str]] = []
    lines = log.splitlines()
    warning = False
    for number, line in enumerate(lines, start=1):
        if _WARNING.match(line):
            warning = True
            continue
        if warning and line[:1].isspace():
            warning = False
            continue  # the source line a warning shows
        warning = False
        if line.strip():
            kept.append((number, line))
    if len(kept) < len(outputs):
        return {}
    named: dict[int, BarePrint] = {}
    for (number, line), output in zip(kept[-len(outputs) :], outputs, strict=True):
        bare = _BARE_LINE.fullmatch(line) is not None and math.isfinite(float(line))
        if isinstance(output, BarePrint) != bare:
            return {}
        if isinstance(output, BarePrint):
            named[number] = output
    return named


def launcher_outputs(
    code: Path, script: str, *, workdir: str = ".", module: bool = False
) -> list[Output]:
    """:func:`final_outputs` of ``script`` (a repository path under ``code``), reading the
    repository files it imports (:func:`~reprobridge_sdk.agent.imports.closure`)."""
    if not script.endswith(".py"):
        return []
    reached = closure(code, script, workdir=workdir, module=module)
    quiet = frozenset(reached.third_party) | _QUIET_STANDARD
    sources = {}
    for rel in reached.files:
        try:
            text = (code / rel).read_text("utf-8", "replace")
        except OSError:
            continue
        read = source(rel, text, quiet, reached.bound.get(rel, {}))
        if read is not None:
            sources[rel] = read
    return final_outputs(script, sources)
