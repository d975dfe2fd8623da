"""Tests of perfpriv.epsilon_search (through perfpriv.optimize, where it is re-exported)."""

from __future__ import annotations

import numpy as np
import pytest

from perfpriv import bernoulli as B
from perfpriv import optimize as O

Z = 4.5
EPS = np.array([0.05, 0.15, 0.4, 1.0, 2.5, 6.0, np.inf])


def test_reexported_by_optimize():
    for name in ("optimal_epsilon", "mean_field_optimal_epsilon", "EpsilonOptimum"):
        assert name in O.__all__ and hasattr(O, name)


def test_scalar_and_grid_shapes():
    res = O.optimal_epsilon(0.3, 0.6, EPS, T=30, n0=50, trials=4, seed=0)
    assert isinstance(res.epsilon, float)
    assert res.errors.shape == res.stderr.shape == (EPS.size,)
    assert np.array_equal(res.epsilons, EPS)
    assert res.epsilon == EPS[res.index]
    q, r = np.meshgrid([0.1, 0.5, 0.9], [0.2, 0.8], indexing="ij")
    grid = O.optimal_epsilon(q, r, EPS, T=30, n0=50, trials=4, seed=0)
    assert grid.epsilon.shape == (3, 2) and grid.errors.shape == (3, 2, EPS.size)
    assert np.all(grid.epsilon == EPS[grid.index])
    mf = O.mean_field_optimal_epsilon(q, r, EPS, T=30, n0=50)
    assert mf.epsilon.shape == (3, 2) and np.all(mf.stderr == 0)


def test_optimum_is_the_argmin_of_the_reported_errors():
    res = O.optimal_epsilon([0.2, 0.7], [0.8, 0.3], EPS, T=40, n0=80, trials=5, seed=1)
    for k in range(2):
        assert res.epsilon[k] == EPS[np.argmin(res.errors[k])]


def test_same_seed_same_result_other_seed_differs():
    kw = dict(T=40, n0=80, trials=5)
    a = O.optimal_epsilon(0.3, 0.6, EPS, seed=5, **kw)
    b = O.optimal_epsilon(0.3, 0.6, EPS, seed=5, **kw)
    c = O.optimal_epsilon(0.3, 0.6, EPS, seed=6, **kw)
    assert np.array_equal(a.errors, b.errors) and a.epsilon == b.epsilon
    assert not np.array_equal(a.errors, c.errors)


def test_cell_result_does_not_depend_on_the_rest_of_the_grid():
    kw = dict(T=40, n0=80, trials=5, seed=9)
    q = np.array([[0.1, 0.4], [0.7, 0.25]])
    r = np.array([[0.9, 0.5], [0.2, 0.6]])
    grid = O.optimal_epsilon(q, r, EPS, **kw)
    for cell in np.ndindex(q.shape):
        alone = O.optimal_epsilon(q[cell], r[cell], EPS, **kw)
        assert np.array_equal(grid.errors[cell], alone.errors)
    flipped = O.optimal_epsilon(q[::-1, ::-1], r[::-1, ::-1], EPS, **kw)
    assert np.array_equal(flipped.errors[::-1, ::-1], grid.errors)


def test_errors_equal_in_distribution_to_simulate_final_round_error():
    # optimal_epsilon uses its own (block) streams and skips the bits before round T;
    # its mean final error must agree with simulate's (difference-of-means z-test)
    eps, q, r, T, n0, trials = [0.4, 2.0], 0.3, 0.6, 30, 100, 800
    res = O.optimal_epsilon(q, r, eps, T=T, n0=n0, trials=trials, seed=3)
    run = B.simulate(eps, q, r, T=T, n0=n0, trials=trials, mu=(0.5, 1.0), seed=4)
    final = run.sq_error[..., -1]
    se = np.sqrt(res.stderr**2 + final.var(axis=-1, ddof=1) / trials)
    assert np.all(zscore(res.errors, final.mean(axis=-1), se) < Z)


def zscore(a, b, se):
    return np.abs(np.asarray(a) - np.asarray(b)) / np.asarray(se)


def test_finite_epsilon_wins_when_r_much_larger_than_q():
    # leak model, r >> q: a finite epsilon grows the population to the cap while
    # eps = inf (everybody leaks, nobody recruits) shrinks it: the paper's §3 claim
    res = O.optimal_epsilon(0.1, 0.9, EPS, trials=100, seed=0)
    assert np.isfinite(res.epsilon)
    i = res.index
    gap = res.errors[-1] - res.errors[i]
    assert gap > Z * np.hypot(res.stderr[-1], res.stderr[i])
    # the mean-field prediction picks the same grid point here
    assert O.mean_field_optimal_epsilon(0.1, 0.9, EPS).epsilon == res.epsilon


def test_optimal_epsilon_falls_as_the_leaving_rate_rises():
    # the paper's claim (Fig. 2): where eps* is finite it decreases with q
    eps = np.geomspace(0.02, 20, 25)
    qs = np.array([0.1, 0.3, 0.5, 0.7])
    mf = O.mean_field_optimal_epsilon(qs, 0.9, eps)
    assert np.all(np.diff(mf.epsilon) < 0)
    sim = O.optimal_epsilon(qs, np.full(4, 0.9), eps, trials=10, seed=2)
    assert sim.epsilon[0] > sim.epsilon[-1]


def test_agnostic_model_prefers_no_privacy_when_r_exceeds_q():
    # appendix B: recruits do not depend on leaks, the population fills the cap anyway
    eps = np.array([0.1, 0.5, 1.0, 2.0, np.inf])
    res = O.optimal_epsilon(0.1, 0.5, eps, model="agnostic", trials=200, seed=0)
    assert res.epsilon == np.inf
    # eps = inf beats every eps <= 1 by more than Z standard errors
    gap = res.errors[:3] - res.errors[-1]
    assert np.all(gap > Z * np.hypot(res.stderr[:3], res.stderr[-1]))
    assert O.mean_field_optimal_epsilon(0.1, 0.5, eps, model="agnostic").epsilon == np.inf


def test_clip_estimate_bounds_the_error_as_in_the_authors_code():
    eps = np.array([0.01, 0.1, 1.0])
    kw = dict(T=20, n0=50, trials=20, seed=4)
    raw = O.optimal_epsilon(0.6, 0.3, eps, **kw)
    clipped = O.optimal_epsilon(0.6, 0.3, eps, clip_estimate=True, **kw)
    assert raw.errors[0] > 1  # eq. 1 at eps = 0.01 from a few users: huge variance
    assert np.all(clipped.errors <= 1) and np.all(clipped.errors <= raw.errors)


def test_mean_field_optimum_is_argmin_of_mean_field_error():
    q, r = np.array([0.2, 0.5]), np.array([0.7, 0.9])
    res = O.mean_field_optimal_epsilon(q, r, EPS, T=50, n0=100, model="leak", mu=(0.0, 1.0))
    errs = B.mean_field_error(EPS, q[:, None], r[:, None], T=50, n0=100, mu=(0.0, 1.0))[..., -1]
    np.testing.assert_allclose(res.errors, errs)
    assert np.array_equal(res.epsilon, EPS[np.argmin(errs, axis=-1)])


def test_epsilon_inf_alone_works():
    res = O.optimal_epsilon(0.2, 0.2, [np.inf], T=10, n0=20, trials=3, seed=0)
    assert res.epsilon == np.inf and np.all(np.isfinite(res.errors))
    one = O.optimal_epsilon(0.2, 0.2, [np.inf], T=10, n0=20, trials=1, seed=0)
    assert np.isnan(one.stderr).all()


@pytest.mark.parametrize("kwargs,name", [
    (dict(epsilons=[-1.0, 1.0]), "epsilons"),
    (dict(epsilons=[np.nan]), "epsilons"),
    (dict(epsilons=[0.0, 1.0]), "epsilons"),
    (dict(epsilons=[]), "epsilons"),
    (dict(epsilons=[[1.0, 2.0]]), "epsilons"),
    (dict(q=1.5), "q"),
    (dict(r=-0.2), "r"),
    (dict(T=0), "T"),
    (dict(n0=0), "n0"),
    (dict(trials=0), "trials"),
    (dict(cap=5), "cap"),
    (dict(model="other"), "model"),
])
def test_bad_input_raises_value_error_naming_the_parameter(kwargs, name):
    args = dict(q=0.3, r=0.6, epsilons=[0.5, 1.0], T=5, n0=10, trials=2, cap=100)
    args.update(kwargs)
    q, r, eps = args.pop("q"), args.pop("r"), args.pop("epsilons")
    with pytest.raises(ValueError, match=name):
        O.optimal_epsilon(q, r, eps, seed=0, **args)
    if name == "trials":  # the mean-field search has no trials
        return
    args.pop("trials")
    with pytest.raises(ValueError, match=name):
        O.mean_field_optimal_epsilon(q, r, eps, **args)


def test_q_and_r_of_different_shapes_that_do_not_broadcast_are_rejected():
    with pytest.raises(ValueError, match="q"):
        O.optimal_epsilon([0.1, 0.2], [0.1, 0.2, 0.3], EPS, T=5, n0=10, seed=0)


# ---------------------------------------------------------------- sweep layer
TINY = dict(T=15, n0=40, trials=3, seed=21)
Q_TINY, R_TINY = np.meshgrid([0.2, 0.6], [0.3, 0.8, 0.5], indexing="ij")


def test_cells_are_seeded_by_sweep_cell_seed_from_their_coordinates():
    # the documented contract: a cell's numbers are those of the generator cell_seed(seed, q, r)
    from perfpriv import sweep
    from perfpriv.epsilon_search import _epsilon_cell
    from perfpriv.bernoulli import _check_mu_law, beta_from_epsilon

    res = O.optimal_epsilon(0.6, 0.8, EPS, **TINY)
    direct = _epsilon_cell(0.6, 0.8, seed=sweep.cell_seed(21, 0.6, 0.8), beta=np.asarray(beta_from_epsilon(EPS)),
                           T=15, n0=40, trials=3, model="leak", cap=20000, mu_law=_check_mu_law((0.5, 1.0)),
                           clip_estimate=False)
    assert np.array_equal(res.errors, direct[0]) and np.array_equal(res.stderr, direct[1])


def test_bit_identical_for_one_and_two_jobs():
    one = O.optimal_epsilon(Q_TINY, R_TINY, EPS, n_jobs=1, **TINY)
    two = O.optimal_epsilon(Q_TINY, R_TINY, EPS, n_jobs=2, **TINY)
    assert np.array_equal(one.errors, two.errors) and np.array_equal(one.stderr, two.stderr)
    assert np.array_equal(one.epsilon, two.epsilon)
    # paired (non-meshgrid) cells take the skipping path and give the same cell values
    paired = O.optimal_epsilon(Q_TINY[:, 0], R_TINY[:, 0], EPS, n_jobs=2, **TINY)
    assert np.array_equal(paired.errors, one.errors[:, 0])


def test_bit_identical_on_a_dask_local_cluster(dashboard_port_taken):
    distributed = pytest.importorskip("distributed")
    import joblib

    one = O.optimal_epsilon(Q_TINY, R_TINY, EPS, n_jobs=1, **TINY)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as cluster, distributed.Client(cluster):
        with joblib.parallel_config(backend="dask"):
            on_dask = O.optimal_epsilon(Q_TINY, R_TINY, EPS, **TINY)
    assert np.array_equal(one.errors, on_dask.errors) and np.array_equal(one.stderr, on_dask.stderr)
