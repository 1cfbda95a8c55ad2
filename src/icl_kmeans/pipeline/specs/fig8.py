"""Figure 8: multi-step clustering (re-embed), L2 models trained on each family (columns) and tested on
each family (rows). Figure 18 draws the same evaluation larger."""

from ...constants import EMBEDDINGS, FAMILIES
from ..figure_spec import Figure, ModelKey
from ._captions import CURVES, PANELS, SCALE, caption

ID = "fig8"
CAPTION = caption("""\
Cross-family generalisation: L2 models (OH, BN, NA; d = 32, k = 10, tau = 0.1) trained on one family (column)
and evaluated by multi-step re-embedding on held-out tasks of another family (row); Lloyd's in black. The
paper finds that cauchy-trained models do not beat Lloyd's on cauchy tasks.""",
                  SCALE, PANELS, CURVES)


def runs(st, s):
    models = {str(ModelKey(f"{e}:L2", family)): st.model(e, "L2", family=family)
              for family in FAMILIES for e in EMBEDDINGS}
    testsets = {family: st.testset(family=family) for family in FAMILIES}
    st.evaluations[ID] = st.multistep(models, testsets, cross="train family x test family")


def plot(df, settings, fig_id):
    from ..figures.multistep import plot_family_grid

    return plot_family_grid(df, settings, fig_id)


ROW = Figure(ID, "multistep", plot,
             "Figure 8: train family (column) x test family (row), multi-step re-embed, L2",
             evaluation=ID, runs=runs, caption=CAPTION, group_name="trained on {}")
