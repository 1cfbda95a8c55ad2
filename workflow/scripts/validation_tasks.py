"""Writes the validation sets of one task distribution: of one seed (train_jobs=seed) or of every seed."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline.taskfiles import write_validation_set

    p = snakemake.params
    for seed, path in zip(p.seeds, snakemake.output):
        write_validation_set(p.dist, seed, p.batch, p.val_batches, path)
