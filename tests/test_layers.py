"""The package's layers: every import of a module of the SDK goes downward or sideways.

The layers, lowest first (the design's "imports go only downward"); a module belongs to the
layer of its subpackage or top-level module. ``io.safefs`` is on the ground floor with the
digests that use it (it imports nothing of the SDK but the findings and their exception base).
So is the package itself (``reprobridge_sdk/__init__.py``): its body imports only
``_forward`` and ``_lazy``, and what it offers from above (its public names, and the API's
forward-compatibility reader that it registers for the layers below the API) is imported by
name when first used, never by an import statement.
Every import counts, at module level or inside a function (a lazy import is still a
dependency), except under ``if TYPE_CHECKING:`` (names for annotations only, never imported
when the code runs). ``from reprobridge_sdk import plugins`` imports the submodule. There is
no list of exceptions.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "reprobridge_sdk"

LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(names.split())
    for names in (
        "reprobridge_sdk _forward _lazy _plugin_stdout errors findings versions model digest"
        " timestamps io.safefs",
        "io extract locks plugins config loading",
        "env guide schema checkout contents signing",
        "validation",
        "api",
        "run interop",
        "audit",
        "authoring",
        "agent",
        "bench",
        "cli __main__",
    )
)


def _layer(module: str) -> int:
    """The layer of ``reprobridge_sdk.<...>`` (the most specific name listed wins)."""
    if module == "reprobridge_sdk":
        return 0
    parts = module.split(".")[1:]
    for length in range(len(parts), 0, -1):
        name = ".".join(parts[:length])
        for index, names in enumerate(LAYERS):
            if name in names:
                return index
    msg = f"{module} is in no layer: add its top-level name to LAYERS"
    raise AssertionError(msg)


def _module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = module.split(".")
        if not is_package:
            base.pop()
        base = base[: len(base) - (node.level - 1)]
        source = ".".join([*base, *([node.module] if node.module else [])])
    else:
        source = node.module or ""
    if source.split(".")[0] != "reprobridge_sdk":
        return []
    found = []
    for alias in node.names:  # ``from package import submodule`` imports the submodule
        sub = PACKAGE.parent.joinpath(*source.split("."), alias.name)
        is_module = sub.with_suffix(".py").is_file() or (sub / "__init__.py").is_file()
        found.append(f"{source}.{alias.name}" if is_module else source)
    return found


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:``."""
    found: list[ast.AST] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        found.append(node)
        for child in ast.iter_child_nodes(node):
            test = child.test if isinstance(child, ast.If) else None
            if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
                pending.extend(child.orelse)
                continue
            pending.append(child)
    return found


def test_every_import_goes_down_or_sideways() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        mine = _layer(module)
        tree = ast.parse(path.read_text("utf-8"))
        for node in _runtime_nodes(tree):
            for target in _targets(node, module, path.name == "__init__.py"):
                if target.split(".")[0] == "reprobridge_sdk" and _layer(target) > mine:
                    upward.append(f"{module}:{node.lineno} imports {target}")
    assert upward == []


def test_the_layers_name_every_top_level_module() -> None:
    for path in sorted(PACKAGE.iterdir()):
        if path.name in {"__pycache__", "__init__.py", "py.typed", "_data"}:
            continue
        _layer(f"reprobridge_sdk.{path.stem}")


def _unit(module: str) -> str:
    """The top-level subpackage or module of ``reprobridge_sdk.<...>``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_the_top_level_units_form_no_import_cycle() -> None:
    """Sideways imports within a layer are allowed, a cycle between units is not (it would make
    the import order decide which module sees a half-initialised other)."""
    edges: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text("utf-8"))
        for node in _runtime_nodes(tree):
            for target in _targets(node, module, path.name == "__init__.py"):
                source, sink = _unit(module), _unit(target)
                if target.split(".")[0] == "reprobridge_sdk" and source != sink:
                    edges.setdefault(source, set()).add(sink)
    # Kahn's algorithm: whatever cannot be ordered lies on a cycle (or below one).
    remaining = {unit: set(sinks) for unit, sinks in edges.items()}
    for sinks in edges.values():
        for sink in sinks:
            remaining.setdefault(sink, set())
    while True:
        leaves = [unit for unit, sinks in remaining.items() if not sinks]
        if not leaves:
            break
        for leaf in leaves:
            del remaining[leaf]
        for sinks in remaining.values():
            sinks.difference_update(leaves)
    assert remaining == {}
