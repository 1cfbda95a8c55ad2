"""Aggregation: one tidy, long-format Parquet table per figure (results/tables/{fig}.parquet).

Training figures (Figs 2, 4, 10, 11, 13-17) collect the per-step metrics of every (run, seed) the
figure draws, with the figure's facet columns (typed int64 / float64 / string), the curve label
(`OH:L2`), embedding, regularizer, run, seed, the run's status (`ok` / `diverged`, from its record)
and diverged_step, then step, metric and value:

    figure | <facets...> | curve | embedding | regularizer | run | seed | status | diverged_step
           | step | metric | value

metric is train_loss or rel_val_loss (Fig 17 also wall_time: seconds since the start of training at
that step, from the run's timing file). Values that were not measured are dropped: rel_val_loss
exists only at validation steps, train_loss not at step 0. A diverged run is kept; its rows stop
at the last finite step and its status column says `diverged`. It never fails the workflow.

Evaluation figures copy results/eval/{source}.parquet (Fig 18 reads Fig 8's evaluation) with the
figure column set to the figure and the rows sorted; the schema (multi-step, landscape,
dissimilarity or profile) is kept.

Determinism: rows are sorted by every column but value, the schema is explicit and the file has no
pandas metadata, so the same inputs give the same bytes. Exceptions, by nature: Fig 17 (wall_time),
Fig 1 and Table 1 (timings and memory of the machine that ran them).

No torch import: this runs in the plotting environment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from ..atomic import atomic_write
from . import figure_registry

TRAINING_METRICS = ("train_loss", "rel_val_loss")
TIMED_FIGURES = tuple(f.id for f in figure_registry.TABLE if f.timed_alone)  # x-axis: wall-clock time
RUN_COLUMNS = [("curve", pa.string()), ("embedding", pa.string()), ("regularizer", pa.string()),
               ("run", pa.string()), ("seed", pa.int64()), ("status", pa.string()),
               ("diverged_step", pa.int64()), ("step", pa.int64()), ("metric", pa.string()),
               ("value", pa.float64())]
METRICS_PARTITIONING = pa.schema([("run", pa.string()), ("seed", pa.int64())])


# ----------------------------------------------------------------------------------------- I/O
def write_table(table: pa.Table, path) -> None:
    """Atomic Parquet write without pandas metadata (a crash never leaves a truncated table)."""
    atomic_write(path, lambda tmp: pq.write_table(table.replace_schema_metadata(None), tmp, compression="zstd"))


def read_table(path) -> pd.DataFrame:
    return pq.read_table(path).to_pandas()


def read_run_metrics(root="results/metrics", runs=None, seeds=None, files=None) -> pd.DataFrame:
    """The per-run metrics as one hive-partitioned dataset (root/run=<run>/seed=<seed>/part-0.parquet).

    Returns a DataFrame with the metric columns (step, train_loss, rel_val_loss, lr) plus the
    partition columns run (string) and seed (int64), sorted by run, seed, step. `runs` and `seeds`
    filter on the partitions (pushed down to the directory level); `files` restricts the dataset to
    those part files (which must lie under root).
    """
    part = pads.partitioning(METRICS_PARTITIONING, flavor="hive")
    if files is not None:
        files = [str(f) for f in files]
        if not files:
            raise ValueError("files is empty; expected at least one metrics file")
        dataset = pads.dataset(files, format="parquet", partitioning=part, partition_base_dir=str(root))
    else:
        if not Path(root).is_dir():
            raise FileNotFoundError(f"no metrics dataset at {root!r}")
        # only finished part files: a crashed writer's `part-0.parquet.<pid>.tmp` is not data
        files = sorted(p.as_posix() for p in Path(root).glob("run=*/seed=*/*.parquet"))
        if not files:
            return pd.DataFrame()
        dataset = pads.dataset(files, format="parquet", partitioning=part, partition_base_dir=str(root))
    expr = None
    if runs is not None:
        expr = pads.field("run").isin(list(runs))
    if seeds is not None:
        e = pads.field("seed").isin([int(s) for s in seeds])
        expr = e if expr is None else expr & e
    df = dataset.to_table(filter=expr).to_pandas()
    if df.empty:
        return df
    df["seed"] = df["seed"].astype("int64")
    df["run"] = df["run"].astype(str)
    return df.sort_values(["run", "seed", "step"], kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------------------ training tables
def facet_type(values) -> pa.DataType:
    """int64 if every value is an int, float64 if every value is a number, else string."""
    values = list(values)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pa.int64()
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return pa.float64()
    return pa.string()


def facet_columns(curves) -> list[tuple[str, pa.DataType]]:
    """The facet columns of a training figure, in the order they first appear, with their types."""
    names = list(dict.fromkeys(k for c in curves for k in _facets(c)))
    reserved = {name for name, _ in RUN_COLUMNS} | {"figure"}
    clash = sorted(set(names) & reserved)
    if clash:
        raise ValueError(f"facet names {clash} clash with the table's columns")
    return [(n, facet_type(_facets(c).get(n) for c in curves)) for n in names]


def training_schema(curves) -> pa.Schema:
    return pa.schema([("figure", pa.string()), *facet_columns(curves), *RUN_COLUMNS])


def _facets(curve) -> dict:
    return curve["facets"] if isinstance(curve, dict) else curve.facets


def _get(curve, key):
    return curve[key] if isinstance(curve, dict) else getattr(curve, key)


def _read_record(path) -> dict:
    with open(path) as fh:
        return json.load(fh)


def training_table(fig: str, curves, files: dict, timed: bool | None = None) -> pa.Table:
    """The long table of one training figure.

    curves: the figure's Curves (or dicts with run, facets, label); files: (run, seed) -> {"metrics": ...,
    "record": ..., and for timed figures "timing": ...}, one entry per (run, seed) drawn. The files are
    read by their keys, never by parsing their names.
    """
    curves = list(curves)
    if not curves:
        raise ValueError(f"{fig}: no curves; a training figure needs at least one")
    timed = fig in TIMED_FIGURES if timed is None else timed
    schema = training_schema(curves)
    runs = sorted({_get(c, "run") for c in curves})
    keys = sorted((str(r), int(s)) for r, s in files)
    missing = sorted(set(runs) - {r for r, _ in keys})
    if missing:
        raise ValueError(f"{fig}: no files for runs {missing}")
    metrics = _read_keyed(files, keys, "metrics")
    if timed:
        timing = _read_keyed(files, keys, "timing")
        metrics = metrics.merge(timing[["run", "seed", "step", "wall_time"]], on=["run", "seed", "step"], how="left")
    status = {}
    for key in keys:
        rec = _read_record(files[key]["record"])
        status[key] = (rec.get("status", "ok"), rec.get("diverged_step"))
    value_vars = list(TRAINING_METRICS) + (["wall_time"] if timed else [])
    long = metrics.melt(id_vars=["run", "seed", "step"], value_vars=value_vars, var_name="metric",
                        value_name="value")
    long = long[long["value"].notna()]
    frames = []
    for c in curves:
        run, facets, label = _get(c, "run"), _facets(c), _get(c, "label")
        part = long[long["run"] == run].copy()
        if part.empty:
            raise ValueError(f"{fig}: no metrics for run {run} ({label}, {facets})")
        embedding, regularizer = label.split(":")
        part = part.assign(figure=fig, curve=label, embedding=embedding, regularizer=regularizer, **facets)
        part["status"] = [status[(run, int(s))][0] for s in part["seed"]]
        part["diverged_step"] = pd.array([status[(run, int(s))][1] for s in part["seed"]], dtype="Int64")
        frames.append(part)
    df = pd.concat(frames, ignore_index=True)
    return _to_table(df, schema)


def _read_keyed(files: dict, keys, kind: str) -> pd.DataFrame:
    """The `kind` file of every (run, seed) key, with run and seed columns from the key."""
    return pd.concat([pq.read_table(files[key][kind]).to_pandas().assign(run=key[0], seed=key[1]) for key in keys],
                     ignore_index=True)


def _to_table(df: pd.DataFrame, schema: pa.Schema, value_columns=("value",)) -> pa.Table:
    """Sorted by every column but the values (nulls first); explicit schema; no pandas metadata."""
    if df.empty:
        raise ValueError("no rows to aggregate; refusing to write an empty table")
    keys = [n for n in schema.names if n not in value_columns]
    df = df[schema.names].sort_values(keys, kind="stable", na_position="first").reset_index(drop=True)
    return pa.Table.from_pandas(df, schema=schema, preserve_index=False).replace_schema_metadata(None)


# ---------------------------------------------------------------------------- evaluation tables
def evaluation_table(fig: str, source) -> pa.Table:
    """Fig's table from an evaluation file: figure column set to fig, rows sorted, schema kept."""
    table = pq.read_table(source)
    if table.num_rows == 0:
        raise ValueError(f"{fig}: the evaluation {source} has no rows")
    schema = table.schema.remove_metadata()
    if "figure" not in schema.names:
        raise ValueError(f"{fig}: {source} has no figure column; not an evaluation table")
    df = table.to_pandas().assign(figure=fig)
    values = tuple(n for n in ("value", "emd") if n in schema.names)
    return _to_table(df, schema, value_columns=values)


def aggregate(fig: str, out, curves=None, files=None, source=None) -> pa.Table:
    """Writes fig's table: from training runs (curves, files) or from an evaluation (source)."""
    if (source is None) == (curves is None):
        raise ValueError("give either curves (a training figure) or source (an evaluation figure)")
    table = evaluation_table(fig, source) if source is not None else training_table(fig, curves, files)
    write_table(table, out)
    return table


def summary(table: pa.Table) -> str:
    """One line for the job log: rows, and the diverged (run, seed) pairs of a training table."""
    df = table.to_pandas()
    line = f"{table.num_rows} rows, columns {table.schema.names}"
    if "status" in df.columns:
        div = df.loc[df["status"] == "diverged", ["curve", "run", "seed", "diverged_step"]].drop_duplicates()
        if len(div):
            line += "; diverged: " + ", ".join(f"{c} {r} seed {s} at step {d}" for c, r, s, d in div.itertuples(
                index=False))
    return line


__all__ = ["aggregate", "training_table", "evaluation_table", "read_run_metrics", "read_table", "write_table",
           "training_schema", "facet_type", "summary"]
