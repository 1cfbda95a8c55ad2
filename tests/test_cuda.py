"""GPU paths: checkpoints read onto the CPU (tested on the CPU by a spy, and for real on CUDA), no host
sync per training step, stacked = single on CUDA, and a run with dropout and bias the same on CUDA as
on the CPU (its masks are drawn on the CPU from its own generator). The CUDA tests skip without a GPU;
.ci/gpu-check runs them on a lent device."""

import warnings

import pytest
import torch

import icl_kmeans.checkpoint as checkpoint_module
from icl_kmeans import TrainConfig, train, train_stack
from icl_kmeans.training import Stack, new_member

SMALL = dict(d=2, k=3, n=32, batch=8, steps=40, eval_every=10, val_batches=1, seed=1, tau=0.1)
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@pytest.mark.parametrize("stacked", [False, True])
def test_resume_reads_the_checkpoint_onto_the_cpu(tmp_path, monkeypatch, stacked):
    """Checkpoints are read onto the CPU (the stack moves the state to the device), and the dropout
    generator's state they hold is a CPU ByteTensor, which torch.Generator.set_state needs."""
    config = TrainConfig(**SMALL, dropout=0.1)
    path = tmp_path / "run.pt"
    train(config, checkpoint=path, max_steps=13)
    state = checkpoint_module.load_checkpoint(path)["rng_state"]
    assert (state.device.type, state.dtype) == ("cpu", torch.uint8)
    real_load, seen = checkpoint_module.load_checkpoint, []

    def load_spy(p, map_location="cpu"):
        seen.append(map_location)
        return real_load(p, map_location=map_location)

    monkeypatch.setattr(checkpoint_module, "load_checkpoint", load_spy)
    resumed = train_stack([config], checkpoints=[path])[0] if stacked else train(config, checkpoint=path)
    assert resumed.resumed_from == 13 and resumed.steps_done == 40
    assert seen == ["cpu"]


@cuda
@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_cuda_resume_ends_like_the_uninterrupted_run(tmp_path, dropout):
    config = TrainConfig(**SMALL, dropout=dropout)
    full = train(config, device="cuda")
    path = tmp_path / "run.pt"
    train(config, checkpoint=path, device="cuda", max_steps=13)
    resumed = train(config, checkpoint=path, device="cuda")
    assert resumed.resumed_from == 13
    cols = ["train_loss", "rel_val_loss", "lr"]
    torch.testing.assert_close(torch.tensor(resumed.metrics[cols].to_numpy()), torch.tensor(full.metrics[cols].to_numpy()),
                               rtol=1e-5, atol=1e-7, equal_nan=True)


def _sync_warnings(fn) -> int:
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught)


@cuda
def test_cuda_train_syncs_per_boundary_not_per_step():
    """As many host syncs for 40 steps as for 10 when both validate once (at the end)."""
    train(TrainConfig(**{**SMALL, "steps": 3, "eval_every": 3}), device="cuda")  # warm-up (lazy CUDA init)
    short = _sync_warnings(lambda: train(TrainConfig(**{**SMALL, "steps": 10, "eval_every": 10}), device="cuda"))
    long = _sync_warnings(lambda: train(TrainConfig(**{**SMALL, "steps": 40, "eval_every": 40}), device="cuda"))
    assert long == short, (short, long)


@cuda
def test_cuda_stack_step_never_syncs():
    configs = [TrainConfig(**{**SMALL, "seed": s}) for s in range(4)]
    st = Stack([new_member(c) for c in configs], torch.device("cuda"), torch.float32)
    st.step(0)  # warm-up
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        losses = [st.step(s) for s in range(1, 6)]
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert torch.isfinite(torch.stack(losses)).all()


@cuda
def test_cuda_stack_equals_single_runs():
    configs = [TrainConfig(**{**SMALL, "seed": s, "lr": 0.01 * (s + 1), "clip_grad": 0.5 if s % 2 else None})
               for s in range(4)]
    for s, c in zip(train_stack(configs, device="cuda"), configs):
        single = train(c, device="cuda")
        cols = ["train_loss", "rel_val_loss", "lr"]
        torch.testing.assert_close(torch.tensor(s.metrics[cols].to_numpy()), torch.tensor(single.metrics[cols].to_numpy()),
                                   rtol=1e-4, atol=1e-6, equal_nan=True)


@cuda
def test_cuda_run_with_dropout_equals_the_cpu_run():
    """Reference training (bias, dropout) at n = 128 (the fused dropout path): same masks on both devices."""
    config = TrainConfig(**{**SMALL, "n": 128, "batch": 4}, bias=True, dropout=0.01)
    on_cpu, on_cuda = train(config, device="cpu"), train(config, device="cuda")
    cols = ["train_loss", "rel_val_loss", "lr"]
    torch.testing.assert_close(torch.tensor(on_cuda.metrics[cols].to_numpy()), torch.tensor(on_cpu.metrics[cols].to_numpy()),
                               rtol=1e-3, atol=1e-6, equal_nan=True)
