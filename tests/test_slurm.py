"""The shipped SLURM profile against a real (single-node) SLURM cluster.

Needs root and Debian's slurm-wlm + munge (``.ci/install-slurm.sh``); skipped
otherwise. Select with ``pytest -m slurm``; each test brings up its own
cluster (tests/slurm_cluster.py, ~1 s) and stops it afterwards.

What runs through the cluster is chosen by ``WORKFLOW`` below:

* ``"tiny"``: a self-contained stand-in workflow written into tmp_path whose
  rules carry the pipeline's rule names and declare the resources the
  pipeline's rules declare (one GPU for train and evaluate_multistep, the
  ``train`` group);
* ``"repo"``: the repository's own Snakefile with ``REPO_ARGS`` (the smoke
  preset), in a copy of the working tree.

Either way ``snakemake --cores all --profile slurm`` runs
exactly as a user would type it in the repository root (the stand-in
workflow, outside the repository, names the shipped profile by its absolute
path), plus a test overlay (``--profile <tmp>/overlay``) with what only this
cluster needs.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import slurm_cluster  # noqa: E402
from slurm_cluster import SlurmCluster, unavailable_reason  # noqa: E402

from icl_kmeans.pipeline import slurm_plan  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHIPPED_PROFILE = REPO / "slurm"

# ---- what runs through the cluster: switch to "repo" for the real pipeline --
WORKFLOW = os.environ.get("ICL_KMEANS_SLURM_WORKFLOW", "repo")
# The literal command of docs/cluster.md on the smoke preset, every target:
#   snakemake --cores all --profile slurm --config preset=smoke
# Training, evaluation and profiling go through sbatch; the rules of seconds (task sets, tables,
# figures, Table 1, claims, manifest) run in the snakemake process (localrules). E.g.
# ICL_KMEANS_SLURM_TARGETS="fig6 table1" ICL_KMEANS_SLURM_CONFIG="preset=smoke train_jobs=seed" runs
# per-seed training packed into groups instead.
REPO_TARGETS = os.environ.get("ICL_KMEANS_SLURM_TARGETS", "").split()
REPO_ARGS = [*REPO_TARGETS, "--config", *os.environ.get("ICL_KMEANS_SLURM_CONFIG", "preset=smoke").split()]
TIMEOUT = 600 if WORKFLOW == "tiny" else 3600  # seconds, for each snakemake run
# files under results/ not compared with the local run (wall-clock timings,
# logs, rendered images whose bytes carry dates); the rest must be equal
VOLATILE_FILES = ("logs/*", "benchmarks/*", "provenance/*", "**/timing.parquet", "eval/fig1.parquet",
                  "eval/table1.parquet", "tables/fig1.parquet", "tables/fig17.parquet", "tables/table1.*",
                  "figures/fig1.*", "figures/fig17.*")
VOLATILE_KEYS = {"device", "device_name", "hostname", "host", "slurm_job_id", "started", "finished",
                 "duration_s", "wall_time", "wall_time_s", "seconds", "timestamp", "created", "resumed_from"}

# what only the test cluster needs, layered over the shipped profile
OVERLAY = slurm_cluster.PROFILE_OVERLAY

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.skipif(bool(unavailable_reason()), reason=f"SLURM test cluster: {unavailable_reason()}"),
]


# ----------------------------------------------------------------- fixtures
@pytest.fixture
def cluster():
    with SlurmCluster() as c:
        yield c


@pytest.fixture
def user_env(tmp_path, cluster):
    """A login-node user's environment, and the test cluster's profile overlay."""
    env = cluster.user_env
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("PYTHONPATH", None)  # jobs import the installed package, as a user's would
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "profile.yaml").write_text(OVERLAY)
    return env


def snakemake(args, cwd, env, timeout=300):
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=cwd, env=env,
        text=True, capture_output=True, timeout=timeout,
    )
    proc.seconds = time.monotonic() - t0
    proc.log = proc.stdout + proc.stderr
    return proc


def slurm_args(tmp_path, cwd):
    """The literal command's options (`--cores all --profile slurm`, the profile found by Snakemake's
    lookup in the working directory: the copy of the repository), then the test cluster's overlay as
    a second profile, the way a user adds site settings (docs/cluster.md). The stand-in workflow, outside
    the repository, names the shipped profile by its path."""
    shipped = "slurm" if (cwd / "slurm" / "profile.yaml").is_file() else str(SHIPPED_PROFILE)
    return ["--cores", "all", "--profile", shipped, "--profile", str(tmp_path / "overlay")]


# ----------------------------------------------------------------- workflows
TINY_STUB = r'''
"""Stand-in for the pipeline's scripts: deterministic outputs; where it ran goes to the log."""
import hashlib, json, os, socket, sys, time
from pathlib import Path

kind, out, log = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
inputs = [Path(p) for p in sys.argv[4:]]
log.parent.mkdir(parents=True, exist_ok=True)
log.write_text(json.dumps({
    "slurm_job_id": os.environ.get("SLURM_JOB_ID", ""),
    "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""),
    "host": socket.gethostname(),
}))
digest = hashlib.sha256(b"".join(p.read_bytes() for p in inputs) + kind.encode()).hexdigest()
record = {"kind": kind, "digest": digest}
if kind == "evaluate":  # a GPU rule: the device the code picks (CPU-only torch here)
    import torch
    record["device_found"] = "cuda" if torch.cuda.is_available() else "cpu"
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps(record, sort_keys=True))
'''

TINY_SNAKEFILE = r'''
SEEDS = list(range(5))
STUB = "stub.py"

localrules: all

rule all:
    input: "results/tables/summary.json"

rule validation_tasks:
    output: "results/tasks/val.json"
    log: "results/logs/validation_tasks.log"
    shell: "python {STUB} tasks {output} {log}"

rule train:
    input: "results/tasks/val.json"
    output: "results/runs/seed{seed}/record.json"
    log: "results/logs/train/seed{seed}.log"
    group: "train"
    resources: gpu=1, cpus_per_gpu=4, mem_mb=16000, runtime="30m"
    shell: "python {STUB} train{wildcards.seed} {output} {log} {input}"

rule evaluate_multistep:
    input: expand("results/runs/seed{seed}/record.json", seed=SEEDS)
    output: "results/eval/multistep.json"
    log: "results/logs/evaluate_multistep.log"
    resources: gpu=1, cpus_per_gpu=4, mem_mb=16000, runtime="2h"
    shell: "python {STUB} evaluate {output} {log} {input}"

rule aggregate:
    input: "results/eval/multistep.json"
    output: "results/tables/summary.json"
    log: "results/logs/aggregate.log"
    shell: "python {STUB} aggregate {output} {log} {input}"
'''


def write_tiny(dest: Path, snakefile: str = TINY_SNAKEFILE, stub: str = TINY_STUB) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "Snakefile").write_text(snakefile)
    (dest / "stub.py").write_text(stub)


def copy_repo(dest: Path) -> None:
    """The working tree (tracked and untracked-but-not-ignored files), no results."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
        capture_output=True, check=True,
    ).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = REPO / rel
        if rel.startswith("results/") or not src.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)


def prepare(dest: Path) -> list[str]:
    """Write the chosen workflow to dest; return extra snakemake arguments."""
    if WORKFLOW == "repo":
        copy_repo(dest)
        return list(REPO_ARGS)
    write_tiny(dest)
    return []


def local_targets(extra: list[str]) -> list[str]:
    """The local comparison run's arguments: the SLURM run's, restricted (when that run builds every
    target of the repository) to LOCAL_TARGETS, whose files are compared; CI's time goes to the SLURM run."""
    if WORKFLOW != "repo" or REPO_TARGETS:
        return extra
    return [*LOCAL_TARGETS, *extra]


# the local run's targets when the SLURM run builds everything: a multi-step figure (tasks, training,
# evaluation, tables, plot) and Table 1 (profiling)
LOCAL_TARGETS = os.environ.get("ICL_KMEANS_SLURM_LOCAL_TARGETS", "fig6 table1").split()


# ----------------------------------------------------------------- log parsing
def shipped_profile() -> dict:
    import yte

    with open(SHIPPED_PROFILE / "profile.yaml") as f:
        return yte.process_yaml(f, require_use_yte=True)


# the rules that declare one GPU (workflow/rules/*.smk; the stand-in workflow declares the same)
GPU_RULES = {"train", "evaluate_multistep", "evaluate_landscape", "profile_timing"}


def is_gpu_rule(rule: str) -> bool:
    return rule in GPU_RULES or rule.startswith("train_stack_")


def submissions(log: str) -> list[str]:
    return re.findall(r"has been submitted with SLURM jobid (\d+)", log)


def run_id(log: str) -> str:
    m = re.search(r"SLURM run ID: (\S+)", log)
    assert m, "no SLURM run ID in snakemake's output"
    return m.group(1)


def job_blocks(log: str):
    """(kind, rule, indented, text) for every job snakemake announced.

    kind is "rule" (submitted), "localrule" (run by snakemake itself) or
    "group" (a group header; its members follow as indented rule blocks).
    """
    blocks = []
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)(rule|localrule) (\S+):$", line)
        if m:
            text = "\n".join(lines[i + 1 : i + 12])
            blocks.append((m.group(2), m.group(3), bool(m.group(1)), text))
        elif re.search(r"\] Group job (\S+) \(jobs", line):
            blocks.append(("group", re.search(r"Group job (\S+)", line).group(1), False, ""))
    return blocks


def tres_gpus(job) -> int:
    m = re.search(r"gres/gpu(?::\w+)?=(\d+)", job.raw.get("TRES", "") + "," + job.raw.get("TresPerJob", ""))
    if m:
        return int(m.group(1))
    m = re.search(r"gpu(?::\w+)?:(\d+)", job.raw.get("TresPerJob", ""))
    return int(m.group(1)) if m else 0


def rule_of(job) -> str:
    """The rule (or group) a SLURM job was submitted for, from its Comment."""
    m = re.match(r"rule_(.+?)(?:_wildcards_.*)?$", job.comment)
    return m.group(1) if m else job.comment


# ----------------------------------------------------------------- comparison
def _matches(rel: Path, patterns) -> bool:
    return any(rel.match(p) or rel.as_posix().startswith(p.rstrip("*")) for p in patterns)


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in VOLATILE_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _same(x, y) -> bool:
    import torch

    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, torch.Tensor):
        return isinstance(y, torch.Tensor) and torch.equal(x, y)
    return x == y


def compare_results(a: Path, b: Path, b_is_part: bool = False) -> list[str]:
    """Differences between two results/ trees (empty list: equal). b_is_part: b was made by a run of some
    of a's targets; every file of b must be in a and equal (the manifest, which lists a whole run, aside)."""
    fa = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    fb = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    if b_is_part:
        fb -= {Path("manifest.parquet"), Path("manifest.tsv"), Path("manifest.json")}
        fa &= fb
    diffs = [f"only in {a.parent.name}: {p}" for p in sorted(fa - fb)]
    diffs += [f"only in {b.parent.name}: {p}" for p in sorted(fb - fa)]
    for rel in sorted(fa & fb):
        pa, pb = a / rel, b / rel
        if _matches(rel, VOLATILE_FILES) or pa.read_bytes() == pb.read_bytes():
            continue
        if rel.suffix in (".pt", ".resume"):  # checkpoints (and the kept resume copies) and task sets: same tensors
            import torch

            ta, tb = torch.load(pa, weights_only=False), torch.load(pb, weights_only=False)
            keys = ("model", "step", "status", "X", "C", "labels")
            if all(_same(ta.get(k), tb.get(k)) for k in keys):
                continue
        elif rel.suffix == ".json":
            if _strip(json.loads(pa.read_text())) == _strip(json.loads(pb.read_text())):
                continue
        elif rel.suffix in (".parquet", ".csv"):
            import pandas as pd

            read = pd.read_parquet if rel.suffix == ".parquet" else pd.read_csv
            da, db = read(pa), read(pb)
            cols = [c for c in da.columns if c not in VOLATILE_KEYS]
            try:
                pd.testing.assert_frame_equal(da[cols], db[cols], check_exact=False, rtol=1e-6)
                continue
            except (AssertionError, KeyError):
                pass
        diffs.append(f"differs: {rel}")
    return diffs


# ----------------------------------------------------------------- tests
def test_cluster_starts_with_new_ports_when_slurmd_loses_its_port(monkeypatch):
    """A CI run lost slurmd's port to another process between the port's choice and slurmd's bind;
    the harness starts again on fresh ports instead of failing the test that needed the cluster."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        taken_port = taken.getsockname()[1]
        real = slurm_cluster._free_port
        calls = []

        def free_port():  # second call of the first start (slurmd's port): the taken one
            calls.append(None)
            return taken_port if len(calls) == 2 else real()

        monkeypatch.setattr(slurm_cluster, "_free_port", free_port)
        with SlurmCluster() as c:
            conf = c.conf.read_text()
            assert f"SlurmdPort={taken_port}\n" not in conf
            assert c.run(["sinfo", "-h", "-N", "-o", "%T"]).stdout.strip() == "idle"
        assert len(calls) >= 4  # two ports per start, two starts


def test_ports_are_chosen_below_the_ephemeral_range():
    low = slurm_cluster._ephemeral_range()[0]
    assert all(slurm_cluster._free_port() < low for _ in range(20))


def test_workflow_runs_through_sbatch(tmp_path, cluster, user_env):
    """Every job of the workflow is submitted with sbatch (counted by the
    scheduler), GPU rules get one GPU, training is packed, and the results
    equal those of a local run."""
    t0 = time.monotonic()
    work = tmp_path / "slurm"
    extra = prepare(work)

    # the local run of the same workflow, meanwhile (the SLURM run mostly waits)
    local_dir = tmp_path / "local"
    prepare(local_dir)
    env = dict(user_env)
    env["SLURM_CONF"] = "/nonexistent"  # the local run must not touch the cluster
    local_proc = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "2", *local_targets(extra)], cwd=local_dir, env=env,
        text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        # what docs/cluster.md counts: the same command's dry run (icl_kmeans.pipeline.slurm_plan)
        dry = snakemake(["-n", *slurm_args(tmp_path, work), *extra], cwd=work, env=user_env)
        assert dry.returncode == 0, dry.log[-4000:]
        dry_log = dry.log
        run = snakemake([*slurm_args(tmp_path, work), *extra], cwd=work, env=user_env, timeout=TIMEOUT)
        local_log, _ = local_proc.communicate(timeout=TIMEOUT)
    finally:
        if local_proc.poll() is None:
            local_proc.kill()
            local_proc.communicate()
    assert run.returncode == 0, f"snakemake failed:\n{run.log[-6000:]}\n{cluster.logs()}"

    # --- counted by the scheduler: every job this run submitted, all completed
    rid = run_id(run.log)
    jobs = [j for j in cluster.jobs() if j.name == rid]
    assert jobs, f"the scheduler knows no job of run {rid}: {cluster.jobs()}"
    assert all(j.state == "COMPLETED" for j in jobs), [(j.job_id, j.state) for j in jobs]
    assert sorted(submissions(run.log), key=int) == [j.job_id for j in jobs]
    finished = {r["JobId"] for r in cluster.completed_records()}
    assert {j.job_id for j in jobs} <= finished, "jobs missing from slurmctld's completion log"

    # --- every job that makes a file went through sbatch, except the local rules' (Snakefile's
    # localrules: the rules of seconds), and as many as docs/cluster.md's dry-run count says
    blocks = job_blocks(run.log)
    local = slurm_plan.local_rules(work / "Snakefile")
    local_jobs = [(r, t) for k, r, _, t in blocks if k == "localrule"]
    stray = [r for r, t in local_jobs if "output:" in t and r not in local]
    assert not stray, f"jobs run outside SLURM: {stray}"
    top = [b for b in blocks if b[0] in ("rule", "group") and not b[2]]
    assert all(r not in local for _, r, _, _ in top), [r for _, r, _, _ in top if r in local]
    assert len(top) == len(jobs), (len(top), len(jobs))
    assert "Trying to restart" not in run.log
    if WORKFLOW == "repo":
        planned = slurm_plan.parse(dry_log, local)
        assert planned.total_submissions == len(jobs), (planned.submissions, len(jobs))
        assert sum(planned.local.values()) == len([1 for r, t in local_jobs if "output:" in t]), planned.local

    # --- packing: train jobs go in groups of at most group-components
    n_train = sum(1 for k, r, ind, _ in blocks if k == "rule" and r == "train")
    size = int(shipped_profile()["group-components"]["train"])
    train_jobs = [j for j in jobs if "group_train" in j.std_out]
    if n_train:
        assert len(train_jobs) == math.ceil(n_train / size), (n_train, size, train_jobs)

    # --- resources: one GPU for GPU rules and packed training, none elsewhere
    for j in jobs:
        want = 1 if (is_gpu_rule(rule_of(j)) or "group_train" in j.std_out) else 0
        assert tres_gpus(j) == want, (j.job_id, j.comment, j.raw.get("TRES"), j.raw.get("TresPerJob"))
    for j in train_jobs:  # a packed job asks for the sum of its members' runtime
        assert j.raw["TimeLimit"] != "UNLIMITED"

    if WORKFLOW == "tiny":  # where each job ran, from the rules' own logs
        ids = {j.job_id for j in jobs}
        for log in (work / "results" / "logs").rglob("*.log"):
            where = json.loads(log.read_text())
            assert where["slurm_job_id"] in ids, (log, where)
            is_gpu = is_gpu_rule(log.stem) or log.parent.name == "train"
            assert bool(where["cuda_visible_devices"]) == is_gpu, (log, where)
        ev = json.loads((work / "results/eval/multistep.json").read_text())
        assert ev["device_found"] == "cpu"  # a CPU-only torch falls back to the CPU
        assert n_train == 5 and len(train_jobs) == 1
        # 5 x 30m, the train rule's runtime
        assert train_jobs[0].raw["TimeLimit"] == "02:30:00", train_jobs[0].raw["TimeLimit"]

    # --- same results as the local run
    assert local_proc.returncode == 0, local_log[-6000:]
    diffs = compare_results(work / "results", local_dir / "results", b_is_part=local_targets(extra) != extra)
    assert not diffs, "\n".join(diffs)
    print(
        f"\n[slurm] {len(jobs)} sbatch submissions for {len([b for b in blocks if b[0] == 'rule'])} "
        f"jobs ({n_train} train in {len(train_jobs)} packed); "
        f"SLURM run {run.seconds:.0f} s, test {time.monotonic() - t0:.0f} s"
    )


RETRY_STUB = r'''
"""A training stand-in that resumes from a checkpoint outside its declared outputs."""
import json, os, sys, time
from pathlib import Path

out, ckpt = Path(sys.argv[1]), Path(sys.argv[2])
state = json.loads(ckpt.read_text()) if ckpt.exists() else {"step": 0, "attempts": 0}
resumed_from = state["step"]
state["attempts"] += 1
state["step"] = max(state["step"], 3)  # "train" three steps, then save the checkpoint
ckpt.parent.mkdir(parents=True, exist_ok=True)
ckpt.write_text(json.dumps(state))
Path("waiting").write_text(os.environ.get("SLURM_JOB_ID", ""))
deadline = time.time() + 120
while not Path("release").exists() and time.time() < deadline:  # until the test lets go
    time.sleep(0.2)
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text(json.dumps({"resumed_from": resumed_from, "attempts": state["attempts"]}))
'''

RETRY_SNAKEFILE = r'''
localrules: all

rule all:
    input: "results/runs/seed0/record.json", "results/review.txt"

rule train:
    output: "results/runs/seed{seed}/record.json"
    group: "train"
    shell: "python stub.py {output} checkpoints/seed{wildcards.seed}.json"

rule review:
    output: "results/review.txt"
    shell: "echo failing on purpose >&2; exit 3"
'''


def test_killed_job_is_retried_and_failures_are_reported(tmp_path, cluster, user_env):
    """A training job cancelled by the scheduler is resubmitted and resumes
    from its checkpoint; a job that keeps failing is retried `retries` times,
    then reported with the path of its SLURM log."""
    t0 = time.monotonic()
    work = tmp_path / "slurm"
    write_tiny(work, RETRY_SNAKEFILE, RETRY_STUB)
    proc = subprocess.Popen(
        [sys.executable, "-m", "snakemake", *slurm_args(tmp_path, work)], cwd=work, env=user_env,
        text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        # the train job is running and inside the user code: kill it via the scheduler
        deadline = time.monotonic() + 120
        while not (work / "waiting").exists():
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, f"train job never started: {cluster.jobs()}"
            time.sleep(0.2)
        first = (work / "waiting").read_text().strip()
        (work / "waiting").unlink()
        cluster.run(["scancel", first])
        cluster.wait_for_job_state(lambda j: j.job_id == first and j.state == "CANCELLED", 30)
        (work / "release").touch()
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert proc.returncode != 0, "the failing rule should make the run fail"
    rid = run_id(out)
    jobs = [j for j in cluster.jobs() if j.name == rid]
    train = [j for j in jobs if "group_train" in j.std_out]
    review = [j for j in jobs if rule_of(j) == "review"]
    retries = int(shipped_profile()["retries"])

    # the cancelled training job was resubmitted and resumed from its checkpoint
    assert [j.state for j in train] == ["CANCELLED", "COMPLETED"], [(j.job_id, j.state) for j in train]
    rec = json.loads((work / "results/runs/seed0/record.json").read_text())
    assert rec == {"resumed_from": 3, "attempts": 2}, rec

    # the failing job: retries + 1 attempts, then reported with its SLURM log
    assert [j.state for j in review] == ["FAILED"] * (retries + 1), [(j.job_id, j.state) for j in review]
    last = review[-1]
    assert last.std_out in out, f"log path {last.std_out} not reported:\n{out[-4000:]}"
    assert "failing on purpose" in Path(last.std_out).read_text()
    print(f"\n[slurm] retry test: {len(jobs)} submissions, {time.monotonic() - t0:.0f} s")


# A user's own settings on top of the project's (docs/cluster.md): `--resources` on the command line and a
# second profile that sets its own resource scopes and packs two jobs a SLURM job. Neither may change what a
# packed job asks for (one GPU), nor cap the cluster at one GPU job at a time.
USER_PROFILE = """\
set-resource-scopes:
  mem_mb: local
group-components:
  train: 2
"""


def test_a_packed_group_asks_for_one_gpu_whatever_the_users_resources_and_profile(tmp_path, cluster, user_env):
    """The sbatch line of each packed group (the plugin's own, printed with --verbose) asks for one GPU, the
    scheduler gives each one GPU, and the two groups are queued together (the gpu pool is per SLURM job)."""
    work = tmp_path / "slurm"
    copy_repo(work)
    (tmp_path / "mysite").mkdir()
    (tmp_path / "mysite" / "profile.yaml").write_text(USER_PROFILE)
    config = ["--config", "preset=smoke", "train_jobs=seed"]
    dry = snakemake(["-n", "--cores", "1", "fig6", *config], cwd=work, env=user_env)
    assert dry.returncode == 0, dry.log[-3000:]
    targets = sorted(set(re.findall(r"results/runs/[^ ,]+/record\.json", dry.log)))[:4]
    assert len(targets) == 4, targets
    run = snakemake([*targets, *slurm_args(tmp_path, work), "--profile", str(tmp_path / "mysite"), "--verbose",
                     "--resources", "gpu=1", "mem_mb=64000", *config],
                    cwd=work, env=user_env, timeout=900)
    assert run.returncode == 0, f"{run.log[-6000:]}\n{cluster.logs()}"

    calls = re.findall(r"sbatch call: (sbatch .*)", run.log)
    assert len(calls) == 2 and all("group_train" in c for c in calls), calls
    for call in calls:
        assert re.findall(r"--gpus=\S+", call) == ["--gpus=1"], call
    jobs = [j for j in cluster.jobs() if j.name == run_id(run.log)]
    assert len(jobs) == 2 and all(tres_gpus(j) == 1 and j.state == "COMPLETED" for j in jobs), jobs
    # both queued before either ended: no cluster-wide cap of one GPU job
    first, second = sorted(jobs, key=lambda j: int(j.job_id))
    assert second.raw["SubmitTime"] < first.raw["EndTime"], (second.raw["SubmitTime"], first.raw["EndTime"])
