"""Training (science.md §7): learning, determinism, exact resume, divergence handling."""

import math

import pandas as pd
import pytest
import torch

import icl_kmeans.training_math as training_math
from icl_kmeans import TrainConfig, train
from icl_kmeans.checkpoint import load_checkpoint, model_from_checkpoint
from icl_kmeans.run_config import build_model, validation_tasks
from icl_kmeans.training import METRIC_COLUMNS

pytestmark = pytest.mark.usefixtures("single_thread")

SMALL = dict(d=2, k=3, n=32, batch=8, steps=60, eval_every=20, val_batches=1, seed=1, tau=0.1)
COMPARED = [c for c in METRIC_COLUMNS if c != "wall_time"]


def _assert_same_tensors(a: dict, b: dict):
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def _assert_same_optimizer(a: dict, b: dict):
    """Adam's state in a checkpoint: its step count and both moments of every parameter."""
    assert a["step"] == b["step"]
    _assert_same_tensors(a["exp_avg"], b["exp_avg"])
    _assert_same_tensors(a["exp_avg_sq"], b["exp_avg_sq"])


def test_public_train_is_callable():
    import icl_kmeans

    assert callable(icl_kmeans.train) and callable(train)


@pytest.mark.parametrize("regularizer", ["L2", "NE"])
def test_small_config_lowers_training_loss(regularizer):
    result = train(TrainConfig(**SMALL, regularizer=regularizer))
    m = result.metrics
    assert result.status == "ok" and result.steps_done == SMALL["steps"] and result.diverged_step is None
    assert list(m.columns) == list(METRIC_COLUMNS)
    assert m.step.tolist() == list(range(SMALL["steps"] + 1))
    assert math.isnan(m.train_loss.iloc[0]) and m.train_loss.iloc[1:].notna().all()
    first, last = m.train_loss.iloc[1:11].mean(), m.train_loss.iloc[-10:].mean()
    assert last < 0.8 * first, (first, last)
    rel = m.rel_val_loss.dropna()
    assert m.step[rel.index].tolist() == [0, 20, 40, 60]  # evaluated every eval_every steps
    assert rel.iloc[-1] < rel.iloc[0]
    assert (m.wall_time.diff().iloc[1:] >= 0).all()


def test_same_seed_gives_identical_metrics_and_checkpoints(tmp_path):
    config = TrainConfig(**{**SMALL, "steps": 30, "eval_every": 10})
    a = train(config, checkpoint=tmp_path / "a.pt")
    b = train(config, checkpoint=tmp_path / "b.pt")
    pd.testing.assert_frame_equal(a.metrics[COMPARED], b.metrics[COMPARED])
    ca, cb = load_checkpoint(tmp_path / "a.pt"), load_checkpoint(tmp_path / "b.pt")
    assert ca["config"] == cb["config"] == config.to_dict()
    assert ca["step"] == cb["step"] == 30
    _assert_same_tensors(ca["model"], cb["model"])
    _assert_same_optimizer(ca["adam"], cb["adam"])
    assert ca["adam"]["step"] == 30 and ca["lr"] == config.lr
    _assert_same_tensors(a.model.state_dict(), ca["model"])
    # a different seed is a different run
    c = train(TrainConfig(**{**SMALL, "steps": 30, "eval_every": 10, "seed": 2}))
    assert not a.metrics.train_loss.iloc[1:].equals(c.metrics.train_loss.iloc[1:])


@pytest.mark.parametrize("plateau,stop,dropout", [(False, 13, 0.0), (True, 20, 0.0), (False, 7, 0.1)])
def test_interrupted_run_resumes_to_identical_end(tmp_path, plateau, stop, dropout):
    """Model, optimizer, scheduler, metrics and (with dropout) the random state all carry over."""
    config = TrainConfig(**{**SMALL, "steps": 40, "eval_every": 10, "plateau": plateau, "clip_grad": 1.0,
                            "dropout": dropout})
    full = train(config)
    path = tmp_path / "run.pt"
    part = train(config, checkpoint=path, max_steps=stop)
    assert part.status == "ok" and part.steps_done == stop
    assert load_checkpoint(path)["step"] == stop
    resumed = train(config, checkpoint=path)
    assert resumed.resumed_from == stop and resumed.steps_done == 40
    pd.testing.assert_frame_equal(resumed.metrics[COMPARED], full.metrics[COMPARED])
    _assert_same_tensors(resumed.model.state_dict(), full.model.state_dict())
    _assert_same_tensors(load_checkpoint(path)["model"], full.model.state_dict())
    # resuming a finished run trains no further
    again = train(config, checkpoint=path)
    assert again.steps_done == 40
    pd.testing.assert_frame_equal(again.metrics[COMPARED], full.metrics[COMPARED])


def test_checkpoint_of_another_config_is_refused(tmp_path):
    path = tmp_path / "run.pt"
    train(TrainConfig(**{**SMALL, "steps": 2}), checkpoint=path)
    with pytest.raises(ValueError, match="another configuration"):
        train(TrainConfig(**{**SMALL, "steps": 2, "lr": 0.02}), checkpoint=path)


def test_diverging_run_stops_saves_and_reports(tmp_path, monkeypatch, capsys):
    real = training_math.smoothed_loss
    calls = {"n": 0}

    def loss_that_blows_up(*args, **kwargs):
        calls["n"] += 1
        value = real(*args, **kwargs)
        return value * math.nan if calls["n"] >= 5 else value  # the 5th training step is non-finite

    monkeypatch.setattr(training_math, "smoothed_loss", loss_that_blows_up)
    path = tmp_path / "run.pt"
    result = train(TrainConfig(**{**SMALL, "steps": 20, "eval_every": 2}), checkpoint=path)
    assert result.status == "diverged"
    assert result.diverged_step == 5 and result.steps_done == 4
    assert result.metrics.step.tolist() == [0, 1, 2, 3, 4]
    assert result.metrics.train_loss.iloc[1:].notna().all()  # no garbage rows
    assert all(torch.isfinite(p).all() for p in result.model.parameters())
    assert "diverged at step 5" in capsys.readouterr().err
    ckpt = load_checkpoint(path)
    assert ckpt["status"] == "diverged" and ckpt["diverged_step"] == 5 and ckpt["step"] == 4
    _assert_same_tensors(ckpt["model"], result.model.state_dict())
    # resuming a diverged run does not train on
    monkeypatch.setattr(training_math, "smoothed_loss", real)
    again = train(TrainConfig(**{**SMALL, "steps": 20, "eval_every": 2}), checkpoint=path)
    assert again.status == "diverged" and again.steps_done == 4


def test_huge_learning_rate_diverges_without_exception(tmp_path):
    """A real (not injected) blow-up: the model's output or loss turns non-finite."""
    config = TrainConfig(**{**SMALL, "steps": 200, "eval_every": 50, "lr": 1e8, "tau": 1e-3})
    result = train(config, checkpoint=tmp_path / "run.pt")
    assert result.status == "diverged", result.metrics.tail()
    assert 1 <= result.diverged_step <= 200 and result.steps_done == result.diverged_step - 1
    assert load_checkpoint(tmp_path / "run.pt")["status"] == "diverged"


def test_relative_loss_is_nan_for_the_run_whose_centers_are_not_finite():
    """Stack.relative_loss (the one relative validation loss) flags the run, not its stack mate."""
    from icl_kmeans.training import Stack, new_member

    members = [new_member(TrainConfig(**SMALL)), new_member(TrainConfig(**{**SMALL, "seed": 2}))]
    members[1].params["heads.2.V.weight"].fill_(math.inf)  # its centers become non-finite
    stack = Stack(members, torch.device("cpu"), torch.float32)
    good, bad = stack.relative_loss()
    assert math.isfinite(good) and math.isnan(bad)


def test_divergence_at_a_validation_keeps_the_last_finite_parameters(tmp_path, capsys):
    """lr = 1e30: the training loss of step 1 is finite, the update makes the validation outputs
    non-finite. The run must keep (and save) the parameters from before that update."""
    config = TrainConfig(**{**SMALL, "steps": 4, "eval_every": 1, "lr": 1e30})
    result = train(config, checkpoint=tmp_path / "run.pt")
    assert result.status == "diverged" and result.diverged_step == 1 and result.steps_done == 0
    assert result.model.training
    ckpt = load_checkpoint(tmp_path / "run.pt")
    assert ckpt["step"] == 0 and ckpt["status"] == "diverged"
    _assert_same_tensors(ckpt["model"], build_model(config).state_dict())  # the state before the bad update
    val = validation_tasks(config)
    assert torch.isfinite(model_from_checkpoint(tmp_path / "run.pt")(val.X, val.C)).all()
    assert "kept the state of step 0" in capsys.readouterr().err


def test_truncated_checkpoint_is_moved_aside_and_the_run_retrains(tmp_path, capsys):
    """A checkpoint cut short (a crash outside our atomic writes, a full disk) gives a clear error on
    loading, and train() moves it to <name>.corrupt, says so, and ends exactly like a fresh run."""
    from icl_kmeans.checkpoint import CorruptCheckpointError

    config = TrainConfig(**{**SMALL, "steps": 12, "eval_every": 4})
    path = tmp_path / "run.pt"
    train(config, checkpoint=path, max_steps=8)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    for load in (load_checkpoint, model_from_checkpoint):
        with pytest.raises(CorruptCheckpointError, match="run.pt: unreadable checkpoint.*truncated"):
            load(path)
    capsys.readouterr()
    result = train(config, checkpoint=path)
    err = capsys.readouterr().err
    assert "unreadable checkpoint" in err and "run.pt.corrupt" in err and "from scratch" in err
    assert (tmp_path / "run.pt.corrupt").read_bytes() == whole[: len(whole) // 2]
    assert result.status == "ok" and result.resumed_from is None and result.steps_done == 12
    fresh = train(config)
    pd.testing.assert_frame_equal(result.metrics[COMPARED], fresh.metrics[COMPARED])
    assert load_checkpoint(path)["step"] == 12
