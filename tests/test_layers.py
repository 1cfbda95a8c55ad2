"""The pipeline writes, the review reads: no module of icl_kmeans.pipeline imports icl_kmeans.review, so
the two packages never import each other in a circle."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "icl_kmeans"


def imported_modules(path: Path) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved against its package)."""
    package = list(path.relative_to(SRC).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}  # `from . import review`
    return names


def imports_of(subpackage: str) -> dict[str, set[str]]:
    return {str(p.relative_to(SRC)): imported_modules(p) for p in sorted((PACKAGE / subpackage).rglob("*.py"))}


def test_the_resolver_sees_relative_and_absolute_imports():
    module = PACKAGE / "pipeline" / "job_context.py"
    assert "icl_kmeans.pipeline.provenance" in imported_modules(module)
    assert "icl_kmeans.pipeline.provenance" in imported_modules(PACKAGE / "review" / "manifest.py")


def test_no_pipeline_module_imports_the_review():
    offenders = {path: sorted(n for n in names if n == "icl_kmeans.review" or n.startswith("icl_kmeans.review."))
                 for path, names in imports_of("pipeline").items()}
    offenders = {path: names for path, names in offenders.items() if names}
    assert not offenders, offenders


def test_the_bench_modules_import_each_other_in_one_direction_and_use_public_names():
    """bench runs bench_stack's section; bench_stack never imports bench, nor private names of training."""
    stack_side = imported_modules(PACKAGE / "benchmark" / "bench_stack.py")
    bench = "icl_kmeans.benchmark.bench"
    assert bench not in stack_side and not any(n.startswith(f"{bench}.") for n in stack_side)
    private = sorted(n for n in stack_side if n.startswith("icl_kmeans.training.") and n.split(".")[-1].startswith("_"))
    assert not private, private


def test_the_benchmark_is_outside_the_core():
    """The benchmark imports the core; the core never imports the benchmark (cli.py only starts it)."""
    users = {str(p.relative_to(SRC)) for p in sorted(PACKAGE.rglob("*.py")) if "benchmark" not in p.parts
             and any(n == "icl_kmeans.benchmark" or n.startswith("icl_kmeans.benchmark.") for n in imported_modules(p))}
    assert users == {"icl_kmeans/cli.py"}, users
    assert not list(PACKAGE.glob("bench*.py"))


# The attention kernels. A module that calls one computes the layer's attention: layer.py alone does
# (attention.py defines them), so there is one forward, which training and ClusterTransformer share.
KERNELS = {"soft_distance_attention", "hard_distance_attention", "scaled_dot_product_attention"}
KERNEL_HOMES = {"icl_kmeans/attention.py", "icl_kmeans/attention_cpu.py", "icl_kmeans/layer.py"}


def names_used(path: Path) -> set[str]:
    """Every identifier a file names: variables, attributes and imported names."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.name.split(".")[-1])
    return names


def test_the_layer_is_computed_in_one_place():
    users = {str(p.relative_to(SRC)) for p in sorted(PACKAGE.rglob("*.py")) if names_used(p) & KERNELS}
    assert "icl_kmeans/layer.py" in users  # the resolver sees the one forward
    assert users <= KERNEL_HOMES, sorted(users - KERNEL_HOMES)


def test_training_and_the_model_run_the_layer_module():
    for module in ("model.py", "training.py"):
        assert "icl_kmeans.layer" in imported_modules(PACKAGE / module), module


def test_the_top_level_modules_import_each_other_without_a_cycle():
    """Imports inside functions count too (training.train once imported the loop back from stacked)."""
    modules = {p.stem: p for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")}
    graph = {name: {m.split(".")[1] for m in imported_modules(path)
                    if m.startswith("icl_kmeans.") and m.split(".")[1] in modules and m.split(".")[1] != name}
             for name, path in modules.items()}
    assert "run_config" in graph["training"] and "checkpoint" in graph["training"]  # the resolver sees them
    done, path = set(), []

    def visit(name):
        assert name not in path, " -> ".join(path[path.index(name):] + [name])
        if name in done:
            return
        path.append(name)
        for dep in sorted(graph[name]):
            visit(dep)
        path.pop()
        done.add(name)

    for name in sorted(graph):
        visit(name)
