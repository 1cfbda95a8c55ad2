"""A SLURM run that would go wrong stops before its first submission, naming the fix
(workflow/rules/slurm_checks.smk, icl_kmeans.pipeline.slurm_checks; docs/cluster.md). No cluster needed:
the checks run before anything is submitted, so these runs end before the executor calls sbatch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from icl_kmeans.pipeline import slurm_checks

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "slurm"
NOT_SUBMITTING = "not submitting anything"


def run(tmp_path, *args, profiles=(str(PROFILE),), env=None, cwd=None):
    """A real (not dry) run of fig6 on the smoke preset with per-seed training (packed on SLURM), outside the
    repository (-s/-d): its working directory is tmp_path/work."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ICL_KMEANS_SLURM")}
    base.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"), **(env or {}))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(work), "fig6",
           "--cores", "1", *[a for p in profiles for a in ("--profile", p)], *args,
           "--config", "preset=smoke", "train_jobs=seed"]
    proc = subprocess.run(cmd, cwd=cwd or tmp_path, env=base, capture_output=True, text=True, timeout=300)
    proc.log = proc.stdout + proc.stderr
    assert proc.returncode != 0, proc.log[-3000:]
    assert NOT_SUBMITTING in proc.log, proc.log[-3000:]
    # nothing ran: no result, no SLURM log
    assert not (work / "results").exists() and not (work / ".snakemake" / "slurm_logs").exists()
    return proc.log


def test_resources_on_the_command_line_without_gpu_stop_packing(tmp_path):
    log = run(tmp_path, "--resources", "mem_mb=64000")
    assert "group-components train=16" in log and "no `gpu`" in log and "--resources gpu=1" in log, log[-3000:]


def test_a_second_profiles_resources_without_gpu_stop_packing(tmp_path):
    mine = tmp_path / "mysite"
    mine.mkdir()
    (mine / "profile.yaml").write_text("resources:\n  mem_mb: 64000\n")
    log = run(tmp_path, profiles=(str(PROFILE), str(mine)))
    assert "no `gpu`" in log, log[-3000:]


def test_more_than_one_gpu_per_packed_job_stops(tmp_path):
    log = run(tmp_path, "--resources", "gpu=2")
    assert "resources give gpu=2" in log, log[-3000:]


def test_a_cluster_wide_gpu_scope_stops(tmp_path):
    log = run(tmp_path, "--set-resource-scopes", "gpu=global")
    assert "scoped per SLURM job" in log and "'global'" in log, log[-3000:]


def test_outside_the_repository_a_users_own_slurm_profile_does_not_win_silently(tmp_path):
    """`--profile slurm` from another directory finds ~/.config/snakemake/slurm, not the project's."""
    theirs = tmp_path / "home" / ".config" / "snakemake" / "slurm"
    theirs.mkdir(parents=True)
    (theirs / "profile.yaml").write_text("executor: slurm\njobs: 5\n")
    log = run(tmp_path, profiles=("slurm",))
    assert f"--profile {REPO}/slurm" in log, log[-3000:]


@pytest.mark.parametrize("flags,names", [("--mail-type=FAIL", []), ("--constraint=ib -J x", ["job name", "node constraints"])])
def test_forbidden_options_are_the_plugins(flags, names):
    assert slurm_checks.forbidden_options(flags) == names
    assert (slurm_checks.extra_flags_problem(flags) is None) == (not names)


def test_packing_problem_is_none_only_for_one_local_gpu():
    assert slurm_checks.packing_problem({"train": 16}, 1, "local") is None
    assert slurm_checks.packing_problem({"train": 1}, None, None) is None  # nothing packed
    assert slurm_checks.packing_problem({"train": 16}, None, "local")
    assert slurm_checks.packing_problem({"train": 16}, 1, "global")
