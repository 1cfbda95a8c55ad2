"""Every trained run of a results folder, paired by regularizer: the data of claim 2.

A cell is a training configuration (record.json's config) without its regularizer and seed. Claim 2 reads
every cell in which both an L2 and an NE run were trained, whichever figure asked for them (Fig 10's
grid, Fig 14's, the multi-step models of Fig 6 at d = 32, k = 10, ...), not one figure's table.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

# the config keys that name a cell in the claim's detail (the others are shown only where cells differ in them)
NAMED = ("embedding", "d", "k", "tau", "family", "n")


def settings_runs(settings: dict) -> set[tuple[str, int]]:
    """The (run, seed) pairs that settings train: their studies' runs times their seeds. A folder can hold
    more records than that: a growth in progress writes new runs beside the committed ones, and they must not
    enter a claim before the settings (and the manifest) that draw them do."""
    from ..pipeline import studies

    return {(run, int(seed)) for run in studies.build(settings).runs for seed in settings["seeds"]}


def read_records(results, runs: set[tuple[str, int]] | None = None, seed: int | None = None) -> pd.DataFrame:
    """One row per results/runs/<run>/seed<s>/record.json, of the (run, seed) pairs `runs` when given (and of one
    seed when given): run, seed, status and the config's keys."""
    from .claim_core import NotRun

    paths = sorted(Path(results).glob("runs/*/seed*/record.json"))
    if runs is not None:
        paths = [p for p in paths if (p.parent.parent.name, int(p.parent.name.removeprefix("seed"))) in runs]
    if seed is not None:
        paths = [p for p in paths if int(p.parent.name.removeprefix("seed")) == seed]
    if not paths:
        raise NotRun(f"no trained runs under {Path(results) / 'runs'}")
    rows = []
    for path in paths:
        rec = json.loads(path.read_text())
        if "config" not in rec or "run" not in rec:
            raise ValueError(f"{path}: a run record without config or run")
        cfg = {k: v for k, v in rec["config"].items() if k != "seed"}
        rows.append(dict(cfg, run=rec["run"], seed=int(rec["seed"]), status=rec.get("status", "ok")))
    return pd.DataFrame(rows)


def final_train_loss(results, runs, tail: float) -> pd.DataFrame:
    """Per (run, seed): the mean train_loss over the last `tail` fraction of its steps (finite values)."""
    from ..pipeline.aggregate import read_run_metrics

    m = read_run_metrics(Path(results) / "metrics", runs=sorted(set(runs)))
    if m.empty:
        return pd.DataFrame(columns=["run", "seed", "end"])
    m = m[np.isfinite(m["train_loss"].astype(float))]
    out = []
    for (run, seed), g in m.groupby(["run", "seed"], sort=True):
        last, first = g["step"].max(), g["step"].min()
        out.append(dict(run=run, seed=int(seed),
                        end=float(g.loc[g["step"] >= last - tail * (last - first), "train_loss"].mean())))
    return pd.DataFrame(out, columns=["run", "seed", "end"])


def _label(keys: dict, varying: list[str]) -> str:
    shown = [k for k in NAMED if k in keys] + [k for k in varying if k not in NAMED]
    return ", ".join(f"{k}={keys[k]:g}" if isinstance(keys[k], float) else f"{k}={keys[k]}" for k in shown)


def regularizer_pairs(results, tail: float, runs: set[tuple[str, int]] | None = None,
                      seed: int | None = None) -> pd.DataFrame:
    """Index: the cell's label; columns L2, NE (median over non-diverged seeds of the final training loss)
    and seeds (the smaller seed count of the two). Only cells with a finite value for both; of one seed when
    given. attrs["seeds"]: the seeds read."""
    from .claim_core import NotRun

    rec = read_records(results, runs, seed)
    ends = final_train_loss(results, rec["run"], tail)
    rec = rec.merge(ends, on=["run", "seed"], how="left")
    rec = rec[rec["status"] != "diverged"]
    keys = [c for c in rec.columns if c not in ("run", "seed", "status", "end", "regularizer")]
    for k in keys:  # None (e.g. clip_grad) and lists must group and pivot like any value
        rec[k] = [json.dumps(v) if isinstance(v, (list, dict)) or v is None or (isinstance(v, float) and math.isnan(v))
                  else v for v in rec[k]]
    med = rec.groupby(keys + ["regularizer"]).agg(value=("end", "median"), seeds=("end", "count"))
    wide = med.reset_index().pivot_table(index=keys, columns="regularizer", values=["value", "seeds"],
                                         aggfunc="first")
    if "L2" not in wide["value"].columns or "NE" not in wide["value"].columns:
        raise NotRun("no cell has both L2 and NE runs")
    both = wide[np.isfinite(wide[("value", "L2")].astype(float)) & np.isfinite(wide[("value", "NE")].astype(float))]
    if both.empty:
        raise NotRun("no cell has finite final training losses of both L2 and NE")
    frame = both.index.to_frame(index=False)
    varying = [k for k in keys if frame[k].nunique() > 1]
    labels = [_label(dict(zip(keys, idx)), varying) for idx in both.index]
    out = pd.DataFrame({"L2": both[("value", "L2")].astype(float).to_numpy(),
                        "NE": both[("value", "NE")].astype(float).to_numpy(),
                        "seeds": np.minimum(both[("seeds", "L2")], both[("seeds", "NE")]).astype(int).to_numpy()},
                       index=labels).sort_index()
    out.attrs["seeds"] = sorted({int(s) for s in rec["seed"]})
    return out

