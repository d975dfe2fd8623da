"""perfpriv.keyed: the keyed counter-based streams, against independent truth.

* the generator against the published SplitMix64 test vectors and a pure-Python
  re-implementation of SplittableRandom's stream construction;
* uniforms, normals and binomials in law (chi-square and KS p-values, moments
  with tolerances of Z standard errors, fixed keys), binomials in every regime
  of the sampler (inversion, BTRS, the p > 1/2 flip, huge n, subnormal p);
* the properties the engine relies on: prefixes, keys and draws that do not
  depend on the batch they are computed in, and seeds (SeedSequence read, never
  modified; Generator/BitGenerator/int/None/sequence; clear TypeErrors).
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
from scipy import special, stats

from perfpriv import keyed as R
from perfpriv import bernoulli, engine, gaussian
from perfpriv.behaviour import Memoryless
from perfpriv._kernels import streams

Z = 4.5
P_MIN = 1e-4  # goodness-of-fit p-values below this reject (fixed keys: these tests are deterministic)
M64 = 2**64


# ------------------------------------------------------------------ generator
def test_mix64_reproduces_the_published_splitmix64_test_vectors():
    # splitmix64 with state 1234567 (Vigna's reference implementation): x_i = state + i * golden
    golden = 0x9E3779B97F4A7C15
    got = [int(streams.mix64(np.uint64((1234567 + (i + 1) * golden) % M64))) for i in range(5)]
    assert got == [6457827717110365317, 3203168211198807973, 9817491932198370423,
                   4593380528125082431, 16408922859458223821]
    assert int(streams.mix64(np.uint64(golden))) == 0xE220A8397B1DCDAF  # splitmix64 from state 0


def _py_mix64(z):
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 % M64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB % M64
    return z ^ (z >> 31)


def _py_mix_gamma(b):
    z = (b ^ (b >> 33)) * 0xFF51AFD7ED558CCD % M64
    z = (z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53 % M64
    z = (z ^ (z >> 33)) | 1
    return z ^ 0xAAAAAAAAAAAAAAAA if bin(z ^ (z >> 1)).count("1") < 24 else z


def test_stream_numbers_are_splittable_random_sequences_of_the_key():
    # x_i = a + (i + 1) gamma(b), u_i = (mix64(x_i) >> 11 + 1/2) / 2^53, in pure Python integers
    key = R.root_key(2024).child("check", 7)
    a, b = int(key.a), int(key.b)
    g = _py_mix_gamma(b)
    bits = [_py_mix64((a + (i + 1) * g) % M64) for i in range(50)]
    assert [int(x) for x in key.bits(np.arange(50))] == bits
    np.testing.assert_array_equal(key.uniform(50), [((x >> 11) + 0.5) / 2.0**53 for x in bits])
    # gamma with few bit transitions is fixed by the alternating pattern
    low = np.uint64(0)
    assert int(R._mix_gamma(low)) == _py_mix_gamma(0)
    gammas = R._mix_gamma(R.root_key(1).child(np.arange(2000)).b)
    assert np.all(gammas % 2 == 1)
    assert all(int(x) == _py_mix_gamma(int(y)) for x, y in zip(gammas[:200], R.root_key(1).child(np.arange(200)).b))


def _py_inverse_fmix(z):
    # the inverse of _py_mix_gamma's first stage (xorshift-33 is an involution on 64 bits)
    z = (z ^ (z >> 33)) * pow(0xC4CEB9FE1A85EC53, -1, 1 << 64) % M64
    z = (z ^ (z >> 33)) * pow(0xFF51AFD7ED558CCD, -1, 1 << 64) % M64
    return z ^ (z >> 33)


def test_fast_paths_of_the_mixers_give_the_reference_words():
    # second key words whose gamma has few bit transitions (the alternating-pattern branch),
    # mixed with ordinary ones, in arrays and as scalars
    few = [_py_inverse_fmix(z) for z in (0xFFFFFFFF00000001, 0x1, 0x00000000FFFFFFFF)]
    words = np.array(few + [5, 6, 2**64 - 1], dtype=np.uint64)
    assert [int(x) for x in R._mix_gamma(words)] == [_py_mix_gamma(int(w)) for w in words]
    assert [int(R._mix_gamma(w)) for w in words] == [_py_mix_gamma(int(w)) for w in words]
    assert int(R._mix_gamma(words[0])) == _py_mix_gamma(int(words[0])) != int(words[0])
    # the one mix64 on scalars
    rng = np.random.default_rng(3)
    for w in [0, 1, M64 - 1] + [int(x) for x in rng.integers(0, 2**63, size=50)]:
        assert int(streams.mix64(np.uint64(w))) == _py_mix64(w)
    # a child from a cached scalar part equals the child from the same part as a one-element array
    k = R.root_key(9).child(np.arange(3))
    for part in (np.int64(4), "noise", np.int64(-1), np.int64(2**62 + 12345), 10**6, np.int64(-(2**63))):
        arr = np.array([R.purpose_id(part) if isinstance(part, str) else int(part)], dtype=np.int64)
        one, many = k.child(part), k.child(arr)
        np.testing.assert_array_equal(one.a, many.a)
        np.testing.assert_array_equal(one.b, many.b)


def test_child_keys_are_a_pure_function_of_parent_and_parts():
    k = R.root_key(5)
    assert int(k.child(3).a) == int(k.child(3).a) and int(k.child(3).b) == int(k.child(3).b)
    assert int(k.child(3).a) != int(k.child(4).a)
    # a vector of parts gives, element by element, the scalar children (batch composition is irrelevant)
    vec = k.child(np.array([9, 0, 3, 3]))
    for j, part in enumerate([9, 0, 3, 3]):
        assert (int(vec.a[j]), int(vec.b[j])) == (int(k.child(part).a), int(k.child(part).b))
    # chained parts equal successive children; names and integers are different parts
    assert int(k.child(1, "noise").a) == int(k.child(1).child("noise").a)
    assert int(k.child("noise").a) != int(k.child("coins").a)
    with pytest.raises(TypeError, match="key part"):
        k.child(1.5)
    with pytest.raises(TypeError, match="key part"):
        k.child(True)
    with pytest.raises(TypeError, match="purpose"):
        R.purpose_id("")


# ------------------------------------------------------------------ uniforms
def test_uniforms_are_uniform_on_the_open_interval_with_53_bits():
    u = R.root_key(11).child("u").uniform(400_000)
    assert 0 < u.min() and u.max() < 1
    frac = u * 2.0**53 - 0.5
    assert np.array_equal(frac, np.round(frac))  # (k + 1/2) / 2^53 exactly
    counts = np.bincount(np.minimum((u * 200).astype(int), 199), minlength=200)
    assert stats.chisquare(counts).pvalue > P_MIN
    assert stats.kstest(u, "uniform").pvalue > P_MIN
    # moments: E[u] = 1/2 (se sqrt(1/12 n)), E[u^2] = 1/3
    assert abs(u.mean() - 0.5) < Z * math.sqrt(1 / 12 / u.size)
    assert abs((u**2).mean() - 1 / 3) < Z * math.sqrt((1 / 5 - 1 / 9) / u.size)


def test_uniforms_are_independent_across_counters():
    u = R.root_key(12).child("pairs").uniform(400_001)
    x, y = u[:-1], u[1:]
    # lag-1 and lag-2 correlations vanish (se 1/sqrt(n)), and pairs fill the unit square evenly
    for lag in (1, 2, 7):
        c = np.corrcoef(u[:-lag], u[lag:])[0, 1]
        assert abs(c) < Z / math.sqrt(u.size)
    cells = np.minimum((x[::2] * 20).astype(int), 19) * 20 + np.minimum((y[::2] * 20).astype(int), 19)
    assert stats.chisquare(np.bincount(cells, minlength=400)).pvalue > P_MIN


@pytest.mark.parametrize("make", [
    lambda k: k.child(np.arange(100_000)),                   # neighbouring trials
    lambda k: k.child(np.arange(100_000), "noise"),          # then a purpose
    lambda k: R.root_key(np.arange(100_000)[:, None].tolist()[0]).child(np.arange(100_000)),  # other roots
])
def test_uniforms_are_independent_across_neighbouring_keys(make):
    keys = make(R.root_key(13))
    u = keys.uniform(2)                     # first two numbers of every key
    first = u[:, 0]
    assert stats.kstest(first, "uniform").pvalue > P_MIN
    for a, b in [(first[:-1], first[1:]), (u[:, 0], u[:, 1])]:
        assert abs(np.corrcoef(a, b)[0, 1]) < Z / math.sqrt(a.size)
    cells = np.minimum((first[:-1:2] * 20).astype(int), 19) * 20 + np.minimum((first[1::2] * 20).astype(int), 19)
    assert stats.chisquare(np.bincount(cells, minlength=400)).pvalue > P_MIN


def test_streams_of_roots_one_bit_apart_are_uncorrelated():
    a = R.root_key(2**40).child(np.arange(50_000)).uniform(1)[:, 0]
    b = R.root_key(2**40 + 1).child(np.arange(50_000)).uniform(1)[:, 0]
    assert abs(np.corrcoef(a, b)[0, 1]) < Z / math.sqrt(a.size)


# ------------------------------------------------------------------- normals
def test_normals_are_the_inverse_normal_cdf_of_the_uniforms_and_standard_normal_in_law():
    key = R.root_key(21).child("z")
    z = key.normal(400_000)
    np.testing.assert_array_equal(z, special.ndtri(key.uniform(400_000)))
    np.testing.assert_array_equal(key.normal_at(np.array([5, 0, 17])), z[[5, 0, 17]])
    assert stats.kstest(z, "norm").pvalue > P_MIN
    n = z.size
    # mean, variance, skewness and excess kurtosis with their standard errors (normal law: 1, 2, 6, 24 / n)
    assert abs(z.mean()) < Z * math.sqrt(1 / n)
    assert abs(z.var() - 1) < Z * math.sqrt(2 / n)
    assert abs(stats.skew(z)) < Z * math.sqrt(6 / n)
    assert abs(stats.kurtosis(z)) < Z * math.sqrt(24 / n)
    # tails: P(|Z| > 3) = 2 Φ(-3)
    p3 = 2 * special.ndtr(-3.0)
    assert abs(np.mean(np.abs(z) > 3) - p3) < Z * math.sqrt(p3 * (1 - p3) / n)
    # the largest normal the 53-bit uniforms reach: about 8.3 (documented)
    assert special.ndtri(0.5 / 2.0**53) == pytest.approx(-8.2924, abs=1e-3)


def test_ragged_and_record_normals_are_prefixes_and_slices_of_each_key_stream():
    keys = R.root_key(22).child(np.arange(4))
    counts = np.array([3, 0, 5, 1])
    ragged = keys.normal_ragged(counts)
    full = keys.normal(5)
    np.testing.assert_array_equal(ragged, np.concatenate([full[j, :c] for j, c in enumerate(counts)]))
    # record r of key j owns counters r*w .. r*w + w - 1
    rec = keys.normal_records(np.array([0, 2, 1, 3]), 3)
    for j, r in enumerate([0, 2, 1, 3]):
        np.testing.assert_array_equal(rec[j], keys[j].normal(3 * r + 3)[3 * r:])
    with pytest.raises(ValueError, match="counts"):
        keys.normal_ragged([1, 2])
    with pytest.raises(ValueError, match="records"):
        keys.normal_records([1, 2], 3)


def test_prefix_property_more_numbers_never_change_the_first_ones():
    key = R.root_key(23).child("prefix")
    np.testing.assert_array_equal(key.uniform(10), key.uniform(1000)[:10])
    np.testing.assert_array_equal(key.normal(10), key.normal(1000)[:10])
    np.testing.assert_array_equal(key.uniform_at(np.arange(990, 1000)), key.uniform(1000)[990:])


# ----------------------------------------------------------------- binomials
def _binomial_gof(draws, n, p):
    """Chi-square p-value of binomial draws against the exact law (scipy's cdf), in bins of expected >= 5.

    Bins are runs of consecutive values; their edges are chosen on the exact cdf so that
    each holds about 1/200 of the mass (single values where the mass is concentrated).
    """
    k_lo, k_hi = int(stats.binom.ppf(1e-12, n, p)), int(stats.binom.isf(1e-12, n, p))
    cuts = np.unique(stats.binom.ppf(np.linspace(0, 1, 201)[1:-1], n, p).astype(np.int64))
    cuts = cuts[(cuts >= k_lo) & (cuts < k_hi)]
    upper = np.r_[cuts, n]                             # bin j holds (upper[j-1], upper[j]]
    cdf = stats.binom.cdf(upper, n, p)
    expected = np.diff(np.r_[0.0, cdf]) * draws.size
    # merge small bins into their right neighbour (the last bin absorbs the right tail)
    bins = np.searchsorted(upper, draws, side="left")
    obs = np.bincount(bins, minlength=upper.size).astype(float)
    merged_obs, merged_exp, o, x = [], [], 0.0, 0.0
    for j in range(upper.size):
        o, x = o + obs[j], x + expected[j]
        if x >= 5 or j == upper.size - 1:
            merged_obs.append(o)
            merged_exp.append(x)
            o = x = 0.0
    return stats.chisquare(merged_obs, np.asarray(merged_exp) * draws.size / sum(merged_exp)).pvalue


REGIMES = [
    (10, 0.1),          # inversion, mean 1
    (1000, 0.001),      # inversion, rare successes
    (40, 0.2499),       # inversion just below the BTRS threshold (mean 9.996)
    (40, 0.25),         # BTRS at the threshold (mean 10)
    (100, 0.3),         # BTRS
    (7, 0.9),           # the p > 1/2 flip, inversion
    (200, 0.85),        # the flip, BTRS
    (1000, 0.5),        # p = 1/2 (no flip)
    (10**6, 0.37),      # large n, BTRS
    (10**9, 2e-9),      # huge n, inversion (mean 2)
    (10**12, 0.2),      # huge n, BTRS (Stirling tails, no lgamma differences)
]


@pytest.mark.parametrize("n,p", REGIMES)
def test_binomial_draws_have_the_exact_binomial_law_in_every_regime(n, p):
    m = 200_000
    draws = R.binomial(R.root_key(31).child("binom", n % 1000, int(p * 1e6)).child(np.arange(m)), n, p)
    assert draws.dtype == np.int64 and draws.min() >= 0 and draws.max() <= n
    mean, var = n * p, n * p * (1 - p)
    assert abs(draws.mean() - mean) < Z * math.sqrt(var / m)
    # variance of the sample variance: (mu4 - var^2)/m with mu4 = 3 var^2 + var (1 - 6 p (1 - p))
    mu4 = 3 * var**2 + var * (1 - 6 * p * (1 - p))
    assert abs(draws.var() - var) < Z * math.sqrt((mu4 - var**2) / m)
    assert _binomial_gof(draws, n, p) > P_MIN


def test_binomial_gof_has_the_power_to_see_a_one_percent_error():
    # the goodness-of-fit check above rejects the law of a 1% wrong p (power check)
    draws = R.binomial(R.root_key(32).child(np.arange(200_000)), 100, 0.303)
    assert _binomial_gof(draws, 100, 0.3) < P_MIN


def test_binomial_edge_cases_and_subnormal_probabilities_without_warnings():
    keys = R.root_key(33).child(np.arange(6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = R.binomial(keys, [0, 10, 10, 10**6, 5, 5], [0.5, 0.0, 1.0, 0.0, 1e-310, 1 - 1e-17])
        assert out.tolist() == [0, 0, 10, 0, 0, 5]
        tiny = R.binomial(R.root_key(34).child(np.arange(1000)), 10**6, 2.2250738585072014e-308)
    assert np.all(tiny == 0)


def test_binomial_draw_depends_on_its_key_n_and_p_only_never_on_the_batch():
    rng = np.random.default_rng(35)
    m = 6000  # more than the BTRS batching threshold (4096) so that its pass width changes
    n = rng.choice([0, 3, 40, 100, 5000, 10**7], size=m)
    p = rng.choice([0.0, 0.01, 0.2, 0.5, 0.8, 1.0], size=m)
    keys = R.root_key(35).child(np.arange(m))
    batch = R.binomial(keys, n, p)
    for j in rng.choice(m, size=40, replace=False):
        assert R.binomial(keys[j], n[j], p[j]) == batch[j]
    # a different batch composition (reversed, and a subset) gives the same draws
    rev = R.binomial(keys[::-1], n[::-1], p[::-1])[::-1]
    np.testing.assert_array_equal(rev, batch)
    sub = np.flatnonzero(n == 40)
    np.testing.assert_array_equal(R.binomial(keys[sub], 40, p[sub]), batch[sub])


def test_binomial_broadcasts_one_key_over_n_and_p():
    k = R.root_key(36).child(np.arange(3))[:, None]
    out = R.binomial(k, np.array([[5, 50]]), 0.5)
    assert out.shape == (3, 2)


def test_stirling_tail_matches_mpmath_log_factorial():
    mpmath.mp.dps = 40
    # every k up to 60 (the table/series switch and the first series terms), then large k
    for k in list(range(61)) + [1000, 10**6, 10**12]:
        exact = mpmath.loggamma(k + 1) - ((k + mpmath.mpf(0.5)) * mpmath.log(k + 1) - (k + 1)
                                          + mpmath.log(2 * mpmath.pi) / 2)
        assert abs(float(R._stirling_tail(k)) - float(exact)) < 1.5e-14, k


# --------------------------------------------------------------------- seeds
def test_a_seed_sequence_is_read_never_modified():
    ss = np.random.SeedSequence(5)
    before = (ss.entropy, ss.spawn_key, ss.n_children_spawned, ss.generate_state(4).tolist())
    k1 = R.root_key(ss)
    k2 = R.root_key(ss)
    assert (int(k1.a), int(k1.b)) == (int(k2.a), int(k2.b))
    assert (ss.entropy, ss.spawn_key, ss.n_children_spawned, ss.generate_state(4).tolist()) == before
    # an int seed is hashed by SeedSequence: the same root as SeedSequence(int)
    assert int(R.root_key(5).a) == int(k1.a)
    assert int(R.root_key([1, 2]).a) == int(R.root_key(np.random.SeedSequence([1, 2])).a)
    assert int(R.root_key((1, 2)).a) == int(R.root_key(np.array([1, 2])).a)


def test_generators_and_bit_generators_are_consumed_once():
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    a, b = R.root_key(g1), R.root_key(g2)
    assert int(a.a) == int(b.a)
    assert int(R.root_key(g1).a) != int(a.a)  # the generator advanced
    bg = np.random.PCG64(3)
    assert int(R.root_key(bg).a) == int(a.a)  # the same two words as its Generator
    assert int(R.root_key(np.random.Philox(3)).a) != int(a.a)


def test_none_means_fresh_entropy():
    assert int(R.root_key(None).a) != int(R.root_key(None).a)


@pytest.mark.parametrize("bad", [True, np.bool_(False), 1.5, np.float64(2.0), "seed", [1.5, 2.0], [True],
                                 object(), np.random.RandomState(0)])
def test_bad_seed_types_raise_a_type_error_naming_the_parameter(bad):
    with pytest.raises(TypeError, match="seed"):
        R.root_key(bad)


def test_negative_seeds_raise_a_value_error():
    with pytest.raises(ValueError, match="seed"):
        R.root_key(-1)
    with pytest.raises(TypeError, match="my_seed"):
        R.root_key([1, -2], name="my_seed")
    with pytest.raises(TypeError, match="legacy numpy RandomState"):
        R.root_key(np.random.RandomState(1))


def test_generator_from_a_key_is_deterministic_and_needs_one_key():
    k = R.root_key(7).child("g")
    assert R.as_generator(k).random() == R.as_generator(k).random()
    # the SeedSequence of the key's four 32-bit words, low word first
    a, b = int(k.a), int(k.b)
    words = [a & 0xFFFFFFFF, a >> 32, b & 0xFFFFFFFF, b >> 32]
    assert R.as_generator(k).random() == np.random.default_rng(np.random.SeedSequence(words)).random()
    assert R.as_seed_sequence(k).entropy == words
    for func in (R.as_generator, R.as_seed_sequence):
        with pytest.raises(ValueError, match="my_seed must be a single key"):
            func(R.root_key(7).child(np.arange(2)), name="my_seed")


# ------------------------------------------------------- cell coordinates
def test_coordinate_keys_identify_grid_values_at_their_resolution():
    assert R.coordinate_key(0.3) == R.coordinate_key(0.1 + 0.2)
    assert R.coordinate_key(np.linspace(0.01, 0.99, 30)[7]) == R.coordinate_key(0.01 + 7 * 0.98 / 29)
    assert len({R.coordinate_key(x) for x in (0.3, 0.3 + 2e-9, -0.3, 0.0, np.inf, -np.inf, 1, "a", "b")}) == 9
    assert R.coordinate_key(np.inf) == 1 and R.coordinate_key(-np.inf) == 2
    # finite values map to 8 and above (reserved keys 1, 2 for inf, -inf) while |x| * 1e9 fits 63 bits
    assert all(R.coordinate_key(x) >= 8 for x in (0.0, -1e-3, 5.0, 4e9, -4e9))
    assert R.coordinate_key(True) == 1  # booleans are their integer
    with pytest.raises(ValueError, match="NaN"):
        R.coordinate_key(float("nan"))
    with pytest.raises(TypeError, match="grid coordinate"):
        R.coordinate_key(object())


def test_cell_keys_depend_on_coordinate_values_not_on_the_grid():
    grid_a = np.linspace(0.01, 0.99, 30)
    grid_b = np.linspace(0.01, 0.99, 99)  # other grid, shares some values
    a = R.cell_key(7, grid_a[0], grid_a[-1])
    b = R.cell_key(7, grid_b[0], grid_b[-1])
    assert (int(a.a), int(a.b)) == (int(b.a), int(b.b))
    assert int(R.cell_key(7, 0.3, 0.6).a) != int(R.cell_key(7, 0.6, 0.3).a)  # order matters
    assert int(R.cell_key(7).a) == int(R.root_key(7).a)
    root = R.root_key(7)
    assert int(R.cell_key(root, 0.3).a) == int(R.cell_key(7, 0.3).a)  # a Key is a root


# ------------------------------------- the binomial sampler, draw by draw, against a reference
def _reference_binomial(key, n, p):
    """Scalar re-implementation of the documented sampler from the key's uniforms.

    p > 1/2: n − Binomial(n, 1 − p). Mean n p < 10: inversion by geometric waiting times
    (G_j = ceil(log U_j / log(1 − p)), count the partial sums <= n). Otherwise Hörmann's BTRS
    (1993) with uniforms 2j, 2j + 1 for attempt j and the exact acceptance test
    log f(k) − log f(m) (f the binomial pmf) from mpmath's loggamma.
    """
    if p > 0.5:
        return n - _reference_binomial(key, n, 1.0 - p)
    if n == 0 or p == 0:
        return 0
    u = lambda j: float(key.uniform_at(np.int64(j)))  # noqa: E731
    if n * p < 10:
        total, count, j = 0.0, 0, 0
        while True:
            total += math.ceil(math.log(u(j)) / math.log1p(-p))
            if total > n:
                return count
            count += 1
            j += 1
    spq = math.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    m = math.floor((n + 1) * p)

    def log_ratio(k):  # log f(k) − log f(m) in 40 digits (lgamma differences cancel at huge n)
        mpmath.mp.dps = 40
        lg = mpmath.loggamma
        return float(lg(m + 1) + lg(n - m + 1) - lg(k + 1) - lg(n - k + 1)
                     + (k - m) * (mpmath.log(p) - mpmath.log1p(-p)))

    j = 0
    while True:
        us_u, v = u(2 * j) - 0.5, u(2 * j + 1)
        j += 1
        us = 0.5 - abs(us_u)
        k = math.floor((2 * a / us + b) * us_u + c)
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        if math.log(v * alpha / (a / (us * us) + b)) <= log_ratio(k):
            return k


@pytest.mark.parametrize("n,p", [(10, 0.1), (40, 0.2499), (40, 0.25), (100, 0.3), (7, 0.9), (200, 0.85),
                                 (1000, 0.5), (10**6, 0.37), (10**12, 0.2), (10**9, 2e-9), (12, 0.97)])
def test_binomial_draws_equal_a_scalar_reference_of_the_sampler_draw_by_draw(n, p):
    # BTRS's squeeze and its acceptance test are checked exactly, not only in law: a
    # slightly wrong acceptance region changes the law by less than any affordable
    # goodness-of-fit test can see, but it changes individual draws
    # large means take more draws: a wrong squeeze there changes about 1 draw in 100
    m = 3000 if n * p > 1e4 else 300
    keys = R.root_key(41).child("ref", n % 997).child(np.arange(m))
    batch = R.binomial(keys, n, p)
    ref = [_reference_binomial(keys[j], n, p) for j in range(m)]
    assert batch.tolist() == ref


# ------------------------------------------------------ a SeedSequence seed is read, never consumed


def test_a_seed_sequence_passed_twice_gives_the_same_run():
    kw = dict(tau=0.02, q=0.3, r=0.6, T=4, n0=10, d=2, R=10.0, trials=2)
    ss = np.random.SeedSequence(5)
    users, run = Memoryless(q=0.3, r=0.6), dict(T=4, n0=10, trials=2)
    agents = lambda seed: engine.simulate_agents(gaussian.GaussianMean(1.0, tau=0.02, d=2, R=10.0),  # noqa: E731
                                                 users, seed=seed, **run)
    runs = [agents(ss) for _ in range(2)]
    fresh = agents(np.random.SeedSequence(5))
    assert np.array_equal(runs[0].sq_error, runs[1].sq_error)
    assert np.array_equal(runs[0].sq_error, fresh.sq_error)
    a, b = (gaussian.simulate(1.0, seed=ss, **kw) for _ in range(2))
    assert np.array_equal(a.sq_error, b.sq_error)
    bkw = dict(q=0.3, r=0.6, T=4, n0=10, trials=2)
    x, y = (bernoulli.simulate(1.0, seed=ss, **bkw) for _ in range(2))
    assert np.array_equal(x.sq_error, y.sq_error)
    x, y = (engine.simulate_agents(bernoulli.RandomizedResponse(1.0), users, seed=ss, **run) for _ in range(2))
    assert np.array_equal(x.sq_error, y.sq_error)
    assert ss.n_children_spawned == 0
    assert R.as_seed_sequence(ss) is not ss


def test_every_mechanism_checks_its_round_batch_with_one_function():
    # draw_round of each mechanism refused nothing: n = -1 gave leaked = -1 (randomized response) or an empty
    # round (the tabulated mechanisms), n = 1e12 numpy's allocation error, keys = 0 an AttributeError
    from perfpriv import regression
    keys = R.root_key(0).child(np.arange(2))
    live = np.ones(2, bool)
    mechanisms = [bernoulli.RandomizedResponse(1.0), gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0),
                  gaussian.GaussianMean(1.0, tau=0.02, d=3, R=10.0, draw="records"),
                  regression.RidgeRelease(0.01, tau=0.02, data=regression.RidgeData(d=3, test_size=20),
                                          table=regression.Tabulation(records=50, datasets=2)).resolved("paper")]
    for mech in mechanisms:
        level = np.array([0.01 if isinstance(mech, regression.RidgeRelease) else 1.0])
        mech.draw_round(np.array([10, 20]), level, keys, live, 1)
        with pytest.raises(ValueError, match=r"^n must hold integers >= 0"):
            mech.draw_round(np.array([-1, 20]), level, keys, live, 1)
        with pytest.raises(TypeError, match=r"^keys must be a perfpriv.keyed.Key"):
            mech.draw_round(np.array([10, 20]), level, 0, live, 1)
        with pytest.raises(TypeError, match=r"^live must be None or an array of booleans"):
            mech.draw_round(np.array([10, 20]), level, keys, "x", 1)
        if not isinstance(mech, bernoulli.RandomizedResponse):       # binomial counts need no record
            with pytest.raises(ValueError, match=r"^n is too large"):
                mech.draw_round(np.array([10**12, 20]), level, keys, live, 1)
    out = bernoulli.RandomizedResponse(1.0).draw_round(np.array([10**12, 20]), np.array([1.0]), keys, live, 1)
    assert 0 < out.leaked[0] < 10**12


def test_the_numbers_at_counters_above_two_to_the_53_are_the_streams_own():
    key = R.root_key(5)
    counters = (2**31 - 1 << 32) + np.arange(4)
    gamma = np.uint64(streams.stream_increment(np.uint64(key.b)))   # a compiled uint64 returns as int
    expected = [int(streams.bits(np.uint64(key.a), gamma, np.uint64(c))) for c in counters]
    assert key.bits(counters).tolist() == expected
    assert len(set(expected)) == 4
