# Settings, the registry of runs per figure, and path patterns shared by all rules.
import os
import re
from pathlib import Path

from snakemake.utils import validate

from icl_kmeans.pipeline import figure_registry as _figure_registry
from icl_kmeans.pipeline import figures as _figures
from icl_kmeans.pipeline import settings as _settings
from icl_kmeans.pipeline import slurm_resources as _slurm_resources
from icl_kmeans.pipeline import studies as _studies

REPO = Path(workflow.basedir)

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

# Conda envs (--sdm conda) of the rules that run torch: the CUDA build, or with ICL_KMEANS_TORCH_BUILD=cpu
# the CPU build (machines without CUDA, macOS). Both install this checkout's package after they are
# created (envs/*.post-deploy.sh), which finds the checkout in ICL_KMEANS_CHECKOUT.
TORCH_BUILD = os.environ.get("ICL_KMEANS_TORCH_BUILD", "cuda").strip() or "cuda"
if TORCH_BUILD not in ("cuda", "cpu"):
    raise ValueError(
        f"ICL_KMEANS_TORCH_BUILD={TORCH_BUILD!r}: allowed are 'cuda' (default) and 'cpu'"
    )
TORCH_ENV = (
    "../../envs/torch.yaml" if TORCH_BUILD == "cuda" else "../../envs/torch-cpu.yaml"
)
ANALYSIS_ENV = "../../envs/analysis.yaml"
# set here, read by the post-deploy script
os.environ.update(ICL_KMEANS_CHECKOUT=str(REPO))

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


# Resources of the GPU jobs (training, evaluation, profiling). One GPU, as the SLURM profile (slurm/)
# submits them, plus the site's GPU partition and model from the environment. Training jobs' run time and
# memory come from one formula (icl_kmeans.pipeline.slurm_resources: steps x the GPU's seconds per step);
# evaluation and profiling give theirs. Without SLURM the same jobs run on this machine (GPU or CPU).
GPU_SITE = {
    res: os.environ[var].strip()
    for res, var in (
        ("slurm_partition", "ICL_KMEANS_SLURM_PARTITION"),
        ("gpu_model", "ICL_KMEANS_GPU_MODEL"),
    )
    if os.environ.get(var, "").strip()
}


GPU = dict(gpu=1, cpus_per_gpu=4, **GPU_SITE)


def gpu_resources(runtime, mem_mb=16000):
    return dict(GPU, mem_mb=mem_mb, runtime=runtime)


def training_gpu_resources(runs):
    """One GPU for a job that trains `runs` (run id list) together or alone."""
    res = _slurm_resources.training_resources(
        max(ST.runs[r]["steps"] for r in runs), len(runs)
    )
    return gpu_resources(res["runtime"], res["mem_mb"])


BENCHMARKS = "results/benchmarks"


def figure_caption(fig):
    """The figure's caption (registry row or workflow/report/<fig>.rst) with its scale and panel lines filled in."""
    template = _figure_registry.caption_template(fig, REPO / "workflow" / "report")
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
