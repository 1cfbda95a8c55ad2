"""Bodies of the pipeline's jobs. The scripts in workflow/scripts only unpack `snakemake` and call these."""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from ..stacked import train_stack
from ..training import TrainConfig, resolve_device, train
from .schemas import METRICS_SCHEMA, TIMING_SCHEMA
from .taskfiles import load_tasks


def write_parquet(table: pa.Table, path) -> None:
    """Atomic Parquet write (a crash never leaves a truncated table behind)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def write_json(obj, path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def _write_run_outputs(run: str, cfg: TrainConfig, result, dev, metrics, timing, record) -> dict:
    """Metrics and timing Parquet and the run record of one finished (or diverged) run."""
    m = result.metrics
    write_parquet(pa.Table.from_pandas(m[list(METRICS_SCHEMA.names)], schema=METRICS_SCHEMA, preserve_index=False),
                  metrics)
    write_parquet(pa.Table.from_pandas(m[list(TIMING_SCHEMA.names)], schema=TIMING_SCHEMA, preserve_index=False),
                  timing)
    rec = dict(run=run, seed=cfg.seed, config=cfg.to_dict(), status=result.status, steps_done=result.steps_done,
               diverged_step=result.diverged_step, wall_time=round(result.wall_time, 3), device=result.device,
               device_name=torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or "cpu",
               resumed_from=result.resumed_from, torch=torch.__version__, python=sys.version.split()[0],
               final_rel_val_loss=float(m["rel_val_loss"].dropna().iloc[-1]) if m["rel_val_loss"].notna().any()
               else None)
    write_json(rec, record)
    return rec


def train_run(run: str, config: dict, seed: int, val_path, checkpoint, metrics, timing, record,
              device: str = "auto", progress: bool = True) -> dict:
    """Trains one (configuration, seed), resuming from `<checkpoint>.resume` if an earlier attempt died.

    The resume file lives beside the declared output (Snakemake deletes incomplete outputs, not it)
    and becomes the output by an atomic rename once training is over.
    """
    cfg = TrainConfig.from_dict({**config, "seed": int(seed)})
    dev = resolve_device(device)
    resume = Path(str(checkpoint) + ".resume")
    result = train(cfg, checkpoint=resume, val_tasks=load_tasks(val_path), device=str(dev), progress=progress)
    rec = _write_run_outputs(run, cfg, result, dev, metrics, timing, record)
    os.replace(resume, checkpoint)
    return rec


def train_stack_job(members: list[dict], device: str = "auto", progress: bool = True) -> list[dict]:
    """Trains the members of one stack (dicts with run, config, seed, val, checkpoint, metrics, timing,
    record) together with train_stack, each resuming from its `<checkpoint>.resume`.

    A failed or killed stack job loses nothing: every member trains into its `.resume` file (not a
    declared output, so Snakemake does not delete it) and a finished or diverged member's file says so;
    the retry resumes them all. The outputs are written only when every member is done, checkpoints as
    copies of the resume files, which are removed last (a crash in between leaves them to resume from).
    """
    cfgs = [TrainConfig.from_dict({**m["config"], "seed": int(m["seed"])}) for m in members]
    dev = resolve_device(device)
    resumes = [Path(str(m["checkpoint"]) + ".resume") for m in members]
    results = train_stack(cfgs, checkpoints=resumes, val_tasks=[load_tasks(m["val"]) for m in members],
                          device=str(dev), progress=progress)
    recs = []
    for m, cfg, result, resume in zip(members, cfgs, results, resumes):
        recs.append(_write_run_outputs(m["run"], cfg, result, dev, m["metrics"], m["timing"], m["record"]))
        tmp = Path(str(m["checkpoint"]) + ".tmp")
        shutil.copyfile(resume, tmp)
        os.replace(tmp, m["checkpoint"])
    for resume in resumes:
        resume.unlink()
    return recs
