"""Aggregation into one long Parquet table per figure, from synthetic runs and evaluations (no training)."""

from __future__ import annotations

import json
import math
import shutil
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from icl_kmeans.pipeline import aggregate as agg
from icl_kmeans.pipeline import settings as settings_mod
from icl_kmeans.pipeline import studies

REPO = Path(__file__).resolve().parents[1]
METRICS = "results/metrics/run={run}/seed={seed}/part-0.parquet"
RECORD = "results/runs/{run}/seed{seed}/record.json"
TIMING = "results/runs/{run}/seed{seed}/timing.parquet"
from icl_kmeans.pipeline.schemas import (DISSIMILARITY_SCHEMA, LANDSCAPE_SCHEMA, METRICS_SCHEMA,  # noqa: E402
                                          MULTISTEP_SCHEMA, PROFILE_SCHEMA, TIMING_SCHEMA)


def smoke_settings() -> dict:
    return settings_mod.resolve({"preset": "smoke"})


# ------------------------------------------------------------------------------ synthetic runs
def write_run(root: Path, run: str, seed: int, steps: int = 8, eval_every: int = 4, diverge_at: int | None = None,
              scale: float = 1.0) -> None:
    """A run's metrics (hive layout), timing and record, shaped like jobs.train_run writes them."""
    rng = np.random.default_rng(zlib.crc32(f"{run}:{seed}".encode()))
    last = steps if diverge_at is None else diverge_at - 1
    s = np.arange(last + 1)
    train = scale * 10.0 / (1 + s) * (1 + 0.1 * rng.random(len(s)))
    train[0] = math.nan
    rel = np.where((s % eval_every == 0) | (s == steps), 1.5 / (1 + 0.2 * s) + 0.05 * rng.random(len(s)), math.nan)
    m = pd.DataFrame({"step": s, "train_loss": train, "rel_val_loss": rel, "lr": 0.01})
    path = root / METRICS.format(run=run, seed=seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(m, schema=METRICS_SCHEMA, preserve_index=False), path)
    t = pd.DataFrame({"step": s, "wall_time": 0.01 * s + 0.001 * seed})
    path = root / TIMING.format(run=run, seed=seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(t, schema=TIMING_SCHEMA, preserve_index=False), path)
    rec = dict(run=run, seed=seed, status="ok" if diverge_at is None else "diverged", diverged_step=diverge_at,
               steps_done=int(last), device="cpu")
    (root / RECORD.format(run=run, seed=seed)).write_text(json.dumps(rec))


def run_files(root: Path, curves, seeds) -> dict:
    """(run, seed) -> its metrics, record and timing files under root, as the aggregate rule hands them."""
    kinds = dict(metrics=METRICS, record=RECORD, timing=TIMING)
    return {(c.run, s): {k: str(root / v.format(run=c.run, seed=s)) for k, v in kinds.items()}
            for c in curves for s in seeds}


def training_fixture(root: Path, fig: str, st=None, seeds=(1, 2, 3), diverged=(), trim: int = 0) -> list:
    """Writes every run of a training figure of the registry; returns its curves.

    trim: keep only the curves of the first `trim` facets (fewer panels, faster tests).
    diverged: (run, seed) pairs that diverge at step 3; "first" for the first run of the kept curves, seed 2.
    """
    st = st or studies.build(smoke_settings())
    curves = st.training[fig]
    if trim:
        keep = list(dict.fromkeys(tuple(c.facets.items()) for c in curves))[:trim]
        curves = [c for c in curves if tuple(c.facets.items()) in keep]
    if diverged == "first":
        diverged = {(sorted({c.run for c in curves})[0], seeds[min(1, len(seeds) - 1)])}
    for i, run in enumerate(sorted({c.run for c in curves})):
        for seed in seeds:
            write_run(root, run, seed, diverge_at=3 if (run, seed) in diverged else None, scale=1 + 0.1 * i)
    return curves


# ------------------------------------------------------------------------ synthetic evaluations
def eval_frame(fig: str, spec, seeds=(1, 2, 3)) -> tuple[pd.DataFrame, pa.Schema]:
    """A synthetic results/eval/{fig}.parquet for an evaluation spec of the registry (evaluation_specs)."""
    rng = np.random.default_rng(0)
    rows = []
    kind = spec.kind
    if kind == "multistep":
        T = spec.steps
        for ts in spec.testsets:
            for key, run in spec.models.items():
                curve, _, fam = key.partition("|")
                for seed in seeds:
                    for mode in spec.modes:
                        for t in range(T + 1):
                            base = 3.0 - 0.05 * t if mode == "reembed" else 3.0 + 0.5 * t
                            for metric, v in (("log_objective", base), ("objective", math.exp(base)),
                                              ("misclustering", 0.3 / (1 + t))):
                                rows.append((fig, ts, curve, fam or None, run, seed, mode, t, metric,
                                             v + 0.02 * rng.random()))
            for b in spec.baselines:
                name = {"lloyd": "Lloyd", "em": "EM"}[b]
                for t in range(T + 1):
                    for metric, v in (("log_objective", 3.0 - 0.04 * t), ("objective", math.exp(3.0 - 0.04 * t)),
                                      ("misclustering", 0.35 / (1 + t))):
                        rows.append((fig, ts, name, None, None, None, "-", t, metric, v))
        df = pd.DataFrame(rows, columns=MULTISTEP_SCHEMA.names)
        df["seed"] = df["seed"].astype("Int64")
        return df, MULTISTEP_SCHEMA
    if kind == "landscape":
        grid = np.linspace(-1, 1, spec.resolution)
        for key, run in spec.models.items():
            curve, _, tag = key.partition("|")
            d = int(tag.split("=")[1]) if tag.startswith("d=") else 32
            ts = tag
            metrics = ["loss"] if spec.surface == "loss" else ["gap_mean", "gap_max"]
            fam = "normal" if spec.surface == "loss" else tag
            for a in grid:
                for b in grid:
                    for m in metrics:
                        v = (1 + a * a + 2 * b * b) * (10 if fam == "cauchy" else 1) * (2 if m == "gap_max" else 1)
                        rows.append((fig, ts, curve, fam, d, run, seeds[0], a, b, m, v))
        return pd.DataFrame(rows, columns=LANDSCAPE_SCHEMA.names), LANDSCAPE_SCHEMA
    if kind == "dissimilarity":
        keys = [(f, i) for f, ts in spec.testsets.items() for i in range(ts.tasks)]
        for rf, ri in keys:
            for cf, ci in keys:
                rows.append((fig, rf, ri, cf, ci, 0.0 if (rf, ri) == (cf, ci) else 0.1 + 0.05 * rng.random()))
        return pd.DataFrame(rows, columns=DISSIMILARITY_SCHEMA.names), DISSIMILARITY_SCHEMA
    assert kind == "profile"
    for d in spec.ds:
        for k in spec.ks:
            for e in ("OH", "BN"):
                extra = k if e == "OH" else math.ceil(math.log2(k))
                w = d + extra
                for attention, cost in (("materialised", 1.0), ("fused", 0.5)):
                    for metric, v in (("forward_train_ms", 0.1 * w), ("backward_ms", 0.2 * w),
                                      ("peak_memory_mb", 1.0 * w), ("forward_eval_ms", 0.05 * w)):
                        rows.append((fig, d, k, e, attention, metric, cost * v, "cpu"))
                    rows.append((fig, d, k, e, attention, "extra_dims", float(extra), "cpu"))
    return pd.DataFrame(rows, columns=PROFILE_SCHEMA.names), PROFILE_SCHEMA


def write_eval(path: Path, fig: str, spec, shuffle: int | None = None) -> Path:
    df, schema = eval_frame(fig, spec)
    if shuffle is not None:
        df = df.sample(frac=1.0, random_state=shuffle)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(df, schema=schema, preserve_index=False), path)
    return path


# ------------------------------------------------------------------------------------------ tests
def test_read_run_metrics_hive_dataset(tmp_path):
    for run in ("A-L2_d4_k6_x", "B-NE_d4_k6_y"):
        for seed in (7, 11):
            write_run(tmp_path, run, seed)
    df = agg.read_run_metrics(tmp_path / "results/metrics")
    assert set(df.columns) == {"step", "train_loss", "rel_val_loss", "lr", "run", "seed"}
    assert df["seed"].dtype == np.int64 and df["step"].dtype == np.int64
    assert sorted(df[["run", "seed"]].drop_duplicates().itertuples(index=False)) == [
        ("A-L2_d4_k6_x", 7), ("A-L2_d4_k6_x", 11), ("B-NE_d4_k6_y", 7), ("B-NE_d4_k6_y", 11)]
    assert len(df) == 4 * 9
    one = agg.read_run_metrics(tmp_path / "results/metrics", runs=["B-NE_d4_k6_y"], seeds=[11])
    assert set(one["run"]) == {"B-NE_d4_k6_y"} and set(one["seed"]) == {11} and len(one) == 9
    assert list(one["step"]) == list(range(9))
    files = [tmp_path / METRICS.format(run="A-L2_d4_k6_x", seed=7)]
    sub = agg.read_run_metrics(tmp_path / "results/metrics", files=files)
    assert set(zip(sub["run"], sub["seed"])) == {("A-L2_d4_k6_x", 7)}
    with pytest.raises(FileNotFoundError):
        agg.read_run_metrics(tmp_path / "nowhere")


def test_read_run_metrics_ignores_files_of_crashed_writers(tmp_path):
    """A writer killed mid-write leaves part-0.parquet.<pid>.tmp (complete or truncated): not data."""
    write_run(tmp_path, "A-L2_d4_k6_x", 7)
    root = tmp_path / "results/metrics"
    clean = agg.read_run_metrics(root)
    part = tmp_path / METRICS.format(run="A-L2_d4_k6_x", seed=7)
    shutil.copy(part, part.with_name(part.name + ".4242.tmp"))  # complete: its rows would count twice
    part.with_name(part.name + ".4243.tmp").write_bytes(part.read_bytes()[:40])  # truncated: unreadable
    pd.testing.assert_frame_equal(agg.read_run_metrics(root), clean)


def test_training_table_schema_and_content(tmp_path):
    st = studies.build(smoke_settings())
    curves = training_fixture(tmp_path, "fig2", st, seeds=(1, 2))
    table = agg.training_table("fig2", curves, run_files(tmp_path, curves, [1, 2]))
    assert table.schema.names == ["figure", "panel", "d", "tau", "curve", "embedding", "regularizer", "run", "seed",
                                  "status", "diverged_step", "step", "metric", "value"]
    types = dict(zip(table.schema.names, table.schema.types))
    assert types["panel"] == pa.string() and types["d"] == pa.int64() and types["tau"] == pa.float64()
    assert types["seed"] == pa.int64() and types["value"] == pa.float64()
    assert table.schema.metadata is None
    df = table.to_pandas()
    assert set(df["metric"]) == {"train_loss", "rel_val_loss"}
    assert df["value"].notna().all()  # unmeasured values are dropped
    assert set(df["curve"]) == {"OH:NE", "OH:L2", "BN:NE", "BN:L2", "NA:NE", "NA:L2"}
    assert (df["curve"] == df["embedding"] + ":" + df["regularizer"]).all()
    assert set(df["status"]) == {"ok"}
    # every curve of every facet, every seed
    assert len(df.groupby(["panel", "d", "tau", "curve", "seed"])) == len(curves) * 2
    rel = df[df["metric"] == "rel_val_loss"]
    assert sorted(rel["step"].unique()) == [0, 4, 8]
    assert df[df["metric"] == "train_loss"]["step"].min() == 1


def test_diverged_run_is_kept_and_visible(tmp_path):
    st = studies.build(smoke_settings())
    run = sorted({c.run for c in st.training["fig15"]})[0]
    curves = training_fixture(tmp_path, "fig15", st, seeds=(1, 2, 3), diverged={(run, 2)})
    df = agg.training_table("fig15", curves, run_files(tmp_path, curves, [1, 2, 3])).to_pandas()
    div = df[df["status"] == "diverged"]
    assert set(zip(div["run"], div["seed"])) == {(run, 2)}
    assert set(div["diverged_step"]) == {3}
    assert div["step"].max() == 2  # rows stop at the last finite step
    assert df[df["status"] == "ok"]["diverged_step"].isna().all()
    assert "diverged" in agg.summary(pa.Table.from_pandas(df))


def test_fig17_has_wall_time(tmp_path):
    st = studies.build(smoke_settings())
    curves = training_fixture(tmp_path, "fig17", st, seeds=(1, 2))
    df = agg.training_table("fig17", curves, run_files(tmp_path, curves, [1, 2])).to_pandas()
    assert set(df["metric"]) == {"train_loss", "rel_val_loss", "wall_time"}
    assert list(df.columns[1:5]) == ["d", "k", "tau", "n"]


def test_training_table_is_deterministic(tmp_path):
    st = studies.build(smoke_settings())
    curves = training_fixture(tmp_path, "fig2", st, seeds=(1, 2))
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    agg.aggregate("fig2", a, curves=curves, files=run_files(tmp_path, curves, [1, 2]))
    agg.aggregate("fig2", b, curves=list(reversed(curves)), files=run_files(tmp_path, list(reversed(curves)), [2, 1]))
    assert a.read_bytes() == b.read_bytes()
    assert not list(tmp_path.glob("*.tmp"))


def test_missing_run_raises(tmp_path):
    st = studies.build(smoke_settings())
    curves = training_fixture(tmp_path, "fig2", st, seeds=(1,))
    with pytest.raises((FileNotFoundError, OSError, ValueError)):
        agg.training_table("fig2", curves, run_files(tmp_path, curves, [1, 2]))
    with pytest.raises(ValueError):
        agg.training_table("fig2", [], run_files(tmp_path, [], [1]))


@pytest.mark.parametrize("fig", ["fig8", "fig3", "fig9", "fig1"])
def test_evaluation_table_normalised_and_deterministic(tmp_path, fig):
    st = studies.build(smoke_settings())
    spec = st.evaluations[fig]
    src1 = write_eval(tmp_path / "e1.parquet", fig, spec, shuffle=1)
    src2 = write_eval(tmp_path / "e2.parquet", fig, spec, shuffle=2)
    target = "fig18" if fig == "fig8" else fig
    out1, out2 = tmp_path / "t1.parquet", tmp_path / "t2.parquet"
    t1 = agg.aggregate(target, out1, source=src1)
    agg.aggregate(target, out2, source=src2)
    assert out1.read_bytes() == out2.read_bytes()
    assert t1.schema.names == pq.read_schema(src1).names
    df = pq.read_table(out1).to_pandas()
    assert set(df["figure"]) == {target}
    assert len(df) == len(pq.read_table(src1))
    keys = [c for c in df.columns if c not in ("value", "emd")]
    resorted = df.sort_values(keys, kind="stable", na_position="first").reset_index(drop=True)
    pd.testing.assert_frame_equal(df, resorted)


def test_empty_evaluation_raises(tmp_path):
    src = tmp_path / "empty.parquet"
    pq.write_table(MULTISTEP_SCHEMA.empty_table(), src)
    with pytest.raises(ValueError, match="no rows"):
        agg.aggregate("fig6", tmp_path / "out.parquet", source=src)
    assert not (tmp_path / "out.parquet").exists()


def test_facet_types():
    assert agg.facet_type([4, 32]) == pa.int64()
    assert agg.facet_type([1.0, 0.1]) == pa.float64()
    assert agg.facet_type([1, 0.5]) == pa.float64()
    assert agg.facet_type(["a", "b"]) == pa.string()
    assert agg.facet_type([True, False]) == pa.string()
