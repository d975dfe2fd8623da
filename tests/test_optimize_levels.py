"""optimize.level_search: the best of a mechanism's own levels, for any mechanism and any behaviour.

Truth: the definition (the argmin over the levels of the mean over trials of
engine.simulate's errors, or of engine.mean_field's), the paper's own
searches (mean_field_optimal_epsilon, optimal_epsilon, optimal_gamma_empirical)
on the same grid, and a Monte Carlo check of a simulated optimum against
the mean field.
"""

import numpy as np
import pytest

from perfpriv import behaviour, bernoulli, engine, gaussian, keyed, optimize
from perfpriv.optimize import level_search

GRID = [0.1, 0.5, 2.0, np.inf]
USERS = behaviour.Memoryless(q=[0.3, 0.6], r=[0.6, 0.3])


@pytest.mark.parametrize("score", ["cumulative", "final"])
def test_simulated_values_are_the_mean_and_standard_error_over_trials_of_engine_simulate(score):
    mech = bernoulli.RandomizedResponse(GRID)
    res = level_search(mech, USERS, T=12, n0=80, trials=7, score=score, seed=5)
    run = engine.simulate(mech, USERS, T=12, n0=80, trials=7, seed=5)
    per_run = run.cumulative_error if score == "cumulative" else run.sq_error[..., -1]
    assert np.array_equal(res.values, per_run.mean(axis=-1))
    assert np.allclose(res.se, per_run.std(axis=-1, ddof=1) / np.sqrt(7), rtol=1e-12, atol=0)
    assert np.array_equal(res.index, np.argmin(per_run.mean(axis=-1), axis=-1))
    assert np.array_equal(res.level, np.asarray(GRID)[res.index])
    assert res.method == "simulation" and res.outcome.trials == 7


@pytest.mark.parametrize("score", ["cumulative", "final"])
def test_mean_field_values_are_those_of_engine_mean_field(score):
    mech = gaussian.GaussianMean([0.5, 2.0, 8.0], tau=0.05, d=4, R=10.0)
    users = behaviour.LeakCount(k=2, q=0.4, r=0.5)                 # not the paper's users
    res = level_search(mech, users, T=15, n0=200, method="mean_field", score=score,
                       policy=engine.Policy(cap=5000))
    path = engine.mean_field(mech, users, T=15, n0=200, cap=5000, floor=1)
    want = path.cumulative_error if score == "cumulative" else path.sq_error[..., -1]
    assert np.array_equal(res.values, np.asarray(want, float))
    assert np.all(res.se == 0) and res.level == [0.5, 2.0, 8.0][int(np.argmin(want))]
    assert isinstance(res.level, float) and isinstance(res.index, int)


def test_the_mean_field_final_score_reproduces_the_papers_epsilon_star_search():
    q, r = np.array([0.2, 0.4, 0.6]), np.array([0.7, 0.5, 0.2])
    eps = np.geomspace(0.05, 5.0, 15)
    paper = optimize.mean_field_optimal_epsilon(bernoulli.RandomizedResponse(eps, mu=(0.5, 1.0)),
                                                behaviour.Memoryless(q=q, r=r), T=60, n0=300)
    mine = level_search(bernoulli.RandomizedResponse(eps, mu=(0.5, 1.0)), behaviour.Memoryless(q=q, r=r), T=60,
                        n0=300, method="mean_field", score="final", policy=engine.Policy(cap=20000))
    np.testing.assert_allclose(mine.values, paper.values, rtol=1e-12, atol=0)
    assert np.array_equal(mine.level, paper.epsilon)


def test_a_cell_of_the_papers_simulated_search_is_level_search_with_the_cells_key():
    eps = [0.3, 1.0, np.inf]
    paper = optimize.optimal_epsilon(eps, q=0.4, r=0.5, T=10, n0=60, trials=4, seed=9)
    mine = level_search(bernoulli.RandomizedResponse(eps, mu=(0.5, 1.0)), behaviour.Memoryless(q=0.4, r=0.5),
                        T=10, n0=60, trials=4, score="final", seed=keyed.cell_key(9, 0.4, 0.5))
    assert np.array_equal(mine.values, paper.values) and mine.level == paper.epsilon


def test_a_simulated_optimum_agrees_with_the_mean_field_within_its_standard_error():
    # large populations (n0 = 2000, no cap reached in 8 rounds): the Jensen gap is far below the se
    mech = bernoulli.RandomizedResponse([0.2, 1.0, 4.0])
    users = behaviour.Memoryless(q=0.3, r=0.4)
    sim = level_search(mech, users, T=8, n0=2000, trials=400, seed=3)
    mf = level_search(mech, users, T=8, n0=2000, method="mean_field")
    z = (sim.values - mf.values) / sim.se
    assert np.all(np.abs(z) < 4.5), z
    assert sim.index == mf.index


def test_schedules_are_searched_row_by_row_and_ties_go_to_the_first_level():
    rows = np.array([[0.5, 0.5, 0.5], [2.0, 1.0, 0.5], [0.5, 0.5, 0.5]])
    res = level_search(bernoulli.RandomizedResponse(engine.Schedule(rows)), behaviour.Memoryless(q=0.3, r=0.6),
                       T=3, n0=100, method="mean_field")
    assert res.levels.shape == (3, 3) and res.values[0] == res.values[2]
    best = int(np.argmin(res.values))
    assert res.index == best and np.array_equal(res.level, rows[best]) and best != 2


@pytest.mark.parametrize("kwargs,name", [
    (dict(method="exact"), "method"),
    (dict(score="mean"), "score"),
    (dict(trials=0), "trials"),
    (dict(T=0), "T"),
    (dict(n0=0), "n0"),
    (dict(conventions="other"), "conventions"),
    (dict(policy=engine.Policy(cap=10)), "cap"),
])
@pytest.mark.parametrize("method", ["simulation", "mean_field"])
def test_bad_input_raises_value_error_naming_the_parameter(kwargs, name, method):
    args = dict(T=3, n0=50, trials=2, method=method, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        level_search(bernoulli.RandomizedResponse([0.5, 1.0]), USERS, **args)


def test_levels_given_per_cell_are_not_candidates():
    mech = bernoulli.RandomizedResponse(engine.PerCell([0.5, 2.0]))
    with pytest.raises(ValueError, match="per cell"):
        level_search(mech, USERS, T=3, n0=50, method="mean_field")


def test_a_mechanism_and_a_behaviour_are_required():
    with pytest.raises(TypeError, match="mechanism"):
        level_search([0.5, 1.0], USERS, T=3, n0=50)
    with pytest.raises(TypeError, match="behaviour"):
        level_search(bernoulli.RandomizedResponse(1.0), lambda q, r: USERS, T=3, n0=50, method="mean_field")
