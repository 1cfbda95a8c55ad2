import os

import pytest
import torch

# pytest-xdist runs test files on parallel workers (pyproject: -n auto --dist loadfile): the pipeline and
# SLURM tests mostly wait on subprocesses and the scheduler, so the other worker fills the idle core.
# Each worker gets its share of the cores for torch, not all of them.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    torch.set_num_threads(max(1, len(os.sched_getaffinity(0)) // _WORKERS))

# The two longest files start first, each on its own worker; the other pipeline files go last, where they
# fill in behind the unit tests (xdist hands each worker two files at the start, then one per free worker).
FIRST = ("test_review_pipeline.py", "test_slurm.py")


def _rank(item) -> tuple[int, int]:
    name = item.path.name
    if name in FIRST:
        return 0, FIRST.index(name)
    return (2, 0) if item.get_closest_marker("pipeline") else (1, 0)


def pytest_collection_modifyitems(items):
    items.sort(key=_rank)  # stable: collection order within each rank


@pytest.fixture
def single_thread():
    """Run a test with one torch thread: the tensors in the core tests are small, and on a loaded
    2-core machine OpenMP threads waiting on each other cost far more than they save."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
