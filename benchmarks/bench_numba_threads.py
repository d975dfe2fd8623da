"""Target 8 of the compiled kernels: do numba's threads inside each joblib worker help or hurt?

Run: ``NUMBA_NUM_THREADS=1 python benchmarks/bench_numba_threads.py`` and again with 2,
alone and as two processes side by side (what ``reproduce --n-jobs 2`` does on 2 cores).
Times three paper-scale Fig. 4 cells (30 γ, 50 trials, T = 50, N_0 = 1 000): one that
grows to the cap, one balanced, one that shrinks. Prints wall and CPU seconds and the
load average: the ratio of wall to CPU time is what the threads change.
"""
import os, sys, time
import numpy as np
from perfpriv import cli, kernels, optimize
from perfpriv.engine import Policy
s = cli.SCALES["paper"]["gamma_maps"]
kernels.warm()
cells = [(0.02, 0.01, 0.99), (0.02, 0.12, 0.5), (0.05, 0.34, 0.2)]
t0 = time.perf_counter(); c0 = time.process_time()
for tau, q, r in cells:
    optimize.optimal_gamma_empirical(q=np.array([q]), r=np.array([r]), gammas=s["gammas"], tau=tau, T=s["T"],
        n0=s["n0"], trials=s["trials"], d=s["d"], R=s["R"], policy=Policy(cap=s["cap"]), seed=0, n_jobs=1, progress=False)
print(os.environ.get("NUMBA_NUM_THREADS"), f"wall {time.perf_counter()-t0:.2f} cpu {time.process_time()-c0:.2f} load {os.getloadavg()[0]:.1f}", flush=True)
