"""Figure 3: the L2 loss (tau = 0.1) around trained OH and BN parameters, k = 6, at d = 4 and 32."""

from dataclasses import replace

from ..figure_spec import Figure, ModelKey
from ._captions import PANELS, SCALE, caption

ID = "fig3"
CAPTION = caption("""\
Loss surfaces of the L2-smoothed loss (tau = 0.1; the paper does not state tau, this choice is recorded)
around the trained parameters (star) of OH:L2 and BN:L2 models, k = 6, d in {4, 32}, along two random filter-
normalised directions (Li et al. 2018), on held-out normal tasks. Colour: the mean loss over the tasks, on a
log scale shared by OH and BN at each d (one colourbar per row), so that the two compare by colour. First
seed only.""",
                  SCALE, PANELS)


def runs(st, s):
    models = {str(ModelKey(f"{e}:L2", f"d={d}")): st.model(e, "L2", d=d, k=6) for d in (4, 32) for e in ("OH", "BN")}
    testsets = {name: replace(st.testset(), d=int(name.split("=")[1]), k=6, tasks=s["landscape_tasks"])
                for name in ("d=4", "d=32")}
    st.evaluations[ID] = st.landscape("loss", models, testsets)


def plot(df, settings, fig_id):
    from ..figures.heatmaps import plot_loss_surfaces

    return plot_loss_surfaces(df, settings, fig_id)


ROW = Figure(ID, "landscape", plot,
             "Figure 3: loss surfaces of the L2 loss (tau = 0.1) around trained parameters, k = 6",
             evaluation=ID, runs=runs, caption=CAPTION)
