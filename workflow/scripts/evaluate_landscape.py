"""Evaluates the models of one figure on its held-out test sets (landscape)."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake, device=True) as device:  # the config's device, read at run time (not a param)
    from icl_kmeans.pipeline import evaluation_jobs

    p, i = snakemake.params, snakemake.input
    evaluation_jobs.landscape(snakemake.wildcards.fig, p.spec, p.seed, i.checkpoints, i.testsets, snakemake.output[0], device=device)
