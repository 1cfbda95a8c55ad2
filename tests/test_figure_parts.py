"""Figures the paper letters in parts (issue 39): the registry lists them with the paper's letters (Figure 15(d):
d = 32, tau = 0.1), the letters never depend on which parts a run holds, Figs 15 and 16 are drawn one part a
file (fig15a ... fig16d, each from its figure's table), and a subset holding one part plans only that part."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from icl_kmeans.pipeline import aggregate as agg
from icl_kmeans.pipeline import figure_registry as R
from icl_kmeans.pipeline import figures, settings as settings_mod, studies
from icl_kmeans.pipeline.figures.layout import PAGE_WIDTH, layout_defects, text_artists

sys.path.insert(0, str(Path(__file__).parent))
from test_aggregate import run_files, smoke_settings, training_fixture  # noqa: E402

# The paper's parts (its text: 15(d) is d = 32 with OH's k = 25 divergences; 16(a), (b) tau = 1 with k = 10 in
# (b); 16(c), (d) tau = 0.1; 14(a) tau = 0.25; 17(a) d = k = 16, 17(b) d = 32, k = 25).
PAPER_PARTS = {
    "fig14": {"a": {"tau": 0.25}, "b": {"tau": 0.1}},
    "fig15": {"a": {"d": 4, "tau": 1.0}, "b": {"d": 4, "tau": 0.1}, "c": {"d": 32, "tau": 1.0},
              "d": {"d": 32, "tau": 0.1}},
    "fig16": {"a": {"k": 6, "tau": 1.0}, "b": {"k": 10, "tau": 1.0}, "c": {"k": 6, "tau": 0.1},
              "d": {"k": 10, "tau": 0.1}},
    "fig17": {"a": {"d": 16, "k": 16, "tau": 1.0}, "b": {"d": 32, "k": 25, "tau": 1.0}},
}


def test_the_registry_lists_the_papers_parts_with_its_letters():
    for fig, parts in PAPER_PARTS.items():
        assert {p.letter: dict(p.facets) for p in R.figure(fig).parts} == parts, fig
    assert [f.id for f in R.TABLE if f.split] == ["fig15", "fig16"]
    assert tuple(R.PART_IDS) == ("fig15a", "fig15b", "fig15c", "fig15d", "fig16a", "fig16b", "fig16c", "fig16d")
    row, part = R.part_of("fig15d")
    assert row.id == "fig15" and part.letter == "d" and dict(part.facets) == {"d": 32, "tau": 0.1}
    assert R.parent("fig15d") == "fig15" and R.parent("fig6") == "fig6" and R.figure("fig16b").id == "fig16"
    assert R.drawn_ids("fig15") == ("fig15a", "fig15b", "fig15c", "fig15d") and R.drawn_ids("fig14") == ("fig14",)
    assert R.drawn_ids("fig15c") == ("fig15c",)
    with pytest.raises(ValueError, match="no part"):
        R.part_of("fig14a")  # Fig 14 is drawn whole
    assert R.part_title("fig15d") == "Figure 15(d): k sweep (columns), d = 32, tau = 0.1"
    assert R.part_title("fig16a") == "Figure 16(a): task families (columns), d = 32, k = 6, tau = 1"
    assert [p for p in R.plot_ids() if p.startswith(("fig15", "fig16"))] == list(R.PART_IDS)


@pytest.mark.parametrize("preset", ["smoke", "paper"])
def test_every_curve_of_a_lettered_figure_is_in_exactly_one_part(preset):
    """The registry's parts and studies.build's facets agree: each part holds curves, each curve one part."""
    st = studies.build(settings_mod.resolve({"preset": preset}))
    for fig in PAPER_PARTS:
        parts = R.figure(fig).parts
        for c in st.training[fig]:
            assert sum(p.matches(c.facets) for p in parts) == 1, (fig, c.facets)
        assert R.present_parts(fig, [c.facets for c in st.training[fig]]) == parts


def test_a_subset_of_one_part_plans_only_that_parts_files():
    s = settings_mod.resolve({"preset": "paper", "subset": "fig15:d=32,tau=0.1"})
    st = studies.build(s)
    assert R.drawn_ids("fig15", [c.facets for c in st.training["fig15"]]) == ("fig15d",)
    s = settings_mod.resolve({"preset": "paper", "subset": "fig16:k=10;fig15:d=4,tau=1,k=25"})
    st = studies.build(s)
    assert R.drawn_ids("fig16", [c.facets for c in st.training["fig16"]]) == ("fig16b", "fig16d")
    assert R.drawn_ids("fig15", [c.facets for c in st.training["fig15"]]) == ("fig15a",)


def test_a_parts_caption_is_its_figures_and_names_the_part():
    text = R.caption_template("fig15d")
    assert text.startswith("Part (d) of Figure 15: d = 32, tau = 0.1")
    assert R.caption_template("fig15") in text
    from icl_kmeans.pipeline.figures.panels import _panels

    st = studies.build(smoke_settings())
    assert sorted(_panels("fig15d", st)) == [f"k={k} d=32 τ=0.1" for k in (10, 16, 25, 6)]  # the part's panels only
    assert figures.caption_line("fig15d", smoke_settings(), st)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("parts")
    st = studies.build(smoke_settings())
    out = {}
    for fig in ("fig14", "fig15", "fig16"):
        curves = training_fixture(root, fig, st, seeds=(1, 2, 3), diverged="first", trim=0 if fig == "fig15" else 4)
        agg.aggregate(fig, root / f"{fig}.parquet", curves=curves, files=run_files(root, curves, [1, 2, 3]))
        out[fig] = pq.read_table(root / f"{fig}.parquet").to_pandas()
    return out


def test_a_part_draws_its_block_alone_titled_with_the_papers_letter(tables):
    import matplotlib.pyplot as plt

    s = smoke_settings()
    figure = figures.draw("fig15d", tables["fig15"], figures.figure_settings("fig15d", s))
    try:
        assert figure._suptitle.get_text() == "Figure 15(d): k sweep (columns), d = 32, tau = 0.1"
        titles = [ax.get_title().split("\n")[0] for ax in figure.axes if ax.get_title()]
        assert [t.split(" ")[0] for t in titles] == ["k=6", "k=10", "k=16", "k=25"]  # one block: 2 rows x 4 columns
        assert len(figure.axes) == 8
        width, height = figure.get_size_inches()
        assert width <= PAGE_WIDTH and height <= 4.5
        assert min(a.get_fontsize() for _, a in text_artists(figure) if hasattr(a, "get_fontsize")) >= 7
        assert layout_defects(figure) == []
    finally:
        plt.close(figure)
    with pytest.raises(ValueError, match="drawn in parts"):
        figures.draw("fig15", tables["fig15"], figures.figure_settings("fig15", s))
    one = tables["fig15"][(tables["fig15"]["d"] == 4)]  # a table without d = 32: part (d) has no data
    with pytest.raises(ValueError, match=r"no data for part \(d\)"):
        figures.draw("fig15d", one, figures.figure_settings("fig15d", s))


def test_a_lettered_figure_drawn_whole_takes_the_registrys_letters(tables, monkeypatch):
    """Fig 14's blocks are lettered by the registry's parts, not by their position; with one block (the
    committed paper-scale Fig 14 holds tau = 0.1 alone) the block is named by its facets, unlettered."""
    import dataclasses

    import matplotlib.pyplot as plt

    s = smoke_settings()
    df = tables["fig14"]

    def row_labels(table):
        figure = figures.draw("fig14", table, figures.figure_settings("fig14", s))
        try:
            return [ax.get_ylabel().split("\n")[0] for ax in figure.axes if "\n" in ax.get_ylabel()]
        finally:
            plt.close(figure)

    assert row_labels(df) == ["(a) τ=0.25", "(b) τ=0.1"]
    assert row_labels(df[df["tau"] == 0.1]) == ["τ=0.1"]
    swapped = dataclasses.replace(R.BY_ID["fig14"], parts=(R.Part("b", (("tau", 0.25),)), R.Part("a", (("tau", 0.1),))))
    monkeypatch.setitem(R.BY_ID, "fig14", swapped)
    assert row_labels(df) == ["(b) τ=0.25", "(a) τ=0.1"]  # the registry's letters, whatever the order


def test_the_rebuild_draws_a_part_from_its_figures_table(tmp_path, tables):
    import pandas as pd

    from icl_kmeans.review import rebuild

    s = smoke_settings()
    results = tmp_path / "results"
    (results / "tables").mkdir(parents=True)
    tables["fig16"].to_parquet(results / "tables" / "fig16.parquet")
    shipped = [results / "figures" / "fig16c.pdf", results / "figures" / "fig16c.png"]
    figures.plot("fig16c", results / "tables" / "fig16.parquet", *shipped, figures.figure_settings("fig16c", s))
    manifest = pd.DataFrame({"path": [p.as_posix() for p in shipped], "params": [None, None],
                             "config_digest": [None, None], "packages": [None, None]})
    assert rebuild.targets_of(manifest, results.as_posix()) == [("fig16c", [p.as_posix() for p in shipped])]
    out = rebuild.rebuild(manifest, {"settings": s}, tmp_path / "scratch", results=results.as_posix(), cache=False)
    assert [(c.target, c.status) for c in out] == [("fig16c", "identical"), ("fig16c", "identical")]


def test_a_whole_figure_of_an_older_version_is_superseded_not_redrawn(tmp_path, tables):
    """A workdir that ran an older version keeps its whole fig16.png beside the new parts: the manifest marks it
    of another configuration (current = False), and the rebuild lists it as superseded instead of failing to
    draw an id that this version draws in parts. Listed as current, the same file is an integrity problem."""
    import pandas as pd

    from icl_kmeans.review import rebuild

    results = tmp_path / "results"
    (results / "tables").mkdir(parents=True)
    tables["fig16"].to_parquet(results / "tables" / "fig16.parquet")
    old = [results / "figures" / "fig16.pdf", results / "figures" / "fig16.png"]
    old[0].parent.mkdir(parents=True)
    for p in old:
        p.write_bytes(b"drawn whole by an older version")
    for current, status in ((False, "superseded"), (True, "differs")):
        manifest = pd.DataFrame({"path": [p.as_posix() for p in old], "params": [None, None],
                                 "config_digest": [None, None], "packages": [None, None],
                                 "current": [current, current]})
        out = rebuild.rebuild(manifest, {"settings": smoke_settings()}, tmp_path / "scratch",
                              results=results.as_posix(), cache=False)
        assert [(c.target, c.status) for c in out] == [("fig16", status)] * 2, out
        assert all(c.ok for c in out) == (not current)


def test_the_review_report_embeds_each_drawn_part(tmp_path):
    from icl_kmeans.review.report_claims import evidence

    figs = tmp_path / "figures"
    figs.mkdir()
    for stem in ("fig15b", "fig15d", "fig6"):
        (figs / f"{stem}.png").write_bytes(b"png")
    img = lambda p: f"<img alt='{p.name}'>"  # noqa: E731
    html, present = evidence("fig15", figs, tmp_path, tmp_path / "report.html", img, None)
    assert present and html.count("<img") == 2 and "fig15b.png" in html and "fig15d.png" in html
    html, present = evidence("fig16", figs, tmp_path, tmp_path / "report.html", img, None)
    assert not present
    html, present = evidence("fig6", figs, tmp_path, tmp_path / "report.html", img, None)
    assert present and html.count("<img") == 1


def test_the_manifest_marks_a_whole_fig15_file_as_of_another_configuration():
    from icl_kmeans.review import manifest as M

    known = {"runs": set(), "dists": set(), "testsets": set(), "figs": {"fig15", "fig15d", "fig14"}}
    assert M.is_current("results/figures/fig15d.png", known) and M.is_current("results/tables/fig15.parquet", known)
    assert M.is_current("results/figures/fig14.png", known)
    assert not M.is_current("results/figures/fig15.png", known)  # drawn in parts now
    assert not M.is_current("results/figures/fig15a.png", known)  # a part this configuration does not draw
