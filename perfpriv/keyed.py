r"""One randomness scheme for the whole library: keyed, counter-based streams.

Every random number perfpriv's simulators draw -- and a new behaviour's or
mechanism's (appendix B, "Your own model") -- is a pure function of a *key*
and a *counter*:

    key     = root seed -> cell coordinates -> trial -> round -> purpose
    number  = F(key, counter)

so any piece of a run can be regenerated alone, runs that differ only in
the privacy level share their numbers (common random numbers: the level is
*not* part of the key), and nothing depends on the order of the draws, on
how many trials or levels run together, on ``n_jobs`` or on the backend.

The construction
----------------
A key is a pair of 64-bit words ``(a, b)`` (:class:`Key` holds arrays of
them). The root key comes from the seed (:func:`root_key`), a grid cell's
from its coordinate values (:func:`cell_key`); a child key mixes its parent
with one more integer or name (:meth:`Key.child`) through the SplitMix64
finalizer :func:`perfpriv._kernels.streams.mix64`. The numbers of key
``(a, b)`` are the SplitMix64 sequence with seed ``a`` and an odd increment
("gamma") derived from ``b``:

    :math:`x_i = a + (i + 1) \cdot \gamma(b)`   (mod :math:`2^{64}`),    :math:`u_i = \operatorname{mix64}(x_i)`,

as in Java's ``SplittableRandom`` (Steele, Lea and Flood 2014); a stream-specific
gamma keeps two streams from overlapping as shifted copies. The outputs
become uniforms on (0, 1) with 53 random bits (:meth:`Key.uniform`),
normals by the inverse normal cdf (:func:`scipy.special.ndtri`,
:meth:`Key.normal`; monotone in the uniform, which strengthens common random
numbers) and exact binomials (:func:`binomial`).

Exactness
---------
Every sampler is exact in law up to floating point: uniforms have 53 random
bits (normals reach about 8.3 in magnitude: tails below :math:`2^{-53}` are
cut, as with any double-precision generator); binomials: see :func:`binomial`.

``seed=None`` means fresh entropy (a run that cannot be reproduced) in every
function of perfpriv; :func:`root_key` lists the seeds accepted.

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

from ._validate import (check_allocation, check_flag, check_int, check_int_array, check_probability,
                        check_same_shape)
from ._kernels import samplers as _samplers
from ._kernels import streams as _streams

__all__ = [
    "Key",
    "root_key",
    "as_generator",
    "cell_key",
    "coordinate_key",
    "binomial",
    "binomials",
    "hypergeometric",
    "multivariate_hypergeometric",
]

_U64 = np.uint64

#: What a ``seed`` argument accepts, for error messages.
_SEED_TYPES_TEXT = "None, an int >= 0, a sequence of ints, a numpy SeedSequence, Generator or BitGenerator"


def _flat_as(x, shape, dtype=_U64):
    """``x`` as a contiguous flat ``dtype`` array of ``shape`` (broadcast; no copy when it already is one)."""
    x = np.asarray(x, dtype=dtype)
    if x.shape != shape:
        x = np.broadcast_to(x, shape)
    return np.ascontiguousarray(x).reshape(-1)


def _mix_gamma(b):
    """Odd increment of the streams of second key words ``b`` (:func:`perfpriv._kernels.streams.stream_increment`)."""
    b = np.asarray(b, dtype=_U64)
    out = np.empty(b.shape, dtype=_U64)
    _streams.stream_increment_array(np.ascontiguousarray(b).reshape(-1), out.reshape(-1))
    return out


@functools.lru_cache(maxsize=4096)
def _part_hashes(word: int):
    """The two hashes :meth:`Key.child` mixes in for one scalar part word (cached: they are constants)."""
    ha, hb = _streams.part_hashes(_U64(word))
    return np.asarray(_U64(ha)), np.asarray(_U64(hb))


def _stream_call(kernel, dtype, a, gamma, counters):
    """Apply an elementwise stream kernel to (a, gamma, counters) broadcast together."""
    c = np.asarray(counters, dtype=np.int64)
    shape = np.broadcast_shapes(np.shape(a), np.shape(gamma), c.shape)
    out = np.empty(shape, dtype=dtype)
    kernel(_flat_as(a, shape), _flat_as(gamma, shape), _flat_as(c, shape, np.int64), out.reshape(-1))
    return out


def _bits(a, gamma, counters):
    """mix64(a + (counter + 1) * gamma): the numbers of streams (a, gamma) at ``counters``."""
    return _stream_call(_streams.bits_array, _U64, a, gamma, counters)


def _uniform(a, gamma, counters):
    r"""Uniforms on (0, 1) with 53 random bits: (top 53 bits + 1/2)\ :math:`/ 2^{53}`."""
    return _stream_call(_streams.uniform_array, np.float64, a, gamma, counters)


def _normal(a, gamma, counters):
    """Standard normals: scipy's ``ndtri`` of :func:`_uniform` (one compiled pass)."""
    return _stream_call(_streams.normal_array, np.float64, a, gamma, counters)


def _check_counts(name, values):
    """Integers >= 0 (numpy's int64 range) as an int64 array; an empty array is allowed (nothing to draw)."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):            # ragged nesting: check_int_array names the parameter
        arr = None
    if arr is not None and arr.ndim and arr.size == 0 and arr.dtype.kind in "iuf":
        return arr.astype(np.int64)
    return check_int_array(name, values, low=0)


def _key_words(name, words):
    """Key words as a uint64 array: unsigned or nonnegative integers only (floats and bools are refused)."""
    arr = np.asarray(words)
    if arr.dtype == _U64:
        return arr
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be 64-bit key words (integers in [0, 2**64)); got {words!r:.60}")
    if arr.dtype.kind == "i" and np.any(arr < 0):
        raise ValueError(f"{name} must be 64-bit key words (integers in [0, 2**64)); got a negative word")
    return arr.astype(_U64)


def _check_key(key):
    if not isinstance(key, Key):
        raise TypeError(f"key must be a perfpriv.keyed.Key (e.g. root_key(seed).child(...)); got {key!r:.60}")
    return key


def purpose_id(name: str) -> int:
    """A stable 63-bit integer for a stream purpose such as ``"noise"``.

    Examples
    --------
    >>> purpose_id("noise") == purpose_id("noise") != purpose_id("coins")
    True
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name (a stream purpose) must be a non-empty string; got {name!r:.60}")
    return _purpose_hash(name)


@functools.lru_cache(maxsize=1024)
def _purpose_hash(name: str) -> int:
    """The first 63 bits of the SHA-256 of ``name`` (cached: purposes repeat every round)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little") >> 1


def purpose_hashes(name: str) -> tuple:
    """The two 64-bit hashes :meth:`Key.child` mixes in for the purpose ``name`` (for compiled kernels).

    Examples
    --------
    >>> k = root_key(1)
    >>> a, b = purpose_hashes("noise")
    >>> from perfpriv._kernels import streams
    >>> child = streams.child_hashed(k.a[()], k.b[()], np.uint64(a), np.uint64(b))
    >>> (int(child[0]), int(child[1])) == (int(k.child("noise").a), int(k.child("noise").b))
    True
    """
    ha, hb = _part_hashes(purpose_id(name))
    return int(ha), int(hb)


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
        a, b = _key_words("a", a), _key_words("b", b)
        if a.shape != b.shape:
            raise ValueError(f"a and b (the key words) must have one shape; got {a.shape} and {b.shape}")
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

        A part is an integer (a cell coordinate key, trial or round number), an array of them
        (broadcast against the keys) or a purpose name.
        """
        a, b = self.a, self.b
        for part in parts:
            w = _part_words(part)
            if w.ndim == 0:     # a purpose name or one integer: its two hashes are cached
                ha, hb = _part_hashes(int(w))
                na, nb = np.empty(a.shape, dtype=_U64), np.empty(a.shape, dtype=_U64)
                _streams.child_hashed_array(np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1),
                                            ha[()], hb[()], na.reshape(-1), nb.reshape(-1))
                a, b = na, nb
                continue
            shape = np.broadcast_shapes(a.shape, w.shape)
            na, nb = np.empty(shape, dtype=_U64), np.empty(shape, dtype=_U64)
            _streams.child_array(_flat_as(a, shape), _flat_as(b, shape), _flat_as(w, shape),
                                 na.reshape(-1), nb.reshape(-1))
            a, b = na, nb
        return Key(a, b)

    # ------------------------------------------------------------- numbers
    def _positions(self, counters):
        """``counters`` checked: integers >= 0 that broadcast against the keys."""
        counters = _check_counts("counters", counters)
        check_same_shape(keys=self.a, counters=counters)
        return counters

    def bits(self, counters):
        """The 64-bit outputs at ``counters`` (broadcast against the keys)."""
        return _bits(self.a, _mix_gamma(self.b), self._positions(counters))

    def uniform_at(self, counters):
        """Uniforms on (0, 1) (53 random bits) at ``counters``, broadcast against the keys."""
        return _uniform(self.a, _mix_gamma(self.b), self._positions(counters))

    def normal_at(self, counters):
        """Standard normals at ``counters``: the inverse normal cdf of :meth:`uniform_at`."""
        return _normal(self.a, _mix_gamma(self.b), self._positions(counters))

    def uniform(self, size: int):
        """The first ``size`` uniforms of every key: shape ``self.shape + (size,)``."""
        return Key(self.a[..., None], self.b[..., None]).uniform_at(np.arange(check_int("size", size, low=0)))

    def normal(self, size: int):
        """The first ``size`` standard normals of every key: shape ``self.shape + (size,)``."""
        return Key(self.a[..., None], self.b[..., None]).normal_at(np.arange(check_int("size", size, low=0)))

    def normal_ragged(self, counts):
        """Normals 0 .. counts[j] − 1 of key j (``counts`` one per key), concatenated: shape (sum(counts),).

        The first :data:`HEAD` numbers of a stream are hash-based; the rest are numpy's ziggurat
        normals of a PCG64 generator keyed by the key's words (:func:`_tail_generator`, twice as fast
        for long streams). Both depend on the key and the position only (the prefix property).
        """
        counts = _check_counts("counts", counts).reshape(-1)
        check_allocation("the normals of every key (sum of counts)", float(counts.sum(dtype=float)), name="counts")
        a, b = self.a.reshape(-1), self.b.reshape(-1)
        if counts.shape != a.shape:
            raise ValueError(f"counts must have one entry per key; got {counts.shape} for {a.shape} keys")
        head = np.minimum(counts, HEAD)
        owner = np.repeat(np.arange(a.size), head)
        h_offsets = np.cumsum(head) - head
        idx = np.arange(int(head.sum()), dtype=np.int64) - np.repeat(h_offsets, head)
        head_vals = _normal(a[owner], _mix_gamma(b)[owner], idx)
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
        """``width`` normals for each (key, record) pair: record ``records[j]`` of key j's stream (1-D keys).

        Record r owns the counters ``r·width .. r·width + width − 1``; shape (len(records), width).
        """
        width = check_int("width", width, low=0)
        rec = _check_counts("records", records).reshape(-1)
        a = self.a.reshape(-1)
        if a.size != rec.size:
            raise ValueError(f"records must have one entry per key; got {rec.size} for {a.size} keys")
        check_allocation("the records' normals (records x width)", float(rec.size) * width, name="width")
        out = np.empty((rec.size, width))
        _streams.normal_records(np.ascontiguousarray(a), _mix_gamma(self.b.reshape(-1)), np.ascontiguousarray(rec),
                                width, out)
        return out


#: Numbers of a stream computed by the counter hash; beyond, :meth:`Key.normal_ragged` draws from a
#: keyed PCG64 generator (numpy's ziggurat).
HEAD = _streams.HEAD


def _tail_generator(a: int, b: int, gen=None) -> np.random.Generator:
    """A numpy Generator whose PCG64 state and increment are the key words (a, b) mixed by ``streams.tail_words``."""
    s_hi, s_lo, i_hi, i_lo = (int(w) for w in _streams.tail_words(_U64(a), _U64(b)))
    if gen is None:
        gen = np.random.Generator(np.random.PCG64(0))
    gen.bit_generator.state = {"bit_generator": "PCG64",
                               "state": {"state": (s_hi << 64) | s_lo, "inc": ((i_hi << 64) | i_lo) | 1},
                               "has_uint32": 0, "uinteger": 0}
    return gen


# ------------------------------------------------------------------ seeds
def check_batch(n, keys, live=None, *, per_record: bool = True):
    """Check the arguments of one keyed round over a batch of pairs; return ``(n, live)``.

    ``n``: the populations, whole >= 0 (as int64); ``keys``: the round's :class:`Key`; ``live``: ``None``
    or booleans (the pairs to simulate). ``per_record``: the draw holds a number per record, so a
    population whose records cannot fit in memory is refused up front, by name (``n``).

    Examples
    --------
    >>> check_batch([3, 0], root_key(0).child([0, 1]), [True, False])[0].tolist()
    [3, 0]
    >>> check_batch([3, -1], root_key(0))
    Traceback (most recent call last):
    ...
    ValueError: n must hold integers >= 0; got [3, -1]
    """
    n = check_int_array("n", n, low=0)
    if check_flag("per_record", per_record) and n.size:
        check_allocation("the records of a round (one number per record)", int(n.max()), name="n")
    if not isinstance(keys, Key):
        raise TypeError(f"keys must be a perfpriv.keyed.Key (the round's keys); got {type(keys).__name__}")
    if live is not None:
        live = np.asarray(live)
        if live.dtype != bool:
            raise TypeError(f"live must be None or an array of booleans (the pairs to simulate); got dtype "
                            f"{live.dtype}")
    return n, live


def root_key(seed: Any = None, *, name: str = "seed") -> Key:
    """The root :class:`Key` (a scalar key) of a ``seed`` (anything :func:`numpy.random.default_rng` accepts).

    Parameters
    ----------
    seed : None, int, sequence of int, SeedSequence, Generator, BitGenerator or Key
        ``None``: fresh entropy; a (scalar) Key is returned as is. An int, a sequence of ints or a
        ``SeedSequence`` (read, never modified) is hashed by ``SeedSequence``; a ``Generator`` or bit
        generator is consumed once (two 64-bit words).
    name : str
        Parameter name for error messages (as in the other seed functions here).

    Raises
    ------
    TypeError, ValueError
        For anything else (booleans, floats, negative integers, legacy ``RandomState``), naming ``name``.

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


def as_generator(seed: Any = None, *, name: str = "seed") -> np.random.Generator:
    """A :class:`~numpy.random.Generator` for ``seed``: a Generator as is, a bit generator wrapped, else seeded.

    Any other seed of :func:`root_key` goes through :func:`as_seed_sequence`: an int gives the stream of
    ``numpy.random.default_rng(seed)``, a scalar :class:`Key` (e.g. :func:`cell_key`) a generator of its
    own for numpy draws outside the keyed streams.

    Examples
    --------
    >>> g = np.random.default_rng(3)
    >>> as_generator(g) is g, as_generator(3).random() == np.random.default_rng(3).random()
    (True, True)
    >>> key = cell_key(7, 0.3, 0.6)
    >>> bool(as_generator(key).random() == as_generator(cell_key(7, 0.1 + 0.2, 0.6)).random())
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.BitGenerator):
        return np.random.Generator(seed)
    return np.random.default_rng(as_seed_sequence(seed, name=name))


def as_seed_sequence(seed: Any = None, *, name: str = "seed") -> np.random.SeedSequence:
    """A :class:`~numpy.random.SeedSequence` for a ``seed`` of :func:`root_key` (not a Generator), checked.

    A given SeedSequence is returned as a copy in the same state (entropy, spawn key, children
    spawned): spawning from the result leaves the caller's object unchanged. A scalar :class:`Key`
    ``(a, b)`` gives the SeedSequence of its 32-bit words ``[a mod 2**32, a >> 32, b mod 2**32, b >> 32]``.

    Examples
    --------
    >>> as_seed_sequence(Key(np.uint64(1), np.uint64(2**32))).entropy
    [1, 0, 0, 1]
    """
    if isinstance(seed, Key):
        if seed.shape != ():
            raise ValueError(f"{name} must be a single key here; got keys of shape {seed.shape}")
        a, b = int(seed.a), int(seed.b)
        return np.random.SeedSequence([a & 0xFFFFFFFF, a >> 32, b & 0xFFFFFFFF, b >> 32])
    if isinstance(seed, np.random.SeedSequence):
        return np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size,
                                      n_children_spawned=seed.n_children_spawned)
    if seed is None:
        return np.random.SeedSequence()
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f"{name} must be {_SEED_TYPES_TEXT}; got {seed!r}")
    if isinstance(seed, np.random.RandomState):
        raise TypeError(f"{name} must be {_SEED_TYPES_TEXT}; got a legacy numpy RandomState "
                        "(use numpy.random.default_rng)")
    if isinstance(seed, numbers.Integral):
        if int(seed) < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {int(seed)}")
        return np.random.SeedSequence(int(seed))
    if isinstance(seed, (list, tuple, np.ndarray)):
        try:
            arr = np.asarray(seed)
        except ValueError:   # ragged nested sequences
            raise TypeError(f"{name} must be {_SEED_TYPES_TEXT}; got {seed!r:.60}") from None
        if arr.size and (arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 0)):
            raise TypeError(f"{name} must be {_SEED_TYPES_TEXT}; got {seed!r:.60}")
        return np.random.SeedSequence([int(v) for v in arr.reshape(-1)])
    raise TypeError(f"{name} must be {_SEED_TYPES_TEXT}; got {seed!r:.60}")


#: Resolution at which coordinate values are identified: two grids whose
#: values agree to 1e-9 (e.g. the same point of two ``linspace`` calls) give a
#: cell the same key.
KEY_RESOLUTION = 1e9


def coordinate_key(value: Any) -> int:
    r"""Non-negative integer that identifies a grid coordinate value.

    Floats are rounded to 1e-9 (so that equal grid points computed by
    different ``linspace`` calls agree) and mapped to non-negative integers
    (zig-zag for negatives; ``inf`` and :math:`-\infty` get reserved keys);
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
    """The key of one grid cell: the root key of ``seed`` and the cell's ``coordinates`` (values, e.g. q, r).

    It depends on the coordinates' values (at :data:`KEY_RESOLUTION`), not on their position in a
    grid (:func:`perfpriv.engine.cell_keys`), so passing it as ``seed=`` to a one-cell engine call
    gives the numbers of that square of a heatmap exactly.

    Examples
    --------
    >>> a = cell_key(7, 0.3, 0.6).uniform(1)
    >>> bool(np.array_equal(a, cell_key(7, 0.1 + 0.2, 0.6).uniform(1)))
    True
    >>> from perfpriv import bernoulli, behaviour, engine, optimize
    >>> mech = bernoulli.RandomizedResponse([0.5, 2.0], mu=(0.5, 1.0))
    >>> grid = optimize.optimal_epsilon(mech, behaviour.Memoryless(q=[0.3, 0.6], r=[0.6, 0.3]), T=20, n0=100,
    ...                                 trials=5, seed=7)
    >>> one = engine.simulate(mech, behaviour.Memoryless(q=0.6, r=0.3), T=20, n0=100, trials=5,
    ...                       seed=cell_key(7, 0.6, 0.3))
    >>> bool(np.allclose(one.sq_error[..., -1].mean(axis=-1), grid.values[1]))
    True
    """
    key = seed if isinstance(seed, Key) else root_key(seed)
    return key.child(*(np.uint64(coordinate_key(c)) for c in coordinates)) if coordinates else key


# --------------------------------------------------------------- binomial
def _stirling_tail(k):
    """:func:`perfpriv._kernels.samplers.stirling_tail` elementwise: log(k!) − [(k + 1/2) log(k + 1) − (k + 1)
    + log(2π)/2] for integers k >= 0."""
    k = np.asarray(k, dtype=float)
    return np.vectorize(_samplers.stirling_tail, otypes=[float])(k)


def binomial(key: Key, n, p):
    r"""Exact binomial draws, one per key: ``Binomial(n, p)`` (n >= 0, p in [0, 1]) from each key's stream.

    ``key``, ``n`` and ``p`` broadcast; a draw depends on its key, ``n`` and ``p`` only. Small means
    (n·min(p, 1−p) < 10): inversion by geometric waiting times; larger: Hörmann's BTRS rejection sampler
    with the exact acceptance test (two uniforms per attempt, acceptance about 0.9 or more).
    :math:`p > 1/2` draws :math:`n - \mathrm{Binomial}(n, 1 - p)`.

    Examples
    --------
    >>> k = root_key(3).child("test").child(np.arange(4))
    >>> binomial(k, [0, 10, 100, 10**6], [0.5, 0.0, 1.0, 0.5])[:3].tolist()
    [0, 0, 100]
    """
    return binomials((key, n, p))[0]


def binomials(*draws):
    """Several :func:`binomial` draws ``(key, n, p)`` (any shapes) in one call: the same numbers, in order.

    Examples
    --------
    >>> k = root_key(1)
    >>> x, y = binomials((k.child("a"), [10, 20], 0.5), (k.child("b"), 7, 0.3))
    >>> bool(np.array_equal(x, binomial(k.child("a"), [10, 20], 0.5))), int(y) == int(binomial(k.child("b"), 7, 0.3))
    (True, True)
    """
    shapes, flat_a, flat_b, flat_n, flat_p = [], [], [], [], []
    for key, n, p in draws:
        _check_key(key)
        n = check_int_array("n", n, low=0)
        p = np.asarray(check_probability("p", p), dtype=float)
        shape = check_same_shape(key=key.a, n=n, p=p)
        shapes.append(shape)
        flat_a.append(_flat_as(key.a, shape))
        flat_b.append(_flat_as(key.b, shape))
        flat_n.append(_flat_as(n, shape, np.int64))
        flat_p.append(_flat_as(p, shape, np.float64))
    out = np.empty(sum(a.size for a in flat_a), dtype=np.int64)
    _samplers.binomial_array(np.concatenate(flat_a), np.concatenate(flat_b), np.concatenate(flat_n),
                             np.concatenate(flat_p), out)
    sizes = np.cumsum([int(np.prod(s)) for s in shapes])[:-1]
    return [part.reshape(s) for part, s in zip(np.split(out, sizes), shapes)]


def hypergeometric(key: Key, good, bad, nsample):
    """Exact hypergeometric draws, one per key: good items among ``nsample`` drawn without replacement.

    ``key``, ``good``, ``bad`` (>= 0) and ``nsample`` (<= good + bad) broadcast. Inversion from the mode
    m: the key's uniform at counter 0 is matched against the pmf in the order m, m + 1, m − 1, ...
    (the pmf at m from log-gamma functions, the others by its ratio recurrence), exact up to rounding;
    the cost grows with the law's standard deviation.

    Examples
    --------
    >>> k = root_key(2).child(np.arange(3))
    >>> hypergeometric(k, [5, 0, 10], [5, 7, 0], [10, 3, 4]).tolist()
    [5, 0, 4]
    """
    _check_key(key)
    G, B, n = (check_int_array(name, v, low=0) for name, v in (("good", good), ("bad", bad), ("nsample", nsample)))
    shape = check_same_shape(key=key.a, good=G, bad=B, nsample=n)
    if np.any(n > G + B):
        raise ValueError("nsample must be at most good + bad (items drawn without replacement)")
    out = np.empty(shape, dtype=np.int64)
    _samplers.hypergeometric_array(_flat_as(key.a, shape), _flat_as(key.b, shape), _flat_as(G, shape, np.int64),
                                   _flat_as(B, shape, np.int64), _flat_as(n, shape, np.int64), out.reshape(-1))
    return out.reshape(shape)


def multivariate_hypergeometric(key: Key, counts, nsample):
    r"""Exact split of ``nsample`` items drawn without replacement among classes of sizes ``counts``.

    The chain of conditional hypergeometrics: class :math:`j` receives
    :math:`\mathrm{Hypergeometric}(c_j, c_{j+1} + \dots + c_{S-1}, m_j)` items
    (:math:`c` the counts, shape (..., S); :math:`m_j` the items not yet assigned),
    drawn from the key's child :math:`j`; ``key`` broadcasts against ``counts[..., 0]``
    and ``nsample`` (<= counts.sum(-1)). Returns shape (..., S).

    Examples
    --------
    >>> k = root_key(4).child(np.arange(2))
    >>> multivariate_hypergeometric(k, [[3, 0, 2], [1, 1, 1]], [5, 0]).tolist()
    [[3, 0, 2], [0, 0, 0]]
    """
    _check_key(key)
    counts = check_int_array("counts", counts, low=0)
    if counts.ndim < 1 or counts.shape[-1] < 1:
        raise ValueError(f"counts must have a last axis of classes (shape (..., S), S >= 1); got shape {counts.shape}")
    left = check_int_array("nsample", nsample, low=0).copy()
    check_same_shape(key=key.a, counts=counts[..., 0], nsample=left)
    if np.any(left > counts.sum(axis=-1)):
        raise ValueError("nsample must be at most counts.sum(-1) (items drawn without replacement)")
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
