# Evaluation: one job per figure. Multi-step clustering (re-embed / naive, with Lloyd's and EM),
# distribution shifts, the family grid and length generalisation; loss and gap surfaces; task
# dissimilarity; the OH-vs-BN timing and memory profile. Evaluation jobs get the device as a resource
# (TORCH_DEVICE, not a param: switching it reruns nothing); the profile, a measurement of the device,
# keeps it as a param. The spec reaches a job as the plain dict of as_params() (evaluation_specs.py),
# the params' rerun trigger compares it. Jobs get their checkpoints keyed by (run, seed), their test sets by id. Each job's wall time and memory go to results/benchmarks/evaluate/{fig}.tsv.


rule evaluate_multistep:
    input:
        unpack(lambda w: eval_inputs(w.fig)),
    output:
        EVAL,
    log:
        f"{LOGS}/evaluate/{{fig}}.log",
    benchmark:
        f"{BENCHMARKS}/evaluate/{{fig}}.tsv"
    wildcard_constraints:
        fig="|".join(EVAL_KINDS["multistep"]) or "(?!)",
    conda:
        TORCH_ENV
    resources:
        **gpu_resources("2h"),
        **TORCH_DEVICE,
    params:
        spec=lambda w: STUDIES.evaluations[w.fig].as_params(),
        seeds=SEEDS,
        checkpoint_files=keyed_inputs(lambda w: checkpoint_files(w.fig)),
        testset_files=keyed_inputs(lambda w: testset_files(w.fig)),
    script:
        "../scripts/evaluate_multistep.py"


rule evaluate_landscape:
    input:
        unpack(lambda w: eval_inputs(w.fig)),
    output:
        EVAL,
    log:
        f"{LOGS}/evaluate/{{fig}}.log",
    benchmark:
        f"{BENCHMARKS}/evaluate/{{fig}}.tsv"
    wildcard_constraints:
        fig="|".join(EVAL_KINDS["landscape"]) or "(?!)",
    conda:
        TORCH_ENV
    resources:
        **gpu_resources("2h"),
        **TORCH_DEVICE,
    params:
        spec=lambda w: STUDIES.evaluations[w.fig].as_params(),
        seed=SEEDS[0],
        checkpoint_files=keyed_inputs(lambda w: checkpoint_files(w.fig)),
        testset_files=keyed_inputs(lambda w: testset_files(w.fig)),
    script:
        "../scripts/evaluate_landscape.py"


rule task_dissimilarity:
    input:
        unpack(lambda w: eval_inputs(w.fig)),
    output:
        EVAL,
    log:
        f"{LOGS}/evaluate/{{fig}}.log",
    benchmark:
        f"{BENCHMARKS}/evaluate/{{fig}}.tsv"
    wildcard_constraints:
        fig="|".join(EVAL_KINDS["dissimilarity"]) or "(?!)",
    conda:
        TORCH_ENV
    params:
        spec=lambda w: STUDIES.evaluations[w.fig].as_params(),
        testset_files=keyed_inputs(lambda w: testset_files(w.fig)),
    script:
        "../scripts/task_dissimilarity.py"


rule profile_timing:
    output:
        EVAL,
    log:
        f"{LOGS}/evaluate/{{fig}}.log",
    benchmark:
        f"{BENCHMARKS}/evaluate/{{fig}}.tsv"
    wildcard_constraints:
        fig="|".join(EVAL_KINDS["profile"]) or "(?!)",
    conda:
        TORCH_ENV
    # The CPUs a GPU job gets on SLURM (cpus_per_gpu), capped by --cores: on a small machine it takes them all,
    # so no other job of this run is timed beside it (the profile records what else kept CPUs busy)
    threads: GPU["cpus_per_gpu"]
    resources:
        **gpu_resources("1h"),
    params:
        spec=lambda w: STUDIES.evaluations[w.fig].as_params(),
        device=SETTINGS["device"],
    script:
        "../scripts/profile_timing.py"
