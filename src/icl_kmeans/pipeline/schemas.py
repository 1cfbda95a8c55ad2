"""Explicit Parquet schemas of the per-run and per-figure evaluation tables (no torch import, so
aggregation, review and tests share them)."""

import pyarrow as pa

METRICS_SCHEMA = pa.schema([("step", pa.int64()), ("train_loss", pa.float64()), ("rel_val_loss", pa.float64()),
                            ("lr", pa.float64())])
TIMING_SCHEMA = pa.schema([("step", pa.int64()), ("wall_time", pa.float64())])
MULTISTEP_SCHEMA = pa.schema([
    ("figure", pa.string()), ("testset", pa.string()), ("curve", pa.string()), ("train_family", pa.string()),
    ("run", pa.string()), ("seed", pa.int64()), ("mode", pa.string()), ("t", pa.int64()),
    ("metric", pa.string()), ("value", pa.float64())])
LANDSCAPE_SCHEMA = pa.schema([
    ("figure", pa.string()), ("testset", pa.string()), ("curve", pa.string()), ("train_family", pa.string()),
    ("d", pa.int64()), ("run", pa.string()), ("seed", pa.int64()), ("alpha", pa.float64()),
    ("beta", pa.float64()), ("metric", pa.string()), ("value", pa.float64())])
DISSIMILARITY_SCHEMA = pa.schema([
    ("figure", pa.string()), ("row_family", pa.string()), ("row_index", pa.int64()), ("col_family", pa.string()),
    ("col_index", pa.int64()), ("emd", pa.float64())])
PROFILE_SCHEMA = pa.schema([
    ("figure", pa.string()), ("d", pa.int64()), ("k", pa.int64()), ("embedding", pa.string()),
    ("attention", pa.string()), ("metric", pa.string()), ("value", pa.float64()), ("device", pa.string())])
