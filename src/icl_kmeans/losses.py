"""k-means objective, smoothed training losses (science.md §6) and the misclustering rate."""

from __future__ import annotations

import numpy as np
import torch

from . import _checks
from .attention import sqdist
from .constants import REGULARIZERS


def _unbatch(value: torch.Tensor, batched: bool) -> torch.Tensor:
    return value if batched else value[0]


def kmeans_objective(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """L(X, C) = sum_i min_j ||x_i - c_j||^2 (a sum over points), one value per task."""
    X, C, batched = _checks.points_and_centers(X, C)
    return _unbatch(sqdist(X, C).amin(-1).sum(-1), batched)


class _Sparsemax(torch.autograd.Function):
    """Euclidean projection onto the simplex along the last dim (Martins & Astudillo, 2016)."""

    @staticmethod
    def forward(ctx, z):
        z_sorted, _ = torch.sort(z, dim=-1, descending=True)
        rng = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
        cumsum = z_sorted.cumsum(-1) - 1
        support = rng * z_sorted > cumsum  # the first `size` sorted entries stay positive
        size = support.sum(-1, keepdim=True).clamp_min(1)  # >= 1 for finite z; NaN stays NaN
        threshold = cumsum.gather(-1, size - 1) / size.to(z.dtype)
        p = (z - threshold).clamp_min(0)
        ctx.save_for_backward(p)
        return p

    @staticmethod
    def backward(ctx, grad):
        (p,) = ctx.saved_tensors
        on = (p > 0).to(grad.dtype)
        mean = (grad * on).sum(-1, keepdim=True) / on.sum(-1, keepdim=True)
        return on * (grad - mean)


def sparsemax(z: torch.Tensor) -> torch.Tensor:
    """argmin_{p in simplex} ||p - z||^2 along the last dimension; exactly sparse."""
    return _Sparsemax.apply(z)


def smoothed_kmeans_loss(X: torch.Tensor, C: torch.Tensor, tau: float, regularizer: str = "L2") -> torch.Tensor:
    """L_tilde(X, C) = sum_i sum_j P(r_i / tau)_j r_ij with r_ij = ||x_i - c_j||^2, one value per task.

    NE: P = softmax(-r / tau); L2: P = sparsemax(-r / tau). Both are convex combinations of r_i,
    hence upper bounds of min_j r_ij; the L2 one is tight when the nearest center wins by >= tau.
    """
    _checks.positive_float("tau", tau)
    _checks.choice("regularizer", regularizer, REGULARIZERS)
    X, C, batched = _checks.points_and_centers(X, C)
    return _unbatch(smoothed_loss(X, C, tau, regularizer), batched)


def smoothed_loss(X: torch.Tensor, C: torch.Tensor, tau, regularizer: str) -> torch.Tensor:
    """smoothed_kmeans_loss without input checks (their finiteness test waits for the device): the
    training hot path. X (..., n, d), C (..., k, d); tau a number or a tensor broadcasting to (..., n, k)."""
    r = sqdist(X, C)
    P = torch.softmax(-r / tau, dim=-1) if regularizer == "NE" else sparsemax(-r / tau)
    return (P * r).sum((-1, -2))


def assign(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Index of the nearest center of each point, (B, n)."""
    return sqdist(X, C).argmin(-1)


def misclustering_rate(labels: torch.Tensor, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Fraction of points whose nearest center is not matched to their true component.

    Clusters are matched to components one-to-one by the assignment that maximises agreement
    (Hungarian algorithm on the k x k confusion matrix), so label permutations do not count.
    """
    from scipy.optimize import linear_sum_assignment  # here: scipy.optimize costs every training job 0.7 s to import

    X, C, batched = _checks.points_and_centers(X, C)
    labels = labels if batched else labels.unsqueeze(0)
    if labels.shape != X.shape[:2]:
        raise ValueError(f"labels has shape {tuple(labels.shape)}; expected {tuple(X.shape[:2])} (one label per point)")
    k = C.shape[1]
    pred = assign(X, C).cpu().numpy()
    true = labels.cpu().numpy()
    if true.min() < 0:
        raise ValueError("labels must be non-negative component indices")
    m = max(k, int(true.max()) + 1)
    rates = []
    for p, t in zip(pred, true):
        confusion = np.zeros((m, m), dtype=np.int64)
        np.add.at(confusion, (p, t), 1)
        rows, cols = linear_sum_assignment(confusion, maximize=True)
        rates.append(1.0 - confusion[rows, cols].sum() / len(p))
    return _unbatch(torch.tensor(rates, dtype=torch.float64), batched)
