"""The results bundle: results/bundle.tar.gz (rule `bundle`).

Members, with paths relative to the repository root so that `tar -xzf bundle.tar.gz -C <clone>` puts
everything in place:
    results/**                   every artifact, the manifest (parquet, tsv, json), the per-job provenance
                                 records and the job logs; not results/review/ (the reviewer's own output),
                                 not the bundle itself, not hidden or in-flight (*.tmp, *.resume) files, not
                                 unreadable checkpoints moved aside (*.corrupt)
    results/bundle_info/         what the results were made with (excluded from the manifest):
        BUNDLE.json              code version, manifest sha256, creation time, the command that made them
        settings.json            the resolved settings (preset, overrides, every key)
        config.yaml              the repository's config.yaml at bundling time
        presets/<preset>.yaml    the preset file
        pyproject.toml, envs/*.yaml   the environment pins
        packages.txt             every installed distribution (name==version) of the bundling environment
The bundle is made only from verified results: any manifest mismatch fails the rule.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import os
import tarfile
import time
from importlib import metadata
from pathlib import Path

from ..atomic import atomic_write
from .manifest import PARQUET, ManifestError, read
from ..pipeline import settings as settings_mod
from ..pipeline.provenance import RESULTS, code_version, sha256_file
from .verify import verify

INFO = "bundle_info"
SKIP_TOP = ("review", INFO, "bundle.tar.gz")
SKIP_SUFFIXES = (".tmp", ".resume", ".corrupt")


def _members(results: Path, skip=()) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(results):
        rel = Path(dirpath).relative_to(results)
        if rel.parts and rel.parts[0] in SKIP_TOP:
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (not rel.parts and d in SKIP_TOP))
        for name in sorted(filenames):
            p = Path(dirpath) / name
            if (name.startswith(".") or name.endswith(SKIP_SUFFIXES) or (not rel.parts and name in SKIP_TOP)
                    or p.as_posix() in skip):
                continue
            out.append(p)
    return sorted(out)


def installed_packages() -> str:
    names = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions() if d.metadata["Name"]},
                   key=str.lower)
    return "\n".join(names) + "\n"


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mtime: float) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), int(mtime), 0o644
    tar.addfile(info, io.BytesIO(data))


def make_bundle(out, settings: dict, config="config.yaml", pins=(), preset_file=None, results=RESULTS,
                skip=()) -> dict:
    """Verifies results against the manifest, then writes the bundle. Returns BUNDLE.json's content.
    preset_file: the file of the preset the results were made with (default: the package's)."""
    results = Path(results)
    manifest, meta = read(results)
    findings = verify(manifest, meta, results)
    if findings:
        raise ManifestError("refusing to bundle results that do not match the manifest:\n  "
                            + "\n  ".join(str(f) for f in findings))
    now = time.time()
    preset = settings.get("preset", "quick")
    preset_file = Path(preset_file) if preset_file is not None else settings_mod.preset_file(preset)
    info = {
        "created": _dt.datetime.fromtimestamp(now, tz=_dt.timezone.utc).isoformat(timespec="seconds"),
        "code": code_version(), "manifest_sha256": sha256_file(results / PARQUET), "artifacts": len(manifest),
        "preset": preset, "overrides": settings.get("overrides", []),
        "reproduce": "snakemake --cores all --config preset=" + preset
                     + "".join(f" {k}={json.dumps(settings[k], separators=(',', ':'))}"
                               for k in settings.get("overrides", []) if k in settings),
        "review": "tar -xzf bundle.tar.gz -C <fresh clone of the repository> && snakemake --cores all review",
    }
    out = Path(out)

    def write(tmp):
        with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
            for p in _members(results, skip={Path(s).as_posix() for s in skip}):
                tar.add(p, arcname=p.as_posix(), recursive=False)
            base = f"{results.as_posix()}/{INFO}"
            _add_bytes(tar, f"{base}/BUNDLE.json", (json.dumps(info, indent=1, sort_keys=True) + "\n").encode(), now)
            _add_bytes(tar, f"{base}/settings.json", (json.dumps(settings, indent=1, sort_keys=True) + "\n").encode(), now)
            _add_bytes(tar, f"{base}/packages.txt", installed_packages().encode(), now)
            if Path(config).is_file():
                tar.add(config, arcname=f"{base}/config.yaml")
            if preset_file.is_file():
                tar.add(preset_file, arcname=f"{base}/presets/{preset_file.name}")
            for pin in pins:
                tar.add(pin, arcname=f"{base}/{Path(pin).as_posix()}")
    atomic_write(out, write)
    return info


def unpack(bundle, dest) -> None:
    """Extracts a bundle into dest (a clone of the repository); refuses members outside dest."""
    with tarfile.open(bundle, "r:gz") as tar:
        tar.extractall(dest, filter="data")
