"""The projected draw of Algorithm 1's round (perfpriv.projected) against independent truth.

* the reduction Λ > τ  <=>  β > θ, checked record by record on full datasets
  against :func:`perfpriv.leakage.log_likelihood_ratio` (the definition);
* the skip quantile against mpmath's incomplete gamma function;
* the joint law of a round against the records method and the agent
  reference (``engine.simulate_agents``), with tolerances from standard errors --
  including N = 2, where the band's β are perfectly correlated and a draw of
  independent β would be wrong;
* the band's deviation chain (its compiled step) against the deviations of N
  vectors computed directly, its chi-square variates against scipy's law, and
  the bucketed search of the record codes against the binary search;
* the choice of ``method="auto"`` and the errors of ``draw="projected"``.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from perfpriv import engine, keyed
from perfpriv import gaussian as G
from perfpriv import leakage as L
from perfpriv import projected as P
from perfpriv.behaviour import Memoryless

Z_TOL = 4.5


def _rotated(Z, mu, sigma2, eta, rng):
    """Standardized records in a basis whose first axis is η/‖η‖: (a, H)."""
    d = Z.shape[1]
    e = eta / np.linalg.norm(eta)
    Q, _ = np.linalg.qr(np.column_stack([e, rng.standard_normal((d, d - 1))]))
    Q[:, 0] *= np.sign(Q[:, 0] @ e)
    G_std = (Z - mu) / np.sqrt(sigma2)
    return G_std @ Q[:, 0], G_std @ Q[:, 1:]


@pytest.mark.parametrize("statistic", ["paper", "exact"])
@pytest.mark.parametrize("n, d, gamma, tau, sigma2", [
    (300, 12, 2.0, 0.01, 2.5),
    (50, 5, 0.5, 0.02, 1.0),
    (7, 3, 0.1, 0.2, 0.3),
    (2, 4, 0.3, 0.05, 1.0),
    (40, 1, 0.4, 0.03, 0.7),
])
def test_beta_above_theta_is_exactly_the_membership_test(statistic, n, d, gamma, tau, sigma2):
    rng = np.random.default_rng(n * 100 + d)
    mu = np.linspace(-1.0, 1.0, d)
    for _ in range(20):
        Z = mu + np.sqrt(sigma2) * rng.standard_normal((n, d))
        eta = rng.standard_normal(d) * gamma / np.sqrt(n)
        lam = L.log_likelihood_ratio(Z, eta, gamma, R=1e6, statistic=statistic)
        a, H = _rotated(Z, mu, sigma2, eta, rng)
        beta = np.sum((H - H.mean(axis=0)) ** 2, axis=1)
        theta = P.leak_thresholds(a - a.mean(), np.linalg.norm(eta), gamma, tau=tau, d=d, sigma2=sigma2,
                                  statistic=statistic)
        # records within rounding of the threshold could go either way; there are none in practice
        clear = np.abs(lam - tau) > 1e-9 * max(1.0, abs(tau))
        np.testing.assert_array_equal((beta > theta)[clear], (lam > tau)[clear])


@pytest.mark.parametrize("d", [2, 3, 12, 50])
def test_band_quantile_leaves_two_to_the_minus_64_in_the_tail(d):
    mpmath.mp.dps = 40
    t = P.band_quantile(d)
    tail = mpmath.gammainc(mpmath.mpf(d - 1) / 2, mpmath.mpf(t) / 2, mpmath.inf, regularized=True)
    assert abs(float(tail) / 2.0**-64 - 1) < 1e-8
    assert P.band_quantile(1) == 0.0


def _moments_agree(x, y):
    se = np.hypot(x.std(), y.std()) / np.sqrt(x.size)
    assert abs(x.mean() - y.mean()) < Z_TOL * se, (x.mean(), y.mean(), se)
    # standard deviations: the standard error of a sample s.d. is about s.d./sqrt(2n)
    sd_se = np.hypot(x.std(), y.std()) / np.sqrt(2 * x.size)
    assert abs(x.std() - y.std()) < Z_TOL * sd_se, (x.std(), y.std(), sd_se)


@pytest.mark.parametrize("kw", [
    dict(gamma=1.0, tau=0.02, q=0.3, r=0.4, n0=500, d=12, statistic="paper"),
    dict(gamma=0.2, tau=0.01, q=0.5, r=0.5, n0=300, d=12, statistic="exact"),  # a wide band
    dict(gamma=0.5, tau=0.05, q=0.2, r=0.6, n0=60, d=3, statistic="paper", mu=[1.0, 0.0, -1.0],
         Sigma=np.eye(3) * 2.0),
])
def test_projected_and_records_methods_agree_in_law(kw):
    kw = dict(kw)
    users, n0 = Memoryless(q=kw.pop("q"), r=kw.pop("r")), kw.pop("n0")
    records = engine.simulate(G.GaussianMean(R=30.0, draw="records", **kw), users, T=3, n0=n0, trials=1500, seed=1)
    projected = engine.simulate(G.GaussianMean(R=30.0, draw="projected", **kw), users, T=3, n0=n0, trials=1500, seed=2)
    assert (records.method, projected.method) == ("records", "projected")
    for x, y in [(records.leak_fraction[:, 0], projected.leak_fraction[:, 0]),
                 (records.sq_error[:, 0], projected.sq_error[:, 0]),
                 (records.population[:, -1], projected.population[:, -1])]:
        _moments_agree(np.asarray(x, float), np.asarray(y, float))
        assert stats.ks_2samp(x, y).pvalue > 1e-4


def test_two_records_share_their_beta_exactly_as_in_the_agent_reference():
    # at N = 2 the deviations are opposite, β_1 = β_2: both records are in the band together
    kw = dict(T=1, n0=2, trials=6000)
    gamma, tau = 0.3, 10.0  # small γ, large τ: the β term decides most leaks
    projected = engine.simulate(G.GaussianMean(gamma, tau=tau, d=3, R=50.0, statistic="paper", draw="projected"),
                                Memoryless(q=0.0, r=0.0), seed=3, **kw)
    agents = engine.simulate_agents(G.GaussianMean(gamma, tau=tau, d=3, R=50.0, statistic="paper"),
                                    Memoryless(q=0.0, r=0.0), T=1, n0=2, trials=kw["trials"], seed=4)
    freq = {}
    for value in (0.0, 0.5, 1.0):
        a = np.mean(projected.leak_fraction[:, 0] == value)
        b = freq[value] = np.mean(agents.leak_fraction[:, 0] == value)
        se = np.sqrt((a * (1 - a) + b * (1 - b)) / kw["trials"])
        assert abs(a - b) < Z_TOL * max(se, 1e-3), (value, a, b)
    # the check has teeth: a shortcut drawing β_1, β_2 independently from their
    # (1/2)χ²_2 marginal gets P(exactly one leaks) wrong by many standard errors
    rng = np.random.default_rng(5)
    one = []
    for _ in range(kw["trials"]):
        eta = rng.standard_normal(3) * gamma / np.sqrt(2)
        a = rng.standard_normal(2)
        theta = P.leak_thresholds(a - a.mean(), np.linalg.norm(eta), gamma, tau=tau, d=3)
        one.append(np.count_nonzero(0.5 * rng.chisquare(2, size=2) > theta) == 1)
    shortcut = np.mean(one)
    se = np.sqrt((shortcut * (1 - shortcut) + freq[0.5] * (1 - freq[0.5])) / kw["trials"])
    assert abs(shortcut - freq[0.5]) > 10 * se, (shortcut, freq[0.5], se)


def test_lone_user_round_draws_the_full_record_error():
    run = engine.simulate(G.GaussianMean(3.0, tau=0.05, d=4, R=50.0, draw="projected"), Memoryless(q=0.0, r=0.0), T=1,
                          n0=1, trials=4000, seed=5)
    assert np.all(run.leak_fraction == 1.0)
    err = run.sq_error[:, 0]
    truth = G.mahalanobis_error(3.0, 1, d=4)  # (γ² + 1) d for one record
    assert abs(err.mean() - truth) < Z_TOL * err.std() / np.sqrt(err.size)


def test_auto_uses_projected_only_for_isotropic_sigma_and_negligible_clipping():
    users, kw = Memoryless(q=0.3, r=0.3), dict(T=2, n0=20, trials=2, seed=6)
    assert G.simulate(1.0, tau=0.05, q=0.3, r=0.3, R=10.0, d=3, **kw).method == "projected"
    assert engine.simulate(G.GaussianMean(1.0, tau=0.05, d=3, R=30.0, Sigma=3.0 * np.eye(3)), users,
                           **kw).method == "projected"
    aniso = np.diag([1.0, 2.0, 3.0])
    assert engine.simulate(G.GaussianMean(1.0, tau=0.05, d=3, R=10.0, Sigma=aniso), users, **kw).method == "records"
    assert G.clip_probability(3, 2.0) > P.CLIP_NEGLIGIBLE
    assert G.simulate(1.0, tau=0.05, q=0.3, r=0.3, R=2.0, d=3, **kw).method == "records"
    assert engine.simulate(G.GaussianMean(1.0, tau=0.05, d=3, R=10.0, draw="records"), users, **kw).method == "records"
    agents = engine.simulate_agents(G.GaussianMean(1.0, tau=0.05, d=3, R=10.0), Memoryless(q=0.3, r=0.3), T=2, n0=20,
                                    trials=2, seed=6)
    assert agents.method == "agents"


def test_projected_refuses_what_it_cannot_draw_exactly():
    kw = dict(tau=0.05, d=3)
    with pytest.raises(ValueError, match="draw='projected' is exact only .*Sigma is not isotropic"):
        G.GaussianMean(1.0, R=10.0, Sigma=np.diag([1.0, 2.0, 3.0]), draw="projected", **kw)
    with pytest.raises(ValueError, match="clipped"):
        G.GaussianMean(1.0, R=2.0, draw="projected", **kw)
    with pytest.raises(ValueError, match="draw must be one of"):
        G.GaussianMean(1.0, R=10.0, draw="fast", **kw)


@pytest.mark.parametrize("call, name", [
    (lambda: P.band_quantile(0), "d"),
    (lambda: P.leak_thresholds([0.1], 1.0, 1.0, tau=0.1, d=2), "alpha"),
    (lambda: P.leak_thresholds([0.1, np.nan], 1.0, 1.0, tau=0.1, d=2), "alpha"),
    (lambda: P.leak_thresholds([0.1, -0.1], -1.0, 1.0, tau=0.1, d=2), "eta_norm"),
    (lambda: P.leak_thresholds([0.1, -0.1], 1.0, 0.0, tau=0.1, d=2), "gamma"),
    (lambda: P.leak_thresholds([0.1, -0.1], 1.0, 1.0, tau=0.1, d=2, sigma2=0.0), "sigma2"),
    (lambda: P.draw_round(0, 1.0, tau=0.1, d=2), "n"),
    (lambda: P.draw_round(10, 0.0, tau=0.1, d=2), "gamma"),
    (lambda: P.draw_round(10, 1.0, tau=0.1, d=0), "d"),
    (lambda: P.draw_round(10, 1.0, tau=0.1, d=2, sigma2=-1.0), "sigma2"),
    (lambda: P.draw_round(10, 1.0, tau=-0.1, d=2), "tau"),
    (lambda: P.draw_round(10, 1.0, tau=0.1, d=2, statistic="other"), "statistic"),
])
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_draw_round_is_seeded_and_matches_simulate():
    a = P.draw_round(200, 1.5, tau=0.02, d=6, seed=9)
    assert a == P.draw_round(200, 1.5, tau=0.02, d=6, seed=9)
    assert a != P.draw_round(200, 1.5, tau=0.02, d=6, seed=8)
    # trial k, round t of simulate(seed=s) draws from the key root(s) -> trial k -> round t
    run = engine.simulate(G.GaussianMean(1.5, tau=0.02, d=6, R=50.0, draw="projected"), Memoryless(q=0.3, r=0.6), T=3,
                          n0=200, trials=4, seed=10)
    for k in range(4):
        for t in (1, 2, 3):
            key = keyed.root_key(10).child(k).child(t)
            err, leaked = P.draw_rounds(run.population[k, t - 1], 1.5, key, tau=0.02, d=6)
            assert run.sq_error[k, t - 1] == err and run.leaked[k, t - 1] == leaked


def test_a_round_draws_the_same_numbers_whatever_the_horizon_and_earlier_rounds():
    kw = dict(tau=0.02, q=0.3, r=0.6, n0=200, d=6, R=50.0, trials=5, seed=11)
    short = G.simulate(1.5, T=3, **kw)
    long = G.simulate(1.5, T=8, **kw)
    np.testing.assert_array_equal(long.population[:, :4], short.population)
    np.testing.assert_array_equal(long.sq_error[:, :3], short.sq_error)
    # a round's draws depend on (seed, trial, round, population) only, not on how the
    # population got there: the round-3 release from N users is the same in two histories
    other = G.simulate(1.5, T=3, **dict(kw, q=0.9, r=0.1))
    for k in range(5):
        key = keyed.root_key(11).child(k).child(3)
        for run in (short, other):
            err, leaked = P.draw_rounds(run.population[k, 2], 1.5, key, tau=0.02, d=6)
            assert run.sq_error[k, 2] == err and run.leaked[k, 2] == leaked


@pytest.mark.parametrize("draw", ["projected", "records"])
def test_runs_with_nearby_noise_scales_share_their_random_numbers_round_by_round(draw):
    users, kw = Memoryless(q=0.3, r=0.6), dict(T=12, n0=200, trials=20, seed=12)
    late = slice(6, None)

    def mechanism(g, draw):
        return G.GaussianMean(g, tau=0.02, d=12, R=10.0, draw=draw)

    def late_relative_errors(draw):
        out = []
        for g in (2.0, 2.1):
            run = engine.simulate(mechanism(g, draw), users, **kw)
            # error over its expectation given the round's population: what is left is the draws
            expected = G.mahalanobis_error(g, np.maximum(run.population[:, :-1], 1), d=12)
            out.append((run.sq_error / expected)[:, late].ravel())
        return out, run

    (a, b), run = late_relative_errors(draw)
    assert np.mean(run.population[:, 1:] != engine.simulate(mechanism(2.0, draw), users, **kw).population[:, 1:]) > 0.5
    # the populations drifted apart, yet late rounds still share their draws (keyed streams:
    # the level is not part of the key), for both draws
    assert np.corrcoef(a, b)[0, 1] > 0.9
    # the check has teeth: different seeds give uncorrelated late errors
    other = engine.simulate(mechanism(2.1, draw), users, **dict(kw, seed=13))
    c = (other.sq_error / G.mahalanobis_error(2.1, np.maximum(other.population[:, :-1], 1), d=12))[:, late]
    assert abs(np.corrcoef(a, c.ravel())[0, 1]) < 0.3


@pytest.mark.parametrize("n, d, levels", [(300, 12, 6), (300, 1, 6), (300, 2, 4), (5000, 12, 16), (5000, 12, 3)])
def test_a_level_draws_the_same_round_alone_or_among_levels_of_its_population(n, d, levels):
    # many levels sharing the largest population classify its records on the sorted a's, a level
    # alone (or among few) by a direct pass; both must give the same numbers bit for bit, as must a
    # level with a smaller population in a group whose largest population draws more a's
    gammas = np.geomspace(0.05, 20.0, levels)
    for seed in range(3):
        key = keyed.root_key(seed).child(1).child(2)
        for statistic in ("paper", "exact"):
            kw = dict(tau=0.02, d=d, statistic=statistic)
            err, leaked = P.draw_rounds(np.full(levels, n), gammas, key, **kw)
            assert leaked.sum() > 0
            for j, g in enumerate(gammas):
                alone = P.draw_rounds(n, g, key, **kw)
                assert (err[j], leaked[j]) == alone
            mixed = np.full(levels, n)
            mixed[0] = n // 3
            err_m, leaked_m = P.draw_rounds(mixed, gammas, key, **kw)
            assert (err_m[0], leaked_m[0]) == P.draw_rounds(n // 3, gammas[0], key, **kw)
            assert np.array_equal(err_m[1:], err[1:]) and np.array_equal(leaked_m[1:], leaked[1:])


@pytest.mark.parametrize("n, d", [(300, 12), (300, 2), (5000, 6), (40, 1)])
def test_a_level_draws_the_same_band_alone_and_among_levels_that_add_ends(n, d):
    # the records' codes depend on every level's interval ends: a level alone (4 ends) and among 11 others
    # of other populations and noise levels (up to 48 ends, shared records) must give the same leaks,
    # error and band (the number of normals drawn counts the band's records)
    from perfpriv._kernels import gaussian_mean as K
    purposes = np.array([keyed.purpose_hashes(p) for p in K.PURPOSES], dtype=np.uint64)
    others_g = np.geomspace(0.05, 5.0, 11)
    others_n = np.maximum(2, (n * np.linspace(0.3, 1.0, 11)).astype(np.int64))
    for seed in range(4):
        key = keyed.root_key(seed).child(3)
        a, b = key.a[()], key.b[()]
        for gamma in (0.1, 0.5, 2.0):
            params = P.kernel_params(tau=0.02, d=d)
            err1, leak1 = np.empty(1), np.empty(1, dtype=np.int64)
            drawn1 = K.group_round(params, np.array([gamma]), np.array([n], dtype=np.int64), a, b, purposes,
                                   True, err1, leak1)
            gammas = np.concatenate([[gamma], others_g])
            users = np.concatenate([[n], others_n]).astype(np.int64)
            err, leak = np.empty(12), np.empty(12, dtype=np.int64)
            K.group_round(params, gammas, users, a, b, purposes, True, err, leak)
            assert (err[0], leak[0]) == (err1[0], leak1[0])
            if d > 1:
                assert drawn1 > n + 2 * d      # the band is not empty: the check has teeth


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-6, 6), min_size=4, max_size=4), st.lists(st.booleans(), min_size=2, max_size=2),
       st.lists(st.integers(-8, 8), min_size=1, max_size=30), st.integers(0, 8))
def test_record_codes_decide_every_predicate_of_a_level_as_the_comparisons_do(picks, nan_inner, xs, extra):
    # codes 2·#(ends < x) + [x is an end]: the band lo1 < x < hi1 and not lo2 < x < hi2 as runs of codes,
    # and the sure leaks x <= lo1 or x >= hi1, agree with the comparisons, ties with an end included
    from perfpriv._kernels import gaussian_mean as K
    lo1, hi1 = sorted(picks[:2])
    lo2, hi2 = sorted(picks[2:])
    lo2, hi2 = (np.nan if nan_inner[0] else lo2 / 2), (np.nan if nan_inner[1] else hi2 / 2)
    ends = np.full((2, 4), np.nan)
    ends[0] = (lo1 / 2, hi1 / 2, lo2, hi2)
    ends[1, :2] = (extra / 4 - 1.0, extra / 4)          # another level's ends between them
    E = K._sorted_ends(ends, np.array([True, True]))
    runs = np.zeros((2, 2), dtype=np.int64)
    k = K._band_runs(E, lo1 / 2, hi1 / 2, lo2, hi2, runs)
    open_range = K._code_range(E, lo1 / 2, hi1 / 2, False)
    closed_range = K._code_range(E, lo1 / 2, hi1 / 2, True)
    for x in np.array(xs) / 4.0:
        c = K._end_code(E, x)
        in_band = any(runs[r, 0] <= c <= runs[r, 1] for r in range(k))
        inner = lo2 < x < hi2
        assert in_band == (lo1 / 2 < x < hi1 / 2 and not inner)
        assert (open_range[0] <= c <= open_range[1]) == (lo1 / 2 < x < hi1 / 2)
        assert (closed_range[0] <= c <= closed_range[1]) == (lo1 / 2 <= x <= hi1 / 2)



# ----------------------------------------------- the band's deviation chain


def _chain(n, m, k, trials, rng, step=None):
    """β of m of n records visited by the compiled chain step, from numpy's u and χ²_{k-1}."""
    from perfpriv._kernels import gaussian_mean as K
    step = step or K.deviation_chain_step
    u = rng.standard_normal((trials, m))
    chi = rng.chisquare(k - 1, size=(trials, m)) if k > 1 else np.zeros((trials, m))
    beta = np.empty((trials, m))
    for t in range(trials):
        state = 0.0
        for j in range(m):
            beta[t, j], state = step(state, float(n - j), u[t, j], chi[t, j])
    return beta


def _direct(n, m, k, trials, rng):
    """|h_i - h̄|² of the first m of n i.i.d. standard normal vectors in R^k."""
    h = rng.standard_normal((trials, n, k))
    return np.sum((h - h.mean(axis=1, keepdims=True)) ** 2, axis=2)[:, :m]


@pytest.mark.parametrize("n, m, k", [(2, 2, 1), (2, 2, 2), (3, 3, 2), (3, 2, 11), (4, 4, 3), (6, 6, 11),
                                     (40, 5, 3)])
def test_deviation_chain_draws_the_joint_law_of_the_deviations(n, m, k):
    # the definition: the squared lengths of the deviations of n i.i.d. normal vectors from their mean;
    # a full visit (m = n) sums to exactly chi2_{(n-1)k}
    trials = 6000
    chain = _chain(n, m, k, trials, np.random.default_rng(10 * n + k))
    direct = _direct(n, m, k, trials, np.random.default_rng(20 * n + k))
    for j in range(m):
        _moments_agree(direct[:, j], chain[:, j])
        assert abs(chain[:, j].mean() - (1 - 1 / n) * k) < Z_TOL * chain[:, j].std() / np.sqrt(trials)
    assert stats.ks_2samp(chain.sum(axis=1), direct.sum(axis=1)).pvalue > 1e-4
    if m == n:
        assert stats.kstest(chain.sum(axis=1), stats.chi2((n - 1) * k).cdf).pvalue > 1e-4
    if n == 2:
        assert np.allclose(chain[:, 0], chain[:, 1], rtol=1e-12, atol=1e-12)   # e_2 = -e_1
    if m >= 2:   # the two first records' squared lengths are correlated 1/(n-1)²
        r = np.corrcoef(chain[:, 0], chain[:, 1])[0, 1]
        assert abs(r - 1 / (n - 1) ** 2) < Z_TOL * (1 - r * r) / np.sqrt(trials) + 1e-9, r


def test_deviation_chain_check_has_teeth_against_a_chain_that_forgets_its_state():
    # a step that drops the mean D/n of the next deviation (independent β) fails the full-visit law
    def forgetful(state, remaining, u, chi):
        spread = 1.0 - 1.0 / remaining
        return spread * (u * u + chi), state
    chain = _chain(4, 4, 3, 6000, np.random.default_rng(1), step=forgetful)
    assert stats.kstest(chain.sum(axis=1), stats.chi2(9).cdf).pvalue < 1e-6


@pytest.mark.parametrize("k", [0, 1, 2, 3, 10, 11, 40, 71])
def test_chi_square_variates_follow_the_chi_square_law(k):
    # -2 log of a product of k // 2 uniforms (logged every 16), plus a squared normal for odd k;
    # 40 and 71 cross the 16-factor blocks
    from perfpriv._kernels import gaussian_mean as K
    from perfpriv._kernels.streams import stream_increment
    key = keyed.root_key(k).child("chi")
    a, g = np.uint64(key.a[()]), np.uint64(stream_increment(key.b[()]))
    per = (k + 1) // 2
    x = np.array([K.chi_square(a, g, i * max(per, 1), k) for i in range(8000)])
    if k == 0:
        assert np.all(x == 0.0)
        return
    assert stats.kstest(x, stats.chi2(k).cdf).pvalue > 1e-4
    assert abs(x.mean() - k) < Z_TOL * np.sqrt(2 * k / x.size)
    assert K.numbers_per_band_record(k + 2) == math.ceil((k + 2) / 2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(-12, 12), st.sampled_from([-8.0, 8.0, 0.0, -7.9375, 7.999999999999999])),
                min_size=0, max_size=40),
       st.lists(st.one_of(st.floats(-12, 12), st.sampled_from([np.inf, -np.inf, 8.0, -8.0])), min_size=1,
                max_size=20), st.booleans())
def test_bucketed_record_codes_equal_the_binary_search(ends, xs, use_ends):
    # the kernel codes records by searching only their bucket's ends; the codes must be those of the
    # binary search over all sorted ends (ties with an end, values beyond the grid, infinities included)
    from perfpriv._kernels import gaussian_mean as K
    E = np.unique(np.array(ends, dtype=float))
    first = K._bucket_first_ends(E)
    for x in (list(E) if use_ends else []) + xs:
        assert K._bucket_end_code(E, first, x, K.fine_bucket_of(x)) == K._end_code(E, x), (E, x)
        assert K.bucket_of_fine(K.fine_bucket_of(x)) == K.bucket_of(x)
    buckets = [K.bucket_of(v) for v in sorted(xs)]
    assert buckets == sorted(buckets)          # the grid is monotone

# ----------------------------------------------- the projected draw over the whole range of doubles


def _theta_reference(alpha, eta_norm, gamma, tau, d, n, statistic):
    """θ(α) = k0 − α(α + k1) at 60 digits from the coefficients of eq. 8 (A, B, C of llr_coefficients)."""
    E, G, T, N = (mpmath.mpf(x) for x in (eta_norm, gamma, tau, n))
    g2 = 2 * G**2
    if statistic == "paper":
        A, B, C = N / ((N - 1) ** 2 * g2), 2 * N / ((N - 1) * g2), 0
    else:
        A, B, C = 1 / ((N - 1) * g2), 2 / g2, mpmath.mpf(d) / 2 * mpmath.log(N / (N - 1)) - E**2 / g2
    return [(T - C) / A - mpmath.mpf(a) * (mpmath.mpf(a) + B / A * E) for a in alpha]


@pytest.mark.usefixtures("mp60")
@pytest.mark.parametrize("statistic", ["paper", "exact"])
@pytest.mark.parametrize("eta_norm, gamma", [(1e300, 1.0), (1e-300, 1e-300), (1.0, 1e150), (1e100, 1e100),
                                             (0.3, 1.0)])
def test_leak_thresholds_survive_the_whole_range(statistic, eta_norm, gamma):
    # issue 16: ‖η‖ = 1e300 raised OverflowError (a Python float squared)
    alpha = [0.1, -0.1]
    got = P.leak_thresholds(alpha=alpha, eta_norm=eta_norm, gamma=gamma, tau=0.02, d=3, statistic=statistic)
    want = _theta_reference(alpha, eta_norm, gamma, 0.02, 3, 2, statistic)
    for g, w in zip(got, want):
        if abs(w) > 1e308:
            assert g == (math.inf if w > 0 else -math.inf)
        else:
            assert g == pytest.approx(float(w), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("gamma", [1e-300, 1e300])
def test_projected_draw_round_at_extreme_noise(gamma):
    err, leaked = P.draw_round(n=100, gamma=gamma, tau=0.02, d=3, seed=0)
    if gamma < 1:   # no noise: every record off the mean leaks, the error is the sampling error
        assert leaked == 100 and 0.0 < err < 1.0
    else:           # all noise: no record leaks, the squared error is infinite (a value, not a failure)
        assert leaked == 0 and err == math.inf


def test_draw_rounds_refuses_bad_populations_levels_and_keys_by_name():
    keys = keyed.root_key(0).child(np.arange(3))
    with pytest.raises(ValueError, match=r"^n is too large"):       # was numpy's MemoryError inside the kernel
        P.draw_rounds([10**12, 1000, 1], 2.0, keys, tau=0.02, d=3)
    for bad in ([-1, 10, 10], [1.5, 10, 10], [np.nan, 10, 10]):
        with pytest.raises(ValueError, match=r"^n must (hold integers >= 0|be a number)"):
            P.draw_rounds(bad, 2.0, keys, tau=0.02, d=3)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match=r"^gamma must"):
            P.draw_rounds([10, 10, 10], bad, keys, tau=0.02, d=3)
    with pytest.raises(TypeError, match=r"^keys must be a perfpriv.keyed.Key"):
        P.draw_rounds([10, 10, 10], 2.0, 0, tau=0.02, d=3)
    # an integral float d and a population of 0 (skipped) are valid
    err, leaked = P.draw_rounds([1000, 0, 1], 2.0, keys, tau=0.02, d=3.0)
    assert err[1] == 0.0 and leaked[1] == 0 and leaked[2] == 1
    np.testing.assert_array_equal(err, P.draw_rounds([1000, 0, 1], 2.0, keys, tau=0.02, d=3)[0])


def test_a_dimension_no_record_can_hold_is_refused_by_name():
    # issue 32 C: d = 1e12 reached the compiled round and failed there ("Allocation failed")
    keys = keyed.root_key(0).child(np.arange(1))
    for call in (lambda: P.draw_round(100, 2.0, tau=0.02, d=10**12, seed=0),
                 lambda: P.draw_rounds([100], 2.0, keys, tau=0.02, d=10**12)):
        with pytest.raises(ValueError, match="^d is too large"):
            call()
