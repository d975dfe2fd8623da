"""Benchmark of Algorithm 1's simulator (issue targets in the verdict lines).

Run: ``python benchmarks/bench_gaussian.py``. Prints ratios measured side by
side in this one process (wall-clock medians over repeats), never absolute
thresholds: the machines are shared and noisy.

1. One round of :func:`perfpriv.gaussian.simulate` at N = 20000, d = 10 vs
   drawing the N x d standard normals alone with numpy (target: <= 1.5x --
   the simulator is bound by random-number generation, not by Python). The
   round cost is measured as the time of a T-round run with the population
   held at the cap (r > q, large noise: nobody leaks), divided by T, so
   argument checks and result allocation are included but spread over the
   rounds of a realistic run.
2. ``simulate`` vs ``simulate_agents`` at N = 2000 (target: >= 100x faster).
   The ceiling printed below it is the ratio of ``simulate_agents`` to the
   N x d normals alone: no simulator that draws the records can beat it.
"""

from __future__ import annotations


import numpy as np

from perfpriv import gaussian
from _timing import median_seconds

N_BIG, D = 20000, 10
# r > q and a large noise scale: no one leaks, the population stays at the cap
HOLD = dict(gamma=20.0, tau=0.02, q=0.1, r=0.5, d=D, R=10.0)


def main():
    T = 20
    run = gaussian.simulate(T=T, n0=N_BIG, trials=1, cap=N_BIG, seed=0, **HOLD)
    assert np.all(run.population == N_BIG), "population must stay at the cap for this benchmark"
    rng = np.random.default_rng(0)
    per_round = median_seconds(lambda: gaussian.simulate(T=T, n0=N_BIG, trials=1, cap=N_BIG, seed=1, **HOLD),
                               15) / T
    draws = median_seconds(lambda: rng.standard_normal((N_BIG, D)), 15 * T)
    ratio = per_round / draws
    print(f"[1] one Algorithm 1 round vs N*d normals alone (N={N_BIG}, d={D}): round {per_round * 1e3:.2f} ms, "
          f"normals {draws * 1e3:.2f} ms -> ratio {ratio:.2f} (target <= 1.5): "
          f"{'PASS' if ratio <= 1.5 else 'FAIL'}")

    n, T2, trials = 2000, 10, 2
    kw = dict(T=T2, n0=n, trials=trials, cap=n, **HOLD)
    fast = median_seconds(lambda: gaussian.simulate(seed=2, **kw), 30)
    slow = median_seconds(lambda: gaussian.simulate_agents(seed=2, **kw), 3)
    speedup = slow / fast
    print(f"[2] simulate vs simulate_agents, N={n}, d={D}, T={T2}, trials={trials}: fast {fast * 1e3:.2f} ms, "
          f"agents {slow * 1e3:.0f} ms -> {speedup:,.0f}x faster (target >= 100x): "
          f"{'PASS' if speedup >= 100 else 'FAIL'}")
    # ceiling of [2]: a simulator that did nothing but draw its N x d normals
    normals = median_seconds(lambda: [rng.standard_normal((n, D)) for _ in range(T2 * trials)], 30)
    print(f"    ceiling: the {T2 * trials} rounds' N*d normals alone take {normals * 1e3:.2f} ms, "
          f"{slow / normals:,.0f}x less than simulate_agents ({slow / (n * T2 * trials) * 1e6:.1f} us per agent "
          f"vs {normals / (n * T2 * trials) * 1e6:.2f} us of normals per record)")


if __name__ == "__main__":
    main()
