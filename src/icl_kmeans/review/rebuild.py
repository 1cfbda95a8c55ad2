"""Rebuild the figures and Table 1 from the aggregated tables and compare them with the shipped ones.

Only results/tables/{fig}.parquet is read (never a checkpoint or an evaluation; a part drawn on its own,
figures/fig15d.*, reads its figure's tables/fig15.parquet): each figure is drawn again with the same function its plot rule called (pipeline.figures.plot), Table 1 is written again
with pipeline.table1.write, into a scratch folder (results/review/rebuild/). The settings passed are
those the shipped file's job got (its params in the manifest, checked against its config digest);
failing that, pipeline.figures.figure_settings of the manifest's settings.

Comparison of each rebuilt file with the shipped one:
    identical       byte-equal (expected on the same machine and package versions: the plotting code
                    fixes PDF dates and drops the PNG software tag)
    pixel-equal     PNG only: same size and at most PNG_MAX_BAD_FRACTION of the pixels differ by more
                    than PNG_PIXEL_TOL (0..1 scale) in any channel (font rasterisation across machines)
    numeric-equal   Table 1 CSV only: same columns, same text cells, numbers equal to CSV_RTOL
    drawing-equal   PDF only: the same drawing once the streams are inflated -- every path, text, font and image
                    byte for byte -- but for fill/stroke colours within PNG_PIXEL_TOL in a channel: a colormap
                    lookup that lands on a bin edge flips with the CPU's floating point (numpy's SIMD log and
                    exp differ in the last bit between AVX-512 and AVX2 machines; seen on Fig 3's contours)
    env-differs     PDF/Markdown: bytes differ, but the recorded versions of the plotting packages
                    differ from this environment's and the PNG (or CSV) of the same target matched: a
                    renderer difference, not a content difference (a note, not a failure)
    differs         anything else: fails the review
    missing         the shipped file or its table is missing: fails the review

Drawings are cached in the scratch folder (cache.json): a target is drawn again only when its key --
the sha256 of its table, of the plotting code (pipeline/figures/, pipeline/table1.py and the torch-free
modules they import), the settings and the versions of the plotting packages -- changed, or a cached file no longer has the sha256 it was
written with. The comparison with the shipped files is never cached. Delete results/review/ (or pass
cache=False) to draw everything again.
"""

from __future__ import annotations

import json
import re
import shutil
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..pipeline.figure_registry import drawn_ids, parent
from ..pipeline.provenance import RESULTS, digest, package_versions, sha256_file

PNG_PIXEL_TOL = 0.1
PNG_MAX_BAD_FRACTION = 0.001
CSV_RTOL = 1e-9
PLOT_PACKAGES = ("matplotlib", "seaborn", "numpy", "pandas", "pyarrow")
# superseded: a file of another configuration (the manifest's current = False) under an id this version no longer
# draws as one file (a whole fig15.png of an older version, now drawn in parts): kept, listed, not redrawn
OK_STATUSES = ("identical", "pixel-equal", "numeric-equal", "drawing-equal", "env-differs", "superseded")


@dataclass
class Comparison:
    target: str
    shipped: str
    rebuilt: str
    status: str
    detail: str = ""
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES


def _drawable(fig: str) -> bool:
    """Whether this version draws `fig` as one file (Table 1, a figure, a part): not a figure now drawn in
    parts (fig15), nor an id the registry no longer has."""
    if fig == "table1":
        return True
    try:
        return drawn_ids(fig) == (fig,)
    except ValueError:
        return False


def _settings_for(path: str, manifest: pd.DataFrame, settings: dict, fig: str) -> dict:
    from ..pipeline.figures import figure_settings

    row = manifest[manifest["path"] == path]
    if len(row) and isinstance(row["params"].iloc[0], str):
        params = json.loads(row["params"].iloc[0])
        if "settings" in params and digest(params) == row["config_digest"].iloc[0]:
            return params["settings"]
    return figure_settings(fig, settings)


def _draw(job: tuple) -> tuple[str, str | None]:
    """Runs in a worker process: draws one target into the scratch folder. Returns (target, error)."""
    kind, fig, table, outs, settings = job
    try:
        if kind == "figure":
            from ..pipeline import figures

            figures.plot(fig, table, outs[0], outs[1], settings)
        else:
            from ..pipeline import table1

            table1.write(table, outs[0], outs[1], settings)
    except Exception as e:  # noqa: BLE001 -- reported per target
        return fig, f"{type(e).__name__}: {e}"
    return fig, None


def targets_of(manifest: pd.DataFrame, results=RESULTS) -> list[tuple[str, list[str]]]:
    """(fig, [shipped files]) for every figure (pdf, png) and Table 1 (csv, md) the manifest lists."""
    paths = set(manifest["path"])
    out = {}
    for p in sorted(paths):
        rel = Path(p).relative_to(results)
        if rel.parts[0] == "figures" and rel.suffix in (".pdf", ".png"):
            out.setdefault(rel.stem, []).append(p)
        elif rel.as_posix() in ("tables/table1.csv", "tables/table1.md"):
            out.setdefault("table1", []).append(p)
    return sorted(out.items())


def _png_compare(a: Path, b: Path) -> tuple[str, str]:
    from PIL import Image

    x = np.asarray(Image.open(a).convert("RGBA"), dtype=float) / 255
    y = np.asarray(Image.open(b).convert("RGBA"), dtype=float) / 255
    if x.shape != y.shape:
        return "differs", f"image size {x.shape[1]}x{x.shape[0]} vs rebuilt {y.shape[1]}x{y.shape[0]}"
    bad = float((np.abs(x - y).max(axis=2) > PNG_PIXEL_TOL).mean())
    if bad <= PNG_MAX_BAD_FRACTION:
        return "pixel-equal", f"{bad:.2%} of the pixels differ by more than {PNG_PIXEL_TOL}"
    return "differs", f"{bad:.2%} of the pixels differ by more than {PNG_PIXEL_TOL}"


def _csv_compare(a: Path, b: Path) -> tuple[str, str]:
    x, y = pd.read_csv(a), pd.read_csv(b)
    if list(x.columns) != list(y.columns) or x.shape != y.shape:
        return "differs", f"columns/shape {list(x.columns)} {x.shape} vs rebuilt {list(y.columns)} {y.shape}"
    for col in x.columns:
        if pd.api.types.is_numeric_dtype(x[col]) and pd.api.types.is_numeric_dtype(y[col]):
            if not np.allclose(x[col], y[col], rtol=CSV_RTOL, atol=0, equal_nan=True):
                return "differs", f"column {col}: {x[col].tolist()} vs rebuilt {y[col].tolist()}"
        elif x[col].astype(str).tolist() != y[col].astype(str).tolist():
            return "differs", f"column {col}: {x[col].tolist()} vs rebuilt {y[col].tolist()}"
    return "numeric-equal", f"numbers equal to rtol {CSV_RTOL}"


_PDF_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
_PDF_TOKEN = re.compile(rb"[^\s]+")
_PDF_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)")
_PDF_COLOUR_OPS = {b"rg", b"RG", b"g", b"G", b"k", b"K", b"sc", b"SC", b"scn", b"SCN"}


def _pdf_parts(path: Path) -> tuple[bytes, list[bytes]]:
    """(skeleton, inflated streams): the objects with each stream cut out, the stream lengths and the
    cross-reference offsets (which only follow the compressed sizes) blanked."""
    data = path.read_bytes()
    streams = []

    def cut(m):
        try:
            streams.append(zlib.decompress(m.group(1)))
        except zlib.error:
            streams.append(m.group(1))
        return b"stream endstream"

    skeleton = _PDF_STREAM.sub(cut, data)
    lengths = {int(n) for n in re.findall(rb"/Length (\d+) 0 R", skeleton)}
    skeleton = re.sub(rb"/Length \d+(?! 0 R)", b"/Length _", skeleton)
    skeleton = re.sub(rb"(?m)^(\d+) 0 obj\s+\d+\s+endobj",
                      lambda m: m.group(0) if int(m.group(1)) not in lengths else m.group(1) + b" 0 obj _ endobj",
                      skeleton)
    xref = skeleton.rfind(b"\nxref\n")
    return (skeleton[:xref] if xref >= 0 else skeleton), streams


def _colour_drift(a: bytes, b: bytes) -> float | None:
    """The largest colour-operand difference between two content streams that differ in nothing else, or
    None when anything else (an operator, a coordinate, a glyph, the token count) differs."""
    x, y = _PDF_TOKEN.findall(a), _PDF_TOKEN.findall(b)
    if len(x) != len(y):
        return None
    worst, pending = 0.0, []  # operands that differ, checked at their operator
    for p, q in zip(x, y):
        if _PDF_NUMBER.fullmatch(p) and _PDF_NUMBER.fullmatch(q):
            if p != q:
                pending.append(abs(float(p) - float(q)))
            continue
        if p != q or (pending and p not in _PDF_COLOUR_OPS):
            return None
        worst, pending = max([worst, *pending]), []
    return None if pending else worst


def _pdf_compare(a: Path, b: Path) -> tuple[str, str] | None:
    """drawing-equal when the PDFs draw the same thing but for colours within PNG_PIXEL_TOL; None otherwise."""
    (sa, xa), (sb, xb) = _pdf_parts(a), _pdf_parts(b)
    if sa != sb or len(xa) != len(xb):
        return None
    worst, changed = 0.0, 0
    for p, q in zip(xa, xb):
        if p == q:
            continue
        drift = _colour_drift(p, q)
        if drift is None or drift > PNG_PIXEL_TOL:
            return None
        worst, changed = max(worst, drift), changed + 1
    return "drawing-equal", (f"the same drawing; colours in {changed} stream(s) differ by at most {worst:.4f} "
                             f"(<= {PNG_PIXEL_TOL}): a colormap lookup at a bin edge, the CPU's floating point")


def env_differs(manifest: pd.DataFrame, paths) -> list[str]:
    """The plotting packages whose recorded versions (for these shipped files) differ from this environment."""
    now = package_versions()
    diffs = set()
    for packages in manifest.loc[manifest["path"].isin(list(paths)), "packages"].dropna():
        rec = json.loads(packages)
        diffs |= {f"{k} {rec.get(k)} (now {now.get(k)})" for k in PLOT_PACKAGES if rec.get(k) != now.get(k)}
    return sorted(diffs)


def compare(shipped: Path, rebuilt: Path, env: list[str], partner_ok: bool) -> tuple[str, str]:
    if not shipped.is_file():
        return "missing", "the shipped file is missing"
    if not rebuilt.is_file():
        return "missing", "the rebuild wrote no file"
    if shipped.read_bytes() == rebuilt.read_bytes():
        return "identical", ""
    suffix = shipped.suffix
    if suffix == ".png":
        return _png_compare(shipped, rebuilt)
    if suffix == ".csv":
        return _csv_compare(shipped, rebuilt)
    if suffix == ".pdf" and (same := _pdf_compare(shipped, rebuilt)):
        return same
    if env and partner_ok:
        return "env-differs", "bytes differ; plotting packages differ from the recorded ones: " + "; ".join(env)
    return "differs", "bytes differ" + ("" if env else " with the same package versions as recorded")


CACHE = "cache.json"


def _code_digest() -> str:
    package = Path(__file__).resolve().parents[1]
    files = [*sorted((package / "pipeline" / "figures").glob("*.py")), package / "pipeline" / "table1.py",
             *sorted((package / "pipeline" / "specs").glob("*.py")),  # each figure's plotter
             *(package / f"{name}.py" for name in ("constants", "emd_table", "profile_table"))]
    return digest({str(f.relative_to(package)): sha256_file(f) for f in files})


def _load_cache(scratch: Path) -> dict:
    try:
        return json.loads((scratch / CACHE).read_text())
    except (OSError, ValueError):
        return {}


def _cache_hit(entry: dict | None, key: str) -> bool:
    if not entry or entry.get("key") != key:
        return False
    return all(Path(f).is_file() and sha256_file(f) == sha for f, sha in entry.get("files", {}).items())


def rebuild(manifest: pd.DataFrame, meta: dict, scratch, results=RESULTS, workers: int = 1,
            cache: bool = True) -> list[Comparison]:
    """Rebuilds every figure and Table 1 listed in the manifest into `scratch` and compares."""
    scratch = Path(scratch)
    if not cache and scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    old_cache = _load_cache(scratch) if cache else {}
    code = _code_digest()
    plot_versions = {k: v for k, v in package_versions().items() if k in PLOT_PACKAGES}
    settings = meta.get("settings", {})
    jobs, comparisons, keys, cached = [], [], {}, set()
    targets = targets_of(manifest, results)
    current = dict(zip(manifest["path"], manifest["current"].astype(bool))) if "current" in manifest else {}
    for fig, shipped in targets:
        if not _drawable(fig):
            comparisons += [Comparison(fig, s, "", "differs" if current.get(s, True) else "superseded",
                                       f"this version does not draw {fig} as one file"
                                       + ("" if current.get(s, True) else " (a file of an older version, kept)"))
                            for s in shipped]
            continue
        # a part drawn on its own (figures/fig15d.*) is drawn again from its figure's table (tables/fig15.parquet)
        table = Path(results) / "tables" / f"{parent(fig)}.parquet"
        if not table.is_file():
            comparisons += [Comparison(fig, s, "", "missing", f"its table {table} is missing") for s in shipped]
            continue
        if fig == "table1":
            kind, outs = "table1", [scratch / "tables" / "table1.csv", scratch / "tables" / "table1.md"]
            st = _settings_for(f"{results}/tables/table1.csv", manifest, settings, fig)
        else:
            kind, outs = "figure", [scratch / "figures" / f"{fig}.pdf", scratch / "figures" / f"{fig}.png"]
            st = _settings_for(f"{results}/figures/{fig}.png", manifest, settings, fig)
        keys[fig] = (digest({"table": sha256_file(table), "code": code, "settings": st, "packages": plot_versions,
                             "kind": kind}), outs)
        if _cache_hit(old_cache.get(fig), keys[fig][0]):
            cached.add(fig)
            continue
        for o in outs:
            o.unlink(missing_ok=True)
        jobs.append((kind, fig, str(table), [str(o) for o in outs], st))
    errors = {fig: None for fig in cached}
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            for fig, err in pool.map(_draw, jobs):
                errors[fig] = err
    else:
        for job in jobs:
            fig, err = _draw(job)
            errors[fig] = err
    new_cache = {}
    for fig, (key, outs) in keys.items():
        if errors.get(fig) is None and all(o.is_file() for o in outs):
            new_cache[fig] = {"key": key, "files": {o.as_posix(): sha256_file(o) for o in outs}}
    (scratch / CACHE).write_text(json.dumps(new_cache, indent=1, sort_keys=True) + "\n")
    for fig, shipped in targets:
        if fig not in errors:
            continue
        env = env_differs(manifest, shipped)
        by_suffix = {Path(s).suffix: s for s in shipped}
        sub = "tables" if fig == "table1" else "figures"
        results_of = {}
        for suffix in (".png", ".csv", ".pdf", ".md"):  # the raster/numbers first: PDF/MD may lean on them
            if suffix not in by_suffix:
                continue
            s = Path(by_suffix[suffix])
            r = scratch / sub / s.name
            if errors[fig]:
                status, detail = "differs", f"rebuilding failed: {errors[fig]}"
            else:
                partner = results_of.get(".png" if suffix == ".pdf" else ".csv")
                status, detail = compare(s, r, env, partner is not None and partner.ok)
            c = Comparison(fig, s.as_posix(), r.as_posix(), status, detail, cached=fig in cached)
            results_of[suffix] = c
            comparisons.append(c)
    return sorted(comparisons, key=lambda c: c.shipped)
