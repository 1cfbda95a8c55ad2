"""Figure 12: length generalisation: Figure 6's L2 models, trained at the preset's n, clustering tasks of
other sizes n (re-embed)."""

from ...constants import EMBEDDINGS
from ..figure_spec import Figure
from ._captions import CURVES, PANELS, SCALE, caption

ID = "fig12"
CAPTION = caption("""\
Length generalisation: L2 models (OH, BN, NA) trained at the preset's n (paper: 512), d = 32, k = 10, tau =
0.1, evaluated by multi-step re-embedding on held-out tasks with other numbers of points n; Lloyd's in black.""",
                  SCALE, PANELS, CURVES)
EVAL_N = "fig12_eval_n"  # the settings key of the n it evaluates at


def runs(st, s):
    models = {f"{e}:L2": st.model(e, "L2", family="normal") for e in EMBEDDINGS}
    st.evaluations[ID] = st.multistep(models, {f"n={n}": st.testset(n=n) for n in s[EVAL_N]})


def plot(df, settings, fig_id):
    """A panel per n, smallest first."""
    from ..figures.multistep import n_of, plot_panels_by_testset

    order = sorted(df["testset"].unique(), key=n_of)
    return plot_panels_by_testset(df, settings, fig_id, order, title=lambda t: f"at {t}")


ROW = Figure(ID, "multistep", plot,
             "Figure 12: length generalisation, models trained at the preset's n, evaluated at other n",
             evaluation=ID, runs=runs, caption=CAPTION, eval_n_key=EVAL_N)
