"""Same seed, same numbers: across calls, across thread counts, and vectorized vs one at a time.

Every random function of perfpriv takes its randomness only through ``seed=``
(or ``rng=``). These tests pin the promises of the keyed streams (the searches'
``n_jobs`` and grid-cell tests live in ``test_optimize_determinism.py``):

* two calls with the same seed give bit-identical results;
* a run vectorized over ε (or γ, or a (q, r) grid) equals, value by value,
  the runs of each value alone with the same seed;
* the compiled round gives the same numbers on one numba thread or two.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from perfpriv import bernoulli, dynamics, engine, gaussian, leakage
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy
from perfpriv.gaussian import GaussianMean

USERS = Memoryless(q=0.3, r=0.6)


def _mc(gamma, seed):
    """A Gaussian mechanism whose p_tau is Monte Carlo with the seed ``seed``."""
    return GaussianMean(gamma, tau=0.02, d=3, R=1.5, leak_method=leakage.Integration("montecarlo", 2000, seed))


def _fields(result):
    """The fields of a result dataclass (or the value itself) that carry its numbers.

    Arrays and numbers as they are, a ``details`` dict flattened, objects (mechanism,
    behaviour, policy) by their repr; the ``seed`` provenance is left out (it differs
    between two seeds by construction, so it must not make two runs "differ").
    """
    if not hasattr(result, "__dataclass_fields__"):
        return {"value": result}
    out = {}
    for k in result.__dataclass_fields__:
        v = getattr(result, k)
        if k == "seed":
            continue
        if isinstance(v, dict):
            out.update({f"{k}.{name}": arr for name, arr in v.items()})
        elif isinstance(v, (np.ndarray, float, int, np.number)) or v is None:
            out[k] = v
        else:
            out[k] = repr(v)
    return out


def assert_identical(a, b):
    fa, fb = _fields(a), _fields(b)
    assert fa.keys() == fb.keys()
    for key in fa:
        va, vb = fa[key], fb[key]
        if isinstance(va, (str, type(None))):
            assert va == vb, key
        else:
            assert np.array_equal(np.asarray(va), np.asarray(vb), equal_nan=True), key


# ------------------------------------------------------ same seed, same numbers

SAME_SEED_CALLS = {
    "bernoulli.simulate": lambda seed: engine.simulate(bernoulli.RandomizedResponse([0.5, 2.0]), Memoryless(q=0.3, r=0.6), T=6, n0=40, trials=3, policy=Policy(cap=200), seed=seed),
    "engine.simulate_agents[bernoulli]": lambda seed: engine.simulate_agents(
        bernoulli.RandomizedResponse(1.0), USERS, T=3, n0=8, trials=2, policy=Policy(cap=30), seed=seed),
    "bernoulli.privatize": lambda seed: bernoulli.privatize([0, 1, 1, 0, 1], 0.2, rng=seed),
    "gaussian.sample_records": lambda seed: gaussian.sample_records(5, d=3, seed=seed),
    "gaussian.release": lambda seed: gaussian.release([[1.0, 0.0], [0.0, 2.0]], 1.0, 1.5, rng=seed),
    "gaussian.simulate": lambda seed: gaussian.simulate(2.0, tau=0.02, q=0.3, r=0.6, T=4, n0=30, d=3, R=10.0,
                                                         trials=2, seed=seed),
    "engine.simulate[gaussian, exact]": lambda seed: engine.simulate(
        GaussianMean(2.0, tau=0.02, d=3, R=10.0, statistic="exact"), USERS, T=4, n0=30, trials=2, seed=seed),
    "engine.simulate_agents[gaussian]": lambda seed: engine.simulate_agents(
        GaussianMean(2.0, tau=0.02, d=2, R=10.0), USERS, T=3, n0=8, trials=2, seed=seed),
    "leakage.marginal_leak_probability[mc]": lambda seed: leakage.marginal_leak_probability(
        [20, 50], 1.0, tau=0.02, d=3, R=1.5, method=leakage.Integration(samples=2000, seed=seed)),
    "dynamics.growth_factor[mc]": lambda seed: dynamics.growth_factor(_mc(1.0, seed), USERS, n=40, gamma=[1.0, 2.0]),
    "engine.mean_field[gaussian, mc]": lambda seed: engine.mean_field(_mc(2.0, seed), USERS, T=3, n0=40).population,
    "engine.simulate[gaussian, records]": lambda seed: engine.simulate(
        GaussianMean(2.0, tau=0.02, d=3, R=10.0, draw="records"), USERS, T=4, n0=30, trials=2, seed=seed),
}


@pytest.mark.parametrize("name", SAME_SEED_CALLS)
def test_same_seed_gives_identical_results_and_another_seed_does_not(name):
    call = SAME_SEED_CALLS[name]
    first, again = call(123), call(123)
    assert_identical(first, again)
    other = call(124)
    differs = any(not np.array_equal(np.asarray(v), np.asarray(_fields(other)[k]), equal_nan=True)
                  for k, v in _fields(first).items() if not isinstance(v, (str, type(None))))
    assert differs  # the seed is actually used


def test_a_seed_sequence_and_its_integer_agree_for_the_gaussian_simulator():
    a = gaussian.simulate(2.0, tau=0.02, q=0.3, r=0.6, T=3, n0=20, d=2, R=10.0, trials=2, seed=9)
    b = gaussian.simulate(2.0, tau=0.02, q=0.3, r=0.6, T=3, n0=20, d=2, R=10.0, trials=2,
                          seed=np.random.SeedSequence(9))
    assert_identical(a, b)


# ------------------------------------------------ vectorized = one at a time


def test_bernoulli_simulation_over_an_epsilon_grid_equals_each_epsilon_alone():
    grid = [0.05, 1.0, 700.0, np.inf]
    kw = dict(T=6, n0=40, trials=3, policy=Policy(cap=300), seed=11)
    users = Memoryless(q=0.3, r=0.6)
    together = engine.simulate(bernoulli.RandomizedResponse(grid), users, **kw)
    for i, eps in enumerate(grid):
        alone = engine.simulate(bernoulli.RandomizedResponse(eps), users, **kw)
        for field in ("population", "estimate", "truth", "sq_error"):
            assert np.array_equal(getattr(together, field)[i], getattr(alone, field)), (eps, field)


def test_bernoulli_mean_field_over_an_epsilon_grid_equals_each_epsilon_alone():
    grid = np.array([0.01, 0.5, 3.0, 700.0, np.inf])
    together = bernoulli.mean_field(grid, q=0.3, r=0.6, T=30, n0=100).sq_error
    for i, eps in enumerate(grid):
        assert np.array_equal(together[i], bernoulli.mean_field(eps, q=0.3, r=0.6, T=30, n0=100).sq_error)


def test_leak_probabilities_over_arrays_equal_one_value_at_a_time():
    s = np.array([0.0, 0.3, 1.0, 5.0])
    gam = np.array([1e-3, 0.5, 2.0, 1e3])
    for statistic in ("paper", "exact"):
        together = leakage.leak_probability(s[:, None], 50, gam[None, :], tau=0.1, statistic=statistic, d=3)
        for i, j in np.ndindex(together.shape):
            assert together[i, j] == leakage.leak_probability(s[i], 50, gam[j], tau=0.1, statistic=statistic, d=3)
    together = leakage.marginal_leak_probability(50, gam, tau=0.02, d=3, R=1e3, method="quadrature").p
    for j, g in enumerate(gam):
        assert together[j] == leakage.marginal_leak_probability(50, g, tau=0.02, d=3, R=1e3, method="quadrature").p


def test_gaussian_mean_field_over_a_gamma_grid_equals_each_gamma_alone():
    gam = np.array([0.05, 0.5, 2.0, 20.0])
    def gm(gamma):
        return GaussianMean(gamma, tau=0.02, d=4, R=1e3, leak_method="quadrature")

    together = engine.mean_field(gm(gam), USERS, T=40, n0=500).population
    for j, g in enumerate(gam):
        assert np.array_equal(together[j], engine.mean_field(gm(g), USERS, T=40, n0=500).population)
    bound = dynamics.cumulative_error_bound(gm(gam), USERS, T=40, n0=500)
    for j, g in enumerate(gam):
        assert bound[j] == dynamics.cumulative_error_bound(gm(g), USERS, T=40, n0=500)


@pytest.mark.parametrize("module", ["bernoulli", "gaussian"])
def test_generator_seeds_give_the_numbers_of_their_state_and_none_is_fresh(module):
    def run(seed):
        if module == "bernoulli":
            return bernoulli.simulate(1.0, q=0.3, r=0.6, T=4, n0=30, trials=3, seed=seed)
        return gaussian.simulate(2.0, tau=0.02, q=0.3, r=0.6, T=3, n0=20, d=2, R=10.0, trials=2, seed=seed)

    assert_identical_runs(run(np.random.default_rng(5)), run(np.random.default_rng(5)))
    assert_identical_runs(run(np.random.default_rng(5)), run(np.random.PCG64(5)))
    assert not np.array_equal(run(None).sq_error, run(None).sq_error)
    ss = np.random.SeedSequence(8)
    assert_identical_runs(run(ss), run(ss))  # a SeedSequence is read, not consumed
    assert ss.n_children_spawned == 0


def assert_identical_runs(a, b):
    for name in ("population", "sq_error", "leaked", "alive"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


#: Runs of every compiled path (both mechanisms' kernels, the projected and the records draw, every behaviour's
#: step), printed as one digest of their numbers: batches of several levels x trials, which the round loop
#: spreads over numba's threads.
_THREADS_SCRIPT = """
import hashlib
import numpy as np
from perfpriv import behaviour, bernoulli, engine, gaussian
digest = hashlib.sha256()
rr = bernoulli.RandomizedResponse([0.3, 1.0, np.inf])
for users in (behaviour.Memoryless(q=0.3, r=0.6), behaviour.LeakCount(k=2, q=0.4, r=0.5),
              behaviour.Contagion(q=0.3, r=0.6, kappa=0.5), behaviour.BudgetAware(tolerance=[2.0, 5.0], r=0.6),
              behaviour.Heterogeneous(q=[0.1, 0.6], weights=[0.5, 0.5], r=0.6)):
    run = engine.simulate(rr, users, T=12, n0=60, trials=7, seed=5)
    digest.update(run.sq_error.tobytes() + run.population.tobytes())
for draw in ("projected", "records"):
    mech = gaussian.GaussianMean([0.5, 2.0, 8.0], tau=0.05, d=4, R=10.0, draw=draw)
    run = engine.simulate(mech, behaviour.Memoryless(q=0.5, r=0.2), T=6, n0=40, trials=5, seed=6)
    digest.update(run.sq_error.tobytes() + run.population.tobytes())
print(digest.hexdigest())
"""


def test_the_numbers_do_not_depend_on_numbas_thread_count():
    # the round loop spreads a batch over numba's threads, as many as the machine has cores: fresh processes
    # with 1 and 2 threads must give the same numbers, bit for bit
    digests = {}
    for threads in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=threads)
        out = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True, text=True,
                             timeout=600, check=True)
        digests[threads] = out.stdout.strip()
    assert len(digests["1"]) == 64 and digests["1"] == digests["2"], digests
