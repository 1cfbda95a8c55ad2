"""k-means objective, smoothed losses (science.md §6), sparsemax, misclustering rate."""

import itertools

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from icl_kmeans import kmeans_objective, misclustering_rate, smoothed_kmeans_loss, sparsemax

pytestmark = pytest.mark.usefixtures("single_thread")

coords = st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def points_and_centers(draw, max_n=12, max_k=5, max_d=3):
    d = draw(st.integers(1, max_d))
    k = draw(st.integers(2, max_k))
    n = draw(st.integers(k, max_n))
    X = draw(arrays(np.float64, (n, d), elements=coords))
    C = draw(arrays(np.float64, (k, d), elements=coords))
    return torch.from_numpy(X), torch.from_numpy(C)


def brute_objective(X, C):
    return sum(min(float(((x - c) ** 2).sum()) for c in C) for x in X)


def reference_simplex_projection(z: np.ndarray) -> np.ndarray:
    """Slow reference: the threshold t with sum(max(z - t, 0)) = 1, found by bisection."""
    lo, hi = z.max() - 1.0, z.max()  # sum(max(z - lo, 0)) >= 1 >= sum(max(z - hi, 0)) = 0
    for _ in range(200):
        mid = (lo + hi) / 2
        if np.maximum(z - mid, 0).sum() > 1:
            lo = mid
        else:
            hi = mid
    return np.maximum(z - (lo + hi) / 2, 0)


@settings(max_examples=60, deadline=None)
@given(points_and_centers())
def test_kmeans_objective_is_sum_of_min_squared_distances(XC):
    X, C = XC
    assert float(kmeans_objective(X, C)) == pytest.approx(brute_objective(X, C), rel=1e-9, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(points_and_centers(), st.floats(1e-3, 1e3), st.sampled_from(["NE", "L2"]))
def test_smoothed_losses_upper_bound_kmeans_objective(XC, tau, regularizer):
    X, C = XC
    L = float(kmeans_objective(X, C))
    L_tilde = float(smoothed_kmeans_loss(X, C, tau, regularizer))
    assert L_tilde >= L - 1e-9 * (1 + abs(L))
    # P weighs nearer centers more, so it never exceeds the uniform average over centers
    uniform = float(((X[:, None, :] - C[None]) ** 2).sum(-1).mean(-1).sum())
    assert L_tilde <= uniform + 1e-9 * (1 + uniform)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 9)), elements=coords))
def test_sparsemax_on_simplex_and_matches_reference(z):
    p = sparsemax(torch.from_numpy(z)).numpy()
    assert p.shape == z.shape
    assert (p >= 0).all()
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=0, atol=1e-12)
    for row_z, row_p in zip(z, p):
        np.testing.assert_allclose(row_p, reference_simplex_projection(row_z), rtol=0, atol=1e-9)


def test_sparsemax_examples():
    z = torch.tensor([[0.0, 0.0], [3.0, 1.0], [0.5, 0.2], [1.0, 1.0]], dtype=torch.float64)
    expected = torch.tensor([[0.5, 0.5], [1.0, 0.0], [0.65, 0.35], [0.5, 0.5]], dtype=torch.float64)
    assert torch.allclose(sparsemax(z), expected, atol=1e-15)
    assert torch.equal(sparsemax(torch.tensor([[5.0, 0.0, -1.0]])), torch.tensor([[1.0, 0.0, 0.0]]))  # exactly sparse
    # invariant to adding a constant, like softmax
    z = torch.randn(5, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(sparsemax(z), sparsemax(z + 3.7), atol=1e-12)


def test_sparsemax_gradcheck():
    g = torch.Generator().manual_seed(0)
    for shape in [(3, 5), (2, 4, 6), (1, 2)]:
        z = (2 * torch.randn(*shape, dtype=torch.float64, generator=g)).requires_grad_()
        assert 1 < int((sparsemax(z) > 0).sum(-1).max()) or shape == (1, 2)
        assert torch.autograd.gradcheck(sparsemax, (z,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("regularizer", ["NE", "L2"])
def test_smoothed_loss_gradcheck(regularizer):
    g = torch.Generator().manual_seed(1)
    X = torch.rand(2, 9, 3, dtype=torch.float64, generator=g)
    C = torch.rand(2, 4, 3, dtype=torch.float64, generator=g).requires_grad_()
    assert torch.autograd.gradcheck(lambda c: smoothed_kmeans_loss(X, c, 0.1, regularizer), (C,), eps=1e-6, atol=1e-6)


@settings(max_examples=100, deadline=None)
@given(points_and_centers())
def test_l2_bound_exact_when_nearest_center_wins_by_tau(XC):
    """sparsemax(-r/tau) is one-hot when r_2nd - r_1st >= tau, so L_tilde = L exactly; NE stays strictly above."""
    X, C = XC
    r = ((X[:, None, :] - C[None]) ** 2).sum(-1)
    top2 = r.topk(2, dim=-1, largest=False).values
    margin = float((top2[:, 1] - top2[:, 0]).min())
    if margin <= 1e-3:
        return  # (near) ties: no useful tau; rounding of r is ~1e-13 here, far below the margins tested
    L = float(kmeans_objective(X, C))
    for tau in (margin * (1 - 1e-6), margin / 2, margin / 100):
        assert float(smoothed_kmeans_loss(X, C, tau, "L2")) == pytest.approx(L, rel=1e-12, abs=1e-12)
    assert float(smoothed_kmeans_loss(X, C, margin, "NE")) > L


def test_l2_bound_not_exact_below_margin():
    """The converse, so that the exactness test can fail: with margin < tau the L2 bound is strict."""
    X = torch.tensor([[0.0, 0.0]], dtype=torch.float64).expand(3, 2).contiguous()
    C = torch.tensor([[0.0, 0.0], [0.3, 0.0]], dtype=torch.float64)  # margin 0.09 for every point
    L = float(kmeans_objective(X, C))
    assert float(smoothed_kmeans_loss(X, C, 0.09, "L2")) == pytest.approx(L, abs=1e-15)
    assert float(smoothed_kmeans_loss(X, C, 0.2, "L2")) > L + 1e-3
    # per point: z = (0, -0.45), p = (0.725, 0.275), loss 0.275 * 0.09
    assert float(smoothed_kmeans_loss(X, C, 0.2, "L2")) == pytest.approx(3 * 0.275 * 0.09, rel=1e-12)


def test_batched_losses_and_mean():
    g = torch.Generator().manual_seed(2)
    X, C = torch.rand(3, 10, 2, generator=g, dtype=torch.float64), torch.rand(3, 4, 2, generator=g, dtype=torch.float64)
    for fn in (kmeans_objective, lambda a, b: smoothed_kmeans_loss(a, b, 0.1, "L2"),
               lambda a, b: smoothed_kmeans_loss(a, b, 0.1, "NE")):
        batched = fn(X, C)
        assert batched.shape == (3,)
        assert torch.allclose(batched, torch.stack([fn(x, c) for x, c in zip(X, C)]), atol=1e-14)
    # NE with softmax weights: explicit formula
    r = ((X[:, :, None] - C[:, None]) ** 2).sum(-1)
    ne = (torch.softmax(-r / 0.25, -1) * r).sum((-1, -2))
    assert torch.allclose(smoothed_kmeans_loss(X, C, 0.25, "NE"), ne, atol=1e-14)


def test_misclustering_rate_ignores_label_permutation():
    X = torch.tensor([[0.0], [0.1], [1.0], [1.1], [2.0], [2.1]])
    C = torch.tensor([[2.05], [0.05], [1.05]])
    for perm in itertools.permutations(range(3)):
        labels = torch.tensor([perm[0], perm[0], perm[1], perm[1], perm[2], perm[2]])
        assert float(misclustering_rate(labels, X, C)) == 0.0
    labels = torch.tensor([0, 0, 1, 1, 2, 0])  # one point in the wrong component
    assert float(misclustering_rate(labels, X, C)) == pytest.approx(1 / 6)
    batched = misclustering_rate(labels.expand(2, 6), X.expand(2, 6, 1), C.expand(2, 3, 1))
    assert batched.shape == (2,) and torch.allclose(batched, torch.full((2,), 1 / 6, dtype=torch.float64))
