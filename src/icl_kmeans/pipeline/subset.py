"""Subsets: train and evaluate only chosen cells of chosen figures, through the same DAG.

Config key `subset` (with any preset; meant for the paper's): a list of entries, or one string of
entries separated by ';', each
    FIG                        the whole figure
    FIG:KEY=V[|V...][,KEY=V]   only the curves (training figures) or models (evaluation figures) whose
                               labels match every KEY; e.g. fig10:d=32,tau=0.1 or fig6:curve=OH:L2|BN:L2
Keys of a training figure: its facets (fig10: d, tau) and `curve` (e.g. OH:L2). Keys of an evaluation
figure: `curve`, and what its model labels carry after the curve (fig8: train_family; fig3: d).
A subset only leaves things out: run ids, validation and test sets and every rule are those of the
full preset, so a run trained in a subset is the run the full grid trains. Fig 18 draws Fig 8's
evaluation, so either brings that evaluation in.

Pure Python (no torch): Snakemake applies it while it builds the DAG.
"""

from __future__ import annotations

import math
from dataclasses import replace

from .evaluation_specs import EvaluationSpec
from .figure_registry import sharing_evaluation

CURVE = "curve"


class SubsetError(ValueError):
    pass


def parse(subset) -> list[tuple[str, dict]]:
    """[(figure, {key: [values as written]})] from the config value (None, a string or a list)."""
    if not subset:
        return []
    entries = subset.split(";") if isinstance(subset, str) else list(subset)
    out = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        fig, _, rest = entry.partition(":")
        cells: dict = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, values = part.partition("=")
            if not eq or not key.strip() or not values.strip():
                raise SubsetError(f"config key 'subset': {part!r} in {entry!r} is not KEY=VALUE[|VALUE...]")
            cells.setdefault(key.strip(), []).extend(v.strip() for v in values.split("|"))
        out.append((fig.strip(), cells))
    return out


def _matches(value, wanted: list[str]) -> bool:
    """A facet value against the values written in the subset: equal as text or as numbers, or to the
    two significant digits the paper prints (tau = 1/7 is printed 0.14)."""
    for w in wanted:
        if str(value) == w:
            return True
        try:
            x, y = float(value), float(w)
        except (TypeError, ValueError):
            continue
        if math.isclose(x, y, rel_tol=1e-9) or f"{x:.2g}" == f"{y:.2g}":
            return True
    return False


def _model_labels(name: str) -> dict:
    """An evaluation's model key, e.g. 'OH:L2|cauchy' or 'OH:L2|d=4', as labels {curve, ...}."""
    curve, _, rest = name.partition("|")
    labels = {CURVE: curve}
    if rest:
        key, eq, value = rest.partition("=")
        labels.update({key: value} if eq else {"train_family": rest})
    return labels


def _select_training(st, fig: str, cells: dict) -> list:
    curves = st.training[fig]
    keys = sorted({k for c in curves for k in c.facets} | {CURVE})
    unknown = sorted(set(cells) - set(keys))
    if unknown:
        raise SubsetError(f"config key 'subset': {fig} has no key {unknown}; its keys are {keys}")
    kept = [c for c in curves if all(_matches({**c.facets, CURVE: c.label}[k], v) for k, v in cells.items())]
    if not kept:
        have = sorted({", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in c.facets.items())
                       for c in curves})
        raise SubsetError(f"config key 'subset': no curve of {fig} matches {cells}; its cells are {have}")
    return kept


def _select_evaluation(spec: EvaluationSpec, fig: str, cells: dict) -> EvaluationSpec:
    models = spec.models
    if not cells:
        return spec
    if not models:
        raise SubsetError(f"config key 'subset': {fig} draws no trained models; give it without keys")
    labels = {name: _model_labels(name) for name in models}
    keys = sorted({k for lab in labels.values() for k in lab})
    unknown = sorted(set(cells) - set(keys))
    if unknown:
        raise SubsetError(f"config key 'subset': {fig} has no key {unknown}; its keys are {keys}")
    kept = {name: run for name, run in models.items()
            if all(k in labels[name] and _matches(labels[name][k], v) for k, v in cells.items())}
    if not kept:
        raise SubsetError(f"config key 'subset': no model of {fig} matches {cells}; its models are {sorted(models)}")
    return replace(spec, models=kept)


def select(st, subset) -> None:
    """Leaves in `st` (a studies.Studies) only the figures, curves and models of the subset, and the runs
    they need. Unknown figures, keys or cells that match nothing are errors that say what exists."""
    entries = parse(subset)
    if not entries:
        return
    figures = set(st.training) | set(st.evaluations)
    training, evaluations = {}, {}
    for fig, cells in entries:
        if fig not in figures:
            raise SubsetError(f"config key 'subset': unknown figure {fig!r}; expected one of {sorted(figures)}")
        if fig in st.training:
            kept = training.setdefault(fig, [])
            kept += [c for c in _select_training(st, fig, cells) if c not in kept]
            continue
        sources = sharing_evaluation(fig)  # fig8 and fig18 draw one evaluation
        for source in sources:
            spec = _select_evaluation(st.evaluations[source], fig, cells)
            if source in evaluations and spec.models:  # two entries of one figure: the union of their models
                spec = replace(spec, models={**evaluations[source].models, **spec.models})
            evaluations[source] = spec
    st.training, st.evaluations = training, evaluations
    used = {c.run for curves in training.values() for c in curves}
    used |= {r for spec in evaluations.values() for r in spec.models.values()}
    st.runs = {r: cfg for r, cfg in st.runs.items() if r in used}
    st.subset = entries


def describe(subset) -> str:
    """The subset as the scale line states it: each figure once, its entries merged as its title merges them
    ('fig10 d=32 tau=0.1; fig6'; Fig 8 grown a column at a time: 'fig8 train_family=cauchy|normal')."""
    entries: dict[str, list[dict]] = {}
    for fig, cells in parse(subset):
        entries.setdefault(fig, []).append(cells)
    return "; ".join(fig if any(not c for c in cells)  # the whole figure is in the subset
                     else "; ".join(f"{fig} {cell_text(c, ' ')}" for c in merged_cells(cells))
                     for fig, cells in entries.items())


def cell_text(cells: dict, sep: str) -> str:
    """One subset entry's keys as the scale line (sep ' ') and the title (sep ', ') state them: 'd=4|32 tau=0.1'."""
    return sep.join(f"{k}={'|'.join(v)}" for k, v in cells.items())


def merged_cells(cells: list[dict]) -> list[dict]:
    """A figure's subset entries as its title states them: entries with the same keys that differ in one key
    only are one, with that key's values joined (Fig 8 grown a column at a time reads
    'train_family=cauchy|normal|gumbel', not three entries)."""
    merged: list[dict] = []
    for cell in cells:
        for m in merged:
            differ = [k for k in cell if cell[k] != m[k]] if cell.keys() == m.keys() else None
            if differ is not None and len(differ) <= 1:
                for k in differ:
                    m[k] = m[k] + [v for v in cell[k] if v not in m[k]]
                break
        else:
            merged.append({k: list(v) for k, v in cell.items()})
    return merged
