"""README.md's reproduction table is what `python -m icl_kmeans.review readme` writes from the claims."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from icl_kmeans.review import paper_scale_doc as P
from icl_kmeans.review import readme_table as R

REPO = Path(__file__).resolve().parents[1]
_CLAIMS: dict[str, pd.DataFrame] = {}


CLAIM_PARTS = ("tables", "runs", "metrics")  # with the settings and the verdict history: what the claims read
CLAIM_FILES = ("manifest.json", "review/claims.history.csv")


def _claim_inputs(folder: Path) -> list[Path]:
    """The files of a results folder that R.paper_scale_claims reads (not the checkpoints or resume files)."""
    files = [p for part in CLAIM_PARTS for p in (folder / part).rglob("*")
             if p.is_file() and not p.name.startswith("checkpoint.pt")]
    return sorted(files + [folder / name for name in CLAIM_FILES if (folder / name).is_file()])


def _folder_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in _claim_inputs(folder):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


@pytest.fixture(autouse=True)
def claims_checked_once_per_folder_content(monkeypatch):
    """R.paper_scale_claims is a pure function of the folder's files, and checking the 45 claims on the committed
    folder is most of R.main's time: each content is checked once (a test that changes a table gets a fresh check)."""
    real = R.paper_scale_claims

    def once(repo: Path = REPO) -> pd.DataFrame:
        key = _folder_digest(Path(repo) / R.PAPER_SCALE)
        if key not in _CLAIMS:
            _CLAIMS[key] = real(repo)
        return _CLAIMS[key].copy()

    monkeypatch.setattr(R, "paper_scale_claims", once)


def test_readme_holds_the_generated_table():
    assert R.main(check=True, repo=REPO) == 0, "README.md is stale: run `python -m icl_kmeans.review readme`"


def _repo(tmp_path: Path) -> Path:
    """A repository with README.md and the committed paper-scale folder's tables, records and settings."""
    repo = tmp_path / "repo"
    src = REPO / R.PAPER_SCALE
    dst = repo / R.PAPER_SCALE
    for part in CLAIM_PARTS:
        shutil.copytree(src / part, dst / part, ignore=shutil.ignore_patterns("checkpoint.pt"))
    for name in ("manifest.json", "manifest.tsv"):
        shutil.copy2(src / name, dst / name)
    # the growth block reads the profiles' resume files, the claims column the verdict history
    for name in [p.relative_to(src) for p in (src / "eval").glob("*.resume")] + [Path("review/claims.history.csv")]:
        if (src / name).is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / name, dst / name)
    shutil.copy2(REPO / "README.md", repo / "README.md")
    (repo / P.DOC).parent.mkdir(parents=True)
    shutil.copy2(REPO / P.DOC, repo / P.DOC)
    for quick in (R.QUICK_CLAIMS, R.QUICK_SOURCE):  # the README's quick column
        if (REPO / quick).is_file():
            shutil.copy2(REPO / quick, repo / quick)
    return repo


def test_a_changed_table_cell_or_a_hand_edit_makes_the_check_fail(tmp_path):
    repo = _repo(tmp_path)
    assert R.main(check=True, repo=repo) == 0
    readme = repo / "README.md"
    text = readme.read_text()
    readme.write_text(text.replace("| 7a | Fig 5, §3 |", "| 7a | Fig 5, §3 (edited) |"))
    assert R.main(check=True, repo=repo) == 1
    assert R.main(check=False, repo=repo) == 0 and readme.read_text() == text
    # the claims are checked afresh from the tables: a different value changes the table
    fig5 = repo / R.PAPER_SCALE / "tables" / "fig5.parquet"
    df = pd.read_parquet(fig5)
    df.loc[df["metric"] == "gap_mean", "value"] /= 10
    df.to_parquet(fig5, index=False)
    assert R.main(check=True, repo=repo) == 1


def test_the_quick_column_comes_from_the_committed_quick_claims(tmp_path):
    repo = _repo(tmp_path)
    (repo / R.QUICK_CLAIMS).parent.mkdir(parents=True, exist_ok=True)
    current = R.paper_scale_claims(repo).set_index("id")["rule_version"]
    pd.DataFrame({"id": ["1a", "1b"], "status": ["FAIL", "PASS"], "measured": ["1.0", "1.2"], "threshold": ["1", "1"],
                  "rule_version": [current["1a"], "an older rule"]}).to_csv(repo / R.QUICK_CLAIMS, index=False)
    R.main(repo=repo)
    text = (repo / "README.md").read_text()
    assert "| claim | figure | the paper | quick | paper scale |" in text
    assert "| FAIL 1.0 (threshold 1) | PASS" in text and "not in the quick run's file" in text
    # a quick verdict decided under another version of its rule is marked stale, and the note says how many
    assert f"| PASS 1.2 (threshold 1) {R.STALE} | PASS" in text and f"{R.STALE} 1 quick verdicts" in text


def _quick_run(root: Path, preset="quick", subset="") -> Path:
    results = root / "results"
    (results / "review").mkdir(parents=True)
    pd.DataFrame({"id": ["1a", "2"], "status": ["PASS", "FAIL"], "measured": ["0.9", "0.5"],
                  "threshold": ["1", "0.75"]}).to_csv(results / "review" / "claims.csv", index=False)
    (results / "manifest.json").write_text(json.dumps({
        "code": {"commit": "abcdef0123456789", "dirty": False}, "created": "2026-12-04T19:00:00+00:00",
        "settings": {"preset": preset, "subset": subset}}))
    return results


def test_quick_from_takes_a_finished_quick_run_and_names_its_commit(tmp_path):
    repo = _repo(tmp_path)
    (repo / "docs").mkdir(exist_ok=True)
    assert R.main(repo=repo, quick_from=_quick_run(tmp_path / "q")) == 0
    assert json.loads((repo / R.QUICK_SOURCE).read_text())["commit"] == "abcdef0123456789"
    text = (repo / "README.md").read_text()
    # the fake run's rows carry no rule version: stale under every rule
    assert f"| PASS 0.9 (threshold 1) {R.STALE} | PASS" in text and "quick run of commit abcdef0 (2026-12-04)" in text
    assert R.main(check=True, repo=repo) == 0
    with pytest.raises(ValueError, match="preset 'paper'"):
        R.take_quick(_quick_run(tmp_path / "p", preset="paper"), repo)
    with pytest.raises(ValueError, match="subset"):
        R.take_quick(_quick_run(tmp_path / "s", subset="fig6"), repo)
    with pytest.raises(FileNotFoundError, match="claims.csv"):
        R.take_quick(tmp_path / "nothing" / "results", repo)


def test_missing_markers_are_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="markers"):
        R.render("no markers here", "table")


def test_paper_scale_doc_numbers_come_from_the_committed_tables(tmp_path):
    repo = _repo(tmp_path)
    doc = repo / P.DOC
    text = doc.read_text()
    for block in P.BLOCKS:  # every block is there and not empty (the growth block is one line without a growth)
        start, end = P.markers(block)
        assert text.index(end) - text.index(start) > len(start) + (200 if block != "growth" or P.GROWTH else 40), block
    # a hand edit of a generated number fails the check, and the command writes it back
    runs = text[text.index(P.markers("runs")[0]):text.index(P.markers("runs")[1])]
    row = next(line for line in runs.splitlines() if line.startswith("| OH:L2 | 32 | 10 |"))
    doc.write_text(text.replace(row, row.replace("**", "", 2)))
    assert R.main(check=True, repo=repo) == 1
    assert R.main(check=False, repo=repo) == 0 and doc.read_text() == text
    # a changed metric in a committed table changes the doc: the numbers are read, not typed
    fig6 = repo / R.PAPER_SCALE / "tables" / "fig6.parquet"
    df = pd.read_parquet(fig6)
    df.loc[(df["metric"] == "log_objective") & (df["curve"] == "OH:L2"), "value"] += 1.0
    df.to_parquet(fig6, index=False)
    assert R.main(check=True, repo=repo) == 1
    R.main(repo=repo)
    assert "| fig6 | normal | (figure's models) | reembed | 20 |" in doc.read_text() and doc.read_text() != text


def test_each_row_of_the_runs_table_is_one_configuration():
    """Fig 11's runs differ from Fig 10's in lr and M alone: a row keyed without them held 12 values for 3 seeds
    and a median over three learning rates. Every row holds at most one value per seed, and names lr and M."""
    results = Path(__file__).resolve().parents[1] / R.PAPER_SCALE
    settings = json.loads((results / "manifest.json").read_text())["settings"]
    table = P.runs_block(results, settings).splitlines()
    header = [c.strip() for c in table[0].strip("|").split("|")]
    assert header[5:7] == ["lr", "M"], header
    per_seed = header.index(next(h for h in header if h.startswith("final relative validation loss, per seed")))
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table[2:]]
    assert rows and all(len(r[per_seed].split(", ")) <= len(settings["seeds"]) for r in rows), \
        [r for r in rows if len(r[per_seed].split(", ")) > len(settings["seeds"])][:2]
    assert len({tuple(r[:7]) for r in rows}) == len(rows)  # no two rows name the same configuration


def test_a_run_not_in_the_manifest_stays_out_of_the_doc(tmp_path):
    repo = _repo(tmp_path)
    results = repo / R.PAPER_SCALE
    settings = json.loads((results / "manifest.json").read_text())["settings"]
    before = P.runs_block(results, settings)
    # a run in training beside the committed ones: its record and metrics exist, the manifest lacks them
    record = sorted(results.glob("runs/*/seed*/record.json"))[0]
    run, seed = record.parent.parent.name, record.parent.name.removeprefix("seed")
    extra = json.loads(record.read_text())
    extra.update(run="XX-L2_d4_k6_0000000000", seed=1)
    extra["config"]["d"] = 999
    (results / "runs" / extra["run"] / "seed1").mkdir(parents=True)
    (results / "runs" / extra["run"] / "seed1" / "record.json").write_text(json.dumps(extra))
    shutil.copytree(results / "metrics" / f"run={run}" / f"seed={seed}",
                    results / "metrics" / f"run={extra['run']}" / "seed=1")
    assert P.runs_block(results, settings) == before and "| 999 |" not in before


def test_the_growth_block_reads_the_committed_resume_files(tmp_path):
    repo = _repo(tmp_path)
    doc = (repo / P.DOC).read_text()
    block = doc[doc.index(P.markers("growth")[0]):doc.index(P.markers("growth")[1])]
    if not P.GROWTH:
        assert "No growth in progress" in block
    else:  # the growth command of the doc plans the subset the block reports on
        assert f";{P.GROWTH}'" in doc, "docs/paper-scale.md's growth command must append GROWTH to the subset"
        assert f"Subset `{P.GROWTH}`" in block
    # the block of a growth (Fig 2a at tau = 1 grown again) reads the resume files: one gone, one run fewer
    results = repo / R.PAPER_SCALE
    settings = json.loads((results / "manifest.json").read_text())["settings"]
    settings = dict(settings, subset=settings["subset"].replace(";fig10:d=4,tau=1", ""))
    before = P.growth_block(results, settings, "fig10:d=4,tau=1")
    assert "18 runs (run, seed). 18 trained" in before, before
    from icl_kmeans.review.trained import settings_runs

    grown = dict(settings, subset=settings["subset"] + ";fig10:d=4,tau=1")
    run, seed = sorted(settings_runs(grown) - settings_runs(settings))[0]  # one of the growth's own runs
    (results / "runs" / run / f"seed{seed}" / "checkpoint.pt.resume").unlink()
    assert "17 trained, 0 part-way, 1 not started" in P.growth_block(results, settings, "fig10:d=4,tau=1")


def test_prose_beside_a_claim_follows_its_committed_verdict():
    """A paragraph of README.md or docs/paper-scale.md that says the paper is reproduced ("as the paper shows",
    "as the paper says") must not cite a claim whose committed verdict is not PASS (the docs once wrote "as the
    paper shows" beside a FAILed 7a)."""
    import re

    import pandas as pd

    status = pd.read_csv(REPO / "results/paper-scale/results/review/claims.csv", dtype=str).set_index("id")["status"]
    for doc in ("README.md", "docs/paper-scale.md"):
        for para in (REPO / doc).read_text().split("\n\n"):
            if not re.search(r"as the paper (shows|says)", para):
                continue
            cited = re.findall(r"claims? (\d+[a-z]?)(?:\s*-\s*(\d+[a-z]?))?", para)
            for first, last in cited:
                for cid in (first, last):
                    if cid and cid in status.index:
                        assert status[cid] == "PASS", (doc, cid, status[cid], para[:200])
