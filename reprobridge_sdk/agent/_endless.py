"""Whether a script never ends on its own: an endless loop that its run reaches, read from
the ``ast``.

Rules. A ``while True:`` or ``while 1:`` loop is reached when the script's top-level code
holds it (under ``if __name__ == "__main__":`` too), or a function of the script that this
code calls by name does, followed through the calls of the script's own top-level
functions. Such a loop is endless when nothing inside it can leave it: no ``break`` of that
loop (a ``break`` of a loop nested in it leaves the inner one only), no ``return``, no
``raise`` or ``assert``, no ``yield`` or ``await`` (a consumer may stop it), and no call of
``sys.exit``, ``exit``, ``quit``, ``os._exit`` or ``next`` (its ``StopIteration``), in its
body or in a function of the script that its body calls. A condition in front of a way out
does not matter: the way out is there. What a nested function, lambda or class defines is
not run by the loop and does not count; a function that nothing calls is not followed. A
script that does not parse has no endless loop.

This is what the code shows, not a proof: a function of another module that the loop calls
is not read, so the caller adds what it observed (a run stopped at its budget).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["EndlessLoop", "endless_loop"]

_EXIT_CALLS = frozenset({"exit", "quit", "sys.exit", "os._exit", "next"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class EndlessLoop:
    """An endless loop: its line and its header as written (``while True:``)."""

    line: int
    header: str


def endless_loop(text: str) -> EndlessLoop | None:
    """The first endless loop the script's run reaches (see the module's rules), or None."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    followed: set[str] = set()
    bodies: list[list[ast.stmt]] = [tree.body]
    while bodies:
        for node in _reached(bodies.pop(0)):
            if (
                isinstance(node, ast.While)
                and _always(node.test)
                and not _leaves(node.body, functions, set(), loop=True)
            ):
                return EndlessLoop(node.lineno, f"while {ast.unparse(node.test)}:")
            name = _called(node)
            if name in functions and name not in followed:
                followed.add(name)
                bodies.append(functions[name].body)
    return None


def _always(test: ast.expr) -> bool:
    """``True`` or ``1``, as written."""
    return isinstance(test, ast.Constant) and type(test.value) in {bool, int} and test.value == 1


def _reached(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``body`` that running it runs: not what a nested scope defines."""
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _called(node: ast.AST) -> str | None:
    """The dotted name a call calls (``sys.exit``, ``main``), or None."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def _leaves(
    body: list[ast.stmt], functions: dict[str, _FunctionDef], followed: set[str], *, loop: bool
) -> bool:
    """Whether running ``body`` can leave the loop around it: ``loop`` when ``body`` is that
    loop's own (a ``break`` or a ``return`` there leaves it), else a function it calls."""
    # each node with (whether a break there is the loop's, whether a return leaves it)
    stack: list[tuple[ast.AST, bool, bool]] = [(node, loop, loop) for node in body]
    while stack:
        node, breaks, returns = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.Raise | ast.Assert | ast.Yield | ast.YieldFrom | ast.Await):
            return True
        if (breaks and isinstance(node, ast.Break)) or (returns and isinstance(node, ast.Return)):
            return True
        name = _called(node)
        if name in _EXIT_CALLS:
            return True
        if name in functions and name not in followed:
            followed.add(name)
            if _leaves(functions[name].body, functions, followed, loop=False):
                return True
        # a break in a nested loop's body leaves that loop alone (one in its else does not)
        inner = {id(child) for child in node.body} if isinstance(node, _LOOPS) else set()
        stack += [
            (child, breaks and id(child) not in inner, returns)
            for child in ast.iter_child_nodes(node)
        ]
    return False
