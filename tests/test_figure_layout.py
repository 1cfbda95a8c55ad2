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
