"""Checks that stop a SLURM run before its first submission, each with the fix in its message
(docs/cluster.md, "Site settings" and "Packing"):

* extra_flags_problem: sbatch flags in ICL_KMEANS_SLURM_EXTRA (or any job's slurm_extra) that the executor
  plugin manages itself; the plugin rejects them at submission (validation.validate_slurm_extra), job by
  job. The message names the setting that asks for the same thing the supported way.
* packing_problem: a packed group (group-components > 1) asks for as many GPUs as the global pool `gpu`
  allows; only a pool of exactly one GPU, scoped per SLURM job ("local"), runs its members in series on
  one GPU. A user's --resources or a later profile's `resources:` replaces the project profile's pool.
* profile_problem: the project's profile (slurm/profile.yaml) was not loaded, e.g. `--profile slurm` typed
  outside the repository root found no profile or a user's own ~/.config/snakemake/slurm.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

# Set by slurm/profile.yaml when Snakemake loads it (a YTE definition), read by the workflow.
PROFILE_MARKER = "ICL_KMEANS_SLURM_PROFILE"
EXTRA_VARIABLE = "ICL_KMEANS_SLURM_EXTRA"

# What to use instead of a flag the plugin manages (its option names, validation.get_forbidden_slurm_options).
INSTEAD = {
    "node constraints": "export ICL_KMEANS_SLURM_CONSTRAINT=... (the plugin's `constraint` resource)",
    "partition": "export ICL_KMEANS_SLURM_PARTITION=... (GPU rules) / ICL_KMEANS_SLURM_CPU_PARTITION=...",
    "account": "export ICL_KMEANS_SLURM_ACCOUNT=...",
    "quality of service": "export ICL_KMEANS_SLURM_QOS=...",
    "generic resources (GRES)": "export ICL_KMEANS_GPU_MODEL=... (the GPU rules ask for one GPU each)",
    "GPU allocation": "export ICL_KMEANS_GPU_MODEL=... (the GPU rules ask for one GPU each)",
    "runtime/time limit": "export ICL_KMEANS_GPU_STEP_SECONDS=... (training jobs' run time formula)",
}


def forbidden_options(flags: str) -> list[str]:
    """The plugin's names of the options in `flags` that it manages itself (empty: sbatch accepts them)."""
    from snakemake_executor_plugin_slurm.validation import get_forbidden_slurm_options

    return [name for pattern, name in get_forbidden_slurm_options().items() if re.search(pattern, flags)]


def extra_flags_problem(flags: str, source: str = EXTRA_VARIABLE) -> str | None:
    """Why the plugin would reject these sbatch flags at submission, and what to set instead; None if
    it accepts them. The verdict is the plugin's own (validate_slurm_extra), the advice ours."""
    from snakemake_executor_plugin_slurm.validation import validate_slurm_extra
    from snakemake_interface_common.exceptions import WorkflowError

    try:
        validate_slurm_extra(SimpleNamespace(resources=SimpleNamespace(slurm_extra=flags)))
        return None
    except WorkflowError:
        names = forbidden_options(flags)
    fixes = "; ".join(f"{n}: {INSTEAD.get(n, 'set by the plugin itself, leave it out')}" for n in names)
    return (f"{source}={flags!r} holds sbatch options that the SLURM executor plugin sets itself and rejects "
            f"in slurm_extra ({', '.join(names)}). Instead, {fixes}.")


def packing_problem(group_components: dict, gpu_pool, gpu_scope: str | None) -> str | None:
    """Why a packed group would not get exactly one GPU, or None. group_components: group -> jobs packed into
    one SLURM job (--group-components); gpu_pool: the global resource `gpu` (--resources, None if unset);
    gpu_scope: its scope (the workflow declares "local")."""
    packed = {g: n for g, n in group_components.items() if int(n) > 1}
    if not packed:
        return None
    what = ", ".join(f"{g}={n}" for g, n in sorted(packed.items()))
    if gpu_pool is None or int(gpu_pool) != 1:
        now = "no `gpu`" if gpu_pool is None else f"gpu={gpu_pool}"
        return (f"packing (group-components {what}) needs a pool of exactly one GPU per SLURM job, but the "
                f"resources give {now}: a packed job would ask for one GPU per member. The project's profile "
                "sets `resources: gpu: 1`; a --resources on the command line or a later profile's "
                "`resources:` replaces it. Add gpu=1 there (e.g. --resources gpu=1 mem_mb=...), or pack "
                "nothing (--group-components train=1).")
    if gpu_scope != "local":
        return (f"packing (group-components {what}) needs the resource `gpu` scoped per SLURM job "
                f"(\"local\", declared in the Snakefile), but it is {gpu_scope!r} (--set-resource-scopes): "
                "then only one GPU job would run at a time on the whole cluster. Drop gpu from "
                "--set-resource-scopes.")
    return None


def profile_problem(marker: str | None, repo) -> str | None:
    """Why the run must not go on without the project's profile (None if it was loaded)."""
    if marker:
        return None
    return ("this workflow runs on SLURM through its own profile, which Snakemake did not load: "
            "`--profile slurm` is looked up in the working directory, then in ~/.config/snakemake, so outside "
            f"the repository root it finds nothing or a profile of yours. Name it by its path: "
            f"--profile {repo}/slurm (then your own on top: --profile {repo}/slurm --profile mysite).")
