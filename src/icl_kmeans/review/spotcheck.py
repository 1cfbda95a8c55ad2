"""Spot check at a preset's full scale on a few cells of one training figure, on a CPU.

    python -m icl_kmeans spotcheck --preset paper --figure fig10 --cell d=4 --cell tau=0.1 --seeds 3

trains the runs that the preset's figure draws in the chosen cells (the same configurations, run ids,
validation sets and seeds as the pipeline), then aggregates them into the figure's table and checks
the paper's claims on it. Only the claims that this subset decides come out PASS or FAIL; the others
are NOT-RUN. Everything lands under --results (default results/spotcheck):

    runs/<run>/seed<s>/{checkpoint.pt,record.json,timing.parquet}, metrics/run=<run>/seed=<s>/part-0.parquet
    tasks/val/<distribution>/seed<s>.pt, tables/<figure>.parquet, claims.csv, claims.md, settings.json
    runs.md: the finished runs so far (written on every call, also before all runs are done)

Runs resume: a killed spot check picks each run up from its `checkpoint.pt.resume` (written every
validation interval), so it can be split over sessions; finished runs are never retrained.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PATHS = dict(checkpoint="runs/{run}/seed{seed}/checkpoint.pt", record="runs/{run}/seed{seed}/record.json",
             timing="runs/{run}/seed{seed}/timing.parquet", metrics="metrics/run={run}/seed={seed}/part-0.parquet")


def _parse_cell(items: list[str]) -> dict:
    cell = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--cell {item!r} is invalid; expected KEY=VALUE, e.g. d=4 or tau=0.1")
        try:
            cell[key] = json.loads(value)
        except json.JSONDecodeError:
            cell[key] = value
    return cell


def _matches(facets: dict, cell: dict) -> bool:
    for key, want in cell.items():
        have = facets.get(key)
        if isinstance(want, (int, float)) and isinstance(have, (int, float)):
            if not math.isclose(float(want), float(have), rel_tol=0.06):  # tau=0.14 names 1/7
                return False
        elif have != want:
            return False
    return True


def plan(preset: str, figure: str, cell: dict, seeds: int):
    """(settings, the figure's curves in the cell, the seeds): what the spot check trains."""
    from ..pipeline import settings as _settings
    from ..pipeline import studies

    base = _settings.resolve({"preset": preset}, REPO / "workflow")
    s = _settings.resolve({"preset": preset, "seeds": base["seeds"][:seeds]}, REPO / "workflow")
    st = studies.build(s)
    if figure not in st.training:
        raise ValueError(f"--figure {figure!r} is not a training figure; expected one of {sorted(st.training)}")
    facets = sorted({k for c in st.training[figure] for k in c.facets})
    unknown = sorted(set(cell) - set(facets))
    if unknown:
        raise ValueError(f"--cell keys {unknown} are not facets of {figure}; expected some of {facets}")
    curves = [c for c in st.training[figure] if _matches(c.facets, cell)]
    if not curves:
        values = sorted({tuple(sorted(c.facets.items())) for c in st.training[figure]})
        raise ValueError(f"no curve of {figure} lies in the cell {cell}; its cells are {values}")
    return s, st, curves, s["seeds"]


def _train_one(args) -> str:
    run, config, seed, root, threads, device = args
    import torch

    from ..pipeline.training_jobs import train_run
    from ..pipeline.studies import distribution, distribution_id
    from ..pipeline.taskfiles import write_validation_set

    torch.set_num_threads(threads)
    root = Path(root)
    files = {k: root / p.format(run=run, seed=seed) for k, p in PATHS.items()}
    if files["record"].exists() and files["checkpoint"].exists():
        return f"{run} seed {seed}: done before"
    dist = distribution(config)
    val = root / "tasks" / "val" / distribution_id(dist) / f"seed{seed}.pt"
    if not val.exists():
        write_validation_set(dist, seed, config["batch"], config["val_batches"], val)
    rec = train_run(run, config, seed, val, files["checkpoint"], files["metrics"], files["timing"], files["record"],
                    device=device)
    return f"{run} seed {seed}: {rec['status']}, final relative validation loss {rec['final_rel_val_loss']}"


def spotcheck(preset="paper", figure="fig10", cell=None, seeds=3, results="results/spotcheck", workers=1,
              threads=1, device="cpu", train=True, echo=print):
    """Trains (unless train=False) and checks; returns the claims DataFrame."""
    from ..pipeline import aggregate
    from . import claims as _claims
    from .main import claims_markdown
    from ..atomic import atomic_write_text as write_text

    s, st, curves, seed_list = plan(preset, figure, cell or {}, seeds)
    root = Path(results)
    jobs = [(c.run, st.runs[c.run], int(seed), str(root), threads, device)
            for c in sorted(curves, key=lambda c: c.run) for seed in seed_list]
    echo(f"{figure} at {preset} scale, cell {cell}: {len(curves)} curves x {len(seed_list)} seeds = {len(jobs)} runs")
    if train:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for line in pool.map(_train_one, jobs):
                echo(line)
    done = [j for j in jobs if (root / PATHS["record"].format(run=j[0], seed=j[2])).exists()]
    write_text(root / "runs.md", runs_markdown(root, jobs, done))
    if len(done) < len(jobs):
        raise RuntimeError(f"{len(jobs) - len(done)} of {len(jobs)} runs are not finished (finished ones: "
                           f"{root / 'runs.md'}); rerun with training on")
    paths = {k: str(root / p) for k, p in PATHS.items()}
    aggregate.aggregate(figure, root / "tables" / f"{figure}.parquet", curves=curves, seeds=seed_list, paths=paths)
    df = _claims.check(results=root, settings=s)
    decided = df[df["status"] != _claims.NOT_RUN]
    write_text(root / "claims.md", claims_markdown(decided) if len(decided) else "no claim is decided by this subset\n")
    df.to_csv(root / "claims.csv", index=False)
    write_text(root / "settings.json", json.dumps({"preset": preset, "figure": figure, "cell": cell,
                                                   "seeds": seed_list, "runs": sorted({c.run for c in curves})},
                                                  indent=2) + "\n")
    for r in decided.itertuples():
        echo(f"claim {r.id}: {r.status} (measured {r.measured}; {r.detail})")
    return df


def runs_markdown(root: Path, jobs: list, done: list) -> str:
    """Every finished run: final relative validation loss, the first validation step at or below claim 3's
    CONVERGED_REL_VAL (1), the median training loss of the last 50 steps; then the median over each run's
    finished seeds. Written on every call, so a spot check split over sessions shows where it stands
    before its claims can be checked."""
    import pandas as pd
    import pyarrow.parquet as pq

    from ..pipeline.studies import curve
    from .claims import CONVERGED_REL_VAL
    from .main import markdown_table

    rows = []
    for run, config, seed, *_ in done:
        rec = json.loads((root / PATHS["record"].format(run=run, seed=seed)).read_text())
        m = pq.read_table(root / PATHS["metrics"].format(run=run, seed=seed)).to_pandas()
        val = m.dropna(subset=["rel_val_loss"]).set_index("step")["rel_val_loss"]
        below = val.index[val <= CONVERGED_REL_VAL]
        rows.append({"curve": curve(config), "run": run,
                     "seed": seed, "status": rec["status"], "steps": rec["steps_done"],
                     "final relative validation loss": round(rec["final_rel_val_loss"], 3),
                     "first step below 1": int(below[0]) if len(below) else None,
                     "final training loss": round(float(m["train_loss"].dropna().iloc[-50:].median()), 3)})
    head = f"# Spot check: {len(done)} of {len(jobs)} runs finished\n\n"
    if not rows:
        return head
    df = pd.DataFrame(rows)
    per_run = df.groupby(["curve", "run"], as_index=False, sort=False).agg(**{
        "seeds finished": ("seed", "size"), "median final": ("final relative validation loss", "median"),
        "median first below 1": ("first step below 1", "median"), "median training loss": ("final training loss", "median")})
    return head + markdown_table(df, _cell) + "\n" + markdown_table(per_run, _cell)


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "never"  # only "first step below 1" can be missing
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m icl_kmeans spotcheck", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", default="paper", help="preset whose scale and runs are used (default paper)")
    p.add_argument("--figure", default="fig10", help="training figure (default fig10)")
    p.add_argument("--cell", action="append", default=[], metavar="KEY=VALUE",
                   help="facet filter, repeatable (e.g. --cell d=4 --cell tau=0.1)")
    p.add_argument("--seeds", type=int, default=3, help="the first N seeds of the preset (default 3)")
    p.add_argument("--results", default="results/spotcheck")
    p.add_argument("--workers", type=int, default=1, help="runs trained at once, one process each")
    p.add_argument("--threads", type=int, default=1, help="torch threads per process")
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    p.add_argument("--no-train", dest="train", action="store_false", help="only aggregate and check")
    a = p.parse_args(argv)
    try:
        if a.seeds < 1 or a.workers < 1 or a.threads < 1:
            raise ValueError("--seeds, --workers and --threads must be at least 1")
        spotcheck(a.preset, a.figure, _parse_cell(a.cell), a.seeds, a.results, a.workers, a.threads, a.device,
                  a.train)
    except (ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
