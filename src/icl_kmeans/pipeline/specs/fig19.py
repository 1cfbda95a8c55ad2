"""Figure 19: Figure 9 with more tasks per family, a page wide."""

from ..figure_spec import Figure
from ._captions import PANELS, SCALE, caption

ID = "fig19"
CAPTION = caption("""\
Figure 9 with more tasks per family: earth-mover distances between tasks, family blocks normal, cauchy,
gumbel, laplace, lognormal.""",
                  SCALE, PANELS)
TASKS = "fig19_tasks_per_family"  # the settings key of its tasks per family


def runs(st, s):
    st.evaluations[ID] = st.dissimilarity(s[TASKS])


def plot(df, settings, fig_id):
    from ..figures.heatmaps import plot_dissimilarity

    return plot_dissimilarity(df, settings, fig_id)


ROW = Figure(ID, "dissimilarity", plot,
             "Figure 19: earth-mover distance between tasks (large)",
             evaluation=ID, runs=runs, caption=CAPTION, tasks_key=TASKS)
