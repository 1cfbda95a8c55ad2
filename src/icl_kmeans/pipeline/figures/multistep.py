"""Multi-step clustering (Figs 6, 7, 8, 12, 18, the EM comparison; each spec picks its plotter): mean log objective
against the step t, trained models (median over seeds, IQR ribbon) with Lloyd's in black (EM purple)."""

from __future__ import annotations

import pandas as pd

from .common import FAMILY_ORDER, FONT, METRIC_LABELS, PAGE_WIDTH, draw_lines, finish, finite, integer_x, require
from .scale import points


def multistep_panel(ax, data: pd.DataFrame, fig_id: str, what: str, metric: str = "log_objective",
                    curves=None) -> int:
    data = require(data[data["metric"] == metric], fig_id, f"{metric} ({what})")
    require(data[data["run"].notna()], fig_id, f"any trained model, {metric} ({what})")
    data, bad = finite(data)
    require(data, fig_id, f"finite {metric} ({what})")
    draw_lines(ax, data, x="t", curves=curves)
    if bad:
        ax.text(0.03, 0.96, f"{bad} non-finite\nvalues dropped", transform=ax.transAxes, va="top",
                fontsize=FONT["note"], color="#B00020", linespacing=1.0)
    ax.set_xlabel("step t")
    ax.set_ylabel(METRIC_LABELS[metric])
    integer_x(ax)
    return bad


def models_and_baselines(df: pd.DataFrame, testset: str, mode: str | None = None, train_family=None):
    sub = df[df["testset"] == testset]
    base = sub[sub["run"].isna()]
    models = sub[sub["run"].notna()]
    if mode is not None:
        models = models[models["mode"] == mode]
    if train_family is not None:
        models = models[models["train_family"] == train_family]
    return pd.concat([models, base], ignore_index=True)


def plot_naive_vs_reembed(df, settings, fig_id):
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.4), squeeze=False)
    testset = sorted(df["testset"].unique())[0]
    for ax, mode, name in zip(axes[0], ("naive", "reembed"), ("naive (embed once)", "re-embed every step")):
        multistep_panel(ax, models_and_baselines(df, testset, mode), fig_id, mode, curves=df["curve"].unique())
        ax.set_title(name)
    finish(figure, fig_id, settings, legend_curves=df["curve"].unique())
    return figure


def plot_panels_by_testset(df, settings, fig_id, order, title=lambda t: t):
    import matplotlib.pyplot as plt

    testsets = [t for t in order if t in set(df["testset"])]
    require(pd.DataFrame({"t": testsets}), fig_id, "any test set")
    figure, axes = plt.subplots(1, len(testsets), figsize=(PAGE_WIDTH, 3.4), squeeze=False)
    for c, (ax, ts) in enumerate(zip(axes[0], testsets)):
        multistep_panel(ax, models_and_baselines(df, ts, "reembed"), fig_id, ts, curves=df["curve"].unique())
        ax.set_title(title(ts))
        if c:  # the first panel's label serves the row
            ax.set_ylabel("")
    finish(figure, fig_id, settings, legend_curves=df["curve"].unique())
    return figure


def n_of(testset: str) -> int:
    return int(str(testset).split("=")[1])


def plot_family_grid(df, settings, fig_id, row_height=1.05):
    import matplotlib.pyplot as plt

    tests = [f for f in FAMILY_ORDER if f in set(df["testset"])]
    require(pd.DataFrame({"f": tests}), fig_id, "any test family")
    # columns: the training families that were trained (a subset such as fig8:train_family=cauchy draws
    # its one column; an untrained column is left out, never drawn empty)
    trains = [f for f in FAMILY_ORDER if f in set(df.loc[df["run"].notna(), "train_family"])]
    require(pd.DataFrame({"f": trains}), fig_id, "any trained model")
    n, m = len(tests), len(trains)
    # a page wide; a grid of one or two trained columns (a subset) narrower, at least 4 in for its title
    width = PAGE_WIDTH if m >= 4 else max(4.0, 1.6 * m + 1.6)
    figure, axes = plt.subplots(n, m, figsize=(width, row_height * n + 1.2), squeeze=False)
    curves = df["curve"].unique()
    for r, test in enumerate(tests):
        for c, train in enumerate(trains):
            ax = axes[r, c]
            multistep_panel(ax, models_and_baselines(df, test, "reembed", train_family=train), fig_id,
                             f"trained on {train}, tested on {test}", curves=curves)
            if r == 0:
                ax.set_title(f"trained on\n{train}")
            ax.set_ylabel(f"tested on\n{test}" if c == 0 else "")
            if r < n - 1:
                ax.set_xlabel("")
    finish(figure, fig_id, settings, legend_curves=curves,
           extra=f"y: {METRIC_LABELS['log_objective']}; rows: test family, columns: training family")
    return figure


def plot_em_comparison(df, settings, fig_id):
    import matplotlib.pyplot as plt

    testsets = sorted(df["testset"].unique(), key=n_of)
    require(pd.DataFrame({"t": testsets}), fig_id, "any test set")
    n0 = points(settings) if ("n_points" in settings or "n" in settings) else None
    main = f"n={n0}" if f"n={n0}" in testsets else testsets[len(testsets) // 2]
    curves = df["curve"].unique()
    figure, axes = plt.subplots(1, 3, figsize=(PAGE_WIDTH, 3.7), squeeze=False)
    sub = models_and_baselines(df, main, "reembed")
    # the mean log objective on a linear axis, as Figs 6, 7 and 12 draw it
    multistep_panel(axes[0, 0], sub, fig_id, f"log objective at {main}", curves=curves)
    axes[0, 0].set_title(f"objective, {main}")
    multistep_panel(axes[0, 1], sub, fig_id, f"misclustering at {main}", metric="misclustering", curves=curves)
    axes[0, 1].set_title(f"misclustering, {main}")
    final = df[(df["metric"] == "misclustering") & (df["mode"].isin(["reembed", "-"]))]
    final = final[final["t"] == final["t"].max()].assign(n=lambda d: d["testset"].map(n_of))
    final, _ = finite(require(final, fig_id, "final misclustering"))
    ax = axes[0, 2]
    draw_lines(ax, final, x="n", curves=curves, markers=True)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(final["n"].unique()), [str(v) for v in sorted(final["n"].unique())])
    ax.set_xlabel("points per task n")
    ax.set_ylabel(f"misclustering at t={int(final['t'].max())}")
    ax.set_title("final misclustering vs n")
    finish(figure, fig_id, settings, legend_curves=curves)
    return figure
