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

from . import samplers, streams

__all__ = ["streams", "samplers"]
