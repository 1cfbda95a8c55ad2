"""Figures and Table 1 from synthetic aggregated tables (no training), and the figure rules' DAG."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from icl_kmeans.pipeline import figure_registry, figures, studies, table1
from icl_kmeans.pipeline import settings as settings_mod

sys.path.insert(0, str(Path(__file__).parent))
from figure_tables import aggregated_tables  # noqa: E402
from test_aggregate import smoke_settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def settings():
    return smoke_settings()


@pytest.fixture(scope="module")
def registry(settings):
    return studies.build(settings)


@pytest.fixture(scope="module")
def tables(tmp_path_factory, registry):
    """fig -> aggregated table (DataFrame) for every figure, built by the real aggregation code."""
    return aggregated_tables(tmp_path_factory.mktemp("runs"), registry)


@pytest.mark.parametrize("fig", figure_registry.plot_ids())
def test_every_figure_draws_pdf_and_png(tmp_path, tables, settings, fig):
    pdf, png = tmp_path / f"{fig}.pdf", tmp_path / f"{fig}.png"
    figures.plot(fig, tables[figure_registry.parent(fig)], pdf, png, figures.figure_settings(fig, settings))
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 5000
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 5000
    assert b"CreationDate" not in pdf.read_bytes()


@pytest.mark.parametrize("fig", ["fig2", "fig6", "fig9", "fig3"])
def test_figures_are_byte_deterministic(tmp_path, tables, settings, fig):
    s = figures.figure_settings(fig, settings)
    figures.plot(fig, tables[fig], tmp_path / "a.pdf", tmp_path / "a.png", s)
    figures.plot(fig, tables[fig], tmp_path / "b.pdf", tmp_path / "b.png", s)
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_figure_bytes_same_in_a_fresh_process(tmp_path, tables, settings):
    table = tmp_path / "fig7.parquet"
    pq.write_table(pa.Table.from_pandas(tables["fig7"], preserve_index=False), table)
    s = figures.figure_settings("fig7", settings)
    figures.plot("fig7", table, tmp_path / "a.pdf", tmp_path / "a.png", s)
    code = ("import sys, json; from icl_kmeans.pipeline import figures; "
            "figures.plot('fig7', sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))")
    subprocess.run([sys.executable, "-c", code, str(table), str(tmp_path / "b.pdf"), str(tmp_path / "b.png"),
                    json.dumps(s)], check=True, env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin",
                                                     "PYTHONPATH": str(REPO / "src"),  # this checkout's code
                                                     "HOME": str(tmp_path), "MPLCONFIGDIR": str(tmp_path / "mpl")})
    assert (tmp_path / "a.pdf").read_bytes() == (tmp_path / "b.pdf").read_bytes()
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


@pytest.mark.parametrize("fig", ["fig2", "fig6", "fig1", "fig9", "fig5", "fig17"])
def test_empty_table_raises(tmp_path, tables, settings, fig):
    empty = tables[fig].iloc[0:0]
    with pytest.raises(ValueError, match="no data"):
        figures.plot(fig, empty, tmp_path / "x.pdf", tmp_path / "x.png", figures.figure_settings(fig, settings))
    assert not (tmp_path / "x.pdf").exists() and not (tmp_path / "x.png").exists()


def test_missing_panel_raises(tmp_path, tables, settings):
    df = tables["fig2"]
    df = df[~((df["panel"] == "b") & (df["d"] == 16) & (df["metric"] == "rel_val_loss"))]
    with pytest.raises(ValueError, match="rel_val_loss"):
        figures.plot("fig2", df, tmp_path / "x.pdf", tmp_path / "x.png", figures.figure_settings("fig2", settings))
    df = tables["fig8"]
    df = df[~((df["testset"] == "cauchy") & (df["train_family"] == "gumbel"))]
    with pytest.raises(ValueError, match="no data"):
        figures.plot("fig8", df, tmp_path / "x.pdf", tmp_path / "x.png", figures.figure_settings("fig8", settings))


@pytest.mark.parametrize("fig", ["fig8", "fig18"])
def test_a_family_grid_of_one_trained_column_draws_that_column(tmp_path, tables, settings, fig):
    """A subset such as fig8:train_family=cauchy trains one column: the grid draws it (every test
    family, one column) and leaves the untrained columns out instead of refusing or drawing them empty."""
    df = tables[fig]
    one = df[df["run"].isna() | (df["train_family"] == "cauchy")]
    figure = figures.draw(fig, one, figures.figure_settings(fig, settings))
    titles = {ax.get_title() for ax in figure.axes} - {""}
    assert titles == {"trained on\ncauchy"}
    n_tests = df["testset"].nunique()
    assert len([ax for ax in figure.axes if ax.lines]) == n_tests
    figures.plot(fig, one, tmp_path / "x.pdf", tmp_path / "x.png", figures.figure_settings(fig, settings))
    assert (tmp_path / "x.png").read_bytes()[:8] == PNG_MAGIC


def test_scale_line_names_the_preset(settings):
    line = figures.scale_line("fig2", settings)
    assert line.startswith("smoke preset: ") and ", 3 seeds, M=4, n=32, B=2" in line.split("[paper")[0]
    assert ", 10 seeds, M=10000, n=512, B=32" in line.split("[paper: ")[1]
    assert "M=2" in figures.scale_line("fig11", settings)
    assert "training n in {32, 48}" in figures.scale_line("fig13", settings)
    assert "evaluated at n in {16, 64}" in figures.scale_line("fig12", settings)
    assert "3 tasks per family" in figures.scale_line("fig19", settings)
    assert "d in {4, 8} x k in {10, 16}" in figures.scale_line("fig1", settings)
    assert "overridden: steps" in figures.scale_line("fig2", {**settings, "overrides": ["steps"]})
    paper = {**smoke_settings(), **yaml.safe_load(settings_mod.preset_file("paper").read_text()),
             "preset": "paper", "overrides": []}
    assert "[paper" not in figures.scale_line("fig6", paper)


@pytest.mark.parametrize("preset", ["smoke", "quick", "paper"])
def test_the_figures_scale_statement_is_one_line_at_a_page_width(preset):
    """The line under a figure's title says the scale in one line at a full page width (finish() wraps it at
    that many characters): the paper's values only where they differ; the full statement is in the caption."""
    from icl_kmeans.pipeline import figure_registry
    from icl_kmeans.pipeline.figures import common, scale

    width = int(common.PAGE_WIDTH * 72 / (0.56 * common.FONT["note"]))
    resolved = settings_mod.resolve({"preset": preset})
    for fig in figure_registry.ids(drawn=True):
        line = scale.short_scale_line(fig, figures.figure_settings(fig, resolved))
        assert len(line) <= width, (fig, len(line), line)
        if preset != "paper" and "[paper: " in line:  # what the run shares with the paper is not repeated
            ours = line.split(" [paper: ")[0].split(": ", 1)[1].split(", ")
            assert not set(ours) & set(line.split(" [paper: ")[1].rstrip("]").split(", ")), line


def test_paper_scale_comes_with_the_settings(settings):
    """The paper's part of a scale line comes from the paper settings that figure_settings carries (the
    workflow passes its own, resolved once), else from the package's paper preset."""
    assert figures.paper_settings() == settings_mod.resolve({"preset": "paper"})
    paper = {**figures.paper_settings(), "steps": 12345, "training": "reference"}
    line = figures.scale_line("fig2", figures.figure_settings("fig2", settings, paper))
    assert "[paper: reference training (plateau, bias, dropout 0.01), 10 seeds, M=12345, n=512, B=32" in line
    assert ", M=10000, " in figures.scale_line("fig2", settings)
    assert "paper" not in figures.figure_settings("fig2", {**settings, "preset": "paper"})


def test_scale_lines_say_which_training(settings):
    untagged = {k: v for k, v in settings.items() if k != "training"}  # settings from before the key: plain
    for s, name in ((untagged, "plain Adam"), ({**settings, "training": "plain"}, "plain Adam"),
                    ({**settings, "training": "reference"}, "reference training (plateau, bias, dropout 0.01)")):
        for fig in ("fig2", "fig3", "fig6", "fig12"):  # training curves, surfaces, multi-step: trained models
            line = figures.scale_line(fig, figures.figure_settings(fig, s))
            assert line.startswith(f"smoke preset: {name}, 3 seeds"), line
        for fig in ("fig1", "fig9", "table1"):  # no trained model
            assert "Adam" not in figures.scale_line(fig, s) and "reference" not in figures.scale_line(fig, s)
    with pytest.raises(ValueError, match="'training' = 'fancy'"):
        figures.scale_line("fig2", {**settings, "training": "fancy"})


def test_palette_is_consistent():
    assert figures.PALETTE["Lloyd"] == "#000000"
    labels = [f"{e}:{r}" for e in ("OH", "BN", "NA") for r in ("NE", "L2")]
    assert len({figures.PALETTE[c] for c in labels}) == 6


def test_table1(tmp_path, tables, settings):
    csv, md = tmp_path / "t.csv", tmp_path / "t.md"
    t = table1.write(tables["table1"], csv, md, figures.figure_settings("table1", settings))
    ks = sorted(settings["table1_k"])
    assert list(t["attention"]) == ["materialised"] * len(ks) + ["fused"] * len(ks)  # paper-comparable first
    assert list(t["k"]) == ks + ks
    assert list(t.columns) == table1.COLUMNS
    paper = table1.paper_comparable(t)
    assert list(paper["k"]) == ks and set(paper["attention"]) == {"materialised"}
    row = paper[paper["k"] == 25].iloc[0]
    assert (row.extra_dims_OH, row.extra_dims_BN) == (25, 5)
    assert row.forward_speedup == pytest.approx((32 + 25) / (32 + 5))
    assert row.memory_reduction_pct == pytest.approx(100 * (1 - 37 / 57))
    fused = t[(t["attention"] == "fused") & (t["k"] == 25)].iloc[0]
    assert fused.forward_ms_OH == pytest.approx(row.forward_ms_OH / 2)  # the fixture's fused costs half
    back = pd.read_csv(csv)
    assert list(back.columns) == table1.COLUMNS and len(back) == len(t)
    text = md.read_text()
    assert "smoke preset" in text and "| 25 | 25 / 5 |" in text and "x |" in text
    assert text.index("## materialised attention: paper-comparable") < text.index("## fused attention")
    profile = tables["table1"]
    assert "not recorded" in text if "other_cpus_busy" not in set(profile["metric"]) else "not recorded" not in text
    # what else ran while timing: the table says whether its times are the code's alone
    cells = profile[profile["metric"] == "forward_train_ms"].assign(metric="other_cpus_busy", value=0.1)
    for busy, said in ((0.1, "Timed on an idle machine (other processes: at most 0.10 CPUs busy)"),
                       (1.2, "Other processes kept up to 1.20 CPUs busy while timing: these times are not")):
        busy_profile = pd.concat([profile[profile["metric"] != "other_cpus_busy"], cells.assign(value=busy)])
        t = table1.write(busy_profile, csv, md, figures.figure_settings("table1", settings))
        assert t["other_cpus_busy"].max() == pytest.approx(busy) and said in md.read_text(), md.read_text()
    with pytest.raises(ValueError):
        table1.build(tables["table1"][tables["table1"]["d"] != 32])
    with pytest.raises(ValueError):
        table1.build(tables["table1"].iloc[0:0])
    with pytest.raises(ValueError, match="no attention column"):
        table1.build(tables["table1"].drop(columns=["attention"]))


def test_fig1_shows_both_attentions(tables, settings):
    figure = figures.draw("fig1", tables["fig1"], figures.figure_settings("fig1", settings))
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    assert len(titles) == 8
    assert sum("materialised (as the paper)" in t for t in titles) == 4
    assert sum("fused (this pipeline)" in t for t in titles) == 4


def test_captions_exist_and_render(settings):
    jinja2 = pytest.importorskip("jinja2")
    from docutils.core import publish_parts

    for fig in studies.TARGETS + tuple(figure_registry.PART_IDS):  # a part's: its figure's, the part named
        template = figure_registry.caption_template(fig)
        assert template, fig
        panels = figures.caption_line(fig, settings) if fig != "table1" else ""
        params = type("P", (), {"scale": figures.scale_line(fig, settings), "panels": panels})
        text = jinja2.Environment().from_string(template).render(snakemake=type("S", (), {"params": params}))
        assert "smoke preset" in text and panels in text
        with warnings.catch_warnings():  # Snakemake's own call (writer_name) is deprecated in docutils 0.22
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            html = publish_parts(text, writer_name="html", settings_overrides={"report_level": 2, "halt_level": 2})
        assert html["body"]


def dry_run_rules(target: str, *config: str) -> set[str]:
    """The rules of the jobs that `snakemake -n target --config ...` would run."""
    out = subprocess.run([sys.executable, "-m", "snakemake", target, "-n", "--config", *config], cwd=REPO,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout + out.stderr
    stats = text[text.index("Job stats:"):].split("\n\n")[0].splitlines()[3:]
    return {line.split()[0] for line in stats if line.strip() and not line.startswith("total")}


@pytest.mark.skipif(not (REPO / "Snakefile").exists(), reason="no Snakefile")
def test_one_figure_builds_only_what_it_needs():
    assert dry_run_rules("fig2", "preset=smoke", "train_jobs=seed") == {
        "validation_tasks", "train", "aggregate", "plot", "fig2"}
    assert dry_run_rules("table1", "preset=smoke") == {"profile_timing", "aggregate", "write_table1", "table1"}


def _training_rows(values: dict, val_steps: dict) -> pd.DataFrame:
    """A training table of one curve: values[seed] = train_loss at steps 1, 2, ...; val_steps[seed] = its
    validation steps (rel_val_loss 0.5)."""
    rows = []
    for seed, losses in values.items():
        for step, v in enumerate(losses, start=1):
            rows.append(dict(step=step, metric="train_loss", value=float(v), seed=seed))
        rows += [dict(step=s, metric="rel_val_loss", value=0.5, seed=seed) for s in val_steps[seed]]
    df = pd.DataFrame(rows).assign(figure="fig10", d=4, curve="OH:L2", embedding="OH", regularizer="L2", run="R",
                                   status="ok", diverged_step=pd.NA)
    return df[["figure", "d", "curve", "embedding", "regularizer", "run", "seed", "status", "diverged_step", "step",
               "metric", "value"]]


def test_training_loss_is_averaged_over_each_validation_interval():
    from icl_kmeans.pipeline.figures.training import block_means

    df = _training_rows({1: [1, 2, 3, 4, 10, 20, 30, 40], 2: [5, 5, 5, 9, 9, 9]}, {1: [0, 4, 8], 2: [0, 4]})
    out = block_means(df)
    train = out[out["metric"] == "train_loss"].sort_values(["seed", "step"])
    assert train[["seed", "step", "value"]].values.tolist() == [[1, 4, 2.5], [1, 8, 25.0], [2, 4, 6.0], [2, 6, 9.0]]
    pd.testing.assert_frame_equal(out[out["metric"] == "rel_val_loss"].reset_index(drop=True),
                                  df[df["metric"] == "rel_val_loss"].reset_index(drop=True))


def test_training_curve_is_the_median_of_per_seed_block_means(settings):
    # per seed the block means are 2.5 / 25, 3 / 30, 100 / 100; the median over seeds 3 and 30. The raw
    # per-step median would zigzag (1, 2, 3, ... per step) and have 8 points.
    values = {1: [1, 2, 3, 4, 10, 20, 30, 40], 2: [2, 2, 4, 4, 30, 30, 30, 30], 3: [100] * 8}
    df = _training_rows(values, {s: [0, 4, 8] for s in values})
    figure = figures.draw("fig10", df, figures.figure_settings("fig10", settings))
    line = figure.axes[0].lines[0]
    assert list(line.get_xdata()) == [4, 8] and list(line.get_ydata()) == [3.0, 30.0]


def test_a_panel_whose_runs_all_diverged_says_no_false_M_and_shows_its_one_point(settings):
    """Fig 11 at lr = 1: every seed diverges at step 2, before its second validation. The panel title
    must not claim M = 2 (M is where finished runs stop), and the one validation point is drawn."""
    s = figures.figure_settings("fig10", settings)
    ok = _training_rows({1: [5] * s["steps"], 2: [6] * s["steps"]}, {1: [0, s["steps"]], 2: [0, s["steps"]]})
    bad = _training_rows({1: [5, 9], 2: [6, 9]}, {1: [0], 2: [0]}).assign(d=32, run="R32", status="diverged",
                                                                          diverged_step=2)
    figure = figures.draw("fig10", pd.concat([ok, bad], ignore_index=True), s)
    titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
    assert titles == [f"(short: M={s['steps']})", "(every run diverged)"], titles
    assert [figure.axes[i].get_ylabel().split("\n")[0] for i in (0, 2)] == ["d=4", "d=32"]  # the blocks' rows
    val_line = [ln for ln in figure.axes[3].lines if ln.get_label() == "OH:L2"][0]
    assert len(val_line.get_xdata()) == 1 and val_line.get_marker() == "o"


def test_short_curves_are_drawn_faint_and_their_panels_say_so():
    """The quick preset: a panel of 150-step runs is a pipeline check (faint, grey, titled so); a panel
    that mixes long L2 and short NE curves (Fig 4 at tau = 0.1) names both; a long panel says its M."""
    from icl_kmeans.pipeline import settings as settings_mod
    from icl_kmeans.pipeline.figures.common import FAINT
    from icl_kmeans.pipeline.figures.training import SHORT_FACE

    s = figures.figure_settings("fig10", settings_mod.resolve({}))
    short = _training_rows({1: [5] * 150}, {1: [0, 150]})
    long_l2 = _training_rows({1: [5] * 2000}, {1: [0, 2000]}).assign(d=32, run="L")
    short_ne = short.assign(d=32, curve="OH:NE", regularizer="NE", run="S")
    long_only = _training_rows({1: [5] * 3000}, {1: [0, 3000]}).assign(d=16, run="X")
    figure = figures.draw("fig10", pd.concat([short, long_l2, short_ne, long_only], ignore_index=True), s)
    top = [ax for ax in figure.axes if ax.get_title()]
    assert [ax.get_title() for ax in top] == [
        "(short: M=150)",
        "(M=3000)",
        "L2: M=2000\nNE: M=150, faint"]
    alphas = {ax.get_title(): {ln.get_label(): ln.get_alpha() for ln in ax.lines if not ln.get_label().startswith("_")}
              for ax in top}
    assert alphas[top[0].get_title()] == {"OH:L2": FAINT}
    assert alphas[top[1].get_title()] == {"OH:L2": 1.0}
    assert alphas[top[2].get_title()] == {"OH:L2": 1.0, "OH:NE": FAINT}
    from matplotlib.colors import to_hex
    assert to_hex(top[0].get_facecolor()) == SHORT_FACE and to_hex(top[2].get_facecolor()) != SHORT_FACE


def test_captions_list_the_panels_that_test_the_paper():
    from icl_kmeans.pipeline import settings as settings_mod

    quick = settings_mod.resolve({})
    assert figures.caption_line("fig10", quick) == (
        "Panels from long runs, which test the paper at this scale: d=4 τ=0.1 (M=8000); d=32 τ=0.1 (M=4000). "
        "Pipeline checks, drawn lighter (M=150, before the learning transition): the other panels.")
    fig8 = figures.caption_line("fig8", quick)
    assert "Pipeline checks" not in fig8 and all(f"trained on {f}" in fig8 for f in
                                                 ("normal", "cauchy", "gumbel", "laplace", "lognormal"))
    assert "Long curves only (OH:L2, BN:L2, NA:L2 at M=2000" in figures.caption_line("fig4", quick)
    assert figures.caption_line("fig11", quick).startswith("No panel tests the paper at this scale.")
    paper = settings_mod.resolve({"preset": "paper"})
    assert figures.caption_line("fig10", paper) == "Every panel is drawn from runs trained for the preset's M = 10000."
    assert figures.caption_line("fig9", quick).startswith("No trained models")


def test_a_narrow_figure_wraps_its_legend_inside_the_figure():
    """Four curves over one 3.6-inch panel (the paper-scale Fig 10 subset): no legend entry cut off."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from icl_kmeans.pipeline.figures.common import legend

    curves = ["OH:NE", "OH:L2", "BN:NE", "BN:L2"]
    for width, rows in ((2.7, 2), (3.6, 1), (8.0, 1)):
        fig = plt.figure(figsize=(width, 6))
        assert legend(fig, curves, 0.5) == rows
        fig.canvas.draw()
        box = fig.legends[0].get_window_extent()
        assert box.x0 >= 0 and box.x1 <= fig.bbox.x1, (width, box)
        plt.close(fig)


def test_a_figure_registered_in_the_registry_alone_draws(tmp_path, tables, settings, monkeypatch):
    """A throw-away row (kind, plotter, title, evaluation) is all figures.plot needs to draw a figure:
    here Fig 6's layout over Fig 6's table under another id and title."""
    row = figure_registry.Figure("fig_throwaway", "multistep", figure_registry.figure("fig6").plotter,
                                 "Throw-away figure", evaluation="fig6")
    monkeypatch.setitem(figure_registry.BY_ID, row.id, row)
    pdf, png = tmp_path / "t.pdf", tmp_path / "t.png"
    figures.plot(row.id, tables["fig6"], pdf, png, figures.figure_settings(row.id, settings))
    assert png.read_bytes()[:8] == PNG_MAGIC and png.stat().st_size > 5000
    drawn = figures.draw(row.id, tables["fig6"], figures.figure_settings(row.id, settings))
    assert drawn._suptitle.get_text() == "Throw-away figure"
