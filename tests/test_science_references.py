"""Every reference to docs/science.md (`science.md §n`, or `§n` inside science.md itself) names a section
that exists there, and nothing cites the specification that is not part of the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCIENCE = REPO / "docs" / "science.md"
SECTION = re.compile(r"^## (\d+)\. ", re.MULTILINE)
REFERENCE = re.compile(r"science\.md §(\d+)(?:-(\d+))?")
LOCAL_REFERENCE = re.compile(r"§(\d+)(?:-(\d+))?")
# the external specification's name followed by a section number, written so that this file does not match
OLD_REFERENCE = re.compile(r"\b" + "SP" + r"EC \d")
TEXT_SUFFIXES = {".py", ".smk", ".md", ".yaml", ".yml", ".rst", ".cff", ".csv", ".toml", ".txt", ".tsv", ""}


def sections(text: str) -> set[int]:
    return {int(n) for n in SECTION.findall(text)}


def dangling(text: str, known: set[int], pattern: re.Pattern = REFERENCE) -> list[str]:
    """The references in text (each number of a range `§a-b`) whose section is not in known."""
    bad = []
    for m in pattern.finditer(text):
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if first > last or not all(n in known for n in range(first, last + 1)):
            bad.append(m.group(0))
    return bad


def repository_text_files() -> list[Path]:
    """Tracked and untracked, not ignored, text files (what a clone or a commit would hold)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    files = [REPO / rel for rel in listed if rel]
    return [p for p in files if p.is_file() and p.suffix in TEXT_SUFFIXES]


def test_science_md_has_the_numbered_sections_in_order():
    numbers = [int(n) for n in SECTION.findall(SCIENCE.read_text())]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 10, numbers


def test_the_checker_finds_a_reference_to_a_missing_section():
    known = {1, 2, 3}
    assert dangling("see science.md §2 and science.md §1-3", known) == []
    assert dangling("see science.md §4", known) == ["science.md §4"]
    assert dangling("science.md §2-5", known) == ["science.md §2-5"]
    assert OLD_REFERENCE.search("(" + "SP" + "EC 7)")


def test_every_science_reference_names_an_existing_section():
    known = sections(SCIENCE.read_text())
    problems, checked = [], 0
    for path in repository_text_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        pattern = LOCAL_REFERENCE if path == SCIENCE else REFERENCE
        checked += len(pattern.findall(text))
        problems += [f"{path.relative_to(REPO)}: {ref}" for ref in dangling(text, known, pattern)]
        problems += [f"{path.relative_to(REPO)}: cites the external specification: {m.group(0)!r}"
                     for m in OLD_REFERENCE.finditer(text)]
    assert not problems, "\n".join(problems)
    assert checked > 20, f"only {checked} references found: is the pattern still the one the code uses?"
