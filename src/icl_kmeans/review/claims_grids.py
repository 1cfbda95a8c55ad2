"""Claims on the grids and the task probe that the paper's text states: Fig 3 (the loss surfaces), Fig 9/19
(cauchy tasks are dissimilar to the rest), Fig 10 (the training loss falls with tau), Fig 11 (learning rates).

Registered into claim_core.CLAIMS on import (claims.py imports this module at its end; it imports claim_core and
claim_tables, never claims.py). Thresholds fixed before any value of these figures was read.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .claim_core import NotRun, claim, every_cell, fmt as _fmt, require as _require
from .claim_tables import CONVERGED_REL_VAL, OH_BN, steps_text, steps_to, training_ends

CAUCHY = "cauchy"
DISSIMILAR_FACTOR = 2.0   # 17: "clearly only similar to other cauchy tasks ... quite dissimilar to the rest": every
#                           cauchy-vs-other block mean EMD >= 2 x the largest of the cauchy-vs-cauchy block and of
#                           every block among the other four families
FIG11_BASE_LR = 0.01      # 19a, 19b: the paper's default learning rate
FIG11_WORSE = ((32, 0.1), (32, 1.0), (4, 1.0))  # 19a: "(eta = 0.1, 1.0 for d = 32 and eta = 1.0 for d = 4)"
FIG11_SLOW_LR = 0.001     # 19b
UNIMODAL_BASIN = 0.9      # 13a: "fairly unimodal": the global minimum's basin (grid steepest descent) covers >= 90 %
#                           of every surface's grid points
MARKEDLY_FACTOR = 2.0     # 13b: "markedly different" at d = 4, "quite similar" at d = 32: the OH-BN relative
#                           difference of the surfaces at the smallest d >= 2 x that at the largest d


def _surfaces(tables) -> dict[tuple[int, str], np.ndarray]:
    """Fig 3's loss surfaces, {(d, curve): the alpha x beta grid of the task-averaged loss}; NaN (a perturbed
    model whose centers are not finite) stays NaN."""
    df = tables.get("fig3")
    df = df[df["metric"] == "loss"]
    out = {(int(d), curve): g.pivot(index="alpha", columns="beta", values="value").to_numpy()
           for (d, curve), g in df.groupby(["d", "curve"], sort=True)}
    if not out:
        raise NotRun("fig3 holds no loss surface")
    return out


def basin_of_minimum(z: np.ndarray) -> float:
    """The fraction of grid points from which steepest descent over the 8 neighbours ends at the global minimum
    (NaN counts as +inf: a walk never enters it)."""
    z = np.where(np.isfinite(z), z, np.inf)
    rows, cols = z.shape
    target = np.unravel_index(np.argmin(z), z.shape)
    nxt = {}
    for i in range(rows):
        for j in range(cols):
            best = (i, j)
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    a, b = i + di, j + dj
                    if 0 <= a < rows and 0 <= b < cols and z[a, b] < z[best]:
                        best = (a, b)
            nxt[(i, j)] = best
    reached = 0
    for start in nxt:
        p = start
        while nxt[p] != p:
            p = nxt[p]
        reached += p == target
    return reached / (rows * cols)


def relative_difference(a: np.ndarray, b: np.ndarray) -> float:
    """mean |a - b| / mean (a + b) / 2 over the grid points where both are finite."""
    ok = np.isfinite(a) & np.isfinite(b)
    return float(np.abs(a[ok] - b[ok]).mean() / ((a[ok] + b[ok]) / 2).mean())


@claim("13a", "Fig 3, §3", "fig3",
       "The loss surfaces around the trained parameters are fairly unimodal (OH and BN, every d).",
       "for every surface of Fig 3 (d, OH:L2 / BN:L2): the fraction of its grid points from which steepest descent "
       "over the 8 grid neighbours ends at the surface's global minimum >= threshold", f"{UNIMODAL_BASIN:g}",
       quote="We visualize the loss surfaces (Li et al., 2018) for the L2-regularized smoothed loss in Figure 3, "
             "and see that in all cases, the loss surfaces appear fairly unimodal without any complicated "
             "landscapes, explaining why these models train so easily with apparent monotonic convergence.")
def claim_13a(tables):
    basins = {key: basin_of_minimum(z) for key, z in _surfaces(tables).items()}
    worst = min(basins.values())
    return _fmt(worst), worst >= UNIMODAL_BASIN, "; ".join(f"d={d} {c}: {_fmt(v)}" for (d, c), v in basins.items())


@claim("13b", "Fig 3, §3", "fig3",
       "OH's and BN's loss surfaces are markedly different at d = 4 and quite similar at d = 32.",
       "R(d) = mean |L_OH - L_BN| / mean (L_OH + L_BN) / 2 over Fig 3's grid at d; R(smallest d) >= threshold x "
       "R(largest d)", f"{MARKEDLY_FACTOR:g}",
       quote="For the smaller d=4, the loss surfaces of (OH) and (BN) are markedly different aligning with the "
             "significant difference in their d_E,d_emb terms in Theorem 3.1. For the larger d=32, the loss surfaces "
             "of OH and BN are quite similar")
def claim_13b(tables):
    surfaces = _surfaces(tables)
    ds = sorted({d for d, c in surfaces if (d, "OH:L2") in surfaces and (d, "BN:L2") in surfaces})
    if len(ds) < 2:
        raise NotRun(f"fig3 holds both OH:L2 and BN:L2 surfaces at {len(ds)} value(s) of d; the claim needs two")
    r = {d: relative_difference(surfaces[(d, "OH:L2")], surfaces[(d, "BN:L2")]) for d in ds}
    ratio = r[ds[0]] / r[ds[-1]] if r[ds[-1]] > 0 else np.inf
    return _fmt(ratio), ratio >= MARKEDLY_FACTOR, "; ".join(f"R(d={d}) = {_fmt(v)}" for d, v in r.items())


def _blocks(df: pd.DataFrame) -> pd.Series:
    """Mean EMD per (row family, col family), leaving out each task's distance to itself."""
    off = df[~((df["row_family"] == df["col_family"]) & (df["row_index"] == df["col_index"]))]
    return off.groupby(["row_family", "col_family"])["emd"].mean()


@claim("17", "Fig 9, §4 (and Fig 19)", "fig9",
       "Cauchy tasks are only similar to other cauchy tasks; the other four families are similar to each other.",
       "for Fig 9 and Fig 19: mean EMD between cauchy tasks and each other family's tasks >= threshold x the "
       "largest of (the mean EMD among cauchy tasks, the mean EMD of every pair of the other four families, "
       "same family included)", f"{DISSIMILAR_FACTOR:g}",
       quote="The cauchy tasks are clearly only similar to other cauchy tasks, and are quite dissimilar to the "
             "rest; all other task families are quite similar to each other.")
def claim_17(tables):
    ratios, parts = [], []
    for fig, df in tables.held(("fig9", "fig19")):
        b = _blocks(df)
        fams = sorted(set(df["row_family"]))
        if CAUCHY not in fams or len(fams) < 2:
            raise NotRun(f"{fig} lacks cauchy or another family (families {fams})")
        others = [f for f in fams if f != CAUCHY]
        cross = min(float(b.loc[(CAUCHY, g)]) for g in others)
        within = max([float(b.loc[(CAUCHY, CAUCHY)])] + [float(b.loc[(f, g)]) for f in others for g in others])
        ratios.append(cross / within if within > 0 else np.inf)
        parts.append(f"{fig}: min cauchy-vs-other {_fmt(cross)}, max of cauchy-vs-cauchy and among the others "
                     f"{_fmt(within)}, ratio {_fmt(ratios[-1])}; blocks: "
                     + ", ".join(f"{a}/{c} {_fmt(float(v))}" for (a, c), v in b.items() if a <= c))
    if not ratios:
        raise NotRun("neither fig9 nor fig19 was produced")
    worst = min(ratios)
    return _fmt(worst), worst >= DISSIMILAR_FACTOR, "; ".join(parts)


@claim("18", "Fig 10, App F", "fig10",
       "As tau decreases, the training loss (the upper bound) becomes lower, for every d and curve.",
       "for every (d, curve) of Fig 10: the median final training loss strictly decreases from each tau to the "
       "next smaller one", "strict",
       quote="In Figure 10, we present the effect of varying the min-regularization penalty tau in the smoothed "
             "upper-bound, highlighting that, as the penalty tau decreases, the training loss (the upper-bound) "
             "becomes tighter (and thus has lower values)")
def claim_18(tables):
    df = tables.get("fig10")
    ends = training_ends(df, ["d", "tau"], "train_loss").dropna(subset=["value"])
    if ends["tau"].nunique() < 2:
        raise NotRun(f"fig10 holds one tau only ({sorted(ends['tau'].unique())})")
    held, cells, single = 0, [], []
    # a (d, curve) trained at one tau only (a subset's cell) holds no pair to compare: listed, not read
    groups = [(key, g) for key, g in ends.groupby(["d", "curve"], sort=True) if g["tau"].nunique() > 1]
    single = [f"d={d} {curve}" for (d, curve), g in ends.groupby(["d", "curve"], sort=True) if g["tau"].nunique() < 2]
    for (d, curve), g in groups:
        g = g.sort_values("tau", ascending=False)
        ok = bool((np.diff(g["value"].to_numpy()) < 0).all())
        held += ok
        cells.append(f"d={d} {curve}: " + " > ".join(f"{_fmt(v)} (tau {_fmt(float(t))})" for t, v in
                                                     zip(g["tau"], g["value"])) + ("" if ok else " (not decreasing)"))
    if single:
        cells.append(f"one tau only, not read: {', '.join(single)}")
    return every_cell(held, len(groups), "; ".join(cells), "(d, curve) groups with two or more tau")


def _fig11(tables) -> pd.DataFrame:
    df = tables.get("fig11")
    return df[df["curve"].isin(OH_BN)]


@claim("19a", "Fig 11, App F", "fig11",
       "The larger learning rates (0.1 and 1 at d = 32, 1 at d = 4) end at a worse relative validation loss than 0.01.",
       "for every (d, lr) in {(32, 0.1), (32, 1), (4, 1)} held and every OH/BN curve: median final relative "
       "validation loss > the same curve's at lr = 0.01", "strict >",
       quote="The larger learning rates (eta = 0.1, 1.0 for d = 32 and eta = 1.0 for d = 4) converge to a worse "
             "local minima, and thus do not generalize well.")
def claim_19a(tables):
    ends = training_ends(_fig11(tables), ["d", "lr"], "rel_val_loss")
    ends["lr"] = ends["lr"].astype(float)
    base = ends[np.isclose(ends["lr"], FIG11_BASE_LR)].set_index(["d", "curve"])["value"]
    rows = []
    for d, lr in FIG11_WORSE:
        for r in ends[(ends["d"] == d) & np.isclose(ends["lr"], lr)].itertuples():
            if (d, r.curve) in base.index:
                rows.append((d, lr, r.curve, r.value, float(base.loc[(d, r.curve)])))
    cells = _require(pd.DataFrame(rows, columns=["d", "lr", "curve", "value", "base"]),
                     "fig11 cells at the larger learning rates with a lr = 0.01 counterpart")
    ok = ~(cells["value"] <= cells["base"])  # a NaN (diverged) end counts as worse
    return every_cell(int(ok.sum()), len(cells), "; ".join(
        f"d={r.d} lr={_fmt(r.lr)} {r.curve}: {_fmt(r.value)} vs {_fmt(r.base)} at lr 0.01" for r in cells.itertuples()))


@claim("19b", "Fig 11, App F", "fig11",
       "Learning rate 0.001 converges more slowly than 0.01.",
       f"for every d and OH/BN curve of Fig 11: steps to a median relative validation loss <= {CONVERGED_REL_VAL:g} at "
       "lr = 0.001 > at lr = 0.01 (a curve that never gets there counts one validation interval after its end)",
       "strict >",
       quote="The results indicate that, for low and moderately high dimensions d, a low learning rate of 0.001 "
             "shows monotonic convergence but is slower than a learning rate of 0.01.")
def claim_19b(tables):
    st = steps_to(_fig11(tables), ["d", "lr"], CONVERGED_REL_VAL)
    st["lr"] = st["lr"].astype(float)
    slow = st[np.isclose(st["lr"], FIG11_SLOW_LR)].set_index(["d", "curve"])
    base = st[np.isclose(st["lr"], FIG11_BASE_LR)].set_index(["d", "curve"])
    keys = _require(pd.DataFrame(index=slow.index.intersection(base.index)).reset_index(),
                    "fig11 curves at both lr = 0.001 and 0.01")
    rows = [(d, c, slow.loc[(d, c)], base.loc[(d, c)]) for d, c in zip(keys["d"], keys["curve"])]
    ok = [int(a["steps"]) > int(b["steps"]) for _, _, a, b in rows]
    reached = lambda r: steps_text(r["steps"], r["censored"], r["M"])  # noqa: E731
    return every_cell(sum(ok), len(rows), "; ".join(f"d={d} {c}: {reached(a)} at lr 0.001 vs {reached(b)} at 0.01"
                                                    for d, c, a, b in rows), "(d, curve) pairs")
