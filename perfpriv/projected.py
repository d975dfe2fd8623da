r"""Algorithm 1's rounds from about one normal per record (the projected draw), batched.

:class:`perfpriv.gaussian.GaussianMean` draws a round, by default, this way: for an isotropic
covariance :math:`(Σ = σ^{2} I)` and unclipped records almost all of the N × d numbers of a
round's records cannot change what it decides, and only what matters is drawn. The construction
is the book's (Appendix A: proof, figures and checks); it is exact in law up to the two bounds
below.

**The reduction.** Write a record as :math:`z_i = μ + σ g_i` with :math:`g_i` standard normal
and the round's noise as :math:`η = (γ/\sqrt N) ξ` with ξ standard normal in :math:`\mathbb{R}^d`
(the functions below take ``tau`` > 0, ``d`` >= 1, ``sigma2`` = :math:`σ^{2}` and the membership
``statistic`` of :mod:`perfpriv.leakage` in this sense). In a basis whose first axis is
:math:`\hat ξ = ξ/\|ξ\|` every :math:`g_i` has coordinates
:math:`(a_i, h_i) ∈ \mathbb{R} \times \mathbb{R}^{d-1}`, again independent standard normals, independent of ξ.
With

    :math:`α_i = a_i - \bar a`                (along :math:`\hat ξ`),     :math:`β_i = \|h_i - \bar h\|^{2}`   (across :math:`\hat ξ`),

:math:`\|z_i - \bar z\|^{2} = σ^{2}(α_i^{2} + β_i)` and :math:`⟨z_i - \bar z, η⟩ = σ\|η\|α_i`, so
the membership statistic (eq. 8, :func:`perfpriv.leakage.llr_coefficients`) is
:math:`Λ_i = Aσ^{2}(α_i^{2} + β_i) + Bσ\|η\|α_i + C` with A > 0, and record i leaks exactly when

    :math:`β_i > θ_i = k_0 - α_i(α_i + k_1)`,   :math:`k_0 = (τ - C)/(Aσ^{2})`,  :math:`k_1 = (B/A)\|η\|/σ`

(:func:`leak_thresholds`). With :math:`t_N = (1 - 1/N)\, F^{-1}_{\chi^{2}_{d-1}}(1 - 2^{-64})`
(:func:`band_quantile`; :math:`β_i` is :math:`(1 - 1/N) \chi^{2}_{d-1}`), a record with
:math:`θ_i \le 0` leaks (for d = 1, without β, iff :math:`θ_i < 0`); one with :math:`θ_i > t_N` is counted
as not leaked without drawing :math:`β_i`; the m records in between (the *band*) get their :math:`β_i`
from the *deviation chain* (:func:`perfpriv._kernels.gaussian_mean.deviation_chain_step`): visiting them
in a fixed order, with :math:`s = \|D\|^{2}` the squared norm of minus the sum of the deviations
:math:`e_j = h_j - \bar h` visited so far (0 at first) and :math:`n_k` the records not yet visited
(N at first), the next record's deviation is :math:`\mathcal{N}(D/n_k, (1 - 1/n_k) I_{d-1})`, so with
:math:`ρ = 1 - 1/n_k`, a standard normal u and a :math:`\chi^{2}_{d-2}` variate χ,

    :math:`\ell = \sqrt{s}/n_k + \sqrt{ρ}\,u`,   :math:`β = \ell^{2} + ρχ`,   :math:`s \leftarrow (\sqrt{s} - \ell)^{2} + ρχ`,

which is the exact joint law of the band's :math:`β_i` (Appendix A: the proof, and why they must be
drawn jointly). The deviations are independent of :math:`\bar h`, so the round's error
:math:`\|\bar g + η/σ\|^{2} = (\bar a + \|η\|/σ)^{2} + \|\bar h\|^{2}` takes :math:`\bar h` from
numbers of its own.

**What is not exact.** A skipped record leaks with probability below :math:`2^{-64}`, and a record
that would have been clipped (:func:`perfpriv.gaussian.clip_probability`) is not: a run's law is within
(records drawn) × (:math:`2^{-64}` + clip probability) of the records draw's in total variation.
``draw="auto"`` uses this draw below :data:`CLIP_NEGLIGIBLE` (paper settings: 5.6e−16 per record).

**Randomness and batching.** :func:`draw_rounds` simulates every (cell, level, trial) pair of a round
at once, in the compiled code the engine's loop also runs (:mod:`perfpriv._kernels.gaussian_mean`).
Each (cell, trial, round) has one key (``perfpriv.keyed``), shared by all levels: ξ is its ``"noise"``
stream, :math:`a_i` the i-th number of its ``"along"`` stream (:meth:`perfpriv.keyed.Key.normal_ragged`'s
numbers), the error's :math:`\bar h` its ``"rest"`` stream over :math:`\sqrt N` (exact law
:math:`\mathcal{N}(0, I/N)`), and band record i's u and χ numbers i(d − 1) .. i(d − 1) + ⌈d/2⌉ − 1 of
its ``"across"`` stream (u the first; χ as :math:`-2\log` of a product of ⌊(d − 2)/2⌋ uniforms, plus a
squared normal if d is odd). A level visits its band in the order of a fixed grid of buckets of
:math:`a_i` (1/16 wide), then of the records: an order that depends on the level's own band only.
A pair with N users uses :math:`a_0, \dots, a_{N-1}` whatever the other pairs, and every sum has a
fixed order (ā pairwise, squared norms in two interleaved accumulators): a pair gives the same result
alone or in any batch, and levels share their numbers (common random numbers).

**Cost.** One normal per record of the largest population of each (cell, trial), shared by its
levels, plus ⌈d/2⌉ numbers (one normal, the rest mostly uniforms) per band record (typically a few
percent of the records; more for small γ).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats

from . import keyed, leakage
from ._validate import check_array_size, check_choice, check_int, check_real
from ._kernels import gaussian_mean as _kernel

__all__ = ["SKIP_PROBABILITY", "CLIP_NEGLIGIBLE", "band_quantile", "leak_thresholds", "draw_rounds",
           "draw_round"]

#: A skipped record would have leaked with probability below this :math:`(2^{-64})`.
SKIP_PROBABILITY = 2.0**-64

#: ``draw="auto"`` uses the projected draw when a record is clipped with at
#: most this probability (and Σ is isotropic).
CLIP_NEGLIGIBLE = 1e-12

#: The hashes of the stream purposes of a round (:data:`perfpriv._kernels.gaussian_mean.PURPOSES`).
_PURPOSE_HASHES = np.array([keyed.purpose_hashes(name) for name in _kernel.PURPOSES], dtype=np.uint64)


def band_quantile(d):
    r"""The :math:`\chi ^{2}_{d-1}` quantile t beyond which β is not drawn: :math:`P(\chi ^{2}_{d-1} > t) = 2^{-64}`.

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


def kernel_params(*, tau, d, sigma2=1.0, statistic="paper"):
    """The constants of the compiled round (:func:`perfpriv._kernels.gaussian_mean.group_round`).

    Parameters
    ----------
    tau, d, sigma2, statistic
        As in the module docstring.

    Returns
    -------
    numpy.ndarray, shape (5,)
        ``(tau, d, sigma2, exact, band_quantile(d))`` with ``exact`` 1 for the exact statistic.

    Examples
    --------
    >>> kernel_params(tau=0.02, d=12).round(2).tolist()
    [0.02, 12.0, 1.0, 0.0, 117.63]
    """
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    d = check_int("d", d, low=1)
    check_array_size("one record's coordinates (d values, drawn for a band record)", d=d)
    sigma2 = check_real("sigma2", sigma2, low=0, low_open=True, scalar=True)
    statistic = check_choice("statistic", statistic, leakage.STATISTICS)
    return np.array([tau, d, sigma2, 1.0 if statistic == "exact" else 0.0, _band_quantile(d)])


def leak_thresholds(alpha, eta_norm, gamma, *, tau, d, sigma2=1.0, statistic="paper"):
    r""":math:`θ_i` of every record: record i leaks :math:`(Λ_i > τ)` iff :math:`β_i > θ_i`.

    Parameters
    ----------
    alpha : array_like, shape (n,)
        :math:`α_i = a_i - ā`, the standardized deviations of the n >= 2 records
        from their mean along the noise direction (module docstring).
    eta_norm : float
        :math:`\|η\| \ge 0` of the release.
    gamma : float
        Per-user noise scale γ > 0 of the round.
    tau, d, sigma2, statistic
        As in the module docstring.

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
    statistic: :math:`θ = τ \cdot 2γ^{2} (n - 1)^{2}/n > 0`.

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
    k0, k1 = _kernel.parabola(eta_norm, alpha.size, gamma, d, sigma2, tau, statistic == "exact")
    with np.errstate(over="ignore", invalid="ignore"):
        return k0 - alpha * (alpha + k1)


def draw_rounds(n, gamma, keys, *, tau, d, sigma2=1.0, statistic="paper", live=None):
    r"""One release of Algorithm 1 for every (cell, level, trial) pair of a batch.

    Parameters
    ----------
    n : array_like of int
        Population N >= 0 of each pair (the batch shape); a pair with N = 0
        is skipped (error 0, no leaks).
    gamma : float or array_like
        Noise scale γ in (0, inf] of each pair (broadcast to the batch).
    keys : perfpriv.keyed.Key
        The round's key of each pair, broadcast to the batch; pairs that
        share a key share their random numbers (the level axis of the
        engine's batch has keys of size 1).
    tau, d, sigma2, statistic
        As in the module docstring.
    live : array_like of bool, optional
        Pairs to simulate (others get error 0 and no leaks).

    Returns
    -------
    sq_error : numpy.ndarray
        Squared Mahalanobis error :math:`\|o - μ\|^{2}_{Σ^{-1}}` of each release.
    leaked : numpy.ndarray of int
        Number of records with Λ > τ (a lone user always counts as leaked).

    Examples
    --------
    >>> from perfpriv import keyed
    >>> keys = keyed.root_key(0).child(np.arange(3))
    >>> err, leaked = draw_rounds([1000, 1000, 1], 2.0, keys, tau=0.02, d=12)
    >>> leaked.shape, int(leaked[2])
    ((3,), 1)
    """
    n, live = keyed.check_batch(n, keys, live)      # one along-normal (and its code) per record
    gamma = check_real("gamma", gamma, low=0, low_open=True, allow_inf=True)
    shape = np.broadcast_shapes(n.shape, np.shape(gamma), keys.shape)
    nn = np.broadcast_to(n, shape).reshape(-1)
    gg = np.broadcast_to(np.asarray(gamma, dtype=float), shape).reshape(-1)
    live = np.ones(shape, bool) if live is None else np.broadcast_to(live, shape)
    lv = live.reshape(-1) & (nn >= 1)
    gid_full = np.broadcast_to(np.arange(int(np.prod(keys.shape))).reshape(keys.shape), shape).reshape(-1)
    flat_a, flat_b = keys.a.reshape(-1), keys.b.reshape(-1)
    err = np.zeros(nn.size)
    leaked = np.zeros(nn.size, dtype=np.int64)
    pairs = np.flatnonzero(lv)
    if pairs.size:
        # the groups with a live pair, in order, and each pair's rank among them (a presence mask)
        gid_live = gid_full[pairs]
        present = np.zeros(flat_a.size, bool)
        present[gid_live] = True
        groups = np.flatnonzero(present)
        gid = gid_live if groups.size == flat_a.size else (np.cumsum(present) - 1)[gid_live]
        e = np.empty(pairs.size)
        k = np.empty(pairs.size, dtype=np.int64)
        _kernel.draw_groups(kernel_params(tau=tau, d=d, sigma2=sigma2, statistic=statistic),
                            np.ascontiguousarray(gg[pairs]), np.ascontiguousarray(nn[pairs]),
                            np.ascontiguousarray(gid, dtype=np.int64),
                            np.ascontiguousarray(flat_a[groups]), np.ascontiguousarray(flat_b[groups]),
                            _PURPOSE_HASHES, e, k)
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
    e, k = draw_rounds(n, gamma, keyed.root_key(seed), tau=tau, d=d, sigma2=sigma2, statistic=statistic)
    return float(e), int(k)
