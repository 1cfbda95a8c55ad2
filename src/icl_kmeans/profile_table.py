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


def busy_text(busy: pd.Series, devices=()) -> str:
    """What else ran while the times were taken (the other_cpus_busy values of a table or figure, measured on
    `devices`); "" for a GPU profile (the host's other work barely moves its timings, and is not recorded)."""
    if any(str(d).startswith("cuda") for d in devices):
        return ""
    busy = pd.Series(busy, dtype=float)
    if busy.isna().all():
        return "other processes' CPU use while timing not recorded"
    worst = float(busy.max())
    if worst <= IDLE_OTHER_CPUS:
        return f"timed on an idle machine (other processes: at most {worst:.2f} CPUs busy)"
    return (f"other processes kept up to {worst:.2f} CPUs busy while timing: these times are not this code's "
            "alone")


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
