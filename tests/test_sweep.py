"""perfpriv.sweep: per-cell seeding and bit-identical results across backends."""

import joblib
import numpy as np
import pytest

from perfpriv.keyed import coordinate_key
from perfpriv.sweep import cell_seed, map_cells, sweep


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
    # one cluster for both layers: sweep (cells one by one) and map_cells (batched cells, which every
    # heatmap search of perfpriv.optimize goes through)
    distributed = pytest.importorskip("distributed")
    one = sweep(random_cell, GRID, seed=5, n_jobs=1).values
    batched = map_cells(first_uniforms, CELLS, seed=7, chunk=2)
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
            batched_on_dask = map_cells(first_uniforms, CELLS, seed=7, chunk=2)
    assert np.array_equal(one, on_dask)
    assert np.array_equal(batched, batched_on_dask)


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


# ---------------------------------------------------------------- map_cells: batched cells
def first_uniforms(q, r, keys, size=3):
    """A batched cell function: each cell's first uniforms of its own key, plus its coordinates."""
    return keys.uniform(size) + (q - r)[:, None]


CELLS = {"q": np.array([0.1, 0.5, 0.9, 0.3, 0.7]), "r": np.array([0.2, 0.2, 0.8, 0.4, 0.6])}


def test_map_cells_gives_each_cell_the_key_of_the_root_and_its_coordinates():
    from perfpriv import keyed

    out = map_cells(first_uniforms, CELLS, seed=7, chunk=2)
    assert out.shape == (5, 3)
    for i, (q, r) in enumerate(zip(CELLS["q"], CELLS["r"])):
        alone = keyed.cell_key(7, q, r).uniform(3) + (q - r)
        assert np.array_equal(out[i], alone)


def test_map_cells_does_not_depend_on_chunk_n_jobs_or_the_order_of_the_cells():
    ref = map_cells(first_uniforms, CELLS, seed=7, chunk=1)
    for chunk in (2, 5, 64):
        assert np.array_equal(map_cells(first_uniforms, CELLS, seed=7, chunk=chunk), ref)
    assert np.array_equal(map_cells(first_uniforms, CELLS, seed=7, chunk=2, n_jobs=2), ref)
    order = np.array([4, 2, 0, 3, 1])
    shuffled = map_cells(first_uniforms, {k: v[order] for k, v in CELLS.items()}, seed=7, chunk=3)
    assert np.array_equal(shuffled, ref[order])
    # a generator or seed sequence as the root: the same as the integer it came from, for a SeedSequence
    assert np.array_equal(map_cells(first_uniforms, CELLS, seed=np.random.SeedSequence(7)), ref)


@pytest.mark.parametrize("cells, message", [({}, "cells must be a non-empty"),
                                            ({"q": [0.1, 0.2], "r": [0.1]}, "one non-zero length"),
                                            ({"q": []}, "one non-zero length")])
def test_map_cells_bad_cells_raise_value_error(cells, message):
    with pytest.raises(ValueError, match=message):
        map_cells(first_uniforms, cells, seed=0)


def test_map_cells_bad_chunk_and_function():
    with pytest.raises(ValueError, match="chunk"):
        map_cells(first_uniforms, CELLS, seed=0, chunk=0)
    with pytest.raises(TypeError, match="func must be callable"):
        map_cells(None, CELLS, seed=0)


# -------------------------------------------------------- arguments and cells that no grid can take


def test_sweep_refuses_axes_the_function_does_not_take_before_any_cell_runs():
    calls = []

    def cell(x, seed):
        calls.append(x)
        return x

    with pytest.raises(TypeError, match="'zz'"):
        sweep(cell, {"zz": [1.0, 2.0]})
    with pytest.raises(TypeError, match="'y'"):
        sweep(cell, {"x": [1.0]}, y=2)
    assert calls == []
    assert sweep(cell, {"x": [1.0, 2.0]}).values.tolist() == [1.0, 2.0]
    # a function taking **kwargs takes anything
    assert sweep(lambda seed, **kw: kw["zz"], {"zz": [3.0]}).values.tolist() == [3.0]


@pytest.mark.parametrize("cells", [{"q": None}, {"q": ["a"]}, {1: [0.5]}, {"q": [[0.1, 0.2], [0.3]]},
                                   {"q": [True, False]}])
def test_map_cells_refuses_cells_that_are_not_numeric_coordinates(cells):
    def first(q, keys):
        return q

    with pytest.raises(TypeError, match=r"^cells"):
        map_cells(first, cells)
