"""Writes one held-out test set (shared by every model evaluated on it)."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline.taskfiles import write_test_set

    write_test_set(snakemake.params.testset, snakemake.params.seed, snakemake.output[0])
