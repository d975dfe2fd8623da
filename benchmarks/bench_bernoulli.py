"""Benchmark of the Bernoulli simulators (issue targets in the verdict lines).

Run: ``python benchmarks/bench_bernoulli.py``. Prints ratios measured side by
side in this one process (wall-clock medians over repeats), never absolute
thresholds: the machines are shared and noisy.

1. ``simulate`` vs ``simulate_agents`` at n0 = 20000, T = 50, with the paper's
   30 trials (target: >= 1000x faster).
2. ``simulate`` at n0 = 20000 vs n0 = 100, same T and trials (target: ratio
   <= 1.5 -- the cost must not grow with the population).
3. ``simulate(T=100000, n0=10)`` (one long run of a small population) against
   numpy's 3T binomials drawn in one call (target: ratio <= 100).
4. One Bernoulli ε* map cell (30 ε × 10 trials, T = 200, n0 = 400, the authors'
   conventions) with ``optimize.optimal_epsilon`` against the published
   script's method (re-implemented from its description, not copied: a Python
   loop over ε, trials and rounds, every user's answer drawn with numpy), for
   a growing, a shrinking and a balanced cell (target: >= 10x faster).

``--quick`` uses fewer repeats.
"""

from __future__ import annotations

import sys

import numpy as np

from perfpriv import bernoulli, optimize
from _timing import median_seconds

QUICK = "--quick" in sys.argv

# r > q and strong privacy: the population stays at the cap (20000) throughout
COMMON = dict(q=0.3, r=0.6, model="leak", cap=20000)


def main():
    eps = 0.5
    # the paper's 30 trials; few rounds, since the reference costs ~N x trials per round
    T_agents, trials_agents = 50, 30
    fast = median_seconds(lambda: bernoulli.simulate(eps, T=T_agents, n0=20000, trials=trials_agents,
                                                     seed=1, **COMMON), 20)
    slow = median_seconds(lambda: bernoulli.simulate_agents(eps, T=T_agents, n0=20000, trials=trials_agents,
                                                            seed=1, **COMMON), 1)
    speedup = slow / fast
    print(f"[1] simulate vs simulate_agents, n0=20000, T={T_agents}, trials={trials_agents}: "
          f"fast {fast * 1e3:.2f} ms, agents {slow * 1e3:.0f} ms -> {speedup:,.0f}x faster "
          f"(target >= 1000x): {'PASS' if speedup >= 1000 else 'FAIL'}")

    T, trials = 200, 30
    big = median_seconds(lambda: bernoulli.simulate(eps, T=T, n0=20000, trials=trials, seed=2, **COMMON), 15)
    small = median_seconds(lambda: bernoulli.simulate(eps, T=T, n0=100, trials=trials, seed=2, **COMMON), 15)
    ratio = big / small
    print(f"[2] simulate n0=20000 vs n0=100 (T={T}, trials={trials}): {big * 1e3:.1f} ms vs "
          f"{small * 1e3:.1f} ms -> ratio {ratio:.2f} (target <= 1.5): {'PASS' if ratio <= 1.5 else 'FAIL'}")

    long_run()
    for name, (q, r) in {"growing (q=0.01, r=0.99)": (0.01, 0.99), "shrinking (q=0.99, r=0.01)": (0.99, 0.01),
                         "balanced (q=0.5, r=0.5)": (0.5, 0.5)}.items():
        map_cell(name, q, r)


def long_run():
    T = 100_000
    rng = np.random.default_rng(0)
    sim = median_seconds(lambda: bernoulli.simulate(1.0, q=0.3, r=0.6, T=T, n0=10, trials=1, seed=3), 3 if QUICK else 7)
    bare = median_seconds(lambda: rng.binomial(10, 0.6, size=3 * T), 15)
    ratio = sim / bare
    print(f"[3] simulate(T={T}, n0=10) vs numpy's {3 * T} binomials in one call: {sim * 1e3:.0f} ms vs "
          f"{bare * 1e3:.1f} ms -> ratio {ratio:.1f} (target <= 100): {'PASS' if ratio <= 100 else 'FAIL'}")


def published_map_cell(q, r, epsilons, *, trials, T, n0, rng):
    """The published ε* map script's method (from its description): per ε and trial, T − 1 population
    updates from every user's randomized answer (floor 0, cap 20000, a dead trial charged 10), then one
    clipped estimate of μ_T ~ Uniform(0.5, 1)."""
    errors = np.empty((len(epsilons), trials))
    for i, eps in enumerate(epsilons):
        beta = np.tanh(eps / 2) / 2
        for k in range(trials):
            n = n0
            for _ in range(T - 1):
                if n <= 0:
                    break
                leaked = rng.random(n) < 0.5 + beta
                leaves = int(np.sum(leaked & (rng.random(n) < q)))
                joins = int(np.sum(~leaked & (rng.random(n) < r)))
                n = min(20000, max(0, n - leaves + joins))
            if n <= 0:
                errors[i, k] = 10.0
                continue
            mu = rng.uniform(0.5, 1.0)
            x = rng.random(n) < mu
            kept = rng.random(n) < 0.5 + beta
            answers = np.where(kept, x, ~x)
            est = min(max((answers.mean() - 0.5 + beta) / (2 * beta), 0.0), 1.0)
            errors[i, k] = (est - mu) ** 2
    return epsilons[np.argmin(errors.mean(axis=1))]


def map_cell(name, q, r):
    epsilons = np.geomspace(0.01, 20.0, 30)
    trials, T, n0 = 10, 200, 400
    rng = np.random.default_rng(4)
    ours = median_seconds(lambda: optimize.optimal_epsilon(epsilons, q=q, r=r, T=T, n0=n0, trials=trials,
                                                           conventions="authors", seed=5, progress=False),
                          3 if QUICK else 7)
    theirs = median_seconds(lambda: published_map_cell(q, r, epsilons, trials=trials, T=T, n0=n0, rng=rng), 1)
    ratio = theirs / ours
    print(f"[4] eps* map cell vs the published method, {name}, 30 eps x {trials} trials, T={T}: "
          f"{ours * 1e3:.0f} ms vs {theirs * 1e3:.0f} ms -> {ratio:.0f}x faster (target >= 10): "
          f"{'PASS' if ratio >= 10 else 'FAIL'}")


if __name__ == "__main__":
    main()
