"""Pipeline support: settings and presets, the registry of runs per figure, the job bodies that the
thin scripts in workflow/scripts call, and the provenance record every job writes. settings and
studies never import torch, so Snakemake parses the DAG quickly. Nothing here imports
icl_kmeans.review (the review reads what the pipeline writes; tests/test_layers.py checks).

    job_context      what every script does around its work: log, threads, traceback, provenance
    provenance       the per-output provenance records (results/provenance/)
    training_jobs    training job bodies (one run, a stack, a bundle of stacks)
    evaluation_jobs  evaluation job bodies (multi-step, landscapes, dissimilarity, profile)
"""
