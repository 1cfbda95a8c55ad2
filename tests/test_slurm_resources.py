"""What a job asks SLURM for (no cluster needed): the shipped profile holds only how to run on SLURM and
the site settings; each rule declares its own resources, and the GPU rules take the site's GPU partition
and model from the environment."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from icl_kmeans.pipeline import slurm_checks

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "slurm"
GPU_RULES = {"train", "evaluate_multistep", "evaluate_landscape", "profile_timing"}
SITE_EXPORT = re.compile(r"^#?\s*export (ICL_KMEANS_(?:SLURM|GPU_MODEL)\w*)=(\"[^\"]*\"|\S+)", re.M)


def documented_site(path: Path) -> dict[str, str]:
    """The site variables as a document tells users to export them (`export ICL_KMEANS_SLURM_...=...`)."""
    return {name: value.strip('"') for name, value in SITE_EXPORT.findall(path.read_text())}


# the site settings exactly as docs/cluster.md prints them
SITE = documented_site(REPO / "docs" / "cluster.md")


def render(env: dict[str, str]) -> dict:
    """The profile as snakemake reads it (a YTE template) under the given site variables."""
    import yte

    names = [*SITE, slurm_checks.PROFILE_MARKER]  # the profile sets the marker when loaded
    saved = {k: os.environ.pop(k) for k in names if k in os.environ}
    os.environ.update(env)
    try:
        return yte.process_yaml(io.StringIO((PROFILE / "profile.yaml").read_text()), require_use_yte=True)
    finally:
        for k in {*env, *names}:
            os.environ.pop(k, None)
        os.environ.update(saved)


def dry_run(*config: str, env: dict[str, str], profile: bool = False) -> subprocess.CompletedProcess:
    """`snakemake -n` of three figures and Table 1, with the shipped profile or without."""
    return subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "fig6", "fig3", "table1",
                           *(["--profile", "slurm"] if profile else []), "--config", *config], cwd=REPO,
                          capture_output=True, text=True,
                          env={**{k: v for k, v in os.environ.items()
                                  if not k.startswith(("ICL_KMEANS_SLURM", "ICL_KMEANS_GPU_MODEL"))}, **env})


def job_resources(*config: str, env: dict[str, str], profile: bool = False) -> dict[str, list[dict]]:
    """rule -> the resources of each of its jobs, as `snakemake -n` prints them."""
    proc = dry_run(*config, env=env, profile=profile)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    jobs: dict[str, list[dict]] = {}
    rule = None
    for line in (proc.stdout + proc.stderr).splitlines():
        if m := re.match(r"^\s*(?:local)?rule (\S+):$", line):
            rule = m.group(1)
        elif (m := re.match(r"^\s*resources: (.*)$", line)) and rule:
            jobs.setdefault(rule, []).append(dict(kv.split("=", 1) for kv in m.group(1).split(", ")))
            rule = None
    return jobs


def test_the_profile_holds_how_to_run_on_slurm_and_no_rule_resources():
    prof = render({})
    assert prof["executor"] == "slurm" and prof["jobs"] > 0 and prof["retries"] >= 1 and prof["latency-wait"] > 0
    assert "set-resources" not in prof and "groups" not in prof  # declared in the rules
    assert "gpu" not in prof["default-resources"]
    assert not any(k in prof["default-resources"] for k in ("slurm_account", "slurm_partition", "slurm_extra"))
    assert prof["group-components"]["train"] > 1  # rule train's group "train" is packed
    assert prof["resources"]["gpu"] == 1
    # the gpu pool's scope is the workflow's (resource_scopes in the Snakefile), which no profile replaces
    assert "set-resource-scopes" not in prof


def test_the_documents_print_the_same_site_settings():
    assert SITE == documented_site(PROFILE / "profile.yaml")
    assert {"ICL_KMEANS_SLURM_CONSTRAINT", "ICL_KMEANS_SLURM_EXTRA", "ICL_KMEANS_SLURM_PARTITION"} <= set(SITE)


def test_the_profile_reads_the_site_settings_from_the_environment():
    prof = render(SITE)
    dr = prof["default-resources"]
    assert dr["slurm_account"] == SITE["ICL_KMEANS_SLURM_ACCOUNT"]
    assert dr["slurm_partition"] == SITE["ICL_KMEANS_SLURM_CPU_PARTITION"]
    # quoted: Python string expressions
    assert dr["constraint"] == repr(SITE["ICL_KMEANS_SLURM_CONSTRAINT"])
    assert dr["slurm_extra"] == repr(SITE["ICL_KMEANS_SLURM_EXTRA"])
    assert prof["slurm-qos"] == SITE["ICL_KMEANS_SLURM_QOS"]


def test_every_job_with_the_documented_site_settings_passes_the_plugins_validation():
    """The executor plugin's own check at submission (validation.validate_slurm_extra), run on every job of
    the dry run with the profile and the site settings docs/cluster.md prints: no option the plugin manages
    reaches slurm_extra; the constraint goes through the plugin's `constraint` resource."""
    from types import SimpleNamespace

    from snakemake_executor_plugin_slurm.validation import validate_slurm_extra

    jobs = job_resources("preset=smoke", "train_jobs=seed", env=SITE, profile=True)
    assert sum(len(v) for v in jobs.values()) > 10, jobs
    for rule, rule_jobs in jobs.items():
        for res in rule_jobs:
            assert res["slurm_extra"] == SITE["ICL_KMEANS_SLURM_EXTRA"], (rule, res)
            assert res["constraint"] == SITE["ICL_KMEANS_SLURM_CONSTRAINT"], (rule, res)
            validate_slurm_extra(SimpleNamespace(resources=SimpleNamespace(**res)))


@pytest.mark.parametrize("flags,instead", [("--constraint=ib", "ICL_KMEANS_SLURM_CONSTRAINT"),
                                           ("-p gpu", "ICL_KMEANS_SLURM_PARTITION"),
                                           ("--mail-type=FAIL --qos=high", "ICL_KMEANS_SLURM_QOS"),
                                           ("--gres=gpu:2", "ICL_KMEANS_GPU_MODEL")])
def test_a_flag_the_plugin_manages_stops_the_dry_run_with_the_setting_to_use(flags, instead):
    proc = dry_run("preset=smoke", env={"ICL_KMEANS_SLURM_EXTRA": flags}, profile=True)
    assert proc.returncode != 0
    log = proc.stdout + proc.stderr
    assert f"ICL_KMEANS_SLURM_EXTRA={flags!r}" in log and instead in log, log[-3000:]


def test_gpu_rules_declare_one_gpu_and_the_site_gpu_partition():
    per_seed = job_resources("preset=smoke", "train_jobs=seed", env=SITE)
    stacked = job_resources("preset=smoke", "train_jobs=stack", env={})
    assert GPU_RULES <= set(per_seed), sorted(per_seed)
    stack_rules = [r for r in stacked if r.startswith("train_stack_")]
    assert stack_rules, sorted(stacked)
    for rule, jobs in per_seed.items():
        for res in jobs:
            if rule in GPU_RULES:
                assert res["gpu"] == "1" and res["cpus_per_gpu"] == "4" and int(res["runtime"]) > 0, (rule, res)
                assert res["slurm_partition"] == "gpu" and res["gpu_model"] == "a100", (rule, res)
            else:
                assert "gpu" not in res and "slurm_partition" not in res, (rule, res)
    for rule in stack_rules:
        for res in stacked[rule]:
            assert res["gpu"] == "1" and int(res["runtime"]) > 0, (rule, res)
            assert "slurm_partition" not in res and "gpu_model" not in res, (rule, res)  # no site settings given


def test_training_jobs_ask_for_the_formula_of_their_steps_and_runs():
    """Run time and memory of every training job: slurm_resources.training_resources of its longest
    member's steps and its number of runs, at the GPU step time the environment names."""
    from icl_kmeans.pipeline.slurm_resources import training_resources

    env = {"ICL_KMEANS_GPU_STEP_SECONDS": "60"}
    # smoke: 4 steps, headline cells 6 steps
    stacked = job_resources("preset=smoke", "train_jobs=stack", env=env)
    per_seed = job_resources("preset=smoke", "train_jobs=seed", env=env)
    seen = set()
    for jobs in [v for k, v in stacked.items() if k.startswith("train_stack_")] + [per_seed["train"]]:
        for res in jobs:
            runs = (int(res["mem_mb"]) - 8000) // 100
            steps = {s for s in (4, 6) if training_resources(s, runs, 60)["runtime"] == int(res["runtime"])}
            assert steps, res
            seen |= steps
    assert training_resources(4, 1, 60)["runtime"] != training_resources(6, 1, 60)["runtime"]
    assert seen == {4, 6}, seen
