"""Training (science.md §7, Algorithm 1): Adam on the smoothed k-means loss, fresh tasks every step.

A run is a pure function of its TrainConfig: model initialisation, the tasks of step s and the
validation set come from seeds derived from (seed, stream, step), so a run resumed from a
checkpoint draws exactly the tasks the uninterrupted run would have drawn.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from . import _checks
from .atomic import atomic_write, durable_replace
from .baselines import lloyd
from .embeddings import EMBEDDINGS
from .losses import REGULARIZERS, kmeans_objective, smoothed_loss
from .model import ClusterTransformer
from .tasks import FAMILIES, TaskBatch, sample_tasks

CHECKPOINT_FORMAT = 1
CORRUPT_SUFFIX = ".corrupt"  # an unreadable checkpoint is moved to <name>.corrupt (not an artifact)
STREAM_INIT, STREAM_TRAIN, STREAM_VAL = 0, 1, 2
METRIC_COLUMNS = ("step", "train_loss", "rel_val_loss", "lr", "wall_time")


@dataclass
class TrainConfig:
    """Everything that determines a training run (device aside: it is recorded, not part of the identity)."""

    d: int = 4
    k: int = 6
    embedding: str = "OH"
    regularizer: str = "L2"
    tau: float = 0.1
    n: int = 512
    batch: int = 32
    lr: float = 0.01
    steps: int = 10000
    seed: int = 0
    family: str = "normal"
    isotropic: bool = True
    equal_weights: bool = True
    scale: float = 0.1
    eval_every: int = 50
    val_batches: int = 10
    clip_grad: float | None = None
    plateau: bool = False
    gamma: float = 1.0
    bias: bool = False
    dropout: float = 0.0

    def __post_init__(self):
        for name in ("d", "n", "batch", "steps", "eval_every", "val_batches"):
            _checks.positive_int(name, getattr(self, name))
        _checks.positive_int("k", self.k, minimum=2)
        _checks.positive_int("seed", self.seed, minimum=0)
        if self.n < self.k:
            raise ValueError(f"n={self.n} points is invalid for k={self.k} centers; expected n >= k")
        _checks.choice("embedding", self.embedding, EMBEDDINGS)
        _checks.choice("regularizer", self.regularizer, REGULARIZERS)
        _checks.choice("family", self.family, FAMILIES)
        for name in ("tau", "lr", "scale", "gamma"):
            _checks.positive_float(name, getattr(self, name))
        if self.clip_grad is not None:
            _checks.positive_float("clip_grad", self.clip_grad)
        if isinstance(self.dropout, bool) or not isinstance(self.dropout, (int, float)) or not 0 <= self.dropout < 1:
            raise ValueError(f"dropout={self.dropout!r} is invalid; expected 0 <= dropout < 1")
        for name in ("isotropic", "equal_weights", "plateau", "bias"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r} is invalid; expected True or False")

    @classmethod
    def from_dict(cls, values: dict) -> "TrainConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown training option(s) {unknown}; allowed: {sorted(known)}")
        return cls(**values)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


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
    extra: dict = field(default_factory=dict)


def derived_seed(seed: int, stream: int, step: int = 0) -> int:
    """Independent 63-bit seeds per (run seed, stream, step)."""
    return int(np.random.SeedSequence([seed, stream, step]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def resolve_device(device: str | None) -> torch.device:
    """'auto' (or None): CUDA when available, else CPU; 'cuda' fails clearly when there is none."""
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was asked for but torch.cuda.is_available() is False; use 'cpu' or 'auto'")
    return dev


def cuda_rng_state(device: torch.device | str | None = None) -> torch.Tensor | None:
    """The CUDA generator state (a CPU ByteTensor) of `device` once CUDA is in use; None on the CPU."""
    dev = torch.device(device) if device is not None else None
    if (dev is not None and dev.type != "cuda") or not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return None
    return torch.cuda.get_rng_state(dev or "cuda")


def deterministic_cuda() -> None:
    """On CUDA, ask for deterministic kernels: cuBLAS with a fixed workspace (CUBLAS_WORKSPACE_CONFIG,
    effective when set before the process's first cuBLAS call, which is the case when training is the
    first CUDA work of the process, as in the pipeline's jobs and the CLI) and
    torch.use_deterministic_algorithms(warn_only=True), which makes torch warn, not fail, where an op
    (e.g. a scaled_dot_product_attention backward kernel) has no deterministic version. A process-wide
    setting; what holds is measured by .ci/gpu-check (two identical runs compared)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def to_device(t: torch.Tensor, dev: torch.device) -> torch.Tensor:
    """CPU tensor to dev without a host sync: pinned and non-blocking on CUDA."""
    return t.pin_memory().to(dev, non_blocking=True) if dev.type == "cuda" else t


def task_kwargs(config: TrainConfig) -> dict:
    return dict(n=config.n, d=config.d, k=config.k, family=config.family, isotropic=config.isotropic,
                equal_weights=config.equal_weights, scale=config.scale)


def validation_tasks(config: TrainConfig) -> TaskBatch:
    """The run's fixed validation set: val_batches x batch held-out tasks of the training distribution."""
    g = torch.Generator().manual_seed(derived_seed(config.seed, STREAM_VAL))
    return sample_tasks(config.val_batches * config.batch, generator=g, **task_kwargs(config))


def build_model(config: TrainConfig) -> ClusterTransformer:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derived_seed(config.seed, STREAM_INIT))
        return ClusterTransformer(config.d, config.k, config.embedding, gamma=config.gamma, bias=config.bias,
                                  dropout=config.dropout)


@torch.no_grad()
def relative_loss(model: ClusterTransformer, tasks: TaskBatch, chunk: int = 64) -> float:
    """mean over tasks of L(X, F(X, C)) / L(X, C_lloyd1): below 1, one layer beats one Lloyd step."""
    was_training = model.training
    model.eval()
    dev = next(model.parameters()).device
    ratios = []
    try:
        for s in range(0, len(tasks), chunk):
            X, C = tasks.X[s:s + chunk].to(dev), tasks.C[s:s + chunk].to(dev)
            C_out = model(X, C)
            if not torch.isfinite(C_out).all():  # an exploding model: the run will be reported as diverged
                return math.nan
            ratios.append(kmeans_objective(X, C_out) / kmeans_objective(X, lloyd(X, C, 1)[0]))
    finally:
        model.train(was_training)
    return torch.cat(ratios).mean().item()


def atomic_save(obj, path: Path) -> None:
    """torch.save, crash-safe (see icl_kmeans.atomic)."""
    atomic_write(path, lambda tmp: torch.save(obj, tmp))


class CorruptCheckpointError(ValueError):
    """A checkpoint file that torch cannot read (truncated by a crash, or damaged)."""


def load_checkpoint(path, map_location="cpu") -> dict:
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=False)
    except Exception as err:  # torch raises RuntimeError, EOFError, UnpicklingError... depending on the damage
        raise CorruptCheckpointError(f"{path}: unreadable checkpoint ({type(err).__name__}: {err}); it is "
                                     "truncated or damaged: delete it to retrain") from err
    if not isinstance(ckpt, dict):
        raise CorruptCheckpointError(f"{path}: not a checkpoint (a {type(ckpt).__name__}); delete it to retrain")
    if ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: checkpoint format {ckpt.get('format')!r} is not {CHECKPOINT_FORMAT}")
    return ckpt


def model_from_checkpoint(path, device="cpu") -> ClusterTransformer:
    ckpt = load_checkpoint(path)
    model = build_model(TrainConfig.from_dict(ckpt["config"]))
    model.load_state_dict(ckpt["model"])
    return model.to(device).eval()


def _metrics_frame(rows: list[dict]):
    import pandas as pd

    return pd.DataFrame(rows, columns=list(METRIC_COLUMNS)).astype(
        {"step": "int64", "train_loss": "float64", "rel_val_loss": "float64", "lr": "float64", "wall_time": "float64"})


def train(config: TrainConfig | dict, checkpoint: str | os.PathLike | None = None, val_tasks: TaskBatch | None = None,
          device: str | None = "cpu", checkpoint_every: int | None = None, progress: bool = False,
          max_steps: int | None = None) -> TrainResult:
    """Trains F_{d:k} per science.md §7 and returns its metrics, one row per step.

    checkpoint: file written atomically every `checkpoint_every` steps (default eval_every) and at the
    end; if it exists, training resumes from it (its config must match); if it is unreadable (truncated),
    it is moved to `<checkpoint>.corrupt`, a warning names it, and training starts over. A non-finite loss stops the
    run: the last finite state is saved and status is "diverged". `max_steps` stops early (for tests
    of interruption); the checkpoint then resumes to the identical end state.
    """
    config = TrainConfig.from_dict(config) if isinstance(config, dict) else config
    dev = resolve_device(device)
    if dev.type == "cuda":
        deterministic_cuda()
    checkpoint = Path(checkpoint) if checkpoint is not None else None
    checkpoint_every = checkpoint_every or config.eval_every
    _checks.positive_int("checkpoint_every", checkpoint_every)

    model = build_model(config).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=5) if config.plateau else None
    val = (val_tasks if val_tasks is not None else validation_tasks(config)).to(dev)
    rows: list[dict] = []
    start_step, wall_before, status, diverged_step, resumed_from = 0, 0.0, "ok", None, None
    rng_state = cuda_rng = None
    status_before = None

    ckpt = None
    if checkpoint is not None and checkpoint.exists():
        try:
            # read onto the CPU: load_state_dict moves model and optimizer state to the device, and the RNG
            # states must stay CPU ByteTensors (torch.set_rng_state refuses anything else)
            ckpt = load_checkpoint(checkpoint, map_location="cpu")
        except CorruptCheckpointError as err:  # e.g. a disk that lost the tail: start over, keep the evidence
            aside = checkpoint.with_name(checkpoint.name + CORRUPT_SUFFIX)
            durable_replace(checkpoint, aside)
            print(f"warning: {err}; moved it to {aside} and training from scratch", file=sys.stderr)
    if ckpt is not None:
        if ckpt["config"] != config.to_dict():
            diff = {k: (ckpt["config"].get(k), v) for k, v in config.to_dict().items() if ckpt["config"].get(k) != v}
            raise ValueError(f"{checkpoint} belongs to another configuration (checkpoint vs asked: {diff}); "
                             "delete it or use another path")
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        if sched is not None:
            sched.load_state_dict(ckpt["scheduler"])
        rows, start_step, wall_before = list(ckpt["metrics"]), ckpt["step"], ckpt["wall_time"]
        status, diverged_step, rng_state = ckpt["status"], ckpt["diverged_step"], ckpt["rng_state"]
        cuda_rng, resumed_from, status_before = ckpt.get("cuda_rng_state"), start_step, status

    def save(step: int, wall: float) -> None:
        if checkpoint is None:
            return
        atomic_save({"format": CHECKPOINT_FORMAT, "config": config.to_dict(), "step": step,
                     "model": {k: v.cpu() for k, v in model.state_dict().items()},
                     "optimizer": opt.state_dict(), "scheduler": sched.state_dict() if sched else None,
                     "metrics": rows, "wall_time": wall, "status": status, "diverged_step": diverged_step,
                     "rng_state": torch.get_rng_state(), "cuda_rng_state": cuda_rng_state(dev)}, checkpoint)

    end = config.steps if max_steps is None else min(config.steps, max_steps)
    t0 = time.perf_counter() - wall_before
    bar = None
    if progress and status == "ok" and start_step < end:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.steps, initial=start_step, file=sys.stderr, mininterval=1.0,
                   desc=f"{config.embedding}:{config.regularizer} d={config.d} k={config.k} tau={config.tau:g} "
                   f"lr={config.lr:g} n={config.n} seed={config.seed}")

    # No host sync per step: losses stay on the device and are read (and checked for finiteness) once
    # per boundary (validation, checkpoint, end). A non-finite loss found there sends the run back to
    # the snapshot of the previous boundary, from which it replays (deterministically: same tasks, same
    # random state) up to the first non-finite step, and stops with the state before it, as a per-step
    # check would: diverged_step = that step + 1, the state of `diverged_step - 1` steps. A step whose
    # gradient is not finite (the loss may still be) counts as non-finite: its update would be.
    pending: list[tuple] = []  # (step, loss on the device, lr, wall time) since the last boundary

    def flush() -> int | None:
        """Moves the pending losses into rows; returns the first step whose loss is not finite."""
        values = torch.stack([p[1] for p in pending]).tolist() if pending else []
        for (s, _, lr, wall), v in zip(pending, values):
            if not math.isfinite(v):
                pending.clear()
                return s - 1
            rows.append(dict(step=s, train_loss=v, rel_val_loss=math.nan, lr=lr, wall_time=wall))
            if bar is not None:
                bar.update(1)
        pending.clear()
        return None

    def snapshot() -> tuple:
        return (step, copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict()),
                copy.deepcopy(sched.state_dict()) if sched else None, torch.get_rng_state(), cuda_rng_state(dev),
                len(rows))

    def restore(snap: tuple) -> int:
        s, model_state, opt_state, sched_state, cpu_rng, dev_rng, n_rows = snap
        model.load_state_dict(model_state)
        opt.load_state_dict(copy.deepcopy(opt_state))
        if sched is not None:
            sched.load_state_dict(sched_state)
        torch.set_rng_state(cpu_rng)
        if dev_rng is not None:
            torch.cuda.set_rng_state(dev_rng, dev)
        del rows[n_rows:]
        return s

    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        torch.manual_seed(derived_seed(config.seed, STREAM_INIT, 1))  # dropout, if enabled
        if rng_state is not None:
            torch.set_rng_state(rng_state.cpu())
        if cuda_rng is not None and dev.type == "cuda":
            torch.cuda.set_rng_state(cuda_rng.cpu(), dev)
        if start_step == 0 and not rows:
            rows.append(dict(step=0, train_loss=math.nan, rel_val_loss=relative_loss(model, val),
                             lr=config.lr, wall_time=time.perf_counter() - t0))
        model.train()
        step, stop_at = start_step, None
        last = snapshot() if status == "ok" and step < end else None
        while status == "ok" and step < end:
            if step == stop_at:  # replayed up to the first non-finite step
                bad = flush()
                if bad is None:
                    status, diverged_step = "diverged", step + 1
                    break
                step, stop_at = restore(last), bad
                continue
            g = torch.Generator().manual_seed(derived_seed(config.seed, STREAM_TRAIN, step))
            tasks = sample_tasks(config.batch, generator=g, **task_kwargs(config))
            X, C = to_device(tasks.X, dev), to_device(tasks.C, dev)
            loss = smoothed_loss(X, model.centers(X, C), config.tau, config.regularizer).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if config.clip_grad is not None:
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.clip_grad)
            else:
                norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
            opt.step()
            step += 1
            # loss + 0 * norm: the loss, or nan when the gradient is not finite (then so is the update)
            pending.append((step, loss.detach() + 0 * norm, opt.param_groups[0]["lr"], time.perf_counter() - t0))
            is_eval = step % config.eval_every == 0 or step == config.steps
            is_ckpt = step % checkpoint_every == 0 and step < end
            if not (is_eval or is_ckpt or step == end):
                continue
            bad = flush()
            if bad is not None:
                step, stop_at = restore(last), bad
                continue
            if is_eval:
                rel = relative_loss(model, val)
                rows[-1]["rel_val_loss"] = rel
                if not math.isfinite(rel):  # the model now maps validation tasks to non-finite centers:
                    # replay to the step before this update and stop there (diverged_step = this step)
                    step, stop_at = restore(last), step - 1
                    continue
                elif sched is not None:
                    sched.step(rel)
                    rows[-1]["lr"] = opt.param_groups[0]["lr"]
                if bar is not None and not math.isnan(rel):
                    bar.set_postfix(loss=f"{rows[-1]['train_loss']:.4g}", rel_val=f"{rel:.4g}", refresh=False)
            if status == "ok" and is_ckpt:
                save(step, time.perf_counter() - t0)
            if status == "ok" and step < end:
                last = snapshot()
        if resumed_from is not None and step == start_step and status == status_before:
            wall = wall_before  # nothing to do (e.g. a finished run restored): the checkpoint stays as it is
        else:
            wall = time.perf_counter() - t0
            save(step, wall)
    if bar is not None:
        bar.close()
    if status == "diverged":
        print(f"training diverged at step {diverged_step}: non-finite loss; kept the state of step {step}",
              file=sys.stderr)
    return TrainResult(config=config, model=model, metrics=_metrics_frame(rows), status=status, steps_done=step,
                       diverged_step=diverged_step, wall_time=wall, device=str(dev), resumed_from=resumed_from)

