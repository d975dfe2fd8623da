"""Benchmark of Algorithm 1's simulator (issue targets in the verdict lines).

Run: ``python benchmarks/bench_gaussian.py``. Prints ratios measured side by
side in this one process (wall-clock medians over repeats), never absolute
thresholds: the machines are shared and noisy.

1. One round of :func:`perfpriv.engine.simulate` with a
   :class:`perfpriv.gaussian.GaussianMean` and the paper's users at N = 20000,
   d = 10 vs drawing the N x d standard normals alone with numpy (target:
   <= 1.5x -- the simulator is bound by random-number generation, not by
   Python), for both ways of drawing a round: ``draw="records"`` (the N x d
   records) and the default's ``"projected"`` (about one normal per record,
   :mod:`perfpriv.projected`). The round cost is the time of a T-round run
   with the population held at the cap (r > q, large noise: nobody leaks),
   divided by T, so argument checks and result allocation are included but
   spread over the rounds of a realistic run.
2. ``engine.simulate`` (default draw) vs the agent reference
   ``engine.simulate_agents`` on the same model at N = 2000, d = 10, same
   setting (target: >= 100x faster); the records draw and its
   ceiling (a simulator that did nothing but draw the N x d normals) for
   comparison.
3. The same ratio where leaks are frequent (population held at N = 2000 by
   q = r = 0, τ = 0.02): for small γ the squared-length term of Λ decides
   many records and the projected draw must draw their other d − 1
   coordinates (its "band"), so the ratio shrinks. Printed, no target.
"""

from __future__ import annotations

import numpy as np

from perfpriv import engine, gaussian
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy
from _timing import median_seconds

N_BIG, D = 20000, 10


def _model(gamma, *, q, r, draw="auto"):
    """The mechanism (τ = 0.02, d = D, R = 10) and the paper's users of a run."""
    return gaussian.GaussianMean(gamma, tau=0.02, d=D, R=10.0, draw=draw), Memoryless(q=q, r=r)


# r > q and a large noise scale: no one leaks, the population stays at the cap
HOLD = dict(gamma=20.0, q=0.1, r=0.5)


def _verdict(ok):
    return "PASS" if ok else "FAIL"


def round_vs_normals(rng):
    T = 20
    draws = median_seconds(lambda: rng.standard_normal((N_BIG, D)), 15 * T)
    for method in ("records", "projected"):
        model = _model(draw=method, **HOLD)
        run = engine.simulate(*model, T=T, n0=N_BIG, trials=1, policy=Policy(cap=N_BIG), seed=0)
        assert np.all(run.population == N_BIG), "population must stay at the cap for this benchmark"
        per_round = median_seconds(lambda: engine.simulate(*model, T=T, n0=N_BIG, trials=1,
                                                           policy=Policy(cap=N_BIG), seed=1), 15) / T
        ratio = per_round / draws
        print(f"[1] one Algorithm 1 round ({method}) vs N*d normals alone (N={N_BIG}, d={D}): "
              f"round {per_round * 1e3:.2f} ms, normals {draws * 1e3:.2f} ms -> ratio {ratio:.2f} "
              f"(target <= 1.5): {_verdict(ratio <= 1.5)}")


def simulate_vs_agents(rng):
    n, T2, trials = 2000, 10, 2
    model, kw = _model(**HOLD), dict(T=T2, n0=n, trials=trials, policy=Policy(cap=n))
    fast = median_seconds(lambda: engine.simulate(*model, seed=2, **kw), 30)
    records = median_seconds(lambda: engine.simulate(*_model(draw="records", **HOLD), seed=2, **kw), 30)
    slow = median_seconds(lambda: engine.simulate_agents(*model, seed=2, **kw), 3)
    method = engine.simulate(*model, seed=2, **kw).method
    print(f"[2] simulate ({method}, the default) vs simulate_agents, N={n}, d={D}, T={T2}, trials={trials}: "
          f"fast {fast * 1e3:.2f} ms, agents {slow * 1e3:.0f} ms -> {slow / fast:,.0f}x faster "
          f"(target >= 100x): {_verdict(slow / fast >= 100)}")
    normals = median_seconds(lambda: [rng.standard_normal((n, D)) for _ in range(T2 * trials)], 30)
    print(f"    records method: {records * 1e3:.2f} ms -> {slow / records:,.0f}x; its ceiling (the "
          f"{T2 * trials} rounds' N*d normals alone, {normals * 1e3:.2f} ms) is {slow / normals:,.0f}x "
          f"({slow / (n * T2 * trials) * 1e6:.1f} us per agent vs {normals / (n * T2 * trials) * 1e6:.2f} us "
          f"of normals per record)")


def frequent_leaks():
    n, T2, trials = 2000, 10, 2
    for gamma in (0.2, 1.0, 5.0):
        model, kw = _model(gamma, q=0.0, r=0.0), dict(T=T2, n0=n, trials=trials, policy=Policy(cap=n))
        fast = median_seconds(lambda: engine.simulate(*model, seed=3, **kw), 20)
        slow = median_seconds(lambda: engine.simulate_agents(*model, seed=3, **kw), 3)
        leak = engine.simulate(*model, seed=3, **kw).leak_fraction.mean()
        print(f"[3] gamma={gamma:g} (leak fraction {leak:.2f}), N={n}: simulate {fast * 1e3:.2f} ms, "
              f"agents {slow * 1e3:.0f} ms -> {slow / fast:,.0f}x faster")


def main():
    rng = np.random.default_rng(0)
    round_vs_normals(rng)
    simulate_vs_agents(rng)
    frequent_leaks()


if __name__ == "__main__":
    main()
