"""Drawing helpers shared by every figure kind: the paper's curve labels and colours, titles, the
median-over-seeds line with its inter-quartile ribbon, the layout (title, scale line, legend) and the
deterministic PDF/PNG output. Matplotlib and seaborn are imported when drawing, not on import."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..figure_registry import figure
from .scale import short_scale_line

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
# The paper's order of the task families ("cauchy, gumbel, laplace, lognormal, normal", §3): cauchy is
# the first column and first row of its Fig 8, so its "lower-right 4 x 4" is contiguous.
FAMILY_ORDER = ("cauchy", "gumbel", "laplace", "lognormal", "normal")
PAGE_WIDTH = 6.75  # inches: every figure fits a page's text width (pipeline/figures/layout.py checks it)
FONT = {"title": 9, "panel": 8, "label": 8, "tick": 7, "note": 7}  # points, at PAGE_WIDTH: >= 7 in print


def require(df: pd.DataFrame, fig: str, what: str) -> pd.DataFrame:
    if df is None or len(df) == 0:
        raise ValueError(f"{fig}: no data for {what}; refusing to draw an empty plot")
    return df


def select_part(df: pd.DataFrame, part_id: str) -> pd.DataFrame:
    """The rows of a figure's table that a part drawn on its own holds (fig15d: d = 32, tau = 0.1)."""
    from ..figure_registry import part_of

    row, part = part_of(part_id)
    missing = [k for k, _ in part.facets if k not in df.columns]
    if missing:
        raise ValueError(f"{part_id}: the table of {row.id} has no column {missing} to select part ({part.letter})")
    mask = np.ones(len(df), dtype=bool)
    for k, v in part.facets:
        mask &= np.isclose(df[k].to_numpy(dtype=float), float(v))
    return require(df[mask], part_id, f"part ({part.letter}) of {row.id}, {part.label()}")


def facet_label(key: str, value) -> str:
    if key == "panel":
        return f"({value})"
    if key == "family":
        return str(value)
    name = {"tau": "τ", "lr": "lr"}.get(key, key)
    if key == "tau":
        return f"{name}={tau_text(value)}"
    return f"{name}={value:g}" if isinstance(value, (float, np.floating)) else f"{name}={value}"


def tau_text(tau) -> str:
    """tau as the paper prints it: 1, 0.25, 0.14 (for 1/7), 0.1."""
    return f"{float(tau):.2g}"


def combos(df: pd.DataFrame, keys: list[str]) -> list[tuple]:
    if not keys:
        return [()]
    combos = df[keys].drop_duplicates()
    rank = {f: i for i, f in enumerate(FAMILY_ORDER)}
    combos = combos.sort_values(keys, ascending=[k not in DESCENDING for k in keys], kind="stable",
                                key=lambda col: col.map(rank) if col.name == "family" else col)
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
               faint=(), end_marks=(), end_values: bool = False) -> None:
    """Median over seeds with the inter-quartile ribbon, one line per curve (paper colours and dashes);
    the curves in `faint` (short runs, a pipeline check) drawn at FAINT opacity, those in `end_marks`
    with a marker at their last point (a short curve in a long panel, which would be lost at its left
    edge); end_values: each curve's final median printed after its end (end_labels)."""
    band = median_band(thin(data, x), x, y)
    ends = {}
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
        if c in end_marks:
            ax.plot(b[x].iloc[-1:], b["median"].iloc[-1:], marker="o", ms=4, color=color, ls="", zorder=z + 1)
        ends[c] = (float(b[x].iloc[-1]), float(b["median"].iloc[-1]), c in faint)
    if end_values and ends:  # placed once the layout is final (end_labels)
        ax.end_values = ends


def end_labels(ax, ends: dict) -> None:
    """Each curve's final value ({curve: (x, y, faint)}) printed right of the panel's last x, in the curve's
    colour, moved apart vertically so that no two labels overlap. Where the panel is too short for all of
    them, the full-length curves' labels are kept first (then in the legend's order)."""
    import matplotlib.transforms as mtransforms

    x_max = max(e[0] for e in ends.values())
    figure = ax.figure
    text = {c: end_text(e[1]) for c, e in ends.items()}
    # room for the labels right of the curves, inside the panel: the x-axis ends a label's width after x_max
    width_pts = ax.get_position().width * figure.get_figwidth() * 72
    chars = max(len(t) for t in text.values())
    need = min(0.45, (0.62 * chars + 0.7) * FONT["note"] / width_pts)  # the longest label and a gap
    lo, hi = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    ax.set_xlim(lo, max(hi, x_max + (x_max - lo) * need / (1 - need)))  # never narrower (a one-point panel)
    ax.set_xticks(ticks)  # the ticks the layout was made with: a new one at the far end could leave the canvas
    # on a log axis the labels are spaced in log10 of the data, where the axis is linear
    to_axis, from_axis = (np.log10, lambda v: 10.0 ** v) if ax.get_yscale() == "log" else (float, float)
    y0, y1 = (to_axis(v) for v in ax.get_ylim())
    height_pts = ax.get_position().height * figure.get_figheight() * 72
    gap = 1.2 * FONT["note"] / height_pts * (y1 - y0)  # one line of text, in axis units
    room = int((y1 - y0 - 0.5 * gap) / gap)
    rank = {c: i for i, c in enumerate(curve_order(ends))}
    kept = sorted(ends, key=lambda c: (ends[c][2], rank[c]))[:room]
    order = sorted(kept, key=lambda c: ends[c][1])
    placed = []
    for c in order:  # a label's centre 0.75 line inside the panel: its box stays in the panel
        y = min(max(to_axis(ends[c][1]), y0 + 0.75 * gap), y1 - 0.75 * gap)
        if placed and y < placed[-1] + gap:
            y = placed[-1] + gap
        placed.append(y)
    ceiling = y1 - 0.75 * gap
    for i in range(len(placed) - 1, -1, -1):  # pushed past the top: move down only the labels that must move
        placed[i] = min(placed[i], ceiling)
        ceiling = placed[i] - gap
    shift = mtransforms.offset_copy(ax.transData, fig=figure, x=2, y=0, units="points")
    for c, y in zip(order, placed):
        ax.text(x_max, from_axis(y), text[c], transform=shift, ha="left", va="center", fontsize=FONT["note"],
                color=PALETTE.get(c, "#777777"), clip_on=False)


def end_text(v: float) -> str:
    """A curve's final value as printed after its end: two decimals below 10 (the margin around 1 the paper
    reads), three significant digits above (a diverged 122.62 prints 123)."""
    return f"{v:.2f}" if abs(v) < 10 else f"{v:.3g}"


LEGEND_ENTRY_INCHES = 0.9  # one curve's entry at 7 pt with its handle: what fits in one row


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
               ncol=ncol, frameon=False, fontsize=FONT["note"], handlelength=2.6)
    return -(-len(handles) // ncol)


LINE_INCHES = FONT["note"] * 1.25 / 72  # one line of note text


def finish(fig, fig_id: str, settings: dict, legend_curves=None, extra: str = "") -> None:
    """Title, the one-line scale statement (the full provenance is in the caption and the sidecar), an
    optional note line, the legend of the curves; the panels fill the rest (sizes in inches). A line
    too long for a narrow figure wraps."""
    import textwrap

    width = fig.get_figwidth()
    title = "\n".join(textwrap.wrap(figure_title(fig_id, settings), int(width * 72 / (0.6 * FONT["title"]))))
    lines = [short_scale_line(fig_id, settings)] + ([extra] if extra else [])
    lines = [part for line in lines for part in textwrap.wrap(line, int(width * 72 / (0.56 * FONT["note"])))]
    h = fig.get_figheight()
    # placed by hand, like the lines under it: tight_layout would reserve its height a second time
    fig.suptitle(title, y=1 - 0.06 / h, fontsize=FONT["title"], va="top").set_in_layout(False)
    top = 0.06 + (title.count("\n") + 1) * FONT["title"] * 1.25 / 72 + 0.03
    for line in lines:
        fig.text(0.5, 1 - top / h, line, ha="center", va="top", fontsize=FONT["note"], color="0.25")
        top += LINE_INCHES
    top += 0.04
    if legend_curves is not None:
        rows = legend(fig, legend_curves, top)
        top += rows * 0.2 + 0.04
    for _ in range(2):  # a second pass: the first can change tick labels, and with them the margins
        fig.tight_layout(rect=(0, 0, 1, 1 - top / h), pad=0.3, h_pad=0.4, w_pad=0.3)
    for ax in fig.axes:
        if getattr(ax, "end_values", None):
            end_labels(ax, ax.end_values)


def figure_title(fig_id: str, settings: dict) -> str:
    """The registry's title (a part's: 'Figure 15(d): ..., d = 32, tau = 0.1'); for a subset, what the subset
    holds of the figure (its cells, or the whole)."""
    from ..figure_registry import is_part, parent, part_title, sharing_evaluation

    title = part_title(fig_id) if is_part(fig_id) else figure(fig_id).title
    subset = settings.get("subset")
    if not subset:
        return title
    from ..subset import cell_text, merged_cells, parse

    cells = [c for fig, c in parse(subset) if fig in sharing_evaluation(parent(fig_id))]  # Fig 18 draws Fig 8's
    if not cells or any(not c for c in cells):  # the whole figure (or nothing of it) is in the subset
        return title
    held = "; ".join(cell_text(c, ", ") for c in merged_cells(cells))
    return f"{title.split(':')[0]}, subset ({held}):{title.partition(':')[2]}"


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
    plt.rcParams.update({"svg.hashsalt": "icl-kmeans", "pdf.compression": 6, "axes.titlesize": FONT["panel"],
                         "axes.labelsize": FONT["label"], "xtick.labelsize": FONT["tick"],
                         "ytick.labelsize": FONT["tick"], "legend.fontsize": FONT["note"], "font.size": FONT["label"]})


def log_y(ax) -> None:
    """Log y-axis labelled in one style (tick_text) at 1, 2, 5 x 10^k, or at powers of ten where the data
    span more than two decades; minor ticks unlabelled, so that narrow panels stay legible. Call it after
    drawing: it reads the data's range."""
    import numpy as np
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from matplotlib.ticker import MaxNLocator

    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    span = np.log10(hi / lo) if lo > 0 and hi > lo else 10.0
    if span <= 2 and _ticks_125(lo, hi) < 2:
        # less than a 1-2-5 step in view (16-32): LogLocator would fall back to a dense linear one
        ax.yaxis.set_major_locator(MaxNLocator(nbins=3))
    else:
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if span <= 2 else (1.0,)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, pos: tick_text(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _ticks_125(lo: float, hi: float) -> int:
    """How many of 1, 2, 5 x 10^k lie in [lo, hi] (lo > 0)."""
    if not (lo > 0 and hi > lo):
        return 0
    import math

    return sum(lo <= m * 10.0 ** k <= hi for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
               for m in (1, 2, 5))


def tick_text(x: float) -> str:
    if 1e-3 <= abs(x) < 1e4:
        return f"{x:g}"
    mantissa, exponent = f"{x:.0e}".split("e")
    times = "" if mantissa == "1" else mantissa + r"{\times}"
    return f"${times}10^{{{int(exponent)}}}$"


def finite(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    ok = np.isfinite(df["value"].to_numpy(dtype=float))
    return df[ok], int((~ok).sum())


def integer_x(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    width = ax.get_position().width * ax.figure.get_figwidth()
    # narrow panels: few, legible ticks ("1600" and "2400" touch in a panel 1.1 in wide)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=3 if width < 1.4 else 4, integer=True))
