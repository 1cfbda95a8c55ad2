"""The device a job computes on, and how it is used (science.md §7; docs/api.md, On a GPU)."""

from __future__ import annotations

import os

import torch


def resolve_device(device: str | None) -> torch.device:
    """'auto' (or None): CUDA when available, else CPU; 'cuda' fails clearly when there is none."""
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was asked for but torch.cuda.is_available() is False; use 'cpu' or 'auto'")
    return dev


def deterministic_cuda() -> None:
    """On CUDA, ask for deterministic kernels: cuBLAS with a fixed workspace (CUBLAS_WORKSPACE_CONFIG,
    effective when set before the process's first cuBLAS call, which is the case when training is the
    first CUDA work of the process, as in the pipeline's jobs and the CLI) and
    torch.use_deterministic_algorithms(warn_only=True), which makes torch warn, not fail, where an op
    (e.g. a scaled_dot_product_attention backward kernel) has no deterministic version. A process-wide
    setting; what holds is measured by .ci/gpu-check (two identical runs compared)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def to_device(t: torch.Tensor, dev: torch.device) -> torch.Tensor:
    """CPU tensor to dev without a host sync: pinned and non-blocking on CUDA."""
    return t.pin_memory().to(dev, non_blocking=True) if dev.type == "cuda" else t
