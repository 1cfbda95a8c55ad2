"""The files the workflow's rules read and write: the path patterns, and which files of them a figure, an
evaluation or a training job needs, keyed by what they are ((run, seed), a test set id) so that no job
searches a file's name. common.smk binds these to the workflow's studies and seeds for its rules. Pure
Python: Snakemake imports it while it parses the workflow.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import figure_registry
from .studies import Studies, distribution, distribution_id

VAL = "results/tasks/val/{dist}/seed{seed}.pt"
TEST = "results/tasks/test/{testset}.pt"
CKPT = "results/runs/{run}/seed{seed}/checkpoint.pt"
RECORD = "results/runs/{run}/seed{seed}/record.json"
TIMING = "results/runs/{run}/seed{seed}/timing.parquet"
METRICS = "results/metrics/run={run}/seed={seed}/part-0.parquet"
EVAL = "results/eval/{fig}.parquet"
TABLE = "results/tables/{fig}.parquet"
FIGURE = "results/figures/{fig}.{ext}"
LOGS = "results/logs"


@dataclass(frozen=True)
class WorkflowFiles:
    """The files of the workflow's studies (every figure's runs and evaluations) and seeds."""

    studies: Studies
    seeds: tuple

    def dist_of(self, run: str) -> str:
        """The id of the task distribution a run trains on (its validation sets' folder)."""
        return distribution_id(distribution(self.studies.runs[run]))

    def run_files(self, runs, pattern: str) -> list[str]:
        """pattern (METRICS, RECORD, ...) for every seed of runs, runs sorted."""
        return [pattern.format(run=r, seed=s) for r in sorted(runs) for s in self.seeds]

    def checkpoint_files(self, fig: str) -> dict:
        """(run, seed) -> checkpoint of every model that evaluation fig reads."""
        runs = self.studies.evaluations[fig].runs()
        return {(r, s): CKPT.format(run=r, seed=s) for r in runs for s in self.seeds}

    def testset_files(self, fig: str) -> dict:
        """test set id -> file, of every test set that evaluation fig reads."""
        testsets = self.studies.evaluations[fig].testsets.values()
        return {ts.id: TEST.format(testset=ts.id) for ts in testsets}

    def val_files(self, members) -> dict:
        """(run, seed) -> validation set, of training members [(run, seed)]."""
        return {(r, s): VAL.format(dist=self.dist_of(r), seed=s) for r, s in members}

    def eval_inputs(self, fig: str) -> dict:
        """The input files of evaluation fig: its models' checkpoints and its test sets."""
        return {"checkpoints": list(self.checkpoint_files(fig).values()),
                "testsets": list(self.testset_files(fig).values())}

    def run_inputs(self, fig: str) -> dict:
        """(run, seed) -> {"metrics", "record" and, for a figure timed alone, "timing"}: the files of a training
        figure's runs, keyed by what they are (aggregate reads them by key, never by name)."""
        kinds = dict(metrics=METRICS, record=RECORD)
        if figure_registry.figure(fig).timed_alone:
            kinds["timing"] = TIMING
        return {(r, s): {kind: pattern.format(run=r, seed=s) for kind, pattern in kinds.items()}
                for r in self.studies.runs_of(fig) for s in self.seeds}

    def figure_files(self, fig: str) -> list[str]:
        """The PDF and PNG files that draw fig: its own, or for a figure drawn in parts (Figs 15, 16) those of
        its parts that the studies hold a curve of (a subset with only d = 32, tau = 0.1 of Fig 15 draws fig15d
        alone; a figure the studies lack: all its parts); a part id (fig15d): the part's."""
        curves = self.studies.training.get(figure_registry.parent(fig))
        facets = [c.facets for c in curves] if curves else None
        return [FIGURE.format(fig=stem, ext=ext) for stem in figure_registry.drawn_ids(fig, facets)
                for ext in ("pdf", "png")]


def keyed_inputs(files_of):
    """A param that hands a job its input files keyed by what they are ((run, seed), a test set id), so
    that it never searches their names: files_of(wildcards) -> {key: file}, or that dict itself. A
    function of `input`: Snakemake leaves it out of the params rerun trigger (the files are inputs
    already), and every file must be one."""

    def param(wildcards, input):
        files = files_of(wildcards) if callable(files_of) else files_of
        stray = sorted(set(files.values()) - set(input))
        if stray:
            raise ValueError(f"keyed_inputs: {stray} are not inputs of this job")
        return files

    return param
