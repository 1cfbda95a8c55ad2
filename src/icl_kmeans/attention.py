"""Distance attention (SPEC 3), tokens as rows.

A(Z, Z') = softmax_over_keys(-(gamma / sqrt(d_emb)) * ||Q z - K z'||^2) (V z')

Soft attention runs through fused dot-product attention using
-g||q - k||^2 = 2g q.k - g||k||^2 - g||q||^2, whose last term is constant per query:
q' = [q, 1], k' = [2g k, -g||k||^2] and scale 1, so memory stays linear in the token count.
gamma = inf is averaging hard attention: the nearest keys, ties averaged (evaluated in query chunks).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def sqdist(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Squared distances between rows: (..., m, e) x (..., p, e) -> (..., m, p)."""
    d = (A * A).sum(-1, keepdim=True) - 2 * A @ B.transpose(-1, -2) + (B * B).sum(-1).unsqueeze(-2)
    return d.clamp_min(0)


def _augment(q: torch.Tensor, k: torch.Tensor, g: float) -> tuple[torch.Tensor, torch.Tensor]:
    q_aug = torch.cat([q, torch.ones_like(q[..., :1])], dim=-1)
    k_aug = torch.cat([2 * g * k, -g * (k * k).sum(-1, keepdim=True)], dim=-1)
    return q_aug, k_aug


# Below this many queries or keys, a plain (batched) matmul + softmax beats the fused kernel on CPU,
# and its (m x p) weight matrix is linear in the larger side anyway.
FUSED_MIN_TOKENS = 128


def soft_distance_attention(q, k, v, g: float, fused: bool = True, dropout: float = 0.0) -> torch.Tensor:
    """softmax_j(-g ||q_i - k_j||^2) v_j for q (B, m, e), k (B, p, e), v (B, p, e).

    fused=True never materialises an m x p matrix with both m and p >= FUSED_MIN_TOKENS: those go
    through F.scaled_dot_product_attention on the augmented vectors (4-D, with v zero-padded to the
    width of q' and k', which is what the flash kernel on CPU needs); smaller ones use the same
    augmented dot product with an explicit softmax. fused=False materialises softmax(-g sqdist).
    """
    if not fused:
        w = torch.softmax(-g * sqdist(q, k), dim=-1)
        if dropout:
            w = F.dropout(w, dropout)
        return w @ v
    q_aug, k_aug = _augment(q, k, g)
    if min(q.shape[-2], k.shape[-2]) < FUSED_MIN_TOKENS:
        w = torch.softmax(q_aug @ k_aug.transpose(-1, -2), dim=-1)
        if dropout:
            w = F.dropout(w, dropout)
        return w @ v
    e = v.shape[-1]
    v_pad = F.pad(v, (0, q_aug.shape[-1] - e))
    out = F.scaled_dot_product_attention(q_aug.unsqueeze(-3), k_aug.unsqueeze(-3), v_pad.unsqueeze(-3),
                                         dropout_p=dropout, scale=1.0)
    return out.squeeze(-3)[..., :e]


def hard_distance_attention(q, k, v, chunk: int = 1024) -> torch.Tensor:
    """Averaging hardmax: each query averages the values of its nearest keys (exact ties share equally)."""
    out = []
    for s in range(0, q.shape[-2], chunk):
        dist = sqdist(q[..., s:s + chunk, :], k)
        w = (dist == dist.amin(-1, keepdim=True)).to(v.dtype)
        out.append((w / w.sum(-1, keepdim=True)) @ v)
    return torch.cat(out, dim=-2)


def distance_attention(Z, Zk, Q, K, V, gamma: float, fused: bool = True, dropout: float = 0.0) -> torch.Tensor:
    """A(Z, Z'; Q, K, V) with Q, K, V callables on token rows (nn.Linear) and inverse temperature gamma."""
    q, k, v = Q(Z), K(Zk), V(Zk)
    if math.isinf(gamma):
        return hard_distance_attention(q, k, v)
    return soft_distance_attention(q, k, v, gamma / math.sqrt(Z.shape[-1]), fused=fused, dropout=dropout)
