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

from icl_kmeans.pipeline import aggregate as agg
from icl_kmeans.pipeline import figures, studies, table1

sys.path.insert(0, str(Path(__file__).parent))
from test_aggregate import paths, smoke_settings, training_fixture, write_eval  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Four facets of these suffice (test time); fig2 and fig17 keep all, several blocks of rows.
TRIM = ("fig4", "fig10", "fig11", "fig13", "fig14", "fig15", "fig16")


@pytest.fixture(scope="module")
def settings():
    return smoke_settings()


@pytest.fixture(scope="module")
def registry(settings):
    return studies.build(settings)


@pytest.fixture(scope="module")
def tables(tmp_path_factory, registry):
    """fig -> aggregated table (DataFrame) for every figure, built by the real aggregation code."""
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for fig in studies.FIGURES + ("table1",):
        target = root / "tables" / f"{fig}.parquet"
        if fig in registry.training:
            curves = training_fixture(root, fig, registry, seeds=(1, 2, 3), diverged="first",
                                      trim=4 if fig in TRIM else 0)
            agg.aggregate(fig, target, curves=curves, seeds=[1, 2, 3], paths=paths(root))
        else:
            source = "fig8" if fig == "fig18" else fig
            src = write_eval(root / "eval" / f"{source}.parquet", source, registry.evaluations[source])
            agg.aggregate(fig, target, source=src)
        out[fig] = pq.read_table(target).to_pandas()
    return out


@pytest.mark.parametrize("fig", studies.FIGURES)
def test_every_figure_draws_pdf_and_png(tmp_path, tables, settings, fig):
    pdf, png = tmp_path / f"{fig}.pdf", tmp_path / f"{fig}.png"
    figures.plot(fig, tables[fig], pdf, png, figures.figure_settings(fig, settings))
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


def test_scale_line_names_the_preset(settings):
    line = figures.scale_line("fig2", settings)
    assert line.startswith("smoke preset: 3 seeds, M=4, n=32, B=2")
    assert "[paper: 10 seeds, M=10000, n=512, B=32" in line
    assert "M=2" in figures.scale_line("fig11", settings)
    assert "training n in {32, 48}" in figures.scale_line("fig13", settings)
    assert "evaluated at n in {16, 64}" in figures.scale_line("fig12", settings)
    assert "3 tasks per family" in figures.scale_line("fig19", settings)
    assert "d in {4, 8} x k in {10, 16}" in figures.scale_line("fig1", settings)
    assert "overridden: steps" in figures.scale_line("fig2", {**settings, "overrides": ["steps"]})
    paper = {**smoke_settings(), **yaml.safe_load((REPO / "workflow/presets/paper.yaml").read_text()),
             "preset": "paper", "overrides": []}
    assert "[paper" not in figures.scale_line("fig6", paper)


def test_paper_constants_match_the_paper_preset():
    paper = yaml.safe_load((REPO / "workflow/presets/paper.yaml").read_text())
    for key, value in figures.PAPER.items():
        expected = len(paper[key]) if key == "seeds" else paper.get(key, paper.get("n"))
        assert value == expected, key


def test_palette_is_consistent():
    assert figures.PALETTE["Lloyd"] == "#000000"
    labels = [f"{e}:{r}" for e in ("OH", "BN", "NA") for r in ("NE", "L2")]
    assert len({figures.PALETTE[c] for c in labels}) == 6


def test_table1(tmp_path, tables, settings):
    csv, md = tmp_path / "t.csv", tmp_path / "t.md"
    t = table1.write(tables["table1"], csv, md, figures.figure_settings("table1", settings))
    assert list(t["k"]) == sorted(settings["table1_k"])
    assert list(t.columns) == table1.COLUMNS
    row = t[t["k"] == 25].iloc[0]
    assert (row.extra_dims_OH, row.extra_dims_BN) == (25, 5)
    assert row.forward_speedup == pytest.approx((32 + 25) / (32 + 5))
    assert row.memory_reduction_pct == pytest.approx(100 * (1 - 37 / 57))
    back = pd.read_csv(csv)
    assert list(back.columns) == table1.COLUMNS and len(back) == len(t)
    text = md.read_text()
    assert "smoke preset" in text and "| 25 | 25 / 5 |" in text and "x |" in text
    with pytest.raises(ValueError):
        table1.build(tables["table1"][tables["table1"]["d"] != 32])
    with pytest.raises(ValueError):
        table1.build(tables["table1"].iloc[0:0])


def test_captions_exist_and_render(settings):
    jinja2 = pytest.importorskip("jinja2")
    from docutils.core import publish_parts

    for fig in studies.TARGETS:
        path = REPO / "workflow/report" / f"{fig}.rst"
        assert path.exists(), path
        params = type("P", (), {"scale": figures.scale_line(fig, settings)})
        text = jinja2.Environment().from_string(path.read_text()).render(snakemake=type("S", (), {"params": params}))
        assert "smoke preset" in text
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
        "validation_tasks", "train", "aggregate", "plot_fig2", "fig2"}
    assert dry_run_rules("table1", "preset=smoke") == {"profile_timing", "aggregate", "write_table1", "table1"}
