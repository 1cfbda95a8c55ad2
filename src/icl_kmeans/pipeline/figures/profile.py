"""Figure 1: BN's gain over OH (OH / BN) in time and memory over the d x k grid, for the attention the
paper timed (materialised n x n distances and softmax) and for this pipeline's fused kernel."""

from __future__ import annotations

import warnings

import numpy as np

from ...profile_table import ATTENTIONS, relative_gain
from .common import finish, require

PROFILE_METRICS = {"forward_train_ms": "forward time (train mode)", "backward_ms": "backward time",
                   "peak_memory_mb": "peak memory", "forward_eval_ms": "forward time (eval mode)"}
ATTENTION_TITLES = {"materialised": "materialised n x n attention (as the paper timed)",
                    "fused": "fused attention (this pipeline)"}


def plot_fig1(df, settings, fig_id="fig1"):
    """One row per metric; left column the paper-comparable (materialised) attention, right column ours."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    require(df, fig_id, "any profile")
    require(df[df["attention"].notna()] if "attention" in df else df.iloc[0:0], fig_id, "the attention column")
    gain = relative_gain(df)
    attentions = [a for a in ATTENTIONS if a in set(gain["attention"])]
    device = ", ".join(sorted(df["device"].dropna().unique())) if "device" in df else "?"
    figure, axes = plt.subplots(len(PROFILE_METRICS), len(attentions), figsize=(5.6 * len(attentions), 15.5),
                                squeeze=False)
    for r, (metric, name) in enumerate(PROFILE_METRICS.items()):
        for c, attention in enumerate(attentions):
            ax = axes[r, c]
            sub = require(gain[(gain["metric"] == metric) & (gain["attention"] == attention)], fig_id,
                          f"{name}, {attention} attention")
            grid = sub.pivot(index="d", columns="k", values="gain").sort_index(ascending=False)
            logs = np.log2(grid.where(grid > 0))
            span = float(np.nanmax(np.abs(logs.to_numpy()))) if np.isfinite(logs.to_numpy()).any() else 1.0
            span = max(span, 0.1)
            with warnings.catch_warnings():  # seaborn 0.13 calls a colormap method matplotlib 3.11 deprecates
                warnings.simplefilter("ignore", PendingDeprecationWarning)
                sns.heatmap(logs, annot=grid, fmt=".2f", cmap="RdBu", vmin=-span, vmax=span, center=0.0, ax=ax,
                            cbar_kws={"label": "log2(OH / BN)"}, linewidths=0.5, annot_kws={"fontsize": 7})
            ax.set_title(f"{name}: OH / BN\n{ATTENTION_TITLES[attention]}")
            ax.set_xlabel("k")
            ax.set_ylabel("d")
    finish(figure, fig_id, settings, extra=f"device {device}; times: median of the timed repetitions; colour: "
           "log2 of the gain (blue: BN better, red: OH better)")
    return figure
