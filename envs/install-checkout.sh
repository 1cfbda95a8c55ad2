#!/usr/bin/env bash
# Installs this checkout's icl_kmeans package into the conda env that Snakemake has just created
# (--sdm conda). Snakemake runs an env's <name>.post-deploy.sh inside the env, once, from a copy of it,
# so the checkout is named by ICL_KMEANS_CHECKOUT, which workflow/rules/common.smk sets. Editable: the
# env runs the checkout's code as it is, like the README's pip environment.
set -euo pipefail
: "${ICL_KMEANS_CHECKOUT:?not set: run snakemake from this repository (workflow/rules/common.smk sets it)}"
python -m pip install --no-deps --no-build-isolation --disable-pip-version-check -e "$ICL_KMEANS_CHECKOUT"
