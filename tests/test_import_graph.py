"""The import graph of src/icl_kmeans has no cycle (issue 51: the review without circles).

Every module under src/icl_kmeans is a node; an edge a -> b says that a imports b anywhere in its code,
at module level or inside a function (a deferred import hides a cycle, it does not remove one), relative
(`from .x import y`, `from . import x`) or absolute (`import icl_kmeans.x`, `from icl_kmeans.x import y`).
`from p import name` is an edge to the submodule p.name when there is one, else to p itself. The parent
packages Python initialises on the way to a submodule are not edges: a package's __init__ re-exporting its
submodules is not a cycle of the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "icl_kmeans"
SRC = Path(__file__).resolve().parents[1] / "src" / PACKAGE


def module_names(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name -> file, every .py under src (a package is its __init__.py)."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that module `name` (file `path`) imports."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in modules else stem for alias in node.names]
        else:
            continue
        for target in targets:
            # `import icl_kmeans.a.b` names the module a.b (the longest known prefix)
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    modules = module_names(src)
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan), each as a path a -> ... -> a."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(set(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_through(graph, comp) for comp in comps]


def _cycle_through(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """The shortest cycle inside the component through its first module (breadth first): [a, ..., a]."""
    start = min(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    chain = []
                    while v is not None:
                        chain.append(v)
                        v = prev[v]
                    return chain[::-1] + [start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(comp)


def test_the_graph_reads_every_kind_of_import():
    """The graph sees relative, absolute and function-level imports (or the test below would pass on nothing)."""
    graph = import_graph()
    assert "icl_kmeans.review.claim_core" in graph["icl_kmeans.review.claims"]          # from .claim_core import
    assert "icl_kmeans.pipeline.provenance" in graph["icl_kmeans.review.claims"]       # from ..pipeline.provenance
    assert "icl_kmeans.review.trained" in graph["icl_kmeans.review.readme_table"]      # inside a function
    assert "icl_kmeans.review.verdict_history" in graph["icl_kmeans.review.readme_table"]  # from . import x
    assert len(graph) > 50


def test_cycles_are_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]


def test_the_import_graph_has_no_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles in src/icl_kmeans:\n" + "\n".join(" -> ".join(c) for c in found)


if __name__ == "__main__":  # python tests/test_import_graph.py [SRC]: the cycles of a checkout
    import sys

    for c in cycles(import_graph(Path(sys.argv[1]) if len(sys.argv) > 1 else SRC)):
        print(" -> ".join(c))
