"""The paper's figures and Table 1, one row each (TABLE), and what the pipeline asks of them: which ids a
figure draws (a figure drawn in parts, `split`: Figs 15, 16, is drawn one part a target and file, `fig15d`:
part_id, part_of, parent, drawn_ids), which figures share an evaluation, captions.

A figure's row is its spec module's (pipeline/specs/<id>.py: title, runs, scale-line fields, caption,
plotter); this module only reads them. studies (FIGURES, TARGETS, the runs), the figure modules, the
aggregation, the subsets, the plot rule and the review read the rows through it. docs/pipeline.md ("Adding
a figure") has a worked example. Pure Python: Snakemake imports it while it parses the workflow.
"""

from __future__ import annotations

from .figure_spec import KINDS, TRAINED_KINDS, Figure, ModelKey, Part
from .specs import ROWS

__all__ = ["KINDS", "TRAINED_KINDS", "Figure", "ModelKey", "Part", "TABLE", "BY_ID", "PART_IDS", "figure", "ids",
           "part_id", "part_of", "is_part", "parent", "part_letter", "present_parts", "drawn_ids", "part_title",
           "sharing_evaluation", "plot_ids", "caption_template"]

TABLE = ROWS
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
    """The caption of fig_id before its scale and panel lines are filled in: its spec's caption; "" where it has
    none. A part id (fig15d): its figure's caption, which part it is first."""
    row = figure(fig_id)
    text = row.caption
    if text and fig_id in PART_IDS:  # a part drawn on its own: its figure's caption, and which part it is
        part = PART_IDS[fig_id][1]
        text = (f"Part ({part.letter}) of {row.title.partition(':')[0]}: {part.label()}; the other parts are files "
                f"of their own.\n\n{text}")
    return text
