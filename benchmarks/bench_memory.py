"""Peak memory of a paper-scale run of Algorithm 1 (issue target in the verdict line).

Run: ``python benchmarks/bench_memory.py``. Runs, each in a fresh subprocess,
:func:`perfpriv.engine.simulate` of a :class:`perfpriv.gaussian.GaussianMean`
at the paper's scale -- cap 20000, d = 10, 30 trials, T = 50 -- with the
population held at the cap for the whole run
(N_0 = cap, r > q and a large noise scale, so nobody leaks: the worst case for
memory), and reads the peak resident set size with ``resource.getrusage``.
Both draws are measured (the default ``"projected"`` and ``"records"``).
The same measurement of a subprocess that only imports perfpriv and numpy is
printed beside it (the interpreter and libraries alone). Target: peak below
500 MB -- trials must not all be held in memory at once.
"""

from __future__ import annotations

import subprocess
import sys

CAP, D, TRIALS, T = 20000, 10, 30, 50

_CHILD = """
import resource, sys, time
import numpy as np
from perfpriv import behaviour, engine, gaussian
from perfpriv.engine import Policy
start = time.perf_counter()
if sys.argv[1] != "import":
    run = engine.simulate(gaussian.GaussianMean(20.0, tau=0.02, d={d}, R=10.0, draw=sys.argv[1]),
                          behaviour.Memoryless(q=0.1, r=0.5), T={T}, n0={cap}, trials={trials},
                          policy=Policy(cap={cap}), seed=0)
    assert int(run.population.min()) == {cap}, "the population must stay at the cap"
seconds = time.perf_counter() - start
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, seconds)
"""


def peak_mb(mode):
    code = _CHILD.format(T=T, cap=CAP, d=D, trials=TRIALS)
    out = subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, check=True).stdout
    kb, seconds = out.split()
    return int(kb) / 1024, float(seconds)  # ru_maxrss is in KiB on Linux


def main():
    base, _ = peak_mb("import")
    for k, method in enumerate(("projected", "records"), start=1):
        peak, seconds = peak_mb(method)
        print(f"[{k}] peak RSS, Algorithm 1 ({method}) at paper scale (cap={CAP}, d={D}, trials={TRIALS}, T={T}, "
              f"population at the cap; {seconds:.1f} s): {peak:.0f} MB vs {base:.0f} MB for the imports alone "
              f"(+{peak - base:.0f} MB) (target < 500 MB): {'PASS' if peak < 500 else 'FAIL'}")


if __name__ == "__main__":
    main()
