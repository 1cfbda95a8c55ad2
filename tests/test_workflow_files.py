"""The files the rules read and write (pipeline/workflow_files.py, bound in common.smk), at smoke scale."""

from __future__ import annotations

import pytest

from icl_kmeans.pipeline import settings as settings_mod
from icl_kmeans.pipeline import studies
from icl_kmeans.pipeline.workflow_files import WorkflowFiles, keyed_inputs

SEEDS = (1, 2)


@pytest.fixture(scope="module")
def files():
    return WorkflowFiles(studies.build(settings_mod.resolve({"preset": "smoke"})), SEEDS)


def test_an_evaluation_reads_each_models_checkpoint_per_seed_and_its_test_sets(files):
    ckpts = files.checkpoint_files("fig7")
    runs = sorted(set(files.studies.evaluations["fig7"].models.values()))
    assert list(ckpts) == [(r, s) for r in runs for s in SEEDS]
    assert ckpts[(runs[0], 2)] == f"results/runs/{runs[0]}/seed2/checkpoint.pt"
    tests = files.testset_files("fig7")
    assert len(tests) == 4 and all(f == f"results/tasks/test/{ts}.pt" for ts, f in tests.items())
    assert files.eval_inputs("fig7") == {"checkpoints": list(ckpts.values()), "testsets": list(tests.values())}


def test_a_figure_timed_alone_reads_its_runs_timings(files):
    timed = files.run_inputs("fig17")
    assert all(set(kinds) == {"metrics", "record", "timing"} for kinds in timed.values())
    assert all(set(kinds) == {"metrics", "record"} for kinds in files.run_inputs("fig10").values())


def test_a_figure_in_parts_draws_the_parts_its_curves_hold():
    s = settings_mod.resolve({"preset": "smoke", "subset": "fig15:d=32,tau=0.1"})
    files = WorkflowFiles(studies.build(s), SEEDS)
    assert files.figure_files("fig15") == ["results/figures/fig15d.pdf", "results/figures/fig15d.png"]
    assert files.figure_files("fig6") == ["results/figures/fig6.pdf", "results/figures/fig6.png"]


def test_validation_sets_follow_each_runs_distribution(files):
    run = files.studies.runs_of("fig4")[0]
    assert files.val_files([(run, 1)]) == {(run, 1): f"results/tasks/val/{files.dist_of(run)}/seed1.pt"}
    assert files.run_files([run], "{run}/{seed}") == [f"{run}/1", f"{run}/2"]


def test_keyed_inputs_refuse_a_file_that_is_no_input():
    param = keyed_inputs({("r", 1): "a.pt", ("r", 2): "b.pt"})
    assert param(None, ["a.pt", "b.pt"]) == {("r", 1): "a.pt", ("r", 2): "b.pt"}
    with pytest.raises(ValueError, match=r"\['b.pt'\] are not inputs"):
        param(None, ["a.pt"])
