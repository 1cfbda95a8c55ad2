"""The paper's figures and Table 1, one row each: the table the pipeline iterates over.

studies (FIGURES, TARGETS, which runs train alone), the figure modules (kind, title, plotter,
the time axis), the aggregation, the subsets, the plot rule and the review's captions (caption_template)
and the tests read it. What a figure's runs and evaluation are is still written in studies.build (a
figure that draws an existing evaluation, like fig18, needs nothing there); its caption is the row's
`caption`, or the package's captions/<id>.rst for the rows that leave it empty. docs/pipeline.md ("Adding a
figure") has a worked example. A row lists the parts the paper letters (`parts`: Part(letter, facets)); a
figure too large for a page whole (`split`: Figs 15, 16) is drawn one part a target and file, `fig15d`
(part_id, part_of, parent, drawn_ids), from its figure's one table. Pure Python: Snakemake imports it while
it parses the workflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

KINDS = ("training", "multistep", "landscape", "dissimilarity", "profile")
TRAINED_KINDS = ("training", "multistep", "landscape")  # kinds that draw trained models


class Part(NamedTuple):
    """A part of a figure as the paper letters it: Figure 15(d) is Part("d", (("d", 32), ("tau", 0.1))), the
    curves whose facets hold these values (a block of two rows: training loss, relative validation loss)."""

    letter: str
    facets: tuple  # ((facet key, value), ...)

    def matches(self, facets: dict) -> bool:
        """Whether a curve's (or a table row's) facets hold this part's values (numbers compared as numbers)."""
        return all(k in facets and _same(facets[k], v) for k, v in self.facets)

    def label(self) -> str:
        """'d = 32, tau = 0.1': the part's facets as the titles write them."""
        return ", ".join(f"{k} = {v:g}" if isinstance(v, (int, float)) else f"{k} = {v}" for k, v in self.facets)


def _same(a, b) -> bool:
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a) == str(b)


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
    # the parts the paper letters, in its order (Figure 15(a)-(d)): their letters do not depend on which parts a
    # run holds; empty: a figure without lettered parts
    parts: tuple = ()
    # each part is its own target and file (results/figures/fig15a.pdf, ...; the table stays one per figure):
    # a figure too large for a page when drawn whole (Figs 15, 16)
    split: bool = False


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
           evaluation=None, parts=(Part("a", (("tau", 0.25),)), Part("b", (("tau", 0.1),)))),
    Figure("fig15", "training", "training.plot_training",
           "Figure 15: k sweep (columns); parts (a)-(d): (d, tau)",
           evaluation=None, split=True,
           parts=(Part("a", (("d", 4), ("tau", 1.0))), Part("b", (("d", 4), ("tau", 0.1))),
                  Part("c", (("d", 32), ("tau", 1.0))), Part("d", (("d", 32), ("tau", 0.1))))),
    Figure("fig16", "training", "training.plot_training",
           "Figure 16: task families (columns), d = 32; parts (a)-(d): (k, tau)",
           evaluation=None, split=True,
           parts=(Part("a", (("k", 6), ("tau", 1.0))), Part("b", (("k", 10), ("tau", 1.0))),
                  Part("c", (("k", 6), ("tau", 0.1))), Part("d", (("k", 10), ("tau", 0.1))))),
    Figure("fig17", "training", "training.plot_training",
           "Figure 17: L2, OH vs BN against wall-clock time, with gradient clipping",
           evaluation=None, timed_alone=True,
           parts=(Part("a", (("d", 16), ("k", 16), ("tau", 1.0))), Part("b", (("d", 32), ("k", 25), ("tau", 1.0))))),
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


def part_id(fig_id: str, part: Part) -> str:
    """fig15 and its part (d) -> 'fig15d': the target and file stem of a part drawn on its own."""
    return f"{fig_id}{part.letter}"


PART_IDS = {part_id(f.id, p): (f, p) for f in TABLE if f.split for p in f.parts}  # fig15a -> (fig15's row, Part a)


def part_of(fig_id: str) -> tuple[Figure, Part]:
    """'fig15d' -> (Figure 15's row, its Part d); ValueError for an id that is no part drawn on its own."""
    if fig_id not in PART_IDS:
        raise ValueError(f"{fig_id!r} is no part of a figure drawn in parts; expected one of {list(PART_IDS)}")
    return PART_IDS[fig_id]


def is_part(fig_id: str) -> bool:
    return fig_id in PART_IDS


def parent(fig_id: str) -> str:
    """The figure a part id belongs to ('fig15d' -> 'fig15'); any other id as it is."""
    return PART_IDS[fig_id][0].id if fig_id in PART_IDS else fig_id


def figure(fig_id: str) -> Figure:
    """The registry row of a figure id, or of the figure a part id belongs to (fig15d: Figure 15's row)."""
    fig_id = parent(fig_id)
    if fig_id not in BY_ID:
        raise ValueError(f"unknown figure {fig_id!r}; expected one of {list(BY_ID)}")
    return BY_ID[fig_id]


def part_letter(fig_id: str, facets: dict) -> str | None:
    """The paper's letter of the part whose facets `facets` hold (a curve's or a block's); None: not lettered."""
    for p in figure(fig_id).parts:
        if p.matches(facets):
            return p.letter
    return None


def present_parts(fig_id: str, facets=None) -> tuple[Part, ...]:
    """The parts of fig_id (paper order) that hold a curve: facets, the curves' facets (dicts: a studies'
    Curve.facets, or a table's rows); None: every part."""
    parts = figure(fig_id).parts
    if facets is None:
        return parts
    facets = list(facets)
    return tuple(p for p in parts if any(p.matches(f) for f in facets))


def drawn_ids(fig_id: str, facets=None) -> tuple[str, ...]:
    """The file stems (results/figures/<stem>.pdf/png) and plot targets that draw fig_id: the figure itself,
    or for a figure drawn in parts its parts that hold a curve (facets as present_parts; None: all of them).
    A part id draws itself."""
    if fig_id in PART_IDS:
        return (fig_id,)
    row = figure(fig_id)
    if not row.split:
        return (fig_id,)
    return tuple(part_id(fig_id, p) for p in present_parts(fig_id, facets))


def part_title(fig_id: str) -> str:
    """The title of a part drawn on its own: 'Figure 15(d): k sweep (columns), d = 32, tau = 0.1'."""
    row, part = part_of(fig_id)
    head, _, rest = row.title.partition(":")
    what = rest.split(";")[0].strip()
    return f"{head}({part.letter}): {what}, {part.label()}"


def sharing_evaluation(fig_id: str) -> tuple[str, ...]:
    """The ids that draw the same evaluation table as fig_id (fig8 and fig18), fig_id included."""
    source = figure(fig_id).evaluation
    return (fig_id,) if source is None else tuple(f.id for f in TABLE if f.evaluation == source)


def plot_ids() -> tuple[str, ...]:
    """What the plot rule draws, one file pair each: every drawn figure, a figure drawn in parts as its parts."""
    return tuple(p for f in ids(drawn=True) for p in drawn_ids(f))


def ids(kind: str | None = None, drawn: bool | None = None) -> tuple[str, ...]:
    """The ids in table order, of one kind and/or only those the figure modules draw (drawn=True)."""
    return tuple(f.id for f in TABLE if (kind is None or f.kind == kind)
                 and (drawn is None or (f.plotter is not None) == drawn))


def caption_template(fig_id: str) -> str:
    """The caption of fig_id before its scale and panel lines are filled in: the registry row's caption, or the
    package's captions/<id>.rst; "" where neither exists. A part id (fig15d): its figure's caption, which
    part it is first."""
    from . import captions

    row = figure(fig_id)
    text = row.caption or (captions.template(row.id) if captions.has_template(row.id) else "")
    if text and fig_id in PART_IDS:  # a part drawn on its own: its figure's caption, and which part it is
        part = PART_IDS[fig_id][1]
        text = (f"Part ({part.letter}) of {row.title.partition(':')[0]}: {part.label()}; the other parts are files "
                f"of their own.\n\n{text}")
    return text
