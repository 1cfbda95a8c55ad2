"""Figure 10: training curves over the inverse temperature tau (columns), k = 6, at d = 4 and 32 (rows)."""

from ..figure_spec import Figure
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig10"
CAPTION = caption("""\
Effect of the smoothing temperature: tau in {1, 0.25, 0.14, 0.1}, k = 6, d in {4, 32} (one block of rows per
d); six configurations; training loss (top) and relative validation loss (bottom, dotted line at 1).""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)
TAUS = (1.0, 0.25, 1 / 7, 0.1)  # the reference's inverse temperatures 1, 4, 7, 10 (the paper prints 0.14)


def runs(st, s):
    for d in (4, 32):
        for tau in TAUS:
            st.six(ID, {"d": d, "tau": tau}, d=d, k=6, tau=tau)


PLOT = training_curves(blocks=("d",))  # a block of rows per d, a column per tau

ROW = Figure(ID, "training", PLOT, "Figure 10: tau sweep (columns), k = 6, d (rows)",
             evaluation=None, runs=runs, caption=CAPTION)
