"""Wall-clock timing of callables: the one timing helper of profiling (Fig 1, Table 1) and the benchmark.

Variants are timed interleaved (one call of each per round, after untimed warm-up rounds), so that a
load that comes and goes affects all of them alike and their ratios hold on a shared machine. CUDA is
synchronised around every timed call. Each variant may have an untimed set-up whose result is passed
to it (e.g. a fresh loss for a timed backward pass). The clock is wall time by default; with one torch
thread on the CPU, time.thread_time (the CPU time of the calling thread) can be passed instead: it does
not count the time other processes hold the core, so loaded machines give steadier numbers.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch


class Timing(tuple):
    """(median, minimum) milliseconds over the timed repeats."""

    def __new__(cls, times_ms):
        ms = sorted(times_ms)
        if not ms:
            raise ValueError("no timed repeats; expected at least one")
        return super().__new__(cls, (statistics.median(ms), ms[0]))

    median = property(lambda self: self[0])
    min = property(lambda self: self[1])


def time_ms(fn: Callable, device: torch.device | str | None = None, setup: Callable | None = None,
            clock: Callable[[], float] = time.perf_counter) -> float:
    """Milliseconds of one call of fn (fn(setup()) when setup is given; setup is not timed)."""
    args = (setup(),) if setup is not None else ()
    cuda = device is not None and torch.device(device).type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
    t0 = clock()
    fn(*args)
    if cuda:
        torch.cuda.synchronize(device)
    return 1000 * (clock() - t0)


def time_round_robin(fns: dict, repeats: int, warmup: int, device=None,
                     setups: dict | None = None, clock: Callable[[], float] = time.perf_counter) -> dict:
    """Times each callable `repeats` times, interleaved (one call of each per round, in the order of fns)
    after `warmup` untimed rounds; setups[name], if given, prepares each call of fns[name] untimed (it
    may use what an earlier callable of the same round left, e.g. the output of a timed forward pass)."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats={repeats!r}, warmup={warmup!r} are invalid; expected repeats >= 1, warmup >= 0")
    setups = setups or {}
    times = {name: [] for name in fns}
    for round_ in range(warmup + repeats):
        for name, fn in fns.items():
            ms = time_ms(fn, device, setups.get(name), clock)
            if round_ >= warmup:
                times[name].append(ms)
    return {name: Timing(ts) for name, ts in times.items()}
