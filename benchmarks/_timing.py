"""The one timing helper of the benchmark scripts (imported as ``_timing``)."""

import statistics
import time


def median_seconds(fn, repeats):
    """Median wall-clock seconds of ``fn()`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
