"""Figure 7: multi-step clustering (re-embed) by Figure 6's L2 models on shifted task distributions."""

from ...constants import EMBEDDINGS
from ..figure_spec import Figure
from ._captions import CURVES, PANELS, SCALE, caption

ID = "fig7"
CAPTION = caption("""\
Multi-step clustering (re-embed) of the L2 models of Figure 6 (OH, BN, NA; d = 32, k = 10, tau = 0.1) under
distribution shift: unequal component weights, anisotropic components, scale halved (0.05) and doubled (0.2).
Lloyd's in black.""",
                  SCALE, PANELS, CURVES)
# test set name -> how its tasks differ from the training distribution; the panels' order
SHIFTS = {"unequal weights": dict(equal_weights=False), "anisotropic": dict(isotropic=False),
          "scale 0.05": dict(scale=0.05), "scale 0.2": dict(scale=0.2)}


def runs(st, s):
    models = {f"{e}:L2": st.model(e, "L2", family="normal") for e in EMBEDDINGS}
    st.evaluations[ID] = st.multistep(models, {name: st.testset(**shift) for name, shift in SHIFTS.items()})


def plot(df, settings, fig_id):
    """A panel per shift, in SHIFTS' order."""
    from ..figures.multistep import plot_panels_by_testset

    order = list(SHIFTS) + sorted(set(df["testset"]) - set(SHIFTS))
    return plot_panels_by_testset(df, settings, fig_id, order)


ROW = Figure(ID, "multistep", plot,
             "Figure 7: multi-step (re-embed) under distribution shift, L2 models of Figure 6",
             evaluation=ID, runs=runs, caption=CAPTION)
