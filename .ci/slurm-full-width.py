#!/usr/bin/env python3
"""The paper preset at full DAG width through a real scheduler, with faults (docs/cluster.md, "The whole
paper through the scheduler").

    bash .ci/install-slurm.sh                                   # root: Debian's slurm-wlm and munge
    nice -n 10 .venv/bin/python .ci/slurm-full-width.py --out /tmp/full-width

Every rule, every training stack and every evaluation of `preset=paper`, with the sizes and steps that cost
time overridden (OVERRIDES: same runs, same stacks, same submissions as the paper preset; each run trains 4
steps), runs through `snakemake --cores all --profile slurm` against the single-node SLURM cluster of
tests/slurm_cluster.py, from the root of a copy of the working tree. While it runs:

1. one running training stack job is killed from inside (its processes get SIGKILL): the job fails once,
   and snakemake retries it;
2. another training stack job, once one of its members wrote a checkpoint in this attempt, is frozen and
   `scancel`led: snakemake retries it and the members whose checkpoint was written resume from it
   (record.json's resumed_from);
3. snakemake itself is killed (SIGTERM, `kill`'s default) once a third of the planned submissions
   completed: it submits nothing more, waits for its running jobs and exits. The same command is then run
   again: it submits only the remainder (counted by a dry run before it). (SIGINT, Ctrl-C, is no such
   fault: snakemake 9.27.1 then cancels its SLURM jobs but its local jobs' threads go on starting local
   jobs, and the process does not exit; docs/cluster.md.)

At the end the tables (results/tables/) must equal byte for byte those of an uninterrupted local run with
the same overrides (run meanwhile in a second copy, or given with --local-results), apart from the tables
of wall-clock timings (Fig 1, Fig 17, Table 1). It prints and writes OUT/summary.json: submissions against
the plan, wall times, the login node's time (CPU time of the snakemake processes, and the local rules' wall
time), the faults and their outcome. Exit status 0 when every check passed.

Not part of CI's test run: about 40 minutes on a 2-core machine (docs/cluster.md has the measured numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from slurm_cluster import PROFILE_OVERLAY, SlurmCluster, unavailable_reason  # noqa: E402

from icl_kmeans.pipeline import slurm_plan  # noqa: E402

# The paper preset with what costs time made small. Every n (points per task) is the paper's divided by 8,
# and steps keep the paper's ratio to lr_sweep_steps, so that the runs, the stacks (one per tensor shape),
# their bundling (by work: steps x batch x n) and the submissions are the paper preset's (checked against
# its dry run below).
OVERRIDES = ["preset=paper", "steps=4", "lr_sweep_steps=2", "batch=2", "eval_every=2", "val_batches=1",
             "n_points=64", "fig13_train_n=[16,32,64,128]", "fig17_train_n=[32,64,128]",
             "fig12_eval_n=[16,32,128,256]", "fig_em_n=[16,32,64,128,256]",
             "eval_tasks=4", "eval_steps=3", "landscape_resolution=3", "landscape_tasks=2",
             "fig9_tasks_per_family=2", "fig19_tasks_per_family=3", "profile_n=32", "profile_batch=2",
             "profile_warmup=1", "profile_reps=1", "profile_d=[4,8]", "profile_k=[10,16]", "table1_k=[6,25]"]
# wall-clock timings: different in every run
TIMING_TABLES = {"fig1.parquet", "fig17.parquet", "table1.parquet", "table1.csv", "table1.md"}
INTERRUPT_AT = 1 / 3  # share of the planned submissions completed when snakemake is killed


def log(msg: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {msg}", flush=True)


def copy_tree(dest: Path) -> None:
    """The working tree (tracked and untracked-but-not-ignored files), without results/."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if rel.startswith("results/") or not (REPO / rel).is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, dest / rel)


class Snakemake:
    """One snakemake process: its output in a file, its CPU time (with its children's) when it ended."""

    def __init__(self, args: list[str], cwd: Path, env: dict, logfile: Path):
        self.logfile = logfile
        self.out = open(logfile, "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env,
                                     stdout=self.out, stderr=subprocess.STDOUT)
        self.cpu_s = self.wall_s = None
        self.returncode = None

    def wait(self) -> int:
        _, status, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = self.returncode = os.waitstatus_to_exitcode(status)
        self.wall_s = time.monotonic() - self.t0
        self.cpu_s = usage.ru_utime + usage.ru_stime  # the process and every child it waited for
        self.out.close()
        return self.returncode

    @property
    def log(self) -> str:
        return self.logfile.read_text(errors="replace")


def local_rule_seconds(text: str) -> dict[str, float]:
    """rule -> wall seconds its jobs ran in the snakemake process (localrule blocks to 'Finished jobid')."""
    stamp, started, seconds = None, {}, Counter()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if m := re.match(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$", line):
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y")
        elif m := re.match(r"^localrule (\S+):$", line):
            jobid = next((re.search(r"jobid: (\d+)", x).group(1) for x in lines[i + 1:i + 15] if "jobid:" in x),
                         None)
            if jobid and stamp:
                started[jobid] = (m.group(1), stamp)
        elif (m := re.match(r"^Finished jobid: (\d+)", line)) and m.group(1) in started and stamp:
            rule, t = started.pop(m.group(1))
            seconds[rule] += (stamp - t).total_seconds()
    return dict(seconds)


def job_pids(job_id: str) -> list[int]:
    """The processes a SLURM job started (its environment holds SLURM_JOB_ID=<id>)."""
    marker = f"SLURM_JOB_ID={job_id}\0".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (marker in (d / "environ").read_bytes()
                        and not (d / "comm").read_text().startswith("slurmstepd")):  # SLURM's own: spared
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def stack_members(dry_log: str) -> dict[str, list[str]]:
    """train_stack rule -> its members' run folders (results/runs/<run>/seed<seed>), from a dry run."""
    out, rule = {}, None
    for line in dry_log.splitlines():
        if m := re.match(r"^\s*rule (train_stack_\S+):$", line):
            rule = m.group(1)
        elif rule and line.strip().startswith("output:"):
            out[rule] = re.findall(r"(results/runs/[^ ,]+/seed\d+)/checkpoint\.pt\b", line)
            rule = None
    return out


class Faults(threading.Thread):
    """Injects the three faults into the first run (module docstring) and records what it did."""

    def __init__(self, cluster, work: Path, members: dict, run: Snakemake, planned: int):
        super().__init__(daemon=True)
        self.cluster, self.work, self.members, self.run_, self.planned = cluster, work, members, run, planned
        self.failed = self.cancelled = None  # (job id, rule)
        self.interrupted_after = None  # completed submissions when snakemake was killed
        self.stop = threading.Event()
        self.error = None

    def running_stacks(self):
        return [j for j in self.cluster.jobs() if j.state == "RUNNING" and j.comment.startswith("rule_train_stack_")]

    def run(self):
        try:
            self._run()
        except Exception as err:  # reported by the main thread
            self.error = repr(err)

    def _run(self):
        while not self.stop.is_set() and self.run_.proc.poll() is None:
            if self.failed is None:
                for j in self.running_stacks():
                    pids = job_pids(j.job_id)
                    if pids:  # the job's own processes: killed from inside, the job fails
                        signal_all(pids, signal.SIGKILL)
                        self.failed = (j.job_id, j.comment[len("rule_"):])
                        log(f"fault 1: killed the processes of job {j.job_id} ({self.failed[1]}): fails once")
                        break
            elif self.cancelled is None:
                for j in self.running_stacks():
                    rule = j.comment[len("rule_"):]
                    if j.job_id == self.failed[0] or rule == self.failed[1]:
                        continue
                    start = datetime.strptime(j.raw["StartTime"], "%Y-%m-%dT%H:%M:%S").timestamp()
                    resumes = [self.work / m / "checkpoint.pt.resume" for m in self.members.get(rule, [])]
                    if any(r.exists() and r.stat().st_mtime >= start for r in resumes):
                        signal_all(job_pids(j.job_id), signal.SIGSTOP)  # frozen where it is, then cancelled
                        self.cluster.run(["scancel", j.job_id])
                        self.cancelled = (j.job_id, rule)
                        log(f"fault 2: scancel of job {j.job_id} ({rule}) after a checkpoint of this attempt")
                        break
            else:
                done = [j for j in self.cluster.jobs() if j.state == "COMPLETED"]
                retried = {j.comment for j in done}
                if (len(done) >= INTERRUPT_AT * self.planned and f"rule_{self.failed[1]}" in retried
                        and f"rule_{self.cancelled[1]}" in retried):
                    self.interrupted_after = len(done)
                    self.run_.proc.send_signal(signal.SIGTERM)
                    log(f"fault 3: SIGTERM to snakemake after {len(done)} completed submissions")
                    return
            time.sleep(0.1)


def compare_tables(a: Path, b: Path) -> dict:
    fa = {p.name for p in a.iterdir() if p.is_file()}
    fb = {p.name for p in b.iterdir() if p.is_file()}
    same = sorted(f for f in fa & fb - TIMING_TABLES if (a / f).read_bytes() == (b / f).read_bytes())
    return {"equal": same, "differ": sorted(f for f in fa & fb - TIMING_TABLES if f not in same),
            "only_slurm": sorted(fa - fb), "only_local": sorted(fb - fa),
            "timing_tables_not_compared": sorted(fa & fb & TIMING_TABLES)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/icl-kmeans-full-width"))
    ap.add_argument("--local-results", type=Path,
                    help="results/ of a finished local run with OVERRIDES (default: run one meanwhile)")
    ap.add_argument("--overrides", nargs="+", default=OVERRIDES,
                    help="other --config values (a quicker trial of this script, e.g. preset=smoke train_jobs=stack)")
    a = ap.parse_args(argv)
    reason = unavailable_reason()
    if reason:
        print(f"cannot start a SLURM cluster: {reason}", file=sys.stderr)
        return 2
    out = a.out
    if out.exists():
        shutil.rmtree(out)
    work, local_dir = out / "slurm", out / "local"
    copy_tree(work)
    (out / "overlay").mkdir()
    (out / "overlay" / "profile.yaml").write_text(PROFILE_OVERLAY)
    summary: dict = {"overrides": a.overrides, "checks": {}}
    checks = summary["checks"]

    with SlurmCluster() as cluster:
        env = cluster.user_env
        env.pop("PYTHONPATH", None)
        env.pop("CUDA_VISIBLE_DEVICES", None)
        env.pop("ICL_KMEANS_SLURM_PROFILE", None)
        # the literal command of docs/cluster.md, plus the test cluster's overlay as a second profile
        args = ["--cores", "all", "--profile", "slurm", "--profile", str(out / "overlay"), "--config", *a.overrides]

        local = None
        if a.local_results is None:
            copy_tree(local_dir)
            lenv = {**env, "SLURM_CONF": "/nonexistent"}
            local = Snakemake(["--cores", "1", "--config", *a.overrides], local_dir, lenv, out / "local.log")
            log("local run started (the comparison)")

        t0 = time.monotonic()
        dry = subprocess.run([sys.executable, "-m", "snakemake", "-n", *args], cwd=work, env=env,
                             capture_output=True, text=True)
        assert dry.returncode == 0, dry.stdout[-3000:] + dry.stderr[-3000:]
        plan = slurm_plan.parse(dry.stdout + dry.stderr, slurm_plan.local_rules(work / "Snakefile"))
        paper = slurm_plan.plan(["--config", "preset=paper"], cwd=work)
        summary["plan"] = {"submissions": dict(plan.submissions), "total": plan.total_submissions,
                           "local_jobs": sum(plan.local.values()), "runs": plan.runs,
                           "paper_preset_total": paper.total_submissions, "paper_preset_runs": paper.runs}
        checks["plan equals the paper preset's submissions"] = (
            plan.submissions == paper.submissions and plan.runs == paper.runs)
        log(f"plan: {plan.total_submissions} submissions, {sum(plan.local.values())} local jobs, {plan.runs} runs "
            f"(paper preset: {paper.total_submissions} submissions, {paper.runs} runs)")
        members = stack_members(dry.stdout + dry.stderr)

        first = Snakemake(args, work, env, out / "run1.log")
        faults = Faults(cluster, work, members, first, plan.total_submissions)
        faults.start()
        first.wait()
        faults.stop.set()
        faults.join()
        jobs1 = [j for j in cluster.jobs()]
        log(f"run 1 ended (exit {first.returncode}) after {first.wall_s:.0f} s, {len(jobs1)} submissions")
        summary["faults"] = {"failed_once": faults.failed, "scancelled": faults.cancelled,
                             "interrupted_after_completed": faults.interrupted_after, "error": faults.error}
        still = [j.job_id for j in cluster.jobs() if j.state in ("RUNNING", "PENDING")]
        checks["killed snakemake left no job queued or running"] = not still

        rest = subprocess.run([sys.executable, "-m", "snakemake", "-n", *args], cwd=work, env=env,
                              capture_output=True, text=True)
        remainder = slurm_plan.parse(rest.stdout + rest.stderr, slurm_plan.local_rules(work / "Snakefile"))
        second = Snakemake(args, work, env, out / "run2.log")  # the same command
        second.wait()
        wall = time.monotonic() - t0
        jobs = cluster.jobs()
        jobs2 = jobs[len(jobs1):]
        log(f"run 2 ended (exit {second.returncode}) after {second.wall_s:.0f} s, {len(jobs2)} submissions "
            f"(remainder planned: {remainder.total_submissions})")

        by_comment = Counter(j.comment for j in jobs)
        states = Counter(j.state for j in jobs)
        summary["submissions"] = {"run1": len(jobs1), "run2": len(jobs2), "total": len(jobs),
                                  "states": dict(states), "remainder_planned": remainder.total_submissions,
                                  "distinct_jobs": len(by_comment)}
        summary["wall_s"] = {"slurm_both_runs": round(wall), "run1": round(first.wall_s), "run2": round(second.wall_s)}
        local_rules = Counter(local_rule_seconds(first.log)) + Counter(local_rule_seconds(second.log))
        summary["login_node"] = {"snakemake_cpu_s": round(first.cpu_s + second.cpu_s),
                                 "local_rule_wall_s": {r: round(s) for r, s in sorted(local_rules.items())},
                                 "local_rules_total_s": round(sum(local_rules.values()))}

        checks["second run succeeded"] = second.returncode == 0
        checks["second run submitted exactly the remainder"] = len(jobs2) == remainder.total_submissions
        checks["completed submissions equal the plan"] = states["COMPLETED"] == plan.total_submissions
        if faults.failed:
            fj = [j.state for j in jobs if j.comment == f"rule_{faults.failed[1]}"]
            summary["faults"]["failed_once_states"] = fj
            checks["the job that failed once was retried"] = fj[0] == "FAILED" and fj[-1] == "COMPLETED"
        if faults.cancelled:
            cj = [j.state for j in jobs if j.comment == f"rule_{faults.cancelled[1]}"]
            resumed = [json.loads((work / m / "record.json").read_text()).get("resumed_from")
                       for m in members[faults.cancelled[1]]]
            summary["faults"]["scancelled_states"] = cj
            summary["faults"]["scancelled_members_resumed_from"] = dict(Counter(resumed))
            checks["the scancelled job was retried"] = cj[0] == "CANCELLED" and cj[-1] == "COMPLETED"
            # the job was frozen as soon as one member's checkpoint of that attempt appeared: the members
            # whose checkpoint was written by then resume from it, the others start again from step 0
            checks["its members with a checkpoint resumed from it"] = any(r and r > 0 for r in resumed)
        checks["all three faults injected"] = bool(faults.failed and faults.cancelled and faults.interrupted_after)

        if local is not None:
            local.wait()
            log(f"local run ended (exit {local.returncode}) after {local.wall_s:.0f} s")
            summary["wall_s"]["local_run"] = round(local.wall_s)
            summary["login_node"]["local_run_cpu_s"] = round(local.cpu_s)
            checks["local run succeeded"] = local.returncode == 0
        local_results = a.local_results or local_dir / "results"
        summary["tables"] = compare_tables(work / "results" / "tables", local_results / "tables")
        checks["tables equal byte for byte"] = not (summary["tables"]["differ"] or summary["tables"]["only_slurm"]
                                                    or summary["tables"]["only_local"])
        claims = [work / "results/review/claims.csv", local_results / "review/claims.csv"]
        summary["claims_csv_equal"] = all(p.exists() for p in claims) and claims[0].read_bytes() == claims[1].read_bytes()

    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    print(json.dumps(summary, indent=1, default=str))
    failed = [c for c, ok in checks.items() if not ok]
    for c in failed:
        print(f"FAILED: {c}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
