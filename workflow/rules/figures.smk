# Figures: one rule, plot, draws a figure's PDF and PNG from its table only ({fig} = fig1 ... fig19,
# fig_em), so changing plotting code never retrains or re-evaluates; its caption in Snakemake's report is
# its spec's (pipeline/specs/<fig>.py) filled in (figure_caption), passed as a param. A figure drawn in parts
# (the registry's split: Figs 15, 16) is drawn one part a job and file ({fig} = fig15a ... fig16d), each
# from its figure's table (results/tables/fig15.parquet). Table 1 as CSV and Markdown (write_table1). Named
# targets fig1 ... fig19, fig_em, the parts fig15a ... fig16d and table1 (one alias rule each: a target name
# cannot be a wildcard); fig15 asks for the parts its studies hold (figure_files).

# the drawing code: the figure modules, and the specs that hold each figure's plotter
FIGURES_CODE = sorted(
    os.path.relpath(p)
    for folder in ("figures", "specs")
    for p in (REPO / "src/icl_kmeans/pipeline" / folder).glob("*.py")
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


rule plot:
    input:
        table=lambda w: TABLE.format(fig=_figure_registry.parent(w.fig)),
        code=FIGURES_CODE,
    output:
        pdf=FIGURE.replace("{ext}", "pdf"),
        png=report(
            FIGURE.replace("{ext}", "png"),
            caption="../report/figure.rst",
            category=lambda w: FIGURE_CATEGORY[_figures.kind(w.fig)],
        ),
    log:
        f"{LOGS}/figures/{{fig}}.log",
    wildcard_constraints:
        fig="|".join(_figure_registry.plot_ids()),
    conda:
        ANALYSIS_ENV
    params:
        fig=lambda w: w.fig,
        # functions, so that Snakemake does not read the braces of "{4, 16}" as wildcards
        settings=lambda w: figure_settings(w.fig),
        scale=lambda w: _figures.scale_line(w.fig, figure_settings(w.fig)),
        caption=lambda w: figure_caption(w.fig),
    script:
        "../scripts/plot.py"


rule write_table1:
    input:
        table=TABLE.format(fig="table1"),
        code=[TABLE1_CODE, *FIGURES_CODE],
    output:
        csv=report(
            TABLE1_FILES[0],
            caption="../report/figure.rst",
            category=FIGURE_CATEGORY["profile"],
        ),
        md=TABLE1_FILES[1],
    log:
        f"{LOGS}/figures/table1.log",
    conda:
        ANALYSIS_ENV
    params:
        settings=lambda w: figure_settings("table1"),
        scale=lambda w: _figures.scale_line("table1", figure_settings("table1")),
        caption=lambda w: figure_caption("table1"),
    script:
        "../scripts/table1.py"


for _fig in _studies.FIGURES + tuple(_figure_registry.PART_IDS):

    rule:
        name:
            _fig
        input:
            figure_files(_fig),


rule table1:
    input:
        TABLE1_FILES,
