"""The cluster path as users type it: every `snakemake ... --profile` command printed in the README, the
Snakefile, the presets, the profile, the envs and docs/cluster.md parses and finds its profile from the
repository root (Snakemake's own lookup, no installer); docs/cluster.md's submission tables are what a
dry run counts (icl_kmeans.pipeline.slurm_plan)."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from icl_kmeans.pipeline import slurm_plan

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = [REPO / "README.md", REPO / "Snakefile", REPO / "docs" / "cluster.md", REPO / "docs" / "paper-scale.md",
             REPO / "slurm" / "profile.yaml", *sorted((REPO / "src/icl_kmeans/pipeline/config/presets").glob("*.yaml")),
             *sorted((REPO / "envs").glob("*.yaml"))]


def printed_commands() -> list[tuple[str, str]]:
    """(file, command) for every snakemake command line with --profile in the documents: the text from
    `snakemake` to the end of the line, without a trailing comment (`#`, or two spaces then prose),
    backtick or bracket."""
    found = []
    for path in DOCUMENTS:
        for line in path.read_text().splitlines():
            for m in re.finditer(r"snakemake (-[^`#)\n]*?--profile[^`#)\n]*)", line):
                command = re.split(r"\s{2,}", m.group(1).strip())[0]
                found.append((path.name, "snakemake " + command.rstrip(".,;")))
    return found


COMMANDS = printed_commands()


def test_the_documents_print_the_literal_command():
    assert ("Snakefile", "snakemake --cores all --profile slurm --config preset=paper") in COMMANDS, COMMANDS
    assert any(f == "cluster.md" and "--profile slurm --profile mysite" in c for f, c in COMMANDS), COMMANDS
    assert len(COMMANDS) >= 8, COMMANDS
    assert any("-s $REPO/Snakefile" in c and "--profile $REPO/slurm" in c for _, c in COMMANDS), COMMANDS


@pytest.mark.parametrize("where,command", COMMANDS, ids=[f"{f}:{c}" for f, c in COMMANDS])
def test_every_printed_command_parses_and_finds_its_profile(where, command, monkeypatch, tmp_path):
    """snakemake's own argument parsing (profile lookup included), from the repository root; a command that
    names the checkout as $REPO (docs/cluster.md, "From another directory") from another directory, REPO set.
    A user's second profile (`--profile mysite`) is written where Snakemake looks for it, ~/.config/snakemake."""
    from snakemake import cli

    if "$REPO" in command:
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.chdir(tmp_path / "elsewhere")
        command = command.replace("$REPO", str(REPO))
    else:
        monkeypatch.chdir(REPO)
    monkeypatch.setenv("ICL_KMEANS_SLURM_PROFILE", "")  # the profile sets it when loaded: undone after the test
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    mysite = tmp_path / ".config" / "snakemake" / "mysite"
    mysite.mkdir(parents=True)
    (mysite / "profile.yaml").write_text("slurm-qos: high\njobs: 400\n")
    cli.get_appdirs.cache_clear() if hasattr(cli.get_appdirs, "cache_clear") else None
    argv = shlex.split(command)[1:]
    try:
        parser, args = cli.parse_args(argv)
    except SystemExit as e:  # snakemake prints "no profile.yaml found" and exits
        pytest.fail(f"{where}: `{command}` does not parse from the repository root (exit {e.code})")
    assert args.executor == "slurm", f"{where}: `{command}`: the slurm profile was not applied ({args.executor})"
    if "mysite" in command:
        assert args.jobs == 400 and args.slurm_qos == "high", (args.jobs, getattr(args, "slurm_qos", None))


def test_a_missing_profile_is_still_an_error(monkeypatch):
    from snakemake import cli

    monkeypatch.chdir(REPO)
    with pytest.raises(SystemExit):
        cli.parse_args(["--cores", "all", "--profile", "no-such-profile"])


def test_local_rules_are_the_rules_of_seconds():
    assert slurm_plan.local_rules() == {"validation_tasks", "test_tasks", "aggregate", "plot", "write_table1",
                                        "manifest", "claims", "review", "bundle"}


def test_the_submission_counter_reads_groups_and_local_jobs():
    log = """
[Fri] Group job train (jobs in lexicogr. order):

    [Fri]
    rule train:
        output: results/runs/a/seed1/checkpoint.pt, results/metrics/x
        jobid: 3

    [Fri]
    rule train:
        output: results/runs/a/seed2/checkpoint.pt, results/metrics/y

[Fri]
rule train_stack_BN_d4_k6_n512_0123456789:
    output: results/runs/b/seed1/checkpoint.pt, results/runs/c/seed1/checkpoint.pt

[Fri]
rule plot:
    output: results/figures/fig6.pdf

[Fri]
rule fig6:
    input: results/figures/fig6.pdf
"""
    p = slurm_plan.parse(log, {"plot"})
    assert p.submissions == {"group train": 1, "train_stack_*": 1} and p.local == {"plot": 1}
    assert p.members == {"train": 2} and p.runs == 4 and p.total_submissions == 2


@pytest.mark.pipeline
def test_cluster_md_tables_are_what_the_dry_runs_count():
    """Fails when a rule, a preset or the grouping changes the counts: rewrite them with
    `python -m icl_kmeans.pipeline.slurm_plan --write docs/cluster.md`."""
    path = REPO / "docs" / "cluster.md"
    assert len(slurm_plan.MARKED.findall(path.read_text())) == 3
    assert slurm_plan.rewrite(path) == path.read_text(), (
        "docs/cluster.md's tables are stale: python -m icl_kmeans.pipeline.slurm_plan --write docs/cluster.md")


def test_training_run_time_comes_from_the_formula(monkeypatch):
    from icl_kmeans.pipeline import slurm_resources as sr

    monkeypatch.delenv(sr.STEP_SECONDS_VARIABLE, raising=False)
    assert sr.training_resources(10000, 64) == {"runtime": 44, "mem_mb": 8000 + 64 * 100}
    monkeypatch.setenv(sr.STEP_SECONDS_VARIABLE, "0.03")
    assert sr.training_resources(10000, 1)["runtime"] == 20
    monkeypatch.setenv(sr.STEP_SECONDS_VARIABLE, "fast")
    with pytest.raises(ValueError, match="ICL_KMEANS_GPU_STEP_SECONDS='fast'"):
        sr.step_seconds()


def test_step_seconds_from_a_benchmark_file(tmp_path, capsys):
    from icl_kmeans.pipeline import slurm_resources as sr

    tsv = tmp_path / "stack.tsv"
    tsv.write_text("s\th:m:s\tmax_rss\n1600.0\t0:26:40\t2000\n")
    assert sr.measured_step_seconds(str(tsv), 10000) == pytest.approx(0.1)
    assert sr.main([str(tsv), "--steps", "10000"]) == 0
    assert "export ICL_KMEANS_GPU_STEP_SECONDS=0.1 " in capsys.readouterr().out
