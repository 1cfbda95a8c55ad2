"""Artifacts against the manifest.

Every artifact (manifest.artifact_paths: the same walk and exclusions the manifest was made with) is
compared with its manifest row:
    missing   listed in the manifest, not on disk
    extra     on disk, not in the manifest
    changed   size or sha256 differs from the manifest
    target    a target file recorded in manifest.json (every figure and Table 1) that is not listed
    provenance  listed and on disk, but its provenance record (results/provenance/<path>.json) is gone:
              the numbers still check, but the folder cannot be grown (the next manifest refuses it)
Any finding fails the review. Files of another configuration (manifest column current = False) are
not a failure: they are listed as notes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pandas as pd

from .manifest import artifact_paths
from ..pipeline.provenance import RESULTS, sha256_file, sidecar_path


@dataclass(frozen=True)
class Finding:
    kind: str  # missing | extra | changed | target | provenance
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind.upper():8s} {self.path}: {self.detail}"


def verify(manifest: pd.DataFrame, meta: dict | None = None, results=RESULTS) -> list[Finding]:
    listed = {row.path: row for row in manifest.itertuples(index=False)}
    on_disk = set(artifact_paths(results))
    findings = []
    for path in sorted(set(listed) - on_disk):
        findings.append(Finding("missing", path, f"listed in the manifest ({listed[path].kind}, rule "
                                                 f"{listed[path].rule}) but not on disk"))
    for path in sorted(on_disk - set(listed)):
        findings.append(Finding("extra", path, "on disk but not in the manifest"))
    for path in sorted(on_disk & set(listed)):
        row = listed[path]
        size = os.path.getsize(path)
        if size != row.size:
            findings.append(Finding("changed", path, f"size {size} bytes, manifest says {row.size}"))
            continue
        sha = sha256_file(path)
        if sha != row.sha256:
            findings.append(Finding("changed", path, f"sha256 {sha[:16]}..., manifest says {row.sha256[:16]}..."))
        elif not (side := sidecar_path(path, results)).is_file():
            findings.append(Finding("provenance", path, f"no provenance record {side}"))
    for target in (meta or {}).get("targets", []):
        if target not in listed:
            findings.append(Finding("target", target, "a target of the workflow that the manifest does not list"))
    return findings


def stale_notes(manifest: pd.DataFrame) -> list[str]:
    if "current" not in manifest:
        return []
    return [f"{p}: belongs to another configuration than the manifest's settings"
            for p in manifest.loc[~manifest["current"].astype(bool), "path"]]
