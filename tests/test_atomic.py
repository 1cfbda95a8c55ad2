"""Crash-safe writes (icl_kmeans.atomic): durable before the rename, nothing half-written, one helper."""

import os
import re
from pathlib import Path

import pytest

from icl_kmeans import atomic

SRC = Path(__file__).resolve().parents[1] / "src" / "icl_kmeans"


def test_file_is_fsynced_before_it_replaces_the_target_and_the_directory_after(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        calls.append(("fsync", "dir" if os.path.isdir(f"/proc/self/fd/{fd}") else "file"))
        return real_fsync(fd)

    def replace(src, dst):
        calls.append(("replace", Path(dst).name))
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    monkeypatch.setattr(atomic.os, "replace", replace)
    target = tmp_path / "out.json"
    atomic.atomic_write_json(target, {"b": 1, "a": [1, 2]})
    assert calls == [("fsync", "file"), ("replace", "out.json"), ("fsync", "dir")]
    assert target.read_text() == '{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "table.parquet"
    target.write_bytes(b"old")

    def half_then_crash(tmp):
        tmp.write_bytes(b"ne")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic.atomic_write(target, half_then_crash)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.parquet"]


def test_no_module_renames_files_except_the_atomic_helper():
    """Every writer goes through icl_kmeans.atomic (one implementation, with the fsyncs)."""
    offenders = [f"{p.relative_to(SRC)}:{i}" for p in sorted(SRC.rglob("*.py")) if p.name != "atomic.py"
                 for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\bos\.(replace|rename)\(", line)]
    assert not offenders, offenders
