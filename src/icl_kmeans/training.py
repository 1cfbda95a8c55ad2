"""Training (science.md §7, Algorithm 1): Adam on the smoothed k-means loss, fresh tasks every step,
for R >= 1 runs that share their tensor shapes, trained together.

There is one loop: `train(config)` is `train_stack([config])[0]`. A run is a pure function of its
TrainConfig (run_config.py), whatever shares its stack and however large the stack is: its initial
weights, the training tasks of every step, its validation tasks and its dropout masks all come from
generators of its own seed (dropout: one CPU generator per run, whose state its checkpoint keeps;
attention.soft_distance_attention draws each run's masks from it alone, on every device). Adam with the
run's own lr, moments and step count, its own ReduceLROnPlateau, gradient clipping and divergence status.
A member of a stack equals the run alone up to floating-point rounding (batched matmuls sum in another
order), which tests/test_stacked.py bounds at 1e-6 relative in float64 over 200 steps, with bias and
dropout on the fused path. The forward is layer.py's; the per-run loss and Adam are training_math.py's.

Shared by a stack (checked): d, k, embedding, n, batch, steps, eval_every, val_batches, gamma, bias,
dropout. Free per run: seed, tau, regularizer, lr, family and shift (isotropic, equal_weights,
scale), clip_grad, plateau.

- Divergence. A run whose training loss or gradient is not finite at step s (counted from 0) is
  masked out on the device from that step on: it keeps the state after s steps (steps_done = s,
  diverged_step = s + 1). A run whose validation outputs are not finite after update s keeps the
  state from before that update (steps_done = s - 1, diverged_step = s). Either way it leaves the
  stack at that boundary, its checkpoint says "diverged" and a resume does not train it further.
- Host syncs: one per validation interval (losses gathered, finiteness checked), none per step.
- Checkpoints (one file per run, written atomically) at every validation boundary and at the end;
  training resumes from them. An unreadable one is moved to `<name>.corrupt` and the run starts over.
  Members whose checkpoints stand at different steps (a job killed between two members' writes) are
  brought to a common step first, in sub-stacks, then trained together.
- wall_time (metrics, TrainResult) is the stack's wall clock since train_stack started (plus the
  member's time before a resume): a run's own time where it trains alone.
"""

from __future__ import annotations

import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import torch

from . import _checks, training_math as tm
from .baselines import lloyd
from .checkpoint import CHECKPOINT_FORMAT, atomic_save, read_or_set_aside
from .device import deterministic_cuda, resolve_device, to_device
from .layer import forward
from .model import ClusterTransformer
from .run_config import (STREAM_DROPOUT, STREAM_TRAIN, TrainConfig, build_model, derived_seed, task_kwargs,
                         validation_tasks)
from .tasks import TaskBatch, sample_tasks

METRIC_COLUMNS = ("step", "train_loss", "rel_val_loss", "lr", "wall_time")
SHARED = ("d", "k", "embedding", "n", "batch", "steps", "eval_every", "val_batches", "gamma", "bias", "dropout")


@dataclass
class TrainResult:
    config: TrainConfig
    model: ClusterTransformer
    metrics: "object"  # pandas.DataFrame with METRIC_COLUMNS
    status: str  # "ok" or "diverged"
    steps_done: int
    diverged_step: int | None = None
    wall_time: float = 0.0
    device: str = "cpu"
    resumed_from: int | None = None


@dataclass
class Member:
    """One run's state between stack steps: CPU tensors of its own, and its checkpoint file."""

    config: TrainConfig
    checkpoint: Path | None
    val: TaskBatch
    params: dict
    exp_avg: dict
    exp_avg_sq: dict
    opt: torch.optim.Adam  # a stand-in holding lr (and param_groups) for the scheduler
    sched: object
    rng: torch.Generator  # the run's dropout masks
    adam_step: int = 0
    rows: list = field(default_factory=list)
    step: int = 0
    status: str = "ok"
    diverged_step: int | None = None
    wall_before: float = 0.0
    resumed_from: int | None = None
    wall_saved: float | None = None  # the wall time its checkpoint was last written with

    @property
    def lr(self) -> float:
        return self.opt.param_groups[0]["lr"]


def _check_stack(configs: list) -> list[TrainConfig]:
    if not isinstance(configs, (list, tuple)) or not configs:
        raise ValueError(f"configs={configs!r} is invalid; expected a non-empty list of TrainConfig or dict")
    configs = [TrainConfig.from_dict(c) if isinstance(c, dict) else c for c in configs]
    for i, c in enumerate(configs):
        if not isinstance(c, TrainConfig):
            raise ValueError(f"configs[{i}] is a {type(c).__name__}; expected a TrainConfig or a dict")
        for key in SHARED:
            if getattr(c, key) != getattr(configs[0], key):
                raise ValueError(f"configs[{i}].{key}={getattr(c, key)!r} differs from configs[0].{key}="
                                 f"{getattr(configs[0], key)!r}; a stack shares {', '.join(SHARED)}")
    return configs


def new_member(config: TrainConfig, checkpoint=None, val: TaskBatch | None = None,
               dtype=torch.float32) -> Member:
    """A run at step 0 (its initial weights, validation set and dropout generator), or resumed from its
    checkpoint when that exists."""
    model = build_model(config).to(dtype)
    params = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=config.lr)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=5) if config.plateau else None
    m = Member(config=config, checkpoint=Path(checkpoint) if checkpoint is not None else None,
               val=val if val is not None else validation_tasks(config), params=params,
               exp_avg={n: torch.zeros_like(p) for n, p in params.items()},
               exp_avg_sq={n: torch.zeros_like(p) for n, p in params.items()}, opt=opt, sched=sched,
               rng=torch.Generator().manual_seed(derived_seed(config.seed, *STREAM_DROPOUT)))
    ckpt = read_or_set_aside(m.checkpoint)
    if ckpt is not None:
        _restore(m, ckpt, dtype)
    return m


def _restore(m: Member, ckpt: dict, dtype) -> None:
    if ckpt["config"] != m.config.to_dict():
        diff = {k: (ckpt["config"].get(k), v) for k, v in m.config.to_dict().items() if ckpt["config"].get(k) != v}
        raise ValueError(f"{m.checkpoint} belongs to another configuration (checkpoint vs asked: {diff}); "
                         "delete it or use another path")
    if "adam" not in ckpt:
        raise ValueError(f"{m.checkpoint} is a finished run's final checkpoint (no optimizer state, "
                         f"checkpoint.FINAL_KEYS); a run resumes from its {m.checkpoint.name}.resume file")
    adam = ckpt["adam"]
    m.params = {n: ckpt["model"][n].to(dtype) for n in m.params}
    m.exp_avg = {n: adam["exp_avg"][n].to(dtype) for n in m.params}
    m.exp_avg_sq = {n: adam["exp_avg_sq"][n].to(dtype) for n in m.params}
    m.adam_step, m.opt.param_groups[0]["lr"] = adam["step"], ckpt["lr"]
    if m.sched is not None:
        m.sched.load_state_dict(ckpt["scheduler"])
    m.rows, m.step, m.wall_before = list(ckpt["metrics"]), ckpt["step"], ckpt["wall_time"]
    m.status, m.diverged_step, m.resumed_from = ckpt["status"], ckpt["diverged_step"], ckpt["step"]
    m.rng.set_state(ckpt["rng_state"])


def _save(m: Member, wall: float) -> None:
    """The run's checkpoint: `model` is a ClusterTransformer state_dict (model_from_checkpoint reads it)."""
    if m.checkpoint is None:
        return
    atomic_save({"format": CHECKPOINT_FORMAT, "config": m.config.to_dict(), "step": m.step,
                   "model": dict(m.params), "lr": m.lr,
                   "adam": {"step": m.adam_step, "exp_avg": dict(m.exp_avg), "exp_avg_sq": dict(m.exp_avg_sq)},
                   "scheduler": m.sched.state_dict() if m.sched else None, "metrics": m.rows, "wall_time": wall,
                   "status": m.status, "diverged_step": m.diverged_step, "rng_state": m.rng.get_state()},
                  m.checkpoint)
    m.wall_saved = wall


class Stack:
    """The device tensors of the members being trained together (index i = members[i])."""

    STATE = ("params", "exp_avg", "exp_avg_sq")

    def __init__(self, members: list[Member], dev: torch.device, dtype, sampling_threads: int = 0):
        self.members, self.dev, self.dtype = members, dev, dtype
        self.pool = ThreadPoolExecutor(sampling_threads) if sampling_threads > 0 else None
        self.prefetcher = ThreadPoolExecutor(1) if self.pool else None
        self.ahead = self.before = None
        stack = lambda f: {n: torch.stack([f(m)[n] for m in members]).to(dev, dtype) for n in members[0].params}  # noqa: E731
        self.params = {n: p.requires_grad_() for n, p in stack(lambda m: m.params).items()}
        self.exp_avg, self.exp_avg_sq = stack(lambda m: m.exp_avg), stack(lambda m: m.exp_avg_sq)
        vec = lambda xs, dt: torch.tensor(xs, dtype=dt, device=dev)  # noqa: E731
        cfgs = [m.config for m in members]
        self.adam_step = vec([float(m.adam_step) for m in members], torch.float64)
        self.lr = vec([m.lr for m in members], torch.float64)
        self.tau = vec([c.tau for c in cfgs], dtype)
        ne = [c.regularizer == "NE" for c in cfgs]
        self.is_ne = True if all(ne) else None if not any(ne) else vec(ne, torch.bool)
        self.clip = vec([c.clip_grad or math.inf for c in cfgs], dtype)
        self.has_clip = vec([c.clip_grad is not None for c in cfgs], torch.bool)
        self.any_clip = any(c.clip_grad is not None for c in cfgs)
        self.active = torch.ones(len(members), dtype=torch.bool, device=dev)
        self.val_X = torch.stack([m.val.X for m in members]).to(dev, dtype)
        self.val_C = torch.stack([m.val.C for m in members]).to(dev, dtype)
        with torch.no_grad():  # the one-Lloyd-step baseline of the relative loss: fixed per run
            self.val_base = torch.stack([tm.objective(X, lloyd(X, C, 1)[0]) for X, C in zip(self.val_X, self.val_C)])

    @property
    def dropout_generators(self) -> list[torch.Generator]:
        return [m.rng for m in self.members]

    def keep(self, idx: list[int]) -> None:
        """Drops the members not in idx (finished or diverged): they cost nothing from here on."""
        sel = torch.tensor(idx, dtype=torch.long, device=self.dev)
        take = lambda t: t.index_select(0, sel)  # noqa: E731
        self.members = [self.members[i] for i in idx]
        self.params = {n: take(p.detach()).requires_grad_() for n, p in self.params.items()}
        self.exp_avg = {n: take(t) for n, t in self.exp_avg.items()}
        self.exp_avg_sq = {n: take(t) for n, t in self.exp_avg_sq.items()}
        for name in ("adam_step", "lr", "tau", "clip", "has_clip", "active", "val_X", "val_C", "val_base"):
            setattr(self, name, take(getattr(self, name)))
        if isinstance(self.is_ne, torch.Tensor):
            self.is_ne = take(self.is_ne)

    def _sample(self, members: list[Member], step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The training tasks of step `step` of every member (each from its own seed), stacked on the CPU."""
        def one(m):
            g = torch.Generator().manual_seed(derived_seed(m.config.seed, STREAM_TRAIN, step))
            return sample_tasks(m.config.batch, dtype=self.dtype, generator=g, **task_kwargs(m.config))

        tasks = list(self.pool.map(one, members)) if self.pool else [one(m) for m in members]
        X, C = torch.stack([t.X for t in tasks]), torch.stack([t.C for t in tasks])
        return (X.pin_memory(), C.pin_memory()) if self.dev.type == "cuda" else (X, C)

    def _tasks(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """This step's tasks; with a sampling pool, those of the next step are drawn meanwhile (they do
        not depend on the model), so that the device need not wait for the CPU."""
        ahead, self.ahead = self.ahead, None
        if ahead is not None and ahead[0] == step and ahead[1] == [id(m) for m in self.members]:
            X, C = ahead[2].result()
        else:
            X, C = self._sample(self.members, step)
        if self.pool is not None:
            members = list(self.members)
            self.ahead = (step + 1, [id(m) for m in members], self.prefetcher.submit(self._sample, members, step + 1))
        return to_device(X, self.dev), to_device(C, self.dev)

    def step(self, step: int, keep_before: bool = False) -> torch.Tensor:
        """One training step of every member; returns the (R,) batch losses (on the device, no sync).
        keep_before: first keep a copy of the state this update replaces (see rollback)."""
        cfg0 = self.members[0].config
        X, C = self._tasks(step)
        if keep_before:
            self.before = ({key: {n: t.detach().clone() for n, t in getattr(self, key).items()} for key in self.STATE},
                           self.adam_step.clone(), [m.rng.get_state() for m in self.members])
        out = forward(self.params, X, C, cfg0.embedding, cfg0.gamma, dropout=cfg0.dropout,
                      generators=self.dropout_generators if cfg0.dropout else None)
        loss = tm.smoothed_loss(X, out, self.tau, self.is_ne)
        names = list(self.params)
        grads = torch.autograd.grad(loss.sum(), [self.params[n] for n in names])
        norm = tm.grad_norm(grads)
        if self.any_clip:
            tm.clip_(list(grads), norm, self.clip, self.has_clip)
        checked = loss.detach() + 0 * norm  # the loss, or nan when the gradient is not finite (then so is the update)
        self.active &= torch.isfinite(checked)
        with torch.no_grad():
            tm.adam_([self.params[n] for n in names], grads, [self.exp_avg[n] for n in names],
                     [self.exp_avg_sq[n] for n in names], self.adam_step, self.lr, self.active)
        return checked

    @torch.no_grad()
    def relative_loss(self, chunk: int = 64) -> list[float]:
        """The relative validation loss of every member (eval mode: no dropout): the mean over its
        validation tasks of L(X, F(X, C)) / L(X, Lloyd1(X, C)); nan where an output is not finite."""
        cfg0 = self.members[0].config
        ratios, finite = [], torch.ones(len(self.members), dtype=torch.bool, device=self.dev)
        for s in range(0, self.val_X.shape[1], chunk):
            X, C = self.val_X[:, s:s + chunk], self.val_C[:, s:s + chunk]
            out = forward(self.params, X, C, cfg0.embedding, cfg0.gamma)
            finite &= torch.isfinite(out).flatten(1).all(1)
            ratios.append(tm.objective(X, out) / self.val_base[:, s:s + chunk])
        rel = torch.where(finite, torch.cat(ratios, dim=1).mean(1), torch.full_like(finite, math.nan, dtype=self.dtype))
        return rel.tolist()

    def close(self) -> None:
        for pool in (self.prefetcher, self.pool):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def write_back(self) -> None:
        """Copies every member's state from the device into its Member (CPU tensors of its own)."""
        own = lambda t, i: t[i].detach().clone().cpu()  # noqa: E731
        steps = self.adam_step.tolist()
        for i, m in enumerate(self.members):
            for key in self.STATE:
                setattr(m, key, {n: own(t, i) for n, t in getattr(self, key).items()})
            m.adam_step = int(steps[i])

    def rollback(self, i: int) -> None:
        """Member i's state as it was before the last step taken with keep_before (after write_back)."""
        state, adam_step, rng_states = self.before
        m = self.members[i]
        for key in self.STATE:
            setattr(m, key, {n: t[i].clone().cpu() for n, t in state[key].items()})
        m.adam_step = int(adam_step[i].item())
        m.rng.set_state(rng_states[i])


def _advance(members: list[Member], until: int, dev, dtype, clock, bar, sampling_threads: int) -> None:
    """Trains members (all at the same step, status ok) up to step `until`, checkpointing each boundary."""
    st = Stack(members, dev, dtype, sampling_threads)
    try:
        _train_to(st, until, clock, bar)
    finally:
        st.close()


def _train_to(st: Stack, until: int, clock, bar) -> None:
    cfg = st.members[0].config
    fresh = [i for i, m in enumerate(st.members) if m.step == 0 and not m.rows]
    if fresh:  # the step-0 row: the untrained model's relative validation loss
        rel = st.relative_loss()
        for i in fresh:
            m = st.members[i]
            m.rows.append(dict(step=0, train_loss=math.nan, rel_val_loss=rel[i], lr=m.config.lr, wall_time=clock(m)))
    step, pending = st.members[0].step, []
    while st.members and step < until:
        is_eval = (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps
        pending.append((st.step(step, keep_before=is_eval), time.perf_counter()))
        step += 1
        if not (is_eval or step == until):
            continue
        why = dict.fromkeys(_record_losses(st, pending, step, clock), "loss")
        if bar is not None:
            bar.update(len(st.members) * len(pending))
        pending = []
        st.write_back()
        if is_eval:
            why.update(dict.fromkeys(_validate(st, step), "validation output"))
        for i, m in enumerate(st.members):
            if i in why:
                print(f"training diverged at step {m.diverged_step}: non-finite {why[i]}; kept the state of step "
                      f"{m.step} ({m.checkpoint or m.config.seed})", file=sys.stderr)
            _save(m, clock(m))
        ok = [i for i, m in enumerate(st.members) if m.status == "ok"]
        if len(ok) < len(st.members):
            st.keep(ok)


def _record_losses(st: Stack, pending: list, step: int, clock) -> list[int]:
    """The interval's losses into each member's rows (the one host sync of the interval); a member
    with a non-finite one is diverged at the first (masked on the device from there on). Returns the
    members that diverged here."""
    losses = torch.stack([loss for loss, _ in pending]).tolist()
    first, diverged = step - len(pending), []
    for i, m in enumerate(st.members):
        for t, (values, (_, now)) in enumerate(zip(losses, pending)):
            if not math.isfinite(values[i]):  # the state of step first + t
                m.status, m.diverged_step, m.step = "diverged", first + t + 1, first + t
                diverged.append(i)
                break
            m.rows.append(dict(step=first + t + 1, train_loss=values[i], rel_val_loss=math.nan, lr=m.lr,
                               wall_time=now - clock.start + m.wall_before))
        else:
            m.step = step
    return diverged


def _validate(st: Stack, step: int) -> list[int]:
    """Relative validation loss of the members still ok, the plateau schedulers; a member whose
    validation outputs are not finite goes back to the state before this update (st.rollback)."""
    rel, diverged = st.relative_loss(), []
    for i, m in enumerate(st.members):
        if m.status != "ok":
            continue
        if not math.isfinite(rel[i]):
            st.rollback(i)
            m.rows.pop()
            m.status, m.diverged_step, m.step = "diverged", step, step - 1
            diverged.append(i)
            continue
        m.rows[-1]["rel_val_loss"] = rel[i]
        if m.sched is not None:
            m.sched.step(rel[i])
            st.lr[i] = m.lr
            m.rows[-1]["lr"] = m.lr
    return diverged


class _Clock:
    def __init__(self):
        self.start = time.perf_counter()

    def __call__(self, m: Member) -> float:
        return time.perf_counter() - self.start + m.wall_before


def _check_arguments(configs, checkpoints, val_tasks, dtype, max_steps) -> list[TrainConfig]:
    configs = _check_stack(configs)
    for name, value in (("checkpoints", checkpoints), ("val_tasks", val_tasks)):
        if value is not None and len(value) != len(configs):
            raise ValueError(f"{name} has {len(value)} entries for {len(configs)} configs; expected one per config")
    paths = [str(Path(p).resolve()) for p in checkpoints or [] if p is not None]
    if len(set(paths)) != len(paths):
        raise ValueError(f"checkpoints={checkpoints!r} repeats a path; each run needs its own file")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype={dtype!r} is invalid; expected torch.float32 or torch.float64")
    if max_steps is not None:
        _checks.positive_int("max_steps", max_steps)
    return configs


def train_stack(configs: list, checkpoints: list | None = None, val_tasks: list | None = None,
                device: str | None = "cpu", progress: bool = False, max_steps: int | None = None,
                dtype: torch.dtype = torch.float32, sampling_threads: int | None = None) -> list[TrainResult]:
    """Trains R runs together (see the module docstring); returns one TrainResult per config, in order.

    checkpoints: one path per config (or None): written at every validation boundary and at the end,
    resumed from when present. val_tasks: one TaskBatch per config (default: each run's
    validation_tasks). max_steps stops early (tests of interruption); the checkpoints then resume to
    the identical end state. dtype: of parameters, optimizer state and tasks (float64 for the
    equivalence tests). sampling_threads: threads that draw the members' tasks (on the CPU, by their
    own generators, so the tasks do not depend on it) while the device trains on the previous step's;
    default: the CPU's cores on CUDA, 0 (in the training thread, no look-ahead) on the CPU.
    """
    configs = _check_arguments(configs, checkpoints, val_tasks, dtype, max_steps)
    R = len(configs)
    dev = resolve_device(device)
    if dev.type == "cuda":
        deterministic_cuda()
    if sampling_threads is None:
        sampling_threads = len(os.sched_getaffinity(0)) if dev.type == "cuda" else 0
    _checks.positive_int("sampling_threads", sampling_threads, minimum=0)
    members = [new_member(c, (checkpoints or [None] * R)[i], (val_tasks or [None] * R)[i], dtype)
               for i, c in enumerate(configs)]
    end = configs[0].steps if max_steps is None else min(configs[0].steps, max_steps)
    clock, bar = _Clock(), _progress_bar(members, end) if progress else None
    while True:
        live = [m for m in members if m.status == "ok" and m.step < end]
        if not live:
            break
        low = min(m.step for m in live)
        ahead = sorted({m.step for m in live if m.step > low})
        _advance([m for m in live if m.step == low], ahead[0] if ahead else end, dev, dtype, clock, bar,
                 sampling_threads)
    for m in members:  # a member that had nothing left to train still gets its final checkpoint written
        if m.checkpoint is not None and not m.checkpoint.exists():
            _save(m, clock(m))
    if bar is not None:
        bar.close()
    return [_result(m, dev, dtype, clock) for m in members]


def _progress_bar(members: list[Member], end: int):
    todo = sum(max(0, end - m.step) for m in members if m.status == "ok")
    if not todo:
        return None
    from tqdm.auto import tqdm

    c = members[0].config
    what = (f"{c.embedding}:{c.regularizer} d={c.d} k={c.k} tau={c.tau:g} lr={c.lr:g} n={c.n} seed={c.seed}"
            if len(members) == 1 else f"stack of {len(members)}: {c.embedding} d={c.d} k={c.k} n={c.n}")
    return tqdm(total=todo, file=sys.stderr, mininterval=1.0, unit="run-step", desc=what)


def _result(m: Member, dev, dtype, clock) -> TrainResult:
    model = build_model(m.config).to(dtype)
    model.load_state_dict(m.params)
    if m.wall_saved is not None:  # what its checkpoint says
        wall = m.wall_saved
    else:
        wall = m.wall_before if m.resumed_from is not None and m.step == m.resumed_from else clock(m)
    return TrainResult(config=m.config, model=model.to(dev), metrics=_metrics_frame(m.rows), status=m.status,
                         steps_done=m.step, diverged_step=m.diverged_step, wall_time=wall, device=str(dev),
                         resumed_from=m.resumed_from)


def _metrics_frame(rows: list[dict]):
    import pandas as pd

    return pd.DataFrame(rows, columns=list(METRIC_COLUMNS)).astype(
        {"step": "int64", "train_loss": "float64", "rel_val_loss": "float64", "lr": "float64", "wall_time": "float64"})


def train(config: TrainConfig | dict, checkpoint: str | os.PathLike | None = None, val_tasks: TaskBatch | None = None,
          device: str | None = "cpu", progress: bool = False, max_steps: int | None = None) -> TrainResult:
    """Trains F_{d:k} per science.md §7 and returns its metrics, one row per step: a stack of one run
    (the module docstring says what a checkpoint holds and how divergence, resume and corrupt
    checkpoints are handled).

    checkpoint: written atomically at every validation and at the end; if it exists, training resumes
    from it (its config must match). `max_steps` stops early (tests of interruption); the checkpoint
    then resumes to the identical end state. Parameters and tasks are in torch's default dtype.
    """
    config = TrainConfig.from_dict(config) if isinstance(config, dict) else config
    dtype = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
    return train_stack([config], checkpoints=[checkpoint], val_tasks=None if val_tasks is None else [val_tasks],
                       device=device, progress=progress, max_steps=max_steps, dtype=dtype)[0]
