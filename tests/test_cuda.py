"""GPU paths: resume with the RNG states on the CPU (tested on the CPU by a spy, and for real on CUDA),
no host sync per training step, stacked = single on CUDA. The CUDA tests skip without a GPU;
.ci/gpu-check runs them on a lent device."""

import warnings

import pytest
import torch

import icl_kmeans.training as train_module
from icl_kmeans import TrainConfig, train, train_stack
from icl_kmeans.stacked import _new_member, _Stack

SMALL = dict(d=2, k=3, n=32, batch=8, steps=40, eval_every=10, val_batches=1, seed=1, tau=0.1)
cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def test_set_rng_state_takes_only_a_cpu_byte_tensor():
    """The failure a checkpoint read with map_location=<device> caused: its RNG state was on the device."""
    with pytest.raises((TypeError, RuntimeError)):
        torch.set_rng_state(torch.get_rng_state().to("meta"))


@pytest.mark.parametrize("stacked", [False, True])
def test_resume_reads_the_checkpoint_onto_the_cpu(tmp_path, monkeypatch, stacked):
    """Simulated map_location: a spy on load_checkpoint and on set_rng_state. Checkpoints are read onto
    the CPU (load_state_dict moves model and optimizer state to the device), the RNG state given back to
    torch is a CPU ByteTensor, and the CUDA RNG state has its place in the checkpoint."""
    config = TrainConfig(**SMALL, dropout=0.1)
    path = tmp_path / "run.pt"
    train(config, checkpoint=path, max_steps=13)
    assert "cuda_rng_state" in train_module.load_checkpoint(path)  # None on a CPU-only run
    real_load, real_set = train_module.load_checkpoint, torch.set_rng_state
    seen = {"map_location": [], "rng": []}

    def load_spy(p, map_location="cpu"):
        """map_location=<the run's device> (what train() used to pass) puts the RNG state on that device:
        simulated with the meta device, which torch.set_rng_state refuses as it refuses a CUDA tensor."""
        seen["map_location"].append(map_location)
        ckpt = real_load(p, map_location="cpu")
        if map_location != "cpu":
            ckpt["rng_state"] = ckpt["rng_state"].to("meta")
        return ckpt

    def set_spy(state):
        seen["rng"].append((state.device.type, state.dtype))
        return real_set(state)

    monkeypatch.setattr(train_module, "load_checkpoint", load_spy)
    monkeypatch.setattr(torch, "set_rng_state", set_spy)
    resumed = train_stack([config], checkpoints=[path])[0] if stacked else train(config, checkpoint=path)
    assert resumed.resumed_from == 13 and resumed.steps_done == 40
    assert seen["map_location"] == ["cpu"]
    assert seen["rng"] and all(r == ("cpu", torch.uint8) for r in seen["rng"])


@cuda
@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_cuda_resume_ends_like_the_uninterrupted_run(tmp_path, dropout):
    config = TrainConfig(**SMALL, dropout=dropout)
    full = train(config, device="cuda")
    path = tmp_path / "run.pt"
    train(config, checkpoint=path, device="cuda", max_steps=13)
    ckpt = train_module.load_checkpoint(path)
    assert ckpt["cuda_rng_state"] is not None and ckpt["cuda_rng_state"].device.type == "cpu"
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
    st = _Stack([_new_member(c, None, None, torch.float32) for c in configs], torch.device("cuda"), torch.float32)
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
