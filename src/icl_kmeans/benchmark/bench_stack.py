"""Section 4 of `python -m icl_kmeans bench`: training throughput of stacked runs, in run-steps per second.

One-at-a-time is the step of an nn.Module run with torch.optim.Adam (sample, forward, backward,
clip-norm, Adam; no host sync), which is what train() did before it became a stack of one; stacked is
the step of the one training loop (icl_kmeans.training.Stack) for R runs of the same shape (different
seeds). Ratio = stacked run-steps/s over one-at-a-time run-steps/s: at R = 1 it is the cost of training
a single run as a stack of one. Each timed call does `inner` steps and, on CUDA, waits for them.
A second table prices the per-run dropout draws (each run's masks from its own generator) against one
shared stream for the whole folded batch (what a stack drew before), with the reference dropout 0.01.
"""

from __future__ import annotations

import os

import torch

from ..timing import time_round_robin

SHAPES = {  # name -> (d, k, n, batch)
    "quick": (4, 6, 128, 8),
    "quick-d32": (32, 10, 128, 32),
    "paper": (32, 10, 512, 32),
}
CPU_PAPER_R = (1, 4, 16)  # R = 64 at the paper size takes minutes per repeat on a laptop CPU: --full adds it


def _config(shape: str, seed: int, dropout: float = 0.0):
    from ..run_config import TrainConfig

    d, k, n, batch = SHAPES[shape]
    return TrainConfig(d=d, k=k, n=n, batch=batch, embedding="OH", regularizer="L2", tau=0.1, seed=seed,
                       dropout=dropout, bias=dropout > 0)


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def make_single(shape: str, dev: torch.device, inner: int):
    """`inner` steps of train()'s hot loop for one run."""
    from ..device import to_device
    from ..losses import smoothed_loss
    from ..run_config import STREAM_TRAIN, build_model, derived_seed, task_kwargs
    from ..tasks import sample_tasks

    config = _config(shape, 0)
    model = build_model(config).to(dev).train()
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    counter = iter(range(10**9))

    def run():
        for _ in range(inner):
            g = torch.Generator().manual_seed(derived_seed(config.seed, STREAM_TRAIN, next(counter)))
            tasks = sample_tasks(config.batch, generator=g, **task_kwargs(config))
            X, C = to_device(tasks.X, dev), to_device(tasks.C, dev)
            loss = smoothed_loss(X, model.centers(X, C), config.tau, config.regularizer).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
            opt.step()
            loss.detach() + 0 * norm
        _sync(dev)

    return run


def make_stacked(shape: str, R: int, dev: torch.device, inner: int, dropout: float = 0.0, shared_stream: bool = False):
    """`inner` steps of the training loop for R runs of the shape (seeds 0..R-1). shared_stream: the
    dropout masks of the whole stack from one generator (the draws per-run randomness replaced)."""
    from ..training import Stack, new_member

    threads = len(os.sched_getaffinity(0)) if dev.type == "cuda" else 0  # train_stack's default
    stack = Stack([new_member(_config(shape, s, dropout)) for s in range(R)], dev, torch.float32,
                  sampling_threads=threads)
    if shared_stream:
        shared = [torch.Generator().manual_seed(0)]
        stack.__class__ = type("SharedStreamStack", (Stack,), {"dropout_generators": property(lambda self: shared)})
    counter = iter(range(10**9))

    def run():
        for _ in range(inner):
            stack.step(next(counter))
        _sync(dev)

    return run


def dropout_streams(dev: torch.device, shape: str, R: int, repeats: int, warmup: int, inner: int) -> dict:
    """Per-run dropout draws against one shared stream, interleaved; prints and returns the ratio."""
    t = time_round_robin({"per-run": make_stacked(shape, R, dev, inner, 0.01),
                          "shared": make_stacked(shape, R, dev, inner, 0.01, shared_stream=True)}, repeats, warmup)
    ratio = t["shared"].median / t["per-run"].median
    d, k, n, batch = SHAPES[shape]
    print(f"  {dev.type:<6} {shape} (d={d} k={k} n={n} B={batch}) R={R}, dropout 0.01 + bias: per-run draws "
          f"{t['per-run'].median / inner:.2f} ms/step, one shared stream {t['shared'].median / inner:.2f} ms/step: "
          f"per-run at x{ratio:.2f} the speed of shared", flush=True)
    return dict(device=dev.type, shape=shape, R=R, per_run_ms=t["per-run"].median / inner,
                shared_ms=t["shared"].median / inner, ratio=ratio)


def main(devices: list[str], shapes: list[str], Rs: list[int], repeats: int, warmup: int, inner: int,
         full: bool = False) -> list[dict]:
    """Prints one row per (device, shape, R) and returns them."""
    rows = []
    print(f"4. training throughput, stacked vs one at a time (run-steps/s; {inner} steps per timed call, "
          f"median over {repeats} calls)")
    print(f"  {'device':<6} {'shape':<28} {'R':>3} {'ms/step':>9} {'run-steps/s':>12} {'stacked/one':>12}")
    for device in devices:
        dev = torch.device(device)
        if dev.type == "cuda":
            from ..device import deterministic_cuda

            deterministic_cuda()
        for shape in shapes:
            d, k, n, batch = SHAPES[shape]
            rs = [r for r in Rs if full or dev.type == "cuda" or shape != "paper" or r in CPU_PAPER_R]
            fns = {"one": make_single(shape, dev, inner)}
            fns.update({R: make_stacked(shape, R, dev, inner) for R in rs})
            t = time_round_robin(fns, repeats, warmup)
            one = inner / (t["one"].median / 1e3)
            label = f"{shape} (d={d} k={k} n={n} B={batch})"
            for key, timing in t.items():
                R = 1 if key == "one" else key
                rate = R * inner / (timing.median / 1e3)
                row = dict(device=device, shape=shape, R=R, stacked=key != "one", ms_per_step=timing.median / inner,
                           run_steps_per_s=rate, ratio=rate / one)
                rows.append(row)
                name, note = ("1", "one at a time") if key == "one" else (str(R), f"x{row['ratio']:.2f}")
                if key == 1:
                    note += " (a run alone)"
                print(f"  {device:<6} {label:<28} {name:>3} {row['ms_per_step']:>9.2f} {rate:>12.1f} {note:>14}",
                      flush=True)
            if dev.type == "cpu" and shape == "paper" and not full and set(Rs) - set(rs):
                print(f"  (cpu paper size: R in {sorted(set(Rs) - set(rs))} left out; --full adds them)")
    print("  dropout masks: per-run generators vs one shared stream (interleaved)")
    for device in devices:
        for shape in shapes:
            rows.append(dict(dropout_streams(torch.device(device), shape, 4, repeats, warmup, inner), kind="streams"))
    return rows
