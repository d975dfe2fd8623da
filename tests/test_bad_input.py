"""Every public function rejects bad arguments with a clear ValueError/TypeError.

For each public function (from the modules' ``__all__``) and each of its
arguments, a table of invalid values -- NaN, infinities where they are not
allowed, values outside the allowed range, wrong types, wrong shapes,
non-positive-definite covariances -- must raise ``ValueError`` or
``TypeError`` whose message names the parameter (and, for range errors, the
allowed interval), never ``ZeroDivisionError``, ``IndexError``,
``OverflowError``, a numpy ``RuntimeWarning`` (warnings are errors in this
suite), a silent NaN or a hang.
"""

import numpy as np
import pytest

from perfpriv import (behaviour, bernoulli, dynamics, engine, gaussian, gradient, keyed, leakage, projected, regression,
                      sweep)
from perfpriv.behaviour import Memoryless

NAN, INF = float("nan"), float("inf")
NOT_REAL = ["0.5", None, 1 + 2j]
NOT_PD = [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
NOT_SYM = [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]

POSITIVE = [0.0, -1.0, NAN, INF, -INF, *NOT_REAL]       # (0, inf)
NONNEG = [-1e-9, NAN, INF, -INF, *NOT_REAL]             # [0, inf)
PROB = [-0.1, 1.1, NAN, INF, *NOT_REAL]                 # [0, 1]
BIG_N = [1.5, 1.0, 0.0, -3.0, NAN, INF, *NOT_REAL]      # real n >= 2
INT_POS = [0, -1, 2.5, NAN, INF, True, "3", 2**64]      # integers >= 1
BAD_POLICY = ["x", 100, {"cap": 5}, (100, 1)]            # a population policy is an engine.Policy
STAT = ["Paper", "", None, 3]

#: The model of perfpriv.dynamics: a mechanism and the paper's users (and what is neither).
GM = gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0, leak_method="quadrature")
MEM = behaviour.Memoryless(q=0.3, r=0.6)
NOT_MECHANISM = [None, 1.0, "x", bernoulli.RandomizedResponse(1.0), MEM]
NOT_BEHAVIOUR = [None, 0.3, "x", GM]
NOT_MEMORYLESS = NOT_BEHAVIOUR + [behaviour.LeakCount(k=2, q=0.3, r=0.6)]
GAMMA = [v for v in POSITIVE if v is not None]          # a gamma (None: the mechanism's level; GaussianMean: no level)


def _grid_cells(a, keys):
    """A batched cell function of the grid runner."""
    return a

# function -> (valid keyword arguments, {parameter: bad values})
CASES = {
    "leakage.record_deviations": (leakage.record_deviations, dict(Z=[[1.0, 0.0], [0.0, 1.0]], R=1.0),
                                  {"Z": [[[NAN, 0.0]], [[INF, 0.0]], "ab", [[[1.0]]]], "R": POSITIVE}),
    "leakage.log_likelihood_ratio": (
        leakage.log_likelihood_ratio,
        dict(Z=[[1.0, 0.0], [0.0, 1.0]], eta=[0.1, 0.1], gamma=1.0, R=1.0, statistic="paper"),
        {"Z": [[[1.0, 0.0]], [[NAN, 0.0], [0.0, 1.0]]], "eta": [[0.1], [0.1, 0.1, 0.1], [NAN, 0.0]],
         "gamma": POSITIVE + [[1.0, 2.0]], "R": POSITIVE, "statistic": STAT}),
    "leakage.llr_moments": (leakage.llr_moments, dict(s=1.0, n=10, gamma=1.0, statistic="exact", d=2),
                            {"s": NONNEG, "n": BIG_N, "gamma": POSITIVE, "statistic": STAT,
                             "d": [0, 1.5, None, "2"]}),
    "leakage.leak_probability": (leakage.leak_probability, dict(s=1.0, n=10, gamma=1.0, tau=0.5),
                                 {"s": NONNEG + [[1.0, NAN]], "n": BIG_N, "gamma": POSITIVE,
                                  "tau": POSITIVE, "statistic": STAT}),
    "leakage.leak_probability[exact]": (
        leakage.leak_probability, dict(s=1.0, n=10, gamma=1.0, tau=0.5, statistic="exact", d=2),
        {"d": [0, -1, 2.5, None, "2"], "n": BIG_N}),
    "leakage.log_leak_probability": (leakage.log_leak_probability, dict(s=1.0, n=10, gamma=1.0, tau=0.5),
                                     {"s": NONNEG, "n": BIG_N, "gamma": POSITIVE, "tau": POSITIVE,
                                      "statistic": STAT}),
    "leakage.renyi_divergence": (leakage.renyi_divergence, dict(s=1.0, n=10, gamma=1.0, alpha=2.0),
                                 {"s": NONNEG, "n": BIG_N, "gamma": POSITIVE,
                                  "alpha": [1.0, 0.5, NAN, INF, *NOT_REAL]}),
    "leakage.renyi_tail_bound": (leakage.renyi_tail_bound, dict(s=1.0, n=10, gamma=1.0, tau=0.5, alpha=2.0),
                                 {"s": NONNEG, "n": BIG_N, "gamma": POSITIVE, "tau": POSITIVE,
                                  "alpha": [1.0, 0.5, NAN, INF, "2"]}),
    "leakage.optimal_renyi_order": (leakage.optimal_renyi_order, dict(s=1.0, n=10, gamma=1.0, tau=0.5),
                                    {"s": NONNEG, "n": BIG_N, "gamma": POSITIVE, "tau": POSITIVE}),
    "leakage.gdp_mu": (leakage.gdp_mu, dict(s=1.0, n=10, gamma=1.0),
                       {"s": NONNEG, "n": BIG_N, "gamma": POSITIVE}),
    "leakage.worst_case_gdp_mu": (leakage.worst_case_gdp_mu, dict(n=10, gamma=1.0, R=1.0),
                                  {"n": BIG_N, "gamma": POSITIVE, "R": POSITIVE}),
    "leakage.threshold_for_fpr": (leakage.threshold_for_fpr, dict(mu=1.0, fpr=0.05),
                                  {"mu": NONNEG, "fpr": [0.0, 1.0, -0.1, NAN, "0.1"]}),
    "leakage.roc_curve": (leakage.roc_curve, dict(mu=1.0, fpr=0.05),
                          {"mu": NONNEG, "fpr": [0.0, 1.0, 1.5, NAN, [0.1, NAN]]}),
    "leakage.marginal_leak_probability": (
        leakage.marginal_leak_probability,
        dict(n=100, gamma=1.0, tau=0.02, d=3, R=10.0, method=leakage.Integration(samples=2000, seed=0)),
        {"n": BIG_N, "gamma": POSITIVE, "tau": POSITIVE, "d": INT_POS, "R": POSITIVE,
         "mu": [[0.0, 0.0], [NAN, 0.0, 0.0], "abc"], "Sigma": [NOT_PD, NOT_SYM, np.eye(2), [[NAN] * 3] * 3],
         "statistic": STAT, "method": ["quad", None]}),
    # dynamics: the model is two objects (their values are the constructors' -- gaussian.GaussianMean and
    # behaviour.Memoryless below); a gamma of None is the mechanism's level
    "dynamics.growth_factor": (dynamics.growth_factor, dict(mechanism=GM, behaviour=MEM, n=100, gamma=1.0),
                               {"mechanism": NOT_MECHANISM, "behaviour": NOT_MEMORYLESS, "gamma": GAMMA,
                                "n": [0.5, -1.0, NAN, INF, "x"]}),
    "dynamics.critical_gamma": (dynamics.critical_gamma, dict(mechanism=GM, behaviour=MEM, n=100),
                                {"mechanism": NOT_MECHANISM,
                                 "behaviour": NOT_MEMORYLESS + [behaviour.Memoryless(q=0.3, r=0.6, rule="agnostic")],
                                 "n": [1.0, 0.5, NAN, INF, "x"]}),
    "dynamics.exact_critical_gamma": (
        dynamics.exact_critical_gamma, dict(mechanism=GM, behaviour=MEM, n=100),
        {"mechanism": NOT_MECHANISM, "behaviour": NOT_BEHAVIOUR, "n": BIG_N + [[10.0, 20.0]],
         "bracket": [(1.0,), (2.0, 1.0), (0.0, 1.0), (1.0, INF), "ab", None]}),
    "dynamics.kappa": (dynamics.kappa, dict(behaviour=MEM), {"behaviour": NOT_MEMORYLESS}),
    "dynamics.error_bounds": (dynamics.error_bounds, dict(mechanism=GM, behaviour=MEM, n_prev=100, gamma=1.0),
                              {"mechanism": NOT_MECHANISM, "behaviour": NOT_MEMORYLESS, "gamma": GAMMA,
                               "n_prev": [0.5, NAN, INF, "x"]}),
    "dynamics.cumulative_error_bound": (
        dynamics.cumulative_error_bound, dict(mechanism=GM, behaviour=MEM, T=3, n0=100, gamma=1.0),
        {"mechanism": NOT_MECHANISM, "behaviour": NOT_MEMORYLESS, "gamma": GAMMA, "T": INT_POS,
         "n0": [1, 0, 2.5, "x"]}),
    "dynamics.infinite_horizon_gamma": (
        dynamics.infinite_horizon_gamma, dict(mechanism=GM, behaviour=MEM, n0=100, grid=5, rounds_max=50),
        {"mechanism": NOT_MECHANISM, "behaviour": NOT_MEMORYLESS + [behaviour.Memoryless(q=[0.3, 0.4], r=0.6)],
         "n0": [1.5, NAN, INF, "x"], "bracket": [(2.0, 1.0), (0.0, 1.0)], "grid": [4, 2.5, "x"],
         "rounds_max": [9, 2.5]}),
    "dynamics.pac_radius": (dynamics.pac_radius, dict(mechanism=GM, n=100, gamma=1.0, delta=0.05),
                            {"mechanism": NOT_MECHANISM, "gamma": GAMMA, "n": [0.5, NAN, INF],
                             "delta": [0.0, 1.0, NAN, "x"]}),
    "dynamics.pac_rounds": (
        dynamics.pac_rounds,
        dict(mechanism=gaussian.GaussianMean(2.0, tau=0.02, d=12, R=10.0, leak_method="quadrature"), behaviour=MEM,
             n0=1000, epsilon=1.0, delta=0.05, gamma=2.0),
        {"mechanism": NOT_MECHANISM, "behaviour": NOT_MEMORYLESS + [behaviour.Memoryless(q=[0.3, 0.4], r=0.6)],
         "gamma": GAMMA + [[1.0, 2.0]], "epsilon": POSITIVE, "delta": [0.0, 1.0, NAN]}),
    "gaussian.GaussianMean": (
        gaussian.GaussianMean, dict(gamma=1.0, tau=0.02, d=3, R=10.0, leak_method="quadrature"),
        {"gamma": GAMMA + [1e300, [[1.0, 2.0]]], "tau": POSITIVE + [[0.1, 0.2]], "d": INT_POS, "R": POSITIVE,
         "mu": [[0.0, 0.0], [NAN, 0.0, 0.0], "abc"], "Sigma": [NOT_PD, NOT_SYM, np.eye(2), [[NAN] * 3] * 3],
         "statistic": [s for s in STAT if s is not None], "draw": ["fast", None],
         "leak_method": ["mc", None, 3]}),
    "leakage.Integration": (leakage.Integration, dict(method="montecarlo", samples=100, seed=0),
                            {"method": ["mc", None], "samples": INT_POS, "seed": [-1, "x", 1.5]}),
    "bernoulli.beta_from_epsilon": (bernoulli.beta_from_epsilon, dict(epsilon=1.0),
                                    {"epsilon": [-1.0, NAN, -INF, *NOT_REAL]}),
    "bernoulli.epsilon_from_beta": (bernoulli.epsilon_from_beta, dict(beta=0.2),
                                    {"beta": [-0.1, 0.6, NAN, INF, *NOT_REAL]}),
    "bernoulli.growth_factor": (bernoulli.growth_factor, dict(beta=0.2, q=0.3, r=0.6),
                                {"beta": [-0.1, 0.6, NAN], "q": PROB, "r": PROB, "rule": ["Leak", None]}),
    "bernoulli.critical_beta": (bernoulli.critical_beta, dict(q=0.3, r=0.6), {"q": PROB, "r": PROB}),
    "bernoulli.estimator_variance": (bernoulli.estimator_variance, dict(mu=0.3, beta=0.2, n=10),
                                     {"mu": PROB, "beta": [0.0, 0.6, NAN], "n": [0.0, -1.0, NAN, INF]}),
    "bernoulli.simulate": (bernoulli.simulate,
                           dict(epsilon=1.0, q=0.3, r=0.6, T=3, n0=10, trials=2, seed=0),
                           {"epsilon": [0.0, -1.0, NAN, [[[1.0]]]], "q": PROB, "r": PROB, "T": INT_POS,
                            "n0": [0, 2.5], "trials": INT_POS, "seed": [-1, "x"]}),
    "bernoulli.mean_field": (bernoulli.mean_field, dict(epsilon=1.0, q=0.3, r=0.6, T=3, n0=10, cap=100),
                             {"epsilon": [-1.0, NAN], "q": PROB, "T": INT_POS, "n0": [0, 2.5],
                              "mu": [1.5, (0.8, 0.2), NAN], "rule": ["Leak", None]}),
    "gaussian.clip": (gaussian.clip, dict(z=[[1.0, 2.0]], R=1.0), {"z": [[NAN, 1.0], 1.0, "x"], "R": POSITIVE}),
    "gaussian.gamma_from_rho": (gaussian.gamma_from_rho, dict(rho=1.0, R=1.0), {"rho": POSITIVE, "R": POSITIVE}),
    "gaussian.rho_from_gamma": (gaussian.rho_from_gamma, dict(gamma=1.0, R=1.0), {"gamma": POSITIVE, "R": POSITIVE}),
    "gaussian.release": (gaussian.release, dict(Z=[[1.0, 2.0], [0.0, 1.0]], gamma=1.0, R=1.0, rng=0),
                         {"Z": [[[NAN, 1.0]], "x"], "gamma": POSITIVE, "R": POSITIVE, "rng": [-1, "x"]}),
    "gaussian.mahalanobis_error": (gaussian.mahalanobis_error, dict(gamma=1.0, n=10, Sigma=np.eye(3)),
                                   {"gamma": POSITIVE, "n": [0.5, NAN, INF],
                                    "Sigma": [NOT_PD, NOT_SYM, "x", [[NAN] * 3] * 3]}),
    "gaussian.squared_mahalanobis": (gaussian.squared_mahalanobis, dict(o=[1.0, 2.0, 3.0], Sigma=np.eye(3)),
                                     {"o": [[NAN, 1.0, 1.0], "x"], "mu": [[0.0, 0.0]],
                                      "Sigma": [NOT_PD, np.eye(2)]}),
    "gaussian.simulate": (gaussian.simulate,
                          dict(gamma=1.0, tau=0.02, q=0.3, r=0.6, T=2, n0=5, d=2, R=10.0, trials=2, seed=0),
                          {"gamma": POSITIVE + [1e300, [[1.0, 2.0]]], "tau": POSITIVE, "q": PROB, "r": PROB,
                           "T": INT_POS, "n0": [0, 2.5], "d": INT_POS, "R": POSITIVE, "trials": INT_POS,
                           "seed": [-1, "x", 1.5, True]}),
    # (the agent reference is engine.simulate_agents, below; its model's values are checked by the constructors)
    "bernoulli.RandomizedResponse": (bernoulli.RandomizedResponse, dict(epsilon=1.0),
                                     {"epsilon": [0.0, -1.0, NAN, -INF, "x"],
                                      "mu": [(0.7, 0.2), 1.5, NAN, (0.0, 1.0, 2.0)], "clip_estimate": ["yes", 2]}),
    "projected.draw_round": (projected.draw_round, dict(n=10, gamma=1.0, tau=0.02, d=3, seed=0),
                             {"n": INT_POS, "gamma": POSITIVE, "tau": POSITIVE, "d": INT_POS,
                              "sigma2": POSITIVE, "statistic": STAT, "seed": [-1, "x", 1.5]}),
    "keyed.coordinate_key": (keyed.coordinate_key, dict(value=0.3), {"value": [NAN, [0.1, 0.2], None]}),
    "keyed.root_key": (keyed.root_key, dict(seed=1), {"seed": [-1, 1.5, "x", True, np.random.RandomState(0)]}),
    "keyed.as_generator": (keyed.as_generator, dict(seed=1),
                           {"seed": [-1, 1.5, "x", True, np.random.RandomState(0), keyed.root_key(0).child([1, 2])]}),
    "keyed.as_seed_sequence": (keyed.as_seed_sequence, dict(seed=1),
                               {"seed": [-1, 1.5, "x", True, keyed.root_key(0).child([1, 2])]}),
    "sweep.map_grid": (sweep.map_grid, dict(func=_grid_cells, cells={"a": [1.0]}, seed=0),
                       {"func": [None, 3], "cells": [{}, {"a": []}, {"a": [[1.0, 2.0]]}, [1.0], {"a": [NAN]},
                                                     {"a": [1.0, 2.0], "b": [1.0]}, {"keys": [1.0]}],
                        "seed": [-1, "x", 1.5, True, np.random.RandomState(0)], "product": [1, None, "yes"],
                        "options": [{"n_jobs": 2}, 2]}),
    "sweep.Execution": (sweep.Execution, dict(),
                        {"n_jobs": [0, -2, 1.5, "2", True], "chunk": [0, -1, 2.5, "3", True],
                         "progress": ["yes", None, 0], "description": [3], "on_cells": [3, "x"]}),
    "behaviour.Memoryless": (behaviour.Memoryless, dict(q=0.3, r=0.6), {"q": PROB, "r": PROB, "rule": ["Leak", None]}),
    "engine.simulate": (engine.simulate,
                        dict(mechanism=bernoulli.RandomizedResponse(1.0), behaviour=behaviour.Memoryless(q=0.3, r=0.6),
                             T=3, n0=10, trials=2, seed=0),
                        {"mechanism": [None, 1.0, behaviour.Memoryless(q=0.3, r=0.6)],
                         "behaviour": [None, bernoulli.RandomizedResponse(1.0)], "T": INT_POS, "n0": [0, 2.5],
                         "trials": INT_POS, "policy": BAD_POLICY, "conventions": ["code"],
                         "record": ["last"], "seed": [-1, "x"]}),
    "engine.simulate_agents": (engine.simulate_agents,
                               dict(mechanism=bernoulli.RandomizedResponse(1.0),
                                    behaviour=behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=10, trials=2, seed=0),
                               {"mechanism": [None, 1.0, behaviour.Memoryless(q=0.3, r=0.6),
                                              bernoulli.RandomizedResponse([1.0, 2.0])],
                                "behaviour": [None, bernoulli.RandomizedResponse(1.0),
                                              behaviour.Memoryless(q=[0.3, 0.4], r=0.6)],
                                "T": INT_POS, "n0": [0, 2.5], "trials": INT_POS, "policy": BAD_POLICY,
                                "conventions": ["code"], "seed": [-1, "x"]}),
    "engine.Policy": (engine.Policy, dict(cap=100),
                      {"cap": [2.5, 0, -1, NAN, "x"], "floor": [2, -1, 0.5, None], "stop": [-1, 1.5, None],
                       "collapse": ["zero", None], "penalty": [-1.0, NAN, INF, None]}),
    "engine.mean_field": (engine.mean_field,
                          dict(mechanism=bernoulli.RandomizedResponse(1.0), behaviour=behaviour.Memoryless(q=0.3, r=0.6),
                               T=3, n0=10),
                          {"mechanism": [None], "behaviour": [None], "T": INT_POS, "n0": [0.5, NAN, "x"],
                           "cap": [5.0, NAN], "floor": [-1.0, 20.0, NAN], "rounds": ["both"],
                           "conventions": ["code"], "leak_probability": [3.0]}),
    "engine.make_levels": (engine.make_levels, dict(value=1.0, name="epsilon", low=0.0),
                           {"value": [-1.0, NAN, [], [[1.0, 2.0]], "x"]}),
    "engine.Schedule": (engine.Schedule, dict(values=[1.0, 2.0]), {"values": [[], [[[1.0]]], 3.0]}),
    # the learning mechanisms' objects (issue 31): the table of the mean field, the data models, and the
    # mechanisms refusing what is not one of them (the size of a dataset of the table: records x (d + 1))
    "regression.Tabulation": (regression.Tabulation, dict(records=50, datasets=2, seed=0),
                              {"records": INT_POS, "datasets": INT_POS,
                               "seed": [-1, 1.5, "x", True, np.random.RandomState(0), keyed.root_key(0).child([1, 2])]}),
    "regression.RidgeData": (regression.RidgeData, dict(d=3),
                             {"d": INT_POS + [10**6], "x_bound": GAMMA, "y_bound": [v for v in GAMMA if v != INF],
                              "noise_sd": NONNEG, "theta": [[1.0, 0.0], [NAN, 0.0, 0.0], "abc", [[1.0, 0.0, 0.0]] * 2],
                              "test_size": INT_POS + [10**12]}),
    "regression.RidgeRelease": (
        regression.RidgeRelease,
        dict(gamma=0.01, tau=0.02, data=regression.RidgeData(d=3), table=regression.Tabulation(records=50, datasets=2)),
        {"data": [3, "x", dict(d=3), gradient.GDData(d=3)],
         "table": [(50, 2), "x", 3, dict(records=50, datasets=2), regression.Tabulation(records=10**12, datasets=2)],
         "tau": POSITIVE, "lam": GAMMA, "noise": ["Calibrated", 3], "statistic": [s for s in STAT if s is not None],
         "error": ["mse", 3], "loo": ["keep", 3]}),
    "gradient.GDData": (gradient.GDData, dict(d=3),
                        {"d": INT_POS, "x_bound": GAMMA + [1e51, None], "theta_norm": NONNEG + [None],
                         "noise_sd": NONNEG + [None]}),
    "gradient.PrivateGD": (
        gradient.PrivateGD,
        dict(rho=1.0, tau=0.02, data=gradient.GDData(d=3), steps=3, table=gradient.Tabulation(records=50, datasets=2)),
        {"data": [3, "x", dict(d=3), regression.RidgeData(d=3)],
         "table": [(50, 2), "x", 3, gradient.Tabulation(records=10**12, datasets=2)],
         "tau": POSITIVE, "loss": ["Logistic", None], "lam": GAMMA, "clip": GAMMA + [1e-300, 1e300], "steps": INT_POS,
         "step_size": GAMMA, "step_offset": [-1.0, NAN, 0.0]}),
}

PARAMS = [pytest.param(key, name, bad, id=f"{key}-{name}-{i}")
          for key, (_, _, table) in CASES.items() for name, bads in table.items() for i, bad in enumerate(bads)]


@pytest.mark.parametrize("key, name, bad", PARAMS)
def test_bad_argument_raises_a_clear_error_naming_the_parameter(key, name, bad):
    func, kwargs, _ = CASES[key]
    kwargs = dict(kwargs, **{name: bad})
    with pytest.raises((ValueError, TypeError)) as info:
        func(**kwargs)
    message = str(info.value)
    expected = name   # the message names the parameter itself
    if key == "engine.make_levels" and name == "value":
        expected = "epsilon"
    assert expected in message, message
    assert len(message) < 400 and "\n" not in message  # one readable line


@pytest.mark.parametrize("call, pattern", [
    (lambda: leakage.leak_probability(1.0, 10, 0.0, tau=0.5), r"gamma must be in \(0, inf\); got 0\.0"),
    (lambda: dynamics.growth_factor(GM, behaviour.Memoryless(q=1.5, r=0.6), n=100), r"q must be in \[0, 1\]; got 1\.5"),
    (lambda: leakage.leak_probability(1.0, 1.5, 1.0, tau=0.5), r"n must be in \[2, inf\); got 1\.5"),
    (lambda: engine.mean_field(GM, MEM, T=2**64, n0=100).population,
     r"T must be an integer >= 1 and at most 2\*\*63 - 1; got 18446744073709551616"),   # never the int64 maximum as a float
    (lambda: leakage.marginal_leak_probability(10, 1.0, tau=0.02, d=3, R=10.0, Sigma=NOT_PD),
     "Sigma must be symmetric positive definite; its smallest eigenvalue is -1"),
    (lambda: gaussian.simulate(1e300, tau=0.02, q=0.3, r=0.6, T=2, n0=5, d=2, R=10.0),
     r"gamma must be in \[1e-100, 1e\+100\]; got 1e\+300"),
])
def test_messages_give_the_value_received_and_the_allowed_range(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


@pytest.mark.parametrize("policy, name", [(engine.Policy(cap=5), "cap"), (engine.Policy(stop=10), "stop")])
def test_a_policy_that_does_not_fit_the_initial_population_is_refused_naming_both(policy, name):
    for run in (lambda: engine.simulate(bernoulli.RandomizedResponse(1.0), Memoryless(q=0.3, r=0.6), T=3, n0=10, trials=2, policy=policy, seed=0),
                lambda: engine.simulate_agents(gaussian.GaussianMean(1.0, tau=0.02, d=2, R=10.0), MEM, T=2, n0=10,
                                               trials=1, policy=policy, seed=0)):
        with pytest.raises(ValueError, match=rf"{name}.*n0|n0.*{name}"):
            run()


def test_a_policy_field_given_to_a_simulator_is_an_unknown_keyword():
    with pytest.raises(TypeError, match="cap"):
        engine.simulate(bernoulli.RandomizedResponse(1.0), Memoryless(q=0.3, r=0.6), T=3, n0=10, cap=100)


def test_monte_carlo_refuses_datasets_too_large_to_simulate_instead_of_exhausting_memory():
    with pytest.raises(ValueError, match="n must be at most"):
        leakage.marginal_leak_probability(1e9, 1.0, tau=0.02, d=3, R=1.0, method=leakage.Integration("montecarlo", seed=0))


def test_pac_rounds_with_an_infinite_radius_constant_raises_instead_of_overflowing():
    with pytest.raises(ValueError, match="no finite number of rounds"):
        dynamics.pac_rounds(gaussian.GaussianMean(2.0, tau=0.02, d=12, R=1e308, leak_method=leakage.Integration("montecarlo", 2000, 0)),
                            MEM, n0=1000, epsilon=1.0, delta=0.05)
