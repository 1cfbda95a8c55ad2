"""`snakemake --cores all review`: the whole review, and a command line for use without Snakemake.

    python -m icl_kmeans.review review [--results results] [--workers N] [--workdir results/paper-scale]
                                       [--recompute N [--recompute-seed S] [--retrain-steps M]]
    python -m icl_kmeans.review unpack results/bundle.tar.gz <clone>
    python -m icl_kmeans.review readme [--check] [--quick-from results]
                                                     README.md's reproduction table and docs/paper-scale.md's numbers

Decision on failures: the review target fails (non-zero exit) on any INTEGRITY problem -- a missing,
extra or changed artifact, a missing manifest, a rebuilt figure or Table 1 that differs from the shipped
one, or a claim whose rule cannot be evaluated (ERROR). A scientific claim that does not hold (FAIL) is
a finding about the run, reported in the claims table and the report, and does not fail the target: at
quick and smoke scale several claims are expected not to hold, and the artifacts are still the honest
output of the code.

Writes under results/review/ (excluded from the manifest):
    report.html        the self-contained report
    claims.csv, claims.md   the claims table
    integrity.tsv      every manifest finding and rebuild comparison (status, path, detail)
    rebuild/           the rebuilt figures and Table 1 (a drawing is reused while its table, the plotting
                       code, the settings and the package versions are unchanged; see rebuild.py)
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import claims as _claims
from . import verdict_history
from .manifest import PARQUET, ManifestError, read
from ..pipeline.provenance import RESULTS, code_version, sha256_file
from .rebuild import rebuild
from .report import write_report
from .tasksets import restore_task_sets
from .trained import settings_runs
from .verify import Finding, stale_notes, verify


@dataclass
class ReviewResult:
    ok: bool
    findings: list = field(default_factory=list)
    comparisons: list = field(default_factory=list)
    claims: pd.DataFrame | None = None
    report: Path | None = None
    problems: list = field(default_factory=list)  # every integrity problem, one line each, naming the file


def markdown_table(df: pd.DataFrame, cell=str) -> str:
    """A Markdown table of df's columns; cell(value) is the text of a cell."""
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in df.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v).replace("|", "/") for v in r) + " |")
    return "\n".join(lines) + "\n"


def claims_markdown(df: pd.DataFrame) -> str:
    """The claims table with each claim's source, measured value, diagnostic and cells (the detail)."""
    cols = ["id", "status", "source", "statement", "threshold", "measured", "diagnostic", "detail"]
    return markdown_table(df[[c for c in cols if c in df.columns]],
                          cell=lambda v: "" if v is None or (isinstance(v, float) and v != v) else str(v))


def run_review(results=RESULTS, out=None, workers: int = 1, echo=None,
               recompute: int | None = None, recompute_seed: int | None = None,
               retrain_steps: int | None = None) -> ReviewResult:
    """The review. `echo(line)` receives the summary lines (default: print). `recompute` = N also evaluates N
    random committed evaluation cells again and retrains the first `retrain_steps` steps of one run
    (recompute.py); a mismatch is an integrity problem."""
    echo = echo or print
    results = Path(results)
    out = Path(out) if out is not None else results / "review"
    out.mkdir(parents=True, exist_ok=True)
    try:
        manifest, meta = read(results)
    except ManifestError as e:
        echo(f"REVIEW FAILED: {e}")
        return ReviewResult(False, problems=[str(e)])
    manifest_sha = sha256_file(results / PARQUET)
    echo(f"manifest {results / PARQUET}: {len(manifest)} artifacts, sha256 {manifest_sha}")
    written, unwritten = restore_task_sets(manifest)
    if written:
        echo(f"task sets: {len(written)} missing ones written again from their manifest parameters "
             "(checked against the manifest's sha256 below)")
    for line in unwritten:
        echo(f"task sets: {line}")
    findings: list[Finding] = verify(manifest, meta, results)
    notes = stale_notes(manifest)
    echo(f"verify: {len(findings)} mismatches against the manifest")
    comparisons = rebuild(manifest, meta, out / "rebuild", results=results, workers=workers)
    bad = [c for c in comparisons if not c.ok]
    n_cached = len({c.target for c in comparisons if c.cached})
    echo(f"rebuild: {len(comparisons)} files compared, {len(bad)} differ"
         + (f" ({n_cached} targets' drawings reused from {out / 'rebuild'}: same table, code, settings)"
            if n_cached else ""))
    recomputed = []
    if recompute is not None:
        from .recompute import RETRAIN_STEPS, recompute as _recompute

        recomputed = _recompute(results, meta.get("settings", {}), recompute, recompute_seed,
                                RETRAIN_STEPS if retrain_steps is None else retrain_steps, echo=echo)
        pd.DataFrame([r.__dict__ for r in recomputed]).to_csv(out / "recompute.tsv", sep="\t", index=False)
    settings = meta.get("settings", {})
    claims = _claims.check(results, settings, settings_runs(settings) if settings else None)
    claims = verdict_history.record(results, claims, out)  # marks a rule changed since the folder's last verdict
    claims.to_csv(out / "claims.csv", index=False)
    (out / "claims.md").write_text(claims_markdown(claims))
    errors = claims[claims["status"] == _claims.ERROR]
    problems = [str(f) for f in findings]
    problems += [f"REBUILD  {c.shipped}: {c.status}: {c.detail}" for c in bad]
    problems += [f"CLAIM    {r.id} could not be checked: {r.detail}" for r in errors.itertuples()]
    problems += [f"RECOMPUTE {r.line()}" for r in recomputed if not r.ok]
    rows = [{"status": f.kind, "path": f.path, "detail": f.detail} for f in findings]
    rows += [{"status": c.status, "path": c.shipped, "detail": c.detail} for c in comparisons]
    pd.DataFrame(rows, columns=["status", "path", "detail"]).to_csv(out / "integrity.tsv", sep="\t", index=False)
    ok = not problems
    report = write_report(out / "report.html", manifest=manifest, meta=meta, manifest_sha=manifest_sha,
                          findings=findings, notes=notes, comparisons=comparisons, claims=claims,
                          figures_dir=results / "figures", current_code=code_version(),
                          verdict=ok, results=results, recomputed=recomputed if recompute is not None else None)
    echo("claims:")
    for r in claims.itertuples():
        echo(f"  {r.id:3s} {r.status:8s} {r.statement} [measured {r.measured or '-'}; threshold {r.threshold}]")
    for n in notes:
        echo(f"note: {n}")
    if ok:
        echo(f"REVIEW PASSED: every artifact matches the manifest; every figure and Table 1 follows from its table; "
             f"report: {report}")
    else:
        echo(f"REVIEW FAILED ({len(problems)} integrity problems):")
        for p in problems:
            echo(f"  {p}")
        echo(f"report: {report}")
    return ReviewResult(ok, findings, comparisons, claims, report, problems)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m icl_kmeans.review", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("review", help="verify, rebuild, check the claims, write the report")
    r.add_argument("--results", default=RESULTS)
    r.add_argument("--workers", type=int, default=1)
    r.add_argument("--recompute", type=int, default=None, metavar="N",
                   help="evaluate N random committed evaluation cells again from the checkpoints and retrain the first "
                        "steps of one run; compare with the committed values (recompute.py)")
    r.add_argument("--recompute-seed", type=int, default=None, help="the draw's seed (default: random, printed)")
    r.add_argument("--retrain-steps", type=int, default=None,
                   help="steps retrained with --recompute (default recompute.RETRAIN_STEPS; 0: none)")
    r.add_argument("--workdir", default=None,
                   help="review the results/ of this folder, e.g. results/paper-scale (a subset's subset_dir)")
    m = sub.add_parser("readme", help="write README.md's reproduction table from the claims (readme_table.py)")
    m.add_argument("--check", action="store_true", help="exit 1 when README.md differs from what would be written")
    m.add_argument("--quick-from", default=None, metavar="RESULTS",
                   help="first copy the claims of this finished default quick run (its results/ folder) into "
                        "docs/claims-quick.csv, the README's quick column")
    u = sub.add_parser("unpack", help="extract a results bundle into a clone of the repository")
    u.add_argument("bundle")
    u.add_argument("dest", nargs="?", default=".")
    a = ap.parse_args(argv)
    if a.cmd == "readme":
        from .readme_table import main as readme

        return readme(check=a.check, quick_from=a.quick_from)
    if a.cmd == "unpack":
        from .bundle import unpack

        unpack(a.bundle, a.dest)
        return 0
    if a.workdir:
        os.chdir(a.workdir)
    return 0 if run_review(a.results, workers=a.workers, recompute=a.recompute,
                           recompute_seed=a.recompute_seed, retrain_steps=a.retrain_steps).ok else 1


if __name__ == "__main__":
    sys.exit(main())
