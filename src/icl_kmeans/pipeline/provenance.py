"""Per-job provenance records.

Every pipeline script runs inside `icl_kmeans.pipeline.job_context.job`, which calls `write_job_provenance`
when the job body has finished successfully. For each output file of the job it writes one JSON
sidecar, `results/provenance/<path under results>.json` (e.g. the sidecar of
`results/runs/R/seed1/checkpoint.pt` is `results/provenance/runs/R/seed1/checkpoint.pt.json`), with

    path, sha256, size          the file as the job left it
    rule, wildcards, inputs     the producing rule, its wildcards and its input files (the lineage)
    params_digest               sha256 of the job's params (canonical JSON): the job's configuration
    config_digest               the same for this output alone: a pack job (train_jobs=pack) trains many
                                runs, and the output of run R gets the digest of the params the seed-mode
                                job of R would have had, so both modes give the same digest
    params                      the params config_digest is the digest of (canonical JSON)
    run, seed, seeds            the training run and seed this output belongs to, where there is one
    code                        git commit, dirty flag (any change against HEAD, untracked files
                                included, outside results/) and the sha256 of that `git diff HEAD`; computed once per job,
                                commit "unknown" where there is no git
    packages                    versions of the key packages (importlib.metadata, no imports)
    device                      "cuda: <name>" or "cpu: <processor>" (what the job's computations ran on)
    start, end                  UTC ISO 8601 times of the job body
    threads, job_outputs        the job's threads and number of output files

The sidecars are not declared outputs: Snakemake neither tracks nor deletes them. A sidecar whose
sha256 no longer matches its file is stale (the file was changed after its job); the manifest rule
refuses such files, and files without a sidecar.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from ..atomic import atomic_write_json

PROVENANCE_VERSION = 1
RESULTS = "results"
PROVENANCE_DIR = "provenance"  # under results/
KEY_PACKAGES = ("icl-kmeans", "torch", "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "seaborn",
                "snakemake")
_CHUNK = 1 << 20


# ---------------------------------------------------------------------------------------------- helpers

def canonical(obj) -> str:
    """Canonical JSON (sorted keys; tuples as lists; anything else JSON cannot hold as its str())."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def digest(obj) -> str:
    return hashlib.sha256(canonical(obj).encode()).hexdigest()


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def utc_iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).isoformat(timespec="milliseconds")


def _git(root, *args) -> str | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}  # never take index.lock (a concurrent commit must not fail)
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, env=env, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.decode(errors="replace") if out.returncode == 0 else None


# Not code: the pipeline's outputs. Some are committed (results/paper-scale/, with the resume files of
# runs in progress, which training rewrites): they must not make the code that computes them "dirty".
NOT_CODE = (":(exclude)results",)


def code_version(root=".") -> dict:
    """{'commit', 'dirty', 'diff_sha256'} of the git work tree at `root`; commit 'unknown' without git."""
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return {"commit": "unknown", "dirty": None, "diff_sha256": None}
    status = _git(root, "status", "--porcelain", "--untracked-files=normal", "--", ".", *NOT_CODE) or ""
    diff = _git(root, "diff", "HEAD", "--binary", "--", ".", *NOT_CODE) or ""
    return {"commit": commit.strip(), "dirty": bool(status.strip()),
            "diff_sha256": hashlib.sha256(diff.encode()).hexdigest() if diff else None}


def package_versions(packages=KEY_PACKAGES) -> dict:
    out = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def device_name(requested: str | None) -> str:
    """What a job that asked for `requested` ('auto', 'cpu', 'cuda' or None: no device) computed on."""
    cpu = f"cpu: {platform.processor() or platform.machine() or 'unknown'}"
    if requested in (None, "cpu"):
        return cpu
    torch = sys.modules.get("torch")  # job() imports torch in every job that has it; never import it here
    try:
        if torch is not None and torch.cuda.is_available():
            return f"cuda: {torch.cuda.get_device_name(torch.cuda.current_device())}"
    except Exception:  # noqa: BLE001 -- a broken CUDA setup means the job ran on the CPU
        pass
    return cpu


def sidecar_path(output, results=RESULTS) -> Path:
    """results/<rel> -> results/provenance/<rel>.json; any other path p -> results/provenance/_other/p.json."""
    p = Path(output)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            pass
    try:
        rel = p.relative_to(results)
    except ValueError:
        rel = Path("_other") / str(p).lstrip("/")
    return Path(results) / PROVENANCE_DIR / (str(rel) + ".json")


_SEED = re.compile(r"(?:^|/)seed=?(\d+)(?:/|\.|$)")
_RUN = re.compile(r"(?:^|/)(?:runs/|run=)([^/]+)/")


def _plain(x):
    """Snakemake Namedlists / tuples -> plain lists, recursively (for JSON)."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if hasattr(x, "items"):
        return {str(k): _plain(v) for k, v in x.items()}
    return str(x)


def output_scope(path: str, wildcards: dict, params: dict) -> dict:
    """run, seed, seeds, params (the job's, or for an output of a pack job its run's) and config_digest
    (= digest(params)) of one output of a job."""
    m = _RUN.search(path)
    run = wildcards.get("run") or (m.group(1) if m else None)
    m = _SEED.search(path)
    seed = wildcards.get("seed") or (m.group(1) if m else None)
    if seed is None and isinstance(params.get("seed"), int):
        seed = params["seed"]
    seeds = params.get("seeds") if isinstance(params.get("seeds"), list) else None
    scoped = params
    if run is not None and isinstance(params.get("configs"), dict) and run in params["configs"]:
        # A pack or stack job: the output of run R gets the params the seed-mode job of R has (its config).
        scoped = {k: v for k, v in params.items() if k not in ("configs", "runs", "val_files")}
        scoped["config"] = params["configs"][run]
    return {"run": run, "seed": int(seed) if seed is not None else None,
            "seeds": [int(s) for s in seeds] if seeds else None, "config_digest": digest(scoped), "params": scoped}


def job_record(rule: str, wildcards: dict, params: dict, threads: int, start: float, end: float,
               code: dict | None = None, inputs=(), device: str | None = None) -> dict:
    """The part of a provenance record shared by all outputs of one job. device: the requested device
    (auto, cpu, cuda) when it is not among the params (training jobs), else params' device."""
    params = _plain(params)
    return {"provenance_version": PROVENANCE_VERSION, "rule": rule, "wildcards": _plain(wildcards),
            "inputs": sorted(str(i) for i in inputs),
            "params_digest": digest(params), "code": code if code is not None else code_version(),
            "packages": package_versions(), "device": device_name(device or params.get("device")),
            "start": utc_iso(start), "end": utc_iso(end), "threads": int(threads)}


def write_outputs_provenance(outputs, rule: str, wildcards: dict, params: dict, threads: int, start: float,
                             end: float, code: dict | None = None, inputs=(), results=RESULTS,
                             device: str | None = None) -> list[Path]:
    """One sidecar per output file (directories: per file inside). Returns the sidecar paths."""
    wildcards, params = _plain(wildcards), _plain(params)
    shared = job_record(rule, wildcards, params, threads, start, end, code, inputs, device)
    files = []
    for out in outputs:
        p = Path(out)
        files += sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p]
    written = []
    for f in files:
        rec = dict(shared, path=f.as_posix(), sha256=sha256_file(f), size=f.stat().st_size,
                   job_outputs=len(files), **output_scope(f.as_posix(), wildcards, params))
        side = sidecar_path(f, results)
        atomic_write_json(side, rec, indent=1)
        written.append(side)
    return written


def write_job_provenance(smk, start: float, code: dict | None = None, device: str | None = None) -> list[Path]:
    """Called by pipeline.job_context.job after a successful job body, with the `snakemake` script object."""
    import time

    return write_outputs_provenance(
        list(smk.output), rule=smk.rule, wildcards=dict(smk.wildcards.items()), params=dict(smk.params.items()),
        threads=getattr(smk, "threads", 1) or 1, start=start, end=time.time(), code=code, inputs=list(smk.input),
        device=device)


def read_sidecar(path, results=RESULTS) -> dict | None:
    side = sidecar_path(path, results)
    if not side.is_file():
        return None
    return json.loads(side.read_text())
