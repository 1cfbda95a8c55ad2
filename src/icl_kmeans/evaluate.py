"""Multi-step clustering curves (science.md §9): the transformer against Lloyd's and EM from the same initial centers.

For t = 0..T (t = 0 is the initial centers C(0) = C) and each task, with centers C(t):
    objective      L(X, C(t)) = sum_i min_j ||x_i - c_j(t)||^2
    log_objective  log L(X, C(t))                  (the paper's y-axis: its mean over tasks)
    misclustering  fraction of points whose nearest center is not matched to their true component
Every curve is the mean over tasks. The transformer runs either re-embedded, C(t) = F(X, C(t-1)),
or naively (embed once, apply the layer T times); see ClusterTransformer.cluster.

A run whose centers become non-finite (the naive mode can blow up) is not an error: its objective is
inf or NaN for that task, the means propagate it, and the column `nonfinite` counts such tasks.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from . import _checks
from .attention import sqdist
from .baselines import EMPTY_POLICIES, em, lloyd
from .losses import misclustering_rate
from .model import MODES, ClusterTransformer
from .tasks import TaskBatch

BASELINES = ("lloyd", "em")
CURVE_COLUMNS = ["t", "log_objective", "objective", "misclustering", "nonfinite"]
TABLE_COLUMNS = ["method", "mode"] + CURVE_COLUMNS


def _check_tasks(tasks) -> None:
    if not isinstance(tasks, TaskBatch):
        raise ValueError(f"tasks must be a TaskBatch (from sample_tasks), got {type(tasks).__name__}")
    if len(tasks) < 1:
        raise ValueError("tasks is empty; expected at least one task")


def _check_model(model) -> None:
    if not isinstance(model, ClusterTransformer):
        raise ValueError(f"model must be a ClusterTransformer, got {type(model).__name__}")


def _per_task_metrics(X: torch.Tensor, centers: torch.Tensor, labels: torch.Tensor) -> np.ndarray:
    """(T+1, b, 3) array of [L, log L, misclustering] per step and task; non-finite centers give NaN/inf, not errors."""
    objective = sqdist(X.unsqueeze(0), centers).amin(-1).sum(-1)  # (T+1, b); same formula as kmeans_objective
    finite = torch.isfinite(centers).flatten(2).all(-1)  # (T+1, b)
    objective = torch.where(finite, objective, torch.full_like(objective, math.nan))
    mis = torch.full_like(objective, math.nan, dtype=torch.float64)
    for t in range(centers.shape[0]):
        ok = finite[t]
        if ok.any():
            mis[t, ok] = misclustering_rate(labels[ok], X[ok], centers[t, ok]).to(mis.device)
    objective = objective.double()
    return torch.stack([objective, objective.log(), mis], dim=-1).cpu().numpy()


def _curve_frame(per_task: np.ndarray) -> pd.DataFrame:
    """Means over tasks of the (T+1, B, 3) per-task metrics, one row per t."""
    L, logL, mis = per_task[..., 0], per_task[..., 1], per_task[..., 2]
    return pd.DataFrame({
        "t": np.arange(per_task.shape[0], dtype=np.int64),
        "log_objective": logL.mean(1),
        "objective": L.mean(1),
        "misclustering": mis.mean(1),
        "nonfinite": (~np.isfinite(L)).sum(1).astype(np.int64),
    })[CURVE_COLUMNS]


def _run_chunks(tasks: TaskBatch, batch_size: int, device, dtype, centers_fn) -> pd.DataFrame:
    """Applies centers_fn(X, C) -> (T, b, k, d) to chunks of tasks and averages the per-task metrics."""
    _checks.positive_int("batch_size", batch_size)
    parts = []
    for s in range(0, len(tasks), batch_size):
        X = tasks.X[s:s + batch_size].to(device=device, dtype=dtype)
        C = tasks.C[s:s + batch_size].to(device=device, dtype=dtype)
        centers = torch.cat([C.unsqueeze(0), centers_fn(X, C)])  # (T+1, b, k, d), t = 0 is C itself
        parts.append(_per_task_metrics(X, centers, tasks.labels[s:s + batch_size].to(device)))
    return _curve_frame(np.concatenate(parts, axis=1))


@torch.no_grad()
def multistep_curve(model: ClusterTransformer, tasks: TaskBatch, steps: int, mode: str = "reembed",
                    batch_size: int = 64) -> pd.DataFrame:
    """Mean over tasks of log L(X, C(t)), L(X, C(t)) and the misclustering rate for t = 0..steps.

    C(t) are the model's centers after t steps in `mode` ("reembed" or "naive"). The model runs in eval
    mode on its own device and dtype (tasks are moved/cast to them), `batch_size` tasks at a time.
    Columns: t, log_objective, objective, misclustering, nonfinite (number of tasks whose objective is not
    finite; their NaN/inf propagates into the means).
    """
    _check_model(model)
    _check_tasks(tasks)
    _checks.steps(steps)
    _checks.choice("mode", mode, MODES)
    p = next(model.parameters())
    was_training = model.training
    model.eval()
    try:
        return _run_chunks(tasks, batch_size, p.device, p.dtype, lambda X, C: model.cluster(X, C, steps, mode))
    finally:
        model.train(was_training)


@torch.no_grad()
def baseline_curve(tasks: TaskBatch, steps: int, method: str = "lloyd", batch_size: int = 64,
                   device: str | torch.device | None = None, dtype: torch.dtype | None = None,
                   empty: str = "keep", seed: int = 0) -> pd.DataFrame:
    """The same curve as multistep_curve for a classical baseline: "lloyd" or "em" (isotropic Gaussian
    mixture, shared variance; the means are the centers).

    empty: Lloyd's empty-cluster convention, "keep" (the old center) or "reseed" (a random point of
    the task, as the reference code; drawn from a generator seeded with `seed`, so reruns are exact).
    Runs on `device` (default: where the tasks are) in `dtype` (default: the tasks' dtype).
    """
    _check_tasks(tasks)
    _checks.steps(steps)
    _checks.choice("method", method, BASELINES)
    _checks.choice("empty", empty, EMPTY_POLICIES)
    device = tasks.X.device if device is None else torch.device(device)
    dtype = tasks.X.dtype if dtype is None else dtype
    if method == "em":
        return _run_chunks(tasks, batch_size, device, dtype, lambda X, C: em(X, C, steps))
    g = torch.Generator().manual_seed(int(seed)) if empty == "reseed" else None
    return _run_chunks(tasks, batch_size, device, dtype, lambda X, C: lloyd(X, C, steps, empty=empty, generator=g))


def multistep_table(models: dict[str, ClusterTransformer], tasks: TaskBatch, steps: int,
                    modes=("reembed", "naive"), baselines=("lloyd", "em"), batch_size: int = 64) -> pd.DataFrame:
    """All curves in one long table: one block per (model, mode) and per baseline.

    Columns: method (the dict key such as "OH:L2", or "lloyd"/"em"), mode ("reembed"/"naive"; "-" for
    baselines), then the columns of multistep_curve. Baselines run in the dtype of the first model
    (float32 tasks otherwise), on the tasks' device.
    """
    if not isinstance(models, dict):
        raise ValueError(f"models must be a dict name -> ClusterTransformer, got {type(models).__name__}")
    for name in models:
        if not isinstance(name, str) or name in BASELINES:
            raise ValueError(f"model name {name!r} is invalid; expected a string other than {BASELINES}")
    modes, baselines = tuple(modes), tuple(baselines)
    for m in modes:
        _checks.choice("modes", m, MODES)
    for b in baselines:
        _checks.choice("baselines", b, BASELINES)
    if not models and not baselines:
        raise ValueError("nothing to evaluate: models is empty and baselines=()")
    frames = []
    for name, model in models.items():
        for mode in modes:
            frames.append(multistep_curve(model, tasks, steps, mode, batch_size).assign(method=name, mode=mode))
    dtype = next(next(iter(models.values())).parameters()).dtype if models else None
    for b in baselines:
        frames.append(baseline_curve(tasks, steps, b, batch_size, dtype=dtype).assign(method=b, mode="-"))
    return pd.concat(frames, ignore_index=True)[TABLE_COLUMNS]
