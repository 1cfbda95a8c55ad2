"""Pipeline support: settings and presets, the registry of runs per figure, and the job bodies
that the thin scripts in workflow/scripts call. settings and studies never import torch, so
Snakemake parses the DAG quickly."""
