"""Figure 14: training curves over d (columns), k = 6; parts (a) tau = 0.25 and (b) tau = 0.1."""

from ..figure_spec import Figure, Part
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig14"
CAPTION = caption("""\
Dimension sweep: d in {4, 8, 16, 32}, k = 6, tau in {0.25, 0.1} (one block of rows per tau); six
configurations. The paper finds OH converges in fewer steps than BN at small d, with the gap shrinking as d
grows.""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)


def runs(st, s):
    for d in (4, 8, 16, 32):
        for tau in (0.25, 0.1):
            st.six(ID, {"d": d, "tau": tau}, d=d, k=6, tau=tau)


PLOT = training_curves(blocks=("tau",))  # a block of rows per tau (a part), a column per d

ROW = Figure(ID, "training", PLOT, "Figure 14: d sweep, k = 6",
             evaluation=None, runs=runs, caption=CAPTION,
             parts=(Part("a", (("tau", 0.25),)), Part("b", (("tau", 0.1),))))
