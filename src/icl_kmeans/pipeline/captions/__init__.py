"""The figures' captions: <fig>.rst beside this file, package data. Each is a Jinja template (as
Snakemake's report renders captions) with {{ snakemake.params.scale }} and, for figures of trained
models, {{ snakemake.params.panels }}; the workflow fills them in for the report (common.smk) and the
review for its HTML report."""

from importlib import resources


def template(fig: str) -> str:
    """The caption template of fig (a figure id or table1); FileNotFoundError names the file when it has none."""
    path = resources.files(__package__) / f"{fig}.rst"
    if not path.is_file():
        raise FileNotFoundError(f"no caption for {fig!r}: expected icl_kmeans/pipeline/captions/{fig}.rst")
    return path.read_text()


def has_template(fig: str) -> bool:
    return (resources.files(__package__) / f"{fig}.rst").is_file()
