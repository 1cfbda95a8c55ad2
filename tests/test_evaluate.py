"""Multi-step curves: the exact Lloyd construction reproduces Lloyd's curve; shapes, baselines, bad input."""

import numpy as np
import pandas as pd
import pytest
import torch

from icl_kmeans import ClusterTransformer, lloyd_transformer, sample_tasks
from icl_kmeans.baselines import has_empty_cluster
from icl_kmeans.evaluate import CURVE_COLUMNS, TABLE_COLUMNS, baseline_curve, multistep_curve, multistep_table

STEPS = 6


@pytest.fixture(scope="module")
def tasks64():
    """float64 tasks on which Lloyd's never leaves a cluster empty within STEPS steps."""
    t = sample_tasks(40, n=96, d=3, k=5, seed=11, dtype=torch.float64)
    keep = ~has_empty_cluster(t.X, t.C, STEPS)
    assert keep.sum() >= 20, f"only {int(keep.sum())} of 40 tasks without empty clusters"
    return t[keep]


@pytest.mark.parametrize("embedding", ["OH", "BN"])
@pytest.mark.parametrize("mode", ["reembed", "naive"])
def test_lloyd_transformer_curve_equals_lloyd(tasks64, embedding, mode):
    model = lloyd_transformer(3, 5, embedding).double()
    got = multistep_curve(model, tasks64, STEPS, mode=mode, batch_size=7)
    want = baseline_curve(tasks64, STEPS, "lloyd")
    assert list(got.columns) == CURVE_COLUMNS
    assert got["t"].tolist() == list(range(STEPS + 1))
    np.testing.assert_allclose(got[["log_objective", "objective", "misclustering"]].to_numpy(),
                               want[["log_objective", "objective", "misclustering"]].to_numpy(), rtol=1e-10, atol=1e-12)
    assert (got["nonfinite"] == 0).all()
    assert want["objective"].iloc[-1] < want["objective"].iloc[0]  # Lloyd's actually moves the centers


def test_curve_is_mean_of_log_objective(tasks64):
    from icl_kmeans.losses import kmeans_objective, misclustering_rate

    curve = baseline_curve(tasks64, 1, "lloyd")
    L0 = kmeans_objective(tasks64.X, tasks64.C)
    assert curve["log_objective"][0] == pytest.approx(L0.log().mean().item(), rel=1e-12)
    assert curve["objective"][0] == pytest.approx(L0.mean().item(), rel=1e-12)
    mis = misclustering_rate(tasks64.labels, tasks64.X, tasks64.C).mean().item()
    assert curve["misclustering"][0] == pytest.approx(mis, rel=1e-12)


def test_baselines_decrease_and_chunking_does_not_matter():
    t = sample_tasks(32, n=128, d=4, k=5, seed=2)
    lloyd_c = baseline_curve(t, 10, "lloyd", batch_size=64)
    em_c = baseline_curve(t, 10, "em", batch_size=5)
    assert (np.diff(lloyd_c["objective"]) <= 1e-4).all()  # Lloyd never increases L (up to float32 rounding)
    assert (np.diff(em_c["objective"]) <= 0.01 * em_c["objective"][0]).all()  # EM is not a k-means descent: "ish"
    assert em_c["objective"].iloc[-1] < 0.6 * em_c["objective"][0]
    pd.testing.assert_frame_equal(baseline_curve(t, 10, "em", batch_size=64), em_c, rtol=1e-6)


def test_multistep_table_layout_and_shared_start():
    torch.manual_seed(0)
    t = sample_tasks(8, n=64, d=4, k=5, seed=4)
    models = {"OH:L2": ClusterTransformer(4, 5, "OH"), "BN:NE": ClusterTransformer(4, 5, "BN")}
    df = multistep_table(models, t, 3)
    assert list(df.columns) == TABLE_COLUMNS
    assert len(df) == (2 * 2 + 2) * 4
    blocks = df.groupby(["method", "mode"], sort=False).size()
    assert list(blocks.index) == [("OH:L2", "reembed"), ("OH:L2", "naive"), ("BN:NE", "reembed"),
                                  ("BN:NE", "naive"), ("lloyd", "-"), ("em", "-")]
    start = df[df["t"] == 0]
    assert start["objective"].nunique() == 1 and start["log_objective"].nunique() == 1
    # naive and re-embed agree after one step by definition
    one = df[(df["t"] == 1) & df["method"].isin(models)].groupby("method")["objective"]
    assert (one.max() - one.min() < 1e-4 * one.max()).all()


def test_nonfinite_centers_are_counted_not_raised():
    torch.manual_seed(0)
    model = ClusterTransformer(4, 5, "OH")
    with torch.no_grad():
        for head in model.heads:
            head.V.weight.mul_(1e30)
    t = sample_tasks(4, n=32, d=4, k=5, seed=0)
    curve = multistep_curve(model, t, 3, mode="naive")
    assert curve["nonfinite"].iloc[-1] == 4 and not np.isfinite(curve["objective"].iloc[-1])
    assert curve["nonfinite"][0] == 0


def test_bad_input():
    t = sample_tasks(2, n=16, d=2, k=3, seed=0)
    model = ClusterTransformer(2, 3, "OH")
    with pytest.raises(ValueError, match="mode='loop'"):
        multistep_curve(model, t, 2, mode="loop")
    with pytest.raises(ValueError, match="steps=0"):
        multistep_curve(model, t, 0)
    with pytest.raises(ValueError, match="batch_size=0"):
        multistep_curve(model, t, 1, batch_size=0)
    with pytest.raises(ValueError, match="tasks must be a TaskBatch"):
        multistep_curve(model, (t.X, t.C), 1)
    with pytest.raises(ValueError, match="method='kmeans'"):
        baseline_curve(t, 2, "kmeans")
    with pytest.raises(ValueError, match="modes='x'"):
        multistep_table({"OH": model}, t, 1, modes=("x",))
    with pytest.raises(ValueError, match="model name 'lloyd'"):
        multistep_table({"lloyd": model}, t, 1)
    with pytest.raises(ValueError, match="d=2"):  # a model for other (d, k)
        multistep_curve(ClusterTransformer(3, 3, "OH"), t, 1)


def test_lloyd_baseline_empty_cluster_convention():
    """keep vs reseed (the reference code's): equal until a cluster empties, then reseed differs; reseed
    is exact for a given seed; the choice is validated."""
    t = sample_tasks(32, n=512, d=32, k=10, seed=20260101)
    empty = has_empty_cluster(t.X, t.C, 20)
    assert empty.any() and not empty.all()
    keep = baseline_curve(t, 20, "lloyd")
    reseed = baseline_curve(t, 20, "lloyd", empty="reseed", seed=3)
    pd.testing.assert_frame_equal(reseed, baseline_curve(t, 20, "lloyd", empty="reseed", seed=3))
    assert reseed.log_objective[1] == keep.log_objective[1]  # centers are data points: no empty cluster at t = 1
    assert reseed.log_objective[20] != keep.log_objective[20]
    full = t[~empty]  # without empty clusters the conventions agree
    pd.testing.assert_frame_equal(baseline_curve(full, 20, "lloyd", empty="reseed", seed=3), baseline_curve(full, 20))
    with pytest.raises(ValueError, match="empty.*'drop'.*keep.*reseed"):
        baseline_curve(t, 2, "lloyd", empty="drop")


def test_evaluation_job_uses_the_configured_lloyd_convention(tmp_path):
    from dataclasses import replace

    import pyarrow.parquet as pq

    from icl_kmeans.pipeline import evaluation_jobs, settings, studies
    from icl_kmeans.pipeline.taskfiles import write_test_set

    from icl_kmeans import TrainConfig, train

    repo = __import__("pathlib").Path(__file__).resolve().parents[1]
    ckpt = tmp_path / "r" / "seed1" / "checkpoint.pt"
    train(TrainConfig(d=32, k=10, n=16, batch=1, steps=1, val_batches=1, seed=1), checkpoint=ckpt)
    lloyd_at_20 = {}
    for convention in ("keep", "reseed"):
        s = settings.resolve({"preset": "smoke", "lloyd_empty": convention, "eval_steps": 8})
        spec = studies.build(s).evaluations["fig6"]
        assert spec.lloyd_empty == convention and spec.baseline_seed == s["eval_seed"]
        testset = replace(spec.testsets["normal"], n=512, tasks=32)
        spec = replace(spec, models={"OH:L2": "r"}, modes=("reembed",), testsets={"normal": testset}).as_params()
        ts = spec["testsets"]["normal"]  # as the job receives it (the rule's params)
        path = tmp_path / convention / f"{ts['id']}.pt"
        path.parent.mkdir()
        write_test_set(ts, 20260101, path)
        evaluation_jobs.multistep("fig6", spec, [1], {("r", 1): str(ckpt)}, {ts["id"]: str(path)}, tmp_path / f"{convention}.parquet",
                            device="cpu")
        df = pq.read_table(tmp_path / f"{convention}.parquet").to_pandas()
        rows = df[(df.curve == "Lloyd") & (df.metric == "log_objective")].set_index("t")["value"]
        lloyd_at_20[convention] = rows[8]
    assert lloyd_at_20["reseed"] < lloyd_at_20["keep"]
