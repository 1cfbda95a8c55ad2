"""A subset through the DAG, the whole cycle at smoke scale: train only the chosen cells into the
subset's own folder, keep what git commits (no task sets), and review a clean copy of it: integrity
PASSED, the claims its data decides decided, the others NOT-RUN, nothing trained. Then grow the clean
copy as a clone would: after `snakemake --touch` with the committed settings, a bigger subset plans
only its new runs."""

import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from pipeline_utils import REPO, copy_workflow, run_snakemake

pytestmark = pytest.mark.pipeline

SUBSET = "fig10:d=4,tau=0.1;fig6:curve=OH:L2|BN:L2|NA:L2"
GROWN = SUBSET + "|OH:NE"


def _committed(work) -> list[str]:
    """The files of the subset folder that git would commit under the repository's .gitignore."""
    shutil.copy(REPO / ".gitignore", work / ".gitignore")
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    out = subprocess.run(["git", "add", "--dry-run", "results/paper-scale"], cwd=work, check=True,
                         capture_output=True, text=True).stdout
    return sorted(line.split("'")[1] for line in out.splitlines() if line.startswith("add '"))


def test_a_subset_trains_into_its_folder_and_a_clean_copy_reviews_without_training(tmp_path):
    work = copy_workflow(tmp_path / "w")
    run_snakemake(work, "--cores", "2", "--config", "preset=smoke", f"subset={SUBSET}", "train_jobs=seed")
    sub = work / "results" / "paper-scale" / "results"
    assert not (work / "results" / "figures").exists()  # nothing beside a whole preset's results
    assert sorted(p.name for p in (sub / "figures").iterdir()) == ["fig10.pdf", "fig10.png", "fig6.pdf", "fig6.png"]
    runs = sorted(p.name for p in (sub / "runs").iterdir())
    assert len(runs) == 6 + 3  # Fig 10's six curves at d = 4, tau = 0.1 and Fig 6's three L2 models

    files = _committed(work)
    left_out = [f for f in files if f.startswith(("results/paper-scale/results/tasks/", "results/paper-scale/results/logs/"))
                or f.endswith(".resume")]
    assert files and not left_out, left_out
    assert "results/paper-scale/results/manifest.parquet" in files
    assert any(f.endswith("/checkpoint.pt") for f in files)
    clean = copy_workflow(tmp_path / "clean")
    for f in files:  # copied, not copy2: like a clone's checkout, the mtimes say nothing of the DAG's order
        (clean / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(work / f, clean / f)
    before = sorted(p.relative_to(clean).as_posix() for p in clean.rglob("checkpoint.pt"))

    proc = subprocess.run([sys.executable, "-m", "icl_kmeans.review", "review", "--workdir",
                           str(clean / "results" / "paper-scale")], capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "REVIEW PASSED" in out and "missing ones written again" in out, out[-4000:]
    assert sorted(p.relative_to(clean).as_posix() for p in clean.rglob("checkpoint.pt")) == before
    claims = pd.read_csv(clean / "results" / "paper-scale" / "results" / "review" / "claims.csv", dtype=str)
    status = dict(zip(claims["id"], claims["status"]))
    assert status["1a"] != "NOT-RUN" and status["1b"] != "NOT-RUN" and status["5c"] != "NOT-RUN", status
    assert status["6a"] == status["7a"] == status["3a"] == "NOT-RUN", status

    # Growing the clean copy. The review wrote the task sets again, newer than the runs trained from
    # them, so Snakemake would retrain every finished run; `--touch` with the committed settings marks
    # the committed outputs up to date (docs/paper-scale.md, "Growing the committed folder").
    config = ("--config", "preset=smoke", "train_jobs=seed")
    assert _planned_train_runs(clean, *config, f"subset={SUBSET}") == set(runs)
    run_snakemake(clean, "--touch", "--cores", "1", *config, f"subset={SUBSET}")
    assert _planned_train_runs(clean, *config, f"subset={SUBSET}") == set()
    new = _planned_train_runs(clean, *config, f"subset={GROWN}")
    assert len(new) == 1 and not new & set(runs), new  # OH:NE's Fig 6 model, only


def _planned_train_runs(work, *args) -> set[str]:
    """The runs a dry run would train."""
    out = run_snakemake(work, "-n", *args).stdout
    return {m.group(1) for m in re.finditer(r"wildcards: run=([^,\s]+), seed=", out)}
