"""Experiments of the survival chapter (paper §4.5, Lemma 8, Theorem 3, Lemma 12; Figs. 3b-3c)."""

from __future__ import annotations

import numpy as np

from .. import dynamics, engine, keyed
from .._validate import check_array_size, check_choice, check_int, check_int_array
from ..gaussian import GaussianMean
from ..sweep import Execution, map_grid
from ._common import (Result, gaussian_levels, mean_se, on_grid, mechanism_provenance,
                      memoryless_rates, result, with_defaults)

__all__ = ["GrowthCurves", "growth_curves", "Theorem3Check", "theorem3_check", "MeanFieldPaths",
           "mean_field_paths", "UNCAPPED"]

#: Stand-in for "no cap" in mean-field paths: :math:`p_τ` is exact (quadrature) only while
#: n P(‖z‖ > R) is negligible, which fails beyond ~1e9 records at d = 12, R = 10.
UNCAPPED = 1e8


@result
class GrowthCurves(Result):
    """Growth factor C(γ) from eq. 13 and from Algorithm 1 (:func:`growth_curves`).

    Attributes
    ----------
    gammas, taus : numpy.ndarray, shapes (G,) and (K,)
    theory : numpy.ndarray, shape (K, G)
        :math:`1 + r - (q + r) p_τ` at the initial population ``n0`` (eq. 13).
    empirical : numpy.ndarray, shape (K, G)
        Mean observed ratio :math:`N_t / N_{t-1}` (first round only, or every round that ran: ``ratio``).
    spread : numpy.ndarray, shape (K, G)
        Standard deviation of the observed ratios.
    se : numpy.ndarray, shape (K, G)
        Standard error of ``empirical`` (ratios of one run treated as independent; NaN from a single
        ratio).
    path_theory : numpy.ndarray, shape (K, G)
        Mean of eq. 13's :math:`C(N_{t-1})` over the same ratios (``theory`` with ``ratio="first"``):
        without a floor, the conditional mean of each ratio (Lemma 8), so ``empirical - path_theory``
        is zero up to Monte Carlo error while the cap does not bind.
    residual_se : numpy.ndarray, shape (K, G)
        Standard error of ``empirical - path_theory`` (the residuals :math:`N_t/N_{t-1} - C(N_{t-1})`
        are martingale differences: no independence between rounds needed; NaN from a single ratio).
    q, r, n0, T, ratio, settings : float, int, str and dict
        The inputs and the provenance (trials, d, R, seed, conventions, statistic, policy).
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


def _growth_cells(tau, *, keys, mechanisms, users, T, n0, trials, conventions, policy):
    """Simulated growth ratios against eq. 13 along their own paths, one τ per cell: (cells, 5, G).

    Rows: :class:`GrowthCurves`' ``empirical``, ``spread``, ``se``, ``path_theory`` and ``residual_se``.
    """
    out = []
    for i, t in enumerate(np.atleast_1d(tau)):
        mech = mechanisms[float(t)]
        gammas = mech.levels.values
        run = engine.simulate(mech, users, T=T, n0=n0, trials=trials, policy=policy, conventions=conventions,
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


def _curve_mechanisms(mechanisms):
    """One GaussianMean per curve, with distinct τ and the same 1-D grid of noise scales."""
    mechs = [mechanisms] if isinstance(mechanisms, GaussianMean) else mechanisms
    if not isinstance(mechs, (list, tuple)) or not mechs:
        raise TypeError(f"mechanisms must be a perfpriv.gaussian.GaussianMean or a non-empty list of them (one "
                        f"curve each); got {type(mechanisms).__name__}")
    grids = [gaussian_levels(m, name="mechanisms") for m in mechs]
    mechs = [on_grid(m) for m in mechs]
    if any(g.shape != grids[0].shape or np.any(g != grids[0]) for g in grids[1:]):
        raise ValueError("mechanisms must share their noise scales (the curves are drawn on one γ grid); "
                         f"got grids of sizes {[g.size for g in grids]}")
    taus = np.array([m.tau for m in mechs])
    if np.unique(taus).size != taus.size:
        raise ValueError(f"mechanisms must have distinct thresholds tau (each curve is keyed by its τ); "
                         f"got tau = {taus.tolist()}")
    return mechs, taus, grids[0]


def growth_curves(mechanisms, users, *, n0=1000, T=1, trials=5, ratio="first", policy=None, conventions="paper",
                  seed=0, n_jobs=None) -> GrowthCurves:
    r"""Growth factor against γ, from eq. 13 and from simulations of Algorithm 1 (Figs. 3b-3c).

    Parameters
    ----------
    mechanisms, users
        A :class:`perfpriv.gaussian.GaussianMean` per curve (distinct τ, one common γ grid; statistic
        ``None``: from ``conventions``), and the paper's users with one q and one r.
    n0, T, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate`: the theory curve is C at N = n0; T rounds run only
        with ``ratio="rounds"``; ``trials`` runs per (τ, γ); each τ is keyed by its value. Unset
        policy fields: cap 20000, ``stop=1`` (as the authors' code) and floor 0 under ``"paper"``
        (Lemma 8's unfloored :math:`N_t`: emptying the platform is the ratio 0), 1 under
        ``"authors"``, which raises the expected ratio by :math:`P(N_t = 0 \mid N_{t-1})/N_{t-1}`.
    ratio : {"first", "rounds"}
        ``"first"``: the ratio :math:`N_1/N_0`, whose mean is exactly C at n0 (Lemma 8); ``"rounds"``:
        every ratio :math:`N_t/N_{t-1}` of the rounds that ran, as in the authors' code (all sizes the
        run went through, cap included; a run down to one user stops there).
    n_jobs : int, optional
        Workers over the τ values; the result does not depend on it.

    Returns
    -------
    GrowthCurves

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = GaussianMean([1.0, 10.0], tau=0.02, d=12, R=10.0)
    >>> c = growth_curves(mech, Memoryless(q=0.11, r=0.52), n0=200, trials=2)
    >>> c.theory.shape, c.empirical.shape
    ((1, 2), (1, 2))
    """
    mechs, taus, gammas = _curve_mechanisms(mechanisms)
    q, r = memoryless_rates(users, name="users")
    ratio = check_choice("ratio", ratio, ("first", "rounds"))
    T = check_int("T", T, low=1)
    trials = check_int("trials", trials, low=1)
    n0 = check_int("n0", n0, low=2)
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    policy = with_defaults(policy, cap=20000, floor=1 if conventions == "authors" else 0, stop=1)
    prov = mechanism_provenance(mechs[0], conventions, n0=n0, policy=policy)
    theory = np.stack([np.asarray(dynamics.growth_factor(m.resolved(conventions), users, n=n0), float)
                       for m in mechs])
    T_run = 1 if ratio == "first" else T
    run = Execution(n_jobs=n_jobs, progress=False)
    out = map_grid(_growth_cells, {"tau": taus}, seed=keyed.root_key(seed), options=run,
                   mechanisms={float(m.tau): m for m in mechs}, users=users, T=T_run, n0=n0, trials=trials,
                   conventions=conventions, policy=policy)
    emp, spread, se, path, res_se = (out[:, k] for k in range(5))
    settings = dict(trials=trials, d=mechs[0].d, R=mechs[0].R, seed=seed, **prov)
    return GrowthCurves(gammas, taus, theory, emp, spread, se, path, res_se, q, r, n0, T_run, ratio, settings)


@result
class Theorem3Check(Result):
    r"""Simulated :math:`\mathbb{E}[1/N_t \mid N_{t-1} = n]` against the two bounds of Theorem 3 (:func:`theorem3_check`).

    Arrays are indexed by ``sizes`` (values of :math:`N_{t-1}`). The bounds are on the inverse
    population; times :math:`γ^{2} \mathrm{Tr} Σ^{-1} + d` they are the error bounds of eq. 15.

    Attributes
    ----------
    sizes : numpy.ndarray of int
    inverse, se : numpy.ndarray
        Monte Carlo mean of :math:`1 / \max(N_t, 1)` and its standard error.
    lower, upper, growth : numpy.ndarray
        1 / (C n) and κ / (C n), with C the growth factor at n (``growth``).
    below_range : numpy.ndarray
        Fraction of runs whose ratio :math:`N_t / n` fell outside [1 − q, 1 + r].
    holds_lower, holds_upper : numpy.ndarray of bool
        Whether each bound holds beyond Monte Carlo noise (4.5 standard errors).
    gamma, tau, q, r, kappa, settings : float and dict
        The model, Theorem 3's κ and the provenance (trials, d, R, seed, conventions, statistic, policy).
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


def _one_round_cells(n, *, keys, mechanism, users, trials, conventions):
    r""":math:`1/\max(N_1, 1)` (mean, se) and the share of ratios outside [1 − q, 1 + r], one n per cell: (cells, 3)."""
    q, r = float(users.q), float(users.r)
    out = []
    for i, size in enumerate(np.atleast_1d(n)):
        size = int(size)
        # floor 0 and no cap: N_1 as drawn (the inverse is floored at one user explicitly)
        run = engine.simulate(mechanism, users, T=1, n0=size, trials=trials,
                              policy=engine.Policy(cap=None, floor=0, stop=0), conventions=conventions, seed=keys[i])
        n1 = np.asarray(run.population[:, 1], float)
        mean, se = mean_se(1.0 / np.maximum(n1, 1.0))
        ratio = n1 / size
        outside = np.mean((ratio < 1 - q - 1e-12) | (ratio > 1 + r + 1e-12))
        out.append([mean, se, outside])
    return np.asarray(out, float)


def theorem3_check(mechanism, users, *, sizes=(2, 3, 5, 10, 30, 100, 300, 1000), trials=2000, conventions="paper",
                   seed=0, n_jobs=None) -> Theorem3Check:
    r"""Compare Theorem 3's bounds with one simulated round of Algorithm 1 from :math:`N_{t-1} = n`.

    Theorem 3 bounds :math:`\mathbb{E}[1/N_t \mid N_{t-1} = n]` below by 1/(C n) (Jensen) and above by
    :math:`κ_{q,r}` times that (Kantorovich, assuming :math:`N_t / N_{t-1}` in [1 − q, 1 + r]):
    :func:`perfpriv.dynamics.error_bounds` over the one-record error. The round has no cap or floor.

    Parameters
    ----------
    mechanism, users
        A :class:`perfpriv.gaussian.GaussianMean` with one noise scale γ (statistic ``None``: from
        ``conventions``) and a :class:`perfpriv.behaviour.Memoryless` with one q and one r.
    sizes : sequence of int
        Values n of :math:`N_{t-1}` (at least 2; n x d at most 2**29, the records one call may hold).
    trials, conventions, seed
        As in :func:`perfpriv.engine.simulate`: rounds per size; each size is keyed by n.
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
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = GaussianMean(2.0, tau=0.02, d=12, R=10.0)
    >>> c = theorem3_check(mech, Memoryless(q=0.3, r=0.6), sizes=(10, 100), trials=50)
    >>> bool(c.kappa > 1), c.inverse.shape
    (True, (2,))
    """
    gamma = gaussian_levels(mechanism, one=True)
    q, r = memoryless_rates(users, name="users")
    sizes = np.atleast_1d(check_int_array("sizes", sizes, low=2))
    if sizes.ndim != 1:
        raise ValueError(f"sizes must be a 1-D sequence of populations; got an array of shape {sizes.shape}")
    d = mechanism.d
    # a round draws the n records of its largest size: refused up front, by name
    check_array_size("the records of a round at the largest size (n x d values)", sizes=float(sizes.max()), d=d)
    trials = check_int("trials", trials, low=2)
    prov = mechanism_provenance(mechanism, conventions, n0=int(sizes.min()))
    run = Execution(n_jobs=n_jobs, progress=False)
    out = map_grid(_one_round_cells, {"n": sizes}, seed=keyed.root_key(seed), options=run, mechanism=mechanism,
                   users=users, trials=trials, conventions=prov["conventions"])
    inv, se, outside = out[:, 0], out[:, 1], out[:, 2]
    bounds = dynamics.error_bounds(mechanism.resolved(prov["conventions"]), users, n_prev=sizes.astype(float))
    one_record = float(mechanism.expected_error(1, gamma))
    lower = np.asarray(bounds.lower, float) / one_record
    upper = np.asarray(bounds.upper, float) / one_record
    tol = 4.5 * se
    settings = dict(trials=trials, d=d, R=mechanism.R, seed=seed, **prov)
    return Theorem3Check(sizes, inv, se, lower, upper, np.asarray(bounds.growth, float), outside,
                         inv >= lower - tol, inv <= upper + tol, gamma, mechanism.tau, q, r, float(bounds.kappa),
                         settings)


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
    gamma, tau, q, r, cap, settings : float, int and dict
        The model, the cap and the provenance (T, n0, d, R, trials, seed, ...).
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


def mean_field_paths(mechanism, users, *, T=20, n0=1000, policy=None, trials=5, conventions="paper", seed=0,
                     sizes=None) -> MeanFieldPaths:
    r"""The mean-field population with and without the cap, :math:`C_t` along it, :math:`p_τ` against N (Lemma 12).

    Parameters
    ----------
    mechanism, users
        As in :func:`theorem3_check`.
    T, n0, policy, trials, conventions, seed
        As in :func:`perfpriv.engine.simulate`; the policy (unset fields: the preset of
        ``conventions``, cap 20000 and floor 1) governs the capped path and the runs, the other path
        has no cap (it stops at :data:`UNCAPPED`); ``trials=0``: no runs; runs keyed by (γ, τ, q, r).
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
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = GaussianMean(1.0, tau=0.02, d=12, R=10.0)
    >>> m = mean_field_paths(mech, Memoryless(q=0.3, r=0.6), T=5, n0=200, trials=0)
    >>> m.free.shape, bool(np.all(np.diff(m.growth_free) > 0))
    ((6,), True)
    """
    gamma = gaussian_levels(mechanism, one=True)
    q, r = memoryless_rates(users, name="users")
    trials = check_int("trials", trials, low=0)
    sizes = (np.unique(np.geomspace(10, 100000, 9).astype(int)) if sizes is None
             else np.atleast_1d(check_int_array("sizes", sizes, low=2)))
    if sizes.ndim != 1:
        raise ValueError(f"sizes must be a population or a 1-D sequence of populations; got shape {sizes.shape}")
    prov = mechanism_provenance(mechanism, conventions, n0=n0, policy=policy)
    conventions, pol = prov["conventions"], engine.Policy(**prov["policy"])
    mech = mechanism.resolved(conventions)
    free = np.asarray(engine.mean_field(mech, users, T=T, n0=n0, cap=UNCAPPED, floor=pol.floor).population, float)
    capped = np.asarray(engine.mean_field(mech, users, T=T, n0=n0, cap=pol.cap, floor=pol.floor).population, float)
    grow = lambda path: np.asarray(dynamics.growth_factor(mech, users, n=path[:-1]), float)  # noqa: E731
    if trials:
        run = engine.simulate(mechanism, users, T=T, n0=n0, trials=trials, policy=pol, conventions=conventions,
                              seed=keyed.cell_key(seed, gamma, mechanism.tau, q, r))
        simulated = np.asarray(run.population, float)
    else:
        simulated = np.empty((0, T + 1))
    p = np.asarray(mech.leak_probability(sizes, gamma), float)
    settings = dict(T=T, n0=n0, d=mechanism.d, R=mechanism.R, trials=trials, seed=seed, **prov)
    return MeanFieldPaths(free, capped, grow(free), grow(capped), simulated, sizes, p, gamma, mechanism.tau, q, r,
                          pol.cap, settings)
