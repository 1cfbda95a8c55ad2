"""Trains the (configuration, seed) pairs of this job: one pair (rule train) or a whole pack."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../../src")  # icl_kmeans of this checkout, in any env

from icl_kmeans.pipeline.job import as_list, job

with job(snakemake, device=True) as device:  # the config's device, read at run time (not a param)
    from icl_kmeans.pipeline.jobs import train_run

    p, out = snakemake.params, snakemake.output
    if "runs" in p.keys():  # a pack: outputs are listed in the order of p.runs
        pairs, configs = p.runs, p.configs
    else:
        pairs = [(snakemake.wildcards.run, int(snakemake.wildcards.seed))]
        configs = {pairs[0][0]: p.config}
    files = zip(*(as_list(out[key]) for key in ("checkpoint", "metrics", "timing", "record")))
    for (run, seed), (checkpoint, metrics, timing, record) in zip(pairs, files):
        val = next(v for v in as_list(snakemake.input.val) if v.endswith(f"/seed{seed}.pt"))
        train_run(run, configs[run], seed, val, checkpoint, metrics, timing, record, device=device)
