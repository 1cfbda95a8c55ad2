"""Earth-mover distances between tasks' distance profiles."""

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import wasserstein_distance

from icl_kmeans import sample_tasks
from icl_kmeans.dissimilarity import distance_profile, task_dissimilarity
from icl_kmeans.emd_table import emd_matrix

FAMS = ("normal", "cauchy", "gumbel")


@pytest.fixture(scope="module")
def sets():
    return {f: sample_tasks(4, n=200, d=6, k=5, family=f, seed=21) for f in FAMS}


def test_distance_profile_is_all_squared_distances():
    t = sample_tasks(3, n=20, d=2, k=4, seed=0)
    prof = distance_profile(t)
    assert len(prof) == 3 and all(p.shape == (80,) and p.dtype == np.float64 for p in prof)
    X, C = t.X[1].double(), t.C[1].double()
    brute = sorted(((X[i] - C[j]) ** 2).sum().item() for i in range(20) for j in range(4))
    np.testing.assert_allclose(np.sort(prof[1]), brute, rtol=1e-12, atol=1e-15)


def test_matrix_symmetric_zero_diagonal_and_families_separate(sets):
    df = task_dissimilarity(sets)
    assert list(df.columns) == ["row_family", "row_index", "col_family", "col_index", "emd"] and len(df) == 144
    labels, M = emd_matrix(df.sample(frac=1, random_state=0))  # any row order: tasks ordered by family
    assert labels[:5] == [("normal", 0), ("normal", 1), ("normal", 2), ("normal", 3), ("cauchy", 0)]
    assert M.shape == (12, 12)
    np.testing.assert_array_equal(M, M.T)
    np.testing.assert_array_equal(np.diag(M), 0)
    assert (M[~np.eye(12, dtype=bool)] > 0).all()
    off = ~np.eye(4, dtype=bool)
    within = np.mean([M[4 * b:4 * b + 4, 4 * b:4 * b + 4][off].mean() for b in (0, 1)])
    across = M[0:4, 4:8].mean()
    assert within < across, (within, across)
    p = distance_profile(sets["normal"])[1], distance_profile(sets["cauchy"])[2]
    assert M[1, 6] == pytest.approx(wasserstein_distance(*p), rel=1e-12)


def test_emd_matrix_rejects_incomplete_table(sets):
    df = task_dissimilarity({"normal": sets["normal"]})
    with pytest.raises(ValueError, match="misses some"):
        emd_matrix(df.iloc[1:])
    with pytest.raises(ValueError, match="columns"):
        emd_matrix(pd.DataFrame({"a": [1]}))


def test_bad_input(sets):
    with pytest.raises(ValueError, match="non-empty dict"):
        task_dissimilarity({})
    with pytest.raises(ValueError, match="TaskBatch"):
        task_dissimilarity({"normal": torch.zeros(3, 4, 2)})
    with pytest.raises(ValueError, match="TaskBatch"):
        distance_profile([1, 2])
