"""The spot check trains a figure's cells at a preset's scale, like the pipeline, and checks the claims they decide."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from icl_kmeans.pipeline import settings, studies
from icl_kmeans.review import spotcheck
from icl_kmeans.review.spotcheck import REPO


def test_plan_selects_the_cell_with_the_pipelines_run_ids():
    s, st, curves, seeds = spotcheck.plan("paper", "fig10", {"d": 4, "tau": 0.14}, 3)
    assert seeds == settings.resolve({"preset": "paper"}, REPO / "workflow")["seeds"][:3]
    assert sorted(c.label for c in curves) == sorted(f"{e}:{r}" for e, r in studies.SIX)
    full = studies.build(settings.resolve({"preset": "paper"}, REPO / "workflow"))
    for c in curves:  # the same configuration (hence run id) as the paper preset's run
        assert c.facets["d"] == 4 and c.facets["tau"] == pytest.approx(1 / 7)
        assert full.runs[c.run] == st.runs[c.run]
        assert st.runs[c.run]["steps"] == 10000 and st.runs[c.run]["plateau"] is True


@pytest.mark.parametrize("figure, cell, words", [
    ("fig6", {}, ["not a training figure", "fig10"]),
    ("fig10", {"k": 6}, ["not facets of fig10", "d", "tau"]),
    ("fig10", {"d": 5}, ["no curve of fig10", "cells"]),
])
def test_bad_requests_say_what_is_allowed(figure, cell, words):
    with pytest.raises(ValueError) as e:
        spotcheck.plan("paper", figure, cell, 3)
    for w in words:
        assert w in str(e.value)


def test_cli_rejects_a_malformed_cell(capsys):
    assert spotcheck.main(["--cell", "d4"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_smoke_spot_check_trains_resumes_and_decides_only_its_claims(tmp_path):
    args = dict(preset="smoke", figure="fig10", cell={"d": 4}, seeds=2, results=tmp_path, echo=lambda line: None)
    with pytest.raises(RuntimeError, match="48 of 48 runs are not finished"):
        spotcheck.spotcheck(**args, train=False)
    assert (tmp_path / "runs.md").read_text() == "# Spot check: 0 of 48 runs finished\n\n"
    df = spotcheck.spotcheck(**args)
    runs_md = (tmp_path / "runs.md").read_text()
    assert runs_md.startswith("# Spot check: 48 of 48 runs finished")
    assert runs_md.count("| OH:L2 ") == 4 * 2 + 4  # a row per (tau, seed), then one per tau
    runs = json.loads((tmp_path / "settings.json").read_text())["runs"]
    assert len(runs) == 6 * 4  # six curves x four tau at d = 4
    decided = df[df["status"] != "NOT-RUN"].set_index("id")
    assert {"1a", "1b", "2"} <= set(decided.index)  # Fig 10 claims, here on d = 4 alone
    assert set(df.loc[df["figure"] != "fig10", "status"]) == {"NOT-RUN"}
    assert "d=4" in decided.loc["1a", "detail"] and "d=32" not in decided.loc["1a", "detail"]
    table = pd.read_parquet(tmp_path / "tables" / "fig10.parquet")
    assert set(table["d"]) == {4} and table["seed"].nunique() == 2
    stamp = {p: p.stat().st_mtime_ns for p in tmp_path.glob("runs/*/seed*/checkpoint.pt")}
    again = spotcheck.spotcheck(**args)  # finished runs are not retrained
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("runs/*/seed*/checkpoint.pt")} == stamp
    pd.testing.assert_frame_equal(df, again)
