"""The scale line every figure carries under its title: the preset, its seeds, steps, sizes and
training, and the paper's scale for comparison (the paper preset's settings, so the two never
disagree), so that a quick figure is never mistaken for the paper's.

Pure Python: Snakemake imports scale_line and figure_settings while it parses the workflow.
"""

from __future__ import annotations

from .. import settings as settings_mod
from ..figure_registry import TRAINED_KINDS, figure
from ..subset import describe as describe_subset

# How a run was trained (settings key `training`; a missing key means plain, the choice before the key existed).
TRAINING_NAMES = {"plain": "plain Adam",
                  "reference": "reference training (plateau, bias, dropout 0.01)"}
SCALE_KEYS = ("preset", "overrides", "subset", "seeds", "steps", "lr_sweep_steps", "n_points", "n", "batch", "eval_every",
              "val_batches", "training", "headline_cells", "fig13_train_n", "fig17_train_n", "fig12_eval_n", "fig_em_n", "eval_tasks",
              "eval_steps", "landscape_resolution", "landscape_tasks", "fig9_tasks_per_family",
              "fig19_tasks_per_family", "profile_d", "profile_k", "table1_k", "profile_n", "profile_batch",
              "profile_warmup", "profile_reps")


def kind(fig: str) -> str:
    return figure(fig).kind


def paper_settings() -> dict:
    """The paper's scale: the resolved settings of the paper preset (the package's presets/paper.yaml)."""
    return settings_mod.resolve({"preset": "paper"})


def _list(v) -> str:
    return "{" + ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v) + "}"


def points(s: dict) -> int:
    """Points per task of training and evaluation (settings key n_points; n in older configurations)."""
    return s["n_points"] if "n_points" in s else s["n"]


def training_name(s: dict) -> str:
    choice = s.get("training", "plain")
    if choice not in TRAINING_NAMES:
        raise ValueError(f"settings key 'training' = {choice!r} is invalid; expected one of {sorted(TRAINING_NAMES)}")
    return TRAINING_NAMES[choice]


def _cell_runs(cell: dict) -> str:
    """Which runs of a headline cell are long, where it is not the six curves on normal tasks."""
    out = ""
    if cell.get("regularizers"):
        out += ", " + "/".join(cell["regularizers"])
    if cell.get("families", ["normal"]) != ["normal"]:
        out += ", trained on " + "/".join(cell["families"])
    return out


def _training_n(fig: str, s: dict) -> str:
    """'n in {32, 64}' for a figure trained over several n (its spec's train_n_key), else 'n=64'."""
    key = figure(fig).train_n_key
    return f"n in {_list(s[key])}" if key else f"n={points(s)}"


def _tasks_per_family(fig: str, s: dict) -> str:
    return f"{s[figure(fig).tasks_key]} tasks per family"


def _scale_parts(fig: str, s: dict) -> list[str]:
    row = figure(fig)
    k = row.kind
    nseeds = s["seeds"] if isinstance(s["seeds"], int) else len(s["seeds"])
    train_n = _training_n(fig, s)
    trained = [training_name(s), f"{nseeds} seeds", f"M={s[row.steps_key]}",
               ("training " + train_n) if row.train_n_key else train_n, f"B={s['batch']}"]
    cells = s.get("headline_cells") or []
    if cells and k in TRAINED_KINDS:
        trained.append("longer at the headline cells " + "; ".join(
            f"(d={c['d']}, k={c['k']}, tau={c['tau']:g}{_cell_runs(c)}): M={c['steps']}, B={c.get('batch', s['batch'])}"
            for c in cells))
    if k == "training":
        return trained + [f"validation on {s['val_batches'] * s['batch']} tasks every {s['eval_every']} steps"]
    if k == "multistep":
        ev = f"evaluated at n in {_list(s[row.eval_n_key])}" if row.eval_n_key else f"evaluated at n={points(s)}"
        return trained + [f"{s['eval_tasks']} test tasks", f"T={s['eval_steps']}", ev]
    if k == "landscape":
        r = s["landscape_resolution"]
        return trained + [f"first seed only, {r}x{r} grid", f"{s['landscape_tasks']} tasks"]
    if k == "dissimilarity":
        return [_tasks_per_family(fig, s), f"n={points(s)}"]
    grid = row.grid.format(**{key: _list(v) for key, v in s.items() if isinstance(v, (list, tuple))})
    return [grid, f"n={s['profile_n']}", f"batch {s['profile_batch']}",
            f"{s['profile_warmup']} warm-up + {s['profile_reps']} timed reps"]


def scale_line(fig: str, settings: dict) -> str:
    """'quick preset: plain Adam, 3 seeds, M=150, n=128, B=8, ... [paper: reference training ..., 10 seeds, ...]'."""
    preset = settings.get("preset", "?")
    line = f"{preset} preset: " + ", ".join(_scale_parts(fig, settings))
    if settings.get("subset"):  # only what was trained is drawn: say which cells and seeds
        where = "paper scale" if preset == "paper" else f"{preset} preset"
        seeds = settings["seeds"] if isinstance(settings["seeds"], int) else ", ".join(map(str, settings["seeds"]))
        line = (f"{where}, subset: {describe_subset(settings['subset'])} (seeds {seeds}): "
                + ", ".join(_scale_parts(fig, settings)))
    if preset != "paper":  # the workflow passes the paper's settings in; settings recorded without them read the preset
        line += " [paper: " + ", ".join(_scale_parts(fig, settings.get("paper") or paper_settings())) + "]"
    overrides = [k for k in settings.get("overrides") or [] if k not in ("subset", "subset_dir")]
    if overrides:
        line += "; overridden: " + ", ".join(overrides)
    return line


def short_scale_line(fig: str, settings: dict) -> str:
    """The one line of scale a figure carries: 'quick: 3 seeds, n=64, M=150 (headline cells longer)
    [paper: 10 seeds, n=512, M=10000]', the paper's values only where they differ. The full statement
    (scale_line) is in the caption and the sidecar."""
    preset = settings.get("preset", "?")
    where = preset
    if settings.get("subset"):
        where = ("paper scale" if preset == "paper" else where) + ", subset"
    ours = _short_parts(fig, settings)
    line = f"{where}: " + ", ".join(ours)
    if preset != "paper" and figure(fig).title.startswith(("Figure", "Table")):  # a paper figure: its scale
        same = set(_short_parts(fig, settings, cells=False))
        paper = [p for p in _short_parts(fig, settings.get("paper") or paper_settings(), cells=False) if p not in same]
        if paper:
            line += " [paper: " + ", ".join(paper) + "]"
    return line


def _short_parts(fig: str, s: dict, cells: bool = True) -> list[str]:
    row = figure(fig)
    if row.kind in TRAINED_KINDS:
        nseeds = s["seeds"] if isinstance(s["seeds"], int) else len(s["seeds"])
        parts = [f"{nseeds} seeds", _training_n(fig, s),
                 f"M={s[row.steps_key]}" + (" (some cells longer)" if cells and s.get("headline_cells") else "")]
        if row.kind == "multistep":
            parts += [f"{s['eval_tasks']} test tasks", f"T={s['eval_steps']}"]
        return parts
    if row.kind == "dissimilarity":
        return [_tasks_per_family(fig, s), f"n={points(s)}"]
    return [f"n={s['profile_n']}", f"batch {s['profile_batch']}", f"{s['profile_reps']} timed reps"]


def figure_settings(fig: str, settings: dict, paper: dict | None = None) -> dict:
    """The settings a figure's scale line needs (the plot rule's params; nothing else reruns it): those
    of the run and, below "paper", the paper preset's (paper: its resolved settings, read when not given)."""
    out = {k: settings[k] for k in SCALE_KEYS if k in settings}
    if settings.get("preset") != "paper":
        out["paper"] = {k: v for k, v in (paper or paper_settings()).items() if k in SCALE_KEYS}
    return out
