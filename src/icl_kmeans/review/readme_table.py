"""README.md's reproduction table, generated from the claims (never typed by hand).

    python -m icl_kmeans.review readme [--check]

The same command writes docs/paper-scale.md's numbers from the committed tables (paper_scale_doc.py).

Columns: the claim, the paper's figure, the statement, and one column per scale:
- paper scale: the claims of the committed folder results/paper-scale/results, checked now (claims.check on its
  tables, runs and recorded settings; no training, no rebuild);
- quick: the claims file of the last quick run, if one is committed at QUICK_CLAIMS (a copy of a quick run's
  results/review/claims.csv, with the commit and date of its manifest in QUICK_SOURCE, both written by
  `readme --quick-from results`); without it the column is left out and the table says so.
The table replaces what lies between MARKERS in README.md; --check exits non-zero when README.md differs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .claim_core import STATUSES
from .markers import markers, splice

REPO = Path(__file__).resolve().parents[3]
PAPER_SCALE = Path("results/paper-scale/results")
QUICK_CLAIMS = Path("docs/claims-quick.csv")
QUICK_SOURCE = Path("docs/claims-quick.json")
MARKERS = markers("claims-table")


def paper_scale_claims(repo: Path = REPO) -> pd.DataFrame:
    """The committed folder's claims checked now, marked against its verdict history (a rule changed since)."""
    from . import verdict_history
    from .claims import check
    from .trained import settings_runs

    results = repo / PAPER_SCALE
    meta = results / "manifest.json"
    if not meta.is_file():
        raise FileNotFoundError(f"{meta} is missing: the committed paper-scale folder is needed for the table")
    settings = json.loads(meta.read_text())["settings"]
    return verdict_history.marked(check(results, settings, settings_runs(settings)), verdict_history.read(results))


STALE = "†"  # a quick verdict decided under another rule than the current one


def _text(x) -> str:
    return "" if x is None or (isinstance(x, float) and pd.isna(x)) or str(x) in ("", "nan") else str(x)


def _cell(r, current_version: str | None = None) -> str:
    """STATUS measured (threshold ...); a rule changed since the committed verdict shows that verdict; a quick verdict
    decided under another rule version than current_version is marked STALE."""
    measured = f" {_text(r.measured)}" if _text(r.measured) else ""
    text = "NOT-RUN" if r.status == "NOT-RUN" else f"{r.status}{measured} (threshold {r.threshold})"
    if _text(getattr(r, "previous_status", "")):
        text += (f"; rule changed since the committed verdict: was {r.previous_status} {_text(r.previous_measured)}"
                 + (f" ({r.previous_note})" if _text(getattr(r, "previous_note", "")) else ""))
    if current_version is not None and _text(getattr(r, "rule_version", "")) != current_version:
        text += f" {STALE}"
    return text


def take_quick(results: Path, repo: Path = REPO) -> dict:
    """Copies a finished quick run's claims (results/review/claims.csv) to QUICK_CLAIMS and the commit and
    date of its manifest to QUICK_SOURCE. Refuses a run of another preset, a subset, or an unfinished run."""
    results = Path(results)
    claims, meta = results / "review" / "claims.csv", results / "manifest.json"
    for path in (claims, meta):
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: run the default preset to the end first "
                                    "(`snakemake --cores all`, which writes both)")
    m = json.loads(meta.read_text())
    preset, subset = m["settings"].get("preset"), m["settings"].get("subset")
    if preset != "quick" or subset:
        raise ValueError(f"{results} is a run of preset {preset!r}" + (f" with subset {subset!r}" if subset else "")
                         + "; the README's quick column takes the default quick run only")
    table = pd.read_csv(claims, dtype=str)
    (repo / QUICK_CLAIMS).write_text(table.to_csv(index=False))
    source = {"commit": m["code"].get("commit"), "dirty": m["code"].get("dirty"), "created": m["created"],
              "claims": len(table)}
    (repo / QUICK_SOURCE).write_text(json.dumps(source, indent=1) + "\n")
    return source


def _quick_note(repo: Path) -> str:
    path = repo / QUICK_SOURCE
    if not path.is_file():
        return f"Quick: from `{QUICK_CLAIMS}`."
    src = json.loads(path.read_text())
    return (f"Quick: the default quick run of commit {str(src['commit'])[:7]} ({src['created'][:10]}), "
            f"`{QUICK_CLAIMS}`; its claims are not rechecked here (that needs its results).")


def table(paper: pd.DataFrame, quick: pd.DataFrame | None, quick_note: str = "") -> str:
    head = ["claim", "figure", "the paper"] + (["quick"] if quick is not None else []) + ["paper scale"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    q = quick.set_index("id") if quick is not None else None
    stale = 0
    for r in paper.itertuples():
        cells = [r.id, r.source, r.statement]
        if q is not None:
            if r.id in q.index:
                row = next(q.loc[[r.id]].itertuples())
                cells.append(_cell(row, r.rule_version))
                stale += _text(getattr(row, "rule_version", "")) != r.rule_version
            else:
                cells.append("not in the quick run's file")
        cells.append(_cell(r))
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    counts = paper["status"].value_counts()
    changed = paper.loc[paper["previous_status"].astype(str) != "", "id"].tolist() if "previous_status" in paper else []
    note = (f"\nPaper scale: {len(paper)} claims, " + ", ".join(f"{s} {int(counts.get(s, 0))}" for s in STATUSES)
            + ". NOT-RUN: the committed subset lacks the figure or cells the rule reads. PARTLY: the paper's "
            "quantifier holds in some cells, not all (or its number is missed). INCONCLUSIVE: the seeds disagree, or a "
            "rate is not yet decidable (docs/science.md §10). "
            + (f"Rule changed since the committed verdict ({len(changed)}): {', '.join(changed)}. " if changed else ""))
    if q is not None and stale:
        note += (f"{STALE} {stale} quick verdicts were decided under another version of their rule than the current "
                 "one (rule_version in claims.csv) and are not re-decided here: the quick run must be redone "
                 "(`readme --quick-from results`). ")
    note += ((quick_note or f"Quick: from `{QUICK_CLAIMS}`.") if quick is not None else
             f"The quick column appears when a quick run's `results/review/claims.csv` is committed as `{QUICK_CLAIMS}`.")
    return "\n".join(lines) + "\n" + note + "\n"


def render(readme: str, block: str) -> str:
    return splice(readme, MARKERS, block)


def main(check: bool = False, repo: Path = REPO, quick_from: Path | None = None) -> int:
    from . import paper_scale_doc

    if quick_from is not None:
        src = take_quick(quick_from, repo)
        print(f"took {src['claims']} claims of the quick run of commit {src['commit']} into {repo / QUICK_CLAIMS}")

    quick = pd.read_csv(repo / QUICK_CLAIMS, dtype=str) if (repo / QUICK_CLAIMS).is_file() else None
    readme = repo / "README.md"
    doc = repo / paper_scale_doc.DOC
    written = {readme: render(readme.read_text(), table(paper_scale_claims(repo), quick, _quick_note(repo)))}
    if doc.is_file():
        written[doc] = paper_scale_doc.render(doc.read_text(), paper_scale_doc.blocks(repo / PAPER_SCALE))
    stale = [path for path, text in written.items() if path.read_text() != text]
    if check:
        for path in stale:
            print(f"{path} differs from the committed tables: run `python -m icl_kmeans.review readme`")
        if not stale:
            print(f"{', '.join(map(str, written))}: the generated tables match the committed folder")
        return 1 if stale else 0
    for path, text in written.items():
        path.write_text(text)
        print(f"wrote the generated tables into {path}")
    return 0
