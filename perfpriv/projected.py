"""One round of Algorithm 1 from about one normal per record (the projected draw).

:func:`perfpriv.gaussian.simulate` draws, by default, the N × d records of a
round. When the covariance is isotropic (Σ = σ² I) and records are not
clipped, almost all of that randomness is irrelevant to what the round
decides, and this module draws only what matters. The construction is exact
in law; the two places where it is not are bounded explicitly below.

**The reduction.** Write a record as z_i = μ + σ g_i with g_i standard normal
and let η̂ = η/‖η‖ be the direction of the round's noise. Rotating every
g_i into a basis whose first axis is η̂ gives coordinates
(a_i, h_i) ∈ R × R^{d−1} that are again independent standard normals,
independent of η (rotation invariance). The deviation of a record from the
mean then splits into

    α_i = a_i − ā                (along η̂),     β_i = ‖h_i − h̄‖²   (across η̂),

so ‖z_i − z̄‖² = σ² (α_i² + β_i) and ⟨z_i − z̄, η⟩ = σ ‖η‖ α_i, and the
membership statistic (eq. 8; coefficients from ``perfpriv.leakage._llr_coefficients``)
is Λ_i = A σ² (α_i² + β_i) + B σ ‖η‖ α_i + C with A > 0. Record i therefore
leaks (Λ_i > τ) exactly when

    β_i > θ_i = (τ − C)/(A σ²) − α_i (α_i + B ‖η‖/(A σ)).

The vector α needs the N normals a_i. The β_i are needed only where the
comparison is undecided by α alone:

* θ_i ≤ 0: β_i ≥ 0 > θ_i almost surely, the record leaks (for d = 1 there is
  no β and the record leaks iff θ_i < 0);
* θ_i > t = (1 − 1/N) χ²_{d−1}.isf(2⁻⁶⁴): β_i, whose law is
  (1 − 1/N) χ²_{d−1}, exceeds θ_i with probability below 2⁻⁶⁴ ≈ 5.4e−20;
  the record is counted as not leaked without drawing β_i;
* the m records in between (the *band*) get their h_i drawn, m (d − 1)
  normals, and h̄ = (Σ_band h_i + S)/N with S ~ N(0, (N − m) I_{d−1}) the sum
  of the other records' h (one more (d − 1)-vector). This is the exact
  joint law of the band's β_i: the band is chosen from the a's, which are
  independent of the h's.

The round's error is ‖ḡ + η/σ‖² = (ā + ‖η‖/σ)² + ‖h̄‖², the same quantity
as the records method, from the same draws.

**What is not exact.** (1) A skipped record leaks with probability below
2⁻⁶⁴; (2) a record that would have been clipped (probability
:func:`perfpriv.gaussian.clip_probability` per record) is not. By a union
bound, the law of a run differs from the records method's by at most
(records drawn) × (2⁻⁶⁴ + clip probability) in total variation;
:data:`CLIP_NEGLIGIBLE` is the clip probability below which
``method="auto"`` uses this draw (paper settings d = 12, R = 10, μ = 0:
5.6e−16 per record, so a whole 50-round run at the cap of 20 000 differs
with probability below 6e−10).

**Cost.** N normals and a few passes over N numbers, plus m (d − 1) normals
for the band, which holds the records whose leak is genuinely in doubt
(typically a few percent; more when γ is small and Λ is dominated by the
β term).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import stats

from . import leakage
from ._validate import check_choice, check_int, check_real, check_rng

__all__ = ["SKIP_PROBABILITY", "CLIP_NEGLIGIBLE", "ROUND_STRIDE", "COIN_OFFSET", "band_quantile",
           "leak_thresholds", "draw_round", "round_generators"]

#: A skipped record would have leaked with probability below this (2⁻⁶⁴).
SKIP_PROBABILITY = 2.0**-64

#: ``method="auto"`` uses the projected draw when a record is clipped with at
#: most this probability (and Σ is isotropic).
CLIP_NEGLIGIBLE = 1e-12

#: Round t of a trial draws from the trial's stream advanced by t times this
#: many steps (no round comes close to using 2⁶⁴ random numbers).
ROUND_STRIDE = 2**64

#: The leave/recruit coins of round t come from the round streams shifted by
#: this many steps (:func:`round_generators`' ``offset``).
COIN_OFFSET = 2**62


def round_generators(seed, offset=0):
    """One random generator per round, each a separate stretch of one stream.

    Round t (t = 1, 2, ...) gets the stream of ``seed`` advanced by
    t · 2⁶⁴ steps (``bit_generator.advance``, cheap for numpy's PCG64,
    PCG64DXSM and Philox; other bit generators get one spawned child per
    round). A round's draws therefore do not depend on how many numbers
    earlier rounds used, so two runs from the same seed -- with different γ,
    or different privacy schedules -- share their random numbers round by
    round (common random numbers): the first min(N, N') deviations of round
    t coincide even after the populations have drifted apart. The grid
    searches and paired comparisons of the book rely on that.

    Parameters
    ----------
    seed : None, int, SeedSequence or numpy.random.Generator
        The trial's randomness.
    offset : int
        Further steps to advance every round's stream by, 0 <= offset < 2⁶³:
        a second family of streams of the same trial (the simulator draws
        the leave/recruit coins with ``offset =`` :data:`COIN_OFFSET`, so
        that they too stay in step across γ).

    Yields
    ------
    numpy.random.Generator
        The generator of the next round. (With an advancing bit generator
        it is one object whose state is reset each round: draw from it
        before asking for the next.)

    Examples
    --------
    >>> a, b = round_generators(3), round_generators(3)
    >>> x = next(a).standard_normal(5)       # round 1 draws 5 numbers ...
    >>> y = next(b).standard_normal(50)      # ... or 50: the first 5 agree
    >>> bool(np.array_equal(x, y[:5])), bool(next(a).random() == next(b).random())
    (True, True)
    """
    rng = check_rng(seed)
    offset = check_int("offset", offset, low=0, high=2**63 - 1)
    bg = rng.bit_generator
    if not hasattr(bg, "advance"):
        if offset:
            rng = rng.spawn(offset % 997 + 1)[-1]
        while True:
            yield rng.spawn(1)[0]
    cursor = type(bg)(0)
    cursor.state = bg.state
    if offset:
        cursor.advance(offset)
    out = np.random.Generator(type(bg)(0))
    while True:
        cursor.advance(ROUND_STRIDE)
        out.bit_generator.state = cursor.state
        yield out


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


def _check_round(n, gamma, tau, d, sigma2, statistic):
    n = check_int("n", n, low=1)
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    d = check_int("d", d, low=1)
    sigma2 = check_real("sigma2", sigma2, low=0, low_open=True, scalar=True)
    statistic = check_choice("statistic", statistic, leakage.STATISTICS)
    return n, gamma, tau, d, sigma2, statistic


def leak_thresholds(alpha, eta_norm, gamma, tau, *, d, sigma2=1.0, statistic="paper"):
    """θ_i of every record: record i leaks (Λ_i > τ) iff β_i > θ_i.

    Parameters
    ----------
    alpha : array_like, shape (n,)
        α_i = a_i − ā, the standardized deviations of the n >= 2 records
        from their mean along the noise direction η̂ (module docstring).
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
    _, gamma, tau, d, sigma2, statistic = _check_round(alpha.size, gamma, tau, d, sigma2, statistic)
    return _leak_thresholds(alpha, eta_norm, alpha.size, gamma, d, sigma2, tau, statistic)


def _leak_thresholds(alpha, eta_norm, n, gamma, d, sigma2, tau, statistic):
    """:func:`leak_thresholds` of checked arguments; overwrites ``alpha`` with θ."""
    A, B, C = leakage._llr_coefficients(eta_norm**2, n, gamma, d, statistic)
    with np.errstate(over="ignore"):  # γ or σ near the ends of their range: θ may reach ±inf
        k0 = (tau - C) / A / sigma2
        k1 = (B / A) * (eta_norm / math.sqrt(sigma2))
    theta = alpha
    tmp = alpha + k1
    theta *= tmp
    np.subtract(k0, theta, out=theta)
    return theta


def draw_round(n, gamma, tau, *, d, sigma2=1.0, statistic="paper", seed=None):
    """One release of Algorithm 1 and its leak count, drawn as in the module docstring.

    Parameters
    ----------
    n : int
        Dataset size N_t >= 1. A lone user (n = 1) is reported as leaked, as
        in :func:`perfpriv.gaussian.simulate`.
    gamma : float
        Per-user noise scale γ > 0 of the round.
    tau : float
        Vulnerability threshold τ > 0.
    d : int
        Dimension d >= 1.
    sigma2 : float
        σ² of the isotropic covariance Σ = σ² I (records are not clipped).
    statistic : {"paper", "exact"}
        Membership statistic.
    seed : None, int, SeedSequence or numpy.random.Generator
        Randomness; draws, in order: η (d normals), a (n), the rest sum S
        (d − 1), the band's h (m (d − 1)). Everything whose size does not
        depend on γ comes first, so rounds with different γ from one stream
        share η's direction, the a and S.

    Returns
    -------
    error : float
        Squared Mahalanobis error ‖o_t − μ‖²_{Σ⁻¹} of the release.
    leaked : int
        Number of records with Λ > τ.

    Examples
    --------
    >>> error, leaked = draw_round(1000, 2.0, 0.02, d=12, seed=0)
    >>> 0 <= leaked <= 1000 and error > 0
    True
    """
    n, gamma, tau, d, sigma2, statistic = _check_round(n, gamma, tau, d, sigma2, statistic)
    return _draw_round(check_rng(seed), n, gamma, tau, d, sigma2, statistic, _band_quantile(d))


def _draw_round(rng, n, gamma, tau, d, sigma2, statistic, t_quantile):
    """:func:`draw_round` of checked arguments (``t_quantile`` = :func:`band_quantile` of d)."""
    eta = rng.standard_normal(d) * (gamma / math.sqrt(n))
    eta_norm = math.sqrt(float(eta @ eta))
    a = rng.standard_normal(n)
    rest = rng.standard_normal(d - 1)  # S / sqrt(n - m): drawn before the band, whose size depends on γ
    abar = float(a.sum()) / n
    m = 0
    if n == 1:
        leaked = 1  # a lone user is always exposed (perfpriv.gaussian.simulate)
    else:
        a -= abar
        theta = _leak_thresholds(a, eta_norm, n, gamma, d, sigma2, tau, statistic)
        if d == 1:
            leaked = int(np.count_nonzero(theta < 0))
        else:
            leaked = int(np.count_nonzero(theta <= 0))
            band = theta[(theta > 0) & (theta <= (1.0 - 1.0 / n) * t_quantile)]
            m = band.size
    if m:
        H = rng.standard_normal((m, d - 1))
        hbar = (H.sum(axis=0) + rest * math.sqrt(n - m)) / n
        H -= hbar
        leaked += int(np.count_nonzero(np.einsum("ij,ij->i", H, H) > band))
    else:
        hbar = rest * (math.sqrt(n) / n)
    hbar_sq = float(hbar @ hbar)
    along = abar + eta_norm / math.sqrt(sigma2)
    return along * along + hbar_sq, leaked
