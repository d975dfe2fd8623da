"""Compiled behaviours: how one level's population answers the leaks of a round.

:func:`behaviour_step` is what :func:`perfpriv.kernels.rounds.run` calls for
each level after the release. A new compiled behaviour is one step function
of scalars with the signature of :func:`memoryless_step`, one kind constant,
its purposes below and one branch of :func:`behaviour_step`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .samplers import binomial
from .streams import child_hashed

__all__ = ["MEMORYLESS", "PURPOSES", "memoryless_step", "behaviour_step"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

#: Kind of behaviour: memoryless users (:class:`perfpriv.behaviour.Memoryless`).
MEMORYLESS = 0

#: The stream purposes each behaviour kind draws from, in the order of its ``purposes`` rows.
PURPOSES = {MEMORYLESS: ("leave", "join")}


@njit(**_JIT)
def memoryless_step(params, n, leaked, a, b, purposes):
    """Memoryless users' round (paper §3): each leaked user leaves w.p. q, each pool user recruits w.p. r.

    ``params = (q, r, leak_rule)``; the pool is the N − K users whose answer did not leak
    under the leak rule (``leak_rule = 1``) and all N users under the agnostic rule.
    Returns N − Binomial(K, q) + Binomial(pool, r), before the policy's cap and floor.
    """
    pool = n - leaked if params[2] != 0.0 else n
    la, lb = child_hashed(a, b, purposes[0, 0], purposes[0, 1])
    leave = binomial(la, lb, leaked, params[0])
    ja, jb = child_hashed(a, b, purposes[1, 0], purposes[1, 1])
    join = binomial(ja, jb, pool, params[1])
    return n - leave + join


@njit(**_JIT)
def behaviour_step(kind, params, n, leaked, a, b, purposes):
    """The population after one round's departures and recruits, by the behaviour of ``kind``.

    Parameters
    ----------
    kind : int
        A kind constant of this module.
    params : float64[Q]
        The behaviour's parameters for this cell.
    n : int
        N_{t−1}.
    leaked : int
        Records of this level that leaked this round.
    a, b : uint64
        The round key.
    purposes : uint64[:, 2]
        Hashes of the behaviour's stream purposes.

    Returns
    -------
    int
        The population before the policy's cap and floor.
    """
    if kind == MEMORYLESS:
        return memoryless_step(params, n, leaked, a, b, purposes)
    return np.int64(-1)
