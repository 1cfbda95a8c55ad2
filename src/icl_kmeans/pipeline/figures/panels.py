"""Which panels of a figure can reproduce the paper at the preset's scale, and which are pipeline checks.

A preset with long cells (settings headline_cells; the quick preset) trains every other run for its
short M (quick: M = 150, or 75 for Fig 11's learning-rate sweep). Those runs stop before the learning
transition (at the quick size the models pass one Lloyd step after 800-6000 steps): their panels show
that the pipeline runs, not what the paper found. The figures draw them lighter and say so in the panel
title; every caption lists the panels of each kind (caption_line). A preset without long cells (paper)
trains every run for its M.

Pure Python: Snakemake and the review build captions from the settings alone.
"""

from __future__ import annotations

from .. import studies as studies_mod
from ..figure_registry import TRAINED_KINDS, ModelKey, figure, is_part, parent, part_of
from .common import facet_label

SHORT_NOTE = "before the learning transition"


def short_m(fig: str, s: dict) -> int | None:
    """The preset's short M for a figure's runs (its spec's steps_key); None where the settings lack it."""
    return s.get(figure(fig).steps_key)


def is_short(m: int | None, fig: str, s: dict) -> bool:
    """A run (or curve) that stopped at the preset's short M while the preset trains long cells."""
    return bool(s.get("headline_cells")) and m is not None and m <= short_m(fig, s)


def short_title(m: int) -> str:
    """How a caption names the short runs; a panel's title says "(short: M=150)", its background grey."""
    return f"M={m}, {SHORT_NOTE}"


def _panels(fig: str, st) -> dict:
    """panel name -> {curve label: M} from the studies (the runs' configured steps)."""
    out: dict = {}
    if figure(fig).kind == "training":
        part = part_of(fig)[1] if is_part(fig) else None  # a part drawn on its own (fig15d): its curves
        for c in st.training.get(parent(fig), []):
            if part is not None and not part.matches(c.facets):
                continue
            name = " ".join(facet_label(k, v) for k, v in c.facets.items())
            out.setdefault(name, {})[c.label] = st.runs[c.run]["steps"]
        return out
    spec = st.evaluations.get(fig) or st.evaluations.get(figure(fig).evaluation)  # a row drawing another's
    for label, run in (spec.models if spec is not None else {}).items():  # None: a figure the subset leaves out
        curve, group = ModelKey.parse(label)  # Fig 8/18: trained on <family>; Figs 3, 5: d= / family
        name = (figure(fig).group_name.format(group) if group else "") or "all panels"
        out.setdefault(name, {})[curve] = st.runs[run]["steps"]
    return out


def _ms(curves: dict) -> str:
    return "/".join(str(m) for m in sorted(set(curves.values()), reverse=True))


def caption_line(fig: str, s: dict, studies=None) -> str:
    """One or two sentences for the figure's caption: its panels that can reproduce the paper at this
    scale (every curve trained for a long cell's M, or the preset's M when it has no long cells), the
    panels that only check the pipeline, and the panels that mix both (which curves are long).
    studies: the Studies built from s (the workflow's); built here from s when not given (the review)."""
    if figure(fig).kind not in TRAINED_KINDS:
        return "No trained models: the training length plays no part in this figure."
    panels = _panels(fig, studies if studies is not None else studies_mod.build(s))
    if not panels:
        return "This run draws no panel of this figure."
    if not s.get("headline_cells"):
        return f"Every panel is drawn from runs trained for the preset's M = {_ms(next(iter(panels.values())))}."
    long, short, mixed = [], [], {}
    for name, curves in panels.items():
        kinds = {is_short(m, fig, s) for m in curves.values()}
        if kinds == {False}:
            long.append(f"{name} (M={_ms(curves)})")
        elif kinds == {True}:
            short.append(name)
        else:  # grouped by which curves are long, for how long
            lc = {c: m for c, m in curves.items() if not is_short(m, fig, s)}
            mixed.setdefault((", ".join(lc), _ms(lc)), []).append(name)
    m = short_m(fig, s)
    parts = [("Panels from long runs, which test the paper at this scale: " + "; ".join(long) + ".") if long
             else "No panel tests the paper at this scale."]
    for (curves, ms), names in mixed.items():
        parts.append(f"Long curves only ({curves} at M={ms}; the others {short_title(m)}): {'; '.join(names)}.")
    if short:
        which = "every panel" if not long and not mixed else ("the other panels" if len(short) > 3 else "; ".join(short))
        parts.append(f"Pipeline checks, drawn lighter ({short_title(m)}): {which}.")
    return " ".join(parts)
