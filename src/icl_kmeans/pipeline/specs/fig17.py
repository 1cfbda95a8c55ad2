"""Figure 17: OH:L2 vs BN:L2 with gradient clipping against wall-clock time; parts (a), (b) its (d, k, tau)
cells. Its runs train alone (never stacked), so that their times compare."""

from ..figure_spec import Figure, Part
from ._captions import CURVES, PANELS, RELATIVE_LOSS, SCALE, caption
from ._plotters import training_curves

ID = "fig17"
CAPTION = caption("""\
Training against wall-clock time: L2 only, OH vs BN, gradient clipping at norm 1, (d, k, tau) in {(16, 16, 1),
(32, 25, 1)} (blocks of rows) x training n (columns). x: median over seeds of the elapsed training time at
each step. Wall times depend on the machine, so this figure is not byte-reproducible.""",
                  SCALE, PANELS, CURVES, RELATIVE_LOSS)
CELLS = ((16, 16, 1.0), (32, 25, 1.0))  # (d, k, tau) of parts (a), (b)
TRAIN_N = "fig17_train_n"  # the settings key of its training n


def runs(st, s):
    for d, k, tau in CELLS:
        for n in s[TRAIN_N]:
            for e in ("OH", "BN"):
                st.add(ID, {"d": d, "k": k, "tau": tau, "n": n}, d=d, k=k, tau=tau, n=n, embedding=e,
                       regularizer="L2", clip_grad=1.0)


PLOT = training_curves(blocks=("d", "k", "tau"))  # a part's block of rows, a column per n, against wall-clock time

ROW = Figure(ID, "training", PLOT, "Figure 17: L2, OH vs BN against wall-clock time, with gradient clipping",
             evaluation=None, runs=runs, caption=CAPTION, timed_alone=True, train_n_key=TRAIN_N,
             parts=tuple(Part(letter, (("d", d), ("k", k), ("tau", tau))) for letter, (d, k, tau) in zip("ab", CELLS)))
