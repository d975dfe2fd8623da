"""Bad input across modules: refused up front with one line that names the parameter as the caller spells it.

Each public function checks its arguments first (``perfpriv/_validate.py``) and raises
``ValueError`` (``TypeError`` for a wrong type) naming the parameter, the value and the
allowed range. Bad input of one module lives in that module's test file; here are the
checks that span modules: a table of calls, messages that name the caller's parameter
rather than an inner function's, arguments a branch does not use, objects passed where
results belong, paths, flags and sizes no call can hold.
"""

import math

import numpy as np
import pytest

from perfpriv import (behaviour, bernoulli, cli, engine, exercises, experiments, feedback, gaussian, gradient,
                      leakage, optimize, regression, schedules, sweep)
from perfpriv._validate import check_int_array
from perfpriv.performative import FedAvg, GaussianClients, PerformativeProblem, p_fedavg, repeated_risk_minimization
from perfpriv.performative.participation import PrivateFederatedRound
from perfpriv.engine import Policy


# ------------------------------------------------------------- one clear error naming the parameter


_G = dict(tau=0.02, q=0.3, r=0.6, T=2, n0=10, d=3, R=10.0)


@pytest.mark.parametrize("call, error, words", [
    (lambda: bernoulli.growth_factor(0.1, q=True, r=0.6), TypeError, ("q", "True")),
    (lambda: gaussian.simulate(True, **_G, seed=0), TypeError, ("gamma", "True")),
    (lambda: bernoulli.RandomizedResponse(1.0, clip_estimate="yes"), TypeError, ("clip_estimate", "True or False")),
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


def test_messages_name_the_parameter_of_the_call_not_an_internal_name():
    with pytest.raises(ValueError, match="name"):                 # feedback.Family(name=0) said "family"
        feedback.Family(0, 3)
    with pytest.raises(ValueError, match=r"parameter \(k\)"):      # feedback.family("memory", 0) said "k"
        feedback.family("memory", 0)
    with pytest.raises(ValueError, match="values"):                # threshold_curve(values=-1) said "kappa"
        feedback.threshold_curve("contagion", [-1.0], q=0.2, r=0.6)
    with pytest.raises(ValueError, match="steps"):                 # p_fedavg(steps=0) said "beta"
        p_fedavg(GaussianClients.example(N=3, eps_mean=0.5), FedAvg(steps=0.0), T=2, trials=2)


def test_arguments_a_branch_does_not_use_are_checked_all_the_same():
    # trajectories(mechanism="bernoulli", tau=nan) passed: the mechanism is an object now, holding only its own
    # settings (checked in its constructor); anything else is refused by name
    with pytest.raises(ValueError, match="tau"):
        feedback.trajectories(feedback.family("memory", 3), gaussian.GaussianMean([0.5], tau=float("nan"), d=2, R=10.0),
                              q=0.3, r=0.6, T=2, n0=10, trials=2)
    with pytest.raises(TypeError, match="^mechanism must be a perfpriv.bernoulli.RandomizedResponse or"):
        feedback.trajectories(feedback.family("memory", 3), [0.5], q=0.3, r=0.6, T=2, n0=10, trials=2)
    with pytest.raises(TypeError, match="seed"):                   # repeated_risk_minimization(samples=None, seed=nan)
        repeated_risk_minimization(PerformativeProblem.squared(m=1.0, A=0.5), [0.0], T=2, seed=float("nan"))


def test_object_arguments_are_checked_up_front():
    with pytest.raises(TypeError, match="mechanism"):              # one_round_check(mechanism=0): AttributeError
        regression.one_round_check(0, [10], trials=2)
    with pytest.raises(TypeError, match="mechanism"):              # long_run_utility(mechanism=0) was ignored
        gradient.long_run_utility(0, behaviour.Memoryless(q=0.0, r=0.0), T=2, n0=10)
    with pytest.raises(TypeError, match="users"):                  # long_run_utility(behaviours=0): not iterable
        gradient.long_run_utility(gradient.PrivateGD(1.0, tau=0.02), 0, T=2, n0=10)
    with pytest.raises(ValueError, match="users"):                 # one axis of behaviours
        gradient.long_run_utility(gradient.PrivateGD(1.0, tau=0.02), behaviour.Memoryless(q=[[0.1, 0.2]], r=0.3), T=2, n0=10)
    with pytest.raises(TypeError, match="bernoulli_maps"):         # summary("x"): AttributeError
        feedback.summary("x")


def test_shapes_and_grids_are_checked_before_indexing():
    with pytest.raises(ValueError, match="shifts"):                # membership_llr(shifts=0.5): IndexError
        regression.membership_llr(0.5, [0.5], 1.0)
    # gamma_map(gammas=[]): IndexError. The grid is the mechanism's now, refused where it enters (as "gamma")
    with pytest.raises(ValueError, match="gamma must not be empty"):
        feedback.gamma_map(feedback.family("paper"), gaussian.GaussianMean([], tau=0.02, d=2, R=10.0), [0.3], [0.6],
                           T=2, n0=10, trials=2)
    # epsilon_map(epsilons="x"): numpy's message. The budgets are the mechanism's, named as it names them
    with pytest.raises(TypeError, match="epsilon"):
        feedback.epsilon_map(feedback.family("paper"), bernoulli.RandomizedResponse("x", mu=(0.5, 1.0)), [0.3], [0.6],
                             T=2, n0=10, trials=2)
    # and a grid that is no mechanism is refused by name
    with pytest.raises(TypeError, match="^mechanism must be a perfpriv.gaussian.GaussianMean"):
        feedback.gamma_map(feedback.family("paper"), [], [0.3], [0.6], T=2, n0=10, trials=2)
    with pytest.raises(TypeError, match="^mechanism must be a perfpriv.bernoulli.RandomizedResponse"):
        feedback.epsilon_map(feedback.family("paper"), "x", [0.3], [0.6], T=2, n0=10, trials=2)
    out = feedback.compare_gaussian(feedback.family("memory", 3), gaussian.GaussianMean(2.0, tau=0.02, d=2, R=10.0),
                                    q=0.3, r=0.6, T=2, n0=10, trials=2)   # a single gamma: IndexError
    assert out.gamma_star == 2.0 and out.gammas.tolist() == [2.0]
    with pytest.raises(TypeError, match="^mechanism must be a perfpriv.gaussian.GaussianMean"):
        feedback.compare_gaussian(feedback.family("memory", 3), 2.0, q=0.3, r=0.6, T=2, n0=10, trials=2)


def test_a_feedback_maps_z_is_checked():
    # epsilon_map(z=nan): NaN in the result. z is a field of the map now (it judges, computes nothing)
    import dataclasses

    m = feedback.epsilon_map(feedback.family("paper"), bernoulli.RandomizedResponse([1.0], mu=(0.5, 1.0)), [0.3],
                             [0.6], T=2, n0=10, trials=2)
    assert m.z == 3.0
    with pytest.raises(ValueError, match="z"):
        dataclasses.replace(m, z=float("nan"))


def test_size_arrays_must_hold_integers_in_the_int64_range():
    with pytest.raises(ValueError, match="ns"):                    # sensitivity_profile(ns=1e300): invalid cast
        regression.sensitivity_profile([1e300], d=2, lam=0.05, x_bound=5.0, y_bound=5.0, records=10)
    with pytest.raises(ValueError, match="ns"):                    # ns=[10.5] was truncated to 10
        regression.sensitivity_profile([10.5], d=2, lam=0.05, x_bound=5.0, y_bound=5.0, records=10)
    assert check_int_array("ns", [3.0, 4]).tolist() == [3, 4]


def test_objects_passed_where_results_or_names_belong_are_refused_by_name():
    # experiments.capped_rounds(m=0), gamma_star_gaps(maps=0), gamma_star_map(theory=0),
    # compare_schedules(reference=[]), sweep.map_grid(options={}): AttributeError / "unhashable" / "not iterable"
    for call, word in [(lambda: experiments.capped_rounds(0), "m"), (lambda: experiments.gamma_star_gaps(0), "maps"),
                       (lambda: experiments.gamma_star_map(gaussian.GaussianMean(tau=0.02, d=12, R=10.0),
                                                           behaviour.Memoryless(q=[[0.3]], r=[[0.6]]), maps=0),
                        "maps"),                                  # was gamma_star_map(theory=0)
                       (lambda: experiments.gamma_star_map(gaussian.GaussianMean(tau=0.02, d=12, R=10.0),
                                                           behaviour.Memoryless(q=[[0.3]], r=[[0.6]]),
                                                           options={}), "options"),
                       (lambda: experiments.compare_schedules({"a": [1.0]}, bernoulli.RandomizedResponse(1.0),
                                                              behaviour.Memoryless(q=0.3, r=0.6), n0=50, trials=2,
                                                              reference=[]), "reference"),
                       (lambda: sweep.map_grid(lambda a, keys: a, {"a": [1.0]}, options={}), "options")]:
        with pytest.raises((TypeError, ValueError), match=word):
            call()


def test_paths_are_checked_before_use():
    # experiments.read_gamma_star_maps(path=0 / "x"), cli.CellFiles(folder=0): os errors that name nothing
    with pytest.raises(TypeError, match="path"):
        experiments.read_gamma_star_maps(0)
    with pytest.raises(ValueError, match="path"):
        experiments.read_gamma_star_maps("no such file.npz")
    with pytest.raises(TypeError, match="folder"):
        cli.CellFiles(0)


def test_flags_are_real_booleans():
    # experiments.gamma_star_map(empirical=0) ran the theory only; exercises.check(quiet=1), cli.CellFiles(read=1),
    # sweep.Execution(progress=0) took numbers as flags
    ex = exercises.exercise_ids()[0]
    for call, word in [(lambda: experiments.horizon_curves(
                            gaussian.GaussianMean(np.geomspace(0.2, 20, 10), tau=0.02, d=12, R=10.0),
                            behaviour.Memoryless(q=0.3, r=0.6), empirical=0), "empirical"),
                       (lambda: exercises.check(ex, 1.0, quiet=1), "quiet"),
                       (lambda: cli.CellFiles("cells", read=1), "read"),
                       (lambda: sweep.Execution(progress=0), "progress"),
                       (lambda: sweep.map_grid(lambda x, keys: x, {"x": [1.0]}, product=0), "product")]:
        with pytest.raises((TypeError, ValueError), match=word):
            call()


def test_run_figure_checks_its_arguments_before_any_work():
    # cli.run_figure(number=0): KeyError after a figure's work; seed=True ran as seed 1
    for kwargs, word in [(dict(number=0), "number"), (dict(scale="x"), "scale"), (dict(seed=True), "seed"),
                         (dict(seed=-1), "seed")]:
        with pytest.raises((TypeError, ValueError), match=word):
            cli.run_figure(**dict(dict(number="1", scale="book", seed=0), **kwargs))


def test_sizes_of_the_upper_layers_no_call_can_hold_are_refused_up_front():
    # schedules.constant(T=1e9), optimize.optimal_gamma(d=1e9 / grid=1e9), optimal_schedule(T=1e9; two-phase
    # family or randomized response): MemoryError inside numpy (check_mean's zeros(d), a (K, 41, 41, T) grid).
    # optimal_gamma's data model and grid are its mechanism's now: d is refused where it enters, and a grid
    # too large for its cells (10**4 noise scales x a 1000 x 1000 meshgrid: 80 GB) by naming the mechanism
    gm, rr = gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0), bernoulli.RandomizedResponse(1.0)
    users = behaviour.Memoryless(q=0.3, r=0.6)
    fine = gaussian.GaussianMean(np.geomspace(0.01, 1e3, 10**4), tau=0.02, d=3, R=10.0)
    mesh = behaviour.Memoryless(q=np.full((1000, 1), 0.3), r=np.full((1, 1000), 0.6))
    for call, word in [(lambda: schedules.constant(1.0, T=10**12), "T"),
                       (lambda: optimize.optimal_gamma(gaussian.GaussianMean(tau=0.02, d=10**12, R=10.0), users,
                                                       T=3, n0=50), "d"),
                       (lambda: optimize.optimal_gamma(fine, mesh, T=3, n0=50), "mechanism"),
                       (lambda: optimize.optimal_gamma(fine, mesh, T=3, n0=50, objective="mean_field"), "mechanism"),
                       (lambda: optimize.optimal_schedule(gm, users, T=10**5, n0=50, family="two_phase"), "T"),
                       (lambda: optimize.optimal_schedule(rr, users, T=10**12, n0=50), "T")]:
        with pytest.raises(ValueError, match=f"{word} is too large"):
            call()



MEMORYLESS = behaviour.Memoryless(q=0.3, r=0.6)
AGENT_REFERENCES = {
    "bernoulli": lambda **kw: engine.simulate_agents(bernoulli.RandomizedResponse(1.0), MEMORYLESS, **kw),
    "gaussian": lambda **kw: engine.simulate_agents(gaussian.GaussianMean(2.0, tau=0.02, d=3, R=10.0), MEMORYLESS, **kw),
    "regression": lambda **kw: engine.simulate_agents(regression.RidgeRelease(1.0, tau=0.02, data=regression.RidgeData(d=3)), MEMORYLESS, **kw),
    "gradient": lambda **kw: engine.simulate_agents(gradient.PrivateGD(1.0, tau=0.02), MEMORYLESS, **kw),
    "participation": lambda **kw: engine.simulate_agents(PrivateFederatedRound(1.0, tau=0.3, R=10.0), MEMORYLESS, **kw),
}


@pytest.mark.parametrize("model", sorted(AGENT_REFERENCES))
def test_agent_references_refuse_runs_they_cannot_hold_by_name_before_any_work(model):
    # issue 32 C: T or trials of 1e12 ended in numpy's "Unable to allocate 15 TiB" (regression, gradient,
    # participation), n0 = cap = 1e12 looped for ever in Python (bernoulli, gradient, participation) or named d
    # (gaussian); one shared check now (in engine.simulate_agents)
    run = AGENT_REFERENCES[model]
    small = dict(T=3, n0=20, trials=2, seed=0)
    for kwargs, word in [(dict(T=10**12), "T=1000000000000"), (dict(trials=10**12), "trials=1000000000000"),
                         (dict(n0=10**12, policy=Policy(cap=10**12)), "n0 must be at most"),
                         (dict(T=60, n0=10, policy=Policy(cap=10**9)), "cap must be at most")]:
        with pytest.raises(ValueError, match=word):
            run(**dict(small, **kwargs))
    # a Generator seed is a seed (it was refused by gradient's reference, whose message listed it as allowed)
    a = run(**dict(small, seed=np.random.default_rng(5)))
    b = run(**dict(small, seed=np.random.default_rng(5)))
    assert np.array_equal(a.population, b.population)


# ------------------------------------------- a table of bad arguments of the searches (the grid runner's: test_bad_input)


NAN, INF = float("nan"), float("inf")
PROB = [-0.1, 1.1, NAN, INF, "0.5", None, 1 + 2j]


POSITIVE = [0.0, -1.0, NAN, INF, -INF, "0.5", None, 1 + 2j]


INT_POS = [0, -1, 2.5, NAN, INF, True, "3", 2**64]


QUAD = dict(d=3, R=10.0, leak_method="quadrature")
GAMMA_GRID = gaussian.GaussianMean(np.geomspace(1e-2, 1e3, 5), tau=0.02, **QUAD)   # the old grid=5
NOT_A_BEHAVIOUR = [None, (0.3, 0.6), dict(q=0.3, r=0.6), lambda q, r: behaviour.Memoryless(q=q, r=r), "leak"]


def _optimal_gamma_of_a_model(*, q, r, tau, **kwargs):
    """optimize.optimal_gamma of the model of loose parameters (as its old signature took them): a bad q or tau is
    refused by name where it enters (Memoryless, GaussianMean), on the way into the search."""
    return optimize.optimal_gamma(gaussian.GaussianMean(np.geomspace(1e-2, 1e3, 5), tau=tau, **QUAD),
                                  behaviour.Memoryless(q=q, r=r), **kwargs)


def _optimal_epsilon_of_a_model(*, q, r, epsilon, **kwargs):
    """optimize.optimal_epsilon of the model of loose parameters (as its old signature took them, epsilons= now
    spelled as the mechanism names its budgets): a bad q or budget is refused by name where it enters
    (Memoryless, RandomizedResponse), on the way into the search."""
    return optimize.optimal_epsilon(bernoulli.RandomizedResponse(epsilon, mu=(0.5, 1.0)),
                                    behaviour.Memoryless(q=q, r=r), **kwargs)


def _optimal_gamma_empirical_of_a_model(*, q, r, gamma, tau, **kwargs):
    """optimize.optimal_gamma_empirical of the model of loose parameters (its old signature: gammas=, q=, r=, tau=)."""
    return optimize.optimal_gamma_empirical(gaussian.GaussianMean(gamma, tau=tau, d=2, R=10.0),
                                            behaviour.Memoryless(q=q, r=r), **kwargs)


RR_GRID = bernoulli.RandomizedResponse([0.5, 1.0], mu=(0.5, 1.0))
NOT_AN_EXECUTION = [{}, dict(n_jobs=2), 2, "loky"]


CASES = {
    # models owned by other helpers: their arguments are checked too
    "optimize.optimal_epsilon(model)": (
        _optimal_epsilon_of_a_model, dict(q=0.3, r=0.6, epsilon=[0.5, 1.0], T=3, n0=10, trials=2,
                                          policy=Policy(cap=100), seed=0),
        {"q": PROB, "epsilon": [[], [0.0, 1.0], [NAN], [[1.0, 2.0]]], "trials": INT_POS}),
    "optimize.optimal_epsilon": (
        optimize.optimal_epsilon, dict(mechanism=RR_GRID, users=behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=10,
                                       trials=2, policy=Policy(cap=100), seed=0),
        {"mechanism": [None, [0.5, 1.0], 1.0, gaussian.GaussianMean([0.5, 1.0, 2.0], tau=0.02, **QUAD),
                       bernoulli.RandomizedResponse(engine.Schedule([0.5, 1.0, 2.0])),
                       bernoulli.RandomizedResponse(engine.PerCell([0.5, 1.0]))],
         "users": NOT_A_BEHAVIOUR, "options": NOT_AN_EXECUTION, "trials": INT_POS}),
    "optimize.optimal_gamma_empirical(model)": (
        _optimal_gamma_empirical_of_a_model, dict(q=0.3, r=0.6, gamma=[0.5, 2.0], tau=0.02, T=3, n0=10, trials=2,
                                                  policy=Policy(cap=100), seed=0),
        {"q": PROB, "gamma": [[], [0.0, 1.0], [NAN], [INF], [[1.0, 2.0]]], "tau": POSITIVE}),
    "optimize.optimal_gamma_empirical": (
        optimize.optimal_gamma_empirical, dict(mechanism=gaussian.GaussianMean([0.5, 2.0], tau=0.02, d=2, R=10.0),
                                               users=behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=10, trials=2,
                                               policy=Policy(cap=100), seed=0),
        {"mechanism": [None, [0.5, 2.0], 1.0, RR_GRID, gaussian.GaussianMean(tau=0.02, d=2, R=10.0),
                       gaussian.GaussianMean(engine.Schedule([0.5, 1.0, 2.0]), tau=0.02, d=2, R=10.0)],
         "users": NOT_A_BEHAVIOUR, "options": NOT_AN_EXECUTION, "trials": INT_POS + [1]}),
    "optimize.optimal_gamma(model)": (
        _optimal_gamma_of_a_model, dict(q=0.3, r=0.6, tau=0.02, T=3, n0=100),
        {"q": PROB, "tau": POSITIVE}),
    "optimize.optimal_gamma": (
        optimize.optimal_gamma, dict(mechanism=GAMMA_GRID, users=behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=100),
        {"mechanism": [None, 1.0, (1e-2, 1e3), bernoulli.RandomizedResponse([0.5, 1.0, 2.0]),
                       gaussian.GaussianMean([0.1, 1.0], tau=0.02, **QUAD),
                       gaussian.GaussianMean([1.0, 0.1, 10.0], tau=0.02, **QUAD),
                       gaussian.GaussianMean(engine.Schedule([0.1, 1.0, 10.0]), tau=0.02, **QUAD)],
         "users": NOT_A_BEHAVIOUR + [behaviour.LeakCount(k=2, q=0.3, r=0.6)],
         "T": INT_POS, "objective": ["best"]}),
    "optimize.mean_field_optimal_epsilon": (
        optimize.mean_field_optimal_epsilon,
        dict(mechanism=bernoulli.RandomizedResponse([0.5, 1.0]), users=behaviour.Memoryless(q=0.3, r=0.6), T=3,
             n0=10),
        {"mechanism": [None, [0.5, 1.0], gaussian.GaussianMean([0.5, 1.0, 2.0], tau=0.02, **QUAD),
                       bernoulli.RandomizedResponse(engine.Schedule([0.5, 1.0, 2.0]))],
         "users": NOT_A_BEHAVIOUR, "T": INT_POS, "n0": INT_POS}),
}


PARAMS = [pytest.param(key, name, bad, id=f"{key}-{name}-{i}")
          for key, (_, _, table) in CASES.items() for name, bads in table.items() for i, bad in enumerate(bads)]


@pytest.mark.parametrize("key", CASES)
def test_the_typical_call_of_each_case_runs(key):
    # so that a bad argument, not the call itself (an unknown keyword names itself too), is what a case refuses
    func, kwargs, table = CASES[key]
    func(**kwargs)
    import inspect

    inspect.signature(func).bind(**dict(kwargs, **dict.fromkeys(table)))   # every name of the table is a parameter


@pytest.mark.parametrize("key, name, bad", PARAMS)
def test_bad_argument_raises_a_clear_error_naming_the_parameter(key, name, bad):
    func, kwargs, _ = CASES[key]
    kwargs = dict(kwargs, **{name: bad})
    with pytest.raises((ValueError, TypeError)) as info:
        func(**kwargs)
    message = str(info.value)
    expected = name   # the message names the parameter itself
    assert expected in message, message
    assert len(message) < 400 and "\n" not in message  # one readable line


# ------------------------------------------------- the engine-facing methods at a population that died out


def _mechanisms():
    from perfpriv.gaussian import GaussianMean
    return [bernoulli.RandomizedResponse(1.0), GaussianMean(1.0, tau=0.02, d=3, R=10.0),
            gradient.PrivateGD(1.0, tau=0.02, data=gradient.GDData(d=2), table=gradient.Tabulation(records=200, datasets=4)),
            regression.RidgeRelease(1.0, tau=0.02, data=regression.RidgeData(d=2),
                                    table=regression.Tabulation(records=200, datasets=4)).resolved("paper")]


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize("index", range(4))
def test_expected_error_of_no_users_is_inf_and_its_gradient_is_no_nan(index):
    # the mean field passes n = 0 for a population that died out: 1/0 warned, inf − inf gave NaN slopes
    mech = _mechanisms()[index]
    level = mech.levels.values.ravel()[0]
    assert float(mech.expected_error(0, level)) == np.inf
    e, de_dn, de_dl = (np.asarray(x, float) for x in mech.expected_error_grad(np.array([0.0, 50.0]), level))
    assert e[0] == np.inf and math.isfinite(e[1]) and not np.isnan(de_dn).any() and not np.isnan(de_dl).any()
    for bad in (-1, np.nan, [10, -1]):
        with pytest.raises(ValueError, match=r"n must be .*\[0, inf\]"):
            mech.expected_error(bad, level)
    with pytest.raises(ValueError, match=r"n must be .*\[0, inf\]"):
        mech.expected_error_grad(-1, level)


def test_closed_form_error_slopes_at_no_users_are_the_limits_of_their_formulas():
    # e = V/n: de/dlog n = −e → −inf; Lemma 3's de/dlog γ = 2γ²Tr Σ⁻¹/n → +inf
    rr, gm = _mechanisms()[:2]
    assert tuple(map(float, rr.expected_error_grad(0.0, 1.0)))[:2] == (np.inf, -np.inf)
    assert tuple(map(float, gm.expected_error_grad(0.0, 1.0))) == (np.inf, -np.inf, np.inf)
