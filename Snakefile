# icl-kmeans: regenerate every figure and Table 1 of "Leaner Transformers Can Easily Learn to Cluster".
#   snakemake --cores all                      quick preset (default), every target
#   snakemake --cores all fig6                 one figure and what it reads
#   snakemake --cores all --profile slurm --config preset=paper    on SLURM (profile: slurm/, docs/cluster.md)
from snakemake.utils import min_version

min_version("9.0")


# by absolute path: a subset changes the working directory (workdir: below), and --report reads it again
configfile: f"{workflow.basedir}/config.yaml"


include: "workflow/rules/common.smk"


# A subset (config key subset) works in its own folder: <subset_dir>/results/, never beside a whole
# preset's results/.
if SETTINGS["subset"]:

    workdir: str(REPO / SETTINGS["subset_dir"])


include: "workflow/rules/tasks.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/review.smk"
include: "workflow/rules/slurm_checks.smk"


# Rules that take seconds (task sets, tables, figures, Table 1, manifest, review, bundle) run in the
# snakemake process itself (on a cluster: the login node), never through the queue
# (docs/cluster.md counts the submissions by rule).
localrules:
    validation_tasks,
    test_tasks,
    aggregate,
    plot,
    write_table1,
    manifest,
    claims,
    review,
    bundle,


# One GPU per SLURM job, packed or not: the pool `gpu` (the profile's `resources: gpu: 1`) is per submitted job,
# not a cap on the cluster's GPU jobs. Declared here, not in the profile, so that no profile or option of a user
# replaces it; the onstart check (workflow/rules/slurm_checks.smk) stops a run whose pool is not one GPU.
resource_scopes:
    gpu="local",


rule all:
    default_target: True
    input:
        ALL_TARGET_FILES,
        rules.manifest.output,
        rules.claims.output,
