"""Task dissimilarity (Fig 9 / Fig 19): earth-mover distance between distance profiles.

A task's distance profile is the empirical distribution of the squared distances of all its points
to all its initial centers, { ||x_i - c_j||^2 : i = 1..n, j = 1..k } (n k values). Two tasks are
compared by the 1-D earth-mover (Wasserstein-1) distance of their profiles,
    EMD(P, Q) = integral |F_P(r) - F_Q(r)| dr      (scipy.stats.wasserstein_distance).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from scipy.stats import wasserstein_distance

from .attention import sqdist
from .tasks import TaskBatch

COLUMNS = ["row_family", "row_index", "col_family", "col_index", "emd"]


def distance_profile(tasks: TaskBatch) -> list[np.ndarray]:
    """Per task, the n*k squared point-to-initial-center distances as a float64 1-D array."""
    if not isinstance(tasks, TaskBatch):
        raise ValueError(f"tasks must be a TaskBatch (from sample_tasks), got {type(tasks).__name__}")
    if len(tasks) < 1:
        raise ValueError("tasks is empty; expected at least one task")
    with torch.no_grad():
        r = sqdist(tasks.X.double(), tasks.C.double())  # (B, n, k)
    return [row.reshape(-1).cpu().numpy() for row in r]


def task_dissimilarity(task_sets: dict[str, TaskBatch]) -> pd.DataFrame:
    """EMD between the distance profiles of every pair of tasks of all task sets.

    Tasks are ordered block by block in the dict's order (e.g. normal, cauchy, gumbel, laplace,
    lognormal), index = position within its block. One row per ordered pair (row, col), including
    the diagonal (0) and both (i, j) and (j, i) (equal: each pair is computed once and mirrored).
    """
    if not isinstance(task_sets, dict) or not task_sets:
        raise ValueError(f"task_sets must be a non-empty dict family -> TaskBatch, got {task_sets!r:.80}")
    labels, profiles = [], []
    for family, tasks in task_sets.items():
        if not isinstance(family, str):
            raise ValueError(f"task_sets key {family!r} is invalid; expected a string (the family name)")
        for i, p in enumerate(distance_profile(tasks)):
            labels.append((family, i))
            profiles.append(p)
    m = len(profiles)
    D = np.zeros((m, m))
    for a in range(m):
        for b in range(a + 1, m):
            D[a, b] = D[b, a] = wasserstein_distance(profiles[a], profiles[b])
    rows = [(fa, ia, fb, ib, D[a, b]) for a, (fa, ia) in enumerate(labels) for b, (fb, ib) in enumerate(labels)]
    return pd.DataFrame(rows, columns=COLUMNS).astype({"row_index": "int64", "col_index": "int64", "emd": "float64"})


def as_matrix(df: pd.DataFrame) -> tuple[list[str], np.ndarray]:
    """The (m, m) EMD matrix of a task_dissimilarity table and its labels "family:index", in first-seen row order."""
    if not isinstance(df, pd.DataFrame) or not set(COLUMNS) <= set(df.columns):
        raise ValueError(f"df must be a DataFrame with columns {COLUMNS} (from task_dissimilarity)")
    keys = list(dict.fromkeys(zip(df["row_family"], df["row_index"])))
    pos = {key: i for i, key in enumerate(keys)}
    M = np.full((len(keys), len(keys)), np.nan)
    for rf, ri, cf, ci, v in df[COLUMNS].itertuples(index=False):
        if (cf, ci) not in pos:
            raise ValueError(f"column task {cf}:{ci} never appears as a row task; the table is not square")
        M[pos[(rf, ri)], pos[(cf, ci)]] = v
    if np.isnan(M).any():
        raise ValueError("the table misses some (row, col) pairs; expected all pairs from task_dissimilarity")
    return [f"{f}:{i}" for f, i in keys], M
