"""What the claims read, apart from any claim: the tables of a results folder (Tables, one seed's rows on request)
and the readings several rule modules share (training ends, steps to a level, Fig 15's stuck seeds, multi-step
values at a step, Lloyd's baseline), with the constants those readings name.

Rule modules (claims.py, claims_grids.py, claims_multistep.py, claims_training.py) import this and claim_core;
this imports claim_core only. The functions' code is the claims' code: each claim's rule_version hashes the
source of the functions it calls and the constants they name (claim_core.rule_version), so a change here is a
new version of every claim that reads it. The conventions are claims.py's docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..pipeline.provenance import RESULTS
from .claim_core import NonFinite, NotRun, fmt as _fmt, require as _require

OH_BN = ("OH:NE", "OH:L2", "BN:NE", "BN:L2")
NA = ("NA:NE", "NA:L2")

TRAIN_TAIL = 0.1            # the last 10% of steps (at least one) give a run's final training loss
REL_VAL_ONE = 1.0           # claim 1: relative validation loss 1 = as good as one Lloyd step
CONVERGED_REL_VAL = 1.0     # claim 3: "converged" = median relative validation loss <= 1 (beats one Lloyd step);
#                             a curve that never gets there counts as converging one validation interval after M


@dataclass
class Tables:
    """Lazy reader of results/tables/{fig}.parquet (and the manifest's settings)."""

    results: str | Path = RESULTS
    settings: dict = field(default_factory=dict)
    runs: set | None = None  # the (run, seed) pairs whose records claim 2 reads; None: every record on disk
    seed: int | None = None  # one seed's rows only (and the baselines', which have none): check()'s per-seed verdicts
    _cache: dict = field(default_factory=dict)
    seen_seeds: set = field(default_factory=set)  # the seeds of the rows handed out since the last reset

    def get(self, fig: str) -> pd.DataFrame:
        if fig not in self._cache:
            path = Path(self.results) / "tables" / f"{fig}.parquet"
            if not path.is_file():
                raise NotRun(f"{path} is missing (the preset did not produce {fig})")
            import pyarrow.parquet as pq

            self._cache[fig] = pq.read_table(path).to_pandas()
        df = self._cache[fig]
        if "seed" in df:
            if self.seed is not None:
                df = df[df["seed"].isna() | (df["seed"] == self.seed)]
            self.seen_seeds |= {int(s) for s in df["seed"].dropna().unique()}
        return df

    def for_seed(self, seed: int) -> "Tables":
        """The same tables, one seed's rows (the baselines' rows, without a seed, stay)."""
        return Tables(self.results, self.settings, self.runs, seed, self._cache)

    def held(self, figs):
        """(fig, table) for each of figs whose table this folder holds."""
        for fig in figs:
            try:
                yield fig, self.get(fig)
            except NotRun:
                continue


# ------------------------------------------------------------------------------ readings
def _ok_runs(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    if "status" not in df:
        return df, 0
    bad = df.loc[df["status"] == "diverged", ["run", "seed"]].drop_duplicates()
    return df[df["status"] != "diverged"], len(bad)


def training_ends(df: pd.DataFrame, keys: list[str], metric: str) -> pd.DataFrame:
    """Per (keys..., curve): the median over non-diverged seeds of each seed's end value of metric.
    Columns: keys, curve, value, seeds, diverged."""
    sub = df[df["metric"] == metric]
    sub = sub[np.isfinite(sub["value"].astype(float))]
    per_seed = []
    for key, s in sub.groupby(keys + ["curve", "seed"], sort=True):
        s = s.sort_values("step")
        if metric == "train_loss":
            last, first = s["step"].max(), s["step"].min()
            end = float(s.loc[s["step"] >= last - TRAIN_TAIL * (last - first), "value"].mean())
        else:
            end = float(s["value"].iloc[-1])
        diverged = "status" in s and bool((s["status"] == "diverged").any())
        per_seed.append(dict(zip(keys + ["curve", "seed"], key), end=end, diverged=diverged))
    ps = pd.DataFrame(per_seed, columns=keys + ["curve", "seed", "end", "diverged"])
    rows = []
    for key, g in ps.groupby(keys + ["curve"], sort=True):
        ok = g.loc[~g["diverged"].astype(bool), "end"]
        rows.append(dict(zip(keys + ["curve"], key), value=float(ok.median()) if len(ok) else math.nan,
                         seeds=len(ok), diverged=int(g["diverged"].sum())))
    return pd.DataFrame(rows, columns=keys + ["curve", "value", "seeds", "diverged"])


def cell_runs(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per (keys..., curve): the (run, seed) pairs the cell reads, as one string (`runs`): the cell's identity."""
    pairs = df[keys + ["curve", "run", "seed"]].drop_duplicates()
    pairs = pairs.assign(pair=pairs["run"].astype(str) + "/" + pairs["seed"].astype(str))
    return pairs.groupby(keys + ["curve"], as_index=False)["pair"].agg(lambda p: " ".join(sorted(p))).rename(
        columns={"pair": "runs"})


def counted_once(cells: pd.DataFrame) -> pd.DataFrame:
    """cells (a `fig` and a `runs` column, from cell_runs) with each set of runs once: two figures can hold the
    same runs (Fig 16's k = 10 parts are Fig 4's configurations, Fig 2a is Fig 10 at d = 4), and the same seeds
    read twice are one measurement, not two cells. The cell kept is the first figure's, its `fig` naming every
    figure that holds it ("fig4=fig16")."""
    names = cells.groupby("runs", sort=False)["fig"].agg(lambda f: "=".join(dict.fromkeys(f)))
    once = cells.drop_duplicates("runs").reset_index(drop=True)
    return once.assign(fig=once["runs"].map(names)).drop(columns="runs")


def rel_val_after_start(df: pd.DataFrame) -> pd.DataFrame:
    """The finite relative validation losses after step 0: step 0 is the untrained model, which every run
    falls from, so a trajectory read against it says nothing (the figures' axes start there too)."""
    return df[(df["metric"] == "rel_val_loss") & (df["step"] > 0) & np.isfinite(df["value"].astype(float))]


def fig15_cell(tables, embedding: str) -> tuple[int, int, str]:
    """Claims 9 and 9b's cell, Fig 15 at d = 32, k = 25, tau = 0.1, for one embedding: the number of stuck
    (curve, seed) pairs, the number of pairs, and the detail: stuck seeds per curve, then every seed's trajectory.

    The paper's word is "stuck" ("numerical instability", "not able to find the right basin of attraction
    once the training is destabilized"), not only non-finite: a pair is stuck when it diverged, or when it
    ends no better than one Lloyd step (last finite relative validation loss >= 1) while another seed of
    its curve, not diverged, ends below that ("consistent with the other random trials"). Where no seed of
    a curve gets below one Lloyd step (too few steps, as at the quick scale) none counts as stuck."""
    df = tables.get("fig15")
    sub = df[(df["d"] == 32) & (df["k"] == 25) & np.isclose(df["tau"].astype(float), 0.1)
             & df["curve"].str.startswith(f"{embedding}:")]
    sub = _require(sub, f"fig15 at d=32, k=25, tau=0.1 ({embedding})")
    pairs = sub[["curve", "seed", "status"]].drop_duplicates()
    last = rel_val_after_start(sub).sort_values("step").groupby(["curve", "seed"])["value"].last().astype(float)
    below = {key for key, v in last.items() if v < REL_VAL_ONE}
    diverged = {(c, s) for c, s, st in pairs.itertuples(index=False) if st == "diverged"}
    converged = below - diverged

    def stuck(curve, seed) -> bool:
        others_converged = any(c == curve and s != seed for c, s in converged)
        return (curve, seed) in diverged or ((curve, seed) not in below and others_converged)

    pairs = pairs.assign(stuck=[stuck(c, s) for c, s in zip(pairs["curve"], pairs["seed"])])
    per = ", ".join(f"{c} {int(g['stuck'].sum())}/{g['seed'].nunique()}" for c, g in pairs.groupby("curve"))
    return (int(pairs["stuck"].sum()), len(pairs),
            f"stuck {embedding} seeds (diverged, or last >= {REL_VAL_ONE:g} where another seed of the curve ends "
            f"below): {per}; per seed: {seed_trajectories(sub)}")


def seed_trajectories(df: pd.DataFrame) -> str:
    """Per (curve, seed) of a training table's cell: whether it diverged and at which step, its last finite
    relative validation loss, and its best one after step 0 with the step: a run that stalls shows a best
    far below and far before its end (claims 9 and 9b report every seed so)."""
    out = []
    for (curve, seed), g in df.groupby(["curve", "seed"], sort=True):
        val = rel_val_after_start(g).sort_values("step")
        status = "ok"
        if (g["status"] == "diverged").any():
            step = g["diverged_step"].dropna()
            status = f"diverged at step {int(step.iloc[0])}" if len(step) else "diverged"
        if val.empty:
            out.append(f"{curve} {seed}: {status}, no finite validation after step 0")
            continue
        best = val.loc[val["value"].astype(float).idxmin()]
        out.append(f"{curve} {seed}: {status}, last {_fmt(val['value'].iloc[-1])} at step {int(val['step'].iloc[-1])}"
                   f" (best {_fmt(best['value'])} at step {int(best['step'])})")
    return "; ".join(out)


def steps_to(df: pd.DataFrame, keys: list[str], threshold: float) -> pd.DataFrame:
    """Per (keys..., curve): the first step at which the median over seeds of rel_val_loss is <= threshold;
    a curve that never gets there gets last step + one validation interval (censored). Columns: keys,
    curve, steps, M, censored."""
    sub = df[df["metric"] == "rel_val_loss"]
    sub, _ = _ok_runs(sub[np.isfinite(sub["value"].astype(float))])
    med = sub.groupby(keys + ["curve", "step"], as_index=False)["value"].median()
    rows = []
    for key, grp in med.groupby(keys + ["curve"], sort=True):
        grp = grp.sort_values("step")
        steps = grp["step"].to_numpy()
        last = int(steps.max())
        interval = int(np.diff(steps).min()) if len(steps) > 1 else max(last, 1)
        hit = grp.loc[grp["value"] <= threshold, "step"]
        censored = hit.empty
        rows.append(dict(zip(keys + ["curve"], key), steps=int(last + interval) if censored else int(hit.iloc[0]),
                         M=last, censored=censored))
    return pd.DataFrame(rows, columns=keys + ["curve", "steps", "M", "censored"])


def steps_text(steps, censored, m) -> str:
    """A steps_to count as the claims print it: a censored curve never got there within its M steps (its count,
    M + one interval, is a rule's convention, not a step it reached)."""
    return f"never within {int(m)} steps" if censored else f"{int(steps)} steps"


def _finite_or_fail(at: pd.DataFrame, what: str) -> None:
    bad = at[~np.isfinite(at["value"].astype(float))]
    if len(bad):
        names = "; ".join(f"{curve} (seed {', '.join(str(s) for s in sorted(g['seed'].unique())) if 'seed' in g else '?'})"
                          for curve, g in bad.groupby("curve"))
        raise NonFinite(f"non-finite log-objective {what}: {names}")


def multistep_at(df: pd.DataFrame, t: int | None, **where) -> pd.DataFrame:
    """Median over seeds of log_objective at step t (None: the last t) per curve, with the filters.
    Raises NonFinite when any seed's value is not finite."""
    sub = df[df["metric"] == "log_objective"]
    for k, v in where.items():
        sub = sub[sub[k].isin(v if isinstance(v, (list, tuple, set)) else [v])]
    if sub.empty:
        raise NotRun(f"no log_objective rows for {where}")
    tt = int(sub["t"].max()) if t is None else t
    at = sub[sub["t"] == tt]
    if at.empty:
        raise NotRun(f"no log_objective at t={tt} for {where}")
    _finite_or_fail(at, f"at t={tt} for {where}")
    return at.groupby("curve")["value"].median().rename(f"t={tt}")


def lloyd_at(df: pd.DataFrame, testset: str, t: int | None = None) -> float:
    base = df[(df["curve"] == "Lloyd") & (df["testset"] == testset) & (df["metric"] == "log_objective")]
    if base.empty:
        raise NotRun(f"no Lloyd baseline on test set {testset}")
    tt = int(base["t"].max()) if t is None else t
    at = base[base["t"] == tt]
    _finite_or_fail(at, f"of Lloyd's at t={tt} on {testset}")
    return float(at["value"].median())


finite_or_fail = _finite_or_fail  # the public name; the function keeps its own (its source is in rule versions)
