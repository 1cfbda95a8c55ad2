"""What a figure is, as its spec module (pipeline/specs/<id>.py) states it: one Figure, its parts, and the
key of a model in an evaluation. Pure Python with no imports from the pipeline: the specs import it, and
Snakemake imports the specs while it parses the workflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

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
    """One figure (or Table 1): everything the pipeline does differently for it. A spec module holds one,
    as ROW."""

    id: str
    kind: str  # one of KINDS: which aggregation and scale line it gets
    # plotter(df, settings, fig_id) -> a matplotlib Figure from the aggregated table; None: drawn by its own
    # rule (table1). A spec's plotter imports the drawing code when it draws: the spec stays pure Python.
    plotter: Callable | None
    title: str  # the line above the figure
    evaluation: str | None  # the id of the evaluation table it draws (fig18: fig8's); None: training curves
    # runs(studies, settings): adds the figure's training curves (studies.add) or sets its evaluation
    # (studies.evaluations[id]); None: it draws another figure's evaluation (`evaluation`)
    runs: Callable | None = None
    timed_alone: bool = False  # its x-axis is per-run wall-clock time: its runs train alone, never stacked
    # the report's caption (reStructuredText, a Jinja template: {{ snakemake.params.scale }} and
    # {{ snakemake.params.panels }} are filled in)
    caption: str = ""
    # the parts the paper letters, in its order (Figure 15(a)-(d)): their letters do not depend on which parts a
    # run holds; empty: a figure without lettered parts
    parts: tuple = ()
    # each part is its own target and file (results/figures/fig15a.pdf, ...; the table stays one per figure):
    # a figure too large for a page when drawn whole (Figs 15, 16)
    split: bool = False
    # The scale line's fields: which settings it quotes for this figure.
    steps_key: str = "steps"  # the settings key of its runs' M (Fig 11's learning-rate sweep: lr_sweep_steps)
    train_n_key: str | None = None  # the settings key of its training n values; None: the preset's n
    eval_n_key: str | None = None  # the settings key of its evaluation n values; None: the preset's n
    tasks_key: str | None = None  # a dissimilarity figure: the settings key of its tasks per family
    # a profile figure: its grid, settings keys in braces filled in as sets ('d in {profile_d} x ...')
    grid: str = ""
    # how the caption names a panel of an evaluation by its models' group ("trained on {}": Fig 8's
    # training family; "{}": the group as it is, Fig 3's "d=4")
    group_name: str = "{}"


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
