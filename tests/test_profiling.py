"""Timing and peak memory of OH vs BN: positive numbers, a peak-memory meter that measures what it should."""

import inspect
import math

import pandas as pd
import pytest
import torch

from icl_kmeans import profiling
from icl_kmeans.profile_table import ATTENTIONS, GRID_COLUMNS, METRICS, relative_gain
from icl_kmeans.profiling import MB, peak_cpu_memory, profile_grid, profile_model

FAST = dict(n=64, batch=4, warmup=1, reps=2, device="cpu")


def test_peak_cpu_memory_of_known_allocations():
    def two_in_a_row():
        a = torch.ones(2_000_000)  # 8 MB, freed before the next one
        del a
        b = torch.ones(1_000_000)  # 4 MB
        return b.sum()

    def two_alive():
        a = torch.ones(2_000_000)
        b = torch.ones(1_000_000)
        return a.sum() + b.sum()

    p1, p2 = peak_cpu_memory(two_in_a_row), peak_cpu_memory(two_alive)
    assert 8_000_000 <= p1 < 8_000_000 + 100_000
    assert 12_000_000 <= p2 < 12_000_000 + 100_000


@pytest.mark.parametrize("embedding,extra", [("OH", 10), ("BN", 4), ("NA", 0)])
def test_profile_model_positive(embedding, extra):
    r = profile_model(4, 10, embedding, **FAST)
    assert list(r) == list(ATTENTIONS)
    for attention, metrics in r.items():
        assert set(metrics) == set(METRICS)
        assert metrics["extra_dims"] == extra
        for key in ("forward_train_ms", "backward_ms", "peak_memory_mb", "forward_eval_ms"):
            assert metrics[key] > 0 and math.isfinite(metrics[key]), (attention, key)


def test_materialised_attention_holds_the_n_by_n_matrix_and_fused_does_not():
    """The paper-comparable implementation materialises batch x n x n weights; the fused one stays linear in n."""
    batch, n = 4, 512
    r = profile_model(4, 10, "OH", n=n, batch=batch, warmup=0, reps=1, device="cpu")
    square_mb = batch * n * n * 4 / MB  # one float32 n x n weight matrix per task (4 MB here)
    assert r["materialised"]["peak_memory_mb"] > r["fused"]["peak_memory_mb"] + square_mb
    assert r["fused"]["peak_memory_mb"] < square_mb


def test_peak_memory_grows_linearly_with_batch_and_covers_known_tensors():
    run = lambda batch: profile_model(8, 10, "OH", n=256, batch=batch, warmup=0, reps=1, device="cpu",  # noqa: E731
                                      attentions=["fused"])["fused"]["peak_memory_mb"]
    small, large = run(8), run(16)
    assert 1.7 < large / small < 2.3, (small, large)
    embedded_points = 16 * 256 * (8 + 10) * 4 / MB  # X_bar(0) exists during the forward pass
    assert large > 2 * embedded_points


def test_profile_grid_and_relative_gain():
    df = profile_grid([4], [6, 8], progress=False, **FAST)
    assert list(df.columns) == GRID_COLUMNS and len(df) == 2 * 2 * len(ATTENTIONS) * len(METRICS)
    gain = relative_gain(df)
    assert list(gain.columns) == ["attention", "d", "k", "metric", "gain"]
    assert len(gain) == 2 * len(ATTENTIONS) * len(METRICS)
    extra = gain[(gain["metric"] == "extra_dims") & (gain["attention"] == "fused")].set_index("k")["gain"]
    assert extra[6] == pytest.approx(6 / 3) and extra[8] == pytest.approx(8 / 3)


def test_relative_gain_is_oh_over_bn():
    df = pd.DataFrame({"d": [4, 4], "k": [10, 10], "embedding": ["OH", "BN"], "metric": ["backward_ms"] * 2,
                       "value": [30.0, 10.0]})
    assert relative_gain(df)["gain"].tolist() == [3.0]
    with pytest.raises(ValueError, match="'BN'"):
        relative_gain(df[df["embedding"] == "OH"])


def test_relative_gain_keeps_every_cell_and_marks_undefined_gains_nan():
    """A missing or non-finite measurement, or BN = 0, gives a NaN cell: never dropped, never inf."""
    cells = {(4, 10): (30.0, 10.0), (4, 16): (30.0, math.nan), (4, 25): (30.0, 0.0), (8, 10): (math.inf, 2.0)}
    rows = [dict(d=d, k=k, embedding=e, metric="forward_train_ms", value=v)
            for (d, k), (oh, bn) in cells.items() for e, v in (("OH", oh), ("BN", bn))]
    gain = relative_gain(pd.DataFrame(rows)).set_index(["d", "k"])["gain"]
    assert list(gain.index) == list(cells)
    assert gain[(4, 10)] == 3.0 and gain[[(4, 16), (4, 25), (8, 10)]].isna().all()


def test_bad_input():
    with pytest.raises(ValueError, match="embedding='XX'"):
        profile_model(4, 10, "XX", **FAST)
    with pytest.raises(ValueError, match="k=1"):
        profile_model(4, 1, "OH", **FAST)
    with pytest.raises(ValueError, match="reps=0"):
        profile_model(4, 10, "OH", n=64, batch=4, warmup=1, reps=0)
    with pytest.raises(ValueError, match="ks=1"):
        profile_grid([4], [1], progress=False)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_profile():
    r = profile_model(4, 10, "BN", n=64, batch=4, warmup=1, reps=2, device="cuda")
    for metrics in r.values():
        assert metrics["peak_memory_mb"] > 0 and metrics["forward_train_ms"] > 0


def test_peak_cpu_memory_uses_only_public_profiler_interfaces():
    """The private prof.profiler.kineto_results changed across torch versions; never reach into it."""
    src = inspect.getsource(profiling.peak_cpu_memory)
    assert "kineto" not in src and ".profiler." not in src and "._" not in src


def test_profile_grid_resumes_from_its_finished_cells(tmp_path, monkeypatch):
    """A stopped grid goes on from its resume file: finished cells are read back, not measured again; cells
    measured another way (other reps) are measured anew."""
    import icl_kmeans.profiling as P

    resume = tmp_path / "fig1.parquet.resume"
    first = profile_grid([4], [6], n=16, batch=2, warmup=0, reps=1, progress=False, resume=resume)
    assert resume.is_file()
    measured = []
    real = P.profile_model
    monkeypatch.setattr(P, "profile_model", lambda d, k, e, **kw: measured.append((d, k, e)) or real(d, k, e, **kw))
    grown = P.profile_grid([4], [6, 8], n=16, batch=2, warmup=0, reps=1, progress=False, resume=resume)
    assert measured == [(4, 8, "OH"), (4, 8, "BN")]
    pd.testing.assert_frame_equal(grown[grown["k"] == 6].reset_index(drop=True), first)
    assert grown[["d", "k", "embedding"]].drop_duplicates().values.tolist() == [[4, 6, "OH"], [4, 6, "BN"],
                                                                                [4, 8, "OH"], [4, 8, "BN"]]
    measured.clear()
    P.profile_grid([4], [6], n=16, batch=2, warmup=0, reps=2, progress=False, resume=resume)
    assert measured == [(4, 6, "OH"), (4, 6, "BN")]


def test_other_cpus_busy_counts_other_processes_and_not_this_one(monkeypatch):
    """The machine's busy CPU seconds minus this process's own, over the wall time."""
    import os
    import subprocess
    import sys
    import time

    now = {"busy": 100.0, "own": 10.0, "t": 1000.0}
    times = lambda own: os.times_result((own, 0.0, 0.0, 0.0, 0.0))  # noqa: E731
    monkeypatch.setattr(profiling, "busy_snapshot", lambda: (now["busy"], times(now["own"]), now["t"]))
    start = profiling.busy_snapshot()
    now.update(busy=106.0, own=12.0, t=1002.0)  # 6 s busy in 2 s, 2 of them this process's: 2 other CPUs
    assert profiling.other_cpus_busy(start) == pytest.approx(2.0)
    now.update(busy=104.98, own=15.0)  # this process alone (a clock tick of rounding can go below 0)
    assert profiling.other_cpus_busy(start) == 0.0
    assert math.isnan(profiling.other_cpus_busy((None, times(10.0), 1000.0)))  # no /proc/stat
    monkeypatch.undo()

    if profiling._cpu_seconds_busy() is None:
        pytest.skip("no /proc/stat (not Linux)")
    # a real other process spinning on one CPU while this one sleeps: at least most of one CPU (more on a busy machine)
    spin = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 3: pass"])
    time.sleep(0.5)
    start = profiling.busy_snapshot()
    time.sleep(2)
    busy = profiling.other_cpus_busy(start)
    spin.wait()
    assert busy > 0.7, busy


def test_a_profile_records_what_else_kept_the_cpus_busy():
    r = profile_model(4, 10, "BN", **FAST)
    values = {a: m["other_cpus_busy"] for a, m in r.items()}
    assert len(set(values.values())) == 1 and next(iter(values.values())) >= 0, values  # one reading per cell


def test_machine_load_sorts_a_profile_into_gpu_not_recorded_idle_and_busy():
    """One decision behind Table 1's and Fig 1's line, the profile's warning and the timing claims."""
    from icl_kmeans.profile_table import BUSY, IDLE, IDLE_OTHER_CPUS, NOT_RECORDED, ON_GPU, busy_text, machine_load

    nan = float("nan")
    assert machine_load([0.0, 5.0], ["cuda:0"])[0] == ON_GPU and busy_text([5.0], ["cuda:0"]) == ""
    assert machine_load([nan, nan], ["cpu"])[0] == NOT_RECORDED and machine_load([])[0] == NOT_RECORDED
    assert machine_load([0.02, nan, IDLE_OTHER_CPUS]) == (IDLE, IDLE_OTHER_CPUS)  # the limit itself is idle
    assert machine_load([0.02, IDLE_OTHER_CPUS + 0.01]) == (BUSY, IDLE_OTHER_CPUS + 0.01)
    assert "idle machine" in busy_text([0.05]) and "not this code's alone" in busy_text([1.3])
