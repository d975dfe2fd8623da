"""Determinism of the searches and the sweep: same seed, same numbers; identical results
with n_jobs = 1 and 2; grid cells independent of the grid."""

import numpy as np
import pytest

from perfpriv import bernoulli, engine, gaussian

from perfpriv import keyed, optimize, sweep
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy

RR = bernoulli.RandomizedResponse([0.5, 2.0, np.inf], mu=(0.5, 1.0))    # the old optimal_epsilon's default mu
GM = gaussian.GaussianMean([1.0, 3.0], tau=0.02, d=2, R=10.0)


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
    "optimize.optimal_epsilon": lambda seed: optimize.optimal_epsilon(RR, Memoryless(q=[0.3, 0.5], r=[0.6, 0.4]),
                                                                      T=5, n0=30, trials=2, policy=Policy(cap=200),
                                                                      seed=seed),
    "optimize.optimal_gamma_empirical": lambda seed: optimize.optimal_gamma_empirical(
        GM, Memoryless(q=0.3, r=0.6), T=3, n0=20, trials=2, seed=seed),
    "sweep.map_grid": lambda seed: sweep.map_grid(_numpy_cells, {"a": [0.0, 1.0]}, seed=seed),
    "sweep.map_grid(keys)": lambda seed: sweep.map_grid(_numpy_cells, {"a": [0.0, 1.0]},
                                                        seed=keyed.root_key(seed).child([3, 4])),

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
    one = optimize.optimal_epsilon(RR, Memoryless(q=q, r=r), options=sweep.Execution(n_jobs=1), **kw)
    two = optimize.optimal_epsilon(RR, Memoryless(q=q, r=r), options=sweep.Execution(n_jobs=2), **kw)
    assert_identical(one, two)


def test_optimal_gamma_empirical_is_identical_with_one_and_two_jobs():
    kw = dict(T=3, n0=20, trials=2, seed=7)
    users = Memoryless(q=[0.3, 0.5], r=[0.6, 0.4])
    one = optimize.optimal_gamma_empirical(GM, users, options=sweep.Execution(n_jobs=1), **kw)
    two = optimize.optimal_gamma_empirical(GM, users, options=sweep.Execution(n_jobs=2), **kw)
    assert_identical(one, two)


def _simulated_cells(epsilon, q, keys, **kw):
    """A batched cell function for the grid runner: one perfpriv simulation per cell, seeded by its key."""
    return np.stack([bernoulli.simulate(e, q=qi, seed=keys[i], **kw).sq_error
                     for i, (e, qi) in enumerate(zip(epsilon, q))])


def test_grid_of_a_perfpriv_simulator_is_identical_with_one_and_two_jobs():
    grid = {"epsilon": [0.5, np.inf], "q": [0.2, 0.6]}
    kw = dict(r=0.5, T=4, n0=30, trials=2)  # (epsilon positional, q and r keywords)
    one = sweep.map_grid(_simulated_cells, grid, seed=3, product=True, options=sweep.Execution(n_jobs=1), **kw)
    two = sweep.map_grid(_simulated_cells, grid, seed=3, product=True, options=sweep.Execution(n_jobs=2), **kw)
    assert one.shape[:2] == (2, 2)
    assert_identical(one, two)


def test_optimal_epsilon_cells_do_not_depend_on_the_rest_of_the_grid():
    kw = dict(T=5, n0=30, trials=2, policy=Policy(cap=200), seed=5)
    grid = optimize.optimal_epsilon(RR, Memoryless(q=[0.2, 0.6, 0.9], r=[0.7, 0.3, 0.1]), **kw)
    alone = optimize.optimal_epsilon(RR, Memoryless(q=0.6, r=0.3), **kw)
    assert np.array_equal(grid.values[1], alone.values)
    # nor on the batches of cells
    chunked = optimize.optimal_epsilon(RR, Memoryless(q=[0.2, 0.6, 0.9], r=[0.7, 0.3, 0.1]),
                                       options=sweep.Execution(chunk=1), **kw)
    assert_identical(grid, chunked)


def test_optimal_gamma_empirical_cells_do_not_depend_on_the_rest_of_the_grid():
    kw = dict(T=3, n0=20, trials=2, seed=5)
    grid = optimize.optimal_gamma_empirical(GM, Memoryless(q=[[0.2], [0.6]], r=[0.7, 0.3]), **kw)
    alone = optimize.optimal_gamma_empirical(GM, Memoryless(q=0.6, r=0.3), **kw)
    assert np.array_equal(grid.values[1, 1], alone.values) and np.array_equal(grid.se[1, 1], alone.se)


# --------------------------------------------------------------- the grid runner's seed: one key per cell


def _keys_of_cells(a, keys):
    """The two words of each cell's key, and a draw from it (the keys as the cell function receives them)."""
    return np.stack([[float(keys[i].a), float(keys[i].b), keys[i].uniform(1)[0]] for i in range(len(a))])


def test_map_grid_uses_a_key_array_seed_as_given_one_key_per_cell():
    keys = keyed.root_key(11).child(np.array([7, 3, 5]))
    out = sweep.map_grid(_keys_of_cells, {"a": [0.1, 0.2, 0.3]}, seed=keys, options=sweep.Execution(chunk=2))
    for i in range(3):
        one = keyed.Key(keys.a[i], keys.b[i])
        assert out[i, 0] == float(one.a) and out[i, 1] == float(one.b) and out[i, 2] == one.uniform(1)[0]
    # not the keys of the coordinates
    default = sweep.map_grid(_keys_of_cells, {"a": [0.1, 0.2, 0.3]}, seed=11)
    assert not np.array_equal(default, out)
    assert default[1, 0] == float(keyed.cell_key(11, 0.2).a)
    # the keys do not depend on the batches or the workers
    for run in (sweep.Execution(chunk=1), sweep.Execution(n_jobs=2, chunk=1)):
        assert np.array_equal(sweep.map_grid(_keys_of_cells, {"a": [0.1, 0.2, 0.3]}, seed=keys, options=run), out)


def test_map_grid_takes_a_key_array_of_the_grids_shape_or_one_key_per_cell_in_order():
    grid = {"a": [0.1, 0.2], "b": [1.0, 2.0, 3.0]}
    flat = keyed.root_key(4).child(np.arange(6))
    square = keyed.Key(flat.a.reshape(2, 3), flat.b.reshape(2, 3))
    by_flat = sweep.map_grid(lambda a, b, keys: _keys_of_cells(a, keys), grid, seed=flat, product=True)
    by_shape = sweep.map_grid(lambda a, b, keys: _keys_of_cells(a, keys), grid, seed=square, product=True)
    assert by_flat.shape[:2] == (2, 3) and np.array_equal(by_flat, by_shape)
    assert by_flat[1, 0, 0] == float(flat.a[3])                     # the last axis varies fastest
    # the cells' own keys (engine.cell_keys of the behaviour over the grid) give the coordinates' numbers
    Q, R = np.meshgrid([0.1, 0.2], [0.25, 0.5, 0.75], indexing="ij")
    own = engine.cell_keys(4, Memoryless(q=Q, r=R))
    assert own.shape == (2, 3)
    default = sweep.map_grid(lambda a, b, keys: _keys_of_cells(a, keys), {"a": [0.1, 0.2], "b": [0.25, 0.5, 0.75]},
                             seed=4, product=True)
    given = sweep.map_grid(lambda a, b, keys: _keys_of_cells(a, keys), {"a": [0.1, 0.2], "b": [0.25, 0.5, 0.75]},
                           seed=own, product=True)
    assert np.array_equal(default, given)


@pytest.mark.parametrize("shape", [(5,), (3, 2), (2, 2), (1, 6)])
def test_map_grid_refuses_a_key_array_that_is_not_one_key_per_cell(shape):
    keys = keyed.root_key(4).child(np.arange(int(np.prod(shape))).reshape(shape))
    with pytest.raises(ValueError, match=r"^seed must be one root key or one key per cell \(6 cells\)"):
        sweep.map_grid(lambda a, b, keys: a, {"a": [0.1, 0.2], "b": [1.0, 2.0, 3.0]}, seed=keys, product=True)
