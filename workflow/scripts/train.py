"""Trains the (configuration, seed) pairs of this job: one pair (rule train), a pack (one after the
other) or a stack (train_stack_*: together)."""

from icl_kmeans.pipeline.job_context import as_list, job

with job(snakemake, device=True) as device:  # the config's device: a resource of the rule, not a param
    from icl_kmeans.pipeline.training_jobs import train_run, train_stack_job

    p, out = snakemake.params, snakemake.output
    if "runs" in p.keys():  # a pack or a stack: outputs are listed in the order of p.runs
        pairs, configs, val_files = [tuple(pair) for pair in p.runs], p.configs, p.val_files
    else:  # rule train: one (run, seed), one validation set
        pairs = [(snakemake.wildcards.run, int(snakemake.wildcards.seed))]
        configs, val_files = {pairs[0][0]: p.config}, {pairs[0]: snakemake.input.val}
    files = zip(*(as_list(out[key]) for key in ("checkpoint", "metrics", "timing", "record")))
    members = [dict(run=run, config=configs[run], seed=seed, val=val_files[(run, seed)], checkpoint=c, metrics=m,
                    timing=t, record=r)
               for (run, seed), (c, m, t, r) in zip(pairs, files)]
    if snakemake.rule.startswith("train_stack"):  # one stack: all members trained together
        train_stack_job(members, device=device)
    else:
        for mb in members:
            train_run(mb["run"], mb["config"], mb["seed"], mb["val"], mb["checkpoint"], mb["metrics"],
                      mb["timing"], mb["record"], device=device)
