"""Compiled kernels (numba): the keyed streams, the exact samplers and the round loops.

Every function here is ``@njit(cache=True)`` over plain scalars and arrays,
with no Python object inside, and draws every random number as a pure
function of (key, counter), so that a later ``numba.cuda`` port can reuse
it. Each hot path has this one implementation: :mod:`perfpriv._random`'s
vectorized streams and samplers call these loops, and the engine runs a
whole T-round loop of a batch in one call where its mechanism and behaviour
supply compiled steps (:mod:`perfpriv.kernels.rounds`). The slow, obvious
truth they are tested against is the agent-by-agent reference of each
mechanism and the definitions on Python integers (``tests/test_kernels.py``).

Modules
-------
streams
    SplitMix64 keys and counters: uniforms, normals (scipy's ``ndtri``), child keys.
samplers
    Exact binomial (inversion, BTRS) and hypergeometric draws of one stream.
rounds
    The compiled T-round loops of the engine.
"""

import numpy as np

from . import behaviours, mechanisms, rounds, samplers, streams

__all__ = ["streams", "samplers", "mechanisms", "behaviours", "rounds", "warm"]


def warm():
    """Compile (or load from numba's cache) every kernel with the argument types perfpriv passes.

    ``binder/postBuild`` calls it so that a reader's first chapter does not wait for the compiler;
    nothing else needs to (each kernel compiles at its first call otherwise).

    Examples
    --------
    >>> warm()
    """
    u64 = np.zeros(2, dtype=np.uint64)
    i64 = np.array([3, 4], dtype=np.int64)
    f64 = np.array([0.2, 0.7])
    out_u, out_u2, out_f, out_i = (np.empty(2, dtype=np.uint64), np.empty(2, dtype=np.uint64), np.empty(2),
                                   np.empty(2, dtype=np.int64))
    streams.mix64_array(u64, out_u)
    streams.stream_increment_array(u64, out_u)
    streams.child_array(u64, u64, u64, out_u, out_u2)
    streams.child_hashed_array(u64, u64, np.uint64(1), np.uint64(2), out_u, out_u2)
    streams.bits_array(u64, u64, i64, out_u)
    streams.uniform_array(u64, u64, i64, out_f)
    streams.normal_array(u64, u64, i64, out_f)
    streams.normal_records(u64, u64, i64, 2, np.empty((2, 2)))
    samplers.binomial_array(u64, u64, i64, f64, out_i)
    samplers.hypergeometric_array(u64, u64, i64, i64, i64, out_i)
    purposes = np.zeros((8, 2), dtype=np.uint64)
    T, levels, trials = 2, 1, 1
    rounds.run(mechanisms.RANDOMIZED_RESPONSE, np.array([0.0, 1.0, 0.0]), np.full((1, 1, levels, 2), 0.25),
               purposes, behaviours.MEMORYLESS, np.array([[0.3, 0.6, 1.0]]), purposes, u64[:1], u64[:1], levels,
               trials, T, 10, 100, 1, 0, True, np.empty((1, T + 1), dtype=np.int64), np.zeros((1, T)),
               np.zeros((1, T), dtype=np.int64), np.zeros((1, T), dtype=bool), np.zeros((1, T, 2)))
