"""Writes the validation set of one task distribution and seed."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # icl_kmeans of this checkout, in any env

from icl_kmeans.pipeline.job import job

with job(snakemake):
    from icl_kmeans.pipeline.taskfiles import write_validation_set

    p = snakemake.params
    write_validation_set(p.dist, int(snakemake.wildcards.seed), p.batch, p.val_batches, snakemake.output[0])
