"""The Snakemake DAG: presets, validation errors, job counts at paper scale, lint and formatting.
Dry runs only: nothing is trained here."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from icl_kmeans.pipeline import figure_registry, settings, studies

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(*args, cwd=REPO, check=False):
    proc = subprocess.run([*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def job_stats(output: str) -> dict[str, int]:
    block = output.split("Job stats:")[1]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", block, re.M)}


@pytest.fixture(scope="module")
def paper_dry_run_output(tmp_path_factory):
    # A dry run in a scratch working directory, so that existing results/ do not change the counts.
    work = tmp_path_factory.mktemp("paper")
    for name in ("Snakefile", "config.yaml", "workflow", "envs", "src"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    proc = snakemake("-n", "--config", "preset=paper", cwd=work, check=True)
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def paper_dry_run(paper_dry_run_output):
    return job_stats(paper_dry_run_output)


def test_every_stack_job_asks_for_one_gpu(paper_dry_run_output):
    jobs = re.findall(r"^rule (train_stack_\w+):\n(.*?)(?=^\S|\Z)", paper_dry_run_output, re.M | re.S)
    assert len(jobs) > 50  # the dry run details a part of the 163 stack jobs
    for name, body in jobs:
        resources = re.search(r"^\s*resources: (.*)$", body, re.M).group(1)
        assert "gpu=1" in resources.split(", ") and "cpus_per_gpu=4" in resources, (name, resources)


def test_the_claims_job_reads_the_claims_rules(paper_dry_run_output):
    """A changed claim rule decides the claims again, as a changed plotter redraws its figure."""
    body = re.search(r"^(?:local)?rule claims:\n(.*?)(?=^\S|\Z)", paper_dry_run_output, re.M | re.S).group(1)
    inputs = re.search(r"^\s*input: (.*)$", body, re.M).group(1).split(", ")
    code = {Path(p).name for p in inputs if "/review/" in p}
    assert code == {"claim_core.py", "claim_tables.py", "claims.py", "claims_grids.py", "claims_multistep.py",
                    "claims_training.py", "trained.py", "verdict_history.py"}, inputs


def test_paper_preset_trains_every_configuration_for_ten_seeds(paper_dry_run):
    s = settings.resolve({"preset": "paper"})
    st = studies.build(s)
    assert len(s["seeds"]) == 10
    assert 250 <= len(st.runs) <= 400, "the paper trained about 300 configurations"
    # train_jobs=stack: Fig 17's runs one job per seed, every other (run, seed) in exactly one stack job
    stacks = studies.stacks(st, s["seeds"], s["stack_size"])
    assert s["train_jobs"] == "stack"
    assert paper_dry_run["train"] == len(st.runs_of("fig17")) * 10
    assert paper_dry_run["train"] + sum(len(m) for m in stacks.values()) == len(st.runs) * 10
    assert sum(v for k, v in paper_dry_run.items() if k.startswith("train_stack_")) == len(
        studies.stack_jobs(st, stacks))
    pairs = [p for m in stacks.values() for p in m]
    assert len(pairs) == len(set(pairs)) and max(len(m) for m in stacks.values()) <= s["stack_size"]
    for members in stacks.values():  # a stack shares the tensor shapes (and steps) of its runs
        assert len({tuple(st.runs[r][k] for k in studies.STACK_KEYS) for r, _ in members}) == 1
    # stack mode (as pack) writes the validation sets of all seeds of a distribution in one job
    assert paper_dry_run["validation_tasks"] == len(st.distributions())
    for rule in ("evaluate_multistep", "evaluate_landscape", "task_dissimilarity", "profile_timing", "aggregate"):
        assert paper_dry_run.get(rule, 0) >= 1, rule


def test_runs_are_shared_between_figures():
    st = studies.build(settings.resolve({}))
    used = sum(len(st.runs_of(f)) for f in st.training)
    assert len(st.runs) < used, "figures with the same configuration must share runs"
    # Fig 6's normal d=32 k=10 tau=0.1 models are Fig 4's.
    assert set(st.evaluations["fig6"].models.values()) <= set(st.runs_of("fig4"))


@pytest.mark.parametrize("override, words", [
    ("preset=fast", ["preset", "fast", "quick", "paper", "smoke"]),
    ("stepz=3", ["stepz", "steps"]),
    ("steps=0", ["steps", "0", "minimum"]),
    ("train_jobs=node", ["train_jobs", "node", "seed", "pack", "stack"]),
    ("stack_size=0", ["stack_size", "0", "minimum"]),
    ("training=adam", ["training", "adam", "reference", "plain"]),
    ("lloyd_empty=drop", ["lloyd_empty", "drop", "keep", "reseed"]),
    ("seeds=[1,x]", ["seeds.1", "'x'", "integer"]),
])
def test_invalid_config_stops_before_any_job(override, words, tmp_path):
    proc = snakemake("-n", "--config", override, cwd=REPO)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    for w in words:
        assert w in out, f"error for {override} should mention {w!r}:\n{out[-2000:]}"
    assert "Job stats" not in out


def test_preset_files_are_complete_and_valid():
    schema = settings.load_schema()
    for preset in schema["properties"]["preset"]["enum"]:
        values = yaml.safe_load(settings.preset_file(preset).read_text())
        settings.validate(values, schema, preset)
        missing = set(schema["properties"]) - set(values) - {"preset"}
        assert not missing, f"preset {preset} does not set {sorted(missing)}"
        assert settings.load_preset(preset) == values


def test_the_schema_holds_no_values():
    """Types, ranges and descriptions only: the values are the presets'."""
    for key, prop in settings.load_schema()["properties"].items():
        assert "default" not in prop, f"schema key {key!r} has a default; a preset sets it"
        assert prop.get("description"), f"schema key {key!r} has no description"


def test_a_preset_that_leaves_a_key_unset_is_named(tmp_path, monkeypatch):
    values = yaml.safe_load(settings.preset_file("smoke").read_text())
    del values["eval_seed"]
    (tmp_path / "smoke.yaml").write_text(yaml.safe_dump(values))
    monkeypatch.setattr(settings, "preset_file", lambda preset: tmp_path / f"{preset}.yaml")
    with pytest.raises(settings.ConfigError, match=r"preset smoke .*does not set \['eval_seed'\]"):
        settings.resolve({"preset": "smoke"})


def test_the_package_ships_its_schema_and_presets():
    """Package data (pyproject's package-data), found through the package, not the checkout."""
    import tomllib

    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    src = REPO / "src" / "icl_kmeans"
    shipped = {p for pkg, globs in data.items() for g in globs
               for p in (src.parent / pkg.replace(".", "/")).glob(g)}
    assert settings.schema_file() in shipped
    assert {settings.preset_file(p) for p in ("quick", "paper", "smoke")} <= shipped
    assert not (REPO / "workflow" / "presets").exists() and not (REPO / "workflow" / "schemas").exists()


def test_command_line_overrides_win_over_the_preset():
    s = settings.resolve({"preset": "paper", "steps": 7, "seeds": [1, 2]})
    assert s["steps"] == 7 and s["seeds"] == [1, 2] and s["n_points"] == 512
    assert s["overrides"] == ["seeds", "steps"]


def test_command_line_lists_are_typed_by_the_schema():
    # snakemake --config "seeds=[1,2]" hands over ['1', '2'] (YAML's base loader)
    s = settings.resolve({"seeds": ["1", "2"], "fig12_eval_n": ["16", "32"], "subset": "fig10:d=32"})
    assert s["seeds"] == [1, 2] and s["fig12_eval_n"] == [16, 32] and s["subset"] == "fig10:d=32"
    with pytest.raises(settings.ConfigError, match=r"seeds\.0.*'one'"):
        settings.resolve({"seeds": ["one"]})


def test_seeds_given_on_the_command_line_reach_the_dag():
    proc = snakemake("-n", "fig2", "--config", "seeds=[11,12]", "steps=5", cwd=REPO, check=True)
    out = proc.stdout + proc.stderr
    assert "seed11" in out and "seed12" in out and "seed153476998" not in out


def test_every_target_has_a_rule():
    proc = snakemake("--list-rules", cwd=REPO, check=True)
    rules = set(proc.stdout.split())
    for target in studies.TARGETS + tuple(figure_registry.PART_IDS):  # fig15a ... fig16d: a part is a target
        assert target in rules, f"no target rule {target}"


def test_a_subset_holding_one_part_of_fig15_draws_only_that_part():
    """fig15:d=32,tau=0.1 is Figure 15(d): the plan draws fig15d from results/tables/fig15.parquet, no other
    part and no whole fig15; the target fig15 asks for that part alone."""
    proc = snakemake("-n", "fig15", "--config", "preset=smoke", "subset=fig15:d=32,tau=0.1", cwd=REPO, check=True)
    out = proc.stdout + proc.stderr
    drawn = set(re.findall(r"results/figures/(\w+)\.(?:pdf|png)", out))
    assert drawn == {"fig15d"}, drawn
    assert job_stats(out)["plot"] == 1
    assert "input: results/tables/fig15.parquet" in out


def test_lint_is_clean():
    proc = snakemake("--lint", cwd=REPO)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Lints for" not in out, out[-4000:]


def test_snakefiles_are_snakefmt_formatted():
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    proc = subprocess.run([sys.executable, "-m", "snakefmt", "--check", *map(str, files)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_training_switch_chooses_reference_or_plain_and_is_part_of_the_run_id():
    ref = studies.build(settings.resolve({"preset": "smoke", "training": "reference"}))
    plain = studies.build(settings.resolve({"preset": "smoke", "training": "plain"}))
    for cfg in ref.runs.values():
        assert (cfg["plateau"], cfg["bias"], cfg["dropout"]) == (True, True, 0.01)
    for cfg in plain.runs.values():
        assert (cfg["plateau"], cfg["bias"], cfg["dropout"]) == (False, False, 0.0)
    assert len(ref.runs) == len(plain.runs) and not set(ref.runs) & set(plain.runs)
    with pytest.raises(ValueError, match="training.*'adam'.*plain.*reference"):
        studies.run_config({**settings.resolve({"preset": "smoke"}), "training": "adam"})


@pytest.mark.parametrize("preset, mode", [("paper", "reference"), ("quick", "plain"), ("smoke", "reference")])
def test_each_preset_says_which_training_it_uses(preset, mode):
    text = settings.preset_file(preset).read_text()
    assert f"\ntraining: {mode}\n" in text
    assert settings.resolve({"preset": preset})["training"] == mode


def test_fig10_tau_is_one_seventh_exactly():
    st = studies.build(settings.resolve({"preset": "smoke"}))
    taus = sorted({c.facets["tau"] for c in st.training["fig10"]})
    assert taus == [0.1, 1 / 7, 0.25, 1.0]
    assert {st.runs[c.run]["tau"] for c in st.training["fig10"]} == set(taus)


def test_small_stacks_are_bundled_into_few_jobs_and_every_pair_is_trained_once():
    s = settings.resolve({})  # the quick preset: many short stacks, a few long ones
    st = studies.build(s)
    stacks = studies.stacks(st, s["seeds"], s["stack_size"])
    jobs = studies.stack_jobs(st, stacks)
    assert len(jobs) < len(stacks) / 2
    pairs = [p for m in jobs.values() for p in m]
    assert sorted(pairs) == sorted(p for m in stacks.values() for p in m)
    largest = max(studies.stack_work(st, m) for m in stacks.values())
    owner = {p: name for name, m in stacks.items() for p in m}
    for name, members in jobs.items():
        parts = {owner[p] for p in members}
        if name.startswith("bundle_"):  # whole small stacks only, and not more work than 2 of the largest/8
            assert len(parts) > 1 and sum(len(stacks[n]) for n in parts) == len(members)
            assert all(studies.stack_work(st, stacks[n]) * studies.BUNDLE_SHARE < largest for n in parts)
            assert studies.stack_work(st, members) * studies.BUNDLE_SHARE <= 2 * largest
        else:
            assert parts == {name}


def test_long_cells_select_their_families_and_regularizers():
    """The quick preset trains Fig 8's L2 models of every family long (M = 2000), the NE models of those
    families and everything off the cells briefly; the normal cell keeps all six curves long."""
    quick = settings.resolve({})
    st = studies.build(quick)
    steps = {(c["family"], c["embedding"], c["regularizer"]): c["steps"] for c in st.runs.values()
             if (c["d"], c["k"], c["tau"], c["n"], c["lr"], c["clip_grad"]) == (32, 10, 0.1, 64, 0.01, None)
             and c["isotropic"] and c["equal_weights"] and c["scale"] == 0.1}
    for fam in ("cauchy", "gumbel", "laplace", "lognormal"):
        for e in ("OH", "BN", "NA"):
            assert steps[(fam, e, "L2")] == 2000 and steps[(fam, e, "NE")] == quick["steps"], (fam, e)
    assert {steps[("normal", e, r)] for e in ("OH", "BN", "NA") for r in ("NE", "L2")} == {3000}
    for model in st.evaluations["fig8"].models.values():  # the whole 5 x 5 grid is drawn from long runs
        assert st.runs[model]["steps"] >= 2000
    cell = dict(d=32, k=10, tau=1.0, steps=40, families=["gumbel"], regularizers=["NE"])
    st = studies.build(settings.resolve({"preset": "smoke", "headline_cells": [cell]}))
    long = {(c["family"], c["regularizer"]) for c in st.runs.values() if c["steps"] == 40}
    assert long == {("gumbel", "NE")}
    with pytest.raises(settings.ConfigError, match="headline_cells"):
        settings.resolve({"headline_cells": [dict(cell, families=["uniform"])]})
