"""Figure 18: Figure 8's evaluation (fig8's table) drawn larger; no runs of its own."""

from ..figure_spec import Figure
from ._captions import CURVES, PANELS, SCALE, caption

ID = "fig18"
CAPTION = caption("""\
Figure 8 drawn large: the 5 x 5 grid of train family (column) x test family (row), multi-step re-embed, L2
models, Lloyd's in black.""",
                  SCALE, PANELS, CURVES)


def plot(df, settings, fig_id):
    from ..figures.multistep import plot_family_grid

    return plot_family_grid(df, settings, fig_id, row_height=1.55)


ROW = Figure(ID, "multistep", plot,
             "Figure 18: train family (column) x test family (row), multi-step re-embed, L2 (large)",
             evaluation="fig8", caption=CAPTION, group_name="trained on {}")
