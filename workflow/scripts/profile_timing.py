"""Times OH against BN: forward (train and eval mode), backward, peak memory (Fig 1, Table 1)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # icl_kmeans of this checkout, in any env

from icl_kmeans.pipeline.job import job

with job(snakemake):
    from icl_kmeans.pipeline import eval_jobs

    p = snakemake.params
    eval_jobs.profile(snakemake.wildcards.fig, p.spec, snakemake.output[0], device=p.device)
