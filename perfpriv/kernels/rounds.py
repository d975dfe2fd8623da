"""The performative loop, compiled: all T rounds of a batch of (cell, level, trial) in one call.

:func:`run` is the round loop of :func:`perfpriv.engine.simulate` for
mechanisms and behaviours that supply a compiled step. Each batch element
(cell, level, trial) evolves on its own -- its random numbers are keyed by
(cell, trial, round, purpose), never by its position in the batch or by the
level (common random numbers) -- so the elements run in parallel
(``prange``) and each element's T rounds run in one loop:

1. the round key: child ``t`` of the trial key (child ``k`` of the cell's key);
2. the mechanism's draw from the ``N_{t-1}`` current users
   (:func:`mechanism_draw`: squared error, leaked records, details);
3. the behaviour's step: departures and recruits (:func:`behaviour_step`),
   then the population policy's cap and floor; a trial whose population
   falls to ``stop`` or below makes no further release.

A mechanism or a behaviour joins the compiled loop by one step function of
scalars and a branch of :func:`mechanism_draw` or :func:`behaviour_step`
(numba cannot cache a loop that receives functions as arguments, so the
steps are selected by an integer kind); never by a new loop. The Python
engine validates, builds the keys and level tables, calls :func:`run` and
packs the arrays into a :class:`perfpriv.engine.SimulationRun`; the slow
truth the loop is tested against is each mechanism's agent-by-agent
reference.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .samplers import binomial
from .streams import child, child_hashed, stream_increment, uniform

__all__ = ["RANDOMIZED_RESPONSE", "MEMORYLESS", "MECHANISM_PURPOSES", "MECHANISM_DETAILS", "BEHAVIOUR_PURPOSES",
           "randomized_response_draw", "memoryless_step", "mechanism_draw", "behaviour_step", "run"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

#: Kind of mechanism: randomized response (:class:`perfpriv.bernoulli.RandomizedResponse`).
RANDOMIZED_RESPONSE = 0
#: Kind of behaviour: memoryless users (:class:`perfpriv.behaviour.Memoryless`).
MEMORYLESS = 0

#: The stream purposes each mechanism kind draws from, in the order of its ``purposes`` rows.
MECHANISM_PURPOSES = {RANDOMIZED_RESPONSE: ("leaks", "truth", "kept-ones", "flipped-ones")}
#: The details each mechanism kind reports per round, in the order of its ``details`` row.
MECHANISM_DETAILS = {RANDOMIZED_RESPONSE: ("estimate", "truth")}
#: The stream purposes each behaviour kind draws from, in the order of its ``purposes`` rows.
BEHAVIOUR_PURPOSES = {MEMORYLESS: ("leave", "join")}


@njit(**_JIT)
def randomized_response_draw(params, level, users, a, b, purposes, need_error, details):
    """One randomized-response round of one (cell, level, trial) (paper §3, eq. 1).

    Parameters
    ----------
    params : float64[3]
        ``(mu_low, mu_high, clip)``: μ_t ~ Uniform(mu_low, mu_high) (constant when equal), clip μ̂ to [0, 1].
    level : float64[2]
        ``(beta, keep)``: β(ε) and the probability 1/2 + β that an answer is kept (a leak).
    users : int
        N_{t−1} (0 for a stopped trial).
    a, b : uint64
        The round key.
    purposes : uint64[4, 2]
        Hashes of the purposes of :data:`MECHANISM_PURPOSES`.
    need_error : bool
        Whether to draw the estimate (the leaks alone drive the population).
    details : float64[2]
        Filled with the estimate μ̂_t and the truth μ_t.

    Returns
    -------
    (float, int)
        Squared error (μ̂_t − μ_t)² and the number of leaked answers K ~ Binomial(N, 1/2 + β).
        The ones among kept answers are Binomial(K, μ_t), among flipped ones Binomial(N − K, μ_t);
        the 1-responses are S = kept ones + flipped zeros and μ̂ = (S/N − 1/2 + β)/(2β).
    """
    beta, keep = level[0], level[1]
    ka, kb = child_hashed(a, b, purposes[0, 0], purposes[0, 1])
    leaked = binomial(ka, kb, users, keep)
    if not need_error:
        return 0.0, leaked
    low, high = params[0], params[1]
    if low == high:
        truth = low
    else:
        ta, tb = child_hashed(a, b, purposes[1, 0], purposes[1, 1])
        truth = low + (high - low) * uniform(ta, stream_increment(tb), 0)
    ka, kb = child_hashed(a, b, purposes[2, 0], purposes[2, 1])
    ones_kept = binomial(ka, kb, leaked, truth)
    fa, fb = child_hashed(a, b, purposes[3, 0], purposes[3, 1])
    ones_flipped = binomial(fa, fb, users - leaked, truth)
    responses = ones_kept + (users - leaked - ones_flipped)
    est = (responses / max(users, 1) - 0.5 + beta) / (2.0 * beta)
    if params[2] != 0.0:
        est = min(max(est, 0.0), 1.0)
    details[0] = est
    details[1] = truth
    diff = est - truth
    return diff * diff, leaked


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
def mechanism_draw(kind, params, level, users, a, b, purposes, need_error, details):
    """The draw of the mechanism of ``kind`` (one branch per compiled mechanism)."""
    if kind == RANDOMIZED_RESPONSE:
        return randomized_response_draw(params, level, users, a, b, purposes, need_error, details)
    return np.nan, np.int64(-1)


@njit(**_JIT)
def behaviour_step(kind, params, n, leaked, a, b, purposes):
    """The step of the behaviour of ``kind`` (one branch per compiled behaviour)."""
    if kind == MEMORYLESS:
        return memoryless_step(params, n, leaked, a, b, purposes)
    return np.int64(-1)


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def run(mech_kind, mech_params, level_table, mech_purposes, beh_kind, beh_params, beh_purposes,
        cell_a, cell_b, n_levels, trials, T, n0, cap, floor, stop, record_all,
        population, sq_error, leaked_out, alive, details):
    """All T rounds of every (cell, level, trial) of a batch (the loop of :func:`perfpriv.engine.simulate`).

    Parameters
    ----------
    mech_kind, beh_kind : int
        Kinds of :func:`mechanism_draw` and :func:`behaviour_step`.
    mech_params : float64[:]
        The mechanism's constants.
    level_table : float64[Tn, Cl, L, P]
        The mechanism's per-level quantities for each round (Tn = T for a schedule, else 1) and
        cell (Cl = number of cells for per-cell levels, else 1).
    mech_purposes, beh_purposes : uint64[:, 2]
        The hashes of the stream purposes of each step.
    beh_params : float64[C, Q]
        The behaviour's parameters per cell.
    cell_a, cell_b : uint64[C]
        The cells' keys.
    n_levels, trials, T, n0, cap, floor, stop : int
        Batch sizes, horizon and population policy (``cap < 0``: no cap).
    record_all : bool
        Draw every round's error (else the last round's only).
    population : int64[E, T + 1]; sq_error : float64[E, T]; leaked_out : int64[E, T];
    alive : bool[E, T]; details : float64[E, T, D]
        Outputs, E = C·L·trials elements in the order (cell, level, trial), filled in place
        (``details`` of rounds without an error draw are left as given).
    """
    n_elements = population.shape[0]
    per_round = level_table.shape[0] > 1
    per_cell = level_table.shape[1] > 1
    n_details = details.shape[2]
    for e in prange(n_elements):
        k = e % trials
        lv = (e // trials) % n_levels
        c = e // (trials * n_levels)
        ta, tb = child(cell_a[c], cell_b[c], np.uint64(k))
        n = np.int64(n0)
        live = n > stop
        population[e, 0] = n
        row = np.empty(max(n_details, 1))
        for t in range(1, T + 1):
            ra, rb = child(ta, tb, np.uint64(t))
            alive[e, t - 1] = live
            need_error = record_all or t == T
            level = level_table[t - 1 if per_round else 0, c if per_cell else 0, lv]
            users = n if live else np.int64(0)
            err, leaked = mechanism_draw(mech_kind, mech_params, level, users, ra, rb, mech_purposes,
                                         need_error, row)
            if need_error:
                sq_error[e, t - 1] = err if live else 0.0
                for j in range(n_details):
                    details[e, t - 1, j] = row[j]
            if not live:
                leaked = 0
            leaked_out[e, t - 1] = leaked
            if live:
                n = behaviour_step(beh_kind, beh_params[c], n, leaked, ra, rb, beh_purposes)
                if cap >= 0:
                    n = min(n, cap)
                if floor:
                    n = max(n, floor)
            population[e, t] = n
            live = live and n > stop
