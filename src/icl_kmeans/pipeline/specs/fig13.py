"""Figure 13: training curves over the training n (columns), k = 6, tau = 0.1, at d = 4 and 32 (rows)."""

from ..figure_spec import Figure
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig13"
CAPTION = caption("""\
Training with different numbers of points per task n (paper: 128 ... 1024), k = 6, tau = 0.1, d in {4, 32};
six configurations.""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)
TRAIN_N = "fig13_train_n"  # the settings key of its training n


def runs(st, s):
    for d in (4, 32):
        for n in s[TRAIN_N]:
            st.six(ID, {"d": d, "n": n}, d=d, k=6, tau=0.1, n=n)


PLOT = training_curves(blocks=("d",))  # a block of rows per d, a column per n

ROW = Figure(ID, "training", PLOT, "Figure 13: training n sweep, k = 6, tau = 0.1",
             evaluation=None, runs=runs, caption=CAPTION, train_n_key=TRAIN_N)
