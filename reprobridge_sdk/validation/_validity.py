"""Validity-only predicates generated from a compiled schema: the evaluator's fast path.

Rules, before the code:

* The meaning of every keyword is the closures' (:mod:`._evaluator`, :mod:`._keywords`); this
  module only specialises their validity mode (``check(instance, "", None)``) into plain
  Python functions of one argument, so that a valid document is checked without a call per
  keyword. A predicate returns exactly what the closure of the same node returns with
  ``out=None``; a property test holds the two equal on random documents of every schema
  version. Errors are never produced here: a node found invalid is walked again by the
  closures, which build the errors.
* Each ``$defs`` entry becomes one function, and so does each node with ``properties``,
  ``patternProperties``, ``additionalProperties`` or ``items`` (they need statements). The
  keywords of a single value (``type``, ``enum`` and ``const`` of strings, ``pattern``, the
  length, number and item-count bounds, ``required``, ``anyOf``) become one inline
  expression. An object's declared properties are read with one dict lookup each; its other
  keys are looked at only when the declared names do not cover them (a set operation), and
  then each key is routed to the matching ``patternProperties`` and else to
  ``additionalProperties``. A declared property that a pattern also matches gets the
  pattern's check too, as the closures give it.
* What is not specialised calls the closure of that keyword in validity mode: ``oneOf`` (its
  closure skips the branches a tag rules out), ``enum`` and ``const`` with a value that is not
  a string.
* The source is generated from the schema alone, never from the data it validates. It names
  only generated identifiers (``_d3``, ``_k12``); every value taken from the schema (a key, a
  bound, a set of strings, a pattern's search) enters the namespace as a constant and never
  the source text, so no schema content is ever parsed as code.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reprobridge_sdk.validation._keywords import _cached_search, _const_check, _enum_check

if TYPE_CHECKING:
    from reprobridge_sdk.validation._evaluator import CompiledSchema

__all__ = ["Predicate", "Specialiser"]

#: A validity-only check of one value.
Predicate = Callable[[Any], bool]

_NUMBER = "(isinstance({v}, (int, float)) and not isinstance({v}, bool))"
_TYPE_TESTS = {
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "string": "isinstance({v}, str)",
    "boolean": "isinstance({v}, bool)",
    "null": "{v} is None",
    "number": _NUMBER,
    # An integer is an int (never a bool) or a float with no fractional part.
    "integer": "(isinstance({v}, int) and not isinstance({v}, bool)"
    " or isinstance({v}, float) and {v}.is_integer())",
}
#: The keywords that need statements, so a node that has one becomes a function.
_STATEMENTS = ("properties", "patternProperties", "additionalProperties", "items")
_BOUNDS = (  # keyword, the failing comparison of the closure (negated below)
    ("minimum", "<"),
    ("maximum", ">"),
    ("exclusiveMinimum", "<="),
    ("exclusiveMaximum", ">="),
)


class _Source:
    """Accumulates the generated functions and the namespace of their constants."""

    def __init__(self, compiled: CompiledSchema, defs: dict[str, Any]) -> None:
        self.compiled = compiled
        self.namespace: dict[str, Any] = {"_M": object()}  # _M: a key's absence
        self.lines: list[str] = []
        self.count = 0
        self.defs = {name: f"_d{index}" for index, name in enumerate(defs)}

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, value: Any) -> str:
        name = self.name("_k")
        self.namespace[name] = value
        return name

    # nodes ------------------------------------------------------------------------------

    def function(self, schema: Any, where: str, name: str | None = None) -> str:
        """Emit ``def name(x)`` for ``schema``; return its name."""
        name = name or self.name("_f")
        body = self.statements(schema, where)
        self.lines.append(f"def {name}(x):")
        self.lines.extend(f"    {line}" for line in body)
        self.lines.append("    return True")
        return name

    def condition(self, schema: Any, var: str, where: str) -> str:
        """An expression that is true when ``var`` is valid against ``schema``."""
        if schema is True or schema == {}:
            return "True"
        if schema is False:
            return "False"
        if any(keyword in schema for keyword in _STATEMENTS):
            return f"{self.function(schema, where)}({var})"
        parts = self.conditions(schema, var, where)
        return "(" + " and ".join(parts) + ")" if parts else "True"

    def conditions(self, schema: dict[str, Any], var: str, where: str) -> list[str]:
        """The inline conditions of the keywords that need no statement, the type first."""
        kind = schema.get("type")
        known = kind if isinstance(kind, str) else None
        parts: list[str] = []
        if kind is not None:
            kinds = [kind] if isinstance(kind, str) else list(kind)
            tests = [_TYPE_TESTS[k].format(v=var) for k in kinds]
            parts.append(tests[0] if len(tests) == 1 else "(" + " or ".join(tests) + ")")
        if "$ref" in schema:
            parts.append(f"{self.defs[schema['$ref'][len('#/$defs/') :]]}({var})")
        string = known == "string"
        number = known in ("number", "integer")
        if "enum" in schema:
            values = tuple(schema["enum"])
            if all(isinstance(value, str) for value in values):
                test = f"{var} in {self.const(frozenset(values))}"
                parts.append(test if string else f"(isinstance({var}, str) and {test})")
            else:
                parts.append(f'{self.const(_enum_check(values))}({var}, "", None)')
        if "const" in schema:
            value = schema["const"]
            if isinstance(value, str):
                parts.append(f"{self.const(value)} == {var}")
            else:
                parts.append(f'{self.const(_const_check(value))}({var}, "", None)')
        text: list[str] = []
        if "pattern" in schema:
            text.append(f"{self.const(_cached_search(schema['pattern']))}({var})")
        if schema.get("minLength") is not None:
            text.append(f"not len({var}) < {self.const(schema['minLength'])}")
        if schema.get("maxLength") is not None:
            text.append(f"not len({var}) > {self.const(schema['maxLength'])}")
        parts.extend(_guarded(text, f"isinstance({var}, str)", skip=string))
        bounds = [
            f"not {var} {relation} {self.const(schema[keyword])}"
            for keyword, relation in _BOUNDS
            if keyword in schema
        ]
        parts.extend(_guarded(bounds, _NUMBER.format(v=var), skip=number))
        counts: list[str] = []
        if schema.get("minItems") is not None:
            counts.append(f"not len({var}) < {self.const(schema['minItems'])}")
        if schema.get("maxItems") is not None:
            counts.append(f"not len({var}) > {self.const(schema['maxItems'])}")
        parts.extend(_guarded(counts, f"isinstance({var}, list)", skip=known == "array"))
        if schema.get("required"):
            tests = [f"{self.const(name)} in {var}" for name in schema["required"]]
            parts.extend(_guarded(tests, f"isinstance({var}, dict)", skip=known == "object"))
        if "anyOf" in schema:
            branches = [
                self.condition(branch, var, f"{where}/anyOf/{index}")
                for index, branch in enumerate(schema["anyOf"])
            ]
            parts.append("(" + " or ".join(branches) + ")")
        if "oneOf" in schema:
            check = self.compiled._branches(schema, "oneOf", where)
            parts.append(f'{self.const(check)}({var}, "", None)')
        return parts

    def statements(self, schema: Any, where: str) -> list[str]:
        """The body of a function of ``x`` that returns False when ``x`` is invalid."""
        if schema is True or schema == {}:
            return []
        if schema is False:
            return ["return False"]
        lines = [f"if not {part}: return False" for part in self.conditions(schema, "x", where)]
        known = schema.get("type")
        if "items" in schema:
            item = self.condition(schema["items"], "i", f"{where}/items")
            if item != "True":
                loop = ["for i in x:", f"    if not {item}: return False"]
                lines.extend(_block(loop, "isinstance(x, list)", skip=known == "array"))
        if any(k in schema for k in ("properties", "patternProperties", "additionalProperties")):
            body = self.object_body(schema, where)
            lines.extend(_block(body, "isinstance(x, dict)", skip=known == "object"))
        return lines

    def object_body(self, schema: dict[str, Any], where: str) -> list[str]:
        properties: dict[str, Any] = schema.get("properties", {})
        patterns = [
            (source, _cached_search(source), sub)
            for source, sub in schema.get("patternProperties", {}).items()
        ]
        extra = schema.get("additionalProperties", True)
        lines: list[str] = []
        for key, sub in properties.items():
            tests = [self.condition(sub, "v", f"{where}/properties/{key}")]
            tests += [
                self.condition(psub, "v", f"{where}/patternProperties/{source}")
                for source, search, psub in patterns
                if search(key)
            ]
            tests = [test for test in tests if test != "True"]
            if tests:
                lines.append(f"v = x.get({self.const(key)}, _M)")
                lines.append(f"if v is not _M and not ({' and '.join(tests)}): return False")
        routed = [
            (self.const(search), self.condition(sub, "v", f"{where}/patternProperties/{source}"))
            for source, search, sub in patterns
        ]
        other = self.condition(extra, "v", f"{where}/additionalProperties")
        if other == "True" and all(test == "True" for _, test in routed):
            return lines  # no key outside the declared ones can fail
        declared = self.const(frozenset(properties))
        lines.append(f"if not {declared}.issuperset(x):")
        if other == "False" and all(test == "True" for _, test in routed):
            matches = " or ".join(f"{search}(k)" for search, _ in routed) or "False"
            lines.append("    for k in x:")
            lines.append(f"        if k not in {declared} and not ({matches}): return False")
            return lines
        lines.append("    for k, v in x.items():")
        lines.append(f"        if k in {declared}: continue")
        lines.append("        m = False")
        for search, test in routed:
            lines.append(f"        if {search}(k):")
            lines.append("            m = True")
            if test != "True":
                lines.append(f"            if not {test}: return False")
        if other != "True":
            lines.append(f"        if not m and not {other}: return False")
        return lines


def _guarded(tests: list[str], guard: str, *, skip: bool) -> list[str]:
    """``tests`` as one condition that holds for a value of another type than the guard's."""
    if not tests:
        return []
    joined = " and ".join(tests)
    return [f"({joined})" if skip else f"(not {guard} or ({joined}))"]


def _block(body: list[str], guard: str, *, skip: bool) -> list[str]:
    if not body:
        return []
    if skip:
        return body
    return [f"if {guard}:", *(f"    {line}" for line in body)]


class Specialiser:
    """The predicate of each ``$defs`` entry, generated once the entry is asked often enough.

    Until then an entry's predicate asks the entry's closure (``closures[ref + "!"]``) in
    validity mode and counts; at the ``after``-th call the entry's source is generated,
    compiled and put in its place, where generated code and :meth:`predicate`'s callers
    find it from then on. Generating costs about as much as checking a few dozen values
    with the closures, so a small document never pays it and a large one pays it once per
    entry it uses, not once per schema.
    """

    def __init__(
        self,
        compiled: CompiledSchema,
        defs: dict[str, Any],
        closures: dict[str, Any],
        after: int,
    ) -> None:
        self.source = _Source(compiled, defs)
        self.defs = defs
        self.after = max(1, after)
        self.closures = closures
        self.namespace = self.source.namespace
        self._lock = threading.Lock()
        self._generated: set[str] = set()
        for name in defs:
            self.namespace[self.source.defs[name]] = self._counted(name)

    def ident(self, ref: str) -> str:
        """The namespace name of the predicate of ``#/$defs/<name>``."""
        return self.source.defs[ref[len("#/$defs/") :]]

    def _counted(self, name: str) -> Predicate:
        key = f"#/$defs/{name}!"
        closures = self.closures
        calls = 0

        def counted(instance: Any) -> bool:
            nonlocal calls
            calls += 1
            if calls < self.after:
                return bool(closures[key](instance, "", None))
            return self.generate(name)(instance)

        return counted

    def generate(self, name: str) -> Predicate:
        """Generate, compile and install the predicate of ``name``; return it.

        Once per entry, under a lock: threads that validate with one compiled schema at the
        same time neither interleave their generated lines nor generate an entry twice.
        """
        ident = self.source.defs[name]
        with self._lock:
            if ident not in self._generated:
                self._emit(name, ident)
            predicate: Predicate = self.namespace[ident]
            return predicate

    def _emit(self, name: str, ident: str) -> None:
        start = len(self.source.lines)
        self.source.function(self.defs[name], f"#/$defs/{name}", ident)
        text = "\n".join(self.source.lines[start:]) + "\n"
        code = compile(text, f"<schema validity {ident}>", "exec")
        exec(code, self.namespace)  # noqa: S102 - generated names only; values are constants
        self._generated.add(ident)
