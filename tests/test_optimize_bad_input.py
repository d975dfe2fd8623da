"""Bad-input tests of the searches and the sweep (perfpriv.optimize, perfpriv.sweep)."""

import numpy as np
import pytest

from perfpriv import optimize, sweep

NAN, INF = float("nan"), float("inf")
PROB = [-0.1, 1.1, NAN, INF, "0.5", None, 1 + 2j]
POSITIVE = [0.0, -1.0, NAN, INF, -INF, "0.5", None, 1 + 2j]
INT_POS = [0, -1, 2.5, NAN, INF, True, "3", 2**64]
QUAD = dict(d=3, R=10.0, method="quadrature")

CASES = {
    "sweep.coordinate_key": (sweep.coordinate_key, dict(value=0.3), {"value": [NAN, [0.1, 0.2], None]}),
    "sweep.cell_seed": (sweep.cell_seed, dict(seed=1), {"seed": [-1, 1.5, "x", True, np.random.RandomState(0)]}),
    "sweep.sweep": (sweep.sweep, dict(func=lambda a, seed: a, grid={"a": [1.0]}, seed=0),
                    {"func": [None, 3], "grid": [{}, {"a": []}, {"a": [[1.0, 2.0]]}, [1.0], {"a": [NAN]}],
                     "seed": [-1, "x"], "n_jobs": [0, -2, 1.5, "2"], "progress": ["yes", None]}),
    # models owned by other helpers: their arguments are checked too
    "optimize.optimal_epsilon": (
        optimize.optimal_epsilon, dict(q=0.3, r=0.6, epsilons=[0.5, 1.0], T=3, n0=10, trials=2, cap=100, seed=0),
        {"q": PROB, "epsilons": [[], [0.0, 1.0], [NAN], [[1.0, 2.0]]], "trials": INT_POS}),
    "optimize.optimal_gamma": (
        optimize.optimal_gamma, dict(q=0.3, r=0.6, tau=0.02, T=3, n0=100, grid=5, **QUAD),
        {"q": PROB, "tau": POSITIVE, "T": INT_POS, "objective": ["best"]}),
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
    assert expected in message, message
    assert len(message) < 400 and "\n" not in message  # one readable line


GAUSS_SEARCHES = [optimize.optimal_schedule, optimize.optimal_two_phase, optimize.optimal_geometric]
EPS_SEARCHES = [optimize.optimal_epsilon_schedule, optimize.optimal_epsilon_two_phase,
                optimize.optimal_epsilon_geometric]
GAUSS_SMALL = dict(q=0.3, r=0.6, tau=0.02, T=3, n0=50, d=3, R=10.0, maxiter=3, polish=2)
EPS_SMALL = dict(q=0.3, r=0.6, T=3, n0=50, maxiter=3)


@pytest.mark.parametrize("func", [optimize.optimal_gamma] + GAUSS_SEARCHES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("name, bad", [("method", "x"), ("samples", -1), ("samples", 1.5), ("seed", "x"),
                                       ("seed", -3)])
def test_p_tau_options_are_named_as_the_caller_spells_them(func, name, bad):
    # was: leak_method / leak_samples / leak_seed (the mechanism's names) for method / samples / seed
    kwargs = dict(GAUSS_SMALL) if func is not optimize.optimal_gamma else dict(GAUSS_SMALL, grid=3)
    if func is optimize.optimal_gamma:
        del kwargs["maxiter"], kwargs["polish"]
    with pytest.raises((ValueError, TypeError)) as info:
        func(**dict(kwargs, **{name: bad}))
    assert str(info.value).startswith(f"{name} must"), str(info.value)
    assert "leak_" not in str(info.value)


@pytest.mark.parametrize("func", GAUSS_SEARCHES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("bracket", [(1e-300, 1e3), (1e-3, 1e300), (1e-100, 1.0)])
def test_a_gamma_bracket_beyond_the_mechanism_names_bracket(func, bracket):
    # was: "gamma must be in [1e-100, 1e+100]; got array of shape (61,)"
    with pytest.raises(ValueError, match=r"^bracket must .*1e-99 <= low < high <= 1e\+99"):
        func(**dict(GAUSS_SMALL, bracket=bracket))


def test_optimal_gamma_mean_field_bracket_is_checked_the_bound_keeps_its_range():
    kwargs = dict(q=0.3, r=0.6, tau=0.02, T=3, n0=50, d=3, R=10.0, grid=3)
    with pytest.raises(ValueError, match="^bracket must"):
        optimize.optimal_gamma(**kwargs, objective="mean_field", bracket=(1e-300, 1e3))
    assert np.isfinite(optimize.optimal_gamma(**kwargs, objective="bound", bracket=(1e-300, 1e3)).gamma)


@pytest.mark.parametrize("func", EPS_SEARCHES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("bracket", [(1e-300, 1.0), (0.01, 1e300), (0.01, 1e3)])
def test_an_epsilon_bracket_beyond_what_the_gradient_holds_names_bracket(func, bracket):
    # was: RuntimeWarnings (overflow in cosh, divide by zero) and a NaN schedule "values must be a number"
    with pytest.raises(ValueError, match=r"^bracket must .*1e-50 <= low < high <= 500"):
        func(**dict(EPS_SMALL, bracket=bracket))


@pytest.mark.parametrize("func", EPS_SEARCHES + GAUSS_SEARCHES, ids=lambda f: f.__name__)
def test_maxiter_beyond_a_million_evaluations_is_refused_by_name(func):
    # was: OverflowError: value too large to convert to int (SciPy's C counter)
    kwargs = dict(EPS_SMALL if func in EPS_SEARCHES else GAUSS_SMALL, maxiter=10**12)
    with pytest.raises(ValueError, match=r"^maxiter must be an integer in \[1, 1000000\]; got 1000000000000"):
        func(**kwargs)
    if func in GAUSS_SEARCHES:
        with pytest.raises(ValueError, match="^polish must"):
            func(**dict(GAUSS_SMALL, polish=10**12))


@pytest.mark.parametrize("func", EPS_SEARCHES, ids=lambda f: f.__name__)
def test_the_ends_of_the_epsilon_range_run_without_warnings(func):
    for bracket in ((1e-50, 500.0), (1e-50, 2e-50), (499.0, 500.0)):
        res = func(**dict(EPS_SMALL, bracket=bracket))
        assert np.all((res.epsilon >= bracket[0]) & (res.epsilon <= bracket[1]))
        assert np.isfinite(res.regret)
