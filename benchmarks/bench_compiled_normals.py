"""Would a compiled kernel lower the floor of the keyed normals? (issue 14, §1 [1] and [4])

Run: ``python benchmarks/bench_compiled_normals.py`` (needs numba, which is
*not* a dependency of perfpriv: ``pip install numba`` first; without it the
script says so and exits).

It compiles the keyed stream of :mod:`perfpriv.keyed` -- SplitMix64 at
counter i, the top 53 bits as a uniform on (0, 1), scipy's own ``ndtri``
called through ``scipy.special.cython_special`` -- as one loop, checks that
its numbers are bit-identical to :meth:`perfpriv.keyed.Key.normal`, and
times three ways of drawing the same count of standard normals side by side
in this one process (medians):

1. numpy's ziggurat (``Generator.standard_normal``), the benchmarks' "bare"
   normals;
2. perfpriv's vectorized keyed normals (numpy ufuncs + ``scipy.special.ndtri``);
3. the compiled keyed normals.

If (3) is not clearly below (2), a compiled kernel removes only the per-call
overhead of a round (targets [2], [3], [5]), not the cost of the numbers
themselves (the floor of [1] and [4]).
"""

from __future__ import annotations

import ctypes
import statistics
import sys

import numpy as np
from _timing import median_seconds

from perfpriv import keyed

SIZE = 100_000
MASK = (1 << 64) - 1


def stream_increment(b):
    """The odd increment ("gamma") of the stream of key word ``b``: SplittableRandom's mixGamma, on Python ints
    (the definition in :mod:`perfpriv.keyed`'s docstring; the bit-identity check below confirms it)."""
    z = b
    for mult in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        z = ((z ^ (z >> 33)) * mult) & MASK
    z = (z ^ (z >> 33)) | 1
    if (z ^ (z >> 1)).bit_count() < 24:
        z ^= 0xAAAAAAAAAAAAAAAA
    return z


def main():
    try:
        import numba
        from numba.extending import get_cython_function_address
    except ImportError:
        print("numba is not installed (it is not a dependency of perfpriv): pip install numba, then rerun")
        return 0

    ndtri = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(
        get_cython_function_address("scipy.special.cython_special", "ndtri"))
    m1, m2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
    s30, s27, s31, s11 = (np.uint64(s) for s in (30, 27, 31, 11))

    @numba.njit
    def keyed_normals(a, gamma, out):
        for i in range(out.size):
            x = a + np.uint64(i + 1) * gamma
            x ^= x >> s30
            x *= m1
            x ^= x >> s27
            x *= m2
            x ^= x >> s31
            out[i] = ndtri((np.float64(x >> s11) + 0.5) * 2.0**-53)
        return out

    key = keyed.root_key(1)
    a, gamma = np.uint64(key.a), np.uint64(stream_increment(int(key.b)))
    out = np.empty(SIZE)
    keyed_normals(a, gamma, out)                 # compile
    identical = np.array_equal(out, key.normal(SIZE))
    rng = np.random.default_rng(0)
    # interleaved (one call of each per pass): the vectorized draw allocates fresh arrays, and its time
    # depends on the allocator's state (up to 2x), which interleaving makes the same for all three
    draws = {"bare": lambda: rng.standard_normal(SIZE), "vectorized": lambda: key.normal(SIZE),
             "compiled": lambda: keyed_normals(a, gamma, out)}
    times = {name: [] for name in draws}
    for _ in range(31):
        for name, draw in draws.items():
            times[name].append(median_seconds(draw, 1))
    bare, vectorized, compiled = (statistics.median(times[name]) for name in draws)
    print(f"{SIZE} keyed normals, compiled (numba {numba.__version__}) vs perfpriv's: bit-identical: {identical}")
    print(f"ziggurat {bare * 1e3:.2f} ms; keyed, vectorized {vectorized * 1e3:.2f} ms ({vectorized / bare:.1f}x); "
          f"keyed, compiled {compiled * 1e3:.2f} ms ({compiled / bare:.1f}x)")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
