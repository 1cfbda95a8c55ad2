"""One module per figure (and Table 1): <id>.py holds the figure's row (ROW, a figure_spec.Figure): its
title, its runs (what studies.build trains and evaluates for it), its scale line's fields, its caption and
its plotter. Adding a figure is adding a module here; nothing else names it.

Every module of this package is a figure's spec, found by listing the package (a module whose name starts
with "_" is a helper, not a figure). ROWS holds them in the paper's order: Figs 1-19 by number, then the
others by name (fig_em, table1). Pure Python: Snakemake imports the specs while it parses the workflow.
"""

from __future__ import annotations

import pkgutil
import re
from importlib import import_module


def paper_order(fig_id: str) -> tuple:
    """fig2 before fig10 (by number), the paper's figures before the others (fig_em, table1)."""
    number = re.fullmatch(r"fig(\d+)", fig_id)
    return (0, int(number.group(1)), "") if number else (1, 0, fig_id)


def _rows() -> tuple:
    rows = [import_module(f".{m.name}", __name__).ROW for m in pkgutil.iter_modules(__path__)
            if not m.name.startswith("_")]
    return tuple(sorted(rows, key=lambda row: paper_order(row.id)))


ROWS = _rows()
