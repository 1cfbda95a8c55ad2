"""Every figure, drawn at smoke scale from synthetic tables, prints as it is: no text past the canvas, no two
texts overlapping, no note over the next panel, every axis labelled (or sharing its row's or column's
label), a page's width at most and fonts of at least 7 pt (pipeline/figures/layout.py). And the check
itself catches a figure made to clip, overlap and go unlabelled on purpose."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from icl_kmeans.pipeline import figure_registry, figures, studies
from icl_kmeans.pipeline.figures.layout import PAGE_WIDTH, layout_defects

sys.path.insert(0, str(Path(__file__).parent))
from figure_tables import aggregated_tables  # noqa: E402
from test_aggregate import smoke_settings  # noqa: E402


@pytest.fixture(scope="module")
def settings():
    return smoke_settings()


@pytest.fixture(scope="module")
def tables(tmp_path_factory, settings):
    # every facet: the full smoke figure is what must fit the page
    return aggregated_tables(tmp_path_factory.mktemp("runs"), studies.build(settings), trim=False)


@pytest.fixture(scope="module")
def quick():
    from icl_kmeans.pipeline import settings as settings_mod

    return settings_mod.resolve({})


@pytest.mark.parametrize("preset", ["smoke", "quick"])
@pytest.mark.parametrize("fig", figure_registry.plot_ids())
def test_every_figure_has_no_layout_defect(tables, settings, quick, fig, preset):
    """At smoke scale, and with the quick preset's settings over the same tables: its long cells make every
    synthetic 8-step run a short one, so the panels carry their longest titles ('M=..., before the
    learning transition') and the scale line its longest form. A figure drawn in parts (Figs 15, 16): each
    part, from its figure's table."""
    import matplotlib.pyplot as plt

    s = settings if preset == "smoke" else quick
    figure = figures.draw(fig, tables[figure_registry.parent(fig)], figures.figure_settings(fig, s))
    try:
        assert layout_defects(figure) == []
    finally:
        plt.close(figure)


def _defective_figure():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH + 1, 3))
    for ax in axes:
        ax.plot([0, 1], [0, 1])
    axes[0].set_title("a title far too long for its panel, running off the canvas" * 3, loc="left")
    axes[0].set_xlabel("step")
    axes[1].set_xlabel("step")
    axes[0].text(0.5, 0.5, "a note running over the next panel", transform=axes[0].transAxes, fontsize=6)
    axes[0].text(0.5, 0.5, "a second note on the first", transform=axes[0].transAxes, fontsize=8)
    return figure


def test_the_layout_check_catches_a_figure_made_to_clip():
    import matplotlib.pyplot as plt

    figure = _defective_figure()
    try:
        defects = layout_defects(figure)
    finally:
        plt.close(figure)
    text = "\n".join(defects)
    assert f"in wide, more than a page's {PAGE_WIDTH} in" in text
    assert "'a title far too long" in text and "extends past the canvas" in text
    assert "'a note running over the next panel' runs out of its panel" in text
    assert "'a note running over the next panel' is set in 6 pt" in text
    assert "'a note running over the next panel' overlaps 'a second note on the first'" in text
    assert "the y-axis has tick labels but no label" in text
    assert "the x-axis" not in text  # both x-axes are labelled


def test_a_label_on_one_panel_of_a_row_or_column_serves_it():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(2, 2, figsize=(5, 4), sharex="col", sharey="row")
    for ax in axes.flat:
        ax.plot([0, 1], [0, 1])
    axes[1, 0].set_xlabel("step")
    axes[1, 1].set_xlabel("step")
    axes[0, 0].set_ylabel("loss")
    axes[1, 0].set_ylabel("loss")
    figure.tight_layout()
    try:
        assert layout_defects(figure) == []
    finally:
        plt.close(figure)


def _panel():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1.6, 1.6))
    fig.subplots_adjust(left=0.3, right=0.95, bottom=0.3, top=0.95)
    ax.set_xlabel("step", fontsize=7)
    ax.set_ylabel("loss", fontsize=7)
    ax.tick_params(labelsize=7)
    return fig, ax


def test_end_labels_stay_in_their_panel_when_the_top_is_crowded():
    """Fig 4 at quick scale: three curves end near the top and one near the bottom; making room at the top
    used to shift the whole stack down, and the bottom label left the panel."""
    from icl_kmeans.pipeline.figures.common import end_labels

    fig, ax = _panel()
    ends = {"OH:NE": (150.0, 2.10, True), "BN:NE": (150.0, 2.09, True), "NA:NE": (150.0, 2.08, True),
            "NA:L2": (2000.0, 1.25, False), "BN:L2": (2000.0, 1.06, False), "OH:L2": (2000.0, 0.98, False)}
    for c, (x, y, _) in ends.items():
        ax.plot([0, x], [2.4, y], label=c)
    ax.set_ylim(0.89, 2.25)
    end_labels(ax, ends)
    assert not layout_defects(fig), layout_defects(fig)
    low = next(t for t in ax.texts if t.get_text() == "0.98")
    assert low.get_position()[1] > 0.89  # kept in the panel, not pushed below its bottom


def test_end_labels_never_narrow_a_one_point_panel_and_keep_its_ticks():
    from icl_kmeans.pipeline.figures.common import end_labels, integer_x

    fig, ax = _panel()
    ax.plot([0], [1.2], marker="o")
    integer_x(ax)
    lo, hi = ax.get_xlim()
    end_labels(ax, {"OH:L2": (0.0, 1.2, False)})
    assert ax.get_xlim()[1] >= hi
    assert not layout_defects(fig), layout_defects(fig)


def test_a_log_axis_spanning_less_than_a_1_2_5_step_gets_few_ticks():
    """Fig 13 at quick scale, training loss 16-30: matplotlib's LogLocator fell back to a dense linear
    locator whose labels (30, 32) overlapped."""
    from icl_kmeans.pipeline.figures.common import log_y

    fig, ax = _panel()
    ax.plot([50, 100, 150], [30.5, 20.0, 15.8])
    log_y(ax)
    fig.canvas.draw()
    shown = [t for t in ax.get_yticklabels() if t.get_text() and ax.get_ylim()[0] <= t.get_position()[1] <= ax.get_ylim()[1]]
    assert 2 <= len(shown) <= 4, [t.get_text() for t in shown]
    assert not layout_defects(fig), layout_defects(fig)


def test_a_validation_row_spanning_decades_is_drawn_on_a_log_axis_with_its_labels_at_their_values():
    """The committed Fig 11: lr = 1 spikes to ~10^6 early on; on a linear axis its four curves, ending near 2,
    lay flat on the bottom edge. Its panel gets a log axis (the other learning rates keep the linear one), and
    the end labels are placed in the axis' own (log) units."""
    import json

    import matplotlib.pyplot as plt
    import pyarrow.parquet as pq

    results = Path(__file__).resolve().parents[1] / "results" / "paper-scale" / "results"
    settings = json.loads((results / "manifest.json").read_text())["settings"]
    table = pq.read_table(results / "tables" / "fig11.parquet").to_pandas()
    figure = figures.draw("fig11", table, figures.figure_settings("fig11", settings))
    rows = [ax for ax in figure.axes if ax.get_subplotspec().rowspan.start == 1]  # the validation row
    titles = [ax.get_title() for ax in figure.axes if ax.get_subplotspec().rowspan.start == 0]
    assert titles == ["lr=0.001", "lr=0.01", "lr=1"], titles
    assert [ax.get_yscale() for ax in rows] == ["linear", "linear", "log"]
    for ax in rows:
        ends = sorted(y for _, y, _ in ax.end_values.values())
        shown = sorted((float(t.get_text()), t.get_position()[1]) for t in ax.texts)
        assert [v for v, _ in shown] == [float(f"{y:.2f}") for y in ends]
        # the lowest by its value; the others stacked above it in the order of their values (on the log axis a
        # line of text spans most of a decade: four curves ending near 2 are labelled up to ~200)
        assert 1 / 1.6 < shown[0][1] / shown[0][0] < 1.6, shown
        assert all(a[1] < b[1] for a, b in zip(shown, shown[1:])), shown
    assert not layout_defects(figure), layout_defects(figure)
    plt.close(figure)


def test_every_committed_paper_scale_figure_has_no_layout_defect():
    """The committed folder's figures drawn from its real tables (the smoke tables above cannot produce the
    long axes, the crowded end labels or the diverged values of a real run)."""
    import json

    import matplotlib.pyplot as plt
    import pyarrow.parquet as pq

    results = Path(__file__).resolve().parents[1] / "results" / "paper-scale" / "results"
    settings = json.loads((results / "manifest.json").read_text())["settings"]
    st = studies.build(settings)
    drawn = 0
    for fig in st.targets():
        if fig == "table1":
            continue
        table = pq.read_table(results / "tables" / f"{fig}.parquet").to_pandas()
        for stem in figure_registry.drawn_ids(fig, [c.facets for c in st.training.get(fig, [])] or None):
            figure = figures.draw(stem, table, figures.figure_settings(stem, settings))
            assert not layout_defects(figure), (stem, layout_defects(figure))
            plt.close(figure)
            drawn += 1
    assert drawn >= 12


def test_a_subset_that_leaves_a_panel_of_the_grid_empty_says_so(tables, settings):
    """Fig 10 grown by a cell (tau = 0.1 at d = 4 and 32, tau = 1 at d = 4 only): the empty (d = 32, tau = 1)
    panel says it is not in the subset, its row and column keep their labels; a full preset with a missing
    panel is still an error."""
    df = tables["fig10"]
    taus, ds = sorted(df["tau"].unique()), sorted(df["d"].unique())
    gap = (df["d"] == ds[-1]) & (df["tau"] == taus[-1])
    grown = df[~gap | (df["tau"] == taus[0])]
    grown = grown[(grown["tau"].isin([taus[0], taus[-1]]))]
    subset = {**settings, "subset": "fig10:d=4|32,tau=0.1;fig10:d=4,tau=1"}
    figure = figures.draw("fig10", grown, figures.figure_settings("fig10", subset))
    notes = [t.get_text() for ax in figure.axes for t in ax.texts if "not in this subset" in t.get_text()]
    assert len(notes) == 1 and f"d={ds[-1]}" in notes[0], notes
    assert not layout_defects(figure), layout_defects(figure)
    with pytest.raises(ValueError, match="no data"):
        figures.draw("fig10", grown, figures.figure_settings("fig10", settings))


@pytest.mark.parametrize("subset,held", [
    # Fig 8 grown a column at a time: one entry in the title, its families in the order they were added
    ("fig8:train_family=cauchy;fig8:train_family=normal;fig8:train_family=gumbel|laplace|lognormal",
     "subset (train_family=cauchy|normal|gumbel|laplace|lognormal)"),
    # two keys differ: two entries, as given
    ("fig10:d=4|32,tau=0.1;fig10:d=4,tau=1", "subset (d=4|32, tau=0.1; d=4, tau=1)"),
    # one key differs: one entry
    ("fig10:d=4,tau=0.1;fig10:d=32,tau=0.1", "subset (d=4|32, tau=0.1)"),
])
def test_a_subsets_title_states_each_figures_cells_once(subset, held):
    from icl_kmeans.pipeline.figures.common import figure_title

    fig = subset.partition(":")[0]
    title = figure_title(fig, {"subset": subset})
    assert held in title, title
    assert figure_title(fig, {"subset": fig}) == figure_registry.figure(fig).title  # the whole figure: no subset
