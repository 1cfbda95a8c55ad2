"""Figure 1: BN's gain over OH (OH / BN) in time and memory over the d x k grid, for the attention the
paper timed (materialised n x n distances and softmax) and for this pipeline's fused kernel. Every panel
is drawn on one diverging colour scale of log2(OH / BN), centred at a gain of 1, with one colourbar: a
1.45x gain is pale where a 10x gain is dark."""

from __future__ import annotations

import warnings

import numpy as np

from ...profile_table import ATTENTIONS, busy_text, relative_gain
from .common import FONT, PAGE_WIDTH, finish, require

PROFILE_METRICS = {"forward_train_ms": "forward time (train mode)", "backward_ms": "backward time",
                   "peak_memory_mb": "peak memory", "forward_eval_ms": "forward time (eval mode)"}
ATTENTION_TITLES = {"materialised": "materialised n x n attention (as the paper timed)",
                    "fused": "fused attention (this pipeline)"}
ATTENTION_SHORT = {"materialised": "materialised (as the paper)", "fused": "fused (this pipeline)"}


def plot_gains(df, settings, fig_id):
    """One row per metric; left column the paper-comparable (materialised) attention, right column ours."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    require(df, fig_id, "any profile")
    require(df[df["attention"].notna()] if "attention" in df else df.iloc[0:0], fig_id, "the attention column")
    gain = relative_gain(df)
    attentions = [a for a in ATTENTIONS if a in set(gain["attention"])]
    device = ", ".join(sorted(df["device"].dropna().unique())) if "device" in df else "?"
    cells = []
    for metric in PROFILE_METRICS:
        for attention in attentions:
            sub = gain[(gain["metric"] == metric) & (gain["attention"] == attention)]
            cells.append(np.log2(sub["gain"].where(sub["gain"] > 0)).to_numpy(float))
    logs_all = np.concatenate(cells) if cells else np.array([])
    span = float(np.nanmax(np.abs(logs_all))) if np.isfinite(logs_all).any() else 1.0
    span = max(span, 0.1)  # one scale for every panel, symmetric about a gain of 1
    figure, axes = plt.subplots(len(PROFILE_METRICS), len(attentions) + 1, figsize=(PAGE_WIDTH, 9.0),
                                squeeze=False, gridspec_kw={"width_ratios": [1] * len(attentions) + [0.05]})
    gs = axes[0, -1].get_subplotspec().get_gridspec()
    for cell in axes[:, -1]:
        cell.remove()  # the last column holds the one colourbar
    for r, (metric, name) in enumerate(PROFILE_METRICS.items()):
        for c, attention in enumerate(attentions):
            ax = axes[r, c]
            sub = require(gain[(gain["metric"] == metric) & (gain["attention"] == attention)], fig_id,
                          f"{name}, {attention} attention")
            grid = sub.pivot(index="d", columns="k", values="gain").sort_index(ascending=False)
            logs = np.log2(grid.where(grid > 0))
            with warnings.catch_warnings():  # seaborn 0.13 calls a colormap method matplotlib 3.11 deprecates
                warnings.simplefilter("ignore", PendingDeprecationWarning)
                sns.heatmap(logs, annot=grid, fmt=".2f", cmap="RdBu", vmin=-span, vmax=span, center=0.0, ax=ax,
                            cbar=False, linewidths=0.5, annot_kws={"fontsize": FONT["tick"]})
            ax.set_title(f"{name}\n{ATTENTION_SHORT[attention]}")
            ax.set_xlabel("k")
            ax.set_ylabel("d" if c == 0 else "")
    colourbar(figure, figure.add_subplot(gs[:, -1]), span)
    busy = busy_text(df.loc[df["metric"] == "other_cpus_busy", "value"], device.split(", "))
    finish(figure, fig_id, settings, extra=f"device {device}{', ' + busy if busy else ''}; times: median of the "
           "timed repetitions; numbers: OH / BN; one colour scale (blue: BN better, red: OH better)")
    return figure


def colourbar(figure, cax, span: float) -> None:
    """One colourbar for every panel (in cax), labelled with gains (OH / BN)."""
    import matplotlib as mpl

    norm = mpl.colors.Normalize(-span, span)
    cb = figure.colorbar(mpl.cm.ScalarMappable(norm=norm, cmap="RdBu"), cax=cax,
                         label="gain OH / BN (log2 colour scale, centred at 1)")
    ticks = np.linspace(-span, span, 5)
    cb.set_ticks(ticks, labels=[f"{2 ** t:.3g}" for t in ticks])
