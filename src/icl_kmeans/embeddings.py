"""Token embeddings (science.md §2): points get zero code rows, centers get a code that names them.

OH: [X; 0_k], [C; I_k]            width d + k
BN: [X; 0_b], [C; B_k]            width d + ceil(log2 k), column j = binary code of j-1, LSB first
NA: X, C                          width d
Tokens are rows here: X (B, n, d) -> (B, n, d_emb).
"""

from __future__ import annotations

import math

import torch

from . import _checks
from .constants import EMBEDDINGS


def code_width(k: int, embedding: str) -> int:
    _checks.choice("embedding", embedding, EMBEDDINGS)
    _checks.positive_int("k", k, minimum=2)
    return {"OH": k, "BN": math.ceil(math.log2(k)), "NA": 0}[embedding]


def embedding_width(d: int, k: int, embedding: str) -> int:
    return d + code_width(k, embedding)


def binary_codes(k: int) -> torch.Tensor:
    """B_k as a (b, k) matrix: column j is j in binary, least significant bit in the first row."""
    b = code_width(k, "BN")
    j = torch.arange(k)
    return torch.stack([(j >> bit) & 1 for bit in range(b)]).to(torch.get_default_dtype())


def center_codes(k: int, embedding: str, dtype=None, device=None) -> torch.Tensor:
    """The (k, code_width) code rows appended to the k centers."""
    dtype = dtype or torch.get_default_dtype()
    if embedding == "OH":  # built on the device: no host-to-device copy (and no sync) per forward
        return torch.eye(k, dtype=dtype, device=device)
    if embedding == "BN":
        j = torch.arange(k, device=device)
        return torch.stack([(j >> bit) & 1 for bit in range(code_width(k, "BN"))], dim=1).to(dtype)
    return torch.zeros(k, 0, dtype=dtype, device=device)


def embed(X: torch.Tensor, C: torch.Tensor, embedding: str) -> tuple[torch.Tensor, torch.Tensor]:
    """X_bar(0), C_bar(0) for batched X (B, n, d) and C (B, k, d)."""
    B, n, _ = X.shape
    k = C.shape[1]
    codes = center_codes(k, embedding, dtype=C.dtype, device=C.device)
    X_bar = torch.cat([X, X.new_zeros(B, n, codes.shape[1])], dim=-1)
    C_bar = torch.cat([C, codes.expand(B, k, codes.shape[1])], dim=-1)
    return X_bar, C_bar
