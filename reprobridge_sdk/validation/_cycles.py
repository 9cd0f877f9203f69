"""The groups of launchers that need each other (R015, spec §6.7 "needs")."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["cycles"]


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Each group of ``graph``'s nodes on a cycle, its members in the graph's order.

    A group is a strongly connected component that holds a cycle (two or more nodes, or one
    that points at itself); its members are ordered as ``graph``'s keys, whatever the order
    in which the traversal meets them.
    """
    order = {node: index for index, node in enumerate(graph)}
    return [
        sorted(group, key=order.__getitem__)
        for group in _components(graph)
        if len(group) > 1 or group[0] in graph[group[0]]
    ]


def _components(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components of ``graph`` (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root, needs in graph.items():
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(needs))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                found.append(group)
    return found
