"""Regression tests of issue 16 ("Robustness, second pass"), against independent truth.

Each reproducer of the issue that is fixed is a test here: silent wrong answers at
valid extremes (against mpmath at 60 digits, closed forms or the definition), valid
input that failed or warned, and invalid input. The suite runs with
``filterwarnings = error``, so a RuntimeWarning anywhere fails a test.
"""

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perfpriv import _random, bernoulli, dynamics, gaussian, leakage, projected

mp.mp.dps = 60


# --------------------------------------------- clip probability (noncentral χ tail)


def _ref_clip_d3(m, rho):
    """P(‖m e₁ + g‖ > ρ), g ~ N(0, I₃), in closed form at 60 digits.

    The radial density of a noncentral χ₃ is (r/m)(φ(r − m) − φ(r + m)), whose
    integral gives Φ̄(ρ − m) + Φ̄(ρ + m) + (φ(ρ − m) − φ(ρ + m))/m.
    """
    m, rho = mp.mpf(m), mp.mpf(rho)
    phi = lambda x: mp.npdf(x)
    return (1 - mp.ncdf(rho - m)) + (1 - mp.ncdf(rho + m)) + (phi(rho - m) - phi(rho + m)) / m


def _ref_clip_d1(m, rho):
    m, rho = mp.mpf(m), mp.mpf(rho)
    return (1 - mp.ncdf(rho - m)) + (1 - mp.ncdf(rho + m))


@pytest.mark.parametrize("m", [0.5, 10.0, 999.0, 1001.0, 1e5, 1e10, 1e12, 1e16, 1e100])
@pytest.mark.parametrize("offset", [-3.0, -1.0, 0.0, 1.0, 3.0])
def test_clip_probability_matches_the_closed_form_of_the_noncentral_chi_tail(m, offset):
    rho = m + offset
    if rho <= 0 or rho - m != offset:  # not representable at this magnitude
        pytest.skip("offset below the spacing of doubles at this m")
    for d, ref in ((3, _ref_clip_d3), (1, _ref_clip_d1)):
        got = gaussian.clip_probability(d, rho, mu=[m] + [0.0] * (d - 1))
        want = float(ref(m, rho))
        assert math.isfinite(got) and 0.0 <= got <= 1.0
        assert got == pytest.approx(want, rel=1e-9, abs=1e-15), (d, m, rho)


@pytest.mark.parametrize("m", [1e10, 1e200])
def test_clip_probability_far_from_the_ball_is_one_not_nan(m):
    # issue 16: scipy's noncentral χ² tail returns NaN here, which made method="auto" neglect clipping
    assert gaussian.clip_probability(3, 10.0, mu=[m, 0, 0]) == 1.0
    assert gaussian.clip_probability(3, 10.0, mu=[m, 0, 0], Sigma=4.0 * np.eye(3)) == 1.0


def test_clip_probability_isotropic_scale_and_high_dimension():
    # σ² I with σ = 2: the same as the standard case at R/σ and ‖μ‖/σ
    got = gaussian.clip_probability(3, 2.0 * 1e6, mu=[2.0 * (1e6 - 1), 0, 0], Sigma=4.0 * np.eye(3))
    assert got == pytest.approx(float(_ref_clip_d3(1e6 - 1, 1e6)), rel=1e-9)
    # d = 50 at a large mean: ‖z‖² = (m + g₁)² + χ²₄₉, the reference by mpmath quadrature
    m, rho, d = 1e4, 1e4 + 0.5, 50
    got = gaussian.clip_probability(d, rho, mu=[m] + [0.0] * (d - 1))

    def cond(w):
        root = mp.sqrt(rho**2 - w)
        return (1 - mp.ncdf(root - m)) + mp.ncdf(-root - m)

    k = mp.mpf(d - 1) / 2
    dens = lambda w: w ** (k - 1) * mp.exp(-w / 2) / (2**k * mp.gamma(k))
    want = mp.quad(lambda w: cond(w) * dens(w), [0, 20, 49, 80, 200])
    assert got == pytest.approx(float(want), rel=1e-8)


def test_a_clip_probability_far_from_the_ball_selects_no_shortcut():
    # all records clip to (nearly) one point R e₁: the clipped mean is that point, no record leaks
    mu = [1e10, 0.0, 0.0]
    res = leakage.marginal_leak_probability(100, 1.0, tau=0.02, d=3, R=10.0, mu=mu, samples=2000, seed=0)
    assert res.method == "montecarlo" and res.p == 0.0
    # then C = (1 - p q)(1 + r (1 - p)) = 1 + r exactly
    g = dynamics.growth_factor(1.0, tau=0.02, q=0.3, r=0.6, n=100, d=3, R=10.0, mu=mu, samples=2000, seed=0)
    assert g == pytest.approx(1.6, abs=1e-12)
    assert gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0, mu=mu).draw_method == "records"


# ------------------------------------------------ the Rényi bound stays a bound


_pos = st.floats(min_value=-300.0, max_value=300.0).map(lambda e: 10.0**e)
_n = st.floats(min_value=0.0, max_value=300.0).map(lambda e: 1.0 + 10.0**e)


@settings(derandomize=True, max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=_pos, n=_n, gamma=_pos, tau=_pos)
def test_renyi_bound_is_at_least_the_exact_leak_probability_over_the_whole_range(s, n, gamma, tau):
    exact = float(leakage.leak_probability(s, n, gamma, tau=tau))
    bound = float(leakage.renyi_tail_bound(s, n, gamma, tau=tau))
    assert 0.0 <= exact <= 1.0 and 0.0 <= bound <= 1.0
    assert bound >= exact
    for alpha in (1.5, 2.0, 10.0):
        assert float(leakage.renyi_tail_bound(s, n, gamma, tau=tau, alpha=alpha)) >= exact
    order = float(leakage.optimal_renyi_order(s, n, gamma, tau=tau))
    assert order >= 0.5  # 1/2 + τ/(2a) (rounds to 1/2 for a ≫ τ)


def test_renyi_bound_where_a_underflows_matches_mpmath():
    # issue 16: a = n s²/(2γ²(n−1)²) = 1e-590 underflows; the bound exp(−(τ−a)²/(4a)) is ≈ 1
    s, n, gamma, tau = 1e-300, 2, 1e-5, 1e-300
    S, N, G, T = (mp.mpf(x) for x in (s, n, gamma, tau))
    a = N * S**2 / (2 * G**2 * (N - 1) ** 2)
    want_bound = mp.exp(-((T - a) ** 2) / (4 * a))
    mu = mp.sqrt(N) * S / (G * (N - 1))
    want_exact = 1 - mp.ncdf(T / mu - mu / 2)
    assert float(leakage.leak_probability(s, n, gamma, tau=tau)) == pytest.approx(float(want_exact), rel=1e-12)
    assert float(leakage.renyi_tail_bound(s, n, gamma, tau=tau)) == pytest.approx(float(want_bound), rel=1e-12)
    assert float(leakage.optimal_renyi_order(s, n, gamma, tau=tau)) == pytest.approx(
        float(mp.mpf(0.5) + T / (2 * a)), rel=1e-12)


# ---------------------------------------------------- critical thresholds


@pytest.mark.parametrize("q", [1e-300, 1e-17, 1e-16, 1e-8, 0.1, 0.3, 0.4999])
def test_critical_epsilon_is_ln_r_over_q(q):
    # leak model: β_c = (r − q)/(2(q + r)), so ε_c = 2 artanh(2β_c) = ln(r/q)
    r = 0.5
    want = float(mp.log(mp.mpf(r) / mp.mpf(q)))
    assert bernoulli.critical_epsilon(q=q, r=r) == pytest.approx(want, rel=1e-14)


@pytest.mark.parametrize("q, r", [(0.6, 0.4), (0.6, 0.31), (1e-300, 0.6e-300), (0.5, 0.25 + 1e-12)])
def test_critical_epsilon_agnostic_is_ln_r_over_q_minus_r(q, r):
    # agnostic model: β_c = r/q − 1/2, so ε_c = ln(r/(q − r)) for q/2 < r < q
    want = float(mp.log(mp.mpf(r) / (mp.mpf(q) - mp.mpf(r))))
    assert bernoulli.critical_epsilon(q=q, r=r, model="agnostic") == pytest.approx(want, rel=1e-10)


def test_critical_epsilon_edge_cases_unchanged():
    assert bernoulli.critical_epsilon(q=0.0, r=0.5) == math.inf
    assert bernoulli.critical_epsilon(q=0.0, r=0.0) == math.inf
    assert bernoulli.critical_epsilon(q=0.6, r=0.3) == 0.0
    assert bernoulli.critical_epsilon(q=0.6, r=0.3, model="agnostic") == 0.0
    assert bernoulli.critical_epsilon(q=0.6, r=0.6, model="agnostic") == math.inf
    np.testing.assert_allclose(bernoulli.critical_epsilon(q=[1e-17, 0.3], r=0.5),
                               [math.log(0.5e17), math.log(0.5 / 0.3)], rtol=1e-14)


@pytest.mark.parametrize("r", [1e-20, 1e-100, 1e-300, 0.05, 0.6])
def test_critical_gamma_uses_the_upper_tail_of_the_probit(r):
    q, tau, n, R = 0.1, 0.02, 1000, 10.0
    Q, Rr, T, N = mp.mpf(q), mp.mpf(r), mp.mpf(tau), mp.mpf(n)
    # x = Φ⁻¹(q/(q + r)) = −Φ⁻¹(r/(q + r)), solved at 60 digits
    u = Rr / (Q + Rr)
    # (on the log scale: ncdf(y) − u has an absolute tolerance that tiny u would not meet)
    x = -mp.findroot(lambda y: mp.log(mp.ncdf(y)) - mp.log(u), -mp.sqrt(-2 * mp.log(u))) if u < 0.5 else \
        mp.findroot(lambda y: mp.ncdf(y) - Q / (Q + Rr), 0)
    want = 2 * R * mp.sqrt(N) / (N - 1) * (x + mp.sqrt(x * x + 2 * T)) / (2 * T)
    got = dynamics.critical_gamma(q=q, r=r, tau=tau, n=n, R=R)
    assert math.isfinite(got) and got == pytest.approx(float(want), rel=1e-10)


# ----------------------------------------------------- log leak probability


@pytest.mark.parametrize("s, n, gamma, tau", [(1.0, 1e300, 1e300, 1e-300), (1e-300, 2, 1e100, 1e-300),
                                              (1e-200, 1e10, 1e200, 1e-300)])
def test_log_leak_probability_is_finite_where_mu_prime_underflows(s, n, gamma, tau):
    S, N, G, T = (mp.mpf(x) for x in (s, n, gamma, tau))
    mu = mp.sqrt(N) * S / (G * (N - 1))
    x = T / mu - mu / 2
    if x < 1e6:
        want = mp.log(mp.erfc(x / mp.sqrt(2)) / 2)
    else:  # the asymptotic series of log Φ̄(x), exact to 60 digits this far out (mpmath's erfc overflows)
        want = -x * x / 2 - mp.log(x * mp.sqrt(2 * mp.pi)) + mp.log(1 - 1 / x**2 + 3 / x**4)
    got = float(leakage.log_leak_probability(s, n, gamma, tau=tau))
    assert math.isfinite(got) and got == pytest.approx(float(want), rel=1e-12)


# ---------------------------------------------------- seeds are not consumed


def test_a_seed_sequence_passed_twice_gives_the_same_run():
    kw = dict(tau=0.02, q=0.3, r=0.6, T=4, n0=10, d=2, R=10.0, trials=2)
    ss = np.random.SeedSequence(5)
    runs = [gaussian.simulate_agents(1.0, seed=ss, **kw) for _ in range(2)]
    fresh = gaussian.simulate_agents(1.0, seed=np.random.SeedSequence(5), **kw)
    assert np.array_equal(runs[0].sq_error, runs[1].sq_error)
    assert np.array_equal(runs[0].sq_error, fresh.sq_error)
    a, b = (gaussian.simulate(1.0, seed=ss, **kw) for _ in range(2))
    assert np.array_equal(a.sq_error, b.sq_error)
    bkw = dict(q=0.3, r=0.6, T=4, n0=10, trials=2, method="agents")
    try:
        x, y = (bernoulli.simulate(1.0, seed=ss, **bkw) for _ in range(2))
    except TypeError:  # no agents method here: the counting simulation is checked instead
        bkw.pop("method")
        x, y = (bernoulli.simulate(1.0, seed=ss, **bkw) for _ in range(2))
    assert np.array_equal(x.sq_error, y.sq_error)
    assert ss.n_children_spawned == 0
    assert _random.as_seed_sequence(ss) is not ss


def test_log_leak_probability_is_minus_inf_only_below_the_double_range():
    # τ/μ' = 1e255: log P ≈ −5e509, beyond the doubles; −inf is then the rounded value
    assert float(leakage.log_leak_probability(1e-200, 1e10, 1e200, tau=1e-150)) == -math.inf
    assert float(leakage.log_leak_probability(0.0, 10, 1.0, tau=0.5)) == -math.inf  # s = 0: no leak


# ------------------------------------------- the projected draw over the whole range


def _theta_reference(alpha, eta_norm, gamma, tau, d, n, statistic):
    """θ(α) = k0 − α(α + k1) at 60 digits from the coefficients of eq. 8 (A, B, C of llr_coefficients)."""
    E, G, T, N = (mp.mpf(x) for x in (eta_norm, gamma, tau, n))
    g2 = 2 * G**2
    if statistic == "paper":
        A, B, C = N / ((N - 1) ** 2 * g2), 2 * N / ((N - 1) * g2), 0
    else:
        A, B, C = 1 / ((N - 1) * g2), 2 / g2, mp.mpf(d) / 2 * mp.log(N / (N - 1)) - E**2 / g2
    return [(T - C) / A - mp.mpf(a) * (mp.mpf(a) + B / A * E) for a in alpha]


@pytest.mark.parametrize("statistic", ["paper", "exact"])
@pytest.mark.parametrize("eta_norm, gamma", [(1e300, 1.0), (1e-300, 1e-300), (1.0, 1e150), (1e100, 1e100),
                                             (0.3, 1.0)])
def test_leak_thresholds_survive_the_whole_range(statistic, eta_norm, gamma):
    # issue 16: ‖η‖ = 1e300 raised OverflowError (a Python float squared)
    alpha = [0.1, -0.1]
    got = projected.leak_thresholds(alpha=alpha, eta_norm=eta_norm, gamma=gamma, tau=0.02, d=3, statistic=statistic)
    want = _theta_reference(alpha, eta_norm, gamma, 0.02, 3, 2, statistic)
    for g, w in zip(got, want):
        if abs(w) > 1e308:
            assert g == (math.inf if w > 0 else -math.inf)
        else:
            assert g == pytest.approx(float(w), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("gamma", [1e-300, 1e300])
def test_projected_draw_round_at_extreme_noise(gamma):
    err, leaked = projected.draw_round(n=100, gamma=gamma, tau=0.02, d=3, seed=0)
    if gamma < 1:   # no noise: every record off the mean leaks, the error is the sampling error
        assert leaked == 100 and 0.0 < err < 1.0
    else:           # all noise: no record leaks, the squared error is infinite (a value, not a failure)
        assert leaked == 0 and err == math.inf


# -------------------------------------- valid extremes give a value, never a warning


@pytest.mark.parametrize("beta", [1e-300, 1e-160, 1e-140, 1e-100, 0.1, 0.5])
def test_estimator_variance_at_tiny_beta(beta):
    # Var = ν(1 − ν)/(4β²n), ν = 1/2 + β(2μ − 1): exact at 60 digits (inf beyond the doubles)
    B, M = mp.mpf(beta), mp.mpf("0.3")
    nu = mp.mpf(1) / 2 + B * (2 * M - 1)
    want = nu * (1 - nu) / (4 * B**2 * 10)
    got = bernoulli.estimator_variance(mu=0.3, beta=beta, n=10)
    if want > 1.7e308:
        assert got == math.inf
    else:
        assert got == pytest.approx(float(want), rel=1e-13)


def test_valid_extremes_run_without_warnings():
    run = bernoulli.simulate(1e-300, q=0.3, r=0.6, T=3, n0=10, trials=2, cap=100, seed=0)
    # ε → 0: the debiased estimate is ±inf (error inf) unless exactly half the answers are 1,
    # when it is 1/2 (error (1/2 − μ)² <= 1/4); never NaN
    err = run.sq_error[run.alive]
    assert np.all(np.isposinf(err) | (err <= 0.25)) and np.isposinf(err).any()
    # τ = 1e300: nothing leaks at any γ, so C(γ) = 1 + r > 1 already at the lower end of the bracket
    assert dynamics.exact_critical_gamma(q=0.3, r=0.6, tau=1e300, n=100, d=3, R=10.0) == 1e-6
    Z = np.ones((2, 3))
    assert np.all(leakage.log_likelihood_ratio(Z, np.full(3, 1e300), 1.0, 10.0) == 0.0)  # records on the mean
    assert np.all(leakage.log_likelihood_ratio(Z, np.full(3, 1e300), 1.0, 10.0, "exact") == -math.inf)


def test_the_long_small_population_reproducer_runs_clean_and_extends_its_short_run():
    # the reproducer: T = 100 000 rounds from 10 users under a cap of 100 (about half a minute here:
    # the per-round cost of a small population, issue 14). No warning, the population within [floor, cap],
    # finite errors, and keyed streams: its first 1000 rounds are the T = 1000 run's
    import warnings

    kwargs = dict(q=0.3, r=0.6, n0=10, trials=2, cap=100, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        long = bernoulli.simulate(1.0, T=100_000, **kwargs)
    short = bernoulli.simulate(1.0, T=1000, **kwargs)
    assert long.population.shape == (2, 100_001)
    assert long.population.min() >= 1 and long.population.max() <= 100
    assert np.all(np.isfinite(long.sq_error))
    assert np.array_equal(long.population[:, :1001], short.population)
    assert np.array_equal(long.sq_error[:, :1000], short.sq_error)


# --------------------------------------------- invalid input: refused up front, one line naming the parameter

_G = dict(tau=0.02, q=0.3, r=0.6, T=2, n0=10, d=3, R=10.0)


@pytest.mark.parametrize("call, error, words", [
    (lambda: bernoulli.growth_factor(0.1, q=True, r=0.6), TypeError, ("q", "True")),
    (lambda: gaussian.simulate(True, **_G, seed=0), TypeError, ("gamma", "True")),
    (lambda: gaussian.simulate(1.0, **_G, seed=0, clip_estimate="yes"), TypeError, ("clip_estimate",)),
    (lambda: bernoulli.privatize([0, 1, 1, 0], 0.2, rng=0, return_kept=2), TypeError, ("return_kept", "True or False")),
    (lambda: bernoulli.privatize([0, 1, 1, 0], [0.1, 0.2, 0.3], rng=0), ValueError, ("x (4,)", "beta (3,)")),
    (lambda: bernoulli.simulate(1.0, q=0.3, r=0.6, T=2, n0=10, trials=None), TypeError, ("trials", "None")),
    (lambda: bernoulli.simulate(1.0, q=0.3, r=0.6, T=2, n0=10, seed=np.random.RandomState(0)), TypeError,
     ("seed", "RandomState")),
    (lambda: bernoulli.growth_factor([[0.5], [0.5, 0.6]], q=0.3, r=0.6), ValueError, ("beta", "rectangular")),
    (lambda: leakage.marginal_leak_probability([], 1.0, tau=0.02, d=3, R=10.0), ValueError, ("n", "empty")),
    (lambda: gaussian.squared_mahalanobis([], np.zeros(0)), ValueError, ("o", "empty")),
])
def test_invalid_input_gets_one_clear_error_naming_the_parameter(call, error, words):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and all(w in message for w in words), message


def test_sweep_refuses_axes_the_function_does_not_take_before_any_cell_runs():
    from perfpriv import sweep

    calls = []

    def cell(x, seed):
        calls.append(x)
        return x

    with pytest.raises(TypeError, match="'zz'"):
        sweep.sweep(cell, {"zz": [1.0, 2.0]})
    with pytest.raises(TypeError, match="'y'"):
        sweep.sweep(cell, {"x": [1.0]}, y=2)
    assert calls == []
    assert sweep.sweep(cell, {"x": [1.0, 2.0]}).values.tolist() == [1.0, 2.0]
    # a function taking **kwargs takes anything
    assert sweep.sweep(lambda seed, **kw: kw["zz"], {"zz": [3.0]}).values.tolist() == [3.0]


def test_exercise_checks_refuse_non_string_ids_and_chapters():
    from perfpriv import exercises

    with pytest.raises(TypeError, match="exercise_id must be a string"):
        exercises.check(["ch04-ex-by-hand.leak"], 0.2)
    with pytest.raises(TypeError, match="chapter must be a string"):
        exercises.exercise_ids(chapter=3)


def test_a_one_round_two_phase_schedule_is_the_constant_optimum():
    from perfpriv import optimize

    two = optimize.optimal_epsilon_two_phase(q=0.3, r=0.6, T=1, n0=10, cap=100)
    assert np.shape(two.epsilon) == (1,) and two.gain == 0.0
    assert two.epsilon[0] == two.constant and two.regret == two.constant_regret


# ----------------------------------------- Lemma 8 quadrature: stated accuracy (issue 16)


def _dense_quad(f, a, top, pieces=40):
    """∫_a^∞ f by tanh-sinh on a dense partition of [a, top], kept where f is within 1e-45 of its peak."""
    pts = [a + (top - a) * mp.mpf(i) / pieces for i in range(pieces + 1)]
    vals = [abs(f(p)) if p > 0 else mp.mpf(0) for p in pts]
    peak = max(vals)
    if peak == 0:
        return mp.mpf(0)
    keep = [i for i in range(pieces) if max(vals[i], vals[i + 1]) > peak * mp.mpf(10) ** -45]
    return mp.quad(f, pts[max(keep[0] - 1, 0):min(keep[-1] + 2, pieces) + 1])


def _ref_marginal_ab(n, gamma, tau, d, statistic):
    """p_τ (Σ = I, no clipping) at 60 digits: P(A X − B Y > t), X, Y iid χ²_d.

    Over the law of s (s² = ((n−1)/n) χ²_d, Lemma 8) and the release noise,
    2(Λ − c) = m‖h + k g‖² − ‖h‖² with k² = 1/(γ²(n−1)); A and −B are the
    eigenvalues of [[m k², m k], [m k, m − 1]] (computed here by mpmath's
    symmetric eigensolver), m = 1, c = 0 (paper) or m = (n−1)/n,
    c = (d/2) log(n/(n−1)) (exact). Integrated over v = √Y on a dense partition.
    """
    n, gamma, tau = mp.mpf(n), mp.mpf(gamma), mp.mpf(tau)
    k2 = 1 / gamma**2 / (n - 1)
    m, c = (mp.mpf(1), mp.mpf(0)) if statistic == "paper" else ((n - 1) / n, mp.mpf(d) / 2 * mp.log(n / (n - 1)))
    ev = sorted(mp.eigsy(mp.matrix([[m * k2, m * mp.sqrt(k2)], [m * mp.sqrt(k2), m - 1]]))[0])
    B, A = -ev[0], ev[1]
    t, h = 2 * (tau - c), mp.mpf(d) / 2

    def f(v):
        x = (t + B * v * v) / A
        q = mp.gammainc(h, x / 2, mp.inf, regularized=True) if x > 0 else mp.mpf(1)
        return q * 2 * v ** (2 * h - 1) * mp.exp(-v * v / 2) / (2**h * mp.gamma(h))

    if t < 0:  # below v* = √(−t/B) the conditional probability is 1
        vs = mp.sqrt(-t / B)
        return mp.gammainc(h, 0, vs * vs / 2, regularized=True) + _dense_quad(f, vs, vs + 60)
    return _dense_quad(f, mp.mpf(0), mp.mpf(60))


def _ref_marginal_s(n, gamma, tau, d):
    """Paper statistic over the law of s directly: E Φ̄(τ/μ − μ/2), μ = √n s/(γ(n−1))."""
    n, gamma, tau, k = mp.mpf(n), mp.mpf(gamma), mp.mpf(tau), mp.mpf(d)

    def f(u):
        mu = mp.sqrt(n) * u * mp.sqrt((n - 1) / n) / (gamma * (n - 1))
        return mp.ncdf(mu / 2 - tau / mu) * 2 * u ** (k - 1) * mp.exp(-u * u / 2) / (2 ** (k / 2) * mp.gamma(k / 2))

    return _dense_quad(f, mp.mpf(0), mp.mpf(60))


MARGINAL_REFERENCE = [  # (d, statistic, n, gamma, tau, p) from _ref_marginal_ab at 60 digits
    (1, 'exact', 10, 30.0, 0.02, '5.8271645038970939089e-1'),
    (1, 'exact', 10, 30.0, 1e-06, '6.9542318879496901947e-1'),
    (1, 'exact', 10, 30.0, 5.0, '1.1986708402369641502e-1956'),
    (1, 'exact', 1000, 1.0, 0.02, '1.738396895793337535e-1'),
    (1, 'exact', 1000, 1.0, 1e-06, '5.2645644769293097065e-1'),
    (1, 'exact', 1000, 1.0, 5.0, '6.8964745382793653736e-71'),
    (1, 'exact', 2, 1.0, 0.02, '7.8348188574527697779e-1'),
    (1, 'exact', 2, 1.0, 1e-06, '7.9217503135261446504e-1'),
    (1, 'exact', 2, 1.0, 5.0, '1.9885070605161934089e-4'),
    (1, 'paper', 10, 30.0, 0.02, '3.9723863705824870388e-2'),
    (1, 'paper', 10, 30.0, 1e-06, '5.01469526179300507e-1'),
    (1, 'paper', 10, 30.0, 5.0, '8.4394179577573782467e-197'),
    (1, 'paper', 1000, 1.0, 0.02, '1.740349775055455818e-1'),
    (1, 'paper', 1000, 1.0, 1e-06, '5.0491954220634423963e-1'),
    (1, 'paper', 1000, 1.0, 5.0, '8.9157102957047243016e-70'),
    (1, 'paper', 2, 1.0, 0.02, '6.1614252028499658552e-1'),
    (1, 'paper', 2, 1.0, 1e-06, '6.4757890033806593045e-1'),
    (1, 'paper', 2, 1.0, 5.0, '1.0804984543775132136e-2'),
    (12, 'exact', 10, 30.0, 0.02, '5.7449382256045060864e-1'),
    (12, 'exact', 10, 30.0, 1e-06, '6.0501476097650625695e-1'),
    (12, 'exact', 10, 30.0, 5.0, '7.3865299553150694237e-1721'),
    (12, 'exact', 1000, 1.0, 0.02, '4.4573327911433077289e-1'),
    (12, 'exact', 1000, 1.0, 1e-06, '5.2333872508969517074e-1'),
    (12, 'exact', 1000, 1.0, 5.0, '3.767637837120119782e-62'),
    (12, 'exact', 2, 1.0, 0.02, '9.5453706145347711936e-1'),
    (12, 'exact', 2, 1.0, 1e-06, '9.5523423785584322749e-1'),
    (12, 'exact', 2, 1.0, 5.0, '3.5735610227012332876e-1'),
    (12, 'paper', 10, 30.0, 0.02, '2.9748370947147812022e-1'),
    (12, 'paper', 10, 30.0, 1e-06, '5.0750795609378375865e-1'),
    (12, 'paper', 10, 30.0, 5.0, '1.1286871772504040728e-185'),
    (12, 'paper', 1000, 1.0, 0.02, '4.4390896001057908943e-1'),
    (12, 'paper', 1000, 1.0, 1e-06, '5.2139618277684169223e-1'),
    (12, 'paper', 1000, 1.0, 5.0, '4.1054418311270012839e-61'),
    (12, 'paper', 2, 1.0, 0.02, '9.4484297172865361649e-1'),
    (12, 'paper', 2, 1.0, 1e-06, '9.4556781340520473712e-1'),
    (12, 'paper', 2, 1.0, 5.0, '5.5574719465812649421e-1'),
    (2, 'exact', 10, 30.0, 0.02, '5.7517599510545208725e-1'),
    (2, 'exact', 10, 30.0, 1e-06, '6.5149808033171440368e-1'),
    (2, 'exact', 10, 30.0, 5.0, '9.1545797814770344068e-1935'),
    (2, 'exact', 1000, 1.0, 0.02, '2.7418173828466177899e-1'),
    (2, 'exact', 1000, 1.0, 1e-06, '5.1555634827406672167e-1'),
    (2, 'exact', 1000, 1.0, 5.0, '1.1084690490991762617e-69'),
    (2, 'exact', 2, 1.0, 0.02, '8.0701080049961396712e-1'),
    (2, 'exact', 2, 1.0, 1e-06, '8.123926210600470223e-1'),
    (2, 'exact', 2, 1.0, 5.0, '1.1317877135842714388e-3'),
    (2, 'paper', 10, 30.0, 0.02, '8.3941524202290422431e-2'),
    (2, 'paper', 10, 30.0, 1e-06, '5.0273273761994749436e-1'),
    (2, 'paper', 10, 30.0, 5.0, '2.246877918050167676e-195'),
    (2, 'paper', 1000, 1.0, 0.02, '2.7262120724344986516e-1'),
    (2, 'paper', 1000, 1.0, 1e-06, '5.0789285919658688363e-1'),
    (2, 'paper', 1000, 1.0, 5.0, '1.4102309676999696281e-68'),
    (2, 'paper', 2, 1.0, 0.02, '7.1471757742198785086e-1'),
    (2, 'paper', 2, 1.0, 1e-06, '7.2360635053652166626e-1'),
    (2, 'paper', 2, 1.0, 5.0, '3.2919928506605775854e-2'),
]


def test_marginal_reference_table_is_the_mpmath_reference():
    # the stored table is _ref_marginal_ab's output; two independent forms agree with it
    table = {row[:5]: row[5] for row in MARGINAL_REFERENCE}
    for key in [(2, "exact", 1000, 1.0, 5.0), (12, "paper", 10, 30.0, 5.0), (1, "paper", 2, 1.0, 1e-06)]:
        d, statistic, n, gamma, tau = key
        stored = mp.mpf(table[key])
        assert abs(_ref_marginal_ab(n, gamma, tau, d, statistic) / stored - 1) < 1e-15
        if statistic == "paper":  # over the law of s directly (Lemma 8)
            # (tiny values: the two forms differ by up to 3e-7 relative, the tolerance stated below)
            assert abs(_ref_marginal_s(n, gamma, tau, d) / stored - 1) < (1e-6 if stored < 1e-12 else 1e-12)


@pytest.mark.parametrize("d, statistic, n, gamma, tau, p", MARGINAL_REFERENCE)
def test_marginal_leak_probability_meets_its_stated_accuracy(d, statistic, n, gamma, tau, p):
    # issue 16: 4.8e-8 absolute at d = 1, τ = 1e-6 (a singularity √e from the interval);
    # 0 where the exact statistic's value is 1e-31 to 1e-255 (mass beyond the 1e-18 window)
    ref = float(p)
    got = leakage.marginal_leak_probability(n, gamma, tau=tau, d=d, R=1e6, statistic=statistic,
                                            method="quadrature").p
    assert abs(got - ref) <= 1e-13, (got, ref)
    assert abs(got - ref) <= (1e-6 if ref < 1e-12 else 1e-12) * ref, (got, ref)


def test_marginal_quadrature_keeps_tiny_exact_values():
    got = leakage.marginal_leak_probability([1000, 1000], 1.0, tau=[5.0, 0.02], d=1, R=1e6, statistic="exact",
                                            method="quadrature").p
    assert got[0] == pytest.approx(6.8964747e-71, rel=1e-6) and got[1] == pytest.approx(0.17383970, rel=1e-7)


# --------------------------------------------- isotropic data: no d x d identity (issue 16)


def test_isotropic_records_never_build_a_d_by_d_identity():
    import tracemalloc
    d = 100_000  # an identity would take 80 GB
    tracemalloc.start()
    try:
        Z = gaussian.sample_records(5, d=d, seed=0)
        p = gaussian.clip_probability(10_000, 10.0)
        mech = gaussian.GaussianMean(1.0, tau=0.02, d=d, R=1e3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert Z.shape == (5, d) and p == 1.0 and mech._sigma2 == 1.0
    assert peak < 50e6, peak
    # the same records as with the identity given explicitly (small d)
    np.testing.assert_array_equal(gaussian.sample_records(4, d=3, seed=1),
                                  gaussian.sample_records(4, d=3, Sigma=np.eye(3), seed=1))
    assert gaussian.GaussianMean(1.0, tau=0.02, d=3, R=5.0).Sigma.tolist() == np.eye(3).tolist()


def test_records_too_large_for_memory_are_refused_up_front():
    with pytest.raises(ValueError, match="n is too large"):
        gaussian.sample_records(10**6, d=10**5)


# --------------------------------------------- sizes no call can serve are refused up front

@pytest.mark.parametrize("kwargs, word", [(dict(nrows=10**6), "nrows"), (dict(ncols=0), "ncols"),
                                          (dict(nrows=True), "nrows"), (dict(width=-1.0), "width"),
                                          (dict(height=float("nan")), "height")])
def test_new_figure_refuses_panel_counts_and_sizes_no_page_can_show(kwargs, word):
    from perfpriv.plots import new_figure

    # a boolean is a wrong type (TypeError), the other values are out of range (ValueError)
    with pytest.raises(TypeError if kwargs.get("nrows") is True else ValueError, match=word):
        new_figure(**kwargs)


def test_a_mean_field_too_long_to_record_is_refused_before_any_work():
    import tracemalloc

    from perfpriv import optimize

    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="rounds"):
            optimize.mean_field_optimal_epsilon([1.0], q=0.3, r=0.6, T=10**9)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


# ------------------------------------- the fuzzer of the learning, performative, feedback, plot and widget layers
# (tests/test_fuzz_learning.py): one test per cause it found

def test_messages_name_the_parameter_of_the_call_not_an_internal_name():
    from perfpriv import feedback
    from perfpriv.performative import GaussianClients, p_fedavg

    with pytest.raises(ValueError, match="name"):                 # feedback.Family(name=0) said "family"
        feedback.Family(0, 3)
    with pytest.raises(ValueError, match=r"parameter \(k\)"):      # feedback.family("memory", 0) said "k"
        feedback.family("memory", 0)
    with pytest.raises(ValueError, match="values"):                # threshold_curve(values=-1) said "kappa"
        feedback.threshold_curve("contagion", [-1.0], q=0.2, r=0.6)
    with pytest.raises(ValueError, match="steps"):                 # p_fedavg(steps=0) said "beta"
        p_fedavg(GaussianClients.example(N=3, eps_mean=0.5), T=2, steps=0.0, trials=2)


def test_arguments_a_branch_does_not_use_are_checked_all_the_same():
    from perfpriv import feedback, regression
    from perfpriv.performative import PerformativeProblem, repeated_risk_minimization

    with pytest.raises(ValueError, match="tau"):                   # trajectories(mechanism="bernoulli", tau=nan)
        feedback.trajectories(feedback.family("memory", 3), [0.5], q=0.3, r=0.6, T=2, n0=10, trials=2,
                              tau=float("nan"))
    with pytest.raises(TypeError, match="seed"):                   # optimal_gamma_map(trials=0, seed=nan)
        regression.optimal_gamma_map([0.3], [0.5], [0.01, 0.1], tau=0.02, T=2, n0=20, d=2, seed=float("nan"))
    with pytest.raises(TypeError, match="seed"):                   # repeated_risk_minimization(samples=None, seed=nan)
        repeated_risk_minimization(PerformativeProblem.squared(m=1.0, A=0.5), [0.0], T=2, seed=float("nan"))


def test_object_arguments_are_checked_up_front():
    from perfpriv import feedback, gradient, regression

    with pytest.raises(TypeError, match="mechanism"):              # one_round_check(mechanism=0): AttributeError
        regression.one_round_check(0, [10], trials=2)
    with pytest.raises(TypeError, match="mechanism"):              # long_run_utility(mechanism=0) was ignored
        gradient.long_run_utility([1.0], behaviours=[(0.0, 0.0)], tau=0.02, T=2, n0=10, mechanism=0)
    with pytest.raises(TypeError, match="behaviours"):             # long_run_utility(behaviours=0): not iterable
        gradient.long_run_utility([1.0], behaviours=0, tau=0.02, T=2, n0=10)
    with pytest.raises(TypeError, match="bernoulli_maps"):         # summary("x"): AttributeError
        feedback.summary("x")


def test_the_standard_error_of_a_single_trial_is_infinite_not_nan():
    import warnings

    from perfpriv import feedback, regression

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = regression.optimal_gamma_map([0.3], [0.5], [0.01, 0.1], tau=0.02, T=2, n0=20, trials=1, d=2, seed=0)
        tr = feedback.trajectories(feedback.family("memory", 3), [0.5], q=0.3, r=0.6, T=2, n0=10, trials=1, seed=0)
    assert np.all(np.isposinf(m.simulated_se)) and np.all(np.isposinf(tr.se))
    with pytest.raises(ValueError, match="trials"):                # a map compares standard errors: two runs at least
        feedback.epsilon_map(feedback.family("paper"), [0.3], [0.6], [1.0], T=2, n0=10, trials=1)


def test_shapes_and_grids_are_checked_before_indexing():
    from perfpriv import feedback, regression

    with pytest.raises(ValueError, match="shifts"):                # membership_llr(shifts=0.5): IndexError
        regression.membership_llr(0.5, [0.5], 1.0)
    with pytest.raises(ValueError, match="gammas"):                # gamma_map(gammas=[]): IndexError
        feedback.gamma_map(feedback.family("paper"), [0.3], [0.6], [], T=2, n0=10, trials=2, d=2)
    with pytest.raises(TypeError, match="epsilons"):               # epsilon_map(epsilons="x"): numpy's message
        feedback.epsilon_map(feedback.family("paper"), [0.3], [0.6], "x", T=2, n0=10, trials=2)
    with pytest.raises(ValueError, match="z"):                     # epsilon_map(z=nan): NaN in the result
        feedback.epsilon_map(feedback.family("paper"), [0.3], [0.6], [1.0], T=2, n0=10, trials=2, z=float("nan"))
    out = feedback.compare_gaussian(feedback.family("memory", 3), q=0.3, r=0.6, T=2, n0=10, d=2, trials=2,
                                    gammas=2.0)                    # a single gamma: IndexError
    assert out.gamma_star == 2.0


def test_size_arrays_must_hold_integers_in_the_int64_range():
    from perfpriv import regression
    from perfpriv._validate import check_int_array

    with pytest.raises(ValueError, match="ns"):                    # sensitivity_profile(ns=1e300): invalid cast
        regression.sensitivity_profile([1e300], d=2, lam=0.05, x_bound=5.0, y_bound=5.0, records=10)
    with pytest.raises(ValueError, match="ns"):                    # ns=[10.5] was truncated to 10
        regression.sensitivity_profile([10.5], d=2, lam=0.05, x_bound=5.0, y_bound=5.0, records=10)
    assert check_int_array("ns", [3.0, 4]).tolist() == [3, 4]


def test_closed_forms_at_extreme_valid_values_are_finite_limits_without_warnings():
    import warnings

    from perfpriv import gradient, regression

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = regression.ridge_sensitivity(100, lam=0.05, x_bound=1e300, y_bound=5.0)   # was an OverflowError
        assert np.isfinite(big) and big > 0
        assert regression.removal_sensitivity(100, lam=1e300, x_bound=5.0, y_bound=5.0) >= 0
        assert regression.achieved_rho(1.0, 100, adjacency="add_remove_public_n", noise="calibrated", lam=0.05,
                                       x_bound=1e300, y_bound=5.0) == 0.5
        assert regression.rho_from_gamma(1e-300) == np.inf and regression.rho_from_gamma(1e300) == 0.0
        assert regression.ols_excess_risk(50, d=3, noise_sd=1e300) == np.inf
        assert gradient.zcdp_cost(4, clip=1e300, sigma=1e300) == pytest.approx(2.0, rel=1e-12)   # was inf/inf
        assert gradient.utility_bound(100, lipschitz=1e300, lam=1.0, radius=1.0, d=5, rho=1.0, steps=10) == np.inf
    # numbers do not move inside the direct formulas' range
    assert regression.ridge_sensitivity(1000, lam=0.05, x_bound=5.0, y_bound=5.0) == \
        float(np.maximum(regression._direct_removal(1000.0, 0.05, 5.0, 5.0),
                         regression._direct_removal(1001.0, 0.05, 5.0, 5.0)))
    assert gradient.zcdp_cost(100, clip=1.0, sigma=10.0) == 100 * 1.0**2 / (2.0 * 10.0**2)


def test_contagion_threshold_with_a_huge_kappa_does_not_overflow():
    import warnings

    from perfpriv import feedback

    with warnings.catch_warnings():
        warnings.simplefilter("error")                             # threshold_curve(values=1e300): b * b overflowed
        assert feedback.threshold_curve("contagion", [1e300], q=0.2, r=0.6).tolist() == [0.0]


def test_plot_helpers_check_their_figure_axes_text_and_number_arguments():
    from perfpriv import plots

    for call, word in ((lambda: plots.png_bytes(0), "fig"), (lambda: plots.display_width(None), "fig"),
                       (lambda: plots.plain_log("x"), "ax"), (lambda: plots.number(1.0, fmt=3), "fmt"),
                       (lambda: plots.params(q="x"), "q"), (lambda: plots.html(None), "expr")):
        with pytest.raises(TypeError, match=word):
            call()
    fig, _ = plots.new_figure()
    with pytest.raises(ValueError, match="density"):              # png_bytes(density=1e300): pybind11's message
        plots.png_bytes(fig, density=1e300)


def test_figures_check_their_results_and_indices_before_drawing():
    from perfpriv import plots
    from perfpriv.performative import PerformativeProblem

    with pytest.raises(TypeError, match="paths"):                 # figure_retraining(paths=0): AttributeError
        plots.figure_retraining(0, PerformativeProblem.squared(m=1.0, A=0.5))
    with pytest.raises(TypeError, match="trajectories"):          # figure_effective_q(trajectories=0)
        plots.figure_effective_q(0)
    with pytest.raises(TypeError, match="family"):                # family_label(None): AttributeError
        plots.family_label(None)
    from perfpriv import feedback
    memory = feedback.family("heterogeneous", 0.5)                 # eps_c = inf (a class never leaves) is drawn
    plots.figure_thresholds({"h": (memory, [0.5, 1.0], [1.0, np.inf])}, paper=1.0)
    assert plots.number(np.array(2.5)) == "2.5"                     # a 0-d array is a number


def test_widget_controls_check_their_ranges():
    from perfpriv import widgets

    with pytest.raises(ValueError, match="high"):                 # float_slider(low=1, high=0): a TraitError
        widgets.float_slider("q", 0.5, 1.0, 0.0, 0.1)
    with pytest.raises(ValueError, match="value"):
        widgets.int_slider("T", 10, 1, 5)
    with pytest.raises(ValueError, match="low"):                  # log_slider(low=0): math domain error
        widgets.log_slider("gamma", 1.0, 0.0, 10.0)
    with pytest.raises(TypeError, match="value"):                 # checkbox(value=1): booleans only
        widgets.checkbox("no privacy", 1)


# --------------------------------------------- found by the fuzzer of the upper layers (tests/test_fuzz_upper.py)

def test_an_infinite_simulated_error_has_an_infinite_standard_error_not_a_warning():
    # optimize.optimal_epsilon(epsilons=1e-300, ...): std of +inf samples was inf - inf (RuntimeWarning, NaN)
    from perfpriv import optimize
    from perfpriv._stats import mean_se

    res = optimize.optimal_epsilon(1e-300, q=0.3, r=0.6, T=5, n0=50, trials=2, seed=0, progress=False)
    assert not np.isnan(res.values).any() and not np.isnan(res.se).any()
    assert np.all(np.isinf(res.se) | np.isfinite(res.values))
    mean, se = mean_se([[np.inf, 1.0], [1e300, 3e300], [1.0, 3.0]])
    assert mean.tolist() == [np.inf, 2e300, 2.0] and se.tolist() == [np.inf, 1e300, 1.0]


def test_the_agent_reference_never_builds_sigma_for_isotropic_data():
    # gaussian.simulate_agents(..., d=100000): np.linalg.cholesky(np.eye(d)), a 75 GiB identity
    import tracemalloc

    tracemalloc.start()
    try:
        run = gaussian.simulate_agents(1.0, tau=0.02, q=0.3, r=0.6, T=2, n0=5, d=100_000, R=10.0, trials=1, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.all(np.isfinite(run.sq_error)) and peak < 200 * 2**20
    with pytest.raises(ValueError, match="d is too large"):     # what no run can hold is refused up front
        gaussian.simulate_agents(1.0, tau=0.02, q=0.3, r=0.6, T=5, n0=1000, d=10**6, R=10.0, trials=1, seed=0)


def test_exact_floor_check_refuses_populations_it_cannot_draw():
    # experiments.exact_floor_check(ns=1e300): a cast warning (float -> int64) instead of a clear error
    from perfpriv import experiments

    with pytest.raises(ValueError, match="ns is too large"):
        experiments.exact_floor_check([10, 1e300], rounds=2, d=3)


def test_the_exact_statistic_at_an_infinite_threshold_never_leaks():
    # experiments.exact_floor_check(taus=1e300) -> leakage.marginal_leak_probability(statistic="exact"):
    # the tail integral started at infinity (inf - inf in the chi density)
    p = leakage.marginal_leak_probability(np.array([10.0, 20.0]), 1e4, tau=1e300, d=3, R=10.0, statistic="exact").p
    assert np.all(np.asarray(p) == 0.0)


def test_a_missing_grid_names_its_parameter():
    # experiments.lemma9_check(qs=None): "q must not be empty"
    from perfpriv import experiments

    with pytest.raises(TypeError, match="qs"):
        experiments.lemma9_check(qs=None, T=3, n0=50, trials=2, d=3)


def test_objects_passed_where_results_or_names_belong_are_refused_by_name():
    # experiments.capped_rounds(m=0), gamma_star_gaps(maps=0), gamma_star_map(theory=0),
    # compare_schedules(reference=[]), sweep.key_seed(key=0): AttributeError / "unhashable" / "not iterable"
    from perfpriv import experiments, sweep

    for call, word in [(lambda: experiments.capped_rounds(0), "m"), (lambda: experiments.gamma_star_gaps(0), "maps"),
                       (lambda: experiments.gamma_star_map([0.3], [0.6], tau=0.02, theory=0), "theory"),
                       (lambda: experiments.compare_epsilon_schedules({"a": [1.0]}, q=0.3, r=0.6, n0=50, trials=2,
                                                                      reference=[]), "reference"),
                       (lambda: sweep.key_seed(0), "key")]:
        with pytest.raises((TypeError, ValueError), match=word):
            call()


def test_paths_are_checked_before_use():
    # experiments.read_gamma_star_maps(path=0 / "x"), cli.CellFiles(folder=0): os errors that name nothing
    from perfpriv import cli, experiments

    with pytest.raises(TypeError, match="path"):
        experiments.read_gamma_star_maps(0)
    with pytest.raises(ValueError, match="path"):
        experiments.read_gamma_star_maps("no such file.npz")
    with pytest.raises(TypeError, match="folder"):
        cli.CellFiles(0)


def test_flags_are_real_booleans():
    # experiments.gamma_star_map(empirical=0) ran the theory only; exercises.check(quiet=1), cli.CellFiles(read=1),
    # sweep.sweep(progress=0) took numbers as flags
    from perfpriv import cli, experiments, exercises, sweep

    ex = exercises.exercise_ids()[0]
    for call, word in [(lambda: experiments.horizon_curves(q=0.3, r=0.6, tau=0.02, empirical=0), "empirical"),
                       (lambda: exercises.check(ex, 1.0, quiet=1), "quiet"),
                       (lambda: cli.CellFiles("cells", read=1), "read"),
                       (lambda: sweep.sweep(lambda x, seed: x, {"x": [1.0]}, progress=0), "progress")]:
        with pytest.raises((TypeError, ValueError), match=word):
            call()


def test_run_figure_checks_its_arguments_before_any_work():
    # cli.run_figure(number=0): KeyError after a figure's work; seed=True ran as seed 1
    from perfpriv import cli

    for kwargs, word in [(dict(number=0), "number"), (dict(scale="x"), "scale"), (dict(seed=True), "seed"),
                         (dict(seed=-1), "seed")]:
        with pytest.raises((TypeError, ValueError), match=word):
            cli.run_figure(**dict(dict(number="1", scale="book", seed=0), **kwargs))


def test_an_exercise_checks_its_fields():
    # exercises.Exercise(answer=nan, ...): kept as given
    from perfpriv.exercises import Exercise

    for kwargs, word in [(dict(answer=float("nan")), "answer"), (dict(rtol=-1.0), "rtol"), (dict(id=1), "id"),
                         (dict(compute=1.0), "compute")]:
        with pytest.raises((TypeError, ValueError), match=word):
            Exercise(**dict(dict(id="x", prompt="p", answer=1.0, compute=lambda: 1.0), **kwargs))


def test_optimal_gamma_checks_the_population_policy_of_every_objective():
    # optimize.optimal_gamma(cap=nan) (objective="bound" never used it): NaN kept in the settings
    from perfpriv import optimize

    for kwargs, word in [(dict(cap=float("nan")), "cap"), (dict(floor=float("nan")), "floor")]:
        with pytest.raises((TypeError, ValueError), match=word):
            optimize.optimal_gamma(q=0.3, r=0.6, tau=0.02, T=3, n0=50, d=3, R=10.0, grid=3, **kwargs)


def test_sizes_of_the_upper_layers_no_call_can_hold_are_refused_up_front():
    # schedules.constant(T=1e9), optimize.optimal_gamma(d=1e9 / grid=1e9), optimal_two_phase(T=1e9),
    # optimal_epsilon_schedule(T=1e9): MemoryError inside numpy (check_mean's zeros(d), a (K, 41, 41, T) grid)
    from perfpriv import optimize, schedules

    base = dict(q=0.3, r=0.6, tau=0.02, T=3, n0=50, d=3, R=10.0)
    for call, word in [(lambda: schedules.constant(1.0, T=10**12), "T"),
                       (lambda: optimize.optimal_gamma(**dict(base, d=10**12)), "d"),
                       (lambda: optimize.optimal_gamma(**base, grid=10**12), "grid"),
                       (lambda: optimize.optimal_two_phase(**dict(base, T=10**5)), "T"),
                       (lambda: optimize.optimal_epsilon_schedule(q=0.3, r=0.6, T=10**12, n0=50), "T")]:
        with pytest.raises(ValueError, match=f"{word} is too large"):
            call()


def test_diverging_local_steps_of_private_federated_rounds_are_a_clear_error_not_nan():
    # a local step eta multiplies a client's model by 1 - eta(1 - eps_i); at eta = 1e300 the local
    # models overflow in round 1 (they used to give overflow warnings and NaN squared errors)
    from perfpriv.performative import simulate_participation

    kwargs = dict(tau=0.3, R=10.0, q=0.5, r=0.2, T=3, n0=20, cap=60, trials=2, seed=1, eps=0.8, eps_sd=0.3)
    with pytest.raises(ValueError, match=r"^step: .*overflowed in round 1"):
        simulate_participation([1e-3, 0.6], step=1e300, **kwargs)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = simulate_participation([1e-3, 0.6], step=1e100, **kwargs)   # huge, but finite: a value
    assert np.all(np.isfinite(run.sq_error)) and np.all(run.sq_error > 1e150)
