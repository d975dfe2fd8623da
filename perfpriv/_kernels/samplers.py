"""Exact keyed samplers, compiled: binomial (inversion and BTRS) and hypergeometric draws.

One draw is a pure function of its stream (a, gamma) and its parameters:
it reads the stream's numbers from counter 0 on and never depends on other
draws, so a batch of draws gives the same numbers in any order, any batch
or any backend. :func:`perfpriv.keyed.binomial` and
:func:`perfpriv.keyed.hypergeometric` are these functions applied
elementwise (:func:`binomial_array`, :func:`hypergeometric_array`), and
the compiled round kernels call the scalar functions directly.

References
----------
W. Hörmann (1993), The generation of binomial random variates, J. Statist.
Comput. Simul. 46, 101-110 (algorithm BTRS). Stirling tails of the
acceptance test as in TensorFlow's implementation of BTRS.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .streams import gammaln, stream_increment, uniform

__all__ = ["stirling_tail", "binomial", "hypergeometric",
           "binomial_array", "hypergeometric_array"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

#: The Stirling tail is tabulated exactly up to this k; beyond, the series' first omitted term
#: :math:`1/(1188 (k+1)^9)` is below 1e-14 (at k = 10 it is 3.5e-13, so a table to 9 is not enough).
STIRLING_EXACT = 15
#: log(k!) − [(k + 1/2) log(k + 1) − (k + 1) + log(2π)/2] for k = 0 .. STIRLING_EXACT, from lgamma.
_STIRLING_TABLE = np.array([math.lgamma(k + 1.0) - ((k + 0.5) * math.log(k + 1.0) - (k + 1.0)
                                                   + 0.5 * math.log(2 * math.pi))
                           for k in range(STIRLING_EXACT + 1)])
#: Smallest mean n·min(p, 1 − p) drawn by BTRS; below it, inversion by geometric waiting times.
_BTRS_MIN_MEAN = 10.0


@njit(**_JIT)
def stirling_tail(k):
    """log(k!) − [(k + 1/2) log(k + 1) − (k + 1) + log(2π)/2] for an integer-valued float k >= 0.

    Exact (from ``lgamma``) for k <= 15, the Stirling series to :math:`(k+1)^{-7}`
    beyond (error below 1e-14: the first omitted term is :math:`1/(1188 (k+1)^9)`).
    """
    if k <= STIRLING_EXACT:
        return _STIRLING_TABLE[int(k)]
    kp1 = k + 1.0
    inv2 = 1.0 / (kp1 * kp1)
    return (1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - inv2 / 1680) * inv2) * inv2) / kp1


@njit(**_JIT)
def _binomial_inversion(a, gamma, n, p):
    r"""Binomial(n, p) as the number of geometric waiting times that fit in n trials (n·p small).

    Waiting time j uses the stream's uniform j: :math:`G_j = \lceil \log U_j / \log(1 - p) \rceil`
    is Geometric(p) on {1, 2, ...}; the count is the number of partial sums
    :math:`G_1 + \dots + G_j` that stay <= n (integer-valued doubles: exact below :math:`2^{53}`).
    """
    room = np.float64(n)
    inv_log_q = 1.0 / math.log1p(-p)     # < 0; subnormal p: -inf (no success)
    count = 0
    total = 0.0
    j = 0
    while True:
        total += np.ceil(math.log(uniform(a, gamma, j)) * inv_log_q)
        if not total <= room:
            return count
        count += 1
        j += 1


@njit(**_JIT)
def _binomial_btrs(a_key, gamma, n, p):
    r"""Hörmann's BTRS for n·p >= 10, p <= 1/2, with the exact acceptance test.

    Attempt j uses the stream's uniforms 2j and 2j + 1. The test is the log
    of the pmf ratio f(k)/f(m) written with Stirling tails, so it needs no
    differences of large log-gammas; the :math:`(n + 1) \log((n - m + 1)/(n - k + 1))`
    term is written with ``log1p`` (as a difference of logs it would lose
    about n·1e-16 to cancellation).
    """
    nf = np.float64(n)
    spq = math.sqrt(nf * p * (1.0 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = nf * p + 0.5
    v_r = 0.92 - 4.2 / b
    r = p / (1.0 - p)
    alpha = (2.83 + 5.1 / b) * spq
    m = np.floor((nf + 1.0) * p)
    base = ((m + 0.5) * math.log((m + 1.0) / (r * (nf - m + 1.0)))
            + stirling_tail(m) + stirling_tail(nf - m))
    j = 0
    while True:
        u = uniform(a_key, gamma, 2 * j) - 0.5
        v = uniform(a_key, gamma, 2 * j + 1)
        j += 1
        us = 0.5 - abs(u)
        k = np.floor((2.0 * a / us + b) * u + c)
        if k < 0 or k > nf:
            continue
        if us >= 0.07 and v <= v_r:
            return np.int64(k)
        lv = math.log(v * alpha / (a / (us * us) + b))
        bound = (base + (nf + 1.0) * math.log1p((k - m) / (nf - k + 1.0))
                 + (k + 0.5) * math.log(r * (nf - k + 1.0) / (k + 1.0))
                 - stirling_tail(k) - stirling_tail(nf - k))
        if lv <= bound:
            return np.int64(k)


@njit(**_JIT)
def binomial(a, b, n, p):
    r"""One exact Binomial(n, p) draw from the stream of key (a, b).

    :math:`p > 1/2` draws :math:`n - \mathrm{Binomial}(n, 1 - p)`; a mean n·min(p, 1 − p)
    below ``_BTRS_MIN_MEAN`` (10) uses inversion, larger means BTRS.
    """
    flip = p > 0.5
    q = 1.0 - p if flip else p
    out = np.int64(0)
    if n > 0 and q > 0:
        gamma = stream_increment(b)
        if n * q < _BTRS_MIN_MEAN:
            out = _binomial_inversion(a, gamma, n, q)
        else:
            out = _binomial_btrs(a, gamma, n, q)
    return n - out if flip else out


@njit(**_JIT)
def hypergeometric(a, b, good, bad, nsample):
    """One exact hypergeometric draw (good items among ``nsample`` drawn) from the stream of key (a, b).

    Inversion from the mode m: the stream's uniform at counter 0 is matched
    against the pmf in the order m, m + 1, m − 1, m + 2, m − 2, ..., with the
    pmf at m from log-gamma functions and the others by its ratio recurrence.
    """
    lo = max(0, nsample - bad)
    hi = min(nsample, good)
    if hi <= lo:
        return np.int64(lo)
    Gf, Bf, nf = np.float64(good), np.float64(bad), np.float64(nsample)
    Nf = Gf + Bf
    lo_f, hi_f = np.float64(lo), np.float64(hi)
    m = min(max(np.floor((nf + 1) * (Gf + 1) / (Nf + 2)), lo_f), hi_f)
    logp = (gammaln(Gf + 1) - gammaln(m + 1) - gammaln(Gf - m + 1)
            + gammaln(Bf + 1) - gammaln(nf - m + 1) - gammaln(Bf - nf + m + 1)
            - gammaln(Nf + 1) + gammaln(nf + 1) + gammaln(Nf - nf + 1))
    p_mode = math.exp(logp)
    u = uniform(a, stream_increment(b), 0) - p_mode
    if u < 0:
        return np.int64(m)
    up_k, up_p = m, p_mode
    dn_k, dn_p = m, p_mode
    while True:
        k = up_k
        if k < hi_f:
            up_p = up_p * (Gf - k) * (nf - k) / ((k + 1) * (Bf - nf + k + 1))
            up_k = k + 1
            u -= up_p
            if u < 0:
                return np.int64(up_k)
        else:
            up_p = 0.0
        k = dn_k
        if k > lo_f:
            dn_p = dn_p * k * (Bf - nf + k) / ((Gf - k + 1) * (nf - k + 1))
            dn_k = k - 1
            u -= dn_p
            if u < 0:
                return np.int64(dn_k)
        else:
            dn_p = 0.0
        if up_k >= hi_f and dn_k <= lo_f:
            # rounding left a sliver of probability: give it to the mode (measure below 1e-12)
            return np.int64(m)


@njit(**_JIT)
def binomial_array(a, b, n, p, out):
    """:func:`binomial` elementwise over flat arrays (keys, n, p)."""
    for i in range(out.size):
        out[i] = binomial(a[i], b[i], n[i], p[i])


@njit(**_JIT)
def hypergeometric_array(a, b, good, bad, nsample, out):
    """:func:`hypergeometric` elementwise over flat arrays."""
    for i in range(out.size):
        out[i] = hypergeometric(a[i], b[i], good[i], bad[i], nsample[i])
