"""Stacked training (icl_kmeans.train_stack): equal to the runs trained one by one, exact resume,
per-run divergence, checkpoints interchangeable with train()."""

import functools
import math
import shutil

import numpy as np
import pytest
import torch

import icl_kmeans.run_config as run_config
from icl_kmeans import TrainConfig, train, train_stack
from icl_kmeans.checkpoint import load_checkpoint, model_from_checkpoint
from icl_kmeans.run_config import build_model, validation_tasks
from icl_kmeans.tasks import sample_tasks
from icl_kmeans.training import METRIC_COLUMNS

pytestmark = pytest.mark.usefixtures("single_thread")

COMPARED = [c for c in METRIC_COLUMNS if c != "wall_time"]
BASE = dict(d=2, k=3, n=128, batch=4, steps=200, eval_every=10, val_batches=1)
# R = 5 runs that differ in everything a stack lets differ: seed, tau, regularizer, lr, family, shift,
# clipping, scheduler (n = 128 takes the fused attention path for the self-attention of the points)
VARIED = [dict(seed=1, tau=0.1, regularizer="L2"),
          dict(seed=2, tau=1.0, regularizer="NE", lr=0.03, plateau=True),
          dict(seed=3, tau=0.25, regularizer="L2", family="cauchy", clip_grad=0.05),
          dict(seed=4, tau=0.1, regularizer="NE", isotropic=False, equal_weights=False, scale=0.2, clip_grad=1.0),
          dict(seed=5, tau=0.1, regularizer="L2", lr=0.05, plateau=True, clip_grad=0.5)]


@pytest.fixture
def float64(monkeypatch):
    """Single runs in float64: default dtype and float64 tasks (sampled in double, not cast from float32)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    monkeypatch.setattr(run_config, "sample_tasks", functools.partial(sample_tasks, dtype=torch.float64))
    yield
    torch.set_default_dtype(before)


def _close(a, b, rtol=1e-6):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=rtol, atol=0)


def _same_run(stacked, single, rtol=1e-6, params_rtol=None):
    assert (stacked.status, stacked.steps_done, stacked.diverged_step) == \
        (single.status, single.steps_done, single.diverged_step)
    assert stacked.metrics.step.tolist() == single.metrics.step.tolist()
    for col in COMPARED:
        _close(stacked.metrics[col], single.metrics[col], rtol)
    for (name, p), q in zip(stacked.model.state_dict().items(), single.model.state_dict().values()):
        torch.testing.assert_close(p, q, rtol=params_rtol or rtol, atol=1e-9, msg=name)


def test_stack_equals_runs_trained_one_by_one_float64(float64):
    configs = [TrainConfig(**BASE, **v) for v in VARIED]
    stacked = train_stack(configs, dtype=torch.float64)
    for config, s in zip(configs, stacked):
        _same_run(s, train(config))
    # each plateau scheduler acted on its own run only (and as in the single run: _same_run compares lr)
    for config, r in zip(configs, stacked):
        lrs = r.metrics.lr.unique()
        assert (lrs.min() < config.lr) if config.plateau else (lrs.tolist() == [config.lr]), (config, lrs)


def test_one_run_diverges_the_others_go_on(float64):
    """lr = 1e8 blows up; its stack neighbours are untouched, and it stops where its single run stops."""
    configs = [TrainConfig(**{**BASE, "steps": 60}, **v) for v in VARIED[:2]]
    configs.append(TrainConfig(**{**BASE, "steps": 60}, seed=7, lr=1e8, tau=1e-3))
    stacked = train_stack(configs, dtype=torch.float64)
    assert stacked[2].status == "diverged" and stacked[0].status == stacked[1].status == "ok"
    for config, s in zip(configs, stacked):
        # lr = 1e8 amplifies rounding: its (finite, ~1e8) parameters agree to 1e-3 after 2 steps
        _same_run(s, train(config), params_rtol=1e-3 if config.lr > 1 else None)
    assert all(torch.isfinite(p).all() for p in stacked[2].model.parameters())


SMALL = dict(d=2, k=3, n=32, batch=8, steps=40, eval_every=10, val_batches=1)


def _small_configs(**extra):
    return [TrainConfig(**SMALL, **{**v, **extra}) for v in VARIED[:4]]


def _assert_identical(a, b):
    assert (a.status, a.steps_done, a.diverged_step) == (b.status, b.steps_done, b.diverged_step)
    for col in COMPARED:
        _close(a.metrics[col], b.metrics[col], rtol=0)
    for p, q in zip(a.model.state_dict().values(), b.model.state_dict().values()):
        assert torch.equal(p, q)


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_interrupted_stack_resumes_to_identical_end(tmp_path, dropout):
    configs = _small_configs(dropout=dropout)
    full = train_stack(configs)
    paths = [tmp_path / f"run{i}.pt" for i in range(len(configs))]
    part = train_stack(configs, checkpoints=paths, max_steps=17)
    assert [r.steps_done for r in part] == [17] * 4 and load_checkpoint(paths[0])["step"] == 17
    resumed = train_stack(configs, checkpoints=paths)
    assert [r.resumed_from for r in resumed] == [17] * 4
    for a, b in zip(resumed, full):
        _assert_identical(a, b)
    again = train_stack(configs, checkpoints=paths)  # a finished stack trains no further
    assert [r.resumed_from for r in again] == [40] * 4
    for a, b in zip(again, full):
        _assert_identical(a, b)


def test_members_at_different_steps_catch_up(tmp_path):
    """A stack killed between two members' checkpoint writes: member 0 is one interval behind."""
    configs = _small_configs()
    full = train_stack(configs)
    paths = [tmp_path / f"run{i}.pt" for i in range(len(configs))]
    train_stack(configs, checkpoints=paths, max_steps=10)
    shutil.copy(paths[0], tmp_path / "behind.pt")
    train_stack(configs, checkpoints=paths, max_steps=30)
    shutil.copy(tmp_path / "behind.pt", paths[0])
    resumed = train_stack(configs, checkpoints=paths)
    assert [r.resumed_from for r in resumed] == [10, 30, 30, 30]
    for a, b in zip(resumed, full):
        _assert_identical(a, b)


def test_checkpoints_are_interchangeable_with_train(tmp_path):
    configs = _small_configs()
    paths = [tmp_path / f"run{i}.pt" for i in range(len(configs))]
    train_stack(configs, checkpoints=paths, max_steps=20)
    single = train(configs[2], checkpoint=paths[2])  # train() resumes a stack member
    alone = train(configs[2])
    assert single.resumed_from == 20
    for col in COMPARED:
        _close(single.metrics[col], alone.metrics[col], rtol=1e-5)
    model = model_from_checkpoint(paths[2])
    for p, q in zip(model.state_dict().values(), single.model.state_dict().values()):
        assert torch.equal(p, q)
    ckpt = load_checkpoint(paths[1])
    assert set(ckpt) == set(load_checkpoint(paths[2]))
    assert ckpt["model"]["heads.0.Q.weight"].untyped_storage().nbytes() == 4 * 5 * 5  # its own storage
    # and a stack resumes what train() wrote
    train(configs[0], checkpoint=tmp_path / "t.pt", max_steps=10)
    back = train_stack(configs[:1], checkpoints=[tmp_path / "t.pt"])[0]
    assert back.resumed_from == 10
    alone = train(configs[0])
    for col in COMPARED:
        _close(back.metrics[col], alone.metrics[col], rtol=1e-5)


def test_dropout_stack_is_sane_and_one_run_stack_matches_train():
    configs = _small_configs(dropout=0.1)
    stacked = train_stack(configs)
    again = train_stack(configs)
    for a, b in zip(stacked, again):
        _assert_identical(a, b)  # reproducible
        m = a.metrics
        assert a.status == "ok" and m.train_loss.iloc[1:].notna().all()
        assert m.train_loss.iloc[-10:].mean() < m.train_loss.iloc[1:11].mean()
    # a stack of one draws the masks the single run draws
    _same_run(train_stack(configs[:1])[0], train(configs[0]), rtol=1e-4)


def test_sampling_threads_change_nothing():
    """Tasks drawn ahead by a thread pool (the CUDA default) are the tasks drawn in line."""
    configs = _small_configs()
    for a, b in zip(train_stack(configs, sampling_threads=2), train_stack(configs, sampling_threads=0)):
        _assert_identical(a, b)


@pytest.mark.parametrize("bad,words", [
    ([dict(seed=1), dict(seed=2, k=4)], ["configs[1].k=4", "configs[0].k=3", "shares"]),
    ([dict(seed=1), dict(seed=2, n=64)], ["configs[1].n=64"]),
    ([], ["non-empty"]),
])
def test_bad_stacks_are_refused(bad, words):
    with pytest.raises(ValueError) as err:
        train_stack([{**SMALL, **b} for b in bad])
    for w in words:
        assert w in str(err.value)


def test_bad_arguments_are_refused(tmp_path):
    configs = _small_configs()[:2]
    with pytest.raises(ValueError, match="checkpoints has 1 entries for 2 configs"):
        train_stack(configs, checkpoints=[tmp_path / "a.pt"])
    with pytest.raises(ValueError, match="repeats a path"):
        train_stack(configs, checkpoints=[tmp_path / "a.pt", tmp_path / "a.pt"])
    with pytest.raises(ValueError, match="dtype"):
        train_stack(configs, dtype=torch.float16)
    assert math.isfinite(train_stack(configs, max_steps=1)[0].metrics.train_loss.iloc[1])


# The paper preset's reference training: bias and dropout 0.01; n = 128 takes the fused dropout path of the
# points' self-attention, the others the small-token path: every kind of dropout draw.
REFERENCE = dict(d=2, k=3, n=128, batch=4, steps=200, eval_every=20, val_batches=1, bias=True, dropout=0.01)


def test_a_run_is_the_same_alone_and_in_any_stack_float64(float64):
    """One run, one result: its masks, tasks and weights come from its own seed, not from its stack mates,
    the stack size or its position in the stack."""
    configs = [TrainConfig(**REFERENCE, **v) for v in VARIED[:3]]
    in_three = train_stack(configs, dtype=torch.float64)[1]
    in_two = train_stack(configs[1:], dtype=torch.float64)[0]
    alone = train(configs[1])
    for other in (in_two, alone):
        _same_run(in_three, other, rtol=1e-6)
    assert alone.metrics.train_loss.iloc[-20:].mean() < alone.metrics.train_loss.iloc[1:21].mean()
    # the masks matter: without dropout the same run ends elsewhere
    plain = train(TrainConfig(**{**REFERENCE, "dropout": 0.0}, **VARIED[1]))
    assert not np.allclose(plain.metrics.train_loss.iloc[1:], alone.metrics.train_loss.iloc[1:], rtol=1e-6)


# lr = 1e30: the first update is finite and its loss too, but it maps the validation tasks to non-finite centers
BLOWS_UP_AT_VALIDATION = dict(d=2, k=3, n=32, batch=8, steps=4, eval_every=1, val_batches=1, seed=1, tau=0.1,
                              lr=1e30)


def test_divergence_at_a_validation_keeps_the_same_state_alone_and_stacked(tmp_path):
    bad = TrainConfig(**BLOWS_UP_AT_VALIDATION)
    good = TrainConfig(**{**BLOWS_UP_AT_VALIDATION, "lr": 0.01, "seed": 2})
    alone = train(bad, checkpoint=tmp_path / "alone.pt")
    one = train_stack([bad])[0]
    with_mate = train_stack([good, bad], checkpoints=[tmp_path / "good.pt", tmp_path / "bad.pt"])
    for r in (alone, one, with_mate[1]):
        assert (r.status, r.steps_done, r.diverged_step) == ("diverged", 0, 1)
        for p, q in zip(r.model.state_dict().values(), build_model(bad).state_dict().values()):
            assert torch.equal(p, q)  # the parameters from before the update
    assert with_mate[0].status == "ok" and with_mate[0].steps_done == 4
    for path in (tmp_path / "alone.pt", tmp_path / "bad.pt"):
        ckpt = load_checkpoint(path)
        assert (ckpt["status"], ckpt["step"], ckpt["diverged_step"]) == ("diverged", 0, 1)
        val = validation_tasks(bad)
        assert torch.isfinite(model_from_checkpoint(path)(val.X, val.C)).all()


def test_a_stack_with_a_diverged_member_resumes_exactly(tmp_path):
    """The diverged member stops writing its checkpoint; the others resume from their own random state."""
    configs = [TrainConfig(**{**REFERENCE, "steps": 40, "eval_every": 10}, **v) for v in VARIED[:3]]
    # the first member diverges (a stack used to resume every member with the first one's random state)
    configs[0] = TrainConfig(**{**REFERENCE, "steps": 40, "eval_every": 10, "seed": 9, "lr": 1e30})
    full = train_stack(configs)
    bad = full[0].steps_done  # lr = 1e30 blows up within the first interval
    assert [r.status for r in full] == ["diverged", "ok", "ok"] and bad < 10
    paths = [tmp_path / f"run{i}.pt" for i in range(3)]
    train_stack(configs, checkpoints=paths, max_steps=25)
    assert [load_checkpoint(p)["step"] for p in paths] == [bad, 25, 25]
    resumed = train_stack(configs, checkpoints=paths)
    assert [r.resumed_from for r in resumed] == [bad, 25, 25]
    for a, b in zip(resumed, full):
        _assert_identical(a, b)


def test_relative_validation_loss_from_its_definition(float64):
    """The y-axis of every training figure, checked against numpy: the mean over validation tasks of
    L(X, F(X, C)) / L(X, Lloyd1(C)), L the k-means objective summed over points."""
    config = TrainConfig(**{**SMALL, "steps": 20, "val_batches": 2})
    result = train(config)
    val = validation_tasks(config)
    X, C = val.X.numpy(), val.C.numpy()

    def objective(X, C):  # sum over points of the squared distance to the nearest center
        return ((X[:, :, None, :] - C[:, None, :, :]) ** 2).sum(-1).min(-1).sum(-1)

    def lloyd_step(X, C):  # an empty cluster keeps its old center
        label = ((X[:, :, None, :] - C[:, None, :, :]) ** 2).sum(-1).argmin(-1)
        out = C.copy()
        for b in range(len(X)):
            for j in range(C.shape[1]):
                if (label[b] == j).any():
                    out[b, j] = X[b, label[b] == j].mean(0)
        return out

    with torch.no_grad():
        F_C = result.model.eval()(val.X, val.C).numpy()
    expected = np.mean(objective(X, F_C) / objective(X, lloyd_step(X, C)))
    assert result.metrics.rel_val_loss.iloc[-1] == pytest.approx(expected, rel=1e-9)
    untrained = build_model(config).to(torch.float64).eval()
    with torch.no_grad():
        first = np.mean(objective(X, untrained(val.X, val.C).numpy()) / objective(X, lloyd_step(X, C)))
    assert result.metrics.rel_val_loss.iloc[0] == pytest.approx(first, rel=1e-9)
