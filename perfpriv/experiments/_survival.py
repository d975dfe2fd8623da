"""Experiments of the survival chapter (paper §4.5, Lemma 8, Theorem 3, Lemma 12; Figs. 3b-3c)."""

from __future__ import annotations

import numpy as np

from .. import dynamics, engine, gaussian, keyed, leakage
from .._validate import check_array_size, check_choice, check_int, check_int_array, check_probability, check_real
from ..behaviour import Memoryless
from ..gaussian import GaussianMean
from ..sweep import Execution, map_grid
from ._common import Result, check_statistic, gaussian_provenance, mean_se, result

__all__ = ["GrowthCurves", "growth_curves", "Theorem3Check", "theorem3_check", "MeanFieldPaths",
           "mean_field_paths", "UNCAPPED"]

#: Stand-in for "no cap" in mean-field paths: :math:`p_τ` is exact (quadrature) only while
#: n P(‖z‖ > R) is negligible, which fails beyond ~1e9 records at d = 12, R = 10.
UNCAPPED = 1e8


# ---------------------------------------------------------------- growth curves
@result
class GrowthCurves(Result):
    """Growth factor C(γ) from eq. 13 and from Algorithm 1 (:func:`growth_curves`).

    Attributes
    ----------
    gammas : numpy.ndarray, shape (G,)
    taus : numpy.ndarray, shape (K,)
    theory : numpy.ndarray, shape (K, G)
        :math:`1 + r - (q + r) p_τ` at the initial population ``n0`` (eq. 13).
    empirical : numpy.ndarray, shape (K, G)
        Mean observed ratio :math:`N_t / N_{t-1}` (first round only, or every round
        that ran, see ``ratio``).
    spread : numpy.ndarray, shape (K, G)
        Standard deviation of the observed ratios.
    se : numpy.ndarray, shape (K, G)
        Standard error of ``empirical`` (sample standard deviation over the
        square root of the number of ratios; ratios of one run are treated
        as independent; NaN from a single ratio).
    path_theory : numpy.ndarray, shape (K, G)
        Mean of eq. 13's :math:`C(N_{t-1})` over the same ratios, each at the
        population its round started from (equal to ``theory`` with
        ``ratio="first"``). Without a floor each ratio has conditional mean
        exactly :math:`C(N_{t-1})` (Lemma 8), so ``empirical - path_theory`` is zero
        up to Monte Carlo error as long as the cap does not bind (a round
        that starts at the cap has a ratio of at most one).
    residual_se : numpy.ndarray, shape (K, G)
        Standard error of ``empirical - path_theory`` (the residuals
        :math:`N_t/N_{t-1} - C(N_{t-1})` are martingale differences, hence
        uncorrelated: this standard error needs no independence between
        the rounds of a run; NaN from a single ratio).
    q, r : float
    n0, T : int
    ratio : str
    settings : dict
        Provenance: trials, d, R, cap, seed, conventions, statistic, policy.
    """

    gammas: np.ndarray
    taus: np.ndarray
    theory: np.ndarray
    empirical: np.ndarray
    spread: np.ndarray
    se: np.ndarray
    path_theory: np.ndarray
    residual_se: np.ndarray
    q: float
    r: float
    n0: int
    T: int
    ratio: str
    settings: dict


def _growth_cells(tau, *, keys, gammas, q, r, T, n0, d, R, trials, statistic, conventions, cap, floor, ratio):
    """Simulated growth ratios against eq. 13 along their own paths, one τ per cell: (cells, 5, G).

    Rows: mean ratio, spread, standard error, mean of :math:`C(N_{t-1})` over the same
    ratios, standard error of the mean residual ratio − :math:`C(N_{t-1})`.
    """
    out = []
    for i, t in enumerate(np.atleast_1d(tau)):
        mech = GaussianMean(gammas, tau=float(t), d=d, R=R, statistic=statistic)
        # a trial down to one user stops (a lone user always leaks): its later rounds say nothing of C
        users = Memoryless(q=q, r=r)
        run = engine.simulate(mech, users, T=T, n0=n0, trials=trials,
                              policy=engine.Policy(cap=cap, floor=floor, stop=1), conventions=conventions,
                              seed=keys[i])
        pop = np.asarray(run.population, float)                             # (G, trials, T + 1)
        alive = np.asarray(run.alive, bool)                                 # (G, trials, T)
        prev = pop[..., :-1]
        x = pop[..., 1:] / np.maximum(prev, 1.0)
        C = np.zeros_like(x)
        for j, g in enumerate(gammas):                                      # eq. 13 at every N_{t-1} that ran
            sizes, inverse = np.unique(prev[j][alive[j]], return_inverse=True)
            C[j][alive[j]] = np.asarray(dynamics.growth_factor(run.mechanism, users, n=sizes, gamma=float(g)),
                                        float)[inverse]
        count = alive.sum(axis=(-2, -1))
        rows = []
        for y in (x, x - C):
            mean = np.where(alive, y, 0.0).sum(axis=(-2, -1)) / count
            dev = np.where(alive, (y - mean[:, None, None]) ** 2, 0.0).sum(axis=(-2, -1))
            with np.errstate(invalid="ignore", divide="ignore"):
                se = np.where(count > 1, np.sqrt(dev / np.maximum(count - 1, 1)) / np.sqrt(count), np.nan)
            rows.append((mean, np.sqrt(dev / count), se))
        (mean, spread, se), (res_mean, _, res_se) = rows
        out.append(np.stack([mean, spread, se, mean - res_mean, res_se]))
    return np.stack(out)


def growth_curves(*, q, r, taus=(0.02, 0.05), gammas=None, n0=1000, T=1, trials=5, d=12, R=10.0, cap=20000,
                  ratio="first", statistic=None, conventions="paper", floor=None, seed=0,
                  n_jobs=None) -> GrowthCurves:
    r"""Growth factor against γ, from eq. 13 and from simulations of Algorithm 1 (Figs. 3b-3c).

    Parameters
    ----------
    q, r : float
        Leaving probability q of a leaked record, joining probability r (keyword-only).
    taus : sequence of float
        Thresholds τ of the likelihood-ratio test (one curve each).
    gammas : array_like, optional
        Noise scales γ (default: 10 values on ``geomspace(0.2, 20)``), in [1e-100, 1e100]
        (:data:`perfpriv.gaussian.GAMMA_RANGE`).
    n0 : int
        Initial population :math:`N_0`; the theory curve is C evaluated at N = n0.
    T : int
        Rounds simulated with ``ratio="rounds"`` (``"first"`` simulates one).
    trials : int
        Independent runs per (τ, γ).
    d, R, cap : int, float, int
        Dimension, clipping radius, population cap.
    ratio : {"first", "rounds"}
        ``"first"``: the observed ratio is :math:`N_1/N_0`, whose mean is exactly C at
        n0 (Lemma 8); ``"rounds"``: every ratio :math:`N_t/N_{t-1}` of the rounds that
        ran, as in the authors' experiment code (mixes populations of all sizes
        the run went through, cap included; a run down to one user stops
        there, as theirs does, so frozen lone-user rounds do not count).
    statistic : {None, "paper", "exact"}
        Membership statistic (``None``: from ``conventions``).
    conventions : {"paper", "authors"}
        The paper's text or the authors' code (exact statistic, population
        floored at one user). Either way a trial stops once it is down to
        N <= 1 user, as the authors' does.
    floor : {None, 0, 1}
        Population floor (``None``: from ``conventions``). The paper's text
        states none for Fig. 3, and Lemma 8 gives the mean of the unfloored
        :math:`N_t`, so ``"paper"`` uses 0: a round that empties the platform counts
        as the ratio 0. The authors' code floors at one user, which turns
        that ratio into :math:`1/N_{t-1}` and raises the expected ratio of a round by
        :math:`P(N_t = 0 \mid N_{t-1})/N_{t-1}` (see ``path_theory``).
    seed : None, int, SeedSequence or Generator
        Root seed; each τ is keyed by its value, and all γ of one τ share
        their random numbers (one engine call with a grid of levels).
    n_jobs : int, optional
        Workers over the τ values; the result does not depend on it.

    Returns
    -------
    GrowthCurves

    References
    ----------
    Paper, Lemma 8, eq. 13, Figs. 3b-3c.

    Examples
    --------
    >>> c = growth_curves(q=0.11, r=0.52, taus=(0.02,), gammas=[1.0, 10.0], n0=200, trials=2)
    >>> c.theory.shape, c.empirical.shape
    ((1, 2), (1, 2))
    """
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    ratio = check_choice("ratio", ratio, ("first", "rounds"))
    T = check_int("T", T, low=1)
    trials = check_int("trials", trials, low=1)
    n0 = check_int("n0", n0, low=2)
    statistic = check_statistic(statistic)
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    taus = np.atleast_1d(np.asarray(check_real("taus", taus, low=0.0, low_open=True), float))
    gammas = np.geomspace(0.2, 20.0, 10) if gammas is None else np.atleast_1d(
        np.asarray(check_real("gammas", gammas, low=gaussian.GAMMA_RANGE[0], high=gaussian.GAMMA_RANGE[1]), float))
    floor = (1 if conventions == "authors" else 0) if floor is None else check_int("floor", floor, low=0, high=1)
    prov = gaussian_provenance(conventions, n0=n0, tau=float(taus[0]), d=d, R=R, statistic=statistic,
                               policy=engine.Policy(cap=cap, floor=floor, stop=1))
    users = Memoryless(q=q, r=r)
    theory = np.stack([np.asarray(dynamics.growth_factor(
        gaussian.GaussianMean(gammas, tau=float(t), d=d, R=R, statistic=prov["statistic"]), users, n=n0), float)
        for t in taus])
    T_run = 1 if ratio == "first" else T
    run = Execution(n_jobs=n_jobs, progress=False)
    out = map_grid(_growth_cells, {"tau": taus}, seed=keyed.root_key(seed), options=run, gammas=gammas, q=q, r=r,
                   T=T_run, n0=n0, d=d, R=R, trials=trials, statistic=statistic, conventions=conventions, cap=cap,
                   floor=floor, ratio=ratio)
    emp, spread, se, path, res_se = (out[:, k] for k in range(5))
    settings = dict(trials=trials, d=d, R=R, cap=cap, seed=seed, **prov)
    return GrowthCurves(gammas, taus, theory, emp, spread, se, path, res_se, q, r, n0, T_run, ratio, settings)


# ---------------------------------------------------------------- Theorem 3
@result
class Theorem3Check(Result):
    r"""Simulated :math:`\mathbb{E}[1/N_t \mid N_{t-1} = n]` against the two bounds of Theorem 3 (:func:`theorem3_check`).

    Every array is indexed by the population sizes ``sizes`` (values of
    :math:`N_{t-1}`). The bounds are on the inverse population; multiply by
    :math:`γ^{2} \mathrm{Tr} Σ^{-1} + d` for the error bounds of eq. 15.

    Attributes
    ----------
    sizes : numpy.ndarray of int
    inverse : numpy.ndarray
        Monte Carlo mean of :math:`1 / \max(N_t, 1)`.
    se : numpy.ndarray
        Its standard error.
    lower, upper : numpy.ndarray
        1 / (C n) and κ / (C n), with C the growth factor at n.
    growth : numpy.ndarray
        C at each n.
    below_range : numpy.ndarray
        Fraction of runs whose ratio :math:`N_t / n` fell outside [1 − q, 1 + r].
    holds_lower, holds_upper : numpy.ndarray of bool
        Whether each bound holds beyond Monte Carlo noise (4.5 standard errors).
    gamma, tau, q, r, kappa : float
    settings : dict
        Provenance: trials, d, R, seed, conventions, statistic.
    """

    sizes: np.ndarray
    inverse: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    growth: np.ndarray
    below_range: np.ndarray
    holds_lower: np.ndarray
    holds_upper: np.ndarray
    gamma: float
    tau: float
    q: float
    r: float
    kappa: float
    settings: dict


def _one_round_cells(n, *, keys, gamma, tau, q, r, d, R, trials, statistic, conventions):
    r""":math:`1/\max(N_1, 1)` (mean, se) and the share of ratios outside [1 − q, 1 + r], one n per cell: (cells, 3)."""
    out = []
    for i, size in enumerate(np.atleast_1d(n)):
        size = int(size)
        mech = GaussianMean(gamma, tau=tau, d=d, R=R, statistic=statistic)
        # floor 0 and no cap: N_1 as drawn (the inverse is floored at one user explicitly)
        run = engine.simulate(mech, Memoryless(q=q, r=r), T=1, n0=size, trials=trials,
                              policy=engine.Policy(cap=None, floor=0, stop=0), conventions=conventions, seed=keys[i])
        n1 = np.asarray(run.population[:, 1], float)
        mean, se = mean_se(1.0 / np.maximum(n1, 1.0))
        ratio = n1 / size
        outside = np.mean((ratio < 1 - q - 1e-12) | (ratio > 1 + r + 1e-12))
        out.append([mean, se, outside])
    return np.asarray(out, float)


def theorem3_check(gamma, *, tau, q, r, sizes=(2, 3, 5, 10, 30, 100, 300, 1000), trials=2000, d=12, R=10.0,
                   statistic=None, conventions="paper", seed=0, n_jobs=None) -> Theorem3Check:
    r"""Compare Theorem 3's bounds with one simulated round of Algorithm 1 from :math:`N_{t-1} = n`.

    Theorem 3 bounds the expected error of round t by
    :math:`(γ^{2} \mathrm{Tr} Σ^{-1} + d)/(C n)` below (Jensen) and :math:`κ_{q,r}` times that above
    (Kantorovich, assuming :math:`N_t / N_{t-1}` in [1 − q, 1 + r]); both come from
    bounds on :math:`\mathbb{E}[1/N_t \mid N_{t-1} = n]`, which this checks by simulation. The
    bounds are :func:`perfpriv.dynamics.error_bounds` divided by the
    one-record error :math:`γ^{2} \mathrm{Tr} Σ^{-1} + d`.

    Parameters
    ----------
    gamma : float
        Noise scale γ.
    tau, q, r : float
        Threshold τ, leaving and joining probabilities (keyword-only).
    sizes : sequence of int
        Values n of :math:`N_{t-1}` (at least 2; n x d at most 2**29, the records
        one call may hold).
    trials : int
        Simulated rounds per size.
    d, R, statistic, conventions
        Data model and membership statistic (``None``: from ``conventions``).
    seed : None, int, SeedSequence or Generator
        Root seed; each size is keyed by n.
    n_jobs : int, optional
        Workers over the sizes; the result does not depend on it.

    Returns
    -------
    Theorem3Check

    References
    ----------
    Paper, Theorem 3, eq. (15) and (22), appendix D.4.

    Examples
    --------
    >>> c = theorem3_check(2.0, tau=0.02, q=0.3, r=0.6, sizes=(10, 100), trials=50)
    >>> bool(c.kappa > 1), c.inverse.shape
    (True, (2,))
    """
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    sizes = np.atleast_1d(check_int_array("sizes", sizes, low=2))
    if sizes.ndim != 1:
        raise ValueError(f"sizes must be a 1-D sequence of populations; got an array of shape {sizes.shape}")
    d = check_int("d", d, low=1)
    # a round draws the n records of its largest size: refused up front, by name (was numpy's or the
    # compiled kernel's allocation failure)
    check_array_size("the records of a round at the largest size (n x d values)", sizes=float(sizes.max()), d=d)
    trials = check_int("trials", trials, low=2)
    statistic = check_statistic(statistic)
    prov = gaussian_provenance(conventions, n0=int(sizes.min()), tau=tau, d=d, R=R, statistic=statistic)
    run = Execution(n_jobs=n_jobs, progress=False)
    out = map_grid(_one_round_cells, {"n": sizes}, seed=keyed.root_key(seed), options=run, gamma=gamma, tau=tau,
                   q=q, r=r, d=d, R=R, trials=trials, statistic=statistic, conventions=conventions)
    inv, se, outside = out[:, 0], out[:, 1], out[:, 2]
    bounds = dynamics.error_bounds(gaussian.GaussianMean(gamma, tau=tau, d=d, R=R, statistic=prov["statistic"]),
                                   Memoryless(q=q, r=r), n_prev=sizes.astype(float))
    one_record = float(gaussian.mahalanobis_error(gamma, 1, d=d))
    lower = np.asarray(bounds.lower, float) / one_record
    upper = np.asarray(bounds.upper, float) / one_record
    tol = 4.5 * se
    settings = dict(trials=trials, d=d, R=R, seed=seed, **prov)
    return Theorem3Check(sizes, inv, se, lower, upper, np.asarray(bounds.growth, float), outside,
                         inv >= lower - tol, inv <= upper + tol, gamma, tau, q, r, float(bounds.kappa), settings)


# ---------------------------------------------------------------- mean-field paths
@result
class MeanFieldPaths(Result):
    r"""Mean-field populations with and without the cap, :math:`C_t` along them, and :math:`p_τ` against N.

    Attributes
    ----------
    free, capped : numpy.ndarray, shape (T + 1,)
        Mean-field population :math:`N_0 Π C_k` (:math:`p_τ` re-evaluated at each :math:`N_k`)
        without a cap (stopped at :data:`UNCAPPED`) and with ``cap``.
    growth_free, growth_capped : numpy.ndarray, shape (T,)
        :math:`C_t(γ)` at the mean-field population :math:`N_{t-1}` of each path (rises
        without a cap, Lemma 12; constant once the cap binds).
    simulated : numpy.ndarray, shape (trials, T + 1)
        Populations of simulated runs of Algorithm 1 (empty when ``trials=0``).
    sizes, p : numpy.ndarray
        Population sizes and the marginal leak probability :math:`p_τ` at each (Lemma 8).
    gamma, tau, q, r : float
    cap : int
    settings : dict
        Provenance: T, n0, d, R, trials, seed, statistic.
    """

    free: np.ndarray
    capped: np.ndarray
    growth_free: np.ndarray
    growth_capped: np.ndarray
    simulated: np.ndarray
    sizes: np.ndarray
    p: np.ndarray
    gamma: float
    tau: float
    q: float
    r: float
    cap: int
    settings: dict


def mean_field_paths(gamma, *, tau, q, r, T=20, n0=1000, d=12, R=10.0, cap=20000, trials=5, statistic=None,
                     conventions="paper", seed=0, sizes=None) -> MeanFieldPaths:
    r"""The mean-field population with and without the cap, :math:`C_t` along it, :math:`p_τ` against N (Lemma 12).

    Parameters
    ----------
    gamma : float
        Noise scale γ.
    tau, q, r : float
        Threshold and behaviour (keyword-only).
    T, n0 : int
        Horizon and :math:`N_0`.
    d, R, cap : int, float, int
        Data model and population cap.
    trials : int
        Simulated runs of Algorithm 1 drawn beside the mean field (0: none).
    statistic, conventions
        Membership statistic (``None``: from ``conventions``).
    seed : None, int, SeedSequence or Generator
        Root seed; the runs are keyed by (γ, τ, q, r).
    sizes : array_like of int, optional
        Populations N >= 2 of the :math:`p_τ` curve (default 9 values from 10 to 1e5).

    Returns
    -------
    MeanFieldPaths

    References
    ----------
    Paper §4.5 (mean field), Lemma 8 (eq. 12-13), Lemma 12.

    Examples
    --------
    >>> m = mean_field_paths(1.0, tau=0.02, q=0.3, r=0.6, T=5, n0=200, trials=0)
    >>> m.free.shape, bool(np.all(np.diff(m.growth_free) > 0))
    ((6,), True)
    """
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    trials = check_int("trials", trials, low=0)
    statistic = check_statistic(statistic)
    sizes = (np.unique(np.geomspace(10, 100000, 9).astype(int)) if sizes is None
             else np.atleast_1d(check_int_array("sizes", sizes, low=2)))
    if sizes.ndim != 1:
        raise ValueError(f"sizes must be a population or a 1-D sequence of populations; got shape {sizes.shape}")
    prov = gaussian_provenance(conventions, n0=n0, tau=tau, d=d, R=R, statistic=statistic,
                               policy=engine.Policy(cap=cap))
    st = prov["statistic"]
    mech, users = gaussian.GaussianMean(gamma, tau=tau, d=d, R=R, statistic=st), Memoryless(q=q, r=r)
    free = np.asarray(engine.mean_field(mech, users, T=T, n0=n0, cap=UNCAPPED).population, float)
    capped = np.asarray(engine.mean_field(mech, users, T=T, n0=n0, cap=cap).population, float)
    grow = lambda path: np.asarray(dynamics.growth_factor(mech, users, n=path[:-1]), float)  # noqa: E731
    if trials:
        run = gaussian.simulate(gamma, tau=tau, q=q, r=r, T=T, n0=n0, d=d, R=R, trials=trials,
                                policy=engine.Policy(cap=cap), statistic=statistic, conventions=conventions,
                                seed=keyed.cell_key(seed, gamma, tau, q, r))
        simulated = np.asarray(run.population, float)
    else:
        simulated = np.empty((0, T + 1))
    p = np.asarray(leakage.marginal_leak_probability(sizes, gamma, tau=tau, d=d, R=R, statistic=st).p, float)
    settings = dict(T=T, n0=n0, d=d, R=R, trials=trials, seed=seed, **prov)
    return MeanFieldPaths(free, capped, grow(free), grow(capped), simulated, sizes, p, gamma, tau, q, r, cap,
                          settings)
