"""Figure 2: training curves, (a) d = 4, k = 6 at tau = 1 and 0.1; (b) tau = 0.25, k = 6 at d = 4 and 16."""

from ..figure_spec import Figure
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig2"
CAPTION = caption("""\
Training curves of the six configurations {OH, BN, NA} x {NE, L2}: (a) d = 4, k = 6, tau in {1, 0.1}; (b) tau
= 0.25, k = 6, d in {4, 16}. Top row: smoothed training loss; bottom row: relative validation loss (one layer
against one Lloyd step from the same centers; the dotted line at 1 marks parity). Median over seeds with the
inter-quartile ribbon; normal family, isotropic, equal weights, scale 0.1, lr 0.01.""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)


def runs(st, s):
    for tau in (1.0, 0.1):
        st.six(ID, {"panel": "a", "d": 4, "tau": tau}, d=4, k=6, tau=tau)
    for d in (4, 16):
        st.six(ID, {"panel": "b", "d": d, "tau": 0.25}, d=d, k=6, tau=0.25)


PLOT = training_curves()  # one column per panel and cell, one block of rows

ROW = Figure(ID, "training", PLOT,
             "Figure 2: training, (a) d = 4, k = 6, tau in {1, 0.1}; (b) tau = 0.25, k = 6, d in {4, 16}",
             evaluation=None, runs=runs, caption=CAPTION)
