r"""Algorithm 1's round, compiled: the projected draw of every level of a (cell, trial) group.

The construction, its exactness and its costs are those of
:mod:`perfpriv.projected` (read its docstring first); this module is its one
implementation. A group's levels share the round key (common random
numbers), so :func:`group_round` draws what they share once -- the noise
direction ξ, the along-normals :math:`a_0`.. :math:`a_{n_{\max} - 1}` of the largest live
population, the two numbers (u, χ) of every record that lies in some level's
band -- and then evaluates every level: its mean ā, the parabola
θ(α) = k0 − α(α + k1), the sure leaks, and its band's β by the deviation
chain (:func:`deviation_chain_step`).

**Stream positions.** Every number is a pure function of (key, position):
ξ is numbers 0 .. d − 1 of the ``"noise"`` stream, the error's h̄ numbers
0 .. d − 2 of ``"rest"``, band record i's u number i(d − 1) of ``"across"`` and
its :math:`\chi^{2}_{d-2}` the next ⌈(d − 2)/2⌉ (:func:`chi_square`), and :math:`a_i` number i
of ``"along"``: hash-based (``ndtri`` of the keyed uniform) for
i < :data:`~perfpriv._kernels.streams.HEAD`, beyond it numpy's ziggurat on a PCG64
generator whose state is the key's words, mixed (:func:`along_normals`
reimplements both exactly, so these are the numbers of
:meth:`perfpriv.keyed.Key.normal_ragged`).

**Order.** Every sum and every visit has a fixed order that depends only on
the numbers, never on the batch: :math:`ā = (a_0 + \dots + a_{N-1})/N` is numpy's
pairwise summation (:func:`pairwise_sum`, as ``np.add.reduceat``), a squared
norm :math:`\|x\|^{2}` is two interleaved sequential accumulators (:func:`sum_squares`,
as ``np.einsum`` on numpy's baseline SIMD), and a level's chain visits its band
records by bucket of :math:`a_i` (:func:`bucket_of`, a fixed grid), then by index:
the same order alone or among any other levels.

No Python object is used inside: scalars, arrays and the stream functions of
:mod:`perfpriv._kernels.streams`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.np.random._constants import fi_double, ki_double, wi_double, ziggurat_nor_inv_r, ziggurat_nor_r

from .streams import HEAD, child_hashed, ndtri, stream_increment, tail_words, uniform

__all__ = ["PURPOSES", "RECORDS_PURPOSES", "along_normals", "pairwise_sum", "sum_squares",
           "parabola",
           "roots", "llr_coefficients", "group_round", "records_group_round", "draw_groups"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")
_U = np.uint64

#: The stream purposes of a group's round, in the order of its ``purposes`` rows.
PURPOSES = ("noise", "rest", "along", "across")

# PCG64's 128-bit multiplier, high and low words
PCG_MULT_HI = _U(0x2360ED051FC65DA4)
PCG_MULT_LO = _U(0x4385DF649FCCF645)
MASK32 = _U(0xFFFFFFFF)
S32, S58, S64M = _U(32), _U(58), _U(63)
ZIG_KI = ki_double.copy()
ZIG_WI = wi_double.copy()
ZIG_FI = fi_double.copy()
ZIG_R = float(ziggurat_nor_r)
ZIG_INV_R = float(ziggurat_nor_inv_r)
TWO_M53 = 1.0 / 9007199254740992.0


# ------------------------------------------------------------------ the tail generator (numpy's PCG64)
@njit(**_JIT)
def _mul64(x, y):
    """The 128-bit product of two uint64 words as (high, low)."""
    x0, x1 = x & MASK32, x >> S32
    y0, y1 = y & MASK32, y >> S32
    p00, p01, p10, p11 = x0 * y0, x0 * y1, x1 * y0, x1 * y1
    mid = (p00 >> S32) + (p01 & MASK32) + (p10 & MASK32)
    hi = p11 + (p01 >> S32) + (p10 >> S32) + (mid >> S32)
    return hi, x * y


@njit(**_JIT)
def _pcg_next(state):
    """Advance PCG64 (numpy's ``PCG64``: 128-bit LCG, XSL-RR output); ``state`` = [s_hi, s_lo, i_hi, i_lo]."""
    s_hi, s_lo = state[0], state[1]
    hi, lo = _mul64(s_lo, PCG_MULT_LO)
    hi = hi + s_lo * PCG_MULT_HI + s_hi * PCG_MULT_LO
    lo2 = lo + state[3]
    carry = _U(1) if lo2 < lo else _U(0)
    hi = hi + state[2] + carry
    state[0], state[1] = hi, lo2
    x = hi ^ lo2
    rot = hi >> S58
    return (x >> rot) | (x << ((_U(64) - rot) & S64M))


@njit(**_JIT)
def _pcg_double(state):
    return np.float64(_pcg_next(state) >> _U(11)) * TWO_M53


@njit(**_JIT)
def _ziggurat_normal(state):
    """numpy's ``random_standard_normal`` (the ziggurat of ``Generator.standard_normal``) on ``state``."""
    while True:
        r = _pcg_next(state)
        idx = np.int64(r & _U(0xFF))
        r >>= _U(8)
        sign = r & _U(1)
        rabs = (r >> _U(1)) & _U(0x000FFFFFFFFFFFFF)
        x = np.float64(rabs) * ZIG_WI[idx]
        if sign & _U(1):
            x = -x
        if rabs < ZIG_KI[idx]:
            return x
        if idx == 0:
            while True:
                xx = -ZIG_INV_R * np.log1p(-_pcg_double(state))
                yy = -np.log1p(-_pcg_double(state))
                if yy + yy > xx * xx:
                    if (rabs >> _U(8)) & _U(1):
                        return -(ZIG_R + xx)
                    return ZIG_R + xx
        else:
            if (ZIG_FI[idx - 1] - ZIG_FI[idx]) * _pcg_double(state) + ZIG_FI[idx] < np.exp(-0.5 * x * x):
                return x


@njit(**_JIT)
def along_normals(a, b, n, out):
    """Numbers 0 .. n − 1 of the stream of key (a, b) into ``out[:n]``.

    They are the numbers of :meth:`perfpriv.keyed.Key.normal_ragged`.

    Positions below :data:`~perfpriv._kernels.streams.HEAD` are ``ndtri`` of the keyed uniforms; the
    rest are numpy's ziggurat normals of a PCG64 generator with the state and
    increment of :func:`perfpriv._kernels.streams.tail_words` (bit for bit the
    numbers of ``numpy.random.Generator(PCG64)`` with that state).
    """
    gamma = stream_increment(b)
    head = min(n, HEAD)
    for i in range(head):
        out[i] = ndtri(uniform(a, gamma, i))
    if n > HEAD:
        state = np.empty(4, dtype=np.uint64)
        state[0], state[1], state[2], state[3] = tail_words(a, b)
        for i in range(HEAD, n):
            out[i] = _ziggurat_normal(state)


# ------------------------------------------------------------------ sums in a fixed order
@njit(**_JIT)
def _pairwise_block(x, lo, n):
    """numpy's pairwise summation of ``x[lo:lo + n]`` for n <= 128 (eight accumulators)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += x[lo + i]
        return res
    r0, r1, r2, r3 = x[lo], x[lo + 1], x[lo + 2], x[lo + 3]
    r4, r5, r6, r7 = x[lo + 4], x[lo + 5], x[lo + 6], x[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += x[lo + i]
        r1 += x[lo + i + 1]
        r2 += x[lo + i + 2]
        r3 += x[lo + i + 3]
        r4 += x[lo + i + 4]
        r5 += x[lo + i + 5]
        r6 += x[lo + i + 6]
        r7 += x[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += x[lo + i]
        i += 1
    return res


@njit(**_JIT)
def _pairwise_reduce(x, lo, n):
    """x[lo] + ... + x[lo + n − 1] in numpy's pairwise order (that of ``np.add.reduce``, ``x.sum()``).

    Blocks of at most 128 numbers with eight accumulators, split in halves
    (rounded down to a multiple of 8) above that.
    """
    if n <= 0:
        return 0.0
    rest = n
    if rest <= 128:
        return _pairwise_block(x, lo, rest)
    # the recursion of numpy's pairwise sum, unrolled with an explicit stack of (start, length, partial)
    stack_lo = np.empty(64, dtype=np.int64)
    stack_n = np.empty(64, dtype=np.int64)
    depth = 0
    vals = np.empty(64)
    state = np.zeros(64, dtype=np.int64)   # 0: left half pending, 1: right half pending
    stack_lo[0], stack_n[0], state[0] = lo, rest, 0
    result = 0.0
    while depth >= 0:
        s, m = stack_lo[depth], stack_n[depth]
        if m <= 128:
            v = _pairwise_block(x, s, m)
            depth -= 1
            # hand v to the parent
            while depth >= 0:
                if state[depth] == 0:
                    vals[depth] = v
                    state[depth] = 1
                    half = stack_n[depth] // 2
                    half -= half % 8
                    stack_lo[depth + 1] = stack_lo[depth] + half
                    stack_n[depth + 1] = stack_n[depth] - half
                    state[depth + 1] = 0
                    depth += 1
                    break
                v = vals[depth] + v
                depth -= 1
            if depth < 0:
                result = v
        else:
            half = m // 2
            half -= half % 8
            stack_lo[depth + 1] = s
            stack_n[depth + 1] = half
            state[depth + 1] = 0
            depth += 1
    return result


@njit(**_JIT)
def pairwise_sum(x, lo, n):
    """x[lo] + ... + x[lo + n − 1] in the order of ``np.add.reduceat`` on the slice.

    ``reduceat`` starts from the first element and adds the pairwise sum of
    the others (``_pairwise_reduce``).
    """
    if n <= 0:
        return 0.0
    return x[lo] + _pairwise_reduce(x, lo + 1, n - 1)


@njit(**_JIT)
def sum_squares(x, lo, n):
    """x[lo]² + ... + x[lo + n − 1]² in the order of ``np.einsum("i,i->", x, x)`` (numpy's baseline SIMD).

    Two lanes (even and odd positions) accumulate; blocks of eight add their
    four products per lane innermost first; the lanes are added last.
    """
    l0 = 0.0
    l1 = 0.0
    i = 0
    while n - i >= 8:
        p0, p2, p4, p6 = x[lo + i] * x[lo + i], x[lo + i + 2] * x[lo + i + 2], \
            x[lo + i + 4] * x[lo + i + 4], x[lo + i + 6] * x[lo + i + 6]
        p1, p3, p5, p7 = x[lo + i + 1] * x[lo + i + 1], x[lo + i + 3] * x[lo + i + 3], \
            x[lo + i + 5] * x[lo + i + 5], x[lo + i + 7] * x[lo + i + 7]
        l0 = p0 + (p2 + (p4 + (p6 + l0)))
        l1 = p1 + (p3 + (p5 + (p7 + l1)))
        i += 8
    while i < n:
        l0 = x[lo + i] * x[lo + i] + l0
        if i + 1 < n:
            l1 = x[lo + i + 1] * x[lo + i + 1] + l1
        else:
            l1 = 0.0 + l1
        i += 2
    return l0 + l1


# ------------------------------------------------------------------ the parabola of a level
@njit(**_JIT)
def _log_offset(n, d):
    """(d/2) log(n/(n − 1)) (:func:`perfpriv.leakage.exact_llr_offset`)."""
    return 0.5 * d * math.log1p(1.0 / (n - 1.0))


@njit(**_JIT)
def parabola(eta_norm, n, gamma, d, sigma2, tau, exact):
    """k0 and k1 of θ(α) = k0 − α(α + k1) (:func:`perfpriv.projected.leak_thresholds`), n >= 2.

    The coefficients (A, B, C) are those of :func:`perfpriv.leakage.llr_coefficients`;
    where A, B or C over- or underflow, the same ratios with :math:`γ^{2}` cancelled.
    """
    nf = np.float64(n)
    eta_sq = eta_norm * eta_norm
    g2 = 2.0 * (gamma * gamma)
    if exact:
        A = 1.0 / ((nf - 1) * g2)
        B = 2.0 / g2
        quad = 0.0 if eta_sq == 0 else eta_sq / g2
        C = _log_offset(nf, d) - quad
    else:
        A = nf / (((nf - 1) * (nf - 1)) * g2)
        if math.isnan(A):
            A = (nf / (nf - 1)) / ((nf - 1) * g2)
        B = 2.0 * nf / ((nf - 1) * g2)
        C = 0.0
    k0 = (tau - C) / A / sigma2
    k1 = (B / A) * (eta_norm / math.sqrt(sigma2))
    n1 = nf - 1.0
    if not np.isfinite(k0):
        if exact:
            inner = 2.0 * n1 * (tau - _log_offset(n1 + 1.0, d)) + n1 * ((eta_norm / gamma) * (eta_norm / gamma))
            k0 = (inner * gamma) * gamma / sigma2
        else:
            k0 = g2 * (n1 * (n1 / (n1 + 1.0))) * tau / sigma2
    if not np.isfinite(k1):
        k1 = 2.0 * n1 * (eta_norm / math.sqrt(sigma2))
    return k0, k1


@njit(**_JIT)
def _nanmin(x, y):
    if math.isnan(x) or math.isnan(y):
        return np.nan
    return x if x <= y else y


@njit(**_JIT)
def _nanmax(x, y):
    if math.isnan(x) or math.isnan(y):
        return np.nan
    return x if x >= y else y


@njit(**_JIT)
def roots(k0, k1):
    """Roots x1 <= x2 of :math:`x^{2} + k1 x - k0 = 0` and whether they are real (else NaN), stably."""
    disc = k1 * k1 + 4.0 * k0
    if not disc > 0:
        return np.nan, np.nan, False
    sq = math.sqrt(disc)
    qv = -0.5 * (k1 + (sq if k1 >= 0 else -sq))
    other = -k0 / qv if qv != 0 else -qv
    return _nanmin(qv, other), _nanmax(qv, other), True


# ------------------------------------------------------------------ one group's round
#: Buckets of a by which a level's band records are visited: 0 below :data:`BUCKET_LOW`,
#: then :data:`BUCKETS_PER_UNIT` a unit up to −BUCKET_LOW, and the last above it.
BUCKET_LOW = -8.0
BUCKETS_PER_UNIT = 16.0
BUCKETS = 2 + 16 * 16
#: The finer grid on which a record's code is searched (:func:`_bucket_end_code`): each
#: bucket split in :data:`FINE_SPLIT`, so that most fine buckets hold no end.
FINE_SPLIT = 8
FINE_BUCKETS = 2 + 16 * 16 * FINE_SPLIT
#: How many levels' band chains run side by side.
CHAIN_LANES = 4


@njit(**_JIT)
def _grid_bucket(x, per_unit, n_buckets):
    """The bucket of x on a grid of ``per_unit`` buckets a unit from BUCKET_LOW (0 below, NaN included; last above)."""
    y = (x - BUCKET_LOW) * per_unit
    if not y >= 0.0:
        return np.int64(0)
    if y >= n_buckets - 2:
        return np.int64(n_buckets - 1)
    return np.int64(y) + 1


@njit(**_JIT)
def bucket_of(x):
    """The bucket of a along-normal value x (a fixed grid: monotone in x, the same for every level)."""
    return _grid_bucket(x, BUCKETS_PER_UNIT, BUCKETS)


@njit(**_JIT)
def fine_bucket_of(x):
    """The bucket of x on the finer grid (:data:`FINE_BUCKETS`)."""
    return _grid_bucket(x, BUCKETS_PER_UNIT * FINE_SPLIT, FINE_BUCKETS)


@njit(**_JIT)
def bucket_of_fine(f):
    """:func:`bucket_of` x from x's :func:`fine_bucket_of` f (the two grids scale the same difference by powers
    of two, so this is exact)."""
    if f == 0:
        return np.int64(0)
    if f == FINE_BUCKETS - 1:
        return np.int64(BUCKETS - 1)
    return (f - 1) // FINE_SPLIT + 1


@njit(**_JIT)
def chi_square(a, g, start, k):
    r"""A :math:`\chi^{2}_{k}` variate from numbers ``start`` .. of stream (a, g), exact in law.

    :math:`-2 \log(U_1 \cdots U_{\lfloor k/2 \rfloor})` (a sum of :math:`\lfloor k/2 \rfloor`
    exponentials of mean 2, :math:`\chi^{2}_{2\lfloor k/2 \rfloor}`), plus the square of one normal
    if k is odd: :math:`\lceil k/2 \rceil` numbers at positions ``start`` onwards (the product is
    logged every 16 factors, so it never underflows: each uniform is at least :math:`2^{-54}`).
    """
    pairs = k // 2
    total = 0.0
    product = 1.0
    for j in range(pairs):
        product *= uniform(a, g, start + j)
        if (j & 15) == 15:
            total -= math.log(product)
            product = 1.0
    total = 2.0 * (total - math.log(product))
    if k & 1:
        z = ndtri(uniform(a, g, start + pairs))
        total += z * z
    return total


@njit(**_JIT)
def numbers_per_band_record(d):
    """How many numbers of its ``"across"`` stream a band record uses: u and :func:`chi_square` of d − 2."""
    return np.int64(1 + (d - 1) // 2) if d > 1 else np.int64(0)


@njit(**_JIT)
def deviation_chain_step(state, remaining, u, chi):
    r"""One step of the band's deviation chain: (β of the record visited, the next state).

    Parameters
    ----------
    state : float
        :math:`s = \|D\|^{2}`, the squared norm of minus the sum of the deviations
        :math:`e_j = h_j - \bar h` of the records visited before (0 at the first).
    remaining : float
        :math:`n_k`, the number of records not visited yet, this one included (N at the first).
    u : float
        A standard normal: the record's deviation along :math:`D` (any direction if D = 0).
    chi : float
        A :math:`\chi^{2}_{d-2}` variate: its squared deviation across D.

    Notes
    -----
    Given the deviations visited, the next record's is :math:`e \sim \mathcal{N}(D/n_k, (1 - 1/n_k) I_{d-1})`
    (the N records' h are independent standard normals; the ones not visited sum to D + (their share of
    N h̄), and e is independent of h̄). By rotation invariance only :math:`\|D\|` matters:
    along D, :math:`e_∥ = \|D\|/n_k + \sqrt{1 - 1/n_k}\, u`; across, :math:`\|e_⊥\|^{2} = (1 - 1/n_k)\,χ`.
    So :math:`β = e_∥^{2} + \|e_⊥\|^{2}` and the next state :math:`\|D - e\|^{2} = (\|D\| - e_∥)^{2} + \|e_⊥\|^{2}`
    follow from two numbers, and the chain gives the exact joint law of the β of any set of records visited
    in any order (Appendix A).
    """
    spread = 1.0 - 1.0 / remaining
    length = math.sqrt(state)
    along = length / remaining + math.sqrt(spread) * u
    across = spread * chi
    rest = length - along
    return along * along + across, rest * rest + across


@njit(**_JIT)
def _clear_outputs(users, err, leaked):
    """Zero every level's error and leak count; return the group's largest population."""
    n_max = np.int64(0)
    for lv in range(users.size):
        err[lv] = 0.0
        leaked[lv] = 0
        n_max = max(n_max, users[lv])
    return n_max


@njit(**_JIT)
def _sorted_ends(ends, coded):
    """The distinct interval ends of the coded levels, sorted (NaN ends left out)."""
    L = ends.shape[0]
    vals = np.empty(4 * L)
    k = 0
    for lv in range(L):
        if coded[lv]:
            for j in range(4):
                x = ends[lv, j]
                if not math.isnan(x):
                    vals[k] = x
                    k += 1
    vals = np.sort(vals[:k])
    m = 0
    for i in range(k):
        if m == 0 or vals[i] != vals[m - 1]:
            vals[m] = vals[i]
            m += 1
    return vals[:m]


@njit(**_JIT)
def _end_index(E, x):
    """Number of the sorted ends E below x (the index of x when x is one of them), by bisection."""
    lo, hi = 0, E.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if E[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(**_JIT)
def _end_code(E, x):
    """Code of a number x among the sorted distinct ends E: 2·#(E < x) + [x is an end].

    Every comparison of x with an end E[k] is a comparison of its code c with 2k + 1:
    x < E[k] ⇔ c <= 2k, x == E[k] ⇔ c == 2k + 1, x > E[k] ⇔ c >= 2k + 2.
    """
    k = _end_index(E, x)
    if k < E.size and E[k] == x:
        return 2 * k + 1
    return 2 * k


@njit(**_JIT)
def _bucket_first_ends(E):
    """``first[k]``: the number of the sorted ends E in fine buckets below k (:func:`fine_bucket_of`)."""
    first = np.zeros(FINE_BUCKETS + 1, dtype=np.int64)
    for j in range(E.size):
        first[fine_bucket_of(E[j]) + 1] += 1
    for k in range(FINE_BUCKETS):
        first[k + 1] += first[k]
    return first


@njit(**_JIT)
def _bucket_end_code(E, first, x, k):
    """:func:`_end_code` of x, searching only the ends in x's fine bucket k (the others compare as their buckets do)."""
    j, stop = first[k], first[k + 1]
    while j < stop and E[j] < x:
        j += 1
    if j < stop and E[j] == x:
        return 2 * j + 1
    return 2 * j


@njit(**_JIT)
def _code_counts(codes, users, coded, n_codes):
    """Per coded level, the number of its records (the first N of the group) holding each code.

    One pass over the records in order, the levels visited by population: ``counts[lv, c]``.
    """
    L = users.size
    order = np.argsort(users)
    counts = np.zeros((L, n_codes), dtype=np.int64)
    hist = np.zeros(n_codes, dtype=np.int64)
    i = 0
    last = -1
    for k in range(L):
        lv = order[k]
        if not coded[lv]:
            continue
        n = users[lv]
        while i < n:
            hist[codes[i]] += 1
            i += 1
        if last >= 0 and users[last] == n:
            counts[lv, :] = counts[last, :]
        else:
            counts[lv, :] = hist
        last = lv
    return counts


@njit(**_JIT)
def _code_range(E, lo, hi, closed):
    """First and last code of the numbers x with lo < x < hi (lo <= x <= hi if ``closed``); lo, hi in E."""
    k_lo, k_hi = _end_index(E, lo), _end_index(E, hi)
    if closed:
        return 2 * k_lo + 1, 2 * k_hi + 1
    return 2 * k_lo + 2, 2 * k_hi


@njit(**_JIT)
def _band_runs(E, lo1, hi1, lo2, hi2, runs):
    """The band lo1 < a < hi1, not lo2 < a < hi2, as at most two runs of codes; returns their number."""
    first, last = _code_range(E, lo1, hi1, False)
    if math.isnan(lo2) or math.isnan(hi2):
        inner_first, inner_last = np.int64(1), np.int64(0)      # no inner interval
    else:
        inner_first, inner_last = _code_range(E, lo2, hi2, False)
    k = 0
    if inner_first > inner_last:
        if first <= last:
            runs[0, 0], runs[0, 1] = first, last
            k = 1
        return k
    if first <= min(last, inner_first - 1):
        runs[k, 0], runs[k, 1] = first, min(last, inner_first - 1)
        k += 1
    if max(first, inner_last + 1) <= last:
        runs[k, 0], runs[k, 1] = max(first, inner_last + 1), last
        k += 1
    return k


@njit(**_JIT)
def _sure_leaks_direct(along, n, lo1, hi1, strict):
    """Records of a level with a NaN end that leak whatever their across-normals (a pass over them)."""
    sure = np.int64(0)
    if strict:
        for i in range(n):
            x = along[i]
            sure += (x < lo1) | (x > hi1)
    else:
        for i in range(n):
            x = along[i]
            sure += (x <= lo1) | (x >= hi1)
    return sure


@njit(**_JIT)
def group_round(params, gammas, users, a, b, purposes, need_error, err, leaked):
    r"""The projected draw of one round for every level of a (cell, trial) group.

    Parameters
    ----------
    params : float64[5]
        ``(tau, d, sigma2, exact, band_quantile)``: τ, d, :math:`σ^{2}`, 1 for the exact
        statistic (0: the paper's), and :func:`perfpriv.projected.band_quantile` of d.
    gammas : float64[L]
        γ of each level.
    users : int64[L]
        N of each level (0: no release, error 0 and no leak).
    a, b : uint64
        The round key.
    purposes : uint64[4, 2]
        Hashes of :data:`PURPOSES`.
    need_error : bool
        Whether the errors are needed (the leaks are drawn either way).
    err : float64[L]; leaked : int64[L]
        Outputs: the squared error :math:`\|ḡ + η/σ\|^{2}` and the number of records with Λ > τ.

    Returns
    -------
    int
        The number of random numbers drawn, normals and uniforms (the cost of
        the round, for the benchmarks).

    Notes
    -----
    The records are classified once for all levels: the levels' interval ends
    (lo1, hi1, lo2, hi2), sorted, give each record a code (:func:`_end_code`)
    on which every level's predicates are comparisons, so one pass over the
    records counts, for every level, its records of each code. A level's sure
    leaks and its band are then sums over runs of codes; the codes come from a
    search of the few ends in the record's bucket (:func:`_bucket_end_code`).
    The band records of all levels get their (u, χ) once; each level then runs
    its own chain over its own band records.
    """
    L = users.size
    tau, d, sigma2, exact, t_band = params[0], np.int64(params[1]), params[2], params[3] != 0.0, params[4]
    sigma = math.sqrt(sigma2)
    w = d - 1
    n_max = _clear_outputs(users, err, leaked)
    if n_max < 1:
        return np.int64(0)
    # --- the group's shared numbers: ξ, the rest vector, the along-normals
    na, nb = child_hashed(a, b, purposes[0, 0], purposes[0, 1])
    ng = stream_increment(nb)
    xi = np.empty(d)
    for i in range(d):
        xi[i] = ndtri(uniform(na, ng, i))
    xi_norm = math.sqrt(sum_squares(xi, 0, d))
    drawn = d + n_max
    rest_sq = 0.0
    if need_error and w > 0:
        drawn += w
        ra, rb = child_hashed(a, b, purposes[1, 0], purposes[1, 1])
        rg = stream_increment(rb)
        rest = np.empty(w)
        for i in range(w):
            rest[i] = ndtri(uniform(ra, rg, i))
        rest_sq = sum_squares(rest, 0, w)
    aa, ab = child_hashed(a, b, purposes[2, 0], purposes[2, 1])
    along = np.empty(n_max)
    along_normals(aa, ab, n_max, along)
    # --- per level: ā, the parabola and the interval ends
    abar = np.zeros(L)
    k0s = np.zeros(L)
    k1s = np.zeros(L)
    ends = np.full((L, 4), np.nan)        # lo1, hi1, lo2, hi2 of the levels whose records are classified
    coded = np.zeros(L, dtype=np.bool_)
    n_coded = np.int64(0)                 # the largest population of a coded level
    for lv in range(L):
        n = users[lv]
        if n < 1:
            continue
        mean = np.nan
        for j in range(lv):                # levels of the same population share their mean
            if users[j] == n:
                mean = abar[j]
                break
        if math.isnan(mean):
            mean = pairwise_sum(along, 0, n) / n
        abar[lv] = mean
        eta_norm = gammas[lv] * xi_norm / math.sqrt(n)
        if need_error:
            al = mean + eta_norm / sigma
            err[lv] = al * al + (rest_sq / n if w > 0 else 0.0)
        if n == 1:
            leaked[lv] = 1
            continue
        k0, k1 = parabola(eta_norm, n, gammas[lv], d, sigma2, tau, exact)
        k0s[lv], k1s[lv] = k0, k1
        r1, r2, has_roots = roots(k0, k1)
        if not has_roots:
            leaked[lv] = n
            continue
        lo1, hi1 = mean + r1, mean + r2
        ends[lv, 0], ends[lv, 1] = lo1, hi1
        if math.isnan(lo1) or math.isnan(hi1):
            # no band (its test compares with both ends): the sure leaks by a pass over the records
            leaked[lv] = _sure_leaks_direct(along, n, lo1, hi1, d == 1)
            continue
        if d > 1:
            s1, s2, has_inner = roots(k0 - (1.0 - 1.0 / n) * t_band, k1)
            if has_inner:
                ends[lv, 2], ends[lv, 3] = mean + s1, mean + s2
        coded[lv] = True
        n_coded = max(n_coded, n)
    if n_coded == 0:
        return drawn
    # --- every record's code among the sorted ends, and per level the number of its records of each code
    E = _sorted_ends(ends, coded)
    n_codes = 2 * E.size + 1
    codes = np.empty(n_coded, dtype=np.int64)
    fine = np.empty(n_coded, dtype=np.int64)
    first_end = _bucket_first_ends(E)
    for i in range(n_coded):
        fine[i] = fine_bucket_of(along[i])
        codes[i] = _bucket_end_code(E, first_end, along[i], fine[i])
    counts = _code_counts(codes, users, coded, n_codes)
    # --- sure leaks (the records outside lo1 < a < hi1) and each level's band as runs of codes
    runs = np.zeros((L, 2, 2), dtype=np.int64)
    n_runs = np.zeros(L, dtype=np.int64)
    widest = np.zeros(n_codes, dtype=np.int64)   # the largest population whose band holds a code
    for lv in range(L):
        if not coded[lv]:
            continue
        n = users[lv]
        # d = 1: a leak is a < lo1 or a > hi1; d > 1: a <= lo1 or a >= hi1 leaks whatever its across-normals
        first, last = _code_range(E, ends[lv, 0], ends[lv, 1], d == 1)
        between = np.int64(0)
        for c in range(first, last + 1):
            between += counts[lv, c]
        leaked[lv] = n - between
        if d == 1:
            continue
        n_runs[lv] = _band_runs(E, ends[lv, 0], ends[lv, 1], ends[lv, 2], ends[lv, 3], runs[lv])
        for r in range(n_runs[lv]):
            for c in range(runs[lv, r, 0], runs[lv, r, 1] + 1):
                if counts[lv, c] > 0:
                    widest[c] = max(widest[c], n)
    # --- the records in some level's band, by bucket of a (record order within a bucket)
    bucket_start = np.zeros(BUCKETS + 1, dtype=np.int64)
    n_union = 0
    for i in range(n_coded):
        if i < widest[codes[i]]:
            bucket_start[bucket_of_fine(fine[i]) + 1] += 1
            n_union += 1
    if n_union == 0:
        return drawn
    for k in range(BUCKETS):
        bucket_start[k + 1] += bucket_start[k]
    fill = bucket_start[:BUCKETS].copy()
    record = np.empty(n_union, dtype=np.int64)          # row -> record index
    for i in range(n_coded):
        if i < widest[codes[i]]:
            k = bucket_of_fine(fine[i])
            record[fill[k]] = i
            fill[k] += 1
    # --- each band record's two numbers (a pure function of the record): the normal u of its
    #     deviation along the chain's direction and the chi-square of its d - 2 other coordinates
    ca, cb = child_hashed(a, b, purposes[3, 0], purposes[3, 1])
    cg = stream_increment(cb)
    u = np.empty(n_union)
    chi = np.empty(n_union)
    for s in range(n_union):
        base = record[s] * w
        u[s] = ndtri(uniform(ca, cg, base))
        chi[s] = chi_square(ca, cg, base + 1, w - 1)
    drawn += n_union * numbers_per_band_record(d)
    # --- per level: its band's deviations as a chain (deviation_chain_step) in the order of the
    #     buckets, then of the records (whatever the other levels); each record's β against its θ.
    #     The chains of CHAIN_LANES levels run side by side (each is a sequence of dependent square
    #     roots; interleaved, their latencies overlap): each level's arithmetic is unchanged.
    visit = np.empty((CHAIN_LANES, n_union), dtype=np.int64)
    lane_level = np.empty(CHAIN_LANES, dtype=np.int64)
    m = np.zeros(CHAIN_LANES, dtype=np.int64)
    state = np.zeros(CHAIN_LANES)
    remaining = np.zeros(CHAIN_LANES)
    count = np.zeros(CHAIN_LANES, dtype=np.int64)
    lv = 0
    while lv < L:
        lanes = 0
        longest = np.int64(0)
        while lv < L and lanes < CHAIN_LANES:
            if n_runs[lv] > 0:
                m[lanes] = _band_visit(ends[lv], runs[lv], n_runs[lv], users[lv], bucket_start, record, codes,
                                       visit[lanes])
                longest = max(longest, m[lanes])
                lane_level[lanes] = lv
                state[lanes] = 0.0
                remaining[lanes] = np.float64(users[lv])
                count[lanes] = 0
                lanes += 1
            lv += 1
        for j in range(longest):
            for q in range(lanes):
                if j < m[q]:
                    s = visit[q, j]
                    beta, state[q] = deviation_chain_step(state[q], remaining[q], u[s], chi[s])
                    remaining[q] -= 1.0
                    level = lane_level[q]
                    alpha = along[record[s]] - abar[level]
                    if beta > k0s[level] - alpha * (alpha + k1s[level]):
                        count[q] += 1
        for q in range(lanes):
            leaked[lane_level[q]] += count[q]
    return drawn


@njit(**_JIT)
def _band_visit(ends, runs, n_runs, n, bucket_start, record, codes, out):
    """The rows of a level's band records in the chain's order (buckets, then records) into ``out``; their number.

    ``ends`` and ``runs`` are the level's (lo1, hi1, lo2, hi2) and runs of codes, n its population.
    """
    c1, c2, c3, c4 = runs[0, 0], runs[0, 1], runs[1, 0], runs[1, 1]
    if n_runs == 1:
        c3, c4 = np.int64(1), np.int64(0)
    # buckets strictly between those of lo2 and hi2 hold only records inside the inner interval
    skip_lo, skip_hi = np.int64(BUCKETS), np.int64(-1)
    if not (math.isnan(ends[2]) or math.isnan(ends[3])):
        skip_lo, skip_hi = bucket_of(ends[2]) + 1, bucket_of(ends[3]) - 1
    m = 0
    for k in range(bucket_of(ends[0]), bucket_of(ends[1]) + 1):
        if skip_lo <= k <= skip_hi:
            continue
        for s in range(bucket_start[k], bucket_start[k + 1]):
            i = record[s]
            if i >= n:
                break
            c = codes[i]
            if (c1 <= c <= c2) or (c3 <= c <= c4):
                out[m] = s
                m += 1
    return m


@njit(**_JIT)
def draw_groups(params, gammas, users, group, key_a, key_b, purposes, err, leaked, records=False):
    """:func:`group_round` (:func:`records_group_round` if ``records``) for a batch of pairs.

    ``group[p]`` is the index of pair p's key.
    Pairs that share a key are evaluated together (they share its numbers);
    a pair's result does not depend on the other pairs of the batch beyond
    the largest population of its group, which only sets how many numbers
    are drawn (the prefix property). Returns the number of normals drawn.
    """
    G = key_a.size
    P = users.size
    count = np.zeros(G + 1, dtype=np.int64)
    for p in range(P):
        count[group[p] + 1] += 1
    for g in range(G):
        count[g + 1] += count[g]
    order = np.empty(P, dtype=np.int64)
    fill = count[:G].copy()
    for p in range(P):
        order[fill[group[p]]] = p
        fill[group[p]] += 1
    drawn = np.int64(0)
    for g in range(G):
        lo, hi = count[g], count[g + 1]
        if hi == lo:
            continue
        m = hi - lo
        g_users = np.empty(m, dtype=np.int64)
        g_gammas = np.empty(m)
        for j in range(m):
            g_users[j] = users[order[lo + j]]
            g_gammas[j] = gammas[order[lo + j]]
        g_err = np.empty(m)
        g_leaked = np.empty(m, dtype=np.int64)
        if records:
            drawn += records_group_round(params, g_gammas, g_users, key_a[g], key_b[g], purposes, True, g_err,
                                         g_leaked)
        else:
            drawn += group_round(params, g_gammas, g_users, key_a[g], key_b[g], purposes, True, g_err, g_leaked)
        for j in range(m):
            err[order[lo + j]] = g_err[j]
            leaked[order[lo + j]] = g_leaked[j]
    return drawn


# ------------------------------------------------------------------ the records draw
#: The stream purposes of a records round, in the order of its ``purposes`` rows.
RECORDS_PURPOSES = ("noise", "records")


@njit(**_JIT)
def llr_coefficients(eta_sq, n, gamma, d, exact):
    r"""(A, B, C) of :math:`Λ = A\|z - \bar z\|^{2} + B⟨z - \bar z, η⟩ + C`, n >= 2 (:func:`perfpriv.leakage.llr_coefficients`)."""
    nf = np.float64(n)
    g2 = 2.0 * (gamma * gamma)
    if exact:
        quad = 0.0 if eta_sq == 0 else eta_sq / g2
        return 1.0 / ((nf - 1) * g2), 2.0 / g2, _log_offset(nf, d) - quad
    A = nf / (((nf - 1) * (nf - 1)) * g2)
    if math.isnan(A):
        A = (nf / (nf - 1)) / ((nf - 1) * g2)
    return A, 2.0 * nf / ((nf - 1) * g2), 0.0


@njit(**_JIT)
def records_params_layout(d):
    """Offsets of μ, L and :math:`L^{-1}` in a records round's ``params`` (after 6 scalars)."""
    return 6, 6 + d, 6 + d + d * d


@njit(**_JIT)
def records_group_round(params, gammas, users, a, b, purposes, need_error, err, leaked):
    r"""Algorithm 1's round from every record's d coordinates, for every level of a group.

    ``params = (tau, d, R, exact, has_mu, has_L, mu[d], L[d·d], L⁻¹[d·d])``. Record i is
    :math:`μ + L g_i` with :math:`g_i` numbers i·d .. i·d + d − 1 of the ``"records"`` stream (prefix of the
    largest live population, :func:`along_normals`), clipped to norm R; ξ is the ``"noise"``
    stream and the release of a level with N users is the mean of its first N records plus
    η = ξ γ/√N. Its error is :math:`\|L^{-1}(o - μ)\|^{2}` and a record leaks when Λ (the coefficients of
    :func:`llr_coefficients`) exceeds τ; a lone user leaks. Sums run in record order (the mean
    of d = 1 records in numpy's pairwise order, ``_pairwise_reduce``), squared norms as
    :func:`sum_squares`, other dot products in coordinate order.
    Returns the number of normals drawn.
    """
    L = users.size
    tau, d, R, exact = params[0], np.int64(params[1]), params[2], params[3] != 0.0
    has_mu, has_L = params[4] != 0.0, params[5] != 0.0
    o_mu, o_L, o_Li = records_params_layout(d)
    n_max = _clear_outputs(users, err, leaked)
    if n_max < 1:
        return np.int64(0)
    ra, rb = child_hashed(a, b, purposes[1, 0], purposes[1, 1])
    g = np.empty(n_max * d)
    along_normals(ra, rb, n_max * d, g)
    na, nb = child_hashed(a, b, purposes[0, 0], purposes[0, 1])
    ng = stream_increment(nb)
    xi = np.empty(d)
    for j in range(d):
        xi[j] = ndtri(uniform(na, ng, j))
    # the records, in place: z_i = μ + L g_i (coordinates from the last, as L is lower triangular),
    # clipped to norm R; with them their squared norms and z_i · ξ (shared by the levels)
    Z = g.reshape((n_max, d))
    sq = np.empty(n_max)
    zx = np.empty(n_max)
    R2 = R * R
    for i in range(n_max):
        if has_L:
            for j in range(d - 1, -1, -1):
                v = 0.0
                for k in range(j + 1):
                    v += Z[i, k] * params[o_L + j * d + k]
                Z[i, j] = v
        if has_mu:
            for j in range(d):
                Z[i, j] += params[o_mu + j]
        s = sum_squares(Z[i], 0, d)
        if s > R2:
            f = math.sqrt(R2 / s)
            for j in range(d):
                Z[i, j] *= f
            s = R2
        sq[i] = s
        v = 0.0
        for j in range(d):
            v += Z[i, j] * xi[j]
        zx[i] = v
    mean = np.empty(d)
    diff = np.empty(d)
    mean_eta = np.empty(d)
    col = np.empty(n_max) if d == 1 else np.empty(0)
    zm = np.empty(n_max)
    zm_n = np.int64(-1)
    for lv in range(L):
        n = users[lv]
        if n < 1:
            continue
        if d == 1:
            for i in range(n):
                col[i] = Z[i, 0]
            mean[0] = _pairwise_reduce(col, 0, n) / n
        else:
            for j in range(d):
                mean[j] = Z[0, j]
            for i in range(1, n):                       # record order, row by row
                for j in range(d):
                    mean[j] += Z[i, j]
            for j in range(d):
                mean[j] = mean[j] / n
        scale = gammas[lv] / math.sqrt(n)
        if need_error:
            for j in range(d):
                diff[j] = mean[j] + xi[j] * scale - (params[o_mu + j] if has_mu else 0.0)
            if has_L:
                for j in range(d):
                    v = 0.0
                    for k in range(d):
                        v += params[o_Li + j * d + k] * diff[k]
                    mean_eta[j] = v
                err[lv] = sum_squares(mean_eta, 0, d)
            else:
                err[lv] = sum_squares(diff, 0, d)
        if n == 1:
            leaked[lv] = 1
            continue
        mm = 0.0
        me = 0.0
        ee = 0.0
        for j in range(d):
            eta_j = xi[j] * scale
            mm += mean[j] * mean[j]
            me += mean[j] * eta_j
            ee += eta_j * eta_j
        if zm_n != n:                                     # z_i · z̄, shared by levels of one population
            for i in range(n):
                v = 0.0
                for j in range(d):
                    v += Z[i, j] * mean[j]
                zm[i] = v
            zm_n = n
        A, B, C = llr_coefficients(ee, n, gammas[lv], d, exact)
        count = np.int64(0)
        for i in range(n):
            dev = sq[i] - 2.0 * zm[i] + mm
            if dev < 0.0:
                dev = 0.0
            lam = dev * A + (zx[i] * scale - me) * B + C
            count += lam > tau
        leaked[lv] = count
    return n_max * d + d
