"""Figures of the survival and finite-horizon chapters (paper §4.5, Lemma 9, appendices A, D-E).

Two kinds of public names live here:

* experiments (``growth_curves``, ``theorem3_check``, ``leak_dispersion``,
  ``lemma9_check``, ``gamma_star_map``, ``pac_coverage``) -- each runs
  :mod:`perfpriv.dynamics`, :mod:`perfpriv.gaussian` and
  :mod:`perfpriv.optimize` and returns a small frozen dataclass of named
  arrays, so that a chapter can print and assert the numbers behind a figure;
* figures (``figure3bc``, ``figure4``, ``figure5``, ``figure_theorem3``,
  ``figure_leak_dispersion``, ``figure_mean_field``, ``figure_horizon``,
  ``figure_gamma_star``) -- each returns a :class:`matplotlib.figure.Figure`
  and never calls ``plt.show``. A figure either takes the result of an
  experiment or runs it with the parameters it is given.

Defaults are *book scale* (small grids, a handful of trials: each figure in
seconds); the paper's settings (DESIGN.md, "Paper scale") are one argument
away, e.g. ``figure4(n0=1000, T=50, trials=50, gammas=np.geomspace(0.2, 20, 30),
qs=np.linspace(0.01, 0.99, 10), rs=np.linspace(0.01, 0.99, 30))``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import check_choice, check_int, check_probability, check_real
from ..sweep import cell_seed, sweep
from ._common import assign, math, new_figure, params
from ._common import plain_log as _plain_log

__all__ = [
    "GrowthCurves",
    "growth_curves",
    "figure3bc",
    "Theorem3Check",
    "theorem3_check",
    "figure_theorem3",
    "LeakDispersion",
    "leak_dispersion",
    "figure_leak_dispersion",
    "figure_mean_field",
    "Lemma9Check",
    "lemma9_check",
    "figure_horizon",
    "GammaStarMap",
    "gamma_star_map",
    "figure_gamma_star",
    "figure4",
    "figure5",
    "PacCoverage",
    "pac_coverage",
]

#: Book-scale defaults shared by the experiments below (paper: n0=1000, T=50, trials=50).
BOOK = dict(d=12, R=10.0, cap=20000)
PAPER_GAMMAS = np.geomspace(0.2, 20.0, 30)
#: a cap that never binds in one round (single-round experiments)
_NO_CAP = 10 ** 9


#: stand-in for 'no cap': p_tau is exact (quadrature) only while n P(||z|| > R) is negligible,
#: which fails beyond ~1e9 records at d=12, R=10
_UNCAPPED = 1e8


def _lib():
    # imported lazily: plots are a face, the models must import without them
    from .. import dynamics, gaussian, leakage, optimize

    return dynamics, gaussian, leakage, optimize


def _growth(gammas, tau, q, r, n, d, R, statistic="paper", seed=0):
    dynamics = _lib()[0]
    return np.asarray(dynamics.growth_factor(np.asarray(gammas, dtype=float), tau, q, r, n=n, d=d, R=R,
                                             statistic=statistic, seed=seed), dtype=float)


# ---------------------------------------------------------------------------
# Figures 3b-3c: growth factor against gamma
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class GrowthCurves:
    """Growth factor C(gamma) from eq. 13 and from Algorithm 1.

    Attributes
    ----------
    gammas : ndarray, shape (G,)
    taus : ndarray, shape (K,)
    theory : ndarray, shape (K, G)
        ``1 + r - (q + r) p_tau`` at the initial population ``n0``.
    empirical : ndarray, shape (K, G)
        Mean observed ratio N_t / N_{t-1} (first round only, or every round
        that ran, see ``ratio``).
    spread : ndarray, shape (K, G)
        Standard deviation of the observed ratios.
    se : ndarray, shape (K, G)
        Standard error of ``empirical`` (sample standard deviation over the
        square root of the number of ratios; ratios of one run are treated
        as independent).
    q, r, n0, T : float, float, int, int
    ratio : str
    """

    gammas: np.ndarray
    taus: np.ndarray
    theory: np.ndarray
    empirical: np.ndarray
    spread: np.ndarray
    se: np.ndarray
    q: float
    r: float
    n0: int
    T: int
    ratio: str


def growth_curves(q, r, taus=(0.02, 0.05), gammas=None, *, n0=1000, T=1, trials=5, d=12, R=10.0,
                  cap=20000, ratio="first", statistic="paper", seed=0, n_jobs=None) -> GrowthCurves:
    """Growth factor against gamma, from eq. 13 and from simulations of Algorithm 1.

    Parameters
    ----------
    q, r : float
        Leaving probability q of a leaked record, joining probability r.
    taus : sequence of float
        Thresholds tau of the likelihood-ratio test (one curve each).
    gammas : array_like, optional
        Noise scales gamma (default: 10 values on ``geomspace(0.2, 20)``).
    n0 : int
        Initial population N_0; the theory curve is C evaluated at N = n0.
    T : int
        Rounds simulated.
    trials : int
        Independent runs per (tau, gamma).
    d, R, cap : int, float, int
        Dimension, clipping radius, population cap.
    ratio : {"first", "rounds"}
        ``"first"``: the observed ratio is N_1/N_0, whose mean is exactly C at
        n0 (Lemma 8); ``"rounds"``: every ratio N_t/N_{t-1} of the rounds that
        ran, as in the authors' experiment code (mixes populations of all sizes
        the run went through, cap included).
    seed : int
        Each (tau, gamma) simulation is seeded from ``seed`` and its coordinates.
    statistic : {"paper", "exact"}
        Membership statistic (Lemma 6, or the exact remove-one ratio).
    n_jobs : int, optional
        Workers of the (tau, gamma) sweep (:func:`perfpriv.sweep.sweep`); the
        result does not depend on it.

    Returns
    -------
    GrowthCurves

    Examples
    --------
    >>> c = growth_curves(0.11, 0.52, taus=(0.02,), gammas=[1.0, 10.0], n0=200, trials=2)
    >>> c.theory.shape
    (1, 2)
    """
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    ratio = check_choice("ratio", ratio, ("first", "rounds"))
    T = check_int("T", T, low=1)
    trials = check_int("trials", trials, low=1)
    n0 = check_int("n0", n0, low=2)
    taus = np.atleast_1d(check_real("taus", taus, low=0.0, low_open=True))
    gammas = np.geomspace(0.2, 20.0, 10) if gammas is None else np.atleast_1d(
        check_real("gammas", gammas, low=0.0, low_open=True))
    theory = np.stack([_growth(gammas, tau, q, r, n0, d, R, statistic) for tau in taus])
    res = sweep(_growth_cell, {"tau": taus, "gamma": gammas}, seed=seed, n_jobs=n_jobs,
                description="growth curves", q=q, r=r, T=(1 if ratio == "first" else T), n0=n0, d=d, R=R,
                trials=trials, statistic=statistic, cap=cap, ratio=ratio)
    emp, spread, se = np.moveaxis(res.values, -1, 0)
    return GrowthCurves(gammas, taus, theory, emp, spread, se, q, r, n0, T, ratio)


def _growth_cell(tau, gamma, *, q, r, T, n0, d, R, trials, statistic, cap, ratio, seed):
    """Mean, spread and standard error of the simulated growth ratios of one (tau, gamma)."""
    gaussian = _lib()[1]
    run = gaussian.simulate(gamma, tau, q, r, T=T, n0=n0, d=d, R=R, trials=trials, statistic=statistic, cap=cap,
                            seed=seed)
    pop = np.asarray(run.population, dtype=float)
    if ratio == "first":
        ratios = pop[:, 1] / pop[:, 0]
    else:
        ratios = (pop[:, 1:] / np.maximum(pop[:, :-1], 1))[np.asarray(run.alive, dtype=bool)]
    se = ratios.std(ddof=1) / np.sqrt(ratios.size) if ratios.size > 1 else np.nan
    return ratios.mean(), ratios.std(), se


def _draw_growth(ax, curves: GrowthCurves, title: str):
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for i, tau in enumerate(curves.taus):
        c = colors[i % len(colors)]
        ax.plot(curves.gammas, curves.theory[i], "-", color=c, lw=2, label=f"theory, {assign('tau', tau)}")
        ax.errorbar(curves.gammas, curves.empirical[i], yerr=curves.spread[i], fmt="o--", color=c,
                    ms=4, capsize=3, label=f"simulated, {assign('tau', tau)}")
    ax.axhline(1 - curves.q, color="firebrick", lw=1, label="$1 - q$")
    ax.axhline(1 + curves.r, color="forestgreen", lw=1, label="$1 + r$")
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_xscale("log")
    _plain_log(ax)
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel(r"growth factor $C(\gamma)$")
    ax.set_title(title)


def figure3bc(small=(0.11, 0.52), large=(0.45, 0.11), *, taus=(0.02, 0.05), gammas=None, n0=1000,
              T=(1, 1), trials=5, d=12, R=10.0, cap=20000, ratio="first", statistic="paper", seed=0,
              curves=None):
    """Figures 3b and 3c: growth factor C(gamma) against gamma, theory and simulation.

    The parameters not listed here are those of :func:`growth_curves`.

    Parameters
    ----------
    small, large : (float, float)
        (q, r) of the small-q panel (3b) and of the large-q panel (3c). The
        defaults are the two pairs of the authors' stored results.
    T : (int, int)
        Rounds of each panel (paper: 50 and 10 with ``ratio="rounds"``).
    curves : (GrowthCurves, GrowthCurves), optional
        Precomputed results of :func:`growth_curves` (the other arguments are
        then ignored).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if curves is None:
        curves = tuple(growth_curves(qr[0], qr[1], taus, gammas, n0=n0, T=t, trials=trials, d=d, R=R,
                                     cap=cap, ratio=ratio, statistic=statistic, seed=seed + k)
                       for k, (qr, t) in enumerate(zip((small, large), T)))
    fig, axes = new_figure(1, 2, width=4.3, height=3.2, sharey=True)
    for ax, c, name in zip(axes[0], curves, ("(b) small $q$", "(c) large $q$")):
        _draw_growth(ax, c, f"{name}: {params(q=c.q, r=c.r)}")
    # one legend for both panels, below them (off the curves)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    return fig


# ---------------------------------------------------------------------------
# Theorem 3: bounds on E[1/N_t | N_{t-1}]
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Theorem3Check:
    """Simulated E[1/N_t | N_{t-1}=n] against the two bounds of Theorem 3.

    Every array is indexed by the population sizes ``sizes`` (values of N_{t-1}).
    The bounds are on the inverse population; multiply by
    ``gamma**2 * Tr(Sigma^-1) + d`` for the error bounds of eq. 15.

    Attributes
    ----------
    sizes : ndarray of int
    inverse : ndarray
        Monte Carlo mean of 1 / max(N_t, 1) (population floored at 1).
    se : ndarray
        Its standard error.
    lower, upper : ndarray
        1 / (C n) and kappa / (C n), with C the growth factor at n.
    growth : ndarray
        C at each n.
    below_range : ndarray
        Fraction of runs whose ratio N_t / n fell outside [1 - q, 1 + r].
    holds_lower, holds_upper : ndarray of bool
        Whether each bound holds beyond Monte Carlo noise (4.5 standard errors).
    gamma, tau, q, r, kappa : float
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


def theorem3_check(gamma, tau, q, r, *, sizes=(2, 3, 5, 10, 30, 100, 300, 1000), trials=2000, d=12,
                   R=10.0, statistic="paper", seed=0) -> Theorem3Check:
    """Compare Theorem 3's bounds with one simulated round of Algorithm 1 from N_{t-1} = n.

    Parameters
    ----------
    gamma, tau, q, r : float
        Noise scale gamma, threshold tau, leaving and joining probabilities.
    sizes : sequence of int
        Values n of N_{t-1} (at least 2).
    trials : int
        Simulated rounds per size.
    seed : int
        Each size is seeded from ``seed`` and n.

    Returns
    -------
    Theorem3Check

    Examples
    --------
    >>> c = theorem3_check(2.0, 0.02, 0.3, 0.6, sizes=(10, 100), trials=50)
    >>> bool(c.kappa > 1)
    True
    """
    dynamics, gaussian, _, _ = _lib()
    sizes = np.array([check_int("sizes", n, low=2) for n in np.atleast_1d(sizes)])
    kap = float(dynamics.kappa(q, r))
    inv, se, growth, out = (np.empty(len(sizes)) for _ in range(4))
    for k, n in enumerate(sizes):
        run = gaussian.simulate(gamma, tau, q, r, T=1, n0=int(n), d=d, R=R, trials=trials,
                                statistic=statistic, cap=_NO_CAP,
                                seed=cell_seed(seed, float(n)))
        n1 = np.asarray(run.population, dtype=float)[:, 1]
        x = 1.0 / np.maximum(n1, 1.0)
        inv[k], se[k] = x.mean(), x.std(ddof=1) / np.sqrt(trials)
        growth[k] = float(_growth(gamma, tau, q, r, int(n), d, R, statistic))
        ratio = n1 / n
        out[k] = np.mean((ratio < 1 - q - 1e-12) | (ratio > 1 + r + 1e-12))
    lower = 1.0 / (growth * sizes)
    upper = kap * lower
    tol = 4.5 * se
    return Theorem3Check(sizes, inv, se, lower, upper, growth, out, inv >= lower - tol, inv <= upper + tol,
                         float(gamma), float(tau), float(q), float(r), kap)


def figure_theorem3(checks):
    """Simulated E[1/N_t] divided by the lower bound of Theorem 3, against N_{t-1}.

    Parameters
    ----------
    checks : sequence of Theorem3Check
        One panel each. The lower bound holds where the ratio is >= 1, the
        upper bound where it is <= kappa (dashed line).

    Returns
    -------
    matplotlib.figure.Figure
    """
    checks = list(checks)
    fig, axes = new_figure(1, len(checks), width=8.6 / max(len(checks), 2), height=3.0)
    for ax, c in zip(axes[0], checks):
        rel = c.inverse / c.lower
        err = c.se / c.lower
        ax.errorbar(c.sizes, rel, yerr=err, fmt="o-", ms=4, capsize=3, label="simulated / lower bound")
        ax.axhline(1.0, color="k", lw=1, label="lower bound (Jensen)")
        ax.axhline(c.kappa, color="tab:red", ls="--", lw=1, label=r"upper bound $\kappa_{q,r}$")
        ax.set_xscale("log")
        _plain_log(ax)
        ax.set_xlabel("$N_{t-1}$ (before the round)")
        ax.set_title(f"{params(q=c.q, r=c.r, gamma=c.gamma)}\n{assign('kappa', c.kappa, '.5g')}")
    axes[0, 0].set_ylabel(r"$\mathbb{E}[1/N_t]\cdot C\,N_{t-1}$")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    return fig


# ---------------------------------------------------------------------------
# Leak count of one round against a binomial
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class LeakDispersion:
    """Number of leaked records in one round of Algorithm 1, over many rounds.

    Attributes
    ----------
    counts : ndarray of int
        Leaked records per simulated round (population n each time).
    mean, variance : float
        Their sample mean and variance.
    binomial_variance : float
        n p (1 - p) with p = mean / n: the variance if records leaked independently.
    ratio : float
        variance / binomial_variance (1 for a binomial; larger = over-dispersed).
    ratio_se : float
        Approximate standard error of ``ratio`` (from the sample variance of a
        normal sample, sqrt(2/(m-1)) relative).
    n : int
    gamma, tau : float
    """

    counts: np.ndarray
    mean: float
    variance: float
    binomial_variance: float
    ratio: float
    ratio_se: float
    n: int
    gamma: float
    tau: float


def leak_dispersion(gamma, tau, *, n=1000, trials=400, d=12, R=10.0, statistic="paper", seed=0):
    """Leak counts of single rounds of Algorithm 1 and their dispersion against a binomial.

    All records of a round see the same noise draw eta_t, so their leak
    indicators are dependent; this measures how far the count is from a
    binomial with the same mean.

    Parameters
    ----------
    gamma, tau : float
        Noise scale and threshold.
    n : int
        Population of the round.
    trials : int
        Simulated rounds.

    Returns
    -------
    LeakDispersion

    Examples
    --------
    >>> res = leak_dispersion(2.0, 0.02, n=200, trials=50)
    >>> res.counts.shape
    (50,)
    """
    _, gaussian, _, _ = _lib()
    n = check_int("n", n, low=2)
    trials = check_int("trials", trials, low=3)
    run = gaussian.simulate(gamma, tau, 0.5, 0.5, T=1, n0=n, d=d, R=R, trials=trials, statistic=statistic,
                            cap=_NO_CAP, seed=cell_seed(seed, float(gamma), float(tau), float(n)))
    counts = np.rint(np.asarray(run.leak_fraction, dtype=float)[:, 0] * n).astype(int)
    mean = float(counts.mean())
    var = float(counts.var(ddof=1))
    p = mean / n
    bvar = n * p * (1 - p)
    ratio = var / bvar if bvar > 0 else float("nan")
    return LeakDispersion(counts, mean, var, bvar, ratio, ratio * np.sqrt(2.0 / (trials - 1)), n,
                          float(gamma), float(tau))


def figure_leak_dispersion(results):
    """Histogram of leak counts per round against the binomial with the same mean.

    Parameters
    ----------
    results : sequence of LeakDispersion
        One panel each.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from scipy.stats import binom

    results = list(results)
    fig, axes = new_figure(1, len(results), width=8.6 / max(len(results), 2), height=3.0)
    for ax, res in zip(axes[0], results):
        lo, hi = res.counts.min(), res.counts.max()
        p = res.mean / res.n
        ks = np.arange(max(0, int(min(lo, res.mean - 4 * np.sqrt(res.binomial_variance)))),
                       int(max(hi, res.mean + 4 * np.sqrt(res.binomial_variance))) + 1)
        bins = np.linspace(ks[0] - 0.5, ks[-1] + 0.5, min(40, len(ks)) + 1)
        ax.hist(res.counts, bins=bins, density=True, alpha=0.6, label="simulated rounds")
        ax.plot(ks, binom.pmf(ks, res.n, p), "k-", lw=1.2, label="binomial, same mean")
        ax.set_xlabel("leaked records in one round")
        ax.set_ylabel("frequency")
        ax.set_title(f"{params(n=res.n, gamma=res.gamma, tau=res.tau)}\nvariance ratio {res.ratio:.3g}")
        ax.legend(loc="upper right")
    return fig


# ---------------------------------------------------------------------------
# Mean-field trajectories and Lemma 12
# ---------------------------------------------------------------------------

def figure_mean_field(gamma, tau, q, r, *, T=20, n0=1000, d=12, R=10.0, cap=20000, trials=5,
                      statistic="paper", seed=0, sizes=None):
    """Mean-field population with and without the cap, C_t along it, and p_tau against N.

    Left: the mean-field population N_0 prod C_k (p_tau re-evaluated at each
    N_k) with and without the cap, and simulated runs of Algorithm 1. Middle:
    the growth factor C_t evaluated at the mean-field population of the
    previous round (increasing without a cap, Lemma 12; constant once the cap
    binds). Right: the marginal leak probability against N (it decreases).

    Returns
    -------
    matplotlib.figure.Figure
    """
    dynamics, gaussian, leakage, _ = _lib()
    fig, axes = new_figure(1, 3, width=8.6 / 3, height=3.1)
    t = np.arange(T + 1)
    free = np.asarray(dynamics.mean_field_population(gamma, tau, q, r, T=T, n0=n0, d=d, R=R, cap=_UNCAPPED,
                                                     statistic=statistic), dtype=float)
    capped = np.asarray(dynamics.mean_field_population(gamma, tau, q, r, T=T, n0=n0, d=d, R=R, cap=cap,
                                                       statistic=statistic), dtype=float)
    if trials:
        run = gaussian.simulate(gamma, tau, q, r, T=T, n0=n0, d=d, R=R, trials=trials, statistic=statistic,
                                cap=cap, seed=cell_seed(seed, gamma, tau, q, r))
        pop = np.asarray(run.population, dtype=float)
        for k in range(pop.shape[0]):
            axes[0, 0].plot(t, pop[k], color="0.6", lw=0.8, label="simulated runs" if k == 0 else None)
    axes[0, 0].plot(t, free, "-", color="tab:blue", lw=2, label="mean field, no cap (stops at $10^8$)")
    axes[0, 0].plot(t, capped, "--", color="tab:orange", lw=2, label=f"mean field, cap {cap}")
    axes[0, 0].set_yscale("log")
    axes[0, 0].set_xlabel("round $t$")
    axes[0, 0].set_ylabel("population $N_t$")
    for traj, style_, lab in ((free, "-", "no cap"), (capped, "--", f"cap {cap}")):
        c = [float(_growth(gamma, tau, q, r, max(2.0, x), d, R, statistic)) for x in traj[:-1]]
        axes[0, 1].plot(t[1:], c, style_, lw=2, label=lab)
    axes[0, 1].set_xlabel("round $t$")
    axes[0, 1].set_ylabel(r"$C_t(\gamma)$ at mean-field $N_{t-1}$")
    sizes = np.unique(np.geomspace(10, 100000, 9).astype(int)) if sizes is None else np.asarray(sizes)
    p = [leakage.marginal_leak_probability(int(n), gamma, tau, d=d, R=R, statistic=statistic, seed=seed).p
         for n in sizes]
    axes[0, 2].plot(sizes, p, "o-")
    axes[0, 2].set_xscale("log")
    _plain_log(axes[0, 2])
    axes[0, 2].set_xlabel("population $N$")
    axes[0, 2].set_ylabel(r"marginal leak probability $p_\tau$")
    axes[0, 2].set_title(params(gamma=gamma, tau=tau))
    # the panels share their line styles: one legend below them
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3)
    return fig


# ---------------------------------------------------------------------------
# Lemma 9 and the cumulative error against gamma
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Lemma9Check:
    """Lemma 9's bound against the simulated cumulative error, over a grid.

    Attributes
    ----------
    cases : ndarray, shape (M, 3)
        Rows (q, r, gamma) of the grid points in Lemma 9's regime (C_1 > 1 at N_0).
    growth : ndarray, shape (M,)
        C_1(gamma) at N_0.
    bound : ndarray, shape (M,)
        Lemma 9's Ê_total (releases on N_1..N_T, growth frozen at C_1, no cap).
    simulated, se : ndarray, shape (M,)
        Mean cumulative squared Mahalanobis error of Algorithm 1 (releases on
        N_0..N_{T-1}, cap) and its Monte Carlo standard error.
    mean_field : ndarray, shape (M,)
        Mean-field cumulative error with Algorithm 1's indexing and the cap.
    shifted : ndarray, shape (M,)
        C_1 times the bound: Lemma 9's argument with Algorithm 1's indexing
        (round t releases from N_{t-1} records, the first from N_0), i.e.
        sum_{t=0}^{T-1} (gamma^2 Tr + d) / (N_0 C_1^t).
    holds : ndarray of bool, shape (M,)
        simulated <= bound.
    holds_shifted : ndarray of bool, shape (M,)
        simulated <= shifted.
    tau : float
    T, n0 : int
    collapse : str
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


def lemma9_check(tau=0.02, qs=(0.1, 0.3, 0.5), rs=(0.3, 0.6, 0.9), gammas=(1.0, 3.0, 10.0), *, T=10,
                 n0=200, trials=5, d=12, R=10.0, cap=20000, collapse="floor", statistic="paper",
                 seed=0) -> Lemma9Check:
    """Does Lemma 9's Ê_total bound the simulated cumulative error? Measured on a (q, r, gamma) grid.

    Only grid points in Lemma 9's regime (C_1(gamma) > 1 at n0) are kept.

    Parameters
    ----------
    tau : float
        Threshold tau.
    qs, rs, gammas : sequences of float
        Grid of leaving and joining probabilities and noise scales.
    T, n0, trials, cap : int
        Horizon, initial population, runs per point, population cap.
    collapse : {"floor", "ran"}
        Convention for rounds after a collapse
        (:func:`perfpriv.optimize.optimal_gamma_empirical`).
    seed : int
        Root seed (each (q, r) cell is seeded from its coordinates).

    Returns
    -------
    Lemma9Check
    """
    dynamics, _, _, optimize = _lib()
    qs, rs = np.atleast_1d(np.asarray(qs, float)), np.atleast_1d(np.asarray(rs, float))
    gammas = np.atleast_1d(np.asarray(gammas, float))
    Q, Rr = np.meshgrid(qs, rs, indexing="ij")
    sim = np.empty(Q.shape + gammas.shape)
    se = np.empty_like(sim)
    for idx in np.ndindex(Q.shape):
        res = optimize.optimal_gamma_empirical(float(Q[idx]), float(Rr[idx]), tau, gammas, T=T, n0=n0, d=d,
                                               R=R, trials=trials, cap=cap, collapse=collapse,
                                               statistic=statistic, seed=seed)
        sim[idx], se[idx] = res.values, res.se
    G = np.broadcast_to(gammas, sim.shape)
    QQ = np.broadcast_to(Q[..., None], sim.shape)
    RR = np.broadcast_to(Rr[..., None], sim.shape)
    c1 = np.asarray(dynamics.growth_factor(G, tau, QQ, RR, n=n0, d=d, R=R, statistic=statistic), float)
    bound = np.asarray(dynamics.cumulative_error_bound(G, tau, QQ, RR, T=T, n0=n0, d=d, R=R,
                                                       statistic=statistic), float)
    mf = np.asarray(dynamics.mean_field_cumulative_error(G, tau, QQ, RR, T=T, n0=n0, d=d, R=R, cap=cap,
                                                         rounds="algorithm", statistic=statistic), float)
    keep = c1 > 1
    shifted = c1 * bound
    cases = np.stack([QQ[keep], RR[keep], G[keep]], axis=1)
    return Lemma9Check(cases, c1[keep], bound[keep], sim[keep], se[keep], mf[keep], shifted[keep],
                       sim[keep] <= bound[keep], sim[keep] <= shifted[keep], float(tau), int(T), int(n0),
                       collapse)


def figure_horizon(q, r, tau, *, gammas=None, T=10, n0=200, d=12, R=10.0, cap=20000, trials=5,
                   collapse="floor", statistic="paper", seed=0, empirical=True):
    """Cumulative error against gamma: Lemma 9's bound, mean field, simulation; gamma* and gamma_c marked.

    Parameters
    ----------
    q, r, tau : float
        Leaving and joining probabilities, threshold.
    gammas : array_like, optional
        Grid of the simulated points (default 10 values on geomspace(0.2, 20)).
    T, n0, trials, cap : int
        Horizon, initial population, runs per gamma, population cap.
    collapse : {"floor", "ran"}
        Convention for rounds after a collapse.
    empirical : bool
        Whether to simulate Algorithm 1 (the slow part).

    Returns
    -------
    matplotlib.figure.Figure
    """
    dynamics, _, _, optimize = _lib()
    gammas = np.geomspace(0.2, 20.0, 10) if gammas is None else np.asarray(gammas, dtype=float)
    fine = np.geomspace(gammas.min(), gammas.max(), 40)
    fig, axes = new_figure(1, 1, width=8.0, height=3.8)
    ax = axes[0, 0]
    bound = np.asarray(dynamics.cumulative_error_bound(fine, tau, q, r, T=T, n0=n0, d=d, R=R,
                                                       statistic=statistic), float)
    c1 = _growth(fine, tau, q, r, n0, d, R, statistic)
    grow = c1 > 1
    ax.plot(fine, np.where(grow, bound, np.nan), "-", color="tab:blue", lw=2, label="Lemma 9 bound ($C_1 > 1$)")
    ax.plot(fine, np.where(grow, np.nan, bound), ":", color="tab:blue", lw=1.5, label=r"same formula, $C_1 \leq 1$")
    mf = np.asarray(dynamics.mean_field_cumulative_error(fine, tau, q, r, T=T, n0=n0, d=d, R=R, cap=cap,
                                                         rounds="algorithm", statistic=statistic), float)
    ax.plot(fine, mf, "-", color="tab:green", lw=1.5, label="mean field (cap, Algorithm 1 rounds)")
    if empirical:
        res = optimize.optimal_gamma_empirical(q, r, tau, gammas, T=T, n0=n0, d=d, R=R, trials=trials,
                                               cap=cap, collapse=collapse, statistic=statistic, seed=seed)
        ax.errorbar(gammas, res.values, yerr=res.se, fmt="o--", color="k", ms=4, capsize=2,
                    label=f"simulated ({collapse})")
        ax.axvline(res.gamma, color="k", ls="--", lw=1, label=f"simulated {assign('gamma_star', res.gamma, '.2g')}")
    opt = optimize.optimal_gamma(q, r, tau, T=T, n0=n0, d=d, R=R, statistic=statistic, objective="bound")
    ax.axvline(opt.gamma, color="tab:blue", ls="-.", lw=1, label=f"bound {assign('gamma_star', opt.gamma, '.2g')}")
    finish_horizon_axes(ax, q, r, tau, T=T, n0=n0, R=R)
    return fig


def finish_horizon_axes(ax, q, r, tau, *, T, n0, R):
    """Mark Theorem 2's gamma_c at N0 and label a cumulative-error-against-gamma panel.

    Shared by :func:`figure_horizon` and the chapter-06 explorer.
    """
    dynamics = _lib()[0]
    gc = float(dynamics.critical_gamma(q, r, tau, n0, R))
    if np.isfinite(gc) and gc > 0:
        ax.axvline(gc, color="tab:red", ls=":", lw=1.5, label=assign("gamma_c", gc))
    ax.set_xscale("log")
    ax.set_yscale("log")
    _plain_log(ax, y=True)
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel("cumulative error over $T$ rounds")
    ax.set_title(params(q=q, r=r, tau=tau, T=T, n0=n0))
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5))


# ---------------------------------------------------------------------------
# Figures 4-5: gamma* maps
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class GammaStarMap:
    """gamma* over a (q, r) grid, from simulation and from theory.

    Arrays have shape (len(qs), len(rs)).

    Attributes
    ----------
    qs, rs : ndarray
    empirical : ndarray
        Grid-search gamma* of the mean simulated cumulative error.
    bound : ndarray
        argmin of Lemma 9's Ê_total (unconstrained, as the authors' code).
    constrained : ndarray
        argmin over gamma >= gamma_c (Remark 3 read literally; NaN if r = 0).
    mean_field : ndarray
        argmin of the mean-field cumulative error (cap included, releases
        indexed as in Algorithm 1).
    tau : float
    gammas : ndarray
        Grid of the empirical search.
    """

    qs: np.ndarray
    rs: np.ndarray
    empirical: np.ndarray
    bound: np.ndarray
    constrained: np.ndarray
    mean_field: np.ndarray
    tau: float
    gammas: np.ndarray


def gamma_star_map(tau, qs=None, rs=None, *, gammas=None, T=10, n0=200, trials=5, d=12, R=10.0, cap=20000,
                   collapse="floor", statistic="paper", seed=0, empirical=True, theory=("bound", "constrained",
                                                                                       "mean_field")):
    """gamma* from simulation (grid search) and theory (Remark 3) over a (q, r) grid.

    Each cell is seeded from ``seed`` and its own (q, r), so its value does not
    depend on the rest of the grid.

    Parameters
    ----------
    tau : float
    qs, rs : array_like, optional
        Leaving and joining probabilities (default ``linspace(0.1, 0.9, 5)`` each).
    gammas : array_like, optional
        Grid of the empirical search (default 10 values on geomspace(0.2, 20)).
    T, n0, trials, cap : int
        Horizon, initial population, runs per gamma, population cap.
    collapse : {"floor", "ran"}
        How rounds after a collapse count (see :func:`perfpriv.optimize.optimal_gamma_empirical`).
    empirical : bool
        Skip the simulations (the empirical map is then NaN).
    theory : tuple of str
        Which theoretical maps to compute.

    Returns
    -------
    GammaStarMap
    """
    _, _, _, optimize = _lib()
    qs = np.linspace(0.1, 0.9, 5) if qs is None else np.atleast_1d(np.asarray(qs, dtype=float))
    rs = np.linspace(0.1, 0.9, 5) if rs is None else np.atleast_1d(np.asarray(rs, dtype=float))
    gammas = np.geomspace(0.2, 20.0, 10) if gammas is None else np.asarray(gammas, dtype=float)
    Q, Rr = np.meshgrid(qs, rs, indexing="ij")
    nan = np.full(Q.shape, np.nan)
    common = dict(T=T, n0=n0, d=d, R=R, statistic=statistic)
    emp = optimize.optimal_gamma_empirical(Q, Rr, tau, gammas, trials=trials, cap=cap, collapse=collapse,
                                           seed=seed, **common).gamma if empirical else nan
    bnd = optimize.optimal_gamma(Q, Rr, tau, objective="bound", **common).gamma if "bound" in theory else nan
    con = (optimize.optimal_gamma(Q, Rr, tau, objective="bound", constrained=True, **common).gamma
           if "constrained" in theory else nan)
    mf = (optimize.optimal_gamma(Q, Rr, tau, objective="mean_field", cap=cap, rounds="algorithm", **common).gamma
          if "mean_field" in theory else nan)
    emp, bnd, con, mf = (np.asarray(x, float).reshape(Q.shape) for x in (emp, bnd, con, mf))
    return GammaStarMap(qs, rs, emp, bnd, con, mf, float(tau), gammas)


def _heat(ax, m, values, title, vmin, vmax):
    mesh = ax.pcolormesh(m.qs, m.rs, values.T, shading="nearest", norm=_lognorm(vmin, vmax))
    ax.grid(False)
    ax.set_xlabel("leave probability $q$")
    ax.set_ylabel("join probability $r$")
    ax.set_title(title)
    return mesh


def _lognorm(vmin, vmax):
    from matplotlib.colors import LogNorm

    return LogNorm(vmin=vmin, vmax=vmax)


def figure_gamma_star(maps, *, q_line=None, theory="bound"):
    """Figures 4-5 layout: per tau, empirical heatmap, theoretical heatmap, gamma* against r.

    Parameters
    ----------
    maps : GammaStarMap or sequence of GammaStarMap
        One row each.
    q_line : float, optional
        The q of the line plot (default: the grid value closest to 0.3).
    theory : {"bound", "constrained", "mean_field"}
        Which theoretical map to show in the middle panel.

    Returns
    -------
    matplotlib.figure.Figure
    """
    maps = [maps] if isinstance(maps, GammaStarMap) else list(maps)
    theory = check_choice("theory", theory, ("bound", "constrained", "mean_field"))
    fig, axes = new_figure(len(maps), 3, width=8.6 / 3, height=2.7)
    for row, m in zip(axes, maps):
        th = getattr(m, theory)
        allv = np.concatenate([m.empirical[np.isfinite(m.empirical)], th[np.isfinite(th)], m.gammas])
        vmin, vmax = max(allv.min(), 1e-3), allv.max()
        for ax, values, title in ((row[0], m.empirical, r"simulated $\gamma^*$, " + assign("tau", m.tau)),
                                  (row[1], th, r"theory $\gamma^*$" + f" ({theory.replace('_', ' ')}), "
                                   + assign("tau", m.tau))):
            mesh = _heat(ax, m, values, title, vmin, vmax)
            bar = fig.colorbar(mesh, ax=ax, fraction=0.08, pad=0.03)    # each map with its key
            _plain_log(bar.ax, x=False, y=True)
        iq = int(np.argmin(np.abs(m.qs - (0.3 if q_line is None else q_line))))
        ax = row[2]
        ax.plot(m.rs, m.empirical[iq], "o--", color="k", label="simulated")
        ax.plot(m.rs, m.bound[iq], "-", color="tab:blue", label="bound")
        ax.plot(m.rs, m.mean_field[iq], "-", color="tab:green", label="mean field")
        ax.plot(m.rs, m.constrained[iq], ":", color="tab:red", label=r"bound, $\gamma \geq \gamma_c$")
        ax.set_yscale("log")
        _plain_log(ax, x=False, y=True)
        ax.set_xlabel("join probability $r$")
        ax.set_ylabel(r"$\gamma^*$ (scale of the maps)")
        ax.set_title(assign("q", m.qs[iq], ".2g"))
    # the line panels share their styles: one legend below the figure, off the data
    fig.legend(*axes[0, 2].get_legend_handles_labels(), loc="outside lower center", ncol=4)
    return fig


def figure4(taus=(0.02, 0.05), **kwargs):
    """Figure 4 (tau = 0.02 and 0.05) at book scale; keyword arguments go to :func:`gamma_star_map`."""
    maps = [gamma_star_map(t, **kwargs) for t in taus]
    return figure_gamma_star(maps)


def figure5(taus=(0.01, 0.2, 0.1), **kwargs):
    """Figure 5 (tau = 0.01, 0.2, 0.1) at book scale; keyword arguments go to :func:`gamma_star_map`."""
    maps = [gamma_star_map(t, **kwargs) for t in taus]
    return figure_gamma_star(maps)


# ---------------------------------------------------------------------------
# Theorem 4: coverage of the PAC horizon
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PacCoverage:
    """Empirical coverage of Theorem 4 at the round it prescribes.

    Attributes
    ----------
    epsilons : ndarray
        Target Mahalanobis errors epsilon.
    rounds : ndarray
        Theorem 4's number of rounds t(epsilon, delta) (real, >= 0).
    coverage : ndarray
        Fraction of runs with ||o_t - mu||_{Sigma^-1} <= epsilon at round ceil(t)
        (NaN where that round is beyond the simulated horizon).
    needed : ndarray
        Smallest simulated round from which the empirical 1-delta quantile of
        the error stays below epsilon (NaN if never).
    delta : float
    trials : int
    """

    epsilons: np.ndarray
    rounds: np.ndarray
    coverage: np.ndarray
    needed: np.ndarray
    delta: float
    trials: int


def pac_coverage(gamma, tau, q, r, *, epsilons=(1.0, 0.5, 0.3), delta=0.1, T=20, n0=200, trials=50, d=12,
                 R=10.0, cap=20000, statistic="paper", seed=0) -> PacCoverage:
    """Check Theorem 4: at its round t, is the Mahalanobis error below epsilon with probability >= 1 - delta?

    Returns
    -------
    PacCoverage
    """
    dynamics, gaussian, _, _ = _lib()
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    rounds = np.array([float(dynamics.pac_rounds(gamma, tau, q, r, epsilon=e, delta=delta, n0=n0, d=d, R=R,
                                                 statistic=statistic)) for e in eps])
    run = gaussian.simulate(gamma, tau, q, r, T=T, n0=n0, d=d, R=R, trials=trials, statistic=statistic, cap=cap,
                            seed=cell_seed(seed, gamma, tau, q, r))
    # column t of ``error`` is the release computed on population[:, t]; Theorem 4's
    # N_t >= N_0 C_1^t refers to that population, so round t of the theorem is column t.
    dist = np.sqrt(np.asarray(run.error, dtype=float))
    cov = np.full(len(eps), np.nan)
    need = np.full(len(eps), np.nan)
    quant = np.nanquantile(dist, 1 - delta, axis=0)
    for k, e in enumerate(eps):
        t = int(np.ceil(rounds[k]))
        if t < T:
            cov[k] = np.mean(dist[:, t] <= e)
        ok = quant <= e
        idx = [s for s in range(T) if ok[s:].all()]
        if idx:
            need[k] = idx[0]
    return PacCoverage(eps, rounds, cov, need, float(delta), int(trials))
