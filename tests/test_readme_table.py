"""README.md's reproduction table is what `python -m icl_kmeans.review readme` writes from the claims."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from icl_kmeans.review import readme_table as R

REPO = Path(__file__).resolve().parents[1]


def test_readme_holds_the_generated_table():
    assert R.main(check=True, repo=REPO) == 0, "README.md is stale: run `python -m icl_kmeans.review readme`"


def _repo(tmp_path: Path) -> Path:
    """A repository with README.md and the committed paper-scale folder's tables, records and settings."""
    repo = tmp_path / "repo"
    src = REPO / R.PAPER_SCALE
    dst = repo / R.PAPER_SCALE
    for part in ("tables", "runs", "metrics"):
        shutil.copytree(src / part, dst / part, ignore=shutil.ignore_patterns("checkpoint.pt"))
    shutil.copy2(src / "manifest.json", dst / "manifest.json")
    shutil.copy2(REPO / "README.md", repo / "README.md")
    return repo


def test_a_changed_table_cell_or_a_hand_edit_makes_the_check_fail(tmp_path):
    repo = _repo(tmp_path)
    assert R.main(check=True, repo=repo) == 0
    readme = repo / "README.md"
    text = readme.read_text()
    readme.write_text(text.replace("| 7a | Fig 5, §3 |", "| 7a | Fig 5, §3 (edited) |"))
    assert R.main(check=True, repo=repo) == 1
    assert R.main(check=False, repo=repo) == 0 and readme.read_text() == text
    # the claims are checked afresh from the tables: a different value changes the table
    fig5 = repo / R.PAPER_SCALE / "tables" / "fig5.parquet"
    df = pd.read_parquet(fig5)
    df.loc[df["metric"] == "gap_mean", "value"] /= 10
    df.to_parquet(fig5, index=False)
    assert R.main(check=True, repo=repo) == 1


def test_the_quick_column_comes_from_the_committed_quick_claims(tmp_path):
    repo = _repo(tmp_path)
    (repo / R.QUICK_CLAIMS).parent.mkdir(parents=True)
    pd.DataFrame({"id": ["1a"], "status": ["FAIL"], "measured": ["1.0"], "threshold": ["1"]}).to_csv(
        repo / R.QUICK_CLAIMS, index=False)
    R.main(repo=repo)
    text = (repo / "README.md").read_text()
    assert "| claim | figure | the paper | quick | paper scale |" in text
    assert "| FAIL 1.0 (threshold 1) | PASS" in text and "not in the quick run's file" in text


def test_missing_markers_are_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="markers"):
        R.render("no markers here", "table")
