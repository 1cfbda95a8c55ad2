"""The OH-vs-BN profile table (Fig 1, Table 1) and BN's gain over OH: the one definition shared by
profiling (which writes the table), the figures and the claims. No torch import.

Long table columns: d, k, embedding, attention, metric, value (attention: "materialised" = the n x n
distances and softmax, as the paper timed them; "fused" = this pipeline's memory-linear kernel).
"""

from __future__ import annotations

import math

import pandas as pd

METRICS = ("forward_train_ms", "backward_ms", "peak_memory_mb", "forward_eval_ms", "extra_dims", "other_cpus_busy")
ATTENTIONS = ("materialised", "fused")  # paper-comparable first
PAPER_ATTENTION = "materialised"
GRID_COLUMNS = ["d", "k", "embedding", "attention", "metric", "value"]
# A cell timed while other processes kept more CPUs than this busy (metric other_cpus_busy) was not timed on
# an idle machine: its times are not the code's alone (Table 1 and Fig 1 say so).
IDLE_OTHER_CPUS = 0.25


# machine_load's answers: how far times taken on a CPU are the code's alone.
ON_GPU, NOT_RECORDED, IDLE, BUSY = "on a GPU", "not recorded", "idle", "busy"


def machine_load(busy, devices=()) -> tuple[str, float]:
    """What else ran while a profile's times were taken, from its other_cpus_busy values (one or many, measured
    on `devices`): (ON_GPU, nan) when any device is a GPU (the host's other work barely moves its timings, and
    is not recorded there); (NOT_RECORDED, nan) when no value is recorded; else (IDLE or BUSY, the largest
    value), BUSY above IDLE_OTHER_CPUS. The one decision behind Table 1's and Fig 1's line, the profile's
    warning and the timing claims' verdicts."""
    if any(str(d).startswith("cuda") for d in devices):
        return ON_GPU, math.nan
    busy = pd.Series(busy, dtype=float)
    if busy.isna().all():
        return NOT_RECORDED, math.nan
    worst = float(busy.max())
    return (BUSY if worst > IDLE_OTHER_CPUS else IDLE), worst


def busy_text(busy, devices=()) -> str:
    """Table 1's and Fig 1's line on what else ran while their times were taken (machine_load); "" on a GPU."""
    load, worst = machine_load(busy, devices)
    return {ON_GPU: "",
            NOT_RECORDED: "other processes' CPU use while timing not recorded",
            IDLE: f"timed on an idle machine (other processes: at most {worst:.2f} CPUs busy)",
            BUSY: f"other processes kept up to {worst:.2f} CPUs busy while timing: these times are not this "
                  "code's alone"}[load]


def relative_gain(df: pd.DataFrame) -> pd.DataFrame:
    """BN's gain over OH per (attention, d, k, metric): gain = OH value / BN value.

    gain > 1 means BN is faster (times) or lighter (memory, extra dims); e.g. the paper's 12.14x
    forward speedup at k = 1000. Every cell of the table keeps its row: the gain is NaN where OH or
    BN is missing or not finite, or BN is 0 (never dropped, never inf), so a missing measurement
    shows as a blank cell instead of disappearing. The attention column is kept when df has one.
    Columns: [attention,] d, k, metric, gain.
    """
    keys = [c for c in ("attention", "d", "k", "metric") if c in df.columns]
    if not isinstance(df, pd.DataFrame) or not {"d", "k", "metric", "embedding", "value"} <= set(df.columns):
        raise ValueError("df must be a DataFrame with columns d, k, embedding, metric, value (a profile table)")
    missing = {"OH", "BN"} - set(df["embedding"])
    if missing:
        raise ValueError(f"df has no rows for embedding(s) {sorted(missing)}; relative_gain needs both 'OH' and 'BN'")
    wide = df.groupby(keys + ["embedding"], sort=True)["value"].first().unstack("embedding")
    oh, bn = wide["OH"].astype(float), wide["BN"].astype(float)
    gain = (oh / bn).where(bn.ne(0) & bn.map(math.isfinite) & oh.map(math.isfinite))
    return gain.rename("gain").reset_index()[keys + ["gain"]]
