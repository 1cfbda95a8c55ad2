"""Evaluates the models of one figure on its held-out test sets (landscape)."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake, device=True) as device:  # the config's device: a resource of the rule, not a param
    from icl_kmeans.pipeline import evaluation_jobs

    p = snakemake.params
    evaluation_jobs.landscape(snakemake.wildcards.fig, p.spec, p.seed, p.checkpoint_files, p.testset_files,
                              snakemake.output[0], device=device)
