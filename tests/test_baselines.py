"""Classical baselines (science.md §1): Lloyd's algorithm and EM, against slow reference implementations."""

import numpy as np
import pytest
import torch
from scipy.special import logsumexp

from icl_kmeans import em, kmeans_objective, lloyd, sample_tasks
from icl_kmeans.baselines import has_empty_cluster

pytestmark = pytest.mark.usefixtures("single_thread")


def reference_lloyd(X: np.ndarray, C: np.ndarray, steps: int) -> list[np.ndarray]:
    out = []
    C = C.copy()
    for _ in range(steps):
        a = np.array([np.argmin([((x - c) ** 2).sum() for c in C]) for x in X])
        C = np.stack([X[a == j].mean(0) if (a == j).any() else C[j] for j in range(len(C))])
        out.append(C)
    return out


def reference_em_states(X: np.ndarray, C: np.ndarray, steps: int) -> list[tuple]:
    """EM for a k-component Gaussian mixture with one shared isotropic variance: (mu, log_pi, var) at
    the start and after each step."""
    n, d = X.shape
    mu, log_pi = C.copy(), np.full(len(C), -np.log(len(C)))
    var = ((X[:, None] - mu[None]) ** 2).sum(-1).min(1).sum() / (n * d)
    states = [(mu, log_pi, var)]
    for _ in range(steps):
        D = ((X[:, None] - mu[None]) ** 2).sum(-1)
        logits = log_pi - D / (2 * var)
        resp = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
        Nk = resp.sum(0)
        mu = resp.T @ X / Nk[:, None]
        log_pi = np.log(Nk / n)
        var = (resp * ((X[:, None] - mu[None]) ** 2).sum(-1)).sum() / (n * d)
        states.append((mu, log_pi, var))
    return states


def reference_em(X: np.ndarray, C: np.ndarray, steps: int) -> list[np.ndarray]:
    """The means after each EM step (reference_em_states)."""
    return [mu for mu, _, _ in reference_em_states(X, C, steps)[1:]]


def log_likelihood(X, mu, log_pi, var):
    n, d = X.shape
    D = ((X[:, None] - mu[None]) ** 2).sum(-1)
    return logsumexp(log_pi - D / (2 * var) - d / 2 * np.log(2 * np.pi * var), axis=1).sum()


@pytest.mark.parametrize("seed", range(4))
def test_lloyd_matches_reference(seed):
    tasks = sample_tasks(3, 60, 3, 5, seed=seed, dtype=torch.float64)
    out = lloyd(tasks.X, tasks.C, 6)
    assert out.shape == (6, 3, 5, 3)
    for b in range(3):
        ref = reference_lloyd(tasks.X[b].numpy(), tasks.C[b].numpy(), 6)
        for t in range(6):
            np.testing.assert_allclose(out[t, b].numpy(), ref[t], rtol=0, atol=1e-12)
    # the objective never increases along Lloyd's iterations
    objs = torch.stack([kmeans_objective(tasks.X, tasks.C)] + [kmeans_objective(tasks.X, c) for c in out])
    assert (objs[1:] <= objs[:-1] + 1e-12).all()


def test_lloyd_unbatched_and_empty_cluster_conventions():
    X = torch.tensor([[0.0, 0.0], [0.2, 0.0], [1.0, 0.0], [1.2, 0.0]], dtype=torch.float64)
    C = torch.tensor([[0.0, 0.0], [1.0, 0.0], [9.0, 9.0]], dtype=torch.float64)  # third center gets no point
    out = lloyd(X, C, 2)
    assert out.shape == (2, 3, 2)
    expected = torch.tensor([[0.1, 0.0], [1.1, 0.0], [9.0, 9.0]], dtype=torch.float64)
    assert torch.allclose(out[0], expected) and torch.allclose(out[1], expected)  # "keep": empty stays put
    assert has_empty_cluster(X[None], C[None], 1).tolist() == [True]
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    re1 = lloyd(X, C, 1, empty="reseed", generator=g1)[0]
    re2 = lloyd(X, C, 1, empty="reseed", generator=g2)[0]
    assert torch.equal(re1, re2)  # reproducible from the generator
    assert torch.allclose(re1[:2], expected[:2])
    assert any(torch.equal(re1[2], x) for x in X)  # re-seeded with one of the task's points


def test_reseed_gives_empty_clusters_distinct_points():
    """As the authors' code: several empty clusters of one task never share a re-seeding point."""
    X = torch.tensor([[0.0, 0.0], [0.1, 0.0], [0.2, 0.0], [1.0, 0.0], [1.1, 0.0]], dtype=torch.float64)
    C = torch.tensor([[0.0, 0.0], [9.0, 9.0], [9.0, 8.0], [8.0, 9.0], [8.0, 8.0]], dtype=torch.float64)  # 4 empty
    for seed in range(200):
        out = lloyd(X, C, 1, empty="reseed", generator=torch.Generator().manual_seed(seed))[0]
        picked = out[1:]
        assert all(any(torch.equal(p, x) for x in X) for p in picked)
        assert len({tuple(p.tolist()) for p in picked}) == 4, (seed, picked)


@pytest.mark.parametrize("seed", range(3))
def test_em_matches_reference_and_increases_likelihood(seed):
    tasks = sample_tasks(2, 50, 2, 4, seed=seed, dtype=torch.float64)
    out = em(tasks.X, tasks.C, 8)
    assert out.shape == (8, 2, 4, 2)
    for b in range(2):
        X, C = tasks.X[b].numpy(), tasks.C[b].numpy()
        ref = reference_em(X, C, 8)
        for t in range(8):
            np.testing.assert_allclose(out[t, b].numpy(), ref[t], rtol=0, atol=1e-9)
    # EM's guarantee, checked on the reference's full parameters
    X, C = tasks.X[0].numpy(), tasks.C[0].numpy()
    lls = [log_likelihood(X, mu, log_pi, var) for mu, log_pi, var in reference_em_states(X, C, 8)]
    assert all(b >= a - 1e-9 for a, b in zip(lls, lls[1:]))


def test_em_close_to_lloyd_on_separated_clusters():
    g = torch.Generator().manual_seed(0)
    centers = torch.tensor([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]], dtype=torch.float64)
    X = (centers.repeat_interleave(30, 0) + 0.05 * torch.randn(90, 2, generator=g, dtype=torch.float64))
    C = X[[0, 30, 60]]
    assert torch.allclose(em(X, C, 5)[-1], lloyd(X, C, 5)[-1], atol=1e-6)


@pytest.mark.parametrize("family", ["normal", "cauchy", "lognormal"])
def test_one_lloyd_step_from_initial_centers_is_the_same_under_both_conventions(family):
    """The relative validation loss divides by one Lloyd step from C, whose centers are data points:
    each keeps its own point, so keep and reseed (the reference's) agree there (README, lloyd_empty)."""
    t = sample_tasks(64, n=256, d=4, k=6, family=family, seed=5)
    keep = lloyd(t.X, t.C, 1)
    torch.testing.assert_close(keep, lloyd(t.X, t.C, 1, empty="reseed", generator=torch.Generator().manual_seed(0)),
                               rtol=0, atol=0)
