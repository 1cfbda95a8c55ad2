"""What each figure needs: the training runs (a run = a full training configuration, trained once
per seed and shared by every figure that uses it) and the evaluations, for resolved settings.

Pure Python (no torch): Snakemake builds the DAG from this at parse time.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from ..constants import EMBEDDINGS, FAMILIES, REGULARIZERS
from . import figure_registry
# (distribution_id and testset_id live with the test sets they name; studies.testset_id stays importable)
from .evaluation_specs import (DISTRIBUTION_KEYS, DissimilaritySpec, EvaluationSpec, LandscapeSpec, MultistepSpec,
                               ProfileSpec, TestSet, distribution_id, testset_id)  # noqa: F401
from .subset import select as select_subset

SIX = [(e, r) for e in EMBEDDINGS for r in REGULARIZERS]

FIGURES = figure_registry.ids(drawn=True)  # what the figure modules draw
TARGETS = figure_registry.ids()  # and table1

# Fixed choices the paper leaves open (recorded in every run's config and the captions).
MULTISTEP_BASE = dict(d=32, k=10, tau=0.1)  # Figs 5-8, 12, fig_em
# `training` setting -> the TrainConfig choices it stands for (science.md §7). reference: the authors' code
# (ReduceLROnPlateau on the relative validation loss, projections with bias, attention dropout 0.01
# while training); plain: Adam at a constant learning rate, no bias, no dropout.
TRAINING_MODES = {"reference": dict(plateau=True, bias=True, dropout=0.01),
                  "plain": dict(plateau=False, bias=False, dropout=0.0)}


def run_config(s: dict, **overrides) -> dict:
    """A full training configuration (TrainConfig fields without the seed)."""
    mode = s["training"]
    if mode not in TRAINING_MODES:
        raise ValueError(f"config key 'training' has invalid value {mode!r}; allowed: {sorted(TRAINING_MODES)}")
    cfg = dict(d=4, k=6, embedding="OH", regularizer="L2", tau=0.1, n=s["n_points"], batch=s["batch"], lr=0.01,
               steps=s["steps"], family="normal", isotropic=True, equal_weights=True, scale=0.1,
               eval_every=s["eval_every"], val_batches=s["val_batches"], clip_grad=None, gamma=1.0,
               **TRAINING_MODES[mode])
    unknown = set(overrides) - set(cfg)
    if unknown:
        raise KeyError(f"unknown run options {sorted(unknown)}")
    cfg.update(overrides)
    cell = headline_cell(s, cfg)
    if cell is not None:
        cfg["steps"] = cell["steps"]
        if "batch" in cell:  # same validation set (val_batches x batch tasks) as the other runs of the distribution
            cfg["batch"], cfg["val_batches"] = cell["batch"], s["val_batches"] * s["batch"] // cell["batch"]
    cfg["eval_every"] = min(cfg["eval_every"], cfg["steps"])
    return cfg


def headline_cell(s: dict, cfg: dict) -> dict | None:
    """The entry of settings' headline_cells that sets this run's M, or None.

    Headline cells (long cells) are the (d, k, tau) cells that the review's claims read (Figs 6, 8, 10,
    14 at tau = 0.1); a preset may train them longer than the rest (the quick preset does, because the
    models overtake one Lloyd step only after 800-6000 steps). A cell covers the runs of the default task
    distribution (isotropic, equal weights, scale 0.1, n = n_points) at the default M, learning rate and
    clipping, trained on one of the cell's families (default: normal) with one of its regularizers
    (default: both, all six curves): every figure that draws such a run draws the long one.
    """
    default = (cfg["isotropic"] and cfg["equal_weights"] and cfg["scale"] == 0.1
               and cfg["n"] == s["n_points"] and cfg["steps"] == s["steps"] and cfg["lr"] == 0.01
               and cfg["clip_grad"] is None)
    if not default:
        return None
    for cell in s.get("headline_cells") or []:
        if ((cell["d"], cell["k"]) == (cfg["d"], cfg["k"]) and abs(cell["tau"] - cfg["tau"]) < 1e-9
                and cfg["family"] in cell.get("families", ("normal",))
                and cfg["regularizer"] in cell.get("regularizers", REGULARIZERS)):
            return cell
    return None


def digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def run_id(cfg: dict) -> str:
    """Readable and unique: the headline options, then a digest of the full configuration."""
    return f"{cfg['embedding']}-{cfg['regularizer']}_d{cfg['d']}_k{cfg['k']}_{digest(cfg)[:10]}"


def distribution(cfg: dict) -> dict:
    return {k: cfg[k] for k in DISTRIBUTION_KEYS}


def curve(cfg: dict) -> str:
    return f"{cfg['embedding']}:{cfg['regularizer']}"


@dataclass
class Curve:
    """One curve of a training figure: a run plus the facet labels it is drawn in."""

    run: str
    facets: dict
    label: str


@dataclass
class Studies:
    settings: dict
    runs: dict = field(default_factory=dict)  # run id -> config
    training: dict = field(default_factory=dict)  # figure -> [Curve]
    evaluations: dict = field(default_factory=dict)  # figure -> EvaluationSpec (evaluation_specs.py)
    subset: list = field(default_factory=list)  # the settings' subset, parsed (empty: the whole preset)

    def add(self, fig: str, facets: dict, **overrides) -> str:
        cfg = run_config(self.settings, **overrides)
        rid = run_id(cfg)
        self.runs.setdefault(rid, cfg)
        if fig is not None:
            self.training.setdefault(fig, []).append(Curve(rid, facets, curve(cfg)))
        return rid

    def six(self, fig: str, facets: dict, **overrides) -> list[str]:
        """The six curves of a training figure's facet cell: every embedding x regularizer."""
        return [self.add(fig, facets, embedding=e, regularizer=r, **overrides) for e, r in SIX]

    def model(self, embedding: str, regularizer: str, **overrides) -> str:
        """A run that an evaluation reads (no training figure's curve): trained at MULTISTEP_BASE's cell
        unless overrides say otherwise."""
        return self.add(None, {}, embedding=embedding, regularizer=regularizer, **{**MULTISTEP_BASE, **overrides})

    def testset(self, family="normal", n=None, isotropic=True, equal_weights=True, scale=0.1,
                tasks=None) -> TestSet:
        """An evaluation's test set at MULTISTEP_BASE's d and k: the preset's n and eval_tasks unless given."""
        s = self.settings
        return TestSet(family=family, n=n or s["n_points"], d=MULTISTEP_BASE["d"], k=MULTISTEP_BASE["k"],
                       isotropic=isotropic, equal_weights=equal_weights, scale=scale, tasks=tasks or s["eval_tasks"])

    def multistep(self, models: dict, testsets: dict, modes=("reembed",), baselines=("lloyd",),
                  cross: str | None = None) -> MultistepSpec:
        """A multi-step evaluation: each model run for eval_steps steps on each test set, in each mode; with
        Lloyd's baseline, the settings' empty-cluster convention (lloyd_empty) and seed (eval_seed, reseed
        draws from it)."""
        s = self.settings
        lloyd = "lloyd" in baselines
        return MultistepSpec(models=dict(models), modes=tuple(modes), testsets=dict(testsets), steps=s["eval_steps"],
                             baselines=tuple(baselines), cross=cross, lloyd_empty=s["lloyd_empty"] if lloyd else None,
                             baseline_seed=s["eval_seed"] if lloyd else None)

    def landscape(self, surface: str, models: dict, testsets: dict) -> LandscapeSpec:
        """A loss ("loss") or gap ("gap") surface of the L2 loss at tau = 0.1 around each model's parameters."""
        s = self.settings
        return LandscapeSpec(surface=surface, models=dict(models), tau=0.1, regularizer="L2",
                             resolution=s["landscape_resolution"], tasks=s["landscape_tasks"], testsets=dict(testsets))

    def dissimilarity(self, tasks_per_family: int) -> DissimilaritySpec:
        """Earth-mover distances between the tasks of every family, tasks_per_family of each."""
        return DissimilaritySpec(
            testsets={family: self.testset(family=family, tasks=tasks_per_family) for family in FAMILIES})

    def profile(self, ds: list, ks: list) -> ProfileSpec:
        """OH vs BN timed over the grid ds x ks."""
        s = self.settings
        return ProfileSpec(ds=tuple(ds), ks=tuple(ks), n=s["profile_n"], batch=s["profile_batch"],
                           warmup=s["profile_warmup"], reps=s["profile_reps"])

    def runs_of(self, fig: str) -> list[str]:
        if fig in self.training:
            return sorted({c.run for c in self.training[fig]})
        spec: EvaluationSpec | None = self.evaluations.get(fig)  # None: a figure this subset leaves out
        return spec.runs() if spec is not None else []

    def targets(self) -> list[str]:
        """The figures (and table1) these studies draw, in TARGETS order: all of them, or a subset's."""
        have = set(self.training) | set(self.evaluations)
        return [f for f in TARGETS if f in have]

    def distributions(self) -> dict:
        """distribution id -> distribution, over all runs (each has a validation set per seed)."""
        return {distribution_id(distribution(c)): distribution(c) for c in self.runs.values()}


def check_headline_cells(s: dict) -> None:
    val_tasks = s["val_batches"] * s["batch"]
    for i, cell in enumerate(s.get("headline_cells") or []):
        if "batch" in cell and val_tasks % cell["batch"]:
            raise ValueError(f"config key 'headline_cells' item {i} has batch = {cell['batch']}, which does not divide "
                             f"the validation set of val_batches x batch = {val_tasks} tasks; choose a divisor")


# What the runs of one stack share (icl_kmeans.training.SHARED, without importing torch here).
STACK_KEYS = ("embedding", "d", "k", "n", "batch", "steps", "eval_every", "val_batches", "gamma", "bias", "dropout")
UNSTACKED_FIGURES = tuple(f.id for f in figure_registry.TABLE if f.timed_alone)  # their runs train alone


def stacks(st: Studies, seeds: list, size: int) -> dict:
    """train_jobs=stack: stack name -> [(run, seed)], every (run, seed) of the stackable runs once.

    Runs are grouped by STACK_KEYS; a group of more than `size` pairs is cut into the fewest stacks of
    at most `size`, of near-equal sizes. Names: shape, then a digest of the members (stable).
    """
    alone = {r for fig in UNSTACKED_FIGURES for r in st.runs_of(fig)}
    groups: dict = {}
    for run in sorted(set(st.runs) - alone):
        key = tuple(st.runs[run][k] for k in STACK_KEYS)
        groups.setdefault(key, []).extend((run, int(seed)) for seed in seeds)
    out = {}
    for key, pairs in sorted(groups.items(), key=lambda kv: json.dumps(kv[0])):
        parts = -(-len(pairs) // size)
        per = -(-len(pairs) // parts)
        for i in range(parts):
            members = pairs[i * per:(i + 1) * per]
            cfg = dict(zip(STACK_KEYS, key))
            out[f"{cfg['embedding']}_d{cfg['d']}_k{cfg['k']}_n{cfg['n']}_{digest(members)[:10]}"] = members
    return out


def stack_work(st: Studies, members) -> int:
    """What a stack costs, roughly: tasks x points processed (sum over members of steps x batch x n)."""
    return sum(st.runs[r]["steps"] * st.runs[r]["batch"] * st.runs[r]["n"] for r, _ in members)


BUNDLE_SHARE = 8  # a stack under 1/8 of the largest one's work is small: bundled with other small ones


def stack_jobs(st: Studies, stacks_: dict) -> dict:
    """train_jobs=stack: job name -> [(run, seed)], the stacks a job trains one after the other.

    A job is one stack, or a bundle of small stacks (each under 1/BUNDLE_SHARE of the largest stack's
    work, together at most 2/BUNDLE_SHARE of it): on a laptop a job costs a process start and a torch
    import (about 5 s), which dominates the short stacks. The bundles keep the shape order of the
    stacks, so that a bundle's stacks are related. Names: a bundle is `bundle_<digest of members>`.
    """
    if not stacks_:
        return {}
    largest = max(stack_work(st, m) for m in stacks_.values())
    jobs, bundle, work = {}, [], 0

    def close():
        if len(bundle) == 1:
            jobs[bundle[0][0]] = bundle[0][1]
        elif bundle:
            members = [p for _, m in bundle for p in m]
            jobs[f"bundle_{digest(members)[:10]}"] = members

    for name, members in stacks_.items():
        w = stack_work(st, members)
        if w * BUNDLE_SHARE >= largest:
            jobs[name] = members
            continue
        if bundle and (work + w) * BUNDLE_SHARE > 2 * largest:
            close()
            bundle, work = [], 0
        bundle.append((name, members))
        work += w
    close()
    return jobs


def build(s: dict) -> Studies:
    check_headline_cells(s)
    largest_k = max(s["profile_k"] + s["table1_k"])
    if s["profile_n"] < largest_k:
        raise ValueError(f"config key 'profile_n' = {s['profile_n']} is invalid: profiling k = {largest_k} "
                         f"centers needs at least that many points (profile_n >= max of profile_k and table1_k)")
    st = Studies(settings=s)
    for row in figure_registry.TABLE:  # each figure's spec adds its runs (pipeline/specs/<id>.py)
        if row.runs is not None:
            row.runs(st, s)
    for row in figure_registry.TABLE:  # a figure that draws another's evaluation (Fig 18: Fig 8's) reads it
        if row.runs is None and row.evaluation is not None:  # (a frozen spec: shared, never changed)
            st.evaluations[row.id] = st.evaluations[row.evaluation]
    select_subset(st, s.get("subset"))
    return st
