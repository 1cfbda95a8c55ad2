# icl-kmeans: regenerate every figure and Table 1 of "Leaner Transformers Can Easily Learn to Cluster".
#   snakemake --cores all                      quick preset (default), every target
#   snakemake --cores all fig6                 one figure and only what it needs
#   snakemake --cores all --config preset=paper --profile slurm
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "workflow/rules/common.smk"


# A subset (config key subset) works in its own folder: <subset_dir>/results/, never beside a whole
# preset's results/.
if S["subset"]:

    workdir: str(REPO / S["subset_dir"])


include: "workflow/rules/tasks.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/review.smk"


rule all:
    default_target: True
    input:
        ALL_TARGET_FILES,
        rules.manifest.output,
