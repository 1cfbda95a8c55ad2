"""A figure is its spec (pipeline/specs/<id>.py): the pipeline's code names no figure outside it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from icl_kmeans.pipeline import figure_registry, specs, studies

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "icl_kmeans"
SPECS = PACKAGE / "pipeline" / "specs"
# The review is left out: a claim names the figure table it reads.
CHECKED = sorted(p for p in [*PACKAGE.glob("*.py"), *(PACKAGE / "pipeline").rglob("*.py")] if SPECS not in p.parents)
IDS = set(figure_registry.ids()) | set(figure_registry.PART_IDS)


def _docstrings(tree) -> set[int]:
    """ids of the docstring nodes of a module, its classes and functions (prose may name figures)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def figure_ids_in_code(source: str) -> list[str]:
    """The figure ids (fig7, fig15d, table1) that code names: in a string, or in a name (plot_fig7, TAU_FIG10)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            found += [w for w in re.findall(r"\w+", node.value) if w in IDS]
        names = {ast.Name: "id", ast.FunctionDef: "name", ast.ClassDef: "name", ast.arg: "arg", ast.keyword: "arg"}
        for kind, field in names.items():
            name = getattr(node, field, None) if isinstance(node, kind) else None
            if name and re.search(r"fig(\d+|_em)(?![\d_a-z])", name.lower()):
                found.append(name)
    return found


def test_no_figure_id_outside_its_spec():
    named = {str(p.relative_to(PACKAGE)): ids for p in CHECKED if (ids := figure_ids_in_code(p.read_text()))}
    assert named == {}


def test_the_check_finds_figure_ids_in_strings_and_names():
    assert figure_ids_in_code('if fig == "fig11":\n    pass\n') == ["fig11"]
    assert figure_ids_in_code("def plot_fig7(df):\n    pass\n") == ["plot_fig7"]
    assert figure_ids_in_code('x = f"results/tables/{fig}.parquet" if fig != "fig15d" else 1\n') == ["fig15d"]
    assert figure_ids_in_code('"""Fig 7: fig7 in prose."""\nkey = "fig13_train_n"\n') == []


def test_each_spec_module_is_its_figure():
    modules = sorted(p.stem for p in SPECS.glob("*.py") if not p.stem.startswith("_"))
    assert modules == sorted(row.id for row in figure_registry.TABLE)
    for row in figure_registry.TABLE:
        assert row.plotter is None or callable(row.plotter), row.id  # never a name looked up by a string
        assert row.caption, row.id


def test_the_specs_come_in_the_papers_order():
    assert [row.id for row in specs.ROWS][:4] == ["fig1", "fig2", "fig3", "fig4"]
    assert [row.id for row in specs.ROWS][-3:] == ["fig19", "fig_em", "table1"]


def test_studies_build_only_loops_over_the_specs():
    """studies.build names no figure: its body reads the specs' runs."""
    source = Path(studies.__file__).read_text()
    assert figure_ids_in_code(source) == []
    assert "row.runs(st, s)" in source
