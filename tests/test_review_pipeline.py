"""`snakemake review` and `snakemake bundle` on a real smoke run (marker: pipeline).

The smoke preset runs once per test session (fixture smoke_repo), in a git repository made from this
working tree (tracked and untracked files that git does not ignore, committed, so provenance records a
real commit); each test that changes something works on its own copy of that repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from icl_kmeans.pipeline import figure_registry
from icl_kmeans.review.claim_core import STATUSES
from icl_kmeans.review.claims import CLAIMS, ERROR, FAIL, INCONCLUSIVE, PARTLY, PASS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import headless_chromium  # noqa: E402

pytestmark = pytest.mark.pipeline
REPO = Path(__file__).resolve().parents[1]
# Test artifacts (the report's screenshot) go here, outside the throw-away smoke repository.
ARTIFACTS = Path(os.environ.get("ICL_KMEANS_TEST_ARTIFACTS", REPO / "test-artifacts"))
GIT = ["git", "-c", "user.email=review@test", "-c", "user.name=review-test", "-c", "init.defaultBranch=main"]


def _git(cwd, *args):
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def snakemake(cwd, *args, timeout=1800) -> subprocess.CompletedProcess:
    # Every job imports icl_kmeans from the checkout it runs in (not from an editable install elsewhere).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(cwd) / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def _snapshot(dest: Path) -> Path:
    """The working tree as a fresh one-commit git repository (no results/, nothing git ignores)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    dest.mkdir(parents=True)
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file() and not rel.startswith("results/"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-qm", "snapshot for the review tests")
    return dest


@pytest.fixture(scope="session")
def smoke_repo(tmp_path_factory):
    repo = _snapshot(tmp_path_factory.mktemp("review") / "repo")
    proc = snakemake(repo, "--cores", "2", "--config", "preset=smoke")
    assert proc.returncode == 0, proc.stderr[-6000:]
    return repo


@pytest.fixture
def copy_of(smoke_repo, tmp_path):
    def make(name="copy"):
        dest = tmp_path / name
        shutil.copytree(smoke_repo, dest, symlinks=True)
        return dest

    return make


def review(repo) -> subprocess.CompletedProcess:
    return snakemake(repo, "--cores", "2", "review")


def _jobs_run(proc) -> set[str]:
    """Rule names of the jobs Snakemake ran (from its 'rule <name>:' / 'localrule <name>:' lines)."""
    out = proc.stdout + proc.stderr
    return {line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith(("rule ", "localrule "))}


def test_smoke_run_writes_the_manifest(smoke_repo):
    m = pd.read_parquet(smoke_repo / "results/manifest.parquet")
    kinds = set(m["kind"])
    for kind in ("checkpoint", "training metrics", "validation task set", "test task set", "evaluation",
                 "aggregated table", "figure", "Table 1", "run record"):
        assert kind in kinds, kind
    assert m["rule"].notna().all() and m["sha256"].str.len().eq(64).all()
    assert (m["code_dirty"] == False).all() and m["code_commit"].nunique() == 1  # noqa: E712
    assert m["device"].str.startswith(("cpu", "cuda")).all()
    assert m.loc[m["kind"] == "checkpoint", "seed"].notna().all()
    assert not m["path"].str.startswith(("results/logs/", "results/provenance/")).any()
    meta = json.loads((smoke_repo / "results/manifest.json").read_text())
    assert meta["settings"]["preset"] == "smoke"
    assert set(meta["targets"]) <= set(m["path"])


def test_review_passes_on_an_untouched_smoke_run(smoke_repo):
    proc = review(smoke_repo)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "REVIEW PASSED" in proc.stderr
    assert _jobs_run(proc) == {"review"}
    out = smoke_repo / "results/review"
    claims = pd.read_csv(out / "claims.csv")
    assert list(claims["id"]) == [c.id for c, _ in CLAIMS]
    assert set(claims["status"]) <= set(STATUSES) - {ERROR}, claims[["id", "status", "detail"]]
    # every verdict states its strength: the seeds it rests on, and the version of its rule
    decided = claims[claims["status"].isin([PASS, PARTLY, FAIL, INCONCLUSIVE])]
    assert decided["seeds"].notna().all() and claims["rule_version"].notna().all()
    assert claims.set_index("id").loc["6a", "status"] == "NOT-RUN"  # smoke's Table 1 stops at k = 25 < 4 d
    n = json.loads((smoke_repo / "results/manifest.json").read_text())["settings"]["n_points"]
    assert f"at n = {n};" in claims.set_index("id").loc["7a", "detail"]  # claims read the recorded settings
    integrity = pd.read_csv(out / "integrity.tsv", sep="\t")
    assert set(integrity["status"]) == {"identical"}  # same machine: every rebuilt file byte-equal
    html = (out / "report.html").read_text()
    drawn = len(list((smoke_repo / "results/figures").glob("*.png")))  # 26: Figs 15 and 16 in four parts each
    assert drawn == 26 and "INTEGRITY VERIFIED" in html and html.count("data:image/png;base64,") == drawn
    # the review target runs every time it is asked for (no outputs): Snakemake plans it again, alone
    again = snakemake(smoke_repo, "-n", "--cores", "2", "review")
    assert again.returncode == 0 and _jobs_run(again) == {"review"}, again.stdout[-3000:]


def _fails_naming(proc, kind, path):
    assert proc.returncode != 0, "review passed on tampered results"
    lines = [line for line in proc.stderr.splitlines() if path in line]
    assert any(kind in line for line in lines), f"no {kind} line for {path}:\n{proc.stderr[-4000:]}"


def test_one_byte_of_one_table_fails_the_review(copy_of):
    repo = copy_of()
    table = repo / "results/tables/fig6.parquet"
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0x01
    table.write_bytes(bytes(data))
    proc = review(repo)
    _fails_naming(proc, "CHANGED", "results/tables/fig6.parquet")
    assert "REVIEW FAILED" in proc.stderr


def test_a_deleted_checkpoint_fails_the_review_and_is_not_retrained(copy_of):
    repo = copy_of()
    ckpt = sorted((repo / "results/runs").glob("*/seed*/checkpoint.pt"))[0]
    rel = ckpt.relative_to(repo).as_posix()
    ckpt.unlink()
    proc = review(repo)
    _fails_naming(proc, "MISSING", rel)
    assert _jobs_run(proc) == {"review"} and not ckpt.exists()


def test_an_edited_figure_fails_the_review(copy_of):
    from PIL import Image

    repo = copy_of()
    png = repo / "results/figures/fig2.png"
    img = Image.open(png).convert("RGBA")
    img.putpixel((5, 5), (255, 0, 0, 255))
    img.save(png)
    proc = review(repo)
    _fails_naming(proc, "CHANGED", "results/figures/fig2.png")


def test_a_rebuilt_figure_that_differs_fails_the_review(copy_of):
    """A table and figure that were swapped consistently (manifest rewritten to match) are still caught:
    the figure does not follow from its table."""
    from icl_kmeans.review import manifest as M

    repo = copy_of()
    shutil.copy(repo / "results/figures/fig10.png", repo / "results/figures/fig2.png")
    side = repo / "results/provenance/figures/fig2.png.json"
    rec = json.loads(side.read_text())
    from icl_kmeans.pipeline.provenance import sha256_file

    rec["sha256"] = sha256_file(repo / "results/figures/fig2.png")
    rec["size"] = (repo / "results/figures/fig2.png").stat().st_size
    side.write_text(json.dumps(rec))
    meta = json.loads((repo / "results/manifest.json").read_text())
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        M.make("results", settings=meta["settings"], targets=meta["targets"])
    finally:
        os.chdir(cwd)
    proc = review(repo)
    _fails_naming(proc, "REBUILD", "results/figures/fig2.png")


def test_bundle_round_trip_in_a_fresh_clone(copy_of, tmp_path):
    repo = copy_of("made")
    proc = snakemake(repo, "bundle", "--cores", "2", "--config", "preset=smoke")  # the run's own config
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert _jobs_run(proc) == {"bundle"}  # nothing upstream reran
    bundle = repo / "results/bundle.tar.gz"
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert not (clone / "results/manifest.parquet").exists()
    # without results, review fails at once instead of training anything
    bare = review(clone)
    assert bare.returncode != 0 and _jobs_run(bare) == {"review"} and "manifest.parquet is missing" in bare.stderr
    assert not (clone / "results/runs").exists()
    shutil.rmtree(clone / "results/review", ignore_errors=True)
    shutil.rmtree(clone / "results/logs", ignore_errors=True)
    subprocess.run([sys.executable, "-m", "icl_kmeans.review", "unpack", str(bundle), str(clone)], check=True)
    info = json.loads((clone / "results/bundle_info/BUNDLE.json").read_text())
    assert info["preset"] == "smoke" and (clone / "results/bundle_info/envs/torch.yaml").is_file()
    assert (clone / "results/bundle_info/pyproject.toml").is_file()
    proc = review(clone)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "REVIEW PASSED" in proc.stderr and info["manifest_sha256"] in proc.stderr
    assert _git(clone, "status", "--porcelain", "--untracked-files=all") == ""  # the clone's code is untouched


# ---- the pipeline itself on the same smoke run (issue: CI checks every figure end to end) ----
FIGURES = figure_registry.plot_ids()  # every figure of the registry (Figs 15, 16: each of their parts)
VOLATILE = ("timing.parquet", "fig1.parquet", "fig17.parquet", "table1.parquet")  # wall-clock by nature


def test_every_expected_figure_is_a_non_empty_image(smoke_repo):
    for fig in FIGURES:
        png = smoke_repo / f"results/figures/{fig}.png"
        pdf = smoke_repo / f"results/figures/{fig}.pdf"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000, png
        assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 5_000, pdf
    import matplotlib.image
    import numpy as np

    pixels = matplotlib.image.imread(smoke_repo / "results/figures/fig6.png")
    assert pixels.shape[0] > 300 and pixels.shape[1] > 500
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)) > 20  # not a blank canvas
    assert (smoke_repo / "results/tables/table1.csv").stat().st_size > 0
    assert "| k |" in (smoke_repo / "results/tables/table1.md").read_text()


def test_rerunning_a_finished_workflow_does_nothing(smoke_repo):
    proc = snakemake(smoke_repo, "-n", "--cores", "2", "--config", "preset=smoke")
    assert proc.returncode == 0 and "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]


def test_a_deleted_figure_is_rebuilt_alone_and_byte_identical(copy_of):
    repo = copy_of()
    png = repo / "results/figures/fig8.png"
    before = png.read_bytes()
    png.unlink()
    proc = snakemake(repo, "results/figures/fig8.png", "--cores", "2", "--config", "preset=smoke")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert _jobs_run(proc) == {"plot"}
    assert png.read_bytes() == before


def test_a_second_run_from_scratch_gives_identical_parquet_content(smoke_repo, tmp_path):
    fresh = _snapshot(tmp_path / "fresh")
    proc = snakemake(fresh, "fig6", "fig9", "fig2", "--cores", "2", "--config", "preset=smoke")
    assert proc.returncode == 0, proc.stderr[-4000:]
    compared = 0
    for new in sorted((fresh / "results").rglob("*.parquet")):
        rel = new.relative_to(fresh)
        if new.name in VOLATILE:
            continue
        assert new.read_bytes() == (smoke_repo / rel).read_bytes(), rel
        compared += 1
    assert compared > 100, compared


@pytest.fixture(scope="module")
def review_report(smoke_repo) -> Path:
    """results/review/report.html of the smoke run (written by the review test, or here if it ran alone)."""
    page = smoke_repo / "results/review/report.html"
    if not page.is_file():
        proc = review(smoke_repo)
        assert proc.returncode == 0, proc.stderr[-6000:]
    return page


@pytest.mark.skipif(headless_chromium.binary() is None,
                    reason="headless Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
def test_the_review_report_renders_in_headless_chromium(review_report):
    page = headless_chromium.rendered(review_report)
    assert page["title"].startswith("icl-kmeans review (smoke)"), page["title"]
    assert "INTEGRITY VERIFIED" in page["text"] and "The paper's claims" in page["text"]
    # every embedded figure (26 files, Figs 15 and 16 in four parts each; Table 1 is a table) decodes to a
    # non-zero size, is more than one colour (a drawn figure, not a blank), and is shown on the page
    drawn = len(list((review_report.parents[1] / "figures").glob("*.png")))
    assert drawn == 26 and len(page["images"]) == drawn, (drawn, len(page["images"]))
    bad = [img for img in page["images"] if not (img["width"] > 0 and img["height"] > 0 and img["colours"] > 1
                                                  and img["shown_width"] > 0)]
    assert not bad, bad
    # the claims table: one row per claim, in the checker's order, each with its status
    claims = [t for t in page["tables"] if t["header"][:3] == ["id", "status", "statement"]]
    assert len(claims) == 1, [t["header"] for t in page["tables"]]
    rows = claims[0]["rows"]
    assert [r[0] for r in rows] == [c.id for c, _ in CLAIMS], rows
    assert all(r[1] in set(STATUSES) - {ERROR} for r in rows), rows

    shot = headless_chromium.screenshot(review_report, ARTIFACTS / "review-report.png")
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == (1280, 3600), im.size
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 50, "the screenshot is (nearly) blank"
    print(f"\n[chromium] screenshot of the review report: {shot}")


@pytest.mark.skipif(headless_chromium.binary() is None,
                    reason="headless Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
def test_snakemakes_report_holds_every_figure_and_the_claims(smoke_repo, tmp_path):
    """`snakemake --report` (docs/cluster.md) on the smoke run: a page Chromium renders, with every figure
    (its caption filled in) and the claims table in their categories. Read-only: it runs no job."""
    page = tmp_path / "report.html"
    proc = snakemake(smoke_repo, "--report", str(page))
    assert proc.returncode == 0, proc.stderr[-6000:]
    html = page.read_text()
    missing = [f"{fig}.png" for fig in figure_registry.plot_ids() if f"{fig}.png" not in html]
    assert not missing, missing
    assert "claims.csv" in html and "table1.csv" in html
    assert "{{ snakemake.params" not in html  # every caption's scale and panels were filled in
    for category in ("Claims", "Training curves", "Multi-step clustering", "Loss and gap surfaces"):
        assert category in html, category
    # the page's app draws its menu after the load event: its title, then a screenshot of what it drew
    assert headless_chromium.rendered(page)["title"] == "Snakemake Report"
    shot = headless_chromium.screenshot(page, ARTIFACTS / "snakemake-report.png", height=900)
    from PIL import Image

    with Image.open(shot) as im:
        colours = im.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is None or len(colours) > 50, "the screenshot of Snakemake's report is (nearly) blank"
    print(f"\n[chromium] screenshot of Snakemake's report: {shot}")
