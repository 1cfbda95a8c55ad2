"""The training math of R runs stacked along a leading run dimension (the forward is layer.py's): loss
(science.md §6), gradient norm and clipping, Adam. Parameters are named and shaped as in layer.py.
"""

from __future__ import annotations

import torch

from .attention import sqdist
from . import losses

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8  # torch.optim.Adam defaults, which train() uses


def smoothed_loss(X: torch.Tensor, C: torch.Tensor, tau: torch.Tensor, is_ne) -> torch.Tensor:
    """Batch loss of each run (R,): mean over tasks of losses.smoothed_loss (science.md §6) with the run's tau.

    tau: (R,); is_ne: True (all NE), None (all L2) or an (R,) bool tensor selecting NE over L2 per run.
    """
    tau = tau.view(-1, 1, 1, 1)
    if is_ne is None or is_ne is True:
        return losses.smoothed_loss(X, C, tau, "NE" if is_ne else "L2").mean(-1)
    ne, l2 = losses.smoothed_loss(X, C, tau, "NE"), losses.smoothed_loss(X, C, tau, "L2")
    return torch.where(is_ne.view(-1, 1), ne, l2).mean(-1)


def objective(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """k-means objective L(X, C) per task, any leading dims (as losses.kmeans_objective)."""
    return sqdist(X, C).amin(-1).sum(-1)


@torch.no_grad()
def grad_norm(grads: list[torch.Tensor]) -> torch.Tensor:
    """The 2-norm of each run's whole gradient, (R,) (torch.nn.utils.get_total_norm per run)."""
    R = grads[0].shape[0]
    return torch.linalg.vector_norm(torch.cat([g.reshape(R, -1) for g in grads], 1), dim=1)


@torch.no_grad()
def clip_(grads: list[torch.Tensor], norm: torch.Tensor, clip: torch.Tensor, has_clip: torch.Tensor) -> None:
    """torch.nn.utils.clip_grad_norm_ per run: scale run r's gradients by min(1, clip_r / (norm_r + 1e-6))."""
    coef = torch.where(has_clip, (clip / (norm + 1e-6)).clamp(max=1.0), torch.ones_like(norm))
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))


@torch.no_grad()
def adam_(params: list, grads: list, exp_avg: list, exp_avg_sq: list, step: torch.Tensor, lr: torch.Tensor,
          active: torch.Tensor) -> None:
    """torch.optim.Adam (default betas, eps; no weight decay) per run, in place, for the runs in `active`.

    step (R,) counts each run's own updates (float64, as Adam's bias corrections); lr (R,). An inactive
    run (diverged, or whose loss was not finite at this step) keeps its parameters and moments.
    """
    step.add_(active.to(step.dtype))
    bc1 = 1 - BETA1 ** step
    bc2_sqrt = (1 - BETA2 ** step).sqrt()
    step_size = lr.to(step.dtype) / bc1
    if active.device.type == "cpu" and bool(active.all()):  # the common case, in place (no sync on the CPU)
        torch._foreach_lerp_(exp_avg, grads, 1 - BETA1)
        torch._foreach_mul_(exp_avg_sq, BETA2)
        torch._foreach_addcmul_(exp_avg_sq, grads, grads, value=1 - BETA2)
        for p, m, v in zip(params, exp_avg, exp_avg_sq):
            shape = (-1,) + (1,) * (p.dim() - 1)
            denom = (v.sqrt() / bc2_sqrt.to(p.dtype).view(shape)).add_(EPS)
            p.sub_(step_size.to(p.dtype).view(shape) * m / denom)
        return
    for p, g, m, v in zip(params, grads, exp_avg, exp_avg_sq):
        shape = (-1,) + (1,) * (p.dim() - 1)
        on = active.view(shape)
        m_new = m.lerp(g, 1 - BETA1)
        v_new = v.mul(BETA2).addcmul_(g, g, value=1 - BETA2)
        denom = (v_new.sqrt() / bc2_sqrt.to(p.dtype).view(shape)).add_(EPS)
        p_new = p - step_size.to(p.dtype).view(shape) * m_new / denom
        p.copy_(torch.where(on, p_new, p))
        m.copy_(torch.where(on, m_new, m))
        v.copy_(torch.where(on, v_new, v))
