"""Benchmark of the Bernoulli simulators (issue targets in the verdict lines).

Run: ``python benchmarks/bench_bernoulli.py``. Prints ratios measured side by
side in this one process (wall-clock medians over repeats), never absolute
thresholds: the machines are shared and noisy.

1. ``engine.simulate`` vs the agent reference ``engine.simulate_agents`` on one
   model (a ``RandomizedResponse`` and the paper's ``Memoryless`` users) at
   n0 = 20000, T = 50, with the paper's 30 trials (target: >= 1000x faster).
2. ``engine.simulate`` at n0 = 20000 vs n0 = 100, same model, T and trials
   (target: ratio <= 1.5 -- the cost must not grow with the population).
3. ``simulate(T=100000, n0=10)`` (one long run of a small population) against
   numpy's 3T binomials drawn in one call (target: ratio <= 100).

The Bernoulli ε* map cell against the published script's method is
``bench_engine.py`` [5].

``--quick`` uses fewer repeats.
"""

from __future__ import annotations

import sys

import numpy as np

from perfpriv import bernoulli, engine
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy
from _timing import median_seconds

QUICK = "--quick" in sys.argv

# r > q and strong privacy: the population stays at the cap (20000) throughout
MODEL = (bernoulli.RandomizedResponse(0.5), Memoryless(q=0.3, r=0.6, rule="leak"))
COMMON = dict(policy=Policy(cap=20000))


def main():
    # the paper's 30 trials; few rounds, since the reference costs ~N x trials per round
    T_agents, trials_agents = 50, 30
    fast = median_seconds(lambda: engine.simulate(*MODEL, T=T_agents, n0=20000, trials=trials_agents,
                                                  seed=1, **COMMON), 20)
    slow = median_seconds(lambda: engine.simulate_agents(*MODEL, T=T_agents, n0=20000, trials=trials_agents,
                                                         seed=1, **COMMON), 1)
    speedup = slow / fast
    print(f"[1] simulate vs simulate_agents, n0=20000, T={T_agents}, trials={trials_agents}: "
          f"fast {fast * 1e3:.2f} ms, agents {slow * 1e3:.0f} ms -> {speedup:,.0f}x faster "
          f"(target >= 1000x): {'PASS' if speedup >= 1000 else 'FAIL'}")

    T, trials = 200, 30
    big = median_seconds(lambda: engine.simulate(*MODEL, T=T, n0=20000, trials=trials, seed=2, **COMMON), 15)
    small = median_seconds(lambda: engine.simulate(*MODEL, T=T, n0=100, trials=trials, seed=2, **COMMON), 15)
    ratio = big / small
    print(f"[2] simulate n0=20000 vs n0=100 (T={T}, trials={trials}): {big * 1e3:.1f} ms vs "
          f"{small * 1e3:.1f} ms -> ratio {ratio:.2f} (target <= 1.5): {'PASS' if ratio <= 1.5 else 'FAIL'}")

    long_run()


def long_run():
    T = 100_000
    rng = np.random.default_rng(0)
    sim = median_seconds(lambda: bernoulli.simulate(1.0, q=0.3, r=0.6, T=T, n0=10, trials=1, seed=3), 3 if QUICK else 7)
    bare = median_seconds(lambda: rng.binomial(10, 0.6, size=3 * T), 15)
    ratio = sim / bare
    print(f"[3] simulate(T={T}, n0=10) vs numpy's {3 * T} binomials in one call: {sim * 1e3:.0f} ms vs "
          f"{bare * 1e3:.1f} ms -> ratio {ratio:.1f} (target <= 100): {'PASS' if ratio <= 100 else 'FAIL'}")


if __name__ == "__main__":
    main()
