"""Drawing helpers shared by every figure kind: the paper's curve labels and colours, titles, the
median-over-seeds line with its inter-quartile ribbon, the layout (title, scale line, legend) and the
deterministic PDF/PNG output. Matplotlib and seaborn are imported when drawing, not on import."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..figure_registry import figure
from .scale import scale_line

CURVE_ORDER = ("OH:NE", "OH:L2", "BN:NE", "BN:L2", "NA:NE", "NA:L2", "Lloyd", "EM")
PALETTE = {"OH:L2": "#0072B2", "OH:NE": "#56B4E9", "BN:L2": "#D55E00", "BN:NE": "#E69F00",
           "NA:L2": "#009E73", "NA:NE": "#7FC97F", "Lloyd": "#000000", "EM": "#CC79A7"}
DASHES = {"OH:L2": "", "BN:L2": "", "NA:L2": "", "OH:NE": (4, 2), "BN:NE": (4, 2), "NA:NE": (4, 2),
          "Lloyd": "", "EM": (1, 1.5)}
METRIC_LABELS = {"train_loss": "training loss", "rel_val_loss": "relative validation loss",
                 "log_objective": "mean log k-means objective", "objective": "mean k-means objective",
                 "misclustering": "misclustering rate"}
DPI = 150
MAX_POINTS = 500  # x values drawn per curve (training curves of the paper have 10000 steps)
DESCENDING = {"tau"}  # smooth (tau = 1) first, as in the paper

# Training-figure layout: facet keys that select a block of two rows (the rest are columns).


def require(df: pd.DataFrame, fig: str, what: str) -> pd.DataFrame:
    if df is None or len(df) == 0:
        raise ValueError(f"{fig}: no data for {what}; refusing to draw an empty plot")
    return df


def facet_label(key: str, value) -> str:
    if key == "panel":
        return f"({value})"
    if key == "family":
        return str(value)
    name = {"tau": "τ", "lr": "lr"}.get(key, key)
    return f"{name}={value:g}" if isinstance(value, (float, np.floating)) else f"{name}={value}"


def combos(df: pd.DataFrame, keys: list[str]) -> list[tuple]:
    if not keys:
        return [()]
    combos = df[keys].drop_duplicates()
    combos = combos.sort_values(keys, ascending=[k not in DESCENDING for k in keys], kind="stable")
    return [tuple(r) for r in combos.itertuples(index=False)]


def select_rows(df: pd.DataFrame, keys: list[str], values: tuple) -> pd.DataFrame:
    mask = np.ones(len(df), dtype=bool)
    for k, v in zip(keys, values):
        mask &= (df[k] == v).to_numpy()
    return df[mask]


def curve_order(curves) -> list[str]:
    present = set(curves)
    return [c for c in CURVE_ORDER if c in present] + sorted(present - set(CURVE_ORDER))


def median_band(data: pd.DataFrame, x: str, y: str = "value", by: str = "curve") -> pd.DataFrame:
    """Per (by, x): the median of y over the rows (seeds) and its inter-quartile range q25, q75.

    The same statistics as seaborn's lineplot(estimator="median", errorbar=("pi", 50)) (linear
    interpolation, as numpy.percentile), computed in one vectorised groupby: seaborn's per-point
    aggregation takes minutes on the paper's 10000-step curves.
    """
    q = data.groupby([by, x], sort=True)[y].quantile([0.25, 0.5, 0.75]).unstack()
    q.columns = ["q25", "median", "q75"]
    return q.reset_index()


def thin(data: pd.DataFrame, x: str, max_points: int = MAX_POINTS) -> pd.DataFrame:
    """At most max_points distinct x values (every k-th, always keeping the last): keeps PDFs small."""
    xs = np.sort(data[x].unique())
    if len(xs) <= max_points:
        return data
    k = int(math.ceil(len(xs) / max_points))
    keep = set(xs[::k]) | {xs[-1]}
    return data[data[x].isin(keep)]


FAINT = 0.35  # the opacity of a curve trained for the preset's short M (figures.panels)


def draw_lines(ax, data: pd.DataFrame, x: str, y: str = "value", curves=None, markers: bool = False,
               faint=()) -> None:
    """Median over seeds with the inter-quartile ribbon, one line per curve (paper colours and dashes);
    the curves in `faint` (short runs, a pipeline check) drawn at FAINT opacity."""
    band = median_band(thin(data, x), x, y)
    order = curve_order(curves if curves is not None else data["curve"].unique())
    for c in order:
        b = band[band["curve"] == c]
        if b.empty:
            continue
        color, dash = PALETTE.get(c, "#777777"), DASHES.get(c, "")
        z = 3 if c in ("Lloyd", "EM") else 2
        # a curve of one point (every seed diverged before its second validation) is drawn as a dot
        alpha = FAINT if c in faint else 1.0
        (line,) = ax.plot(b[x], b["median"], color=color, lw=1.5, label=c, zorder=z, alpha=alpha,
                          marker="o" if markers or len(b) == 1 else None, ms=4)
        if dash:
            line.set_dashes(dash)
        if (b["q75"] > b["q25"]).any():
            ax.fill_between(b[x], b["q25"], b["q75"], color=color, alpha=0.2 * alpha, lw=0, zorder=z - 1)


LEGEND_ENTRY_INCHES = 1.0  # one curve's entry at fontsize 8 with its handle: what fits in one row


def legend(fig, curves, top_inches: float) -> int:
    """One row of curves across the top, wrapped where the figure is too narrow; returns the rows."""
    from matplotlib.lines import Line2D

    handles = []
    for c in curve_order(curves):
        h = Line2D([], [], color=PALETTE.get(c, "#777777"), lw=2, label=c)
        if DASHES.get(c, ""):
            h.set_dashes(DASHES[c])
        handles.append(h)
    ncol = max(1, min(len(handles), int(fig.get_figwidth() / LEGEND_ENTRY_INCHES)))
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1.0 - top_inches / fig.get_figheight()),
               ncol=ncol, frameon=False, fontsize=8, handlelength=2.6)
    return -(-len(handles) // ncol)


def finish(fig, fig_id: str, settings: dict, legend_curves=None, extra: str = "") -> None:
    """Title, scale line (wrapped), legend of the curves; the panels fill the rest (sizes in inches)."""
    title = figure(fig_id).title
    sub = wrap(scale_line(fig_id, settings) + (f"; {extra}" if extra else ""), int(fig.get_figwidth() * 15))
    h = fig.get_figheight()
    fig.suptitle(title, y=1 - 0.08 / h, fontsize=11, va="top")
    fig.text(0.5, 1 - 0.34 / h, sub, ha="center", va="top", fontsize=7.5, color="0.25")
    top = 0.34 + 0.13 * (sub.count("\n") + 1) + 0.06
    if legend_curves is not None:
        top += 0.3 + 0.18 * (legend(fig, legend_curves, top) - 1)
    fig.tight_layout(rect=(0, 0, 1, 1 - (top - 0.12) / h))


def wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, max(width, 40)))


def save(fig, pdf, png) -> None:
    import matplotlib.pyplot as plt

    for path in (pdf, png):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(pdf, format="pdf", metadata={"CreationDate": None, "ModDate": None})
    fig.savefig(png, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)


def style() -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(context="paper", style="whitegrid")
    plt.rcParams.update({"svg.hashsalt": "icl-kmeans", "pdf.compression": 6, "axes.titlesize": 9,
                         "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7})


def log_y(ax) -> None:
    """Log y-axis labelled with plain numbers (0.6, 2, 10) instead of 6 x 10^-1; matplotlib thins the labels."""
    from matplotlib.ticker import LogFormatterSciNotation

    class Plain(LogFormatterSciNotation):
        def __call__(self, x, pos=None):
            return f"{x:g}" if super().__call__(x, pos) else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(Plain())
    ax.yaxis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(1.2, 0.6)))


def finite(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    ok = np.isfinite(df["value"].to_numpy(dtype=float))
    return df[ok], int((~ok).sum())


def integer_x(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
