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
