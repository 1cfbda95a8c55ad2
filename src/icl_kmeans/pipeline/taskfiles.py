"""Task sets on disk: the tensors of a TaskBatch plus the generator parameters that made them."""

from __future__ import annotations

from pathlib import Path

import torch

from ..tasks import TaskBatch, sample_tasks
from ..checkpoint import atomic_save
from ..run_config import TrainConfig, validation_tasks

FIELDS = ("X", "C", "labels", "locations", "scales", "weights")


def save_tasks(batch: TaskBatch, path, /, **generator) -> None:
    # generator keys sorted: the same set written again from the manifest's (canonical, sorted) params
    # gives the same bytes
    atomic_save({**{f: getattr(batch, f) for f in FIELDS}, "params": batch.params,
                 "generator": dict(sorted(generator.items()))}, Path(path))


def load_tasks(path, device="cpu") -> TaskBatch:
    blob = torch.load(path, map_location=device, weights_only=False)
    return TaskBatch(**{f: blob[f] for f in FIELDS}, params=blob["params"])


def write_validation_set(dist: dict, seed: int, batch: int, val_batches: int, path) -> None:
    """The validation set train() would draw itself for any run of this distribution and seed."""
    cfg = TrainConfig(seed=seed, batch=batch, val_batches=val_batches, **dist)
    save_tasks(validation_tasks(cfg), path, purpose="validation", seed=seed, batch=batch, val_batches=val_batches,
               **dist)


def write_test_set(testset: dict, seed: int, path) -> None:
    spec = {k: v for k, v in testset.items() if k not in ("tasks", "id")}
    tasks = sample_tasks(testset["tasks"], seed=seed, **spec)
    save_tasks(tasks, path, purpose="evaluation", seed=seed, tasks=testset["tasks"], **spec)
