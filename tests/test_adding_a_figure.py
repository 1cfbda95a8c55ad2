"""Adding a figure over an existing evaluation is one new file: its spec (docs/pipeline.md, "Adding a
figure"). Here the worked example, a figure of the final objective of Fig 6's models, goes into a copy of
the workflow as pipeline/specs/fig_final.py, and nothing else changes: the studies give it Fig 6's runs, the
aggregation and the plotter draw it at smoke scale, its caption renders, and Snakemake plans it as a target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from pipeline_utils import REPO, copy_workflow  # noqa: E402

SPEC = '''"""Final objective of Figure 6's models: the mean log objective at the last step, one bar per curve."""

from ..figure_spec import Figure

CAPTION = """\\
The mean log objective at the last step of Figure 6's models.

Scale: {{ snakemake.params.scale }}.

{{ snakemake.params.panels }}
"""


def plot(df, settings, fig_id):
    """Naive and re-embed side by side."""
    import matplotlib.pyplot as plt

    from ..figures.common import PAGE_WIDTH, PALETTE, curve_order, finish

    last = df[(df["metric"] == "log_objective") & (df["t"] == df["t"].max())]
    figure, axes = plt.subplots(1, 2, figsize=(PAGE_WIDTH, 3.2), squeeze=False)
    for ax, mode in zip(axes[0], ("naive", "reembed")):
        rows = last[(last["mode"] == mode) | last["run"].isna()]
        medians = rows.groupby("curve")["value"].median()
        order = curve_order(medians.index)
        ax.bar(range(len(order)), [medians[c] for c in order], color=[PALETTE[c] for c in order])
        ax.set_xticks(range(len(order)), order, rotation=30)
        ax.set_title(mode)
        ax.set_xlabel("curve")
        ax.set_ylabel("mean log objective at the last t")
    finish(figure, fig_id, settings)
    return figure


ROW = Figure("fig_final", "multistep", plot, "Final objective of Figure 6's models (an example)",
             evaluation="fig6", caption=CAPTION)
'''

# Run with the copy's package: the studies, an aggregated table, the drawing, the layout check, the caption.
DRAW = '''
import json, sys
from pathlib import Path
from icl_kmeans.pipeline import aggregate as agg, figure_registry, figures, studies
from icl_kmeans.pipeline.figures.layout import layout_defects
from test_aggregate import smoke_settings, write_eval

out = Path(sys.argv[1])
s = smoke_settings()
st = studies.build(s)
source = write_eval(out / "eval" / "fig6.parquet", "fig6", st.evaluations["fig6"])
agg.aggregate("fig_final", out / "fig_final.parquet", source=source)
fs = figures.figure_settings("fig_final", s)
figures.plot("fig_final", out / "fig_final.parquet", out / "fig_final.pdf", out / "fig_final.png", fs)
import pyarrow.parquet as pq
drawn = figures.draw("fig_final", pq.read_table(out / "fig_final.parquet").to_pandas(), fs)
print(json.dumps({
    "spec": figure_registry.figure("fig_final").plotter.__module__,
    "targets": st.targets(),
    "same_runs": st.runs_of("fig_final") == st.runs_of("fig6"),
    "layout": [str(d) for d in layout_defects(drawn)],
    "title": drawn._suptitle.get_text(),
    "caption": figure_registry.caption_template("fig_final").replace(
        "{{ snakemake.params.scale }}", figures.scale_line("fig_final", s)).replace(
        "{{ snakemake.params.panels }}", figures.caption_line("fig_final", s, st)),
}))
'''


def _sources(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
            and ".egg-info" not in str(p)}


def test_a_new_figure_over_an_existing_evaluation_is_one_new_file(tmp_path):
    work = copy_workflow(tmp_path / "w")
    spec = work / "src" / "icl_kmeans" / "pipeline" / "specs" / "fig_final.py"
    spec.write_text(SPEC)
    # the one new file, and no other file of the workflow changed
    new = {f for f in _sources(work / "src") if not (REPO / "src" / f).is_file()}
    assert new == {"icl_kmeans/pipeline/specs/fig_final.py"}
    same = all((work / "src" / f).read_bytes() == (REPO / "src" / f).read_bytes() for f in _sources(work / "src") - new)
    assert same

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(work / "src"), str(REPO / "tests")]))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", DRAW, str(out)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["spec"] == "icl_kmeans.pipeline.specs.fig_final"  # the copy's spec, found by its file alone
    assert "fig_final" in got["targets"] and got["same_runs"]  # Fig 6's evaluation: no runs of its own
    assert got["layout"] == [] and got["title"] == "Final objective of Figure 6's models (an example)"
    assert got["caption"].startswith("The mean log objective") and "smoke preset: " in got["caption"]
    assert "{{" not in got["caption"]
    assert (out / "fig_final.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # Snakemake plans it as a target of its own, from Fig 6's evaluation
    dry = subprocess.run([sys.executable, "-m", "snakemake", "-n", "fig_final", "--config", "preset=smoke"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert dry.returncode == 0, dry.stderr[-4000:]
    assert "results/figures/fig_final.png" in dry.stdout and "results/eval/fig6.parquet" in dry.stdout
