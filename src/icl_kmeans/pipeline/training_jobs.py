"""Training job bodies: one run, a stack of runs, a bundle of stacks. workflow/scripts/train.py only unpacks
`snakemake` and calls these."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pyarrow as pa
import torch

from ..atomic import atomic_write_json, atomic_write_parquet
from ..checkpoint import write_final_checkpoint
from ..device import resolve_device
from ..run_config import TrainConfig
from ..training import train, train_stack
from .schemas import METRICS_SCHEMA, TIMING_SCHEMA
from .taskfiles import load_tasks


def _write_run_outputs(run: str, cfg: TrainConfig, result, dev, metrics, timing, record) -> dict:
    """Metrics and timing Parquet and the run record of one finished (or diverged) run."""
    m = result.metrics
    atomic_write_parquet(metrics, pa.Table.from_pandas(m[list(METRICS_SCHEMA.names)], schema=METRICS_SCHEMA,
                                                       preserve_index=False))
    atomic_write_parquet(timing, pa.Table.from_pandas(m[list(TIMING_SCHEMA.names)], schema=TIMING_SCHEMA,
                                                      preserve_index=False))
    rec = dict(run=run, seed=cfg.seed, config=cfg.to_dict(), status=result.status, steps_done=result.steps_done,
               diverged_step=result.diverged_step, wall_time=round(result.wall_time, 3), device=result.device,
               device_name=torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or "cpu",
               resumed_from=result.resumed_from, torch=torch.__version__, python=sys.version.split()[0],
               final_rel_val_loss=float(m["rel_val_loss"].dropna().iloc[-1]) if m["rel_val_loss"].notna().any()
               else None)
    atomic_write_json(record, rec)
    return rec


def train_run(run: str, config: dict, seed: int, val_path, checkpoint, metrics, timing, record,
              device: str = "auto", progress: bool = True) -> dict:
    """Trains one (configuration, seed), resuming from `<checkpoint>.resume` if an earlier attempt died.

    The resume file lives beside the declared output (Snakemake deletes the outputs of a failed or
    rerun job, never it); once training is over the output is written from it (checkpoint.FINAL_KEYS:
    weights and end state, without the optimizer state and the per-step metrics). It is kept: a
    rerun of the job (a seed added to a pack, a pack job that failed after this member finished)
    finds the finished state there and rewrites the outputs without training (same metrics; the
    record says resumed_from = the last step). To retrain a run, delete its directory.
    """
    cfg = TrainConfig.from_dict({**config, "seed": int(seed)})
    dev = resolve_device(device)
    resume = Path(str(checkpoint) + ".resume")
    result = train(cfg, checkpoint=resume, val_tasks=load_tasks(val_path), device=str(dev), progress=progress)
    rec = _write_run_outputs(run, cfg, result, dev, metrics, timing, record)
    write_final_checkpoint(resume, checkpoint)
    return rec


def train_stack_job(members: list[dict], device: str = "auto", progress: bool = True) -> list[dict]:
    """Trains the members of one stack job (dicts with run, config, seed, val, checkpoint, metrics,
    timing, record): the members that share their shapes (a stack, studies.STACK_KEYS) together with
    train_stack, the stacks of a bundle one after the other; records in the order of `members`."""
    from .studies import STACK_KEYS

    groups: dict = {}
    for i, m in enumerate(members):
        groups.setdefault(tuple(m["config"][k] for k in STACK_KEYS), []).append(i)
    recs = [None] * len(members)
    for idx in groups.values():
        for i, rec in zip(idx, _train_one_stack([members[i] for i in idx], device, progress)):
            recs[i] = rec
    return recs


def _train_one_stack(members: list[dict], device: str, progress: bool) -> list[dict]:
    """Trains the members of one stack together with train_stack, each resuming from its
    `<checkpoint>.resume`.

    A failed or killed stack job loses nothing: every member trains into its `.resume` file (not a
    declared output, so Snakemake does not delete it) and a finished or diverged member's file says so;
    the retry resumes them all. The outputs are written when every member is done, checkpoints from
    the resume files (write_final_checkpoint), which are kept (as train_run keeps them): a rerun
    restores finished members instead of training them.
    """
    cfgs = [TrainConfig.from_dict({**m["config"], "seed": int(m["seed"])}) for m in members]
    dev = resolve_device(device)
    resumes = [Path(str(m["checkpoint"]) + ".resume") for m in members]
    results = train_stack(cfgs, checkpoints=resumes, val_tasks=[load_tasks(m["val"]) for m in members],
                          device=str(dev), progress=progress)
    recs = []
    for m, cfg, result, resume in zip(members, cfgs, results, resumes):
        recs.append(_write_run_outputs(m["run"], cfg, result, dev, m["metrics"], m["timing"], m["record"]))
        write_final_checkpoint(resume, m["checkpoint"])
    return recs
