# Fixed task sets as files: validation sets and held-out test sets.
# train_jobs=seed: one validation job per (distribution, seed), so that adding a seed adds only that
# seed's validation and training jobs. train_jobs=pack: one job per distribution writes the sets of all
# seeds (a job's torch import costs more than the sampling); its pack job trains every seed of the
# distribution anyway and, when rerun for a new seed, restores the finished runs instead of training them.

if SETTINGS["train_jobs"] == "seed":

    rule validation_tasks:
        output:
            VAL,
        log:
            f"{LOGS}/tasks/val_{{dist}}_seed{{seed}}.log",
        conda:
            TORCH_ENV
        params:
            dist=lambda w: DISTS[w.dist],
            seeds=lambda w: [int(w.seed)],
            batch=SETTINGS["batch"],
            val_batches=SETTINGS["val_batches"],
        script:
            "../scripts/validation_tasks.py"

else:

    rule validation_tasks:
        output:
            expand(VAL, dist="{dist}", seed=SEEDS),
        log:
            f"{LOGS}/tasks/val_{{dist}}.log",
        conda:
            TORCH_ENV
        params:
            dist=lambda w: DISTS[w.dist],
            seeds=SEEDS,
            batch=SETTINGS["batch"],
            val_batches=SETTINGS["val_batches"],
        script:
            "../scripts/validation_tasks.py"


rule test_tasks:
    output:
        TEST,
    log:
        f"{LOGS}/tasks/test_{{testset}}.log",
    conda:
        TORCH_ENV
    params:
        testset=lambda w: TESTSETS[w.testset],
        seed=SETTINGS["eval_seed"],
    script:
        "../scripts/test_tasks.py"
