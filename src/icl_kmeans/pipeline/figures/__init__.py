"""Figures of the paper from the aggregated tables (results/tables/{fig}.parquet), PDF and PNG.

A figure's spec (pipeline/specs/<id>.py) holds its plotter, which calls the drawing code of its kind here:
    training    training curves (Figs 2, 4, 10, 11, 13-17)
    multistep   multi-step clustering (Figs 6, 7, 8, 12, 18, EM comparison)
    heatmaps    loss and gap surfaces (Figs 3, 5), task dissimilarity (Figs 9, 19)
    profile     OH vs BN speed and memory (Fig 1; Table 1 is pipeline/table1.py)
    scale       the scale line under every title; common: colours, layout, output.

Conventions (science.md §10): every curve is the median over seeds with an inter-quartile ribbon: the
statistics of seaborn's estimator="median", errorbar=("pi", 50), computed by one vectorised pandas
groupby (common.median_band; seaborn's per-point aggregation takes minutes on 10000-step curves), drawn
at most at MAX_POINTS x values per curve. Curves carry the paper's labels (`OH:L2`) and the same
colour in every figure (OH blue, BN vermilion, NA green; NE lighter and dashed, L2 solid); Lloyd's
is black, EM purple (dotted); relative-loss axes have a dotted line at 1. Every figure states its
scale (the preset, training, seeds, steps, n, ... and the paper's) under its title. Seaborn sets the
theme and draws Fig 1's heatmaps.

Output bytes are deterministic: the PDF has no creation date, the PNG (150 dpi) no timestamp, and
nothing is random (the percentile interval needs no bootstrap). A figure, or any panel of it,
without data raises ValueError instead of drawing an empty plot.

Matplotlib and seaborn are imported when plotting, not on import: Snakemake imports scale_line and
figure_settings while it parses the workflow.
"""

from __future__ import annotations

import os

import pandas as pd

from ...emd_table import emd_matrix
from ...profile_table import relative_gain
from .common import PALETTE, require, save, select_part, style
from ..figure_registry import drawn_ids, figure, ids, is_part
from .panels import caption_line
from .scale import SCALE_KEYS, figure_settings, kind, paper_settings, scale_line

def draw(fig_id: str, df: pd.DataFrame, settings: dict):
    """The matplotlib Figure of fig_id from its aggregated table (a DataFrame), by its spec's plotter.

    A figure drawn in parts (the registry's split: Figs 15, 16) is drawn one part at a time: fig_id is the
    part's id (fig15d), df the figure's table (results/tables/fig15.parquet), of which the part's rows are drawn."""
    row = figure(fig_id)
    if row.plotter is None:
        raise ValueError(f"{fig_id!r} is not drawn by the figure modules; expected one of {list(ids(drawn=True))}")
    if row.split and not is_part(fig_id):
        raise ValueError(f"{fig_id!r} is drawn in parts, one file each: draw one of {list(drawn_ids(fig_id))}")
    require(df, fig_id, "the figure (the table is empty)")
    if is_part(fig_id):
        df = select_part(df, fig_id)
    style()
    return row.plotter(df, settings, fig_id=fig_id)


def plot(fig: str, table, pdf, png, settings: dict) -> None:
    """Reads results/tables/{fig}.parquet (path or DataFrame) and writes the figure as PDF and PNG; for a part
    id (fig15d), its figure's table (results/tables/fig15.parquet) and the part."""
    import pyarrow.parquet as pq

    df = table if isinstance(table, pd.DataFrame) else pq.read_table(table).to_pandas()
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    figure = draw(fig, df, settings)
    save(figure, pdf, png)


__all__ = ["plot", "draw", "scale_line", "caption_line", "figure_settings", "kind", "paper_settings", "relative_gain", "emd_matrix",
           "PALETTE", "SCALE_KEYS"]
