"""Open an HTML file in headless Chromium (Debian's `chromium` package, installed by .ci/run): what the
page looks like after the browser has loaded it (images decoded, tables laid out), and a screenshot.

Each call starts a fresh browser with an empty profile of its own and no network use.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

BINARIES = ("chromium", "chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")
RESULT_ID = "headless-chromium-result"
# Run in the page once it has loaded (synchronously: --dump-dom does not wait for promises): draw every
# image into a canvas, which decodes it, count the distinct colours of up to 4096 of its pixels, and
# describe the images and tables into a <pre> element that --dump-dom prints.
PROBE = """<script>
window.addEventListener("load", () => {
  const colours = img => {
    if (!img.naturalWidth || !img.naturalHeight) return 0;
    const canvas = document.createElement("canvas");
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const ctx = canvas.getContext("2d");
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const step = Math.max(1, Math.floor(data.length / 4 / 4096));
    const seen = new Set();
    for (let i = 0; i < data.length; i += 4 * step) seen.add(data.slice(i, i + 4).join());
    return seen.size;
  };
  const cells = tr => [...tr.cells].map(c => c.textContent.trim());
  const result = {
    title: document.title,
    text: document.body.innerText,
    images: [...document.images].map(img => ({width: img.naturalWidth, height: img.naturalHeight,
                                              colours: colours(img), shown_width: img.getBoundingClientRect().width})),
    tables: [...document.querySelectorAll("table")].map(t => ({header: t.rows.length ? cells(t.rows[0]) : [],
                                                              rows: [...t.rows].slice(1).map(cells)})),
    // the review report's per-figure claim blocks: their claims, images and evidence tables
    blocks: [...document.querySelectorAll("[data-block]")].map(b => ({
      id: b.dataset.block, evidence: b.dataset.evidence === "1",
      claims: [...b.querySelectorAll("[data-claim]")].map(c => c.dataset.claim),
      images: [...b.querySelectorAll("img")].map(img => ({width: img.naturalWidth, colours: colours(img),
                                                        shown_width: img.getBoundingClientRect().width})),
      tables: [...b.querySelectorAll(".evidence table")].filter(t => t.rows.length > 1).length,
      differs: [...b.querySelectorAll(".differs")].map(d => d.innerText),
      // each claim's status and whether its rule changed since the committed verdict, as shown
      shown: [...b.querySelectorAll("[data-claim]")].map(c => ({id: c.dataset.claim, status: c.dataset.status,
        changed: c.dataset.ruleChanged === "1", status_box: (c.querySelector(".status") || {}).innerText || "",
        mark: (c.querySelector(".rule-changed") || {}).innerText || ""}))})),
  };
  const pre = document.createElement("pre");
  pre.id = "%s";
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>""" % RESULT_ID


def binary() -> str | None:
    """The Chromium executable on PATH, or None."""
    return next((path for name in BINARIES if (path := shutil.which(name))), None)


def _run(args: list[str], timeout: int) -> subprocess.CompletedProcess:
    exe = binary()
    if exe is None:
        raise FileNotFoundError("no chromium on PATH (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                              text=True, timeout=timeout)


def rendered(page: Path, timeout: int = 180) -> dict:
    """Title, visible text, images (natural size, distinct colours among the sampled pixels of the decoded
    image, shown width), tables (header cells, the cells of each further row) and the review report's claim
    blocks (elements with data-block: their claims, images and evidence tables) of `page` as Chromium
    renders it. The page is read from a copy with the probe added."""
    with tempfile.TemporaryDirectory(prefix="chromium-page-") as tmp:
        copy = Path(tmp) / page.name
        text = page.read_text()
        end = text.rfind("</body>")  # the last one: a page's scripts may hold the string too (Snakemake's report)
        copy.write_text(text[:end] + PROBE + text[end:] if end >= 0 else text + PROBE)
        proc = _run(["--virtual-time-budget=30000", "--dump-dom", copy.as_uri()], timeout)
    m = re.search(rf'<pre id="{RESULT_ID}">(.*?)</pre>', proc.stdout, re.S)
    if proc.returncode != 0 or not m:
        raise RuntimeError(f"chromium did not render {page} (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(html.unescape(m.group(1)))


def screenshot(page: Path, out: Path, width: int = 1280, height: int = 3600, timeout: int = 180) -> Path:
    """A PNG of the top `height` pixels of `page` at a window `width` pixels wide."""
    out.parent.mkdir(parents=True, exist_ok=True)
    proc = _run(["--virtual-time-budget=30000", "--hide-scrollbars", f"--window-size={width},{height}",
                 f"--screenshot={out}", page.as_uri()], timeout)
    if proc.returncode != 0 or not out.is_file():
        raise RuntimeError(f"chromium wrote no screenshot of {page} (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return out
