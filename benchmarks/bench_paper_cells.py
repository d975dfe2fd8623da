"""Target 8 of the compiled kernels: what a paper-scale Fig. 4 or Fig. 5 costs, from a sample of its cells.

Run: ``python benchmarks/bench_paper_cells.py [--figure 4|5] [--cells K]``.
Times K cells of the figure's (τ, q, r) grid (a seeded random sample: growing,
balanced and shrinking populations; every γ of the paper and all its trials,
``--scale paper`` settings of :data:`perfpriv.cli.SCALES`), one at a time on
one core, and projects the whole figure at ``--n-jobs 2`` on 2 cores as
cells × mean seconds / 2. Prints the machine's load beside it: the
projection is an absolute time, so it is only as good as the machine was
quiet (the full rerun, ``reproduce --scale paper``, is the figure's
measurement).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from perfpriv import cli, engine
from _timing import paper_cell

TARGET_MINUTES = {"4": 15, "5": 45}


def sample_cells(number, count):
    """``count`` (tau, q, r) cells of the figure's grid, drawn without replacement with a fixed seed."""
    s = cli.SCALES["paper"]["gamma_maps"]
    qs = s["qs_fig4"] if number == "4" else s["qs"]
    grid = [(tau, float(q), float(r)) for tau in cli.TAUS[number] for q in qs for r in s["rs"]]
    pick = np.sort(np.random.default_rng(2026).choice(len(grid), size=min(count, len(grid)), replace=False))
    return [grid[k] for k in pick], len(grid)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figure", choices=("4", "5"), default="4")
    parser.add_argument("--cells", type=int, default=12)
    args = parser.parse_args()
    s = cli.SCALES["paper"]["gamma_maps"]
    engine.compile_kernels()
    cells, total = sample_cells(args.figure, args.cells)
    seconds = []
    for tau, q, r in cells:
        start = time.perf_counter()
        paper_cell(s, tau, q, r)
        seconds.append(time.perf_counter() - start)
        print(f"  tau={tau:<5} q={q:.3f} r={r:.3f}: {seconds[-1]:6.2f} s")
    mean = float(np.mean(seconds))
    minutes = total * mean / 2 / 60
    target = TARGET_MINUTES[args.figure]
    print(f"load average {os.getloadavg()[0]:.1f}; {len(cells)} of {total} cells, mean {mean:.2f} s a cell")
    print(f"[8] Fig. {args.figure} at --n-jobs 2 projected: {minutes:.0f} min (target <= {target} min): "
          f"{'PASS' if minutes <= target else 'FAIL'}")


if __name__ == "__main__":
    main()
