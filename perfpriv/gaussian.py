r"""The Gaussian mechanism for private mean estimation, and Algorithm 1 on the engine.

Paper §4.1-4.2 and Algorithm 1. A population of ``N`` users holds records
:math:`z_i \sim \mathcal{N}(\mu, \Sigma)` in :math:`R^d`; the platform clips every record to the
ℓ2 ball of radius ``R`` and releases the noisy mean (eq. 6)

    :math:`o = (1/N) \sum_i \mathrm{clip}(z_i, R) + \eta, \eta \sim \mathcal{N}(0, \gamma^2 / N I_d)`,

which is the same as every user adding :math:`\mathcal{N}(0, \gamma^2 I_d)` to their clipped
record. Each user then runs the membership test of §4.2 on the release
(:func:`perfpriv.leakage.log_likelihood_ratio`): a record whose
log-likelihood ratio exceeds ``tau`` has leaked.

:class:`GaussianMean` is this mechanism in the loop of :mod:`perfpriv.engine`; :func:`simulate` runs
Algorithm 1 with the paper's users (:func:`perfpriv.engine.simulate_agents`: one user at a time, the
slow reference). A lone user (N = 1, a case the paper leaves open) has an empty remove-one dataset,
so the release itself proves their membership and they count as leaked.

Symbols, with the same meaning and range in every function: ``gamma`` — γ > 0, per-user noise scale;
``R`` — clipping radius R > 0; ``rho`` — ρ > 0, zCDP budget; ``tau`` — τ > 0, vulnerability threshold;
``n`` — population size; ``d`` — dimension d >= 1.
"""

from __future__ import annotations

import numpy as np

from . import _records, engine, keyed, leakage, projected
from ._records import clip, clip_probability, sample_records
from ._stats import log_normal_density
from ._validate import (
    check_choice,
    check_population,
    check_covariance,
    check_int,
    check_mean,
    check_real,
    check_rng,
)
from .behaviour import Memoryless
from ._kernels import gaussian_mean as _gaussian_kernel
from ._kernels import mechanisms as _mechanisms

__all__ = [
    "clip",
    "gamma_from_rho",
    "rho_from_gamma",
    "sample_records",
    "release",
    "mahalanobis_error",
    "squared_mahalanobis",
    "clip_probability",
    "GaussianMean",
    "simulate",
    "STATISTICS",
]

#: The membership statistics, ``"paper"`` (Lemma 6) and ``"exact"``: see :mod:`perfpriv.leakage`.
STATISTICS = leakage.STATISTICS
#: How a round is drawn: ``"projected"`` (about one normal per record, :mod:`perfpriv.projected`),
#: ``"records"`` (every record's d coordinates), ``"auto"`` (projected where it is exact).
DRAWS = ("auto", "records", "projected")

#: Noise scales the simulators accept: :math:`γ^{2}, γ^{-2}` and the squared noise must stay
#: finite in double precision (beyond, Λ and the error are inf − inf).
GAMMA_RANGE = (1e-100, 1e100)


def gamma_from_rho(rho, R):
    r"""Noise scale γ giving ρ-zCDP per user: :math:`γ^{2} = 2R^{2}/ρ` (§4.1).

    Replacing one clipped record moves the sum by at most 2R (ℓ2
    sensitivity 2R); the Gaussian mechanism with noise :math:`\mathcal{N}(0, γ^{2} I)` on that
    sum is ρ-zCDP with :math:`ρ = (2R)^{2}/(2γ^{2}) = 2R^{2}/γ^{2}`.

    Parameters
    ----------
    rho, R : float or array_like

    Returns
    -------
    float or numpy.ndarray
        :math:`γ = R \sqrt{2/ρ}`.

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
    """zCDP budget :math:`ρ = 2R^{2}/γ^{2}` of the noise scale γ (inverse of :func:`gamma_from_rho`).

    Parameters
    ----------
    gamma, R : float or array_like

    Returns
    -------
    float or numpy.ndarray
        :math:`ρ = 2R^{2}/γ^{2}`.

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


def release(Z, gamma, R, rng=None):
    r"""Release the private mean of eq. 6: ``o = mean(clip(Z, R)) + eta``.

    Parameters
    ----------
    Z : array_like, shape (N, d)
        The dataset, one record per row, N >= 1.
    gamma, R : float
        The released noise is :math:`\mathcal{N}(0, γ^{2}/N I_d)`.
    rng : None, int, SeedSequence or numpy.random.Generator
        Randomness of the noise.

    Returns
    -------
    o : numpy.ndarray, shape (d,)
        The release :math:`o_t`.
    eta : numpy.ndarray, shape (d,)
        The realized noise :math:`η_t` (what :func:`perfpriv.leakage.log_likelihood_ratio`
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
    Z = _records.check_records(Z)
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    rng = check_rng(rng, name="rng")
    n, d = Z.shape
    eta = rng.standard_normal(d) * (gamma / np.sqrt(n))
    return _records.clip(Z, R).mean(axis=0) + eta, eta


def mahalanobis_error(gamma, n, Sigma=None, *, d=None):
    r"""Expected squared Mahalanobis error :math:`(γ^{2} \mathrm{Tr} Σ^{-1} + d)/n` of a release (Lemma 3).

    Clipping bias is neglected, as in the lemma (exact when no record is
    clipped).

    Parameters
    ----------
    gamma, n : float or array_like
        Broadcast together; N >= 1.
    Sigma : array_like, shape (d, d), optional
        Data covariance Σ (symmetric positive definite); the identity of
        dimension ``d`` when omitted.
    d : int, optional
        Dimension, needed only when ``Sigma`` is omitted.

    Returns
    -------
    float or numpy.ndarray
        :math:`\mathbb{E}[\|o - μ\|^{2}_{Σ^{-1}} \mid N = n]`.

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
    out = _lemma3(gamma, n, trace_inv, d)
    return float(out) if out.ndim == 0 else out


def _lemma3(gamma, n, trace_inv, d):
    r""":math:`(γ^{2} \mathrm{Tr} Σ^{-1} + d)/n`: the one place of Lemma 3's formula (eq. 7)."""
    with np.errstate(over="ignore"):  # γ² beyond 1e308: the error is +inf
        return (np.asarray(gamma, float) ** 2 * trace_inv + d) / np.asarray(n, float)


def squared_mahalanobis(o, mu=None, Sigma=None):
    r"""Squared Mahalanobis distance :math:`\|o - μ\|^{2}_{Σ^{-1}}` of realized releases.

    Parameters
    ----------
    o : array_like, shape (..., d)
        Release(s) :math:`o_t`, coordinates along the last axis.
    mu, Sigma : array_like, optional
        True mean μ (default 0) and data covariance Σ (default identity).

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


# ------------------------------------------------------- the engine's mechanism
#: :math:`p_τ` is 1 for a lone user (a one-record release *is* the record) and is interpolated
#: linearly between n = 1 and n = 2, so that the mean field stays continuous in n.
_MIN_N = 2.0


class GaussianMean(engine.Mechanism):
    r"""The Gaussian mechanism of eq. 6 with the membership test of §4.2, for :mod:`perfpriv.engine`.

    A round with N users draws a fresh dataset of N records (Assumption 1), makes the
    release of eq. 6 (module docstring) and counts the records whose Λ (eq. 8) exceeds
    τ; its error is the squared Mahalanobis distance :math:`\|o - μ\|^{2}_{Σ^{-1}}`.

    Parameters
    ----------
    gamma : float, 1-D array_like, perfpriv.engine.Schedule or None
        Per-user noise scale(s) γ in [1e-100, 1e100] (``GAMMA_RANGE``). ``None`` (the default): the
        model only, for the functions that choose γ themselves (the survival thresholds of
        :mod:`perfpriv.dynamics`, the searches of :mod:`perfpriv.optimize`); simulating it asks for a level.
    tau, d, R : float, int, float
    mu, Sigma : array_like, optional
        Data mean μ, shape (d,) (default 0), and covariance Σ, shape (d, d), symmetric
        positive definite (default identity).
    statistic : {"paper", "exact"}, optional
        Membership statistic (:mod:`perfpriv.leakage`); ``None``: from ``conventions``
        (Notes).
    draw : {"auto", "projected", "records"}
        How a round is simulated: ``"records"`` draws every record's d coordinates (any Σ
        and R); ``"projected"`` about one normal per record (:mod:`perfpriv.projected`: exact
        in law up to :math:`2^{-64}` per record for an isotropic Σ and records clipped with
        probability at most ``projected.CLIP_NEGLIGIBLE``); ``"auto"`` the latter exactly then.
    leak_method : {"auto", "quadrature", "montecarlo"} or perfpriv.leakage.Integration
        How the mean field evaluates :math:`p_τ` (``method`` of
        :func:`perfpriv.leakage.marginal_leak_probability`); a Monte Carlo uses one fixed
        seed (from the Integration's), so :math:`p_τ` is a deterministic function of n and γ.

    Notes
    -----
    ``conventions="authors"`` (the published Algorithm 1 code): the exact
    statistic, a population floored at 1, a trial stopped once N <= 1, and a
    stopped trial scored over the rounds it ran (``collapse="ran"``).
    ``"paper"``: the paper's statistic, a population floored at 1 (Theorem 3)
    and never stopped.

    References
    ----------
    Paper eq. 6, eq. 8, Lemma 3, Lemma 6-8, Algorithm 1.

    Examples
    --------
    >>> m = GaussianMean(2.0, tau=0.02, d=12, R=10.0)
    >>> m.draw_method, round(float(m.expected_error(1000, 2.0)), 4)
    ('projected', 0.06)
    >>> round(float(m.leak_probability(1000, 2.0)), 4)
    0.3589
    """

    name = "gaussian_mean"
    level_name = "gamma"
    #: At least 8 bytes of numbers per record and round: 10**8 records is 0.8 GB (engine.Mechanism.max_population).
    max_population = 10**8

    def __init__(self, gamma=None, *, tau, d, R, mu=None, Sigma=None, statistic=None, draw="auto",
                 leak_method="auto"):
        self.levels = None if gamma is None else engine.make_levels(gamma, "gamma", low=GAMMA_RANGE[0],
                                                                    high=GAMMA_RANGE[1])
        self.tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
        self.d = check_int("d", d, low=1)
        self.R = check_real("R", R, low=0, low_open=True, scalar=True)
        self.mu = check_mean(mu, self.d)
        self._Sigma = None if Sigma is None else check_covariance(Sigma, self.d)  # None: Σ = I, never built
        self._mu_given, self._sigma_given = mu is not None, Sigma is not None
        self.statistic = None if statistic is None else check_choice("statistic", statistic, STATISTICS)
        self.draw = check_choice("draw", draw, DRAWS)
        if not isinstance(leak_method, leakage.Integration):
            leak_method = leakage.Integration(check_choice("leak_method", leak_method, leakage.METHODS))
        self.leak_method, self.leak_samples = leak_method.method, leak_method.samples
        self._leak_seed_given = leak_method.seed is not None   # (the searches of perfpriv.optimize use 0 if not)
        # one fixed integer: every p_τ evaluation of this mechanism shares its random numbers
        self.leak_seed = None if leak_method.seed is None and self.leak_method == "quadrature" else \
            int(keyed.root_key(leak_method.seed, name="leak_method.seed").a)
        #: How this mechanism evaluates p_τ, with its fixed integer seed (a perfpriv.leakage.Integration).
        self.leak = leakage.Integration(self.leak_method, self.leak_samples, self.leak_seed)
        self._sigma2 = 1.0 if self._Sigma is None else _records.isotropic_variance(self._Sigma)
        self._trace_inv = float(self.d) / self._sigma2 if self._sigma2 is not None else \
            float(np.trace(np.linalg.inv(self.Sigma)))
        self._L = None if (self._sigma2 == 1.0) else np.linalg.cholesky(self.Sigma)
        self.draw_method = self._choose_draw()

    @property
    def Sigma(self):
        """The covariance Σ (d x d; the identity is built only when asked for)."""
        return np.eye(self.d) if self._Sigma is None else self._Sigma

    def _choose_draw(self):
        if self.draw == "records":
            return "records"
        reason = None
        if self._sigma2 is None:
            reason = "Sigma is not isotropic (a multiple of the identity)"
        else:
            p_clip = _records.clip_probability_checked(self.d, self.R, self.mu, self._Sigma, self._sigma2)
            if not (p_clip <= projected.CLIP_NEGLIGIBLE):  # NaN (not computable) never selects the shortcut
                reason = (f"a record exceeds R={self.R:g} with probability {p_clip:.3g} > "
                          f"{projected.CLIP_NEGLIGIBLE:g}")
        if reason is None:
            return "projected"
        if self.draw == "projected":
            raise ValueError(f"draw='projected' is exact only for isotropic, (almost) never clipped records: "
                             f"{reason}; use draw='records' or draw='auto'")
        return "records"

    def __repr__(self) -> str:
        lv = self.levels
        g = None if lv is None else lv.describe()
        text = "None" if g is None else f"{g:g}" if isinstance(g, float) else \
            f"<{'schedule' if lv.per_round else 'grid'} {np.shape(g)}>"
        return (f"GaussianMean(gamma={text}, tau={self.tau:g}, d={self.d}, R={self.R:g}, "
                f"statistic={self.statistic!r}, draw={self.draw_method!r})")

    def resolved(self, conventions):
        if self.statistic is not None:
            return self
        out = GaussianMean.__new__(GaussianMean)
        out.__dict__.update(self.__dict__)
        out.statistic = "exact" if conventions == "authors" else "paper"
        return out

    def policy_preset(self, conventions):
        if conventions == "authors":
            return dict(cap=20000, floor=1, stop=1, collapse="ran", penalty=0.0)
        return dict(cap=20000, floor=1, stop=0, collapse="floor", penalty=0.0)

    def options(self):
        """The settings of this mechanism as keywords: ``GaussianMean(levels, **m.options())`` is ``m`` at other levels.

        ``mu`` and ``Sigma`` are ``None`` where not given, ``draw`` is the draw in use, and ``leak_method`` an
        :class:`perfpriv.leakage.Integration` whose seed (``None`` if not given) reproduces :attr:`leak_seed`.
        """
        seed = keyed.Key(np.uint64(self.leak_seed), np.uint64(0)) if self._leak_seed_given else None
        return dict(tau=self.tau, d=self.d, R=self.R, mu=self.mu if self._mu_given else None, Sigma=self._Sigma,
                    statistic=self.statistic, draw=self.draw_method,
                    leak_method=leakage.Integration(self.leak_method, self.leak_samples, seed))

    def _statistic(self):
        return self.statistic or "paper"

    # ---------------------------------------------------------- simulation
    def kernel_draw(self):
        """The compiled round: :func:`perfpriv._kernels.mechanisms.gaussian_mean_round` (projected draw,
        ``params = (tau, d, sigma2, exact, band_quantile)``) or
        :func:`perfpriv._kernels.gaussian_mean.records_group_round` (records draw)."""
        if self.draw_method != "projected":
            return _mechanisms.GAUSSIAN_RECORDS, self._records_params()
        return _mechanisms.GAUSSIAN_MEAN, projected.kernel_params(
            tau=self.tau, d=self.d, sigma2=self._sigma2, statistic=self._statistic())

    def _records_params(self):
        """``(tau, d, R, exact, has_mu, has_L, mu, L, L⁻¹)`` of the compiled records round."""
        d, L = self.d, self._L
        has_L = L is not None
        flat_L = L.reshape(-1) if has_L else np.zeros(d * d)
        flat_Li = np.linalg.inv(L).reshape(-1) if has_L else np.zeros(d * d)
        head = [self.tau, d, self.R, 1.0 if self._statistic() == "exact" else 0.0,
                1.0 if np.any(self.mu) else 0.0, 1.0 if has_L else 0.0]
        return np.concatenate([np.array(head, dtype=float), np.asarray(self.mu, dtype=float), flat_L, flat_Li])

    def kernel_levels(self, level):
        """``(γ,)`` of every level."""
        check_population("level", level)
        return np.asarray(level, dtype=float)[..., None]

    def draw_round(self, n, level, keys, live, t, need_error=True):
        if self.draw_method == "projected":
            err, leaked = projected.draw_rounds(n, level, keys, tau=self.tau, d=self.d, sigma2=self._sigma2,
                                                statistic=self._statistic(), live=live)
        else:
            err, leaked = self._records_round(n, level, keys, live)
        return engine.RoundOutcome(err, leaked)

    def _records_round(self, n, level, keys, live):
        """A round drawn from every record's coordinates (any Σ; clipping included; :meth:`kernel_draw`).

        Record i of a (cell, trial, round) is numbers i·d .. i·d + d − 1 of its ``"records"`` stream, ξ its
        ``"noise"`` stream (as in the projected draw); pairs with fewer users use a prefix of the records.
        """
        n, live = keyed.check_batch(n, keys, live)
        shape = np.broadcast_shapes(np.shape(n), np.shape(level), keys.shape)
        nn = np.broadcast_to(n, shape).reshape(-1)
        gg = np.broadcast_to(np.asarray(level, float), shape).reshape(-1)
        lv = np.broadcast_to(True if live is None else live, shape).reshape(-1) & (nn >= 1)
        gid = np.broadcast_to(np.arange(int(np.prod(keys.shape))).reshape(keys.shape), shape).reshape(-1)
        err = np.zeros(nn.size)
        leaked = np.zeros(nn.size, dtype=np.int64)
        pairs = np.flatnonzero(lv)
        if pairs.size:
            e = np.empty(pairs.size)
            k = np.empty(pairs.size, dtype=np.int64)
            purposes = np.array([keyed.purpose_hashes(p) for p in _mechanisms.PURPOSES[_mechanisms.GAUSSIAN_RECORDS]],
                                dtype=np.uint64)
            _gaussian_kernel.draw_groups(self._records_params(), np.ascontiguousarray(gg[pairs]),
                                         np.ascontiguousarray(nn[pairs], dtype=np.int64),
                                         np.ascontiguousarray(gid[pairs], dtype=np.int64),
                                         np.ascontiguousarray(keys.a.reshape(-1)),
                                         np.ascontiguousarray(keys.b.reshape(-1)),
                                         purposes, e, k, True)
            err[pairs], leaked[pairs] = e, k
        return err.reshape(shape), leaked.reshape(shape)

    def agent_round(self, n, level, rng, t=1, state=None):
        r"""Algorithm 1's lines 7-11 record by record (:meth:`perfpriv.engine.Mechanism.agent_round`).

        Record j leaks when Λ (eq. 8) exceeds τ, Λ from its definition: the log density of :math:`o_t` on
        :math:`Z_t` (variance :math:`γ^{2}/N`) minus that on :math:`Z_t` without record j (variance
        :math:`γ^{2}/N` for ``"paper"``, :math:`γ^{2}/(N - 1)` for ``"exact"``). A lone user leaks.
        """
        n = check_int("n", n, low=1)
        gamma = float(check_real("gamma", level, low=GAMMA_RANGE[0], high=GAMMA_RANGE[1], scalar=True))
        # Σ = I (no Sigma given) is never built: records are mu + standard normals, errors plain norms
        L = None if not self._sigma_given else np.linalg.cholesky(self.Sigma)
        normals = rng.standard_normal((n, self.d))
        Z = self.mu + (normals if L is None else normals @ L.T)
        o, _ = release(Z, gamma, self.R, rng)
        diff = o - self.mu if L is None else np.linalg.solve(L, o - self.mu)
        if n == 1:
            return engine.AgentRound(np.ones(1, dtype=bool), float(diff @ diff))
        Zc = clip(Z, self.R)
        total = Zc.sum(axis=0)
        var_in = gamma ** 2 / n
        var_out = var_in if self._statistic() == "paper" else gamma ** 2 / (n - 1)
        lam = log_normal_density(o, total / n, var_in) - log_normal_density(o, (total - Zc) / (n - 1), var_out)
        return engine.AgentRound(lam > self.tau, float(diff @ diff))

    def privacy_cost(self, level):
        """:math:`ρ = 2R^{2}/γ^{2}` per round: the zCDP cost of a release to each user (§4.1); zCDP composes additively."""
        check_population("level", level)
        return np.asarray(rho_from_gamma(np.asarray(level, float), self.R), float)

    # ---------------------------------------------------------- mean field
    def leak_probability(self, n, level):
        """:math:`p_τ(n, γ)` of Lemma 8 (eq. 11), for real n >= 1 (mean-field populations).

        :func:`perfpriv.leakage.marginal_leak_probability` for n >= 2, 1 at n = 1 (a one-record release is
        the record) and linear in between; 0 at n = inf (an overflowed uncapped population).
        """
        n = check_population("n", n)
        check_population("level", level)
        n, g = np.broadcast_arrays(np.asarray(n, float), np.asarray(level, float))
        out = np.ones(n.shape)
        huge = np.isposinf(n)
        out[huge] = 0.0
        reg = ~huge & (n >= _MIN_N)
        low = ~huge & (n < _MIN_N) & (n > 1.0)
        need_n = np.concatenate([n[reg], np.full(int(low.sum()), _MIN_N)])
        need_g = np.concatenate([g[reg], g[low]])
        if need_n.size:
            vals = self._marginal(need_n, need_g)
            k = int(reg.sum())
            out[reg] = vals[:k]
            w = n[low] - 1.0
            out[low] = (1.0 - w) + w * vals[k:]
        return out

    def _marginal(self, n, g):
        """:math:`p_τ` at the distinct (n, γ) pairs (one vectorized call), n >= 2."""
        pairs, inverse = np.unique(np.stack([n, g]), axis=1, return_inverse=True)
        kwargs = dict(d=self.d, R=self.R, statistic=self._statistic(), method=self.leak)
        if self._mu_given:
            kwargs["mu"] = self.mu
        if self._sigma_given:
            kwargs["Sigma"] = self.Sigma
        nn = pairs[0]
        if self.leak_method == "montecarlo" or (self.leak_method == "auto" and not np.all(nn == np.rint(nn))):
            # a Monte Carlo p_τ simulates whole datasets: real populations are rounded there
            try:
                vals = leakage.marginal_leak_probability(nn, pairs[1], tau=self.tau, **kwargs).p
            except ValueError:
                vals = leakage.marginal_leak_probability(np.rint(nn), pairs[1], tau=self.tau, **kwargs).p
        else:
            vals = leakage.marginal_leak_probability(nn, pairs[1], tau=self.tau, **kwargs).p
        vals = np.broadcast_to(np.asarray(vals, float), nn.shape)
        return np.clip(vals[np.ravel(inverse)], 0.0, 1.0)

    def expected_error(self, n, level):
        r""":math:`(γ^{2} \mathrm{Tr} Σ^{-1} + d)/n`: Lemma 3's expected squared Mahalanobis error.

        ``n >= 0`` and ``level`` (γ) >= 0, arrays broadcast. ``inf`` at n = 0 (a population that died
        out) and where :math:`γ^{2} \mathrm{Tr} Σ^{-1}` overflows (γ above about 1e154 for the identity Σ).
        """
        n = check_population("n", n)
        check_population("level", level)
        with np.errstate(divide="ignore"):             # n = 0 (a population that died out): inf
            return _lemma3(level, n, self._trace_inv, self.d)

    def expected_error_grad(self, n, level):
        r""":math:`e = (γ^{2} t + d)/n`, :math:`de/d\log n = -e`, :math:`de/d\log γ = 2γ^{2} t/n` (:math:`t = \mathrm{Tr}\, Σ^{-1}`); inf, −inf, inf at n = 0."""
        n = check_population("n", n)
        e = np.asarray(self.expected_error(n, level), float)
        g = np.asarray(level, float)
        with np.errstate(divide="ignore", over="ignore"):
            return e, -e, 2.0 * g**2 * self._trace_inv / n


# ------------------------------------------------------------------ front ends
def simulate(gamma, *, tau, q, r, T, n0, d, R, trials=30, seed=None):
    """Run Algorithm 1: private mean estimation with membership-inference departures.

    The paper's front end of :func:`perfpriv.engine.simulate`, with the mechanism
    ``GaussianMean(gamma, tau=tau, d=d, R=R)`` (data :math:`\\mathcal{N}(0, I_d)`) and the
    users ``Memoryless(q=q, r=r)``, under the paper's conventions (its statistic, Lemma 6, and
    its population policy). For other settings (μ, Σ, the statistic, the draw, a
    :class:`perfpriv.engine.Policy`, the authors' conventions) call that function with the objects.

    Parameters
    ----------
    gamma, tau, d, R
        As in :class:`GaussianMean`.
    q, r : float or array_like
        As in :class:`perfpriv.behaviour.Memoryless`.
    T, n0, trials, seed
        As in :func:`perfpriv.engine.simulate`.

    Returns
    -------
    perfpriv.engine.SimulationRun

    References
    ----------
    Paper Algorithm 1, eq. 6, eq. 8, Lemma 6, Lemma 8.

    Examples
    --------
    >>> run = simulate(5.0, tau=0.02, q=0.3, r=0.6, T=5, n0=100, d=3, R=10.0, trials=2, seed=0)
    >>> run.population.shape, run.sq_error.shape, run.method
    ((2, 6), (2, 5), 'projected')
    >>> grid = simulate([1.0, 5.0], tau=0.02, q=0.3, r=0.6, T=5, n0=100, d=3, R=10.0, trials=2, seed=0)
    >>> bool(np.array_equal(grid.population[1], run.population))   # a level alone or in a grid
    True
    """
    return engine.simulate(GaussianMean(gamma, tau=tau, d=d, R=R), Memoryless(q=q, r=r), T=T, n0=n0, trials=trials,
                           seed=seed)
