"""Evaluation job bodies: each turns trained checkpoints and held-out task sets into one tidy,
long-format Parquet table (explicit schema) for one figure.

The files come keyed as the workflow declared them (the rule's inputs): checkpoints by (run, seed),
test sets by their id; a job never searches file names."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
from tqdm.auto import tqdm

from ..atomic import atomic_write_parquet
from ..checkpoint import model_from_checkpoint
from ..device import resolve_device
from .figure_registry import ModelKey
from .schemas import DISSIMILARITY_SCHEMA, LANDSCAPE_SCHEMA, MULTISTEP_SCHEMA, PROFILE_SCHEMA
from .taskfiles import load_tasks

BASELINE_NAMES = {"lloyd": "Lloyd", "em": "EM"}


def _write(df: pd.DataFrame, schema: pa.Schema, out) -> None:
    df = df[schema.names].sort_values([c for c in schema.names if c not in ("value", "emd")], kind="stable")
    atomic_write_parquet(out, pa.Table.from_pandas(df, schema=schema, preserve_index=False))


def _split_model_key(key: str) -> tuple[str, str | None]:
    """'OH:L2|cauchy' -> ('OH:L2', 'cauchy'); 'OH:L2' -> ('OH:L2', None)."""
    curve, family = ModelKey.parse(key)
    return curve, family or None


def input_file(files: Mapping, key, what: str) -> str:
    """files[key], or a KeyError that names what is missing and what the job was given."""
    if key not in files:
        raise KeyError(f"no {what} {key!r} among this job's inputs {sorted(files, key=str)}")
    return files[key]


def _long(df: pd.DataFrame, id_vars: list, metrics: list) -> pd.DataFrame:
    return df.melt(id_vars=id_vars, value_vars=metrics, var_name="metric", value_name="value")


def multistep(fig: str, spec: dict, seeds, checkpoints: Mapping, testset_files: Mapping, out, device="auto") -> None:
    """checkpoints: (run, seed) -> file; testset_files: test set id -> file."""
    from ..evaluate import baseline_curve, multistep_curve

    dev = resolve_device(device)
    frames = []
    jobs = [(name, ts, key, run, seed) for name, ts in spec["testsets"].items()
            for key, run in spec["models"].items() for seed in seeds]
    metrics = ["log_objective", "objective", "misclustering", "nonfinite"]
    tasks_cache = {}
    for name, ts, key, run, seed in tqdm(jobs, desc=f"{fig} multi-step", mininterval=1.0):
        if name not in tasks_cache:
            tasks_cache[name] = load_tasks(input_file(testset_files, ts["id"], "test set"), device=dev)
        model = model_from_checkpoint(input_file(checkpoints, (run, seed), "checkpoint"), device=dev)
        curve, fam = _split_model_key(key)
        for mode in spec["modes"]:
            df = multistep_curve(model, tasks_cache[name], spec["steps"], mode=mode)
            df = df.assign(figure=fig, testset=name, curve=curve, train_family=fam, run=run, seed=seed, mode=mode)
            frames.append(_long(df, ["figure", "testset", "curve", "train_family", "run", "seed", "mode", "t"],
                                metrics))
    for name, tasks in tasks_cache.items():
        for method in spec["baselines"]:
            df = baseline_curve(tasks, spec["steps"], method=method, empty=spec["lloyd_empty"],
                                seed=spec["baseline_seed"])
            df = df.assign(figure=fig, testset=name, curve=BASELINE_NAMES[method], train_family=None, run=None,
                           seed=None, mode="-")
            frames.append(_long(df, ["figure", "testset", "curve", "train_family", "run", "seed", "mode", "t"],
                                metrics))
    df = pd.concat(frames, ignore_index=True)
    df["seed"] = df["seed"].astype("Int64")
    _write(df, MULTISTEP_SCHEMA, out)


def landscape(fig: str, spec: dict, seed: int, checkpoints: Mapping, testset_files: Mapping, out,
              device="auto") -> None:
    """Loss (Fig 3) or gap (Fig 5) surface around the trained parameters of the first seed.
    checkpoints: (run, seed) -> file; testset_files: test set id -> file."""
    from ..landscape import gap_surface, loss_surface

    dev = resolve_device(device)
    frames = []
    for key, run in tqdm(spec["models"].items(), desc=f"{fig} surfaces"):
        curve, tag = _split_model_key(key)
        model = model_from_checkpoint(input_file(checkpoints, (run, seed), "checkpoint"), device=dev)
        name = tag if spec["surface"] == "gap" else f"d={model.d}"
        ts = spec["testsets"][name]
        tasks = load_tasks(input_file(testset_files, ts["id"], "test set"), device=dev)
        kw = dict(resolution=spec["resolution"], seed=seed)
        if spec["surface"] == "loss":
            df = loss_surface(model, tasks, spec["tau"], spec["regularizer"], **kw)
            metrics = ["loss"]
        else:
            df = gap_surface(model, tasks, tau=spec["tau"], regularizer=spec["regularizer"], **kw)
            metrics = ["gap_mean", "gap_max"]
        fam = tag if spec["surface"] == "gap" else "normal"
        df = df.assign(figure=fig, testset=name, curve=curve, train_family=fam, d=model.d, run=run, seed=seed)
        frames.append(_long(df, ["figure", "testset", "curve", "train_family", "d", "run", "seed", "alpha", "beta"],
                            metrics))
    _write(pd.concat(frames, ignore_index=True), LANDSCAPE_SCHEMA, out)


def dissimilarity(fig: str, spec: dict, testset_files: Mapping, out) -> None:
    """testset_files: test set id -> file."""
    from ..dissimilarity import task_dissimilarity

    sets = {fam: load_tasks(input_file(testset_files, ts["id"], "test set")) for fam, ts in spec["testsets"].items()}
    df = task_dissimilarity(sets).assign(figure=fig)
    _write(df, DISSIMILARITY_SCHEMA, out)


def profile(fig: str, spec: dict, out, device="auto") -> None:
    from ..profiling import profile_grid

    dev = resolve_device(device)
    # cells finished before a stop are kept beside the output (a CPU takes hours at the paper's sizes)
    resume = Path(f"{out}.resume")
    df = profile_grid(spec["ds"], spec["ks"], n=spec["n"], batch=spec["batch"], warmup=spec["warmup"],
                      reps=spec["reps"], device=str(dev), resume=resume)
    _write(df.assign(figure=fig, device=str(dev)), PROFILE_SCHEMA, out)
    resume.unlink(missing_ok=True)
