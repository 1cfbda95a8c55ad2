"""The claims part of the review report: a summary (counts by status and scale), an index, and one block per
paper figure with the paper's sentence, its number, the measured value, the status, the scale and cells it was
read at, and the figure itself (embedded, linking to the full-size file) or, for Table 1, its table.

Every produced figure is embedded exactly once: in its claims' block, or among the figures without a claim; a
figure drawn in parts (Figs 15, 16) as each of its parts that was drawn.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from ..pipeline.figure_registry import BY_ID, drawn_ids

from .claim_core import STATUSES


def paper_label(fig: str) -> str:
    """fig7 -> 'Fig 7', table1 -> 'Table 1', fig_em -> 'fig_em'."""
    m = re.fullmatch(r"fig(\d+)", fig)
    return f"Fig {m.group(1)}" if m else ("Table 1" if fig == "table1" else fig)


def figure_order(fig: str) -> tuple:
    m = re.fullmatch(r"fig(\d+)", fig)
    return (0, 1.5) if fig == "table1" else ((0, int(m.group(1))) if m else (1, fig))


def scale_label(settings: dict) -> str:
    preset = settings.get("preset", "?")
    if settings.get("subset"):
        return ("paper scale" if preset == "paper" else f"{preset} preset") + ", committed subset"
    return f"{preset} preset"


def summary_table(claims: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """One row per scale (this run's): the number of claims per status, and the total."""
    counts = claims["status"].value_counts()
    row = {"scale": scale_label(settings), **{s: int(counts.get(s, 0)) for s in STATUSES}, "claims": len(claims)}
    return pd.DataFrame([row])


def index_table(claims: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"id": claims["id"], "status": claims["status"], "statement": claims["statement"],
                         "measured": claims["measured"], "threshold": claims["threshold"],
                         "figure": [paper_label(f) for f in claims["figure"]], "source": claims["source"]})


def _text(v) -> str:
    return "" if v is None or (isinstance(v, float) and pd.isna(v)) else str(v)


def claim_block(r, scale: str, e, status_html) -> str:
    """One claim: the paper's sentence and number, the measured value, the status, the rule, the cells."""
    rows = [("paper", f"<blockquote>{e(r.quote)}</blockquote>" if _text(r.quote) else "<i>no sentence</i>"),
            ("paper's number", e(_text(r.reference)) or "<i>none given</i>"),
            ("measured", f"<b>{e(_text(r.measured)) or '-'}</b> (threshold {e(r.threshold)})"),
            ("rule", e(r.rule) + (f" <span class='small'>(rule version {e(r.rule_version)})</span>"
                                  if _text(getattr(r, "rule_version", "")) else "")),
            ("scale", e(scale)),
            ("seeds", e(_text(getattr(r, "seeds", ""))) or "<i>-</i>"),
            ("cells", e(_text(r.detail)))]
    if _text(getattr(r, "previous_status", "")):
        rows.insert(3, ("rule changed since the committed verdict",
                        f'<span class="rule-changed">was <b>{e(r.previous_status)}</b> {e(_text(r.previous_measured))}'
                        f" under rule {e(r.previous_version)}" + (f" ({e(r.previous_note)})" if _text(getattr(
                            r, "previous_note", "")) else "") + "</span>"))
    if _text(r.diagnostic):
        rows.insert(3, ("diagnostic (does not decide)", e(r.diagnostic)))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    changed = ' data-rule-changed="1"' if _text(getattr(r, "previous_status", "")) else ""
    return (f'<div class="claim" id="claim-{e(r.id)}" data-claim="{e(r.id)}" data-status="{e(r.status)}"{changed}>'
            f"<h4>{status_html(r.status)} {e(r.id)}: {e(r.statement)} <span class='small'>({e(r.source)})</span></h4>"
            f'<table class="claim-table">{body}</table></div>')


def evidence(fig: str, figures_dir: Path, results: Path, report_path: Path, img, table) -> tuple[str, bool]:
    """The figure (an embedded PNG linking to the full-size file) or Table 1's table; (html, present)."""
    if fig == "table1":
        csv = Path(results) / "tables" / "table1.csv"
        if csv.is_file():
            return f'<div class="evidence">{table(pd.read_csv(csv))}</div>', True
        return '<p class="no-evidence"><i>Table 1 was not produced by this preset.</i></p>', False
    # a figure drawn in parts (Figs 15, 16): each of its parts that was drawn (a subset may hold one)
    pngs = [Path(figures_dir) / f"{stem}.png" for stem in drawn_ids(fig)] if fig in BY_ID else [
        Path(figures_dir) / f"{fig}.png"]
    pngs = [png for png in pngs if png.is_file()]
    if not pngs:
        return f'<p class="no-evidence"><i>{paper_label(fig)} was not produced by this preset.</i></p>', False
    links = []
    for png in pngs:
        href = os.path.relpath(png.resolve(), Path(report_path).resolve().parent)
        links.append(f'<a href="{href}" target="_blank" title="full size">{img(png)}</a>')
    return f'<div class="evidence">{"".join(links)}</div>', True


def differs_tag(rows: pd.DataFrame, e) -> str:
    """"Differs from the paper at this scale": the figure's FAILed claims with their values, or "" when none
    failed. Driven by the claims table, never typed: the figure itself cannot carry it, since a figure is a
    pure function of its table (the review redraws it) and the claims are decided after it is drawn."""
    failed = rows[rows["status"] == "FAIL"]
    if failed.empty:
        return ""
    items = "; ".join(f"claim {e(r.id)} FAIL, measured {e(_text(r.measured)) or '-'} (threshold {e(r.threshold)})"
                      for r in failed.itertuples())
    return (f'<p class="differs" data-differs="{len(failed)}"><b>Differs from the paper at this scale:</b> '
            f"{items}.</p>")


def figure_blocks(claims: pd.DataFrame, *, settings, figures_dir, results, report_path, captions, e, status_html,
                  img, table, scale_of) -> tuple[str, set[str]]:
    """The per-figure blocks of the claims, in the paper's order; returns (html, the figures shown)."""
    parts, shown = [], set()
    for fig in sorted(set(claims["figure"]), key=figure_order):
        ev, present = evidence(fig, figures_dir, results, report_path, img, table)
        if present:
            shown.add(fig)
        scale = scale_of(fig)
        rows = claims[claims["figure"] == fig]
        items = "".join(claim_block(r, scale, e, status_html) for r in rows.itertuples())
        parts.append(f'<section class="figure-block" id="block-{e(fig)}" data-block="{e(fig)}" '
                     f'data-evidence="{int(present)}"><h3>{e(paper_label(fig))}</h3>{differs_tag(rows, e)}{ev}'
                     f'<div class="caption">{captions(fig)}</div>{items}</section>')
    return "\n".join(parts), shown
