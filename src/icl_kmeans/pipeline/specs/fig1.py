"""Figure 1: BN's gain over OH in forward and backward time and peak memory, over a (d, k) grid."""

from ..figure_spec import Figure
from ._captions import PANELS, SCALE, caption

ID = "fig1"
CAPTION = caption("""\
Relative gain of the binary (BN) over the one-hot (OH) embedding, as heatmaps over d (rows) x k (columns): OH
value / BN value for the forward pass in train mode, the backward pass of the smoothed L2 loss (tau = 0.1),
the peak accelerator memory of one forward + backward, and the forward pass in eval mode (rows). Left column:
the attention the paper timed, which materialises the n x n distances and their softmax (paper-comparable;
the review's claim 6d uses it); right column: this pipeline's fused, memory-linear attention. Above 1 (blue)
BN is faster or lighter. Every panel uses one diverging colour scale of log2(OH / BN), centred at a gain of
1, with one colourbar, so that a 1.45x gain is paler than a 10x gain. One model F_{d:k} per cell, batches of normal tasks; times are medians of the timed
repetitions on the device named in the figure. Timings depend on the machine, so this figure is not byte-
reproducible.""",
                  SCALE, PANELS)


def runs(st, s):
    st.evaluations[ID] = st.profile(s["profile_d"], s["profile_k"])


def plot(df, settings, fig_id):
    from ..figures.profile import plot_gains

    return plot_gains(df, settings, fig_id)


ROW = Figure(ID, "profile", plot, "Figure 1: BN's gain over OH (OH / BN; > 1: BN faster or lighter)",
             evaluation=ID, runs=runs, caption=CAPTION, grid="d in {profile_d} x k in {profile_k}")
