"""Attention dropout on the CPU without the m x n weights: dropout(softmax(q k^T), p) @ v in query tiles.

For q (b, m, w), k (b, n, w), v (b, n, e), S = q k^T (scale 1), P = softmax_rows(S), the keep mask M
(M_ij = 0 for the dropped entries, else 1) and r = 1 / (1 - p):

    forward   O = r (P * M) v                    lse_i = log sum_j exp(S_ij)   (kept for the backward)
    backward  dP = dO v^T                        delta_i = dO_i . O_i
              dS = P * (r M * dP - delta)        (the softmax backward of the masked weights)
              dq = dS k      dk = dS^T q      dv = r (P * M)^T dO

The distance attention (attention.py) calls it with the augmented q' = [q, 1], k' = [2g k, -g||k||^2]
and the dropped entries drawn by attention.dropped_positions. Nothing of size m x n is kept: forward
and backward walk over tiles of whole batch elements or query rows holding about TILE_SCORES scores
(about the L2 cache), the backward recomputing P = exp(S - lse) of each tile from q and k; the mask
is applied inside each tile. The work per tile is batched matrix products and a few passes over the
tile; dk and dv accumulate over the tiles. Memory is linear in m and n.

On the CPU this is faster than the SDPA route it replaced for dropout (the flash kernel for W @ v and
lse, then a gather / scatter of the ~p m n dropped entries with autograd, issue 18). Without dropout,
torch's flash kernel (SDPA, at a width padded to a multiple of 8) is as fast or faster at the widths of
this model, and attention.py uses it.
"""

from __future__ import annotations

import math

import torch

TILE_SCORES = 1 << 18  # scores per tile: 1 MB in float32 (the L2 cache of one core)


def _tiles(b: int, m: int, n: int, dropped: torch.Tensor | None):
    """(batch slice, query-row slice, dropped entries of the tile or None) covering (b, m), each tile
    holding at most about TILE_SCORES scores: whole batch elements when one fits (m n <= TILE_SCORES),
    else query rows of one batch element. A tile is a contiguous range of the flat (b, m, n) index, so
    its dropped entries are a slice of the sorted `dropped`, shifted to the tile's start."""
    if m * n <= TILE_SCORES:
        batches, rows = min(b, TILE_SCORES // (m * n)), m
    else:
        batches, rows = 1, max(1, TILE_SCORES // n)
    for b0 in range(0, b, batches):
        for r0 in range(0, m, rows):
            bs, rs = slice(b0, min(b, b0 + batches)), slice(r0, min(m, r0 + rows))
            drop = None
            if dropped is not None:
                lo, hi = (bs.start * m + rs.start) * n, ((bs.stop - 1) * m + rs.stop) * n
                a, z = torch.searchsorted(dropped, torch.tensor([lo, hi])).tolist()
                drop = dropped[a:z] - lo
            yield bs, rs, drop


def _exp_(x: torch.Tensor) -> torch.Tensor:
    """x.exp_(), the same bits, without the CPU's slow path below the normal range. torch's vectorised exp
    takes about 10 to 40 times longer per element whose result is subnormal or zero (at a learning rate
    of 1 most scores of a tile are): those are written here from a clamped exp and a masked fill, the
    few subnormal ones by exp itself."""
    info = torch.finfo(x.dtype)
    normal = math.log(info.tiny) + 0.5  # above: exp is fast and normal
    if x.numel() == 0 or not bool(x.min() < normal):  # one reduction, no mask, in the common case (a NaN compares False, as before)
        return x.exp_()
    low = x < normal
    subnormal = low & (x >= math.log(info.tiny * info.eps) - 1.0)  # below: exp rounds to 0
    values = x[subnormal].exp()
    x.clamp_(min=normal).exp_().masked_fill_(low, 0.0)
    x[subnormal] = values
    return x


class _TiledAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, dropped, p: float):
        b, m, n = q.shape[0], q.shape[1], k.shape[1]
        out_t = q.new_empty(b, v.shape[-1], m)  # O^T: see _T below
        lse = q.new_empty(b, m)
        tile = _Buffer(q)
        for bs, rs, drop in _tiles(b, m, n, dropped):
            S = torch.bmm(q[bs, rs], _T(k[bs]), out=tile.view(q[bs, rs], n))
            row_max = S.amax(-1, keepdim=True)
            E = _exp_(S.sub_(row_max))  # exp(S - max): P times the row sum
            row_sum = E.sum(-1)
            lse[bs, rs] = row_max.squeeze(-1) + row_sum.log()
            if drop is not None:
                E.view(-1).index_fill_(0, drop, 0.0)  # P * M
            out_t[bs, :, rs] = torch.bmm(_T(v[bs]), _T(E)) / (row_sum.unsqueeze(-2) * (1 - p))
        out = _T(out_t)
        ctx.save_for_backward(q, k, v, out, lse, dropped)
        ctx.p = p
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, d_out):
        q, k, v, out, lse, dropped = ctx.saved_tensors
        b, m, n = q.shape[0], q.shape[1], k.shape[1]
        keep = 1 - ctx.p
        delta = (d_out * out).sum(-1) * keep
        dq_t = q.new_empty(b, q.shape[-1], m)  # transposed like O^T
        dk_t, dv_t = k.new_zeros(b, k.shape[-1], n), v.new_zeros(b, v.shape[-1], n)
        p_tile, dp_tile = _Buffer(q), _Buffer(q)
        for bs, rs, drop in _tiles(b, m, n, dropped):
            P = torch.bmm(q[bs, rs], _T(k[bs]), out=p_tile.view(q[bs, rs], n))
            _exp_(P.sub_(lse[bs, rs].unsqueeze(-1)))  # P = exp(S - lse), S recomputed
            dO = d_out[bs, rs]
            dP = torch.bmm(dO, _T(v[bs]), out=dp_tile.view(dO, n))
            if drop is not None:
                dP.view(-1).index_fill_(0, drop, 0.0)  # dP * M
            dS = dP.sub_(delta[bs, rs].unsqueeze(-1)).mul_(P)  # (1 - p) dS
            if drop is not None:
                P.view(-1).index_fill_(0, drop, 0.0)  # P * M
            dv_t[bs] += torch.bmm(_T(dO), P)
            dq_t[bs, :, rs] = torch.bmm(_T(k[bs]), _T(dS))
            dk_t[bs] += torch.bmm(_T(q[bs, rs]), dS)
        return _T(dq_t) / keep, _T(dk_t) / keep, _T(dv_t) / keep, None, None


class _Buffer:
    """One tile's worth of memory, reused by every tile of a pass (measurably faster on the CPU than a
    fresh tile-sized output for each product)."""

    def __init__(self, like: torch.Tensor):
        self.data = like.new_empty(TILE_SCORES)

    def view(self, rows: torch.Tensor, n: int) -> torch.Tensor:
        """A contiguous (batches, rows, n) tensor for the tile whose query rows are `rows`."""
        shape = (*rows.shape[:2], n)
        if self.data.numel() < shape[0] * shape[1] * n:
            self.data = self.data.new_empty(shape[0] * shape[1] * n)
        return self.data[: shape[0] * shape[1] * n].view(shape)


def _T(x: torch.Tensor) -> torch.Tensor:
    """Transpose of the last two dimensions (a view). The products with a narrow factor are formed as
    (narrow x long) outputs, e.g. O^T = V^T P^T rather than O = P V: several times faster in MKL on the
    CPU at widths ~ 10 (each is one pass over the tile either way)."""
    return x.transpose(-1, -2)


def tiled_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, dropped: torch.Tensor | None = None,
                    p: float = 0.0) -> torch.Tensor:
    """dropout(softmax(q k^T)) @ v for q (b, m, w), k (b, n, w), v (b, n, e), differentiable in q, k, v.

    dropped: the increasing flat indices into (b, m, n) of the weights that dropout (rate p) zeroes,
    or None (no dropout; then p must be 0)."""
    if dropped is None and p:
        raise ValueError(f"p={p!r} without dropped entries; expected p = 0 or the dropped flat indices")
    return _TiledAttention.apply(q, k, v, dropped, p)
