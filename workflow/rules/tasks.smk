# Fixed task sets as files: validation sets (per task distribution and seed) and held-out test sets.


rule validation_tasks:
    output:
        expand(VAL, dist="{dist}", seed=SEEDS),
    log:
        f"{LOGS}/tasks/val_{{dist}}.log",
    conda:
        "../../envs/torch.yaml"
    params:
        dist=lambda w: DISTS[w.dist],
        seeds=SEEDS,
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
