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
from icl_kmeans.pipeline import workflow_files as _workflow_files
from icl_kmeans.pipeline.workflow_files import (
    CKPT,
    EVAL,
    FIGURE,
    LOGS,
    METRICS,
    RECORD,
    TABLE,
    TEST,
    TIMING,
    VAL,
    keyed_inputs,
)

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
    ts.id: ts.as_params()
    for spec in STUDIES.evaluations.values()
    for ts in spec.testsets.values()
}
# The evaluation each figure draws, as the registry names it (Figure 18, the large version of Figure 8,
# draws Figure 8's).
EVAL_SOURCE = {
    fig: _figure_registry.figure(fig).evaluation for fig in STUDIES.evaluations
}
EVAL_KINDS = {
    kind: sorted(
        {EVAL_SOURCE[f] for f, s in STUDIES.evaluations.items() if s.kind == kind}
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

# The files the rules read and write, keyed by what they are (icl_kmeans.pipeline.workflow_files,
# tested in tests/test_workflow_files.py), bound to these studies and seeds.
FILES = _workflow_files.WorkflowFiles(STUDIES, tuple(SEEDS))
dist_of, run_files, checkpoint_files = (
    FILES.dist_of,
    FILES.run_files,
    FILES.checkpoint_files,
)
testset_files, val_files, eval_inputs = (
    FILES.testset_files,
    FILES.val_files,
    FILES.eval_inputs,
)
run_inputs, figure_files = FILES.run_inputs, FILES.figure_files


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
