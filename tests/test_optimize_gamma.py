"""Tests of the γ* searches of perfpriv.optimize (theory and simulation; paper Remark 3, Figs. 4-5).

Truth: brute-force minimization of each objective on a fine log grid (the
objectives themselves are tested in test_dynamics.py), an independent
re-computation of the cumulative simulated error from raw runs of
perfpriv.gaussian.simulate (one γ at a time, with the documented key of the
cell), and the seeding contract of the heatmaps.
"""

import math

import numpy as np
import pytest
from scipy import optimize

from perfpriv import keyed
from perfpriv.leakage import Integration
from perfpriv import optimize as O
from perfpriv import dynamics as D
from perfpriv import bernoulli, engine, gaussian, sweep
from perfpriv.behaviour import Heterogeneous, LeakCount, Memoryless
from perfpriv.engine import Policy
from perfpriv.gaussian import GaussianMean
from perfpriv.optimize import GammaOptimum, optimal_gamma, optimal_gamma_empirical

SMALL = dict(d=3, R=8.0, method="quadrature")


def gm(tau, gamma=1.0):
    """The Gaussian mechanism of SMALL's data model (perfpriv.dynamics, engine.mean_field) at the level(s) gamma."""
    return GaussianMean(gamma, tau=tau, d=SMALL["d"], R=SMALL["R"], leak_method=SMALL["method"])


def search(tau, gammas=None):
    """optimal_gamma's mechanism: SMALL's data model, its grid ``gammas`` (None: the search's default grid)."""
    return GaussianMean(gammas, tau=tau, d=SMALL["d"], R=SMALL["R"], leak_method=SMALL["method"])


def bound(g, *, tau, q, r, T, n0):
    """Lemma 9's closed form at the noise scale(s) g."""
    return D.cumulative_error_bound(gm(tau), Memoryless(q=q, r=r), T=T, n0=n0, gamma=g)


def mean_field(g, *, tau, q, r, **kw):
    """The mean-field cumulative error at the noise scale(s) g."""
    return engine.mean_field(gm(tau, g), Memoryless(q=q, r=r), **kw).cumulative_error
FINE = np.geomspace(1e-2, 1e3, 4001)  # log step 2.9e-3
STEP = math.log(FINE[1] / FINE[0])


def brute(fun):
    v = fun(FINE)
    i = int(np.argmin(v))
    return FINE[i], v[i]


def test_one_public_home_in_optimize():
    import perfpriv

    assert "optimal_gamma" in O.__all__ and "optimal_gamma_empirical" in O.__all__
    assert "gamma_search" not in perfpriv.__all__


@pytest.mark.parametrize("q,r,tau", [(0.3, 0.6, 0.05), (0.6, 0.3, 0.05), (0.9, 0.05, 0.2), (0.05, 0.9, 0.01),
                                     (0.5, 0.0, 0.05), (0.0, 0.5, 0.05)])
def test_bound_objective_agrees_with_brute_force_on_a_fine_grid(q, r, tau):
    kw = dict(T=20, n0=100)
    res = optimal_gamma(search(tau), Memoryless(q=q, r=r), **kw)
    gb, vb = brute(lambda g: bound(g, tau=tau, q=q, r=r, **kw))
    assert res.value <= vb * (1 + 1e-12)
    assert res.value == pytest.approx(bound(res.gamma, tau=tau, q=q, r=r, **kw), rel=1e-14)
    assert abs(math.log(res.gamma / gb)) <= 2 * STEP or res.value >= vb * (1 - 1e-9)


@pytest.mark.parametrize("q,r,cap,rounds", [(0.3, 0.6, None, "paper"), (0.6, 0.3, 400, "algorithm"),
                                            (0.7, 0.1, None, "paper"), (0.5, 0.01, 400, "algorithm")])
def test_mean_field_objective_agrees_with_brute_force_on_a_fine_grid(q, r, cap, rounds):
    kw = dict(T=12, n0=100, cap=cap, rounds=rounds)
    res = optimal_gamma(search(0.05), Memoryless(q=q, r=r), objective="mean_field", T=12, n0=100,
                        policy=Policy(cap=cap), rounds=rounds)
    gb, vb = brute(lambda g: mean_field(g, tau=0.05, q=q, r=r, **kw))
    assert res.value <= vb * (1 + 1e-12)
    assert res.value == pytest.approx(mean_field(res.gamma, tau=0.05, q=q, r=r, **kw), rel=1e-14)
    assert abs(math.log(res.gamma / gb)) <= 2 * STEP or res.value >= vb * (1 - 1e-9)


def test_two_local_minima_the_grid_finds_the_global_one():
    # small r, large q: the mean-field objective has a shallow minimum at small gamma
    # (fast collapse, cheap releases) and a deeper one at large gamma (survival)
    q, r, kw = 0.5, 0.01, dict(T=20, n0=100)
    f = lambda g: mean_field(g, tau=0.05, q=q, r=r, T=20, n0=100)  # noqa: E731
    v = f(FINE)
    local = [i for i in range(1, FINE.size - 1) if v[i] < v[i - 1] and v[i] <= v[i + 1]]
    assert FINE[local[0]] < 1 < 3 < FINE[local[-1]] and v[local[-1]] < 0.7 * v[local[0]]
    res = optimal_gamma(search(0.05), Memoryless(q=q, r=r), objective="mean_field", rounds="algorithm",
                        **kw)   # f's indexing
    assert res.gamma > 3 and res.value <= v.min() * (1 + 1e-12)
    # a bounded scalar solver alone on the whole bracket gets trapped
    naive = optimize.minimize_scalar(lambda u: math.log(f(math.exp(u))), bounds=(math.log(1e-2), math.log(1e3)),
                                     method="bounded")
    assert math.exp(naive.x) < 3


def test_arrays_give_one_optimum_per_cell_equal_to_the_scalar_search():
    q = np.array([[0.1], [0.5], [0.9]])
    r = np.array([0.05, 0.4, 0.8])
    for objective in ("bound", "mean_field"):
        kw = dict(T=15, n0=100, objective=objective)
        res = optimal_gamma(search(0.05), Memoryless(q=q, r=r), **kw)
        assert isinstance(res, GammaOptimum) and res.gamma.shape == (3, 3)
        assert res.values.shape == (3, 3, res.gammas.size)
        for i, j in [(0, 0), (1, 2), (2, 1)]:
            one = optimal_gamma(search(0.05), Memoryless(q=float(q[i, 0]), r=float(r[j])), **kw)
            assert one.value == pytest.approx(res.value[i, j], rel=1e-10)
            assert one.gamma == pytest.approx(res.gamma[i, j], rel=1e-4)


@pytest.mark.parametrize("objective", ["bound", "mean_field"])
def test_constrained_search_never_goes_below_critical_gamma(objective):
    q = np.array([[0.0], [0.05], [0.5], [0.95]])  # q = 0: gamma_c = 0, the constraint is void
    r = np.array([0.0, 0.1, 0.5, 0.9])
    kw = dict(T=10, n0=100, objective=objective)
    free = optimal_gamma(search(0.05), Memoryless(q=q, r=r), **kw)
    cons = optimal_gamma(search(0.05), Memoryless(q=q, r=r), constrained=True, **kw)
    gc = D.critical_gamma(gm(0.05), Memoryless(q=q, r=r), n=100) * np.ones(cons.gamma.shape)
    ok = np.isfinite(gc) & (gc <= 1e3)
    assert np.all(np.isnan(cons.gamma[~ok])) and np.all(np.isnan(cons.gamma[1:, 0]))  # r = 0 < q: gamma_c = inf
    assert np.all(cons.gamma[ok] >= gc[ok])
    assert np.all(cons.value[ok] >= free.value[ok] * (1 - 1e-12))
    # where the free optimum is admissible, the constraint changes nothing
    same = ok & (free.gamma >= gc * 1.001)
    assert same.any()
    np.testing.assert_allclose(cons.value[same], free.value[same], rtol=1e-9)
    # cells whose free optimum is inadmissible: brute force over gamma >= gamma_c
    i, j = np.argwhere(ok & (free.gamma < gc))[0]
    grid = FINE[FINE >= gc[i, j]]
    cell = dict(tau=0.05, q=float(q[i, 0]), r=float(r[j]), T=10, n0=100)
    vals = (bound(grid, **cell) if objective == "bound"
            else mean_field(grid, cap=20000, **cell))
    assert cons.value[i, j] <= vals.min() * (1 + 1e-12)


def test_theorem_2_constraint_is_conservative_at_paper_settings():
    # gamma_c is several times the exact threshold: the constraint often binds
    res = optimal_gamma(GaussianMean(tau=0.02, d=12, R=10.0, leak_method="quadrature"), Memoryless(q=0.3, r=0.6),
                        T=50, n0=1000)
    exact = D.exact_critical_gamma(GaussianMean(1.0, tau=0.02, d=12, R=10.0, leak_method="quadrature"),
                                   Memoryless(q=0.3, r=0.6), n=1000)
    assert res.gamma_c / exact > 3
    assert exact < res.gamma < res.gamma_c


# ---------------------------------------------------------------- simulation
MODEL = dict(d=2, R=7.0)                                          # the data model of the simulated searches
RUN = dict(T=8, n0=30, trials=12, policy=Policy(cap=300))         # the simulated searches' run


def emp_mech(gammas, tau=0.05, **model):
    """The mechanism of the simulated search (was gammas=, tau=, d=, R=, statistic=, ... of the search)."""
    return GaussianMean(gammas, tau=tau, **dict(MODEL, **model))


def emp(q, r, gammas, tau=0.05, *, statistic=None, **kw):
    """optimal_gamma_empirical on the paper's users Memoryless(q, r) (the γ search always used the leak rule)."""
    return optimal_gamma_empirical(emp_mech(gammas, tau, statistic=statistic), Memoryless(q=q, r=r), **kw)


def emp_with(**policy):
    """RUN with further policy fields (``collapse``, ...)."""
    return dict(RUN, policy=Policy(cap=300, **policy))


def manual_cumulative(q, r, tau, g, seed, collapse):
    """Independent re-computation from a raw run of Algorithm 1 at one γ (no stop, no collapse scoring).

    The cell's key is the documented one (root seed and the cell's coordinates); a level is not part
    of the key, so a γ alone draws the numbers it draws inside the search's grid of γ.
    """
    run = engine.simulate(emp_mech(g, tau), Memoryless(q=q, r=r), seed=keyed.cell_key(seed, q, r), **RUN)
    out = []
    for err, pop in zip(run.sq_error, run.population):
        live = [t for t in range(RUN["T"]) if pop[t] >= 2]
        if collapse == "floor":
            out.append(sum(err[t] for t in live) + (RUN["T"] - len(live)) * (g**2 * 2 + 2))
        else:
            out.append(sum(err[t] for t in live) / len(live) * RUN["T"])
    return np.array(out)


@pytest.mark.parametrize("collapse", ["floor", "ran"])
def test_empirical_objective_is_the_mean_cumulative_error_under_the_collapse_convention(collapse):
    q, r, tau, gammas = 0.7, 0.1, 0.05, np.array([0.05, 1.0, 6.0])
    res = emp(q, r, gammas, tau, seed=5, **emp_with(collapse=collapse))
    for j, g in enumerate(gammas):
        per = manual_cumulative(q, r, tau, g, 5, collapse)
        assert res.values[j] == pytest.approx(per.mean(), rel=1e-12)
        assert res.se[j] == pytest.approx(per.std(ddof=1) / math.sqrt(RUN["trials"]), rel=1e-10)
    assert res.gamma == gammas[np.argmin(res.values)] and res.value == res.values.min()


def test_collapse_convention_matters_only_when_populations_collapse():
    gammas = np.array([0.05, 1.0, 6.0])
    floor = emp(0.7, 0.1, gammas, 0.05, seed=5, **emp_with(collapse="floor"))
    ran = emp(0.7, 0.1, gammas, 0.05, seed=5, **emp_with(collapse="ran"))
    # tiny noise: everyone leaks, the population collapses, "ran" hides the dead rounds
    assert floor.values[0] > 2 * ran.values[0]
    # large noise: nobody collapses within the horizon, identical objectives
    assert floor.values[-1] == ran.values[-1]


def test_each_cell_is_seeded_from_its_own_coordinates():
    gammas = np.array([0.3, 3.0])
    grid = emp(np.array([[0.2], [0.6]]), np.array([0.3, 0.7]), gammas, 0.05, seed=9, **RUN)
    alone = emp(0.6, 0.3, gammas, 0.05, seed=9, **RUN)
    np.testing.assert_array_equal(grid.values[1, 0], alone.values)
    other = emp(0.6, 0.3, gammas, 0.05, seed=10, **RUN)
    assert not np.array_equal(other.values, alone.values)


def test_empirical_and_theoretical_gamma_star_agree_within_a_factor_of_three():
    """Small (q, r) grid; theory = mean-field objective with the simulation's indexing and cap."""
    q = np.array([[0.3], [0.6]])
    r = np.array([0.3, 0.6])
    tau, kw = 0.05, dict(T=10, n0=30, d=2, R=7.0, cap=300)
    gammas = np.geomspace(0.05, 20, 14)
    found = optimal_gamma_empirical(GaussianMean(gammas, tau=tau, d=kw["d"], R=kw["R"]), Memoryless(q=q, r=r),
                                    T=kw["T"], n0=kw["n0"], trials=20, seed=2, policy=Policy(cap=kw["cap"]))
    theory = GaussianMean(tau=tau, d=2, R=7.0, leak_method="quadrature")
    mf = optimal_gamma(theory, Memoryless(q=q, r=r), T=10, n0=30, objective="mean_field", rounds="algorithm",
                       policy=Policy(cap=kw["cap"]))
    bound = optimal_gamma(theory, Memoryless(q=q, r=r), T=10, n0=30)
    ratio_mf = found.gamma / mf.gamma
    ratio_bound = found.gamma / bound.gamma
    assert np.all((ratio_mf > 1 / 3) & (ratio_mf < 3)), ratio_mf
    assert np.all((ratio_bound > 1 / 3) & (ratio_bound < 3)), ratio_bound


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "call,name",
    [
        # the cells and the data model are checked where they enter, on the way into the search
        (lambda: optimal_gamma(search(0.05), Memoryless(q=1.2, r=0.3), T=5, n0=50), "q"),
        (lambda: optimal_gamma(search(-1), Memoryless(q=0.2, r=0.3), T=5, n0=50), "tau"),
        (lambda: optimal_gamma(search(0.05), Memoryless(q=0.2, r=0.3), T=0, n0=50), "T"),
        (lambda: optimal_gamma(search(0.05), Memoryless(q=0.2, r=0.3), T=5, n0=1), "n0"),
        (lambda: optimal_gamma(search(0.05), Memoryless(q=0.2, r=0.3), T=5, n0=50, objective="x"), "objective"),
        # was bracket=(0, 1) / grid=2: the grid is the mechanism's levels now (three or more, increasing)
        (lambda: optimal_gamma(search(0.05, [1.0, 0.5, 0.1]), Memoryless(q=0.2, r=0.3), T=5, n0=50), "mechanism"),
        (lambda: optimal_gamma(search(0.05, [0.1, 0.1, 1.0]), Memoryless(q=0.2, r=0.3), T=5, n0=50), "mechanism"),
        (lambda: optimal_gamma(search(0.05, [0.1, 1.0]), Memoryless(q=0.2, r=0.3), T=5, n0=50), "mechanism"),
        (lambda: optimal_gamma(search(0.05, 1.0), Memoryless(q=0.2, r=0.3), T=5, n0=50), "mechanism"),
        (lambda: optimal_gamma(search(0.05, engine.Schedule([0.1, 1.0, 10.0])), Memoryless(q=0.2, r=0.3), T=3,
                               n0=50, objective="mean_field"), "mechanism"),
        (lambda: optimal_gamma(search(0.05, engine.PerCell(np.array([[0.1, 1.0, 10.0], [0.2, 2.0, 20.0]]))),
                               Memoryless(q=[0.2, 0.4], r=0.3), T=5, n0=50, objective="mean_field"), "mechanism"),
        (lambda: optimal_gamma(search(0.05), Memoryless(q=0.2, r=0.3), T=5, n0=50, rounds="x"), "rounds"),
        # was behaviour= with objective="bound": Lemma 9's bound and γ_c hold for the paper's users only
        (lambda: optimal_gamma(search(0.05), LeakCount(k=3, q=0.2, r=0.3), T=5, n0=50), "users"),
        (lambda: optimal_gamma(search(0.05), Memoryless(q=0.2, r=0.3, rule="agnostic"), T=5, n0=50), "users"),
        (lambda: optimal_gamma(search(0.05), LeakCount(k=3, q=0.2, r=0.3), T=5, n0=50, objective="mean_field",
                               constrained=True), "users"),
        (lambda: optimal_gamma(search(0.05), Memoryless(q=0.2, r=0.3, rule="agnostic"), T=5, n0=50,
                               objective="mean_field", constrained=True), "users"),
        # the simulated search's grid is its mechanism's levels (named as the mechanism names them, "gamma")
        (lambda: optimal_gamma_empirical(GaussianMean([0.1, -1], tau=0.05, d=2, R=5), Memoryless(q=0.2, r=0.3), T=5,
                                         n0=20, trials=3), "gamma"),
        (lambda: optimal_gamma_empirical(GaussianMean([0.1], tau=0.05, d=2, R=5), Memoryless(q=1.2, r=0.3), T=5,
                                         n0=20, trials=3), "q"),
        (lambda: optimal_gamma_empirical(GaussianMean([0.1], tau=0.05, d=2, R=5), Memoryless(q=0.2, r=0.3), T=5,
                                         n0=20, trials=1), "trials"),
        (lambda: optimal_gamma_empirical(GaussianMean([0.1], tau=0.05, d=2, R=5), Memoryless(q=0.2, r=0.3), T=5,
                                         n0=1, trials=3), "n0"),
        (lambda: optimal_gamma_empirical(GaussianMean([0.1], tau=0.05, d=2, R=5), Memoryless(q=0.2, r=0.3), T=5,
                                         n0=20, trials=3, policy=Policy(collapse="x")), "collapse"),
        (lambda: optimal_gamma_empirical(GaussianMean([0.1], tau=0.05, d=2, R=5), Memoryless(q=0.2, r=0.3), T=5,
                                         n0=20, trials=3, policy=Policy(cap=10)), "cap"),
        (lambda: optimal_gamma_empirical(GaussianMean([0.1], tau=0.05, d=2, R=5), Memoryless(q=0.2, r=0.3), T=5,
                                         n0=20, trials=3, seed=-1), "seed"),
        (lambda: optimal_gamma_empirical(GaussianMean([0.1], tau=0.05, d=2, R=5), Memoryless(q=0.2, r=0.3), T=5,
                                         n0=20, trials=3, conventions="x"), "conventions"),
        # a mechanism that holds no grid of noise scales
        (lambda: optimal_gamma_empirical(GaussianMean(tau=0.05, d=2, R=5), Memoryless(q=0.2, r=0.3), T=5, n0=20,
                                         trials=3), "mechanism"),
        (lambda: optimal_gamma_empirical(GaussianMean(engine.Schedule([0.1, 1.0, 10.0]), tau=0.05, d=2, R=5),
                                         Memoryless(q=0.2, r=0.3), T=3, n0=20, trials=3), "mechanism"),
        (lambda: optimal_gamma_empirical(GaussianMean(engine.PerCell(np.array([0.1, 1.0])), tau=0.05, d=2, R=5),
                                         Memoryless(q=[0.2, 0.4], r=0.3), T=3, n0=20, trials=3), "mechanism"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()


# ---------------------------------------------------------------- sweep layer
TINY_Q, TINY_R = np.array([[0.2], [0.6]]), np.array([0.3, 0.7])
TINY_G = np.array([0.3, 3.0])


def test_empirical_bit_identical_for_one_and_two_jobs():
    one = emp(TINY_Q, TINY_R, TINY_G, 0.05, seed=4, options=sweep.Execution(n_jobs=1), **RUN)
    two = emp(TINY_Q, TINY_R, TINY_G, 0.05, seed=4, options=sweep.Execution(n_jobs=2), **RUN)
    assert np.array_equal(one.values, two.values) and np.array_equal(one.se, two.se)
    assert np.array_equal(one.gamma, two.gamma)
    # paired (non-meshgrid) cells and any chunk give the same cell values
    paired = emp(np.array([0.2, 0.6]), np.array([0.7, 0.3]), TINY_G, 0.05, seed=4,
                 options=sweep.Execution(chunk=1), **RUN)
    assert np.array_equal(paired.values, np.stack([one.values[0, 1], one.values[1, 0]]))
    assert np.array_equal(emp(TINY_Q, TINY_R, TINY_G, 0.05, seed=4, options=sweep.Execution(chunk=3), **RUN).values,
                          one.values)


def test_empirical_accepts_a_seed_sequence_root():
    a = emp(0.6, 0.3, TINY_G, 0.05, seed=np.random.SeedSequence(4), **RUN)
    b = emp(0.6, 0.3, TINY_G, 0.05, seed=4, **RUN)
    assert np.array_equal(a.values, b.values)


def test_empirical_takes_a_key_array_seed_one_key_per_cell():
    users = Memoryless(q=TINY_Q, r=TINY_R)
    own = engine.cell_keys(4, users)
    assert own.shape == (2, 2)
    plain = emp(TINY_Q, TINY_R, TINY_G, 0.05, seed=4, **RUN)
    assert np.array_equal(optimal_gamma_empirical(emp_mech(TINY_G), users, seed=own, **RUN).values, plain.values)
    # other keys: each cell gets the key given (the numbers of that cell alone with that key)
    mine = keyed.root_key(8).child(np.arange(4).reshape(2, 2))
    res = optimal_gamma_empirical(emp_mech(TINY_G), users, seed=mine, **RUN)
    one = O.level_search(emp_mech(TINY_G), Memoryless(q=0.6, r=0.7), seed=keyed.Key(mine.a[1, 1], mine.b[1, 1]),
                         policy=Policy(cap=300, stop=1, collapse="floor"), T=RUN["T"], n0=RUN["n0"],
                         trials=RUN["trials"])
    assert np.array_equal(res.values[1, 1], one.values) and np.array_equal(res.se[1, 1], one.se)
    assert not np.array_equal(res.values, plain.values)
    with pytest.raises(ValueError, match="seed"):
        optimal_gamma_empirical(emp_mech(TINY_G), users, seed=keyed.root_key(8).child(np.arange(4)), **RUN)


@pytest.mark.parametrize("mechanism", [None, 1.0, [0.3, 3.0], bernoulli.RandomizedResponse([0.3, 3.0])])
def test_empirical_refuses_a_mechanism_that_is_not_a_gaussian_mean(mechanism):
    # was gammas=, tau=, d=, R=, ... of the search
    with pytest.raises(TypeError, match=r"^mechanism must be a perfpriv\.gaussian\.GaussianMean"):
        optimal_gamma_empirical(mechanism, Memoryless(q=0.3, r=0.6), **RUN)


@pytest.mark.parametrize("users", [None, (0.3, 0.6), dict(q=0.3, r=0.6), lambda q, r: Memoryless(q=q, r=r)])
def test_empirical_refuses_users_that_are_not_a_behaviour(users):
    # was q=, r= and behaviour=callable (q, r) -> Behaviour: the Behaviour itself is the map now
    with pytest.raises(TypeError, match=r"^users must be a perfpriv\.behaviour\.Behaviour"):
        optimal_gamma_empirical(emp_mech(TINY_G), users, **RUN)


@pytest.mark.parametrize("options", [dict(n_jobs=2), 4, "loky"])
def test_empirical_refuses_options_that_are_not_an_execution(options):
    # was n_jobs=, chunk=, progress= of the search
    with pytest.raises(TypeError, match=r"^options must be a perfpriv\.sweep\.Execution"):
        optimal_gamma_empirical(emp_mech(TINY_G), Memoryless(q=0.3, r=0.6), options=options, **RUN)


def test_empirical_searches_any_users_with_gamma_c_only_for_the_papers():
    # was behaviour=lambda q, r: LeakCount(k=2, q=q, r=r): keyed by (q, r) as before (LeakCount reports them)
    users = LeakCount(k=2, q=TINY_Q, r=TINY_R)
    res = optimal_gamma_empirical(emp_mech(TINY_G), users, seed=4, **RUN)
    paper = emp(TINY_Q, TINY_R, TINY_G, 0.05, seed=4, **RUN)
    assert res.values.shape == (2, 2, 2) and np.all(np.isfinite(res.gamma))
    assert not np.array_equal(res.values, paper.values)
    one = O.level_search(emp_mech(TINY_G), LeakCount(k=2, q=0.6, r=0.3), seed=keyed.cell_key(4, 0.6, 0.3),
                         policy=Policy(cap=300, stop=1, collapse="floor"), T=RUN["T"], n0=RUN["n0"],
                         trials=RUN["trials"])
    assert np.array_equal(res.values[1, 0], one.values)
    assert res.gamma_c.shape == (2, 2) and np.all(np.isnan(res.gamma_c))
    agnostic = optimal_gamma_empirical(emp_mech(TINY_G), Memoryless(q=0.6, r=0.3, rule="agnostic"), seed=4, **RUN)
    assert math.isnan(agnostic.gamma_c)
    # the paper's users: Theorem 2's threshold at n0 with the mechanism's full data model
    want = D.critical_gamma(emp_mech(1.0), Memoryless(q=TINY_Q, r=TINY_R), n=RUN["n0"])
    np.testing.assert_array_equal(paper.gamma_c, want)
    assert np.all(np.isfinite(paper.gamma_c))


def test_empirical_users_without_coordinates_keep_the_old_numbers_with_the_keys_of_the_maps_q_and_r():
    # was behaviour=lambda q, r: Heterogeneous(q=..., r=r): Heterogeneous reports no coordinates, so the keys of
    # the map's (q, r) are given as seed=engine.cell_keys(seed, Memoryless(q=Q, r=R))
    Q, R = np.broadcast_arrays(TINY_Q, TINY_R)
    users = Heterogeneous(q=np.stack([Q, Q / 2], axis=-1), weights=[0.5, 0.5], r=R)
    res = optimal_gamma_empirical(emp_mech(TINY_G), users, seed=engine.cell_keys(4, Memoryless(q=Q, r=R)), **RUN)
    for cell in np.ndindex(Q.shape):
        alone = Heterogeneous(q=[Q[cell], Q[cell] / 2], weights=[0.5, 0.5], r=R[cell])
        one = O.level_search(emp_mech(TINY_G), alone, seed=keyed.cell_key(4, Q[cell], R[cell]),
                             policy=Policy(cap=300, stop=1, collapse="floor"), T=RUN["T"], n0=RUN["n0"],
                             trials=RUN["trials"])
        assert np.array_equal(res.values[cell], one.values) and np.array_equal(res.se[cell], one.se)


def test_authors_conventions_score_a_collapsed_run_over_the_rounds_it_ran():
    # conventions="authors": exact statistic, stop at N <= 1, collapse="ran" -- the manual "ran" score
    # of a raw run with the exact statistic
    q, r, tau, gammas = 0.7, 0.1, 0.05, np.array([0.05, 1.0])
    res = emp(q, r, gammas, tau, conventions="authors", seed=5, **RUN)
    for j, g in enumerate(gammas):
        run = engine.simulate(emp_mech(g, tau, statistic="exact"), Memoryless(q=q, r=r), seed=keyed.cell_key(5, q, r),
                              **RUN)
        live = run.population[:, :-1] >= 2
        per = np.where(live, run.sq_error, 0.0).sum(axis=1) / live.sum(axis=1) * RUN["T"]
        assert res.values[j] == pytest.approx(per.mean(), rel=1e-12)
    assert res.settings["conventions"] == "authors"


def test_result_is_frozen_compared_by_identity_with_a_short_repr_and_provenance():
    import dataclasses

    res = emp(0.6, 0.3, TINY_G, 0.05, seed=4, **RUN)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.gamma = 1.0
    assert res != emp(0.6, 0.3, TINY_G, 0.05, seed=4, **RUN) and res == res
    assert "\n" not in repr(res) and len(repr(res)) < 200
    assert res.settings["seed"] == 4 and res.settings["T"] == RUN["T"] and res.settings["tau"] == 0.05


# ---------------------------------------------------------------------------------------- bad input


THREE = GaussianMean([0.01, 1.0, 1e3], tau=0.02, d=3, R=10.0)   # the old grid=3 of the default bracket


def test_optimal_gamma_checks_the_population_policy_of_every_objective():
    # O.optimal_gamma(cap=nan) (objective="bound" never used it): NaN kept in the settings. The cap and the
    # floor are a Policy's now, checked where they enter; the search checks the policy against n0 for every
    # objective, and refuses anything else than a Policy
    for kwargs, word in [(dict(cap=float("nan")), "cap"), (dict(floor=float("nan")), "floor")]:
        with pytest.raises((TypeError, ValueError), match=word):
            Policy(**kwargs)
    for objective in ("bound", "mean_field"):
        with pytest.raises(ValueError, match="cap must be >= n0"):
            O.optimal_gamma(THREE, Memoryless(q=0.3, r=0.6), T=3, n0=50, objective=objective, policy=Policy(cap=10))
        for bad in (dict(cap=float("nan")), 20000, "cap"):
            with pytest.raises(TypeError, match="policy"):
                O.optimal_gamma(THREE, Memoryless(q=0.3, r=0.6), T=3, n0=50, objective=objective, policy=bad)


@pytest.mark.parametrize("grid", [(1e-100, 1e-3, 1e3), (1e-3, 1.0, 1e100)])
def test_optimal_gamma_mean_field_grid_is_checked_the_bound_keeps_its_range(grid):
    # was bracket=(1e-300, 1e3): the mechanism holds [1e-100, 1e100], the mean-field search [1e-99, 1e99]
    mech = GaussianMean(grid, tau=0.02, d=3, R=10.0)
    kwargs = dict(T=3, n0=50)
    with pytest.raises(ValueError, match=r"^mechanism's grid must .*1e-99 <= low < high <= 1e\+99"):
        O.optimal_gamma(mech, Memoryless(q=0.3, r=0.6), objective="mean_field", **kwargs)
    res = O.optimal_gamma(mech, Memoryless(q=0.3, r=0.6), objective="bound", **kwargs)
    assert np.isfinite(res.gamma) and res.settings["bracket"] == (grid[0], grid[-1])


@pytest.mark.parametrize("mechanism", [None, 1.0, (0.01, 1e3), bernoulli.RandomizedResponse([0.1, 1.0, 10.0])])
def test_optimal_gamma_refuses_a_mechanism_that_is_not_a_gaussian_mean(mechanism):
    with pytest.raises(TypeError, match=r"^mechanism must be a perfpriv\.gaussian\.GaussianMean"):
        O.optimal_gamma(mechanism, Memoryless(q=0.3, r=0.6), T=3, n0=50)


@pytest.mark.parametrize("users", [None, (0.3, 0.6), dict(q=0.3, r=0.6), lambda q, r: Memoryless(q=q, r=r)])
@pytest.mark.parametrize("objective", ["bound", "mean_field"])
def test_optimal_gamma_refuses_users_that_are_not_a_behaviour(users, objective):
    # the old behaviour callable (q, r) -> Behaviour is refused as well: the Behaviour itself is the map
    with pytest.raises(TypeError, match=r"^users must be a perfpriv\.behaviour\.Behaviour"):
        O.optimal_gamma(THREE, users, T=3, n0=50, objective=objective)


def test_optimal_gamma_refuses_a_grid_too_large_for_its_cells_up_front():
    # 10**4 noise scales x 10**6 cells (a 1000 x 1000 meshgrid held as two vectors): 80 GB of objective values
    import tracemalloc

    mech = GaussianMean(np.geomspace(0.01, 1e3, 10**4), tau=0.02, d=3, R=10.0)
    users = Memoryless(q=np.full((1000, 1), 0.3), r=np.full((1, 1000), 0.6))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="^mechanism is too large"):
            O.optimal_gamma(mech, users, T=3, n0=50, objective="mean_field")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


def test_the_grid_is_the_mechanisms_levels_or_the_default_and_the_settings_describe_the_search():
    users = Memoryless(q=0.3, r=0.6)
    default = O.optimal_gamma(GaussianMean(tau=0.02, d=3, R=10.0, leak_method="quadrature"), users, T=4, n0=50)
    assert np.array_equal(default.gammas, np.geomspace(1e-2, 1e3, 61))
    mine = np.geomspace(0.05, 50.0, 13)
    res = O.optimal_gamma(GaussianMean(mine, tau=0.02, d=3, R=10.0, leak_method="quadrature", statistic="exact"),
                          users, T=4, n0=50, objective="mean_field", policy=Policy(cap=400), rounds="algorithm")
    assert np.array_equal(res.gammas, mine) and res.values.shape == (13,) and 0.05 <= res.gamma <= 50.0
    assert res.settings == dict(tau=0.02, T=4, n0=50, d=3, R=10.0, statistic="exact", cap=400, floor=1,
                                rounds="algorithm", bracket=(0.05, 50.0), grid=13, method="quadrature", users=users)
    assert default.settings["cap"] == 20000 and default.settings["floor"] == 1
    assert default.settings["bracket"] == (0.01, 1000.0) and default.settings["grid"] == 61


def test_gamma_c_is_theorem_2s_for_the_papers_users_and_nan_for_others():
    q, r = np.array([[0.3], [0.6]]), np.array([0.3, 0.6])
    kw = dict(T=4, n0=50, objective="mean_field")
    paper = O.optimal_gamma(search(0.05), Memoryless(q=q, r=r), **kw)
    want = D.critical_gamma(gm(0.05), Memoryless(q=q, r=r), n=50)
    np.testing.assert_array_equal(paper.gamma_c, want)
    assert np.all(np.isfinite(paper.gamma_c))
    other = O.optimal_gamma(search(0.05), LeakCount(k=3, q=q, r=r), **kw)
    assert other.gamma_c.shape == (2, 2) and np.all(np.isnan(other.gamma_c))
    assert np.all(np.isfinite(other.gamma))
    agnostic = O.optimal_gamma(search(0.05), Memoryless(q=0.3, r=0.6, rule="agnostic"), **kw)
    assert math.isnan(agnostic.gamma_c) and math.isfinite(agnostic.gamma)


def test_a_monte_carlo_p_tau_uses_the_mechanisms_leak_seed_and_zero_without_one():
    # was seed=None -> 0: a mechanism without leak_seed searches as with leak_seed=0, deterministically
    def run(seed=None):
        mech = GaussianMean([0.1, 0.5, 2.0, 8.0], tau=0.05, d=3, R=8.0,
                            leak_method=Integration("montecarlo", samples=300, seed=seed))
        return O.optimal_gamma(mech, Memoryless(q=0.4, r=0.5), T=3, n0=40, objective="mean_field")

    none, zero, one = run(), run(0), run(1)
    assert np.array_equal(none.values, zero.values) and none.gamma == zero.gamma
    assert np.array_equal(none.values, run().values)
    assert not np.array_equal(one.values, zero.values)
