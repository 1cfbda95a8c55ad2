"""LICENSE and CITATION.cff: the software is MIT-licensed and cites itself and the paper it reproduces.

CITATION.cff is validated with `cffconvert --validate` (the Citation File Format's own validator).
cffconvert 2.0.0 needs jsonschema < 4 while the project pins jsonschema 4, so it is installed into a
virtual environment of its own (marked `network`: it needs the package index), and run on the
shipped file and on a broken copy, which it must reject.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CITATION = REPO / "CITATION.cff"
CFFCONVERT = "cffconvert==2.0.0"
PAPER_AUTHORS = ["Park", "Clarkson", "Horesh", "Ito", "Ram"]


def citation() -> dict:
    return yaml.safe_load(CITATION.read_text())


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_license_is_mit_and_declared_in_pyproject():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License"), text[:80]
    assert "Permission is hereby granted, free of charge" in text
    assert pyproject()["license"] == "MIT"
    assert citation()["license"] == "MIT"


def test_citation_matches_the_package_and_cites_the_paper():
    cff = citation()
    assert cff["type"] == "software"
    assert cff["version"] == pyproject()["version"]
    papers = [r for r in cff["references"] if r["type"] == "article"]
    assert [p["title"] for p in papers] == ["Leaner Transformers Can Easily Learn to Cluster"]
    assert papers[0]["year"] == 2026
    assert [a["family-names"] for a in papers[0]["authors"]] == PAPER_AUTHORS


@pytest.fixture(scope="module")
def cffconvert(tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("cffconvert") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    proc = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", CFFCONVERT],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return venv / "bin" / "cffconvert"


def validate(cffconvert: Path, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(cffconvert), "--validate", "-i", str(path)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.network
def test_cffconvert_validates_citation_cff(cffconvert):
    proc = validate(cffconvert, CITATION)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Citation metadata are valid according to schema version 1.2.0" in proc.stdout


@pytest.mark.network
def test_cffconvert_rejects_a_citation_without_authors(cffconvert, tmp_path):
    broken = citation()
    del broken["authors"]
    path = tmp_path / "CITATION.cff"
    path.write_text(yaml.safe_dump(broken, sort_keys=False))
    proc = validate(cffconvert, path)
    assert proc.returncode != 0, proc.stdout
