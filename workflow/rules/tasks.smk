# Fixed task sets as files: validation sets (one job per task distribution and seed, so that adding a
# seed adds only that seed's jobs) and held-out test sets.


rule validation_tasks:
    output:
        VAL,
    log:
        f"{LOGS}/tasks/val_{{dist}}_seed{{seed}}.log",
    conda:
        "../../envs/torch.yaml"
    params:
        dist=lambda w: DISTS[w.dist],
        batch=S["batch"],
        val_batches=S["val_batches"],
    script:
        "../scripts/validation_tasks.py"


rule test_tasks:
    output:
        TEST,
    log:
        f"{LOGS}/tasks/test_{{testset}}.log",
    conda:
        "../../envs/torch.yaml"
    params:
        testset=lambda w: TESTSETS[w.testset],
        seed=S["eval_seed"],
    script:
        "../scripts/test_tasks.py"
