"""Typed evaluation specs (pipeline/evaluation_specs.py, issue 51): one frozen dataclass per kind, narrowed
by a subset with dataclasses.replace, and handed to the rules as the plain dict the specs were before, key
for key and type for type (Snakemake's params rerun trigger compares its repr: nothing committed reruns)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from icl_kmeans.constants import EMBEDDINGS, FAMILIES, REGULARIZERS
from icl_kmeans.pipeline import evaluation_specs as es
from icl_kmeans.pipeline import figure_registry, settings, studies

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def smoke():
    s = settings.resolve({"preset": "smoke"})
    return s, studies.build(s)


def test_every_evaluation_is_a_frozen_dataclass_of_its_kind(smoke):
    _, st = smoke
    assert {spec.kind for spec in st.evaluations.values()} == set(es.KINDS)
    for fig, spec in st.evaluations.items():
        assert dataclasses.is_dataclass(spec) and type(spec).__dataclass_params__.frozen, fig
        assert type(spec) is es.KINDS[spec.kind] and spec.kind == figure_registry.figure(fig).kind, fig
        with pytest.raises(dataclasses.FrozenInstanceError):
            spec.models = {}
        for ts in spec.testsets.values():
            assert isinstance(ts, es.TestSet) and type(ts).__dataclass_params__.frozen
        assert spec.runs() == sorted(set(spec.models.values())) == st.runs_of(fig)
    assert st.evaluations["fig18"] is st.evaluations["fig8"]  # Fig 18 draws Fig 8's evaluation
    assert not st.evaluations["fig1"].models and not st.evaluations["fig1"].testsets
    assert not st.evaluations["fig9"].models and st.evaluations["fig9"].testsets


def test_lloyd_needs_its_convention():
    ts = es.TestSet("normal", 16, 2, 3, True, True, 0.1, 4)
    with pytest.raises(ValueError, match="lloyd_empty"):
        es.MultistepSpec(models={}, modes=("reembed",), testsets={"normal": ts}, steps=2, baselines=("lloyd",))
    spec = es.MultistepSpec(models={}, modes=("reembed",), testsets={"normal": ts}, steps=2, baselines=("em",))
    assert "lloyd_empty" not in spec.as_params()


def test_a_subset_narrows_a_spec_with_replace():
    full = studies.build(settings.resolve({"preset": "paper"}))
    sub = studies.build(settings.resolve({"preset": "paper",
                                          "subset": "fig8:train_family=cauchy;fig3:d=4;fig8:curve=BN:L2"}))
    for fig in ("fig8", "fig3"):
        before, after = full.evaluations[fig], sub.evaluations[fig]
        assert type(after) is type(before) and after.models and set(after.models) < set(before.models)
        # only the models differ; every other field is the full preset's
        assert after == dataclasses.replace(before, models=after.models)
    # two entries of one figure: the union of their models, in the order they were added
    assert set(sub.evaluations["fig8"].models) == (
        {k for k in full.evaluations["fig8"].models if k.endswith("|cauchy") or k.startswith("BN:L2|")})
    assert set(sub.evaluations["fig3"].models) == {"OH:L2|d=4", "BN:L2|d=4"}
    assert sub.evaluations["fig18"] == sub.evaluations["fig8"]


# ----------------------------------------- the params a rule receives: the dicts the builders made before
def _legacy_testset(s, family="normal", n=None, isotropic=True, equal_weights=True, scale=0.1, tasks=None, **over):
    """A test set as the old studies.testset built it, with build()'s id added last."""
    ts = dict(family=family, n=n or s["n_points"], d=32, k=10, isotropic=isotropic, equal_weights=equal_weights,
              scale=scale, tasks=tasks or s["eval_tasks"])
    ts.update(over)
    ts["id"] = (f"{ts['family']}_n{ts['n']}_d{ts['d']}_k{ts['k']}_{'iso' if ts['isotropic'] else 'aniso'}_"
                f"{'eq' if ts['equal_weights'] else 'uneq'}_s{ts['scale']:g}_t{ts['tasks']}")
    return ts


def _legacy_params(fig: str, s: dict) -> dict:
    """The plain dict the old builders (and build()'s in-place additions) gave fig, built from the settings
    here; the run ids come from a fresh Studies' model(), which this change leaves alone."""
    st = studies.Studies(settings=s)
    lloyd = dict(lloyd_empty=s["lloyd_empty"], baseline_seed=s["eval_seed"])
    if fig == "fig6":
        models = {f"{e}:{r}": st.model(e, r) for e in EMBEDDINGS for r in REGULARIZERS}
        return dict(kind="multistep", models=models, modes=["naive", "reembed"],
                    testsets={"normal": _legacy_testset(s)}, steps=s["eval_steps"], baselines=["lloyd"], **lloyd)
    if fig == "fig8":
        models = {f"{e}:L2|{f}": st.model(e, "L2", family=f) for f in FAMILIES for e in EMBEDDINGS}
        return dict(kind="multistep", models=models, modes=["reembed"],
                    testsets={f: _legacy_testset(s, family=f) for f in FAMILIES}, steps=s["eval_steps"],
                    baselines=["lloyd"], cross="train family x test family", **lloyd)
    if fig == "fig3":
        models = {f"{e}:L2|d={d}": st.model(e, "L2", d=d, k=6) for d in (4, 32) for e in ("OH", "BN")}
        testsets = {f"d={d}": _legacy_testset(s, d=d, k=6, tasks=s["landscape_tasks"]) for d in (4, 32)}
        return dict(kind="landscape", surface="loss", models=models, tau=0.1, regularizer="L2",
                    resolution=s["landscape_resolution"], tasks=s["landscape_tasks"], testsets=testsets)
    if fig == "fig9":
        tasks = s[figure_registry.figure("fig9").tasks_key]
        return dict(kind="dissimilarity", testsets={f: _legacy_testset(s, family=f, tasks=tasks) for f in FAMILIES})
    assert fig == "fig1"
    return dict(kind="profile", ds=s["profile_d"], ks=s["profile_k"], n=s["profile_n"], batch=s["profile_batch"],
                warmup=s["profile_warmup"], reps=s["profile_reps"])


@pytest.mark.parametrize("preset", ["smoke", "paper"])
@pytest.mark.parametrize("fig", ["fig6", "fig8", "fig3", "fig9", "fig1"])
def test_a_rule_receives_the_dict_of_before(preset, fig):
    s = settings.resolve({"preset": preset})
    params = studies.build(s).evaluations[fig].as_params()
    legacy = _legacy_params(fig, s)
    assert params == legacy
    assert repr(params) == repr(legacy)  # what Snakemake records and compares: key order and types too


def test_the_evaluation_rules_pass_as_params():
    """Snakemake serialises a param only when it is a builtin (a dataclass would drop out of the rerun
    trigger, which reruns every evaluation): the rules pass the plain dict."""
    text = (REPO / "workflow" / "rules" / "evaluate.smk").read_text()
    specs = re.findall(r"^\s*spec=(.*)$", text, re.M)
    assert len(specs) == 4 and set(specs) == {"lambda w: STUDIES.evaluations[w.fig].as_params(),"}


def test_testset_id_and_params():
    ts = es.TestSet("lognormal", 16, 2, 3, False, True, 0.05, 320)
    assert ts.id == "lognormal_n16_d2_k3_aniso_eq_s0.05_t320" == studies.testset_id(dataclasses.asdict(ts))
    assert ts.as_params() == {**dataclasses.asdict(ts), "id": ts.id}
    assert list(ts.as_params())[-1] == "id"
