"""Regular expressions with one meaning in every language, evaluated by RE2 (linear time).

*Author patterns* (extractor and landmark ``pattern``): the dialect and its grammar are spec
``manifest.md#patterns`` and ``#pattern-grammar``. A pattern Python's ``re`` cannot parse is
:class:`PatternError` ``"invalid"`` (R016); one outside the dialect ``"dialect"`` (X004).

*Schema patterns* (the JSON Schemas, the identifier rules) use the intersection of ECMA-262,
Rust's ``regex`` and Python's ``re``: explicit ASCII classes, ``^``/``$`` for the whole
string. :func:`schema_pattern` compiles them for RE2, whose ``$`` does not accept a final
newline (Python's would: ``"digits-logreg\n"`` matched ``^[a-z0-9-]+$``).
"""

from __future__ import annotations

import re
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any, NamedTuple, Protocol, TypeVar

import re2

from reprobridge_sdk.errors import ReproBridgeError

__all__ = [
    "PATTERNS",
    "Match",
    "PatternCache",
    "PatternCacheInfo",
    "PatternError",
    "Regex",
    "author_pattern",
    "check_pattern",
    "dialect_problem",
    "schema_pattern",
]


class Match(Protocol):
    """What a search returns (RE2's match object has ``re.Match``'s methods)."""

    def group(self, group: str | int = 0, /) -> Any: ...

    def start(self, group: str | int = 0, /) -> int: ...


class Regex(Protocol):
    """A compiled pattern (RE2's compiled object has ``re.Pattern``'s methods)."""

    @property
    def pattern(self) -> str: ...

    @property
    def groups(self) -> int: ...

    @property
    def groupindex(self) -> Mapping[str, int]: ...

    def search(self, text: str) -> Match | None: ...

    def finditer(self, text: str) -> Iterator[Match]: ...


class PatternError(ReproBridgeError):
    """A pattern cannot be used; ``reason`` is ``"invalid"`` or ``"dialect"``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _parser() -> Any:
    import re._parser as parser  # type: ignore[import-not-found]  # noqa: PLC0415 - on use

    return parser


_NOT_IN_DIALECT = {
    "GROUPREF": "a backreference",
    "GROUPREF_EXISTS": "a conditional group",
    "ASSERT": "a lookahead or lookbehind",
    "ASSERT_NOT": "a negative lookahead or lookbehind",
    "ATOMIC_GROUP": "an atomic group",
    "POSSESSIVE_REPEAT": "a possessive quantifier",
}
_BAD_FLAGS = (
    (re.VERBOSE, "the verbose flag (?x)"),
    (re.ASCII, "the ASCII flag (?a)"),
    (re.LOCALE, "the locale flag (?L)"),
)
# {,n} outside a character class, after an even number of backslashes.
_EMPTY_MIN = re.compile(r"(?<!\\)(?:\\\\)*\{,[0-9]*\}")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


#: The constructs of other regex languages that the dialect names (spec: manifest, "pattern
#: grammar"): a pattern that holds one is X004 ("dialect") whatever Python's ``re`` makes of
#: it, so the verdict depends on no Python version (``\z`` and ``a*+`` changed meaning in
#: 3.14 and 3.11). Matched on the pattern with the inside of classes blanked, after an even
#: number of backslashes.
_UNESCAPED = r"(?<!\\)(?:\\\\)*"
_FOREIGN = tuple(
    (re.compile(_UNESCAPED + regex), name)
    for regex, name in (
        (r"\\[0-9]", "a backreference or numeric escape"),
        (r"\(\?P=", "a backreference"),
        (r"\(\?\(", "a conditional group"),
        (r"\(\?<?[=!]", "a lookahead or lookbehind"),
        (r"\(\?>", "an atomic group"),
        (r"\(\?#", "a comment group"),
        (r"(?:[*+?]|\{[0-9]*,?[0-9]*\})\+", "a possessive quantifier"),
        (r"\\[ZzuUN]", r"\Z, \z, \u, \U or \N"),
        (r"\(\?[ims-]*x", "the verbose flag (?x)"),
        (r"\(\?(?=[a-zA-Z-]*[:)])[ims-]*[^ims:)-]", "a flag other than i, m and s"),
    )
)
_COUNTS = re.compile(_UNESCAPED + r"\{([0-9]*)(?:,([0-9]*))?\}")
#: A POSIX class (``[[:alpha:]]``, ``[^[:digit:]]``) or collating element: RE2 reads a class,
#: Python characters (and, after ``^``, without a warning).
_POSIX = re.compile(_UNESCAPED + r"\[\^?\[[:.=]")
#: The largest repetition count of the dialect (RE2's).
MAX_REPEAT = 1000


def _foreign(pattern: str) -> str | None:
    """The first construct of another regex language in ``pattern`` (:data:`_FOREIGN`, a
    count over :data:`MAX_REPEAT`), or None. Nested sets and set operations are found by
    the parse below (Python warns of them)."""
    if _POSIX.search(pattern):
        return "a POSIX class"
    outside = _outside_classes(pattern)
    for regex, name in _FOREIGN:
        if regex.search(outside):
            return name
    for match in _COUNTS.finditer(outside):
        if any(group and int(group) > MAX_REPEAT for group in match.groups()):
            return f"a repetition count over {MAX_REPEAT}"
    return None


def dialect_problem(pattern: str) -> tuple[str, str] | None:
    """``(reason, message)`` when ``pattern`` is not an author pattern, else None (checked once
    per process: see :data:`PATTERNS`)."""
    return PATTERNS.entry(pattern).problem()


#: The parse tree of a pattern that Python's ``re`` parser cannot parse.
_NO_TREE: Any = object()


class _Checked(NamedTuple):
    """What the dialect check of a pattern made: its problem (or None) and RE2 program (or
    None), the parse tree of Python's ``re`` parser (:data:`_NO_TREE` if it does not parse,
    None if the check did not get one) and whether it parsed."""

    problem: tuple[str, str] | None
    regex: Regex | None = None
    tree: Any = None
    parsed: bool = False


def _check(pattern: str) -> _Checked:
    """The dialect check of ``pattern``: its problem, or None and its RE2 program (the check
    compiles it, so the program is kept rather than made again), with the parse tree it read
    (kept for what a scan derives from the pattern, so the pattern is parsed once)."""
    foreign = _foreign(pattern)
    if foreign is not None:
        return _Checked(("dialect", f"{foreign} is not in the pattern dialect"))
    with warnings.catch_warnings():
        # Python warns of nested sets and set operations ("[[:alpha:]]", "[a--b]"), which
        # it reads as plain characters and RE2 as classes: outside the dialect.
        warnings.simplefilter("error", FutureWarning)
        try:
            parsed = _parser().parse(pattern)
        except FutureWarning as warning:
            problem = ("dialect", f"{warning} (a nested set or a set operation)")
            return _Checked(problem, parsed=True)
        except re.error as exc:
            problem = ("invalid", f"not a regular expression: {exc}")
            return _Checked(problem, None, _NO_TREE, True)
    for flag, name in _BAD_FLAGS:
        if parsed.state.flags & flag:
            problem = ("dialect", f"{name} is not in the pattern dialect")
            return _Checked(problem, None, parsed, True)
    found = _construct(parsed)
    if found:
        problem = ("dialect", f"{found} is not in the pattern dialect (RE2)")
        return _Checked(problem, None, parsed, True)
    if _EMPTY_MIN.search(_outside_classes(pattern)):
        problem = ("dialect", "{,n} means {0,n} to Python and literal text to RE2: write {0,n}")
        return _Checked(problem, None, parsed, True)
    try:
        compiled: Regex = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        return _Checked(("dialect", f"RE2 does not accept it: {detail}"), None, parsed, True)
    return _Checked(None, compiled, parsed, True)


def _construct(items: Any) -> str | None:
    """The first construct of a parsed pattern that is outside the dialect."""
    for op, arg in items:
        name = str(op)
        if name in _NOT_IN_DIALECT:
            return _NOT_IN_DIALECT[name]
        if name == "AT" and str(arg) == "AT_END_STRING":
            return r"\Z"
        children: list[Any] = []
        if name == "SUBPATTERN":
            if any(arg[index] & flag for index in (1, 2) for flag, _ in _BAD_FLAGS):
                return "a verbose, ASCII or locale flag group"
            children = [arg[-1]]
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            children = [arg[2]]
        elif name == "BRANCH":
            children = list(arg[1])
        for child in children:
            found = _construct(child)
            if found:
                return found
    return None


def _outside_classes(pattern: str) -> str:
    """``pattern`` with the inside of every character class blanked out."""
    out: list[str] = []
    index, inside = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(" " if inside else pattern[index : index + 2])
            index += 2
            continue
        if inside:
            if char == "]" and pattern[index - 1] not in "[^":
                inside = False
                out.append("]")
            else:
                out.append(" ")
        elif char == "[":
            inside = True
            out.append("[")
        else:
            out.append(char)
        index += 1
    return "".join(out)


def author_pattern(pattern: str, *, multiline: bool = False) -> Regex:
    """Compile an author pattern, once per process; :class:`PatternError` if it is not one.

    With ``multiline``, ``^`` and ``$`` also match at line breaks (for chunk searches).
    """
    return PATTERNS.entry(pattern).compiled(multiline=multiline)


def check_pattern(pattern: object, where: str, add: Callable[..., None]) -> Regex | None:
    """An author pattern at ``where`` compiled, or None after ``add`` reported it (R016 for
    one Python cannot parse, X004 for one outside the dialect); None for a non-string (the
    structural layer's)."""
    if not isinstance(pattern, str):
        return None
    try:
        return author_pattern(pattern)
    except PatternError as exc:
        if exc.reason == "invalid":
            add("R016", f"invalid regular expression: {exc.message}", where)
        else:
            hint = "no backreferences or lookaround; write [0-9] and {0,n} (spec: Patterns)"
            add("X004", exc.message, where, hint=hint)
        return None


_T = TypeVar("_T")
_UNSET: Any = object()


class PatternCacheInfo(NamedTuple):
    """The statistics of a :class:`PatternCache`."""

    hits: int
    misses: int
    checks: int
    compiles: int
    size: int
    capacity: int
    parses: int = 0


class _Entry:
    """What the process knows of one author pattern, each part made on first use."""

    __slots__ = ("_problem", "_regex", "_tree", "derived", "multiline", "owner", "pattern")

    def __init__(self, owner: PatternCache, pattern: str) -> None:
        self.owner = owner
        self.pattern = pattern
        self._problem: tuple[str, str] | None = _UNSET
        self._regex: Regex | None = None
        self._tree: Any = None
        self.multiline: Regex | None = None
        self.derived: dict[Any, Any] = {}

    def problem(self) -> tuple[str, str] | None:
        if self._problem is _UNSET:
            checked = _check(self.pattern)
            with self.owner.lock:
                self.owner.checks += 1
                self.owner.compiles += checked.regex is not None
                self.owner.parses += checked.parsed
            self._regex, self._tree = checked.regex, checked.tree
            self._problem = checked.problem
        return self._problem

    def tree(self) -> Any:
        """The pattern's parse tree (Python's ``re`` parser), or None if it does not parse:
        the dialect check's own, or, for a pattern the check refused without one, parsed now
        (once; the check has reported the pattern, so the parser's warnings are not shown)."""
        self.problem()
        if self._tree is None:
            with self.owner.lock:
                self.owner.parses += 1
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                try:
                    self._tree = _parser().parse(self.pattern)
                except re.error:
                    self._tree = _NO_TREE
        return None if self._tree is _NO_TREE else self._tree

    def compiled(self, *, multiline: bool) -> Regex:
        problem = self.problem()
        if problem is not None:
            raise PatternError(*problem)
        if not multiline:
            assert self._regex is not None  # set with a None problem
            return self._regex
        if self.multiline is None:
            self.multiline = re2.compile(f"(?m){self.pattern}", _OPTIONS)
            with self.owner.lock:
                self.owner.compiles += 1
        return self.multiline


class PatternCache:
    """One entry per author pattern, shared by everything in the process that reads one.

    Each pattern is parsed, dialect-checked and compiled once, and what a scan derives from
    it is computed once. A validation sizes the LRU to the artifact's distinct patterns
    (:meth:`fit`), so 5,000 launchers do not push out their own patterns between layers.
    Thread-safe: a lost race makes an entry twice, never a wrong one.
    """

    def __init__(self, capacity: int = 512) -> None:
        self.capacity = capacity
        self.lock = threading.Lock()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self.hits = self.misses = self.checks = self.compiles = self.parses = 0

    def entry(self, pattern: str) -> _Entry:
        with self.lock:
            found = self._entries.get(pattern)
            if found is not None:
                self._entries.move_to_end(pattern)
                self.hits += 1
                return found
            self.misses += 1
            made = self._entries[pattern] = _Entry(self, pattern)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
            return made

    def derive(self, pattern: str, key: Any, make: Callable[[Any], _T]) -> _T:
        """``make(tree)`` of the pattern's parse tree (None if it does not parse), computed
        once per pattern and ``key`` (a scan's facts of a pattern)."""
        entry = self.entry(pattern)
        derived = entry.derived
        if key not in derived:
            derived[key] = make(entry.tree())
        value: _T = derived[key]
        return value

    def fit(self, patterns: int) -> None:
        """Make room for ``patterns`` distinct patterns (an artifact's), never less than now."""
        with self.lock:
            self.capacity = max(self.capacity, patterns + 64)

    def info(self) -> PatternCacheInfo:
        with self.lock:
            return PatternCacheInfo(
                self.hits,
                self.misses,
                self.checks,
                self.compiles,
                len(self._entries),
                self.capacity,
                self.parses,
            )

    def clear(self) -> None:
        """Forget every entry and the statistics (the capacity stays)."""
        with self.lock:
            self._entries.clear()
            self.hits = self.misses = self.checks = self.compiles = self.parses = 0


#: The process's pattern cache.
PATTERNS = PatternCache()


@lru_cache(maxsize=256)
def schema_pattern(pattern: str) -> Regex:
    """Compile a schema ``pattern`` with the meaning ECMA-262 and Rust give it.

    ``re.error`` if RE2 does not accept it.
    """
    try:
        compiled: Regex = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        raise re.error(str(exc)) from None
    return compiled
