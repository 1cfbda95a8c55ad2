"""Crash-safe file writes: the one helper every writer of the package uses.

A file is written to a temporary sibling (`<name>.<pid>.tmp`, same directory so that the rename
cannot cross file systems), flushed and fsynced, renamed over the target with os.replace, and the
directory is fsynced so that the rename itself survives a power loss. A reader therefore sees the
old file or the complete new one, never a truncated one; a crash leaves at most a `*.tmp` file,
which readers and the manifest ignore. No torch or pandas import: plotting jobs use it too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

TMP_SUFFIX = ".tmp"


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # a platform without directory handles (Windows): the rename is all we can do
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path, write: Callable[[Path], object]) -> Path:
    """Calls write(tmp) to create the temporary file, then makes it `path` durably and atomically.

    `write` receives the temporary path and must create the whole file there (torch.save,
    pq.write_table, tarfile.open, ...). On any error the temporary file is removed and the target is
    left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}{TMP_SUFFIX}")
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


def durable_replace(src, dst) -> Path:
    """os.replace(src, dst) (same directory), then fsync the directory so that the rename is durable."""
    dst = Path(dst)
    os.replace(src, dst)
    _fsync_dir(dst.parent)
    return dst


def atomic_write_text(path, text: str) -> Path:
    return atomic_write(path, lambda tmp: tmp.write_text(text))


def atomic_write_json(path, obj, indent: int = 2) -> Path:
    """JSON with sorted keys and a final newline (stable bytes for the same object)."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, sort_keys=True) + "\n")


def atomic_write_parquet(path, table) -> Path:
    """A pyarrow Table as Parquet (pyarrow is imported here, not with the module)."""
    import pyarrow.parquet as pq

    return atomic_write(path, lambda tmp: pq.write_table(table, tmp))
