"""Writes results/manifest.{parquet,tsv,json}: every artifact under results/ with its provenance."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.review import manifest

    p = snakemake.params
    df, meta, _ = manifest.make(p.results, settings=p.settings, targets=p.targets, known=p.known)
    print(f"{len(df)} artifacts; {int((~df['current']).sum())} of another configuration", flush=True)
    print(df.groupby("kind")["size"].agg(["count", "sum"]).to_string(), flush=True)
