"""`review --recompute`: a committed evaluation value changed together with its manifest entry passes every
integrity check, and the recomputation from the committed checkpoint catches it. Runs on a copy of the
committed paper-scale folder (its task sets hard-linked from the folder, regenerated there first if missing)."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from icl_kmeans.review import recompute as R
from icl_kmeans.review.main import run_review
from icl_kmeans.review.manifest import PARQUET, read

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "results" / "paper-scale"
pytestmark = pytest.mark.skipif(not (FOLDER / "results" / PARQUET).is_file(), reason="no committed paper-scale folder")


def _copy(tmp_path: Path) -> Path:
    from icl_kmeans.review.tasksets import restore_task_sets

    cwd = Path.cwd()
    os.chdir(FOLDER)
    try:
        _, unwritten = restore_task_sets(read("results")[0])  # the task sets the folder leaves out (ignored by git)
    finally:
        os.chdir(cwd)
    assert not unwritten, unwritten
    dest = tmp_path / "paper-scale"
    top = str(FOLDER / "results")
    shutil.copytree(top, dest / "results",  # the task sets (not their provenance records) are linked below
                    ignore=lambda d, names: [n for n in names if d == top and n in ("tasks", "review")])
    shutil.copytree(FOLDER / "results" / "tasks", dest / "results" / "tasks", copy_function=os.link)
    return dest


def _seed_picking(cells, want) -> tuple[int, int]:
    """The first draw seed whose one-cell draw (as recompute makes it) is a cell with want(cell)."""
    for seed in range(10_000):
        i = random.Random(seed).sample(range(len(cells)), 1)[0]
        if want(cells.iloc[i]):
            return seed, i
    raise AssertionError("no seed draws such a cell")


def _tamper(results: Path, cell, delta: float) -> None:
    """Changes the cell's log-objective at t = 1 in results/eval/<fig>.parquet and its manifest entry with it."""
    path = results / "eval" / f"{cell['figure']}.parquet"
    table = pq.read_table(path)
    df = table.to_pandas()
    hit = (df["run"] == cell["run"]) & (df["seed"] == cell["seed"]) & (df["testset"] == cell["testset"]) \
        & (df["mode"] == cell["mode"]) & (df["metric"] == "log_objective") & (df["t"] == 1)
    assert hit.sum() == 1
    df.loc[hit, "value"] += delta
    pq.write_table(type(table).from_pandas(df, schema=table.schema, preserve_index=False), path)
    mpath = results / PARQUET
    manifest = pq.read_table(mpath)
    m = manifest.to_pandas()
    rel = f"results/eval/{cell['figure']}.parquet"
    m.loc[m["path"] == rel, "sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    m.loc[m["path"] == rel, "size"] = path.stat().st_size
    pq.write_table(type(manifest).from_pandas(m, schema=manifest.schema, preserve_index=False), mpath)


def test_recompute_catches_a_value_changed_with_its_manifest_entry(tmp_path, monkeypatch):
    dest = _copy(tmp_path)
    cells = R.evaluation_cells(dest / "results")
    seed, i = _seed_picking(cells, lambda c: c["figure"] == "fig12" and c["testset"] == "n=128")  # the cheapest
    cell = cells.iloc[i].to_dict()
    _tamper(dest / "results", cell, 0.01)
    monkeypatch.chdir(dest)
    lines = []
    result = run_review("results", out=dest / "review", echo=lines.append,
                        recompute=1, recompute_seed=seed, retrain_steps=0)
    assert not result.findings and all(c.ok for c in result.comparisons), "the tamper passes every integrity check"
    assert not result.ok and len(result.problems) == 1, result.problems
    problem = result.problems[0]
    assert problem.startswith("RECOMPUTE MISMATCH fig12 n=128") and "largest difference 0.01" in problem, problem
    assert f"recompute: seed {seed}" in "\n".join(lines)
    assert "differs" in (dest / "review" / "report.html").read_text()


def test_recompute_agrees_with_an_untouched_cell_and_rejects_a_bad_n(tmp_path):
    dest = _copy(tmp_path)
    results = dest / "results"
    cells = R.evaluation_cells(results)
    import json

    settings = json.loads((results / "manifest.json").read_text())["settings"]
    seed, _ = _seed_picking(cells, lambda c: c["figure"] == "fig12" and c["testset"] == "n=128")
    out = R.recompute(results, settings, 1, seed, steps=0, echo=lambda line: None)
    # eval and table: 21 t x 4 metrics, less the objective at t = 2..20 (compared at t <= 1 only)
    assert len(out) == 1 and out[0].ok and out[0].values == 2 * (84 - 19), out[0].line()
    with pytest.raises(ValueError, match="evaluation cells"):
        R.recompute(results, settings, len(cells) + 1, seed, steps=0, echo=lambda line: None)
    with pytest.raises(ValueError, match=">= 0"):
        R.recompute(results, settings, -1, seed, steps=0, echo=lambda line: None)
