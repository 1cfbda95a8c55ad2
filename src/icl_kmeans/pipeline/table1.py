"""Table 1 of the paper (science.md §10): OH against BN at d = 32 for each k, from the profile table
(results/tables/table1.parquet: d, k, embedding, attention, metric, value, device).

Two blocks of rows, one row per (attention, k): attention "materialised" first, the implementation
the paper timed (the n x n distances and their softmax are materialised): these are the numbers to
compare with the paper's and the ones the claims check; then "fused", this pipeline's memory-linear
attention (the one it trains with).

Columns:
    attention, k, extra_dims_OH, extra_dims_BN,
    forward_ms_OH, forward_ms_BN, forward_speedup        (forward pass in train mode; speedup = OH / BN)
    backward_ms_OH, backward_ms_BN, backward_speedup
    peak_memory_mb_OH, peak_memory_mb_BN, memory_reduction_pct   (100 * (1 - BN / OH))
    forward_eval_ms_OH, forward_eval_ms_BN, forward_eval_speedup (forward in eval mode, no autograd)
    other_cpus_busy      CPUs other processes kept busy while the row's OH and BN were timed (the larger
                         of the two; NaN in a profile written before it was recorded): 0 on an idle machine
    device
Written as CSV (full precision) and Markdown (rounded, with a header line naming the scale and the
device). The paper, at k = 1000 on a laptop GPU: forward 193.07 vs 15.90 ms (12.14x), backward 308.28 vs
32.33 ms (9.54x), peak memory 3930 vs 1208 MB (69.3% less); at k = 6 BN is slightly slower (0.88x).
Timings depend on the machine: this table is not byte-reproducible by nature.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..profile_table import ATTENTIONS, PAPER_ATTENTION, busy_text
from .figures import scale_line
from .specs import table1 as spec

D = 32
ATTENTION_NAMES = {"materialised": "paper-comparable (the n x n distances and softmax materialised, as the paper "
                                   "timed)",
                   "fused": "this pipeline's memory-linear kernel (what it trains with)"}
COLUMNS = ["attention", "k", "extra_dims_OH", "extra_dims_BN", "forward_ms_OH", "forward_ms_BN", "forward_speedup",
           "backward_ms_OH", "backward_ms_BN", "backward_speedup", "peak_memory_mb_OH", "peak_memory_mb_BN",
           "memory_reduction_pct", "forward_eval_ms_OH", "forward_eval_ms_BN", "forward_eval_speedup",
           "other_cpus_busy", "device"]
SOURCE = {"extra_dims": "extra_dims", "forward_ms": "forward_train_ms", "backward_ms": "backward_ms",
          "peak_memory_mb": "peak_memory_mb", "forward_eval_ms": "forward_eval_ms"}
MARKDOWN_HEADER = ["k", "extra dims OH / BN", "forward ms OH", "forward ms BN", "forward speedup",
                   "backward ms OH", "backward ms BN", "backward speedup", "peak MB OH", "peak MB BN",
                   "memory reduction"]


def build(df: pd.DataFrame, d: int = D) -> pd.DataFrame:
    """The wide Table 1 from the long profile table: one row per (attention, k), materialised first."""
    if df is None or len(df) == 0:
        raise ValueError(f"{spec.ID}: the profile table is empty")
    if "attention" not in df.columns:
        raise ValueError(f"{spec.ID}: the profile table has no attention column (materialised / fused); it was "
                         "written by an older version: run the profile again")
    sub = df[df["d"] == d]
    if sub.empty:
        raise ValueError(f"{spec.ID}: no profile rows at d = {d} (found d in {sorted(df['d'].unique())})")
    unknown = set(sub["attention"]) - set(ATTENTIONS)
    if unknown:
        raise ValueError(f"{spec.ID}: unknown attention {sorted(unknown)}; expected {list(ATTENTIONS)}")
    wide = sub.pivot_table(index=["attention", "k"], columns=["metric", "embedding"], values="value", aggfunc="first")
    out = pd.DataFrame(index=wide.index)
    for name, metric in SOURCE.items():
        for emb in ("OH", "BN"):
            if (metric, emb) not in wide.columns:
                raise ValueError(f"{spec.ID}: no {metric} for {emb} at d = {d}")
            out[f"{name}_{emb}"] = wide[(metric, emb)]
    for col in ("extra_dims_OH", "extra_dims_BN"):
        out[col] = out[col].round().astype("int64")
    for name in ("forward", "backward", "forward_eval"):
        out[f"{name}_speedup"] = out[f"{name}_ms_OH"] / out[f"{name}_ms_BN"]
    out["memory_reduction_pct"] = 100.0 * (1.0 - out["peak_memory_mb_BN"] / out["peak_memory_mb_OH"])
    busy = [c for c in wide.columns if c[0] == "other_cpus_busy"]
    out["other_cpus_busy"] = wide[busy].max(axis=1) if busy else float("nan")
    if "device" in sub:
        out["device"] = sub.groupby(["attention", "k"])["device"].agg(lambda s: ",".join(sorted(set(s.dropna()))))
    else:
        out["device"] = ""
    out = out.reset_index()
    out["rank"] = out["attention"].map(ATTENTIONS.index)
    return out.sort_values(["rank", "k"]).reset_index(drop=True)[COLUMNS]


def paper_comparable(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of Table 1 measured as the paper measured them (materialised attention), one per k."""
    rows = table[table["attention"] == PAPER_ATTENTION]
    if rows.empty:
        raise ValueError(f"{spec.ID}: no {PAPER_ATTENTION} rows; the paper-comparable numbers are missing")
    return rows.reset_index(drop=True)


def markdown(table: pd.DataFrame, settings: dict | None = None) -> str:
    lines = ["# " + "Table 1: OH vs BN at d = 32 (speedup = OH / BN; memory reduction = 1 - BN / OH)", ""]
    if settings is not None:
        lines += [scale_line(spec.ID, settings) + ".", ""]
    devices = sorted(set(",".join(table["device"]).split(","))) if "device" in table else []
    if devices:
        lines += [f"Device: {', '.join(d for d in devices if d)}. Times in ms are medians of the timed "
                  "repetitions; the forward pass is in train mode (with autograd).", ""]
    busy = busy_text(table["other_cpus_busy"], devices)
    if busy:
        lines += [f"{busy[0].upper()}{busy[1:]} (each row: the larger of OH's and BN's measurement; a CPU time "
                  "taken beside other work is not a measurement of this code).", ""]
    for attention in [a for a in ATTENTIONS if a in set(table["attention"])]:
        lines += [f"## {attention} attention: {ATTENTION_NAMES[attention]}", ""]
        lines.append("| " + " | ".join(MARKDOWN_HEADER) + " |")
        lines.append("|" + "|".join(["---:"] * len(MARKDOWN_HEADER)) + "|")
        for r in table[table["attention"] == attention].itertuples(index=False):
            cells = [str(r.k), f"{r.extra_dims_OH} / {r.extra_dims_BN}", f"{r.forward_ms_OH:.2f}",
                     f"{r.forward_ms_BN:.2f}", f"{r.forward_speedup:.2f}x", f"{r.backward_ms_OH:.2f}",
                     f"{r.backward_ms_BN:.2f}", f"{r.backward_speedup:.2f}x", f"{r.peak_memory_mb_OH:.1f}",
                     f"{r.peak_memory_mb_BN:.1f}", f"{r.memory_reduction_pct:.1f}%"]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["Paper (k = 1000, laptop GPU, materialised attention): forward 193.07 vs 15.90 ms (12.14x), backward "
              "308.28 vs 32.33 ms (9.54x), peak memory 3930 vs 1208 MB (69.3% less); at k = 6 BN is slightly "
              "slower (0.88x).", ""]
    return "\n".join(lines)


def write(table_path, csv_path, md_path, settings: dict | None = None) -> pd.DataFrame:
    import pyarrow.parquet as pq

    df = table_path if isinstance(table_path, pd.DataFrame) else pq.read_table(table_path).to_pandas()
    table = build(df)
    for p in (csv_path, md_path):
        Path(p).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(csv_path, index=False, float_format="%.6g", lineterminator="\n")
    Path(md_path).write_text(markdown(table, settings))
    return table
