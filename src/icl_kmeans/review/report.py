"""The review report: one self-contained HTML file (results/review/report.html).

Why not (only) Snakemake's `--report`: the figure rules flag their PNGs and Table 1 with report() and
captions, so `snakemake --report` works in the workdir that ran the pipeline. But it is built from
Snakemake's metadata in .snakemake/, which a bundle does not carry (a reviewer who unpacks the results
in a fresh clone has none), and it has no place for the integrity checks, the rebuild comparison or the
claims. This report is built from the manifest, which travels with the results, embeds every figure
as a base64 PNG (one file, no assets), and uses the same captions (the package's icl_kmeans/pipeline/captions/*.rst,
rendered with the same Jinja variable `snakemake.params.scale`).
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import re
from pathlib import Path

import pandas as pd

from .report_claims import evidence, figure_blocks, index_table, paper_label, summary_table

STATUS_COLOURS = {"PASS": "#1b7f3b", "PARTLY": "#a06000", "INCONCLUSIVE": "#5a4fcf", "FAIL": "#b00020", "NOT-RUN": "#6b6b6b", "ERROR": "#b00020",
                  "identical": "#1b7f3b", "pixel-equal": "#1b7f3b", "numeric-equal": "#1b7f3b",
                  "drawing-equal": "#1b7f3b",
                  "env-differs": "#a06000", "superseded": "#a06000", "differs": "#b00020", "missing": "#b00020"}
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1200px;
color:#222;line-height:1.4;padding:0 1em}
h1{font-size:1.6em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0} td,th{border:1px solid #ddd;padding:.25em .5em;
vertical-align:top;text-align:left} th{background:#f3f3f3} .status{font-weight:bold;color:#fff;padding:.1em .4em;
border-radius:3px;white-space:nowrap} .verdict{font-size:1.2em;font-weight:bold;padding:.5em;border-radius:4px;
color:#fff;display:inline-block} figure{margin:1.5em 0;border-top:1px solid #eee;padding-top:1em}
figure img,.evidence img{max-width:100%;border:1px solid #eee}
.figure-block{border-top:2px solid #ccc;margin:2em 0;padding-top:.5em} .claim{margin:1em 0 1em 1em} .differs{background:#fdecea;border-left:4px solid #c62828;padding:.3em .6em}
.claim h4{margin:.3em 0} .claim-table th{width:11em} blockquote{margin:0;font-style:italic;color:#333} figcaption{font-size:.9em;color:#333} code,pre{font-size:.85em}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto} .small{font-size:.8em;color:#555}
"""


def _e(x) -> str:
    return html.escape("" if x is None or (isinstance(x, float) and pd.isna(x)) else str(x))


def _status(s: str) -> str:
    return f'<span class="status" style="background:{STATUS_COLOURS.get(s, "#555")}">{_e(s)}</span>'


def _table(df: pd.DataFrame, status_cols=("status",), max_rows: int | None = None) -> str:
    if df is None or df.empty:
        return "<p><i>none</i></p>"
    shown = df if max_rows is None else df.head(max_rows)
    head = "".join(f"<th>{_e(c)}</th>" for c in shown.columns)
    rows = []
    for r in shown.itertuples(index=False):
        cells = []
        for c, v in zip(shown.columns, r):
            cells.append(f"<td>{_status(v) if c in status_cols else _e(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = f'<p class="small">... {len(df) - len(shown)} more rows</p>' if len(shown) < len(df) else ""
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>{more}"


def render_caption(template: str, scale: str, settings: dict, fig: str, panels: str = "") -> str:
    """The figure rule's caption (Jinja, like Snakemake's report) rendered to HTML (reStructuredText).
    Without jinja2 (the review conda env has none) `{{ snakemake.params.<name> }}` is substituted; without
    docutils the text is shown as paragraphs."""
    params = {"scale": scale, "fig": fig, "settings": settings, "panels": panels}
    try:
        import jinja2

        text = jinja2.Template(template).render(snakemake={"params": params, "config": settings,
                                                           "wildcards": {"fig": fig}})
    except ImportError:
        text = re.sub(r"\{\{\s*snakemake\.params\.(\w+)\s*\}\}", lambda m: str(params.get(m.group(1), "")),
                      template)
    try:
        from docutils.core import publish_parts

        return publish_parts(text, writer_name="html", settings_overrides={"report_level": 5})["fragment"]
    except Exception:  # noqa: BLE001 -- docutils missing or the caption is not valid rst: plain text
        return "<p>" + _e(text).replace("\n\n", "</p><p>") + "</p>"


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{_e(path.name)}" src="data:image/png;base64,{data}">'


def provenance_summary(manifest: pd.DataFrame) -> pd.DataFrame:
    """Per rule family (train_pack_* -> train_pack, plot_fig* -> plot): artifacts, size, jobs, devices,
    code versions, start of the first and end of the last job, summed job time."""
    df = manifest.copy()
    df["rule family"] = df["rule"].fillna("?").str.replace(r"^(train_pack|plot)_.*$", r"\1", regex=True)
    df["code"] = df["code_commit"].fillna("?").str[:10] + df["code_dirty"].map(
        {True: " (dirty)", False: ""}).fillna("")
    df["job"] = df["rule"].fillna("") + df["start"].astype(str)
    rows = []
    for fam, g in df.groupby("rule family", sort=True):
        jobs = g.drop_duplicates("job")
        secs = (pd.to_datetime(jobs["end"]) - pd.to_datetime(jobs["start"])).dt.total_seconds().sum()
        rows.append({"rule": fam, "artifacts": len(g), "MB": round(g["size"].sum() / 2 ** 20, 3), "jobs": len(jobs),
                     "job time (s)": round(float(secs), 1), "devices": ", ".join(sorted(set(g["device"].dropna()))),
                     "code": ", ".join(sorted(set(g["code"]))),
                     "first start": str(g["start"].min())[:19], "last end": str(g["end"].max())[:19]})
    return pd.DataFrame(rows)


def package_summary(manifest: pd.DataFrame) -> pd.DataFrame:
    rows = {}
    for rule, packages in manifest[["rule", "packages"]].dropna().itertuples(index=False):
        rows.setdefault(packages, set()).add(str(rule))
    out = []
    for packages, rules in rows.items():
        out.append({**json.loads(packages), "rules": ", ".join(sorted(rules)[:6]) + (" ..." if len(rules) > 6 else "")})
    return pd.DataFrame(out)


def _header(*, manifest, meta, manifest_sha, findings, comparisons, claims, current_code, verdict, results) -> list:
    """The verdict, the claims' summary and the run's identity."""
    settings = meta.get("settings", {})
    preset = settings.get("preset", "?")
    now = _dt.datetime.now(tz=_dt.timezone.utc).isoformat(timespec="seconds")
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>icl-kmeans review ({_e(preset)})</title>"
             f"<style>{CSS}</style></head><body>"]
    parts.append("<h1>Review of the artifacts: Leaner Transformers Can Easily Learn to Cluster</h1>")
    colour = "#1b7f3b" if verdict else "#b00020"
    word = "INTEGRITY VERIFIED" if verdict else "INTEGRITY FAILED"
    counts = claims["status"].value_counts().to_dict() if len(claims) else {}
    parts.append(f'<p><span class="verdict" style="background:{colour}">{word}</span></p>')
    parts.append("<h2>Summary of the claims</h2>")
    parts.append(_table(summary_table(claims, settings), status_cols=()) if len(claims) else "<p><i>no claims</i></p>")
    recorded = meta.get("code", {})
    parts.append("<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in [
        ("preset", _e(preset) + (f" (overridden: {_e(', '.join(settings.get('overrides') or []))})"
                                 if settings.get("overrides") else "")),
        ("manifest", f"{_e(Path(results) / 'manifest.parquet')}, {len(manifest)} artifacts, created "
                     f"{_e(meta.get('created'))}, sha256 <code>{_e(manifest_sha)}</code>"),
        ("code of the results", f"<code>{_e(recorded.get('commit'))}</code>"
                                + (" (dirty)" if recorded.get("dirty") else "")),
        ("code of this review", f"<code>{_e(current_code.get('commit'))}</code>"
                                + (" (dirty)" if current_code.get("dirty") else "")),
        ("integrity", f"{len(findings)} mismatches; "
                      f"{sum(not c.ok for c in comparisons)} of {len(comparisons)} rebuilt files differ"),
        ("claims", ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))),
        ("reviewed", now)]) + "</table>")
    parts.append('<p class="small">Integrity (manifest checks and the rebuild) decides the verdict; the claims '
                 "are findings about the run: a FAIL at quick or smoke scale says the small run does not "
                 "reproduce the claim, not that the artifacts are wrong.</p>")
    return parts


def _captioner(settings: dict):
    """(scale_of, captions): a figure's scale line, and its caption as HTML, for the run's settings (settings
    of an older run that the code cannot read any more give the preset's name and no panel line)."""
    from ..pipeline.figure_registry import caption_template
    from ..pipeline.figures import caption_line, scale_line
    from ..pipeline.studies import build as build_studies

    preset = settings.get("preset", "?")

    def scale_of(fig: str) -> str:
        try:
            return scale_line(fig, settings)
        except Exception:  # noqa: BLE001 -- settings of an older run
            return f"{preset} preset"

    try:  # once, for every caption's panel line
        studies = build_studies(settings)
    except Exception:  # noqa: BLE001 -- settings of an older run: the captions go without the panel line
        studies = None

    def captions(fig: str) -> str:
        try:
            template = caption_template(fig)
        except ValueError:  # a figure of an older run that the registry no longer has
            template = ""
        try:
            panels = caption_line(fig, settings, studies) if fig != "table1" and studies is not None else ""
        except Exception:  # noqa: BLE001 -- settings of an older run: the caption goes without the panel line
            panels = ""
        return render_caption(template, scale_of(fig), settings, fig, panels) if template else f"<p>{_e(scale_of(fig))}</p>"

    return scale_of, captions


def _claims_sections(path, *, claims, settings, figures_dir, results) -> list:
    """Sections 1-3: the claims' index, one block per paper figure (figure beside its claims), the figures
    without a claim."""
    from ..pipeline.studies import FIGURES

    scale_of, captions = _captioner(settings)
    parts = ["<h2>1. The paper's claims</h2>",
             "<p>Each claim is a sentence of the paper with a rule and a threshold fixed in "
             "<code>src/icl_kmeans/review/claims*.py</code> before the values were read; NOT-RUN means the preset "
             "did not produce the data the rule needs. Below the index, one block per paper figure shows the "
             "figure next to its claims.</p>",
             _table(index_table(claims)) if len(claims) else "<p><i>no claims</i></p>"]
    blocks, shown = figure_blocks(claims, settings=settings, figures_dir=figures_dir, results=results,
                                  report_path=path, captions=captions, e=_e, status_html=_status, img=_img,
                                  table=_table, scale_of=scale_of) if len(claims) else ("", set())
    parts += ["<h2>2. Claims, figure by figure</h2>", blocks, "<h2>3. Figures without a claim</h2>"]
    for fig in list(FIGURES) + ["table1"]:
        if fig in shown:
            continue
        ev, _ = evidence(fig, figures_dir, results, path, _img, _table)
        parts.append(f'<figure id="{fig}"><h3>{_e(paper_label(fig))}</h3>{ev}<figcaption>{captions(fig)}'
                     "</figcaption></figure>")
    return parts


def _integrity_sections(*, manifest, findings, notes, comparisons, recomputed) -> list:
    """Sections 4-5: the artifacts against the manifest, the rebuilt figures and the recomputed cells."""
    parts = ["<h2>4. Artifacts against the manifest</h2>"]
    if findings:
        parts.append(_table(pd.DataFrame([{"status": f.kind, "path": f.path, "detail": f.detail} for f in findings])))
    else:
        parts.append(f"<p>All {len(manifest)} artifacts are present, with the size and sha256 the manifest lists; "
                     "nothing unlisted.</p>")
    if notes:
        parts.append("<p>Notes:</p><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    kinds = manifest.groupby("kind").agg(files=("path", "size"), MB=("size", lambda s: round(s.sum() / 2 ** 20, 3)))
    parts.append(_table(kinds.reset_index()))

    parts.append("<h2>5. Figures and Table 1 rebuilt from the aggregated tables</h2>")
    parts.append("<p>Each figure and Table 1 was drawn again from <code>results/tables/&lt;fig&gt;.parquet</code> "
                 "only (no training, no evaluation) with the pipeline's own plotting functions, and compared "
                 "with the shipped file (byte equality; PNG pixel tolerance; Table 1 CSV numeric tolerance).</p>")
    parts.append(_table(pd.DataFrame([{"target": c.target, "shipped": c.shipped, "status": c.status,
                                       "drawn": "earlier (cached)" if c.cached else "now", "detail": c.detail}
                                      for c in comparisons])))
    if recomputed is not None:
        from .recompute import EVAL_RTOL, LATE_RTOL, TRAIN_RTOL

        parts.append("<h3>Recomputed from the committed checkpoints (--recompute)</h3>")
        parts.append(f"<p>Random evaluation cells evaluated again from their checkpoints and regenerated task sets "
                     f"(objectives within relative {EVAL_RTOL:g} at t &lt;= 1 and {LATE_RTOL:g} later, where the "
                     "model is iterated on its own output; see <code>review/recompute.py</code>), and the first "
                     f"steps of one run trained again (relative tolerance {TRAIN_RTOL:g}).</p>")
        parts.append(_table(pd.DataFrame([{"status": "identical" if r.ok else "differs", "what": r.what,
                                           "values": r.values, "largest difference": f"{r.max_abs:.3g}",
                                           "largest relative": f"{r.max_rel:.3g}", "detail": r.detail}
                                          for r in recomputed])))
    return parts


def _provenance_section(manifest: pd.DataFrame, settings: dict) -> list:
    return ["<h2>6. Provenance</h2>",
            "<p>From the manifest (one row per artifact, made from the per-job records under "
            "<code>results/provenance/</code>). Job time sums the wall time of the jobs of each rule.</p>",
            _table(provenance_summary(manifest), status_cols=()),
            "<h3>Package versions recorded by the jobs</h3>",
            _table(package_summary(manifest), status_cols=()),
            "<h3>Settings of the run</h3>",
            _table(pd.DataFrame([{"key": k, "value": json.dumps(v)} for k, v in sorted(settings.items())]),
                   status_cols=())]


def write_report(path, *, manifest: pd.DataFrame, meta: dict, manifest_sha: str, findings, notes, comparisons,
                 claims: pd.DataFrame, figures_dir, current_code: dict, verdict: bool,
                 results="results", recomputed=None) -> Path:
    settings = meta.get("settings", {})
    parts = _header(manifest=manifest, meta=meta, manifest_sha=manifest_sha, findings=findings,
                    comparisons=comparisons, claims=claims, current_code=current_code, verdict=verdict,
                    results=results)
    parts += _claims_sections(path, claims=claims, settings=settings, figures_dir=figures_dir, results=results)
    parts += _integrity_sections(manifest=manifest, findings=findings, notes=notes, comparisons=comparisons,
                                 recomputed=recomputed)
    parts += _provenance_section(manifest, settings)
    parts.append("</body></html>")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    return path
