# Settings, the registry of runs per figure, and path patterns shared by all rules.
# The settings are resolved and validated here, once: the rules hand each job what it needs as params,
# inputs and resources, and no job reads the config or a preset itself.
import os
import re
from pathlib import Path

from icl_kmeans.pipeline import figure_registry as _figure_registry
from icl_kmeans.pipeline import figures as _figures
from icl_kmeans.pipeline import settings as _settings
from icl_kmeans.pipeline import slurm_resources as _slurm_resources
from icl_kmeans.pipeline import studies as _studies

REPO = Path(workflow.basedir)

# The preset's values (the package's presets, icl_kmeans/pipeline/config/) overridden by config.yaml and
# --config, validated against the package's config.schema.yaml: an error names the key, the value and
# what is allowed. resolve types --config's list items in place ("seeds=[1,2]" arrives as strings).
SETTINGS = _settings.resolve(config)
# every figure's runs and evaluations (studies.Studies), from the figures' specs
STUDIES = _studies.build(SETTINGS)
# The paper's scale, which every figure's scale line quotes (figures.figure_settings).
PAPER = (
    SETTINGS
    if SETTINGS["preset"] == "paper"
    else _settings.resolve({"preset": "paper"})
)
SEEDS = SETTINGS["seeds"]
DISTS = STUDIES.distributions()
TESTSETS = {
    ts["id"]: ts
    for spec in STUDIES.evaluations.values()
    for ts in spec.get("testsets", {}).values()
}
# The evaluation each figure draws, as the registry names it (Figure 18, the large version of Figure 8,
# draws Figure 8's).
EVAL_SOURCE = {
    fig: _figure_registry.figure(fig).evaluation for fig in STUDIES.evaluations
}
EVAL_KINDS = {
    kind: sorted(
        {EVAL_SOURCE[f] for f, s in STUDIES.evaluations.items() if s["kind"] == kind}
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
    return _studies.distribution_id(_studies.distribution(STUDIES.runs[run]))


def run_files(runs, pattern):
    """pattern (METRICS, RECORD, ...) for every seed of runs, runs sorted."""
    return [pattern.format(run=r, seed=s) for r in sorted(runs) for s in SEEDS]


def checkpoint_files(fig):
    """(run, seed) -> checkpoint of every model that evaluation fig reads."""
    runs = sorted(set(STUDIES.evaluations[fig].get("models", {}).values()))
    return {(r, s): CKPT.format(run=r, seed=s) for r in runs for s in SEEDS}


def testset_files(fig):
    """test set id -> file, of every test set that evaluation fig reads."""
    return {
        ts["id"]: TEST.format(testset=ts["id"])
        for ts in STUDIES.evaluations[fig].get("testsets", {}).values()
    }


def val_files(members):
    """(run, seed) -> validation set, of training members [(run, seed)]."""
    return {(r, s): VAL.format(dist=dist_of(r), seed=s) for r, s in members}


def eval_inputs(fig):
    return {
        "checkpoints": list(checkpoint_files(fig).values()),
        "testsets": list(testset_files(fig).values()),
    }


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


def run_inputs(fig):
    """(run, seed) -> {"metrics", "record" and, for a figure timed alone, "timing"}: the files of a training
    figure's runs, keyed by what they are (aggregate reads them by key, never by name).
    """
    kinds = dict(metrics=METRICS, record=RECORD)
    if _figure_registry.figure(fig).timed_alone:
        kinds["timing"] = TIMING
    return {
        (r, s): {kind: pattern.format(run=r, seed=s) for kind, pattern in kinds.items()}
        for r in STUDIES.runs_of(fig)
        for s in SEEDS
    }


def figure_files(fig):
    """The PDF and PNG files that draw fig: its own, or for a figure drawn in parts (the registry's split:
    Figs 15, 16) those of its parts that these studies hold a curve of (a subset with only d = 32, tau = 0.1
    of Fig 15 draws fig15d alone); a part id (fig15d): the part's."""
    curves = STUDIES.training.get(_figure_registry.parent(fig))
    facets = (
        [c.facets for c in curves] if curves else None
    )  # a figure these studies lack: all its parts
    return [
        FIGURE.format(fig=stem, ext=ext)
        for stem in _figure_registry.drawn_ids(fig, facets)
        for ext in ("pdf", "png")
    ]


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
# The device torch computes on (settings key device), a resource of every job that trains or evaluates
# models: not a param, so that switching auto to cuda reruns nothing (job_context.job reads it).
TORCH_DEVICE = dict(torch_device=SETTINGS["device"])


def gpu_resources(runtime, mem_mb=16000):
    return dict(GPU, mem_mb=mem_mb, runtime=runtime)


def training_gpu_resources(runs):
    """One GPU for a job that trains `runs` (run id list) together or alone."""
    res = _slurm_resources.training_resources(
        max(STUDIES.runs[r]["steps"] for r in runs), len(runs)
    )
    return gpu_resources(res["runtime"], res["mem_mb"])


BENCHMARKS = "results/benchmarks"


def figure_settings(fig):
    """The settings fig's scale line reads, the paper's among them (the plot rule's param)."""
    return _figures.figure_settings(fig, SETTINGS, PAPER)


def figure_caption(fig):
    """fig's caption (its spec's, pipeline/specs/<fig>.py) with its scale line and panel
    line filled in (the caption of Snakemake's report)."""
    panels = _figures.caption_line(fig, SETTINGS, STUDIES)
    return (
        _figure_registry.caption_template(fig)
        .replace(
            "{{ snakemake.params.scale }}",
            _figures.scale_line(fig, figure_settings(fig)),
        )
        .replace("{{ snakemake.params.panels }}", panels)
    )


TABLE1_FILES = ["results/tables/table1.csv", "results/tables/table1.md"]
# what `all` draws: every figure and Table 1, or a subset's (settings key subset)
ALL_TARGET_FILES = [
    f for fig in STUDIES.targets() if fig != "table1" for f in figure_files(fig)
] + (TABLE1_FILES if "table1" in STUDIES.targets() else [])


wildcard_constraints:
    seed=r"\d+",
    run=r"[A-Za-z0-9_.:-]+",
    fig=r"fig(\d+[a-z]?|_em)|table1",
