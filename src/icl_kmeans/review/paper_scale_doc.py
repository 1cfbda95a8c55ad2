"""docs/paper-scale.md's numbers, generated from the committed folder's tables (never typed by hand).

    python -m icl_kmeans.review readme [--check]     writes (or checks) these blocks and README's table

Each block lies between its own pair of markers in docs/paper-scale.md:
- runs: every trained cell (embedding, regularizer, d, k, tau, family): each seed's final relative
  validation loss, their median, and the median over seeds of the first validation step below one Lloyd
  step, read from the run records and metrics;
- multistep: the median over seeds of the mean log k-means objective at t = 1 and t = T, per evaluation
  table, test set, mode and curve, with Lloyd's (and EM's) value;
- fig5: the peak of each gap surface, of the task-averaged losses (the claims' reading) and the largest
  over tasks (the diagnostic);
- growth: the subset being added (GROWTH): which of its (run, seed) pairs have a committed resume file, and
  the step it holds (finished, or part-way), read from the resume files themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .markers import markers, splice

DOC = Path("docs/paper-scale.md")
BLOCKS = ("runs", "multistep", "fig5", "growth")
# The cells being added to the committed folder (appended to its subset; docs/paper-scale.md's growth
# command); empty when no growth is in progress. Now Fig 4's tau = 1 rows of OH and BN in the non-cauchy
# families (round 3; Table 1, Fig 1, Fig 11's d = 4 rows, Fig 14's tau = 0.25 rows and Fig 4's tau = 0.1
# rows are committed).
GROWTH = "fig4:tau=1,family=normal|gumbel|laplace|lognormal,curve=OH:NE|OH:L2|BN:NE|BN:L2"
MULTISTEP_TABLES = ("fig6", "fig7", "fig8", "fig12", "fig_em")
BASELINES = ("Lloyd", "EM")


def _num(x: float, digits: int = 3) -> str:
    return "" if pd.isna(x) else f"{x:.{digits}f}"


def runs_block(results: Path, settings: dict) -> str:
    """Every run the settings train (trained.settings_runs, as the claims read them): a run being trained
    beside the committed ones, not yet in the settings, stays out of the table."""
    from .trained import settings_runs

    rows, configs, trained, seeds = [], {}, settings_runs(settings), [int(s) for s in settings.get("seeds", [])]
    for record in sorted(results.glob("runs/*/seed*/record.json")):
        if (record.parent.parent.name, int(record.parent.name.removeprefix("seed"))) not in trained:
            continue
        r = json.loads(record.read_text())
        c = r["config"]
        metrics = pd.read_parquet(results / "metrics" / f"run={r['run']}" / f"seed={r['seed']}" / "part-0.parquet",
                                  columns=["step", "rel_val_loss"]).dropna()
        below = metrics.loc[metrics["rel_val_loss"] < 1, "step"]
        configs[r["run"]] = {k: v for k, v in c.items() if k != "seed"}  # a run id names its configuration
        rows.append(dict(run=r["run"], seed=r["seed"], final=r["final_rel_val_loss"],
                         first_below=below.min() if len(below) else float("nan")))
    if not rows:
        return "No trained runs in the folder.\n"
    df = pd.DataFrame(rows)
    order = {s: i for i, s in enumerate(seeds)}
    # a row is one run (its seeds): the columns name what the folder varies, the rest of the configuration
    # that differs between rows goes in the last column
    shown = ["embedding", "regularizer", "d", "k", "tau", "family", "lr", "steps"]
    other = sorted(k for k in set().union(*configs.values())
                   if k not in shown and len({repr(c.get(k)) for c in configs.values()}) > 1)
    lines = [f"| embedding:loss | d | k | tau | training family | lr | M | final relative validation loss, per seed "
             f"({', '.join(map(str, seeds))}) | median | first step below 1, median over seeds |"
             + (" other settings |" if other else ""),
             "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if other else "")]
    for run, g in sorted(df.groupby("run"), key=lambda kv: tuple(configs[kv[0]][k] for k in shown)):
        c = configs[run]
        g = g.sort_values("seed", key=lambda s: s.map(order))
        never = g["first_below"].isna().sum()
        first = "never" if never > len(g) / 2 else f"{g['first_below'].median():.0f}"
        extra = " " + ", ".join(f"{k}={c.get(k)}" for k in other) + " |" if other else ""
        lines.append(f"| {c['embedding']}:{c['regularizer']} | {c['d']} | {c['k']} | {c['tau']:g} | {c['family']} | "
                     f"{c['lr']:g} | {c['steps']} | {', '.join(_num(v) for v in g['final'])} | "
                     f"**{_num(g['final'].median())}** | {first} |{extra}")
    return "\n".join(lines) + "\n"


def multistep_block(results: Path) -> str:
    lines, curves_seen = [], []
    frames = {}
    for fig in MULTISTEP_TABLES:
        path = results / "tables" / f"{fig}.parquet"
        if path.is_file():
            df = pd.read_parquet(path)
            frames[fig] = df[df["metric"] == "log_objective"]
            curves_seen += [c for c in df["curve"].unique() if c not in curves_seen and c not in BASELINES]
    if not frames:
        return "No multi-step evaluation in the folder.\n"
    curves = sorted(curves_seen) + [b for b in BASELINES if any((f["curve"] == b).any() for f in frames.values())]
    lines.append("| table | test set | trained on | mode | t | " + " | ".join(curves) + " |")
    lines.append("|---|---|---|---|---|" + "---|" * len(curves))
    for fig, df in frames.items():
        steps = (1, int(df["t"].max()))
        family = df["train_family"].fillna("(figure's models)")
        for (testset, trained), g in df.assign(trained=family).groupby(["testset", "trained"], sort=True):
            if trained != "(figure's models)" and not (g["curve"].isin(BASELINES)).all():
                base = df[(df["testset"] == testset) & df["curve"].isin(BASELINES)]
                g = pd.concat([g, base.assign(trained=trained)])
            modes = sorted(m for m in g["mode"].unique() if m != "-")
            for mode in modes:
                for t in steps:
                    cells = []
                    for c in curves:
                        sel = g[(g["curve"] == c) & (g["t"] == t) & (g["mode"].isin([mode, "-"]))]
                        cells.append(_num(sel["value"].median(), 2) if len(sel) else "")
                    if any(cells[: len(curves) - sum(b in curves for b in BASELINES)]):
                        lines.append(f"| {fig} | {testset} | {trained} | {mode} | {t} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def fig5_block(results: Path) -> str:
    path = results / "tables" / "fig5.parquet"
    if not path.is_file():
        return "Fig 5 is not in the folder.\n"
    df = pd.read_parquet(path)
    lines = ["| test tasks | model trained on | peak gap of the task-averaged losses (claims 7a-7c) | "
             "peak of the largest gap over tasks (diagnostic) |", "|---|---|---|---|"]
    for (testset, trained), g in df.groupby(["testset", "train_family"], sort=True):
        peak = g.groupby("metric")["value"].max()
        lines.append(f"| {testset} | {trained} | {_num(peak.get('gap_mean'))} | {_num(peak.get('gap_max'))} |")
    return "\n".join(lines) + "\n"


def growth_block(results: Path, settings: dict, growth: str = GROWTH) -> str:
    """The growth in progress: its (run, seed) pairs beyond the manifest's settings, each with the step of its
    committed resume file (a finished run's restores its outputs without training)."""
    if not growth:
        return "No growth in progress: every run of the subset is drawn and committed.\n"
    from ..checkpoint import load_checkpoint
    from ..pipeline import studies
    from .trained import settings_runs

    grown = dict(settings, subset=";".join(p for p in (settings.get("subset"), growth) if p))
    runs = studies.build(grown).runs
    new = sorted(settings_runs(grown) - settings_runs(settings))
    finished, partway, waiting = [], [], []
    # d, the family and the learning rate are named where the growth's runs differ in them
    named = [key for key in ("d", "family", "lr") if len({runs[r].get(key) for r, _ in new}) > 1]
    for run, seed in new:
        cfg = runs[run]
        extra = "".join(f" {cfg[key]}" if key == "family" else f" {key} {cfg[key]:g}" for key in named)
        label = f"{cfg['embedding']}:{cfg['regularizer']}{extra} {seed}"
        resume = results / "runs" / run / f"seed{seed}" / "checkpoint.pt.resume"
        if not resume.is_file():
            waiting.append(label)
            continue
        ckpt = load_checkpoint(resume)
        if ckpt["status"] == "diverged" or ckpt["step"] >= cfg["steps"]:
            finished.append(label + (" (diverged)" if ckpt["status"] == "diverged" else ""))
        else:
            partway.append(f"{label} (step {ckpt['step']})")
    cells = sorted({(runs[r]["d"], runs[r]["k"], runs[r]["tau"]) for r, _ in new})
    where = "; ".join(f"d = {d}, k = {k}, tau = {t:g}" for d, k, t in cells)
    lines = [f"Subset `{growth}` ({where}): {len(new)} runs (run, seed). "
             f"{len(finished)} trained, {len(partway)} part-way, {len(waiting)} not started."]
    for name, items in (("Trained", finished), ("Part-way (step of the resume file)", partway),
                        ("Not started", waiting)):
        if items:
            lines.append(f"- {name}: {', '.join(items)}.")
    lines += _profile_progress(results, studies.build(grown).evaluations, studies.build(settings).evaluations)
    return "\n".join(lines) + "\n"


def _profile_progress(results: Path, grown: dict, before: dict) -> list[str]:
    """The growth's profiles (Fig 1, Table 1): the (d, k, embedding) cells of their committed resume files.
    grown, before: figure -> EvaluationSpec (studies.Studies.evaluations)."""
    lines = []
    for fig, spec in sorted(grown.items()):
        if fig in before or spec.kind != "profile":
            continue
        total = len(spec.ds) * len(spec.ks) * 2
        resume = results / "eval" / f"{fig}.parquet.resume"
        done = len(pd.read_parquet(resume)[["d", "k", "embedding"]].drop_duplicates()) if resume.is_file() else 0
        lines.append(f"- Profile {fig}: {done} of {total} (d, k, embedding) cells measured (resume file "
                     f"`results/eval/{fig}.parquet.resume`).")
    return lines


def blocks(results: Path) -> dict[str, str]:
    settings = json.loads((results / "manifest.json").read_text()).get("settings", {})
    return dict(runs=runs_block(results, settings),
                multistep=multistep_block(results), fig5=fig5_block(results),
                growth=growth_block(results, settings))


def render(text: str, generated: dict[str, str]) -> str:
    for block, body in generated.items():
        text = splice(text, markers(block), body, f"{DOC} (block {block!r})")
    return text
