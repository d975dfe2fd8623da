"""Compiled kernels (numba): the keyed streams, the exact samplers and the round loops.

Every function here is ``@njit(cache=True)`` over plain scalars and arrays,
with no Python object inside, and draws every random number as a pure
function of (key, counter), so that a later ``numba.cuda`` port can reuse
it. Each hot path has this one implementation: :mod:`perfpriv.keyed`'s
vectorized streams and samplers call these loops, and the engine runs a
whole T-round loop of a batch in one call where its mechanism and behaviour
supply compiled steps (:mod:`perfpriv._kernels.rounds`). The slow, obvious
truth they are tested against is the agent-by-agent reference of each
mechanism and the definitions on Python integers (``tests/test_kernels.py``).

Modules
-------
streams
    SplitMix64 keys and counters: uniforms, normals (scipy's ``ndtri``), child keys.
samplers
    Exact binomial (inversion, BTRS) and hypergeometric draws of one stream.
gaussian_mean
    Algorithm 1's round: the projected draw and the records draw, for every level of a group.
mechanisms
    A round's releases for every level of a (cell, trial) group, by mechanism kind.
behaviours
    One level's population step, by behaviour kind.
rounds
    The compiled T-round loop of the engine (parallel over (cell, trial) groups).

Caching
-------
numba caches a compiled function on disk and reloads it while *its own*
source file is unchanged, even when a function it calls (in another file)
has changed. On import this package compares a digest of all its sources
with the one stored beside numba's cache (:func:`drop_stale_caches`) and, on
a mismatch, drops every kernel's cached index, so that an edited or
upgraded perfpriv never runs stale compiled code.
"""

import hashlib
from pathlib import Path

import numpy as np
from numba.core.dispatcher import Dispatcher

from . import behaviours, gaussian_mean, mechanisms, rounds, samplers, streams

__all__ = ["streams", "samplers", "gaussian_mean", "mechanisms", "behaviours", "rounds", "warm",
           "source_digest", "drop_stale_caches"]

#: Name of the file, in numba's cache folder of the kernels, that holds the digest of their sources.
STAMP = "perfpriv-kernels.stamp"


def source_digest(folder=None):
    """SHA-256 of the kernels' source files (name and contents, in name order)."""
    folder = Path(__file__).parent if folder is None else Path(folder)
    h = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _dispatchers():
    for module in (streams, samplers, gaussian_mean, mechanisms, behaviours, rounds):
        for obj in vars(module).values():
            if isinstance(obj, Dispatcher) and getattr(obj, "_cache", None) is not None:
                yield obj


def drop_stale_caches(dispatchers=None, digest=None):
    """Drop numba's cached kernels if the kernels' sources changed since they were cached.

    Parameters
    ----------
    dispatchers : iterable, optional
        Compiled functions with a ``_cache`` (numba's ``FunctionCache``: ``cache_path``, ``flush()``);
        default: every kernel of this package.
    digest : str, optional
        Digest of the current sources (default :func:`source_digest`).

    Returns
    -------
    bool
        Whether the caches were dropped (the stored digest was missing or different).
    """
    dispatchers = list(_dispatchers() if dispatchers is None else dispatchers)
    digest = source_digest() if digest is None else digest
    if not dispatchers:
        return False
    stamp = Path(dispatchers[0]._cache.cache_path) / STAMP
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    for dispatcher in dispatchers:
        dispatcher._cache.flush()
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:   # a read-only install: numba then caches elsewhere, or not at all
        pass
    return True


try:
    drop_stale_caches()
except Exception:   # pragma: no cover - a cache that cannot be inspected is recompiled by numba anyway
    pass


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
    # one specialisation of each loop serves every mechanism and behaviour kind (the kinds are integers)
    for loop in (rounds.run, rounds.run_serial):
        loop(mechanisms.RANDOMIZED_RESPONSE, np.array([0.0, 1.0, 0.0]), np.full((1, 1, levels, 2), 0.25),
             purposes, behaviours.MEMORYLESS, np.array([[0.3, 0.6, 1.0]]), purposes, np.array([10.0]),
             np.zeros((1, 1, levels)), u64[:1], u64[:1], levels, trials, T, 10, 100, 1, 0, True,
             np.empty((1, T + 1), dtype=np.int64), np.zeros((1, T)), np.zeros((1, T), dtype=np.int64),
             np.zeros((1, T), dtype=bool), np.zeros((1, T, 2)))
    # the behaviours' steps on a batch (the engine's round-by-round loop, for stateful mechanisms)
    behaviours.step_batch(behaviours.MEMORYLESS, np.array([[0.3, 0.6, 1.0]]), np.array([[10.0]]), i64[:1].copy(),
                          u64[:1].copy(), u64[:1].copy(), purposes, 1, np.zeros(1), -1, 1, np.empty(1, dtype=np.int64))
    # Algorithm 1's rounds outside the engine's loop (perfpriv.projected.draw_rounds, without the records flag;
    # the records draw, with it): (tau, d, sigma2, exact, band quantile) and (tau, d, R, exact, has_mu, has_L, ...)
    args = (np.array([1.0, 2.0]), i64, np.zeros(2, dtype=np.int64), u64[:1].copy(), u64[:1].copy(), purposes,
            np.zeros(2), np.zeros(2, dtype=np.int64))
    gaussian_mean.draw_groups(np.array([0.02, 3.0, 1.0, 0.0, 92.0]), *args)
    gaussian_mean.draw_groups(np.r_[0.02, 3.0, 10.0, 0.0, 0.0, 0.0, np.zeros(3 + 2 * 9)], *args, True)
