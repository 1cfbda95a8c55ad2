"""Evaluation jobs take their files keyed as the workflow declared them (test sets by id, checkpoints by
(run, seed)), never by searching names: 'normal_...' is a substring of 'lognormal_...', '..._t32' of
'..._t320'."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from icl_kmeans.pipeline import evaluation_jobs, studies
from icl_kmeans.pipeline.taskfiles import write_test_set


def _testset(family: str, tasks: int) -> dict:
    ts = dict(family=family, n=16, d=2, k=3, isotropic=True, equal_weights=True, scale=0.1, tasks=tasks)
    return {**ts, "id": studies.testset_id(ts)}


def test_a_missing_input_is_named():
    normal, lognormal = _testset("normal", 32), _testset("lognormal", 32)
    assert normal["id"] in lognormal["id"]  # the names really collide as substrings
    files = {lognormal["id"]: f"results/tasks/test/{lognormal['id']}.pt"}
    with pytest.raises(KeyError, match=f"no test set '{normal['id']}' among this job's inputs"):
        evaluation_jobs.input_file(files, normal["id"], "test set")
    with pytest.raises(KeyError, match=r"no checkpoint \('OH-L2_x', 3\)"):
        evaluation_jobs.input_file({("OH-L2_x", 1): "a.pt"}, ("OH-L2_x", 3), "checkpoint")


def test_dissimilarity_job_loads_each_family_from_its_own_file(tmp_path):
    sets = {fam: _testset(fam, 2) for fam in ("lognormal", "normal")}
    files = {}
    for ts in sets.values():  # lognormal first: a substring search for 'normal_...' would pick its file
        path = tmp_path / f"{ts['id']}.pt"
        write_test_set(ts, seed=1, path=path)
        files[ts["id"]] = str(path)
    out = tmp_path / "fig9.parquet"
    evaluation_jobs.dissimilarity("fig9", {"testsets": sets}, files, out)
    df = pq.read_table(out).to_pandas()
    within = df[(df["row_family"] == df["col_family"]) & (df["row_index"] != df["col_index"])]
    across = df[df["row_family"] != df["col_family"]]
    assert (across["emd"] > 0).all()  # two different task sets, not the lognormal file read twice
    assert set(within["row_family"]) == {"normal", "lognormal"}
