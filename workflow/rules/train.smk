# Training: every (configuration, seed) yields a checkpoint, per-step metrics (Parquet, in a
# hive-partitioned dataset under results/metrics), wall-clock timings and a run record.
# train_jobs=seed: one job per (configuration, seed); on SLURM the profile packs them into groups.
# Each job's wall time and memory go to results/benchmarks/train/ (Snakemake's `benchmark:`).
# train_jobs=pack: one job per task distribution trains all its runs and seeds in one process
# (same files, same bytes; saves the per-job torch import on a laptop).
# train_jobs=stack: one job per stack trains up to `stack_size` (run, seed) pairs that share their
# tensor shapes together (icl_kmeans.train_stack, one GPU each on SLURM), or a bundle of small stacks
# one after the other (studies.stack_jobs: a job start costs more than a short stack); the runs of the
# figures timed alone (the registry's timed_alone: Fig 17, whose wall-clock time is plotted) stay one job
# per seed (rule train).
# The device (config key `device`) is a resource of the jobs (TORCH_DEVICE), not a param: switching auto
# to cuda reruns nothing. A pack or stack job gets its members' validation sets keyed by (run, seed)
# (keyed_inputs). A finished run keeps a copy of its checkpoint in checkpoint.pt.resume, outside the
# declared outputs: when Snakemake reruns a job (a seed added to a pack, a failed pack job whose outputs
# it deleted), finished members are restored from it instead of being trained again.

TRAIN_OUTPUTS = dict(checkpoint=CKPT, metrics=METRICS, timing=TIMING, record=RECORD)

if SETTINGS["train_jobs"] == "stack":
    _STACKS = _studies.stack_jobs(
        STUDIES, _studies.stacks(STUDIES, SEEDS, SETTINGS["stack_size"])
    )
    _ALONE = sorted(
        {
            r
            for f in STUDIES.training
            if _figure_registry.figure(f).timed_alone
            for r in STUDIES.runs_of(f)
        }
    )
else:
    _STACKS, _ALONE = {}, sorted(STUDIES.runs)

if SETTINGS["train_jobs"] in ("seed", "stack"):

    rule train:
        input:
            val=lambda w: VAL.format(dist=dist_of(w.run), seed=w.seed),
        output:
            **TRAIN_OUTPUTS,
        log:
            f"{LOGS}/train/{{run}}_seed{{seed}}.log",
        benchmark:
            f"{BENCHMARKS}/train/{{run}}_seed{{seed}}.tsv"
        wildcard_constraints:
            run="|".join(re.escape(r) for r in _ALONE) or "(?!)",
        group:
            "train"
        conda:
            TORCH_ENV
        threads: 1
        resources:
            **GPU,
            **TORCH_DEVICE,
            runtime=lambda w: training_gpu_resources([w.run])["runtime"],
            mem_mb=lambda w: training_gpu_resources([w.run])["mem_mb"],
        params:
            config=lambda w: STUDIES.runs[w.run],
        script:
            "../scripts/train.py"


if SETTINGS["train_jobs"] == "pack":
    _PACKS = {}
    for _run in sorted(STUDIES.runs):
        _PACKS.setdefault(dist_of(_run), []).append(_run)

    for _dist, _runs in sorted(_PACKS.items()):

        rule:
            name:
                f"train_pack_{_dist.replace('.', 'p')}"
            input:
                val=expand(VAL, dist=_dist, seed=SEEDS),
            output:
                **{key: run_files(_runs, pat) for key, pat in TRAIN_OUTPUTS.items()},
            log:
                f"{LOGS}/train/pack_{_dist}.log",
            benchmark:
                f"{BENCHMARKS}/train/pack_{_dist}.tsv"
            conda:
                TORCH_ENV
            threads: 1
            resources:
                **TORCH_DEVICE,
            params:
                runs=[(r, s) for r in _runs for s in SEEDS],
                configs={r: STUDIES.runs[r] for r in _runs},
                val_files=keyed_inputs(val_files((r, s) for r in _runs for s in SEEDS)),
            script:
                "../scripts/train.py"


for _name, _members in sorted(_STACKS.items()):

    rule:
        name:
            f"train_stack_{_name}"
        input:
            val=sorted(set(val_files(_members).values())),
        output:
            **{
                key: [pat.format(run=r, seed=s) for r, s in _members]
                for key, pat in TRAIN_OUTPUTS.items()
            },
        log:
            f"{LOGS}/train/stack_{_name}.log",
        benchmark:
            f"{BENCHMARKS}/train/stack_{_name}.tsv"
        # the longest stacks first: on a laptop they decide the wall time
        priority: _studies.stack_work(STUDIES, _members) // 1_000_000
        conda:
            TORCH_ENV
        threads: 1
        resources:
            **training_gpu_resources([r for r, _ in _members]),
            **TORCH_DEVICE,
        params:
            runs=_members,
            configs={r: STUDIES.runs[r] for r in sorted({r for r, _ in _members})},
            val_files=keyed_inputs(val_files(_members)),
        script:
            "../scripts/train.py"
