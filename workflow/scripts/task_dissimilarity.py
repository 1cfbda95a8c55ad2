"""Earth-mover distances between the tasks of the five families (Figs 9 and 19)."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline import evaluation_jobs

    evaluation_jobs.dissimilarity(snakemake.wildcards.fig, snakemake.params.spec, snakemake.params.testset_files,
                                  snakemake.output[0])
