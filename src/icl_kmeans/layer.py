"""The layer of F_{d:k} (science.md §4), the one definition of its math, for R runs at once:

    X_bar(t+1) = X_bar(t) + A(X_bar(t), C_bar(t); theta1) + A(X_bar(t), X_bar(t); theta2)
    C_bar(t+1) = C_bar(t) + A(C_bar(t), X_bar(t+1); theta3) + A(C_bar(t), C_bar(t); theta4)
    F(X, C) = first d coordinates of C_bar(1)

Training runs it on R stacked runs; model.ClusterTransformer runs it with R = 1 (evaluation,
landscapes, profiling, the exact Lloyd construction). params holds one tensor per parameter of
ClusterTransformer, named as in its state_dict, with a leading run dimension:
heads.{mu}.{Q,K,V}.weight (R, w, w) and, with bias, heads.{mu}.{Q,K,V}.bias (R, w). Tokens are
(R, B, m, w). A linear map is one batched matmul over the run dimension, and the attention folds the
run dimension into the batch dimension, so R runs take the same (fused, memory-linear) path of
attention.soft_distance_attention as one.
"""

from __future__ import annotations

import math

import torch

from .attention import KERNEL, Kernel, hard_distance_attention, soft_distance_attention
from .embeddings import embed


def linear(Z: torch.Tensor, params: dict, name: str) -> torch.Tensor:
    """nn.Linear of each run: Z W_r^T + b_r for Z (R, B, m, w)."""
    R, B, m, w = Z.shape
    out = torch.matmul(Z.reshape(R, B * m, w), params[f"{name}.weight"].transpose(-1, -2))
    bias = params.get(f"{name}.bias")
    if bias is not None:
        out = out + bias.unsqueeze(1)
    return out.reshape(R, B, m, -1)


def attention(params: dict, mu: int, Z: torch.Tensor, Zk: torch.Tensor, gamma: float, fused: bool = True,
              dropout: float = 0.0, generators: list | None = None, kernel: Kernel = KERNEL) -> torch.Tensor:
    """A(Z, Z'; theta_mu) of every run (science.md §3); gamma = inf is averaging hard attention."""
    q, k, v = (linear(T, params, f"heads.{mu}.{P}") for T, P in ((Z, "Q"), (Zk, "K"), (Zk, "V")))
    R, B = Z.shape[:2]
    fold = lambda t: t.reshape(R * B, *t.shape[2:])  # noqa: E731  run dim into the batch dim
    if math.isinf(gamma):
        out = hard_distance_attention(fold(q), fold(k), fold(v))
    else:
        out = soft_distance_attention(fold(q), fold(k), fold(v), gamma / math.sqrt(Z.shape[-1]), fused=fused,
                                      dropout=dropout, generators=generators, kernel=kernel)
    return out.reshape(q.shape)


def apply_layer(params: dict, X_bar: torch.Tensor, C_bar: torch.Tensor, gamma: float, fused: bool = True,
                dropout: float = 0.0, generators: list | None = None,
                kernel: Kernel = KERNEL) -> tuple[torch.Tensor, torch.Tensor]:
    """One application of the layer to embedded tokens X_bar (R, B, n, w), C_bar (R, B, k, w).

    dropout: on the attention weights (the caller passes 0 outside training). generators: None (torch's
    global generator) or one CPU generator per run, the only source of that run's masks. kernel: how the
    fused attention runs (attention.Kernel), and which attention the layer calls (kernel.layer_attention)."""
    attend = kernel.layer_attention or attention
    A = lambda mu, Z, Zk: attend(params, mu, Z, Zk, gamma, fused, dropout, generators, kernel)  # noqa: E731
    X_next = X_bar + A(0, X_bar, C_bar) + A(1, X_bar, X_bar)
    C_next = C_bar + A(2, C_bar, X_next) + A(3, C_bar, C_bar)
    return X_next, C_next


def embed_runs(X: torch.Tensor, C: torch.Tensor, embedding: str) -> tuple[torch.Tensor, torch.Tensor]:
    """X_bar(0), C_bar(0) (science.md §2) of X (R, B, n, d), C (R, B, k, d)."""
    R, B, n, d = X.shape
    X_bar, C_bar = embed(X.reshape(R * B, n, d), C.reshape(R * B, -1, d), embedding)
    return X_bar.reshape(R, B, n, -1), C_bar.reshape(R, B, C.shape[2], -1)


def forward(params: dict, X: torch.Tensor, C: torch.Tensor, embedding: str, gamma: float, fused: bool = True,
            dropout: float = 0.0, generators: list | None = None) -> torch.Tensor:
    """F(X, C) of each run: X (R, B, n, d), C (R, B, k, d) -> centers (R, B, k, d)."""
    _, C_next = apply_layer(params, *embed_runs(X, C, embedding), gamma, fused, dropout, generators)
    return C_next[..., : X.shape[-1]]
