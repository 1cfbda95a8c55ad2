"""Figure 15: training curves over k (columns); parts (a)-(d) its (d, tau) cells, one file each."""

from ..figure_spec import Figure, Part
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig15"
CAPTION = caption("""\
Number of clusters: k in {6, 10, 16, 25} (columns) x (d, tau) in parts (a) (4, 1), (b) (4, 0.1), (c) (32, 1),
(d) (32, 0.1), each part a file of its own; six configurations, no gradient clipping. Diverged runs (non-finite loss) are kept: their curves
stop at the last finite step and the panel names them (paper: OH at d = 32, k = 25, tau = 0.1 diverges in 3/10
seeds).""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)
CELLS = ((4, 1.0), (4, 0.1), (32, 1.0), (32, 0.1))  # (d, tau) of parts (a)-(d)


def runs(st, s):
    for k in (6, 10, 16, 25):
        for d, tau in CELLS:
            st.six(ID, {"k": k, "d": d, "tau": tau}, d=d, k=k, tau=tau)


PLOT = training_curves(blocks=("d", "tau"))  # a part's block of rows (d, tau), a column per k

ROW = Figure(ID, "training", PLOT, "Figure 15: k sweep (columns); parts (a)-(d): (d, tau)",
             evaluation=None, runs=runs, caption=CAPTION, split=True,
             parts=tuple(Part(letter, (("d", d), ("tau", tau))) for letter, (d, tau) in zip("abcd", CELLS)))
