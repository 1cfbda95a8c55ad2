"""Subsets (settings key subset): only the chosen cells, with the full preset's run ids, seeds cut to
the first three, errors that say what exists, and a scale line that says what was run."""

import pytest

from icl_kmeans.pipeline import settings, studies
from icl_kmeans.pipeline.figures.scale import scale_line
from icl_kmeans.pipeline.subset import SubsetError, describe, parse


def _build(**config):
    s = settings.resolve({"preset": "paper", **config})
    return s, studies.build(s)


def test_parse_accepts_a_string_or_a_list():
    want = [("fig10", {"d": ["32"], "tau": ["0.1"]}), ("fig6", {"curve": ["OH:L2", "BN:L2"]})]
    assert parse("fig10:d=32,tau=0.1; fig6:curve=OH:L2|BN:L2") == want
    assert parse(["fig10:d=32,tau=0.1", "fig6:curve=OH:L2|BN:L2"]) == want
    assert parse(None) == parse("") == []
    assert describe("fig10:d=32,tau=0.1;fig6") == "fig10 d=32 tau=0.1; fig6"


def test_the_scale_line_states_each_figure_once():
    """A subset grown entry by entry (docs/paper-scale.md) names each figure once, its entries merged as the
    figure's title merges them; entries that differ in two keys stay apart; a whole figure is just its name."""
    grown = "fig8:train_family=cauchy;fig5;fig8:train_family=normal;fig10:d=4|32,tau=0.1;fig10:d=4,tau=1"
    assert describe(grown) == "fig8 train_family=cauchy|normal; fig5; fig10 d=4|32 tau=0.1; fig10 d=4 tau=1"
    assert describe("fig6:curve=OH:L2;fig6") == "fig6"


def test_a_subset_keeps_the_full_presets_run_ids_and_cuts_seeds():
    full_s, full = _build()
    s, st = _build(subset="fig10:d=32,tau=0.1;fig6:curve=OH:L2|BN:L2")
    assert s["seeds"] == full_s["seeds"][:3]
    assert st.targets() == ["fig6", "fig10"]
    fig10 = {(c.label, c.run) for c in st.training["fig10"]}
    assert fig10 == {(c.label, c.run) for c in full.training["fig10"] if c.facets == {"d": 32, "tau": 0.1}}
    assert len(fig10) == 6
    assert st.evaluations["fig6"].models == {k: v for k, v in full.evaluations["fig6"].models.items()
                                                if k in ("OH:L2", "BN:L2")}
    assert set(st.runs) == {r for _, r in fig10} | set(st.evaluations["fig6"].models.values())
    assert all(st.runs[r] == full.runs[r] for r in st.runs)
    assert _build(subset="fig10:d=32", seeds=[1, 2])[0]["seeds"] == [1, 2]  # seeds given: kept


def test_tau_as_the_paper_prints_it_and_fig18_brings_fig8():
    _, st = _build(subset="fig10:tau=0.14,d=4,curve=OH:NE")
    assert [(c.label, round(c.facets["tau"], 4)) for c in st.training["fig10"]] == [("OH:NE", 0.1429)]
    _, st = _build(subset="fig18:train_family=cauchy")
    assert st.targets() == ["fig8", "fig18"] and set(st.evaluations) == {"fig8", "fig18"}
    assert sorted(st.evaluations["fig8"].models) == ["BN:L2|cauchy", "NA:L2|cauchy", "OH:L2|cauchy"]


@pytest.mark.parametrize("subset,words", [
    ("fig99", ["unknown figure 'fig99'", "fig10"]),
    ("fig10:q=1", ["fig10 has no key ['q']", "'curve', 'd', 'tau'"]),
    ("fig10:d=5", ["no curve of fig10 matches", "d=32, tau=0.1"]),
    ("fig6:curve=XX:L2", ["no model of fig6 matches", "OH:L2"]),
    ("fig10:d", ["'d' in 'fig10:d' is not KEY=VALUE"]),
    ("fig9:curve=OH:L2", ["fig9 draws no trained models"]),
])
def test_bad_subsets_say_what_exists(subset, words):
    with pytest.raises(SubsetError) as err:
        _build(subset=subset)
    for w in words:
        assert w in str(err.value)


def test_the_scale_line_names_the_cells_and_seeds():
    s, _ = _build(subset="fig10:d=32,tau=0.1")
    line = scale_line("fig10", s)
    assert line.startswith("paper scale, subset: fig10 d=32 tau=0.1 (seeds 153476998, 235510766, 205084180): ")
    assert "3 seeds" in line and "M=10000" in line and "overridden" not in line
