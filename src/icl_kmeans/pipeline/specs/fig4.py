"""Figure 4: training curves per task family, d = 32, k = 10, at tau = 1 and 0.1."""

from ...constants import FAMILIES
from ..figure_spec import Figure
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig4"
CAPTION = caption("""\
Training per task family (cauchy, gumbel, laplace, lognormal, normal), d = 32, k = 10, tau in {1, 0.1}, each
model trained and validated on its own family; six configurations. Top rows of each block: training loss;
bottom rows: relative validation loss with the dotted line at 1.""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)


def runs(st, s):
    for family in FAMILIES:
        for tau in (1.0, 0.1):
            st.six(ID, {"family": family, "tau": tau}, d=32, k=10, tau=tau, family=family)


PLOT = training_curves(blocks=("tau",))  # a block of rows per tau, a column per family

ROW = Figure(ID, "training", PLOT, "Figure 4: training per task family, d = 32, k = 10",
             evaluation=None, runs=runs, caption=CAPTION)
