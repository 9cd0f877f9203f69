"""Whether a script never ends on its own: an endless loop that its run reaches, read from
the ``ast``.

Rules. A ``while True:`` or ``while 1:`` loop is reached when the script's top-level code
holds it (under ``if __name__ == "__main__":`` too), or a function that this code calls
does, followed through the calls of what it reaches, at most :data:`MAX_DEPTH` calls deep.
A call is followed when it names, in the file that makes it, a function or a class (its
``__init__``) of that file, one its imports bind from the repository's own modules
(``from models.x import train``, ``import models.x as mx`` then ``mx.train()``; the import
closure of :mod:`reprobridge_sdk.agent.imports` says what a name binds), or a method: of
``self`` in a method, or of a name assigned an instance of such a class (``model =
Trainer(...)`` then ``model.train()``), looked up in the class and then its bases.
Such a loop is endless when nothing inside it can leave it: no ``break`` of that loop (a
``break`` of a loop nested in it leaves the inner one only), no ``return``, no ``raise`` or
``assert``, no ``yield`` or ``await`` (a consumer may stop it), and no call of ``sys.exit``,
``exit``, ``quit`` or ``os._exit``, in its body or in a function that its body calls
(followed as above); and no ``next`` in its own body (its ``StopIteration``; a ``next`` in a
function the loop calls draws from that function's iterator, in research code most often an
endless generator of batches). A condition in front of a way out does not matter: the way
out is there. What a nested function, lambda or class defines is not run by the loop and
does not count; a function that nothing calls is not followed. A file that does not parse
(or that the closure reads as Python 2 text) is not read: a script that does not parse has
no endless loop, and a call into such a module is not followed.

This is what the code shows, not a proof: a call the rules do not resolve (a function of a
package of the index, an attribute set at run time) is not read, so the caller adds what it
observed (a run stopped at its budget).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reprobridge_sdk.agent.imports import Closure

__all__ = ["MAX_DEPTH", "EndlessLoop", "endless_loop"]

#: Calls followed from the script's top-level code, at most, into what it reaches.
MAX_DEPTH = 6
_EXIT_CALLS = frozenset({"exit", "quit", "sys.exit", "os._exit"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class EndlessLoop:
    """An endless loop: its line and its header as written (``while True:``), and the
    repository file that holds it (None: the script itself)."""

    line: int
    header: str
    file: str | None = None


@dataclass
class _Module:
    """One file: what it defines at its top level and what its imports bind."""

    file: str | None
    functions: dict[str, _FunctionDef]
    classes: dict[str, ast.ClassDef]
    bound: dict[str, tuple[str, str | None]]
    body: list[ast.stmt]
    #: Top-level names assigned an instance of a class the rules resolve.
    instances: dict[str, tuple[_Module, ast.ClassDef]] | None = None


@dataclass(frozen=True)
class _Context:
    """Where a body runs: its module, the class of its method (``self``), its instances."""

    module: _Module
    cls: ast.ClassDef | None = None
    owner: _Module | None = None  # the module of ``cls``
    instances: dict[str, tuple[_Module, ast.ClassDef]] = field(default_factory=dict)


_Callee = tuple[_Module, _FunctionDef, ast.ClassDef | None]


class _Program:
    """The script and the repository modules its import closure reaches, read on use."""

    def __init__(self, tree: ast.Module, root: Path | None, reached: Closure | None) -> None:
        self.root = root
        self.reached = reached
        script = reached.script if reached is not None else None
        self.script = self._module(script, tree)
        self.modules: dict[str, _Module | None] = {}
        if script is not None:
            self.modules[script] = self.script

    def _module(self, file: str | None, tree: ast.Module) -> _Module:
        bound = self.reached.bound.get(file, {}) if self.reached and file else {}
        return _Module(
            file=file,
            functions={n.name: n for n in tree.body if isinstance(n, _FunctionDef)},
            classes={n.name: n for n in tree.body if isinstance(n, ast.ClassDef)},
            bound=bound,
            body=tree.body,
        )

    def module(self, file: str) -> _Module | None:
        """The module of a reached repository file; None when it is not read (see rules)."""
        if file in self.modules:
            return self.modules[file]
        found = None
        if self.root is not None and self.reached is not None and file in self.reached.files:
            try:
                found = self._module(file, ast.parse((self.root / file).read_bytes()))
            except (OSError, SyntaxError, ValueError, RecursionError):
                found = None
        self.modules[file] = found
        return found

    def lookup(
        self, module: _Module, name: str, hops: int = 0
    ) -> _Module | tuple[_Module, _FunctionDef | ast.ClassDef] | None:
        """What ``name`` is in ``module``: a function or class (with its module), a module
        of the repository, or None; a name re-exported by an import is followed."""
        if name in module.functions:
            return module, module.functions[name]
        if name in module.classes:
            return module, module.classes[name]
        if name not in module.bound or hops > MAX_DEPTH:
            return None
        file, attribute = module.bound[name]
        target = self.module(file)
        if target is None or attribute is None:
            return target
        return self.lookup(target, attribute, hops + 1)

    def method(
        self, module: _Module, cls: ast.ClassDef, name: str, hops: int = 0
    ) -> _Callee | None:
        """The method ``name`` of ``cls`` (of ``module``) or of its bases."""
        for node in cls.body:
            if isinstance(node, _FunctionDef) and node.name == name:
                return module, node, cls
        if hops > MAX_DEPTH:
            return None
        for base in cls.bases:
            found = self._class(module, base)
            if found is not None:
                inherited = self.method(found[0], found[1], name, hops + 1)
                if inherited is not None:
                    return inherited
        return None

    def _class(self, module: _Module, node: ast.expr) -> tuple[_Module, ast.ClassDef] | None:
        """The class ``node`` names in ``module`` (``Base`` or ``models.Base``)."""
        found: object = None
        if isinstance(node, ast.Name):
            found = self.lookup(module, node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner = self.lookup(module, node.value.id)
            found = self.lookup(owner, node.attr) if isinstance(owner, _Module) else None
        if isinstance(found, tuple) and isinstance(found[1], ast.ClassDef):
            return found[0], found[1]
        return None

    def callee(self, node: ast.AST, context: _Context) -> _Callee | None:
        """The function a call runs, when the rules resolve it."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        found: object = None
        if isinstance(func, ast.Name):
            found = self.lookup(context.module, func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = func.value.id
            if name == "self" and context.cls is not None and context.owner is not None:
                return self.method(context.owner, context.cls, func.attr)
            if name in context.instances:
                owner, cls = context.instances[name]
                return self.method(owner, cls, func.attr)
            target = self.lookup(context.module, name)
            found = self.lookup(target, func.attr) if isinstance(target, _Module) else None
        if not isinstance(found, tuple):
            return None
        module, definition = found
        if isinstance(definition, ast.ClassDef):
            return self.method(module, definition, "__init__")
        return module, definition, None

    def instances(
        self, module: _Module, body: list[ast.stmt], known: dict[str, tuple[_Module, ast.ClassDef]]
    ) -> dict[str, tuple[_Module, ast.ClassDef]]:
        """``known`` and the names ``body`` assigns an instance of a resolved class."""
        found = dict(known)
        for node in _reached(body):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            cls = self._class(module, node.value.func)
            for target in node.targets:
                if isinstance(target, ast.Name) and cls is not None:
                    found[target.id] = cls
        return found

    def context(self, callee: _Callee) -> _Context:
        """Where the body of ``callee`` runs: its module's instances and its own."""
        module, function, cls = callee
        if module.instances is None:
            module.instances = {}  # a module that reaches itself reads what it has so far
            module.instances = self.instances(module, module.body, {})
        known = self.instances(module, function.body, module.instances)
        return _Context(module, cls, module if cls is not None else None, known)


def endless_loop(
    text: str, root: Path | None = None, reached: Closure | None = None
) -> EndlessLoop | None:
    """The first endless loop the script's run reaches (see the module's rules), or None.

    ``reached`` is the script's import closure in the repository at ``root``: with both, calls
    are followed into the repository's own modules; without, into the script's own code."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    program = _Program(tree, root, reached)
    script = program.script
    script.instances = program.instances(script, tree.body, {})
    followed: set[int] = set()
    bodies: list[tuple[list[ast.stmt], _Context, int]] = [
        (tree.body, _Context(script, instances=script.instances), 0)
    ]
    while bodies:
        body, context, depth = bodies.pop(0)
        for node in _reached(body):
            if (
                isinstance(node, ast.While)
                and _always(node.test)
                and not _leaves(program, node.body, context, set(), loop=True, depth=depth)
            ):
                where = None if context.module is script else context.module.file
                return EndlessLoop(node.lineno, f"while {ast.unparse(node.test)}:", where)
            callee = program.callee(node, context) if depth < MAX_DEPTH else None
            if callee is not None and id(callee[1]) not in followed:
                followed.add(id(callee[1]))
                bodies.append((callee[1].body, program.context(callee), depth + 1))
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
    program: _Program,
    body: list[ast.stmt],
    context: _Context,
    followed: set[int],
    *,
    loop: bool,
    depth: int,
) -> bool:
    """Whether running ``body`` can leave the loop around it: ``loop`` when ``body`` is that
    loop's own (a ``break``, a ``return`` or a ``next`` there leaves it), else a function it
    calls, ``depth`` calls from the script's top-level code."""
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
        if name in _EXIT_CALLS or (loop and name == "next"):
            return True
        callee = program.callee(node, context) if depth < MAX_DEPTH else None
        if callee is not None and id(callee[1]) not in followed:
            followed.add(id(callee[1]))
            inner = program.context(callee)
            if _leaves(program, callee[1].body, inner, followed, loop=False, depth=depth + 1):
                return True
        # a break in a nested loop's body leaves that loop alone (one in its else does not)
        nested = {id(child) for child in node.body} if isinstance(node, _LOOPS) else set()
        stack += [
            (child, breaks and id(child) not in nested, returns)
            for child in ast.iter_child_nodes(node)
        ]
    return False
