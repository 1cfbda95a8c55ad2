"""A training run's configuration and its seed streams (science.md §7).

A run is a pure function of its TrainConfig: its initial weights, the tasks of step s, its validation
set and its dropout masks come from seeds derived from (seed, stream, step), so a run resumed from a
checkpoint, or trained in a stack of any size, draws exactly what the uninterrupted run alone draws.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from . import _checks
from .embeddings import EMBEDDINGS
from .losses import REGULARIZERS
from .model import ClusterTransformer
from .tasks import FAMILIES, TaskBatch, sample_tasks

STREAM_INIT, STREAM_TRAIN, STREAM_VAL = 0, 1, 2
STREAM_DROPOUT = (STREAM_INIT, 1)  # derived_seed(seed, *STREAM_DROPOUT) seeds the run's dropout generator


@dataclass
class TrainConfig:
    """Everything that determines a training run (device aside: it is recorded, not part of the identity)."""

    d: int = 4
    k: int = 6
    embedding: str = "OH"
    regularizer: str = "L2"
    tau: float = 0.1
    n: int = 512
    batch: int = 32
    lr: float = 0.01
    steps: int = 10000
    seed: int = 0
    family: str = "normal"
    isotropic: bool = True
    equal_weights: bool = True
    scale: float = 0.1
    eval_every: int = 50
    val_batches: int = 10
    clip_grad: float | None = None
    plateau: bool = False
    gamma: float = 1.0
    bias: bool = False
    dropout: float = 0.0

    def __post_init__(self):
        for name in ("d", "n", "batch", "steps", "eval_every", "val_batches"):
            _checks.positive_int(name, getattr(self, name))
        _checks.positive_int("k", self.k, minimum=2)
        _checks.positive_int("seed", self.seed, minimum=0)
        if self.n < self.k:
            raise ValueError(f"n={self.n} points is invalid for k={self.k} centers; expected n >= k")
        _checks.choice("embedding", self.embedding, EMBEDDINGS)
        _checks.choice("regularizer", self.regularizer, REGULARIZERS)
        _checks.choice("family", self.family, FAMILIES)
        for name in ("tau", "lr", "scale", "gamma"):
            _checks.positive_float(name, getattr(self, name))
        if self.clip_grad is not None:
            _checks.positive_float("clip_grad", self.clip_grad)
        if isinstance(self.dropout, bool) or not isinstance(self.dropout, (int, float)) or not 0 <= self.dropout < 1:
            raise ValueError(f"dropout={self.dropout!r} is invalid; expected 0 <= dropout < 1")
        for name in ("isotropic", "equal_weights", "plateau", "bias"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}={getattr(self, name)!r} is invalid; expected True or False")

    @classmethod
    def from_dict(cls, values: dict) -> "TrainConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown training option(s) {unknown}; allowed: {sorted(known)}")
        return cls(**values)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def derived_seed(seed: int, stream: int, step: int = 0) -> int:
    """Independent 63-bit seeds per (run seed, stream, step)."""
    return int(np.random.SeedSequence([seed, stream, step]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def task_kwargs(config: TrainConfig) -> dict:
    return dict(n=config.n, d=config.d, k=config.k, family=config.family, isotropic=config.isotropic,
                equal_weights=config.equal_weights, scale=config.scale)


def validation_tasks(config: TrainConfig) -> TaskBatch:
    """The run's fixed validation set: val_batches x batch held-out tasks of the training distribution."""
    g = torch.Generator().manual_seed(derived_seed(config.seed, STREAM_VAL))
    return sample_tasks(config.val_batches * config.batch, generator=g, **task_kwargs(config))


def build_model(config: TrainConfig) -> ClusterTransformer:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derived_seed(config.seed, STREAM_INIT))
        return ClusterTransformer(config.d, config.k, config.embedding, gamma=config.gamma, bias=config.bias,
                                  dropout=config.dropout)
