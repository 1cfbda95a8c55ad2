"""What `snakemake --profile slurm` would submit: a dry run's jobs, counted by rule, split into SLURM
submissions (a packed group counts once) and the jobs that run in the snakemake process itself
(`localrules:` in the Snakefile). docs/cluster.md's tables are written by this module and checked
against it by tests/test_cluster_docs.py.

    python -m icl_kmeans.pipeline.slurm_plan --config preset=paper            # print the table
    python -m icl_kmeans.pipeline.slurm_plan --write docs/cluster.md          # rewrite every marked table

A table in a Markdown file is marked by `<!-- slurm-plan: ARGS -->` ... `<!-- /slurm-plan -->`, ARGS
being the dry run's snakemake arguments after `snakemake -n --cores all --profile slurm`.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
MARKED = re.compile(r"(<!-- slurm-plan: (?P<args>.*?) -->\n)(?P<body>.*?)(<!-- /slurm-plan -->)", re.S)


@dataclass
class Plan:
    submissions: Counter  # rule (or "group NAME") -> SLURM jobs
    local: Counter  # rule -> jobs run by snakemake itself
    members: Counter  # group name -> jobs packed into its submissions
    runs: int  # (configuration, seed) pairs trained: checkpoints among the planned outputs

    @property
    def total_submissions(self) -> int:
        return sum(self.submissions.values())


def local_rules(snakefile: Path = REPO / "Snakefile") -> set[str]:
    """The rule names of the Snakefile's `localrules:` directives (one line, or one name a line)."""
    text = snakefile.read_text()
    names = set()
    for m in re.finditer(r"^localrules:[ \t]*((?:\w+[ \t]*,?[ \t]*)*)\n((?:[ \t]+\w+,?[ \t]*\n)*)", text, re.M):
        names |= set(re.findall(r"\w+", m.group(1) + m.group(2)))
    return names


def stem(rule: str) -> str:
    """train_stack_BN_d4_k6_n512_1a8cbddfa5 -> train_stack_* (one row for the generated rules)."""
    return "train_stack_*" if rule.startswith("train_stack_") else rule


def parse(log: str, local: set[str]) -> Plan:
    submissions, jobs_local, members = Counter(), Counter(), Counter()
    runs = 0
    lines = log.splitlines()
    group = None
    for i, line in enumerate(lines):
        if m := re.search(r"Group job (\S+) \(jobs", line):
            group = m.group(1)
            submissions[f"group {group}"] += 1
            continue
        m = re.match(r"^(\s*)(?:local)?rule (\S+):$", line)
        if not m:
            continue
        indented, rule = bool(m.group(1)), m.group(2)
        block = []
        for nxt in lines[i + 1:]:
            if not nxt.strip() or re.match(r"^\s*(?:local)?rule \S+:$|.*Group job ", nxt):
                break
            block.append(nxt)
        output = next((b for b in block if b.strip().startswith("output:")), None)
        if output is None:  # a target alias (`all`, `fig6`): nothing runs
            continue
        runs += len(re.findall(r"/checkpoint\.pt\b", output))
        if indented and group:
            members[group] += 1
            continue
        group = None
        (jobs_local if rule in local else submissions)[stem(rule)] += 1
    return Plan(submissions, jobs_local, members, runs)


def dry_run(args: list[str], cwd: Path = REPO) -> str:
    cmd = [sys.executable, "-m", "snakemake", "-n", "--cores", "all", "--profile", "slurm", *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{shlex.join(cmd)} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return proc.stdout + proc.stderr


def plan(args: list[str], cwd: Path = REPO) -> Plan:
    return parse(dry_run(args, cwd), local_rules(cwd / "Snakefile"))


def table(p: Plan) -> str:
    rows = ["| rule | SLURM submissions | jobs run by snakemake itself (login node) |", "|---|---|---|"]
    for rule in sorted(set(p.submissions) | set(p.local), key=lambda r: (-p.submissions[r], r)):
        sub = p.submissions[rule]
        if rule.startswith("group ") and p.members[rule[6:]]:
            sub = f"{sub} (packing {p.members[rule[6:]]} `{rule[6:]}` jobs)"
        rows.append(f"| `{rule}` | {sub or ''} | {p.local[rule] or ''} |")
    rows.append(f"| **total** ({p.runs} training runs) | **{p.total_submissions}** | {sum(p.local.values())} |")
    return "\n".join(rows) + "\n"


def rewrite(path: Path, cwd: Path = REPO) -> str:
    """path's text with every marked table written again from its dry run."""
    return MARKED.sub(lambda m: m.group(1) + table(plan(shlex.split(m.group("args")), cwd)) + m.group(4),
                      path.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m icl_kmeans.pipeline.slurm_plan", description=__doc__.split("\n")[0])
    ap.add_argument("--write", type=Path, help="rewrite the marked tables of this Markdown file")
    a, rest = ap.parse_known_args(argv)
    if a.write:
        a.write.write_text(rewrite(a.write))
        print(f"wrote {a.write}")
    else:
        print(table(plan(rest)), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
