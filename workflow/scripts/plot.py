"""Draws one figure (PDF and PNG) from its aggregated table."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # icl_kmeans of this checkout, in any env

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline import figures

    p, out = snakemake.params, snakemake.output
    print(p.scale, flush=True)
    figures.plot(p.fig, snakemake.input.table, out.pdf, out.png, p.settings)
