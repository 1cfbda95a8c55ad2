"""Helpers for tests that run Snakemake for real in a scratch copy of the workflow."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_PARTS = ("Snakefile", "config.yaml", "workflow", "envs", "src", "pyproject.toml")


def copy_workflow(dest: Path) -> Path:
    """The workflow without results/ or .snakemake/ (so nothing of an earlier run leaks in)."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".snakemake", "results")
    for name in WORKFLOW_PARTS:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        elif src.exists():
            shutil.copy(src, dest / name)
    return dest


def snakemake_cmd(*args) -> list[str]:
    return [sys.executable, "-m", "snakemake", *args]


def run_snakemake(cwd: Path, *args, timeout=1800, check=True) -> subprocess.CompletedProcess:
    proc = subprocess.run(snakemake_cmd(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return proc
