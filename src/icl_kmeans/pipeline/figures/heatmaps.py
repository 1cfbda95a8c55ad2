"""Heatmaps and surfaces: loss surfaces (Fig 3), gap surfaces (Fig 5) around trained parameters, and the
earth-mover distances between tasks (Figs 9, 19). Panels that the paper compares share one colour scale
and one colourbar: Fig 3's OH and BN at each d, Fig 5's normal and cauchy for each statistic."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...emd_table import emd_matrix
from .common import FAMILY_ORDER, PAGE_WIDTH, finish, require
from .scale import points

PAPER_N = 512  # the paper's points per task, at which its gap bounds (<= 0.5 normal, > 5 cauchy) were read


def surface_grid(df: pd.DataFrame):
    grid = df.pivot_table(index="beta", columns="alpha", values="value", aggfunc="first", dropna=False)
    return grid.columns.to_numpy(float), grid.index.to_numpy(float), grid.to_numpy(float)


def contour(ax, a, b, z, levels, norm=None):
    zm = np.ma.masked_invalid(z)
    cs = ax.contourf(a, b, zm, levels=levels, cmap="viridis", norm=norm, extend="neither")
    ax.contour(a, b, zm, levels=cs.levels, colors="white", linewidths=0.3, alpha=0.6)
    ax.plot([0], [0], marker="*", color="#FF4040", ms=9, mec="white", mew=0.6)
    ax.set_xlabel("alpha (direction 1)")
    ax.set_ylabel("beta (direction 2)")
    return cs


def shared_levels(values, log: bool, count: int = 15):
    """Contour levels covering every value of the panels that share them (the top level a hair above the
    maximum, so that the largest values are coloured, not left out), and the norm."""
    from matplotlib.colors import LogNorm

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    lo, hi = float(v.min()), float(v.max())
    if hi <= lo:
        hi = lo + (abs(lo) * 1e-6 or 1e-12)
    if log and lo > 0:
        return np.geomspace(lo, hi * (1 + 1e-9), count), LogNorm(lo, hi * (1 + 1e-9))
    return np.linspace(lo, hi + (hi - lo) * 1e-9, count), None


def panels_with_colourbars(rows: int, cols: int, height: float):
    """A grid of rows x cols panels, a page wide, with a narrow last column for each row's colourbar."""
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(rows, cols + 1, figsize=(PAGE_WIDTH, height), squeeze=False,
                                gridspec_kw={"width_ratios": [1] * cols + [0.06]})
    return figure, axes[:, :cols], axes[:, cols]


def colourbar(figure, cs, cax, label, levels):
    """One colourbar (in cax) for a row of panels, ticks at five of the levels, the lowest and highest labelled."""
    cb = figure.colorbar(cs, cax=cax, label=label)
    ticks = levels[np.linspace(0, len(levels) - 1, 5).round().astype(int)]
    cb.set_ticks(ticks, labels=[f"{t:.3g}" for t in ticks])
    cb.ax.minorticks_off()
    return cb


def plot_loss_surfaces(df, settings, fig_id):
    ds = sorted(df["d"].unique())
    embs = [e for e in ("OH", "BN", "NA") if any(df["curve"].str.startswith(e + ":"))]
    require(pd.DataFrame({"d": ds}), fig_id, "any d")
    figure, axes, caxes = panels_with_colourbars(len(ds), len(embs), 2.7 * len(ds) + 1.0)
    for r, d in enumerate(ds):
        grids = []
        for e in embs:
            sub = df[(df["d"] == d) & (df["curve"] == f"{e}:L2") & (df["metric"] == "loss")]
            grids.append(surface_grid(require(sub, fig_id, f"loss surface d={d}, {e}")))
        zs = np.concatenate([z.ravel() for _, _, z in grids])
        positive = np.isfinite(zs).any() and np.nanmin(zs) > 0
        levels, norm = shared_levels(zs, log=positive)  # one scale per d: OH and BN compare by colour
        for c, (e, (a, b, z)) in enumerate(zip(embs, grids)):
            cs = contour(axes[r, c], a, b, z, levels, norm)
            axes[r, c].set_title(f"{e}:L2, d={d} (min {np.nanmin(z):.3g}, centre {at_origin(a, b, z):.3g})")
            if c:
                axes[r, c].set_ylabel("")
        colourbar(figure, cs, caxes[r], "L2 loss" + (" (log scale)" if positive else ""), levels)
    finish(figure, fig_id, settings, extra="star: trained parameters; filter-normalised random directions; "
           "one colour scale per d")
    return figure
def at_origin(a, b, z) -> float:
    i, j = int(np.argmin(np.abs(b))), int(np.argmin(np.abs(a)))
    return float(z[i, j])


def plot_gap_surfaces(df, settings, fig_id):
    fams = [f for f in ("normal", "cauchy") if f in set(df["testset"])] + sorted(
        set(df["testset"]) - {"normal", "cauchy"})
    metrics = [m for m in ("gap_max", "gap_mean") if m in set(df["metric"])]
    require(pd.DataFrame({"f": fams}), fig_id, "any family")
    require(pd.DataFrame({"m": metrics}), fig_id, "gap_max or gap_mean")
    figure, axes, caxes = panels_with_colourbars(len(metrics), len(fams), 2.7 * len(metrics) + 1.0)
    names = {"gap_max": "largest gap over tasks", "gap_mean": "mean gap over tasks"}
    for r, m in enumerate(metrics):
        rows = df[df["metric"] == m]
        vals = rows["value"].to_numpy(float)
        require(pd.DataFrame({"v": vals[np.isfinite(vals)]}), fig_id, f"finite {m}")
        levels, norm = shared_levels(vals, log=True)  # covers both families: nothing saturates
        for c, fam in enumerate(fams):
            sub = require(rows[rows["testset"] == fam], fig_id, f"{m} for {fam}")
            a, b, z = surface_grid(sub)
            cs = contour(axes[r, c], a, b, z, levels, norm)
            axes[r, c].set_title(f"{fam} (max {np.nanmax(z):.3g}, centre {at_origin(a, b, z):.3g})")
            if c:
                axes[r, c].set_ylabel("")
        colourbar(figure, cs, caxes[r], names.get(m, m), levels)
    finish(figure, fig_id, settings, extra=gap_note(settings))
    return figure


def gap_note(settings) -> str:
    """What the gap sums over, and the paper's bounds only where they apply (the paper's n)."""
    n = points(settings) if ("n_points" in settings or "n" in settings) else None
    note = f"gap L_tilde - L: a sum over the n = {n} points of a task; one colour scale per row"
    if n == PAPER_N:
        return note + "; paper: <= 0.5 normal, > 5 cauchy"
    return note + f" (the paper's <= 0.5 / > 5 are at n = {PAPER_N}; not comparable here)"


def plot_dissimilarity(df, settings, fig_id, width=PAGE_WIDTH):
    """width: inches (Fig 9 is narrower than a page)."""
    import matplotlib.pyplot as plt

    require(df, fig_id, "any task pair")
    keys, m = emd_matrix(df)
    order = sorted(range(len(keys)), key=lambda i: (FAMILY_ORDER.index(keys[i][0])
                                                    if keys[i][0] in FAMILY_ORDER else len(FAMILY_ORDER), i))
    keys, m = [keys[i] for i in order], m[np.ix_(order, order)]  # the paper's family order, cauchy first
    figure, axes = plt.subplots(1, 2, figsize=(width, width + 0.3), squeeze=False,
                                gridspec_kw={"width_ratios": [1, 0.05]})
    ax, cax = axes[0]
    # aspect "auto": the layout places the axis labels inside the canvas; the figure is near square anyway
    im = ax.imshow(m, cmap="magma_r", interpolation="nearest", aspect="auto")
    figure.colorbar(im, cax=cax, label="earth-mover distance")
    fams = list(dict.fromkeys(f for f, _ in keys))
    bounds = [sum(1 for k in keys if k[0] == f) for f in fams]
    edges = np.cumsum([0] + bounds)
    for e in edges[1:-1]:
        ax.axhline(e - 0.5, color="white", lw=1.5)
        ax.axvline(e - 0.5, color="white", lw=1.5)
    centers = (edges[:-1] + edges[1:] - 1) / 2
    ax.set_xticks(centers, fams, rotation=30)
    ax.set_yticks(centers, fams)
    ax.set_xlabel("task (grouped by family)")
    ax.set_ylabel("task (grouped by family)")
    ax.grid(False)
    finish(figure, fig_id, settings, extra=f"{len(keys)} x {len(keys)} tasks")
    return figure
