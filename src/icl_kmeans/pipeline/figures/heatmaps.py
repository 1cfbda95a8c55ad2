"""Heatmaps and surfaces: loss surfaces (Fig 3), gap surfaces (Fig 5) around trained parameters, and the
earth-mover distances between tasks (Figs 9, 19)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...emd_table import emd_matrix
from .common import finish, require


def surface_grid(df: pd.DataFrame):
    grid = df.pivot_table(index="beta", columns="alpha", values="value", aggfunc="first", dropna=False)
    return grid.columns.to_numpy(float), grid.index.to_numpy(float), grid.to_numpy(float)


def contour(ax, figure, a, b, z, label, levels=None, norm=None):
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
    require(pd.DataFrame({"d": ds}), fig_id, "any d")
    figure, axes = plt.subplots(len(ds), len(embs), figsize=(4.4 * len(embs) + 0.4, 3.6 * len(ds) + 1.4),
                                squeeze=False)
    for r, d in enumerate(ds):
        for c, e in enumerate(embs):
            sub = df[(df["d"] == d) & (df["curve"] == f"{e}:L2") & (df["metric"] == "loss")]
            require(sub, fig_id, f"loss surface d={d}, {e}")
            a, b, z = surface_grid(sub)
            positive = np.isfinite(z).any() and np.nanmin(z) > 0
            contour(axes[r, c], figure, a, b, np.log10(z) if positive else z,
                     "log10 loss" if positive else "loss")
            axes[r, c].set_title(f"{e}:L2, d={d}, k=6 (min {np.nanmin(z):.3g}, at origin "
                                 f"{at_origin(a, b, z):.3g})")
    finish(figure, fig_id, settings, extra="star: trained parameters; filter-normalised random directions")
    return figure


def at_origin(a, b, z) -> float:
    i, j = int(np.argmin(np.abs(b))), int(np.argmin(np.abs(a)))
    return float(z[i, j])


def plot_fig5(df, settings, fig_id="fig5"):
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    fams = [f for f in ("normal", "cauchy") if f in set(df["testset"])] + sorted(
        set(df["testset"]) - {"normal", "cauchy"})
    metrics = [m for m in ("gap_max", "gap_mean") if m in set(df["metric"])]
    require(pd.DataFrame({"f": fams}), fig_id, "any family")
    require(pd.DataFrame({"m": metrics}), fig_id, "gap_max or gap_mean")
    figure, axes = plt.subplots(len(metrics), len(fams), figsize=(4.6 * len(fams) + 0.4, 3.6 * len(metrics) + 1.4),
                                squeeze=False)
    for r, m in enumerate(metrics):
        rows = df[df["metric"] == m]
        vals = rows["value"].to_numpy(float)
        vals = vals[np.isfinite(vals)]
        require(pd.DataFrame({"v": vals}), fig_id, f"finite {m}")
        lo, hi = float(vals.min()), float(vals.max())
        if lo > 0 and hi > lo:
            levels, norm = np.geomspace(lo, hi, 15), LogNorm(lo, hi)
        else:
            levels, norm = np.linspace(lo, hi if hi > lo else lo + 1e-12, 15), None
        for c, fam in enumerate(fams):
            sub = require(rows[rows["testset"] == fam], fig_id, f"{m} for {fam}")
            a, b, z = surface_grid(sub)
            contour(axes[r, c], figure, a, b, z, m.replace("_", " "), levels=levels,
                     norm=None if norm is None else LogNorm(lo, hi))  # one norm per colourbar
            axes[r, c].set_title(f"{fam}: {m.replace('_', ' ')} (max {np.nanmax(z):.3g}, at origin "
                                 f"{at_origin(a, b, z):.3g})")
    finish(figure, fig_id, settings, extra="shared colour scale per row; paper: gap <= 0.5 normal, > 5 cauchy")
    return figure


def plot_dissimilarity(df, settings, fig_id="fig9"):
    import matplotlib.pyplot as plt

    require(df, fig_id, "any task pair")
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
    finish(figure, fig_id, settings, extra=f"{len(keys)} x {len(keys)} tasks")
    return figure
