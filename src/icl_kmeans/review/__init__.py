"""Artifact checking for paper review: reads what the pipeline wrote (its provenance records are
written by icl_kmeans.pipeline.provenance; nothing in the pipeline imports this package).

manifest    the manifest of every artifact under results/ (rule `manifest`)
verify      artifacts against the manifest: missing, extra, changed (rule `review`)
rebuild     figures and Table 1 rebuilt from the aggregated tables and compared with the shipped ones
claims      the paper's claims (science.md §10 and others) as machine-checkable rules on the aggregated tables
report      the self-contained HTML report (results/review/report.html)
bundle      the results bundle (results/bundle.tar.gz)

Nothing here imports torch at module level.
"""
