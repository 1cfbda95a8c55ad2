"""train_jobs=stack: a stack job killed with SIGKILL resumes every member and ends exactly like an
uninterrupted stack job; its members' outputs are those of per-seed jobs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest
import torch

from icl_kmeans.pipeline import settings, studies
from icl_kmeans.checkpoint import model_from_checkpoint
from pipeline_utils import REPO, copy_workflow, run_snakemake, snakemake_cmd

pytestmark = pytest.mark.pipeline

OVERRIDES = ["preset=smoke", "train_jobs=stack", "stack_size=3", "steps=1500", "eval_every=50", "n_points=48",
             "batch=4"]


def _stack_of_fig2_run():
    cfg = {"preset": "smoke", "train_jobs": "stack", "stack_size": 3, "steps": 1500, "eval_every": 50,
           "n_points": 48, "batch": 4}
    s = settings.resolve(cfg)
    st = studies.build(s)
    run = st.training["fig2"][0].run
    name, members = next((k, m) for k, m in studies.stacks(st, s["seeds"], s["stack_size"]).items()
                         if (run, s["seeds"][0]) in m)
    return name, members


def _files(work, run, seed):
    d = work / "results" / "runs" / run / f"seed{seed}"
    return d / "checkpoint.pt", work / "results" / "metrics" / f"run={run}" / f"seed={seed}" / "part-0.parquet", \
        d / "record.json"


def test_sigkilled_stack_job_resumes_every_member(tmp_path):
    name, members = _stack_of_fig2_run()
    assert len(members) == 3
    targets = [f"results/runs/{r}/seed{s}/record.json" for r, s in members]
    ref = copy_workflow(tmp_path / "reference")
    run_snakemake(ref, *targets, "--cores", "1", "--config", *OVERRIDES)

    work = copy_workflow(tmp_path / "killed")
    resumes = [work / f"results/runs/{r}/seed{s}/checkpoint.pt.resume" for r, s in members]
    proc = subprocess.Popen(snakemake_cmd(*targets, "--cores", "1", "--config", *OVERRIDES), cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while not all(p.exists() for p in resumes) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert all(p.exists() for p in resumes), "no intermediate checkpoints appeared"
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not any((work / t).exists() for t in targets), "the job finished before it could be killed"
    killed_at = [torch.load(p, weights_only=False)["step"] for p in resumes]
    assert all(0 < k < 1500 for k in killed_at)

    run_snakemake(work, "--unlock", "--cores", "1", "--config", *OVERRIDES)
    run_snakemake(work, *targets, "--cores", "1", "--rerun-incomplete", "--config", *OVERRIDES)
    for (r, s), k in zip(members, killed_at):
        ckpt, metrics, record = _files(work, r, s)
        ref_ckpt, ref_metrics, _ = _files(ref, r, s)
        rec = json.loads(record.read_text())
        assert rec["status"] == "ok" and rec["steps_done"] == 1500 and rec["resumed_from"] >= k
        assert metrics.read_bytes() == ref_metrics.read_bytes()
        a, b = torch.load(ckpt, weights_only=False), torch.load(ref_ckpt, weights_only=False)
        for key, tensor in b["model"].items():
            assert torch.equal(a["model"][key], tensor), key
        # the resume file is kept (a rerun restores the finished member from it); the checkpoint is its end state
        resume = torch.load(ckpt.with_name("checkpoint.pt.resume"), weights_only=False)
        assert resume["step"] == a["step"] == 1500 and "adam" in resume and "adam" not in a
        assert all(torch.equal(resume["model"][key], tensor) for key, tensor in a["model"].items())
        model_from_checkpoint(ckpt)
    log = (work / f"results/logs/train/stack_{name}.log").read_text()
    assert "stack of 3" in log
