"""What every pipeline script does around its work: log to the rule's log file, use the job's
threads, and leave a traceback in the log when it fails."""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback


def as_list(x) -> list:
    return [x] if isinstance(x, str) else list(x)


def job_device(smk) -> str:
    """The device (auto, cpu, cuda: settings key `device`) the workflow gave this job as its resource
    torch_device (common.smk): a resource, not a param, so that changing it reruns nothing."""
    device = getattr(smk.resources, "torch_device", None)
    if device is None:
        raise ValueError(f"rule {smk.rule} computes with torch but has no torch_device resource "
                         "(add **TORCH_DEVICE to its resources, workflow/rules/common.smk)")
    return str(device)


@contextlib.contextmanager
def job(smk, device: bool = False):
    """Runs a job body: logging, threads, provenance. device=True: the body computes on the job's
    device (job_device), which is yielded and recorded in the provenance."""
    threads = str(max(1, int(getattr(smk, "threads", 1) or 1)))
    # torch reads these when the job body imports it; plotting jobs never pay for importing torch.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = threads
    log = open(smk.log[0], "w", buffering=1) if len(smk.log) else None
    old = sys.stdout, sys.stderr
    saved_fds = None
    if log is not None:
        sys.stdout.flush(), sys.stderr.flush()
        saved_fds = os.dup(1), os.dup(2)
        os.dup2(log.fileno(), 1), os.dup2(log.fileno(), 2)  # C-level output (torch's profiler) too
        sys.stdout = sys.stderr = log
    start = time.time()
    from .provenance import code_version, write_job_provenance

    code = code_version()  # once per job, at its start: the code that runs
    requested = job_device(smk) if device else None
    print(f"[{smk.rule}] started; threads={threads}; wildcards={dict(smk.wildcards.items())}", flush=True)
    try:
        yield requested
        write_job_provenance(smk, start, code, device=requested)  # results/provenance/<output>.json for every output
        print(f"[{smk.rule}] done in {time.time() - start:.1f} s", flush=True)
    except BaseException:
        traceback.print_exc()
        raise
    finally:
        sys.stdout, sys.stderr = old
        if saved_fds is not None:
            os.dup2(saved_fds[0], 1), os.dup2(saved_fds[1], 2)
            os.close(saved_fds[0]), os.close(saved_fds[1])
        if log is not None:
            log.close()
