"""Aggregated tables of every figure at smoke scale, built by the real aggregation code from synthetic runs
and evaluations (no training): what tests/test_figures.py and tests/test_figure_layout.py draw."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from icl_kmeans.pipeline import aggregate as agg
from icl_kmeans.pipeline import figure_registry, studies
from test_aggregate import run_files, training_fixture, write_eval

# Four facets of these suffice for most tests (test time); fig2 and fig17 keep all, several blocks of rows.
TRIM = ("fig4", "fig10", "fig11", "fig13", "fig14", "fig15", "fig16")


def aggregated_tables(root: Path, registry, trim: bool = True) -> dict:
    """fig -> aggregated table (DataFrame) for every figure and Table 1; trim=False: every facet."""
    out = {}
    for fig in studies.FIGURES + ("table1",):
        target = root / "tables" / f"{fig}.parquet"
        if fig in registry.training:
            curves = training_fixture(root, fig, registry, seeds=(1, 2, 3), diverged="first",
                                      trim=4 if trim and fig in TRIM else 0)
            agg.aggregate(fig, target, curves=curves, files=run_files(root, curves, [1, 2, 3]))
        else:
            source = figure_registry.figure(fig).evaluation  # fig18 draws fig8's
            src = write_eval(root / "eval" / f"{source}.parquet", source, registry.evaluations[source])
            agg.aggregate(fig, target, source=src)
        out[fig] = pq.read_table(target).to_pandas()
    return out
