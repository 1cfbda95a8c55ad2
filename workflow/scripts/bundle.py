"""Writes results/bundle.tar.gz: the verified results, manifest, provenance, logs, config and pins."""

from icl_kmeans.pipeline.job_context import job

with job(snakemake):
    from icl_kmeans.review.bundle import make_bundle

    p, i = snakemake.params, snakemake.input
    info = make_bundle(snakemake.output[0], p.settings, config=i.config, pins=list(i.pins), preset_file=i.preset,
                       results=p.results, skip=list(snakemake.log))
    print(info, flush=True)
