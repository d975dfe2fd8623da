"""The fuzzer of ``test_fuzz.py`` over the public methods of the public classes (issue 32, item G).

The other fuzz tables call public functions and constructors; this one calls
the methods of the objects they return: the mechanisms' engine-facing methods
(:class:`perfpriv.bernoulli.RandomizedResponse`,
:class:`perfpriv.gaussian.GaussianMean`, the tabulated
:class:`perfpriv.regression.RidgeRelease` and
:class:`perfpriv.gradient.PrivateGD`,
:class:`perfpriv.performative.participation.PrivateFederatedRound`), every
behaviour of :mod:`perfpriv.behaviour`, the performative problems and the
result objects that have methods. Each method has one typical call in the
table below (a test checks that the table, with the exemptions and their
reasons, holds every public method of every public class), and each argument
in turn is replaced by a value of ``test_fuzz``'s pools under its contract
(:func:`test_fuzz._call_or_clear_error`): a warning-free, NaN-free result,
or a one-line ``ValueError``/``TypeError`` naming a parameter, within
``CALL_SECONDS`` and the memory budget. Two additions: a population ``n``, a
mechanism's ``level`` and a leak probability ``p`` must refuse the values of
``MUST_REFUSE`` (a NaN-free answer to ``n = -1`` is still a wrong answer), and
a refusal of a mechanism's ``level`` may call it by its own name (``gamma``,
``epsilon``, ``rho``). Methods that take the engine's own states and random
keys are exempt, by name and with the tests that drive them
(``EXEMPT_METHODS``); methods that refuse every call by design are checked to
do so (``REFUSED``).

Every call is small and quick: the whole file runs in well under a minute on
one core.
"""

import importlib
import inspect
import pkgutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz import POOL, SIZE_POOL, _call_or_clear_error

import perfpriv
from perfpriv import behaviour, bernoulli, engine, experiments, gaussian, gradient, keyed, optimize, regression
from perfpriv.performative import bilevel, federated, participation, prediction

# ------------------------------------------------------------------ one small instance of each class

_rng = np.random.default_rng(0)
XL = _rng.standard_normal((12, 3)).round(3).tolist()
YL = [1.0 if row[0] > 0 else -1.0 for row in XL]
CLIENTS = federated.GaussianClients.example(N=4, m_mean=1.0, eps_mean=0.5, m_sd=0.5)
BILEVEL = bilevel.BilevelRegression.synthetic(M=2, n=5, d=2, eps_c=0.5, eps_d=0.5, lam_x=1.0, lam_y=1.0, seed=0)
MEM = behaviour.Memoryless(q=0.3, r=0.6)

INSTANCES = {
    "RandomizedResponse": bernoulli.RandomizedResponse(1.0),
    "GaussianMean": gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0),
    "RidgeRelease": regression.RidgeRelease(0.01, tau=0.02, data=regression.RidgeData(d=3, test_size=20),
                                         table=regression.Tabulation(records=50, datasets=2)).resolved("paper"),
    "PrivateGD": gradient.PrivateGD(1.0, tau=0.02, data=gradient.GDData(d=3), steps=3,
                                    table=gradient.Tabulation(records=50, datasets=2)),
    "PrivateFederatedRound": participation.PrivateFederatedRound(
        gamma=1.0, tau=0.5, R=20.0, clients=participation.ClientLaw(m=1.0, m_sd=1.0, eps=0.5, sigma=1.0),
        fedavg=federated.FedAvg(E=1, steps=0.5)).resolved("paper"),
    "Memoryless": MEM,
    "LeakCount": behaviour.LeakCount(k=2, q=0.3, r=0.6),
    "Heterogeneous": behaviour.Heterogeneous(q=[0.1, 0.5], weights=[0.5, 0.5], r=0.6),
    "BudgetAware": behaviour.BudgetAware(tolerance=[1.0, 3.0], r=0.6, q=0.1, weights=[0.5, 0.5]),
    "Contagion": behaviour.Contagion(q=0.3, r=0.6, kappa=0.5),
    "AgentModel": behaviour.Heterogeneous(q=[0.1, 0.5], weights=[0.5, 0.5], r=0.6).agent_model(),
    "Levels": engine.make_levels([1.0, 2.0], name="gamma"),
    "Key": keyed.root_key(0).child(np.arange(3)),
    "Policy": engine.Policy(cap=20000, floor=1),
    "SimulationRun": engine.simulate(bernoulli.RandomizedResponse(1.0), MEM, T=5, n0=50, trials=2, seed=0),
    "GDRun": gradient.noisy_gd(XL, YL, gradient.Training(loss="logistic", lam=1.0, clip=2.0, steps=3, step_size=0.1),
                               rho=1.0, seed=1),
    "TranscriptCheck": gradient.simulate_transcripts(XL, YL, gradient.Training(loss="logistic", lam=1.0, clip=2.0,
                                                                               steps=3, step_size=0.1),
                                                     index=0, runs=4, rho=1.0, seed=2),
    "ScheduleOptimum": optimize.optimal_schedule(gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0), MEM, T=3, n0=50,
                                                 search=dict(starts="constant", polish=0)),
    "PerformativeProblem": prediction.PerformativeProblem.squared(m=1.0, A=0.5),
    "GaussianClients": CLIENTS,
    "StepRule": federated.StepRule(beta=2.0, offset=4.0, kind="decaying"),
    "BilevelRegression": BILEVEL,
    "BilevelPath": bilevel.fbi_rrm(BILEVEL, rounds=12),
    "Agreement": experiments.mc_agreement(np.arange(20.0), 9.5),
    "LeakFractions": experiments.figure3a_simulation(gaussian.GaussianMean([1.0, 2.0], tau=0.05, d=3, R=10.0), 30,
                                                     rounds=2, seed=0),
}

# ------------------------------------------------------------------ one typical call of each method

#: Mechanism methods, and each mechanism's typical level (epsilon, gamma or rho).
LEVEL = {"RandomizedResponse": 1.0, "GaussianMean": 1.0, "RidgeRelease": 0.01, "PrivateGD": 1.0,
         "PrivateFederatedRound": 1.0}
MECHANISM_CALLS = {
    "resolved": lambda level: dict(conventions="paper"),
    "policy_preset": lambda level: dict(conventions="paper"),
    "options": lambda level: dict(),
    "kernel_levels": lambda level: dict(level=level),
    "privacy_cost": lambda level: dict(level=level),
    "one_record_error": lambda level: dict(level=level),
    "leak_probability": lambda level: dict(n=100, level=level),
    "expected_error": lambda level: dict(n=100, level=level),
    "leak_probability_grad": lambda level: dict(n=100, level=level),
    "expected_error_grad": lambda level: dict(n=100, level=level),
    "initial_state": lambda level: dict(batch=(2,)),
}
BEHAVIOUR_CALLS = {
    "cell_coordinates": dict(),
    "kernel_step": dict(),
    "initial_state": dict(n0=50, batch=(2,), T=5),
    "mean_field_state": dict(n0=50.0, batch=(2,), T=5),
    "mean_field_step_grad": dict(n=50.0, p=0.1),
    "recruit_rate": dict(p=0.1),
    "expected_stay": dict(p=0.1, cost=None),
    "reproduction_number": dict(p=0.1, cost=None),
    "growth_factor": dict(p=0.1, cost=None),
    "critical_leak_probability": dict(cost=None),
    "agent_model": dict(),
    "take": dict(index=[0]),
}
#: BudgetAware's users count a per-round privacy cost: its methods need one.
BUDGET_COST = {"expected_stay", "reproduction_number", "growth_factor", "critical_leak_probability"}

TABLE = {}
for _cls, _level in LEVEL.items():
    for _method, _kwargs in MECHANISM_CALLS.items():
        TABLE[(_cls, _method)] = _kwargs(_level)
for _cls in ("Memoryless", "LeakCount", "Heterogeneous", "BudgetAware", "Contagion"):
    for _method, _kwargs in BEHAVIOUR_CALLS.items():
        TABLE[(_cls, _method)] = dict(_kwargs, cost=0.5) if _cls == "BudgetAware" and _method in BUDGET_COST \
            else dict(_kwargs)
TABLE.update({
    ("LeakCount", "effective_q"): dict(),
    ("LeakCount", "reactive_share"): dict(p=0.1),
    ("Memoryless", "grid_axes"): dict(),
    ("Heterogeneous", "effective_q"): dict(),
    ("Heterogeneous", "stationary_mix"): dict(p=0.1),
    ("BudgetAware", "lifetimes"): dict(cost=0.5),
    ("Contagion", "stationary_leave_probability"): dict(p=0.1),
    ("AgentModel", "initial_classes"): dict(n0=10),
    ("PrivateGD", "eta"): dict(n=100),
    ("PrivateGD", "sigma"): dict(rho=1.0),
    ("PrivateGD", "sample_data"): dict(n=10, seed=0),
    ("PrivateGD", "table_value"): dict(n=50, level=1.0),
    ("PrivateGD", "growth_factor"): dict(n=100, level=1.0, q=0.3, r=0.6),
    ("RidgeRelease", "table_value"): dict(n=50, level=0.01),
    ("RidgeRelease", "growth_factor"): dict(n=100, level=0.01, q=0.3, r=0.6),
    ("RidgeRelease", "sigma"): dict(n=100, gamma=0.01),
    ("RidgeRelease", "kappa"): dict(n=100, gamma=0.01),
    ("RidgeRelease", "rho"): dict(n=100, gamma=0.01, adjacency="replace"),
    ("PrivateFederatedRound", "record_spread"): dict(theta=0.5),
    ("PrivateFederatedRound", "leak_probability_at"): dict(theta=0.5, n=100, gamma=1.0),
    ("PrivateFederatedRound", "survival_threshold"): dict(theta=0.5, n=100, q=0.3, r=0.6),
    ("PrivateFederatedRound", "stationary_error"): dict(n=100, gamma=1.0),
    ("Key", "bits"): dict(counters=[0, 1, 2]),
    ("Key", "uniform"): dict(size=4),
    ("Key", "uniform_at"): dict(counters=[0, 1, 2]),
    ("Key", "normal"): dict(size=4),
    ("Key", "normal_at"): dict(counters=[0, 1, 2]),
    ("Key", "normal_ragged"): dict(counts=[2, 0, 3]),
    ("Key", "normal_records"): dict(records=[2, 0, 3], width=2),
    ("Levels", "at"): dict(t=1),
    ("Levels", "check_horizon"): dict(T=5),
    ("Levels", "describe"): dict(),
    ("Policy", "describe"): dict(),
    ("Policy", "resolve"): dict(mechanism=bernoulli.RandomizedResponse(1.0), conventions="paper", n0=50),
    ("SimulationRun", "moving_average"): dict(window=3),
    ("GDRun", "leaked"): dict(tau=0.5),
    ("GDRun", "predicted_leak"): dict(tau=0.5),
    ("TranscriptCheck", "leak_frequency"): dict(tau=0.5),
    ("TranscriptCheck", "predicted"): dict(tau=0.5),
    ("TranscriptCheck", "standardized"): dict(),
    ("ScheduleOptimum", "as_schedule"): dict(),
    ("PerformativeProblem", "squared"): dict(m=1.0, A=0.5, Sigma=1.0),
    ("PerformativeProblem", "linear"): dict(m=1.0, A=0.5, Sigma=1.0),
    ("PerformativeProblem", "rgd_factor"): dict(step=0.5),
    ("PerformativeProblem", "rgd_bound"): dict(step=0.5),
    ("PerformativeProblem", "data_mean"): dict(theta=[0.5]),
    ("PerformativeProblem", "best_response"): dict(theta=[0.5]),
    ("PerformativeProblem", "decoupled_risk"): dict(theta=[0.5], deployed=[0.2]),
    ("PerformativeProblem", "performative_risk"): dict(theta=[0.5]),
    ("PerformativeProblem", "gradient_map"): dict(theta=[0.5]),
    ("PerformativeProblem", "stable_point"): dict(attracting=True),
    ("PerformativeProblem", "optimal_point"): dict(),
    ("GaussianClients", "example"): dict(N=4, m_mean=1.0, m_sd=0.5, eps_mean=0.5, eps_sd=0.0, sigma=1.0, p=None, d=1,
                                         seed=0),
    ("GaussianClients", "local_gradients"): dict(theta=0.5),
    ("GaussianClients", "dissimilarity"): dict(theta=0.5),
    ("StepRule", "decaying"): dict(beta=2.0, offset=4.0),
    ("StepRule", "constant"): dict(eta=0.1),
    ("StepRule", "default"): dict(clients=CLIENTS, E=2, scaled=False),
    ("StepRule", "coerce"): dict(value=0.1, name="value"),       # a refusal names the caller's parameter, `name`
    ("BilevelRegression", "synthetic"): dict(M=2, n=5, d=2, eps_c=0.5, eps_d=0.5, lam_x=1e-3, lam_y=1e-3,
                                             heterogeneity=0.5, noise=0.1, seed=0),
    ("BilevelRegression", "with_sensitivities"): dict(eps_c=0.4, eps_d=0.4),
    ("BilevelRegression", "labels"): dict(deployed=[0.1, 0.2]),
    ("BilevelRegression", "lower_response"): dict(x=[0.1, 0.2], deployed=[0.1, 0.2]),
    ("BilevelRegression", "upper_objective"): dict(x=[0.1, 0.2], deployed=[0.1, 0.2]),
    ("BilevelRegression", "local_solutions"): dict(deployed=[0.1, 0.2]),
    ("BilevelRegression", "rrm_map"): dict(x=[0.1, 0.2]),
    ("BilevelRegression", "threshold"): dict(),
    ("BilevelRegression", "bound_threshold"): dict(),
    ("BilevelRegression", "stable_point"): dict(attracting=True),
    ("BilevelPath", "rate"): dict(last=5),
    ("Agreement", "check"): dict(label="the mean"),
    ("LeakFractions", "theory_at"): dict(taus=[0.05, 0.5]),
})

#: Methods not called here, by name, and why: each takes the engine's own state arrays, random keys and batch
#: shapes (the engine builds them; test_engine, test_behaviour, test_kernels and test_inlaw drive these methods
#: bit for bit against the references), or a figure.
EXEMPT_METHODS = {
    "child": "any number of parts by position (ints, int arrays or purpose names): test_keyed derives it",
    "draw_round": "the engine's keys and live mask",
    "agent_round": "the agent reference's Generator and mechanism state (test_agents drives its n and level)",
    "recruit_class": "AgentModel.recruit_class: the agent reference's Generator (test_agents)",
    "advance": "the engine's mechanism state, keys and live mask",
    "kernel_draw": "returns a compiled function the engine calls with its own arrays",
    "step": "the engine's behaviour state and keys (its leaked counts and keys: test_behaviour)",
    "bound": "the engine's behaviour state and keys (floor and cap: test_behaviour)",
    "mean_field_step": "the mean field's state (its p: test_behaviour)",
    "mean_field_bound": "the mean field's state (floor and cap: test_behaviour)",
    "population": "a behaviour state",
    "remaining": "a behaviour state",
    "spent": "a behaviour state",
    "by_class": "a behaviour state",
    "leave_probability": "a behaviour state",
    "mean_sensitivity": "a behaviour state",
    "score_stopped": "the engine's error and alive arrays",
    "sample": "PerformativeProblem.sample: a keyed random stream of the engine",
    "table": "Summary.table: no arguments; the summary's maps are fuzzed in test_fuzz_learning",
    "refresh": "widgets: a live explorer (its flag: test_widgets_validation)",
    "describe_values": "widgets: a live explorer's current values in words, no argument (test_widgets_alt)",
    "static": "widgets: renders every slider position (test_static_explorer)",
    "image": "widgets: a static explorer's rendered figures (test_static_explorer)",
    "position": "widgets: a static explorer's rendered figures (test_static_explorer)",
}
#: Methods that refuse every call by design, with the reason, checked as such: the tabulated and stateful
#: mechanisms have no compiled loop, the typed behaviours no schedule gradient, and the federated round's error
#: and leak probability depend on its state (the deployed model), which only engine.simulate carries.
REFUSED = {**{(cls, "kernel_levels"): NotImplementedError
              for cls in ("RidgeRelease", "PrivateGD", "PrivateFederatedRound")},
           **{(cls, "mean_field_step_grad"): NotImplementedError
              for cls in ("LeakCount", "Heterogeneous", "BudgetAware", "Contagion")},
           **{("PrivateFederatedRound", name): ValueError
              for name in ("one_record_error", "leak_probability", "expected_error", "leak_probability_grad",
                           "expected_error_grad")}}
#: Public classes whose methods are reached through their concrete subclasses above (abstract bases).
ABSTRACT = {"Mechanism", "Behaviour", "StatefulMechanism"}

SIZES = {"n", "n0", "T", "t", "window", "last", "size", "N", "M", "d", "steps", "seed", "level_index"}
CALL_SECONDS = 10


def _public_methods():
    """(class name, method name) of every public method of every public class of the public modules."""
    found = set()
    for info in pkgutil.walk_packages(perfpriv.__path__, prefix="perfpriv."):
        parts = info.name.split(".")[1:]
        if any(part.startswith("_") for part in parts):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            cls = getattr(module, name)
            if not inspect.isclass(cls):
                continue
            for klass in cls.__mro__:
                if klass.__module__.split(".")[0] != "perfpriv":
                    continue
                for attr, value in vars(klass).items():
                    if attr.startswith("_") or isinstance(value, property):
                        continue
                    if callable(value) or isinstance(value, (classmethod, staticmethod)):
                        found.add((cls.__name__, attr))
    return found


def _method(cls, name):
    return getattr(INSTANCES[cls], name)


def _pool(param):
    return SIZE_POOL if param in SIZES else POOL


CASES = [(cls, name, param) for (cls, name), kwargs in TABLE.items() for param in kwargs
         if (cls, name) not in REFUSED]
#: (class, method, parameter) -> the known cause of a case that still fails (strict xfails).
KNOWN: dict = {}


def _case(cls, name, param):
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN[(cls, name, param)])] if (cls, name, param) in KNOWN else []
    return pytest.param(cls, name, param, marks=marks, id=f"{cls}.{name}-{param}")


def test_the_table_holds_every_public_method_of_every_public_class():
    public = _public_methods()
    missing = {(cls, name) for cls, name in public
               if cls not in ABSTRACT and (cls, name) not in TABLE and name not in EXEMPT_METHODS}
    assert missing == set()
    assert set(TABLE) <= public                          # no stale entry
    assert set(INSTANCES) == {cls for cls, _ in TABLE}   # every instance is used


def test_the_walk_sees_the_engine_facing_methods():
    public = _public_methods()
    for key in [("GaussianMean", "leak_probability"), ("Memoryless", "growth_factor"),
                ("BudgetAware", "initial_state"), ("RidgeRelease", "table_value"), ("StepRule", "default")]:
        assert key in public, key


@pytest.mark.parametrize("cls, name", list(TABLE), ids=[f"{c}.{n}" for c, n in TABLE])
def test_each_typical_call_is_valid_and_well_behaved(cls, name):
    if (cls, name) in REFUSED:
        with pytest.raises(REFUSED[(cls, name)]):
            _method(cls, name)(**TABLE[(cls, name)])
        return
    _method(cls, name)(**TABLE[(cls, name)])          # returns (a clear refusal is no typical call)
    assert _call_or_clear_error(_method(cls, name), TABLE[(cls, name)], "", seconds=CALL_SECONDS) is None


#: What a mechanism's ``level`` is (a refusal may name it so: "gamma must be in (0, inf)").
LEVEL_NAME = {"RandomizedResponse": "epsilon", "GaussianMean": "gamma", "RidgeRelease": "gamma", "PrivateGD": "rho",
              "PrivateFederatedRound": "gamma"}
NAN = float("nan")
#: Values each of these parameters must refuse (a result, even a NaN-free one, is a silent wrong answer): a
#: population n and a level are >= 0, a leak probability p is in [0, 1].
MUST_REFUSE = {"n": [-1, NAN, -float("inf")], "level": [-1, NAN, -float("inf")],
               "p": [-1, NAN, 1e300, float("inf"), -float("inf")]}


def _check(cls, name, param, value):
    """The contract of test_fuzz for one call, plus MUST_REFUSE and the mechanisms' names of their level."""
    kwargs = dict(TABLE[(cls, name)], **{param: value})
    func = _method(cls, name)
    problem = _call_or_clear_error(func, kwargs, param, seconds=CALL_SECONDS)
    if problem and param == "level" and "names no parameter" in problem and \
            problem.split(": ", 1)[1].startswith(LEVEL_NAME.get(cls, "level") + " "):
        return None
    must_refuse = MUST_REFUSE.get(param, []) if param != "level" or cls in LEVEL_NAME else []
    if problem is None and any(value is v or value == v for v in must_refuse):
        try:
            func(**kwargs)
        except (ValueError, TypeError):
            return None
        return "accepted a value outside the parameter's range"
    return problem


@pytest.mark.parametrize("cls, name, param", [_case(*c) for c in CASES])
def test_each_argument_replaced_by_typical_boundary_and_invalid_values(cls, name, param):
    problems = []
    for value in _pool(param):
        problem = _check(cls, name, param, value)
        if problem:
            problems.append(f"{param}={value!r:.30}: {problem}")
    assert not problems, f"{cls}.{name}: " + "; ".join(problems)


def test_the_known_examples_of_issue_32_are_refused_by_name():
    with pytest.raises(ValueError, match=r"^n must be in \[0, inf\]"):
        INSTANCES["GaussianMean"].leak_probability(-1, 1.0)
    with pytest.raises(ValueError, match=r"^p must be a number in \[0, 1\]"):
        MEM.growth_factor(float("nan"))


REAL_CASES = [(cls, name, param) for cls, name, param in CASES
              if isinstance(TABLE[(cls, name)][param], float) and (cls, name, param) not in KNOWN]


@settings(max_examples=300, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(REAL_CASES), value=st.floats(allow_nan=True, allow_infinity=True, width=64))
def test_real_parameters_over_every_double(case, value):
    cls, name, param = case
    problem = _check(cls, name, param, value)
    assert problem is None, f"{cls}.{name}({param}={value!r}): {problem}"


def test_extreme_values_give_their_limits():
    # rgd_bound(1e300) was an OverflowError; RR's slopes were NaN with warnings at eps = 0 and inf
    problem = INSTANCES["PerformativeProblem"]
    b, e = problem.smoothness, problem.sensitivity
    assert problem.rgd_bound(1e300) == pytest.approx(1e300 * b * (1 + e), rel=1e-12)
    rr = INSTANCES["RandomizedResponse"]
    assert rr.leak_probability_grad(100, np.inf)[2] == 0.0
    assert rr.expected_error_grad(100, np.inf)[2] == 0.0
    assert rr.expected_error_grad(100, 0.0)[2] == -np.inf
    assert np.isposinf(INSTANCES["PrivateFederatedRound"].stationary_error(100, 1e300))
