"""Figure 6: multi-step clustering by the six models, embedding once (naive) vs re-embedding every step."""

from ...constants import EMBEDDINGS, REGULARIZERS
from ..figure_spec import Figure
from ._captions import CURVES, PANELS, SCALE, caption

ID = "fig6"
CAPTION = caption("""\
Multi-step clustering, T steps, with models trained at d = 32, k = 10, tau = 0.1 (all six configurations), on
held-out normal tasks. Left: naive (embed once and apply the layer T times), which diverges after one step;
right: re-embed at every step, which keeps improving. y: mean over tasks of log L(X, C(t)); Lloyd's algorithm
from the same initial centers in black.""",
                  SCALE, PANELS, CURVES)


def runs(st, s):
    models = {f"{e}:{r}": st.model(e, r) for e in EMBEDDINGS for r in REGULARIZERS}
    st.evaluations[ID] = st.multistep(models, {"normal": st.testset()}, modes=("naive", "reembed"))


def plot(df, settings, fig_id):
    from ..figures.multistep import plot_naive_vs_reembed

    return plot_naive_vs_reembed(df, settings, fig_id)


ROW = Figure(ID, "multistep", plot,
             "Figure 6: multi-step clustering, d = 32, k = 10, tau = 0.1: naive (left) vs re-embed (right)",
             evaluation=ID, runs=runs, caption=CAPTION)
