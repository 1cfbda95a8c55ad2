"""The paper's figures and Table 1, one row each: the table the pipeline iterates over.

studies (FIGURES, TARGETS, which runs train alone), the figure modules (kind, title, plotter,
the time axis), the aggregation, the subsets, the plot rule and the review's captions (caption_template)
and the tests read it. What a figure's runs and evaluation are is still written in studies.build (a
figure that draws an existing evaluation, like fig18, needs nothing there); its caption is the row's
`caption`, or the package's captions/<id>.rst for the rows that leave it empty. docs/pipeline.md ("Adding a
figure") has a worked example. Pure Python: Snakemake imports it while it parses the workflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

KINDS = ("training", "multistep", "landscape", "dissimilarity", "profile")
TRAINED_KINDS = ("training", "multistep", "landscape")  # kinds that draw trained models


@dataclass(frozen=True)
class Figure:
    id: str
    kind: str  # one of KINDS: which aggregation and scale line it gets
    plotter: str | None  # "<module of pipeline.figures>.<function>"; None: drawn by its own rule (table1)
    title: str  # the line above the figure
    evaluation: str | None  # the id of the evaluation table it draws (fig18: fig8's); None: training curves
    plot_options: tuple = ()  # keyword arguments of the plotter, as (name, value) pairs
    timed_alone: bool = False  # its x-axis is per-run wall-clock time: its runs train alone, never stacked
    # the report's caption (reStructuredText; {{ snakemake.params.scale }} and {{ snakemake.params.panels }}
    # are filled in); empty: the package's captions/<id>.rst
    caption: str = ""


class ModelKey(NamedTuple):
    """Which model of an evaluation: its curve label and the group its figure draws it in (Fig 8/18: the
    training family; Fig 3: "d=4"; Fig 5: the test family; "" for none). Evaluation specs hold it as the
    string str(key), "OH:L2|cauchy" (the form their job parameters and run records have always had);
    ModelKey.parse reads it back, so that no module splits the string itself."""

    curve: str
    group: str = ""

    def __str__(self) -> str:
        return f"{self.curve}|{self.group}" if self.group else self.curve

    @classmethod
    def parse(cls, key: str) -> "ModelKey":
        curve, _, group = str(key).partition("|")
        return cls(curve, group)


TABLE = (
    Figure("fig1", "profile", "profile.plot_fig1",
           "Figure 1: BN's gain over OH (OH / BN; > 1: BN faster or lighter)",
           evaluation="fig1"),
    Figure("fig2", "training", "training.plot_training",
           "Figure 2: training, (a) d = 4, k = 6, tau in {1, 0.1}; (b) tau = 0.25, k = 6, d in {4, 16}",
           evaluation=None),
    Figure("fig3", "landscape", "heatmaps.plot_fig3",
           "Figure 3: loss surfaces of the L2 loss (tau = 0.1) around trained parameters, k = 6",
           evaluation="fig3"),
    Figure("fig4", "training", "training.plot_training",
           "Figure 4: training per task family, d = 32, k = 10",
           evaluation=None),
    Figure("fig5", "landscape", "heatmaps.plot_fig5",
           "Figure 5: gap surfaces (L_tilde - L) at tau = 0.1, OH:L2, normal vs cauchy (d = 32, k = 10)",
           evaluation="fig5"),
    Figure("fig6", "multistep", "multistep.plot_fig6",
           "Figure 6: multi-step clustering, d = 32, k = 10, tau = 0.1: naive (left) vs re-embed (right)",
           evaluation="fig6"),
    Figure("fig7", "multistep", "multistep.plot_fig7",
           "Figure 7: multi-step (re-embed) under distribution shift, L2 models of Figure 6",
           evaluation="fig7"),
    Figure("fig8", "multistep", "multistep.plot_family_grid",
           "Figure 8: train family (column) x test family (row), multi-step re-embed, L2",
           evaluation="fig8"),
    Figure("fig9", "dissimilarity", "heatmaps.plot_dissimilarity",
           "Figure 9: earth-mover distance between tasks' squared point-to-initial-center distances",
           evaluation="fig9"),
    Figure("fig10", "training", "training.plot_training",
           "Figure 10: tau sweep (columns), k = 6, d (rows)",
           evaluation=None),
    Figure("fig11", "training", "training.plot_training",
           "Figure 11: learning-rate sweep, tau = 0.1, k = 6",
           evaluation=None),
    Figure("fig12", "multistep", "multistep.plot_fig12",
           "Figure 12: length generalisation, models trained at the preset's n, evaluated at other n",
           evaluation="fig12"),
    Figure("fig13", "training", "training.plot_training",
           "Figure 13: training n sweep, k = 6, tau = 0.1",
           evaluation=None),
    Figure("fig14", "training", "training.plot_training",
           "Figure 14: d sweep, k = 6",
           evaluation=None),
    Figure("fig15", "training", "training.plot_training",
           "Figure 15: k sweep (columns); parts (a)-(d): (d, tau)",
           evaluation=None),
    Figure("fig16", "training", "training.plot_training",
           "Figure 16: task families (columns), d = 32; parts (a)-(d): (k, tau)",
           evaluation=None),
    Figure("fig17", "training", "training.plot_training",
           "Figure 17: L2, OH vs BN against wall-clock time, with gradient clipping",
           evaluation=None, timed_alone=True),
    Figure("fig18", "multistep", "multistep.plot_family_grid",
           "Figure 18: train family (column) x test family (row), multi-step re-embed, L2 (large)",
           evaluation="fig8", plot_options=(("row_height", 1.55),)),
    Figure("fig19", "dissimilarity", "heatmaps.plot_dissimilarity",
           "Figure 19: earth-mover distance between tasks (large)",
           evaluation="fig19"),
    Figure("fig_em", "multistep", "multistep.plot_fig_em",
           "Beyond the paper (this project's extension): transformer vs Lloyd's vs EM on normal mixtures, "
           "d = 32, k = 10",
           evaluation="fig_em"),
    Figure("table1", "profile", None,
           "Table 1: OH vs BN at d = 32",
           evaluation="table1"),
)
BY_ID = {f.id: f for f in TABLE}


def figure(fig_id: str) -> Figure:
    if fig_id not in BY_ID:
        raise ValueError(f"unknown figure {fig_id!r}; expected one of {list(BY_ID)}")
    return BY_ID[fig_id]


def sharing_evaluation(fig_id: str) -> tuple[str, ...]:
    """The ids that draw the same evaluation table as fig_id (fig8 and fig18), fig_id included."""
    source = figure(fig_id).evaluation
    return (fig_id,) if source is None else tuple(f.id for f in TABLE if f.evaluation == source)


def ids(kind: str | None = None, drawn: bool | None = None) -> tuple[str, ...]:
    """The ids in table order, of one kind and/or only those the figure modules draw (drawn=True)."""
    return tuple(f.id for f in TABLE if (kind is None or f.kind == kind)
                 and (drawn is None or (f.plotter is not None) == drawn))


def caption_template(fig_id: str) -> str:
    """The caption of fig_id before its scale and panel lines are filled in: the registry row's caption, or the
    package's captions/<id>.rst; "" where neither exists."""
    from . import captions

    row = figure(fig_id)
    if row.caption:
        return row.caption
    return captions.template(fig_id) if captions.has_template(fig_id) else ""
