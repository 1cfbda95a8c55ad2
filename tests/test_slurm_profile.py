"""The shipped SLURM profile and its installer (no cluster needed)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from icl_kmeans.slurm_profile import ProfileExistsError, install_profile, shipped_profile

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "workflow" / "profiles" / "slurm"
GPU_RULES = {"train", "evaluate_multistep", "evaluate_landscape", "profile_timing"}
SITE_VARS = [
    "ICL_KMEANS_SLURM_ACCOUNT", "ICL_KMEANS_SLURM_PARTITION", "ICL_KMEANS_SLURM_CPU_PARTITION",
    "ICL_KMEANS_GPU_MODEL", "ICL_KMEANS_SLURM_QOS", "ICL_KMEANS_SLURM_EXTRA",
]


def render(env: dict[str, str] | None = None) -> dict:
    """The profile as snakemake reads it (a YTE template) under the given site variables."""
    import yte

    saved = {k: os.environ.pop(k) for k in SITE_VARS if k in os.environ}
    os.environ.update(env or {})
    try:
        return yte.process_yaml(io.StringIO((PROFILE / "profile.yaml").read_text()), require_use_yte=True)
    finally:
        for k in env or {}:
            os.environ.pop(k, None)
        os.environ.update(saved)


def test_profile_contract():
    prof = render()
    assert prof["executor"] == "slurm"
    assert isinstance(prof["jobs"], int) and prof["jobs"] > 0
    assert prof["retries"] >= 1 and prof["latency-wait"] > 0
    res = prof["set-resources"]
    for rule in GPU_RULES:
        r = res[rule]
        assert r["gpu"] == 1 and r["cpus_per_gpu"] >= 1 and r["mem_mb"] > 0, rule
        assert re.fullmatch(r"\d+[mhd]", r["runtime"]), (rule, r["runtime"])
    assert "gpu" not in prof["default-resources"]  # CPU rules ask for no GPU
    assert not any(k in prof["default-resources"] for k in ("slurm_account", "slurm_partition"))
    # packing: rule train in group "train", a per-job pool of one GPU
    assert prof["groups"]["train"] == "train" and prof["group-components"]["train"] > 1
    assert prof["resources"]["gpu"] == 1 and prof["set-resource-scopes"]["gpu"] == "local"


def test_site_settings_come_from_the_environment():
    prof = render({
        "ICL_KMEANS_SLURM_ACCOUNT": "proj1", "ICL_KMEANS_SLURM_PARTITION": "gpu",
        "ICL_KMEANS_SLURM_CPU_PARTITION": "cpu", "ICL_KMEANS_GPU_MODEL": "a100",
        "ICL_KMEANS_SLURM_QOS": "high", "ICL_KMEANS_SLURM_EXTRA": "--constraint=ib",
    })
    dr = prof["default-resources"]
    assert dr["slurm_account"] == "proj1" and dr["slurm_partition"] == "cpu"
    assert dr["slurm_extra"] == "'--constraint=ib'"  # quoted: a Python string expression
    for rule in GPU_RULES:
        assert prof["set-resources"][rule]["slurm_partition"] == "gpu"
        assert prof["set-resources"][rule]["gpu_model"] == "a100"
    assert prof["slurm-qos"] == "high"


def test_gpu_rules_exist_in_the_workflow():
    rules = REPO / "workflow" / "rules"
    if not rules.is_dir() or not list(rules.glob("*.smk")):
        pytest.skip("no workflow/rules/*.smk yet")
    text = "\n".join(p.read_text() for p in rules.glob("*.smk"))
    for rule in GPU_RULES:
        assert re.search(rf"^\s*rule {rule}\s*:", text, re.M), f"rule {rule} not in workflow/rules"
    train = re.search(r"rule train\s*:(.*?)(?=^\s*rule\b|\Z)", text, re.M | re.S).group(1)
    assert re.search(r"group\s*:\s*\n?\s*\"train\"", train), "rule train should be in group 'train'"


def test_install_links_and_is_idempotent(tmp_path):
    dest = tmp_path / "snakemake" / "slurm"
    assert install_profile(dest) == dest
    assert dest.is_symlink() and dest.resolve() == shipped_profile().resolve()
    install_profile(dest)  # again: nothing to do
    assert dest.is_symlink()


def test_install_refuses_a_different_profile_unless_forced(tmp_path):
    dest = tmp_path / "slurm"
    dest.mkdir()
    (dest / "profile.yaml").write_text("executor: slurm\njobs: 1\n")
    with pytest.raises(ProfileExistsError):
        install_profile(dest)
    assert (dest / "profile.yaml").read_text().endswith("jobs: 1\n")  # untouched
    install_profile(dest, force=True)
    assert dest.is_symlink()
    backups = list(tmp_path.glob("slurm.bak-*"))
    assert len(backups) == 1 and (backups[0] / "profile.yaml").read_text().endswith("jobs: 1\n")


def test_install_replaces_a_dangling_link_and_can_copy(tmp_path):
    dest = tmp_path / "slurm"
    dest.symlink_to(tmp_path / "moved-away")
    install_profile(dest)
    assert dest.resolve() == shipped_profile().resolve()
    install_profile(dest, force=True, copy=True)  # same profile: switched to a copy, no backup
    assert dest.is_dir() and not dest.is_symlink()
    assert (dest / "profile.yaml").read_bytes() == (PROFILE / "profile.yaml").read_bytes()
    assert not list(tmp_path.glob("slurm.bak-*"))


def test_bare_profile_name_resolves_after_install(tmp_path):
    """`--profile slurm` finds the installed profile (in $XDG_CONFIG_HOME/snakemake)."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    for k in SITE_VARS:
        env.pop(k, None)
    subprocess.run([sys.executable, "-m", "icl_kmeans.slurm_profile"], env=env, check=True,
                   capture_output=True)
    work = tmp_path / "wf"
    work.mkdir()
    (work / "Snakefile").write_text(
        'rule all:\n    input: expand("r/{s}.txt", s=range(3))\n'
        'rule train:\n    output: "r/{s}.txt"\n    group: "train"\n    shell: "touch {output}"\n'
    )
    out = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "all", "--profile", "slurm"],
                         cwd=work, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    log = out.stdout + out.stderr
    assert "Using profile slurm" in log
    assert "Group job train" in log and "gpu=1" in log and "cpus_per_gpu=4" in log
