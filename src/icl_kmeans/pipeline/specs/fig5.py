"""Figure 5: the gap L_tilde - L around OH:L2's parameters trained on normal and on cauchy tasks."""

from ..figure_spec import Figure, ModelKey
from ._captions import PANELS, SCALE, caption

ID = "fig5"
CAPTION = caption("""\
Gap of the smoothed bound, L_tilde - L, at tau = 0.1 over a 2-D slice of parameter space around trained OH:L2
models (d = 32, k = 10), trained and evaluated on normal (left) and cauchy (right) tasks. Top: the largest gap
over the tasks (the paper's gap constant); bottom: the mean gap. One colour scale per row, covering both
families. L and L_tilde are sums over the n points of a task, so the gap grows with n: the paper's gap <= 0.5
for normal and > 5 for cauchy were read at its n = 512, and the figure compares with them only at that n.""",
                  SCALE, PANELS)
FAMILIES = ("normal", "cauchy")


def runs(st, s):
    models = {str(ModelKey("OH:L2", family)): st.model("OH", "L2", family=family) for family in FAMILIES}
    testsets = {family: st.testset(family=family, tasks=s["landscape_tasks"]) for family in FAMILIES}
    st.evaluations[ID] = st.landscape("gap", models, testsets)


def plot(df, settings, fig_id):
    from ..figures.heatmaps import plot_gap_surfaces

    return plot_gap_surfaces(df, settings, fig_id)


ROW = Figure(ID, "landscape", plot,
             "Figure 5: gap surfaces (L_tilde - L) at tau = 0.1, OH:L2, normal vs cauchy (d = 32, k = 10)",
             evaluation=ID, runs=runs, caption=CAPTION)
