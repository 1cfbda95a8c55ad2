"""Figure 11: training curves over the learning rate (columns), tau = 0.1, k = 6, at d = 4 and 32 (rows),
trained for the preset's lr_sweep_steps."""

from ..figure_spec import Figure
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig11"
CAPTION = caption("""\
Learning-rate sweep: lr in {0.001, 0.01, 0.1, 1.0}, tau = 0.1, k = 6, d in {4, 32}, with the shorter training
of the sweep (paper: M = 5000); six configurations.""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)
STEPS = "lr_sweep_steps"  # the settings key of its runs' M


def runs(st, s):
    for d in (4, 32):
        for lr in (0.001, 0.01, 0.1, 1.0):
            st.six(ID, {"d": d, "lr": lr}, d=d, k=6, tau=0.1, lr=lr, steps=s[STEPS])


PLOT = training_curves(blocks=("d",))  # a block of rows per d, a column per learning rate

ROW = Figure(ID, "training", PLOT, "Figure 11: learning-rate sweep, tau = 0.1, k = 6",
             evaluation=None, runs=runs, caption=CAPTION, steps_key=STEPS)
