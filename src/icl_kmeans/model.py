"""The clustering transformer F_{d:k} (science.md §4) as an nn.Module, and its exact Lloyd construction
(science.md §5). The layer's math is layer.py's, the one definition, which the training loop runs on
stacked runs; ClusterTransformer holds one run's parameters and runs it with R = 1.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from . import _checks
from .attention import KERNEL, Kernel
from .embeddings import EMBEDDINGS, embed, embedding_width
from .layer import apply_layer

MODES = ("reembed", "naive")


class DistanceAttentionHead(nn.Module):
    """theta = (Q, K, V), each d_emb x d_emb (nn.Linear acting on token rows: its parameters, its
    initialisation and its state_dict names; layer.linear applies them)."""

    def __init__(self, width: int, bias: bool = False):
        super().__init__()
        self.Q = nn.Linear(width, width, bias=bias)
        self.K = nn.Linear(width, width, bias=bias)
        self.V = nn.Linear(width, width, bias=bias)


class ClusterTransformer(nn.Module):
    """F_{d:k}: one shared 4-attention layer over point and center tokens."""

    def __init__(self, d: int, k: int, embedding: str = "OH", gamma: float = 1.0, bias: bool = False,
                 dropout: float = 0.0, fused: bool = True, kernel: Kernel = KERNEL):
        super().__init__()
        _checks.positive_int("d", d)
        _checks.positive_int("k", k, minimum=2)
        _checks.choice("embedding", embedding, EMBEDDINGS)
        if not (gamma > 0):
            raise ValueError(f"gamma={gamma!r} is invalid; expected a number > 0 or float('inf')")
        if not (0.0 <= dropout < 1.0):
            raise ValueError(f"dropout={dropout!r} is invalid; expected 0 <= dropout < 1")
        self.d, self.k, self.embedding = d, k, embedding
        self.gamma, self.dropout, self.fused = float(gamma), float(dropout), fused
        self.kernel = kernel  # how the fused attention runs (attention.Kernel): the benchmark's reference too
        self.width = embedding_width(d, k, embedding)
        self.heads = nn.ModuleList(DistanceAttentionHead(self.width, bias) for _ in range(4))

    def extra_repr(self) -> str:
        return f"d={self.d}, k={self.k}, embedding={self.embedding}, gamma={self.gamma}, width={self.width}"

    def layer(self, X_bar: torch.Tensor, C_bar: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One application of the layer (layer.apply_layer) to embedded tokens (B, m, w)."""
        params = {name: p.unsqueeze(0) for name, p in self.named_parameters()}  # one run: R = 1
        p = self.dropout if self.training else 0.0
        X_next, C_next = apply_layer(params, X_bar.unsqueeze(0), C_bar.unsqueeze(0), self.gamma, self.fused, p,
                                     kernel=self.kernel)
        return X_next[0], C_next[0]

    def _check(self, X, C):
        X, C, batched = _checks.points_and_centers(X, C)
        if X.shape[-1] != self.d or C.shape[1] != self.k:
            raise ValueError(f"this model is F_{{d={self.d}:k={self.k}}}; got points with d={X.shape[-1]} "
                             f"and k={C.shape[1]} centers")
        return X, C, batched

    def forward(self, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        """One clustering step: the centers F(X, C), shape like C."""
        X, C, batched = self._check(X, C)
        out = self.centers(X, C)
        return out if batched else out[0]

    def centers(self, X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
        """forward for batched X (B, n, d), C (B, k, d) without the input checks, whose finiteness test
        waits for the device (bench_stack's single-run reference loop)."""
        _, C_bar = self.layer(*embed(X, C, self.embedding))
        return C_bar[..., : self.d]

    def cluster(self, X: torch.Tensor, C: torch.Tensor, steps: int, mode: str = "reembed") -> torch.Tensor:
        """Centers after each of `steps` steps, shape (steps, *C.shape) (science.md §9).

        reembed: C(t) = F(X, C(t-1)), embedding afresh each step.
        naive:   embed once, apply the layer `steps` times, read the first d rows of C_bar(t).
        """
        _checks.steps(steps)
        _checks.choice("mode", mode, MODES)
        X, C, batched = self._check(X, C)
        out = []
        if mode == "reembed":
            for _ in range(steps):
                C = self.layer(*embed(X, C, self.embedding))[1][..., : self.d]
                out.append(C)
        else:
            X_bar, C_bar = embed(X, C, self.embedding)
            for _ in range(steps):
                X_bar, C_bar = self.layer(X_bar, C_bar)
                out.append(C_bar[..., : self.d])
        out = torch.stack(out)
        return out if batched else out[:, 0]


def _selector(width: int, start: int, stop: int) -> torch.Tensor:
    """I^{a:b}: diagonal matrix keeping coordinates start..stop-1 (0-based, half-open)."""
    diag = torch.zeros(width)
    diag[start:stop] = 1
    return torch.diag(diag)


@torch.no_grad()
def lloyd_transformer(d: int, k: int, embedding: str = "OH", gamma: float = math.inf) -> ClusterTransformer:
    """The exact construction of science.md §5: with gamma = inf, layer t is Lloyd iteration t.

    Q1 = K1 = Q2 = K2 = I^{1:d}; V1 = I^{d+1:}, V2 = -I^{d+1:}  (write the nearest center's code, erase the old)
    Q3 = K3 = Q4 = K4 = I^{d+1:}; V3 = I^{1:d}, V4 = -I^{1:d}  (average the points carrying my code, drop my old position)
    """
    if embedding == "NA":
        raise ValueError("embedding='NA' has no code coordinates, so the exact Lloyd construction needs 'OH' or 'BN'")
    model = ClusterTransformer(d, k, embedding, gamma=gamma)
    w = model.width
    pts, code = _selector(w, 0, d), _selector(w, d, w)
    plan = [(pts, pts, code), (pts, pts, -code), (code, code, pts), (code, code, -pts)]
    for head, (Q, K, V) in zip(model.heads, plan):
        head.Q.weight.copy_(Q)
        head.K.weight.copy_(K)
        head.V.weight.copy_(V)
    return model.eval()
