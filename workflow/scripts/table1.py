"""Writes Table 1 (CSV and Markdown) from the d = 32 profile table."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.pipeline import table1

    out = snakemake.output
    print(table1.write(snakemake.input.table, out.csv, out.md, snakemake.params.settings).to_string(), flush=True)
