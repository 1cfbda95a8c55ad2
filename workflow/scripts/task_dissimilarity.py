"""Earth-mover distances between the tasks of the five families (Figs 9 and 19)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # icl_kmeans of this checkout, in any env

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline import evaluation_jobs

    evaluation_jobs.dissimilarity(snakemake.wildcards.fig, snakemake.params.spec, snakemake.input.testsets,
                            snakemake.output[0])
