"""import os, sys, time
import numpy as np
from perfpriv import cli, engine
from _timing import paper_cell
s = cli.SCALES["paper"]["gamma_maps"]
engine.compile_kernels()
cells = [(0.02, 0.01, 0.99), (0.02, 0.12, 0.5), (0.05, 0.34, 0.2)]
t0 = time.perf_counter(); c0 = time.process_time()
for tau, q, r in cells:
    paper_cell(s, tau, q, r)
print(os.environ.get("NUMBA_NUM_THREADS"), f"wall {time.perf_counter()-t0:.2f} cpu {time.process_time()-c0:.2f} load {os.getloadavg()[0]:.1f}", flush=True)
"""

from __future__ import annotations

import os
import time


from perfpriv import cli, engine
from _timing import paper_cell

#: (tau, q, r) of three paper-scale Fig. 4 cells: growing to the cap, balanced, shrinking.
CELLS = ((0.02, 0.01, 0.99), (0.02, 0.12, 0.5), (0.05, 0.34, 0.2))


def main():
    s = cli.SCALES["paper"]["gamma_maps"]
    engine.compile_kernels()
    wall, cpu = time.perf_counter(), time.process_time()
    for tau, q, r in CELLS:
        paper_cell(s, tau, q, r)
    print(f"NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS', 'default')}: "
          f"wall {time.perf_counter() - wall:.2f} s cpu {time.process_time() - cpu:.2f} s "
          f"load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
