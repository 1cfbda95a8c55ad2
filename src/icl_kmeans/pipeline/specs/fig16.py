"""Figure 16: training curves per task family (columns), d = 32; parts (a)-(d) its (k, tau) cells, one
file each."""

from ...constants import FAMILIES
from ..figure_spec import Figure, Part
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig16"
CAPTION = caption("""\
Task families (columns: cauchy, gumbel, laplace, lognormal, normal) x (k, tau) in parts (a) (6, 1), (b) (10, 1),
(c) (6, 0.1), (d) (10, 0.1), each part a file of its own, d = 32; six configurations trained and validated on each
family.""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)
CELLS = ((6, 1.0), (10, 1.0), (6, 0.1), (10, 0.1))  # (k, tau) of parts (a)-(d)


def runs(st, s):
    for family in FAMILIES:
        for k, tau in CELLS:
            st.six(ID, {"family": family, "k": k, "tau": tau}, d=32, k=k, tau=tau, family=family)


PLOT = training_curves(blocks=("tau", "k"))  # a part's block of rows (tau, k), a column per family

ROW = Figure(ID, "training", PLOT, "Figure 16: task families (columns), d = 32; parts (a)-(d): (k, tau)",
             evaluation=None, runs=runs, caption=CAPTION, split=True,
             parts=tuple(Part(letter, (("k", k), ("tau", tau))) for letter, (k, tau) in zip("abcd", CELLS)))
