"""Distance attention (science.md §3), tokens as rows.

A(Z, Z') = softmax_over_keys(-(gamma / sqrt(d_emb)) * ||Q z - K z'||^2) (V z')

Soft attention runs through fused dot-product attention using
-g||q - k||^2 = 2g q.k - g||k||^2 - g||q||^2, whose last term is constant per query:
q' = [q, 1], k' = [2g k, -g||k||^2] and scale 1, so memory stays linear in the token count.
gamma = inf is averaging hard attention: the nearest keys, ties averaged (evaluated in query chunks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from .attention_cpu import tiled_attention


def sqdist(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Squared distances between rows: (..., m, e) x (..., p, e) -> (..., m, p)."""
    d = (A * A).sum(-1, keepdim=True) - 2 * A @ B.transpose(-1, -2) + (B * B).sum(-1).unsqueeze(-2)
    return d.clamp_min(0)


def _augment(q: torch.Tensor, k: torch.Tensor, g: float) -> tuple[torch.Tensor, torch.Tensor]:
    q_aug = torch.cat([q, torch.ones_like(q[..., :1])], dim=-1)
    k_aug = torch.cat([2 * g * k, -g * (k * k).sum(-1, keepdim=True)], dim=-1)
    return q_aug, k_aug


@dataclass(frozen=True)
class Kernel:
    """How the fused soft attention runs on the device (the result is the same; the speed is not).

    width_multiple, min_width_cpu: q', k' and v are zero-padded to one width, a multiple of width_multiple
    (and at least min_width_cpu on the CPU). SDPA's fused kernels need equal q, k, v widths on the CPU,
    where the flash kernel is also much faster at a multiple of 8 than at odd widths (x1.6 at 16 against
    11) and fastest at 16 among the widths up to 16; on CUDA, float32 needs a multiple of 4 (8 is safe)
    for the memory-efficient kernel, else SDPA takes the math kernel, which materialises m x p.
    cpu_dropout: the CPU's fused dropout path, "tiled" (attention_cpu.py, the mask applied inside the
    tiles) or "sdpa" (SDPA with a sink key for the row log-sum-exp, then the dropped entries subtracted).
    layer_attention: None (layer.attention, the pipeline's) or another function of layer.attention's
    signature that the layer calls instead: the benchmark's straightforward step (cdist, softmax, matmul).
    """

    width_multiple: int = 8
    min_width_cpu: int = 16
    cpu_dropout: str = "tiled"
    layer_attention: Callable | None = None


KERNEL = Kernel()  # this pipeline's
BEFORE_ISSUE18 = Kernel(width_multiple=1, min_width_cpu=0, cpu_dropout="sdpa")  # the benchmark's reference


def _pad_width(kernel: Kernel, *tensors: torch.Tensor) -> list[torch.Tensor]:
    """The tensors zero-padded on the last dimension to the kernel's width (Kernel)."""
    width = -(-max(t.shape[-1] for t in tensors) // kernel.width_multiple) * kernel.width_multiple
    if tensors[0].device.type == "cpu":
        width = max(width, kernel.min_width_cpu)
    return [F.pad(t, (0, width - t.shape[-1])) for t in tensors]


# Below this many queries or keys, a plain (batched) matmul + softmax beats the fused kernel on CPU,
# and its (m x p) weight matrix is linear in the larger side anyway.
FUSED_MIN_TOKENS = 128


def soft_distance_attention(q, k, v, g: float, fused: bool = True, dropout: float = 0.0,
                            generators: list[torch.Generator] | None = None, kernel: Kernel = KERNEL) -> torch.Tensor:
    """softmax_j(-g ||q_i - k_j||^2) v_j for q (B, m, e), k (B, p, e), v (B, p, e).

    fused=True never materialises an m x p matrix with both m and p >= FUSED_MIN_TOKENS: those go
    through F.scaled_dot_product_attention on the augmented vectors (4-D, q', k' and v zero-padded to
    one width: `kernel`'s), or, with dropout, through the tiled kernel of attention_cpu.py on the CPU
    (`kernel`'s cpu_dropout) and SDPA with a sink key elsewhere; smaller ones use the same
    augmented dot product with an explicit softmax. fused=False materialises softmax(-g sqdist).

    generators: where the dropout masks come from. None: torch's global generator. A list of R CPU
    generators: the batch is R equal blocks (R runs folded into one batch) and block r's masks are
    drawn from generators[r] alone, so that a run's masks never depend on what shares its batch, and
    are the same on every device (they are drawn on the CPU).
    """
    if not fused:
        w = torch.softmax(-g * sqdist(q, k), dim=-1)
        if dropout:
            w = dropout_weights(w, dropout, generators)
        return w @ v
    q_aug, k_aug = _augment(q, k, g)
    if min(q.shape[-2], k.shape[-2]) < FUSED_MIN_TOKENS:
        w = torch.softmax(q_aug @ k_aug.transpose(-1, -2), dim=-1)
        if dropout:
            w = dropout_weights(w, dropout, generators)
        return w @ v
    if dropout and (generators is not None or q.device.type == "cpu"):
        return _fused_dropout_attention(q_aug, k_aug, v, dropout, generators, kernel)
    e = v.shape[-1]
    q_pad, k_pad, v_pad = _pad_width(kernel, q_aug, k_aug, v)
    out = F.scaled_dot_product_attention(q_pad.unsqueeze(-3), k_pad.unsqueeze(-3), v_pad.unsqueeze(-3),
                                         dropout_p=dropout, scale=1.0)
    return out.squeeze(-3)[..., :e]


def dropout_weights(w: torch.Tensor, p: float, generators: list[torch.Generator] | None) -> torch.Tensor:
    """F.dropout(w, p) with each of len(generators) equal batch blocks drawn from its own generator.

    Per block, the same draws as F.dropout on the CPU with the global generator in that state
    (bernoulli(1 - p) noise scaled by 1 / (1 - p)), made on the CPU and moved to w's device.
    """
    if generators is None:
        return F.dropout(w, p)
    blocks = w.shape[0] // len(generators)
    noise = torch.cat([torch.empty((blocks, *w.shape[1:]), dtype=w.dtype).bernoulli_(1 - p, generator=gen)
                       for gen in generators]).div_(1 - p)
    return w * noise.to(w.device, non_blocking=True)


def dropped_positions(total: int, p: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """Increasing flat indices of the entries that iid Bernoulli(p) drops among `total` entries.

    Drawn as geometric gaps between drops (the same distribution as one draw per entry) from
    `generator` (default: the global CPU generator), so a seed or a saved generator state makes it
    exact and resumable, at O(p * total) random numbers instead of `total`.
    """
    log_keep = math.log1p(-p)
    parts, last, expected = [], -1, p * total
    while True:
        u = torch.rand(int(expected + 6 * math.sqrt(expected) + 16), dtype=torch.float64, generator=generator)
        idx = last + torch.cumsum(torch.floor(torch.log1p(-u) / log_keep).long() + 1, 0)  # log1p(-u) <= 0
        if idx[-1] >= total:
            parts.append(idx[idx < total])
            return torch.cat(parts)
        parts.append(idx)
        last = int(idx[-1])


SINK_SAMPLE = 16  # keys whose largest score estimates each row's log-sum-exp for the sink (see below)


def _fused_dropout_attention(q_aug, k_aug, v, p: float, generators=None, kernel: Kernel = KERNEL) -> torch.Tensor:
    """dropout(softmax(q' k'^T), p) @ v without materialising the m x n weights (CPU).

    The CPU flash kernel has no dropout (SDPA with dropout_p falls back to the math kernel, which builds
    the m x n weights and draws m x n random numbers). The tiled kernel (attention_cpu.py) zeroes the
    dropped entries inside its tiles. With kernel.cpu_dropout = "sdpa" instead, with W = softmax(S) and
    D the dropped entries: dropout(W) @ v = (W @ v - sum_{(i,j) in D} W_ij v_j) / (1 - p). W @ v comes
    from the fused kernel; the ~p m n dropped W_ij = exp(S_ij - lse_i) need the row log-sum-exp lse_i, differentiably.
    The same fused call gives it: an extra sink key whose score for query i is a constant c_i and whose
    value is a unit column of its own, plus a column of ones on the real keys. With w0_i the sink's
    weight and r_i = 1 - w0_i the real keys' (both read off the output), lse_i = c_i + log(r_i / w0_i)
    and W @ v = out_i / r_i, with gradients through the kernel. c_i only has to keep w0_i and r_i away
    from underflow: the largest score over SINK_SAMPLE keys (a lower bound of the row maximum), or, if
    that fails, the exact row log-sum-exp computed in chunks.
    """
    lead, m, n, e = q_aug.shape[:-2], q_aug.shape[-2], k_aug.shape[-2], v.shape[-1]
    q2, k2, v2 = q_aug.reshape(-1, m, q_aug.shape[-1]), k_aug.reshape(-1, n, k_aug.shape[-1]), v.reshape(-1, n, e)
    b = q2.shape[0]
    flat = _dropped(b, m * n, p, generators).to(q2.device)  # drawn first and once: the fallback keeps it
    if kernel.cpu_dropout == "tiled" and q2.device.type == "cpu":
        return tiled_attention(q2, k2, v2, flat, p).reshape(*lead, m, e)
    with torch.no_grad():
        c = (q2 @ k2[:, :SINK_SAMPLE].transpose(-1, -2)).amax(-1)
    wv, lse = _sink_attention(q2, k2, v2, c)
    if not (torch.isfinite(lse).all() and torch.isfinite(wv).all()):
        with torch.no_grad():
            rows = max(1, (1 << 22) // max(1, b * n))  # chunks of ~4M scores
            c = torch.cat([torch.logsumexp(q2[:, s:s + rows] @ k2.transpose(-1, -2), dim=-1)
                           for s in range(0, m, rows)], dim=1)
        wv, lse = _sink_attention(q2, k2, v2, c)
    bi = flat // n  # = batch * m + query
    bj = (bi // m) * n + flat % n  # = batch * n + key
    s_d = (q2.reshape(b * m, -1).index_select(0, bi) * k2.reshape(b * n, -1).index_select(0, bj)).sum(-1)
    w_d = torch.exp(s_d - lse.reshape(-1).index_select(0, bi))
    dropped = torch.zeros(b * m, e, dtype=v.dtype, device=v.device).index_add(
        0, bi, w_d.unsqueeze(-1) * v2.reshape(b * n, e).index_select(0, bj))
    return ((wv - dropped.reshape(b, m, e)) / (1 - p)).reshape(*lead, m, e)


def _dropped(b: int, per_row: int, p: float, generators) -> torch.Tensor:
    """dropped_positions among b * per_row entries; with generators, block r of the b batch rows
    draws its own from generators[r] (offset into the whole)."""
    if generators is None:
        return dropped_positions(b * per_row, p)
    size = b // len(generators) * per_row
    return torch.cat([dropped_positions(size, p, gen) + r * size for r, gen in enumerate(generators)])


def _sink_attention(q2, k2, v2, c):
    """(softmax(q2 k2^T) @ v2, row log-sum-exp) from one fused call with a sink key scored c (no grad)."""
    b, n, e = v2.shape
    # widths: q', k' have e + 1 coordinates, the sink's score one more; v gets [v, 1, 0] on the real keys and
    # [0, 0, 1] on the sink; all are zero-padded to one width, a multiple of 4 (the CPU flash kernel needs
    # equal widths and is several times slower at some odd ones) or, on CUDA, of 8 (float32's
    # memory-efficient kernel; any other width would take the math kernel, quadratic in memory)
    mult = 8 if q2.device.type == "cuda" else 4
    width = -(-(e + 2) // mult) * mult
    q3 = F.pad(torch.cat([q2, c.detach().unsqueeze(-1)], -1), (0, width - e - 2))  # sink score for query i: c_i
    k3 = F.pad(k2, (0, width - e - 1))
    sink = k3.new_zeros(b, 1, width)
    sink[..., e + 1] = 1  # the sink key meets c_i; as a value it is the unit column e + 1
    k3 = torch.cat([k3, sink], 1)
    v3 = torch.cat([F.pad(F.pad(v2, (0, 1), value=1.0), (0, width - e - 1)), sink], 1)
    out = F.scaled_dot_product_attention(q3.unsqueeze(1), k3.unsqueeze(1), v3.unsqueeze(1), scale=1.0).squeeze(1)
    real, w0 = out[..., e], out[..., e + 1]
    return out[..., :e] / real.unsqueeze(-1), c + torch.log(real) - torch.log(w0)


def hard_distance_attention(q, k, v, chunk: int = 1024) -> torch.Tensor:
    """Averaging hardmax: each query averages the values of its nearest keys (exact ties share equally)."""
    out = []
    for s in range(0, q.shape[-2], chunk):
        dist = sqdist(q[..., s:s + chunk, :], k)
        w = (dist == dist.amin(-1, keepdim=True)).to(v.dtype)
        out.append((w / w.sum(-1, keepdim=True)) @ v)
    return torch.cat(out, dim=-2)

