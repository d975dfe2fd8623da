"""What the compiled kernels cost to compile, and what a cached start costs (targets: <= 30 s and <= 2 s).

Run: ``python benchmarks/bench_compile.py``.

Each measurement is a fresh Python process that imports perfpriv and makes
the first call of every compiled path a chapter uses (a randomized-response
run, a Gaussian-mechanism run, the keyed samplers):

1. *cold*: numba's cache directory points at an empty temporary folder
   (``NUMBA_CACHE_DIR``), so every kernel is compiled;
2. *cached*: the same process again with the cache the cold run wrote
   (what a reader meets after ``binder/postBuild`` or a first chapter).

Both are wall-clock times of the whole process (interpreter start and
imports included), best of ``--repeats`` runs (default 3).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

FIRST_CALLS = """
import numpy as np
from perfpriv import behaviour, bernoulli, engine, gaussian, keyed
engine.simulate(bernoulli.RandomizedResponse([0.5, 2.0]), behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=50, trials=2, seed=0)
gaussian.simulate(2.0, q=0.3, r=0.6, tau=0.02, d=12, R=10.0, T=3, n0=200, trials=2, seed=0)
key = keyed.root_key(0).child(np.arange(3))
keyed.binomial(key, 100, 0.3); keyed.hypergeometric(key, 5, 5, 4); key.normal(4)
"""


def _run(cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", FIRST_CALLS], check=True, env=env)
    return time.perf_counter() - start


def main():
    repeats = int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv else 3
    cold, cached = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache_dir:
            cold.append(_run(cache_dir))
            cached.append(_run(cache_dir))
    print(f"load average {os.getloadavg()[0]:.1f}; best of {repeats}")
    print(f"first call of every kernel, nothing cached (compile): {min(cold):.1f} s "
          f"(target <= 30 s): {'PASS' if min(cold) <= 30 else 'FAIL'}")
    print(f"import and first call, kernels cached: {min(cached):.2f} s "
          f"(target <= 2 s): {'PASS' if min(cached) <= 2 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
