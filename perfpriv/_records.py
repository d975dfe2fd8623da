"""Gaussian records (Assumption 1) and ℓ2 clipping (§4.1): the data side of the Gaussian model.

The functions the mechanism (:mod:`perfpriv.gaussian`) and the membership
statistic (:mod:`perfpriv.leakage`) both need live here, below both, so that
neither imports the other's internals. The public ones are documented and
re-exported by :mod:`perfpriv.gaussian` (``clip``, ``sample_records``,
``clip_probability``); the others are the shared helpers of the package.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from ._validate import check_allocation, check_covariance, check_int, check_mean, check_real, check_rng

__all__ = ["check_records", "clip", "clip_inplace", "clip_inplace_norms", "sample_records", "draw",
           "clip_probability", "clip_probability_checked", "isotropic_variance"]


def check_records(Z, name="Z"):
    """A 2-D float array of records (rows) without NaN/inf."""
    arr = np.asarray(check_real(name, Z), dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"{name} must be an (N, d) array of records with d >= 1; got shape {arr.shape}")
    return arr


def clip(z, R):
    r"""ℓ2-clip records to the ball of radius ``R`` (§4.1).

    :math:`\mathrm{clip}(z, R) = z \cdot \min(1, R / \|z\|)` applied to each row (the last axis
    is the coordinate axis).

    Parameters
    ----------
    z : array_like, shape (..., d)
        Records, one per row (a single vector is allowed).
    R : float
        Clipping radius R > 0.

    Returns
    -------
    numpy.ndarray
        Clipped records, same shape as ``z``; rows with norm at most ``R``
        are returned unchanged.

    References
    ----------
    Paper §4.1, definition of the clipped record z̄ before eq. 6.

    Examples
    --------
    >>> clip([[3.0, 4.0], [0.3, 0.4]], R=1.0).round(2).tolist()
    [[0.6, 0.8], [0.3, 0.4]]
    """
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    arr = np.array(check_real("z", z), dtype=float)
    if arr.ndim == 0:
        raise ValueError("z must have at least one dimension (records along the last axis)")
    return clip_inplace(arr, R)


def clip_inplace(arr, R):
    """Clip the rows of a float array to norm R, in place (the formula of :func:`clip`)."""
    norms = np.sqrt(np.einsum("...i,...i->...", arr, arr))
    over = norms > R
    if np.any(over):
        factor = np.ones_like(norms)
        np.divide(R, norms, out=factor, where=over)
        arr *= factor[..., None]
    return arr


def clip_inplace_norms(arr, R):
    """Clip the rows of a 2-D float array to norm R in place (the formula of :func:`clip`).

    Returns the squared norms of the clipped rows (simulate reuses them)."""
    sq = np.einsum("ij,ij->i", arr, arr)
    over = sq > R * R
    if np.any(over):
        arr[over] *= np.sqrt(R * R / sq[over])[:, None]
        sq[over] = R * R
    return sq


def draw(rng, n, d, mu, L, out=None):
    r"""n records :math:`\mathcal{N}(\mu, L L^T)` as an (n, d) float64 array (mu may be None = 0).

    ``out``: an (n, d) C-contiguous float64 array to draw into (same numbers).
    """
    Z = rng.standard_normal((n, d)) if out is None else rng.standard_normal(out=out)
    if L is not None:
        Z = Z @ L.T
    if mu is not None:
        Z += mu
    return Z


def sample_records(n, *, d, mu=None, Sigma=None, seed=None):
    r"""Draw ``n`` records :math:`z \sim \mathcal{N}(\mu, \Sigma)` in :math:`R^d` (Assumption 1).

    Parameters
    ----------
    n : int
        Number of records, n >= 0.
    d, mu, Sigma
        Dimension d >= 1, mean μ of shape (d,) (default 0) and symmetric positive-definite
        covariance Σ of shape (d, d) (default identity).
    seed : None, int, SeedSequence or numpy.random.Generator
        Randomness.

    Returns
    -------
    numpy.ndarray, shape (n, d)

    Examples
    --------
    >>> sample_records(5, d=3, seed=1).shape
    (5, 3)
    """
    n = check_int("n", n, low=0)
    d = check_int("d", d, low=1)
    mu = check_mean(mu, d)
    L = None if Sigma is None else np.linalg.cholesky(check_covariance(Sigma, d))  # never a d x d identity
    rng = check_rng(seed)
    check_allocation("the records (n*d normal draws)", float(n) * d, name="n")
    return draw(rng, n, d, mu, L)


def clip_probability(d, R, mu=None, Sigma=None):
    r"""Probability that one record :math:`z \sim \mathcal{N}(\mu, \Sigma)` is clipped, :math:`P(\|z\| > R)`.

    Exact for an isotropic covariance :math:`Σ = σ^{2} I` (:math:`\|z\|^{2}/σ^{2}` is noncentral :math:`\chi ^{2}_d`
    with noncentrality :math:`\|μ\|^{2}/σ^{2}`); for any other Σ an upper bound, from
    :math:`\|z\| \le \|μ\| + \sqrt λ_{\max} \|g\|` with g standard normal.

    Parameters
    ----------
    d, R, mu, Sigma
        Dimension, clipping radius R > 0, and the law's ``mu`` and ``Sigma`` as in :func:`sample_records`.

    Returns
    -------
    float

    Examples
    --------
    >>> round(clip_probability(12, 10.0), 12) < 1e-10
    True
    """
    d = check_int("d", d, low=1)
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    mu = check_mean(mu, d)
    if Sigma is None:  # the identity, never built (d = 10^4 would take 0.8 GB and 20 s)
        return clip_probability_checked(d, R, mu, None, 1.0)
    Sigma = check_covariance(Sigma, d)
    return clip_probability_checked(d, R, mu, Sigma, isotropic_variance(Sigma))


def clip_probability_checked(d, R, mu, Sigma, sigma2):
    """:func:`clip_probability` of checked arguments; ``sigma2`` = :math:`σ^{2}` if :math:`Σ = σ^{2} I`, else None."""
    m = vector_norm(mu)
    if sigma2 is not None:
        with np.errstate(over="ignore"):  # R/σ or ‖μ‖/σ may overflow to inf
            rho, m_s = float(np.float64(R) / math.sqrt(sigma2)), float(np.float64(m) / math.sqrt(sigma2))
        return _noncentral_chi_sf(d, rho, m_s)
    lam = float(np.linalg.eigvalsh(Sigma).max())
    gap = R - m
    if gap <= 0:
        return 1.0
    with np.errstate(over="ignore"):
        x = float(np.float64(gap / math.sqrt(lam)) ** 2)
    return float(special.chdtrc(d, x))


def vector_norm(v):
    """Euclidean norm of a finite vector without overflow or underflow of its squares."""
    v = np.asarray(v, dtype=float)
    scale = float(np.max(np.abs(v))) if v.size else 0.0
    if scale == 0.0:
        return 0.0
    w = v / scale
    return scale * math.sqrt(float(w @ w))


#: Noncentrality :math:`(\|μ\|/σ)^{2}` above which scipy's noncentral :math:`\chi ^{2}` tail is not trusted (it returns
#: NaN or values off by 10% from about 1e12 on); above it the tail is a one-dimensional integral.
_NCX2_TRUSTED = 1e6


def _noncentral_chi_sf(d, rho, m):
    r""":math:`P(\|m e_1 + g\| > ρ)` for :math:`g \sim \mathcal{N}(0, I_d)`: the noncentral :math:`\chi_d` tail at ρ = ``rho`` (m, ρ >= 0).

    Never NaN. For a moderate noncentrality :math:`m^{2}` it is scipy's noncentral :math:`\chi^{2}` tail; beyond it
    (where scipy fails), :math:`\|z\|^{2} = (m + g_1)^{2} + W` with :math:`W \sim \chi^{2}_{d-1}` independent, so the tail is
    :math:`\mathbb{E}_W[\bar Φ(\sqrt{ρ^{2} - W} - m) + Φ(-\sqrt{ρ^{2} - W} - m)]` (1 where :math:`W \ge ρ^{2}`), integrated over the
    quantiles of W, with :math:`\sqrt{ρ^{2} - W} - m` written as :math:`(ρ - m) - W / (ρ + \sqrt{ρ^{2} - W})` so
    that no digits cancel.
    """
    if not rho < math.inf:
        return 0.0
    if m == 0.0:
        return float(special.chdtrc(d, rho * rho))
    if m * m <= _NCX2_TRUSTED:
        return float(stats.ncx2.sf(rho * rho, d, m * m))
    if not m < math.inf:
        return 1.0

    def tail(w):  # P(|m + g₁| > √(rho² − w)), the first coordinate's tail given W = w
        if w >= rho * rho:
            return 1.0
        root = math.sqrt(rho * rho - w)
        return float(special.ndtr(-((rho - m) - w / (rho + root))) + special.ndtr(-root - m))

    if d == 1:
        return min(1.0, tail(0.0))
    from scipy import integrate
    ppf = lambda u: float(special.chdtri(d - 1, u))  # the upper-tail quantile of W
    val, _ = integrate.quad(lambda u: tail(ppf(u)) if 0.0 < u < 1.0 else tail(0.0 if u >= 1.0 else math.inf),
                            0.0, 1.0, epsabs=1e-14, epsrel=1e-12, limit=200)
    return min(1.0, max(0.0, float(val)))


def isotropic_variance(Sigma):
    r""":math:`σ^{2}` if :math:`\Sigma = σ^{2} I` (to rounding), else None."""
    s2 = float(np.mean(np.diag(Sigma)))
    diff = np.abs(Sigma - s2 * np.eye(Sigma.shape[0]))
    if np.all(diff <= 1e-14 * max(s2, 1e-300) + 1e-12 * s2):  # np.allclose(rtol=1e-12, atol=1e-14 s2)
        return s2
    return None
