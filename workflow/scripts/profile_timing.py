"""Times OH against BN: forward (train and eval mode), backward, peak memory (Fig 1, Table 1)."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline import evaluation_jobs

    p = snakemake.params
    evaluation_jobs.profile(snakemake.wildcards.fig, p.spec, snakemake.output[0], device=p.device)
