# Aggregation: one tidy long-format Parquet table per figure (results/tables/{fig}.parquet). Training
# figures collect the metrics (a hive-partitioned dataset under results/metrics), run records and, for
# Fig 17, timings of their runs and seeds; evaluation figures normalise their evaluation table (Fig 18
# reads Fig 8's). Tables are byte-deterministic except Fig 17, Fig 1 and Table 1 (timings by nature).
AGGREGATE_CODE = os.path.relpath(REPO / "src/icl_kmeans/pipeline/aggregate.py")


def aggregate_inputs(wildcards):
    fig = wildcards.fig
    if fig in ST.training:
        runs = ST.runs_of(fig)
        files = dict(metrics=run_files(runs, METRICS), records=run_files(runs, RECORD))
        if fig == "fig17":
            files["timings"] = run_files(runs, TIMING)
    else:
        files = dict(evaluation=EVAL.format(fig=EVAL_SOURCE[fig]))
    return dict(files, code=AGGREGATE_CODE)


def aggregate_curves(wildcards):
    return [
        dict(run=c.run, facets=c.facets, label=c.label)
        for c in ST.training.get(wildcards.fig, [])
    ]


rule aggregate:
    input:
        unpack(aggregate_inputs),
    output:
        TABLE,
    params:
        curves=aggregate_curves,
        seeds=lambda w: SEEDS if w.fig in ST.training else [],
        paths=lambda w: (
            dict(metrics=METRICS, record=RECORD, timing=TIMING)
            if w.fig in ST.training
            else {}
        ),
    wildcard_constraints:
        fig="|".join(sorted(set(ST.training) | set(EVAL_SOURCE))),
    log:
        f"{LOGS}/aggregate/{{fig}}.log",
    conda:
        "../../envs/plot.yaml"
    script:
        "../scripts/aggregate.py"
