"""The fuzzer of ``test_fuzz.py`` over the upper layers (issue 16's "Done when", second part).

Every public function -- and every public class's constructor -- of
:mod:`perfpriv.engine`, :mod:`perfpriv.behaviour`, :mod:`perfpriv.optimize`,
:mod:`perfpriv.experiments`, :mod:`perfpriv.sweep`, :mod:`perfpriv.schedules`,
:mod:`perfpriv.exercises`, :mod:`perfpriv.notebook` and :mod:`perfpriv.cli`
(the table below holds one typical call of each; a test checks that the table
is complete) is called with one argument at a time replaced by a typical,
boundary or invalid value (the pools of ``test_fuzz.py``), under the same
contract (:func:`test_fuzz._call_or_clear_error`): a warning-free, NaN-free
result, or a one-line ``ValueError``/``TypeError`` naming a parameter. Two
additions: a NaN is accepted in a result field whose class docstring says when
that field is NaN (``"NaN if not simulated"``, ``"NaN from one trial"``: the
documented "not available"; any other NaN fails), and a flag (a parameter whose
typical value is a bool) must refuse every non-boolean.

Sizes stay small (at most 100 records, T <= 5, trials <= 2, grids of at most
3 values) so that the whole file runs in well under 90 s on two cores; the
60 s alarm of the contract guards against hangs. A derandomized hypothesis
test drives the real-valued parameters over every double.
"""

import functools
import inspect
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perfpriv import (behaviour, bernoulli, cli, engine, exercises, experiments, gaussian, keyed, notebook,
                      optimize, schedules, sweep)
from test_fuzz import POOL, SIZE_POOL, _call_or_clear_error

MODULES = (keyed, engine, behaviour, optimize, experiments, sweep, schedules, exercises, notebook, cli)


def _batched(q, keys):
    """A batched cell function for :func:`perfpriv.sweep.map_grid` (module level: picklable)."""
    return np.asarray(q, dtype=float) + 0.0 * keys.uniform_at(0)


def _on_cells(count):
    """A per-chunk callback for :class:`perfpriv.sweep.Execution`."""


RR = bernoulli.RandomizedResponse(1.0)
#: The Bernoulli experiments' budgets (what their epsilons were; the mechanism's own values and its μ law are fuzzed
#: through RandomizedResponse's constructor in test_fuzz.py, the users' q, r and rule through Memoryless's here).
RR_GRID = bernoulli.RandomizedResponse([0.5, 1.0, np.inf])
GM = gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0)
MEM = behaviour.Memoryless(q=0.3, r=0.6)
#: The experiments' mechanisms of a γ grid (what their γ grids were) and the level-less template of
#: compare_schedules (the schedules are its levels). Their own values are fuzzed through GaussianMean's
#: constructor (test_fuzz.py) and Memoryless's (here); the experiments are fuzzed with the objects.
GM_GRID2 = gaussian.GaussianMean([1.0, 2.0], tau=0.02, d=3, R=10.0)
GM_GRID13 = gaussian.GaussianMean([1.0, 3.0], tau=0.02, d=3, R=10.0)
GM_GRID3 = gaussian.GaussianMean([1.0, 3.0, 10.0], tau=0.02, d=3, R=10.0)
GM_TEMPLATE = gaussian.GaussianMean(tau=0.02, d=3, R=10.0)
SMALL = dict(T=3, n0=50, d=3, R=10.0)
MAP = experiments.gamma_star_map(GM_GRID3, MEM, T=3, n0=50, trials=2, seed=0)
STORED = Path(__file__).parents[1] / "book" / "data" / "figure4_paper.npz"
EXERCISE = exercises.exercise_ids()[0]
TMP = Path(tempfile.gettempdir()) / "perfpriv_fuzz_cells"   # CellFiles writes only when a cell is stored
# a run folder with its record and no finished cell (finished_gamma_star_maps only reads it)
RUN = Path(tempfile.gettempdir()) / "perfpriv_fuzz_run"
RUN.mkdir(exist_ok=True)
(RUN / "run.json").write_text('{"scale": "book", "conventions": "paper", "seed": 0}')

TYP = {
 (engine, "check_record_size"): dict(T=10, trials=2),
 (engine, "Schedule"): dict(values=[1.0, 2.0, 3.0]),
 (engine, "PerCell"): dict(values=[0.5, 2.0]),
 (engine, "make_levels"): dict(value=1.0, name="value"),
 (engine, "level_grid"): dict(mechanism=GM_GRID3, kind=gaussian.GaussianMean, name="mechanism"),
 (engine, "cell_keys"): dict(seed=0, behaviour=behaviour.Memoryless(q=[0.3, 0.5], r=0.6)),
 (engine, "Policy"): dict(cap=20000, floor=1, stop=0, collapse="floor", penalty=0.0),
 (engine, "check_policy"): dict(policy=engine.Policy(cap=20000)),
 (engine, "simulate"): dict(mechanism=GM, behaviour=MEM, T=3, n0=50, trials=2, policy=engine.Policy(cap=20000, floor=1),
                            conventions="paper", seed=0, record="all"),
 (engine, "simulate_agents"): dict(mechanism=RR, behaviour=MEM, T=3, n0=20, trials=2,
                                   policy=engine.Policy(cap=100, floor=1), conventions="paper", seed=0),
 (engine, "mean_field"): dict(mechanism=RR, behaviour=MEM, T=3, n0=50, cap=20000, floor=1, rounds="algorithm",
                              conventions="paper", gradient=False),
 (behaviour, "Memoryless"): dict(q=0.3, r=0.6, rule="leak"),
 (behaviour, "LeakCount"): dict(k=2, q=0.3, r=0.6, rule="leak"),
 (behaviour, "Heterogeneous"): dict(q=[0.1, 0.5], weights=[0.5, 0.5], r=0.6, rule="leak"),
 (behaviour, "BudgetAware"): dict(tolerance=[1.0, 3.0], r=0.6, q=0.1, weights=[0.5, 0.5], rule="leak"),
 (behaviour, "Contagion"): dict(q=0.3, r=0.6, kappa=0.5, rule="leak"),
 (optimize, "optimal_epsilon"): dict(mechanism=bernoulli.RandomizedResponse([0.5, 1.0], mu=(0.5, 1.0)), users=MEM,
                                     T=3, n0=50, trials=2, policy=engine.Policy(cap=20000), conventions="paper",
                                     seed=0, options=sweep.Execution(chunk=64, progress=False)),
 (optimize, "level_search"): dict(mechanism=bernoulli.RandomizedResponse([0.5, 2.0]),
                                  behaviour=MEM, T=3, n0=50, method="simulation", score="cumulative", trials=2,
                                  policy=engine.Policy(cap=20000), conventions="paper", seed=0),
 (optimize, "mean_field_optimal_epsilon"): dict(mechanism=bernoulli.RandomizedResponse([0.5, 1.0, 2.0], mu=(0.5, 1.0)),
                                                users=MEM, T=5, n0=50, policy=engine.Policy(cap=20000, floor=1)),
 (optimize, "optimal_gamma"): dict(mechanism=GM_GRID3, users=MEM, T=3, n0=50, objective="bound", constrained=False,
                                   policy=engine.Policy(cap=20000, floor=1), rounds="paper"),
 (optimize, "optimal_gamma_empirical"): dict(mechanism=GM_GRID3, users=MEM, T=3, n0=50, trials=2,
                                             policy=engine.Policy(collapse="floor"), conventions="paper", seed=0,
                                             options=sweep.Execution(chunk=4, progress=False)),
 (optimize, "optimal_schedule"): dict(mechanism=GM, behaviour=MEM, T=3, n0=50, family="free",
                                      policy=engine.Policy(cap=20000, floor=1), bracket=(0.01, 1000.0),
                                      search=dict(maxiter=3, polish=2, starts="auto", switches=None)),
 (experiments, "figure3a_simulation"): dict(mechanism=GM_GRID2, n=50, taus=[0.02, 0.05], rounds=2, conventions="paper",
                                            seed=0, options=sweep.Execution(progress=False)),
 (experiments, "leak_dispersion"): dict(gamma=1.0, tau=0.02, n=50, trials=3, d=3, R=10.0, conventions="paper",
                                        seed=0),
 (experiments, "exact_floor_check"): dict(ns=[10, 20], taus=[0.02], gamma=10000.0, rounds=2, d=3, R=10.0, seed=0),
 (experiments, "growth_curves"): dict(mechanisms=GM_GRID2, users=MEM, n0=50, T=1, trials=2, ratio="first",
                                      policy=engine.Policy(cap=20000), conventions="paper", seed=0),
 (experiments, "theorem3_check"): dict(mechanism=GM, users=MEM, sizes=[2, 10], trials=2, conventions="paper", seed=0),
 (experiments, "mean_field_paths"): dict(mechanism=GM, users=MEM, T=3, n0=50, policy=engine.Policy(cap=20000),
                                         trials=2, conventions="paper", seed=0),
 (experiments, "lemma9_check"): dict(mechanism=GM_GRID13, users=MEM, T=3, n0=50, trials=2,
                                     policy=engine.Policy(cap=20000, collapse="floor"), conventions="paper", seed=0),
 (experiments, "horizon_curves"): dict(mechanism=GM_GRID3, users=MEM, T=3, n0=50, trials=2,
                                       policy=engine.Policy(cap=20000, collapse="floor"), conventions="paper", seed=0,
                                       empirical=True, fine=[1.0, 2.0, 5.0]),
 (experiments, "gamma_star_map"): dict(mechanism=GM_GRID3, users=MEM, T=3, n0=50, trials=2,
                                       policy=engine.Policy(cap=20000, collapse="floor"), conventions="paper", seed=0,
                                       maps=("empirical", "bound"), options=sweep.Execution(chunk=4, progress=False)),
 (experiments, "pac_coverage"): dict(mechanism=GM, users=MEM, epsilons=[1.0, 0.5], delta=0.1, T=3, n0=50, trials=2,
                                     policy=engine.Policy(cap=20000), conventions="paper", seed=0),
 (experiments, "read_gamma_star_maps"): dict(path=STORED, record=None),
 (experiments, "capped_rounds"): dict(m=MAP, at="bound"),
 (experiments, "gamma_star_gaps"): dict(maps=[MAP], theory="bound", z=2.0, outlier_factor=3.0,
                                        bands=(0.4, 0.6, 0.8)),
 (experiments, "curve_runs"): dict(mechanism=RR_GRID, users=[MEM, behaviour.Memoryless(q=0.6, r=0.3)], T=3, n0=50,
                                   trials=2, policy=engine.Policy(cap=20000), conventions="paper", seed=0,
                                   options=sweep.Execution(on_cells=_on_cells)),
 (experiments, "final_error_curve"): dict(mechanism=RR_GRID, users=MEM, T=3, n0=50, trials=2,
                                          policy=engine.Policy(cap=20000), conventions="paper", seed=0,
                                          fine=[0.5, 1.0, 2.0]),
 (experiments, "compare_schedules"): dict(schedules={"a": [1.0, 1.0, 1.0], "b": [3.0, 2.0, 1.0]},
                                          mechanism=GM_TEMPLATE, users=MEM, n0=50, trials=2, reference="a",
                                          policy=engine.Policy(cap=20000, collapse="floor"), conventions="paper",
                                          seed=0),
 (experiments, "gain_map"): dict(mechanism=RR, qs=[0.3], rs=[0.6], T=3, n0=50, policy=engine.Policy(cap=20000)),
 (experiments, "agreement"): dict(estimate=1.0, expected=1.0, se=0.1, z=4.5, side="both"),
 (experiments, "mc_agreement"): dict(samples=[0.9, 1.1, 1.0], expected=1.0, z=4.5, axis=-1, side="both"),
 (experiments, "paired_agreement"): dict(a=[0.9, 1.1, 1.0], b=[1.0, 1.0, 1.2], expected=0.0, z=4.5, axis=-1,
                                         side="both"),
 (keyed, "Key"): dict(a=np.array([1, 2], dtype=np.uint64), b=np.array([3, 4], dtype=np.uint64)),
 (keyed, "root_key"): dict(seed=0, name="seed"),
 (keyed, "as_generator"): dict(seed=0, name="seed"),
 (keyed, "as_seed_sequence"): dict(seed=0, name="seed"),
 (keyed, "cell_key"): dict(seed=0),
 (keyed, "coordinate_key"): dict(value=0.3),
 (keyed, "purpose_id"): dict(name="leave"),
 (keyed, "purpose_hashes"): dict(name="leave"),
 (keyed, "binomial"): dict(key=keyed.root_key(0).child(np.arange(3)), n=np.array([5, 10, 20]), p=0.3),
 (keyed, "hypergeometric"): dict(key=keyed.root_key(0).child(np.arange(3)), good=np.array([5, 10, 20]),
                                 bad=np.array([4, 4, 4]), nsample=np.array([3, 6, 9])),
 (keyed, "multivariate_hypergeometric"): dict(key=keyed.root_key(0).child(np.arange(2)),
                                              counts=np.array([[3, 4, 5], [1, 2, 3]]), nsample=np.array([6, 4])),
 (keyed, "check_batch"): dict(n=np.array([5, 10]), keys=keyed.root_key(0).child(np.arange(2)), per_record=True),
 (sweep, "map_grid"): dict(func=_batched, cells={"q": [0.1, 0.2, 0.3]}, seed=0, product=False,
                           options=sweep.Execution(chunk=2, progress=False)),
 (sweep, "Execution"): dict(n_jobs=1, chunk=2, progress=False, description="cells", on_cells=_on_cells, store=None),
 (schedules, "Schedule"): dict(values=[1.0, 2.0, 3.0]),
 (schedules, "constant"): dict(level=1.0, T=3),
 (schedules, "two_phase"): dict(first=2.0, then=1.0, switch=1, T=3),
 (schedules, "geometric"): dict(start=2.0, ratio=0.5, T=3),
 (exercises, "Exercise"): dict(id="x", prompt="p", answer=1.0, compute=lambda: 1.0, rtol=0.005, atol=0.0),
 (exercises, "check"): dict(exercise_id=EXERCISE, answer=0.2142857, quiet=True),
 (exercises, "exercise_ids"): dict(chapter="ch01"),
 (exercises, "describe"): dict(exercise_id=EXERCISE),
 (exercises, "register"): dict(exercise=exercises.Exercise("fuzz-ex.x", "x", 1.0, lambda: 1.0), replace=True),
 (notebook, "brief_errors"): dict(shell=None),
 (cli, "build_parser"): dict(),
 (cli, "run_figure"): dict(number="1", scale="book", seed=0, conventions="paper"),
 (cli, "CellFiles"): dict(folder=TMP, read=True),
 (cli, "finished_gamma_star_maps"): dict(out=RUN, figure="5"),
}

#: Functions whose arguments are arrays of records, figures or a command line (fuzzed elsewhere).
NOT_SCALAR = {
    (cli, "main"),            # the command line: tests/test_cli.py drives its arguments
    (cli, "save_figure"),     # a matplotlib Figure and its arrays: tests/test_cli.py, tests/test_figure_layout.py
    (cli, "panel_boxes"),     # a Figure and its renderer: tests/test_figure_layout.py
    (keyed, "binomials"),     # any number of (key, n, p) triples: tests/test_keyed.py drives it against binomial
}

#: Classes users never construct: result objects (frozen dataclasses made by the library) and abstract bases.
EXEMPT = {
    (engine, "Levels"),          # made by make_levels (fuzzed), never by hand
    (engine, "RoundOutcome"),    # what a mechanism's draw_round returns to the engine
    (engine, "AgentRound"),      # what a mechanism's agent_round returns to simulate_agents
    (behaviour, "AgentModel"),   # made by a behaviour's agent_model (fuzzed in test_fuzz_methods), never by hand
    (engine, "Mechanism"),       # abstract base, no arguments
    (engine, "compile_kernels"),  # no arguments: compiles numba's kernels (tests/test_binder.py, .ci/run)
    (engine, "SimulationRun"), (engine, "MeanFieldPath"),                      # results of simulate / mean_field
    (behaviour, "Behaviour"),    # abstract base, no arguments
    (optimize, "EpsilonOptimum"), (optimize, "GammaOptimum"), (optimize, "ScheduleOptimum"),   # optimizer results
    (optimize, "LevelOptimum"),
    (experiments, "LeakFractions"), (experiments, "LeakDispersion"), (experiments, "ExactFloorCheck"),
    (experiments, "GrowthCurves"), (experiments, "Theorem3Check"), (experiments, "MeanFieldPaths"),
    (experiments, "Lemma9Check"), (experiments, "HorizonCurves"), (experiments, "GammaStarMap"),
    (experiments, "PacCoverage"), (experiments, "GammaStarGaps"), (experiments, "FinalErrors"),
    (experiments, "ScheduleComparison"), (experiments, "GainMap"),            # results of the experiments
    (experiments, "Agreement"),  # made by agreement, mc_agreement, paired_agreement (fuzzed)
}
#: Internal helpers, outside ``__all__`` since issue 31 (plumbing, not API), that keep their entries above.
INTERNAL = {(keyed, "as_seed_sequence"), (engine, "check_record_size"), (engine, "check_policy"), (keyed, "purpose_id"), (keyed, "purpose_hashes"),
            (keyed, "check_batch"), (cli, "build_parser"), (cli, "run_figure"), (cli, "CellFiles"),
            (cli, "save_figure"), (cli, "panel_boxes")}
SIZES = {"n", "n0", "T", "trials", "d", "rounds", "grid", "chunk", "maxiter", "polish", "k", "cap", "floor", "stop",
         "switch"}
#: Largest value of each size here (the pool's larger values are cut to it): every call stays small and quick.
SIZE_MAX = {"T": 5, "trials": 2, "rounds": 2, "maxiter": 3, "polish": 2, "grid": 3, "d": 12}
CASES = [(mod, name, p) for (mod, name), kw in TYP.items() for p in kw]


def _pool(param):
    if param not in SIZES:
        return POOL
    top = SIZE_MAX.get(param, 100)
    return [top if isinstance(v, int) and not isinstance(v, bool) and v > top else v for v in SIZE_POOL]


def _nan_documented(cls):
    """Fields of a result class whose docstring says when they are NaN ("NaN without simulation", ...)."""
    doc = inspect.getdoc(cls) or ""
    section = doc.split("Attributes\n----------\n", 1)[-1] if "Attributes\n---" in doc else ""
    allowed, names = set(), []
    for line in section.splitlines():
        head = re.match(r"^(\w+(?:, \w+)*)\s*:", line)
        if head:
            names = head.group(1).split(", ")
        elif re.match(r"^\S", line):          # the next section
            break
        if "NaN" in line:
            allowed.update(names)
    return allowed


def _available(out):
    """The result without the fields its class documents as NaN when not available (the rest is checked)."""
    if hasattr(out, "__dataclass_fields__"):
        skip = _nan_documented(type(out))
        return {f: _available(getattr(out, f)) for f in out.__dataclass_fields__ if f not in skip}
    if isinstance(out, (list, tuple)):
        return [_available(v) for v in out]
    return out


def _checked(func, kwargs, param):
    """The contract of test_fuzz, a result's documented "not available" NaN excepted (e.g. no simulation)."""
    @functools.wraps(func)
    def call(**kw):
        return _available(func(**kw))
    return _call_or_clear_error(call, kwargs, param)


def _public(mod):
    return {(mod, n) for n in mod.__all__ if inspect.isfunction(getattr(mod, n)) or inspect.isclass(getattr(mod, n))}


def test_the_table_holds_every_public_function_and_class_of_the_upper_layers():
    public = set().union(*(_public(m) for m in MODULES))
    assert public - set(TYP) - NOT_SCALAR - EXEMPT == set()
    assert set(TYP) | NOT_SCALAR | EXEMPT <= public | INTERNAL      # no stale entry
    assert not INTERNAL & public                                    # an internal helper is not in __all__
    for (mod, name), kwargs in TYP.items():          # each typical call is valid and well behaved
        assert _checked(getattr(mod, name), kwargs, "") is None, name


#: (function, parameter) -> the known cause of a case that still fails (strict xfails: reported, not fixed yet).
KNOWN: dict = {}
#: (A small R, whose clipped records make p_tau a Monte Carlo integral, was skipped here for speed until the
#: Monte Carlo evaluated Lemma 7 unchecked and the schedule surrogate drew fewer records: the slowest of these
#: sweeps, the Gaussian schedule search's over R, then took about 30 s instead of over 3 min. The search now
#: takes the mechanism as an object, whose R this table does not sweep.)


def _case(mod, name, param):
    marks = []
    if (mod, name, param) in KNOWN:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[(mod, name, param)]))
    return pytest.param(mod, name, param, marks=marks, id=f"{mod.__name__.split('.')[-1]}.{name}-{param}")


def _is_typical(value, typical):
    """Whether ``value`` is the typical call's own value (same type, equal): that call is the completeness test's."""
    return type(value) is type(typical) and not isinstance(value, (list, dict)) and value == typical


@pytest.mark.parametrize("mod, name, param", [_case(*c) for c in CASES])
def test_each_argument_replaced_by_typical_boundary_and_invalid_values(mod, name, param):
    _sweep(mod, name, TYP[(mod, name)], param)


#: More typical calls of a function that has several cases (one table entry calls one of them): the other
#: mechanism and families of optimal_schedule (which replaced six searches, each with its own entry), and the
#: randomized-response template of compare_schedules (which replaced compare_epsilon_schedules).
VARIANTS = {
    "gaussian-two_phase": (optimize, "optimal_schedule",
                           dict(TYP[(optimize, "optimal_schedule")], family="two_phase",
                                search=dict(TYP[(optimize, "optimal_schedule")]["search"], switches=[1, 2]))),
    "gaussian-geometric": (optimize, "optimal_schedule", dict(TYP[(optimize, "optimal_schedule")], family="geometric")),
    "rr-free": (optimize, "optimal_schedule", dict(mechanism=RR, behaviour=MEM, T=3, n0=50, family="free",
                                                   policy=engine.Policy(cap=20000, floor=1),
                                                   bracket=(0.01, 50.0),
                                                   search=dict(maxiter=3, polish=None, starts="auto",
                                                               switches=None))),
}
VARIANTS["rr-two_phase"] = (optimize, "optimal_schedule", dict(VARIANTS["rr-free"][2], family="two_phase",
                                                               search=dict(VARIANTS["rr-free"][2]["search"],
                                                                           switches=[1, 2])))
VARIANTS["rr-geometric"] = (optimize, "optimal_schedule", dict(VARIANTS["rr-free"][2], family="geometric"))
VARIANTS["rr-compare_schedules"] = (experiments, "compare_schedules",
                                    dict(TYP[(experiments, "compare_schedules")],
                                         mechanism=bernoulli.RandomizedResponse(1.0, mu=(0.0, 1.0)),
                                         users=behaviour.Memoryless(q=0.3, r=0.6, rule="leak"),
                                         policy=engine.Policy(cap=20000)))


@pytest.mark.parametrize("label, param", [(label, p) for label, (_, _, kw) in VARIANTS.items() for p in kw],
                         ids=lambda v: v)
def test_each_argument_of_the_other_cases_of_a_function(label, param):
    mod, name, typical = VARIANTS[label]
    assert _typical_problem(label) is None          # the typical call of this case
    _sweep(mod, name, typical, param)


@functools.lru_cache(maxsize=None)
def _typical_problem(label):
    """The contract's verdict on a case's typical call, made once per case and asserted by each of its parameters'
    tests (the same deterministic call made once per parameter was 16 s of the test's 42 s here)."""
    mod, name, typical = VARIANTS[label]
    return _checked(getattr(mod, name), typical, "")


def _sweep(mod, name, typical, param):
    func = getattr(mod, name)
    flag = isinstance(typical[param], bool)
    problems = []
    for value in _pool(param):
        if _is_typical(value, typical[param]):
            continue           # the typical call itself: checked by the completeness test above
        kwargs = dict(typical, **{param: value})
        problem = _checked(func, kwargs, param)
        if problem is None and flag and not isinstance(value, bool) and _returns(func, kwargs):
            problem = "a flag took a non-boolean"           # flags are real booleans (numbers are not flags)
        if problem:
            problems.append(f"{param}={value!r:.30}: {problem}")
    assert not problems, f"{mod.__name__}.{name}: " + "; ".join(problems)


def _returns(func, kwargs):
    """Whether the call returns (rather than raising the clear error the contract already checked)."""
    try:
        func(**kwargs)
    except (ValueError, TypeError):
        return False
    return True


REAL_CASES = [(mod, name, p) for mod, name, p in CASES if p not in SIZES and isinstance(TYP[(mod, name)][p], float)
              and (mod, name, p) not in KNOWN]


@settings(max_examples=400, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(REAL_CASES), value=st.floats(allow_nan=True, allow_infinity=True, width=64))
def test_real_parameters_over_every_double(case, value):
    mod, name, param = case
    problem = _checked(getattr(mod, name), dict(TYP[(mod, name)], **{param: value}), param)
    assert problem is None, f"{mod.__name__}.{name}({param}={value!r}): {problem}"
