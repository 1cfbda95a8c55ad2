"""Draws one figure (PDF and PNG) from its aggregated table."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline import figures

    p, out = snakemake.params, snakemake.output
    print(p.scale, flush=True)
    figures.plot(p.fig, snakemake.input.table, out.pdf, out.png, p.settings)
