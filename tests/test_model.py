"""The model (science.md §2-5): embeddings, distance attention, the exact Lloyd construction (Theorem 2.1)."""

import math

import pytest
import torch

from icl_kmeans import ClusterTransformer, binary_codes, embed, embedding_width, lloyd, lloyd_transformer, sample_tasks
from icl_kmeans.attention import FUSED_MIN_TOKENS, sqdist
from icl_kmeans.baselines import has_empty_cluster

pytestmark = pytest.mark.usefixtures("single_thread")

STEPS = 10


def _theorem_cases(count: int = 32, per_case: int = 4, seed: int = 20260101):
    """(d, k, n) cases covering d in 2..32 and k in 2..100, extremes included; per_case tasks each."""
    rng = torch.Generator().manual_seed(seed)
    cases = [(2, 2), (32, 2), (2, 100), (32, 100)]
    while len(cases) < count:
        d = int(torch.randint(2, 33, (1,), generator=rng))
        k = int(torch.randint(2, 101, (1,), generator=rng))
        cases.append((d, k))
    return [(d, k, 3 * k + 40) for d, k in cases]


@pytest.mark.parametrize("embedding", ["OH", "BN"])
def test_theorem_2_1_lloyd_transformer_equals_lloyd(embedding):
    """Layer t of the exact construction is Lloyd iteration t, naive (t layers) and re-embedded (t steps)."""
    per_case = 4
    cases = _theorem_cases(per_case=per_case)
    total = excluded = checked = 0
    worst = 0.0
    for i, (d, k, n) in enumerate(cases):
        tasks = sample_tasks(per_case, n, d, k, seed=1000 + i, dtype=torch.float64)
        X, C = tasks.X, tasks.C
        keep = ~has_empty_cluster(X, C, STEPS)
        total += per_case
        excluded += int((~keep).sum())
        if not keep.any():
            continue
        X, C = X[keep], C[keep]
        reference = lloyd(X, C, STEPS)  # (STEPS, B, k, d)
        model = lloyd_transformer(d, k, embedding).double()
        assert math.isinf(model.gamma)
        for mode in ("naive", "reembed"):
            with torch.no_grad():
                out = model.cluster(X, C, STEPS, mode=mode)
            assert out.shape == reference.shape
            err = (out - reference).abs().amax(dim=(1, 2, 3))  # per task
            worst = max(worst, float(err.max()))
            assert float(err.max()) < 1e-5, f"{embedding} {mode} d={d} k={k}: max error {float(err.max()):.3g}"
        checked += int(keep.sum())
    print(f"\nTheorem 2.1 ({embedding}): {checked} tasks checked, {excluded} of {total} excluded "
          f"(Lloyd's left a cluster empty), worst error {worst:.2g}")
    assert checked >= 100
    assert excluded < total / 2, f"{excluded} of {total} tasks excluded: most tasks are not tested"


def test_theorem_needs_nonempty_clusters():
    """The exclusion matters: a task where Lloyd's empties a cluster is caught by has_empty_cluster."""
    X = torch.tensor([[[0.0, 0.0], [0.1, 0.0], [1.0, 0.0], [1.1, 0.0]]], dtype=torch.float64)
    C = torch.tensor([[[0.0, 0.0], [0.1, 0.0], [1.0, 0.0]]], dtype=torch.float64)
    assert not has_empty_cluster(X, C, 1).item()
    C2 = torch.tensor([[[0.0, 0.0], [5.0, 5.0], [1.0, 0.0]]], dtype=torch.float64)
    assert has_empty_cluster(X, C2, 1).item()


@pytest.mark.parametrize("embedding", ["OH", "BN"])
@pytest.mark.parametrize("n", [48, FUSED_MIN_TOKENS + 72])  # plain-softmax and fused-kernel paths
def test_large_finite_gamma_approaches_lloyd(embedding, n):
    d, k, steps = 4, 5, 2
    tasks = sample_tasks(6, n, d, k, seed=7, dtype=torch.float64)
    X, C = tasks.X, tasks.C
    assert not has_empty_cluster(X, C, steps).any()
    reference = lloyd(X, C, steps)
    errors = []
    for gamma in (1e1, 1e2, 1e3, 1e4, 1e5, 1e7):
        model = lloyd_transformer(d, k, embedding, gamma=gamma).double()
        assert model.gamma == gamma
        with torch.no_grad():
            errors.append(float((model.cluster(X, C, steps) - reference).abs().mean()))
    assert all(b < a for a, b in zip(errors, errors[1:])), errors
    assert errors[0] > 1e-3  # small gamma is visibly soft
    assert errors[-1] < 1e-8


def test_bn_code_matrix_matches_spec_example():
    expected = torch.tensor([[0, 1, 0, 1, 0, 1], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]], dtype=torch.float32)
    assert torch.equal(binary_codes(6), expected)
    for k in (2, 3, 4, 5, 8, 9, 100):
        B = binary_codes(k)
        assert B.shape == (math.ceil(math.log2(k)), k)
        weights = 2 ** torch.arange(B.shape[0], dtype=B.dtype)
        assert torch.equal(weights @ B, torch.arange(k, dtype=B.dtype))  # column j is j - 1 in binary, LSB first


@pytest.mark.parametrize("d,k", [(2, 2), (4, 6), (32, 10), (3, 64), (5, 65), (32, 100)])
def test_embedding_widths(d, k):
    b = math.ceil(math.log2(k))
    assert embedding_width(d, k, "OH") == d + k
    assert embedding_width(d, k, "BN") == d + b
    assert embedding_width(d, k, "NA") == d
    X, C = torch.rand(3, 2 * k, d), torch.rand(3, k, d)
    for emb, width in (("OH", d + k), ("BN", d + b), ("NA", d)):
        Xb, Cb = embed(X, C, emb)
        assert Xb.shape == (3, 2 * k, width) and Cb.shape == (3, k, width)
        assert torch.equal(Xb[..., :d], X) and torch.equal(Cb[..., :d], C)
        assert torch.all(Xb[..., d:] == 0)
        assert ClusterTransformer(d, k, emb).width == width
    assert torch.equal(embed(X, C, "OH")[1][0, :, d:], torch.eye(k))
    assert torch.equal(embed(X, C, "BN")[1][0, :, d:], binary_codes(k).T)


@pytest.mark.parametrize("n", [40, FUSED_MIN_TOKENS + 30])
@pytest.mark.parametrize("embedding", ["OH", "BN", "NA"])
def test_fused_attention_equals_materialised(n, embedding):
    """The augmented dot-product path (science.md §3 identity) computes the same layer as softmax(-g sqdist)."""
    d, k = 3, 4
    tasks = sample_tasks(2, n, d, k, seed=3, dtype=torch.float64)
    torch.manual_seed(0)
    fused = ClusterTransformer(d, k, embedding, fused=True).double()
    plain = ClusterTransformer(d, k, embedding, fused=False).double()
    plain.load_state_dict(fused.state_dict())
    with torch.no_grad():
        for mode in ("reembed", "naive"):
            a, b = fused.cluster(tasks.X, tasks.C, 3, mode), plain.cluster(tasks.X, tasks.C, 3, mode)
            assert torch.allclose(a, b, rtol=0, atol=1e-10)
    # gradients agree as well
    for m in (fused, plain):
        m.zero_grad()
        m(tasks.X, tasks.C).square().sum().backward()
    for p, q in zip(fused.parameters(), plain.parameters()):
        assert torch.allclose(p.grad, q.grad, rtol=1e-8, atol=1e-10)


def test_one_layer_matches_spec_formula():
    """forward() is science.md §4 written out with explicit matrices and a materialised softmax."""
    d, k, n = 3, 4, 20
    tasks = sample_tasks(2, n, d, k, seed=5, dtype=torch.float64)
    torch.manual_seed(1)
    model = ClusterTransformer(d, k, "OH").double()
    Xb, Cb = embed(tasks.X, tasks.C, "OH")
    g = 1.0 / math.sqrt(model.width)

    def A(head, Z, Zk):
        W = torch.softmax(-g * sqdist(Z @ head.Q.weight.T, Zk @ head.K.weight.T), dim=-1)
        return W @ (Zk @ head.V.weight.T)

    h = model.heads
    X1 = Xb + A(h[0], Xb, Cb) + A(h[1], Xb, Xb)
    C1 = Cb + A(h[2], Cb, X1) + A(h[3], Cb, Cb)
    with torch.no_grad():
        out = model(tasks.X, tasks.C)
    assert torch.allclose(out, C1[..., :d], atol=1e-12)
    assert torch.allclose(model(tasks.X[0], tasks.C[0]).detach(), out[0], atol=1e-12)  # unbatched input


def test_model_applies_to_any_n_and_is_deterministic():
    torch.manual_seed(0)
    model = ClusterTransformer(2, 3, "BN")
    for n in (3, 17, 300):
        tasks = sample_tasks(2, n, 2, 3, seed=n)
        out = model(tasks.X, tasks.C)
        assert out.shape == (2, 3, 2) and torch.isfinite(out).all()
        assert torch.equal(out, model(tasks.X, tasks.C))
    steps = model.cluster(tasks.X, tasks.C, 4)
    assert steps.shape == (4, 2, 3, 2)
    assert torch.equal(steps[0], model(tasks.X, tasks.C))
