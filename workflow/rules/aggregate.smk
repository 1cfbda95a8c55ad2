# Aggregation: one tidy long-format Parquet table per figure (results/tables/{fig}.parquet). Training
# figures collect the metrics (a hive-partitioned dataset under results/metrics), run records and, for the
# figures timed alone (the registry's timed_alone: Fig 17), timings of their runs and seeds; evaluation
# figures normalise the evaluation table the registry names (Fig 18 reads Fig 8's). Tables are byte-deterministic except Fig 17, Fig 1 and Table 1 (timings by nature).
# The aggregation code is an input: editing it re-aggregates and re-plots, never retrains.
AGGREGATE_CODE = os.path.relpath(REPO / "src/icl_kmeans/pipeline/aggregate.py")


rule aggregate:
    input:
        unpack(
            lambda w: (
                dict(
                    runs=[
                        f
                        for files in run_inputs(w.fig).values()
                        for f in files.values()
                    ]
                )
                if w.fig in STUDIES.training
                else dict(evaluation=EVAL.format(fig=EVAL_SOURCE[w.fig]))
            )
        ),
        code=AGGREGATE_CODE,
    output:
        TABLE,
    log:
        f"{LOGS}/aggregate/{{fig}}.log",
    wildcard_constraints:
        fig="|".join(sorted(set(STUDIES.training) | set(EVAL_SOURCE))),
    conda:
        ANALYSIS_ENV
    params:
        curves=lambda w: [
            dict(run=c.run, facets=c.facets, label=c.label)
            for c in STUDIES.training.get(w.fig, [])
        ],
        files=lambda w, input: (run_inputs(w.fig) if w.fig in STUDIES.training else {}),
    script:
        "../scripts/aggregate.py"
