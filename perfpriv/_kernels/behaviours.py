"""Compiled behaviours: how one level's population answers the leaks of a round.

:func:`behaviour_step` is what :func:`perfpriv._kernels.rounds.run` calls for
each level after the release (and what :func:`step_batch` applies to a whole
batch for the engine's round-by-round loop). A behaviour's state is a row of
float64 counts -- the behaviour's simulation state of one (cell, level,
trial) flattened, whole numbers held exactly -- that its step updates in
place, applying the population policy's cap and floor itself; it returns the
new population. A new compiled behaviour is one step function with the
signature of :func:`leak_count_step`, one kind constant, its purposes below
and one branch of :func:`behaviour_step`: never a new loop.

Every draw is a pure function of the round key and its purpose (the streams
of :mod:`perfpriv._kernels.streams`, the exact samplers of
:mod:`perfpriv._kernels.samplers`); the steps allocate nothing (their
temporaries live in the caller's ``work`` buffer, :func:`work_size`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .samplers import binomial, hypergeometric
from .streams import child, child_hashed

__all__ = ["MEMORYLESS", "LEAK_COUNT", "HETEROGENEOUS", "BUDGET_AWARE", "CONTAGION", "PURPOSES",
           "memoryless_step", "leak_count_step", "heterogeneous_step", "budget_aware_step", "contagion_step",
           "behaviour_step", "step_batch", "work_size"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

#: Kind of behaviour: memoryless users (:class:`perfpriv.behaviour.Memoryless`).
MEMORYLESS = 0
#: Kind of behaviour: users with memory (:class:`perfpriv.behaviour.LeakCount`).
LEAK_COUNT = 1
#: Kind of behaviour: classes of sensitivities (:class:`perfpriv.behaviour.Heterogeneous`).
HETEROGENEOUS = 2
#: Kind of behaviour: privacy budgets (:class:`perfpriv.behaviour.BudgetAware`).
BUDGET_AWARE = 3
#: Kind of behaviour: distrust that spreads (:class:`perfpriv.behaviour.Contagion`).
CONTAGION = 4

#: The stream purposes each behaviour kind draws from, in the order of its ``purposes`` rows.
PURPOSES = {MEMORYLESS: ("leave", "join"),
            LEAK_COUNT: ("leave", "join", "split", "cap", "floor"),
            HETEROGENEOUS: ("leave", "join", "split", "classes", "cap", "floor"),
            BUDGET_AWARE: ("leave", "join", "split", "classes", "cap", "floor"),
            CONTAGION: ("leave", "join")}

_LEAVE, _JOIN, _SPLIT = 0, 1, 2


def work_size(width):
    """Length of the int64 ``work`` buffer the steps need for a state of ``width`` entries."""
    return 8 * int(width) + 64


@njit(**_JIT)
def _key(a, b, purposes, row):
    return child_hashed(a, b, purposes[row, 0], purposes[row, 1])


@njit(**_JIT)
def _policy(m, cap, floor):
    if cap >= 0:
        m = min(m, cap)
    if floor:
        m = max(m, floor)
    return m


# ------------------------------------------------------------------ exact splits of one stream
@njit(**_JIT)
def _split_chain(a, b, counts, nsample, out):
    r"""``nsample`` items drawn without replacement from classes of sizes ``counts`` (the chain rule).

    Class j receives :math:`\mathrm{Hypergeometric}(N_j, N_{j+1} + \dots + N_{S-1}, \text{remaining})` items, with N = ``counts``,
    from child j of the key
    (:func:`perfpriv.keyed.multivariate_hypergeometric`, one element).
    """
    S = counts.size
    remaining = np.int64(0)
    for j in range(S):
        remaining += counts[j]
    left = np.int64(nsample)
    for j in range(S - 1):
        rest = remaining - counts[j]
        ca, cb = child(a, b, np.uint64(j))
        take = hypergeometric(ca, cb, counts[j], rest, left)
        out[j] = take
        left -= take
        remaining = rest
    out[S - 1] = left


@njit(**_JIT)
def _split_multinomial(a, b, total, weights, out):
    """Multinomial(total; weights), exact, by the chain of conditional binomials (class j: child j)."""
    S = weights.size
    left = np.int64(total)
    mass = 1.0
    for j in range(S - 1):
        if mass > 0:
            ratio = weights[j] / mass
            p = ratio if ratio < 1.0 else 1.0
        else:
            p = 0.0
        ca, cb = child(a, b, np.uint64(j))
        take = binomial(ca, cb, left, p)
        out[j] = take
        left -= take
        mass -= weights[j]
    out[S - 1] = left


@njit(**_JIT)
def _split_by_halves(a, b, counts, nsample, take, prefix):
    """``nsample`` items drawn without replacement from classes ``counts``, down a binary tree.

    The multivariate hypergeometric law: the items of a node split between
    its two halves by one hypergeometric draw; node ``i`` of depth ``j``
    draws from ``child(child(key, j), i)`` and only when both halves hold
    items and the node has items to split (about log2(S) draws per item
    path instead of S − 1). ``take`` (length >= the padded width, a power of
    two) receives the split; ``prefix`` (length >= S + 1) is scratch.
    """
    S = counts.size
    width = 1
    while width < S:
        width *= 2
    prefix[0] = 0
    for j in range(S):
        prefix[j + 1] = prefix[j] + counts[j]
    total_width = width
    take[0] = nsample
    depth = 0
    while width > 1:
        half = width // 2
        nodes = total_width // width
        pa, pb = child(a, b, np.uint64(depth))
        for i in range(nodes - 1, -1, -1):
            tk = take[i]
            tl = np.int64(0)
            if tk > 0:
                start = i * width
                lo = prefix[min(start, S)]
                mid = prefix[min(start + half, S)]
                hi = prefix[min(start + width, S)]
                left, right = mid - lo, hi - mid
                if right == 0:
                    tl = tk
                elif left > 0:
                    na, nb = child(pa, pb, np.uint64(i))
                    tl = hypergeometric(na, nb, left, right, tk)
            take[2 * i] = tl
            take[2 * i + 1] = tk - tl
        width = half
        depth += 1


@njit(**_JIT)
def _cap_recruits(state_total, recruits, cap, a, b, removed):
    """Turn away the excess of ``state_total`` over ``cap`` among ``recruits`` (a uniformly random subset)."""
    if cap < 0:
        return
    excess = state_total - cap
    if excess <= 0:
        return
    total = np.int64(0)
    for j in range(recruits.size):
        total += recruits[j]
    _split_chain(a, b, recruits, min(excess, total), removed)
    for j in range(recruits.size):
        recruits[j] -= removed[j]


@njit(**_JIT)
def _typed_counts(state, work):
    """A typed state's counts as integers, and the scratch rows of a step.

    ``work`` holds four rows of ``state.size``: the counts (filled from ``state``), the leaks by type,
    the recruits by type and those removed. Returns the four rows and the population.
    """
    k = state.size
    counts = work[:k]
    n = np.int64(0)
    for c in range(k):
        counts[c] = np.int64(state[c])
        n += counts[c]
    return counts, work[k:2 * k], work[2 * k:3 * k], work[3 * k:4 * k], n


# ------------------------------------------------------------------ the steps
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
def leak_count_step(params, state, leaked, a, b, purposes, t, cost, cap, floor, work):
    """Users with memory (:class:`perfpriv.behaviour.LeakCount`): one round, the policy included.

    ``params = (q, r, leak_rule, k)``; ``state[c]`` counts the users with c past leaks (c < k − 1) and with
    k − 1 or more (c = k − 1). The K leaks split over the types by a multivariate hypergeometric
    ("split"), Binomial(leaked of type k − 1, q) leave ("leave"), Binomial(pool, r) recruits join type 0
    ("join"); recruits beyond ``cap`` are turned away at random ("cap"), a population below ``floor``
    regains fresh users. ``t`` and ``cost`` are unused. Returns the new population.
    """
    k = state.size
    counts, by_type, recruits, removed, n = _typed_counts(state, work)
    sa, sb = _key(a, b, purposes, _SPLIT)
    _split_chain(sa, sb, counts, leaked, by_type)
    la, lb = _key(a, b, purposes, _LEAVE)
    leave = binomial(la, lb, by_type[k - 1], params[0])
    pool = n - leaked if params[2] != 0.0 else n
    ja, jb = _key(a, b, purposes, _JOIN)
    join = binomial(ja, jb, pool, params[1])
    for c in range(k):
        counts[c] -= by_type[c]
    for c in range(1, k):
        counts[c] += by_type[c - 1]
    counts[k - 1] += by_type[k - 1] - leave
    counts[0] += join
    total = np.int64(0)
    for c in range(k):
        recruits[c] = 0
        total += counts[c]
    recruits[0] = join
    ca, cb = _key(a, b, purposes, 3)
    before = recruits[0]
    _cap_recruits(total, recruits, cap, ca, cb, removed)
    counts[0] -= before - recruits[0]
    total -= before - recruits[0]
    if floor and total < floor:
        counts[0] += floor - total        # fresh users have no past leak
        total = floor
    for c in range(k):
        state[c] = counts[c]
    return total


@njit(**_JIT)
def heterogeneous_step(params, state, leaked, a, b, purposes, t, cost, cap, floor, work):
    """Classes of sensitivities (:class:`perfpriv.behaviour.Heterogeneous`): one round, the policy included.

    ``params = (r, leak_rule, S, q_0 .. q_{S-1}, w_0 .. w_{S-1})``; ``state[j]`` counts class j. The K leaks
    split over the classes ("split"); :math:`\\mathrm{Binomial}(\\text{leaked of class } j, q_j)` leave (class 0 from "leave", class
    j > 0 from its child j); Binomial(pool, r) recruits ("join") split over the classes by the weights
    ("classes"); the cap turns recruits away at random ("cap"), the floor adds fresh users whose classes
    are drawn as a recruit's ("floor").
    """
    S = state.size
    q = params[3:3 + S]
    w = params[3 + S:3 + 2 * S]
    counts, by_class, recruits, removed, n = _typed_counts(state, work)
    sa, sb = _key(a, b, purposes, _SPLIT)
    _split_chain(sa, sb, counts, leaked, by_class)
    la, lb = _key(a, b, purposes, _LEAVE)
    for j in range(S):
        if j == 0:
            ka, kb = la, lb
        else:
            ka, kb = child(la, lb, np.uint64(j))
        counts[j] -= binomial(ka, kb, by_class[j], q[j])
    pool = n - leaked if params[1] != 0.0 else n
    ja, jb = _key(a, b, purposes, _JOIN)
    join = binomial(ja, jb, pool, params[0])
    ra, rb = _key(a, b, purposes, 3)
    _split_multinomial(ra, rb, join, w, recruits)
    total = np.int64(0)
    for j in range(S):
        counts[j] += recruits[j]
        total += counts[j]
    ca, cb = _key(a, b, purposes, 4)
    if cap >= 0 and total > cap:
        _split_chain(ca, cb, recruits, min(total - cap, join), removed)
        for j in range(S):
            counts[j] -= removed[j]
            total -= removed[j]
    if floor and total < floor:
        fa, fb = _key(a, b, purposes, 5)
        _split_multinomial(fa, fb, floor - total, w, removed)
        for j in range(S):
            counts[j] += removed[j]
        total = floor
    for j in range(S):
        state[j] = counts[j]
    return total


@njit(**_JIT)
def budget_aware_step(params, state, leaked, a, b, purposes, t, cost, cap, floor, work):
    r"""Privacy budgets (:class:`perfpriv.behaviour.BudgetAware`): one round, the policy included.

    ``params = (q, r, leak_rule, C, tol_0 .. tol_{C-1}, w_0 .. w_{C-1})``; the state holds C rows of
    S = T + 1 cohort counts (class c, cohort s at :math:`c\cdot S + s`) and one row of the privacy each cohort has
    spent. Every cohort present in round ``t`` (s < t) pays ``cost``; Binomial(K, q) leaked users leave
    ("leave"), a uniformly random set of the present users (``_split_by_halves``, "split"); the
    cohorts whose spending exceeds a class's tolerance lose that class; Binomial(pool, r) recruits
    ("join", classes by "classes") join cohort t, those beyond the cap turned away at random ("cap");
    fresh users bring a population below the floor back to it ("floor").
    """
    C = np.int64(params[3])
    tol = params[4:4 + C]
    w = params[4 + C:4 + 2 * C]
    S = state.size // (C + 1)
    spent = state[C * S:]
    live = min(t, S)
    flat = work[:C * live]
    n = np.int64(0)
    for c in range(C):
        for s in range(S):
            n += np.int64(state[c * S + s])
    for s in range(live):                    # the cohorts present this round pay its cost
        spent[s] = spent[s] + cost
    la, lb = _key(a, b, purposes, _LEAVE)
    gone = binomial(la, lb, leaked, params[0])
    if gone > 0:
        for c in range(C):
            for s in range(live):
                flat[c * live + s] = np.int64(state[c * S + s])
        width = 1
        while width < C * live:
            width *= 2
        take = work[C * live:C * live + width]
        prefix = work[C * live + width:2 * C * live + width + 1]
        sa, sb = _key(a, b, purposes, _SPLIT)
        _split_by_halves(sa, sb, flat, gone, take, prefix)
        for c in range(C):
            for s in range(live):
                state[c * S + s] -= take[c * live + s]
    pool = n - leaked if params[2] != 0.0 else n
    ja, jb = _key(a, b, purposes, _JOIN)
    join = binomial(ja, jb, pool, params[1])
    recruits = work[:C]
    removed = work[C:2 * C]
    ra, rb = _key(a, b, purposes, 3)
    _split_multinomial(ra, rb, join, w, recruits)
    total = np.int64(0)
    for c in range(C):
        for s in range(S):
            if spent[s] > tol[c]:
                state[c * S + s] = 0.0
            total += np.int64(state[c * S + s])
    cohort = min(t, S - 1)
    ca, cb = _key(a, b, purposes, 4)
    _cap_recruits(total + join, recruits, cap, ca, cb, removed)
    for c in range(C):
        state[c * S + cohort] += recruits[c]
        total += recruits[c]
    if floor and total < floor:
        fa, fb = _key(a, b, purposes, 5)
        _split_multinomial(fa, fb, floor - total, w, removed)
        for c in range(C):
            state[c * S + cohort] += removed[c]
        total = floor
    return total


@njit(**_JIT)
def contagion_step(params, state, leaked, a, b, purposes, t, cost, cap, floor, work):
    """Distrust that spreads (:class:`perfpriv.behaviour.Contagion`): one round, the policy included.

    ``params = (q, r, kappa, leak_rule)``; ``state = (N, D_prev, N_prev)``. A leaked user leaves with
    :math:`q_t = \\min(1, q + κ D_{\\mathrm{prev}}/N_{\\mathrm{prev}})` ("leave"), Binomial(pool, r) recruits join ("join"); the new state
    is (N', D, N) with N' capped and floored.
    """
    n = np.int64(state[0])
    prev = state[2]
    frac = state[1] / prev if prev > 0 else 0.0
    qt = params[0] + params[2] * frac
    if not qt < 1.0:
        qt = 1.0
    la, lb = _key(a, b, purposes, _LEAVE)
    leave = binomial(la, lb, leaked, qt)
    pool = n - leaked if params[3] != 0.0 else n
    ja, jb = _key(a, b, purposes, _JOIN)
    join = binomial(ja, jb, pool, params[1])
    nxt = _policy(n - leave + join, cap, floor)
    state[0] = nxt
    state[1] = leave
    state[2] = n
    return nxt


@njit(**_JIT)
def behaviour_step(kind, params, state, leaked, a, b, purposes, t, cost, cap, floor, work):
    r"""One round of the behaviour of ``kind`` for one (cell, level, trial), the population policy included.

    Parameters
    ----------
    kind : int
        A kind constant of this module.
    params : float64[Q]
        The behaviour's parameters for this cell.
    state : float64[W]
        The behaviour's state (whole numbers held exactly), updated in place.
    leaked : int
        Records of this level that leaked this round.
    a, b : uint64
        The round key.
    purposes : uint64[:, 2]
        Hashes of the behaviour's stream purposes (:data:`PURPOSES`).
    t : int
        The round (1-based).
    cost : float
        The round's privacy cost to each participant (behaviours that count it).
    cap, floor : int
        The population policy (``cap`` < 0: no cap).
    work : int64[:]
        Scratch of at least :func:`work_size` ``(W)`` entries.

    Returns
    -------
    int
        The population after the round, the cap and the floor.
    """
    if kind == MEMORYLESS:
        n = np.int64(state[0])
        m = _policy(memoryless_step(params, n, leaked, a, b, purposes), cap, floor)
        state[0] = m
        return m
    if kind == LEAK_COUNT:
        return leak_count_step(params, state, leaked, a, b, purposes, t, cost, cap, floor, work)
    if kind == HETEROGENEOUS:
        return heterogeneous_step(params, state, leaked, a, b, purposes, t, cost, cap, floor, work)
    if kind == BUDGET_AWARE:
        return budget_aware_step(params, state, leaked, a, b, purposes, t, cost, cap, floor, work)
    if kind == CONTAGION:
        return contagion_step(params, state, leaked, a, b, purposes, t, cost, cap, floor, work)
    return np.int64(-1)


@njit(**_JIT)
def step_batch(kind, params, state, leaked, key_a, key_b, purposes, t, cost, cap, floor, population):
    """:func:`behaviour_step` for every element of a flat batch (the engine's round-by-round loop).

    ``params[E, Q]``, ``state[E, W]`` (updated in place), ``leaked``, ``key_a``, ``key_b``, ``cost``
    and ``population`` (output) of length E.
    """
    work = np.zeros(8 * state.shape[1] + 64, dtype=np.int64)
    for e in range(state.shape[0]):
        population[e] = behaviour_step(kind, params[e], state[e], leaked[e], key_a[e], key_b[e], purposes, t,
                                       cost[e], cap, floor, work)
