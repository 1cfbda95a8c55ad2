"""Figures of the paper from the aggregated tables (results/tables/{fig}.parquet), PDF and PNG.

Conventions (SPEC 10): every curve is the median over seeds with an inter-quartile ribbon: the
statistics of seaborn's estimator="median", errorbar=("pi", 50), computed by one vectorised pandas
groupby (median_band; seaborn's per-point aggregation takes minutes on 10000-step curves), drawn at
most at MAX_POINTS x values per curve (thin). Curves carry the paper's labels (`OH:L2`) and the same
colour in every figure (OH blue, BN vermilion, NA green; NE lighter and dashed, L2 solid); Lloyd's
is black, EM purple (dotted); relative-loss axes have a dotted line at 1. Training figures: top row
of each block training loss, bottom row relative validation loss, one column per facet, log y-axes.
Every figure states its scale (the preset, seeds, steps, n, ... and the paper's) under its title, so
a quick figure is never mistaken for the paper's. Seaborn sets the theme and draws Fig 1's heatmaps.

Output bytes are deterministic: the PDF has no creation date, the PNG (150 dpi) no timestamp, and
nothing is random (the percentile interval needs no bootstrap). A figure, or any panel of it,
without data raises ValueError instead of drawing an empty plot.

Matplotlib and seaborn are imported when plotting, not on import: Snakemake imports scale_line and
figure_settings while it parses the workflow.
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

FAMILIES = ("normal", "cauchy", "gumbel", "laplace", "lognormal")
CURVE_ORDER = ("OH:NE", "OH:L2", "BN:NE", "BN:L2", "NA:NE", "NA:L2", "Lloyd", "EM")
PALETTE = {"OH:L2": "#0072B2", "OH:NE": "#56B4E9", "BN:L2": "#D55E00", "BN:NE": "#E69F00",
           "NA:L2": "#009E73", "NA:NE": "#7FC97F", "Lloyd": "#000000", "EM": "#CC79A7"}
DASHES = {"OH:L2": "", "BN:L2": "", "NA:L2": "", "OH:NE": (4, 2), "BN:NE": (4, 2), "NA:NE": (4, 2),
          "Lloyd": "", "EM": (1, 1.5)}
METRIC_LABELS = {"train_loss": "training loss", "rel_val_loss": "relative validation loss",
                 "log_objective": "mean log k-means objective", "objective": "mean k-means objective",
                 "misclustering": "misclustering rate"}
PROFILE_METRICS = {"forward_train_ms": "forward time (train mode)", "backward_ms": "backward time",
                   "peak_memory_mb": "peak memory", "forward_eval_ms": "forward time (eval mode)"}
SHIFT_ORDER = ("unequal weights", "anisotropic", "scale 0.05", "scale 0.2")
DPI = 150
MAX_POINTS = 500  # x values drawn per curve (training curves of the paper have 10000 steps)

TRAINING = ("fig2", "fig4", "fig10", "fig11", "fig13", "fig14", "fig15", "fig16", "fig17")
MULTISTEP = ("fig6", "fig7", "fig8", "fig12", "fig18", "fig_em")
LANDSCAPE = ("fig3", "fig5")
DISSIMILARITY = ("fig9", "fig19")
PROFILE = ("fig1", "table1")

TITLES = {
    "fig1": "Figure 1: BN's gain over OH (OH / BN; > 1: BN faster or lighter)",
    "fig2": "Figure 2: training, (a) d = 4, k = 6, tau in {1, 0.1}; (b) tau = 0.25, k = 6, d in {4, 16}",
    "fig3": "Figure 3: loss surfaces of the L2 loss (tau = 0.1) around trained parameters, k = 6",
    "fig4": "Figure 4: training per task family, d = 32, k = 10",
    "fig5": "Figure 5: gap surfaces (L_tilde - L) at tau = 0.1, OH:L2, normal vs cauchy (d = 32, k = 10)",
    "fig6": "Figure 6: multi-step clustering, d = 32, k = 10, tau = 0.1: naive (left) vs re-embed (right)",
    "fig7": "Figure 7: multi-step (re-embed) under distribution shift, L2 models of Figure 6",
    "fig8": "Figure 8: train family (column) x test family (row), multi-step re-embed, L2",
    "fig9": "Figure 9: earth-mover distance between tasks' squared point-to-initial-center distances",
    "fig10": "Figure 10: tau sweep, k = 6",
    "fig11": "Figure 11: learning-rate sweep, tau = 0.1, k = 6",
    "fig12": "Figure 12: length generalisation, models trained at the preset's n, evaluated at other n",
    "fig13": "Figure 13: training n sweep, k = 6, tau = 0.1",
    "fig14": "Figure 14: d sweep, k = 6",
    "fig15": "Figure 15: k sweep (rows) x (d, tau) (columns)",
    "fig16": "Figure 16: task families (rows) x (k, tau) (columns), d = 32",
    "fig17": "Figure 17: L2, OH vs BN against wall-clock time, with gradient clipping",
    "fig18": "Figure 18: train family (column) x test family (row), multi-step re-embed, L2 (large)",
    "fig19": "Figure 19: earth-mover distance between tasks (large)",
    "fig_em": "Transformer vs Lloyd's vs EM on held-out normal mixtures (d = 32, k = 10; OH/BN re-embed, L2)",
    "table1": "Table 1: OH vs BN at d = 32",
}
# Training-figure layout: facet keys that select a block of two rows (the rest are columns).
BLOCKS = {"fig4": ["tau"], "fig10": ["d"], "fig11": ["d"], "fig13": ["d"], "fig14": ["tau"], "fig15": ["k"],
          "fig16": ["family"], "fig17": ["d", "k", "tau"]}
DESCENDING = {"tau"}  # smooth (tau = 1) first, as in the paper

# The paper's scale (workflow/presets/paper.yaml; tests check they agree), quoted in every scale line.
PAPER = dict(seeds=10, steps=10000, lr_sweep_steps=5000, n_points=512, batch=32, eval_every=50, val_batches=10,
             fig13_train_n=[128, 256, 512, 1024], fig17_train_n=[256, 512, 1024], fig12_eval_n=[128, 256, 1024, 2048],
             fig_em_n=[128, 256, 512, 1024, 2048], eval_tasks=320, eval_steps=20, landscape_resolution=41,
             landscape_tasks=64, fig9_tasks_per_family=4, fig19_tasks_per_family=16,
             profile_d=[4, 8, 16, 32, 64, 128], profile_k=[10, 16, 25, 40, 64, 100], table1_k=[6, 25, 100, 400, 1000],
             profile_n=1024, profile_batch=32, profile_warmup=10, profile_reps=30)
SCALE_KEYS = ("preset", "overrides", "seeds", "steps", "lr_sweep_steps", "n_points", "n", "batch", "eval_every",
              "val_batches", "fig13_train_n", "fig17_train_n", "fig12_eval_n", "fig_em_n", "eval_tasks", "eval_steps",
              "landscape_resolution", "landscape_tasks", "fig9_tasks_per_family", "fig19_tasks_per_family",
              "profile_d", "profile_k", "table1_k", "profile_n", "profile_batch", "profile_warmup", "profile_reps")


# --------------------------------------------------------------------------------- scale lines
def kind(fig: str) -> str:
    for name, figs in (("training", TRAINING), ("multistep", MULTISTEP), ("landscape", LANDSCAPE),
                       ("dissimilarity", DISSIMILARITY), ("profile", PROFILE)):
        if fig in figs:
            return name
    raise ValueError(f"unknown figure {fig!r}; expected one of {TRAINING + MULTISTEP + LANDSCAPE + DISSIMILARITY}"
                     f" or table1")


def _list(v) -> str:
    return "{" + ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v) + "}"


def points(s: dict) -> int:
    """Points per task of training and evaluation (settings key n_points; n in older configurations)."""
    return s["n_points"] if "n_points" in s else s["n"]


def _scale_parts(fig: str, s: dict) -> list[str]:
    k = kind(fig)
    nseeds = s["seeds"] if isinstance(s["seeds"], int) else len(s["seeds"])
    steps = s["lr_sweep_steps"] if fig == "fig11" else s["steps"]
    train_n = {"fig13": f"training n in {_list(s['fig13_train_n'])}",
               "fig17": f"training n in {_list(s['fig17_train_n'])}"}.get(fig, f"n={points(s)}")
    trained = [f"{nseeds} seeds", f"M={steps}", train_n, f"B={s['batch']}"]
    if k == "training":
        return trained + [f"validation on {s['val_batches']}x{s['batch']} tasks every {s['eval_every']} steps"]
    if k == "multistep":
        ev = {"fig12": f"evaluated at n in {_list(s['fig12_eval_n'])}",
              "fig_em": f"evaluated at n in {_list(s['fig_em_n'])}"}.get(fig, f"evaluated at n={points(s)}")
        return trained + [f"{s['eval_tasks']} test tasks", f"T={s['eval_steps']}", ev]
    if k == "landscape":
        r = s["landscape_resolution"]
        return trained + [f"first seed only, {r}x{r} grid", f"{s['landscape_tasks']} tasks"]
    if k == "dissimilarity":
        per = s["fig9_tasks_per_family" if fig == "fig9" else "fig19_tasks_per_family"]
        return [f"{per} tasks per family", f"n={points(s)}"]
    grid = (f"d in {_list(s['profile_d'])} x k in {_list(s['profile_k'])}" if fig == "fig1"
            else f"d=32, k in {_list(s['table1_k'])}")
    return [grid, f"n={s['profile_n']}", f"batch {s['profile_batch']}",
            f"{s['profile_warmup']} warm-up + {s['profile_reps']} timed reps"]


def scale_line(fig: str, settings: dict) -> str:
    """'quick preset: 3 seeds, M=150, n=128, B=8, ... [paper: 10 seeds, M=10000, ...]' for fig."""
    preset = settings.get("preset", "?")
    line = f"{preset} preset: " + ", ".join(_scale_parts(fig, settings))
    if preset != "paper":
        paper = {**PAPER, "preset": "paper", "overrides": []}
        line += " [paper: " + ", ".join(_scale_parts(fig, paper)) + "]"
    overrides = settings.get("overrides") or []
    if overrides:
        line += "; overridden: " + ", ".join(overrides)
    return line


def figure_settings(fig: str, settings: dict) -> dict:
    """The settings a figure's scale line needs (the plot rule's params; nothing else reruns it)."""
    return {k: settings[k] for k in SCALE_KEYS if k in settings}


# ------------------------------------------------------------------------------------- helpers
def _require(df: pd.DataFrame, fig: str, what: str) -> pd.DataFrame:
    if df is None or len(df) == 0:
        raise ValueError(f"{fig}: no data for {what}; refusing to draw an empty plot")
    return df


def _fmt(key: str, value) -> str:
    if key == "panel":
        return f"({value})"
    if key == "family":
        return str(value)
    name = {"tau": "τ", "lr": "lr"}.get(key, key)
    return f"{name}={value:g}" if isinstance(value, (float, np.floating)) else f"{name}={value}"


def _combos(df: pd.DataFrame, keys: list[str]) -> list[tuple]:
    if not keys:
        return [()]
    combos = df[keys].drop_duplicates()
    combos = combos.sort_values(keys, ascending=[k not in DESCENDING for k in keys], kind="stable")
    return [tuple(r) for r in combos.itertuples(index=False)]


def _select(df: pd.DataFrame, keys: list[str], values: tuple) -> pd.DataFrame:
    mask = np.ones(len(df), dtype=bool)
    for k, v in zip(keys, values):
        mask &= (df[k] == v).to_numpy()
    return df[mask]


def _order(curves) -> list[str]:
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


def _lines(ax, data: pd.DataFrame, x: str, y: str = "value", curves=None, markers: bool = False) -> None:
    """Median over seeds with the inter-quartile ribbon, one line per curve (paper colours and dashes)."""
    band = median_band(thin(data, x), x, y)
    order = _order(curves if curves is not None else data["curve"].unique())
    for c in order:
        b = band[band["curve"] == c]
        if b.empty:
            continue
        color, dash = PALETTE.get(c, "#777777"), DASHES.get(c, "")
        z = 3 if c in ("Lloyd", "EM") else 2
        (line,) = ax.plot(b[x], b["median"], color=color, lw=1.5, label=c, zorder=z,
                          marker="o" if markers else None, ms=4)
        if dash:
            line.set_dashes(dash)
        if (b["q75"] > b["q25"]).any():
            ax.fill_between(b[x], b["q25"], b["q75"], color=color, alpha=0.2, lw=0, zorder=z - 1)


def _legend(fig, curves, top_inches: float) -> None:
    from matplotlib.lines import Line2D

    handles = []
    for c in _order(curves):
        h = Line2D([], [], color=PALETTE.get(c, "#777777"), lw=2, label=c)
        if DASHES.get(c, ""):
            h.set_dashes(DASHES[c])
        handles.append(h)
    fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 1.0 - top_inches / fig.get_figheight()),
               ncol=len(handles), frameon=False, fontsize=8, handlelength=2.6)


def _finish(fig, fig_id: str, settings: dict, legend_curves=None, extra: str = "") -> None:
    """Title, scale line (wrapped), legend of the curves; the panels fill the rest (sizes in inches)."""
    title = TITLES[fig_id]
    sub = _wrap(scale_line(fig_id, settings) + (f"; {extra}" if extra else ""), int(fig.get_figwidth() * 15))
    h = fig.get_figheight()
    fig.suptitle(title, y=1 - 0.08 / h, fontsize=11, va="top")
    fig.text(0.5, 1 - 0.34 / h, sub, ha="center", va="top", fontsize=7.5, color="0.25")
    top = 0.34 + 0.13 * (sub.count("\n") + 1) + 0.06
    if legend_curves is not None:
        _legend(fig, legend_curves, top)
        top += 0.3
    fig.tight_layout(rect=(0, 0, 1, 1 - (top - 0.12) / h))


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, max(width, 40)))


def _save(fig, pdf, png) -> None:
    import matplotlib.pyplot as plt

    for path in (pdf, png):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(pdf, format="pdf", metadata={"CreationDate": None, "ModDate": None})
    fig.savefig(png, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)


def _style() -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(context="paper", style="whitegrid")
    plt.rcParams.update({"svg.hashsalt": "icl-kmeans", "pdf.compression": 6, "axes.titlesize": 9,
                         "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7})


def _log_y(ax) -> None:
    """Log y-axis labelled with plain numbers (0.6, 2, 10) instead of 6 x 10^-1; matplotlib thins the labels."""
    from matplotlib.ticker import LogFormatterSciNotation

    class Plain(LogFormatterSciNotation):
        def __call__(self, x, pos=None):
            return f"{x:g}" if super().__call__(x, pos) else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(Plain())
    ax.yaxis.set_minor_formatter(Plain(labelOnlyBase=False, minor_thresholds=(1.2, 0.6)))


def _finite(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    ok = np.isfinite(df["value"].to_numpy(dtype=float))
    return df[ok], int((~ok).sum())


# ----------------------------------------------------------------------------- training figures
def facet_keys(df: pd.DataFrame) -> list[str]:
    cols = list(df.columns)
    return cols[cols.index("figure") + 1: cols.index("curve")]


def plot_training(fig_id: str, df: pd.DataFrame, settings: dict):
    import matplotlib.pyplot as plt

    _require(df, fig_id, "any training run")
    facets = facet_keys(df)
    block_keys = [k for k in BLOCKS.get(fig_id, []) if k in facets]
    col_keys = [k for k in facets if k not in block_keys]
    blocks, cols = _combos(df, block_keys), _combos(df, col_keys)
    timed = fig_id == "fig17"
    x = "step"
    if timed:
        wall = df[df["metric"] == "wall_time"]
        _require(wall, fig_id, "wall_time")
        t = wall.groupby(["run", "step"], as_index=False)["value"].median().rename(columns={"value": "time"})
        df = df[df["metric"] != "wall_time"].merge(t, on=["run", "step"], how="left")
        x = "time"
    nrows, ncols = 2 * len(blocks), len(cols)
    figure, axes = plt.subplots(nrows, ncols, figsize=(3.0 * ncols + 0.6, 2.3 * nrows + 1.4), squeeze=False,
                                sharex=False if timed else "col")
    curves = df["curve"].unique()
    for b, bval in enumerate(blocks):
        bdf = _select(df, block_keys, bval)
        for c, cval in enumerate(cols):
            panel = _select(bdf, col_keys, cval)
            labels = [_fmt(k, v) for k, v in zip(block_keys + col_keys, bval + cval)]
            where = ", ".join(labels)
            if (block_keys + col_keys)[:1] == ["panel"]:
                where = labels[0] + " " + ", ".join(labels[1:])
            for r, metric in enumerate(("train_loss", "rel_val_loss")):
                ax = axes[2 * b + r, c]
                data = _require(panel[panel["metric"] == metric], fig_id, f"{metric} at {where}")
                data, bad = _finite(data)
                _require(data, fig_id, f"finite {metric} at {where}")
                _lines(ax, data, x=x, curves=curves)
                _log_y(ax)
                if not timed:
                    _integer_x(ax)
                if metric == "rel_val_loss":
                    ax.axhline(1.0, ls=":", color="0.2", lw=1.2, zorder=1)
                else:
                    ax.set_title(where)
                    _diverged_note(ax, panel)
                xlabel = "wall-clock time (s, median over seeds)" if timed else "training step"
                ax.set_xlabel(xlabel if (r == 1 and (timed or b == len(blocks) - 1)) else "")
                ax.set_ylabel(METRIC_LABELS[metric] if c == 0 else "")
    div = df.loc[df["status"] == "diverged", ["run", "seed"]].drop_duplicates()
    extra = f"{len(div)} diverged (run, seed) pairs kept (curves end at their last finite step)" if len(div) else ""
    _finish(figure, fig_id, settings, legend_curves=curves, extra=extra)
    return figure


def _diverged_note(ax, panel: pd.DataFrame) -> None:
    div = panel[panel["status"] == "diverged"]
    if div.empty:
        return
    total = panel.groupby("curve")["seed"].nunique()
    bad = div.groupby("curve")["seed"].nunique()
    text = "diverged: " + ", ".join(f"{c} {bad[c]}/{total[c]}" for c in _order(bad.index))
    ax.text(0.98, 0.96, text, transform=ax.transAxes, ha="right", va="top", fontsize=7, color="#B00020")


# ---------------------------------------------------------------------------- multi-step figures
def _multistep_panel(ax, data: pd.DataFrame, fig_id: str, what: str, metric: str = "log_objective",
                     curves=None) -> int:
    data = _require(data[data["metric"] == metric], fig_id, f"{metric} ({what})")
    _require(data[data["run"].notna()], fig_id, f"any trained model, {metric} ({what})")
    data, bad = _finite(data)
    _require(data, fig_id, f"finite {metric} ({what})")
    _lines(ax, data, x="t", curves=curves)
    if bad:
        ax.text(0.02, 0.96, f"{bad} non-finite values dropped", transform=ax.transAxes, va="top", fontsize=7,
                color="#B00020")
    ax.set_xlabel("step t")
    ax.set_ylabel(METRIC_LABELS[metric])
    _integer_x(ax)
    return bad


def _integer_x(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _models_and_baselines(df: pd.DataFrame, testset: str, mode: str | None = None, train_family=None):
    sub = df[df["testset"] == testset]
    base = sub[sub["run"].isna()]
    models = sub[sub["run"].notna()]
    if mode is not None:
        models = models[models["mode"] == mode]
    if train_family is not None:
        models = models[models["train_family"] == train_family]
    return pd.concat([models, base], ignore_index=True)


def plot_fig6(df, settings, fig_id="fig6"):
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(10, 4.6), squeeze=False)
    testset = sorted(df["testset"].unique())[0]
    for ax, mode, name in zip(axes[0], ("naive", "reembed"), ("naive (embed once)", "re-embed every step")):
        _multistep_panel(ax, _models_and_baselines(df, testset, mode), fig_id, mode, curves=df["curve"].unique())
        ax.set_title(name)
    _finish(figure, fig_id, settings, legend_curves=df["curve"].unique())
    return figure


def plot_panels_by_testset(df, settings, fig_id, order, title=lambda t: t):
    import matplotlib.pyplot as plt

    testsets = [t for t in order if t in set(df["testset"])]
    _require(pd.DataFrame({"t": testsets}), fig_id, "any test set")
    figure, axes = plt.subplots(1, len(testsets), figsize=(3.4 * len(testsets) + 0.6, 4.4), squeeze=False)
    for ax, ts in zip(axes[0], testsets):
        _multistep_panel(ax, _models_and_baselines(df, ts, "reembed"), fig_id, ts, curves=df["curve"].unique())
        ax.set_title(title(ts))
    _finish(figure, fig_id, settings, legend_curves=df["curve"].unique())
    return figure


def _n_of(testset: str) -> int:
    return int(str(testset).split("=")[1])


def plot_fig7(df, settings, fig_id="fig7"):
    order = list(SHIFT_ORDER) + sorted(set(df["testset"]) - set(SHIFT_ORDER))
    return plot_panels_by_testset(df, settings, fig_id, order)


def plot_fig12(df, settings, fig_id="fig12"):
    order = sorted(df["testset"].unique(), key=_n_of)
    return plot_panels_by_testset(df, settings, fig_id, order, title=lambda t: f"evaluated at {t}")


def plot_family_grid(df, settings, fig_id="fig8", size=2.3):
    import matplotlib.pyplot as plt

    fams = [f for f in FAMILIES if f in set(df["testset"])]
    _require(pd.DataFrame({"f": fams}), fig_id, "any test family")
    n = len(fams)
    figure, axes = plt.subplots(n, n, figsize=(size * n + 0.8, size * n * 0.85 + 1.4), squeeze=False)
    curves = df["curve"].unique()
    for r, test in enumerate(fams):
        for c, train in enumerate(fams):
            ax = axes[r, c]
            _multistep_panel(ax, _models_and_baselines(df, test, "reembed", train_family=train), fig_id,
                             f"trained on {train}, tested on {test}", curves=curves)
            if r == 0:
                ax.set_title(f"trained on {train}")
            ax.set_ylabel(f"tested on {test}\n{METRIC_LABELS['log_objective']}" if c == 0 else "")
            if r < n - 1:
                ax.set_xlabel("")
    _finish(figure, fig_id, settings, legend_curves=curves)
    return figure


def plot_fig_em(df, settings, fig_id="fig_em"):
    import matplotlib.pyplot as plt

    testsets = sorted(df["testset"].unique(), key=_n_of)
    _require(pd.DataFrame({"t": testsets}), fig_id, "any test set")
    n0 = points(settings) if ("n_points" in settings or "n" in settings) else None
    main = f"n={n0}" if f"n={n0}" in testsets else testsets[len(testsets) // 2]
    curves = df["curve"].unique()
    figure, axes = plt.subplots(1, 3, figsize=(13, 4.4), squeeze=False)
    sub = _models_and_baselines(df, main, "reembed")
    _multistep_panel(axes[0, 0], sub, fig_id, f"objective at {main}", metric="objective", curves=curves)
    _log_y(axes[0, 0])
    axes[0, 0].set_title(f"k-means objective, {main}")
    _multistep_panel(axes[0, 1], sub, fig_id, f"misclustering at {main}", metric="misclustering", curves=curves)
    axes[0, 1].set_title(f"misclustering rate, {main}")
    final = df[(df["metric"] == "misclustering") & (df["mode"].isin(["reembed", "-"]))]
    final = final[final["t"] == final["t"].max()].assign(n=lambda d: d["testset"].map(_n_of))
    final, _ = _finite(_require(final, fig_id, "final misclustering"))
    ax = axes[0, 2]
    _lines(ax, final, x="n", curves=curves, markers=True)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(final["n"].unique()), [str(v) for v in sorted(final["n"].unique())])
    ax.set_xlabel("points per task n")
    ax.set_ylabel(f"misclustering rate at t={int(final['t'].max())}")
    ax.set_title("final misclustering vs n")
    _finish(figure, fig_id, settings, legend_curves=curves)
    return figure


# ------------------------------------------------------------------------------ surface figures
def _surface(df: pd.DataFrame):
    grid = df.pivot_table(index="beta", columns="alpha", values="value", aggfunc="first", dropna=False)
    return grid.columns.to_numpy(float), grid.index.to_numpy(float), grid.to_numpy(float)


def _contour(ax, figure, a, b, z, label, levels=None, norm=None):
    import matplotlib.pyplot as plt  # noqa: F401

    zm = np.ma.masked_invalid(z)
    cs = ax.contourf(a, b, zm, levels=levels if levels is not None else 14, cmap="viridis", norm=norm)
    ax.contour(a, b, zm, levels=cs.levels, colors="white", linewidths=0.3, alpha=0.6)
    ax.plot([0], [0], marker="*", color="#FF4040", ms=10, mec="white", mew=0.6)
    ax.set_xlabel("alpha (direction 1)")
    ax.set_ylabel("beta (direction 2)")
    cb = figure.colorbar(cs, ax=ax, label=label, shrink=0.9)
    if norm is not None and norm.__class__.__name__ == "LogNorm":
        from matplotlib.ticker import LogLocator, NullLocator

        cb.ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        cb.ax.yaxis.set_minor_locator(NullLocator())
        cb.ax.yaxis.set_major_formatter(lambda v, pos: f"{v:g}")


def plot_fig3(df, settings, fig_id="fig3"):
    import matplotlib.pyplot as plt

    ds = sorted(df["d"].unique())
    embs = [e for e in ("OH", "BN", "NA") if any(df["curve"].str.startswith(e + ":"))]
    _require(pd.DataFrame({"d": ds}), fig_id, "any d")
    figure, axes = plt.subplots(len(ds), len(embs), figsize=(4.4 * len(embs) + 0.4, 3.6 * len(ds) + 1.4),
                                squeeze=False)
    for r, d in enumerate(ds):
        for c, e in enumerate(embs):
            sub = df[(df["d"] == d) & (df["curve"] == f"{e}:L2") & (df["metric"] == "loss")]
            _require(sub, fig_id, f"loss surface d={d}, {e}")
            a, b, z = _surface(sub)
            positive = np.isfinite(z).any() and np.nanmin(z) > 0
            _contour(axes[r, c], figure, a, b, np.log10(z) if positive else z,
                     "log10 loss" if positive else "loss")
            axes[r, c].set_title(f"{e}:L2, d={d}, k=6 (min {np.nanmin(z):.3g}, at origin "
                                 f"{_at_origin(a, b, z):.3g})")
    _finish(figure, fig_id, settings, extra="star: trained parameters; filter-normalised random directions")
    return figure


def _at_origin(a, b, z) -> float:
    i, j = int(np.argmin(np.abs(b))), int(np.argmin(np.abs(a)))
    return float(z[i, j])


def plot_fig5(df, settings, fig_id="fig5"):
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    fams = [f for f in ("normal", "cauchy") if f in set(df["testset"])] + sorted(
        set(df["testset"]) - {"normal", "cauchy"})
    metrics = [m for m in ("gap_max", "gap_mean") if m in set(df["metric"])]
    _require(pd.DataFrame({"f": fams}), fig_id, "any family")
    _require(pd.DataFrame({"m": metrics}), fig_id, "gap_max or gap_mean")
    figure, axes = plt.subplots(len(metrics), len(fams), figsize=(4.6 * len(fams) + 0.4, 3.6 * len(metrics) + 1.4),
                                squeeze=False)
    for r, m in enumerate(metrics):
        rows = df[df["metric"] == m]
        vals = rows["value"].to_numpy(float)
        vals = vals[np.isfinite(vals)]
        _require(pd.DataFrame({"v": vals}), fig_id, f"finite {m}")
        lo, hi = float(vals.min()), float(vals.max())
        if lo > 0 and hi > lo:
            levels, norm = np.geomspace(lo, hi, 15), LogNorm(lo, hi)
        else:
            levels, norm = np.linspace(lo, hi if hi > lo else lo + 1e-12, 15), None
        for c, fam in enumerate(fams):
            sub = _require(rows[rows["testset"] == fam], fig_id, f"{m} for {fam}")
            a, b, z = _surface(sub)
            _contour(axes[r, c], figure, a, b, z, m.replace("_", " "), levels=levels,
                     norm=None if norm is None else LogNorm(lo, hi))  # one norm per colourbar
            axes[r, c].set_title(f"{fam}: {m.replace('_', ' ')} (max {np.nanmax(z):.3g}, at origin "
                                 f"{_at_origin(a, b, z):.3g})")
    _finish(figure, fig_id, settings, extra="shared colour scale per row; paper: gap <= 0.5 normal, > 5 cauchy")
    return figure


# ------------------------------------------------------------------------------- dissimilarity
def emd_matrix(df: pd.DataFrame) -> tuple[list[tuple[str, int]], np.ndarray]:
    """Square EMD matrix, tasks ordered by family (normal, cauchy, gumbel, laplace, lognormal) then index."""
    rank = {f: i for i, f in enumerate(FAMILIES)}
    keys = sorted(set(zip(df["row_family"], df["row_index"])), key=lambda k: (rank.get(k[0], 99), k[0], k[1]))
    pos = {k: i for i, k in enumerate(keys)}
    m = np.full((len(keys), len(keys)), np.nan)
    for rf, ri, cf, ci, v in df[["row_family", "row_index", "col_family", "col_index", "emd"]].itertuples(index=False):
        if (cf, ci) in pos:
            m[pos[(rf, ri)], pos[(cf, ci)]] = v
    if np.isnan(m).any():
        raise ValueError("the EMD table is not a complete square matrix")
    return keys, m


def plot_dissimilarity(df, settings, fig_id="fig9"):
    import matplotlib.pyplot as plt

    _require(df, fig_id, "any task pair")
    keys, m = emd_matrix(df)
    size = 6.0 if fig_id == "fig9" else 11.0
    figure, ax = plt.subplots(figsize=(size + 1.8, size + 0.5))
    im = ax.imshow(m, cmap="magma_r", interpolation="nearest")
    figure.colorbar(im, ax=ax, label="earth-mover distance", shrink=0.8)
    fams = list(dict.fromkeys(f for f, _ in keys))
    bounds = [sum(1 for k in keys if k[0] == f) for f in fams]
    edges = np.cumsum([0] + bounds)
    for e in edges[1:-1]:
        ax.axhline(e - 0.5, color="white", lw=1.5)
        ax.axvline(e - 0.5, color="white", lw=1.5)
    centers = (edges[:-1] + edges[1:] - 1) / 2
    ax.set_xticks(centers, fams, rotation=30)
    ax.set_yticks(centers, fams)
    ax.grid(False)
    _finish(figure, fig_id, settings, extra=f"{len(keys)} x {len(keys)} tasks")
    return figure


# ------------------------------------------------------------------------------------- profile
def relative_gain(df: pd.DataFrame) -> pd.DataFrame:
    """OH value / BN value per (d, k, metric) (> 1: BN faster or lighter). Columns d, k, metric, gain."""
    wide = df.pivot_table(index=["d", "k", "metric"], columns="embedding", values="value", aggfunc="first")
    missing = {"OH", "BN"} - set(wide.columns)
    if missing:
        raise ValueError(f"no rows for embedding(s) {sorted(missing)}; the gain needs both OH and BN")
    gain = (wide["OH"] / wide["BN"].where(wide["BN"] != 0)).rename("gain").reset_index()
    return gain[["d", "k", "metric", "gain"]]


def plot_fig1(df, settings, fig_id="fig1"):
    import matplotlib.pyplot as plt
    import seaborn as sns

    _require(df, fig_id, "any profile")
    gain = relative_gain(df)
    device = ", ".join(sorted(df["device"].dropna().unique())) if "device" in df else "?"
    figure, axes = plt.subplots(2, 2, figsize=(11, 8.6), squeeze=False)
    for ax, (metric, name) in zip(axes.flat, PROFILE_METRICS.items()):
        sub = _require(gain[gain["metric"] == metric], fig_id, name)
        grid = sub.pivot(index="d", columns="k", values="gain").sort_index(ascending=False)
        logs = np.log2(grid.where(grid > 0))
        span = float(np.nanmax(np.abs(logs.to_numpy()))) if np.isfinite(logs.to_numpy()).any() else 1.0
        span = max(span, 0.1)
        with warnings.catch_warnings():  # seaborn 0.13 calls a colormap method matplotlib 3.11 deprecates
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            sns.heatmap(logs, annot=grid, fmt=".2f", cmap="RdBu", vmin=-span, vmax=span, center=0.0, ax=ax,
                        cbar_kws={"label": "log2(OH / BN)"}, linewidths=0.5, annot_kws={"fontsize": 7})
        ax.set_title(f"{name}: OH / BN")
        ax.set_xlabel("k")
        ax.set_ylabel("d")
    _finish(figure, fig_id, settings, extra=f"device {device}; times: median of the timed repetitions; colour: "
            "log2 of the gain (blue: BN better, red: OH better)")
    return figure


# --------------------------------------------------------------------------------------- entry
PLOTTERS = {**{f: plot_training for f in TRAINING}, "fig6": plot_fig6, "fig7": plot_fig7, "fig8": plot_family_grid,
            "fig12": plot_fig12, "fig18": lambda df, s, fig_id: plot_family_grid(df, s, fig_id, size=3.8),
            "fig_em": plot_fig_em, "fig3": plot_fig3, "fig5": plot_fig5, "fig9": plot_dissimilarity,
            "fig19": plot_dissimilarity, "fig1": plot_fig1}


def draw(fig_id: str, df: pd.DataFrame, settings: dict):
    """The matplotlib Figure of fig_id from its aggregated table (a DataFrame)."""
    if fig_id not in PLOTTERS:
        raise ValueError(f"unknown figure {fig_id!r}; expected one of {sorted(PLOTTERS)}")
    _require(df, fig_id, "the figure (the table is empty)")
    _style()
    plotter = PLOTTERS[fig_id]
    if plotter is plot_training:
        return plot_training(fig_id, df, settings)
    return plotter(df, settings, fig_id=fig_id)


def plot(fig: str, table, pdf, png, settings: dict) -> None:
    """Reads results/tables/{fig}.parquet (path or DataFrame) and writes the figure as PDF and PNG."""
    import pyarrow.parquet as pq

    df = table if isinstance(table, pd.DataFrame) else pq.read_table(table).to_pandas()
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    figure = draw(fig, df, settings)
    _save(figure, pdf, png)


__all__ = ["plot", "draw", "scale_line", "figure_settings", "relative_gain", "emd_matrix", "PALETTE", "PAPER"]
