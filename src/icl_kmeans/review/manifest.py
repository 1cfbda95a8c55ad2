"""The manifest: every artifact under results/ with its checksum and provenance.

Written by the workflow's `manifest` rule after every target (rule `all` asks for it), as
    results/manifest.parquet   one row per artifact (schema MANIFEST_SCHEMA)
    results/manifest.tsv       the same rows, human readable (without the long params and inputs JSON)
    results/manifest.json      what the rows were made under: the resolved settings (preset and
                               overrides), the expected target files, the exclusions, the code version
An artifact is every plain file under results/ except (EXCLUDED, documented in docs/review.md):
    results/logs/        job logs (they change with every attempt; informative, not results)
    results/benchmarks/  Snakemake's `benchmark:` files of the training and evaluation jobs (wall time, memory)
    results/provenance/  the per-job sidecars the manifest is made from
    results/review/      what `snakemake review` writes
    results/bundle_info/ the bundle's copy of config and environment pins (only in unpacked bundles)
    results/manifest.*, results/bundle.tar.gz, results/README.md
    hidden files (.snakemake_timestamp, ...), *.tmp and *.resume (files of jobs still running), *.corrupt
    (unreadable checkpoints a training job moved aside before retraining)
The manifest is the root of trust: its own sha256 is printed by review and in the report.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..atomic import atomic_write, atomic_write_json
from ..pipeline.figure_registry import BY_ID
from ..pipeline.provenance import RESULTS, canonical, code_version, digest, package_versions, read_sidecar, sha256_file

MANIFEST_VERSION = 1
PARQUET, TSV, META = "manifest.parquet", "manifest.tsv", "manifest.json"
# paper-scale: the working directory of subset runs (settings subset_dir), a results tree of its own with its
# own manifest
EXCLUDED_DIRS = ("logs", "benchmarks", "provenance", "review", "bundle_info", "paper-scale")
EXCLUDED_FILES = (PARQUET, TSV, META, "bundle.tar.gz", "README.md")
EXCLUDED_SUFFIXES = (".tmp", ".resume", ".corrupt")

MANIFEST_SCHEMA = pa.schema([
    ("path", pa.string()), ("kind", pa.string()), ("sha256", pa.string()), ("size", pa.int64()),
    ("rule", pa.string()), ("wildcards", pa.string()), ("config_digest", pa.string()),
    ("params_digest", pa.string()), ("params", pa.string()), ("inputs", pa.string()), ("run", pa.string()), ("seed", pa.int64()), ("seeds", pa.string()),
    ("code_commit", pa.string()), ("code_dirty", pa.bool_()), ("code_diff_sha256", pa.string()),
    ("packages", pa.string()), ("device", pa.string()),
    ("start", pa.timestamp("ms", tz="UTC")), ("end", pa.timestamp("ms", tz="UTC")),
    ("current", pa.bool_()),
])

KINDS = (  # (prefix under results/, kind), first match wins
    ("tasks/val/", "validation task set"), ("tasks/test/", "test task set"), ("runs/", None),
    ("metrics/", "training metrics"), ("eval/", "evaluation"), ("tables/table1.csv", "Table 1"), ("tables/table1.md", "Table 1"),
    ("tables/", "aggregated table"), ("figures/", "figure"),
)
HUMAN_DROPPED = ["params", "inputs"]  # long JSON; in the Parquet file only
RUN_FILE_KINDS = {"checkpoint.pt": "checkpoint", "record.json": "run record", "timing.parquet": "timing"}


class ManifestError(RuntimeError):
    pass


def is_excluded(rel: str) -> bool:
    parts = rel.split("/")
    return (parts[0] in EXCLUDED_DIRS or (len(parts) == 1 and parts[0] in EXCLUDED_FILES)
            or any(p.startswith(".") for p in parts) or rel.endswith(EXCLUDED_SUFFIXES))


def artifact_paths(results=RESULTS) -> list[str]:
    """Every artifact under `results` as 'results/...' paths (relative to the working directory), sorted."""
    results = Path(results)
    out = []
    for dirpath, dirnames, filenames in os.walk(results):
        rel_dir = Path(dirpath).relative_to(results).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = [d for d in dirnames if not is_excluded(rel_dir + d + "/x")]
        for name in filenames:
            rel = rel_dir + name
            if not is_excluded(rel) and os.path.isfile(os.path.join(dirpath, name)):
                out.append((results / rel).as_posix())
    return sorted(out)


def kind_of(path: str, results=RESULTS) -> str:
    rel = Path(path).relative_to(results).as_posix()
    for prefix, kind in KINDS:
        if rel.startswith(prefix):
            return kind or RUN_FILE_KINDS.get(Path(rel).name, "run file")
    return "other"


def _ts(s):
    return pd.Timestamp(s) if s else pd.NaT


def manifest_row(path: str, provenance: dict | None, sha: str, size: int, results=RESULTS) -> dict:
    p = provenance or {}
    code = p.get("code") or {}
    return {
        "path": path, "kind": kind_of(path, results), "sha256": sha, "size": size, "rule": p.get("rule"),
        "wildcards": canonical(p["wildcards"]) if "wildcards" in p else None,
        "config_digest": p.get("config_digest"), "params_digest": p.get("params_digest"),
        "params": canonical(p["params"]) if "params" in p else None,
        "inputs": canonical(p["inputs"]) if "inputs" in p else None, "run": p.get("run"),
        "seed": p.get("seed"), "seeds": ",".join(str(s) for s in p["seeds"]) if p.get("seeds") else None,
        "code_commit": code.get("commit"), "code_dirty": code.get("dirty"), "code_diff_sha256": code.get("diff_sha256"),
        "packages": canonical(p["packages"]) if "packages" in p else None, "device": p.get("device"),
        "start": _ts(p.get("start")), "end": _ts(p.get("end")), "current": True,
    }


def build(results=RESULTS, known: dict | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Rows for every artifact, and the problems: artifacts without a provenance sidecar, or whose file
    changed after its job wrote it (sidecar sha256 differs). `known` (see `is_current`) marks files of
    other configurations (current = False)."""
    rows, problems = [], []
    for path in artifact_paths(results):
        sha, size = sha256_file(path), os.path.getsize(path)
        prov = read_sidecar(path, results)
        if prov is None:
            problems.append(f"{path}: no provenance record (was it written by a job outside pipeline.job_context.job?)")
        elif prov.get("sha256") != sha:
            problems.append(f"{path}: changed after the job that wrote it (sha256 {sha[:12]}..., "
                            f"its job wrote {str(prov.get('sha256'))[:12]}...)")
        row = manifest_row(path, prov, sha, size, results)
        row["current"] = is_current(path, known, results)
        rows.append(row)
    df = pd.DataFrame(rows, columns=MANIFEST_SCHEMA.names)
    return df, problems


def is_current(path: str, known: dict | None, results=RESULTS) -> bool:
    """False for a file that belongs to another configuration than the manifest's: a run, task set or
    figure id the current settings do not produce. `known` = {'runs', 'dists', 'testsets', 'figs'}
    (sets of ids); None: everything is current."""
    if not known:
        return True
    parts = Path(path).relative_to(results).parts
    stem = Path(path).stem  # ids may hold dots (s0.1): drop only the extension
    if parts[0] == "runs" and len(parts) > 1:
        return parts[1] in known["runs"]
    if parts[0] == "metrics" and len(parts) > 1:
        return parts[1].removeprefix("run=") in known["runs"]
    if parts[:2] == ("tasks", "val") and len(parts) > 2:
        return parts[2] in known["dists"]
    if parts[:2] == ("tasks", "test"):
        return stem in known["testsets"]
    if parts[0] == "figures" and stem in BY_ID and BY_ID[stem].split:
        return False  # a figure drawn in parts (figures/fig15a.*) whole: a file of an older configuration
    if parts[0] in ("eval", "tables", "figures"):
        return stem in known["figs"]
    return True


def to_table(df: pd.DataFrame) -> pa.Table:
    df = df.copy()
    df["seed"] = df["seed"].astype("Int64")
    for col in ("start", "end"):
        df[col] = pd.to_datetime(df[col], utc=True)
    return pa.Table.from_pandas(df[MANIFEST_SCHEMA.names], schema=MANIFEST_SCHEMA, preserve_index=False)


def metadata(settings: dict | None = None, targets=(), created: float | None = None) -> dict:
    return {
        "manifest_version": MANIFEST_VERSION,
        "created": _dt.datetime.now(tz=_dt.timezone.utc).isoformat(timespec="seconds") if created is None
        else _dt.datetime.fromtimestamp(created, tz=_dt.timezone.utc).isoformat(timespec="seconds"),
        "settings": settings or {}, "settings_digest": digest(settings or {}),
        "targets": sorted(targets),
        "excluded": {"dirs": list(EXCLUDED_DIRS), "files": list(EXCLUDED_FILES),
                     "suffixes": list(EXCLUDED_SUFFIXES), "hidden": True},
        "code": code_version(), "packages": package_versions(),
    }


def write(df: pd.DataFrame, meta: dict, results=RESULTS) -> dict[str, Path]:
    """results/manifest.{parquet,tsv,json} (each written atomically)."""
    results = Path(results)
    paths = {"parquet": results / PARQUET, "tsv": results / TSV, "json": results / META}
    table = to_table(df).replace_schema_metadata({"icl_kmeans.manifest": json.dumps(meta, sort_keys=True)})
    atomic_write(paths["parquet"], lambda tmp: pq.write_table(table, tmp))
    human = df.copy()
    for col in ("start", "end"):
        human[col] = pd.to_datetime(human[col], utc=True).dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ").str[:-4] + "Z"
    human["seed"] = human["seed"].astype("Int64")
    human = human.drop(columns=HUMAN_DROPPED)
    atomic_write(paths["tsv"], lambda tmp: human.to_csv(tmp, sep="\t", index=False, na_rep=""))
    atomic_write_json(paths["json"], meta, indent=1)
    return paths


def read(results=RESULTS) -> tuple[pd.DataFrame, dict]:
    path = Path(results) / PARQUET
    if not path.is_file():
        raise ManifestError(f"{path} is missing: run the workflow first (snakemake --cores all), or unpack a bundle")
    table = pq.read_table(path)
    meta = json.loads((table.schema.metadata or {}).get(b"icl_kmeans.manifest", b"{}"))
    return table.to_pandas(), meta


def make(results=RESULTS, settings: dict | None = None, targets=(), known: dict | None = None,
         strict: bool = True) -> tuple[pd.DataFrame, dict, list[str]]:
    """Build and write the manifest. With strict, provenance problems or missing targets raise
    ManifestError (after nothing is written) naming every file."""
    df, problems = build(results, known)
    listed = set(df["path"])
    problems += [f"{t}: target file missing" for t in sorted(targets) if t not in listed]
    if problems and strict:
        raise ManifestError("the manifest cannot vouch for these files:\n  " + "\n  ".join(problems))
    meta = metadata(settings, targets)
    write(df, meta, results)
    return df, meta, problems
