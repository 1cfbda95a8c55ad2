"""Classical baselines (science.md §1): Lloyd's algorithm and EM for an isotropic Gaussian mixture."""

from __future__ import annotations

import math

import torch

from . import _checks
from .attention import sqdist

EMPTY_POLICIES = ("keep", "reseed")


def lloyd_step(X: torch.Tensor, C: torch.Tensor, empty: str = "keep", generator: torch.Generator | None = None):
    """Assign each point to its nearest center, move each center to the mean of its points.

    An empty cluster keeps its old center ("keep", the documented default) or, as in the
    reference implementation, is re-seeded with a random point of its task ("reseed"): the empty
    clusters of a task get distinct points (k distinct points are drawn per task, without replacement).
    """
    B, n, _ = X.shape
    k = C.shape[1]
    a = sqdist(X, C).argmin(-1)  # (B, n)
    onehot = torch.nn.functional.one_hot(a, k).to(X.dtype)  # (B, n, k)
    counts = onehot.sum(1)  # (B, k)
    means = onehot.transpose(1, 2) @ X / counts.clamp_min(1).unsqueeze(-1)
    empty_mask = (counts == 0).unsqueeze(-1)
    if empty == "keep":
        fill = C
    else:
        pick = torch.rand(B, n, generator=generator).argsort(-1)[:, :k].to(X.device)  # k distinct per task
        fill = torch.gather(X, 1, pick.unsqueeze(-1).expand(B, k, X.shape[-1]))
    return torch.where(empty_mask, fill, means), counts


def lloyd(X: torch.Tensor, C: torch.Tensor, steps: int, empty: str = "keep",
          generator: torch.Generator | None = None) -> torch.Tensor:
    """Centers after each of `steps` Lloyd iterations, shape (steps, *C.shape)."""
    _checks.steps(steps)
    _checks.choice("empty", empty, EMPTY_POLICIES)
    X, C, batched = _checks.points_and_centers(X, C)
    if empty == "reseed" and generator is None:
        raise ValueError("empty='reseed' needs a torch.Generator (generator=...) so that reruns are exact")
    out = []
    for _ in range(steps):
        C, _ = lloyd_step(X, C, empty, generator)
        out.append(C)
    out = torch.stack(out)
    return out if batched else out[:, 0]


def has_empty_cluster(X: torch.Tensor, C: torch.Tensor, steps: int) -> torch.Tensor:
    """(B,) True where Lloyd's leaves some cluster empty within `steps` iterations."""
    X, C, _ = _checks.points_and_centers(X, C)
    empty = torch.zeros(X.shape[0], dtype=torch.bool, device=X.device)
    for _ in range(steps):
        C, counts = lloyd_step(X, C)
        empty |= (counts == 0).any(-1)
    return empty


def em(X: torch.Tensor, C: torch.Tensor, steps: int) -> torch.Tensor:
    """Means after each of `steps` EM iterations for an isotropic Gaussian mixture with one shared variance.

    Starts from means C, equal weights and sigma^2 = L(X, C) / (n d); soft responsibilities
    r_ij ∝ pi_j exp(-||x_i - mu_j||^2 / (2 sigma^2)); M-step updates pi, mu and sigma^2.
    """
    _checks.steps(steps)
    X, C, batched = _checks.points_and_centers(X, C)
    B, n, d = X.shape
    k = C.shape[1]
    mu = C
    log_pi = torch.full((B, k), -math.log(k), dtype=X.dtype, device=X.device)
    var = (sqdist(X, C).amin(-1).sum(-1) / (n * d)).clamp_min(1e-12)  # (B,)
    out = []
    for _ in range(steps):
        D = sqdist(X, mu)  # (B, n, k)
        resp = torch.softmax(log_pi.unsqueeze(1) - D / (2 * var.view(B, 1, 1)), dim=-1)
        Nk = resp.sum(1)  # (B, k)
        mu_new = resp.transpose(1, 2) @ X / Nk.clamp_min(1e-12).unsqueeze(-1)
        mu = torch.where((Nk > 1e-12).unsqueeze(-1), mu_new, mu)  # a component with no mass keeps its mean
        log_pi = torch.log(Nk.clamp_min(1e-300) / n)
        var = ((resp * sqdist(X, mu)).sum((1, 2)) / (n * d)).clamp_min(1e-12)
        out.append(mu)
    out = torch.stack(out)
    return out if batched else out[:, 0]
