"""Compiled mechanisms: the release of one round for every level of a (cell, trial) group.

:func:`mechanism_round` is what :func:`perfpriv._kernels.rounds.run` calls each
round. The levels of a group share the round's key (common random numbers),
so a mechanism may draw what they share once (the records of the largest
population, say) and then evaluate every level. A new compiled mechanism is
one function with the signature of :func:`randomized_response_round`, one
kind constant, its purposes and details below, and one branch of
:func:`mechanism_round`.
"""

from __future__ import annotations

from numba import njit

from . import gaussian_mean
from .samplers import binomial
from .streams import child_hashed, stream_increment, uniform

__all__ = ["RANDOMIZED_RESPONSE", "GAUSSIAN_MEAN", "GAUSSIAN_RECORDS", "PURPOSES", "DETAILS",
           "randomized_response_draw", "randomized_response_round", "gaussian_mean_round", "mechanism_round"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

#: Kind of mechanism: randomized response (:class:`perfpriv.bernoulli.RandomizedResponse`).
RANDOMIZED_RESPONSE = 0

#: Kind of mechanism: Algorithm 1's projected draw (:class:`perfpriv.gaussian.GaussianMean`).
GAUSSIAN_MEAN = 1
#: Kind of mechanism: Algorithm 1 drawn from every record's coordinates (``GaussianMean(draw="records")``).
GAUSSIAN_RECORDS = 2

#: The stream purposes each mechanism kind draws from, in the order of its ``purposes`` rows.
PURPOSES = {RANDOMIZED_RESPONSE: ("leaks", "truth", "kept-ones", "flipped-ones"),
            GAUSSIAN_MEAN: gaussian_mean.PURPOSES, GAUSSIAN_RECORDS: gaussian_mean.RECORDS_PURPOSES}
#: The details each mechanism kind reports per round, in the order of its ``details`` columns.
DETAILS = {RANDOMIZED_RESPONSE: ("estimate", "truth"), GAUSSIAN_MEAN: (), GAUSSIAN_RECORDS: ()}


@njit(**_JIT)
def randomized_response_draw(params, level, users, a, b, purposes, need_error, details):
    r"""One randomized-response release of one (cell, level, trial) (paper §3, eq. 1).

    Parameters
    ----------
    params : float64[3]
        ``(mu_low, mu_high, clip)``: :math:`μ_t` ~ Uniform(mu_low, mu_high) (constant when equal), clip μ̂ to [0, 1].
    level : float64[2]
        ``(beta, keep)``: β(ε) and the probability 1/2 + β that an answer is kept (a leak).
    users : int
        :math:`N_{t-1}` (0 for a stopped trial).
    a, b : uint64
        The round key.
    purposes : uint64[4, 2]
        Hashes of the purposes of :data:`PURPOSES`.
    need_error : bool
        Whether to draw the estimate (the leaks alone drive the population).
    details : float64[2]
        Filled with the estimate :math:`\hat μ_t` and the truth :math:`μ_t`.

    Returns
    -------
    (float, int)
        Squared error :math:`(\hat μ_t - μ_t)^{2}` and the number of leaked answers :math:`K \sim \mathrm{Binomial}(N, 1/2 + β)`.
        The ones among kept answers are :math:`\mathrm{Binomial}(K, μ_t)`, among flipped ones :math:`\mathrm{Binomial}(N - K, μ_t)`;
        the 1-responses are S = kept ones + flipped zeros and :math:`\hat μ = (S/N - 1/2 + β)/(2β)`.
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
def randomized_response_round(params, levels, users, a, b, purposes, need_error, err, leaked, details):
    """:func:`randomized_response_draw` for every level of a group (nothing is shared but the key)."""
    for lv in range(users.size):
        err[lv], leaked[lv] = randomized_response_draw(params, levels[lv], users[lv], a, b, purposes,
                                                       need_error, details[lv])


@njit(**_JIT)
def gaussian_mean_round(params, levels, users, a, b, purposes, need_error, err, leaked):
    """Algorithm 1's projected draw for every level of a group (:func:`perfpriv._kernels.gaussian_mean.group_round`).

    ``params = (tau, d, sigma2, exact, band_quantile)``; ``levels[:, 0]`` holds each level's γ.
    The levels share ξ and the along-normals of the largest live population, and the
    across-normals of every record in some level's band are drawn once.
    """
    gaussian_mean.group_round(params, levels[:, 0], users, a, b, purposes, need_error, err, leaked)


@njit(**_JIT)
def mechanism_round(kind, params, levels, users, a, b, purposes, need_error, err, leaked, details):
    """The releases of one round for every level of a group, by the mechanism of ``kind``.

    Parameters
    ----------
    kind : int
        A kind constant of this module.
    params : float64[:]
        The mechanism's constants.
    levels : float64[L, P]
        The per-level quantities of this round.
    users : int64[L]
        :math:`N_{t-1}` of each level (0 for a stopped trial: it gets error 0 and no leak).
    a, b : uint64
        The round key (shared by the levels).
    purposes : uint64[:, 2]
        Hashes of the mechanism's stream purposes.
    need_error : bool
        Whether the errors (and details) are needed this round.
    err : float64[L]; leaked : int64[L]; details : float64[L, D]
        Outputs, filled in place.
    """
    if kind == RANDOMIZED_RESPONSE:
        randomized_response_round(params, levels, users, a, b, purposes, need_error, err, leaked, details)
    elif kind == GAUSSIAN_MEAN:
        gaussian_mean_round(params, levels, users, a, b, purposes, need_error, err, leaked)
    elif kind == GAUSSIAN_RECORDS:
        gaussian_mean.records_group_round(params, levels[:, 0], users, a, b, purposes, need_error, err, leaked)
