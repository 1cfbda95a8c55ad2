"""Beyond the paper (this project's extension): OH:L2 and BN:L2 against Lloyd's and EM on normal mixtures,
over the task size n."""

from ..figure_spec import Figure
from ._captions import CURVES, PANELS, SCALE, caption

ID = "fig_em"
CAPTION = caption("""\
This project's extension, not a figure of the paper (after He et al., transformers vs EM): on held-out normal-mixture tasks (d = 32, k = 10), the
trained transformers (re-embed; OH:L2 and BN:L2, tau = 0.1), Lloyd's (black) and EM for an isotropic Gaussian
mixture (purple), all from the same initial centers. Left: mean log k-means objective against the step t (linear axis, as Figs 6, 7 and 12); middle:
misclustering rate against t (at the preset's n); right: misclustering rate at the last step against n.""",
                  SCALE, PANELS, CURVES)
EVAL_N = "fig_em_n"  # the settings key of the n it evaluates at


def runs(st, s):
    models = {f"{e}:L2": st.model(e, "L2", family="normal") for e in ("OH", "BN")}
    st.evaluations[ID] = st.multistep(models, {f"n={n}": st.testset(n=n) for n in s[EVAL_N]},
                                      baselines=("lloyd", "em"))


def plot(df, settings, fig_id):
    from ..figures.multistep import plot_em_comparison

    return plot_em_comparison(df, settings, fig_id)


ROW = Figure(ID, "multistep", plot,
             "Beyond the paper (this project's extension): transformer vs Lloyd's vs EM on normal mixtures, "
             "d = 32, k = 10", evaluation=ID, runs=runs, caption=CAPTION, eval_n_key=EVAL_N)
