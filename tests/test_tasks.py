"""Task generation (science.md §8)."""

import pytest
import torch

from icl_kmeans import FAMILIES, TaskBatch, sample_tasks

pytestmark = pytest.mark.usefixtures("single_thread")


def _same(a: TaskBatch, b: TaskBatch) -> bool:
    return all(torch.equal(getattr(a, f), getattr(b, f))
               for f in ("X", "C", "labels", "locations", "scales", "weights")) and a.params == b.params


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("isotropic,equal_weights", [(True, True), (False, False)])
def test_shapes_range_and_initial_centers(family, isotropic, equal_weights):
    B, n, d, k = 3, 80, 4, 6
    t = sample_tasks(B, n, d, k, family=family, isotropic=isotropic, equal_weights=equal_weights, seed=1)
    assert t.X.shape == (B, n, d) and t.C.shape == (B, k, d) and t.labels.shape == (B, n)
    assert t.locations.shape == (B, k, d) and t.scales.shape == (B, k, d) and t.weights.shape == (B, k)
    assert t.X.dtype == torch.float32 and torch.isfinite(t.X).all()
    # per-task, per-dimension min-max scaling into [0, 1]
    assert torch.allclose(t.X.amin(1), torch.zeros(B, d)) and torch.allclose(t.X.amax(1), torch.ones(B, d))
    assert t.labels.min() >= 0 and t.labels.max() < k
    assert torch.allclose(t.weights.sum(-1), torch.ones(B))
    assert ((0 <= t.locations) & (t.locations <= 1)).all()
    if isotropic:
        assert torch.all(t.scales == 0.1)
    else:
        assert ((0 <= t.scales) & (t.scales <= 0.1)).all() and t.scales.std() > 0
    if equal_weights:
        assert torch.allclose(t.weights, torch.full((B, k), 1 / k))
    else:
        assert t.weights.std() > 0
    # C is k distinct points of X
    for b in range(B):
        match = (t.C[b][:, None, :] == t.X[b][None]).all(-1)  # (k, n)
        assert match.any(1).all()
        idx = match.float().argmax(1)
        assert len(set(idx.tolist())) == k


def test_seed_and_generator_determine_the_tasks():
    a = sample_tasks(4, 50, 3, 5, seed=42)
    b = sample_tasks(4, 50, 3, 5, seed=42)
    c = sample_tasks(4, 50, 3, 5, generator=torch.Generator().manual_seed(42))
    assert _same(a, b) and _same(a, c)
    assert not torch.equal(a.X, sample_tasks(4, 50, 3, 5, seed=43).X)
    g = torch.Generator().manual_seed(0)
    first, second = sample_tasks(2, 50, 3, 5, generator=g), sample_tasks(2, 50, 3, 5, generator=g)
    assert not torch.equal(first.X, second.X)  # the generator advances
    # float64 tasks are the same draws, not rounded to float32 before scaling
    hi = sample_tasks(4, 50, 3, 5, seed=42, dtype=torch.float64)
    assert hi.X.dtype == torch.float64 and torch.allclose(hi.X.float(), a.X) and torch.equal(hi.labels, a.labels)


def test_mixture_statistics():
    """Labels follow the weights; within a component the spread follows the scale (normal family)."""
    t = sample_tasks(8, 4000, 2, 3, equal_weights=False, seed=3, dtype=torch.float64)
    freq = torch.nn.functional.one_hot(t.labels, 3).double().mean(1)
    assert (freq - t.weights).abs().max() < 0.04
    # min-max scaling divides by the raw range R; recover R from the two component means (their raw
    # distance is the distance of the locations), then the within-component std times R is the scale
    t = sample_tasks(1, 20000, 1, 2, seed=4, dtype=torch.float64)
    loc = t.locations[0, :, 0]
    raw_range = (loc.max() - loc.min()) / (t.X[0][t.labels[0] == loc.argmax(), 0].mean()
                                           - t.X[0][t.labels[0] == loc.argmin(), 0].mean())
    for j in range(2):
        std = t.X[0][t.labels[0] == j, 0].std() * raw_range
        assert abs(std - 0.1) < 0.01


def test_scale_is_a_distribution_shift():
    narrow = sample_tasks(4, 400, 2, 4, scale=0.05, seed=9)
    wide = sample_tasks(4, 400, 2, 4, scale=0.2, seed=9)
    assert torch.equal(narrow.locations, wide.locations) and torch.equal(narrow.labels, wide.labels)
    assert narrow.params["scale"] == 0.05 and wide.params["scale"] == 0.2
    assert not torch.equal(narrow.X, wide.X)


def test_batch_helpers():
    t = sample_tasks(5, 20, 2, 3, seed=0)
    assert len(t) == 5 and len(t[1:3]) == 2 and torch.equal(t[1:3].X, t.X[1:3])
    assert _same(TaskBatch.cat([t[:2], t[2:]]), t)
    assert _same(t.to("cpu"), t)


@pytest.mark.parametrize("family", ["cauchy", "laplace"])
def test_inverse_cdf_tails_are_capped_symmetrically(family, monkeypatch):
    """The smallest and the largest uniform draw float64 can give (0 and 1 - 2^-53) must map to noise
    of the same magnitude: a symmetric family gets symmetric tails (issue 9, A8)."""
    from icl_kmeans import tasks as tasks_mod

    extremes = torch.tensor([0.0, 1 - 2.0 ** -53], dtype=torch.float64)
    monkeypatch.setattr(tasks_mod.torch, "rand", lambda *a, **kw: extremes.clone())
    noise = tasks_mod._standard_noise(family, (2,), torch.Generator(), torch.float64)
    assert noise[0] < 0 < noise[1]
    assert abs(noise[0]).item() == pytest.approx(abs(noise[1]).item(), rel=1e-6)
    if family == "cauchy":
        assert abs(noise).max().item() < 1e7  # ~ 1 / (pi * 1e-7): float32 min-max scaling keeps the bulk
