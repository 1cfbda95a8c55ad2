"""The one timing helper of profiling and the benchmark: call order, warm-up, set-ups (no timing asserted)."""

import pytest

from icl_kmeans.timing import Timing, time_round_robin


def test_round_robin_interleaves_and_feeds_setups():
    calls, kept = [], {}

    def forward():
        calls.append("forward")
        kept["out"] = len(calls)

    def backward(loss):
        calls.append(("backward", loss))

    t = time_round_robin({"forward": forward, "backward": backward}, repeats=3, warmup=2,
                         setups={"backward": lambda: kept.pop("out")})
    # 5 rounds (2 untimed), each the forward then the backward of that round's forward output
    assert calls == [c for i in range(5) for c in ("forward", ("backward", 2 * i + 1))]
    assert set(t) == {"forward", "backward"} and all(isinstance(v, Timing) for v in t.values())
    assert all(0 <= v.min <= v.median for v in t.values())


def test_timing_is_median_and_minimum():
    assert Timing([3.0, 1.0, 2.0]) == (2.0, 1.0)
    with pytest.raises(ValueError, match="no timed repeats"):
        Timing([])
    with pytest.raises(ValueError, match="repeats=0"):
        time_round_robin({"f": lambda: None}, repeats=0, warmup=0)
