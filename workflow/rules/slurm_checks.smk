# Checks of a SLURM run that stop it before its first submission, each naming its fix
# (icl_kmeans.pipeline.slurm_checks, docs/cluster.md "Site settings" and "Packing").
from snakemake.exceptions import WorkflowError

from icl_kmeans.pipeline import slurm_checks as _slurm_checks

# While parsing, so that a dry run with the profile (`snakemake -n --profile slurm`) stops too: sbatch flags in
# ICL_KMEANS_SLURM_EXTRA that the executor plugin would reject at each job's submission. Only when the project's
# profile is loaded: the variable means nothing to a local run.
if (
    os.environ.get(_slurm_checks.PROFILE_MARKER)
    and os.environ.get(_slurm_checks.EXTRA_VARIABLE, "").strip()
):
    _problem = _slurm_checks.extra_flags_problem(
        os.environ[_slurm_checks.EXTRA_VARIABLE].strip()
    )
    if _problem:
        raise ValueError(_problem)


# After the DAG is built and before any job runs (not in a dry run, nor with --no-hooks), with the executor, the
# packing, the resources and every job known: whichever profiles and options gave them.
onstart:
    if (
        workflow.executor_plugin is not None
        and workflow.executor_plugin.name == "slurm"
    ):
        _pool = workflow.global_resources.get("gpu")
        _problems = [
            _slurm_checks.profile_problem(
                os.environ.get(_slurm_checks.PROFILE_MARKER), REPO
            ),
            _slurm_checks.packing_problem(
                dict(workflow.group_settings.group_components),
                getattr(_pool, "value", _pool),
                workflow.resource_scopes.get("gpu"),
            ),
        ]
        # the executor plugin's own check of each job (validate_slurm_extra), for slurm_extra from any source
        _problems += sorted(
            {
                _slurm_checks.extra_flags_problem(
                    str(job.resources.get("slurm_extra")),
                    f"slurm_extra of rule {job.rule.name}",
                )
                for job in workflow.dag.needrun_jobs()
                if job.resources.get("slurm_extra")
            }
            - {None}
        )
        _problems = [p for p in _problems if p]
        if _problems:
            raise WorkflowError(
                "not submitting anything:\n"
                + "\n".join(f"- {p}" for p in _problems)
            )
