"""One randomness scheme for the whole library: keyed, counter-based streams.

Every random number perfpriv's simulators draw is a pure function of a
*key* and a *counter*:

    key     = root seed -> cell coordinates -> trial -> round -> purpose
    number  = F(key, counter)

so that any piece of a run -- one (cell, trial, round), one purpose within
it -- can be regenerated alone, runs that differ only in the privacy level
share their random numbers round by round (common random numbers: the level
is *not* part of the key), and a batched or GPU backend can reproduce the
same draws by evaluating the same function on its own arrays. Nothing
depends on the order in which draws are made, on how many trials or levels
are simulated together, on ``n_jobs`` or on the backend.

The construction
----------------
A key is a pair of 64-bit words ``(a, b)`` (:class:`Key`, which holds whole
arrays of keys at once). The root key comes from
:class:`numpy.random.SeedSequence` (anything :func:`numpy.random.default_rng`
accepts; :func:`root_key`); a child key mixes its parent with one more
integer or name (:meth:`Key.child`) through the SplitMix64 finalizer
:func:`mix64`. The numbers of key ``(a, b)`` are the SplitMix64 sequence
with seed ``a`` and an odd increment ("gamma") derived from ``b``:

    x_i = a + (i + 1) * gamma(b)   (mod 2^64),      u_i = mix64(x_i),

as in Java's ``SplittableRandom`` (Steele, Lea and Flood, "Fast splittable
pseudorandom number generators", OOPSLA 2014). A stream-specific gamma
makes two streams' sequences unable to overlap as shifted copies. The
64-bit outputs become uniforms on the open interval (0, 1) with 53 random
bits (:meth:`Key.uniform`), normals by the inverse normal cdf
(:func:`scipy.special.ndtri`, :meth:`Key.normal`; monotone in the uniform,
which strengthens common random numbers) and binomials by an exact
vectorized sampler (:func:`binomial`).

Exactness
---------
Every sampler here is exact in law up to floating point: uniforms have 53
random bits (so normals reach about 8.3 in magnitude: tails below 2^-53 are
cut, as with any double-precision generator); binomials
use inversion of geometric waiting times when the mean is small and
Hörmann's BTRS rejection sampler otherwise, with the exact acceptance test.

Seeds
-----
``seed=None`` means fresh entropy from the operating system (a run that
cannot be reproduced), in every function of perfpriv. An ``int``, a
:class:`~numpy.random.SeedSequence` (never modified) or a sequence of ints
is hashed by ``SeedSequence``; a :class:`~numpy.random.Generator` or bit
generator is consumed once (two 64-bit words are drawn from it).

References
----------
G. L. Steele Jr., D. Lea, C. H. Flood (2014), Fast splittable pseudorandom
number generators, OOPSLA. W. Hörmann (1993), The generation of binomial
random variates, J. Statist. Comput. Simul. 46, 101-110 (algorithm BTRS).
"""

from __future__ import annotations

import functools
import hashlib
import math
import numbers
from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "Key",
    "root_key",
    "as_seed_sequence",
    "cell_key",
    "coordinate_key",
    "purpose_id",
    "mix64",
    "binomial",
    "binomials",
    "hypergeometric",
    "multivariate_hypergeometric",
    "generator",
    "SEED_TYPES_TEXT",
]

_U64 = np.uint64
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_C_A = _U64(0x632BE59BD9B4E019)
_C_B = _U64(0x85157AF5A1D9C1B3)
_S30, _S27, _S31, _S33, _S11 = (_U64(s) for s in (30, 27, 31, 33, 11))
_TWO53 = 2.0 ** -53

#: What a ``seed`` argument accepts, for error messages.
SEED_TYPES_TEXT = "None, an int >= 0, a sequence of ints, a numpy SeedSequence, Generator or BitGenerator"


def mix64(z):
    """SplitMix64's finalizer: a bijective avalanche mix of 64-bit words.

    Parameters
    ----------
    z : numpy.ndarray of uint64 (or a numpy uint64)

    Returns
    -------
    numpy.ndarray of uint64
        ``z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27;
        z *= 0x94D049BB133111EB; z ^= z >> 31`` (arithmetic mod 2^64).

    Examples
    --------
    >>> int(mix64(np.uint64(0)))
    0
    >>> hex(int(mix64(np.uint64(1))))
    '0x5692161d100b05e5'
    """
    z = np.array(z, dtype=_U64, copy=True)
    with np.errstate(over="ignore"):
        z ^= z >> _S30
        z *= _M1
        z ^= z >> _S27
        z *= _M2
        z ^= z >> _S31
    return z


def _mix_fresh(z):
    """:func:`mix64` in place on a uint64 ndarray the caller owns (a fresh temporary): same words, no copy.

    Integer ufuncs on arrays wrap silently, so no ``errstate`` is needed.
    """
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


@functools.lru_cache(maxsize=4096)
def _part_hashes(word: int):
    """The two hashes :meth:`Key.child` mixes in for one scalar part word (cached: they are constants)."""
    # on Python ints: a miss costs ~2 µs instead of ~15 µs with numpy scalars, and a run longer than the
    # cache misses once per round; the same words as mix64(w * _GOLDEN + _C_A) and mix64(w ^ _C_B) mod 2^64
    ha = np.asarray(_U64(_mix64_int((word * _GOLDEN_INT + _C_A_INT) & _MASK64)))
    hb = np.asarray(_U64(_mix64_int(word ^ _C_B_INT)))
    ha.flags.writeable = False
    hb.flags.writeable = False
    return ha, hb


def _mix_gamma(b):
    """Odd increment of a stream from its second key word (SplittableRandom's mixGamma).

    An increment with few 01/10 bit transitions mixes badly; those are
    flipped by xoring an alternating pattern, as SplittableRandom does.
    """
    z = np.array(b, dtype=_U64, copy=True)   # a fresh array: in-place integer ufuncs wrap silently
    z ^= z >> _S33
    z *= _G1
    z ^= z >> _S33
    z *= _G2
    z ^= z >> _S33
    z |= _ONE
    few = _popcount(z ^ (z >> _ONE)) < 24
    if few.any():
        z[few] ^= _ALTERNATING
    return z


_G1, _G2 = _U64(0xFF51AFD7ED558CCD), _U64(0xC4CEB9FE1A85EC53)
_ONE, _ALTERNATING = _U64(1), _U64(0xAAAAAAAAAAAAAAAA)


def _popcount(z):
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(z)
    z = z - ((z >> _U64(1)) & _U64(0x5555555555555555))  # pragma: no cover - numpy < 2
    z = (z & _U64(0x3333333333333333)) + ((z >> _U64(2)) & _U64(0x3333333333333333))
    z = (z + (z >> _U64(4))) & _U64(0x0F0F0F0F0F0F0F0F)
    with np.errstate(over="ignore"):
        return (z * _U64(0x0101010101010101)) >> _U64(56)


def _bits(a, gamma, counters):
    """mix64(a + (counter + 1) * gamma): the numbers of streams (a, gamma) at ``counters``."""
    c = np.asarray(counters, dtype=np.int64).view(_U64)
    with np.errstate(over="ignore"):
        x = c + _U64(1)
        try:
            x *= gamma                     # in place on the fresh array: the same words, one temporary less
        except ValueError:                 # gamma broadcasts x to a larger shape
            x = x * gamma
        x += a                             # a has gamma's shape (the key's two words)
        # mix64, in place on the fresh array
        x ^= x >> _S30
        x *= _M1
        x ^= x >> _S27
        x *= _M2
        x ^= x >> _S31
    return x


def _uniform(a, gamma, counters):
    """Uniforms on (0, 1) with 53 random bits: (top 53 bits + 1/2) / 2^53."""
    x = _bits(a, gamma, counters)
    x >>= _S11
    u = x.astype(np.float64)
    u += 0.5
    u *= _TWO53
    return u


def _ndtri_fresh(u):
    """Normals from uniforms ``u`` (:func:`scipy.special.ndtri`), in place when ``u`` is a fresh array."""
    if isinstance(u, np.ndarray) and u.ndim:
        return special.ndtri(u, out=u)
    return special.ndtri(u)


@functools.lru_cache(maxsize=1024)
def purpose_id(name: str) -> int:
    """A stable 63-bit integer for a stream purpose such as ``"noise"``.

    Examples
    --------
    >>> purpose_id("noise") == purpose_id("noise") != purpose_id("coins")
    True
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"a stream purpose must be a non-empty string; got {name!r:.60}")
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little") >> 1


def _part_words(part):
    """A child-key part (int, array of ints, or purpose name) as uint64 words."""
    if isinstance(part, str):
        return np.asarray(purpose_id(part), dtype=_U64)
    arr = np.asarray(part)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"a key part must be an integer, an array of integers or a purpose name; "
                        f"got {part!r:.60}")
    return arr.astype(np.int64).view(_U64) if arr.dtype != _U64 else arr


class Key:
    """An array of stream keys (two 64-bit words each) and the numbers they name.

    Parameters
    ----------
    a, b : array_like of uint64
        The two words of each key (same shape).

    Notes
    -----
    Keys are values: :meth:`child` returns new keys and nothing is ever
    consumed, so the same key always gives the same numbers.

    Examples
    --------
    >>> k = root_key(7).child("demo")
    >>> u = k.uniform(3)
    >>> u.shape, bool(np.all((0 < u) & (u < 1)))
    ((3,), True)
    >>> bool(np.array_equal(u, root_key(7).child("demo").uniform(5)[:3]))   # prefix property
    True
    """

    __slots__ = ("a", "b")

    def __init__(self, a, b):
        a = np.asarray(a, dtype=_U64)
        b = np.asarray(b, dtype=_U64)
        if a.shape != b.shape:
            raise ValueError(f"key words must have one shape; got {a.shape} and {b.shape}")
        self.a, self.b = a, b

    @property
    def shape(self) -> tuple:
        """Shape of the key array."""
        return self.a.shape

    def __repr__(self) -> str:
        if self.a.ndim == 0:
            return f"Key(0x{int(self.a):016x}, 0x{int(self.b):016x})"
        return f"Key(shape={self.shape})"

    def __getitem__(self, index) -> "Key":
        return Key(self.a[index], self.b[index])

    def child(self, *parts) -> "Key":
        """Keys one level down: this key mixed with each part in turn.

        Parameters
        ----------
        *parts : int, array of ints, or str
            Integers (cell coordinates, trial or round numbers; arrays
            broadcast against the key array) or purpose names.

        Returns
        -------
        Key
            Shape: the broadcast of this key's shape and the parts' shapes.
        """
        a, b = self.a, self.b
        with np.errstate(over="ignore"):
            for part in parts:
                w = _part_words(part)
                if w.ndim == 0:     # a purpose name or one integer: its two hashes are cached
                    ha, hb = _part_hashes(int(w))
                else:
                    ha = _mix_fresh(w * _GOLDEN + _C_A)
                    hb = _mix_fresh(w ^ _C_B)
                a2 = _mix_fresh(np.asarray(a ^ ha))
                b = _mix_fresh(np.asarray(b + a2 + hb))
                a = a2
        return Key(a, b)

    # ------------------------------------------------------------- numbers
    def bits(self, counters):
        """The 64-bit outputs at ``counters`` (broadcast against the keys)."""
        return _bits(self.a, _mix_gamma(self.b), counters)

    def uniform_at(self, counters):
        """Uniforms on (0, 1) (53 random bits) at ``counters``, broadcast against the keys."""
        return _uniform(self.a, _mix_gamma(self.b), counters)

    def normal_at(self, counters):
        """Standard normals at ``counters``: the inverse normal cdf of :meth:`uniform_at`."""
        return _ndtri_fresh(self.uniform_at(counters))

    def uniform(self, size: int):
        """The first ``size`` uniforms of every key: shape ``self.shape + (size,)``."""
        return Key(self.a[..., None], self.b[..., None]).uniform_at(np.arange(int(size)))

    def normal(self, size: int):
        """The first ``size`` standard normals of every key: shape ``self.shape + (size,)``."""
        return _ndtri_fresh(self.uniform(size))

    def normal_ragged(self, counts):
        """Normals 0 .. counts[j] − 1 of key j (1-D keys), concatenated.

        The first :data:`HEAD` numbers of a stream are hash-based (computed
        for all keys at once); the rest of a longer stream are the normals of
        a PCG64 generator whose 128-bit state and increment are the key's
        words, mixed (:func:`_tail_generator`: numpy's ziggurat, about twice
        as fast for long streams). Both depend on the key and the position
        only, so a stream's first k numbers are the same however many are
        drawn (the prefix property).

        Parameters
        ----------
        counts : array_like of int, shape ``self.shape``
            How many numbers of each key (the first ones: a prefix of its stream).

        Returns
        -------
        numpy.ndarray, shape (sum(counts),)
        """
        counts = np.asarray(counts, dtype=np.int64).reshape(-1)
        a, b = self.a.reshape(-1), self.b.reshape(-1)
        if counts.shape != a.shape:
            raise ValueError(f"counts must have one entry per key; got {counts.shape} for {a.shape} keys")
        head = np.minimum(counts, HEAD)
        owner = np.repeat(np.arange(a.size), head)
        h_offsets = np.cumsum(head) - head
        idx = np.arange(int(head.sum()), dtype=np.int64) - np.repeat(h_offsets, head)
        head_vals = _ndtri_fresh(_uniform(a[owner], _mix_gamma(b)[owner], idx))
        if not np.any(counts > HEAD):
            return head_vals
        out = np.empty(int(counts.sum()))
        offsets = np.cumsum(counts) - counts
        pos = np.repeat(offsets, head) + idx
        out[pos] = head_vals
        gen = None
        for j in np.flatnonzero(counts > HEAD):
            gen = _tail_generator(int(a[j]), int(b[j]), gen)
            # straight into its slice (out=): the same numbers as a fresh array, without the copy and its
            # page faults (which cost as much as the draw itself for long streams)
            gen.standard_normal(out=out[offsets[j] + HEAD:offsets[j] + counts[j]])
        return out

    def normal_records(self, records, width: int):
        """``width`` normals for each (key, record) pair: record ``records[j]`` of key j's stream.

        Record r owns the counters ``r·width .. r·width + width − 1``.

        Parameters
        ----------
        records : array_like of int, shape ``self.shape`` (1-D)
            Record index of each key element.
        width : int
            Numbers per record.

        Returns
        -------
        numpy.ndarray, shape (len(records), width)
        """
        width = int(width)
        rec = np.asarray(records, dtype=np.int64).reshape(-1)
        a = self.a.reshape(-1)
        if a.size != rec.size:
            raise ValueError(f"records must have one entry per key; got {rec.size} for {a.size} keys")
        counters = rec[:, None] * width + np.arange(width, dtype=np.int64)[None, :]
        gamma = _mix_gamma(self.b.reshape(-1))
        return _ndtri_fresh(_uniform(a[:, None], gamma[:, None], counters))


#: Numbers of a stream computed by the counter hash; beyond, :meth:`Key.normal_ragged` draws from a
#: keyed PCG64 generator (numpy's ziggurat).
HEAD = 256

_TAIL_A = _U64(0xD1B54A32D192ED03)
_TAIL_B = _U64(0xABC98388FB8FAC03)


_MASK64 = (1 << 64) - 1
_GOLDEN_INT, _C_A_INT, _C_B_INT = int(_GOLDEN), int(_C_A), int(_C_B)
_TAIL_A_INT, _TAIL_B_INT = int(_TAIL_A), int(_TAIL_B)
_M1_INT, _M2_INT = int(_M1), int(_M2)


def _mix64_int(z: int) -> int:
    """:func:`mix64` of one word held as a Python int in [0, 2^64)."""
    z ^= z >> 30
    z = (z * _M1_INT) & _MASK64
    z ^= z >> 27
    z = (z * _M2_INT) & _MASK64
    return z ^ (z >> 31)


def _tail_generator(a: int, b: int, gen=None) -> np.random.Generator:
    """A numpy Generator whose PCG64 state is set from the key words (a, b), mixed."""
    # mix64 on Python ints (the same words as on numpy uint64, without per-call array overhead)
    s_hi, s_lo = _mix64_int(a ^ _TAIL_A_INT), _mix64_int(b ^ _TAIL_B_INT)
    i_hi, i_lo = _mix64_int((b + _TAIL_A_INT) & _MASK64), _mix64_int((a + _TAIL_B_INT) & _MASK64)
    if gen is None:
        gen = np.random.Generator(np.random.PCG64(0))
    gen.bit_generator.state = {"bit_generator": "PCG64",
                               "state": {"state": (s_hi << 64) | s_lo, "inc": ((i_hi << 64) | i_lo) | 1},
                               "has_uint32": 0, "uinteger": 0}
    return gen


# ------------------------------------------------------------------ seeds
def _is_seed_sequence(x):
    return isinstance(x, np.random.SeedSequence)


def root_key(seed: Any = None, *, name: str = "seed") -> Key:
    """The root :class:`Key` of a ``seed`` (anything :func:`numpy.random.default_rng` accepts).

    Parameters
    ----------
    seed : None, int, sequence of int, SeedSequence, Generator, BitGenerator or Key
        ``None``: fresh entropy; a (scalar) Key is returned as is. A ``SeedSequence`` is read, never
        modified (its ``generate_state`` is used, not ``spawn``). A
        ``Generator`` or bit generator is consumed once.
    name : str
        Parameter name for error messages.

    Returns
    -------
    Key
        A scalar key.

    Raises
    ------
    TypeError, ValueError
        For anything else (booleans, floats, negative integers, legacy
        ``RandomState``), naming ``name``.

    Examples
    --------
    >>> root_key(1).uniform(2).round(6).tolist() == root_key(1).uniform(2).round(6).tolist()
    True
    >>> ss = np.random.SeedSequence(5)
    >>> bool(np.array_equal(root_key(ss).uniform(4), root_key(ss).uniform(4)))
    True
    """
    if isinstance(seed, Key):
        if seed.shape != ():
            raise ValueError(f"{name} must be a single key here; got keys of shape {seed.shape}")
        return seed
    if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
        gen = seed if isinstance(seed, np.random.Generator) else np.random.Generator(seed)
        words = gen.integers(0, 2**64, size=2, dtype=np.uint64, endpoint=False)
        return Key(words[0], words[1])
    ss = as_seed_sequence(seed, name=name)
    words = ss.generate_state(2, np.uint64)
    return Key(words[0], words[1])


def as_seed_sequence(seed: Any = None, *, name: str = "seed") -> np.random.SeedSequence:
    """A :class:`~numpy.random.SeedSequence` for ``seed`` (not a Generator), checked.

    A SeedSequence that is given is returned as a copy in the same state (same entropy,
    spawn key and count of children spawned), so that a caller may spawn from the result
    without changing the caller's object: passing one SeedSequence twice gives the same
    randomness twice.
    """
    if _is_seed_sequence(seed):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size,
                                      n_children_spawned=seed.n_children_spawned)
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"{name} must be {SEED_TYPES_TEXT}; got {seed!r}")
    if isinstance(seed, np.random.RandomState):
        raise TypeError(f"{name} must be {SEED_TYPES_TEXT}; got a legacy numpy RandomState "
                        "(use numpy.random.default_rng)")
    if isinstance(seed, numbers.Integral):
        if int(seed) < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {int(seed)}")
        return np.random.SeedSequence(int(seed))
    if isinstance(seed, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(seed)
        except ValueError:   # ragged nested sequences
            raise TypeError(f"{name} must be {SEED_TYPES_TEXT}; got {seed!r:.60}") from None
        if arr.size and (arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 0)):
            raise TypeError(f"{name} must be {SEED_TYPES_TEXT}; got {seed!r:.60}")
        return np.random.SeedSequence([int(v) for v in arr.reshape(-1)])
    raise TypeError(f"{name} must be {SEED_TYPES_TEXT}; got {seed!r:.60}")


def generator(key: Key) -> np.random.Generator:
    """A numpy Generator seeded from one scalar :class:`Key` (for draws outside the engine)."""
    if key.shape != ():
        raise ValueError("generator() needs a single key")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(key.a) & 0xFFFFFFFF,
                                                                         int(key.a) >> 32,
                                                                         int(key.b) & 0xFFFFFFFF,
                                                                         int(key.b) >> 32])))


#: Resolution at which coordinate values are identified: two grids whose
#: values agree to 1e-9 (e.g. the same point of two ``linspace`` calls) give a
#: cell the same key.
KEY_RESOLUTION = 1e9


def coordinate_key(value: Any) -> int:
    """Non-negative integer that identifies a grid coordinate value.

    Floats are rounded to 1e-9 (so that equal grid points computed by
    different ``linspace`` calls agree) and mapped to non-negative integers
    (zig-zag for negatives; ``inf`` and ``-inf`` get reserved keys);
    strings are read as bytes.

    Examples
    --------
    >>> coordinate_key(0.3) == coordinate_key(0.1 + 0.2)
    True
    >>> coordinate_key(0.3) == coordinate_key(0.31)
    False
    """
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, str):
        return int.from_bytes(hashlib.sha256(value.encode()).digest()[:8], "little") | (1 << 63)
    if not isinstance(value, numbers.Real):
        raise TypeError(f"value (a grid coordinate) must be a real number, a boolean or a string; got {value!r:.80}")
    x = float(value)
    if math.isnan(x):
        raise ValueError("value (a grid coordinate) must not be NaN")
    if math.isinf(x):
        return 1 if x > 0 else 2  # reserved keys; finite values map to 8 and above
    # x * 1e9 overflows beyond ~1.8e299; there x is an integer anyway (exact product)
    k = int(round(x * KEY_RESOLUTION)) if abs(x) < 1e290 else int(x) * int(KEY_RESOLUTION)
    zigzag = 2 * k if k >= 0 else -2 * k - 1
    if zigzag < (1 << 61):
        return 8 + zigzag
    # values beyond ~1.2e9: a hash of the rounded value, in its own range (bit 62 set) so that it
    # cannot collide with the small values, the infinities or the strings (bit 63)
    digest = hashlib.sha256(b"coordinate" + str(k).encode()).digest()
    return (int.from_bytes(digest[:8], "little") & ((1 << 62) - 1)) | (1 << 62)


def cell_key(seed: Any, *coordinates: Any) -> Key:
    """The key of one grid cell: the root key of ``seed`` and the cell's coordinate values.

    A cell's key depends on the values of its coordinates (at
    :data:`KEY_RESOLUTION`), not on their position in a grid, so a cell's
    numbers do not depend on the grid around it.

    Examples
    --------
    >>> a = cell_key(7, 0.3, 0.6).uniform(1)
    >>> bool(np.array_equal(a, cell_key(7, 0.1 + 0.2, 0.6).uniform(1)))
    True
    """
    key = seed if isinstance(seed, Key) else root_key(seed)
    return key.child(*(np.uint64(coordinate_key(c)) for c in coordinates)) if coordinates else key


# --------------------------------------------------------------- binomial
#: The Stirling tail is tabulated exactly up to this k; beyond, the series' first omitted term
#: 1/(1188 (k+1)^9) is below 1e-14 (at k = 10 it is 3.5e-13, so a table to 9 is not enough).
_STIRLING_EXACT = 15


def _stirling_tail_table():
    out = []
    for k in range(_STIRLING_EXACT + 1):
        exact = math.lgamma(k + 1.0) - ((k + 0.5) * math.log(k + 1.0) - (k + 1.0) + 0.5 * math.log(2 * math.pi))
        out.append(exact)
    return np.array(out)


_STIRLING_TABLE = _stirling_tail_table()


def _stirling_tail(k):
    """log(k!) − [(k + 1/2) log(k + 1) − (k + 1) + log(2π)/2] for integers k >= 0.

    Exact (from ``lgamma``) for k <= 15, the Stirling series to (k+1)^-7
    beyond (error below 1e-14: the first omitted term is 1/(1188 (k+1)^9)).
    """
    k = np.asarray(k, dtype=float)
    kp1 = k + 1.0
    inv2 = 1.0 / (kp1 * kp1)
    series = (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - inv2 / 1680) * inv2) * inv2) / kp1
    small = k <= _STIRLING_EXACT
    if series.ndim == 0:
        return np.where(small, _STIRLING_TABLE[np.clip(k, 0, _STIRLING_EXACT).astype(np.int64)], series)
    # the table where k is small (same values as a where over the whole array, fewer passes)
    if small.any():
        series[small] = _STIRLING_TABLE[np.clip(k[small], 0, _STIRLING_EXACT).astype(np.int64)]
    return series


_BTRS_MIN_MEAN = 10.0


def _flat(x, shape):
    """``x`` broadcast to ``shape``, flattened (a plain reshape when it already has that shape)."""
    return x.reshape(-1) if x.shape == shape else np.broadcast_to(x, shape).reshape(-1)


def binomial(key: Key, n, p):
    """Exact binomial draws, one per key: ``Binomial(n, p)`` from each key's own stream.

    Vectorized over any shape (``key``, ``n``, ``p`` broadcast). Small means
    (n·min(p, 1−p) < 10) use inversion by geometric waiting times (one
    uniform per success, plus one); larger means use Hörmann's BTRS
    rejection sampler (two uniforms per attempt, acceptance about 0.9 or
    more). ``p > 1/2`` draws ``n − Binomial(n, 1 − p)``. A draw depends on
    its key, ``n`` and ``p`` only: never on the other elements.

    Parameters
    ----------
    key : Key
        One stream per draw (broadcast to the shape of ``n`` and ``p``).
    n : array_like of int
        Numbers of trials, >= 0.
    p : array_like of float
        Success probabilities in [0, 1].

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> k = root_key(3).child("test").child(np.arange(4))
    >>> binomial(k, [0, 10, 100, 10**6], [0.5, 0.0, 1.0, 0.5])[:3].tolist()
    [0, 0, 100]
    """
    n = np.asarray(n, dtype=np.int64)
    p = np.asarray(p, dtype=float)
    shape = np.broadcast_shapes(key.shape, n.shape, p.shape)
    a, b, nn, pp = (_flat(x, shape) for x in (key.a, key.b, n, p))
    flip = pp > 0.5
    qq = np.where(flip, 1.0 - pp, pp)
    out = np.zeros(nn.shape, dtype=np.int64)
    mean = nn * qq
    live = (nn > 0) & (qq > 0)
    small = live & (mean < _BTRS_MIN_MEAN)
    large = live & ~small
    if small.any() or large.any():
        gamma = _mix_gamma(b)
    if small.any():
        idx = np.flatnonzero(small)
        out[idx] = _binomial_inversion(a[idx], gamma[idx], nn[idx], qq[idx])
    if large.any():
        idx = np.flatnonzero(large)
        out[idx] = _binomial_btrs(a[idx], gamma[idx], nn[idx], qq[idx])
    out = np.where(flip, nn - out, out)
    return out.reshape(shape)


def binomials(*draws):
    """Several independent binomial draws in one call of :func:`binomial` (same numbers).

    Parameters
    ----------
    *draws : (Key, n, p)
        Each a draw of :func:`binomial`; their broadcast shapes may differ.

    Returns
    -------
    list of numpy.ndarray
        The draws, in order. A draw depends on its key, n and p only, so
        stacking them changes no number; it saves the sampler's per-call cost.

    Examples
    --------
    >>> k = root_key(1)
    >>> x, y = binomials((k.child("a"), [10, 20], 0.5), (k.child("b"), 7, 0.3))
    >>> bool(np.array_equal(x, binomial(k.child("a"), [10, 20], 0.5))), int(y) == int(binomial(k.child("b"), 7, 0.3))
    (True, True)
    """
    shapes, flat_a, flat_b, flat_n, flat_p = [], [], [], [], []
    for key, n, p in draws:
        n = np.asarray(n, dtype=np.int64)
        p = np.asarray(p, dtype=float)
        shape = np.broadcast_shapes(key.shape, n.shape, p.shape)
        shapes.append(shape)
        flat_a.append(_flat(key.a, shape))
        flat_b.append(_flat(key.b, shape))
        flat_n.append(_flat(n, shape))
        flat_p.append(_flat(p, shape))
    out = binomial(Key(np.concatenate(flat_a), np.concatenate(flat_b)), np.concatenate(flat_n),
                   np.concatenate(flat_p))
    sizes = np.cumsum([int(np.prod(s)) for s in shapes])[:-1]
    return [part.reshape(s) for part, s in zip(np.split(out, sizes), shapes)]


def _binomial_inversion(a, gamma, n, p):
    """Binomial(n, p) as the number of geometric waiting times that fit in n trials.

    Waiting time j uses the stream's uniform j: G_j = ceil(log U_j / log(1 − p))
    is Geometric(p) on {1, 2, ...}; the count is the number of partial sums
    G_1 + ... + G_j that stay <= n. Waiting times are drawn in blocks of
    several steps per element (the block size never changes a draw: step j
    always uses uniform j).
    """
    count = np.zeros(n.shape, dtype=np.int64)
    room = n.astype(float)          # trials left
    with np.errstate(over="ignore", divide="ignore"):  # subnormal p: 1/log(1 − p) = −inf (no success)
        inv_log_q = 1.0 / np.log1p(-p)  # < 0
    active = np.arange(n.size)
    step = 0
    mean = float(np.max(n * p))
    block = int(math.ceil(mean + 3.0 * math.sqrt(mean) + 3.0))
    while active.size:
        steps = np.arange(step, step + block, dtype=np.int64)
        u = _uniform(a[active, None], gamma[active, None], steps)
        with np.errstate(over="ignore", invalid="ignore"):  # waiting times may be inf (tiny p)
            g = np.ceil(np.log(u) * inv_log_q[active, None])
            csum = np.cumsum(g, axis=1)
        fits = csum <= room[active, None]
        count[active] += fits.sum(axis=1)
        unfinished = fits[:, -1]
        room[active] -= csum[:, -1]
        active = active[unfinished]
        step += block
        block = 4
    return count


def _binomial_btrs(a_key, gamma, n, p):
    """Hörmann's BTRS for n·p >= 10, p <= 1/2 (exact acceptance test).

    Attempt j uses the stream's uniforms 2j and 2j + 1. The acceptance test
    is the log of the pmf ratio f(k)/f(m) written with Stirling tails (as in
    TensorFlow's implementation), which needs no large-lgamma differences.
    """
    nf = n.astype(float)
    spq = np.sqrt(nf * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = nf * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1.0 - p)
    alpha = (2.83 + 5.1 / b) * spq
    m = np.floor((nf + 1.0) * p)
    # the part of log f(k)/f(m) that does not depend on k; the (n + 1) log((n − m + 1)/(n − k + 1))
    # term is written with log1p below: as a difference of two logs times n + 1 it loses
    # ~ n · 1e-16 (3e-3 at n = 1e12) to cancellation
    base = ((m + 0.5) * np.log((m + 1.0) / (r * (nf - m + 1.0)))
            + _stirling_tail(m) + _stirling_tail(nf - m))
    out = np.zeros(n.shape, dtype=np.int64)
    active = np.arange(n.size)
    attempt = 0
    while active.size:
        # several attempts per element at once when few elements remain (per-call cost
        # dominates there); attempt j always uses uniforms 2j and 2j + 1, so the number
        # of attempts per pass never changes a draw
        width = 1 if active.size > 4096 else 4
        js = np.arange(attempt, attempt + width, dtype=np.int64)[None, :]
        ka, kg = a_key[active, None], gamma[active, None]
        u = _uniform(ka, kg, 2 * js)
        u -= 0.5
        v = _uniform(ka, kg, 2 * js + 1)
        col = active[:, None]
        A, B, nn = a[col], b[col], nf[col]
        us = 0.5 - np.abs(u)
        k = np.floor((2.0 * A / us + B) * u + c[col])
        inside = (k >= 0) & (k <= nn)
        accept = inside & (us >= 0.07) & (v <= v_r[col])
        rows, cols = np.nonzero(inside & ~accept)
        if rows.size:
            act = active[rows]
            ks, nns, uss = k[rows, cols], nf[act], us[rows, cols]
            with np.errstate(divide="ignore"):
                lv = np.log(v[rows, cols] * alpha[act] / (a[act] / (uss * uss) + b[act]))
            bound = (base[act] + (nns + 1.0) * np.log1p((ks - m[act]) / (nns - ks + 1.0))
                     + (ks + 0.5) * np.log(r[act] * (nns - ks + 1.0) / (ks + 1.0))
                     - _stirling_tail(ks) - _stirling_tail(nns - ks))
            accept[rows, cols] = lv <= bound
        any_accept = accept.any(axis=1)
        first = np.argmax(accept, axis=1)
        done = np.flatnonzero(any_accept)
        out[active[done]] = k[done, first[done]].astype(np.int64)
        active = active[~any_accept]
        attempt += width
    return out


def hypergeometric(key: Key, good, bad, nsample):
    """Exact hypergeometric draws, one per key: good items among ``nsample`` drawn without replacement.

    Vectorized over any shape (``key``, ``good``, ``bad``, ``nsample``
    broadcast). Inversion from the mode: the uniform of the key's stream at
    counter 0 is matched against the pmf in the order m, m + 1, m − 1,
    m + 2, m − 2, ... (m the mode), with the pmf at m from log-gamma
    functions and the others by its ratio recurrence; a measure-preserving
    map of the uniform, so the draw is exact up to rounding. Its cost grows
    with the standard deviation of the law (tens of steps for populations of
    thousands).

    Parameters
    ----------
    key : Key
        One stream per draw.
    good, bad : array_like of int
        Numbers of good and bad items (>= 0).
    nsample : array_like of int
        Items drawn, 0 <= nsample <= good + bad.

    Returns
    -------
    numpy.ndarray of int64

    Examples
    --------
    >>> k = root_key(2).child(np.arange(3))
    >>> hypergeometric(k, [5, 0, 10], [5, 7, 0], [10, 3, 4]).tolist()
    [5, 0, 4]
    """
    G = np.asarray(good, dtype=np.int64)
    B = np.asarray(bad, dtype=np.int64)
    n = np.asarray(nsample, dtype=np.int64)
    shape = np.broadcast_shapes(key.shape, G.shape, B.shape, n.shape)
    G, B, n = (np.broadcast_to(x, shape).reshape(-1) for x in (G, B, n))
    a = np.broadcast_to(key.a, shape).reshape(-1)
    gamma = _mix_gamma(np.broadcast_to(key.b, shape).reshape(-1))
    lo = np.maximum(0, n - B)
    hi = np.minimum(n, G)
    out = lo.copy()
    live = np.flatnonzero(hi > lo)
    if live.size:
        Gf, Bf, nf = G[live].astype(float), B[live].astype(float), n[live].astype(float)
        Nf = Gf + Bf
        m = np.clip(np.floor((nf + 1) * (Gf + 1) / (Nf + 2)), lo[live], hi[live])
        from scipy.special import gammaln
        logp = (gammaln(Gf + 1) - gammaln(m + 1) - gammaln(Gf - m + 1)
                + gammaln(Bf + 1) - gammaln(nf - m + 1) - gammaln(Bf - nf + m + 1)
                - gammaln(Nf + 1) + gammaln(nf + 1) + gammaln(Nf - nf + 1))
        u = _uniform(a[live], gamma[live], np.int64(0))
        p_mode = np.exp(logp)
        u = u - p_mode
        result = m.copy()
        done = u < 0
        up_k, up_p = m.copy(), p_mode.copy()
        dn_k, dn_p = m.copy(), p_mode.copy()
        lo_l, hi_l = lo[live].astype(float), hi[live].astype(float)
        active = np.flatnonzero(~done)
        while active.size:
            # one step up
            k = up_k[active]
            can = k < hi_l[active]
            nxt = np.where(can, up_p[active] * (Gf[active] - k) * (nf[active] - k)
                           / ((k + 1) * (Bf[active] - nf[active] + k + 1)), 0.0)
            up_k[active] = np.where(can, k + 1, k)
            up_p[active] = nxt
            u[active] -= nxt
            hit = can & (u[active] < 0)
            result[active[hit]] = up_k[active[hit]]
            active = active[~hit]
            # one step down
            k = dn_k[active]
            can_d = k > lo_l[active]
            prv = np.where(can_d, dn_p[active] * k * (Bf[active] - nf[active] + k)
                           / ((Gf[active] - k + 1) * (nf[active] - k + 1)), 0.0)
            dn_k[active] = np.where(can_d, k - 1, k)
            dn_p[active] = prv
            u[active] -= prv
            hit = can_d & (u[active] < 0)
            result[active[hit]] = dn_k[active[hit]]
            exhausted = ~hit & (up_k[active] >= hi_l[active]) & (dn_k[active] <= lo_l[active])
            # rounding left a sliver of probability: give it to the mode (measure below 1e-12)
            result[active[exhausted]] = m[active[exhausted]]
            active = active[~hit & ~exhausted]
        out[live] = result.astype(np.int64)
    return out.reshape(shape)


def multivariate_hypergeometric(key: Key, counts, nsample):
    """Exact split of ``nsample`` items drawn without replacement among classes of sizes ``counts``.

    The chain of conditional hypergeometrics: class j receives
    Hypergeometric(counts_j, counts_{j+1} + ..., remaining) draws, class j
    drawn from the key's child j.

    Parameters
    ----------
    key : Key
        One stream per split (broadcast against ``counts[..., 0]``).
    counts : array_like of int, shape (..., S)
        Class sizes.
    nsample : array_like of int, shape (...)
        Items drawn (<= counts.sum(-1)).

    Returns
    -------
    numpy.ndarray of int64, shape (..., S)

    Examples
    --------
    >>> k = root_key(4).child(np.arange(2))
    >>> multivariate_hypergeometric(k, [[3, 0, 2], [1, 1, 1]], [5, 0]).tolist()
    [[3, 0, 2], [0, 0, 0]]
    """
    counts = np.asarray(counts, dtype=np.int64)
    left = np.asarray(nsample, dtype=np.int64).copy()
    out = np.zeros(np.broadcast_shapes(counts.shape, left.shape + (counts.shape[-1],)), dtype=np.int64)
    remaining = counts.sum(axis=-1)
    S = counts.shape[-1]
    for j in range(S - 1):
        rest = remaining - counts[..., j]
        take = hypergeometric(key.child(np.int64(j)), counts[..., j], rest, left)
        out[..., j] = take
        left = left - take
        remaining = rest
    out[..., S - 1] = left
    return out
