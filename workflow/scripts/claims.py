"""Writes results/review/claims.csv: the paper's claims decided from the aggregated tables (the table of
Snakemake's report; `snakemake review` writes the same table with its integrity checks). No provenance
record: results/review/ is outside the manifest."""
import sys

from icl_kmeans.review import claims, verdict_history
from icl_kmeans.review.trained import settings_runs

with open(snakemake.log[0], "w") as log:
    sys.stdout = sys.stderr = log
    settings = snakemake.params.settings
    table = claims.check(snakemake.params.results, settings, settings_runs(settings))
    # a rule changed since the folder's last verdict shows that verdict (review/claims.history.csv grows)
    table = verdict_history.record(snakemake.params.results, table)
    table.to_csv(snakemake.output[0], index=False)
    print(table["status"].value_counts().to_string(), flush=True)
