# Figures: one rule per figure (plot_fig1 ... plot_fig19, plot_fig_em), each drawing PDF and PNG from
# the figure's table only, so changing plotting code never retrains or re-evaluates. Table 1 as CSV and
# Markdown (write_table1). Named targets fig1 ... fig19, fig_em and table1.
from icl_kmeans.pipeline import figures as _figures

FIGURES_CODE = sorted(
    os.path.relpath(p) for p in (REPO / "src/icl_kmeans/pipeline/figures").glob("*.py")
) + [
    os.path.relpath(REPO / f"src/icl_kmeans/{name}.py")
    for name in ("constants", "emd_table", "profile_table")
]
TABLE1_CODE = os.path.relpath(REPO / "src/icl_kmeans/pipeline/table1.py")
FIGURE_CATEGORY = {
    "training": "Training curves",
    "multistep": "Multi-step clustering",
    "landscape": "Loss and gap surfaces",
    "dissimilarity": "Task dissimilarity",
    "profile": "OH vs BN speed and memory",
}


for _fig in _studies.FIGURES:

    rule:
        name:
            f"plot_{_fig}"
        input:
            table=TABLE.format(fig=_fig),
            code=FIGURES_CODE,
        output:
            pdf=FIGURE.format(fig=_fig, ext="pdf"),
            png=report(
                FIGURE.format(fig=_fig, ext="png"),
                caption=f"../report/{_fig}.rst",
                category=FIGURE_CATEGORY[_figures.kind(_fig)],
            ),
        log:
            f"{LOGS}/figures/{_fig}.log",
        conda:
            "../../envs/plot.yaml"
        params:
            fig=_fig,
            # functions, so that Snakemake does not read the braces of "{4, 16}" as wildcards
            settings=lambda w, fig=_fig: _figures.figure_settings(fig, S),
            scale=lambda w, fig=_fig: _figures.scale_line(fig, S),
        script:
            "../scripts/plot.py"


rule write_table1:
    input:
        table=TABLE.format(fig="table1"),
        code=[TABLE1_CODE, *FIGURES_CODE],
    output:
        csv=report(
            TABLE1_FILES[0],
            caption="../report/table1.rst",
            category=FIGURE_CATEGORY["profile"],
        ),
        md=TABLE1_FILES[1],
    log:
        f"{LOGS}/figures/table1.log",
    conda:
        "../../envs/plot.yaml"
    params:
        settings=lambda w: _figures.figure_settings("table1", S),
        scale=lambda w: _figures.scale_line("table1", S),
    script:
        "../scripts/table1.py"


for _fig in _studies.FIGURES:

    rule:
        name:
            _fig
        input:
            figure_files(_fig),


rule table1:
    input:
        TABLE1_FILES,
