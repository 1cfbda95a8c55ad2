"""Loss and gap surfaces on a 2-D slice of parameter space (Fig 3 and Fig 5; Li et al., 2018).

Around trained parameters theta, with two random directions d1, d2:
    f(alpha, beta) = mean over tasks of L_tilde(X, F_{theta + alpha d1 + beta d2}(X, C))
Filter normalisation (Li et al., 2018, "Visualizing the loss landscape of neural nets"): every
direction is drawn from N(0, I) and each of its filters is rescaled to the norm of the matching
filter of theta. A filter of a linear map W (d_out x d_in, acting on token rows) is one row of W,
the weights of one output unit. One-dimensional parameters (biases, when the model has them) get a
zero direction, as in Li et al.'s "ignore biasbn" setting, so they stay at their trained values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import torch

from . import _checks
from .losses import REGULARIZERS, kmeans_objective, smoothed_kmeans_loss
from .model import ClusterTransformer
from .tasks import TaskBatch


def _check(model, tasks) -> None:
    if not isinstance(model, ClusterTransformer):
        raise ValueError(f"model must be a ClusterTransformer, got {type(model).__name__}")
    if not isinstance(tasks, TaskBatch):
        raise ValueError(f"tasks must be a TaskBatch (from sample_tasks), got {type(tasks).__name__}")
    if len(tasks) < 1:
        raise ValueError("tasks is empty; expected at least one task")


def _filter_normalized(p: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """A N(0, I) direction shaped like p whose rows have the norms of p's rows (zero for 1-D p)."""
    if p.dim() <= 1:
        return torch.zeros_like(p)
    d = torch.randn(p.shape, generator=g, dtype=p.dtype).to(p.device)  # drawn on CPU: same on every device
    rows, d_rows = p.detach().reshape(p.shape[0], -1), d.reshape(p.shape[0], -1)
    scale = rows.norm(dim=1, keepdim=True) / d_rows.norm(dim=1, keepdim=True).clamp_min(1e-12)
    return (d_rows * scale).reshape(p.shape)


def random_directions(model: ClusterTransformer, seed: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Two filter-normalised random directions (lists aligned with model.parameters()).

    Deterministic in `seed` (a CPU torch.Generator draws both, d1 first, parameter by parameter).
    """
    if not isinstance(model, ClusterTransformer):
        raise ValueError(f"model must be a ClusterTransformer, got {type(model).__name__}")
    _checks.positive_int("seed", seed, minimum=0)
    g = torch.Generator().manual_seed(seed)
    params = list(model.parameters())
    d1 = [_filter_normalized(p, g) for p in params]
    d2 = [_filter_normalized(p, g) for p in params]
    return d1, d2


def grid(resolution: int, span: float) -> np.ndarray:
    """`resolution` equally spaced values in [-span, span]; an odd resolution contains exactly 0."""
    _checks.positive_int("resolution", resolution, minimum=2)
    _checks.positive_float("span", span)
    values = np.linspace(-span, span, resolution)
    if resolution % 2 == 1:
        values[resolution // 2] = 0.0
    return values


@torch.no_grad()
def _scan(model: ClusterTransformer, tasks: TaskBatch, per_task: Callable, resolution: int, span: float,
          seed: int, batch_size: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """per_task(X, centers) -> (b,) evaluated at every (alpha, beta) of the grid; rows alpha-major.

    The parameters are overwritten in place and restored bit for bit afterwards (also on errors).
    """
    _checks.positive_int("batch_size", batch_size)
    values = grid(resolution, span)
    d1, d2 = random_directions(model, seed)
    params = list(model.parameters())
    theta = [p.detach().clone() for p in params]
    dev, dtype = params[0].device, params[0].dtype
    chunks = [(tasks.X[s:s + batch_size].to(dev, dtype), tasks.C[s:s + batch_size].to(dev, dtype))
              for s in range(0, len(tasks), batch_size)]
    was_training = model.training
    model.eval()
    coords, results = [], []
    try:
        for a in values:
            for b in values:
                for p, t0, u, v in zip(params, theta, d1, d2):
                    p.copy_(t0 + float(a) * u + float(b) * v)
                out = []
                for X, C in chunks:
                    centers = model(X, C)
                    if torch.isfinite(centers).all():
                        out.append(per_task(X, centers).double().cpu())
                    else:  # a far-away parameter can blow the centers up: record NaN, do not fail
                        out.append(torch.full((X.shape[0],), float("nan"), dtype=torch.float64))
                coords.append((a, b))
                results.append(torch.cat(out).numpy())
    finally:
        for p, t0 in zip(params, theta):
            p.copy_(t0)
        model.train(was_training)
    return np.array(coords), results


def loss_surface(model: ClusterTransformer, tasks: TaskBatch, tau: float, regularizer: str,
                 resolution: int = 21, span: float = 1.0, seed: int = 0, batch_size: int = 64) -> pd.DataFrame:
    """Mean over tasks of the smoothed loss L_tilde(X, F_{theta + alpha d1 + beta d2}(X, C)) on the grid.

    alpha, beta take `resolution` values in [-span, span]. Columns: alpha, beta, loss (NaN where the
    perturbed model's centers are not finite). The model's parameters are unchanged afterwards.
    """
    _check(model, tasks)
    _checks.positive_float("tau", tau)
    _checks.choice("regularizer", regularizer, REGULARIZERS)
    coords, per_task = _scan(model, tasks, lambda X, Cn: smoothed_kmeans_loss(X, Cn, tau, regularizer),
                             resolution, span, seed, batch_size)
    return pd.DataFrame({"alpha": coords[:, 0], "beta": coords[:, 1], "loss": [v.mean() for v in per_task]})


def gap_surface(model: ClusterTransformer, tasks: TaskBatch, tau: float = 0.1, regularizer: str = "L2",
                resolution: int = 21, span: float = 1.0, seed: int = 0, batch_size: int = 64) -> pd.DataFrame:
    """The bound's gap L_tilde(X, C') - L(X, C') at the centers C' = F_{theta + alpha d1 + beta d2}(X, C).

    gap_mean is the mean over tasks, gap_max the largest over tasks (the paper's gap constant, science.md §6,
    is the largest value over tasks and centers; the paper reports <= 0.5 for normal, > 5 for cauchy).
    Both L and L_tilde are sums over the n points of a task. The gap is >= 0 since L_tilde bounds L.
    """
    _check(model, tasks)
    _checks.positive_float("tau", tau)
    _checks.choice("regularizer", regularizer, REGULARIZERS)

    def gap(X, Cn):  # in float64: a small difference of two large sums
        X, Cn = X.double(), Cn.double()
        return smoothed_kmeans_loss(X, Cn, tau, regularizer) - kmeans_objective(X, Cn)

    coords, per_task = _scan(model, tasks, gap, resolution, span, seed, batch_size)
    return pd.DataFrame({"alpha": coords[:, 0], "beta": coords[:, 1],
                         "gap_mean": [v.mean() for v in per_task], "gap_max": [v.max() for v in per_task]})
