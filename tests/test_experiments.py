"""perfpriv.experiments: every experiment against an independent truth, its keying, and its results.

Truth, experiment by experiment: Lemma 8's p_τ by quadrature (leak
fractions, growth factors), the agent-by-agent reference of Algorithm 1
(Theorem 3's inverse population), raw runs of the simulators with the
documented key of a cell (number for number), the formulas of
perfpriv.dynamics and perfpriv.bernoulli recomputed by hand where they are
short (Lemma 9 with Algorithm 1's indexing, Theorem 4's quantile rule), and
paired simulation (an identical schedule differs by exactly zero). Monte
Carlo tolerances are 4.5 standard errors; seeds are fixed. Results must not
depend on n_jobs, on the chunk size or on a resumed cell store.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from perfpriv import bernoulli, dynamics, engine, experiments, gaussian, keyed, leakage, optimize, regression, sweep
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Schedule
from perfpriv.engine import Policy

Z = 4.5
D, R = 12, 10.0


def gm(tau, gamma=1.0, **kw):
    """The Gaussian mechanism of the paper's data model (d = 12, R = 10) at threshold ``tau``."""
    return gaussian.GaussianMean(gamma, tau=tau, d=D, R=R, **kw)


#: The paper's users of most checks here.
USERS = Memoryless(q=0.3, r=0.6)


def cells(qs, rs):
    """The users of a (q, r) grid (lemma9_check's cells): q along the first axis, r along the second."""
    return Memoryless(q=np.asarray(qs, float)[:, None], r=np.asarray(rs, float)[None, :])


# ---------------------------------------------------------------- results
def _small_results():
    return [
        experiments.figure3a_simulation(gm(0.1, [1.0]), 30, rounds=3, seed=1),
        experiments.leak_dispersion(2.0, tau=0.02, n=30, trials=5),
        experiments.exact_floor_check([20, 400], rounds=4),
        experiments.growth_curves(gm(0.02, [1.0]), USERS, n0=30, trials=2),
        experiments.theorem3_check(gm(0.02, 2.0), USERS, sizes=(5,), trials=4),
        experiments.mean_field_paths(gm(0.02, 1.0), USERS, T=3, n0=50, trials=1),
        experiments.lemma9_check(gm(0.02, (2.0,)), cells((0.3,), (0.6,)), T=3, n0=50, trials=2),
        experiments.horizon_curves(gm(0.02, [1.0, 2.0]), USERS, T=3, n0=50, trials=2),
        experiments.gamma_star_map(gm(0.05, [1.0, 2.0]), cells([0.3], [0.6]), T=3, n0=30, trials=2,
                                   maps=("empirical", "bound")),
        experiments.pac_coverage(gm(0.02, 2.0), USERS, epsilons=(1.0,), T=4, n0=300, trials=3),
        experiments.final_error_curve(bernoulli.RandomizedResponse([1.0]), USERS, T=3, n0=20, trials=2),
        experiments.compare_schedules({"a": [1.0, 1.0]}, gm(0.02, None), USERS, n0=30, trials=2, seed=0),
        experiments.compare_schedules({"a": [1.0, 1.0]}, bernoulli.RandomizedResponse(1.0), USERS, n0=30, trials=2,
                                      seed=0),
        experiments.gain_map(bernoulli.RandomizedResponse(1.0), [0.3], [0.6], T=3, n0=30),
    ]


def test_every_result_is_frozen_compared_by_identity_with_a_short_repr_and_provenance():
    for res in _small_results():
        name = type(res).__name__
        assert dataclasses.is_dataclass(res) and name in experiments.__all__
        field = dataclasses.fields(res)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(res, field, None)
        assert res == res and res != dataclasses.replace(res)       # eq=False: identity
        text = repr(res)
        assert text.startswith(name + "(") and "\n" not in text and len(text) <= 320, text
        assert isinstance(res.settings, dict) and res.settings


def test_gaussian_results_record_the_conventions_and_every_setting_behind_them():
    paper = experiments.growth_curves(gm(0.02, [1.0]), USERS, n0=30, trials=2)
    authors = experiments.growth_curves(gm(0.02, [1.0]), USERS, n0=30, trials=2, conventions="authors")
    assert (paper.settings["conventions"], paper.settings["statistic"]) == ("paper", "paper")
    assert (authors.settings["conventions"], authors.settings["statistic"]) == ("authors", "exact")
    assert authors.settings["policy"]["stop"] == 1 and authors.settings["policy"]["collapse"] == "ran"
    m = experiments.gamma_star_map(gm(0.05, [1.0]), cells([0.3], [0.6]), T=3, n0=30, trials=2, maps=("empirical",))
    assert m.settings["policy"]["stop"] == 1 and m.settings["policy"]["collapse"] == "floor"


def test_experiments_import_no_matplotlib_and_no_private_names_of_other_modules():
    import ast
    import pathlib
    import subprocess
    import sys

    code = "import sys, perfpriv.experiments; assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0
    allowed = {"keyed", "_validate", "_stats", "_common"}   # the low helper modules (public names only), its own
    for path in pathlib.Path(experiments.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                mod = (node.module or "").split(".")[-1]
                assert not mod.startswith("_") or mod in allowed or node.level == 1, (path.name, node.module)
                assert not any(a.name.startswith("_") and a.name not in allowed for a in node.names), \
                    (path.name, node.module)
                assert "plots" not in (node.module or "") and "widgets" not in (node.module or "")
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                assert not node.attr.startswith("_") or node.value.id == "self", (path.name, node.attr)


# ---------------------------------------------------------------- Fig. 3a, Lemma 8
def test_leak_fractions_agree_with_lemma_8_and_are_the_keyed_runs_of_each_tau():
    gammas, taus = np.array([0.5, 2.0]), np.array([0.02, 0.3])
    sim = experiments.figure3a_simulation(gm(0.5, gammas), 60, taus, rounds=80, seed=4)   # each τ replaces 0.5
    theory = leakage.marginal_leak_probability(60, gammas[:, None], tau=taus[None, :], d=D, R=R).p
    assert np.array_equal(sim.theory, theory)
    assert np.all(np.abs(sim.p - theory) <= Z * np.maximum(sim.se, 1e-3))
    # τ cell k: one engine call over the γ grid, keyed by (seed, τ_k)
    for k, tau in enumerate(taus):
        run = engine.simulate(gaussian.GaussianMean(gammas, tau=tau, d=D, R=R), Memoryless(q=0.0, r=0.0), T=1,
                              n0=60, trials=80, seed=keyed.cell_key(4, tau))
        assert np.array_equal(sim.p[:, k], run.leak_fraction[..., 0].mean(axis=-1))


def test_leak_fractions_under_the_authors_conventions_use_the_exact_statistic():
    sim = experiments.figure3a_simulation(gm(0.05, [1.0]), 30, rounds=40, seed=2, conventions="authors")
    assert sim.settings["statistic"] == "exact"
    exact = leakage.marginal_leak_probability(30, 1.0, tau=0.05, d=D, R=R, statistic="exact").p
    assert sim.theory[0, 0] == exact and abs(sim.p[0, 0] - exact) <= Z * sim.se[0, 0]


def test_leak_fractions_theory_is_lemma_8_under_the_mechanisms_data_model_and_options_at_any_threshold():
    # the mechanism holds the data model (an anisotropic Σ: simulated from the records) and the p_τ options
    Sigma = np.diag([1.0, 2.0, 0.5])
    mech = gaussian.GaussianMean([1.0, 3.0], tau=0.1, d=3, R=10.0, Sigma=Sigma, leak_method=leakage.Integration("montecarlo", 4000, 7))
    sim = experiments.figure3a_simulation(mech, 40, [0.05, 0.3], rounds=300, seed=5)
    ref = leakage.marginal_leak_probability(40, np.array([[1.0], [3.0]]), tau=np.array([[0.05, 0.3]]), d=3, R=10.0,
                                            Sigma=Sigma, method=leakage.Integration("montecarlo", 4000, mech.leak_seed))
    assert np.array_equal(sim.theory, ref.p) and np.array_equal(sim.theory_at([0.05, 0.3]), ref.p)
    assert np.all(np.abs(sim.p - ref.p) <= Z * np.hypot(sim.se, ref.se))
    assert sim.theory_at(0.3).shape == (2, 1) and sim.theory_at(0.3)[:, 0].tolist() == ref.p[:, 1].tolist()
    with pytest.raises(TypeError, match="^mechanism must be a perfpriv.gaussian.GaussianMean"):
        experiments.figure3a_simulation(bernoulli.RandomizedResponse(1.0), 40, rounds=3)


def test_leak_dispersion_counts_are_the_keyed_round_and_their_mean_is_lemma_8():
    res = experiments.leak_dispersion(2.0, tau=0.02, n=200, trials=300, seed=6)
    run = engine.simulate(gaussian.GaussianMean(2.0, tau=0.02, d=D, R=R), Memoryless(q=0.0, r=0.0), T=1, n0=200,
                          trials=300, seed=keyed.cell_key(6, 2.0, 0.02, 200))
    assert np.array_equal(res.counts, run.leaked[:, 0])
    p = leakage.marginal_leak_probability(200, 2.0, tau=0.02, d=D, R=R).p
    se = res.counts.std(ddof=1) / math.sqrt(300)
    assert abs(res.mean - 200 * p) <= Z * se
    assert res.binomial_variance == pytest.approx(200 * (res.mean / 200) * (1 - res.mean / 200), rel=1e-12)
    assert res.ratio == pytest.approx(res.variance / res.binomial_variance, rel=1e-12)


# ---------------------------------------------------------------- Figs. 3b-3c, Theorem 3, Lemma 12
def test_exact_floor_check_simulates_the_closed_form_floor_and_is_the_keyed_run_of_each_population():
    res = experiments.exact_floor_check([20, 100, 250, 400], taus=(0.02, 0.05), rounds=1500, seed=5)
    np.testing.assert_array_equal(res.floor, leakage.exact_leak_floor(res.ns[None, :], d=D, tau=res.taus[:, None]))
    tol = Z * np.sqrt(res.floor * (1 - res.floor) / res.rounds) + 1.0 / res.rounds
    assert np.all(np.abs(res.p - res.floor) < tol), (res.p, res.floor)
    assert np.all(np.abs(res.theory - res.floor) < 1e-6)            # gamma = 1e4 is the limit already
    assert res.p[0, 1] > 0.15 and np.all(res.p[:, -1] == 0.0)       # a floor at N = 100, none at N = 400
    assert res.settings["statistic"] == "exact"
    # one population is the one-round run of Algorithm 1 keyed by the root seed and N
    run = engine.simulate(gaussian.GaussianMean(1e4, tau=0.05, d=D, R=R, statistic="exact"), Memoryless(q=0.0, r=0.0),
                          T=1, n0=100, trials=1500, seed=keyed.cell_key(5, 100))
    assert res.p[1, 1] == pytest.approx(run.leak_fraction[:, 0].mean(), abs=1e-15)


def test_first_round_growth_agrees_with_eq_13():
    c = experiments.growth_curves([gm(tau, [0.3, 1.5, 8.0]) for tau in (0.02, 0.05)], Memoryless(q=0.45, r=0.11),
                                  n0=500, trials=60, seed=1)
    for k, tau in enumerate((0.02, 0.05)):
        th = dynamics.growth_factor(gm(tau), Memoryless(q=0.45, r=0.11), n=500, gamma=c.gammas)
        assert np.array_equal(c.theory[k], th)
    assert np.all(np.abs(c.empirical - c.theory) <= Z * c.se)


def test_all_round_growth_ratio_is_the_pooled_ratio_of_the_keyed_run():
    # the rounds that ran, a run stopping once it is down to one user (as in the authors' code)
    c = experiments.growth_curves(gm(0.05, [0.5, 4.0]), Memoryless(q=0.11, r=0.52), n0=100, T=6, trials=3,
                                  ratio="rounds", policy=Policy(cap=400), seed=8)
    run = engine.simulate(gaussian.GaussianMean([0.5, 4.0], tau=0.05, d=D, R=R), Memoryless(q=0.11, r=0.52), T=6,
                          n0=100, trials=3, policy=Policy(cap=400, floor=0, stop=1), seed=keyed.cell_key(8, 0.05))
    pop = run.population.astype(float)
    for j, g in enumerate((0.5, 4.0)):
        ratios = (pop[j, :, 1:] / pop[j, :, :-1])[run.alive[j]]
        assert c.empirical[0, j] == pytest.approx(ratios.mean(), rel=1e-12)
        assert c.se[0, j] == pytest.approx(ratios.std(ddof=1) / math.sqrt(ratios.size), rel=1e-10)
        # path theory: eq. 13 at the population each counted ratio started from
        C = dynamics.growth_factor(gm(0.05, g), Memoryless(q=0.11, r=0.52), n=pop[j, :, :-1][run.alive[j]])
        assert c.path_theory[0, j] == pytest.approx(np.mean(C), rel=1e-12)
        assert c.residual_se[0, j] == pytest.approx((ratios - C).std(ddof=1) / math.sqrt(ratios.size), rel=1e-10)


def test_first_round_path_theory_is_eq_13_at_n0():
    c = experiments.growth_curves(gm(0.02, [0.5, 2.0]), USERS, n0=300, trials=20, seed=2)
    np.testing.assert_allclose(c.path_theory, c.theory, rtol=1e-13)
    np.testing.assert_allclose(c.residual_se, c.se, rtol=1e-13)


def test_unfloored_pooled_ratios_match_eq_13_along_their_paths_and_the_authors_floor_raises_them():
    # collapsing runs (q = 0.45, r = 0.11, small noise, N0 = 100): Lemma 8 holds round by round without a
    # floor; the floor at one user turns the ratio 0 of an emptying round into 1/N_{t-1}
    # (the floor is the policy's: Policy(floor=0) under the authors' conventions was the argument floor=0)
    mech, users = gm(0.02, [0.2, 0.5]), Memoryless(q=0.45, r=0.11)
    kw = dict(n0=100, T=20, trials=800, ratio="rounds", seed=5)
    paper = experiments.growth_curves(mech, users, **kw)
    unfloored = experiments.growth_curves(mech, users, conventions="authors", policy=Policy(floor=0), **kw)
    authors = experiments.growth_curves(mech, users, conventions="authors", **kw)
    assert paper.settings["policy"]["floor"] == 0 and authors.settings["policy"]["floor"] == 1
    assert unfloored.settings["policy"] == dict(authors.settings["policy"], floor=0)   # only the floor is set
    assert authors.settings["statistic"] == unfloored.settings["statistic"] == "exact"
    assert not np.array_equal(unfloored.empirical, authors.empirical)
    for c in (paper, unfloored):
        assert np.all(np.abs(c.empirical - c.path_theory) <= Z * c.residual_se)
    assert np.all(authors.empirical - authors.path_theory > Z * authors.residual_se)
    # same random numbers: the two exact-statistic runs differ only at the rounds that empty the platform,
    # by 1/N_{t-1} each (recomputed from the raw unfloored run)
    run = engine.simulate(gaussian.GaussianMean([0.2, 0.5], tau=0.02, d=D, R=R, statistic="exact"),
                          Memoryless(q=0.45, r=0.11), T=20, n0=100, trials=800, policy=Policy(floor=0, stop=1),
                          seed=keyed.cell_key(5, 0.02))
    pop = run.population.astype(float)
    for j in range(2):
        prev, new, alive = pop[j, :, :-1], pop[j, :, 1:], run.alive[j]
        # the unfloored curve is the pooled ratio of this raw run, number for number
        assert unfloored.empirical[0, j] == pytest.approx((new / np.maximum(prev, 1.0))[alive].mean(), rel=1e-12)
        lift = np.where(alive & (new == 0), 1.0 / np.maximum(prev, 1.0), 0.0).sum() / alive.sum()
        assert lift > 0
        assert authors.empirical[0, j] - unfloored.empirical[0, j] == pytest.approx(lift, rel=1e-9)


def test_theorem3_inverse_population_agrees_with_the_agent_reference():
    # the agent-by-agent Algorithm 1 is written independently of the engine
    gamma, tau, q, r, n, trials = 1.0, 0.05, 0.5, 0.4, 4, 600
    chk = experiments.theorem3_check(gm(tau, gamma), Memoryless(q=q, r=r), sizes=(n,), trials=trials, seed=3)
    ref = engine.simulate_agents(gm(tau, gamma), Memoryless(q=q, r=r), T=1, n0=n, trials=trials,
                                 policy=Policy(floor=0, cap=None), seed=9)
    inv = 1.0 / np.maximum(ref.population[:, 1], 1.0)
    assert abs(chk.inverse[0] - inv.mean()) <= Z * math.hypot(chk.se[0], inv.std(ddof=1) / math.sqrt(trials))


def test_theorem3_bounds_are_lemma_3_bounds_over_the_one_record_error():
    sizes = np.array([5, 50, 500])
    chk = experiments.theorem3_check(gm(0.02, 2.0), USERS, sizes=sizes, trials=300, seed=3)
    b = dynamics.error_bounds(gm(0.02, 2.0), Memoryless(q=0.3, r=0.6), n_prev=sizes.astype(float))
    one = 2.0**2 * D + D
    np.testing.assert_allclose(chk.lower, b.lower / one, rtol=1e-14)
    np.testing.assert_allclose(chk.upper, b.upper / one, rtol=1e-14)
    assert chk.kappa == dynamics.kappa(Memoryless(q=0.3, r=0.6))
    # in the growth regime with populations that never reach zero, Jensen's lower bound holds
    assert np.all(chk.holds_lower) and np.all(chk.inverse >= chk.lower - Z * chk.se)


def test_mean_field_paths_are_the_dynamics_paths_and_lemma_12_holds():
    m = experiments.mean_field_paths(gm(0.02, 1.0), USERS, T=12, n0=300, trials=2, seed=8)
    mech, users = gm(0.02, 1.0), Memoryless(q=0.3, r=0.6)
    kw = dict(T=12, n0=300)
    assert np.array_equal(m.free, engine.mean_field(mech, users, cap=experiments.UNCAPPED, **kw).population)
    assert np.array_equal(m.capped, engine.mean_field(mech, users, cap=20000, **kw).population)
    assert np.array_equal(m.growth_free, dynamics.growth_factor(mech, users, n=m.free[:-1]))
    assert np.all(np.diff(m.growth_free) > 0)            # Lemma 12: C_t rises with the population
    assert np.all(np.diff(m.p) < 0)                      # p_τ falls with N
    run = gaussian.simulate(1.0, tau=0.02, q=0.3, r=0.6, T=12, n0=300, d=D, R=R, trials=2,
                            seed=keyed.cell_key(8, 1.0, 0.02, 0.3, 0.6))
    assert np.array_equal(m.simulated, run.population)


# ---------------------------------------------------------------- Lemma 9, horizon, Figs. 4-5, Theorem 4
def test_lemma9_check_holds_the_search_values_the_bound_and_its_shifted_sum():
    kw = dict(T=6, n0=80, trials=4, seed=2)
    chk = experiments.lemma9_check(gm(0.02, (0.5, 2.0)), cells((0.1, 0.3), (0.6, 0.9)), T=6, n0=80, trials=4, seed=2)
    assert np.all(chk.growth > 1) and chk.cases.shape == (chk.bound.size, 3)
    emp = optimize.optimal_gamma_empirical(gm(0.02, [0.5, 2.0]), Memoryless(q=np.array([[0.1], [0.3]]),
                                                                            r=np.array([0.6, 0.9])),
                                           policy=Policy(cap=20000), **kw)
    for (q, r, g), sim, bound, shifted, c1 in zip(chk.cases, chk.simulated, chk.bound, chk.shifted, chk.growth):
        i, j, k = [0.1, 0.3].index(q), [0.6, 0.9].index(r), [0.5, 2.0].index(g)
        assert sim == emp.values[i, j, k]
        assert bound == dynamics.cumulative_error_bound(gm(0.02, g), Memoryless(q=q, r=r), T=6, n0=80)
        by_hand = sum((g**2 * D + D) / (80 * c1**t) for t in range(6))   # Σ_{t=0}^{T-1}, Algorithm 1's indexing
        assert shifted == pytest.approx(by_hand, rel=1e-12)
    assert np.array_equal(chk.holds, chk.simulated <= chk.bound)


def test_horizon_curves_hold_the_library_optima():
    h = experiments.horizon_curves(gm(0.02, [0.5, 1.0, 2.0]), USERS, T=5, n0=80, trials=4, seed=1)
    assert h.gamma_bound == optimize.optimal_gamma(gaussian.GaussianMean(tau=0.02, d=D, R=R), Memoryless(q=0.3, r=0.6),
                                                   T=5, n0=80).gamma
    assert h.gamma_mean_field == h.fine[np.argmin(h.mean_field)]
    emp = optimize.optimal_gamma_empirical(gm(0.02, [0.5, 1.0, 2.0]), Memoryless(q=0.3, r=0.6), T=5, n0=80, trials=4,
                                           seed=1)
    assert np.array_equal(h.simulated, emp.values) and h.gamma_empirical == emp.gamma
    assert h.gamma_c == dynamics.critical_gamma(gm(0.02), Memoryless(q=0.3, r=0.6), n=80)
    theory = experiments.horizon_curves(gm(0.02, [0.5, 1.0, 2.0]), USERS, T=5, n0=80, empirical=False)
    assert np.all(np.isnan(theory.simulated)) and np.array_equal(theory.mean_field, h.mean_field)


GSM = dict(T=5, n0=40, trials=3, seed=5)
QS, RS = np.array([0.2, 0.6]), np.array([0.3, 0.5, 0.8])
#: the mechanism and the (q, r) grid of the γ* maps here
GSM_MODEL = (gm(0.05, [0.3, 1.0, 4.0]), cells(QS, RS))
EMPIRICAL = ("empirical",)


def test_gamma_star_map_is_the_argmin_of_the_search_and_the_theory_of_optimize():
    m = experiments.gamma_star_map(*GSM_MODEL, **GSM)
    Q, Rr = np.meshgrid(QS, RS, indexing="ij")
    emp = optimize.optimal_gamma_empirical(gm(0.05, [0.3, 1.0, 4.0]), Memoryless(q=Q, r=Rr), policy=Policy(cap=20000),
                                           **GSM)
    assert np.array_equal(m.values, emp.values) and np.array_equal(m.se, emp.se)
    assert np.array_equal(m.empirical, emp.gamma)
    model = (gaussian.GaussianMean(tau=0.05, d=D, R=R), Memoryless(q=Q, r=Rr))
    th = dict(T=5, n0=40)
    assert np.array_equal(m.bound, optimize.optimal_gamma(*model, objective="bound", **th).gamma)
    assert np.array_equal(m.constrained, optimize.optimal_gamma(*model, constrained=True, **th).gamma,
                          equal_nan=True)
    assert np.array_equal(m.mean_field, optimize.optimal_gamma(*model, objective="mean_field",
                                                              policy=Policy(cap=20000), rounds="algorithm",
                                                              **th).gamma)


class CountingStore(dict):
    writes = 0

    def __setitem__(self, key, value):
        type(self).writes += 1
        super().__setitem__(key, value)


def test_an_interrupted_gamma_star_map_resumes_from_its_store_to_the_same_numbers():
    whole = experiments.gamma_star_map(*GSM_MODEL, maps=EMPIRICAL, **GSM)
    store = {}

    def stop_after_first_batch(count):
        if len(store) >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        experiments.gamma_star_map(*GSM_MODEL, maps=EMPIRICAL, **GSM,
                                   options=sweep.Execution(store=store, on_cells=stop_after_first_batch, chunk=1,
                                                           n_jobs=1))
    assert 2 <= len(store) < QS.size * RS.size
    kept = dict(store)
    counted = CountingStore(store)
    CountingStore.writes = 0
    done = []
    again = experiments.gamma_star_map(*GSM_MODEL, maps=EMPIRICAL, **GSM,
                                       options=sweep.Execution(store=counted, on_cells=done.append))
    assert CountingStore.writes == QS.size * RS.size - len(kept)           # the stored cells are not simulated again
    assert sum(done) == QS.size * RS.size
    assert np.array_equal(again.values, whole.values) and np.array_equal(again.se, whole.se)
    assert np.array_equal(again.empirical, whole.empirical)
    for (tau, q, r), value in counted.items():
        i, j = list(QS).index(q), list(RS).index(r)
        assert tau == 0.05 and np.array_equal(value, np.stack([whole.values[i, j], whole.se[i, j]]))
    # a stored value of the wrong shape is computed again
    bad = dict(counted)
    bad[(0.05, 0.2, 0.3)] = np.zeros(5)
    fixed = experiments.gamma_star_map(*GSM_MODEL, maps=EMPIRICAL, **GSM, options=sweep.Execution(store=bad))
    assert np.array_equal(fixed.values, whole.values) and bad[(0.05, 0.2, 0.3)].shape == (2, 3)


def test_experiments_do_not_depend_on_n_jobs_or_the_chunk_size():
    ref = experiments.gamma_star_map(*GSM_MODEL, maps=EMPIRICAL, **GSM, options=sweep.Execution(chunk=4, n_jobs=1))
    other = experiments.gamma_star_map(*GSM_MODEL, maps=EMPIRICAL, **GSM,
                                       options=sweep.Execution(chunk=1, n_jobs=2, store={}))
    assert np.array_equal(ref.values, other.values) and np.array_equal(ref.se, other.se)
    kw = dict(n0=60, T=3, trials=3, ratio="rounds", seed=2)
    mechs = [gm(tau, [0.5, 2.0]) for tau in (0.02, 0.05)]
    one = experiments.growth_curves(mechs, USERS, n_jobs=1, **kw)
    two = experiments.growth_curves(mechs, USERS, n_jobs=2, **kw)
    assert np.array_equal(one.empirical, two.empirical) and np.array_equal(one.se, two.se)
    alone = experiments.growth_curves(gm(0.05, [2.0]), USERS, **kw)
    assert alone.empirical[0, 0] == one.empirical[1, 1]         # a τ cell and a γ alone: the same numbers
    a = experiments.figure3a_simulation(gm(0.02, [0.5, 2.0]), 30, [0.02, 0.2, 0.5], rounds=5, seed=3,
                                        options=sweep.Execution(n_jobs=1))
    b = experiments.figure3a_simulation(gm(0.02, [0.5, 2.0]), 30, [0.02, 0.2, 0.5], rounds=5, seed=3,
                                        options=sweep.Execution(n_jobs=2))
    assert np.array_equal(a.p, b.p) and np.array_equal(a.se, b.se)
    t1 = experiments.theorem3_check(gm(0.02, 2.0), USERS, sizes=(3, 30), trials=20, n_jobs=1)
    t2 = experiments.theorem3_check(gm(0.02, 2.0), USERS, sizes=(3, 30), trials=20, n_jobs=2)
    assert np.array_equal(t1.inverse, t2.inverse)
    g1 = experiments.gain_map(bernoulli.RandomizedResponse(1.0), [0.3, 0.6], [0.6], T=5, n0=50, n_jobs=1)
    g2 = experiments.gain_map(bernoulli.RandomizedResponse(1.0), [0.3, 0.6], [0.6], T=5, n0=50, n_jobs=2)
    assert np.array_equal(g1.gain, g2.gain)


def test_pac_coverage_is_the_chi_square_law_of_a_release_at_theorem_4s_round():
    # a population held at n0 = cap (q = 0: nobody leaves): every release of Algorithm 1 is the mean of n0
    # records (Σ = I; clipping at R = 10 is below 1e-14 in d = 12) plus noise of variance γ²/n0, so its squared
    # error is (1 + γ²)/n0 · χ²_d at every round, and the coverage at Theorem 4's round a chi-square probability
    g, n0, trials, eps = 2.0, 600, 400, np.array([0.25, 0.3, 0.35, 0.45])
    pac = experiments.pac_coverage(gm(0.02, g), Memoryless(q=0.0, r=0.6), epsilons=eps, delta=0.1, T=17, n0=n0,
                                   policy=Policy(cap=n0), trials=trials, seed=5)
    rounds = [dynamics.pac_rounds(gm(0.02, g), Memoryless(q=0.0, r=0.6), n0, epsilon=e, delta=0.1) for e in eps]
    assert np.array_equal(pac.rounds, rounds) and np.all(pac.rounds < 17)
    p = stats.chi2.cdf(eps**2 * n0 / (1 + g**2), D)                       # 0.18, 0.45, 0.74, 0.98
    assert np.all(np.abs(pac.coverage - p) <= Z * np.sqrt(p * (1 - p) / trials)), (pac.coverage, p)
    # the standard error of a binomial proportion, by its definition
    np.testing.assert_allclose(pac.coverage_se, np.sqrt(pac.coverage * (1 - pac.coverage) / trials), rtol=1e-12)
    # the (1 − δ) quantile of the error is √((1 + γ²)/n0 · χ²_{d, 0.9}) = 0.39 at every round: it is below
    # 0.45 from round 0 on and never below the three smaller radii
    assert 0.35 < math.sqrt((1 + g**2) / n0 * stats.chi2.ppf(0.9, D)) < 0.45
    assert pac.needed[3] == 0 and np.all(np.isnan(pac.needed[:3]))


# ---------------------------------------------------------------- Bernoulli
def test_final_error_curve_is_the_search_at_one_cell_and_follows_the_mean_field():
    eps = np.array([0.5, 2.0, np.inf])
    f = experiments.final_error_curve(bernoulli.RandomizedResponse(eps), Memoryless(q=0.1, r=0.9), T=15, n0=2000,
                                      trials=200, seed=3)
    res = optimize.optimal_epsilon(bernoulli.RandomizedResponse(eps, mu=(0.0, 1.0)), Memoryless(q=0.1, r=0.9), T=15,
                                   n0=2000, trials=200, seed=3)
    assert np.array_equal(f.mean, res.values) and f.epsilon_star == res.epsilon
    assert np.array_equal(f.theory, bernoulli.mean_field(f.fine, q=0.1, r=0.9, T=15, n0=2000).sq_error[..., -1])
    mf = bernoulli.mean_field(eps, q=0.1, r=0.9, T=15, n0=2000).sq_error[..., -1]
    # a large population: the mean field is within its Monte Carlo error and a 2% Jensen allowance
    assert np.all(np.abs(f.mean - mf) <= Z * f.se + 0.02 * mf)
    assert f.epsilon_c == bernoulli.critical_epsilon(q=0.1, r=0.9)


def test_final_error_curve_takes_the_models_law_clip_and_policy_and_its_mean_field_clips_at_the_policy():
    # μ_T ~ U(0.5, 1), clipped estimates, a cap of 300 under the authors' conventions (floor 0 for the runs): the
    # simulation is the search with these objects, the mean field bernoulli.mean_field with the cap and floor 1
    eps = np.array([0.3, 3.0, np.inf])
    mech, users = bernoulli.RandomizedResponse(eps, mu=(0.5, 1.0), clip_estimate=True), Memoryless(q=0.2, r=0.6,
                                                                                                  rule="agnostic")
    f = experiments.final_error_curve(mech, users, T=8, n0=100, trials=20, policy=Policy(cap=300),
                                      conventions="authors", seed=2, fine=[0.3, 1.0])
    res = optimize.optimal_epsilon(mech, users, T=8, n0=100, trials=20, policy=Policy(cap=300), conventions="authors",
                                   seed=2)
    assert np.array_equal(f.mean, res.values) and np.array_equal(f.se, res.se)
    mf = dict(q=0.2, r=0.6, T=8, n0=100, rule="agnostic", cap=300, floor=1, mu=(0.5, 1.0))
    assert np.array_equal(f.theory, bernoulli.mean_field([0.3, 1.0], **mf).sq_error[..., -1])
    assert f.theory_inf == bernoulli.mean_field(np.inf, **mf).sq_error[-1] and f.rule == "agnostic"
    assert f.settings["cap"] == 300 and f.settings["clip_estimate"] and f.settings["policy"]["floor"] == 0


def test_curve_runs_are_the_engine_runs_of_each_users_seeded_in_turn():
    eps = [0.5, np.inf]
    users = [Memoryless(q=0.6, r=0.3), Memoryless(q=0.3, r=0.6, rule="agnostic")]
    heard = []
    runs = experiments.curve_runs(bernoulli.RandomizedResponse(eps), users, T=6, n0=50, trials=3, seed=4,
                                  options=sweep.Execution(on_cells=heard.append))
    assert len(runs) == 2 and heard == [1, 1]                 # one report per run, a safe point for the command line
    for k, (run, u) in enumerate(zip(runs, users)):
        ref = bernoulli.simulate(eps, q=u.q, r=u.r, rule=u.rule, T=6, n0=50, trials=3, seed=4 + k)
        assert np.array_equal(run.population, ref.population) and np.array_equal(run.sq_error, ref.sq_error)
    # the authors' curve script, not their map script: floor 1, no stop, estimates clipped to [0, 1]
    script = experiments.curve_runs(bernoulli.RandomizedResponse(eps), users[:1], T=6, n0=50, trials=3, seed=4,
                                    conventions="authors", policy=Policy(cap=80))[0]
    opts = bernoulli.curve_script_options("authors", cap=80)
    ref = engine.simulate(bernoulli.RandomizedResponse(eps, clip_estimate=opts["clip_estimate"]), users[0], T=6, n0=50,
                          trials=3, policy=opts["policy"], conventions=opts["conventions"], seed=4)
    assert np.array_equal(script.population, ref.population) and np.array_equal(script.sq_error, ref.sq_error)
    assert script.policy.describe() == dict(cap=80, floor=1, stop=0, collapse="floor", penalty=0.0)
    estimate = script.details["estimate"]
    assert script.mechanism.clip_estimate and np.all((estimate >= 0) & (estimate <= 1))


# ---------------------------------------------------------------- schedules
#: The Gaussian template of the schedule comparisons (its level is replaced by the schedules) and its users.
SCHED_MODEL = (gaussian.GaussianMean(tau=0.02, d=D, R=R), USERS)
SCHED = dict(n0=80)


def test_schedule_comparison_is_paired_and_its_constant_row_is_the_constant_level_alone():
    sched = {"constant": np.full(4, 1.0), "same": np.full(4, 1.0), "decay": [2.0, 1.0, 0.7, 0.5]}
    cmp = experiments.compare_schedules(sched, *SCHED_MODEL, trials=40, seed=4, **SCHED)
    assert cmp.difference[1] == 0.0 and cmp.difference_se[1] == 0.0      # same schedule, same draws
    assert cmp.difference_se[2] < math.hypot(cmp.se[0], cmp.se[2])      # pairing cancels variance
    run = engine.simulate(gaussian.GaussianMean(1.0, tau=0.02, d=D, R=R), Memoryless(q=0.3, r=0.6), T=4, n0=80, trials=40, seed=4, policy=Policy(stop=1))
    assert cmp.simulated[0] == run.cumulative_error.mean()
    for k, row in enumerate(cmp.schedules):
        assert cmp.mean_field[k] == engine.mean_field(
            gm(0.02, Schedule(row)), Memoryless(q=0.3, r=0.6), T=4, n0=80, rounds="algorithm").cumulative_error


def test_schedule_comparison_charges_collapsed_rounds_the_one_record_error_like_the_mean_field():
    # q = 1, r = 0 and tiny noise: everyone leaks and leaves in round 1, the next rounds are collapsed
    sched = {"tiny": np.full(4, 0.01), "decay": [0.01, 0.02, 0.04, 0.08]}
    model = (gaussian.GaussianMean(tau=0.02, d=3, R=50.0), Memoryless(q=1.0, r=0.0))
    kw = dict(n0=5, trials=8, seed=5)
    floor = experiments.compare_schedules(sched, *model, **kw)
    repeat = experiments.compare_schedules(sched, *model, policy=Policy(collapse="repeat"), **kw)
    for k, g in enumerate(sched.values()):
        g = np.asarray(g, float)
        run = gaussian.simulate(Schedule(g), tau=0.02, q=1.0, r=0.0, T=4, trials=8, seed=5, n0=5, d=3, R=50.0)
        assert np.all(run.population[:, 1] == 1)          # floored at one user: the run stops there
        first = run.sq_error[:, 0].mean()
        later = (g[1:] ** 2 * 3 + 3).sum()               # (γ_t² Tr I + d) for t = 2..4
        assert floor.simulated[k] == pytest.approx(first + later, rel=1e-12)
        assert repeat.simulated[k] == pytest.approx(4 * first, rel=1e-12)
        # the mean field floors the population at one user: the same charge after round 1
        assert floor.mean_field[k] == pytest.approx((g[0] ** 2 * 3 + 3) / 5 + later, rel=1e-6)


def test_epsilon_schedule_comparison_agrees_with_the_mean_field_in_a_large_population():
    eps = {"two-phase": np.r_[np.full(5, 0.5), np.full(5, 2.0)], "constant": np.full(10, 1.0),
           "none": np.full(10, np.inf)}
    cmp = experiments.compare_schedules(eps, bernoulli.RandomizedResponse(1.0), USERS, n0=2000, trials=600, seed=3)
    assert np.all(np.abs(cmp.simulated - cmp.mean_field) <= Z * cmp.se + 0.01 * cmp.mean_field)
    run = bernoulli.simulate(Schedule(np.stack(list(eps.values()))), q=0.3, r=0.6, T=10, n0=2000, trials=600,
                             seed=3)
    assert np.array_equal(cmp.simulated, run.cumulative_error.mean(axis=-1))


@pytest.mark.parametrize("rule, mu, cap", [("leak", (0.0, 1.0), None), ("agnostic", (0.2, 0.7), 150)])
def test_epsilon_schedule_comparison_is_bernoullis_mean_field_summed_over_rounds(rule, mu, cap):
    # a RandomizedResponse template (its ε = 3 replaced by the schedules; its law of μ_t, the users' rule and the
    # policy's cap kept): the mean-field column is bernoulli.mean_field of the schedules, summed over the rounds
    eps = {"two-phase": np.r_[np.full(4, 0.5), np.full(4, 2.0)], "constant": np.full(8, 1.0),
           "none": np.full(8, np.inf)}
    cmp = experiments.compare_schedules(eps, bernoulli.RandomizedResponse(3.0, mu=mu),
                                        Memoryless(q=0.3, r=0.6, rule=rule), n0=100, trials=3, seed=1,
                                        policy=None if cap is None else Policy(cap=cap))
    mf = bernoulli.mean_field(Schedule(np.stack(list(eps.values()))), q=0.3, r=0.6, T=8, n0=100, rule=rule, mu=mu,
                              cap=20000 if cap is None else cap)
    np.testing.assert_allclose(cmp.mean_field, mf.sq_error.sum(axis=-1), rtol=1e-13)
    np.testing.assert_array_equal(cmp.schedules, np.stack(list(eps.values())))
    assert cmp.settings["rule"] == rule and (cmp.settings["q"], cmp.settings["r"]) == (0.3, 0.6)
    assert cmp.settings["policy"]["cap"] == (20000 if cap is None else cap)


def test_gain_map_cells_are_the_optimizers_results():
    m = experiments.gain_map(bernoulli.RandomizedResponse(1.0), [0.3, 0.6], [0.4, 0.7], T=6, n0=60)
    for i, q in enumerate((0.3, 0.6)):
        for j, r in enumerate((0.4, 0.7)):
            res = optimize.optimal_schedule(bernoulli.RandomizedResponse(1.0), Memoryless(q=q, r=r), T=6, n0=60)
            assert (m.gain[i, j], m.constant[i, j], m.first[i, j], m.last[i, j]) == \
                (res.gain, res.constant, res.epsilon[0], res.epsilon[-1])
    assert np.isnan(m.tau)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("call, name", [
    (lambda: experiments.growth_curves(gm(0.02, [1.0]), Memoryless(q=1.5, r=0.5)), "q"),      # the users refuse it
    (lambda: experiments.growth_curves(gm(0.02, [1.0]), Memoryless(q=0.5, r=0.5), ratio="all"), "ratio"),
    (lambda: experiments.growth_curves(gm(0.0, [1.0]), Memoryless(q=0.5, r=0.5)), "tau"),    # the mechanism does
    (lambda: experiments.theorem3_check(gm(0.02, 2.0), USERS, sizes=(1,)), "sizes"),
    (lambda: experiments.leak_dispersion(2.0, tau=-1.0), "tau"),
    (lambda: experiments.leak_dispersion(2.0, tau=0.02, trials=2), "trials"),
    (lambda: experiments.figure3a_simulation(gm(0.1, [1.0]), 1, rounds=5), "n"),
    (lambda: experiments.exact_floor_check([1], rounds=5), "ns"),
    (lambda: experiments.exact_floor_check([10.5], rounds=5), "ns"),
    (lambda: experiments.exact_floor_check([10], rounds=1), "rounds"),
    (lambda: experiments.figure3a_simulation(gm(0.1, [1.0], statistic="other"), 10, rounds=5), "statistic"),
    (lambda: experiments.figure3a_simulation(gm(0.1, [1.0]), 10, rounds=5, conventions="code"), "conventions"),
    (lambda: experiments.figure3a_simulation(gm(0.1, Schedule([1.0, 2.0])), 10, rounds=5), "^mechanism must hold"),
    (lambda: experiments.figure3a_simulation(gm(0.1, [1.0]), 10, [[0.1, 0.2]], rounds=5), "^taus must"),
    # the (q, r) grid is the users' cells: a joining rate out of [0, 1] is refused by the users (was: "rs")
    (lambda: experiments.gamma_star_map(gm(0.02), cells([0.3], [1.2])), "r must"),
    (lambda: experiments.gamma_star_map(gm(0.02), Memoryless(q=[[0.3, 0.4]], r=[[0.5, 0.6]])), "^users must span"),
    (lambda: experiments.gamma_star_map(gm(0.02), cells([0.3], [0.5]), maps=("empirical", "guess")), "^maps"),
    (lambda: experiments.lemma9_check(gm(0.0, [1.0]), USERS), "tau"),
    (lambda: experiments.compare_schedules({"a": [1.0]}, *SCHED_MODEL, reference="b", **SCHED), "reference"),
    (lambda: experiments.compare_schedules({"a": [1.0], "b": [1.0, 2.0]}, *SCHED_MODEL, **SCHED),
     "same number of rounds"),
    (lambda: experiments.compare_schedules({"a": [1.0, -1.0]}, *SCHED_MODEL, **SCHED), "schedules"),
    (lambda: experiments.compare_schedules({"a": [np.inf]}, *SCHED_MODEL, **SCHED), "schedules"),  # ε only
    (lambda: experiments.compare_schedules({"a": [1.0]}, *SCHED_MODEL, policy=Policy(collapse="never"), **SCHED),
     "collapse"),
    (lambda: experiments.compare_schedules({}, *SCHED_MODEL, **SCHED), "schedules"),
    (lambda: experiments.final_error_curve(bernoulli.RandomizedResponse(1.0), Memoryless(q=0.3, r=0.6, rule="other")),
     "rule"),
    (lambda: experiments.final_error_curve(bernoulli.RandomizedResponse(1.0), Memoryless(q=[0.3, 0.5], r=0.6)),
     "^users must have one leaving rate"),
    (lambda: experiments.final_error_curve(bernoulli.RandomizedResponse(1.0), USERS, fine=[0.0, 1.0]), "^fine"),
    (lambda: experiments.curve_runs(bernoulli.RandomizedResponse(1.0), []), "^users must hold"),
    (lambda: experiments.curve_runs(bernoulli.RandomizedResponse(1.0), [USERS], conventions="code"), "conventions"),
])
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("call", [
    lambda: experiments.gamma_star_map(gm(0.02), cells([0.3], [0.5]), options=sweep.Execution(store=[])),
    lambda: experiments.gamma_star_map(gm(0.02), cells([0.3], [0.5]), options=sweep.Execution(on_cells=3)),
    lambda: experiments.gamma_star_map(gm(0.02), cells([0.3], [0.5]), options={"store": {}}),
    lambda: experiments.gamma_star_map(gm(0.02), cells([0.3], [0.5]), maps=3),
    lambda: experiments.gamma_star_map(gm(0.02), (0.3, 0.5)),                        # users: not a Memoryless
    lambda: experiments.gamma_star_map(gm(0.02), Memoryless(q=0.3, r=0.5, rule="agnostic")),  # nor the leak rule
    lambda: experiments.gamma_star_map(1.0, cells([0.3], [0.5])),                    # mechanism: not a GaussianMean
    lambda: experiments.theorem3_check(gm(0.02, 2.0), USERS, (2, 10)),       # sizes is keyword-only
    lambda: experiments.compare_schedules({"a": [1.0]}, *SCHED_MODEL, 30),    # n0 is keyword-only
    lambda: experiments.final_error_curve(gm(0.02), USERS),                 # mechanism: not a RandomizedResponse
    lambda: experiments.final_error_curve(bernoulli.RandomizedResponse(1.0), (0.3, 0.6)),   # users: not a Memoryless
    lambda: experiments.curve_runs(bernoulli.RandomizedResponse(1.0), USERS),      # users: one run per list entry
    lambda: experiments.curve_runs(bernoulli.RandomizedResponse(1.0), [(0.3, 0.6)]),
    lambda: experiments.curve_runs(bernoulli.RandomizedResponse(1.0), [USERS], seed="1"),
    lambda: experiments.curve_runs(bernoulli.RandomizedResponse(1.0), [USERS], options=print),
])
def test_wrong_types_and_positional_behaviour_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


# ---------------------------------------------------------------- the model objects (issue 31)
_ONE = gaussian.GaussianMean(1.0, tau=0.02, d=3, R=R)
_GRID = gaussian.GaussianMean([1.0, 3.0], tau=0.02, d=3, R=R)
#: name -> (its mechanism parameter, a small call's other arguments, whether it needs one γ, one (q, r) pair)
OBJECT_STUDIES = {
    "growth_curves": ("mechanisms", dict(n0=30, trials=2), False, True),
    "theorem3_check": ("mechanism", dict(sizes=[2, 10], trials=2), True, True),
    "mean_field_paths": ("mechanism", dict(T=3, n0=30, trials=0), True, True),
    "lemma9_check": ("mechanism", dict(T=3, n0=30, trials=2), False, False),
    "horizon_curves": ("mechanism", dict(T=3, n0=30, empirical=False), False, True),
    "pac_coverage": ("mechanism", dict(epsilons=[1.0], T=3, n0=30, trials=2), True, True),
}


def _study(name, mechanism, users):
    param, kwargs, _, _ = OBJECT_STUDIES[name]
    return getattr(experiments, name)(**{param: mechanism, "users": users}, **kwargs)


@pytest.mark.parametrize("name", sorted(OBJECT_STUDIES))
def test_a_study_takes_a_gaussian_mechanism_and_memoryless_users_and_names_what_it_refuses(name):
    param, _, one_gamma, one_pair = OBJECT_STUDIES[name]
    good = _ONE if one_gamma else _GRID
    _study(name, good, USERS)                                                   # the valid call runs
    for bad in (1.0, "gaussian", None, bernoulli.RandomizedResponse(1.0), regression.RidgeRelease(0.01, tau=0.02, data=regression.RidgeData(d=3))):
        with pytest.raises(TypeError, match=rf"^{param} must"):
            _study(name, bad, USERS)
    for bad in (None, (0.3, 0.6), {"q": 0.3, "r": 0.6}):
        with pytest.raises(TypeError, match=r"^users must"):
            _study(name, good, bad)
    # a mechanism without a level (a template), with a schedule or with levels per cell: no γ to study
    for bad in (gaussian.GaussianMean(tau=0.02, d=12, R=10.0),
                gaussian.GaussianMean(Schedule([1.0, 2.0, 3.0]), tau=0.02, d=3, R=R),
                gaussian.GaussianMean(engine.PerCell([1.0, 2.0]), tau=0.02, d=3, R=R)):
        with pytest.raises(ValueError, match=rf"^{param} must hold"):
            _study(name, bad, USERS)
    if one_gamma:                                                  # a γ grid where one γ is needed
        with pytest.raises(ValueError, match=rf"^{param} must hold one noise scale"):
            _study(name, _GRID, USERS)
    else:                                                          # a grid, or one γ as a grid of one
        assert _study(name, gaussian.GaussianMean([1.0], tau=0.02, d=3, R=R), USERS) is not None
    cells_users = cells([0.3, 0.5], [0.6])
    if one_pair:                                                   # array rates where one (q, r) pair is needed
        with pytest.raises(ValueError, match=r"^users must have one leaving rate q and one joining rate r"):
            _study(name, good, cells_users)
    else:                                                          # lemma9_check: the users' cells are its grid
        assert _study(name, good, cells_users).cases.shape[1] == 3


@pytest.mark.parametrize("name", sorted(k for k, v in OBJECT_STUDIES.items() if not v[2]))
def test_a_study_of_a_gamma_grid_takes_one_gamma_given_as_a_number(name):
    res = _study(name, _ONE, USERS)
    grid = _study(name, gaussian.GaussianMean([1.0], tau=0.02, d=3, R=R), USERS)
    for field in dataclasses.fields(res):
        if field.name != "settings":
            np.testing.assert_array_equal(getattr(res, field.name), getattr(grid, field.name), err_msg=field.name)


def test_growth_curves_draw_one_curve_per_mechanism_of_distinct_tau_on_one_gamma_grid():
    two = experiments.growth_curves([gm(0.02, [1.0, 3.0]), gm(0.05, [1.0, 3.0])], USERS, n0=30, trials=2)
    assert two.taus.tolist() == [0.02, 0.05] and two.gammas.tolist() == [1.0, 3.0] and two.theory.shape == (2, 2)
    with pytest.raises(ValueError, match=r"^mechanisms must have distinct thresholds tau"):
        experiments.growth_curves([gm(0.02, [1.0, 3.0]), gm(0.02, [1.0, 3.0])], USERS, n0=30, trials=2)
    for other in ([1.0, 4.0], [1.0], [1.0, 3.0, 10.0]):
        with pytest.raises(ValueError, match=r"^mechanisms must share their noise scales"):
            experiments.growth_curves([gm(0.02, [1.0, 3.0]), gm(0.05, other)], USERS, n0=30, trials=2)
    for bad in ([], (), [gm(0.02, [1.0]), "x"]):
        with pytest.raises(TypeError, match=r"^mechanisms must"):
            experiments.growth_curves(bad, USERS, n0=30, trials=2)


def test_compare_schedules_takes_a_mechanism_template_and_one_pair_of_rates():
    for bad in (1.0, "bernoulli", None, regression.RidgeRelease(0.01, tau=0.02, data=regression.RidgeData(d=3))):
        with pytest.raises(TypeError, match=r"^mechanism must"):
            experiments.compare_schedules({"a": [1.0, 1.0]}, bad, USERS, n0=30, trials=2)
    for mech in SCHED_MODEL[0], bernoulli.RandomizedResponse(1.0):
        with pytest.raises(TypeError, match=r"^users must"):
            experiments.compare_schedules({"a": [1.0, 1.0]}, mech, (0.3, 0.6), n0=30, trials=2)
        with pytest.raises(ValueError, match=r"^users must have one leaving rate q"):
            experiments.compare_schedules({"a": [1.0, 1.0]}, mech, cells([0.3, 0.5], [0.6]), n0=30, trials=2)
    # the template's own level, if any, is replaced by the schedules: the same numbers with or without it
    plain = experiments.compare_schedules({"a": [1.0, 2.0]}, gm(0.02, None), USERS, n0=30, trials=3, seed=1)
    level = experiments.compare_schedules({"a": [1.0, 2.0]}, gm(0.02, 5.0), USERS, n0=30, trials=3, seed=1)
    assert np.array_equal(plain.simulated, level.simulated) and np.array_equal(plain.mean_field, level.mean_field)


# ---------------------------------------------------------------- robustness (issue 32)
SMALL_RUNS = {
    "figure3a_simulation": dict(mechanism=gaussian.GaussianMean([1.0], tau=0.02, d=3, R=R), n=30, rounds=2),
    "exact_floor_check": dict(ns=[10, 20], taus=[0.02], gamma=1e4, rounds=2, d=3),
    "growth_curves": dict(mechanisms=gaussian.GaussianMean([1.0], tau=0.02, d=3, R=R), users=USERS, n0=30, T=1,
                          trials=2),
    "theorem3_check": dict(mechanism=gaussian.GaussianMean(1.0, tau=0.02, d=3, R=R), users=USERS, sizes=[2, 10],
                           trials=2),
    "lemma9_check": dict(mechanism=gaussian.GaussianMean([1.0, 3.0], tau=0.02, d=3, R=R), users=cells([0.3], [0.6]),
                         T=3, n0=30, trials=2),
    "gamma_star_map": dict(mechanism=gaussian.GaussianMean([1.0, 3.0, 10.0], tau=0.02, d=3, R=R),
                           users=cells([0.3], [0.6]), T=3, n0=30, trials=2, maps=("empirical",)),
    "gain_map": dict(mechanism=bernoulli.RandomizedResponse(1.0), qs=[0.3], rs=[0.6], T=3, n0=30),
}


@pytest.mark.parametrize("name", sorted(SMALL_RUNS))
@pytest.mark.parametrize("bad", ["2", 0, -2, 1.5, True, 10**12])
def test_n_jobs_is_checked_by_every_experiment_before_any_work(name, bad):
    # was: "'<' not supported between instances of 'str' and 'int'", joblib's "n_jobs == 0 in Parallel has
    # no meaning", and 10**12 accepted (that many worker processes)
    with pytest.raises((ValueError, TypeError), match=r"^n_jobs must be None, -1 \(every core\) or an integer"):
        if name in ("gamma_star_map", "figure3a_simulation"):   # their workers come in options=sweep.Execution(...)
            getattr(experiments, name)(**SMALL_RUNS[name], options=sweep.Execution(n_jobs=bad))
        else:
            getattr(experiments, name)(**SMALL_RUNS[name], n_jobs=bad)


def test_theorem3_check_bounds_its_sizes_up_front():
    # was: SystemError from the compiled round (an allocation failure) at sizes of 1e12
    kw = dict(SMALL_RUNS["theorem3_check"])
    with pytest.raises(ValueError, match="^sizes is too large"):
        experiments.theorem3_check(**dict(kw, sizes=[2, 10**12]))
    with pytest.raises(ValueError, match="^sizes must"):
        experiments.theorem3_check(**dict(kw, sizes=[[2, 3], [4]]))
    with pytest.raises(ValueError, match="^sizes must be a 1-D"):
        experiments.theorem3_check(**dict(kw, sizes=[[2, 3], [4, 5]]))
    assert experiments.theorem3_check(**dict(kw, sizes=[2.0, 10.0])).sizes.tolist() == [2, 10]


def test_a_round_larger_than_the_population_cap_names_n():
    # was: "cap must be >= n0; got cap=20000, n0=..." (neither is an argument of these functions)
    with pytest.raises(ValueError, match=r"^n must be an integer in \[2, 20000\].*got 1000000000000"):
        experiments.figure3a_simulation(**dict(SMALL_RUNS["figure3a_simulation"], n=10**12))
    with pytest.raises(ValueError, match=r"^n must be an integer in \[2, 20000\]"):
        experiments.leak_dispersion(1.0, tau=0.02, n=20001, trials=3, d=3)


def test_leak_dispersion_with_nothing_leaked_reports_the_documented_nan():
    # R = 1e-300: every record is the origin, no record's statistic passes τ; 0/0 is NaN, as documented
    res = experiments.leak_dispersion(1.0, tau=0.02, n=50, trials=3, d=3, R=1e-300)
    assert res.counts.tolist() == [0, 0, 0] and res.variance == 0.0 and res.binomial_variance == 0.0
    assert math.isnan(res.ratio) and math.isnan(res.ratio_se)
    doc = experiments.LeakDispersion.__doc__
    assert "NaN when no round leaked any record" in doc and "NaN when ``ratio`` is NaN" in doc


def test_gain_map_takes_one_of_the_schedule_searchs_mechanisms():
    # the mechanism is the object (it was a model name with loose tau, d and R)
    for bad in ("gaussian", regression.RidgeRelease(0.01, tau=0.02, data=regression.RidgeData(d=3))):
        with pytest.raises(TypeError, match="^mechanism must be"):
            experiments.gain_map(bad, [0.3], [0.6], T=3, n0=30)
    m = experiments.gain_map(gaussian.GaussianMean(1.0, tau=0.05, d=3, R=10.0), [0.3], [0.6], T=3, n0=30)
    assert m.tau == 0.05 and m.settings["search"] == {"starts": "constant", "polish": 0}


# ---------------------------------------------------------------------------------------- bad input


def test_exact_floor_check_refuses_populations_it_cannot_draw():
    # experiments.exact_floor_check(ns=1e300): a cast warning (float -> int64) instead of a clear error
    with pytest.raises(ValueError, match="ns is too large"):
        experiments.exact_floor_check([10, 1e300], rounds=2, d=3)


def test_a_missing_grid_names_its_parameter():
    # experiments.lemma9_check(qs=None): "q must not be empty"; the (q, r) grid is now the users' cells
    with pytest.raises(TypeError, match="^users must"):
        experiments.lemma9_check(gaussian.GaussianMean([1.0], tau=0.02, d=3, R=R), None, T=3, n0=50, trials=2)


def test_figure3a_simulation_reports_each_finished_threshold_and_can_be_stopped_there():
    kwargs = dict(mechanism=gm(0.05, [1.0, 4.0]), n=50, taus=[0.05, 0.2, 0.5], rounds=10, seed=3)
    plain = experiments.figure3a_simulation(**kwargs)
    heard = []
    reported = experiments.figure3a_simulation(**kwargs, options=sweep.Execution(on_cells=heard.append))
    assert heard == [1, 1, 1]                       # one call per τ, in the calling process
    np.testing.assert_array_equal(reported.p, plain.p)       # keyed by τ: the chunking moves no number
    np.testing.assert_array_equal(reported.se, plain.se)

    class Stop(Exception):
        pass

    def stop(count):
        heard.append(count)
        raise Stop

    heard.clear()
    with pytest.raises(Stop):                       # the command line's safe point: a stop after the first τ
        experiments.figure3a_simulation(**kwargs, options=sweep.Execution(on_cells=stop))
    assert heard == [1]
    with pytest.raises(TypeError, match=r"^options must be a perfpriv.sweep.Execution"):
        experiments.figure3a_simulation(**kwargs, options=heard.append)


# ---------------------------------------------------------------- Monte Carlo agreement (the chapters' checks)
def test_agreement_z_score_and_se_are_the_hand_computed_ones():
    x = [2.0, 4.0, 4.0, 5.0, 7.0, 9.0]
    m = sum(x) / len(x)                                               # 31/6
    sd = math.sqrt(sum((v - m) ** 2 for v in x) / (len(x) - 1))
    fit = experiments.mc_agreement(x, 4.0)
    assert fit.estimate == pytest.approx(m, rel=1e-15) and fit.se == pytest.approx(sd / math.sqrt(6), rel=1e-15)
    assert fit.z_score == pytest.approx((m - 4.0) / (sd / math.sqrt(6)), rel=1e-14)
    assert experiments.agreement(3.0, 1.0, se=0.5).z_score == 4.0
    assert experiments.agreement(0.0, 1.0, se=0.5, z=3).z_score == -2.0
    # at se = 0 only exact equality agrees: z = 0 there, +-inf otherwise (no 0/0 warning)
    assert experiments.agreement(2.0, 2.0, se=0.0).z_score == 0.0 and experiments.agreement(2.0, 2.0, se=0.0).holds
    assert experiments.agreement([1.0, 3.0], 2.0, se=0.0).z_score.tolist() == [-np.inf, np.inf]


def test_agreement_is_the_chapters_mean_and_se_bit_for_bit():
    # the chapters printed x.mean() and x.std(ddof=1) / np.sqrt(m); their outputs must not move
    rng = np.random.default_rng(5)
    for x in (rng.exponential(size=20_000), rng.integers(0, 2000, size=20_000), rng.random(3000) < 0.3,
              rng.normal(size=(20, 100))[:, 3]):
        fit = experiments.mc_agreement(x, 0.5)
        assert fit.estimate == x.mean() and fit.se == x.std(ddof=1) / np.sqrt(x.size), x.dtype
    a, b = rng.normal(size=(3, 400)), rng.normal(size=400)
    d = a - b
    pair = experiments.paired_agreement(a, b)
    np.testing.assert_array_equal(pair.z_score, d.mean(axis=-1) / (d.std(axis=-1, ddof=1) / np.sqrt(400)))


@pytest.mark.parametrize("side, inside, outside", [
    ("both", [10.0, -8.0], [np.nextafter(10.0, np.inf), np.nextafter(-8.0, -np.inf)]),
    ("below", [10.0, -1e6], [np.nextafter(10.0, np.inf)]),
    ("above", [-8.0, 1e6], [np.nextafter(-8.0, -np.inf)]),
])
def test_agreement_holds_up_to_the_boundary_and_not_beyond(side, inside, outside):
    # expected 1, se 2, z 4.5: the boundary is 1 +- 9, exactly representable
    for estimate in inside:
        fit = experiments.agreement(estimate, 1.0, se=2.0, side=side)
        assert fit.holds and fit.check() is None
    for estimate in outside:
        fit = experiments.agreement(estimate, 1.0, se=2.0, side=side)
        assert not fit.holds
        with pytest.raises(AssertionError):
            fit.check()
    both = experiments.agreement(inside + outside, 1.0, se=2.0, side=side)     # arrays: every entry must agree
    assert not both.holds and experiments.agreement(inside, 1.0, se=2.0, side=side).holds


def test_agreement_check_says_what_failed_in_one_line():
    with pytest.raises(AssertionError, match=r"^variance: estimate 1\.2 against expected 1, se 0\.01: z = \+20\.00, "
                                             r"outside \|z\| <= 4\.5$"):
        experiments.agreement(1.2, 1.0, se=0.01).check("variance")
    with pytest.raises(AssertionError) as info:
        experiments.agreement([[1.0, 1.5], [0.9, 1.0]], 1.0, se=[[0.1, 0.1], [0.01, 0.1]], z=3).check()
    text = str(info.value)
    assert "\n" not in text and "estimate 0.9" in text and "z = -10.00" in text and "|z| <= 3" in text
    assert "2 of 4 entries fail, the worst at index (1, 0)" in text
    with pytest.raises(AssertionError, match=r"expected is an upper bound"):
        experiments.agreement(0.9, 0.5, se=0.01, side="below").check()
    assert experiments.agreement([], 1.0, se=0.1).holds          # a check of an empty subset holds, like np.all


def test_paired_se_is_the_se_of_the_differences_and_beats_the_unpaired_one_under_positive_correlation():
    rng = np.random.default_rng(11)
    shared = rng.exponential(size=(2, 500))                       # two settings, 500 runs on common random numbers
    a, b = shared[0] + 0.2 * rng.standard_normal(500), shared[0] + 0.2 * rng.standard_normal(500) + 0.1
    assert np.corrcoef(a, b)[0, 1] > 0.9
    pair = experiments.paired_agreement(a, b, -0.1)
    d = a - b
    assert pair.estimate == pytest.approx(d.mean(), rel=1e-14)
    assert pair.se == pytest.approx(d.std(ddof=1) / math.sqrt(500), rel=1e-14)
    unpaired = math.hypot(experiments.mc_agreement(a, 0.0).se, experiments.mc_agreement(b, 0.0).se)
    assert pair.se < 0.5 * unpaired and pair.holds
    assert abs(experiments.paired_agreement(a, b).z_score) > 4.5      # the 0.1 shift is resolved only when paired
    assert abs(experiments.agreement(a.mean() - b.mean(), 0.0, se=unpaired).z_score) < 4.5
    # independent samples: pairing changes nothing on average (the same se up to sampling noise)
    c = rng.exponential(size=500)
    assert experiments.paired_agreement(shared[1], c).se == pytest.approx(
        math.hypot(experiments.mc_agreement(shared[1], 0.0).se, experiments.mc_agreement(c, 0.0).se), rel=0.15)
    # broadcasting: one reference sample against several rows, one check per row
    rows = experiments.paired_agreement(np.stack([a, b]), b)
    assert rows.z_score.shape == (2,) and rows.z_score[1] == 0.0


def test_agreement_detects_a_five_percent_bias_at_the_chapters_sample_sizes_and_keeps_its_coverage():
    # 20,000 trials, as chapters 01-02 check N_1 against C N_0; the draws have a coefficient of variation
    # of 1 (exponential), larger than the chapters' (a 5% bias is then ~7 se: detected almost always)
    rng = np.random.default_rng(2024)
    reps, trials, mean = 100, 20_000, 3.0
    true_holds = biased_holds = paired_holds = 0
    for _ in range(reps):
        x = rng.exponential(mean, size=trials)
        true_holds += experiments.mc_agreement(x, mean).holds
        biased_holds += experiments.mc_agreement(x, 1.05 * mean).holds
        base = rng.exponential(mean, size=trials)                 # paired: a difference of mean 1, sd about 1
        paired_holds += experiments.paired_agreement(base + x / mean, base, 1.05).holds
    assert true_holds >= reps - 1                                 # coverage: a true value fails once in ~150,000
    assert biased_holds <= 5 and paired_holds <= 5                # power: the 5% bias is caught
    one = experiments.mc_agreement(rng.exponential(mean, size=trials), 1.05 * mean)
    with pytest.raises(AssertionError):
        one.check()


@pytest.mark.parametrize("call, name", [
    (lambda: experiments.agreement(np.nan, 1.0, se=0.1), "estimate"),
    (lambda: experiments.agreement(1.0, np.inf, se=0.1), "expected"),
    (lambda: experiments.agreement(1.0, 1.0, se=-0.1), "se"),
    (lambda: experiments.agreement(1.0, 1.0, se=np.inf), "se"),
    (lambda: experiments.agreement(1.0, 1.0, se=0.1, z=0), "z"),
    (lambda: experiments.agreement(1.0, 1.0, se=0.1, z=np.inf), "z"),
    (lambda: experiments.agreement(1.0, 1.0, se=0.1, side="left"), "side"),
    (lambda: experiments.agreement([1.0, 2.0], [1.0, 2.0, 3.0], se=0.1), "shapes estimate"),
    (lambda: experiments.mc_agreement([1.0], 1.0), "samples"),
    (lambda: experiments.mc_agreement(3.0, 1.0), "samples"),
    (lambda: experiments.mc_agreement([1.0, np.nan, 2.0], 1.0), "samples"),
    (lambda: experiments.mc_agreement([[1.0, 2.0], [3.0]], 1.0), "samples"),
    (lambda: experiments.mc_agreement(np.ones((2, 3)), [1.0, 2.0, 3.0]), "shapes means"),
    (lambda: experiments.mc_agreement(np.ones((2, 3)), 1.0, axis=2), "axis"),
    (lambda: experiments.paired_agreement(np.ones(3), np.ones(4)), "shapes a"),
    (lambda: experiments.paired_agreement(np.ones(3), [1.0, np.inf, 1.0]), "b"),
    (lambda: experiments.paired_agreement(np.ones((4, 1)), np.zeros((4, 1))), "a - b must hold at least 2"),
])
def test_agreement_refuses_bad_input_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("call", [
    lambda: experiments.agreement("1", 1.0, se=0.1),
    lambda: experiments.mc_agreement(["a", "b"], 1.0),
    lambda: experiments.agreement(1.0, 1.0, se=0.1, z=[1, 2]),
    lambda: experiments.agreement(1.0, 1.0, se=0.1).check(label=3),
    lambda: experiments.agreement(1.0, 1.0, 0.1),                    # se is keyword-only: no swapped se/expected
])
def test_agreement_refuses_wrong_types(call):
    with pytest.raises(TypeError):
        call()


def test_agreement_results_are_frozen_with_a_short_repr():
    fit = experiments.mc_agreement(np.arange(10.0), 4.5, axis=None)
    assert repr(fit) == "Agreement(estimate=4.5, expected=4.5, se=0.957427, z=4.5, side='both')"
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.z = 1.0
    assert fit != experiments.mc_agreement(np.arange(10.0), 4.5)     # compared by identity
    by_axis = experiments.mc_agreement(np.arange(12.0).reshape(3, 4), [1.5, 5.5, 9.5], axis=1)
    assert by_axis.estimate.tolist() == [1.5, 5.5, 9.5] and by_axis.holds
    assert experiments.mc_agreement(np.arange(12.0).reshape(3, 4), 4.0, axis=0).estimate.shape == (4,)
