"""Loss and gap surfaces: filter-normalised directions, the centre of the grid, restored parameters."""

import numpy as np
import pytest
import torch

from icl_kmeans import ClusterTransformer, sample_tasks
from icl_kmeans.landscape import _scan, gap_surface, grid, loss_surface, random_directions
from icl_kmeans.losses import smoothed_kmeans_loss


def _model(bias=False, d=4, k=5, embedding="OH"):
    torch.manual_seed(1)
    return ClusterTransformer(d, k, embedding, bias=bias)


@pytest.fixture(scope="module")
def tasks():
    return sample_tasks(12, n=64, d=4, k=5, seed=7)


def _state(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_directions_are_filter_normalised_and_seeded():
    model = _model(bias=True)
    d1, d2 = random_directions(model, seed=3)
    params = list(model.parameters())
    assert len(d1) == len(d2) == len(params)
    for p, u, v in zip(params, d1, d2):
        assert u.shape == p.shape and u.dtype == p.dtype and u.device == p.device
        if p.dim() == 1:
            assert not u.any() and not v.any()  # biases stay put
        else:
            np.testing.assert_allclose(u.norm(dim=1), p.detach().norm(dim=1), rtol=1e-5)
            np.testing.assert_allclose(v.norm(dim=1), p.detach().norm(dim=1), rtol=1e-5)
            assert not torch.allclose(u, v)
    again, _ = random_directions(model, seed=3)
    other, _ = random_directions(model, seed=4)
    assert all(torch.equal(a, b) for a, b in zip(d1, again))
    assert not all(torch.equal(a, b) for a, b in zip(d1, other))


def test_loss_surface_centre_equals_model_loss_and_restores(tasks):
    model = _model()
    before = _state(model)
    df = loss_surface(model, tasks, 0.1, "L2", resolution=5, span=0.5, seed=0, batch_size=5)
    assert list(df.columns) == ["alpha", "beta", "loss"] and len(df) == 25
    assert df["alpha"].min() == -0.5 and df["beta"].max() == 0.5
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    with torch.no_grad():
        want = smoothed_kmeans_loss(tasks.X, model(tasks.X, tasks.C), 0.1, "L2").mean().item()
    centre = df[(df["alpha"] == 0) & (df["beta"] == 0)]["loss"]
    assert len(centre) == 1 and centre.iloc[0] == pytest.approx(want, rel=1e-6)
    assert df["loss"].std() > 1e-3 * abs(want)  # the directions really move the model


def test_parameters_restored_when_evaluation_fails(tasks):
    model = _model()
    before = _state(model)
    calls = []

    def boom(X, C):
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("boom")
        return torch.zeros(X.shape[0])

    with pytest.raises(RuntimeError, match="boom"):
        _scan(model, tasks, boom, 3, 1.0, 0, 64)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert model.training  # train/eval flag restored too


@pytest.mark.parametrize("regularizer", ["L2", "NE"])
def test_gap_is_nonnegative(tasks, regularizer):
    df = gap_surface(_model(), tasks, tau=0.1, regularizer=regularizer, resolution=3)
    assert list(df.columns) == ["alpha", "beta", "gap_mean", "gap_max"] and len(df) == 9
    assert (df["gap_mean"] >= -1e-9).all() and (df["gap_max"] >= df["gap_mean"] - 1e-6).all()
    assert (df["gap_max"] > 0).any()


def test_grid_contains_zero():
    assert 0.0 in grid(21, 1.0) and len(grid(4, 2.0)) == 4


def test_bad_input(tasks):
    model = _model()
    with pytest.raises(ValueError, match="tau=0"):
        loss_surface(model, tasks, 0, "L2")
    with pytest.raises(ValueError, match="regularizer='L1'"):
        loss_surface(model, tasks, 0.1, "L1")
    with pytest.raises(ValueError, match="resolution=1"):
        gap_surface(model, tasks, resolution=1)
    with pytest.raises(ValueError, match="span=-1"):
        gap_surface(model, tasks, span=-1)
    with pytest.raises(ValueError, match="seed=-1"):
        random_directions(model, -1)
    with pytest.raises(ValueError, match="model must be a ClusterTransformer"):
        loss_surface(torch.nn.Linear(2, 2), tasks, 0.1, "L2")
