"""Speed and memory of OH against BN (Fig 1 and Table 1).

For one model F_{d:k} and a batch of `batch` tasks of n points:
    forward_train_ms  forward pass in train mode with autograd recording (the training forward)
    backward_ms       backward pass of the smoothed L2 loss (tau = 0.1), mean over tasks
    forward_eval_ms   forward pass in eval mode under torch.no_grad (inference)
    peak_memory_mb    peak tensor memory of one forward + backward, MB = 2**20 bytes
    extra_dims        embedding width minus d: k (OH), ceil(log2 k) (BN), 0 (NA)
    other_cpus_busy   CPUs that other processes kept busy, on average, while the cell was measured (a
                      CPU profile on Linux; NaN on a GPU or elsewhere): 0 on an idle machine. A CPU time
                      taken beside other work is not a measurement of this code: OH and BN are interleaved,
                      but a busy machine still moved round 3's numbers by up to 7x (docs/science.md §10)
Times are the median over `reps` timed repetitions after `warmup` untimed ones (the median resists
interference from other processes better than the mean); CUDA is synchronised around every timing.

Peak memory counts every tensor alive at the worst moment, including the model and the input tasks:
- CUDA: torch.cuda.max_memory_allocated() after torch.cuda.reset_peak_memory_stats().
- CPU: there is no allocator peak counter, so one forward + backward runs under torch.profiler with
  profile_memory=True; the allocation events of its Chrome trace (+bytes on allocation, -bytes on
  free) are sorted by time and summed; the maximum of that running sum is the peak above what was alive
  before, to which the bytes already alive (parameters and inputs) are added. See peak_cpu_memory.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import torch

from . import _checks
from .embeddings import EMBEDDINGS, code_width
from .losses import smoothed_kmeans_loss
from .model import ClusterTransformer
from .profile_table import ATTENTIONS, BUSY, GRID_COLUMNS, METRICS, machine_load
from .tasks import sample_tasks
from .timing import time_round_robin
from .device import resolve_device

MB = 2 ** 20
PROC_STAT = Path("/proc/stat")
CPU_DEVICE_TYPE = 0  # "Device Type" of a CPU memory event in the profiler's Chrome trace (c10::DeviceType::CPU)


def peak_cpu_memory(fn: Callable[[], object]) -> int:
    """Peak bytes of CPU tensor memory allocated while fn() runs, above what was allocated before.

    Uses only torch.profiler's public interface: profile(profile_memory=True) records every allocation
    and free of the CPU allocator as a "[memory]" instant event of its Chrome trace
    (export_chrome_trace), with a signed byte count ("Bytes"); the running sum of those events in time
    order is the memory held by tensors created during fn, and its maximum is the peak (>= 0).
    """
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text())["traceEvents"]
    memory = [e for e in events if e.get("name") == "[memory]" and e["args"].get("Device Type") == CPU_DEVICE_TYPE]
    running = peak = 0
    for e in sorted(memory, key=lambda e: (float(e["ts"]), e["args"].get("Ev Idx", 0))):
        running += int(e["args"]["Bytes"])
        peak = max(peak, running)
    return peak


def _cpu_seconds_busy() -> float | None:
    """Seconds the whole machine's CPUs have been busy since boot (/proc/stat, Linux), else None."""
    import os

    try:
        fields = PROC_STAT.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    # cpu user nice system idle iowait irq softirq steal ...: every field but idle and iowait is busy time
    # (guest time is already inside user)
    ticks = [int(x) for x in fields[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo) and count, e.g. 'AMD EPYC 9B14 x 2'; '' where unknown. A
    profile resumed on another machine must not mix its cells with this one's (profile_grid)."""
    import os

    try:
        names = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                 if line.startswith("model name")]
    except OSError:
        names = []
    return f"{names[0]} x {os.cpu_count()}" if names else ""


def busy_snapshot() -> tuple:
    """Now: (the machine's busy CPU seconds, this process's CPU times, the wall clock), for other_cpus_busy."""
    import os
    import time

    return _cpu_seconds_busy(), os.times(), time.perf_counter()


def other_cpus_busy(since: tuple) -> float:
    """The mean number of CPUs that processes other than this one kept busy from `since` (busy_snapshot) to now.

    The machine's busy CPU time (/proc/stat) minus this process's own (os.times, all its threads), over
    the wall time: 0 on an idle machine, about 2 beside two single-threaded jobs. NaN where /proc/stat
    is missing (not Linux). Clock ticks are 10 ms, so an interval shorter than a few seconds reads coarsely."""
    (busy0, own0, t0), (busy1, own1, t1) = since, busy_snapshot()
    if busy0 is None or busy1 is None or t1 <= t0:
        return math.nan
    own = (own1.user - own0.user) + (own1.system - own0.system)
    return max(0.0, (busy1 - busy0 - own) / (t1 - t0))


def profile_model(d: int, k: int, embedding: str, n: int = 1024, batch: int = 32, warmup: int = 10, reps: int = 30,
                  device: str | torch.device | None = None, seed: int = 0, tau: float = 0.1,
                  regularizer: str = "L2", attentions=ATTENTIONS) -> dict[str, dict]:
    """Times and peak memory of F_{d:k} with `embedding` on `batch` normal tasks of n points (see module
    doc), for each attention implementation: {attention: {metric: value}}.

    device None or "auto": CUDA when available, else CPU. The models of all implementations have the
    same parameters (initialised from `seed`) and see the same tasks (sample_tasks(seed=seed)); their
    timings are interleaved (timing.time_round_robin), so their ratio holds on a loaded machine. Each
    round times a training forward and then the backward pass of the loss of that same forward.
    """
    _checks.positive_int("d", d)
    _checks.positive_int("k", k, minimum=2)
    _checks.choice("embedding", embedding, EMBEDDINGS)
    _checks.positive_int("n", n)
    _checks.positive_int("batch", batch)
    _checks.positive_int("warmup", warmup, minimum=0)
    _checks.positive_int("reps", reps)
    _checks.positive_int("seed", seed, minimum=0)
    attentions = list(attentions)
    for a in attentions:
        _checks.choice("attention", a, ATTENTIONS)
    if not attentions:
        raise ValueError("attentions is empty; expected some of " + ", ".join(ATTENTIONS))
    if n < k:
        raise ValueError(f"n={n} points is invalid for k={k} centers; expected n >= k")
    dev = resolve_device(None if device is None else str(device))
    start = busy_snapshot()

    models = {}
    for a in attentions:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            models[a] = ClusterTransformer(d, k, embedding, fused=a == "fused").to(dev)
    tasks = sample_tasks(batch, n=n, d=d, k=k, seed=seed)
    X, C = tasks.X.to(dev), tasks.C.to(dev)

    def forward(model):
        return lambda: model(X, C)

    outputs = {}

    def forward_kept(a):  # the timed training forward; its output feeds the timed backward of the same round
        def run():
            outputs[a] = models[a](X, C)
        return run

    def loss_of_kept(a):
        def setup():
            models[a].zero_grad(set_to_none=True)
            return smoothed_kmeans_loss(X, outputs.pop(a), tau, regularizer).mean()
        return setup

    def step(model):
        def run():
            model.zero_grad(set_to_none=True)
            smoothed_kmeans_loss(X, model(X, C), tau, regularizer).mean().backward()
        return run

    def no_grad(fn):
        def run():
            with torch.no_grad():
                return fn()
        return run

    for m in models.values():
        m.train()
    train_fns = {(stage, a): fn for a in models
                 for stage, fn in (("forward", forward_kept(a)), ("backward", lambda loss: loss.backward()))}
    train = time_round_robin(train_fns, reps, warmup, dev, setups={("backward", a): loss_of_kept(a) for a in models})
    out = {}
    for a, model in models.items():
        model.zero_grad(set_to_none=True)
        resident = sum(t.numel() * t.element_size() for t in [*model.parameters(), X, C])
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
            torch.cuda.reset_peak_memory_stats(dev)
            step(model)()
            torch.cuda.synchronize(dev)
            peak = torch.cuda.max_memory_allocated(dev)
        else:
            peak = resident + peak_cpu_memory(step(model))
        model.zero_grad(set_to_none=True)
        model.eval()
        out[a] = dict(forward_train_ms=train[("forward", a)].median, backward_ms=train[("backward", a)].median,
                      peak_memory_mb=peak / MB, extra_dims=code_width(k, embedding))
    forward_eval = time_round_robin({a: no_grad(forward(m)) for a, m in models.items()}, reps, warmup, dev)
    # on a GPU the host's other work barely moves the timings (and a shared node always has some)
    others = other_cpus_busy(start) if dev.type == "cpu" else math.nan
    for a in models:
        out[a]["forward_eval_ms"] = forward_eval[a].median
        out[a]["other_cpus_busy"] = others
    return out


def profile_grid(ds, ks, n: int = 1024, batch: int = 32, warmup: int = 10, reps: int = 30,
                 device: str | torch.device | None = None, progress: bool = True,
                 embeddings=("OH", "BN"), seed: int = 0, attentions=ATTENTIONS, resume=None) -> pd.DataFrame:
    """profile_model for every (d, k, embedding); long table with columns d, k, embedding, attention, metric,
    value (profile_table.GRID_COLUMNS).

    resume: a file (Parquet) where every finished (d, k, embedding) cell is written as soon as it is measured,
    and read back at the start: a stopped grid goes on from its last finished cell (at the paper's sizes a
    CPU takes hours over Fig 1). Its cells are kept only if measured with the same n, batch, warmup, reps,
    device (and CPU model), seed, attentions and metrics (stored beside them); the file is the caller's to
    delete when done."""
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

    how = json.dumps(dict(n=n, batch=batch, warmup=warmup, reps=reps, device=str(resolve_device(
        None if device is None else str(device))), seed=seed, attentions=list(attentions), metrics=list(METRICS),
        machine=cpu_model() if resolve_device(None if device is None else str(device)).type == "cpu" else ""),
        sort_keys=True)
    done = _read_resume(resume, how)
    grid = [(d, k, e) for d in ds for k in ks for e in embeddings]
    rows = [r for r in done.itertuples(index=False, name=None) if tuple(r[:3]) in set(grid)]
    finished = {tuple(r[:3]) for r in rows}
    if finished and progress:
        print(f"profile: {len(finished)} of {len(grid)} cells read back from {resume}", flush=True)
    for d, k, e in tqdm([c for c in grid if c not in finished], desc="profile", disable=not progress):
        result = profile_model(d, k, e, n=n, batch=batch, warmup=warmup, reps=reps, device=device, seed=seed,
                               attentions=attentions)
        others = next(iter(result.values()))["other_cpus_busy"]
        if progress and machine_load([others])[0] == BUSY:  # NaN (a GPU) is never busy
            print(f"profile: d={d} k={k} {e}: other processes kept {others:.2f} CPUs busy while it was timed; "
                  "its times are not this code's alone", flush=True)
        rows += [(d, k, e, a, metric, float(r[metric])) for a, r in result.items() for metric in METRICS]
        if resume is not None:
            _write_resume(resume, rows, how)
    order = {c: i for i, c in enumerate(grid)}
    rows.sort(key=lambda r: order[tuple(r[:3])])
    return pd.DataFrame(rows, columns=GRID_COLUMNS).astype({"d": "int64", "k": "int64", "value": "float64"})


def _read_resume(resume, how: str) -> pd.DataFrame:
    """The cells of a resume file measured the same way (`how`), else none."""
    if resume is None or not Path(resume).is_file():
        return pd.DataFrame(columns=GRID_COLUMNS)
    import pyarrow.parquet as pq

    table = pq.read_table(resume)
    if (table.schema.metadata or {}).get(b"how", b"").decode() != how:
        return pd.DataFrame(columns=GRID_COLUMNS)
    return table.to_pandas()[GRID_COLUMNS]


def _write_resume(resume, rows, how: str) -> None:
    import pyarrow as pa

    from .atomic import atomic_write_parquet

    table = pa.Table.from_pandas(pd.DataFrame(rows, columns=GRID_COLUMNS), preserve_index=False)
    atomic_write_parquet(resume, table.replace_schema_metadata({b"how": how.encode()}))
