"""perfpriv.sweep: the grid runner -- per-cell keys, bit-identical results across chunks and backends, bad input."""

import joblib
import numpy as np
import pytest

from perfpriv import keyed
from perfpriv.keyed import coordinate_key
from perfpriv.sweep import Execution, check_execution, map_grid


def first_uniforms(q, r, keys, size=3):
    """A batched cell function: each cell's first uniforms of its own key, plus its coordinates."""
    return keys.uniform(size) + (q - r)[:, None]


def numpy_draws(q, r, keys, size=4):
    """A batched cell function that draws with numpy, from each cell's generator."""
    return np.stack([keyed.as_generator(keys[i]).standard_normal(size) + round(float(q[i]), 9) - round(float(r[i]), 9)
                     for i in range(len(q))])


CELLS = {"q": np.array([0.1, 0.5, 0.9, 0.3, 0.7]), "r": np.array([0.2, 0.2, 0.8, 0.4, 0.6])}
GRID = {"q": np.linspace(0.1, 0.9, 3), "r": np.linspace(0.2, 0.8, 4)}


# ------------------------------------------------------------------ per-cell keys
def test_each_cell_gets_the_key_of_the_root_and_its_coordinates():
    out = map_grid(first_uniforms, CELLS, seed=7, options=Execution(chunk=2))
    assert out.shape == (5, 3)
    for i, (q, r) in enumerate(zip(CELLS["q"], CELLS["r"])):
        alone = keyed.cell_key(7, q, r).uniform(3) + (q - r)
        assert np.array_equal(out[i], alone)


def test_a_product_grid_is_the_cells_of_its_cartesian_product_in_order():
    grid = map_grid(numpy_draws, GRID, seed=11, product=True)
    assert grid.shape == (3, 4, 4)
    Q, R = np.meshgrid(GRID["q"], GRID["r"], indexing="ij")
    listed = map_grid(numpy_draws, {"q": Q.ravel(), "r": R.ravel()}, seed=11)
    assert np.array_equal(grid.reshape(12, 4), listed)
    # the numpy draws of a cell come from the generator of its key
    want = keyed.as_generator(keyed.cell_key(11, GRID["q"][1], GRID["r"][2])).standard_normal(4)
    assert np.array_equal(grid[1, 2], want + round(GRID["q"][1], 9) - round(GRID["r"][2], 9))


def test_a_cell_does_not_depend_on_the_grid_or_the_batch_around_it():
    full = map_grid(numpy_draws, GRID, seed=11, product=True)
    single = map_grid(numpy_draws, {"q": [GRID["q"][1]], "r": [GRID["r"][2]]}, seed=11, product=True)
    assert np.array_equal(full[1, 2], single[0, 0])
    # the same point reached by another linspace (last-bit differences) gets the same key
    other = map_grid(numpy_draws, {"q": np.linspace(0.1, 0.9, 5)[2:3], "r": [0.6]}, seed=11, product=True)
    assert np.array_equal(full[1, 2], other[0, 0])
    # nor on the order of the cells
    ref = map_grid(first_uniforms, CELLS, seed=7)
    order = np.array([4, 2, 0, 3, 1])
    shuffled = map_grid(first_uniforms, {k: v[order] for k, v in CELLS.items()}, seed=7, options=Execution(chunk=3))
    assert np.array_equal(shuffled, ref[order])


def test_different_cells_and_different_root_seeds_differ():
    res = map_grid(numpy_draws, GRID, seed=11, product=True)
    assert not np.array_equal(res[0, 0], res[0, 1])
    assert not np.array_equal(res, map_grid(numpy_draws, GRID, seed=12, product=True))


def test_roots_given_as_an_int_a_seed_sequence_or_a_key_agree():
    ref = map_grid(first_uniforms, CELLS, seed=7)
    assert np.array_equal(map_grid(first_uniforms, CELLS, seed=np.random.SeedSequence(7)), ref)
    assert np.array_equal(map_grid(first_uniforms, CELLS, seed=keyed.root_key(7)), ref)


def test_coordinate_keys_separate_infinities_signs_and_values():
    keys = {coordinate_key(v) for v in (np.inf, -np.inf, 0.0, 1e-9, -1e-9, 0.5, -0.5)}
    assert len(keys) == 7


# ------------------------------------------------------------------ bit-identical across chunks and backends
def test_bit_identical_across_chunk_sizes_and_n_jobs():
    ref = map_grid(first_uniforms, CELLS, seed=7, options=Execution(chunk=1))
    for chunk in (2, 5, 64, None):
        assert np.array_equal(map_grid(first_uniforms, CELLS, seed=7, options=Execution(chunk=chunk)), ref)
    assert np.array_equal(map_grid(first_uniforms, CELLS, seed=7, options=Execution(chunk=2, n_jobs=2)), ref)
    grid = map_grid(numpy_draws, GRID, seed=5, product=True, options=Execution(n_jobs=1, chunk=1))
    assert np.array_equal(map_grid(numpy_draws, GRID, seed=5, product=True, options=Execution(n_jobs=2)), grid)


def test_bit_identical_on_a_dask_local_cluster(dashboard_port_taken):
    distributed = pytest.importorskip("distributed")
    one = map_grid(numpy_draws, GRID, seed=5, product=True, options=Execution(n_jobs=1))
    batched = map_grid(first_uniforms, CELLS, seed=7, options=Execution(chunk=2))
    import sys

    import cloudpickle

    # the workers are separate processes that cannot import this test module:
    # ship its functions by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"):
            on_dask = map_grid(numpy_draws, GRID, seed=5, product=True, options=Execution(chunk=2))
            batched_on_dask = map_grid(first_uniforms, CELLS, seed=7, options=Execution(chunk=2))
    assert np.array_equal(one, on_dask)
    assert np.array_equal(batched, batched_on_dask)


def test_fixed_arguments_are_passed_to_every_call():
    assert map_grid(numpy_draws, GRID, seed=1, product=True, size=2).shape == (3, 4, 2)


def test_on_cells_hears_of_each_cell_by_default_and_of_each_chunk_when_chunked():
    heard = []
    map_grid(first_uniforms, CELLS, seed=7, options=Execution(on_cells=heard.append))
    assert heard == [1] * 5
    heard.clear()
    map_grid(first_uniforms, CELLS, seed=7, options=Execution(chunk=2, on_cells=heard.append))
    assert heard == [2, 2, 1]


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("cells, message", [({}, "cells must be a non-empty"),
                                            ({"q": [0.1, 0.2], "r": [0.1]}, "one length"),
                                            ({"q": []}, r"cells\['q'\] must be a non-empty"),
                                            ({"q": [[0.1, 0.2]]}, r"cells\['q'\] must be a non-empty 1-D"),
                                            ({"q": [0.1, np.nan]}, r"cells\['q'\] must not hold NaN"),
                                            ({"keys": [0.1]}, "keys")])
def test_bad_cells_raise_value_error_naming_cells(cells, message):
    with pytest.raises(ValueError, match=message):
        map_grid(first_uniforms, cells, seed=0)


@pytest.mark.parametrize("cells", [{"q": None}, {"q": ["a"]}, {1: [0.5]}, {"q": [[0.1, 0.2], [0.3]]},
                                   {"q": [True, False]}])
def test_cells_that_are_not_numeric_coordinates_are_refused(cells):
    def first(q, keys):
        return q

    with pytest.raises(TypeError, match=r"^cells"):
        map_grid(first, cells)


@pytest.mark.parametrize("kwargs, word", [(dict(chunk=0), "chunk"), (dict(chunk=1.5), "chunk"),
                                          (dict(n_jobs=0), "n_jobs"), (dict(n_jobs="2"), "n_jobs"),
                                          (dict(progress=0), "progress"), (dict(progress="yes"), "progress"),
                                          (dict(description=3), "description"), (dict(on_cells=3), "on_cells")])
def test_bad_execution_options_are_refused_naming_the_option(kwargs, word):
    with pytest.raises((ValueError, TypeError), match=word):
        Execution(**kwargs)


def test_bad_function_seed_product_and_options():
    with pytest.raises(TypeError, match="func must be callable"):
        map_grid(None, CELLS, seed=0)
    with pytest.raises(ValueError, match="seed"):
        map_grid(first_uniforms, CELLS, seed=-1)
    with pytest.raises(TypeError, match="product"):
        map_grid(first_uniforms, CELLS, seed=0, product=1)
    with pytest.raises(TypeError, match="options"):
        map_grid(first_uniforms, CELLS, seed=0, options={"n_jobs": 2})


def test_coordinates_and_arguments_the_function_does_not_take_are_refused_before_any_cell_runs():
    calls = []

    def cell(x, keys):
        calls.append(x)
        return x

    with pytest.raises(TypeError, match="'zz'"):
        map_grid(cell, {"zz": [1.0, 2.0]})
    with pytest.raises(TypeError, match="'y'"):
        map_grid(cell, {"x": [1.0]}, y=2)
    assert calls == []
    assert map_grid(cell, {"x": [1.0, 2.0]}).tolist() == [1.0, 2.0]
    # a function taking **kwargs takes anything
    assert map_grid(lambda keys, **kw: kw["zz"], {"zz": [3.0]}).tolist() == [3.0]


def test_check_execution_is_the_one_check_of_a_studys_options():
    assert check_execution(None, chunk=4, progress=False) == Execution(chunk=4, progress=False)
    given = Execution(n_jobs=1, chunk=2)
    assert check_execution(given, chunk=4, progress=False) is given          # a given one is used as it is
    # its label is the only field filled in, and only when it has none
    assert check_execution(given, chunk=4, description="gamma*") == Execution(n_jobs=1, chunk=2, description="gamma*")
    labelled = Execution(description="mine")
    assert check_execution(labelled, description="gamma*") is labelled
    for bad in ({"n_jobs": 2}, 2, "serial"):
        with pytest.raises(TypeError, match=r"^options must be a perfpriv.sweep.Execution \(or None\)"):
            check_execution(bad)
