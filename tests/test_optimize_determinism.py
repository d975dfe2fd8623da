"""Determinism of the searches and the sweep: same seed, same numbers; identical results
with n_jobs = 1 and 2; grid cells independent of the grid."""

import numpy as np
import pytest

from perfpriv import bernoulli

from perfpriv import keyed, optimize, sweep
from perfpriv.engine import Policy


def _fields(result):
    """The array fields of a result dataclass (or the value itself)."""
    if hasattr(result, "__dataclass_fields__"):
        return {k: getattr(result, k) for k in result.__dataclass_fields__}
    return {"value": result}


def _equal(va, vb):
    if isinstance(va, dict):
        return va.keys() == vb.keys() and all(_equal(va[k], vb[k]) for k in va)
    if isinstance(va, (str, type(None), bool)):
        return va == vb
    if isinstance(va, (np.ndarray, float, int, np.floating, np.integer, list, tuple)):
        return np.array_equal(np.asarray(va), np.asarray(vb), equal_nan=True)
    return True  # provenance objects (mechanism, behaviour, policy, seeds): compared through the arrays


def assert_identical(a, b):
    fa, fb = _fields(a), _fields(b)
    assert fa.keys() == fb.keys()
    for key in fa:
        assert _equal(fa[key], fb[key]), key


def _numpy_cells(a, keys):
    """A batched cell function of the grid runner that draws with numpy, from each cell's generator."""
    return np.stack([keyed.as_generator(keys[i]).random(2) + a[i] for i in range(len(a))])


SAME_SEED_CALLS = {
    "optimize.optimal_epsilon": lambda seed: optimize.optimal_epsilon(q=[0.3, 0.5], r=[0.6, 0.4],
                                                                      epsilons=[0.5, 2.0, np.inf], T=5, n0=30,
                                                                      trials=2, policy=Policy(cap=200), seed=seed),
    "optimize.optimal_gamma_empirical": lambda seed: optimize.optimal_gamma_empirical(
        q=0.3, r=0.6, gammas=[1.0, 3.0], tau=0.02, T=3, n0=20, d=2, R=10.0, trials=2, seed=seed),
    "sweep.map_grid": lambda seed: sweep.map_grid(_numpy_cells, {"a": [0.0, 1.0]}, seed=seed),

}


@pytest.mark.parametrize("name", SAME_SEED_CALLS)
def test_same_seed_gives_identical_results_and_another_seed_does_not(name):
    call = SAME_SEED_CALLS[name]
    first, again = call(123), call(123)
    assert_identical(first, again)
    other = call(124)
    differs = any(not np.array_equal(np.asarray(v), np.asarray(_fields(other)[k]), equal_nan=True)
                  for k, v in _fields(first).items() if isinstance(v, np.ndarray))
    assert differs  # the seed is actually used


def test_optimal_epsilon_is_identical_with_one_and_two_jobs():
    kw = dict(T=5, n0=30, trials=2, policy=Policy(cap=200), seed=7)
    q, r = np.meshgrid([0.2, 0.6], [0.3, 0.7])
    one = optimize.optimal_epsilon(q=q, r=r, epsilons=[0.5, 2.0, np.inf], n_jobs=1, **kw)
    two = optimize.optimal_epsilon(q=q, r=r, epsilons=[0.5, 2.0, np.inf], n_jobs=2, **kw)
    assert_identical(one, two)


def test_optimal_gamma_empirical_is_identical_with_one_and_two_jobs():
    kw = dict(T=3, n0=20, d=2, R=10.0, trials=2, seed=7)
    one = optimize.optimal_gamma_empirical(q=[0.3, 0.5], r=[0.6, 0.4], gammas=[1.0, 3.0], tau=0.02, n_jobs=1, **kw)
    two = optimize.optimal_gamma_empirical(q=[0.3, 0.5], r=[0.6, 0.4], gammas=[1.0, 3.0], tau=0.02, n_jobs=2, **kw)
    assert_identical(one, two)


def _simulated_cells(epsilon, q, keys, **kw):
    """A batched cell function for the grid runner: one perfpriv simulation per cell, seeded by its key."""
    return np.stack([bernoulli.simulate(e, q=qi, seed=keys[i], **kw).sq_error
                     for i, (e, qi) in enumerate(zip(epsilon, q))])


def test_grid_of_a_perfpriv_simulator_is_identical_with_one_and_two_jobs():
    grid = {"epsilon": [0.5, np.inf], "q": [0.2, 0.6]}
    kw = dict(r=0.5, T=4, n0=30, trials=2, policy=Policy(cap=200))  # (epsilon positional, q and r keywords)
    one = sweep.map_grid(_simulated_cells, grid, seed=3, product=True, options=sweep.Execution(n_jobs=1), **kw)
    two = sweep.map_grid(_simulated_cells, grid, seed=3, product=True, options=sweep.Execution(n_jobs=2), **kw)
    assert one.shape[:2] == (2, 2)
    assert_identical(one, two)


def test_optimal_epsilon_cells_do_not_depend_on_the_rest_of_the_grid():
    kw = dict(T=5, n0=30, trials=2, policy=Policy(cap=200), seed=5)
    eps = [0.5, 2.0, np.inf]
    grid = optimize.optimal_epsilon(q=[0.2, 0.6, 0.9], r=[0.7, 0.3, 0.1], epsilons=eps, **kw)
    alone = optimize.optimal_epsilon(q=0.6, r=0.3, epsilons=eps, **kw)
    assert np.array_equal(grid.values[1], alone.values)
