"""Training (science.md §7, Algorithm 1): Adam on the smoothed k-means loss, fresh tasks every step.

A run is a pure function of its TrainConfig: model initialisation, the tasks of step s, the
validation set and the dropout masks come from seeds derived from (seed, stream, step), so a run
resumed from a checkpoint, or trained in a stack (stacked.py, the one training loop), draws exactly
what the uninterrupted run alone would have drawn.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from . import _checks
from .atomic import atomic_write
from .baselines import lloyd
from .embeddings import EMBEDDINGS
from .losses import REGULARIZERS, kmeans_objective
from .model import ClusterTransformer
from .tasks import FAMILIES, TaskBatch, sample_tasks

CHECKPOINT_FORMAT = 2  # 2: one layout for every run (stacked.py); 1 was train()'s own, before the one loop
CORRUPT_SUFFIX = ".corrupt"  # an unreadable checkpoint is moved to <name>.corrupt (not an artifact)
STREAM_INIT, STREAM_TRAIN, STREAM_VAL = 0, 1, 2
STREAM_DROPOUT = (STREAM_INIT, 1)  # derived_seed(seed, *STREAM_DROPOUT) seeds the run's dropout generator
METRIC_COLUMNS = ("step", "train_loss", "rel_val_loss", "lr", "wall_time")


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


@dataclass
class TrainResult:
    config: TrainConfig
    model: ClusterTransformer
    metrics: "object"  # pandas.DataFrame with METRIC_COLUMNS
    status: str  # "ok" or "diverged"
    steps_done: int
    diverged_step: int | None = None
    wall_time: float = 0.0
    device: str = "cpu"
    resumed_from: int | None = None
    extra: dict = field(default_factory=dict)


def derived_seed(seed: int, stream: int, step: int = 0) -> int:
    """Independent 63-bit seeds per (run seed, stream, step)."""
    return int(np.random.SeedSequence([seed, stream, step]).generate_state(2, np.uint64)[0] >> np.uint64(1))


def resolve_device(device: str | None) -> torch.device:
    """'auto' (or None): CUDA when available, else CPU; 'cuda' fails clearly when there is none."""
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was asked for but torch.cuda.is_available() is False; use 'cpu' or 'auto'")
    return dev


def deterministic_cuda() -> None:
    """On CUDA, ask for deterministic kernels: cuBLAS with a fixed workspace (CUBLAS_WORKSPACE_CONFIG,
    effective when set before the process's first cuBLAS call, which is the case when training is the
    first CUDA work of the process, as in the pipeline's jobs and the CLI) and
    torch.use_deterministic_algorithms(warn_only=True), which makes torch warn, not fail, where an op
    (e.g. a scaled_dot_product_attention backward kernel) has no deterministic version. A process-wide
    setting; what holds is measured by .ci/gpu-check (two identical runs compared)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def to_device(t: torch.Tensor, dev: torch.device) -> torch.Tensor:
    """CPU tensor to dev without a host sync: pinned and non-blocking on CUDA."""
    return t.pin_memory().to(dev, non_blocking=True) if dev.type == "cuda" else t


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


@torch.no_grad()
def relative_loss(model: ClusterTransformer, tasks: TaskBatch, chunk: int = 64) -> float:
    """mean over tasks of L(X, F(X, C)) / L(X, C_lloyd1): below 1, one layer beats one Lloyd step."""
    was_training = model.training
    model.eval()
    dev = next(model.parameters()).device
    ratios = []
    try:
        for s in range(0, len(tasks), chunk):
            X, C = tasks.X[s:s + chunk].to(dev), tasks.C[s:s + chunk].to(dev)
            C_out = model(X, C)
            if not torch.isfinite(C_out).all():  # an exploding model: the run will be reported as diverged
                return math.nan
            ratios.append(kmeans_objective(X, C_out) / kmeans_objective(X, lloyd(X, C, 1)[0]))
    finally:
        model.train(was_training)
    return torch.cat(ratios).mean().item()


def atomic_save(obj, path: Path) -> None:
    """torch.save, crash-safe (see icl_kmeans.atomic)."""
    atomic_write(path, lambda tmp: _save_to(obj, tmp))


SERIALIZATION_ID = ".data/serialization_id"


def _save_to(obj, path: Path) -> None:
    """torch.save, so that the same object gives the same bytes (a task set the review writes again is
    checked by its sha256): through a buffer, so the archive inside is named "archive" and not after
    the temporary file (whose name holds the writer's pid), and with the random id torch writes into
    every archive (SERIALIZATION_ID, read only to tell archives apart) set to zeros."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    data = bytearray(buf.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = next((i for i in z.infolist() if i.filename.endswith(SERIALIZATION_ID)), None)
        if info is not None:
            name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
            start = info.header_offset + 30 + name_len + extra_len
            data[start:start + info.file_size] = b"0" * info.file_size
            crc = struct.pack("<I", zlib.crc32(b"0" * info.file_size))
            data[info.header_offset + 14:info.header_offset + 18] = crc
            _patch_central_crc(data, info.filename.encode(), crc)
    path.write_bytes(bytes(data))


def _patch_central_crc(data: bytearray, name: bytes, crc: bytes) -> None:
    """The CRC-32 of the record `name` in the zip's central directory."""
    pos = data.find(b"PK\x01\x02")
    while pos != -1:
        name_len, extra_len, comment_len = struct.unpack("<HHH", data[pos + 28:pos + 34])
        if data[pos + 46:pos + 46 + name_len] == name:
            data[pos + 16:pos + 20] = crc
            return
        pos = data.find(b"PK\x01\x02", pos + 46 + name_len + extra_len + comment_len)


class CorruptCheckpointError(ValueError):
    """A checkpoint file that torch cannot read (truncated by a crash, or damaged)."""


def load_checkpoint(path, map_location="cpu") -> dict:
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=False)
    except Exception as err:  # torch raises RuntimeError, EOFError, UnpicklingError... depending on the damage
        raise CorruptCheckpointError(f"{path}: unreadable checkpoint ({type(err).__name__}: {err}); it is "
                                     "truncated or damaged: delete it to retrain") from err
    if not isinstance(ckpt, dict):
        raise CorruptCheckpointError(f"{path}: not a checkpoint (a {type(ckpt).__name__}); delete it to retrain")
    if ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: checkpoint format {ckpt.get('format')!r} is not {CHECKPOINT_FORMAT}")
    return ckpt


# What a finished run's checkpoint.pt keeps of its resume file (stacked._save): the configuration and
# weights that evaluation reads, and the run's end state. Left out: what only continuing needs (Adam's
# moments, the scheduler, the dropout generator) and the per-step metrics, which the run's metrics
# Parquet holds. At d = 32 that is 0.09 MB instead of 0.9 MB (the committed paper-scale folder keeps one a run).
FINAL_KEYS = ("format", "config", "step", "model", "lr", "wall_time", "status", "diverged_step")


def write_final_checkpoint(resume, path) -> None:
    """path (atomically): the final checkpoint of the run whose resume file is `resume`."""
    ckpt = load_checkpoint(resume)
    atomic_save({k: ckpt[k] for k in FINAL_KEYS}, Path(path))


def model_from_checkpoint(path, device="cpu") -> ClusterTransformer:
    ckpt = load_checkpoint(path)
    model = build_model(TrainConfig.from_dict(ckpt["config"]))
    model.load_state_dict(ckpt["model"])
    return model.to(device).eval()


def _metrics_frame(rows: list[dict]):
    import pandas as pd

    return pd.DataFrame(rows, columns=list(METRIC_COLUMNS)).astype(
        {"step": "int64", "train_loss": "float64", "rel_val_loss": "float64", "lr": "float64", "wall_time": "float64"})


def train(config: TrainConfig | dict, checkpoint: str | os.PathLike | None = None, val_tasks: TaskBatch | None = None,
          device: str | None = "cpu", progress: bool = False, max_steps: int | None = None) -> TrainResult:
    """Trains F_{d:k} per science.md §7 and returns its metrics, one row per step: a stack of one run
    (icl_kmeans.stacked, the one training loop, says what a checkpoint holds and how divergence,
    resume and corrupt checkpoints are handled).

    checkpoint: written atomically at every validation and at the end; if it exists, training resumes
    from it (its config must match). `max_steps` stops early (tests of interruption); the checkpoint
    then resumes to the identical end state. Parameters and tasks are in torch's default dtype.
    """
    from .stacked import train_stack

    config = TrainConfig.from_dict(config) if isinstance(config, dict) else config
    dtype = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
    return train_stack([config], checkpoints=[checkpoint], val_tasks=None if val_tasks is None else [val_tasks],
                       device=device, progress=progress, max_steps=max_steps, dtype=dtype)[0]
