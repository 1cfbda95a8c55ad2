"""The review: artifacts against the manifest, figures and Table 1 rebuilt from the tables, the paper's
claims, the HTML report (results/review/). Fails on any integrity problem, never on a claim's FAIL."""
import os


from icl_kmeans.pipeline.job_context import job

# The summary goes to the console too: job() points stdout and stderr (file descriptors 1 and 2) at the log.
console = os.fdopen(os.dup(2), "w", buffering=1)


def echo(line):
    print(line, flush=True)
    print(line, file=console, flush=True)


with job(snakemake):
    from icl_kmeans.review.main import run_review

    p = snakemake.params
    result = run_review(p.results, out=p.out, workers=snakemake.threads, echo=echo)
    if not result.ok:
        raise SystemExit(f"review failed: {len(result.problems)} integrity problems (listed above)")
