import pytest
import torch


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
