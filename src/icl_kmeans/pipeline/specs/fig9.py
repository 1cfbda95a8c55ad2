"""Figure 9: task dissimilarity: earth-mover distances between tasks of every family."""

from ..figure_spec import Figure
from ._captions import PANELS, SCALE, caption

ID = "fig9"
CAPTION = caption("""\
Task dissimilarity: earth-mover distance between the distributions of squared point-to-initial-center
distances of pairs of tasks, tasks grouped in family blocks in the order normal, cauchy, gumbel, laplace,
lognormal.""",
                  SCALE, PANELS)
TASKS = "fig9_tasks_per_family"  # the settings key of its tasks per family


def runs(st, s):
    st.evaluations[ID] = st.dissimilarity(s[TASKS])


def plot(df, settings, fig_id):
    from ..figures.heatmaps import plot_dissimilarity

    return plot_dissimilarity(df, settings, fig_id, width=5.0)


ROW = Figure(ID, "dissimilarity", plot,
             "Figure 9: earth-mover distance between tasks' squared point-to-initial-center distances",
             evaluation=ID, runs=runs, caption=CAPTION, tasks_key=TASKS)
