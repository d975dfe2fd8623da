"""perfpriv.sweep: per-cell seeding and bit-identical results across backends."""

import joblib
import numpy as np
import pytest

from perfpriv.sweep import cell_seed, coordinate_key, sweep


def random_cell(q, r, seed, size=4):
    """A cell whose value depends on its seed only through a random draw."""
    return np.random.default_rng(seed).standard_normal(size) + round(q, 9) - round(r, 9)


GRID = {"q": np.linspace(0.1, 0.9, 3), "r": np.linspace(0.2, 0.8, 4)}


def test_sweep_shape_and_axes():
    res = sweep(random_cell, GRID, seed=11)
    assert res.values.shape == (3, 4, 4)
    assert res.shape == (3, 4)
    assert list(res.axes) == ["q", "r"]


def test_cell_value_does_not_depend_on_the_grid_around_it():
    full = sweep(random_cell, GRID, seed=11).values
    single = sweep(random_cell, {"q": [GRID["q"][1]], "r": [GRID["r"][2]]}, seed=11).values
    assert np.array_equal(full[1, 2], single[0, 0])
    # the same point reached by another linspace (last-bit differences) gets the same seed
    other = sweep(random_cell, {"q": np.linspace(0.1, 0.9, 5)[2:3], "r": [0.6]}, seed=11).values
    assert np.array_equal(full[1, 2], other[0, 0])


def test_different_cells_and_different_root_seeds_differ():
    res = sweep(random_cell, GRID, seed=11).values
    assert not np.array_equal(res[0, 0], res[0, 1])
    assert not np.array_equal(res, sweep(random_cell, GRID, seed=12).values)


def test_bit_identical_for_one_and_two_jobs():
    one = sweep(random_cell, GRID, seed=5, n_jobs=1).values
    two = sweep(random_cell, GRID, seed=5, n_jobs=2).values
    assert np.array_equal(one, two)


def test_bit_identical_on_a_dask_local_cluster(dashboard_port_taken):
    distributed = pytest.importorskip("distributed")
    one = sweep(random_cell, GRID, seed=5, n_jobs=1).values
    import sys

    import cloudpickle

    # the workers are separate processes that cannot import this test module:
    # ship its functions by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"):
            on_dask = sweep(random_cell, GRID, seed=5).values
    assert np.array_equal(one, on_dask)


def test_fixed_arguments_are_passed_to_every_cell():
    res = sweep(random_cell, GRID, seed=1, size=2)
    assert res.values.shape == (3, 4, 2)


def test_cell_seed_accepts_a_seed_sequence_root():
    root = np.random.SeedSequence(99)
    a = np.random.default_rng(cell_seed(root, 0.5)).random()
    b = np.random.default_rng(cell_seed(99, 0.5)).random()
    assert a == b


def test_coordinate_keys_separate_infinities_signs_and_values():
    keys = {coordinate_key(v) for v in (np.inf, -np.inf, 0.0, 1e-9, -1e-9, 0.5, -0.5)}
    assert len(keys) == 7


@pytest.mark.parametrize("grid, message", [({}, "grid must be a non-empty"),
                                           ({"q": []}, r"grid\['q'\] must be a non-empty"),
                                           ({"q": [[0.1, 0.2]]}, r"grid\['q'\] must be a non-empty 1-D")])
def test_bad_grids_raise_value_error(grid, message):
    with pytest.raises(ValueError, match=message):
        sweep(random_cell, grid, seed=0)


def test_bad_n_jobs_and_nan_coordinates():
    with pytest.raises(ValueError, match="n_jobs"):
        sweep(random_cell, GRID, seed=0, n_jobs=0)
    with pytest.raises(ValueError, match="NaN"):
        cell_seed(0, np.nan)


def test_figure3_simulations_do_not_depend_on_the_number_of_workers():
    # Fig. 3's (tau, gamma) and (gamma, tau) cells run through sweep: each cell is seeded by its coordinates
    from perfpriv import plots

    kw = dict(taus=(0.02, 0.05), gammas=[0.5, 2.0], n0=60, T=3, trials=3, ratio="rounds", seed=2)
    one = plots.growth_curves(0.3, 0.6, n_jobs=1, **kw)
    two = plots.growth_curves(0.3, 0.6, n_jobs=2, **kw)
    assert np.array_equal(one.empirical, two.empirical) and np.array_equal(one.se, two.se)
    a = plots.figure3a_simulation(30, [0.5, 2.0], [0.02, 0.2], rounds=5, seed=3, n_jobs=1)
    b = plots.figure3a_simulation(30, [0.5, 2.0], [0.02, 0.2], rounds=5, seed=3, n_jobs=2)
    assert np.array_equal(a["p"], b["p"]) and np.array_equal(a["se"], b["se"])
    # and a cell's value is that of the same simulation run on its own
    run = plots.growth_curves(0.3, 0.6, n_jobs=1, **dict(kw, taus=(0.05,), gammas=[2.0]))
    assert run.empirical[0, 0] == one.empirical[1, 1]
