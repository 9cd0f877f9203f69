"""Convenience changes of the Reproducer: a seed option and a short smoke scope.

Both are code changes made only when needed, and both are real transformations of the
source: :mod:`ast` gives the positions, and the text is edited only at those positions, so
comments, odd formatting, semicolons, continuation lines, tabs and CRLF line endings are kept
as they were. The Reproducer keeps a change only when its gate passes and records it with
``code record --kind convenience``, with the reason and the evidence.

**Seed option** (:func:`add_seed_option`), for a script that takes no seed when its
launchers run over seeds (a claim names its seeds, or the script fixes its own):

* argparse: ``<parser>.add_argument("--seed", type=_repro_seed, default=None, ...)`` is
  inserted right after the statement that creates the parser, whatever the import name
  (``import argparse as ap``, ``from argparse import ArgumentParser as AP``), whatever the
  parser is called (a name or an attribute such as ``self.parser``) and however the arguments
  are parsed later (``parse_args``, ``parse_known_args``, ``vars(...)``): argparse calls the
  ``type`` function only when the option is given, so the seeding never depends on what the
  script does with the parsed arguments. With several parsers, the first whose
  ``parse_args``/``parse_known_args`` the file calls is taken, else the first created.
* click: an ``@click.option("--seed", ..., expose_value=False, callback=...)`` decorator right
  under the command's decorator (``click.command``, ``click.group``, ``<group>.command`` or
  ``command`` imported from click): the command's signature does not change. With several
  commands, the one the ``__main__`` block calls, else the first.
* otherwise (no argument parser the file creates itself, ``sys.argv`` read by hand): the
  environment variable :data:`SEED_ENV`, read at the top of the module.

* a script that seeds its generators with a constant (``seed = 123`` then
  ``np.random.seed(seed)``, or ``torch.manual_seed(0)``; see :func:`fixed_seed`) would
  override any seed given before its own seeding: each such constant becomes
  ``_repro_seed_or(<constant>)``, which reads :data:`SEED_ENV` and falls back to the
  constant. The script's own seeding calls then seed what they seeded before (TensorFlow
  too) with the launcher's seed; given none, they use the constant, as published.

The flag is ``--seed``, or ``--repro-seed`` when the file already names ``--seed``. The seeding
function (:data:`SEED_FUNCTION`) is inserted after the module docstring and the ``from
__future__`` imports; it seeds ``random``, ``numpy`` when the file imports numpy and ``torch``
when the file imports torch. Given no seed, nothing is seeded: the script behaves as before.
A file that does not parse as Python 3 (Python 2 not converted yet) or already defines the
function gets no change (None).

**Smoke knob** (:func:`smoke_knob`), for a smoke run that exceeded its budget. An iteration
count is a name that counts epochs, iterations, steps, estimators, rounds, episodes, updates or
generations (``epochs``, ``n_epochs``, ``max_iter``, ``maxiter``, ``nIter``, ``n_estimators``,
``num_steps``, ...; not
``warmup_steps``, ``log_steps`` and the like, nor a period such as
``flush_logs_every_n_steps`` or ``eval_freq_steps``: they do not bound the work). The kinds, in
order:

1. an option of the script with such a name (argparse or click) that the smoke launcher does
   not pass yet: the smoke launcher passes a small value (no code change); the options of
   a repository module count as the script's when the script parses a parser it does not
   build (``parser = package.training.add_args()``). An option without a default ranks after
   every other count: the published command runs without it;
2. a module constant with such a name bound to an integer literal above 1 (``EPOCHS = 100``;
   a counter's ``epochs = 0`` bounds nothing), also one assigned in the ``__main__`` block
   and one item of a tuple assignment (``batch_size, max_iter = 100, 2000``); or an
   attribute with such a name assigned such a literal anywhere in the file
   (``args.total_steps = 6000`` in a notebook's cell, ``self.n_iter = 5000`` in a method)
   when the bound of a loop of the script or of a module it imports reads it
   (``range(args.total_steps + 1)``, ``while self.it < self.n_iter``); an attribute no loop
   reads is no knob. Constants and attributes in source order;
3. a keyword argument or a dictionary key with such a name and an integer literal above 1
   (``n_estimators=500``, an optimizer's ``options={'maxiter': 50000}``, an early-stopping
   ``dict(patience=100, max_epochs=10000)``);
4. the outermost ``for`` loop over ``range(<integer literal>)`` (a bound of at least 10; a loop
   inside it counts inner steps, such as batches), the largest when there are several; else
   the first outermost loop over ``range(<expression>)``, also in a progress bar
   (``tqdm(range(...))``), whose expression reads an option of the script with a number as
   default (``range(int(args.budget) // steps_per_epoch)``): that option bounds the work
   whatever its name, and the expression is the knob's default. A loop knob carries the
   count its bound reads before any run (:attr:`Knob.count`): the literal, or the option's
   default (``3e5``: 300000).

A name of the training's length (epochs, steps, rounds, estimators, episodes, updates,
generations) comes before an iteration name (``niter``, ``max_iter``, ``iterations``): the
latter is as often a setting of the model (the power iterations of a propagation) as the
training's length. So the knob is the first training-length name over the kinds above, else
the first iteration name or loop. When the script has no training-length name, the repository
modules it imports (``modules``, in the order its imports reach them) are read for a constant
or a keyword (2, 3), such as the ``max_epochs`` of an early-stopping dictionary the script
imports: a training-length name there is taken, and when the script has no knob at all, an
iteration name there too.

For 2-4 the literal becomes ``_repro_knob("REPRO_<NAME>", <literal>)``, which reads that
environment variable and falls back to the literal (the loop's variable is
``REPRO_ITERATIONS``, an attribute's is named for the attribute alone:
``REPRO_TOTAL_STEPS``), in the file that holds it (``Knob.file``: the script, or the module);
the smoke launcher sets the variable. The other constants and attributes of that file that
give a count of the work the same value (a figure's ``steps = 6000`` beside
``args.total_steps = 6000``) read the same variable: copies of the count follow it, so the
code's arrays and axes still agree. Without it the code runs as before, so the scored
launcher is unchanged. The small value is 1 for epochs and otherwise the smaller of 5 and
the default. Given the claims' labels, it is raised to what lets each label be printed
once when the loops the knob bounds print it only under a period: ``if step > 0 and step %
args.print_every == 0`` needs the period and one step, the period an integer literal or
the largest value the code gives its name (an assignment, a dictionary key, a keyword, an
option's default); exactly ``step % period == 0`` in a loop from 0 prints at its first
step, and a label printed outside the period, or after the loop, needs nothing. Never
above the count itself. A period (``print_every``, ``eval_freq``) is never a knob.

**Repetitions** (:attr:`Knob.also`): a script that repeats its whole experiment over splits,
folds, shuffles, repetitions, runs, trials or restarts (``n_splits``, ``--num-shuffles``,
``N_FOLDS``; :func:`is_repetition_count`) is shortened to one repetition too, with the
training's length or alone when it has none: the smoke run checks that the code runs, and
one split runs all of it. In the script only, the first of: an option with such a name that
the smoke launcher does not pass (it passes 1); a module constant with such a name bound to
an integer literal above 1; the bound of an outermost ``for`` loop over ``range(<bound>)``
whose bound is such a name, also read from a file or an attribute (``range(int(n_splits))``,
``range(args.n_folds)``): the bound becomes ``_repro_knob("REPRO_<NAME>", <bound>)`` and
the smoke launcher sets the variable to 1. Code with none of these has no knob (None).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = [
    "KNOB_FUNCTION",
    "SEED_ENV",
    "SEED_FUNCTION",
    "Knob",
    "SeedOption",
    "add_seed_option",
    "is_iteration_count",
    "smoke_knob",
]

#: The environment variable a script without an argument parser reads its seed from.
SEED_ENV = "REPRO_SEED"
#: The function the seed option inserts.
SEED_FUNCTION = "_repro_seed"
#: The function a smoke knob inserts.
KNOB_FUNCTION = "_repro_knob"
_MARK = "# Added by reprobridge build: a convenience change (see the guide's change record)."

_COUNT = re.compile(
    r"^(?:[a-z0-9]+_)*(?:max|n|num)?(?:epochs?|iters?|iterations?|steps?|estimators|rounds|"
    r"episodes|updates|generations)$"
)
_NOT_A_BOUND = re.compile(
    r"^(?:warmup|warm_up|log|logging|eval|evaluation|save|print|checkpoint|ckpt|report|val|"
    r"validation|patience|display|sample|snapshot|anneal|decay|lr|schedule|scheduler)_"
)
#: A word of a period, not a bound: ``flush_logs_every_n_steps``, ``check_val_every_n_epoch``.
_PERIOD = re.compile(r"(?:^|_)(?:every|interval|freq|frequency)_")


_REPEATS = re.compile(
    r"^(?:[a-z0-9]+_)*(?:n|num|number_of|k)?_?(?:splits?|folds?|shuffles?|repeats?|"
    r"repetitions?|runs|trials|restarts)$"
)


def is_repetition_count(name: str) -> bool:
    """Whether ``name`` counts repetitions of a whole experiment (``n_splits``,
    ``--num-shuffles``, ``N_FOLDS``)."""
    return bool(_REPEATS.match(name.lstrip("-").replace("-", "_").lower()))


def is_iteration_count(name: str) -> bool:
    """Whether an option or variable ``name`` counts the work (``--n-epochs``, ``MAX_ITER``)."""
    key = name.lstrip("-").replace("-", "_").lower()
    return bool(_COUNT.match(key)) and not _NOT_A_BOUND.match(key) and not _PERIOD.search(key)


# ------------------------------------------------------------------------------ editing


class _Source:
    """A file's text with ast positions (1-based lines, UTF-8 byte columns) as offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts: list[int] = []
        offset = 0
        for line in self.lines:
            self.starts.append(offset)
            offset += len(line)
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.edits: list[tuple[int, int, str]] = []

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8", "replace"))

    def indent(self, lineno: int) -> str:
        line = self.lines[lineno - 1]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def _starts_line(self, node: ast.stmt | ast.expr) -> bool:
        line = self.lines[node.lineno - 1]
        return line.encode("utf-8")[: node.col_offset].strip() in {b"", b"@"}

    def _rest_is_blank(self, node: ast.stmt | ast.expr) -> bool:
        assert node.end_lineno is not None and node.end_col_offset is not None
        rest = self.lines[node.end_lineno - 1].encode("utf-8")[node.end_col_offset :].strip()
        return rest == b"" or rest.startswith(b"#")

    def insert_lines_before(self, lineno: int, col: int, lines: Sequence[str]) -> None:
        """Whole lines before the module-level statement that starts at ``lineno:col``."""
        body = "".join(f"{line}{self.newline}" if line else self.newline for line in lines)
        if self.lines[lineno - 1].encode("utf-8")[:col].strip() == b"":
            at = self.starts[lineno - 1]
            self.edits.append((at, at, body))
        else:  # the statement follows a ';': end that line first
            at = self.offset(lineno, col)
            self.edits.append((at, at, self.newline + body))

    def insert_after(self, node: ast.stmt | ast.expr, code: str) -> None:
        """One statement (or decorator line) right after ``node``, in the same block."""
        assert node.end_lineno is not None and node.end_col_offset is not None
        if self._starts_line(node) and self._rest_is_blank(node):
            line = node.end_lineno
            at = self.starts[line] if line < len(self.lines) else len(self.text)
            prefix = "" if self.lines[line - 1].endswith(("\n", "\r")) else self.newline
            self.edits.append((at, at, f"{prefix}{self.indent(node.lineno)}{code}{self.newline}"))
        else:  # a simple statement among others on its line: join it with ';'
            at = self.offset(node.end_lineno, node.end_col_offset)
            self.edits.append((at, at, f"; {code}"))

    def replace(self, node: ast.expr, code: str) -> None:
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = self.offset(node.lineno, node.col_offset)
        end = self.offset(node.end_lineno, node.end_col_offset)
        self.edits.append((start, end, code))

    def segment(self, node: ast.expr) -> str:
        assert node.end_lineno is not None and node.end_col_offset is not None
        return self.text[
            self.offset(node.lineno, node.col_offset) : self.offset(
                node.end_lineno, node.end_col_offset
            )
        ]

    def result(self) -> str:
        text = self.text
        for start, end, code in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            text = text[:start] + code + text[end:]
        return text


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _first_statement(tree: ast.Module) -> ast.stmt | None:
    """The statement the inserted functions go before: after the docstring and __future__."""
    for index, node in enumerate(tree.body):
        if index == 0 and _is_docstring(node):
            continue
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        return node
    return None


def _insert_functions(source: _Source, tree: ast.Module, lines: list[str]) -> bool:
    anchor = _first_statement(tree)
    if anchor is None:
        return False
    lineno, col = anchor.lineno, anchor.col_offset
    decorators = getattr(anchor, "decorator_list", [])
    if decorators:  # a decorated definition starts at its first decorator's '@'
        first = min(decorators, key=lambda d: (d.lineno, d.col_offset))
        lineno = first.lineno
        col = source.lines[lineno - 1].encode("utf-8")[: first.col_offset].rfind(b"@")
    source.insert_lines_before(lineno, col, [*lines, "", ""])
    return True


def _imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _defines(tree: ast.Module, name: str) -> bool:
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
        for node in ast.walk(tree)
    )


class _Names:
    """What the names of a module refer to in ``module.attr`` terms (import aliases)."""

    def __init__(self, tree: ast.Module) -> None:
        self.modules: dict[str, str] = {}  # local name -> module
        self.objects: dict[str, str] = {}  # local name -> "module.attr"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.modules[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.modules[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    self.objects[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def resolve(self, node: ast.expr) -> str | None:
        """``argparse.ArgumentParser`` for ``ap.ArgumentParser`` or ``AP`` (an alias)."""
        if isinstance(node, ast.Name):
            return self.objects.get(node.id) or self.modules.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        return None


# ------------------------------------------------------------------------------ seed option


@dataclass(frozen=True)
class SeedOption:
    """A script changed to take a seed, and how a launcher passes it."""

    text: str
    how: Literal["argparse", "click", "env"]
    #: The option (``--seed``) or, for ``env``, the environment variable.
    flag: str
    #: Libraries the seed is given to (the script's own seeding calls, for ``fixed``).
    seeds: tuple[str, ...]
    #: The constant the script seeded itself with, now the default of the launcher's seed.
    fixed: int | None = None


def _seed_function(libraries: Iterable[str]) -> list[str]:
    lines = [
        _MARK,
        f"def {SEED_FUNCTION}(value):",
        '    """Seed random, numpy and torch (those the script imports) with ``value``."""',
        "    import random",
        "",
        "    seed = int(value)",
        "    random.seed(seed)",
    ]
    if "numpy" in libraries:
        lines += ["    import numpy", "", "    numpy.random.seed(seed % 2**32)"]
    if "torch" in libraries:
        lines += ["    import torch", "", "    torch.manual_seed(seed)"]
    lines.append("    return seed")
    return lines


def _strings(tree: ast.Module) -> set[str]:
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def _parsers(tree: ast.Module, names: _Names) -> list[tuple[ast.stmt, ast.expr]]:
    """(statement, target) of every ``x = argparse.ArgumentParser(...)``, in source order."""
    found: list[tuple[ast.stmt, ast.expr]] = []
    for node in ast.walk(tree):
        value: ast.expr | None = None
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            value, targets = node.value, node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            value, targets = node.value, [node.target]
        if not (isinstance(value, ast.Call) and len(targets) == 1):
            continue
        if names.resolve(value.func) != "argparse.ArgumentParser":
            continue
        if isinstance(targets[0], (ast.Name, ast.Attribute)):
            found.append((node, targets[0]))  # type: ignore[arg-type]
    return sorted(found, key=lambda item: (item[0].lineno, item[0].col_offset))


def _parse_receivers(tree: ast.Module) -> list[str]:
    receivers: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"parse_args", "parse_known_args"}
        ):
            receivers.append((node.lineno, node.col_offset, ast.unparse(node.func.value)))
    return [text for _, _, text in sorted(receivers)]


def _click_commands(tree: ast.Module, names: _Names) -> list[tuple[ast.FunctionDef, ast.expr]]:
    found: list[tuple[ast.FunctionDef, ast.expr]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            func = decorator.func if isinstance(decorator, ast.Call) else decorator
            resolved = names.resolve(func)
            is_click = resolved in {"click.command", "click.group"}
            is_sub = (
                resolved is None
                and isinstance(func, ast.Attribute)
                and func.attr in {"command", "group"}
            )
            if is_click or is_sub:
                found.append((node, decorator))
                break
    return sorted(found, key=lambda item: item[0].lineno)


def _main_calls(tree: ast.Module) -> set[str]:
    called: set[str] = set()
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name)
            and node.test.left.id == "__name__"
        ):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                    called.add(sub.func.id)
    return called


#: How a seeding call's name ends (``np.random.seed``, ``torch.manual_seed``,
#: ``tf.set_random_seed``, ``tf.random.set_seed``): numpy, random, torch, TensorFlow 1 and 2.
_SEEDING = (".random.seed", "manual_seed", "manual_seed_all", "set_random_seed", ".set_seed")


def _fixed_literals(tree: ast.Module) -> tuple[list[ast.expr], list[str]]:
    """The integer literals the file seeds a generator with: a seeding call's literal argument
    (``np.random.seed(0)``) or the literal of the one assignment of the name it passes
    (``seed = 123`` and then ``tf.set_random_seed(seed)``), in source order, each once; and
    the seeding calls as written (``tf.set_random_seed``)."""
    names = _Names(tree)
    constants: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    constants.setdefault(target.id, []).append(node.value)
    found: dict[tuple[int, int], ast.expr] = {}
    calls: dict[str, None] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) != 1:
            continue
        called = names.resolve(node.func) or ast.unparse(node.func)
        if not (called == "random.seed" or called.endswith(_SEEDING)):
            continue
        [arg] = node.args
        assigned = constants.get(arg.id, []) if isinstance(arg, ast.Name) else []
        literal = assigned[0] if len(assigned) == 1 else arg
        if _int_literal(literal) is not None:
            found[literal.lineno, literal.col_offset] = literal
            calls[ast.unparse(node.func)] = None
    return [found[key] for key in sorted(found)], list(calls)


def fixed_seed(text: str) -> int | None:
    """The constant with which ``text`` seeds a generator (``np.random.seed(0)``, or
    ``seed = 123`` and then ``tf.set_random_seed(seed)``), or None.

    Such a script's runs repeat one initialisation: its reference runs show no spread over
    seeds, which the guide must say rather than call the script unseeded."""
    tree = _parse(text)
    literals = _fixed_literals(tree)[0] if tree is not None else []
    return _int_literal(literals[0]) if literals else None


def _seed_from_launcher(
    text: str, tree: ast.Module, literals: list[ast.expr], calls: list[str]
) -> SeedOption | None:
    """``text`` with each constant it seeds with read from :data:`SEED_ENV` first."""
    source = _Source(text)
    function = [
        _MARK,
        f"def {SEED_FUNCTION}_or(default):",
        f'    """The seed the launcher passes in {SEED_ENV}, else ``default``."""',
        "    import os",
        "",
        f'    value = os.environ.get("{SEED_ENV}", "").strip()',
        "    return int(value) if value else default",
    ]
    if not _insert_functions(source, tree, function):
        return None
    for literal in literals:
        source.replace(literal, f"{SEED_FUNCTION}_or({source.segment(literal)})")
    value = _int_literal(literals[0])
    return SeedOption(source.result(), "env", SEED_ENV, tuple(calls), fixed=value)


def add_seed_option(text: str) -> SeedOption | None:
    """``text`` changed to take a seed (see the module's rules), or None."""
    tree = _parse(text)
    if tree is None or _defines(tree, SEED_FUNCTION) or _defines(tree, f"{SEED_FUNCTION}_or"):
        return None
    literals, calls = _fixed_literals(tree)
    if literals:  # a seed given before the script's own seeding would be overridden
        return _seed_from_launcher(text, tree, literals, calls)
    source = _Source(text)
    names = _Names(tree)
    libraries = tuple(
        lib for lib in ("random", "numpy", "torch") if lib == "random" or lib in _imports(tree)
    )
    flag = "--repro-seed" if "--seed" in _strings(tree) else "--seed"
    help_text = "seed random, numpy and torch (added by reprobridge build)"
    function = _seed_function(libraries)
    parsers = _parsers(tree, names)
    commands = _click_commands(tree, names)
    if parsers:
        receivers = _parse_receivers(tree)
        chosen = next((item for item in parsers if ast.unparse(item[1]) in receivers), parsers[0])
        statement, target = chosen
        receiver = source.segment(target)
        if not _insert_functions(source, tree, function):
            return None
        source.insert_after(
            statement,
            f'{receiver}.add_argument("{flag}", type={SEED_FUNCTION}, default=None, '
            f'help="{help_text}")',
        )
        return SeedOption(source.result(), "argparse", flag, libraries)
    if commands:
        main = _main_calls(tree)
        _command, decorator = next((item for item in commands if item[0].name in main), commands[0])
        callback = [
            "",
            "",
            "import click as _repro_click",
            "",
            "",
            f"def {SEED_FUNCTION}_option(ctx, param, value):",
            '    """The click callback of the seed option: seed when a value is given."""',
            f"    return value if value is None else {SEED_FUNCTION}(value)",
        ]
        if not _insert_functions(source, tree, [*function, *callback]):
            return None
        source.insert_after(
            decorator,
            f'@_repro_click.option("{flag}", type=int, default=None, expose_value=False, '
            f'callback={SEED_FUNCTION}_option, help="{help_text}")',
        )
        return SeedOption(source.result(), "click", flag, libraries)
    reader = [
        "",
        "",
        "import os as _repro_os",
        "",
        f'if _repro_os.environ.get("{SEED_ENV}", "").strip():',
        f'    {SEED_FUNCTION}(_repro_os.environ["{SEED_ENV}"])',
    ]
    if not _insert_functions(source, tree, [*function, *reader]):
        return None
    return SeedOption(source.result(), "env", SEED_ENV, libraries)


# ------------------------------------------------------------------------------ smoke knob


@dataclass(frozen=True)
class Knob:
    """How a smoke run is made short."""

    kind: Literal["option", "constant", "attribute", "keyword", "loop"]
    #: The script's name for it (option flag, constant, attribute as written such as
    #: ``args.total_steps``, keyword name, loop variable).
    name: str
    #: The default as source text, when known.
    default: str | None
    small: str
    #: The option and value the smoke launcher passes (``option``).
    args: tuple[str, ...] = ()
    #: The variable the smoke launcher sets (``constant``, ``keyword``, ``loop``).
    env: dict[str, str] = field(default_factory=dict)
    #: The new text of the file that holds it (``constant``, ``keyword``, ``loop``).
    text: str | None = None
    #: That file when it is a module the script imports (a repository path); None: the script.
    file: str | None = None
    #: The repetitions shortened with it (one split, fold or shuffle), in the script.
    also: Knob | None = None
    #: The line of the file that holds the count (its default, for an option), when known.
    line: int | None = None
    #: For a loop: the count its bound reads, when the code gives it before any run (the
    #: bound's integer literal, or the default of the option the bound reads), else None.
    count: int | None = None
    #: For a loop whose bound reads an option: that option (``--budget``).
    reads: str | None = None


def _small(name: str, default: int | None) -> int:
    if "epoch" in name.lower():
        return 1
    return max(1, min(5, default)) if default is not None else 5


def _int_literal(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _options(tree: ast.Module) -> Iterator[tuple[list[str], ast.expr | None]]:
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in {"add_argument", "option"}:
            continue
        flags = [
            arg.value
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        ]
        default = next((kw.value for kw in node.keywords if kw.arg == "default"), None)
        if flags:
            yield flags, default


def _knob_function() -> list[str]:
    return [
        _MARK,
        f"def {KNOB_FUNCTION}(name, default):",
        '    """The integer in the environment variable ``name``, else ``default``."""',
        "    import os",
        "",
        '    value = os.environ.get(name, "").strip()',
        "    return int(value) if value else default",
    ]


def _env_knob(  # noqa: PLR0917 - private helper of smoke_knob()
    text: str,
    tree: ast.Module,
    kind: Literal["constant", "attribute", "keyword", "loop"],
    name: str,
    node: ast.expr,
    file: str | None = None,
    small_value: int | None = None,
    *,
    spot: _Spot | None = None,
) -> Knob | None:
    source = _Source(text)
    default = _int_literal(node)
    # an attribute's variable is named for the attribute alone: REPRO_TOTAL_STEPS
    variable = "REPRO_" + re.sub(r"[^A-Z0-9]+", "_", name.rsplit(".", 1)[-1].upper()).strip("_")
    if not _defines(tree, KNOB_FUNCTION) and not _insert_functions(source, tree, _knob_function()):
        return None
    literal = source.segment(node)
    source.replace(node, f'{KNOB_FUNCTION}("{variable}", {literal})')
    if kind in {"constant", "attribute"} and default is not None:
        for twin in _twins(tree, node, default):  # copies of the count follow it
            source.replace(twin, f'{KNOB_FUNCTION}("{variable}", {source.segment(twin)})')
    small = str(small_value if small_value is not None else _small(name, default))
    return Knob(
        kind,
        name,
        literal,
        small,
        env={variable: small},
        text=source.result(),
        file=file,
        line=node.lineno,
        count=spot.count if spot is not None else None,
        reads=spot.reads if spot is not None else None,
    )


def _range_call(iterable: ast.expr, *, progress_bar: bool = False) -> ast.Call | None:
    """The ``range(...)`` call a loop iterates over (with ``progress_bar``, also inside
    ``tqdm(range(...))`` and the like: a call whose first argument is that ``range``)."""
    call = iterable
    if (
        progress_bar
        and isinstance(call, ast.Call)
        and call.args
        and isinstance(call.args[0], ast.Call)
        and isinstance(call.args[0].func, ast.Name)
        and call.args[0].func.id == "range"
    ):
        call = call.args[0]
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "range"
        and not call.keywords
    ):
        return call
    return None


def _range_bound(iterable: ast.expr, *, progress_bar: bool = False) -> ast.expr | None:
    """The ``n`` of a loop over ``range(n)`` (with ``progress_bar``, also ``tqdm(range(n))``
    and the like: a call whose first argument is that ``range``); None for any other."""
    call = _range_call(iterable, progress_bar=progress_bar)
    return call.args[0] if call is not None and len(call.args) == 1 else None


def _range_loops(body: Sequence[ast.AST], *, nested: bool) -> Iterator[tuple[int, ast.expr]]:
    """(bound, node) of the ``range(<literal>)`` loops that no other such loop encloses."""
    for node in body:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            expression = _range_bound(node.iter)
            bound = None if expression is None else _int_literal(expression)
            if expression is not None and bound is not None and bound >= 10:
                if not nested:
                    yield bound, expression
                continue  # the loops inside it count its inner steps, not the work
        yield from _range_loops(list(ast.iter_child_nodes(node)), nested=nested)


def _is_main_guard(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":``."""
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _constants(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """``(name, value)`` of the module's assignments, also those of its ``__main__`` block,
    a tuple's item by item (``batch_size, max_iter = 100, 2000``)."""
    body = list(tree.body)
    for node in tree.body:
        if _is_main_guard(node):
            assert isinstance(node, ast.If)
            body += node.body
    for node in body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            yield node.target.id, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name):
                yield target.id, value
            elif (
                isinstance(target, ast.Tuple)
                and isinstance(value, ast.Tuple)
                and len(target.elts) == len(value.elts)
            ):
                for name, item in zip(target.elts, value.elts, strict=True):
                    if isinstance(name, ast.Name):
                        yield name.id, item


def _attribute_constants(tree: ast.Module) -> Iterator[tuple[str, str, ast.expr]]:
    """``(target as written, attribute, value)`` of the assignments of an integer literal to
    an attribute, anywhere in the file: ``args.total_steps = 6000`` in a notebook's cell,
    ``self.n_iter = 5000`` in a method."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Attribute) and _int_literal(value) is not None:
            yield ast.unparse(target), target.attr, value


def _loop_parts(node: ast.AST) -> list[ast.expr]:
    """What bounds a loop: the arguments of the ``range`` of a ``for`` (also in a progress
    bar), the test of a ``while``; nothing for any other node."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        call = _range_call(node.iter, progress_bar=True)
        return list(call.args) if call is not None else []
    if isinstance(node, ast.While):
        return [node.test]
    return []


def _read_names(node: ast.AST) -> set[str]:
    """The names and attribute names an expression reads (``args.total_steps``: both)."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif isinstance(sub, ast.Name):
            found.add(sub.id)
    return found


def _loop_reads(trees: Iterable[ast.Module]) -> set[str]:
    """The names and attributes the bounds of the loops of ``trees`` read (``range(
    args.total_steps + 1)``, ``while step < self.n_iter``)."""
    return {
        name
        for tree in trees
        for node in ast.walk(tree)
        for part in _loop_parts(node)
        for name in _read_names(part)
    }


def _twins(tree: ast.Module, node: ast.expr, value: int) -> list[ast.expr]:
    """The other literals of the file that give a count of the work the same value as
    ``node`` (a figure's ``steps = 6000`` beside ``args.total_steps = 6000``): copies of the
    count, which follow it so that the code's arrays and axes still agree."""
    found = [
        other
        for name, other in _constants(tree)
        if other is not node and is_iteration_count(name) and _int_literal(other) == value
    ]
    found += [
        other
        for _, attribute, other in _attribute_constants(tree)
        if other is not node and is_iteration_count(attribute) and _int_literal(other) == value
    ]
    return found


def _keyword_counts(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """Iteration counts given as integer literals by name: keyword arguments
    (``n_estimators=500``) and string keys of dictionary literals (an optimizer's
    ``options={'maxiter': 50000}``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg and is_iteration_count(kw.arg) and _int_literal(kw.value) is not None:
                    yield kw.arg, kw.value
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                    and is_iteration_count(key.value)
                    and _int_literal(value) is not None
                ):
                    yield key.value, value


#: The rank added to an option without a default: the published command runs without it.
_UNSET = 2

#: Names of an iteration count that may be a setting of the model rather than the training's
#: length (``niter``: a propagation's power iterations); other counts come first.
_ITERATION_ONLY = re.compile(r"iters?$|iterations?$")


def _count_rank(name: str) -> int:
    """0 for a name of the training's length, 1 for an iteration name (see the rules)."""
    return 1 if _ITERATION_ONLY.search(name.lstrip("-").replace("-", "_").lower()) else 0


@dataclass(frozen=True)
class _Spot:
    """A literal to patch into a knob: a constant, a keyword or a loop's bound."""

    kind: Literal["constant", "attribute", "keyword", "loop"]
    name: str
    node: ast.expr
    #: For a loop: the count it reads when known before a run, and the option it reads.
    count: int | None = None
    reads: str | None = None


def _candidates(
    tree: ast.Module,
    given: set[str],
    *,
    script: bool,
    options: bool | None = None,
    option_loops: bool = True,
    reads: set[str] | None = None,
) -> Iterator[tuple[int, Knob | _Spot]]:
    """The knobs of one file in rule order, each with its rank; an option is a finished
    :class:`Knob`, the others a literal to patch. Loops only in the script; options in the
    script, or in a module with ``options`` (it builds the script's parser). An option
    without a default bounds nothing the published command runs: it ranks last. An
    attribute assigned a count is one only when a loop's bound reads it (``reads``: what the
    loops of the script and its modules read)."""
    if script if options is None else options:
        for flags, default in _options(tree):
            long_flags = [f for f in flags if f.startswith("--")]
            counts = [f for f in long_flags if is_iteration_count(f)]
            if not counts or given & set(flags):
                continue  # no count, or the smoke launcher passes it already
            small = str(_small(long_flags[0], _int_literal(default)))
            literal = ast.unparse(default) if default is not None else None
            knob = Knob(
                "option",
                long_flags[0],
                literal,
                small,
                args=(long_flags[0], small),
                line=default.lineno if default is not None else None,
            )
            unset = default is None or (isinstance(default, ast.Constant) and default.value is None)
            yield _count_rank(counts[0]) + (_UNSET if unset else 0), knob
    spots = [
        _Spot("constant", name, value)
        for name, value in _constants(tree)
        if is_iteration_count(name) and (_int_literal(value) or 0) > 1
    ]  # a counter's ``epochs = 0`` bounds nothing
    spots += [
        _Spot("attribute", written, value)
        for written, attribute, value in _attribute_constants(tree)
        if attribute in (reads or set())
        and is_iteration_count(attribute)
        and (_int_literal(value) or 0) > 1
    ]
    for spot in sorted(spots, key=lambda item: (item.node.lineno, item.node.col_offset)):
        yield _count_rank(spot.name), spot
    keywords = sorted(_keyword_counts(tree), key=lambda item: (item[1].lineno, item[1].col_offset))
    for name, value in keywords:
        if (_int_literal(value) or 0) > 1:
            yield _count_rank(name), _Spot("keyword", name, value)
    loops = list(_range_loops(tree.body, nested=False)) if script else []
    if loops:
        bound, bound_node = max(loops, key=lambda item: item[0])
        yield 1, _Spot("loop", "iterations", bound_node, count=bound)
    if script and option_loops:
        numeric = _numeric_options(tree, given)
        for bound_node, dest in _option_loops(tree.body, numeric):
            flag, count = numeric[dest]
            yield 1, _Spot("loop", "iterations", bound_node, count=count, reads=flag)
            break


def _numeric_options(tree: ast.Module, given: set[str]) -> dict[str, tuple[str, int]]:
    """The script's options with a number as default, by attribute name (``dest``): the
    option and its default as an integer (``3e5``: 300000); but those the smoke launcher
    passes and the repetitions (the repetition knob's)."""
    found: dict[str, tuple[str, int]] = {}
    for flags, default in _options(tree):
        value = default.value if isinstance(default, ast.Constant) else None
        long_flags = [f for f in flags if f.startswith("--")]
        if given & set(flags) or any(is_repetition_count(f) for f in long_flags):
            continue
        if long_flags and (type(value) is int or type(value) is float):
            if not math.isfinite(value):
                continue  # inf bounds nothing a knob could stand for
            found.setdefault(
                long_flags[0].lstrip("-").replace("-", "_"), (long_flags[0], int(value))
            )
    return found


def _option_loops(
    body: Sequence[ast.AST], dests: Mapping[str, object]
) -> Iterator[tuple[ast.expr, str]]:
    """The bounds of the outermost ``range(<expression>)`` loops (also in a progress bar,
    ``tqdm(range(...))``) whose expression reads one of the script's options
    (``range(int(args.budget) // steps_per_epoch)``), each with the first option it reads:
    that option, whatever its name, bounds the work."""
    for node in body:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            expression = _range_bound(node.iter, progress_bar=True)
            read = (
                [
                    sub.attr
                    for sub in ast.walk(expression)
                    if isinstance(sub, ast.Attribute) and sub.attr in dests
                ]
                if expression is not None and _int_literal(expression) is None
                else []
            )
            if expression is not None and read:
                yield expression, read[0]
                continue  # the loops inside it count its inner steps
        yield from _option_loops(list(ast.iter_child_nodes(node)), dests)


def _best(
    found: Iterable[tuple[int, Knob | _Spot]],
) -> tuple[int, Knob | _Spot] | None:
    """The first candidate of the lowest rank (rule order within a rank)."""
    best = None
    for item in found:
        if best is None or item[0] < best[0]:
            best = item
    return best


def _bound_name(node: ast.expr) -> str | None:
    """The name a loop's bound reads: ``n_splits``, ``int(n_splits)``, ``args.n_folds``."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in {"int", "round"}
        and len(node.args) == 1
    ):
        node = node.args[0]
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _repetition_loops(body: Sequence[ast.AST]) -> Iterator[tuple[str, ast.expr]]:
    """``(name, bound)`` of the outermost ``range(<bound>)`` loops over repetitions."""
    for node in body:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            call = node.iter
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == "range"
                and len(call.args) == 1
                and not call.keywords
            ):
                name = _bound_name(call.args[0])
                if name is not None and is_repetition_count(name):
                    yield name, call.args[0]
                    continue  # the loops inside it are the experiment's own
        yield from _repetition_loops(list(ast.iter_child_nodes(node)))


def _repetition_knob(text: str, argv: Sequence[str]) -> Knob | None:
    """One repetition instead of many, in the script (see the rules), or None."""
    tree = _parse(text)
    if tree is None:
        return None
    given = {word.split("=", 1)[0] for word in argv if word.startswith("-")}
    for flags, default in _options(tree):
        long_flags = [f for f in flags if f.startswith("--")]
        if long_flags and is_repetition_count(long_flags[0]) and not given & set(flags):
            if _int_literal(default) == 1:
                continue  # one already
            literal = ast.unparse(default) if default is not None else None
            return Knob("option", long_flags[0], literal, "1", args=(long_flags[0], "1"))
    ones = set()
    for name, value in _constants(tree):
        if is_repetition_count(name) and (_int_literal(value) or 0) > 1:
            return _env_knob(text, tree, "constant", name, value, small_value=1)
        if _int_literal(value) in {0, 1}:
            ones.add(name)
    for name, bound in _repetition_loops(tree.body):
        if name not in ones:  # a count bound to 0 or 1 repeats nothing
            return _env_knob(text, tree, "loop", name, bound, small_value=1)
    return None


#: Calls that write what a log line is read from (``print``, a logger's ``info``, a file's
#: or a progress bar's ``write``).
_WRITERS = frozenset({"print", "pprint", "write", "echo", "info", "warning", "debug", "log"})


def _writes(node: ast.AST, label: str) -> bool:
    """Whether ``node`` is a call that writes a string holding ``label`` (lower case)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name not in _WRITERS:
        return False
    return any(
        isinstance(sub, ast.Constant) and isinstance(sub.value, str) and label in sub.value.lower()
        for part in [*node.args, *(keyword.value for keyword in node.keywords)]
        for sub in ast.walk(part)
    )


def _given(trees: Iterable[ast.Module], name: str) -> list[int]:
    """The integer literals the code gives ``name``: an assignment to it as a name or an
    attribute, a dictionary key, a keyword argument, the default of an option ``--name``."""
    found: list[int] = []
    flags = {f"--{name}", f"--{name.replace('_', '-')}"}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    named = getattr(target, "id", None) or getattr(target, "attr", None)
                    if named == name and _int_literal(node.value) is not None:
                        found.append(_int_literal(node.value) or 0)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value == name:
                        found += [v for v in [_int_literal(value)] if v is not None]
            elif isinstance(node, ast.Call):
                found += [
                    v
                    for keyword in node.keywords
                    if keyword.arg == name
                    for v in [_int_literal(keyword.value)]
                    if v is not None
                ]
        for option, default in _options(tree):
            if flags & set(option) and _int_literal(default) is not None:
                found.append(_int_literal(default) or 0)
    return found


def _period(
    test: ast.expr, variable: str, trees: Sequence[ast.Module], *, from_zero: bool
) -> int | None:
    """How many steps of a loop (counting in ``variable``) a test that holds ``<variable> %
    <period>`` needs before it is first true: 1 for exactly ``variable % period == 0`` (or
    ``not variable % period``) in a loop ``from_zero``, true at its first step; else the
    period and one step more (``step > 0 and step % 1000 == 0``, ``(epoch + 1) % 10``). The
    period is an integer literal, or the largest literal the code gives the name or attribute
    it reads (``args.print_every``, ``PRINT_EVERY``, ``--eval-every``; :func:`_given`). None
    when the test holds no such period, or none that the code gives a value."""
    for node in ast.walk(test):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod)):
            continue
        if variable not in _read_names(node.left):
            continue
        right = node.right
        literal = _int_literal(right)
        named = getattr(right, "id", None) or getattr(right, "attr", None)
        values = [literal] if literal is not None else []
        if not values and isinstance(named, str):
            values = _given(trees, named)
        periods = [value for value in values if value > 1]
        if not periods:
            continue
        equals_zero = (
            isinstance(test, ast.Compare)
            and test.left is node
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
            and _int_literal(test.comparators[0]) == 0
        )
        negated = (
            isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and test.operand is node
        )
        exact = isinstance(node.left, ast.Name) and (equals_zero or negated)
        return 1 if exact and from_zero else max(periods) + 1
    return None


def _label_needs(  # noqa: PLR0917 - private helper of _printing_need()
    body: Sequence[ast.stmt],
    variable: str,
    label: str,
    trees: Sequence[ast.Module],
    need: int,
    from_zero: bool,
) -> Iterator[int]:
    """For each write of ``label`` in ``body`` (a loop's, its variable ``variable``), the
    steps the loop needs before that write runs (``need`` outside any periodic ``if``)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.If):
            period = _period(node.test, variable, trees, from_zero=from_zero)
            inner = need if period is None else max(need, period)
            yield from _label_needs(node.body, variable, label, trees, inner, from_zero)
            yield from _label_needs(node.orelse, variable, label, trees, need, from_zero)
            continue
        children = list(ast.iter_child_nodes(node))
        if any(
            _writes(sub, label)
            for child in children
            if isinstance(child, ast.expr)
            for sub in ast.walk(child)
        ):
            yield need
        statements = [child for child in children if isinstance(child, ast.stmt)]
        statements += [
            item
            for child in children
            if isinstance(child, ast.ExceptHandler)
            for item in child.body
        ]
        yield from _label_needs(statements, variable, label, trees, need, from_zero)


def _knob_loops(knob: Knob, trees: Mapping[str | None, ast.Module]) -> Iterator[ast.For]:
    """The ``for`` loops over ``range`` the knob bounds: a loop knob's own, else every loop
    whose bound reads the knob's name (``range(args.total_steps + 1)`` for
    ``args.total_steps``, ``range(EPOCHS)``, an option's ``dest``)."""
    if knob.kind == "loop":
        tree = trees.get(knob.file)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.For):
                bound = _range_bound(node.iter, progress_bar=True)
                if bound is not None and bound.lineno == knob.line:
                    yield node
        return
    name = knob.name.rsplit(".", 1)[-1].lstrip("-").replace("-", "_")
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.For) and any(
                name in _read_names(part) for part in _loop_parts(node)
            ):
                yield node


def _printing_need(knob: Knob, text: str, modules: Mapping[str, str], labels: Sequence[str]) -> int:
    """The fewest steps of the loops ``knob`` bounds that let every claim's label those loops
    write be written once: a label written only under a period (``if step % print_every ==
    0``) needs the period's steps (see :func:`_period`); 1 when nothing is periodic. A label
    the loops never write (the script writes it after them) asks for nothing."""
    parsed: dict[str | None, ast.Module | None] = {None: _parse(text)}
    parsed.update((path, _parse(item)) for path, item in modules.items())
    trees = {path: tree for path, tree in parsed.items() if tree is not None}
    every = list(trees.values())
    need = 1
    for loop in _knob_loops(knob, trees):
        if not isinstance(loop.target, ast.Name):
            continue
        call = _range_call(loop.iter, progress_bar=True)
        from_zero = call is not None and (len(call.args) == 1 or _int_literal(call.args[0]) == 0)
        for label in labels:
            needs = list(
                _label_needs(loop.body, loop.target.id, label.lower(), every, 1, from_zero)
            )
            if needs:  # the first write that runs is the one the smoke run needs
                need = max(need, min(needs))
    return need


def _at_least(knob: Knob, need: int) -> Knob:
    """``knob`` with a small count of at least ``need``, but no more than its count."""
    try:
        small = int(knob.small)
    except ValueError:
        return knob
    count: object = knob.count
    if count is None and knob.default is not None:
        try:
            count = ast.literal_eval(knob.default)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            count = None
    value = need if type(count) is not int else min(need, count)
    if value <= small:
        return knob
    args = (knob.args[0], str(value)) if knob.args else ()
    env = dict.fromkeys(knob.env, str(value))
    return replace(knob, small=str(value), args=args, env=env)


def smoke_knob(
    text: str,
    argv: Sequence[str],
    modules: Mapping[str, str] | None = None,
    *,
    option_loops: bool = True,
    labels: Sequence[str] = (),
) -> Knob | None:
    """The way to shorten a run of the script ``text`` run as ``argv`` (see the rules), or None.
    Without ``option_loops`` a loop bounded through an option is no knob (rule 4's second
    half): a step run first passes its options small in its argv instead.

    ``modules`` maps the repository modules the script imports (paths, in the order its
    imports reach them) to their text: read when the script has no training-length name.
    A loop over splits or folds of the script is shortened too (:attr:`Knob.also`). With the
    claims' ``labels``, the small count is one that lets each label the shortened loop prints
    only every so many steps print once (:func:`_printing_need`)."""
    knob = _length_knob(text, argv, modules, option_loops=option_loops)
    if knob is not None and labels:
        knob = _at_least(knob, _printing_need(knob, text, modules or {}, labels))
    script = knob.text if knob is not None and knob.file is None and knob.text else text
    also = _repetition_knob(script, argv)
    if knob is None or also is None:
        return knob or also
    if knob.args and also.args and knob.args[0] == also.args[0]:
        return knob
    return replace(knob, also=also)


def _borrows_parser(tree: ast.Module) -> bool:
    """Whether the script parses its arguments with a parser it does not build itself
    (``parser = package.training.add_args()`` then ``parser.parse_args()``): the options a
    repository module declares are then the script's."""
    names = _Names(tree)
    return (
        bool(_parse_receivers(tree))
        and not _parsers(tree, names)
        and not any(
            isinstance(node, ast.Call) and names.resolve(node.func) == "argparse.ArgumentParser"
            for node in ast.walk(tree)
        )
    )


def _length_knob(
    text: str,
    argv: Sequence[str],
    modules: Mapping[str, str] | None = None,
    *,
    option_loops: bool = True,
) -> Knob | None:
    """The training's length of :func:`smoke_knob`."""
    tree = _parse(text)
    if tree is None:
        return None
    given = {word.split("=", 1)[0] for word in argv if word.startswith("-")}
    trees = {path: _parse(module_text) for path, module_text in (modules or {}).items()}
    reads = _loop_reads([tree, *(item for item in trees.values() if item is not None)])
    chosen = _best(_candidates(tree, given, script=True, option_loops=option_loops, reads=reads))
    borrowed = _borrows_parser(tree)
    if chosen is None or chosen[0] > 0:
        for path, module_text in (modules or {}).items():
            module_tree = trees[path]
            if module_tree is None:
                continue
            other = _best(
                _candidates(module_tree, given, script=False, options=borrowed, reads=reads)
            )
            if other is None or (chosen is not None and other[0] >= chosen[0]):
                continue
            if isinstance(other[1], Knob):  # an option of the parser the module builds
                return replace(other[1], file=path)
            spot = other[1]
            return _env_knob(
                module_text, module_tree, spot.kind, spot.name, spot.node, path, spot=spot
            )
    if chosen is None:
        return None
    if isinstance(chosen[1], Knob):
        return chosen[1]
    spot = chosen[1]
    return _env_knob(text, tree, spot.kind, spot.name, spot.node, spot=spot)
