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
    mech = bernoulli.RandomizedResponse([0.3, 1.0, np.inf], mu=(0.5, 1.0))
    paper = optimize.optimal_epsilon(mech, behaviour.Memoryless(q=0.4, r=0.5), T=10, n0=60, trials=4, seed=9)
    mine = level_search(mech, behaviour.Memoryless(q=0.4, r=0.5),
                        T=10, n0=60, trials=4, score="final", seed=keyed.cell_key(9, 0.4, 0.5))
    assert np.array_equal(mine.values, paper.values) and mine.level == paper.epsilon
    assert np.array_equal(mine.se, paper.se)


def test_a_cell_of_the_papers_gamma_search_is_level_search_with_the_cells_key():
    mech = gaussian.GaussianMean([0.3, 3.0], tau=0.05, d=2, R=7.0)
    policy = engine.Policy(cap=300, stop=1, collapse="floor")             # the γ search's defaults, made explicit
    users = behaviour.Memoryless(q=[[0.2], [0.6]], r=[0.3, 0.7])
    paper = optimize.optimal_gamma_empirical(mech, users, T=6, n0=30, trials=3, seed=4,
                                             policy=engine.Policy(cap=300))
    for i, j in [(0, 1), (1, 0)]:
        q, r = [0.2, 0.6][i], [0.3, 0.7][j]
        mine = level_search(mech, behaviour.Memoryless(q=q, r=r), T=6, n0=30, trials=3, policy=policy,
                            seed=keyed.cell_key(4, q, r))
        assert np.array_equal(mine.values, paper.values[i, j]) and np.array_equal(mine.se, paper.se[i, j])
        assert mine.level == paper.gamma[i, j]


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


# ---------------------------------------------------------------- engine.level_grid: what a search runs on


@pytest.mark.parametrize("mechanism,want", [
    (bernoulli.RandomizedResponse(0.5), [0.5]),
    (bernoulli.RandomizedResponse([0.5, 2.0]), [0.5, 2.0]),
    (bernoulli.RandomizedResponse([0.1, np.inf]), [0.1, np.inf]),          # no privacy is a budget
    (bernoulli.RandomizedResponse(np.inf), [np.inf]),
    (gaussian.GaussianMean(2.0, tau=0.05, d=3, R=10.0), [2.0]),
    (gaussian.GaussianMean([3.0, 0.5, 1e-3], tau=0.05, d=3, R=10.0), [3.0, 0.5, 1e-3]),   # in the order given
])
def test_level_grid_is_the_mechanisms_levels_as_a_1d_float_grid(mechanism, want):
    grid = engine.level_grid(mechanism)
    assert isinstance(grid, np.ndarray) and grid.ndim == 1 and grid.dtype == float
    assert grid.tolist() == want
    assert engine.level_grid(mechanism, kind=type(mechanism)).tolist() == want


def test_level_grid_and_a_searchs_grid_are_copies_the_mechanism_keeps_its_levels():
    mech = bernoulli.RandomizedResponse([0.5, 2.0], mu=(0.5, 1.0))
    res = optimize.optimal_epsilon(mech, behaviour.Memoryless(q=0.3, r=0.6), T=3, n0=20, trials=2, seed=0)
    res.epsilons[0] = 99.0
    grid = engine.level_grid(mech)
    grid[1] = 123.0
    assert engine.level_grid(mech).tolist() == [0.5, 2.0] and mech.levels.values.tolist() == [0.5, 2.0]


def test_level_grid_refuses_another_mechanism_class_or_no_mechanism_by_name():
    rr = bernoulli.RandomizedResponse([0.5, 1.0])
    with pytest.raises(TypeError,
                       match=r"^mechanism must be a perfpriv\.gaussian\.GaussianMean; got RandomizedResponse"):
        engine.level_grid(rr, kind=gaussian.GaussianMean)
    with pytest.raises(TypeError, match=r"^budgets must be a perfpriv\.gaussian\.GaussianMean"):
        engine.level_grid(rr, kind=gaussian.GaussianMean, name="budgets")
    for bad in (None, [0.5, 1.0], 1.0, "rr", behaviour.Memoryless(q=0.3, r=0.6)):
        with pytest.raises(TypeError, match=r"^mechanism must be a perfpriv mechanism"):
            engine.level_grid(bad)
        with pytest.raises(TypeError, match=r"^mechanism must be a perfpriv\.bernoulli\.RandomizedResponse"):
            engine.level_grid(bad, kind=bernoulli.RandomizedResponse)


def test_level_grid_refuses_no_level_a_schedule_and_levels_per_cell_by_name():
    import copy

    bare = copy.copy(bernoulli.RandomizedResponse([1.0]))
    bare.levels = None                      # no public constructor of RandomizedResponse makes one without levels
    cases = [(gaussian.GaussianMean(tau=0.05, d=3, R=10.0), "a GaussianMean with no level", "gamma"),
             (bare, "a RandomizedResponse with no level", "epsilon"),
             (bernoulli.RandomizedResponse(engine.Schedule([0.5, 1.0, 2.0])), "with a schedule", "epsilon"),
             (gaussian.GaussianMean(engine.Schedule([[0.5, 1.0], [2.0, 3.0]]), tau=0.05, d=3, R=10.0),
              "with a schedule", "gamma"),
             (bernoulli.RandomizedResponse(engine.PerCell(np.array([0.5, 2.0]))), "with levels per cell", "epsilon")]
    for mech, kind, level in cases:
        with pytest.raises(ValueError, match=rf"^mechanism must hold the {level} values to run .*{kind}$"):
            engine.level_grid(mech)
        with pytest.raises(ValueError, match=rf"^grid must hold .*{kind}$"):
            engine.level_grid(mech, name="grid")


# ---------------------------------------------------------------- Behaviour.take: a batch of a map's cells

Q = np.array([[0.1, 0.4, 0.7], [0.2, 0.5, 0.9]])
R = np.array([[0.6], [0.3]])
KAPPA = np.array([[0.0, 0.5, 1.0], [2.0, 0.1, 0.3]])
MAPS = {
    "Memoryless": behaviour.Memoryless(q=Q, r=R),
    "LeakCount": behaviour.LeakCount(k=2, q=Q, r=R, rule="agnostic"),
    "Heterogeneous": behaviour.Heterogeneous(q=np.stack([Q, Q / 2], axis=-1), weights=[0.3, 0.7], r=R),
    "BudgetAware": behaviour.BudgetAware(tolerance=[1.0, 3.0], q=Q, r=R, weights=[0.5, 0.5]),
    "Contagion": behaviour.Contagion(q=0.3, r=R, kappa=KAPPA),
}
TAKE = np.array([4, 0, 5])          # flat (C order) positions: cells (1, 1), (0, 0), (1, 2)


def _keys_of(users):
    """One key per cell of the map: engine.cell_keys (its coordinates), or, for users that report none (whose
    cells would all get the root key), those of Memoryless over the same (q, r) -- distinct keys either way."""
    keys = engine.cell_keys(11, users)
    return keys if keys.shape == users.shape else engine.cell_keys(11, behaviour.Memoryless(q=Q, r=R))


@pytest.mark.parametrize("name", MAPS)
def test_take_gives_the_cells_of_the_whole_bit_for_bit(name):
    users = MAPS[name]
    part = users.take(TAKE)
    assert type(part) is type(users) and part.shape == (3,) and part.rule == users.rule
    keys = _keys_of(users)
    assert keys.shape == (2, 3)
    mech = bernoulli.RandomizedResponse([0.5, 2.0, np.inf], mu=(0.5, 1.0))
    kw = dict(T=6, n0=40, trials=3)
    whole = engine.simulate(mech, users, seed=keys, **kw)
    flat = keyed.Key(keys.a.reshape(-1)[TAKE], keys.b.reshape(-1)[TAKE])
    taken = engine.simulate(mech, part, seed=flat, **kw)
    for field in ("sq_error", "population"):
        got, all_cells = getattr(taken, field), getattr(whole, field)
        want = all_cells.reshape((6,) + all_cells.shape[2:])[TAKE]
        assert np.array_equal(got, want), field
        assert not np.array_equal(got, all_cells.reshape((6,) + all_cells.shape[2:])[[0, 4, 5]]), field
    # the mean field of the part is that of the whole's cells too
    path, part_path = engine.mean_field(mech, users, T=6, n0=40), engine.mean_field(mech, part, T=6, n0=40)
    assert np.array_equal(part_path.sq_error, path.sq_error.reshape((6,) + path.sq_error.shape[2:])[TAKE])


def test_take_indexes_the_per_cell_parameters_and_keeps_the_others():
    hetero = MAPS["Heterogeneous"].take(TAKE)
    assert hetero.q.tolist() == [[0.5, 0.25], [0.1, 0.05], [0.9, 0.45]] and hetero.r.tolist() == [0.3, 0.6, 0.3]
    assert hetero.weights.tolist() == [0.3, 0.7]
    budget = MAPS["BudgetAware"].take(TAKE)
    assert budget.q.tolist() == [0.5, 0.1, 0.9] and budget.tolerance.tolist() == [1.0, 3.0]
    contagion = MAPS["Contagion"].take(TAKE)
    assert contagion.kappa.tolist() == [0.1, 0.0, 0.3] and contagion.q.tolist() == [0.3, 0.3, 0.3]
    assert MAPS["LeakCount"].take([5]).k == 2 and MAPS["LeakCount"].take([5]).q.tolist() == [0.9]
    # a cell may be taken twice, and a one-cell behaviour gives a batch of its cell
    assert MAPS["Memoryless"].take([1, 1]).q.tolist() == [0.4, 0.4]
    one = behaviour.Memoryless(q=0.3, r=0.6).take([0, 0])
    assert one.shape == (2,) and one.q.tolist() == [0.3, 0.3] and one.r.tolist() == [0.6, 0.6]


@pytest.mark.parametrize("name", MAPS)
@pytest.mark.parametrize("index", [[-1], [6], [0, 6], [[0, 1]], [0.0], [True, False], "0", None, 3, np.array([[4]]), []])
def test_take_refuses_bad_indices_by_name(name, index):
    with pytest.raises(ValueError, match=r"^index must be a non-empty 1-D sequence of cell positions in \[0, 6\)"):
        MAPS[name].take(index)
