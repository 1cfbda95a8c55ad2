"""Benchmark (`python -m icl_kmeans bench`): training step time, fused vs materialised attention, memory.

Prints one table with
1. the time of one training step (task sampling + forward + backward + Adam step) for the six
   configurations {OH, BN, NA} x {NE, L2}, median (and minimum) over timed repeats after warm-up,
   and the same step done the straightforward way (a Python loop sampling one task at a time,
   `torch.cdist` attention) for OH:NE. The variants of a section run interleaved, one call of
   each per round, so that their ratios hold even when other processes load the machine;
2. the speed ratio of the fused (memory-linear) attention against the materialised n x n one;
3. the peak resident memory of a fresh process that runs re-embedded clustering (2 steps, no grad)
   of one task with n = 65536 points, against the 4 GB target (an n x n float32 matrix is 17 GB);
4. training throughput of stacked runs (train_stack) against one run at a time, in run-steps/s, for
   R in {1, 4, 16, 64} at the quick and the paper size, on the CPU and on CUDA (bench_stack.py);
5. the paper-size training step on the CPU against the attention path before issue 18 (SDPA widths
   not padded to a multiple of 8; dropout through SDPA with a sink key and a gather / scatter of the
   dropped entries), interleaved, at d = 4, k = 6 and d = 32, k = 10, {OH, BN} x {NE, L2}, plain and
   as the reference training (dropout 0.01, bias).
Not a test: numbers depend on the machine. Threads default to all cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import time

import torch

from ..constants import EMBEDDINGS, REGULARIZERS
from ..timing import Timing, time_round_robin

CONFIGS = [(e, r) for e in EMBEDDINGS for r in REGULARIZERS]
TARGET_STEP_MS = 90.0
TARGET_PEAK_GB = 4.0


def loop_sample_tasks(batch: int, n: int, d: int, k: int, generator: torch.Generator, scale: float = 0.1):
    """The straightforward sampler: one task at a time in Python (normal family, isotropic, equal weights)."""
    Xs, Cs = [], []
    for _ in range(batch):
        loc = torch.rand(k, d, generator=generator, dtype=torch.float64)
        labels = torch.multinomial(torch.full((k,), 1.0 / k, dtype=torch.float64), n, replacement=True,
                                   generator=generator)
        X = loc[labels] + scale * torch.randn(n, d, generator=generator, dtype=torch.float64)
        lo, hi = X.min(0).values, X.max(0).values
        X = (X - lo) / (hi - lo)
        C = X[torch.randperm(n, generator=generator)[:k]]
        Xs.append(X.float())
        Cs.append(C.float())
    return torch.stack(Xs), torch.stack(Cs)


def _cdist_attention(params, mu, Z, Zk, gamma, fused=True, dropout=0.0, generators=None, kernel=None):
    """Distance attention written the obvious way: cdist, square, softmax, matmul (layer.attention's
    signature; the straightforward step's attention.Kernel.layer_attention)."""
    from ..layer import linear

    q, k, v = (linear(T, params, f"heads.{mu}.{P}") for T, P in ((Z, "Q"), (Zk, "K"), (Zk, "V")))
    g = gamma / math.sqrt(Z.shape[-1])
    return torch.softmax(-g * torch.cdist(q, k).pow(2), dim=-1) @ v


def make_step(embedding: str, regularizer: str, d: int, k: int, n: int, batch: int, tau: float = 0.1,
              fused: bool = True, straightforward: bool = False, dropout: float = 0.0, bias: bool = False,
              kernel=None):
    """One training step as train() does it: fresh tasks, forward, smoothed loss, backward, Adam. kernel: how
    the fused attention runs (attention.Kernel; None: the pipeline's)."""
    from ..attention import KERNEL
    from ..losses import smoothed_kmeans_loss
    from ..model import ClusterTransformer
    from ..tasks import sample_tasks

    kernel = kernel or KERNEL
    if straightforward:  # the layer calls the cdist attention: an argument of the model, no module patched
        kernel = dataclasses.replace(kernel, layer_attention=_cdist_attention)
    torch.manual_seed(0)
    model = ClusterTransformer(d, k, embedding, fused=fused, dropout=dropout, bias=bias, kernel=kernel).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    counter = iter(range(10**9))

    def one_step():
        g = torch.Generator().manual_seed(next(counter))
        if straightforward:
            X, C = loop_sample_tasks(batch, n, d, k, g)
        else:
            tasks = sample_tasks(batch, n, d, k, generator=g)
            X, C = tasks.X, tasks.C
        loss = smoothed_kmeans_loss(X, model(X, C), tau, regularizer).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return one_step


def make_sampler(d, k, n, batch, straightforward=False):
    from ..tasks import sample_tasks

    counter = iter(range(10**9))

    def one():
        g = torch.Generator().manual_seed(next(counter))
        if straightforward:
            loop_sample_tasks(batch, n, d, k, g)
        else:
            sample_tasks(batch, n, d, k, generator=g)

    return one


def make_forward(d, k, n, batch, fused: bool):
    """One eval-mode forward (no grad) of OH on a fixed batch."""
    from ..model import ClusterTransformer
    from ..tasks import sample_tasks

    torch.manual_seed(0)
    model = ClusterTransformer(d, k, "OH", fused=fused).eval()
    tasks = sample_tasks(batch, n, d, k, seed=0)

    def one():
        with torch.no_grad():
            model(tasks.X, tasks.C)

    return one


def _peak_rss_bytes() -> int:
    """Peak resident memory of this process image: VmHWM (reset by exec, unlike ru_maxrss, which a child
    started by fork + exec inherits from its parent); ru_maxrss where /proc is missing."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: kilobytes


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
        return True
    except OSError:
        return False


def _memory_child(n: int, d: int, k: int, steps: int, fused: bool, threads: int) -> None:
    """Runs in a fresh process: prints JSON with the peak RSS of the set-up and of the clustering."""
    torch.set_num_threads(threads)
    from ..model import ClusterTransformer
    from ..tasks import sample_tasks

    torch.manual_seed(0)
    model = ClusterTransformer(d, k, "OH", fused=fused).eval()
    tasks = sample_tasks(1, n, d, k, seed=0)
    setup = _peak_rss_bytes()
    reset = _reset_peak_rss()
    t = time.perf_counter()
    with torch.no_grad():
        out = model.cluster(tasks.X, tasks.C, steps=steps, mode="reembed")
    secs = time.perf_counter() - t
    print(json.dumps(dict(setup=setup, peak=_peak_rss_bytes(), reset=reset, seconds=secs,
                          finite=bool(torch.isfinite(out).all()))))


def memory_run(n: int, d: int, k: int, steps: int, fused: bool, threads: int, timeout: float = 1800) -> dict:
    cmd = [sys.executable, "-c",
           f"from icl_kmeans.benchmark.bench import _memory_child; _memory_child({n}, {d}, {k}, {steps}, {fused}, {threads})"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return dict(error=f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:] or ''}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def dropout_overhead(shape: dict, repeats: int, warmup: int, row, ratio, p: float = 0.01) -> None:
    """The cost of the reference training's attention dropout: training steps OH:L2 with and without it."""
    print(f"4. attention dropout {p:g} (training='reference') vs none, OH:L2, interleaved")
    t = time_round_robin({"train step OH:L2 dropout 0": make_step("OH", "L2", **shape),
                          f"train step OH:L2 dropout {p:g}": make_step("OH", "L2", dropout=p, **shape),
                          f"train step OH:L2 dropout {p:g} materialised": make_step("OH", "L2", fused=False,
                                                                                     dropout=p, **shape)},
                         repeats, warmup)
    base = t["train step OH:L2 dropout 0"]
    for name, ms in t.items():
        row(name, ms, "ms", f"slower than without dropout {ratio(ms, base)}" if ms is not base else "")


KERNEL_TARGETS = {(4, 6): 1.5, (32, 10): 1.25}  # issue 18: step speed-up over the path before it


def kernel_steps(n: int, batch: int, repeats: int, warmup: int, row, ratio) -> None:
    """Section 5: training steps now vs before issue 18, interleaved (one round robin per shape and
    training). With one torch thread the clock is the thread's CPU time (not inflated by other processes
    on the cores), else wall time."""
    from ..attention import BEFORE_ISSUE18

    one_thread = torch.get_num_threads() == 1
    clock = time.thread_time if one_thread else time.perf_counter
    print(f"5. CPU training step n={n} B={batch}: now vs the attention path before issue 18, interleaved, "
          f"{'CPU time of the thread' if one_thread else 'wall time'}")
    for (d, k), target in KERNEL_TARGETS.items():
        for reference in (False, True):
            fns = {}
            for e, r in [(e, r) for e in ("OH", "BN") for r in REGULARIZERS]:
                kw = dict(d=d, k=k, n=n, batch=batch, dropout=0.01 if reference else 0.0, bias=reference)
                fns[f"{e}:{r} before"] = make_step(e, r, **kw, kernel=BEFORE_ISSUE18)
                fns[f"{e}:{r} now"] = make_step(e, r, **kw)
            t = time_round_robin(fns, repeats, warmup, clock=clock)
            label = "reference (dropout 0.01, bias)" if reference else "plain"
            for name in fns:
                if name.endswith(" now"):
                    old_name = name.replace(" now", " before")
                    gain = t[old_name].median / t[name].median
                    row(f"d={d} k={k} {label[:9]} {name}", t[name], "ms",
                        f"faster {ratio(t[old_name], t[name])} (before {t[old_name].median:.1f} ms); "
                        f"target x{target}: {'met' if gain >= target else 'MISSED'}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="icl_kmeans bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats and a smaller memory task (n=16384)")
    p.add_argument("--d", type=int, default=32)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--repeats", type=int, default=None, help="timed repeats (default 20, quick 5)")
    p.add_argument("--warmup", type=int, default=None, help="untimed warm-up steps (default 5, quick 2)")
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="torch threads (default: all cores)")
    p.add_argument("--memory-n", type=int, default=None, help="points of the memory task (default 65536)")
    p.add_argument("--skip", nargs="*", default=[], choices=["steps", "straightforward", "fused", "memory", "dropout",
                                                             "stack", "kernels"],
                   help="parts to leave out")
    p.add_argument("--only", nargs="*", default=None, choices=["steps", "fused", "dropout", "memory", "stack",
                                                               "kernels"],
                   help="run only these parts")
    p.add_argument("--stack-r", nargs="+", type=int, default=[1, 4, 16, 64], help="stack sizes R of part 4")
    p.add_argument("--stack-shapes", nargs="+", default=["quick", "quick-d32", "paper"],
                   choices=["quick", "quick-d32", "paper"], help="shapes of part 4")
    p.add_argument("--stack-devices", nargs="+", default=None,
                   help="devices of part 4 (default: cpu, and cuda when available)")
    p.add_argument("--stack-inner", type=int, default=None, help="steps per timed call in part 4 (default 5, quick 2)")
    p.add_argument("--full", action="store_true", help="part 4 on the CPU also at R = 64 at the paper size")
    a = p.parse_args(argv)
    repeats = a.repeats or (5 if a.quick else 20)
    warmup = a.warmup or (2 if a.quick else 5)
    mem_n = a.memory_n or (16384 if a.quick else 65536)
    if a.only is not None:
        a.skip = [part for part in ("steps", "straightforward", "fused", "dropout", "memory", "stack", "kernels")
                  if part not in a.only]
    torch.set_num_threads(a.threads)
    shape = dict(d=a.d, k=a.k, n=a.n, batch=a.batch)
    load = os.getloadavg()[0]
    print(f"icl_kmeans bench: torch {torch.__version__}, {torch.get_num_threads()} threads on {os.cpu_count()} cores, "
          f"d={a.d} k={a.k} n={a.n} B={a.batch}, {repeats} timed repeats after {warmup} warm-up", flush=True)
    if load > 0.5:
        print(f"note: load average {load:.1f} before starting; other processes share the cores and inflate "
              "the times (the minimum column is the less affected one)", flush=True)
    print(f"  {'':<44} {'median':>10} {'min':>9}", flush=True)

    def row(what, value, unit, note=""):
        if isinstance(value, Timing):
            print(f"  {what:<44} {value.median:>10.2f} {value.min:>9.2f} {unit:<3} {note}", flush=True)
        else:
            print(f"  {what:<44} {value:>10.2f} {'':>9} {unit:<3} {note}", flush=True)

    def ratio(slow: Timing, fast: Timing) -> str:
        return f"x{slow.median / fast.median:.2f} (min x{slow.min / fast.min:.2f})"

    if "steps" not in a.skip:
        print("1. training step (sample + forward + backward + Adam), all variants interleaved")
        fns = {"sample_tasks": make_sampler(a.d, a.k, a.n, a.batch)}
        fns.update({f"step {e}:{r}": make_step(e, r, **shape) for e, r in CONFIGS})
        if "straightforward" not in a.skip:
            fns["straightforward sampler (per-task loop)"] = make_sampler(a.d, a.k, a.n, a.batch, straightforward=True)
            fns["straightforward step OH:NE (loop + cdist)"] = make_step("OH", "NE", straightforward=True, **shape)
        t = time_round_robin(fns, repeats, warmup)
        for name, ms in t.items():
            note = ""
            if name == "step OH:NE":
                note = f"target <= {TARGET_STEP_MS:.0f} ms: {'met' if ms.median <= TARGET_STEP_MS else 'MISSED'}"
            elif name.startswith("straightforward sampler"):
                note = f"sample_tasks faster {ratio(ms, t['sample_tasks'])}"
            elif name.startswith("straightforward step"):
                note = f"step OH:NE faster {ratio(ms, t['step OH:NE'])}"
            row(name, ms, "ms", note)
    if "fused" not in a.skip:
        print(f"2. fused (memory-linear) vs materialised attention, OH, n={a.n}, interleaved")
        t = time_round_robin({
            "train step OH:NE fused": make_step("OH", "NE", fused=True, **shape),
            "train step OH:NE materialised": make_step("OH", "NE", fused=False, **shape),
            "eval forward OH fused": make_forward(a.d, a.k, a.n, a.batch, fused=True),
            "eval forward OH materialised": make_forward(a.d, a.k, a.n, a.batch, fused=False),
        }, repeats, warmup)
        for name, ms in t.items():
            fused_name = name.replace("materialised", "fused")
            row(name, ms, "ms", f"fused faster {ratio(ms, t[fused_name])}" if name != fused_name else "")
    if "dropout" not in a.skip:
        dropout_overhead(shape, repeats, warmup, row, ratio)
    if "memory" not in a.skip:
        print(f"3. memory: re-embedded clustering, 2 steps, one task n={mem_n} d={a.d} k={a.k}, fresh process")
        dense_gb = mem_n * mem_n * 4 / 1e9
        r = memory_run(mem_n, a.d, a.k, 2, True, a.threads)
        if "error" in r:
            print(f"  fused run failed: {r['error']}")
        else:
            gb = r["peak"] / 1e9
            row("peak RSS of the set-up (torch, model, task)", r["setup"] / 1e9, "GB")
            what = "peak RSS during the clustering" if r["reset"] else "peak RSS of the process"
            row(f"{what} (fused)", gb, "GB",
                f"target < {TARGET_PEAK_GB:.0f} GB: {'met' if gb < TARGET_PEAK_GB else 'MISSED'}; "
                f"one dense n x n float32 = {dense_gb:.1f} GB")
            row("time of the clustering (fused)", r["seconds"], "s")
        small = min(8192, mem_n)
        print(f"   same at n={small}: fused vs materialised (an n x n float32 = {small * small * 4 / 1e9:.2f} GB)")
        for fused in (True, False):
            r = memory_run(small, a.d, a.k, 2, fused, a.threads)
            label = "fused" if fused else "materialised"
            if "error" in r:
                print(f"  {label} run failed: {r['error']}")
            else:
                row(f"peak RSS during the clustering ({label})", r["peak"] / 1e9, "GB", f"{r['seconds']:.1f} s")
    if "kernels" not in a.skip:
        kernel_steps(a.n, a.batch, repeats, warmup, row, ratio)
    if "stack" not in a.skip:
        from . import bench_stack

        devices = a.stack_devices or (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])
        bench_stack.main(devices, a.stack_shapes, a.stack_r, repeats=min(repeats, 5), warmup=1,
                         inner=a.stack_inner or (2 if a.quick else 5), full=a.full)
    return 0


if __name__ == "__main__":
    sys.exit(main())
