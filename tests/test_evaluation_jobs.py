"""Evaluation jobs find their test sets by exact file name, never by substring."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from icl_kmeans.pipeline import evaluation_jobs, studies
from icl_kmeans.pipeline.taskfiles import write_test_set


def _testset(family: str, tasks: int) -> dict:
    ts = dict(family=family, n=16, d=2, k=3, isotropic=True, equal_weights=True, scale=0.1, tasks=tasks)
    return {**ts, "id": studies.testset_id(ts)}


def test_colliding_names_resolve_exactly():
    normal, lognormal = _testset("normal", 32), _testset("lognormal", 32)
    t32, t320 = normal["id"], _testset("normal", 320)["id"]
    assert normal["id"] in lognormal["id"] and t32 in t320  # the names really collide as substrings
    files = [f"results/tasks/test/{i}.pt" for i in (lognormal["id"], t320, normal["id"])]
    assert evaluation_jobs.testset_file(files, normal["id"]) == f"results/tasks/test/{normal['id']}.pt"
    assert evaluation_jobs.testset_file(files, t320) == f"results/tasks/test/{t320}.pt"
    with pytest.raises(ValueError, match="exactly one test set file named"):
        evaluation_jobs.testset_file(files[:2], normal["id"])


def test_dissimilarity_job_loads_each_family_from_its_own_file(tmp_path):
    sets = {fam: _testset(fam, 2) for fam in ("lognormal", "normal")}
    files = []
    for ts in sets.values():  # lognormal first: a substring search for 'normal_...' would pick its file
        path = tmp_path / f"{ts['id']}.pt"
        write_test_set(ts, seed=1, path=path)
        files.append(str(path))
    out = tmp_path / "fig9.parquet"
    evaluation_jobs.dissimilarity("fig9", {"testsets": sets}, files, out)
    df = pq.read_table(out).to_pandas()
    within = df[(df["row_family"] == df["col_family"]) & (df["row_index"] != df["col_index"])]
    across = df[df["row_family"] != df["col_family"]]
    assert (across["emd"] > 0).all()  # two different task sets, not the lognormal file read twice
    assert set(within["row_family"]) == {"normal", "lognormal"}
