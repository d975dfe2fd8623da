"""Algorithm 1's rounds from about one normal per record (the projected draw), batched.

:class:`perfpriv.gaussian.GaussianMean` draws a round, by default, this way.
When the covariance is isotropic (Σ = σ² I) and records are not clipped,
almost all of the N × d numbers of a round's records are irrelevant to what
the round decides, and this module draws only what matters. The construction
is exact in law; the two places where it is not are bounded explicitly below.

**The reduction.** Write a record as z_i = μ + σ g_i with g_i standard normal
and the round's noise as η = (γ/√N) ξ with ξ standard normal in R^d.
Rotating every g_i into a basis whose first axis is ξ̂ = ξ/‖ξ‖ gives
coordinates (a_i, h_i) ∈ R × R^{d−1} that are again independent standard
normals, independent of ξ (rotation invariance). The deviation of a record
from the mean then splits into

    α_i = a_i − ā                (along ξ̂),     β_i = ‖h_i − h̄‖²   (across ξ̂),

so ‖z_i − z̄‖² = σ²(α_i² + β_i) and ⟨z_i − z̄, η⟩ = σ‖η‖α_i, and the
membership statistic (eq. 8, coefficients from
:func:`perfpriv.leakage.llr_coefficients`) is Λ_i = Aσ²(α_i² + β_i) +
Bσ‖η‖α_i + C with A > 0. Record i therefore leaks (Λ_i > τ) exactly when

    β_i > θ_i = k0 − α_i(α_i + k1),   k0 = (τ − C)/(Aσ²),  k1 = (B/A)‖η‖/σ

(:func:`leak_thresholds`). θ is a downward parabola in α, so in terms of a_i
the records split into three sets, bounded by the roots of θ = 0 and of
θ = t_N with t_N = (1 − 1/N) χ²_{d−1}.isf(2⁻⁶⁴) (:func:`band_quantile`):

* θ_i <= 0 (a_i outside the outer roots): β_i ≥ 0 >= θ_i, the record leaks
  (for d = 1 there is no β and a record leaks iff θ_i < 0);
* θ_i > t_N (a_i between the inner roots): β_i, whose law is
  (1 − 1/N) χ²_{d−1}, exceeds θ_i with probability below 2⁻⁶⁴ ≈ 5.4e−20;
  the record is counted as not leaked without drawing β_i;
* the m records in between (the *band*) get their h_i drawn, and
  h̄ = (Σ_band h_i + S)/N with S ~ N(0, (N − m) I_{d−1}) the sum of the
  other records' h. This is the exact joint law of the band's β_i: the band
  is chosen from the a's, which are independent of the h's.

The round's error is ‖ḡ + η/σ‖² = (ā + ‖η‖/σ)² + ‖h̄‖², from the same draws.

**What is not exact.** (1) A skipped record leaks with probability below
2⁻⁶⁴; (2) a record that would have been clipped (probability
:func:`perfpriv.gaussian.clip_probability` per record) is not. By a union
bound, the law of a run differs from the records draw's by at most
(records drawn) × (2⁻⁶⁴ + clip probability) in total variation;
:data:`CLIP_NEGLIGIBLE` is the clip probability below which
``draw="auto"`` uses this draw (paper settings d = 12, R = 10, μ = 0:
5.6e−16 per record, so a whole 50-round run at the cap of 20 000 differs
with probability below 6e−10).

**Randomness and batching.** :func:`draw_rounds` simulates every (cell,
level, trial) pair of a round at once. Each (cell, trial, round) has one
key (``perfpriv._random``), shared by all levels: ξ is its ``"noise"``
stream, S its ``"rest"`` stream, a_i the i-th number of its ``"along"``
stream and h_i numbers i(d − 1) .. i(d − 1) + d − 2 of its ``"across"``
stream. A pair with N users uses a_0..a_{N−1}, whatever the other pairs, so
runs that differ in γ share their numbers record by record (common random
numbers) and a pair gives the same result alone or in any batch. Sums run
in record order, so that rounding does not depend on the batch either.

**Cost.** One normal per record of the largest population of each (cell,
trial), shared by its levels; when several levels share a population their
sure leaks are counted by sorting the a's once and locating the roots
(O(log N) per level); band records cost d − 1 normals each (typically a
few percent of the records; more when γ is small and β decides many leaks).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from . import _random, leakage
from ._validate import check_choice, check_int, check_real

__all__ = ["SKIP_PROBABILITY", "CLIP_NEGLIGIBLE", "band_quantile", "leak_thresholds", "draw_rounds",
           "draw_round"]

#: A skipped record would have leaked with probability below this (2⁻⁶⁴).
SKIP_PROBABILITY = 2.0**-64

#: ``draw="auto"`` uses the projected draw when a record is clipped with at
#: most this probability (and Σ is isotropic).
CLIP_NEGLIGIBLE = 1e-12

#: Pairs × records compared directly in one block (memory of the comparison matrices).
_BLOCK = 2_000_000
#: Groups whose largest population is shared by at least this many levels are sorted.
_SORT_MIN_LEVELS = 4


def band_quantile(d):
    """The χ²_{d−1} quantile t beyond which β is not drawn: P(χ²_{d−1} > t) = 2⁻⁶⁴.

    Parameters
    ----------
    d : int
        Dimension d >= 1 (for d = 1 there is no β and the quantile is 0).

    Returns
    -------
    float

    Examples
    --------
    >>> round(band_quantile(12), 2)
    117.63
    """
    return _band_quantile(check_int("d", d, low=1))


@lru_cache(maxsize=64)
def _band_quantile(d):
    return 0.0 if d == 1 else float(stats.chi2.isf(SKIP_PROBABILITY, d - 1))


def _parabola(eta_norm, n, gamma, d, sigma2, tau, statistic):
    """k0 and k1 of θ(α) = k0 − α(α + k1) for arrays of rounds (module docstring)."""
    with np.errstate(over="ignore"):  # ‖η‖² may overflow to inf (a Python float ** would raise)
        eta_sq = np.square(np.asarray(eta_norm, dtype=float))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        A, B, C = leakage.llr_coefficients(eta_sq, n, gamma, d, statistic)
        k0 = (tau - C) / A / sigma2
        k1 = (B / A) * (eta_norm / math.sqrt(sigma2))
        if not (np.all(np.isfinite(k0)) and np.all(np.isfinite(k1))):
            # A, B or C over- or underflowed (γ near the ends of its range): the same ratios
            # with γ² cancelled, B/A = 2(n − 1) for both statistics and (τ − C)/A =
            # 2γ²(n − 1)²τ/n (paper) or 2γ²(n − 1)(τ − c) + (n − 1)‖η‖² (exact)
            n1 = np.asarray(n, dtype=float) - 1.0
            g2 = 2.0 * np.asarray(gamma, dtype=float) ** 2
            if statistic == "paper":
                k0_alt = g2 * (n1 * (n1 / (n1 + 1.0))) * tau / sigma2
            else:
                g = np.asarray(gamma, dtype=float)
                inner = 2.0 * n1 * (tau - leakage.exact_llr_offset(n1 + 1.0, d)) + n1 * (eta_norm / g) ** 2
                k0_alt = (inner * g) * g / sigma2
            k0 = np.where(np.isfinite(k0), k0, k0_alt)
            k1 = np.where(np.isfinite(k1), k1, 2.0 * n1 * (eta_norm / math.sqrt(sigma2)))
    return k0, k1


def leak_thresholds(alpha, eta_norm, gamma, *, tau, d, sigma2=1.0, statistic="paper"):
    """θ_i of every record: record i leaks (Λ_i > τ) iff β_i > θ_i.

    Parameters
    ----------
    alpha : array_like, shape (n,)
        α_i = a_i − ā, the standardized deviations of the n >= 2 records
        from their mean along the noise direction (module docstring).
    eta_norm : float
        ‖η‖ of the release, >= 0.
    gamma : float
        Per-user noise scale γ > 0 of the round.
    tau : float
        Vulnerability threshold τ > 0.
    d : int
        Dimension d >= 1.
    sigma2 : float
        σ² of the isotropic covariance Σ = σ² I.
    statistic : {"paper", "exact"}
        Membership statistic (:mod:`perfpriv.leakage`).

    Returns
    -------
    numpy.ndarray, shape (n,)

    References
    ----------
    Paper eq. 8 and Lemma 6 (through :mod:`perfpriv.leakage`); the
    reduction is this module's.

    Examples
    --------
    A record on the mean (α = 0, β = 0) never leaks under the paper's
    statistic: θ = τ · 2γ² (n − 1)²/n > 0.

    >>> leak_thresholds([0.0, 0.0], 1.0, gamma=1.0, tau=0.5, d=3).tolist()
    [0.5, 0.5]
    """
    alpha = np.array(check_real("alpha", alpha), dtype=float).reshape(-1)
    if alpha.size < 2:
        raise ValueError(f"alpha must hold the deviations of n >= 2 records; got {alpha.size}")
    eta_norm = check_real("eta_norm", eta_norm, low=0, scalar=True)
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    d = check_int("d", d, low=1)
    sigma2 = check_real("sigma2", sigma2, low=0, low_open=True, scalar=True)
    statistic = check_choice("statistic", statistic, leakage.STATISTICS)
    k0, k1 = _parabola(eta_norm, alpha.size, gamma, d, sigma2, tau, statistic)
    with np.errstate(over="ignore", invalid="ignore"):
        return k0 - alpha * (alpha + k1)


def _roots(k0, k1):
    """Roots x1 <= x2 of x² + k1 x − k0 = 0 where they are real (else NaN), stably."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        disc = k1 * k1 + 4.0 * k0
        real = disc > 0
        sq = np.sqrt(np.where(real, disc, 0.0))
        qv = -0.5 * (k1 + np.where(k1 >= 0, sq, -sq))
        other = np.where(qv != 0, -k0 / np.where(qv != 0, qv, 1.0), -qv)
        x1 = np.minimum(qv, other)
        x2 = np.maximum(qv, other)
    return np.where(real, x1, np.nan), np.where(real, x2, np.nan), real


def draw_rounds(n, gamma, keys, *, tau, d, sigma2=1.0, statistic="paper", live=None):
    """One release of Algorithm 1 for every (cell, level, trial) pair of a batch.

    Parameters
    ----------
    n : array_like of int
        Population N >= 1 of each pair (the batch shape).
    gamma : float or array_like
        Noise scale γ > 0 of each pair (broadcast to the batch).
    keys : perfpriv._random.Key
        The round's key of each pair, broadcast to the batch; pairs that
        share a key share their random numbers (the level axis of the
        engine's batch has keys of size 1).
    tau : float
        Vulnerability threshold τ > 0.
    d : int
        Dimension d >= 1.
    sigma2 : float
        σ² of the isotropic covariance.
    statistic : {"paper", "exact"}
    live : array_like of bool, optional
        Pairs to simulate (others get error 0 and no leaks).

    Returns
    -------
    sq_error : numpy.ndarray
        Squared Mahalanobis error ‖o − μ‖²_{Σ⁻¹} of each release.
    leaked : numpy.ndarray of int
        Number of records with Λ > τ (a lone user always counts as leaked).

    Examples
    --------
    >>> from perfpriv import _random
    >>> keys = _random.root_key(0).child(np.arange(3))
    >>> err, leaked = draw_rounds([1000, 1000, 1], 2.0, keys, tau=0.02, d=12)
    >>> leaked.shape, int(leaked[2])
    ((3,), 1)
    """
    n = np.asarray(n, dtype=np.int64)
    shape = np.broadcast_shapes(n.shape, np.shape(gamma), keys.shape)
    nn = np.broadcast_to(n, shape).reshape(-1)
    gg = np.broadcast_to(np.asarray(gamma, dtype=float), shape).reshape(-1)
    live = np.ones(shape, bool) if live is None else np.broadcast_to(np.asarray(live, bool), shape)
    lv = live.reshape(-1) & (nn >= 1)
    gid_full = np.broadcast_to(np.arange(int(np.prod(keys.shape))).reshape(keys.shape), shape).reshape(-1)
    flat_a, flat_b = keys.a.reshape(-1), keys.b.reshape(-1)
    err = np.zeros(nn.size)
    leaked = np.zeros(nn.size, dtype=np.int64)
    pairs = np.flatnonzero(lv)
    if pairs.size:
        # the groups with a live pair, in order, and each pair's rank among them (np.unique's
        # result, from a presence mask instead of a sort)
        gid_live = gid_full[pairs]
        present = np.zeros(flat_a.size, bool)
        present[gid_live] = True
        groups = np.flatnonzero(present)
        gid = gid_live if groups.size == flat_a.size else (np.cumsum(present) - 1)[gid_live]
        gkeys = _random.Key(flat_a[groups], flat_b[groups])
        e, k = _draw_pairs(nn[pairs], gg[pairs], gid, gkeys, tau, d, sigma2, statistic)
        err[pairs], leaked[pairs] = e, k
    return err.reshape(shape), leaked.reshape(shape)


def draw_round(n, gamma, *, tau, d, sigma2=1.0, statistic="paper", seed=None):
    """One release of Algorithm 1 and its leak count (a batch of one, :func:`draw_rounds`).

    Parameters
    ----------
    n : int
        Dataset size N >= 1.
    gamma, tau, d, sigma2, statistic
        As in :func:`draw_rounds`.
    seed : None, int, SeedSequence or Generator
        Root of the round's key.

    Returns
    -------
    error : float
    leaked : int

    Examples
    --------
    >>> error, leaked = draw_round(1000, 2.0, tau=0.02, d=12, seed=0)
    >>> 0 <= leaked <= 1000 and error > 0
    True
    """
    n = check_int("n", n, low=1)
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    d = check_int("d", d, low=1)
    sigma2 = check_real("sigma2", sigma2, low=0, low_open=True, scalar=True)
    statistic = check_choice("statistic", statistic, leakage.STATISTICS)
    e, k = draw_rounds(n, gamma, _random.root_key(seed), tau=tau, d=d, sigma2=sigma2, statistic=statistic)
    return float(e), int(k)


def _draw_pairs(n, gamma, gid, gkeys, tau, d, sigma2, statistic):
    """The projected draw of live pairs (n >= 1) grouped by key ``gid`` (module docstring)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _draw_pairs_core(n, gamma, gid, gkeys, tau, d, sigma2, statistic)


def _draw_pairs_core(n, gamma, gid, gkeys, tau, d, sigma2, statistic):
    G = gkeys.shape[0]
    P = n.size
    sigma = math.sqrt(sigma2)
    # --- the group's randomness: ξ, the rest vector, the a's (prefix of its largest population)
    n_max = np.zeros(G, dtype=np.int64)
    np.maximum.at(n_max, gid, n)
    xi = gkeys.child("noise").normal(d)                       # (G, d)
    xi_norm = np.sqrt(np.einsum("gi,gi->g", xi, xi))
    rest = gkeys.child("rest").normal(d - 1) if d > 1 else np.zeros((G, 0))
    a_flat = gkeys.child("along").normal_ragged(n_max)
    start = np.cumsum(n_max) - n_max                          # group offsets in a_flat
    # --- ā of every pair: a sequential sum of the group's first N numbers
    abar = _prefix_means(a_flat, start, n_max, gid, n)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        eta_norm = gamma * xi_norm[gid] / np.sqrt(n)
    lone = n == 1
    multi = ~lone
    nm = np.where(multi, n, 2)
    k0, k1 = _parabola(eta_norm, nm, gamma, d, sigma2, tau, statistic)
    r1, r2, has_roots = _roots(k0, k1)
    all_leak = multi & ~has_roots
    t_n = (1.0 - 1.0 / nm) * _band_quantile(d)
    s1, s2, has_inner = _roots(k0 - t_n, k1)
    if d == 1:
        has_inner = np.ones(P, bool)
        s1, s2 = r1, r2
    # a-space interval ends: sure leaks a <= lo1 or a >= hi1; the band (lo1, hi1) minus the open
    # interior (lo2, hi2) -- NaN ends (no interior) make the interior empty
    lo1, hi1 = abar + r1, abar + r2
    lo2 = np.where(has_inner, abar + s1, np.nan)
    hi2 = np.where(has_inner, abar + s2, np.nan)
    work = np.flatnonzero(multi & has_roots)
    sure = np.zeros(P, dtype=np.int64)
    band_pair = np.zeros(0, dtype=np.int64)
    band_rec = np.zeros(0, dtype=np.int64)
    if work.size:
        sure_w, bp, br = _classify(work, gid, n, a_flat, start, n_max, lo1, hi1, lo2, hi2, d)
        sure[work] = sure_w
        band_pair, band_rec = bp, br
    leaked = np.where(lone, 1, np.where(all_leak, n, sure))
    if band_pair.size and d > 1:
        leaked += _band_leaks(band_pair, band_rec, gid, n, gkeys, a_flat, start, abar, k0, k1, d)
    # the error: ḡ along ξ̂ is ā, across it h̄ = rest/√N, independent of every deviation
    hbar_sq = np.einsum("gi,gi->g", rest, rest)[gid] / n if d > 1 else np.zeros(P)
    with np.errstate(over="ignore", invalid="ignore"):
        along = abar + eta_norm / sigma
        err = along * along + hbar_sq
    return err, leaked


#: Fixed-point scale of the band sums: integer sums are exact, so they do not depend on order.
_FIX = 2.0**40


def _band_leaks(band_pair, band_rec, gid, n, gkeys, a_flat, start, abar, k0, k1, d):
    """Leaks among the band records of every pair (module docstring, "the band").

    β_i = ‖g_i − ḡ‖² are the squared deviations across ξ̂: g_i (d − 1
    normals of the ``"across"`` stream at record i, shared by every pair of
    the group) for the band's m records, and ḡ = (Σ_band g_i + S)/N with
    S = √(N − m) · (the ``"spread"`` vector) standing for the other N − m
    records. Σ_band g_i is summed in fixed point (exact, order-free). A
    record with β_i > θ_i leaks; β_i is bracketed by (‖g_i‖ ∓ ‖ḡ‖)², so the
    inner product is computed only where θ_i falls inside the bracket.
    """
    P = n.size
    # records of each group that are in some pair's band, drawn once (a mask over the
    # group-major record numbering: no sort)
    flat_rec = start[gid[band_pair]] + band_rec
    total = int(flat_rec.max()) + 1
    in_union = np.zeros(total, bool)
    in_union[flat_rec] = True
    uniq = np.flatnonzero(in_union)
    row = (np.cumsum(in_union) - 1)[flat_rec]
    ugrp = np.searchsorted(start, uniq, side="right") - 1
    urec = uniq - start[ugrp]
    g = gkeys.child("across")[ugrp].normal_records(urec, d - 1)                    # (U, d-1)
    g_sq = np.einsum("ij,ij->i", g, g)
    g_fix = np.rint(g * _FIX).astype(np.int64)
    # entries come grouped by pair (contiguous runs), which is all reduceat needs; one coordinate at
    # a time, because a 1-D reduceat is ~4x faster than one down the columns of (entries, d - 1)
    # (integer sums are exact: the grouping moves no number)
    cuts = np.flatnonzero(np.r_[True, band_pair[1:] != band_pair[:-1]])
    owners = band_pair[cuts]
    m = np.diff(np.r_[cuts, band_pair.size])
    sums = np.empty((cuts.size, d - 1))
    for j in range(d - 1):
        sums[:, j] = np.add.reduceat(g_fix[:, j].take(row), cuts)
    sums /= _FIX
    spread = gkeys.child("spread").normal(d - 1)[gid[owners]]
    gbar = (sums + spread * np.sqrt(np.maximum(n[owners] - m, 0))[:, None]) / n[owners][:, None]
    gbar_norm = np.sqrt(np.einsum("ij,ij->i", gbar, gbar))
    entry_owner = np.repeat(np.arange(owners.size), m)
    alpha = a_flat[start[gid[band_pair]] + band_rec] - abar[band_pair]
    with np.errstate(over="ignore", invalid="ignore"):
        theta = k0[band_pair] - alpha * (alpha + k1[band_pair])
    norm = np.sqrt(g_sq[row])
    gb = gbar_norm[entry_owner]
    low, high = (norm - gb) ** 2, (norm + gb) ** 2
    leak = theta < low
    doubt = np.flatnonzero((theta >= low) & (theta < high))
    if doubt.size:
        dev = g[row[doubt]] - gbar[entry_owner[doubt]]
        leak[doubt] = np.einsum("ij,ij->i", dev, dev) > theta[doubt]
    return np.bincount(band_pair, weights=leak, minlength=P).astype(np.int64)


def _prefix_means(a_flat, start, n_max, gid, n):
    """ā = (a_0 + ... + a_{N−1})/N of every pair.

    Each sum is numpy's reduction of the slice a[start, start + N) of the
    pair's group (``np.add.reduceat`` on interleaved bounds): its rounding
    depends on those N numbers only, never on the other pairs or groups of
    the batch.
    """
    s = start[gid]
    bounds = np.empty(2 * n.size, dtype=np.int64)
    bounds[0::2] = s
    bounds[1::2] = s + n
    if bounds.max() >= a_flat.size:      # reduceat needs indices inside the array
        padded = np.concatenate([a_flat, [0.0]])
        sums = np.add.reduceat(padded, bounds)[0::2]
    else:
        sums = np.add.reduceat(a_flat, bounds)[0::2]
    return sums / n


def _classify(work, gid, n, a_flat, start, n_max, lo1, hi1, lo2, hi2, d):
    """Sure leaks of every working pair and its band records (pair, record index).

    Pairs whose population is the largest of their group and shared by at
    least :data:`_SORT_MIN_LEVELS` pairs are counted on the sorted a's;
    the others by direct comparison, in blocks. Both use the same
    predicates, so they agree exactly.
    """
    sure = np.zeros(work.size, dtype=np.int64)
    bp_parts, br_parts = [], []
    g = gid[work]
    full = n[work] == n_max[g]
    counts = np.bincount(g[full], minlength=n_max.size)
    sorted_mask = full & (counts[g] >= _SORT_MIN_LEVELS)
    idx_sorted = np.flatnonzero(sorted_mask)
    idx_direct = np.flatnonzero(~sorted_mask)
    if idx_sorted.size:
        s, bp, br = _classify_sorted(work[idx_sorted], gid, n, a_flat, start, n_max, lo1, hi1, lo2, hi2, d)
        sure[idx_sorted] = s
        bp_parts.append(bp)
        br_parts.append(br)
    if idx_direct.size:
        s, bp, br = _classify_direct(work[idx_direct], gid, n, a_flat, start, lo1, hi1, lo2, hi2, d)
        sure[idx_direct] = s
        bp_parts.append(bp)
        br_parts.append(br)
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))
    return sure, cat(bp_parts), cat(br_parts)


def _predicates(a, lo1, hi1, lo2, hi2, d):
    """(sure leak, band) of records with values ``a`` against interval ends (broadcast).

    Sure leak: a <= lo1 or a >= hi1 (θ <= 0). Band: lo1 < a < hi1 outside the
    open interior (lo2, hi2), which is empty when its ends are NaN. For d = 1
    a record leaks iff θ < 0 (a < lo1 or a > hi1) and there is no band.
    """
    if d == 1:
        return (a < lo1) | (a > hi1), np.zeros(np.broadcast_shapes(np.shape(a), np.shape(lo1)), bool)
    sure = (a <= lo1) | (a >= hi1)
    band = (a > lo1) & (a < hi1) & ~((a > lo2) & (a < hi2))
    return sure, band


def _classify_direct(pairs, gid, n, a_flat, start, lo1, hi1, lo2, hi2, d):
    """Direct comparison of every record of every pair: the records of pair p are the
    segment a[start_g, start_g + N_p) of its group; segments are laid end to end (no padding),
    in blocks of about ``_BLOCK`` records."""
    sure = np.zeros(pairs.size, dtype=np.int64)
    bp_parts, br_parts = [], []
    interval_ends = np.stack([lo1, hi1, lo2, hi2])
    lengths = n[pairs]
    ends = np.cumsum(lengths)
    i = 0
    P = pairs.size
    while i < P:
        j = int(np.searchsorted(ends, (ends[i - 1] if i else 0) + _BLOCK, side="right"))
        j = max(j, i + 1)
        p = pairs[i:j]
        ln = lengths[i:j]
        seg_start = start[gid[p]]
        offsets = np.cumsum(ln) - ln
        total = int(ln.sum())
        contiguous = np.all(seg_start[1:] == seg_start[:-1] + ln[:-1]) if p.size > 1 else True
        if contiguous:                       # whole groups in order: the segments are a slice
            a = a_flat[seg_start[0]:seg_start[0] + total]
        else:
            idx = np.arange(total, dtype=np.int64) + np.repeat(seg_start - offsets, ln)
            a = a_flat[idx]
        # the four interval ends of each record's pair, repeated in one call (4x faster than four)
        s_mask, b_mask = _predicates(a, *np.repeat(interval_ends[:, p], ln, axis=1), d)
        sure[i:j] = np.add.reduceat(s_mask, offsets) if total else 0
        pos = np.flatnonzero(b_mask)
        if pos.size:
            owner = np.searchsorted(offsets, pos, side="right") - 1
            bp_parts.append(p[owner])
            br_parts.append((pos - offsets[owner]).astype(np.int64))
        i = j
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))
    return sure, cat(bp_parts), cat(br_parts)


def _classify_sorted(pairs, gid, n, a_flat, start, n_max, lo1, hi1, lo2, hi2, d):
    """Pairs that use their group's whole prefix: locate the interval ends in the sorted a's."""
    sure = np.zeros(pairs.size, dtype=np.int64)
    bp_parts, br_parts = [], []
    groups = np.unique(gid[pairs])
    for g in groups:
        sel = np.flatnonzero(gid[pairs] == g)
        p = pairs[sel]
        N = int(n_max[g])
        a = a_flat[start[g]:start[g] + N]
        # numpy's default (introsort, SIMD where the CPU has it: ~6x faster than "stable" at N = 20 000).
        # Ties are ordered arbitrarily, which moves no result: a pair's band is a value range, so ties
        # fall on the same side of each end, and its records are only counted and summed in fixed point.
        order = np.argsort(a)
        vals = a[order]
        if d == 1:
            below = np.searchsorted(vals, lo1[p], side="left")       # a < lo1
            above = N - np.searchsorted(vals, hi1[p], side="right")  # a > hi1
            sure[sel] = below + above
            continue
        i_lo1 = np.searchsorted(vals, lo1[p], side="right")          # a > lo1 from here
        i_hi1 = np.searchsorted(vals, hi1[p], side="left")           # a >= hi1 from here
        sure[sel] = i_lo1 + (N - i_hi1)
        inner = ~np.isnan(lo2[p])
        # band: [i_lo1, j_lo2) (lo1 < a <= lo2) and [k_hi2, i_hi1) (hi2 <= a < hi1); without an
        # interior the whole [i_lo1, i_hi1)
        j_lo2 = np.where(inner, np.searchsorted(vals, np.where(inner, lo2[p], 0.0), side="right"), i_hi1)
        k_hi2 = np.where(inner, np.searchsorted(vals, np.where(inner, hi2[p], 0.0), side="left"), i_hi1)
        first = np.maximum(j_lo2 - i_lo1, 0)
        second = np.maximum(i_hi1 - np.maximum(k_hi2, j_lo2), 0)
        total = first + second
        if total.sum() == 0:
            continue
        owner = np.repeat(np.arange(p.size), total)
        offs = np.cumsum(total) - total
        k = np.arange(int(total.sum())) - np.repeat(offs, total)
        in_first = k < first[owner]
        pos = np.where(in_first, i_lo1[owner] + k, np.maximum(k_hi2, j_lo2)[owner] + (k - first[owner]))
        bp_parts.append(p[owner])
        br_parts.append(order[pos].astype(np.int64))
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))
    return sure, cat(bp_parts), cat(br_parts)
