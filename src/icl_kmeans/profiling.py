"""Speed and memory of OH against BN (Fig 1 and Table 1).

For one model F_{d:k} and a batch of `batch` tasks of n points:
    forward_train_ms  forward pass in train mode with autograd recording (the training forward)
    backward_ms       backward pass of the smoothed L2 loss (tau = 0.1), mean over tasks
    forward_eval_ms   forward pass in eval mode under torch.no_grad (inference)
    peak_memory_mb    peak tensor memory of one forward + backward, MB = 2**20 bytes
    extra_dims        embedding width minus d: k (OH), ceil(log2 k) (BN), 0 (NA)
Times are the median over `reps` timed repetitions after `warmup` untimed ones (the median resists
interference from other processes better than the mean); CUDA is synchronised around every timing.

Peak memory counts every tensor alive at the worst moment, including the model and the input tasks:
- CUDA: torch.cuda.max_memory_allocated() after torch.cuda.reset_peak_memory_stats().
- CPU: there is no allocator peak counter, so one forward + backward runs under torch.profiler with
  profile_memory=True; its raw allocation events (+bytes on allocation, -bytes on free, all threads)
  are sorted by time and summed; the maximum of that running sum is the peak above what was alive
  before, to which the bytes already alive (parameters and inputs) are added. See peak_cpu_memory.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

import pandas as pd
import torch

from . import _checks
from .embeddings import EMBEDDINGS, code_width
from .losses import smoothed_kmeans_loss
from .model import ClusterTransformer
from .tasks import sample_tasks
from .training import resolve_device

METRICS = ("forward_train_ms", "backward_ms", "peak_memory_mb", "forward_eval_ms", "extra_dims")
GRID_COLUMNS = ["d", "k", "embedding", "metric", "value"]
MB = 2 ** 20


def peak_cpu_memory(fn: Callable[[], object]) -> int:
    """Peak bytes of CPU tensor memory allocated while fn() runs, above what was allocated before.

    Uses torch.profiler(profile_memory=True): every allocation and free of the CPU allocator becomes a
    "[memory]" event with a signed byte count; the running sum of those events in time order is the
    memory held by tensors created during fn, and its maximum is the peak (>= 0).
    """
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events()
              if e.name() == "[memory]" and str(e.device_type()).endswith("CPU")]
    running = peak = 0
    for e in sorted(events, key=lambda e: e.start_ns()):
        running += e.nbytes()
        peak = max(peak, running)
    return peak


def _timed(fn: Callable[[], object], device: torch.device, before: Callable[[], object] | None = None) -> float:
    """Milliseconds of one call of fn (after the untimed before()), synchronising CUDA around it."""
    args = (before(),) if before is not None else ()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t0 = time.perf_counter()
    fn(*args)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return 1000 * (time.perf_counter() - t0)


def profile_model(d: int, k: int, embedding: str, n: int = 1024, batch: int = 32, warmup: int = 10, reps: int = 30,
                  device: str | torch.device | None = None, seed: int = 0, tau: float = 0.1,
                  regularizer: str = "L2") -> dict:
    """Times and peak memory of F_{d:k} with `embedding` on `batch` normal tasks of n points (see module doc).

    device None or "auto": CUDA when available, else CPU. The model is initialised from `seed` and the
    tasks are sample_tasks(seed=seed), so every embedding sees the same inputs.
    """
    _checks.positive_int("d", d)
    _checks.positive_int("k", k, minimum=2)
    _checks.choice("embedding", embedding, EMBEDDINGS)
    _checks.positive_int("n", n)
    _checks.positive_int("batch", batch)
    _checks.positive_int("warmup", warmup, minimum=0)
    _checks.positive_int("reps", reps)
    _checks.positive_int("seed", seed, minimum=0)
    if n < k:
        raise ValueError(f"n={n} points is invalid for k={k} centers; expected n >= k")
    dev = resolve_device(None if device is None else str(device))

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = ClusterTransformer(d, k, embedding).to(dev)
    tasks = sample_tasks(batch, n=n, d=d, k=k, seed=seed)
    X, C = tasks.X.to(dev), tasks.C.to(dev)

    def forward():
        return model(X, C)

    def loss_of(centers):
        return smoothed_kmeans_loss(X, centers, tau, regularizer).mean()

    def backward(loss):
        loss.backward()

    def fresh_loss():
        model.zero_grad(set_to_none=True)
        return loss_of(forward())

    def step():
        model.zero_grad(set_to_none=True)
        loss_of(forward()).backward()

    def measure(fn, before=None):
        for _ in range(warmup):
            _timed(fn, dev, before)
        return statistics.median(_timed(fn, dev, before) for _ in range(reps))

    model.train()
    forward_train = measure(forward)
    backward_ms = measure(backward, before=fresh_loss)
    model.zero_grad(set_to_none=True)

    resident = sum(t.numel() * t.element_size() for t in [*model.parameters(), X, C])
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        step()
        torch.cuda.synchronize(dev)
        peak = torch.cuda.max_memory_allocated(dev)
    else:
        peak = resident + peak_cpu_memory(step)
    model.zero_grad(set_to_none=True)

    model.eval()
    with torch.no_grad():
        forward_eval = measure(forward)
    return dict(forward_train_ms=forward_train, backward_ms=backward_ms, peak_memory_mb=peak / MB,
                forward_eval_ms=forward_eval, extra_dims=code_width(k, embedding))


def profile_grid(ds, ks, n: int = 1024, batch: int = 32, warmup: int = 10, reps: int = 30,
                 device: str | torch.device | None = None, progress: bool = True,
                 embeddings=("OH", "BN"), seed: int = 0) -> pd.DataFrame:
    """profile_model for every (d, k, embedding); long table with columns d, k, embedding, metric, value."""
    ds, ks, embeddings = list(ds), list(ks), list(embeddings)
    for name, values in (("ds", ds), ("ks", ks), ("embeddings", embeddings)):
        if not values:
            raise ValueError(f"{name} is empty; expected at least one value")
    for d in ds:
        _checks.positive_int("ds", d)
    for k in ks:
        _checks.positive_int("ks", k, minimum=2)
    for e in embeddings:
        _checks.choice("embeddings", e, EMBEDDINGS)
    from tqdm.auto import tqdm

    rows = []
    grid = [(d, k, e) for d in ds for k in ks for e in embeddings]
    for d, k, e in tqdm(grid, desc="profile", disable=not progress):
        result = profile_model(d, k, e, n=n, batch=batch, warmup=warmup, reps=reps, device=device, seed=seed)
        rows += [(d, k, e, metric, float(result[metric])) for metric in METRICS]
    return pd.DataFrame(rows, columns=GRID_COLUMNS).astype({"d": "int64", "k": "int64", "value": "float64"})


def relative_gain(df: pd.DataFrame) -> pd.DataFrame:
    """BN's gain over OH per (d, k, metric): gain = OH value / BN value.

    gain > 1 means BN is faster (times) or lighter (memory, extra dims); e.g. the paper's 12.14x
    forward speedup at k = 1000. Columns: d, k, metric, gain.
    """
    if not isinstance(df, pd.DataFrame) or not set(GRID_COLUMNS) <= set(df.columns):
        raise ValueError(f"df must be a DataFrame with columns {GRID_COLUMNS} (from profile_grid)")
    wide = df.pivot_table(index=["d", "k", "metric"], columns="embedding", values="value", aggfunc="first")
    missing = {"OH", "BN"} - set(wide.columns)
    if missing:
        raise ValueError(f"df has no rows for embedding(s) {sorted(missing)}; relative_gain needs both 'OH' and 'BN'")
    wide = wide.dropna(subset=["OH", "BN"])
    out = (wide["OH"] / wide["BN"]).rename("gain").reset_index()
    out["gain"] = out["gain"].where(wide["BN"].to_numpy() != 0, math.nan)
    return out[["d", "k", "metric", "gain"]]
