"""What a training job asks SLURM for, from one formula (docs/cluster.md, "Run time of training jobs").

    runtime (minutes) = ceil((steps x step_seconds x SAFETY + STARTUP_SECONDS) / 60)
    mem_mb            = BASE_MEM_MB + runs x RUN_MEM_MB

steps: the job's longest member's training steps (a stack trains its members together, step by step;
a run of rule `train` trains alone). step_seconds: the seconds one training step of one job takes on the
cluster's GPU. No GPU has run this code yet, so the default is an ASSUMPTION, not a measurement: 0.1 s
a step, whether the job trains one run or a stack of up to 64 (the per-step work of a stack is a few
hundred GFLOP at n = 512, d = 32; launch overhead dominates on a GPU of the A100/H100 class). Override it
with the environment variable ICL_KMEANS_GPU_STEP_SECONDS, e.g. from the `benchmark:` file of a first
finished job:

    python -m icl_kmeans.pipeline.slurm_resources results/benchmarks/train/stack_<name>.tsv --steps 10000

Host memory: a job holds torch and the CUDA context (BASE_MEM_MB) and, per run, its validation tasks
(10 batches of 32 tasks of 512 x 32 floats: 21 MB), model, optimiser and checkpoints (under 1 MB):
RUN_MEM_MB leaves room for 4x that.
"""

from __future__ import annotations

import argparse
import math
import os

ASSUMED_STEP_SECONDS = 0.1
STEP_SECONDS_VARIABLE = "ICL_KMEANS_GPU_STEP_SECONDS"
SAFETY = 2.0  # a job asks for twice its expected time: a slower GPU or a busy node must not kill it
STARTUP_SECONDS = 600  # python and torch import, CUDA initialisation, writing the outputs
BASE_MEM_MB = 8000
RUN_MEM_MB = 100


def step_seconds(environ=os.environ) -> float:
    """The GPU's seconds per training step: ICL_KMEANS_GPU_STEP_SECONDS, else the assumed 0.1 s."""
    raw = environ.get(STEP_SECONDS_VARIABLE, "").strip()
    if not raw:
        return ASSUMED_STEP_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{STEP_SECONDS_VARIABLE}={raw!r}: expected seconds per training step, a positive number")
    return value


def training_resources(steps: int, runs: int, seconds_per_step: float | None = None) -> dict:
    """runtime (minutes) and mem_mb of a training job of `runs` runs whose longest trains `steps` steps."""
    sps = step_seconds() if seconds_per_step is None else seconds_per_step
    runtime = math.ceil((steps * sps * SAFETY + STARTUP_SECONDS) / 60)
    return {"runtime": runtime, "mem_mb": BASE_MEM_MB + runs * RUN_MEM_MB}


def measured_step_seconds(benchmark_tsv: str, steps: int) -> float:
    """Seconds per step of a finished training job, from its Snakemake benchmark file (column s: wall
    seconds), less the assumed start-up."""
    import csv

    with open(benchmark_tsv) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows or "s" not in rows[0]:
        raise ValueError(f"{benchmark_tsv}: not a Snakemake benchmark file (no column 's')")
    wall = max(float(r["s"]) for r in rows)
    return max(wall - STARTUP_SECONDS, wall / 2) / steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m icl_kmeans.pipeline.slurm_resources",
                                 description="seconds per training step measured by a finished job, to export "
                                             f"as {STEP_SECONDS_VARIABLE}")
    ap.add_argument("benchmark", help="results/benchmarks/train/<job>.tsv of a finished training job")
    ap.add_argument("--steps", type=int, required=True, help="training steps of that job's longest member")
    a = ap.parse_args(argv)
    sps = measured_step_seconds(a.benchmark, a.steps)
    res = training_resources(a.steps, 64, sps)
    print(f"export {STEP_SECONDS_VARIABLE}={sps:.4g}   # a {a.steps}-step job then asks for {res['runtime']} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
