"""Claims on the multi-step evaluations that the paper's text states beyond science.md §10's list:
Fig 6 (NA), Fig 7 (each distribution shift, with the paper's exception at a larger scale), Fig 12 (each n).

Registered into claim_core.CLAIMS on import (claims.py imports this module at its end; it imports claim_core and
claim_tables, never claims.py). Conventions as in claims.py: median over seeds of the mean log-objective per (test
set, curve, t); a non-finite seed FAILs the claim (NonFinite); margins are strict with no tolerance. Thresholds
fixed before the values were read.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from .claim_core import NotRun, Verdict, claim, every_cell, fmt as _fmt
from .claim_tables import NA, finite_or_fail as _finite_or_fail, lloyd_at, multistep_at

FIG7_CURVES = ("OH:L2", "BN:L2")  # the paper's sentence is about OH and BN
FIG7_TRAIN_SCALE = 0.1            # the scale the Fig 6 models were trained at (science.md §8); a test set "scale s" with
#                                   s > this is the paper's exception ("a larger scale than the one used during training")
FIG7_EARLY_FRACTION = 0.25        # 11b: "initially" = some t in 1..ceil(0.25 T) (t = 1..5 of the paper's T = 20)
MULTISTEP_MARGIN = 0.0            # 5d, 5e, 11a, 11b, 12: strict inequalities on median log-objectives
FIG12_CURVES = ("OH:L2", "BN:L2")


def _per_t(df: pd.DataFrame, testset: str, curves) -> pd.DataFrame:
    """Rows t = 1..T, columns the curves and 'Lloyd': medians over seeds of log_objective on `testset`."""
    sub = df[(df["metric"] == "log_objective") & (df["testset"] == testset)]
    models = sub[sub["curve"].isin(curves)]
    missing = set(curves) - set(models["curve"])
    if missing:
        raise NotRun(f"{testset}: no log-objective of {sorted(missing)}")
    _finite_or_fail(models, f"on {testset}")
    lloyd = sub[sub["curve"] == "Lloyd"]
    if lloyd.empty:
        raise NotRun(f"no Lloyd baseline on {testset}")
    _finite_or_fail(lloyd, f"of Lloyd's on {testset}")
    wide = pd.concat([models, lloyd]).groupby(["t", "curve"])["value"].median().unstack("curve")
    return wide[wide.index >= 1].dropna()


def _scale(testset: str) -> float | None:
    m = re.fullmatch(r"scale ([0-9.]+)", str(testset))
    return float(m.group(1)) if m else None


def _fig7_split(df: pd.DataFrame) -> tuple[list[str], list[str]]:
    testsets = sorted(df.loc[df["metric"] == "log_objective", "testset"].dropna().unique())
    larger = [t for t in testsets if (_scale(t) or 0) > FIG7_TRAIN_SCALE]
    return [t for t in testsets if t not in larger], larger


_FIG7_QUOTE = ("The learned models can perform multi-step clustering quite well, with OH and BN token embedding based "
               "models outperforming Lloyd's iterations significantly in all but one case -- for data sampled from a "
               "mixture of normal distributions with a larger scale (than the one used during training), the models "
               "slightly under-perform Lloyd's initially, but eventually outperform Lloyd's with additional "
               "clustering steps.")


@claim("11a", "Fig 7, §4", "fig7",
       "Under every distribution shift except a larger scale, OH and BN outperform Lloyd's iterations.",
       "for every Fig 7 test set other than a scale larger than the training scale 0.1, and each of OH:L2, BN:L2: "
       "median log-objective - Lloyd's < -threshold at every t = 1..T", f"{MULTISTEP_MARGIN:g}",
       reference="all but one case (the larger scale)", quote=_FIG7_QUOTE)
def claim_11a(tables):
    df = tables.get("fig7")
    others, _ = _fig7_split(df)
    if not others:
        raise NotRun("fig7 has no test set other than a larger scale")
    cells, held, worst = [], 0, -math.inf
    for ts in others:
        w = _per_t(df, ts, FIG7_CURVES)
        for c in FIG7_CURVES:
            diff = w[c] - w["Lloyd"]
            above = [int(t) for t, v in diff.items() if not v < -MULTISTEP_MARGIN]
            held += not above
            worst = max(worst, float(diff.max()))
            cells.append(f"{ts} {c}: max over t of model - Lloyd = {_fmt(float(diff.max()))}"
                         + (f" (not below at t = {', '.join(map(str, above))})" if above else ""))
    v = every_cell(held, len(others) * len(FIG7_CURVES), "; ".join(cells) + f"; T = {int(w.index.max())}",
                   "(test set, curve) cells")
    return Verdict(v.measured, v.status, v.detail, f"largest model - Lloyd over the cells and t: {_fmt(worst)}")


@claim("11b", "Fig 7, §4", "fig7",
       "At a larger scale than in training, OH and BN slightly under-perform Lloyd's initially but eventually "
       "outperform it.",
       "for every Fig 7 test set with a scale larger than 0.1, and each of OH:L2, BN:L2: median log-objective >= "
       f"Lloyd's at some t in 1..ceil({FIG7_EARLY_FRACTION:g} T), and < Lloyd's - threshold at T",
       f"{MULTISTEP_MARGIN:g}", reference="the one exception (scale doubled)", quote=_FIG7_QUOTE)
def claim_11b(tables):
    df = tables.get("fig7")
    _, larger = _fig7_split(df)
    if not larger:
        raise NotRun("fig7 has no test set with a scale larger than the training scale")
    cells, held = [], 0
    for ts in larger:
        w = _per_t(df, ts, FIG7_CURVES)
        T = int(w.index.max())
        early = w[w.index <= math.ceil(FIG7_EARLY_FRACTION * T)]
        for c in FIG7_CURVES:
            diff = w[c] - w["Lloyd"]
            behind = [int(t) for t, v in (early[c] - early["Lloyd"]).items() if v >= 0]
            end = float(diff.loc[T])
            ok = bool(behind) and end < -MULTISTEP_MARGIN
            held += ok
            cells.append(f"{ts} {c}: at or above Lloyd's at t = {', '.join(map(str, behind)) or 'none'} of "
                         f"1..{int(early.index.max())}; model - Lloyd at T={T}: {_fmt(end)}")
    return every_cell(held, len(larger) * len(FIG7_CURVES), "; ".join(cells), "(test set, curve) cells")


@claim("12", "Fig 12, App F", "fig12",
       "OH and BN outperform Lloyd's on smaller and larger problems than in training (length generalisation).",
       "for every n of Fig 12 and each of OH:L2, BN:L2: median log-objective at T - Lloyd's at T < -threshold",
       f"{MULTISTEP_MARGIN:g}", reference="n = 128, 256, 1024 and 2048",
       quote="The models using the (OH) and (BN) token embeddings outperform Lloyd's iterations, both for smaller "
             "problems (with 128 and 256 samples) and larger problems (with 1024 and 2048 samples).")
def claim_12(tables):
    df = tables.get("fig12")
    testsets = sorted(df.loc[df["metric"] == "log_objective", "testset"].dropna().unique(),
                      key=lambda s: (len(str(s)), str(s)))
    if not testsets:
        raise NotRun("fig12 has no log-objective")
    cells, worst = [], -math.inf
    for ts in testsets:
        w = _per_t(df, ts, FIG12_CURVES)
        T = int(w.index.max())
        for c in FIG12_CURVES:
            v = float(w.loc[T, c] - w.loc[T, "Lloyd"])
            worst = max(worst, v)
            cells.append(f"{ts} {c}: {_fmt(w.loc[T, c])} vs Lloyd {_fmt(w.loc[T, 'Lloyd'])} ({_fmt(v)})")
    return _fmt(worst), worst < -MULTISTEP_MARGIN, f"at T: {'; '.join(cells)}"


_FIG6_QUOTE_NAIVE = ("After the first-step, the k-means objective of the centers generated by the models diverge for "
                     "all forms of token embeddings (OH/BN/NA) and min-regularizer (NE/L2).")


@claim("5d", "Fig 6, §4", "fig6",
       "Naive multi-step diverges after step 1 for NA too.",
       "for NA:NE and NA:L2 in naive mode, median log-objective at T - at t = 1 > threshold",
       f"{MULTISTEP_MARGIN:g}", quote=_FIG6_QUOTE_NAIVE)
def claim_5d(tables):
    df = tables.get("fig6")
    t1 = multistep_at(df, 1, mode="naive", curve=list(NA))
    tT = multistep_at(df, None, mode="naive", curve=list(NA))
    rise = (tT - t1.reindex(tT.index))
    worst = float(rise.min())
    return _fmt(worst), worst > MULTISTEP_MARGIN, "log L(T) - log L(1): " + "; ".join(
        f"{c}: {_fmt(v)}" for c, v in rise.items())


@claim("5e", "Fig 6, §4", "fig6",
       "With re-embedding, NA improves with more steps but underperforms Lloyd's.",
       "for NA:NE and NA:L2 in re-embed mode: median log-objective at T - at t = 1 < -threshold, and at T - "
       "Lloyd's at T > threshold", f"{MULTISTEP_MARGIN:g}",
       quote="Models with no token embeddings also show improvements with multiple steps but underperform Lloyd's.")
def claim_5e(tables):
    df = tables.get("fig6")
    t1 = multistep_at(df, 1, mode="reembed", curve=list(NA))
    tT = multistep_at(df, None, mode="reembed", curve=list(NA))
    testset = sorted(df["testset"].dropna().unique())[0]
    lloyd = lloyd_at(df, testset)
    change, vs = tT - t1.reindex(tT.index), tT - lloyd
    ok = bool((change < -MULTISTEP_MARGIN).all() and (vs > MULTISTEP_MARGIN).all())
    return (f"{_fmt(float(change.max()))}; {_fmt(float(vs.min()))}", ok,
            "log L(T) - log L(1): " + "; ".join(f"{c}: {_fmt(v)}" for c, v in change.items())
            + f"; model - Lloyd at T (Lloyd {_fmt(lloyd)}): " + "; ".join(f"{c}: {_fmt(v)}" for c, v in vs.items()))

