"""Input validation shared by the public API: every error names the argument, the value and what is allowed."""

from __future__ import annotations

import math

import torch


def choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not supported; allowed: {', '.join(map(repr, allowed))}")


def positive_int(name: str, value, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r} is invalid; expected an integer >= {minimum}")


def positive_float(name: str, value) -> None:
    try:
        ok = float(value) > 0 and math.isfinite(float(value))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{name}={value!r} is invalid; expected a finite number > 0")


def points_and_centers(X: torch.Tensor, C: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """Checks X (B, n, d) or (n, d) and C (B, k, d) or (k, d); returns batched views and whether input was batched."""
    for name, T in (("X", X), ("C", C)):
        if not isinstance(T, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(T).__name__}")
        if T.dim() not in (2, 3):
            raise ValueError(f"{name} has shape {tuple(T.shape)}; expected (n, d) or (batch, n, d)")
        if not T.is_floating_point():
            raise ValueError(f"{name} has dtype {T.dtype}; expected a floating-point tensor")
    if X.dim() != C.dim():
        raise ValueError(f"X has shape {tuple(X.shape)} and C has shape {tuple(C.shape)}; both must be batched or both unbatched")
    batched = X.dim() == 3
    if not batched:
        X, C = X.unsqueeze(0), C.unsqueeze(0)
    if X.shape[0] != C.shape[0]:
        raise ValueError(f"batch sizes differ: X has {X.shape[0]} tasks, C has {C.shape[0]}")
    if X.shape[-1] != C.shape[-1]:
        raise ValueError(f"dimension mismatch: X has d={X.shape[-1]}, C has d={C.shape[-1]}")
    n, k = X.shape[1], C.shape[1]
    if k < 2:
        raise ValueError(f"k={k} centers is invalid; expected k >= 2")
    if n < k:
        raise ValueError(f"n={n} points is invalid for k={k} centers; expected n >= k")
    if not torch.isfinite(X).all():
        raise ValueError("X contains non-finite values (NaN or inf); expected finite points")
    if not torch.isfinite(C).all():
        raise ValueError("C contains non-finite values (NaN or inf); expected finite centers")
    return X, C, batched


def steps(value) -> None:
    positive_int("steps", value, minimum=1)
