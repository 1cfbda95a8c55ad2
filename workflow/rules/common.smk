# Settings, the registry of runs per figure, and path patterns shared by all rules.
import os
import re
import sys
from pathlib import Path

from snakemake.utils import validate

REPO = Path(workflow.basedir)
sys.path.insert(0, str(REPO / "src"))

from icl_kmeans.pipeline import figures as _figures
from icl_kmeans.pipeline import settings as _settings
from icl_kmeans.pipeline import studies as _studies

# resolve types --config's list items in place ("seeds=[1,2]" arrives as strings) and names a bad key
S = _settings.resolve(config, REPO / "workflow")
validate(config, str(REPO / "workflow/schemas/config.schema.yaml"), set_default=False)
ST = _studies.build(S)
SEEDS = S["seeds"]
DISTS = ST.distributions()
TESTSETS = {
    ts["id"]: ts
    for spec in ST.evaluations.values()
    for ts in spec.get("testsets", {}).values()
}
# Figure 18 is the large version of Figure 8: same evaluation, bigger drawing.
EVAL_SOURCE = {fig: fig for fig in ST.evaluations}
if "fig18" in EVAL_SOURCE:
    EVAL_SOURCE["fig18"] = "fig8"
EVAL_KINDS = {
    kind: sorted(
        {EVAL_SOURCE[f] for f, s in ST.evaluations.items() if s["kind"] == kind}
    )
    for kind in ("multistep", "landscape", "dissimilarity", "profile")
}

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


def dist_of(run):
    return _studies.distribution_id(_studies.distribution(ST.runs[run]))


def run_files(runs, pattern=CKPT):
    return [pattern.format(run=r, seed=s) for r in sorted(runs) for s in SEEDS]


def eval_inputs(fig):
    spec = ST.evaluations[fig]
    runs = set(spec.get("models", {}).values())
    return {
        "checkpoints": run_files(runs),
        "testsets": [
            TEST.format(testset=ts["id"]) for ts in spec.get("testsets", {}).values()
        ],
    }


def figure_files(fig):
    return [FIGURE.format(fig=fig, ext=ext) for ext in ("pdf", "png")]


# Resources of the GPU jobs (training, evaluation, profiling), given by each of their rules with its
# run time. One GPU, as the SLURM profile (workflow/profiles/slurm) submits them, plus the site's GPU
# partition and model from the environment. Without SLURM the same jobs run on this machine (GPU or CPU).
GPU_SITE = {
    res: os.environ[var].strip()
    for res, var in (
        ("slurm_partition", "ICL_KMEANS_SLURM_PARTITION"),
        ("gpu_model", "ICL_KMEANS_GPU_MODEL"),
    )
    if os.environ.get(var, "").strip()
}


def gpu_resources(runtime):
    return dict(gpu=1, cpus_per_gpu=4, mem_mb=16000, runtime=runtime, **GPU_SITE)


BENCHMARKS = "results/benchmarks"


def figure_caption(fig):
    """workflow/report/<fig>.rst with the figure's scale line and panel line filled in (the report's caption)."""
    template = (REPO / "workflow" / "report" / f"{fig}.rst").read_text()
    return template.replace(
        "{{ snakemake.params.scale }}", _figures.scale_line(fig, S)
    ).replace("{{ snakemake.params.panels }}", _figures.caption_line(fig, S))


TABLE1_FILES = ["results/tables/table1.csv", "results/tables/table1.md"]
# what `all` draws: every figure and Table 1, or a subset's (settings key subset)
ALL_TARGET_FILES = [
    f for fig in ST.targets() if fig != "table1" for f in figure_files(fig)
] + (TABLE1_FILES if "table1" in ST.targets() else [])


wildcard_constraints:
    seed=r"\d+",
    run=r"[A-Za-z0-9_.:-]+",
    fig=r"fig(\d+|_em)|table1",
