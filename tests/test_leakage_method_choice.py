"""marginal_leak_probability(method="auto") chooses by cost as well as accuracy (issue 16).

A scalar call at n = 1.6e7, d = 3, R = 5 took 50 s because "auto" picked a
Monte Carlo of 20 datasets x 1.6e7 records; the quadrature answers it in
milliseconds with an error below the per-record clip probability (1.5e-5).
"""

import numpy as np
import pytest
from scipy import special

from perfpriv import leakage


def test_a_costly_monte_carlo_gives_way_to_the_quadrature_when_clipping_is_rare():
    res = leakage.marginal_leak_probability(1.6e7, 1.0, tau=0.02, d=3, R=5.0)
    assert res.method == "quadrature" and res.se == 0.0
    assert res.p == leakage.marginal_leak_probability(1.6e7, 1.0, tau=0.02, d=3, R=1e3).p  # no clipping at all


def test_the_fallback_is_as_accurate_as_its_bound_against_monte_carlo(monkeypatch):
    # R with a per-record clip probability near CLIP_FALLBACK; the budget lowered so that a small n
    # takes the fallback, and the Monte Carlo (the truth, clipping included) stays cheap
    d, R, n = 3, 4.1, 400
    p_clip = float(special.chdtrc(d, R * R))
    assert 2e-4 < p_clip < leakage.CLIP_FALLBACK
    gammas = np.array([0.5, 1.0, 2.0])
    mc = leakage.marginal_leak_probability(np.full(3, n), gammas, tau=np.full(3, 0.02), d=d, R=R,
                                           method=leakage.Integration("montecarlo", samples=400_000, seed=0))
    assert mc.method == "montecarlo"
    monkeypatch.setattr(leakage, "MONTECARLO_BUDGET", 1_000)
    auto = leakage.marginal_leak_probability(np.full(3, n), gammas, tau=np.full(3, 0.02), d=d, R=R)
    assert auto.method == "quadrature"
    # the documented bound: |quadrature - truth| <= P(||z|| > R), plus the Monte Carlo's own error
    assert np.all(np.abs(auto.p - mc.p) <= p_clip + 4 * mc.se), (auto.p, mc.p, mc.se, p_clip)


def test_frequent_clipping_keeps_the_monte_carlo_or_refuses_a_dataset_too_large():
    assert leakage.marginal_leak_probability(50, 1.0, tau=0.02, d=3, R=1.0, method=leakage.Integration(samples=2000, seed=0)).method \
        == "montecarlo"
    with pytest.raises(ValueError, match=r"n must be at most .* P\(\|\|z\|\| > R\) = 0.801"):
        leakage.marginal_leak_probability(1e9, 1.0, tau=0.02, d=3, R=1.0)


def test_the_monte_carlo_evaluates_lemma_7_exactly_as_leak_probability_does():
    # The Monte Carlo evaluates Lemma 7 at every simulated record for every gamma through an unchecked
    # form (its checks and log-space limits cost 3/4 of a clipped schedule search); it must give the
    # public function's values bit for bit, limits included (s = 0, s/gamma overflowing or underflowing).
    s = np.concatenate([[0.0, 5e-324, 1e-300, 1e-10, 1e300, np.finfo(float).max],
                        np.random.default_rng(0).gamma(2.0, 1.0, 2000)])
    gammas = np.array([1e-300, 1e-5, 0.3, 1.0, 7.0, 1e5, 1e300])
    for n in (2, 3, 50, 20_000):
        for tau in (1e-300, 0.02, 1.0, 1e300):
            got = leakage._paper_leak_unchecked(s[:, None], n, gammas[None, :], tau)
            want = leakage.leak_probability(s[:, None], n, gammas[None, :], tau=tau)
            np.testing.assert_array_equal(got, want)


def test_the_clipped_monte_carlo_is_an_average_of_lemma_7_over_simulated_records():
    # an independent check of the whole Monte Carlo: its datasets regenerated from the same stream
    n, d, R, gammas, tau = 30, 3, 1.0, np.array([0.5, 2.0]), 0.02
    res = leakage.marginal_leak_probability(np.full(2, n), gammas, tau=np.full(2, tau), d=d, R=R,
                                            method=leakage.Integration("montecarlo", samples=3000, seed=5))
    Z = np.random.default_rng(5).standard_normal((100, n, d))      # max(ceil(3000/30), 20) = 100 datasets
    norms = np.linalg.norm(Z, axis=2, keepdims=True)
    Z = Z * np.minimum(1.0, R / norms)
    s = np.linalg.norm(Z - Z.mean(axis=1, keepdims=True), axis=2)
    per_dataset = np.stack([leakage.leak_probability(s, n, g, tau=tau).mean(axis=1) for g in gammas], axis=1)
    np.testing.assert_allclose(res.p, per_dataset.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(res.se, per_dataset.std(axis=0, ddof=1) / 10.0, rtol=1e-9)
