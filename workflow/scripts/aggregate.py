"""Aggregates one figure's runs or evaluation into results/tables/{fig}.parquet (long format)."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline import aggregate

    p, fig = snakemake.params, snakemake.wildcards.fig
    if p.curves:
        table = aggregate.aggregate(fig, snakemake.output[0], curves=p.curves, files=p.files)
    else:
        table = aggregate.aggregate(fig, snakemake.output[0], source=snakemake.input.evaluation)
    print(aggregate.summary(table), flush=True)
