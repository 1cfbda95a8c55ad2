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
from .emd_table import COLUMNS
from .tasks import TaskBatch


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
    emd_table.emd_matrix makes the square matrix.
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
