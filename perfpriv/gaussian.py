"""The Gaussian mechanism for private mean estimation and Algorithm 1.

Paper §4.1-4.2 and Algorithm 1. A population of ``N`` users holds records
``z_i ~ N(mu, Sigma)`` in ``R^d``; the platform clips every record to the
ℓ2 ball of radius ``R`` and releases the noisy mean (eq. 6)

    o = (1/N) sum_i clip(z_i, R) + eta,     eta ~ N(0, gamma^2 / N I_d),

which is the same as every user adding ``N(0, gamma^2 I_d)`` to their clipped
record. Each user then runs the membership test of §4.2 on the release
(:func:`perfpriv.leakage.log_likelihood_ratio`); users whose log-likelihood
ratio exceeds ``tau`` leave with probability ``q``, the others recruit one new
user with probability ``r`` (Algorithm 1). :func:`simulate` runs that loop
vectorized over records; :func:`simulate_agents` runs it one user at a time
and is the slow reference the tests compare against.

Choices the paper leaves open (documented in :func:`simulate`): a lone user
(N = 1) has an empty remove-one dataset, so the release itself proves their
membership and they count as leaked; after a collapse (N = 0) the platform
keeps serving its last release, so the recorded error repeats and the
``alive`` mask of the result says which rounds had a fresh release.

Privacy schedules: both simulators accept, wherever a constant ``gamma`` is
accepted, a 1-D array of length ``T`` -- one γ per round, round t (the
release made with the N_{t-1} current users) using ``gamma[t-1]``. A
constant schedule reproduces the constant-γ run draw for draw
(:mod:`perfpriv.schedules` optimizes such schedules).

Symbols: ``gamma`` — γ, per-user noise scale; ``R`` — clipping radius;
``rho`` — ρ, zCDP budget; ``tau`` — τ, vulnerability threshold; ``q`` —
leaving probability of a leaked user; ``r`` — recruiting probability of a
non-leaked user; ``n``/``N`` — population size; ``d`` — dimension.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from ._validate import (
    check_choice,
    check_covariance,
    check_int,
    check_mean,
    check_probability,
    check_real,
    check_rng,
)

__all__ = [
    "clip",
    "gamma_from_rho",
    "rho_from_gamma",
    "sample_records",
    "release",
    "mahalanobis_error",
    "squared_mahalanobis",
    "clip_probability",
    "GaussianRun",
    "simulate",
    "simulate_agents",
]

STATISTICS = ("paper", "exact")
METHODS = ("auto", "records", "projected")

#: Noise scales the simulators accept: γ², γ⁻² and the squared noise must stay
#: finite in double precision (beyond, Λ and the error are inf − inf).
GAMMA_RANGE = (1e-100, 1e100)


def _check_records(Z, name="Z"):
    """A 2-D float array of records (rows) without NaN/inf."""
    arr = np.asarray(check_real(name, Z), dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"{name} must be an (N, d) array of records with d >= 1; got shape {arr.shape}")
    return arr


def clip(z, R):
    """ℓ2-clip records to the ball of radius ``R`` (§4.1).

    ``clip(z, R) = z * min(1, R / ||z||)`` applied to each row (the last axis
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
    return _clip_inplace(arr, R)


def _clip_inplace(arr, R):
    """Clip the rows of a float array to norm R, in place (the formula of :func:`clip`)."""
    norms = np.sqrt(np.einsum("...i,...i->...", arr, arr))
    over = norms > R
    if np.any(over):
        factor = np.ones_like(norms)
        np.divide(R, norms, out=factor, where=over)
        arr *= factor[..., None]
    return arr


def _clip_inplace_norms(arr, R):
    """Clip the rows of a 2-D float array to norm R in place (the formula of :func:`clip`).

    Returns the squared norms of the clipped rows (simulate reuses them)."""
    sq = np.einsum("ij,ij->i", arr, arr)
    over = sq > R * R
    if np.any(over):
        arr[over] *= np.sqrt(R * R / sq[over])[:, None]
        sq[over] = R * R
    return sq


def gamma_from_rho(rho, R):
    """Noise scale γ giving ρ-zCDP per user: γ² = 2R²/ρ (§4.1).

    Replacing one clipped record moves the sum by at most 2R (ℓ2
    sensitivity 2R); the Gaussian mechanism with noise ``N(0, γ² I)`` on that
    sum is ρ-zCDP with ρ = (2R)²/(2γ²) = 2R²/γ².

    Parameters
    ----------
    rho : float or array_like
        zCDP budget ρ > 0.
    R : float or array_like
        Clipping radius R > 0.

    Returns
    -------
    float or numpy.ndarray
        γ = R √(2/ρ).

    References
    ----------
    Paper §4.1 (after eq. 6); Bun and Steinke (2016), Proposition 1.3.

    Examples
    --------
    >>> round(float(gamma_from_rho(2.0, R=10.0)), 4)
    10.0
    """
    rho = check_real("rho", rho, low=0, low_open=True)
    R = check_real("R", R, low=0, low_open=True)
    with np.errstate(over="ignore"):  # ρ → 0 gives γ = inf
        out = np.asarray(R, float) * np.sqrt(2.0 / np.asarray(rho, float))
    return float(out) if out.ndim == 0 else out


def rho_from_gamma(gamma, R):
    """zCDP budget ρ = 2R²/γ² of the noise scale γ (inverse of :func:`gamma_from_rho`).

    Parameters
    ----------
    gamma : float or array_like
        Per-user noise scale γ > 0.
    R : float or array_like
        Clipping radius R > 0.

    Returns
    -------
    float or numpy.ndarray
        ρ = 2R²/γ².

    Examples
    --------
    >>> round(float(rho_from_gamma(10.0, R=10.0)), 4)
    2.0
    """
    gamma = check_real("gamma", gamma, low=0, low_open=True)
    R = check_real("R", R, low=0, low_open=True)
    with np.errstate(over="ignore", under="ignore"):  # 2 (R/γ)²: 0 or inf at the extremes
        out = 2.0 * (np.asarray(R, float) / np.asarray(gamma, float)) ** 2
    return float(out) if out.ndim == 0 else out


def _factor(Sigma):
    """Cholesky factor L (Sigma = L L^T), or None for the identity."""
    return None if Sigma is None else np.linalg.cholesky(Sigma)


def _draw(rng, n, d, mu, L, out=None):
    """n records N(mu, L L^T) as an (n, d) float64 array (mu may be None = 0).

    ``out``: an (n, d) C-contiguous float64 array to draw into (same numbers).
    """
    Z = rng.standard_normal((n, d)) if out is None else rng.standard_normal(out=out)
    if L is not None:
        Z = Z @ L.T
    if mu is not None:
        Z += mu
    return Z


def sample_records(n, *, d, mu=None, Sigma=None, seed=None):
    """Draw ``n`` records ``z ~ N(mu, Sigma)`` in ``R^d`` (Assumption 1).

    Parameters
    ----------
    n : int
        Number of records, n >= 0.
    d : int
        Dimension d >= 1.
    mu : array_like, shape (d,), optional
        Mean μ (default: the zero vector).
    Sigma : array_like, shape (d, d), optional
        Symmetric positive-definite covariance Σ (default: the identity).
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
    Sigma = check_covariance(Sigma, d)
    rng = check_rng(seed)
    return _draw(rng, n, d, mu, np.linalg.cholesky(Sigma))


def release(Z, gamma, R, rng=None):
    """Release the private mean of eq. 6: ``o = mean(clip(Z, R)) + eta``.

    Parameters
    ----------
    Z : array_like, shape (N, d)
        The dataset, one record per row, N >= 1.
    gamma : float
        Per-user noise scale γ > 0; the released noise is ``N(0, γ²/N I_d)``.
    R : float
        Clipping radius R > 0.
    rng : None, int, SeedSequence or numpy.random.Generator
        Randomness of the noise.

    Returns
    -------
    o : numpy.ndarray, shape (d,)
        The release o_t.
    eta : numpy.ndarray, shape (d,)
        The realized noise η_t (what :func:`perfpriv.leakage.log_likelihood_ratio`
        needs to evaluate Λ exactly).

    References
    ----------
    Paper eq. 6.

    Examples
    --------
    >>> o, eta = release([[3.0, 4.0], [0.0, 0.0]], gamma=1.0, R=1.0, rng=0)
    >>> (o - eta).round(2).tolist()
    [0.3, 0.4]
    """
    Z = _check_records(Z)
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    rng = check_rng(rng, name="rng")
    n, d = Z.shape
    eta = rng.standard_normal(d) * (gamma / np.sqrt(n))
    return clip(Z, R).mean(axis=0) + eta, eta


def mahalanobis_error(gamma, n, Sigma=None, *, d=None):
    """Expected squared Mahalanobis error (γ² Tr Σ⁻¹ + d)/n of a release (Lemma 3).

    Clipping bias is neglected, as in the lemma (exact when no record is
    clipped).

    Parameters
    ----------
    gamma : float or array_like
        Per-user noise scale γ > 0.
    n : float or array_like
        Population size N >= 1 (broadcasts with ``gamma``).
    Sigma : array_like, shape (d, d), optional
        Data covariance Σ (symmetric positive definite); the identity of
        dimension ``d`` when omitted.
    d : int, optional
        Dimension, needed only when ``Sigma`` is omitted.

    Returns
    -------
    float or numpy.ndarray
        E[‖o − μ‖²_{Σ⁻¹} | N = n].

    References
    ----------
    Paper Lemma 3, eq. 7 (proof in appendix D.1).

    Examples
    --------
    >>> round(float(mahalanobis_error(2.0, 100, d=3)), 4)
    0.15
    """
    gamma = check_real("gamma", gamma, low=0, low_open=True)
    n = check_real("n", n, low=1)
    if Sigma is None:
        if d is None:
            raise ValueError("d must be given when Sigma is omitted (identity covariance of dimension d)")
        d = check_int("d", d, low=1)
        trace_inv = float(d)
    else:
        Sigma = np.asarray(check_real("Sigma", Sigma), dtype=float)
        dd = Sigma.shape[0] if Sigma.ndim == 2 else -1
        if d is not None and check_int("d", d, low=1) != dd:
            raise ValueError(f"d={d} does not match Sigma of shape {Sigma.shape}")
        Sigma = check_covariance(Sigma, max(dd, 1))
        d = Sigma.shape[0]
        trace_inv = float(np.trace(np.linalg.inv(Sigma)))
    with np.errstate(over="ignore"):  # γ² beyond 1e308: the error is +inf
        out = (np.asarray(gamma, float) ** 2 * trace_inv + d) / np.asarray(n, float)
    return float(out) if out.ndim == 0 else out


def squared_mahalanobis(o, mu=None, Sigma=None):
    """Squared Mahalanobis distance ‖o − μ‖²_{Σ⁻¹} of realized releases.

    Parameters
    ----------
    o : array_like, shape (..., d)
        Release(s) o_t, coordinates along the last axis.
    mu : array_like, shape (d,), optional
        True mean μ (default 0).
    Sigma : array_like, shape (d, d), optional
        Data covariance Σ (default identity).

    Returns
    -------
    float or numpy.ndarray
        One value per release (shape ``o.shape[:-1]``).

    References
    ----------
    Paper §4.1, the utility measure of Lemma 3.

    Examples
    --------
    >>> round(float(squared_mahalanobis([1.0, 2.0], Sigma=[[4.0, 0.0], [0.0, 1.0]])), 4)
    4.25
    """
    o = np.asarray(check_real("o", o), dtype=float)
    if o.ndim == 0:
        o = o[None]
    d = o.shape[-1]
    mu = check_mean(mu, d)
    Sigma = check_covariance(Sigma, d)
    diff = o - mu
    L = np.linalg.cholesky(Sigma)
    sol = np.linalg.solve(L, diff.reshape(-1, d).T).T.reshape(diff.shape)
    out = np.einsum("...i,...i->...", sol, sol)
    return float(out) if out.ndim == 0 else out


def clip_probability(d, R, mu=None, Sigma=None):
    """Probability that one record ``z ~ N(mu, Sigma)`` is clipped, P(‖z‖ > R).

    Exact for an isotropic covariance Σ = σ² I (‖z‖²/σ² is noncentral χ²_d
    with noncentrality ‖μ‖²/σ²); for any other Σ an upper bound, from
    ‖z‖ ≤ ‖μ‖ + √λ_max ‖g‖ with g standard normal.

    Parameters
    ----------
    d : int
        Dimension.
    R : float
        Clipping radius R > 0.
    mu, Sigma : array_like, optional
        Mean (default 0) and covariance (default identity).

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
    Sigma = check_covariance(Sigma, d)
    return _clip_probability(d, R, mu, Sigma, _isotropic_variance(Sigma))


def _clip_probability(d, R, mu, Sigma, sigma2):
    """:func:`clip_probability` of checked arguments; ``sigma2`` = σ² if Σ = σ² I, else None."""
    mu2 = float(mu @ mu)
    with np.errstate(over="ignore"):  # (R/σ)² may overflow to inf: probability 0
        x = float(np.float64(R / math.sqrt(sigma2)) ** 2) if sigma2 is not None else None
    if sigma2 is not None:
        return float(stats.ncx2.sf(x, d, mu2 / sigma2)) if mu2 > 0 else float(special.chdtrc(d, x))
    lam = float(np.linalg.eigvalsh(Sigma).max())
    gap = R - np.sqrt(mu2)
    if gap <= 0:
        return 1.0
    with np.errstate(over="ignore"):
        x = float(np.float64(gap / math.sqrt(lam)) ** 2)
    return float(special.chdtrc(d, x))


def _isotropic_variance(Sigma):
    """σ² if Sigma = σ² I (to rounding), else None."""
    s2 = float(np.mean(np.diag(Sigma)))
    diff = np.abs(Sigma - s2 * np.eye(Sigma.shape[0]))
    if np.all(diff <= 1e-14 * max(s2, 1e-300) + 1e-12 * s2):  # np.allclose(rtol=1e-12, atol=1e-14 s2)
        return s2
    return None


# ------------------------------------------------------------- Algorithm 1


@dataclass(frozen=True)
class GaussianRun:
    """Trajectories of Algorithm 1 (returned by :func:`simulate` and :func:`simulate_agents`).

    Attributes
    ----------
    population : numpy.ndarray of int, shape (trials, T + 1)
        N_0 = n0, then the population after each round.
    error : numpy.ndarray of float, shape (trials, T)
        Squared Mahalanobis error ‖o_t − μ‖²_{Σ⁻¹} of the release of round t.
        After a collapse (no user left) there is no new release: the platform
        keeps serving its last estimate, so the entry repeats the previous
        round's error (never NaN; see ``alive``).
    leak_fraction : numpy.ndarray of float, shape (trials, T)
        Fraction of the round's users whose Λ exceeded τ (0 after a collapse).
    alive : numpy.ndarray of bool, shape (trials, T)
        Whether round t had at least one user (a fresh release).
    gamma : float or numpy.ndarray
        Noise scale of the run: a float, or the schedule (shape (T,), round t
        used ``gamma[t-1]``) when one was given.
    tau, q, r : float
        Parameters of the run.
    statistic : str
        Membership statistic used (``"paper"`` or ``"exact"``).
    method : str
        How the rounds were drawn: ``"records"`` or ``"projected"``
        (:func:`simulate`), ``"agents"`` (:func:`simulate_agents`).
    """

    population: np.ndarray
    error: np.ndarray
    leak_fraction: np.ndarray
    alive: np.ndarray
    gamma: Any
    tau: float
    q: float
    r: float
    statistic: str
    method: str = "records"

    @property
    def collapsed(self) -> np.ndarray:
        """Per trial, whether the population reached 0 within the horizon."""
        return self.population[:, -1] == 0


def _check_gamma_schedule(gamma, T):
    """γ as given (a float, or a copy of the schedule) and the per-round values, shape (T,).

    A number is a constant noise scale; a 1-D array of length ``T`` is a
    privacy schedule: round t (t = 1..T, the release made with N_{t-1}
    users) uses ``gamma[t-1]``.
    """
    # the simulators square γ and the noise: keep γ where that is finite and nonzero
    g = check_real("gamma", gamma, low=GAMMA_RANGE[0], high=GAMMA_RANGE[1])
    if np.ndim(g) == 0:
        return g, np.full(T, g)
    if g.ndim != 1 or g.shape[0] != T:
        raise ValueError(
            f"gamma must be a number > 0 or a schedule: a 1-D array of length T={T} "
            f"(one value per round); got shape {g.shape}")
    return g.copy(), g.copy()


def _check_run_args(gamma, tau, q, r, T, n0, d, R, trials, mu, Sigma, statistic, cap):
    T = check_int("T", T, low=1)
    gamma, gammas = _check_gamma_schedule(gamma, T)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    d = check_int("d", d, low=1)
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    trials = check_int("trials", trials, low=1)
    cap = check_int("cap", cap, low=1)
    n0 = check_int("n0", n0, low=1, high=cap)
    mu = check_mean(mu, d)
    Sigma = check_covariance(Sigma, d)
    statistic = check_choice("statistic", statistic, STATISTICS)
    return gamma, gammas, tau, q, r, T, n0, d, R, trials, mu, Sigma, statistic, cap


def _trial_rngs(seed, trials):
    """One independent generator per trial, all derived from ``seed``."""
    return check_rng(seed).spawn(trials)


def simulate(gamma, tau, q, r, *, T, n0, d, R, trials=30, mu=None, Sigma=None, statistic="paper",
             cap=20000, seed=None, method="auto"):
    """Run Algorithm 1 (private mean estimation with membership-inference departures).

    Each round t with N_t > 0 users: draw a fresh dataset of N_t records
    ``z ~ N(mu, Sigma)``; release ``o_t`` (eq. 6); compute Λ(o_t | z) of
    every record from the realized noise
    (:func:`perfpriv.leakage.log_likelihood_ratio`); each of the K_t records
    with Λ > τ leaves with probability q and each of the other N_t − K_t
    recruits one new user with probability r, so

        N_{t+1} = min(cap, N_t − Binomial(K_t, q) + Binomial(N_t − K_t, r)).

    A population of 0 stays at 0 (Algorithm 1, line 5).

    **A single user (N_t = 1).** Λ needs a remove-one dataset, and for a
    lone user it is empty: the counterfactual mechanism releases nothing, so
    the very existence of o_t reveals membership. We count the lone user as
    leaked (Λ = +∞ > τ): they leave with probability q and never recruit.
    This is also the limit of the exact statistic (whose counterfactual noise
    variance γ²/(N − 1) is infinite at N = 1) and it is the conservative,
    worst-case reading of §4.2. The release of that round is still made and
    its error recorded.

    **Two ways to draw a round** (``method``). ``"records"`` draws the
    N_t × d matrix of records, clips them and evaluates Λ of each: it works
    for every Σ and R, and its cost is that of drawing the matrix; memory
    holds one round's matrix at a time. ``"projected"``
    (:mod:`perfpriv.projected`) draws about one normal per record: for an
    isotropic Σ = σ² I, Λ depends on a record only through its deviation
    along the noise direction and the squared length of the rest, and the
    latter is drawn only for the few records whose leak it can decide. It
    is exact in law except for two events it neglects -- a record being
    clipped, and a record that the rule skips (β > θ with probability below
    2⁻⁶⁴) leaking -- so each trial's law is within T · cap ·
    (2⁻⁶⁴ + :func:`clip_probability`) of the records method in total
    variation. ``"auto"`` (default) uses ``"projected"`` when Σ is isotropic
    and a record is clipped with probability at most 1e-12
    (``perfpriv.projected.CLIP_NEGLIGIBLE``), ``"records"`` otherwise. The
    two methods consume the random stream differently: the same seed gives
    runs equal in law, not draw by draw. The projected draw gives each round
    its own stretch of the trial's stream
    (:func:`perfpriv.projected.round_generators`), so runs from one seed with
    different γ (or schedules) share their random numbers round by round.

    Parameters
    ----------
    gamma : float or 1-D array_like of length T
        Per-user noise scale γ in [1e-100, 1e100] (``GAMMA_RANGE``: beyond,
        γ² and the noise leave double precision), or a privacy schedule γ_1, ..., γ_T:
        round t (t = 1..T, the release made with the N_{t-1} current users)
        uses ``gamma[t-1]``. A constant schedule gives exactly the numbers of
        the constant γ with the same seed (the random draws do not depend on
        γ's type). See :mod:`perfpriv.schedules`.
    tau : float
        Vulnerability threshold τ > 0.
    q : float
        Probability that a leaked user leaves, in [0, 1].
    r : float
        Probability that a non-leaked user recruits one user, in [0, 1].
    T : int
        Number of rounds T >= 1.
    n0 : int
        Initial population 1 <= N_0 <= cap.
    d : int
        Dimension d >= 1.
    R : float
        Clipping radius R > 0.
    trials : int
        Independent repetitions.
    mu : array_like, shape (d,), optional
        Data mean μ (default 0).
    Sigma : array_like, shape (d, d), optional
        Data covariance Σ, symmetric positive definite (default identity).
    statistic : {"paper", "exact"}
        Membership statistic (see :mod:`perfpriv.leakage`).
    cap : int
        Maximum population (20000 as in the paper).
    seed : None, int, SeedSequence or numpy.random.Generator
        Randomness; trial i uses the i-th child generator of ``seed``.
    method : {"auto", "records", "projected"}
        How rounds are drawn (see above). ``"projected"`` requires an
        isotropic Σ and a clip probability of at most 1e-12.

    Returns
    -------
    GaussianRun
        ``population`` (trials × T+1), ``error`` (trials × T),
        ``leak_fraction`` (trials × T), ``alive`` (trials × T), and the
        ``method`` used.

    References
    ----------
    Paper Algorithm 1, eq. 6, Lemma 6, Lemma 8.

    Examples
    --------
    >>> run = simulate(5.0, 0.02, q=0.3, r=0.6, T=5, n0=100, d=3, R=10.0, trials=2, seed=0)
    >>> run.population.shape, run.error.shape
    ((2, 6), (2, 5))
    >>> same = simulate([5.0] * 5, 0.02, q=0.3, r=0.6, T=5, n0=100, d=3, R=10.0, trials=2, seed=0)
    >>> bool(np.array_equal(same.population, run.population))   # constant schedule = constant
    True
    """
    from . import leakage  # leakage builds on this module

    (gamma, gammas, tau, q, r, T, n0, d, R, trials, mu, Sigma, statistic,
     cap) = _check_run_args(gamma, tau, q, r, T, n0, d, R, trials, mu, Sigma, statistic, cap)
    method, sigma2 = _choose_method(method, d, R, mu, Sigma)
    if method == "projected":
        return _simulate_projected(gammas, gamma, tau, q, r, T, n0, d, trials, sigma2, statistic, cap, seed)
    L = None if np.array_equal(Sigma, np.eye(d)) else np.linalg.cholesky(Sigma)
    L_inv = None if L is None else np.linalg.inv(L)
    mu_add = mu if np.any(mu) else None
    # buffers shared by all rounds of all trials, grown on demand: the records of a round are drawn
    # into ``buf`` (no page faults) and ``ones`` is the row of ones of the BLAS mean
    space = {"buf": np.empty(n0 * d), "ones": np.ones(n0)}

    def start_trial(rng):
        def play(N, t):
            g = float(gammas[t])
            if space["buf"].size < N * d:
                space["buf"] = np.empty(max(N, 2 * (space["buf"].size // d)) * d)
            Z = _draw(rng, N, d, mu_add, L, out=space["buf"][:N * d].reshape(N, d))
            sq = _clip_inplace_norms(Z, R)                 # squared norms of the clipped records
            if space["ones"].size < N:
                space["ones"] = np.ones(max(N, 2 * space["ones"].size))
            mean = (space["ones"][:N] @ Z) / N             # one BLAS pass (Z.mean(axis=0) is ~4x slower)
            eta = rng.standard_normal(d) * (g / np.sqrt(N))
            diff = mean + eta - mu
            if L_inv is not None:
                diff = L_inv @ diff
            if N < 2:
                return float(diff @ diff), 1, rng       # a lone user is always exposed (see docstring)
            # ||z - zbar||^2 and <z - zbar, eta> from one (N, d) @ (d, 2) product instead of
            # centring Z and two more passes over it
            P = Z @ np.stack([mean, eta], axis=1)
            # (clamped: the expanded square can round to a tiny negative number)
            dev_sq = np.maximum(sq - 2.0 * P[:, 0] + float(mean @ mean), 0.0)
            inner = P[:, 1] - float(mean @ eta)
            lam = leakage._llr_from_summaries(dev_sq, inner, float(eta @ eta), N, g, d, statistic)
            return float(diff @ diff), int(np.count_nonzero(lam > tau)), rng

        return play

    arrays = _run_trials(start_trial, q, r, T, n0, trials, cap, seed)
    return GaussianRun(*arrays, gamma, tau, q, r, statistic, "records")


def _run_trials(start_trial, q, r, T, n0, trials, cap, seed):
    """The loop of Algorithm 1 that both draws of :func:`simulate` share.

    ``start_trial(rng)``, given a trial's generator, returns ``play(N, t)``,
    which makes round t's release from N >= 1 users and returns its error,
    the number of users with Λ > τ, and the generator the round's
    leave/recruit coins are drawn from.
    """
    population = np.zeros((trials, T + 1), dtype=np.int64)
    error = np.zeros((trials, T))
    leak_fraction = np.zeros((trials, T))
    alive = np.zeros((trials, T), dtype=bool)
    for i, rng in enumerate(_trial_rngs(seed, trials)):
        play = start_trial(rng)
        N = n0
        population[i, 0] = N
        last_error = 0.0
        for t in range(T):
            if N == 0:
                error[i, t:] = last_error
                break
            alive[i, t] = True
            last_error, leaked, coins = play(N, t)
            error[i, t] = last_error
            leak_fraction[i, t] = leaked / N
            N = min(N - int(coins.binomial(leaked, q)) + int(coins.binomial(N - leaked, r)), cap)
            population[i, t + 1] = N
    return population, error, leak_fraction, alive


def _choose_method(method, d, R, mu, Sigma):
    """The draw :func:`simulate` uses, and σ² when it is the projected one."""
    from . import projected  # builds on leakage, which builds on this module
    method = check_choice("method", method, METHODS)
    if method == "records":
        return method, None
    sigma2 = _isotropic_variance(Sigma)
    if sigma2 is None:
        if method == "auto":
            return "records", None
        raise ValueError("method='projected' needs an isotropic Sigma (a multiple of the identity); "
                         "use method='records' for this Sigma")
    p_clip = _clip_probability(d, R, mu, Sigma, sigma2)
    if p_clip > projected.CLIP_NEGLIGIBLE:
        if method == "auto":
            return "records", None
        raise ValueError(f"method='projected' needs records that are (almost) never clipped: a record "
                         f"exceeds R={R:g} with probability {p_clip:.3g} > {projected.CLIP_NEGLIGIBLE:g}; "
                         f"use method='records' or a larger R")
    return "projected", sigma2


def _simulate_projected(gammas, gamma, tau, q, r, T, n0, d, trials, sigma2, statistic, cap, seed):
    """:func:`simulate` with the rounds of :func:`perfpriv.projected.draw_round`."""
    from . import projected
    t_quantile = projected._band_quantile(d)

    def start_trial(rng):
        streams = projected.round_generators(rng)
        coins = projected.round_generators(rng, offset=projected.COIN_OFFSET)

        def play(N, t):
            error, leaked = projected._draw_round(next(streams), N, float(gammas[t]), tau, d, sigma2, statistic,
                                                  t_quantile)
            return error, leaked, next(coins)  # the coins: their own stream, in step across γ

        return play

    arrays = _run_trials(start_trial, q, r, T, n0, trials, cap, seed)
    return GaussianRun(*arrays, gamma, tau, q, r, statistic, "projected")


def _log_isotropic_normal(x, mean, var):
    """log density of N(mean, var I) at x (explicit formula)."""
    diff = x - mean
    return -0.5 * x.size * math.log(2 * math.pi * var) - 0.5 * float(diff @ diff) / var


def simulate_agents(gamma, tau, q, r, *, T, n0, d, R, trials=30, mu=None, Sigma=None, statistic="paper",
                    cap=20000, seed=None):
    """Algorithm 1 line by line, one user at a time: the slow reference of :func:`simulate`.

    For each record the log-likelihood ratio is computed from its definition
    (eq. 8), as the difference of the log densities of o_t under the mechanism
    on Z_t (mean of the clipped records, variance γ²/N) and on Z_t \\ {z}
    (mean of the other clipped records, variance γ²/N for ``"paper"`` and
    γ²/(N − 1) for ``"exact"``); then that user alone flips the coin of line
    13 or 15. Same parameters (``gamma`` may be a schedule of length T),
    conventions (a lone user counts as leaked) and result as :func:`simulate`, with which it agrees in distribution (not
    draw by draw). Use it only for small populations.

    Examples
    --------
    >>> run = simulate_agents(5.0, 0.02, q=0.3, r=0.6, T=3, n0=10, d=2, R=10.0, trials=2, seed=0)
    >>> run.population[:, 0].tolist()
    [10, 10]
    """
    (gamma, gammas, tau, q, r, T, n0, d, R, trials, mu, Sigma, statistic,
     cap) = _check_run_args(gamma, tau, q, r, T, n0, d, R, trials, mu, Sigma, statistic, cap)
    L = np.linalg.cholesky(Sigma)
    population = np.zeros((trials, T + 1), dtype=np.int64)
    error = np.zeros((trials, T))
    leak_fraction = np.zeros((trials, T))
    alive = np.zeros((trials, T), dtype=bool)
    for i, rng in enumerate(_trial_rngs(seed, trials)):
        N = n0
        population[i, 0] = N
        last_error = 0.0
        for t in range(T):
            if N == 0:                                   # line 5-6
                error[i, t] = last_error
                continue
            alive[i, t] = True
            gamma_t = float(gammas[t])
            Z = mu + rng.standard_normal((N, d)) @ L.T   # line 7
            o, _ = release(Z, gamma_t, R, rng)           # line 8
            diff = np.linalg.solve(L, o - mu)
            last_error = error[i, t] = float(diff @ diff)
            Zc = clip(Z, R)
            total = Zc.sum(axis=0)
            mean_in = total / N
            N_next = N                                   # line 9
            leaked_count = 0
            for j in range(N):                           # line 10
                if N == 1:
                    lam = np.inf
                else:                                    # line 11
                    mean_out = (total - Zc[j]) / (N - 1)
                    var_out = gamma_t**2 / N if statistic == "paper" else gamma_t**2 / (N - 1)
                    lam = (_log_isotropic_normal(o, mean_in, gamma_t**2 / N)
                           - _log_isotropic_normal(o, mean_out, var_out))
                if lam > tau:                            # line 12-13
                    leaked_count += 1
                    if rng.random() < q:
                        N_next -= 1
                elif rng.random() < r:                   # line 14-15
                    N_next += 1
            leak_fraction[i, t] = leaked_count / N
            N = min(N_next, cap)
            population[i, t + 1] = N
    return GaussianRun(population, error, leak_fraction, alive, gamma, tau, q, r, statistic, "agents")
