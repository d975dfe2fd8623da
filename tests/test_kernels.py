"""The compiled kernels (perfpriv._kernels) against their definitions and against the round-by-round loop.

* the keyed streams bit for bit against SplitMix64 written out on Python integers;
* the compiled T-round loop of the engine bit for bit against the engine's round-by-round loop (the
  same mechanism and behaviour methods, called from Python), over conventions, grids, schedules,
  per-cell levels, ``record="final"``, no cap, and dying populations.
"""

from __future__ import annotations

import numpy as np
import pytest

from perfpriv import behaviour, bernoulli, engine, gaussian, keyed
from perfpriv._kernels import behaviours, gaussian_mean, mechanisms, samplers, streams
from perfpriv.engine import Policy

MASK = (1 << 64) - 1


def _mix64(z):
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & MASK
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _increment(b):
    z = b
    for mult in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        z = ((z ^ (z >> 33)) * mult) & MASK
    z = (z ^ (z >> 33)) | 1
    if bin(z ^ (z >> 1)).count("1") < 24:
        z ^= 0xAAAAAAAAAAAAAAAA
    return z


WORDS = [0, 1, 2, 0x5555555555555555, 0xAAAAAAAAAAAAAAAA, MASK, 0x9E3779B97F4A7C15, 12345678901234567]


@pytest.mark.parametrize("word", WORDS)
def test_mix64_and_the_stream_increment_are_splitmix64_on_python_integers(word):
    assert int(streams.mix64(np.uint64(word))) == _mix64(word)
    assert int(streams.stream_increment(np.uint64(word))) == _increment(word)


@pytest.mark.parametrize("a,b", [(WORDS[i], WORDS[-1 - i]) for i in range(len(WORDS))])
def test_a_streams_numbers_are_mix64_of_a_plus_counter_times_its_increment(a, b):
    gamma = _increment(b)
    for counter in (0, 1, 7, 2**40):
        x = _mix64((a + (counter + 1) * gamma) & MASK)
        assert int(streams.bits(np.uint64(a), np.uint64(gamma), counter)) == x
        assert streams.uniform(np.uint64(a), np.uint64(gamma), counter) == ((x >> 11) + 0.5) * 2.0**-53


def test_a_child_key_mixes_the_parent_with_both_hashes_of_its_part():
    a, b, w = 0x1234, 0xFEDCBA, 42
    ha, hb = _mix64((w * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & MASK), _mix64(w ^ 0x85157AF5A1D9C1B3)
    a2 = _mix64(a ^ ha)
    b2 = _mix64((b + a2 + hb) & MASK)
    got = streams.child(np.uint64(a), np.uint64(b), np.uint64(w))
    assert (int(got[0]), int(got[1])) == (a2, b2)
    key = keyed.Key(np.uint64(a), np.uint64(b)).child(np.int64(w))
    assert (int(key.a), int(key.b)) == (a2, b2)


def test_the_compiled_normals_are_scipys_ndtri_of_the_uniforms():
    from scipy import special
    key = keyed.root_key(5).child("x")
    u = key.uniform(1000)
    assert np.array_equal(key.normal(1000), special.ndtri(u))


def test_a_binomial_draw_of_the_kernel_is_the_draw_of_the_vectorized_sampler():
    keys = keyed.root_key(9).child(np.arange(500))
    n = np.arange(500) * 37
    p = np.linspace(0.0, 1.0, 500)
    out = np.array([samplers.binomial(keys.a[j], keys.b[j], n[j], p[j]) for j in range(500)])
    assert np.array_equal(out, keyed.binomial(keys, n, p))


def _round_by_round(monkeypatch, *args, **kwargs):
    """The engine's run with the compiled loop switched off (its round-by-round Python loop)."""
    with monkeypatch.context() as m:
        m.setattr(engine, "_compiled_parts", lambda mech, users: None)
        return engine.simulate(*args, **kwargs)


CASES = {
    "grid, paper": (bernoulli.RandomizedResponse([0.1, 1.0, np.inf]), behaviour.Memoryless(q=0.3, r=0.6),
                    dict(T=20, n0=400, trials=5, seed=1)),
    "cells, authors, agnostic": (bernoulli.RandomizedResponse(np.geomspace(0.01, 20, 6), mu=0.7),
                                 behaviour.Memoryless(q=np.array([[0.9], [0.1]]), r=np.array([0.05, 0.5, 0.9]),
                                                      rule="agnostic"),
                                 dict(T=30, n0=50, trials=4, seed=2, conventions="authors")),
    "schedule, final": (bernoulli.RandomizedResponse(engine.Schedule(np.linspace(0.1, 5, 25))),
                        behaviour.Memoryless(q=0.5, r=0.2), dict(T=25, n0=30, trials=3, seed=3, record="final")),
    "per cell, no cap": (bernoulli.RandomizedResponse(engine.PerCell([0.5, 2.0, 8.0])),
                         behaviour.Memoryless(q=[0.2, 0.5, 0.9], r=0.3),
                         dict(T=15, n0=100, trials=3, seed=4, policy=Policy(cap=None))),
    "independent levels": (bernoulli.RandomizedResponse([0.5, 2.0, 8.0]), behaviour.Memoryless(q=[0.3, 0.7], r=0.6),
                           dict(T=10, n0=100, trials=4, seed=1, common_numbers=False)),
    "independent schedules": (bernoulli.RandomizedResponse(engine.Schedule([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])),
                              behaviour.Memoryless(q=0.4, r=0.5), dict(T=3, n0=60, trials=3, seed=2, common_numbers=False)),
    "dying, stop at 1": (bernoulli.RandomizedResponse([20.0], mu=(0.2, 0.4), clip_estimate=True),
                         behaviour.Memoryless(q=0.99, r=0.01),
                         dict(T=40, n0=20, trials=6, seed=5, policy=Policy(stop=1, floor=0))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_compiled_loop_equals_the_round_by_round_loop_bit_for_bit(case, monkeypatch):
    mech, users, kwargs = CASES[case]
    compiled = engine.simulate(mech, users, **kwargs)
    reference = _round_by_round(monkeypatch, mech, users, **kwargs)
    for name in ("population", "sq_error", "leaked", "alive"):
        assert np.array_equal(getattr(compiled, name), getattr(reference, name)), name
    assert compiled.details.keys() == reference.details.keys()
    for name in compiled.details:
        assert np.array_equal(compiled.details[name], reference.details[name]), name


def test_the_dying_case_dies_so_that_the_stop_branch_is_exercised():
    mech, users, kwargs = CASES["dying, stop at 1"]
    run = engine.simulate(mech, users, **kwargs)
    assert not run.alive[..., -1].any() and run.alive[..., 0].all()


def test_every_compiled_kind_names_its_purposes_and_details():
    assert set(mechanisms.PURPOSES) == set(mechanisms.DETAILS) == {mechanisms.RANDOMIZED_RESPONSE,
                                                                   mechanisms.GAUSSIAN_MEAN,
                                                                   mechanisms.GAUSSIAN_RECORDS}
    assert set(behaviours.PURPOSES) == {behaviours.MEMORYLESS, behaviours.LEAK_COUNT, behaviours.HETEROGENEOUS,
                                        behaviours.BUDGET_AWARE, behaviours.CONTAGION}
    kind, params = behaviour.Memoryless(q=[0.1, 0.2], r=0.5).kernel_step()
    assert kind == behaviours.MEMORYLESS and params.tolist() == [[0.1, 0.5, 1.0], [0.2, 0.5, 1.0]]
    kind, params = behaviour.Heterogeneous(q=[[0.9, 0.1], [0.4, 0.3]], weights=[1, 3], r=0.5,
                                           rule="agnostic").kernel_step()
    assert kind == behaviours.HETEROGENEOUS and params.tolist() == [[0.5, 0.0, 2, 0.9, 0.1, 0.25, 0.75],
                                                                    [0.5, 0.0, 2, 0.4, 0.3, 0.25, 0.75]]
    kind, params = behaviour.BudgetAware(tolerance=[2.0, np.inf], r=[0.3, 0.6], q=0.2).kernel_step()
    assert kind == behaviours.BUDGET_AWARE and params.tolist() == [[0.2, 0.3, 1.0, 2, 2.0, np.inf, 0.5, 0.5],
                                                                   [0.2, 0.6, 1.0, 2, 2.0, np.inf, 0.5, 0.5]]
    assert behaviour.LeakCount(k=3, q=0.4, r=0.5).kernel_step()[1].tolist() == [[0.4, 0.5, 1.0, 3.0]]
    assert behaviour.Contagion(q=0.4, r=0.5, kappa=2.0).kernel_step()[1].tolist() == [[0.4, 0.5, 2.0, 1.0]]


# ------------------------------------------------------------------ Algorithm 1's round (gaussian_mean)
def test_the_along_normals_are_the_ragged_normals_of_the_key_head_and_ziggurat_tail():
    keys = keyed.root_key(7).child(np.arange(4))
    counts = np.array([10, 256, 257, 60000])     # the tail holds ziggurat rejections and its idx-0 tail
    ref = keys.normal_ragged(counts)
    offsets = np.cumsum(counts) - counts
    for j in range(4):
        out = np.empty(counts[j])
        gaussian_mean.along_normals(keys.a[j], keys.b[j], counts[j], out)
        assert np.array_equal(out, ref[offsets[j]:offsets[j] + counts[j]])


def test_the_tail_generator_is_numpys_pcg64_bit_for_bit():
    key = keyed.root_key(3)
    a, b = int(key.a), int(key.b)
    gen = keyed._tail_generator(a, b)
    ta, tb = int(streams.TAIL_A), int(streams.TAIL_B)
    state = np.array([_mix64(a ^ ta), _mix64(b ^ tb), _mix64((b + ta) & MASK), _mix64((a + tb) & MASK) | 1],
                     dtype=np.uint64)
    expected = gen.integers(0, 2**64, size=1000, dtype=np.uint64, endpoint=False)
    got = np.array([gaussian_mean._pcg_next(state) for _ in range(1000)], dtype=np.uint64)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 128, 129, 130, 257, 1000, 4097, 20000, 131073])
def test_the_mean_sums_in_numpys_pairwise_order(n):
    x = np.random.default_rng(n).standard_normal(n + 5)
    assert gaussian_mean.pairwise_sum(x, 3, n) == np.add.reduceat(x, [3, 3 + n])[0]


@pytest.mark.parametrize("width", [1, 2, 5, 6, 8, 9, 11, 12, 17, 33])
def test_squared_norms_sum_in_the_order_of_einsum(width):
    rows = np.random.default_rng(width).standard_normal((200, width))
    expected = np.einsum("ij,ij->i", rows, rows)
    assert all(gaussian_mean.sum_squares(rows[i], 0, width) == expected[i] for i in range(200))


GAUSSIAN_CASES = {
    "grid, paper": (gaussian.GaussianMean(np.geomspace(0.2, 20, 7), tau=0.02, d=12, R=10.0),
                    behaviour.Memoryless(q=0.3, r=0.6), dict(T=8, n0=600, trials=3, seed=1)),
    "authors, dying": (gaussian.GaussianMean([0.2, 1.0], tau=0.02, d=12, R=10.0),
                       behaviour.Memoryless(q=0.99, r=0.01), dict(T=20, n0=30, trials=4, seed=3,
                                                                  conventions="authors")),
    "cells, exact, d = 2": (gaussian.GaussianMean([0.3, 1.0, 5.0], tau=0.01, d=2, R=10.0, statistic="exact"),
                            behaviour.Memoryless(q=np.array([[0.1], [0.9]]), r=0.5), dict(T=6, n0=300, trials=2,
                                                                                           seed=2)),
    "d = 1, schedule, final": (gaussian.GaussianMean(engine.Schedule(np.linspace(0.3, 5, 6)), tau=0.1, d=1, R=10.0),
                               behaviour.Memoryless(q=0.3, r=0.6), dict(T=6, n0=400, trials=3, seed=4,
                                                                        record="final")),
    "sigma2, extreme gammas, no cap": (gaussian.GaussianMean([1e-100, 0.5, 1e100], tau=0.02, d=4, R=100.0,
                                                             Sigma=4 * np.eye(4)),
                                       behaviour.Memoryless(q=0.3, r=0.6), dict(T=5, n0=200, trials=2, seed=5,
                                                                                policy=Policy(cap=None))),
}


@pytest.mark.parametrize("case", sorted(GAUSSIAN_CASES))
def test_the_compiled_gaussian_loop_equals_the_round_by_round_loop_bit_for_bit(case, monkeypatch):
    mech, users, kwargs = GAUSSIAN_CASES[case]
    assert mech.kernel_draw() is not None
    compiled = engine.simulate(mech, users, **kwargs)
    reference = _round_by_round(monkeypatch, mech, users, **kwargs)
    for name in ("population", "sq_error", "leaked", "alive"):
        assert np.array_equal(getattr(compiled, name), getattr(reference, name)), name


RECORDS_CASES = {
    "grid, clipped, mu": (gaussian.GaussianMean([0.3, 1.0, 4.0], tau=0.05, d=4, R=2.0, mu=[0.5, 0.0, 0.0, 1.0],
                                                draw="records"),
                          behaviour.Memoryless(q=0.3, r=0.6), dict(T=6, n0=300, trials=2, seed=1)),
    "Sigma, authors": (gaussian.GaussianMean([0.5, 2.0], tau=0.05, d=3, R=3.0,
                                             Sigma=[[2, 0.5, 0], [0.5, 1, 0.2], [0, 0.2, 0.5]]),
                       behaviour.Memoryless(q=0.9, r=0.1), dict(T=8, n0=40, trials=3, seed=2, conventions="authors")),
    "d = 1, final": (gaussian.GaussianMean([0.3, 2.0], tau=0.1, d=1, R=2.0), behaviour.Memoryless(q=0.3, r=0.6),
                     dict(T=5, n0=400, trials=2, seed=3, record="final")),
}


@pytest.mark.parametrize("case", sorted(RECORDS_CASES))
def test_the_compiled_records_loop_equals_the_round_by_round_loop_bit_for_bit(case, monkeypatch):
    mech, users, kwargs = RECORDS_CASES[case]
    assert mech.draw_method == "records" and mech.kernel_draw()[0] == mechanisms.GAUSSIAN_RECORDS
    compiled = engine.simulate(mech, users, **kwargs)
    reference = _round_by_round(monkeypatch, mech, users, **kwargs)
    for name in ("population", "sq_error", "leaked", "alive"):
        assert np.array_equal(getattr(compiled, name), getattr(reference, name)), name


@pytest.mark.parametrize("statistic", ["paper", "exact"])
def test_the_records_round_is_the_membership_test_on_the_keyed_records(statistic):
    # independent truth: the records and the noise from the keys, Λ from leakage.log_likelihood_ratio
    from perfpriv import leakage
    d, R, tau = 4, 2.5, 0.05
    mu = np.array([0.3, 0.0, -0.2, 0.1])
    Sigma = np.diag([1.5, 1.0, 0.7, 1.2])
    mech = gaussian.GaussianMean([0.4, 1.5], tau=tau, d=d, R=R, mu=mu, Sigma=Sigma, statistic=statistic,
                                 draw="records")
    key = keyed.root_key(4).child(1).child(2)
    n = np.array([[150], [60]])
    out = mech.draw_round(n, np.array([[0.4], [1.5]]), keyed.Key(key.a[None, None], key.b[None, None]),
                          np.ones((2, 1), bool), 1)
    Lc = np.linalg.cholesky(Sigma)
    G = key.child("records")[None].normal_ragged(np.array([150 * d])).reshape(150, d)
    Z = _records_clip(G @ Lc.T + mu, R)
    xi = key.child("noise").normal(d)
    for row, (N, g) in enumerate([(150, 0.4), (60, 1.5)]):
        eta = xi * g / np.sqrt(N)
        lam = leakage.log_likelihood_ratio(Z[:N], eta, g, R, statistic=statistic)
        assert out.leaked[row, 0] == np.count_nonzero(lam > tau)
        diff = np.linalg.solve(Lc, Z[:N].mean(axis=0) + eta - mu)
        assert out.sq_error[row, 0] == pytest.approx(diff @ diff, rel=1e-12)


def _records_clip(Z, R):
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    return Z * np.minimum(1.0, R / norms)


class _FakeCache:
    def __init__(self, path):
        self.cache_path, self.flushed = str(path), 0

    def flush(self):
        self.flushed += 1


class _FakeDispatcher:
    def __init__(self, path):
        self._cache = _FakeCache(path)


def test_cached_kernels_are_dropped_when_any_kernel_source_changes(tmp_path):
    from perfpriv import _kernels as kernels

    disp = [_FakeDispatcher(tmp_path), _FakeDispatcher(tmp_path)]
    assert kernels.drop_stale_caches(disp, digest="old") is True          # no stamp yet: drop, then stamp
    assert [d._cache.flushed for d in disp] == [1, 1]
    assert (tmp_path / kernels.STAMP).read_text() == "old"
    assert kernels.drop_stale_caches(disp, digest="old") is False         # same sources: keep the caches
    assert kernels.drop_stale_caches(disp, digest="new") is True          # a source changed: drop them all
    assert [d._cache.flushed for d in disp] == [2, 2]


def test_the_source_digest_covers_every_kernel_file(tmp_path):
    from perfpriv import _kernels as kernels

    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("x = 1\n")
    before = kernels.source_digest(tmp_path)
    (tmp_path / "b.py").write_text("x = 2\n")
    assert kernels.source_digest(tmp_path) != before
    assert kernels.source_digest() == kernels.source_digest()   # the package's own sources, stable


def test_a_batch_of_one_group_runs_serially_with_the_same_numbers():
    from perfpriv._kernels import rounds

    mech, users = bernoulli.RandomizedResponse([0.5, 4.0]), behaviour.Memoryless(q=0.4, r=0.5)
    one = engine.simulate(mech, users, T=15, n0=80, trials=1, seed=9)          # one (cell, trial): serial
    many = engine.simulate(mech, users, T=15, n0=80, trials=3, seed=9)         # three groups: parallel
    assert np.array_equal(one.population[:, 0], many.population[:, 0])
    assert rounds.run_serial.signatures and rounds.run.signatures


# ------------------------------------------------------------------ the typed behaviours' compiled steps
TYPED_CASES = {
    "memory, grid, cap binds": (bernoulli.RandomizedResponse([0.2, 1.0, np.inf]), behaviour.LeakCount(k=3, q=0.6, r=0.7),
                                dict(T=20, n0=150, trials=4, seed=1, policy=Policy(cap=300))),
    "memory, cells, agnostic, gaussian": (gaussian.GaussianMean([0.05, 0.5, 3.0], tau=0.02, d=12, R=10.0),
                                          behaviour.LeakCount(k=2, q=[0.3, 0.9], r=0.5, rule="agnostic"),
                                          dict(T=10, n0=120, trials=3, seed=2)),
    "heterogeneous, cells, schedule": (bernoulli.RandomizedResponse(engine.Schedule(np.linspace(0.2, 4.0, 15))),
                                       behaviour.Heterogeneous(q=[[0.9, 0.2, 0.5], [0.3, 0.3, 0.1]],
                                                               weights=[0.2, 0.5, 0.3], r=[0.45, 0.8]),
                                       dict(T=15, n0=90, trials=3, seed=3, policy=Policy(cap=200))),
    "heterogeneous, dying, floor": (bernoulli.RandomizedResponse([np.inf]),
                                    behaviour.Heterogeneous(q=[1.0, 0.95], weights=[0.3, 0.7], r=0.02),
                                    dict(T=12, n0=40, trials=5, seed=4, policy=Policy(floor=1))),
    "budget, grid, gaussian": (gaussian.GaussianMean([0.6, 2.0], tau=0.02, d=12, R=10.0),
                               behaviour.BudgetAware(tolerance=[1200.0, 3500.0], weights=[0.3, 0.7], r=0.6, q=0.2),
                               dict(T=8, n0=150, trials=3, seed=5, policy=Policy(cap=500))),
    "budget, schedule, independent levels": (
        bernoulli.RandomizedResponse(engine.Schedule([[0.3] * 10, list(np.linspace(0.1, 2.0, 10))])),
        behaviour.BudgetAware(tolerance=[0.7, 2.0, np.inf], weights=[1, 2, 1], r=0.5, q=0.3, rule="agnostic"),
        dict(T=10, n0=200, trials=3, seed=6, policy=Policy(cap=400), common_numbers=False)),
    "budget, per cell, dying, stop": (bernoulli.RandomizedResponse(engine.PerCell([1.0, 3.0])),
                                      behaviour.BudgetAware(tolerance=2.5, r=[0.05, 0.1]),
                                      dict(T=12, n0=60, trials=3, seed=7, policy=Policy(floor=0, stop=2))),
    "contagion, cells, no cap": (bernoulli.RandomizedResponse([0.3, 2.0]),
                                 behaviour.Contagion(q=[0.1, 0.4], r=0.6, kappa=[0.5, 3.0]),
                                 dict(T=25, n0=80, trials=3, seed=8, policy=Policy(cap=None), record="final")),
}


@pytest.mark.parametrize("case", sorted(TYPED_CASES))
def test_a_typed_behaviours_compiled_run_equals_the_round_by_round_loop_bit_for_bit(case, monkeypatch):
    mech, users, kwargs = TYPED_CASES[case]
    assert engine._compiled_parts(mech, users) is not None        # the whole run is one compiled call
    compiled = engine.simulate(mech, users, **kwargs)
    reference = _round_by_round(monkeypatch, mech, users, **kwargs)
    for name in ("population", "sq_error", "leaked", "alive"):
        assert np.array_equal(getattr(compiled, name), getattr(reference, name)), name


def test_the_typed_cases_use_their_bounds_and_stops():
    runs = {case: engine.simulate(mech, users, **kw) for case, (mech, users, kw) in TYPED_CASES.items()}
    assert np.any(runs["memory, grid, cap binds"].population == 300)
    assert np.any(runs["heterogeneous, dying, floor"].population == 1)
    assert np.any(runs["budget, grid, gaussian"].population == 500)
    assert not runs["budget, per cell, dying, stop"].alive[..., -1].any()


# The steps as numpy code on the vectorized samplers of perfpriv.keyed (the steps the compiled ones
# replaced): one round of a batch, the policy included. Independent code of the same definition.
def _chain(key, counts, nsample):
    return keyed.multivariate_hypergeometric(key, counts, nsample)


def _multinomial(key, total, weights):
    out = np.zeros(np.shape(total) + (weights.size,), dtype=np.int64)
    left, mass = np.asarray(total, dtype=np.int64).copy(), 1.0
    for j in range(weights.size - 1):
        p = min(1.0, weights[j] / mass) if mass > 0 else 0.0
        out[..., j] = keyed.binomial(key.child(np.int64(j)), left, p)
        left = left - out[..., j]
        mass -= weights[j]
    out[..., -1] = left
    return out


def _halves(key, counts, nsample):
    S = counts.shape[-1]
    width = 1 << max(S - 1, 0).bit_length()
    padded = np.zeros(counts.shape[:-1] + (width,), dtype=np.int64)
    padded[..., :S] = counts
    take, depth, lead = np.asarray(nsample, dtype=np.int64)[..., None], 0, counts.shape[:-1]
    while width > 1:
        half, nodes = width // 2, padded.shape[-1] // width
        blocks = padded.reshape(lead + (nodes, width))
        left, right = blocks[..., :half].sum(axis=-1), blocks[..., half:].sum(axis=-1)
        node_keys = keyed.Key(key.a[..., None], key.b[..., None]).child(np.int64(depth)).child(np.arange(nodes))
        drawn = keyed.hypergeometric(node_keys, left, right, take)
        to_left = np.where(right == 0, take, np.where((left > 0) & (take > 0), drawn, 0))
        take = np.stack([to_left, take - to_left], axis=-1).reshape(lead + (2 * nodes,))
        width, depth = half, depth + 1
    return take[..., :S]


def _cap_floor(new, recruits, keys, cap, floor, weights, fresh_slots):
    if cap is not None:
        excess = np.maximum(new.sum(axis=-1) - cap, 0)
        new = new - _chain(keys.child("cap"), recruits, np.minimum(excess, recruits.sum(axis=-1)))
    short = np.maximum(floor - new.sum(axis=-1), 0)
    fresh = _multinomial(keys.child("floor"), short, weights)
    for j, slot in enumerate(fresh_slots):
        new[..., slot] += fresh[..., j]
    return new


def _numpy_step(users, state, leaked, keys, t, cost, cap, floor):
    pool = lambda n: n - leaked if users.rule == "leak" else n  # noqa: E731
    if isinstance(users, behaviour.LeakCount):
        n = state.sum(axis=-1)
        by_type = _chain(keys.child("split"), state, leaked)
        leave = keyed.binomial(keys.child("leave"), by_type[..., -1], users.q)
        join = keyed.binomial(keys.child("join"), pool(n), users.r)
        new = state - by_type
        new[..., 1:] += by_type[..., :-1]
        new[..., -1] += by_type[..., -1] - leave
        new[..., 0] += join
        recruits = np.zeros_like(new)
        recruits[..., 0] = join
        return _cap_floor(new, recruits, keys, cap, floor, np.ones(1), (0,))
    if isinstance(users, behaviour.Heterogeneous):
        n = state.sum(axis=-1)
        by_class = _chain(keys.child("split"), state, leaked)
        leave = np.stack([keyed.binomial(keys.child("leave") if j == 0 else keys.child("leave").child(np.int64(j)),
                                           by_class[..., j], users.q[j]) for j in range(users.types)], axis=-1)
        join = keyed.binomial(keys.child("join"), pool(n), users.r)
        recruits = _multinomial(keys.child("classes"), join, users.weights)
        return _cap_floor(state - leave + recruits, recruits, keys, cap, floor, users.weights, range(users.types))
    if isinstance(users, behaviour.Contagion):
        n = state[..., 0]
        frac = np.where(state[..., 2] > 0, state[..., 1] / np.maximum(state[..., 2], 1), 0.0)
        leave = keyed.binomial(keys.child("leave"), leaked, np.minimum(1.0, users.q + users.kappa * frac))
        nxt = n - leave + keyed.binomial(keys.child("join"), pool(n), users.r)
        nxt = np.maximum(np.minimum(nxt, cap if cap is not None else nxt), floor)
        return np.stack([nxt, leave, n], axis=-1)
    counts, C, S = state[..., :-1, :], users.classes, state.shape[-1]           # BudgetAware
    n = counts.sum(axis=(-1, -2)).astype(np.int64)
    spent = state[..., -1, :] + np.where(np.arange(S) < t, cost, 0.0)
    gone = keyed.binomial(keys.child("leave"), leaked, users.q)
    new = counts.copy()
    flat = counts[..., :t].reshape(counts.shape[:-2] + (-1,)).astype(np.int64)
    new[..., :t] -= _halves(keys.child("split"), flat, gone).reshape(counts.shape[:-1] + (t,))
    join = keyed.binomial(keys.child("join"), pool(n), users.r)
    recruits = _multinomial(keys.child("classes"), join, users.weights)
    new = np.where(spent[..., None, :] > users.tolerance[:, None], 0.0, new)
    if cap is not None:
        room = cap - new.sum(axis=(-1, -2)).astype(np.int64)
        excess = np.maximum(recruits.sum(axis=-1) - room, 0)
        recruits = recruits - _chain(keys.child("cap"), recruits, np.minimum(excess, recruits.sum(axis=-1)))
    new[..., t] += recruits
    short = np.maximum(floor - new.sum(axis=(-1, -2)), 0).astype(np.int64)
    new[..., t] += _multinomial(keys.child("floor"), short, users.weights)
    return np.concatenate([new, spent[..., None, :]], axis=-2)


STEP_CASES = {
    "memory": behaviour.LeakCount(k=4, q=0.7, r=0.4),
    "memory, agnostic": behaviour.LeakCount(k=2, q=0.3, r=0.6, rule="agnostic"),
    "heterogeneous": behaviour.Heterogeneous(q=[0.9, 0.2, 0.5, 0.6, 0.1], weights=[0.2, 0.3, 0.1, 0.3, 0.1], r=0.45),
    "budget": behaviour.BudgetAware(tolerance=[2.0, 5.0, np.inf], weights=[1, 2, 1], r=0.5, q=0.3),
    "budget, agnostic": behaviour.BudgetAware(tolerance=[1.5, 3.0], r=0.7, q=0.9, rule="agnostic"),
    "contagion": behaviour.Contagion(q=0.2, r=0.5, kappa=2.0),
}


@pytest.mark.parametrize("case", sorted(STEP_CASES))
@pytest.mark.parametrize("cap, floor", [(None, 0), (260, 1), (120, 5)])
def test_a_compiled_step_equals_the_step_on_the_vectorized_samplers_bit_for_bit(case, cap, floor):
    users = STEP_CASES[case]
    m, T, t = 600, 6, 4
    rng = np.random.default_rng(len(case) + 7 * floor)
    if isinstance(users, behaviour.BudgetAware):
        state = np.zeros((m, users.classes + 1, T + 1))
        state[:, :-1, :t] = rng.integers(0, 30, size=(m, users.classes, t))
        state[:, -1, :t] = np.arange(t, 0, -1) * 0.75
        n = state[:, :-1].sum(axis=(-1, -2)).astype(np.int64)
    else:
        state = rng.integers(0, 60, size=(m, 3 if isinstance(users, behaviour.Contagion) else users.types))
        n = state[:, 0] if isinstance(users, behaviour.Contagion) else state.sum(axis=-1)
    leaked = rng.integers(0, n + 1)
    keys = keyed.root_key(11).child(np.arange(m))
    context = dict(t=t, T=T, cost=0.75, cap=cap, floor=floor)
    got = users.step(state, leaked, keys, context)
    expected = _numpy_step(users, state, leaked, keys, t, 0.75, cap, floor)
    assert got.dtype == state.dtype and np.array_equal(got, expected)


# ------------------------------------------------------------------ the compiled typed runs in law
LAW_CASES = {
    "memory": behaviour.LeakCount(k=3, q=0.5, r=0.6),
    "heterogeneous": behaviour.Heterogeneous(q=[0.9, 0.3, 0.05], weights=[0.3, 0.3, 0.4], r=0.6, rule="agnostic"),
    "budget": behaviour.BudgetAware(tolerance=[0.7, 2.0], weights=[0.3, 0.7], r=0.6, q=0.2),
    "contagion": behaviour.Contagion(q=0.2, r=0.8, kappa=1.0),
}


# trials of the agent reference: 500, except the heterogeneous users, whose reference is the slowest (one class
# draw per candidate recruit; at the cap from round 4 on) and whose comparison has power to spare. With 500 its
# last-round tolerance 4.5 se was 0.16 of a 5% change of the leaks (se 0.51 on a mean of 287; the population is
# pinned at the cap, se 0); with 150 it is 0.28 (se 0.90: 4.5 se = 4.0 < 0.05 x 287 = 14.4), and 0.28-0.31 with
# seeds (1, 2), (3, 4), (5, 6), largest |z| over rounds 0.9-2.3 there. The test still sees a 5% (indeed a 1.5%)
# change; the in-test power assertion below checks it for the committed seeds.
AGENT_TRIALS = {"heterogeneous": 150}


@pytest.mark.parametrize("case", sorted(LAW_CASES))
def test_a_typed_behaviours_compiled_run_agrees_in_law_with_the_agent_reference(case):
    # independent truth: every user one at a time (engine.simulate_agents); means within 4.5 se per round
    users, kw, bounds = LAW_CASES[case], dict(T=6, n0=150), dict(cap=500, floor=1)
    agents = engine.simulate_agents(bernoulli.RandomizedResponse(0.3), users, trials=AGENT_TRIALS.get(case, 500),
                                    seed=41, policy=Policy(**bounds), **kw)
    run = engine.simulate(bernoulli.RandomizedResponse(0.3), users, trials=4000, seed=42, policy=Policy(**bounds),
                          **kw)
    for a, b in ((agents.population, run.population), (agents.leaked, run.leaked)):
        a, b = a.astype(float), b.astype(float)
        se = np.sqrt(a.var(axis=0, ddof=1) / a.shape[0] + b.var(axis=0, ddof=1) / b.shape[0])
        assert 4.5 * se[-1] < 0.05 * b.mean(axis=0)[-1]          # the test sees a 5% change
        assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) <= 4.5 * se)
