"""Task sets a results folder may leave out: they are a pure function of the parameters their job
recorded (the manifest's `params`), so the review writes a missing one again from them, and the usual
sha256 check against the manifest then decides whether it is the same file.

A committed paper-scale folder leaves them out (a 320-task test set at n = 512, d = 32 is ~21 MB).
Writing them needs torch; without it they stay missing, and the review says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

TASK_KINDS = ("validation task set", "test task set")


def restore_task_sets(manifest: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Writes every task set the manifest lists and the disk lacks; returns (written, not written with why)."""
    missing = [r for r in manifest.itertuples(index=False) if r.kind in TASK_KINDS and not Path(r.path).exists()]
    if not missing:
        return [], []
    try:
        from ..pipeline.taskfiles import write_test_set, write_validation_set
    except ImportError as err:  # the review's own environment has no torch
        return [], [f"{r.path}: not regenerated ({err}); run the review with the project's environment"
                    for r in missing]
    written, failed = [], []
    for r in missing:
        p = json.loads(r.params) if r.params else {}
        try:
            if r.kind == "validation task set":
                seed = int(re.search(r"seed(\d+)\.pt$", r.path).group(1))
                write_validation_set(p["dist"], seed, p["batch"], p["val_batches"], r.path)
            else:
                write_test_set(p["testset"], p["seed"], r.path)
            written.append(r.path)
        except (KeyError, AttributeError, TypeError, ValueError) as err:
            failed.append(f"{r.path}: not regenerated from its manifest params ({type(err).__name__}: {err})")
    return written, failed
