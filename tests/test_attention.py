"""Attention dropout on the fused path (issue 9, A2): exactly dropout(softmax) @ v, never the slow kernel."""

import math

import pytest
import torch
import torch.nn.functional as F

from icl_kmeans import ClusterTransformer, sample_tasks
from icl_kmeans.attention import FUSED_MIN_TOKENS, _augment, dropped_positions, soft_distance_attention


def _materialised_with_mask(q, k, v, g, p, seed):
    """The reference's dropout(softmax(-g sqdist)) @ v, with the entries dropped_positions drops for seed."""
    b, m, n = q.shape[0], q.shape[1], k.shape[1]
    torch.manual_seed(seed)
    keep = torch.ones(b * m * n, dtype=q.dtype)
    keep[dropped_positions(b * m * n, p)] = 0
    q_aug, k_aug = _augment(q, k, g)
    return (torch.softmax(q_aug @ k_aug.transpose(-1, -2), -1) * keep.reshape(b, m, n) / (1 - p)) @ v


@pytest.mark.parametrize("scale", [1.0, 40.0])  # 40: scores so spread that the sink's first estimate fails
def test_fused_dropout_equals_dropout_of_the_softmax_weights(scale):
    torch.manual_seed(0)
    b, m, n, e, g, p = 2, FUSED_MIN_TOKENS + 3, FUSED_MIN_TOKENS + 20, 7, 0.4, 0.05
    q = (scale * torch.randn(b, m, e, dtype=torch.float64)).requires_grad_()
    k = (scale * torch.randn(b, n, e, dtype=torch.float64)).requires_grad_()
    v = torch.randn(b, n, e, dtype=torch.float64, requires_grad=True)
    torch.manual_seed(7)
    got = soft_distance_attention(q, k, v, g, dropout=p)
    want = _materialised_with_mask(q, k, v, g, p, seed=7)
    torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-11)
    grad = torch.randn_like(got)
    for a, b_ in zip(torch.autograd.grad((got * grad).sum(), (q, k, v), retain_graph=True),
                     torch.autograd.grad((want * grad).sum(), (q, k, v))):
        torch.testing.assert_close(a, b_, rtol=1e-8, atol=1e-10)


def test_fused_dropout_never_uses_the_kernel_dropout_on_cpu(monkeypatch):
    """SDPA with dropout_p > 0 falls back to the slow math kernel on the CPU (the 5x of the issue)."""
    real = F.scaled_dot_product_attention

    def no_kernel_dropout(*args, dropout_p=0.0, **kwargs):
        assert dropout_p == 0.0, "the slow SDPA dropout path was used"
        return real(*args, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", no_kernel_dropout)
    n = FUSED_MIN_TOKENS
    q, k, v = torch.randn(2, n, 5), torch.randn(2, n, 5), torch.randn(2, n, 5)
    assert torch.isfinite(soft_distance_attention(q, k, v, 0.3, dropout=0.01)).all()


def test_dropped_positions_are_bernoulli_and_deterministic():
    total, p = 2_000_000, 0.01
    torch.manual_seed(3)
    a = dropped_positions(total, p)
    torch.manual_seed(3)
    assert torch.equal(a, dropped_positions(total, p))
    assert (a[1:] > a[:-1]).all() and a[0] >= 0 and a[-1] < total
    sd = math.sqrt(total * p * (1 - p))
    assert abs(len(a) - total * p) < 5 * sd
    halves = torch.bincount((a >= total // 2).long(), minlength=2)  # no drift along the entries
    assert abs(int(halves[0]) - int(halves[1])) < 5 * sd
    gaps = (a[1:] - a[:-1]).double()  # geometric: mean 1/p, variance (1-p)/p^2
    assert abs(gaps.mean().item() - 1 / p) < 5 * math.sqrt((1 - p) / p**2 / len(gaps))


def test_training_dropout_is_seeded_and_off_in_eval_mode():
    tasks = sample_tasks(2, n=FUSED_MIN_TOKENS, d=3, k=4, seed=1)
    torch.manual_seed(0)
    model = ClusterTransformer(3, 4, "OH", dropout=0.1, bias=True)
    torch.manual_seed(5)
    a = model(tasks.X, tasks.C)
    torch.manual_seed(5)
    assert torch.equal(a, model(tasks.X, tasks.C))
    assert not torch.equal(a, model(tasks.X, tasks.C))  # a fresh mask each call
    model.eval()
    plain = ClusterTransformer(3, 4, "OH", dropout=0.0, bias=True)
    plain.load_state_dict(model.state_dict())
    assert torch.equal(model(tasks.X, tasks.C), plain.eval()(tasks.X, tasks.C))


def test_dropout_drawn_per_block_is_the_global_streams_dropout():
    """A run's masks from its own generator: block r of the folded batch draws from generators[r] what
    F.dropout draws from the global generator in the same state, on both the small-token and the fused
    paths, whatever the other blocks hold."""
    from icl_kmeans.attention import dropout_weights, soft_distance_attention

    w = torch.rand(6, 5, 7)
    gens = [torch.Generator().manual_seed(s) for s in (3, 4)]
    got = dropout_weights(w, 0.3, gens)
    for r, seed in enumerate((3, 4)):
        torch.manual_seed(seed)
        torch.testing.assert_close(got[3 * r:3 * r + 3], torch.nn.functional.dropout(w[3 * r:3 * r + 3], 0.3),
                                   rtol=0, atol=0)
    q, k, v = (torch.randn(4, 160, 5, dtype=torch.float64) for _ in range(3))  # 160 tokens: the fused path
    for m in (8, 160):  # the small-token and the fused path
        both = soft_distance_attention(q[:, :m], k, v, 0.5, dropout=0.1,
                                       generators=[torch.Generator().manual_seed(s) for s in (1, 2)])
        for r, seed in enumerate((1, 2)):
            torch.manual_seed(seed)
            alone = soft_distance_attention(q[2 * r:2 * r + 2, :m], k[2 * r:2 * r + 2], v[2 * r:2 * r + 2], 0.5,
                                            dropout=0.1)
            torch.testing.assert_close(both[2 * r:2 * r + 2], alone, rtol=1e-12, atol=1e-12)


# Issue 18 / issue 16 item 4: the padded SDPA widths and the tiled CPU dropout kernel give today's
# values and gradients (float64; the issue asks for 1e-5 relative, these hold far tighter).

def _qkv(b, m, n, e, scale=1.0, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = (scale * torch.randn(b, m, e, generator=gen, dtype=torch.float64)).requires_grad_()
    k = (scale * torch.randn(b, n, e, generator=gen, dtype=torch.float64)).requires_grad_()
    v = torch.randn(b, n, e, generator=gen, dtype=torch.float64, requires_grad=True)
    return q, k, v


def _values_and_grads(fn, q, k, v, seed=11):
    torch.manual_seed(seed)  # the dropout mask
    out = fn()
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(1), dtype=out.dtype)
    return [out.detach(), *torch.autograd.grad((out * grad).sum(), (q, k, v))]


def _assert_same(got, want, rtol=1e-9):
    for a, b_ in zip(got, want):
        torch.testing.assert_close(a, b_, rtol=rtol, atol=rtol * b_.abs().max().item())


@pytest.mark.parametrize("e", [4, 7, 10, 16])  # q' widths 5, 8, 11, 17: padded to 16, 16, 16, 24 on the CPU
def test_padded_sdpa_widths_give_the_unpadded_values_and_gradients(monkeypatch, e):
    import icl_kmeans.attention as att

    widths = []
    real = F.scaled_dot_product_attention

    def recording(q, k, v, **kwargs):
        widths.append((q.shape[-1], k.shape[-1], v.shape[-1]))
        return real(q, k, v, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", recording)
    q, k, v = _qkv(2, FUSED_MIN_TOKENS + 5, FUSED_MIN_TOKENS + 9, e)
    padded = _values_and_grads(lambda: soft_distance_attention(q, k, v, 0.3), q, k, v)
    assert widths == [(max(16, -(-(e + 1) // 8) * 8),) * 3]
    before = att.Kernel(width_multiple=1, min_width_cpu=0)  # the widths before issue 18
    _assert_same(padded, _values_and_grads(lambda: soft_distance_attention(q, k, v, 0.3, kernel=before), q, k, v))
    assert widths[-1] == (e + 1,) * 3
    _assert_same(padded, _values_and_grads(lambda: soft_distance_attention(q, k, v, 0.3, fused=False), q, k, v))


@pytest.mark.parametrize("tile", [1 << 18, 40000, 5000, 97])  # one tile; 2 batch elements; rows
@pytest.mark.parametrize("scale", [1.0, 40.0])
def test_tiled_dropout_kernel_gives_the_sdpa_paths_values_and_gradients(monkeypatch, tile, scale):
    import icl_kmeans.attention as att
    import icl_kmeans.attention_cpu as att_cpu

    monkeypatch.setattr(att_cpu, "TILE_SCORES", tile)
    q, k, v = _qkv(3, FUSED_MIN_TOKENS + 3, FUSED_MIN_TOKENS + 20, 6, scale=scale)
    tiled = _values_and_grads(lambda: soft_distance_attention(q, k, v, 0.4, dropout=0.05), q, k, v)
    before = att.BEFORE_ISSUE18  # the path before issue 18
    _assert_same(tiled, _values_and_grads(lambda: soft_distance_attention(q, k, v, 0.4, dropout=0.05, kernel=before),
                                          q, k, v))
    _assert_same(tiled, _values_and_grads(lambda: _materialised_with_mask(q, k, v, 0.4, 0.05, seed=11), q, k, v))


def test_tiled_kernel_tiles_cover_every_score_once_with_their_dropped_entries(monkeypatch):
    import icl_kmeans.attention_cpu as att_cpu

    b, m, n = 3, 10, 7
    dropped = torch.tensor([0, 5, 69, 70, 139, 150, 209])
    for tile in (1000, 140, 70, 30, 7, 1):
        monkeypatch.setattr(att_cpu, "TILE_SCORES", tile)
        seen, found = torch.zeros(b, m, dtype=torch.long), []
        for bs, rs, drop in att_cpu._tiles(b, m, n, dropped):
            seen[bs, rs] += 1
            flat = torch.arange(b * m * n).reshape(b, m, n)[bs, rs].reshape(-1)
            assert bs.stop - bs.start == 1 or rs == slice(0, m)  # a contiguous range of the flat index
            found.append(flat[drop])
        assert (seen == 1).all()
        assert torch.equal(torch.cat(found), dropped)


def test_small_token_paths_give_the_materialised_values_and_gradients():
    for m, n in [(FUSED_MIN_TOKENS - 1, 300), (300, 6), (5, 5)]:
        q, k, v = _qkv(2, m, n, 5)
        _assert_same(_values_and_grads(lambda: soft_distance_attention(q, k, v, 0.5), q, k, v),
                     _values_and_grads(lambda: soft_distance_attention(q, k, v, 0.5, fused=False), q, k, v))


def test_the_model_takes_its_attention_kernel_as_an_argument(monkeypatch):
    """The kernel before issue 18 (the benchmark's reference) is chosen by the model's argument, not by module
    globals: same centers, other SDPA widths."""
    from icl_kmeans.attention import BEFORE_ISSUE18

    widths, real = [], F.scaled_dot_product_attention

    def recording(q, k, v, **kwargs):
        widths.append(q.shape[-1])
        return real(q, k, v, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", recording)
    tasks = sample_tasks(2, n=FUSED_MIN_TOKENS + 10, d=3, k=4, seed=2)
    torch.manual_seed(0)
    now = ClusterTransformer(3, 4, "OH")
    before = ClusterTransformer(3, 4, "OH", kernel=BEFORE_ISSUE18)
    before.load_state_dict(now.state_dict())
    out_now = now(tasks.X, tasks.C)
    n_now = len(widths)
    out_before = before(tasks.X, tasks.C)
    torch.testing.assert_close(out_before, out_now, rtol=1e-5, atol=1e-5)
    assert set(widths[:n_now]) == {16} and 16 not in set(widths[n_now:])


def test_the_benchmarks_straightforward_attention_is_the_models_argument():
    """The benchmark's straightforward step (cdist, softmax, matmul) reaches the layer through the model's kernel
    (attention.Kernel.layer_attention), not by replacing layer.attention: same centers, the module untouched."""
    import ast
    import dataclasses
    from pathlib import Path

    from icl_kmeans import layer
    from icl_kmeans.attention import KERNEL
    from icl_kmeans.benchmark import bench

    calls = []

    def recording(*args, **kwargs):
        calls.append(args[1])
        return bench._cdist_attention(*args, **kwargs)

    tasks = sample_tasks(2, n=40, d=3, k=4, seed=3)
    torch.manual_seed(0)
    plain = ClusterTransformer(3, 4, "OH")
    cdist = ClusterTransformer(3, 4, "OH", kernel=dataclasses.replace(KERNEL, layer_attention=recording))
    cdist.load_state_dict(plain.state_dict())
    saved = layer.attention
    torch.testing.assert_close(cdist(tasks.X, tasks.C), plain(tasks.X, tasks.C), rtol=1e-4, atol=1e-5)
    assert calls == [0, 1, 2, 3] and layer.attention is saved
    tree = ast.parse(Path(bench.__file__).read_text())
    modules = {(a.asname or a.name).split(".")[0] for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
    patched = [ast.unparse(t) for node in ast.walk(tree) if isinstance(node, ast.Assign) for t in node.targets
               if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in modules]
    assert not patched, patched  # the benchmark assigns no attribute of a module it imports


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_tiled_kernels_exp_gives_torchs_exp_bit_for_bit(dtype):
    """attention_cpu._exp_ skips the CPU's slow path for subnormal and zero results: same bits as exp_,
    around both edges (normal / subnormal, subnormal / zero) and far below them, in place."""
    from icl_kmeans.attention_cpu import _exp_

    info = torch.finfo(dtype)
    normal, zero = math.log(info.tiny), math.log(info.tiny * info.eps)
    g = torch.Generator().manual_seed(3)
    edges = [torch.linspace(e - 2, e + 2, 20_001, dtype=dtype) for e in (normal, zero)]
    spread = -torch.rand(200_000, generator=g, dtype=dtype) * torch.tensor([1.0, 150.0, 1e3, 1e5], dtype=dtype).repeat(50_000)
    for x in (*edges, spread, torch.tensor([-math.inf, 0.0, -1.0], dtype=dtype), -torch.rand(3, 5, generator=g, dtype=dtype)):
        want, got = x.clone().exp_(), x.clone()
        assert _exp_(got) is not None and torch.equal(want, got), x.dtype
    # a NaN stays NaN beside results in the slow range; an empty tensor is returned as it is
    x = torch.tensor([math.nan, -1.0, -1e3, normal - 1.0], dtype=dtype)
    want, got = x.clone().exp_(), _exp_(x.clone())
    assert torch.equal(want.isnan(), got.isnan()) and torch.equal(want[1:], got[1:])
    assert _exp_(torch.empty(0, 7, dtype=dtype)).shape == (0, 7)
