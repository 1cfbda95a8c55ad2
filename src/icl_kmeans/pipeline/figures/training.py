"""Training figures (Figs 2, 4, 10, 11, 13-17): per block of facets, the training loss (top row, log y-axis)
and the relative validation loss (bottom row, linear y-axis from the first validation after step 0, whose
values of 10-30 would squeeze the margin below 1 that carries the paper's message; a log axis in a panel whose
drawn values span more than WIDE_SPAN, as a diverging learning rate's do; dotted line at 1, each curve's final
median printed after its end), one column per facet. Where the paper names a figure's parts
(Figure 14(a), 15(d), 16(a)-(d), 17(a)-(b)), each block of rows is one part, with the paper's letter (the
registry's parts); Figs 15 and 16 are drawn one part a file (fig15d: its title names the part).

As in the paper, the training loss is first averaged per (run, seed) over each validation interval
(block_means: eval_every steps, 50 in the paper), then the median and IQR over seeds are drawn: raw
per-step losses are measured on fresh tasks each step and would make the curves and bands noisy.
The aggregated table keeps the raw per-step values (the claims and any other reader use them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .common import (FONT, METRIC_LABELS, PAGE_WIDTH, combos, curve_order, draw_lines, facet_label, finish, finite,
                     integer_x, log_y, require, select_rows)
from .. import figure_registry
from .panels import is_short, short_m

SHORT_LABELS = {"train_loss": "training loss", "rel_val_loss": "rel. val. loss"}


def figure_size(nrows: int, ncols: int) -> tuple[float, float]:
    """A page's width at most; rows shrink so that eight rows (four parts) still fit a page's height."""
    width = min(PAGE_WIDTH, 2.2 * ncols + 1.2)
    row = 1.45 if nrows <= 4 else max(0.95, 7.9 / nrows)
    return width, row * nrows + 1.0


def facet_keys(df: pd.DataFrame) -> list[str]:
    cols = list(df.columns)
    return cols[cols.index("figure") + 1: cols.index("curve")]


def block_means(df: pd.DataFrame) -> pd.DataFrame:
    """The training table with train_loss averaged per (run, seed) over each validation interval.

    The train_loss rows of steps v_prev < step <= v, with v_prev, v consecutive validation steps of
    that (run, seed) (its rel_val_loss rows: every eval_every steps and the last step), become one row
    at step v holding their mean; steps after the last validation (a run that diverged) form a last
    block at its last step. Non-finite values are left out of a mean. Other metrics are unchanged.
    """
    is_train = (df["metric"] == "train_loss").to_numpy()
    train = df[is_train]
    if train.empty:
        return df
    train = train[np.isfinite(train["value"].to_numpy(dtype=float))]
    ends = (df.loc[df["metric"] == "rel_val_loss", ["run", "seed", "step"]].drop_duplicates()
            .rename(columns={"step": "block_end"}).sort_values("block_end", kind="stable"))
    ends["block_end"] = ends["block_end"].astype("int64")
    train = pd.merge_asof(train.sort_values("step", kind="stable").astype({"step": "int64"}), ends, left_on="step",
                          right_on="block_end", by=["run", "seed"], direction="forward")
    last = train.groupby(["run", "seed"])["step"].transform("max")
    train["step"] = train["block_end"].fillna(last).astype("int64")
    keys = [c for c in df.columns if c != "value"]
    means = train.groupby(keys, dropna=False, sort=True)["value"].mean().reset_index()[list(df.columns)]
    return pd.concat([df[~is_train], means], ignore_index=True)


def _not_in_subset(top, bottom, where: str) -> None:
    for ax in (top, bottom):
        ax.axis("off")
    top.text(0.5, 0.5, f"{where}:\nnot in this subset", transform=top.transAxes, ha="center", va="center",
             fontsize=FONT["note"], color="0.4")


def plot_training(df: pd.DataFrame, settings: dict, fig_id: str, blocks=()):
    """blocks: the facet keys that select a block of two rows (the rest are columns), from the figure's spec.
    Where the spec names parts (Fig 15's (d, tau) cells, 15(d): d = 32, tau = 0.1) each block is one, with
    the part's letter whichever blocks a run holds; Figs 15 and 16 are drawn one part (one block) a file."""
    import matplotlib.pyplot as plt

    require(df, fig_id, "any training run")
    df = block_means(df)
    facets = facet_keys(df)
    row = figure_registry.figure(fig_id)  # a part's (fig15d) is its figure's
    part = figure_registry.is_part(fig_id)  # one part on its own: the title names it, not the rows
    block_keys = [k for k in blocks if k in facets]
    col_keys = [k for k in facets if k not in block_keys]
    blocks, cols = combos(df, block_keys), combos(df, col_keys)
    timed = row.timed_alone
    x = "time" if timed else "step"
    if timed:
        df = with_wall_clock(df, fig_id)
    nrows, ncols = 2 * len(blocks), len(cols)
    # A preset's headline cells train longer than the rest (settings headline_cells): such panels say
    # their M in the title, and columns that mix M do not share the x-axis.
    last_step = df.groupby(block_keys + col_keys)["step"].max() if block_keys + col_keys else df["step"].max()
    mixed = not timed and np.ndim(last_step) and pd.Series(last_step).nunique() > 1
    figure, axes = plt.subplots(nrows, ncols, figsize=figure_size(nrows, ncols), squeeze=False,
                                sharex=False if timed or mixed else "col")
    curves = df["curve"].unique()
    compact = nrows > 4  # rows under 1.2 in: the short metric labels fit beside them
    # per column, the last block that holds data (a subset can leave the grid's last row empty there)
    last = [max((b for b, bval in enumerate(blocks)
                 if not select_rows(select_rows(df, block_keys, bval), col_keys, cval).empty), default=len(blocks) - 1)
            for cval in cols]
    for b, bval in enumerate(blocks):
        bdf = select_rows(df, block_keys, bval)
        block_name = "" if part else _block_name(fig_id, dict(zip(block_keys, bval)), len(blocks))
        # the row's labels go on its first panel that holds data (a subset can leave the first column empty)
        first = next((c for c, cval in enumerate(cols) if not select_rows(bdf, col_keys, cval).empty), 0)
        for c, cval in enumerate(cols):
            panel = select_rows(bdf, col_keys, cval)
            labels = [facet_label(k, v) for k, v in zip(col_keys, cval)]
            where = ", ".join(labels)
            if col_keys[:1] == ["panel"]:
                where = labels[0] + " " + ", ".join(labels[1:])
            if panel.empty and settings.get("subset"):
                # a subset's cells need not fill the grid (Fig 10 at tau = 0.1 for d = 4 and 32, tau = 1 for d = 4
                # only): the missing panel says so instead of being drawn empty
                _not_in_subset(axes[2 * b, c], axes[2 * b + 1, c], f"{block_name}, {where}" if block_name else where)
                continue
            short, where = _length_title(panel, where, fig_id, settings, timed)
            where_all = f"{block_name}, {where}" if block_name else where  # for error messages
            lost = short if len(short) < panel["curve"].nunique() else set()  # short curves in a long panel
            for r, metric in enumerate(("train_loss", "rel_val_loss")):
                ax = axes[2 * b + r, c]
                data = require(panel[panel["metric"] == metric], fig_id, f"{metric} at {where_all}")
                _draw_metric(ax, data, metric, fig_id, where_all, x=x, curves=curves, short=short, lost=lost)
                if metric == "train_loss":
                    ax.set_title(where, fontsize=FONT["panel"] if "\n" not in where else FONT["tick"])
                    diverged_note(ax, panel)
                if timed:
                    ax.set_xlim(left=0)  # every row from zero, so that the parts compare
                else:
                    integer_x(ax)
                xlabel = "wall-clock time (s)" if timed else "training step"
                bottom = r == 1 and b == last[c]  # the column's last panel that holds data
                ax.set_xlabel(xlabel if (r == 1 and (timed or bottom)) else "")
                if bottom:  # shared x-axes label only the grid's last row; a subset's gap below needs its own
                    ax.xaxis.set_tick_params(labelbottom=True)
                label = (SHORT_LABELS if compact else METRIC_LABELS)[metric]
                if r == 0 and block_name:
                    label = f"{block_name}\n{label}"
                ax.set_ylabel(label if c == first else "")
    div = df.loc[df["status"] == "diverged", ["run", "seed"]].drop_duplicates()
    extra = f"{len(div)} diverged (run, seed) pairs kept (curves end at their last finite step)" if len(div) else ""
    finish(figure, fig_id, settings, legend_curves=curves, extra=extra)
    return figure


def with_wall_clock(df: pd.DataFrame, fig_id: str) -> pd.DataFrame:
    """The training rows with a `time` column: the median wall-clock time over seeds of each (run, step)."""
    wall = require(df[df["metric"] == "wall_time"], fig_id, "wall_time")
    t = wall.groupby(["run", "step"], as_index=False)["value"].median().rename(columns={"value": "time"})
    return df[df["metric"] != "wall_time"].merge(t, on=["run", "step"], how="left")


def _block_name(fig_id: str, block: dict, n_blocks: int) -> str:
    """A block's facets, which label its rows (the first column's y-labels), after the paper's letter of the
    block (Figure 14(b)), not its position; a figure drawn whole with one block (the committed paper-scale
    Fig 14 at tau = 0.1) is named by its facets alone."""
    name = ", ".join(facet_label(k, v) for k, v in block.items())
    letter = figure_registry.part_letter(fig_id, block) if n_blocks > 1 else None
    return f"({letter}) {name}" if letter and name else name


def _draw_metric(ax, data: pd.DataFrame, metric: str, fig_id: str, where: str, *, x: str, curves, short: set,
                 lost: set) -> None:
    """One metric's curves in one panel: finite values only; the validation row from the first validation
    after step 0, with one Lloyd step marked; a panel of short curves only on the short background."""
    data, _ = finite(data)
    require(data, fig_id, f"finite {metric} at {where}")
    if metric == "rel_val_loss":
        data = after_first_step(data)
        ax.axhline(1.0, ls=":", color="0.2", lw=1.2, zorder=1)  # before the end labels read the y-range
    draw_lines(ax, data, x=x, curves=curves, faint=short, end_marks=lost, end_values=metric == "rel_val_loss")
    if short and short >= set(data["curve"]):
        ax.set_facecolor(SHORT_FACE)
    # a validation panel spanning decades (a diverging learning rate) would lay every curve flat on a linear axis
    lo, hi = ax.dataLim.intervaly  # what is drawn: medians and ribbons, the line at 1
    if metric == "train_loss" or (lo > 0 and hi / lo > WIDE_SPAN):
        log_y(ax)


WIDE_SPAN = 100.0  # a relative-validation panel whose drawn values span more than this factor gets a log axis


def after_first_step(data: pd.DataFrame) -> pd.DataFrame:
    """The validations after step 0 (a curve validated only at step 0, every seed diverged at once, keeps it)."""
    later = data[data["step"] > 0]
    kept = data[data["curve"].isin(set(data["curve"]) - set(later["curve"]))]
    return pd.concat([later, kept], ignore_index=True)


SHORT_FACE = "#f3f3f3"  # the background of a panel whose runs all stopped at the short M (a pipeline check)


def curve_ms(panel: pd.DataFrame) -> dict:
    """curve -> M, where the curve's runs that did not diverge stopped (a diverged run stops early)."""
    finished = panel[panel["status"] != "diverged"]
    return {c: int(g["step"].max()) for c, g in finished.groupby("curve")}


def _curves_named(curves: set, present: set) -> str:
    """`L2` when the curves are all of a regularizer's curves in the panel, else the labels."""
    for reg in ("NE", "L2"):
        if curves == {c for c in present if c.endswith(":" + reg)}:
            return reg
    return ", ".join(curve_order(curves))


def _length_title(panel, where, fig_id, settings, timed) -> tuple[set, str]:
    """The curves of a panel trained for the preset's short M (drawn faint), and the panel title with
    its M: `(M=3000)` for long runs, `(short: M=150)` for short ones (a grey panel; the caption says
    they stop before the learning transition). A panel whose facets are all in its block's row label
    has only this for a title."""
    ms = curve_ms(panel)
    short = {c for c, m in ms.items() if is_short(m, fig_id, settings)}
    long_ms = sorted({m for c, m in ms.items() if c not in short}, reverse=True)

    def below(note: str) -> str:
        return f"{where}\n{note}" if where else note

    if not ms:  # every run diverged: no M reached; say so (Fig 11 at lr = 1)
        return short, below("(every run diverged)")
    # short lines: a panel of a five-column figure is 1.2 in wide
    if short and not long_ms:
        return short, below(f"(short: M={max(ms[c] for c in short)})")
    if short:  # e.g. Fig 4 at tau = 0.1: "L2: M=2000 / NE: M=150, faint"
        return short, below(f"{_curves_named(set(ms) - short, set(ms))}: M={'/'.join(map(str, long_ms))}\n"
                            f"{_curves_named(short, set(ms))}: M={min(ms[c] for c in short)}, faint")
    if not timed and long_ms != [short_m(fig_id, settings)]:
        where = f"{where} (M={'/'.join(map(str, long_ms))})" if where else f"(M={'/'.join(map(str, long_ms))})"
    return short, where


def diverged_note(ax, panel: pd.DataFrame) -> None:
    div = panel[panel["status"] == "diverged"]
    if div.empty:
        return
    total = panel.groupby("curve")["seed"].nunique()
    bad = div.groupby("curve")["seed"].nunique()
    # one curve a line, inside the panel: a long line ran over the next panel
    text = "diverged:\n" + "\n".join(f"{c} {bad[c]}/{total[c]}" for c in curve_order(bad.index))
    ax.text(0.97, 0.95, text, transform=ax.transAxes, ha="right", va="top", fontsize=FONT["note"], color="#B00020",
            linespacing=1.0)
