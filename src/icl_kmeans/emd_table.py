"""The task-dissimilarity table (Fig 9 / Fig 19) as a square matrix: one definition shared by the
dissimilarity computation, the figures and the tests. No torch import."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .constants import FAMILIES

COLUMNS = ["row_family", "row_index", "col_family", "col_index", "emd"]


def emd_matrix(df: pd.DataFrame) -> tuple[list[tuple[str, int]], np.ndarray]:
    """The (m, m) EMD matrix of a dissimilarity table and its tasks (family, index), ordered by family
    (normal, cauchy, gumbel, laplace, lognormal; other names after them, alphabetically), then index."""
    if not isinstance(df, pd.DataFrame) or not set(COLUMNS) <= set(df.columns):
        raise ValueError(f"df must be a DataFrame with columns {COLUMNS} (from task_dissimilarity)")
    rank = {f: i for i, f in enumerate(FAMILIES)}
    keys = sorted(set(zip(df["row_family"], df["row_index"])), key=lambda k: (rank.get(k[0], len(rank)), k[0], k[1]))
    pos = {k: i for i, k in enumerate(keys)}
    m = np.full((len(keys), len(keys)), np.nan)
    for rf, ri, cf, ci, v in df[COLUMNS].itertuples(index=False):
        if (cf, ci) not in pos:
            raise ValueError(f"column task {cf}:{ci} never appears as a row task; the table is not square")
        m[pos[(rf, ri)], pos[(cf, ci)]] = v
    if np.isnan(m).any():
        raise ValueError("the table misses some (row, col) pairs; expected all pairs from task_dissimilarity")
    return keys, m
