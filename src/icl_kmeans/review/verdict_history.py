"""Every verdict a results folder's claims were given, per rule version: a rule changed after its verdict was
seen shows the old verdict beside the new one.

results/review/claims.history.csv holds one row per (claim, rule version) ever decided on the folder: the
verdict under that version (status, measured) and a note (how the rule read then, where that is known). It is
committed with the folder and only grows: whoever writes claims.csv (the pipeline's claims job, `review`) adds
the new versions' verdicts to it, and claims.csv carries, for a claim decided under a rule other than the
last one with a verdict in the history, an earlier verdict in previous_status, previous_measured and
previous_version: "rule changed since the committed verdict". That is the latest one that reads differently
from now (status or measured), where there is one: a version that only reworded or refactored a rule would
otherwise hide the verdict a real change of rule replaced.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..atomic import atomic_write_text
from .claim_core import NOT_RUN

HISTORY = Path("review") / "claims.history.csv"
COLUMNS = ["id", "rule_version", "status", "measured", "note"]
MARKS = ["previous_status", "previous_measured", "previous_version", "previous_note"]


def read(results) -> pd.DataFrame:
    path = Path(results) / HISTORY
    if not path.is_file():
        return pd.DataFrame(columns=COLUMNS)
    return pd.read_csv(path, dtype=str, keep_default_na=False)[COLUMNS]


def marked(claims: pd.DataFrame, history: pd.DataFrame) -> pd.DataFrame:
    """claims with MARKS: for a claim decided now (not NOT-RUN), the latest verdict of the history under another
    rule version that differs from now in status or measured, else the latest under another rule version
    (empty where there is none)."""
    out = claims.copy()
    for col in MARKS:
        out[col] = ""
    for i, r in out.iterrows():
        if r["status"] == NOT_RUN:
            continue
        before = history[(history["id"] == r["id"]) & (history["rule_version"] != r["rule_version"])
                         & (history["status"] != NOT_RUN)]
        if len(before):
            differs = before[(before["status"] != r["status"]) | (before["measured"] != str(r["measured"]))]
            last = (differs if len(differs) else before).iloc[-1]
            out.loc[i, MARKS] = [last["status"], last["measured"], last["rule_version"], last["note"]]
    return out


def grown(claims: pd.DataFrame, history: pd.DataFrame) -> pd.DataFrame:
    """The history with the claims' verdicts: a (claim, version) already there gets its latest verdict, a new
    one is appended (the order is the order versions were first decided in)."""
    hist = history.copy()
    for r in claims.itertuples():
        if r.status == NOT_RUN:
            continue
        hit = (hist["id"] == r.id) & (hist["rule_version"] == r.rule_version)
        if hit.any():
            hist.loc[hit, ["status", "measured"]] = [r.status, str(r.measured)]
        else:
            hist.loc[len(hist)] = [r.id, r.rule_version, r.status, str(r.measured), ""]
    return hist.reset_index(drop=True)


def record(results, claims: pd.DataFrame, out_dir=None) -> pd.DataFrame:
    """claims marked against the folder's history, which then takes their verdicts: written atomically to
    out_dir/claims.history.csv (default: the folder's own, results/review)."""
    history = read(results)
    out = marked(claims, history)
    path = Path(out_dir) / HISTORY.name if out_dir is not None else Path(results) / HISTORY
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, grown(claims, history).to_csv(index=False))
    return out
