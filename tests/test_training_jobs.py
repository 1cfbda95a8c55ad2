"""Training job bodies (pipeline.training_jobs.train_run): a rerun job restores finished members instead of
training them again (Snakemake deletes every output of a failed or rerun pack job)."""

import json

import pytest

from icl_kmeans.pipeline.training_jobs import train_run
from icl_kmeans.pipeline.taskfiles import write_validation_set

pytestmark = pytest.mark.usefixtures("single_thread")

DIST = dict(family="normal", n=16, d=2, k=3, isotropic=True, equal_weights=True, scale=0.1)
CONFIG = dict(DIST, embedding="OH", regularizer="L2", tau=0.1, batch=4, lr=0.01, steps=6, eval_every=3,
              val_batches=1, clip_grad=None, plateau=True, gamma=1.0, bias=True, dropout=0.01)


def _run(tmp_path, seed=5):
    val = tmp_path / "val.pt"
    if not val.exists():
        write_validation_set(DIST, seed, CONFIG["batch"], CONFIG["val_batches"], val)
    d = tmp_path / "runs" / "r" / f"seed{seed}"
    files = dict(checkpoint=d / "checkpoint.pt", metrics=d / "metrics.parquet", timing=d / "timing.parquet",
                 record=d / "record.json")
    rec = train_run("r", CONFIG, seed, val, **files, device="cpu", progress=False)
    return rec, files


def _assert_final_checkpoint_of(final, resume):
    """final is the run's end state and weights from its resume file, without optimizer state or metrics."""
    import torch

    from icl_kmeans.checkpoint import FINAL_KEYS

    a, b = torch.load(final, weights_only=False), torch.load(resume, weights_only=False)
    assert sorted(a) == sorted(FINAL_KEYS) and {"adam", "metrics", "rng_state"} <= set(b)
    assert all(torch.equal(a["model"][n], b["model"][n]) for n in b["model"])
    assert {k: v for k, v in a.items() if k != "model"} == {k: b[k] for k in FINAL_KEYS if k != "model"}
    assert final.stat().st_size < resume.stat().st_size / 2


def test_a_final_checkpoint_is_not_resumed_from(tmp_path):
    from icl_kmeans import TrainConfig, train

    _, files = _run(tmp_path)
    with pytest.raises(ValueError, match="final checkpoint"):
        train(TrainConfig.from_dict({**CONFIG, "seed": 5}), checkpoint=files["checkpoint"])


def test_a_rerun_job_restores_a_finished_run_without_training(tmp_path, monkeypatch):
    first, files = _run(tmp_path)
    assert first["resumed_from"] is None and first["steps_done"] == 6
    saved = {k: p.read_bytes() for k, p in files.items() if k != "record"}
    _assert_final_checkpoint_of(files["checkpoint"], files["checkpoint"].parent / "checkpoint.pt.resume")
    for p in files.values():  # what Snakemake does to the outputs of a job it reruns or that failed
        p.unlink()

    import icl_kmeans.training as training

    def no_training(*args, **kwargs):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(training, "sample_tasks", no_training)  # every training step samples tasks
    again, files = _run(tmp_path)
    assert again["resumed_from"] == 6 and again["status"] == "ok" and again["steps_done"] == 6
    assert {k: p.read_bytes() for k, p in files.items() if k != "record"} == saved
    rec = json.loads(files["record"].read_text())
    assert rec["wall_time"] == first["wall_time"] and rec["final_rel_val_loss"] == first["final_rel_val_loss"]


def test_training_a_run_again_writes_the_same_checkpoint_bytes(tmp_path):
    """A run is a pure function of its configuration and seed: the final checkpoint holds no wall clock."""
    _, first = _run(tmp_path / "a")
    _, again = _run(tmp_path / "b")
    assert first["checkpoint"].read_bytes() == again["checkpoint"].read_bytes()
    assert first["metrics"].read_bytes() == again["metrics"].read_bytes()


def test_a_bundle_trains_each_of_its_stacks_and_equals_them_trained_alone(tmp_path):
    """A stack job may bundle stacks of different shapes (studies.stack_jobs); it trains each stack
    together and writes every member's outputs, equal to those of the stacks trained as their own jobs."""
    import torch

    from icl_kmeans.pipeline.training_jobs import train_stack_job

    def members(root, specs):
        out = []
        for i, (cfg, seed) in enumerate(specs):
            dist = {k: cfg[k] for k in DIST}
            val = root / f"val_{cfg['d']}_{seed}.pt"
            if not val.exists():
                write_validation_set(dist, seed, cfg["batch"], cfg["val_batches"], val)
            d = root / f"m{i}"
            out.append(dict(run=f"r{i}", config=cfg, seed=seed, val=val, checkpoint=d / "checkpoint.pt",
                            metrics=d / "metrics.parquet", timing=d / "timing.parquet", record=d / "record.json"))
        return out

    other = dict(CONFIG, d=3, embedding="BN")  # another shape: another stack
    specs = [(CONFIG, 5), (other, 5), (CONFIG, 6), (other, 6)]
    bundled = members(tmp_path / "bundle", specs)
    recs = train_stack_job(bundled, device="cpu", progress=False)
    assert [r["run"] for r in recs] == ["r0", "r1", "r2", "r3"] and all(r["steps_done"] == 6 for r in recs)
    alone = members(tmp_path / "alone", specs)
    train_stack_job(alone[0::2], device="cpu", progress=False)
    train_stack_job(alone[1::2], device="cpu", progress=False)
    for a, b in zip(bundled, alone):
        sa, sb = torch.load(a["checkpoint"], weights_only=False), torch.load(b["checkpoint"], weights_only=False)
        for key, value in sa["model"].items():
            assert torch.equal(value, sb["model"][key]), (a["run"], key)
        assert a["metrics"].read_bytes() == b["metrics"].read_bytes()
