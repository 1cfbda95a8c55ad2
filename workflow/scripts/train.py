"""Trains the (configuration, seed) pairs of this job: one pair (rule train), a pack (one after the
other) or a stack (train_stack_*: together)."""

from icl_kmeans.pipeline.job_context import as_list, job

with job(snakemake, device=True) as device:  # the config's device, read at run time (not a param)
    from icl_kmeans.pipeline.training_jobs import train_run, train_stack_job
    from icl_kmeans.pipeline.studies import distribution, distribution_id

    def dist_of(config):
        return distribution_id(distribution(config))

    p, out = snakemake.params, snakemake.output
    if "runs" in p.keys():  # a pack: outputs are listed in the order of p.runs
        pairs, configs = p.runs, p.configs
    else:
        pairs = [(snakemake.wildcards.run, int(snakemake.wildcards.seed))]
        configs = {pairs[0][0]: p.config}
    files = zip(*(as_list(out[key]) for key in ("checkpoint", "metrics", "timing", "record")))
    members = [
        dict(run=run, config=configs[run], seed=seed, checkpoint=c, metrics=m, timing=t, record=r,
             val=next(v for v in as_list(snakemake.input.val)
                      if v.endswith(f"/{dist_of(configs[run])}/seed{seed}.pt")))
        for (run, seed), (c, m, t, r) in zip(pairs, files)
    ]
    if snakemake.rule.startswith("train_stack"):  # one stack: all members trained together
        train_stack_job(members, device=device)
    else:
        for mb in members:
            train_run(mb["run"], mb["config"], mb["seed"], mb["val"], mb["checkpoint"], mb["metrics"],
                      mb["timing"], mb["record"], device=device)
