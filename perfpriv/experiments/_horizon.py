"""Experiments of the finite-horizon chapter (Lemma 9, Remarks 2-3, Theorem 4; Figs. 4-5)."""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import dynamics, engine, gaussian, keyed, optimize
from ..behaviour import Memoryless
from .._validate import check_choice, check_flag, check_int, check_n_jobs, check_real
from ..gaussian import GaussianMean
from ..sweep import Execution, check_execution
from ._common import (Result, gaussian_levels, mechanism_provenance, on_grid, memoryless_rates, result,
                      with_defaults)

__all__ = ["Lemma9Check", "lemma9_check", "HorizonCurves", "horizon_curves", "GammaStarMap", "gamma_star_map",
           "PacCoverage", "pac_coverage", "THEORY_MAPS", "MAPS"]

#: The theoretical γ* maps :func:`gamma_star_map` can compute.
THEORY_MAPS = ("bound", "constrained", "mean_field")
#: Every map :func:`gamma_star_map` can compute: the simulated one and the theoretical ones.
MAPS = ("empirical",) + THEORY_MAPS
#: The empirical grid of :func:`gamma_star_map` for a mechanism without noise scales.
_DEFAULT_MAP_GAMMAS = np.geomspace(0.2, 20.0, 10)


def _grid(values, name, default):
    """A 1-D grid of noise scales, in ``gaussian.GAMMA_RANGE`` (what the simulators and the dynamics accept)."""
    if values is None:
        return np.asarray(default, float)
    arr = np.atleast_1d(np.asarray(check_real(name, values, low=gaussian.GAMMA_RANGE[0],
                                              high=gaussian.GAMMA_RANGE[1]), float))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence; got shape {arr.shape}")
    return arr


@result
class Lemma9Check(Result):
    r"""Lemma 9's bound against the simulated cumulative error, over a grid (:func:`lemma9_check`).

    Attributes
    ----------
    cases, growth : numpy.ndarray, shapes (M, 3) and (M,)
        Rows (q, r, γ) of the grid points in Lemma 9's regime, and :math:`C_1(γ) > 1` at :math:`N_0`.
    bound : numpy.ndarray, shape (M,)
        Lemma 9's :math:`Ê_{\mathrm{total}}` (releases on :math:`N_1, \dots, N_T`, growth frozen at
        :math:`C_1`, no cap).
    simulated, se, mean_field : numpy.ndarray, shape (M,)
        Mean cumulative squared Mahalanobis error of Algorithm 1 (releases on
        :math:`N_0, \dots, N_{T-1}, \mathrm{cap}`), its standard error, and the mean field's.
    shifted : numpy.ndarray, shape (M,)
        :math:`C_1` times the bound, Lemma 9's argument with Algorithm 1's indexing:
        :math:`Σ_{t=0}^{T-1} (γ^{2} \mathrm{Tr} Σ^{-1} + d) / (N_0 C_1^t)`.
    holds, holds_shifted : numpy.ndarray of bool, shape (M,)
        simulated <= bound, simulated <= shifted.
    tau, T, n0, collapse, settings : float, int, str and dict
        The model's τ, the run sizes, the collapse scoring and the provenance (trials, d, R, seed, ...).
    """

    cases: np.ndarray
    growth: np.ndarray
    bound: np.ndarray
    simulated: np.ndarray
    se: np.ndarray
    mean_field: np.ndarray
    shifted: np.ndarray
    holds: np.ndarray
    holds_shifted: np.ndarray
    tau: float
    T: int
    n0: int
    collapse: str
    settings: dict


def _search_model(mechanism) -> dict:
    """The data model of a GaussianMean as keywords of :mod:`perfpriv.optimize`'s γ searches."""
    options = mechanism.options()
    return dict(tau=mechanism.tau, d=mechanism.d, R=mechanism.R, mu=options["mu"], Sigma=options["Sigma"])


def _cumulative_policy(policy, mechanism, conventions, *, n0):
    """``(policy, resolved policy, provenance)`` of the simulated cumulative errors (:func:`lemma9_check`)."""
    policy = with_defaults(policy, stop=1, cap=20000)
    prov = mechanism_provenance(mechanism, conventions, n0=n0, policy=policy)
    return policy, engine.Policy(**prov["policy"]), prov


def lemma9_check(mechanism, users, *, T=10, n0=200, trials=5, policy=None, conventions="paper", seed=0,
                 n_jobs=None) -> Lemma9Check:
    r"""Does Lemma 9's :math:`Ê_{\mathrm{total}}` bound the simulated cumulative error? Measured on a (q, r, γ) grid.

    The simulated errors come from one :func:`perfpriv.optimize.optimal_gamma_empirical` search over
    the cells; only grid points in Lemma 9's regime (:math:`C_1(γ) > 1` at ``n0``) are kept.

    Parameters
    ----------
    mechanism : perfpriv.gaussian.GaussianMean
        Its levels are the γ grid (a number or a 1-D grid; statistic ``None``: from ``conventions``).
    users : perfpriv.behaviour.Memoryless
        Its cells are the (q, r) grid: e.g. ``Memoryless(q=qs[:, None], r=rs[None, :])``.
    T, n0, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate` (``trials`` runs per point; each (q, r) cell keyed by
        its coordinates). The policy also clips the mean field; unset fields: ``stop=1``, cap 20000, then
        the preset of ``conventions`` (as in :func:`perfpriv.optimize.optimal_gamma_empirical`).
    n_jobs : int, optional
        Workers over the cells; the result does not depend on it.

    Returns
    -------
    Lemma9Check

    References
    ----------
    Paper, Lemma 9 (eq. 16, 23), Remark 3.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean([1.0, 3.0], tau=0.02, d=12, R=10.0)
    >>> c = lemma9_check(mech, Memoryless(q=0.3, r=0.6), T=5, n0=100, trials=3)
    >>> c.cases.shape[1], bool(np.all(c.growth > 1))
    (3, True)
    """
    gammas = gaussian_levels(mechanism)
    mechanism = on_grid(mechanism)
    if not isinstance(users, Memoryless):
        raise TypeError(f"users must be a perfpriv.behaviour.Memoryless (the paper's users, q and r); "
                        f"got {type(users).__name__}")
    n_jobs = check_n_jobs(n_jobs)
    policy, pol, prov = _cumulative_policy(policy, mechanism, conventions, n0=n0)
    Q, Rr = (np.asarray(x, float) for x in users.cell_coordinates())
    emp = optimize.optimal_gamma_empirical(mechanism, users, T=T, n0=n0,
                                           trials=trials, policy=policy, conventions=prov["conventions"], seed=seed,
                                           options=Execution(n_jobs=n_jobs, chunk=4, progress=False))
    sim, se = emp.values, emp.se                                           # cells + (G,)
    G = np.broadcast_to(gammas, sim.shape)
    QQ = np.broadcast_to(Q[..., None], sim.shape)
    RR = np.broadcast_to(Rr[..., None], sim.shape)
    mech = mechanism.resolved(prov["conventions"])
    grid_users = Memoryless(q=QQ, r=RR, rule=users.rule)
    c1 = np.asarray(dynamics.growth_factor(mech, grid_users, n=n0, gamma=G), float)
    bound = np.asarray(dynamics.cumulative_error_bound(mech, grid_users, T=T, n0=n0, gamma=G), float)
    mf = np.asarray(engine.mean_field(mech, users, T=T, n0=n0, cap=pol.cap, floor=pol.floor).cumulative_error,
                    float)
    keep = c1 > 1
    shifted = c1 * bound
    cases = np.stack([QQ[keep], RR[keep], G[keep]], axis=1)
    settings = dict(trials=trials, d=mechanism.d, R=mechanism.R, seed=seed, **prov)
    return Lemma9Check(cases, c1[keep], bound[keep], sim[keep], se[keep], mf[keep], shifted[keep],
                       sim[keep] <= bound[keep], sim[keep] <= shifted[keep], mechanism.tau, int(T), int(n0),
                       pol.collapse, settings)


@result
class HorizonCurves(Result):
    r"""Cumulative error against γ: Lemma 9's bound, the mean field and simulation (:func:`horizon_curves`).

    Attributes
    ----------
    fine : numpy.ndarray, shape (F,)
        Dense γ grid of the theory curves.
    bound, growth, mean_field : numpy.ndarray, shape (F,)
        Lemma 9's :math:`Ê_{\mathrm{total}}` (Lemma 9's only where :math:`C_1 > 1`), :math:`C_1(γ)` at
        :math:`N_0` and the mean-field cumulative error (cap, Algorithm 1's rounds).
    gammas : numpy.ndarray, shape (G,)
        Grid of the simulated points.
    simulated, se, gamma_empirical : numpy.ndarray and float
        Mean simulated cumulative error, its standard error (shape (G,)) and the simulated γ* on
        ``gammas`` (NaN without simulation).
    gamma_bound, gamma_mean_field, gamma_c : float
        γ* of Lemma 9's bound (:func:`perfpriv.optimize.optimal_gamma`), the minimizer of the
        mean-field curve on ``fine``, and Theorem 2's survival threshold at :math:`N_0`.
    q, r, tau, T, n0, collapse, settings : float, int, str and dict
        The model, the run sizes, the collapse scoring and the provenance (trials, d, R, seed, ...).
    """

    fine: np.ndarray
    bound: np.ndarray
    growth: np.ndarray
    mean_field: np.ndarray
    gammas: np.ndarray
    simulated: np.ndarray
    se: np.ndarray
    gamma_empirical: float
    gamma_bound: float
    gamma_mean_field: float
    gamma_c: float
    q: float
    r: float
    tau: float
    T: int
    n0: int
    collapse: str
    settings: dict


def horizon_curves(mechanism, users, *, T=10, n0=200, trials=5, policy=None, conventions="paper", seed=0,
                   empirical=True, fine=None) -> HorizonCurves:
    """The cumulative error against γ from Lemma 9's bound, the mean field and Algorithm 1.

    Parameters
    ----------
    mechanism, users, T, n0, trials, policy, conventions, seed
        As in :func:`lemma9_check`, for one cell (one q, one r); the mechanism's levels are the
        simulated points.
    empirical : bool
        Simulate Algorithm 1 (the slow part); theory only otherwise.
    fine : array_like, optional
        Dense grid of the theory curves (default 40 values spanning the mechanism's levels), in
        [1e-100, 1e100].

    Returns
    -------
    HorizonCurves

    References
    ----------
    Paper, Lemma 9, Remarks 2-3, Theorem 2.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(np.geomspace(0.2, 20.0, 10), tau=0.02, d=12, R=10.0)
    >>> h = horizon_curves(mech, Memoryless(q=0.3, r=0.6), empirical=False)
    >>> h.fine.size, bool(np.isnan(h.gamma_empirical)), bool(h.gamma_bound > 0)
    (40, True, True)
    """
    gammas = gaussian_levels(mechanism)
    q, r = memoryless_rates(users, name="users")
    fine = _grid(fine, "fine", np.geomspace(gammas.min(), gammas.max(), 40))
    policy, pol, prov = _cumulative_policy(policy, mechanism, conventions, n0=n0)
    model = _search_model(mechanism)
    mech = GaussianMean(fine, **dict(mechanism.resolved(prov["conventions"]).options()))
    bound = np.asarray(dynamics.cumulative_error_bound(mech, users, T=T, n0=n0), float)
    growth = np.asarray(dynamics.growth_factor(mech, users, n=n0), float)
    mf = np.asarray(engine.mean_field(mech, users, T=T, n0=n0, cap=pol.cap, floor=pol.floor).cumulative_error, float)
    opt = optimize.optimal_gamma(GaussianMean(statistic=prov["statistic"], **model), users, T=T, n0=n0)
    nan = np.full(gammas.shape, np.nan)
    sim, se, g_emp = nan, nan, float("nan")
    if check_flag("empirical", empirical):
        res = optimize.optimal_gamma_empirical(on_grid(mechanism), users, T=T, n0=n0, trials=trials,
                                               policy=policy, conventions=prov["conventions"], seed=seed,
                                               options=Execution(chunk=4, progress=False))
        sim, se, g_emp = np.asarray(res.values, float), np.asarray(res.se, float), float(res.gamma)
    g_mf = float(fine[int(np.nanargmin(mf))]) if np.isfinite(mf).any() else float("nan")
    gc = float(dynamics.critical_gamma(mech, users, n=n0))
    settings = dict(trials=trials, d=mechanism.d, R=mechanism.R, seed=seed, empirical=bool(empirical), **prov)
    return HorizonCurves(fine, bound, growth, mf, gammas, sim, se, g_emp, float(opt.gamma), g_mf, gc, q, r,
                         mechanism.tau, int(T), int(n0), pol.collapse, settings)


@result
class GammaStarMap(Result):
    r"""γ* over a (q, r) grid, from simulation and from theory (:func:`gamma_star_map`).

    Maps have shape (len(qs), len(rs)).

    Attributes
    ----------
    qs, rs, tau, gammas : numpy.ndarray and float
        The grid axes, τ and the grid of the empirical search.
    empirical : numpy.ndarray
        Grid-search γ* of the mean simulated cumulative error (NaN if not simulated).
    bound : numpy.ndarray
        argmin of Lemma 9's :math:`Ê_{\mathrm{total}}` (unconstrained, as the authors' code; NaN if not
        in ``theory``).
    constrained : numpy.ndarray
        argmin over :math:`γ \ge γ_c` (Remark 3 read literally; NaN if r = 0 or not in ``theory``).
    mean_field : numpy.ndarray
        argmin of the mean-field cumulative error (cap, Algorithm 1's indexing; NaN if not in ``theory``).
    values, se : numpy.ndarray, shape (len(qs), len(rs), len(gammas))
        The empirical objective (mean simulated cumulative error) and its standard error (NaN if not
        simulated).
    settings : dict
        Provenance: T, n0, trials, d, R, cap, collapse, seed, conventions, statistic, policy, theory.
    """

    qs: np.ndarray
    rs: np.ndarray
    empirical: np.ndarray
    bound: np.ndarray
    constrained: np.ndarray
    mean_field: np.ndarray
    tau: float
    gammas: np.ndarray
    values: np.ndarray
    se: np.ndarray
    settings: dict


def _map_axes(users):
    """The (q, r) axes of the paper's users over a grid: ``Memoryless(q=qs[:, None], r=rs[None, :])``."""
    if not isinstance(users, Memoryless) or users.rule != "leak":
        raise TypeError(f"users must be the paper's users over a (q, r) grid, Memoryless(q=qs[:, None], "
                        f"r=rs[None, :]) with rule='leak'; got {users!r:.80}")
    qs, rs = users.grid_axes()
    Q, Rr = np.meshgrid(qs, rs, indexing="ij")
    return qs, rs, Q, Rr


def _check_maps(maps):
    """The maps a :func:`gamma_star_map` call computes: names of :data:`MAPS`."""
    if isinstance(maps, str):
        maps = (maps,)
    if not isinstance(maps, (tuple, list)):
        raise TypeError(f"maps must be a name or a sequence of names from {MAPS}; got {maps!r:.80}")
    return tuple(check_choice("maps", m, MAPS) for m in maps)


def gamma_star_map(mechanism, users, *, T=10, n0=200, trials=5, policy=None, conventions="paper", seed=0,
                   maps=MAPS, options=None) -> GammaStarMap:
    r"""γ* from simulation (grid search) and from theory (Remark 3) over a (q, r) grid (Figs. 4-5).

    The empirical map is :func:`perfpriv.optimize.optimal_gamma_empirical` on the grid's cells (each
    keyed by its own (q, r)), the theoretical ones :func:`perfpriv.optimize.optimal_gamma` on Lemma 9's
    bound or the mean field (see :class:`GammaStarMap`).

    Parameters
    ----------
    mechanism, users
        As in :func:`lemma9_check` (a mechanism without noise scales: 10 values on geomspace(0.2, 20));
        the users must form a grid, ``Memoryless(q=qs[:, None], r=rs[None, :])``.
    T, n0, trials, policy, conventions, seed
        As in :func:`lemma9_check`; the policy's cap also caps the mean-field map.
    maps : sequence of {"empirical", "bound", "constrained", "mean_field"}
        Which maps to compute (the others are NaN; ``"empirical"``, the simulation, is the slow part).
    options : perfpriv.sweep.Execution, optional
        Workers and cells per batch (default 4); the result does not depend on them. ``on_cells``
        hears of finished cells; ``store`` (a mutable mapping) keeps them as ``store[(tau, q, r)] =
        [values, se]`` (shape (2, len(gammas))), stored as each batch finishes and not simulated
        again: an interrupted map resumes where it stopped.

    Returns
    -------
    GammaStarMap

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = GaussianMean([0.5, 2.0, 8.0], tau=0.05, d=12, R=10.0)
    >>> m = gamma_star_map(mech, Memoryless(q=0.3, r=0.6), T=5, n0=50, trials=3, seed=1)
    >>> m.empirical.shape, float(m.empirical[0, 0]) in (0.5, 2.0, 8.0)
    ((1, 1), True)
    """
    if not isinstance(mechanism, GaussianMean):
        raise TypeError(f"mechanism must be a perfpriv.gaussian.GaussianMean; got {type(mechanism).__name__}")
    mechanism = GaussianMean(_DEFAULT_MAP_GAMMAS, **mechanism.options()) if mechanism.levels is None \
        else on_grid(mechanism)
    gammas = gaussian_levels(mechanism)
    qs, rs, Q, Rr = _map_axes(users)
    maps = _check_maps(maps)
    run = check_execution(options, chunk=4, progress=False)
    policy, pol, prov = _cumulative_policy(policy, mechanism, conventions, n0=n0)
    nan = np.full(Q.shape, np.nan)
    values = np.full(Q.shape + gammas.shape, np.nan)
    se = np.full(Q.shape + gammas.shape, np.nan)
    if "empirical" in maps:
        search = dict(T=T, n0=n0, trials=trials, policy=policy, conventions=prov["conventions"], seed=seed,
                      options=dataclasses.replace(run, progress=False, store=None, on_cells=None))
        values, se = _empirical_cells(mechanism, Q, Rr, search, run.store, run.on_cells)
        emp = gammas[np.argmin(values, axis=-1)]
    else:
        emp = nan
    theory_model = (GaussianMean(**dict(mechanism.options(), statistic=prov["statistic"])), Memoryless(q=Q, r=Rr))
    common = dict(T=T, n0=n0)
    bnd = optimize.optimal_gamma(*theory_model, **common).gamma if "bound" in maps else nan
    con = optimize.optimal_gamma(*theory_model, constrained=True, **common).gamma if "constrained" in maps else nan
    mf = (optimize.optimal_gamma(*theory_model, objective="mean_field", policy=engine.Policy(cap=pol.cap),
                                 rounds="algorithm", **common).gamma if "mean_field" in maps else nan)
    emp, bnd, con, mf = (np.asarray(x, float).reshape(Q.shape) for x in (emp, bnd, con, mf))
    settings = dict(T=T, n0=n0, trials=trials, d=mechanism.d, R=mechanism.R, cap=pol.cap, collapse=pol.collapse,
                    seed=seed, empirical="empirical" in maps, theory=tuple(m for m in maps if m in THEORY_MAPS),
                    **prov)
    return GammaStarMap(qs, rs, emp, bnd, con, mf, mechanism.tau, gammas, values, se, settings)


def _empirical_cells(mechanism, Q, Rr, search, store, on_cells):
    """Mean cumulative error and se of every cell, through ``store`` when given: shapes Q.shape + (G,)."""
    tau, gammas = mechanism.tau, np.atleast_1d(mechanism.levels.values)
    if store is None and on_cells is None:
        res = optimize.optimal_gamma_empirical(mechanism, Memoryless(q=Q, r=Rr), **search)
        return np.asarray(res.values, float), np.asarray(res.se, float)
    import joblib

    shape = Q.shape + gammas.shape
    values, se = np.empty(shape), np.empty(shape)
    todo = []
    for idx in np.ndindex(Q.shape):
        key = (tau, float(Q[idx]), float(Rr[idx]))
        got = store.get(key) if store is not None else None
        got = None if got is None else np.asarray(got, float)
        if got is not None and got.shape == (2, gammas.size):
            values[idx], se[idx] = got
        else:
            todo.append(idx)
    if on_cells is not None and len(todo) < Q.size:
        on_cells(Q.size - len(todo))
    run = search["options"]
    group = (run.chunk or 4) * max(1, joblib.effective_n_jobs(run.n_jobs))
    for start in range(0, len(todo), group):
        batch = todo[start:start + group]
        qb = np.array([Q[i] for i in batch])
        rb = np.array([Rr[i] for i in batch])
        res = optimize.optimal_gamma_empirical(mechanism, Memoryless(q=qb, r=rb), **search)
        for k, idx in enumerate(batch):
            values[idx], se[idx] = res.values[k], res.se[k]
            if store is not None:
                store[(tau, float(Q[idx]), float(Rr[idx]))] = np.stack([res.values[k], res.se[k]])
        if on_cells is not None:
            on_cells(len(batch))
    return values, se


@result
class PacCoverage(Result):
    r"""Empirical coverage of Theorem 4 at the round it prescribes (:func:`pac_coverage`).

    Attributes
    ----------
    epsilons, rounds : numpy.ndarray
        Target Mahalanobis errors ε and Theorem 4's number of rounds t(ε, δ).
    coverage, coverage_se : numpy.ndarray
        Fraction of runs with :math:`\|o_t - μ\|_{Σ^{-1}} \le ε` at that round, and its binomial
        standard error sqrt(c (1 − c) / trials) (NaN beyond the horizon).
    needed : numpy.ndarray
        Smallest round from which the empirical 1 − δ quantile of the error stays below ε (NaN if never).
    delta, trials, settings : float, int and dict
        The inputs and the provenance (gamma, tau, q, r, T, n0, d, R, seed, ...).
    """

    epsilons: np.ndarray
    rounds: np.ndarray
    coverage: np.ndarray
    needed: np.ndarray
    coverage_se: np.ndarray
    delta: float
    trials: int
    settings: dict


def pac_coverage(mechanism, users, *, epsilons=(1.0, 0.5, 0.3), delta=0.1, T=20, n0=200, trials=50, policy=None,
                 conventions="paper", seed=0) -> PacCoverage:
    """Check Theorem 4: at its round t, is the Mahalanobis error below ε with probability >= 1 − δ?

    Parameters
    ----------
    mechanism, users
        As in :func:`perfpriv.experiments.theorem3_check`, with :math:`C_1(γ) > 1`.
    epsilons, delta
        Target radii ε (a sequence) and failure probability δ.
    T, n0, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate` (unset policy fields: the preset of ``conventions``,
        cap 20000); the runs are keyed by (γ, τ, q, r).

    Returns
    -------
    PacCoverage

    References
    ----------
    Paper, Theorem 4 (eq. 24), appendix E.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> mech = GaussianMean(2.0, tau=0.02, d=12, R=10.0)
    >>> c = pac_coverage(mech, Memoryless(q=0.3, r=0.6), epsilons=(1.0,), T=10, n0=500, trials=10)
    >>> c.rounds.shape, c.coverage.shape
    ((1,), (1,))
    """
    gamma = gaussian_levels(mechanism, one=True)
    q, r = memoryless_rates(users, name="users")
    eps = np.atleast_1d(np.asarray(check_real("epsilons", epsilons, low=0, low_open=True), float))
    T = check_int("T", T, low=1)
    trials = check_int("trials", trials, low=1)
    prov = mechanism_provenance(mechanism, conventions, n0=n0, policy=policy)
    mech = mechanism.resolved(prov["conventions"])
    n0 = check_int("n0", n0, low=2)
    growth = float(dynamics.growth_factor(mech, users, n=n0))
    if not growth > 1:
        raise ValueError(f"mechanism: Theorem 4 needs a growing population, C_1(γ) > 1 at n0 = {n0}; γ = {gamma:g} "
                         f"gives C_1 = {growth:.6g} with these users (raise γ above "
                         f"dynamics.exact_critical_gamma, or n0)")
    rounds = np.empty(eps.size)
    for k, e in enumerate(eps):
        try:
            rounds[k] = dynamics.pac_rounds(mech, users, n0, epsilon=e, delta=delta)
        except ValueError as err:
            raise ValueError(f"epsilons: Theorem 4 gives no number of rounds for epsilon = {e!r} with this "
                             f"mechanism and delta = {delta!r} ({err})") from None
    run = engine.simulate(mechanism, users, T=T, n0=n0, trials=trials, policy=engine.Policy(**prov["policy"]),
                          conventions=prov["conventions"], seed=keyed.cell_key(seed, gamma, mechanism.tau, q, r))
    # column t of sq_error is the release made from population[:, t] users; Theorem 4's
    # N_t >= N_0 C_1^t refers to that population, so round t of the theorem is column t.
    dist = np.sqrt(np.asarray(run.sq_error, float))
    cov = np.full(eps.size, np.nan)
    need = np.full(eps.size, np.nan)
    quant = np.quantile(dist, 1 - delta, axis=0)
    for k, e in enumerate(eps):
        t = int(np.ceil(rounds[k]))
        if t < T:
            cov[k] = np.mean(dist[:, t] <= e)
        ok = quant <= e
        tail_ok = np.flip(np.logical_and.accumulate(np.flip(ok)))      # ok from round s to the end
        if tail_ok.any():
            need[k] = int(np.argmax(tail_ok))
    cov_se = np.sqrt(cov * (1 - cov) / trials)
    settings = dict(gamma=gamma, tau=mechanism.tau, q=q, r=r, T=T, n0=n0, d=mechanism.d, R=mechanism.R, seed=seed,
                    **prov)
    return PacCoverage(eps, rounds, cov, need, cov_se, float(delta), int(trials), settings)
