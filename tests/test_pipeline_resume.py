"""A training job killed with SIGKILL resumes from its checkpoint and ends exactly like an
uninterrupted run; a diverged run is kept and does not fail the workflow."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
import torch

from icl_kmeans.pipeline import settings, studies
from pipeline_utils import REPO, copy_workflow, run_snakemake, snakemake_cmd

pytestmark = pytest.mark.pipeline

OVERRIDES = ["preset=smoke", "train_jobs=seed", "steps=2500", "eval_every=100", "n_points=48", "batch=4"]


def _target(overrides):
    cfg = dict(o.split("=", 1) for o in overrides)
    cfg = {k: (v if k in ("preset", "train_jobs") else int(v)) for k, v in cfg.items()}
    st = studies.build(settings.resolve(cfg))
    run = st.training["fig2"][0].run
    seed = settings.resolve(cfg)["seeds"][0]
    return run, seed


def _outputs(work, run, seed):
    d = work / "results" / "runs" / run / f"seed{seed}"
    metrics = work / "results" / "metrics" / f"run={run}" / f"seed={seed}" / "part-0.parquet"
    return d / "checkpoint.pt", metrics, d / "record.json"


def test_sigkilled_training_job_resumes_to_the_same_result(tmp_path):
    run, seed = _target(OVERRIDES)
    target = f"results/runs/{run}/seed{seed}/checkpoint.pt"

    ref = copy_workflow(tmp_path / "reference")
    run_snakemake(ref, target, "--cores", "1", "--config", *OVERRIDES)

    work = copy_workflow(tmp_path / "killed")
    resume = work / (target + ".resume")
    proc = subprocess.Popen(snakemake_cmd(target, "--cores", "1", "--config", *OVERRIDES), cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while not resume.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert resume.exists(), "no intermediate checkpoint appeared"
    time.sleep(0.5)  # let it get a few checkpoints further
    os.killpg(proc.pid, signal.SIGKILL)  # the whole job: Snakemake and its training process
    proc.wait()
    ckpt, metrics, record = _outputs(work, run, seed)
    assert not record.exists(), "the job finished before it could be killed; raise steps in OVERRIDES"
    killed_at = torch.load(resume, weights_only=False)["step"]
    assert 0 < killed_at < 2500

    # What a user does after a crash (README): unlock, then rerun; incomplete outputs are redone.
    run_snakemake(work, "--unlock", "--cores", "1", "--config", *OVERRIDES)
    run_snakemake(work, target, "--cores", "1", "--rerun-incomplete", "--config", *OVERRIDES)
    rec = json.loads(record.read_text())
    assert rec["resumed_from"] is not None and rec["resumed_from"] >= killed_at
    assert rec["status"] == "ok" and rec["steps_done"] == 2500

    ref_ckpt, ref_metrics, _ = _outputs(ref, run, seed)
    assert metrics.read_bytes() == ref_metrics.read_bytes()
    a, b = torch.load(ckpt, weights_only=False), torch.load(ref_ckpt, weights_only=False)
    for name, tensor in b["model"].items():
        assert torch.equal(a["model"][name], tensor), name
    kept = torch.load(resume, weights_only=False)  # the finished state stays in the resume file
    assert kept["step"] == a["step"] == 2500 and "adam" in kept
    assert all(torch.equal(kept["model"][name], tensor) for name, tensor in a["model"].items())


def test_diverged_run_is_kept_and_does_not_fail_the_workflow(tmp_path):
    """Through stack jobs, the default preset's path (3 jobs here instead of 18 per-seed ones); the smoke
    run of test_review_pipeline.py takes the same runs through its pack jobs."""
    overrides = ["preset=smoke", "train_jobs=stack", "lr_sweep_steps=30", "eval_every=10"]
    cfg = {"preset": "smoke", "train_jobs": "stack", "lr_sweep_steps": 30, "eval_every": 10}
    st = studies.build(settings.resolve(cfg))
    # Fig 11's lr = 1.0 runs at d = 32 blow up within a few steps.
    runs = [c.run for c in st.training["fig11"] if c.facets["lr"] == 1.0 and c.facets["d"] == 32]
    seeds = settings.resolve(cfg)["seeds"]
    work = copy_workflow(tmp_path / "w")
    targets = [f"results/runs/{r}/seed{s}/record.json" for r in runs for s in seeds]
    run_snakemake(work, *targets, "--cores", "2", "--config", *overrides)
    statuses = [json.loads((work / t).read_text())["status"] for t in targets]
    assert "diverged" in statuses, statuses
    for t, status in zip(targets, statuses):
        rec = json.loads((work / t).read_text())
        if status == "diverged":
            assert rec["diverged_step"] >= 1 and (work / t).with_name("checkpoint.pt").exists()


def _jobs(proc) -> dict[str, int]:
    out = proc.stdout + proc.stderr
    if "Nothing to be done" in out:
        return {}
    block = out.split("Job stats:")[1]
    import re

    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", block, re.M) if m.group(1) != "total"}


@pytest.mark.parametrize("mode", ["seed", "pack"])
def test_adding_a_seed_trains_only_that_seed_and_the_device_reruns_nothing(tmp_path, mode):
    """Issue 9 B3: after a finished run, `--config device=cpu` reruns nothing, and one more seed runs only
    that seed's validation set and training (seed mode: its jobs; pack mode: the pack job, which restores
    the finished seed from checkpoint.pt.resume instead of training it again)."""
    cfg = {"preset": "smoke", "train_jobs": mode, "fig13_train_n": [20], "seeds": [11, 12]}
    st = studies.build(settings.resolve(cfg))
    run = next(c.run for c in st.training["fig13"] if c.facets["n"] == 20)  # a small distribution (n = 20)
    targets = lambda seeds: [f"results/runs/{run}/seed{s}/checkpoint.pt" for s in seeds]  # noqa: E731
    work = copy_workflow(tmp_path / "w")
    (work / "two.yaml").write_text(json.dumps(cfg))  # lists go in a config file: --config gives strings
    (work / "three.yaml").write_text(json.dumps({**cfg, "seeds": [11, 12, 13]}))
    two, three = ["--configfile", "two.yaml"], ["--configfile", "three.yaml"]
    run_snakemake(work, *targets([11, 12]), "--cores", "1", *two)
    before = {p: p.read_bytes() for p in (work / "results" / "runs").glob("*/seed1[12]/checkpoint.pt")}

    assert _jobs(run_snakemake(work, "-n", *targets([11, 12]), *two, "--config", "device=cpu")) == {}
    planned = _jobs(run_snakemake(work, "-n", *targets([11, 12, 13]), *three))
    trains = {k: v for k, v in planned.items() if k.startswith("train")}
    assert planned.get("validation_tasks") == 1 and list(trains.values()) == [1], planned

    run_snakemake(work, *targets([11, 12, 13]), "--cores", "1", *three)
    for p, data in before.items():
        assert p.read_bytes() == data, f"{p} was trained again"
        rec = json.loads(p.with_name("record.json").read_text())
        assert rec["resumed_from"] in (None, rec["steps_done"]), rec
    new = json.loads((work / f"results/runs/{run}/seed13/record.json").read_text())
    assert new["resumed_from"] is None and new["status"] == "ok"
