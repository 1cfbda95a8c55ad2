"""Checkpoint files: written atomically and byte-identically (the same object gives the same bytes),
read with a clear error when damaged, and a finished run's final checkpoint. What a checkpoint holds
is training.py's (one dict per run, resumable); model_from_checkpoint reads a run's model from either kind.
"""

from __future__ import annotations

import io
import struct
import sys
import zipfile
import zlib
from pathlib import Path

import torch

from .atomic import atomic_write, durable_replace
from .model import ClusterTransformer
from .run_config import TrainConfig, build_model

CHECKPOINT_FORMAT = 2  # 2: one layout for every run (the stacked loop); 1 was train()'s own, before the one loop
CORRUPT_SUFFIX = ".corrupt"  # an unreadable checkpoint is moved to <name>.corrupt (not an artifact)


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


def read_or_set_aside(path: Path | None) -> dict | None:
    """The checkpoint at path (read onto the CPU), or None: absent, or unreadable and moved aside."""
    if path is None or not path.exists():
        return None
    try:
        return load_checkpoint(path, map_location="cpu")
    except CorruptCheckpointError as err:  # e.g. a disk that lost the tail: start over, keep the evidence
        aside = path.with_name(path.name + CORRUPT_SUFFIX)
        durable_replace(path, aside)
        print(f"warning: {err}; moved it to {aside} and training from scratch", file=sys.stderr)
        return None


# What a finished run's checkpoint.pt keeps of its resume file (training._save): the configuration and
# weights that evaluation reads, and the run's end state. Left out: what only continuing needs (Adam's
# moments, the scheduler, the dropout generator) and the per-step metrics, which the run's metrics
# Parquet holds. At d = 32 that is 0.09 MB instead of 0.9 MB (the committed paper-scale folder keeps one a run).
# Also left out: the wall clock, a measurement (timing.parquet and record.json keep it), so that training a
# run again writes the same checkpoint bytes.
FINAL_KEYS = ("format", "config", "step", "model", "lr", "status", "diverged_step")


def write_final_checkpoint(resume, path) -> None:
    """path (atomically): the final checkpoint of the run whose resume file is `resume`."""
    ckpt = load_checkpoint(resume)
    atomic_save({k: ckpt[k] for k in FINAL_KEYS}, Path(path))


def model_from_checkpoint(path, device="cpu") -> ClusterTransformer:
    ckpt = load_checkpoint(path)
    model = build_model(TrainConfig.from_dict(ckpt["config"]))
    model.load_state_dict(ckpt["model"])
    return model.to(device).eval()
