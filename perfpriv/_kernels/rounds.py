"""The performative loop, compiled: all T rounds of a batch of (cell, level, trial) in one call.

:func:`run` is the round loop of :func:`perfpriv.engine.simulate` for
mechanisms and behaviours that supply a compiled step. Each (cell, level,
trial) element's numbers are keyed by (cell, trial, round, purpose), never by
its position or level, so the (cell, trial) groups run in parallel
(``prange``). In round t: the round key (child ``t`` of the trial key, child
``k`` of the cell's key); the mechanism's draw from the :math:`N_{t-1}` users
(:func:`~perfpriv._kernels.mechanisms.mechanism_round`); the behaviour's step
with the policy's cap and floor (:func:`~perfpriv._kernels.behaviours.behaviour_step`);
a trial at or below ``stop`` makes no further release.

A mechanism or a behaviour joins the loop by one step function of scalars
and a branch of those two, never by a new loop (numba cannot cache a loop
that receives functions, so an integer kind selects the step).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .behaviours import behaviour_step
from .mechanisms import mechanism_round
from .streams import child

__all__ = ["run", "run_serial"]

@njit(cache=True, nogil=True, error_model="numpy")
def _run_group(g, mech_kind, mech_params, level_table, mech_purposes, beh_kind, beh_params, beh_purposes,
              init_state, cost_table,
              cell_a, cell_b, n_levels, trials, T, n0, cap, floor, stop, record_all,
              population, sq_error, leaked_out, alive, details):
    """All T rounds of the (cell, trial) group ``g`` (arguments as in :func:`run`)."""
    per_round = level_table.shape[0] > 1
    per_cell = level_table.shape[1] > 1
    n_details = details.shape[2]
    k = g % trials
    c = g // trials
    ta, tb = child(cell_a[c], cell_b[c], np.uint64(k))
    n = np.full(n_levels, np.int64(n0))
    width = init_state.size
    state = np.empty((n_levels, width))
    for lv in range(n_levels):
        state[lv, :] = init_state
    work = np.zeros(8 * width + 64, dtype=np.int64)      # the behaviour step's scratch (kernels.behaviours.work_size)
    live = n > stop
    users = np.zeros(n_levels, dtype=np.int64)
    err = np.zeros(n_levels)
    leaked = np.zeros(n_levels, dtype=np.int64)
    rows = np.zeros((n_levels, max(n_details, 1)))
    for lv in range(n_levels):
        population[(c * n_levels + lv) * trials + k, 0] = n0
    for t in range(1, T + 1):
        ra, rb = child(ta, tb, np.uint64(t))
        need_error = record_all or t == T
        row, col = t - 1 if per_round else 0, c if per_cell else 0
        levels = level_table[row, col]
        for lv in range(n_levels):
            users[lv] = n[lv] if live[lv] else 0
        mechanism_round(mech_kind, mech_params, levels, users, ra, rb, mech_purposes, need_error,
                        err, leaked, rows)
        for lv in range(n_levels):
            e = (c * n_levels + lv) * trials + k
            alive[e, t - 1] = live[lv]
            if need_error:
                sq_error[e, t - 1] = err[lv] if live[lv] else 0.0
                for j in range(n_details):
                    details[e, t - 1, j] = rows[lv, j]
            if live[lv]:
                leaked_out[e, t - 1] = leaked[lv]
                n[lv] = behaviour_step(beh_kind, beh_params[c], state[lv], leaked[lv], ra, rb, beh_purposes, t,
                                       cost_table[row, col, lv], cap, floor, work)
            population[e, t] = n[lv]
            live[lv] = live[lv] and n[lv] > stop


@njit(cache=True, nogil=True, error_model="numpy", parallel=True)
def run(mech_kind, mech_params, level_table, mech_purposes, beh_kind, beh_params, beh_purposes,
        init_state, cost_table, cell_a, cell_b, n_levels, trials, T, n0, cap, floor, stop, record_all,
        population, sq_error, leaked_out, alive, details):
    r"""All T rounds of every (cell, level, trial) of a batch (the loop of :func:`perfpriv.engine.simulate`).

    Within a (cell, trial) group every round draws the releases of all levels at once (they share
    the round's key), then each level's population takes the behaviour's step and the policy.

    Parameters
    ----------
    mech_kind, beh_kind : int
        Kinds of :func:`perfpriv._kernels.mechanisms.mechanism_round` and
        :func:`perfpriv._kernels.behaviours.behaviour_step`.
    mech_params : float64[:]
        The mechanism's constants.
    level_table : float64[Tn, Cl, L, P]
        The mechanism's per-level quantities for each round (Tn = T for a schedule, else 1) and
        cell (Cl = number of cells for per-cell levels, else 1).
    mech_purposes, beh_purposes : uint64[:, 2]
        The hashes of the stream purposes of each step.
    beh_params : float64[C, Q]
        The behaviour's parameters per cell.
    init_state : float64[W]
        The behaviour's state of ``n0`` users (every element starts from it).
    cost_table : float64[Tn, Cl, L]
        The privacy cost of a round to each participant, indexed as ``level_table`` (behaviours that
        count it; zeros otherwise).
    cell_a, cell_b : uint64[C]
        The cells' keys.
    n_levels, trials, T, n0, cap, floor, stop : int
        Batch sizes, horizon and population policy (``cap`` < 0: no cap).
    record_all : bool
        Draw every round's error (else the last round's only).
    population : int64[E, T + 1]; sq_error : float64[E, T]; leaked_out : int64[E, T];
    alive : bool[E, T]; details : float64[E, T, D]
        Outputs, E = C·L·trials elements in the order (cell, level, trial), filled in place
        (``details`` of rounds without an error draw are left as given).
    """
    for g in prange(cell_a.size * trials):
        _run_group(g, mech_kind, mech_params, level_table, mech_purposes, beh_kind, beh_params, beh_purposes,
                  init_state, cost_table, cell_a, cell_b, n_levels, trials, T, n0, cap, floor, stop, record_all,
                  population, sq_error, leaked_out, alive, details)


@njit(cache=True, nogil=True, error_model="numpy")
def run_serial(mech_kind, mech_params, level_table, mech_purposes, beh_kind, beh_params, beh_purposes,
               init_state, cost_table, cell_a, cell_b, n_levels, trials, T, n0, cap, floor, stop, record_all,
               population, sq_error, leaked_out, alive, details):
    """:func:`run` on one thread (the same numbers): for a batch with a single (cell, trial) group, where a
    parallel loop would only wait for its idle threads."""
    for g in range(cell_a.size * trials):
        _run_group(g, mech_kind, mech_params, level_table, mech_purposes, beh_kind, beh_params, beh_purposes,
                  init_state, cost_table, cell_a, cell_b, n_levels, trials, T, n0, cap, floor, stop, record_all,
                  population, sq_error, leaked_out, alive, details)
