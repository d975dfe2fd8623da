r"""The keyed counter-based streams, compiled: every random number as a pure function of (key, counter).

These are the scalar building blocks of every compiled kernel of perfpriv
and of the vectorized streams of :mod:`perfpriv.keyed` (which call the
array loops at the bottom of this module): one implementation of each.
A key is two 64-bit words ``(a, b)``; its stream has the odd increment
``gamma = stream_increment(b)`` and its number at ``counter`` is

    bits    = mix64(a + (counter + 1) * gamma)          (mod :math:`2^{64}`)
    uniform = ((bits >> 11) + 1/2)\ :math:`/ 2^{53}`               in (0, 1), 53 random bits
    normal  = ndtri(uniform)                            scipy's own inverse normal cdf

(SplitMix64 with a stream-specific increment, as in Java's
``SplittableRandom``; Steele, Lea and Flood, OOPSLA 2014). A child key
mixes its parent with one 64-bit part word (:func:`child`). Every function
is a plain ``@njit`` function of scalars and arrays, with no Python object
inside, so a ``numba.cuda`` port can reuse it; each is checked bit for bit
against its definition on Python integers in ``tests/test_kernels.py``.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address

__all__ = ["mix64", "stream_increment", "bits", "uniform", "normal", "part_hashes", "child", "tail_words",
           "ndtri", "gammaln", "child_array", "stream_increment_array", "uniform_array", "normal_array",
           "bits_array", "HEAD", "TAIL_A", "TAIL_B"]

_U = np.uint64
M1 = _U(0xBF58476D1CE4E5B9)
M2 = _U(0x94D049BB133111EB)
G1 = _U(0xFF51AFD7ED558CCD)
G2 = _U(0xC4CEB9FE1A85EC53)
GOLDEN = _U(0x9E3779B97F4A7C15)
C_A = _U(0x632BE59BD9B4E019)
C_B = _U(0x85157AF5A1D9C1B3)
ALTERNATING = _U(0xAAAAAAAAAAAAAAAA)
ONE = _U(1)
S11, S27, S30, S31, S33 = _U(11), _U(27), _U(30), _U(31), _U(33)
TWO_M53 = 2.0 ** -53

#: Positions of a stream drawn by the counter hash (:func:`uniform`, :func:`normal`); beyond, the
#: normals of a keyed PCG64 generator (:func:`tail_words`; :meth:`perfpriv.keyed.Key.normal_ragged`).
HEAD = 256
#: The words that seed the PCG64 generator of a stream's tail (:func:`tail_words`).
TAIL_A = _U(0xD1B54A32D192ED03)
TAIL_B = _U(0xABC98388FB8FAC03)



def _scipy_special(name):
    """scipy.special's compiled ``name`` (double -> double) as an external function of compiled code.

    Declared by symbol name, not by address, so that kernels calling it can
    be cached on disk (the address is registered anew in every process).
    """
    symbol = f"perfpriv_scipy_special_{name}"
    llvm.add_symbol(symbol, get_cython_function_address("scipy.special.cython_special", name))
    return types.ExternalFunction(symbol, types.float64(types.float64))


#: scipy's ``ndtri`` (inverse standard normal cdf), called from compiled code.
ndtri = _scipy_special("ndtri")
#: scipy's ``gammaln`` (log \|Γ(x)|), called from compiled code.
gammaln = _scipy_special("gammaln")

_JIT = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_JIT)
def mix64(z):
    """SplitMix64's finalizer of one uint64 word (bijective avalanche mix)."""
    z ^= z >> S30
    z *= M1
    z ^= z >> S27
    z *= M2
    z ^= z >> S31
    return z


@njit(**_JIT)
def popcount(z):
    """Number of set bits of a uint64 word (SWAR)."""
    z = z - ((z >> ONE) & _U(0x5555555555555555))
    z = (z & _U(0x3333333333333333)) + ((z >> _U(2)) & _U(0x3333333333333333))
    z = (z + (z >> _U(4))) & _U(0x0F0F0F0F0F0F0F0F)
    return (z * _U(0x0101010101010101)) >> _U(56)


@njit(**_JIT)
def stream_increment(b):
    """The odd increment of the stream of key word ``b`` (SplittableRandom's mixGamma).

    An increment with fewer than 24 01/10 bit transitions mixes badly; its
    bits are flipped by an alternating pattern, as SplittableRandom does.
    """
    z = b
    z ^= z >> S33
    z *= G1
    z ^= z >> S33
    z *= G2
    z ^= z >> S33
    z |= ONE
    if popcount(z ^ (z >> ONE)) < _U(24):
        z ^= ALTERNATING
    return z


@njit(**_JIT)
def bits(a, gamma, counter):
    """The 64-bit output of stream (a, gamma) at ``counter`` (an int64 >= 0)."""
    return mix64(a + (_U(counter) + ONE) * gamma)


@njit(**_JIT)
def uniform(a, gamma, counter):
    """The uniform on (0, 1) (53 random bits) of stream (a, gamma) at ``counter``."""
    return (np.float64(bits(a, gamma, counter) >> S11) + 0.5) * TWO_M53


@njit(**_JIT)
def normal(a, gamma, counter):
    """The standard normal of stream (a, gamma) at ``counter``: ``ndtri`` of :func:`uniform`."""
    return ndtri(uniform(a, gamma, counter))


@njit(**_JIT)
def part_hashes(word):
    """The two hashes a child key mixes in for one part word (cell coordinate, trial, round, purpose)."""
    return mix64(word * GOLDEN + C_A), mix64(word ^ C_B)


@njit(**_JIT)
def child(a, b, word):
    """The child of key (a, b) for one part word: ``a' = mix64(a ^ h_a)``, ``b' = mix64(b + a' + h_b)``."""
    ha, hb = part_hashes(word)
    a2 = mix64(a ^ ha)
    return a2, mix64(b + a2 + hb)


@njit(**_JIT)
def child_hashed(a, b, ha, hb):
    """:func:`child` with the part's two hashes given (a purpose name's are constants)."""
    a2 = mix64(a ^ ha)
    return a2, mix64(b + a2 + hb)


@njit(**_JIT)
def tail_words(a, b):
    """The PCG64 state and increment of the tail of key (a, b)'s stream (its numbers beyond :data:`HEAD`).

    ``(state_hi, state_lo, inc_hi, inc_lo)``: state ``mix64(a ^ TAIL_A)·2⁶⁴ + mix64(b ^ TAIL_B)`` and
    increment ``(mix64(b + TAIL_A)·2⁶⁴ + mix64(a + TAIL_B)) | 1``.
    """
    return mix64(a ^ TAIL_A), mix64(b ^ TAIL_B), mix64(b + TAIL_A), mix64(a + TAIL_B) | ONE


# ------------------------------------------------------------------ array loops (flat, contiguous)
@njit(**_JIT)
def child_array(a, b, words, out_a, out_b):
    """:func:`child` elementwise over flat arrays of keys and part words."""
    for i in range(a.size):
        out_a[i], out_b[i] = child(a[i], b[i], words[i])


@njit(**_JIT)
def stream_increment_array(b, out):
    """:func:`stream_increment` elementwise."""
    for i in range(b.size):
        out[i] = stream_increment(b[i])


@njit(**_JIT)
def bits_array(a, gamma, counters, out):
    """:func:`bits` elementwise over flat arrays of streams and counters."""
    for i in range(out.size):
        out[i] = bits(a[i], gamma[i], counters[i])


@njit(**_JIT)
def uniform_array(a, gamma, counters, out):
    """:func:`uniform` elementwise over flat arrays of streams and counters."""
    for i in range(out.size):
        out[i] = uniform(a[i], gamma[i], counters[i])


@njit(**_JIT)
def normal_array(a, gamma, counters, out):
    """:func:`normal` elementwise over flat arrays of streams and counters."""
    for i in range(out.size):
        out[i] = ndtri(uniform(a[i], gamma[i], counters[i]))


@njit(**_JIT)
def normal_records(a, gamma, records, width, out):
    """``width`` normals per key: row j holds counters ``records[j]·width .. + width − 1`` of key j."""
    for j in range(a.size):
        base = records[j] * width
        for i in range(width):
            out[j, i] = ndtri(uniform(a[j], gamma[j], base + i))


@njit(**_JIT)
def prefix_normals(a, gamma, counts, out):
    """Normals ``0 .. counts[j] − 1`` of key j, concatenated into ``out`` (length ``counts.sum()``)."""
    pos = 0
    for j in range(a.size):
        for i in range(counts[j]):
            out[pos] = ndtri(uniform(a[j], gamma[j], i))
            pos += 1


@njit(**_JIT)
def child_hashed_array(a, b, ha, hb, out_a, out_b):
    """:func:`child_hashed` over flat arrays of keys, one part (its two hashes given) for all."""
    for i in range(a.size):
        out_a[i], out_b[i] = child_hashed(a[i], b[i], ha, hb)
