"""Figures of the Gaussian model (paper §4.1-4.4, appendix D.1-D.2, Fig. 3a).

The numbers come from :mod:`perfpriv.gaussian` and :mod:`perfpriv.leakage`. A figure that compares a
formula with a simulation receives the simulated result (a :class:`perfpriv.engine.SimulationRun`, an
experiment's result), computed once by the chapter with the model's objects; the paper's sizes are
:data:`perfpriv.cli.SCALES`.
"""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps

from .. import engine, gaussian, leakage
from .._validate import check_flag, check_int, check_int_array, check_real
from ..behaviour import Memoryless
from ._common import (MAX_LOG_VALUE, check_axes, check_figure, check_text, assign, check_items, check_sequence,
                      check_type, check_values, math, new_figure, number, params, plain_log)

__all__ = [
    "clipping_figure",
    "algorithm1_runs",
    "llr_histogram",
    "tail_bounds_figure",
    "figure3a",
    "roc_figure",
    "outlier_figure",
    "statistic_figure",
    "exact_floor_figure",
    "conventions_figure",
    "llr_law_figure",
]

_D, _R = 12, 10.0   # the paper's dimension and clipping radius


def _fixed_figure(ncols, *, width, height, left=0.8, right=0.15, bottom=0.6, top=0.4, wspace=0.8):
    """A one-row figure with a fixed layout, margins and gaps in inches (room for a y label beside
    five-character ticks): constrained layout would double the explorers' redraw time."""
    from matplotlib.figure import Figure

    from ._common import style

    total = width * ncols
    panel = (total - left - right - wspace * (ncols - 1)) / ncols
    with style():
        fig = Figure(figsize=(total, height))
        axes = fig.subplots(1, ncols, squeeze=False)
        fig.subplots_adjust(left=left / total, right=1 - right / total, bottom=bottom / height,
                            top=1 - top / height, wspace=wspace / panel)
    return fig, axes


def _colors(k, cmap="viridis", high=0.85):
    return colormaps[cmap](np.linspace(0.0, high, max(k, 1)))


# ------------------------------------------------------------------ chapter 03


#: Range of the mean a of Λ ~ N(a, 2a) that a figure draws: its square and its density stay finite doubles.
_LAW_RANGE = (1e-150, 1e150)


def _drawable_law(s, n, gamma):
    """Lemma 6's law of Λ (``leakage.llr_moments``), refused when no axis can draw it (a or its variance beyond
    :data:`_LAW_RANGE`: an extreme noise scale or deviation), before any drawing."""
    law = leakage.llr_moments(s, n, gamma)
    a, var = np.atleast_1d(law.mean), np.atleast_1d(law.var)
    lo, hi = _LAW_RANGE
    if not (np.all(a >= lo) and np.all(a <= hi) and np.all(var >= lo) and np.all(var <= hi)):
        raise ValueError(f"s, n and gamma give the law N(a, 2a) of the membership statistic a = {a.min():.3g}..."
                         f"{a.max():.3g}: a figure draws a in [{lo:g}, {hi:g}] (change the noise scale gamma or s)")
    return law


def _check_level(level, run, name="level"):
    """None, or the index of one level of a run over a grid of levels."""
    if level is None:
        return None
    size = np.shape(run.population)[0] if np.ndim(run.population) == 3 else 0
    if size == 0:
        raise ValueError(f"{name} must be None: this run is of one level (trials x rounds); got {level!r:.30}")
    return check_int(name, level, low=-size, high=size - 1)


def clipping_figure(Z, R):
    """Records in the plane before and after ℓ2 clipping to radius ``R`` (§4.1).

    Parameters
    ----------
    Z : array_like, shape (N, 2)
        Two-dimensional records (entries in [-1e100, 1e100]).
    R : float
        Clipping radius R > 0.

    Examples
    --------
    >>> fig = clipping_figure([[3.0, 4.0], [0.1, 0.2]], 1.0)
    >>> len(fig.axes)
    1
    """
    # entries beyond 1e100 overflow the squared norms (and an axis's margins): refused by name
    Z = np.asarray(check_real("Z", Z, low=-MAX_LOG_VALUE, high=MAX_LOG_VALUE), dtype=float)
    if Z.ndim != 2 or Z.shape[1] != 2:
        raise ValueError(f"Z must be an (N, 2) array of planar records; got shape {Z.shape}")
    R = check_real("R", R, low=0, low_open=True, scalar=True)
    Zbar = gaussian.clip(Z, R)
    moved = np.hypot(Z[:, 0], Z[:, 1]) > R
    fig, axes = new_figure(1, 1, width=5.2, height=3.0)
    ax = axes[0, 0]
    angle = np.linspace(0, 2 * np.pi, 300)
    ax.plot(R * np.cos(angle), R * np.sin(angle), color="0.3", lw=1.2, label=f"radius {assign('R', R)}")
    ax.scatter(*Z[~moved].T, s=8, color="C0", alpha=0.6, label="inside: unchanged")
    ax.scatter(*Z[moved].T, s=10, color="C3", alpha=0.6, label="outside: original")
    ax.scatter(*Zbar[moved].T, s=10, color="C1", marker="x", label="outside: clipped")
    for z, zb in zip(Z[moved], Zbar[moved]):
        ax.plot([z[0], zb[0]], [z[1], zb[1]], color="C3", lw=0.5, alpha=0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("$z_1$")
    ax.set_ylabel("$z_2$")
    ax.set_title(r"$\ell_2$ clipping pulls records onto the sphere")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


def population_error(run, *, gamma, d=None, Sigma=None, title=None, fig_axes=None, color="C0",
                     label=None, trial_lines=True, level=None):
    r"""Population and squared Mahalanobis error per round of one Algorithm 1 run.

    Left: :math:`N_t` of every trial (thin) and their mean (thick). Right: the error
    averaged over the trials whose round had a release, and Lemma 3,
    :math:`(γ^{2} \mathrm{Tr} Σ^{-1} + d)/N`, at the mean population (dashed).

    Parameters
    ----------
    run : perfpriv.engine.SimulationRun
        A run of Algorithm 1 (:func:`perfpriv.gaussian.simulate`); ``level``: the level drawn of a grid.
    gamma, d, Sigma
        Noise scale and data model of the Lemma 3 line (``Sigma`` default: the identity of dimension d).
    title, fig_axes, color, label, trial_lines
        Figure title; a figure and a row of two axes to draw into; this run's line style; whether to
        draw every trial's population.
    """
    check_type(run, "run", "SimulationRun")
    level = _check_level(level, run)
    gamma = check_real("gamma", gamma, low=0, scalar=True)
    check_text("title", title, optional=True)
    check_text("label", label, optional=True)
    trial_lines = check_flag("trial_lines", trial_lines)
    if fig_axes is not None:
        parts = check_sequence("fig_axes", fig_axes)
        if len(parts) != 2 or len(check_sequence("fig_axes", parts[1])) != 2:
            raise ValueError("fig_axes must be a pair (figure, a row of two axes)")
        check_figure(parts[0], "fig_axes[0]")
        for ax in parts[1]:
            check_axes(ax, "fig_axes[1]")
    if fig_axes is None:
        fig, axes = _fixed_figure(2, width=4.0, height=3.1, top=0.5 if title else 0.3)
        ax_pop, ax_err = axes[0]
    else:
        fig, (ax_pop, ax_err) = fig_axes
    pick = (lambda x: np.asarray(x)) if level is None else (lambda x: np.asarray(x)[level])
    pop = pick(run.population).astype(float)
    if pop.ndim != 2:
        raise ValueError(f"population_error draws one level of a run (trials x rounds); this run has shape "
                         f"{pop.shape}: pass level=")
    rounds = np.arange(pop.shape[1])
    if trial_lines:
        for row in pop:
            ax_pop.plot(rounds, row, color=color, lw=0.5, alpha=0.3)
    ax_pop.plot(rounds, pop.mean(axis=0), color=color, lw=2.0, label=label)
    ax_pop.set_xlabel("round $t$")
    ax_pop.set_ylabel("population $N_t$")
    ax_pop.set_yscale("log")
    plain_log(ax_pop, x=False, y=True)
    err = pick(run.sq_error).astype(float)                   # (trials, T): release of round t
    alive = pick(run.alive).astype(bool) & np.isfinite(err)
    counts = alive.sum(axis=0)
    err_rounds = np.arange(1, err.shape[1] + 1)
    ok = counts > 0
    mean_err = np.where(alive, err, 0.0).sum(axis=0)[ok] / counts[ok]
    ax_err.plot(err_rounds[ok], mean_err, color=color, lw=1.5, label=label)
    used = pop[:, :err.shape[1]]                             # records used by the release of round t
    mean_n = np.where(alive, used, 0.0).sum(axis=0)[ok] / counts[ok]
    fine = mean_n >= 1
    if fine.any():
        kw = dict(Sigma=Sigma) if Sigma is not None else dict(d=d)
        ax_err.plot(err_rounds[ok][fine], gaussian.mahalanobis_error(gamma, mean_n[fine], **kw), color=color,
                    lw=1.0, ls="--")
    ax_err.set_xlabel("round $t$")
    ax_err.set_ylabel("squared Mahalanobis error")
    ax_err.set_yscale("log")
    plain_log(ax_err, x=False, y=True)
    if title:
        fig.suptitle(title)
    return fig


def algorithm1_runs(run):
    r"""Population and error of Algorithm 1 for several noise scales (§4.2).

    The mean population and mean squared Mahalanobis error per round, with Lemma 3 at the mean
    population (dashed), one colour per noise scale of one run (a grid of γ shares its random numbers).

    Parameters
    ----------
    run : perfpriv.engine.SimulationRun
        A run of a :class:`perfpriv.gaussian.GaussianMean` over one γ or a 1-D grid of them, for one
        cell of users (:func:`perfpriv.gaussian.simulate`).

    Raises
    ------
    TypeError
        If ``run`` is not a SimulationRun of a GaussianMean.
    ValueError
        If its levels are a schedule or its users span several cells.

    Examples
    --------
    >>> run = gaussian.simulate([0.5, 8.0], tau=0.05, q=0.5, r=0.2, T=3, n0=20, d=3, R=10.0, trials=2, seed=0)
    >>> len(algorithm1_runs(run).axes)
    2
    """
    check_type(run, "run", "SimulationRun")
    mech = run.mechanism
    gammas = engine.level_grid(mech, kind=gaussian.GaussianMean, name="run.mechanism")
    grid = mech.levels.shape != ()
    if np.ndim(run.population) != 2 + grid:
        raise ValueError(f"run must be of one cell of users (levels x trials x rounds); got a population of shape "
                         f"{np.shape(run.population)}")
    sigma = mech.options()["Sigma"]
    model = dict(d=mech.d) if sigma is None else dict(Sigma=sigma)
    fig, axes = new_figure(1, 2, width=4.0, height=3.0)
    for i, (g, color) in enumerate(zip(gammas, _colors(len(gammas), "plasma"))):
        population_error(run, gamma=float(g), **model, fig_axes=(fig, axes[0]), color=color,
                         label=assign("gamma", g), trial_lines=False, level=i if grid else None)
    axes[0, 0].legend(loc="best")
    axes[0, 1].set_title("dashed: Lemma 3 at the mean $N_t$")
    users = run.behaviour
    rates = dict(q=float(users.q), r=float(users.r)) if isinstance(users, Memoryless) and \
        np.ndim(users.q) == 0 and np.ndim(users.r) == 0 else {}
    fig.suptitle(f"Algorithm 1: {params(tau=mech.tau, **rates, d=mech.d, R=mech.R)}, "
                 f"{run.trials} trials")
    return fig


# ------------------------------------------------------------------ chapter 04


def llr_histogram(samples, s, n, gamma, *, labels=None, bins=50):
    r"""Histogram of simulated Λ for a few records against the law N(a, 2a) (Lemma 6).

    Parameters
    ----------
    samples : array_like, shape (draws, k)
        Λ of ``k`` records over independent noise draws (same dataset).
    s, n, gamma
        As in :func:`perfpriv.leakage.llr_moments`: one deviation per record (shape (k,)).
    labels : sequence of str, optional
        Panel titles.
    bins : int
        Histogram bins, 1 to 10000 (an integral float such as 10.0 is that integer).

    Examples
    --------
    >>> fig = llr_histogram(np.random.default_rng(0).normal(0.5, 1.0, (200, 1)), [3.0], 10, 1.0)
    >>> len(fig.axes)
    1
    """
    samples = np.asarray(check_real("samples", samples), dtype=float)
    if samples.ndim == 1:
        samples = samples[:, None]
    s = np.atleast_1d(check_real("s", s, low=0))
    bins = check_int("bins", bins, low=1, high=10_000)
    if samples.ndim != 2:
        raise ValueError(f"samples must be an array (draws, k) of the statistic of k records; got shape "
                         f"{samples.shape}")
    if s.shape != (samples.shape[1],):
        raise ValueError(f"s must hold one deviation per column of samples ({samples.shape[1]}); got {s.shape}")
    k = samples.shape[1]
    if labels is not None:
        labels = check_sequence("labels", labels)
        if len(labels) != k:
            raise ValueError(f"labels must hold one title per record ({k}); got {len(labels)}")
    law = _drawable_law(s, n, gamma)
    fig, axes = new_figure(1, k, width=min(3.3, 8.6 / k), height=2.8)
    mean, var = np.atleast_1d(law.mean), np.atleast_1d(law.var)
    for j in range(k):
        ax = axes[0, j]
        x = samples[:, j]
        heights = ax.hist(x, bins=bins, density=True, color="C0", alpha=0.45, label=r"simulated $\Lambda$")[0]
        sd = np.sqrt(var[j])
        grid = np.linspace(min(x.min(), mean[j] - 4 * sd), max(x.max(), mean[j] + 4 * sd), 300)
        dens = np.exp(-0.5 * (grid - mean[j]) ** 2 / var[j]) / np.sqrt(2 * np.pi * var[j])
        ax.plot(grid, dens, color="C3", lw=1.5, label=r"$\mathcal{N}(a, 2a)$")
        ax.axvline(mean[j], color="C3", lw=0.8, ls=":")
        title = labels[j] if labels is not None else f"record {j}"
        ax.set_title(f"{title}\n{assign('s', s[j], '.2f')}, {assign('a', mean[j], '.3f')}")
        ax.set_xlabel(r"$\Lambda$")
        if j == 0:
            ax.set_ylabel("density")
            # room for the legend above the curve (or above the histogram, when the curve is too narrow for
            # any grid point to reach it: a huge n makes a and its variance tiny)
            top = dens.max() if dens.max() > 0 else max(float(np.max(heights)), 1.0)
            ax.set_ylim(0, 1.5 * top)
            ax.legend(loc="upper left")
    return fig


def tail_bounds_figure(s, n, gamma, *, taus=None, alphas=(1.5, 2.0, 4.0), samples=None):
    r"""Exact leak probability (Lemma 7) against the Rényi bounds (Lemma 5, eq. 10) across τ.

    Parameters
    ----------
    s, n, gamma
        The record's deviation :math:`\|\bar z - μ_{\bar z}\| > 0`, the dataset size (>= 2) and the
        noise scale, as in :func:`perfpriv.leakage.leak_probability`.
    taus : array_like, optional
        Thresholds (default: 200 values from a/20 to :math:`a + 8\sqrt{2a}`).
    alphas : sequence of float
        Fixed Rényi orders α > 1 drawn as thin lines.
    samples : array_like, optional
        Simulated Λ of the record; their empirical tail is drawn as dots.

    Examples
    --------
    >>> fig = tail_bounds_figure(1.0, 10, 1.0)
    >>> len(fig.axes)
    1
    """
    s = check_real("s", s, low=0, low_open=True, scalar=True)
    a = float(_drawable_law(s, n, gamma).mean)
    if samples is not None:
        samples = np.asarray(check_real("samples", samples), dtype=float)
        if samples.size == 0:
            raise ValueError("samples must hold at least one draw; got none")
    if taus is None:
        taus = np.linspace(a / 20, a + 8 * np.sqrt(2 * a), 200)
    taus = np.atleast_1d(np.asarray(check_real("taus", taus, low=0, low_open=True), dtype=float))
    alphas = np.atleast_1d(np.asarray(check_real("alphas", alphas, low=1, low_open=True), dtype=float))
    if taus.ndim != 1 or alphas.ndim != 1:
        raise ValueError(f"taus and alphas must be numbers or 1-D grids; got shapes {taus.shape} and {alphas.shape}")
    exact = leakage.leak_probability(s, n, gamma, tau=taus)
    best = leakage.renyi_tail_bound(s, n, gamma, tau=taus)
    fig, axes = new_figure(1, 1, width=5.6, height=3.6)
    ax = axes[0, 0]
    ax.axvspan(taus.min(), a, color="0.85", alpha=0.6, lw=0, label=r"$\tau \leq a$: eq. 10 does not apply")
    for alpha, color in zip(alphas, _colors(len(alphas), "cividis", 0.6)):
        ax.plot(taus, leakage.renyi_tail_bound(s, n, gamma, tau=taus, alpha=alpha), color=color, lw=0.8,
                ls="--", label=f"Lemma 5, {assign('alpha', alpha)}")
    ax.plot(taus, np.maximum(best, 1e-300), color="C1", lw=2.0, label="optimized bound (eq. 10)")
    ax.plot(taus, np.maximum(exact, 1e-300), color="C0", lw=2.0, label="exact tail (Lemma 7)")
    if samples is not None:
        x = np.sort(np.asarray(samples, dtype=float).ravel())
        pts = taus[:: max(1, len(taus) // 25)]
        emp = 1.0 - np.searchsorted(x, pts, side="right") / x.size
        keep = emp > 0
        ax.plot(pts[keep], emp[keep], "o", color="C0", ms=3.5, label=f"simulated ({x.size} draws)")
    ax.set_yscale("log")
    ax.set_ylim(max(1e-6, float(np.min(exact[exact > 0])) / 3) if np.any(exact > 0) else 1e-6, 1.5)
    ax.set_xlabel(r"threshold $\tau$")
    ax.set_ylabel(r"$P(\Lambda > \tau \mid Z)$")
    ax.set_title(f"{params(n=int(n), gamma=gamma)}, {assign('s', s, '.2f')} ({assign('a', a, '.3f')})")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


def figure3a(simulated):
    """Fig. 3a: marginal leak probability :math:`p_τ` against τ, theory and simulation.

    Theory: Lemma 8 (eq. 11) on a dense grid of τ
    (:meth:`perfpriv.experiments.LeakFractions.theory_at`). Simulation: the result's leak fractions
    ± 2 standard errors over rounds.

    Parameters
    ----------
    simulated : perfpriv.experiments.LeakFractions
        A result of :func:`perfpriv.experiments.figure3a_simulation`.

    Raises
    ------
    TypeError
        If ``simulated`` is not a LeakFractions.

    Examples
    --------
    >>> from perfpriv import experiments
    >>> sim = experiments.figure3a_simulation(gaussian.GaussianMean([0.5, 2.0], tau=0.05, d=12, R=10.0), 50,
    ...                                       [0.05, 0.5], rounds=5)
    >>> len(figure3a(sim).axes)
    1
    """
    sim = check_type(simulated, "simulated", "LeakFractions")
    statistic = sim.settings["statistic"]
    dense = np.linspace(min(sim.taus.min(), 0.005), sim.taus.max(), 200)
    theory = sim.theory_at(dense)
    fig, axes = new_figure(1, 1, width=5.6, height=3.8)
    ax = axes[0, 0]
    for i, (g, color) in enumerate(zip(sim.gammas, _colors(len(sim.gammas), "Blues_r", 0.65))):
        ax.plot(dense, theory[i], color=color, lw=1.8, label=assign("gamma", g))
        ax.errorbar(sim.taus, sim.p[i], yerr=2 * sim.se[i], fmt="o", ms=3.5, color=color, mfc="white", capsize=2)
    ax.plot([], [], "o", color="0.4", mfc="white", ms=3.5, label=f"simulated ({sim.rounds} rounds)")
    ax.plot([], [], color="0.4", lw=1.8, label="theory (Lemma 8, eq. 11)")
    ax.set_xlabel(r"threshold $\tau$")
    ax.set_ylabel(r"marginal leak probability $p_\tau$")
    model = sim.settings["mechanism"].options()
    data = r"$\mu = 0$, $\Sigma = I$" if model["mu"] is None and model["Sigma"] is None else \
        r"given $\mu$, $\Sigma$"
    ax.set_title(f"Fig. 3a: {params(n=sim.n, d=sim.settings['d'], R=sim.settings['R'])}, "
                 + data + f" ({statistic} statistic)")
    ax.legend(loc="upper right")
    return fig


def roc_figure(mus, *, empirical=None, labels=None, fpr=None):
    """ROC curves of the optimal membership test at several Gaussian-DP levels (Remark 1).

    Parameters
    ----------
    mus : sequence of float
        Per-record Gaussian-DP parameters μ' (:func:`perfpriv.leakage.gdp_mu`).
    empirical : list of tuple, optional
        Simulated operating points, one pair of arrays (false-positive
        rates, true-positive rates) per μ'.
    labels : sequence of str, optional
        Legend labels (default ``μ' = ...``).
    fpr : array_like, optional
        False-positive rates of the theory curves.

    Examples
    --------
    >>> fig = roc_figure([0.5, 1.0])
    >>> len(fig.axes)
    2
    """
    mus = np.atleast_1d(check_real("mus", mus, low=0))
    if labels is not None:
        labels = check_sequence("labels", labels)
        if not all(isinstance(label, str) for label in labels):
            raise TypeError(f"labels must hold one string per mu; got {labels!r:.60}")
        if len(labels) != mus.size:
            raise ValueError(f"labels must hold one label per mu ({mus.size}); got {len(labels)}")
    if empirical is not None:
        empirical = check_sequence("empirical", empirical)
        if len(empirical) != mus.size:
            raise ValueError(f"empirical must hold one (fpr, tpr) pair per mu ({mus.size}); got {len(empirical)}")
        for pair in empirical:
            pair = check_sequence("each entry of empirical", pair)
            if len(pair) != 2 or np.shape(check_real("empirical", pair[0], low=0, high=1)) != \
                    np.shape(check_real("empirical", pair[1], low=0, high=1)):
                raise ValueError("each entry of empirical must be a pair (fpr, tpr) of arrays of one shape, in [0, 1]")
    if fpr is None:
        fpr = np.geomspace(1e-4, 1 - 1e-4, 300)
    fig, axes = new_figure(1, 2, width=3.6, height=3.3)
    for i, (m, color) in enumerate(zip(mus, _colors(len(mus), "magma", 0.7))):
        label = labels[i] if labels is not None else assign(r"\mu'", m, ".2f")
        tpr = leakage.roc_curve(m, fpr)
        for ax in axes[0]:
            ax.plot(fpr, tpr, color=color, lw=1.6, label=label)
            if empirical is not None:
                ax.plot(*empirical[i], "o", color=color, ms=3.5, mfc="white")
    for ax in axes[0]:
        ax.plot(fpr, fpr, color="0.5", lw=0.8, ls=":")
        ax.set_xlabel(r"false-positive rate $\nu$")
    axes[0, 0].set_ylabel("true-positive rate (power)")
    axes[0, 0].set_title("linear axes")
    axes[0, 1].set_xscale("log")
    axes[0, 1].set_yscale("log")
    axes[0, 1].set_ylim(1e-4, 1.2)
    axes[0, 1].set_title("log axes (low-FPR regime)")
    axes[0, 0].legend(loc="lower right")
    if empirical is not None:
        axes[0, 1].plot([], [], "o", color="0.4", mfc="white", ms=3.5, label="simulated")
        axes[0, 1].legend(loc="lower right")
    return fig


def outlier_figure(s, leaked, n, gamma, *, tau, bins=12, statistic="paper", d=None):
    r"""Which records leak: empirical leak frequency against :math:`\|\bar z - μ_{\bar z}\|`, with Lemma 7.

    Parameters
    ----------
    s : array_like
        Deviations of simulated records (pooled over rounds).
    leaked : array_like of bool
        Whether each of them leaked (Λ > τ).
    n, gamma, tau, statistic, d
        The simulation's setting, for the theory curve (:func:`perfpriv.leakage.leak_probability`).
    bins : int
        Number of bins of ``s`` (equal counts).
    """
    s = np.asarray(check_real("s", s, low=0), dtype=float).ravel()
    try:
        leaked = np.asarray(leaked, dtype=bool).ravel()
    except ValueError:          # a ragged list: numpy's "setting an array element with a sequence"
        raise ValueError(f"leaked must be an array of booleans, one per record; got {leaked!r:.60}") from None
    if s.shape != leaked.shape:
        raise ValueError(f"s and leaked must have the same length; got {s.size} and {leaked.size}")
    bins = check_int("bins", bins, low=1, high=max(1, s.size // 2))      # at least two records a bin
    edges = np.quantile(s, np.linspace(0, 1, bins + 1))
    idx = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, bins - 1)
    centers = np.array([s[idx == b].mean() for b in range(bins)])
    freq = np.array([leaked[idx == b].mean() for b in range(bins)])
    count = np.array([(idx == b).sum() for b in range(bins)])
    se = np.sqrt(freq * (1 - freq) / count)
    grid = np.linspace(max(1e-3, s.min()), s.max(), 300)
    fig, axes = new_figure(1, 1, width=5.6, height=3.6)
    ax = axes[0, 0]
    twin = ax.twinx()
    twin.hist(s, bins=40, color="0.8", alpha=0.7)
    twin.set_ylabel("records (histogram)", color="0.5")
    twin.grid(False)
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    ax.plot(grid, leakage.leak_probability(grid, n, gamma, tau=tau, statistic=statistic, d=d), color="C3", lw=1.8,
            label=r"Lemma 7: $P(\Lambda > \tau \mid s)$")
    ax.errorbar(centers, freq, yerr=2 * se, fmt="o", color="C0", ms=4, capsize=2,
                label="simulated leak frequency (±2 s.e.)")
    ax.set_xlabel("distance to the average $s = \\|\\bar z - \\mu_{\\bar z}\\|$")
    ax.set_ylabel("leak probability")
    ax.set_ylim(0, 1)
    ax.set_title(params(n=int(n), gamma=gamma, tau=tau))
    ax.legend(loc="upper left")
    return fig


def statistic_figure(gammas, *, n=1000, tau=0.02, d=_D, R=_R, populations=None, run_gamma=None, q=None, r=None):
    """The two membership statistics at the paper's settings.

    Left: :math:`p_τ` against γ for ``"paper"`` (Lemma 6) and ``"exact"`` (remove-one
    ratio), by quadrature, and their difference. Right (if ``populations``
    is given): mean population per round of Algorithm 1 under each
    statistic.

    Parameters
    ----------
    gammas, n, tau, d, R
        Noise scales of the left panel and the setting, as in
        :func:`perfpriv.leakage.marginal_leak_probability`.
    populations : dict, optional
        Simulated populations of Algorithm 1 keyed by statistic (``"paper"`` and ``"exact"``), each
        (trials, T + 1).
    run_gamma, q, r : float, optional
        γ and users of the simulated populations; given all three, the mean-field trajectories of
        :func:`perfpriv.engine.mean_field` are drawn (dotted).

    Examples
    --------
    >>> fig = statistic_figure([0.5, 1.0, 2.0])
    >>> len(fig.axes)
    2
    """
    gammas = np.atleast_1d(check_real("gammas", gammas, low=0, low_open=True, high=MAX_LOG_VALUE))   # a log axis
    p = {st: leakage.marginal_leak_probability(n, gammas, tau=tau, d=d, R=R, statistic=st).p
         for st in leakage.STATISTICS}
    if populations is not None:
        if not isinstance(populations, dict) or set(populations) != set(leakage.STATISTICS):
            raise TypeError(f"populations must be a dict with keys {leakage.STATISTICS} of simulated population "
                            f"arrays (runs, rounds); got {populations!r:.60}")
        populations = {st: np.asarray(check_real(f"populations[{st!r}]", pop, low=0), dtype=float)
                       for st, pop in populations.items()}
        if any(pop.ndim != 2 or pop.size == 0 for pop in populations.values()):
            raise ValueError(f"populations must hold non-empty arrays of shape (runs, rounds); got shapes "
                             f"{[pop.shape for pop in populations.values()]}")
    ncols = 2 if populations is not None else 1
    fig, axes = new_figure(1, ncols + 1, width=8.6 / (ncols + 1), height=3.2)
    ax = axes[0, 0]
    ax.plot(gammas, p["paper"], color="C0", lw=1.8, label="paper (Lemma 6)")
    ax.plot(gammas, p["exact"], color="C1", lw=1.8, ls="--", label="exact remove-one")
    ax.set_xscale("log")
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel(r"$p_\tau$")
    plain_log(ax)
    ax.set_title(params(n=n, tau=tau, d=d))
    ax.legend(loc="lower left")
    ax = axes[0, 1]
    ax.plot(gammas, p["exact"] - p["paper"], color="C2", lw=1.8)
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xscale("log")
    plain_log(ax)
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel(r"$p_\tau^{\mathrm{exact}} - p_\tau^{\mathrm{paper}}$")
    ax.set_title("difference")
    if populations is not None:
        ax = axes[0, 2]
        for st, color, ls in (("paper", "C0", "-"), ("exact", "C1", "--")):
            pop = np.asarray(populations[st], dtype=float)
            ax.plot(np.arange(pop.shape[1]), pop.mean(axis=0), color=color, ls=ls, lw=1.8, label=f"{st}, simulated")
            if run_gamma is not None and q is not None and r is not None:
                mf = engine.mean_field(gaussian.GaussianMean(run_gamma, tau=tau, d=d, R=R, statistic=st),
                                       Memoryless(q=q, r=r), T=pop.shape[1] - 1, n0=int(pop[0, 0])).population
                ax.plot(np.arange(pop.shape[1]), mf, color=color, ls=":", lw=1.2, label=f"{st}, mean field")
        ax.set_xlabel("round $t$")
        ax.set_ylabel("mean population $N_t$")
        ax.set_title("Algorithm 1" + (f", {assign('gamma', run_gamma)}" if run_gamma is not None else ""))
        ax.legend(loc="best")
    return fig


def exact_floor_figure(check=None, *, ns=(100, 1000), tau=0.02, d=_D, R=_R, gammas=None, taus=(0.01, 0.02, 0.05)):
    """The exact statistic at small populations: :math:`p_τ` against γ, and the leak floor against N.

    Left: Lemma 8's :math:`p_τ` against γ under both statistics (the exact one dashed in black), at
    each population of ``ns``, with the floor :func:`perfpriv.leakage.exact_leak_floor` (dotted) that
    the exact statistic's :math:`p_τ` tends to as γ → ∞. Right: the floor against N for several τ, the
    population :math:`1/(1 - e^{-2τ/d})` where it vanishes (vertical, up to about 1e100), and the
    simulated leak fractions of ``check`` ± 2 standard errors.

    Parameters
    ----------
    check : perfpriv.experiments.ExactFloorCheck, optional
        :func:`perfpriv.experiments.exact_floor_check`; its τ values and d replace ``taus`` and ``d``.
    ns, tau, gammas
        Populations (N >= 2), threshold and noise scales (default 0.2 to 1000) of the left panel.
    d, R : int, float
        Dimension and clipping radius.
    taus : sequence of float
        Thresholds τ > 0 of the right panel.

    Raises
    ------
    TypeError
        If ``check`` is not an ExactFloorCheck.
    ValueError
        If a population, threshold or noise scale is out of range.

    Examples
    --------
    >>> fig = exact_floor_figure(ns=(100,), gammas=[1.0, 10.0, 100.0])
    >>> len(fig.axes)
    2
    """
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    gammas = np.geomspace(0.2, 1000.0, 60) if gammas is None else np.atleast_1d(
        check_real("gammas", gammas, low=0, low_open=True))
    ns = check_int_array("ns", check_values("ns", ns, low=2), low=2)
    if check is not None:
        taus, d = check_type(check, "check", "ExactFloorCheck").taus, check.settings["d"]
    taus = check_values("taus", taus, low=0, low_open=True)
    fig, axes = new_figure(1, 2, width=4.3, height=3.3)
    ax = axes[0, 0]
    for n, color in zip(ns, _colors(len(ns), "viridis", 0.6)):
        for st, ls, lw in (("paper", "-", 2.4), ("exact", (0, (3, 2)), 1.3)):
            p = leakage.marginal_leak_probability(int(n), gammas, tau=tau, d=d, R=R, statistic=st).p
            ax.plot(gammas, p, color=color if st == "paper" else "black", ls=ls, lw=lw, alpha=0.8)
        floor = float(leakage.exact_leak_floor(int(n), d=d, tau=tau))
        if floor > 0:
            ax.axhline(floor, color=color, ls=":", lw=1.2)
        ax.plot([], [], color=color, lw=6, alpha=0.6, label=assign("N", int(n)))
    ax.plot([], [], color="0.3", ls="-", lw=2.4, label="paper statistic")
    ax.plot([], [], color="black", ls=(0, (3, 2)), lw=1.3, label="exact statistic")
    ax.plot([], [], color="0.3", ls=":", label=r"exact floor ($\gamma \to \infty$)")
    ax.set_xscale("log")
    plain_log(ax)
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel(r"marginal leak probability $p_\tau$")
    ax.set_title(params(tau=tau, d=d))
    ax.legend(loc="upper right")
    ax = axes[0, 1]
    n_grid = np.unique(np.round(np.geomspace(2, 2000, 300)))
    for j, (t, color) in enumerate(zip(taus, _colors(len(taus), "plasma", 0.8))):
        ax.plot(n_grid, leakage.exact_leak_floor(n_grid, d=d, tau=t), color=color, lw=1.8, label=assign("tau", t))
        if 2.0 * t / d >= 1.0 / MAX_LOG_VALUE:       # else N beyond what a log axis draws
            ax.axvline(-1.0 / np.expm1(-2.0 * t / d), color=color, lw=0.8, ls=":")     # 1/(1 - e^{-2τ/d})
        if check is not None:
            ax.errorbar(check.ns, check.p[j], yerr=2 * check.se[j], fmt="o", ms=3.5, color=color, mfc="white",
                        capsize=2)
    if check is not None:
        ax.plot([], [], "o", color="0.4", mfc="white", ms=3.5,
                label=f"simulated, {assign('gamma', check.gamma, '.0e')}")
    ax.set_xscale("log")
    plain_log(ax)
    ax.set_xlabel("population $N$")
    ax.set_ylabel(r"exact floor: $p_\tau$ as $\gamma \to \infty$")
    ax.set_title(r"dotted: $N = 1/(1 - e^{-2\tau/d})$")
    ax.legend(loc="upper right")
    return fig


def conventions_figure(runs, *, gamma, d=None, Sigma=None, title=None, level=None):
    """Algorithm 1 runs side by side: mean population and error per round, one colour per run.

    The panels of :func:`algorithm1_runs` for every run (rounds after a stopped trial are left out
    of the error's average), e.g. one cell simulated with ``conventions="paper"`` and ``"authors"``.

    Parameters
    ----------
    runs : dict of str to perfpriv.engine.SimulationRun
        Runs keyed by their label (at most 4).
    gamma, d, Sigma, title
        As in :func:`population_error` (one Lemma 3 line per run).
    level : int, optional
        For runs over a grid of levels: which one to draw (the one of ``gamma``).
    """
    items = check_items("runs", runs, "SimulationRun", mapping=True)
    if len(items) > 4:
        raise ValueError(f"runs must hold at most 4 runs (one colour each); got {len(items)}")
    for _, run in items:
        _check_level(level, run)
    gamma = check_real("gamma", gamma, low=0, scalar=True)
    check_text("title", title, optional=True)
    fig, axes = new_figure(1, 2, width=4.0, height=3.0)
    for (label, run), color in zip(runs.items(), ("C0", "C1", "C2", "C3")):
        population_error(run, gamma=gamma, d=d, Sigma=Sigma, fig_axes=(fig, axes[0]), color=color, label=label,
                         trial_lines=True, level=level)
    axes[0, 0].legend(loc="best")
    axes[0, 1].set_title("dashed: Lemma 3 at the mean $N_t$")
    if title:
        fig.suptitle(title)
    return fig


def llr_law_figure(s, n, gamma, *, tau, taus=None):
    r"""The law of Λ for one record (Lemma 6) with its tail above τ, and the tail against τ.

    Left: density of N(a, 2a) with the area above τ shaded (= Lemma 7).
    Right: exact tail and optimized Rényi bound (eq. 10) against τ, with the
    current τ marked. Used by :func:`perfpriv.widgets.llr_explorer`.

    Parameters
    ----------
    s, n, gamma, tau
        As in :func:`tail_bounds_figure`; ``tau`` the threshold (:func:`perfpriv.leakage.leak_probability`).
    taus : array_like, optional
        τ grid of the right panel.

    Examples
    --------
    >>> fig = llr_law_figure(3.0, 10, 1.0, tau=0.5)
    >>> len(fig.axes)
    2
    """
    s = check_real("s", s, low=0, low_open=True, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, high=_LAW_RANGE[1], scalar=True)
    law = _drawable_law(s, n, gamma)
    a, var = float(law.mean), float(law.var)
    sd = np.sqrt(var)
    exact = float(leakage.leak_probability(s, n, gamma, tau=tau))
    bound = float(leakage.renyi_tail_bound(s, n, gamma, tau=tau))
    fig, axes = _fixed_figure(2, width=3.8, height=3.0)
    ax = axes[0, 0]
    lo, hi = min(a - 4 * sd, tau - sd), max(a + 4 * sd, tau + sd)
    x = np.linspace(lo, hi, 400)
    dens = np.exp(-0.5 * (x - a) ** 2 / var) / np.sqrt(2 * np.pi * var)
    ax.plot(x, dens, color="C0", lw=1.6)
    ax.fill_between(x, 0, dens, where=x > tau, color="C3", alpha=0.4, label=assign(r"P(\Lambda > \tau)", exact))
    ax.axvline(tau, color="C3", lw=1.0)
    ax.axvline(a, color="0.4", lw=0.8, ls=":")
    ax.set_xlabel(r"$\Lambda$")
    ax.set_ylabel("density")
    ax.set_title(math(r"\Lambda \mid Z \sim \mathcal{N}(a, 2a)") + ", " + assign("a", a))
    ax.legend(loc="upper left")
    ax = axes[0, 1]
    if taus is None:
        taus = np.linspace(max(1e-4, tau / 50), max(3 * tau, a + 6 * sd), 200)
    floor = 1e-12   # zeros cannot be drawn on a log axis
    ax.set_ylim(1e-8, 2)
    ax.set_yscale("log")
    ax.plot(taus, np.maximum(leakage.leak_probability(s, n, gamma, tau=taus), floor), color="C0", lw=1.6,
            label=f"exact (Lemma 7): ${number(exact)}$")
    ax.plot(taus, np.maximum(leakage.renyi_tail_bound(s, n, gamma, tau=taus), floor), color="C1", lw=1.6, ls="--",
            label=f"Rényi bound (eq. 10): ${number(bound)}$")
    ax.axvline(tau, color="C3", lw=1.0)
    ax.axvline(a, color="0.4", lw=0.8, ls=":")
    ax.set_xlabel(r"threshold $\tau$")
    ax.set_title(r"tail above the threshold (values at $\tau$)")
    ax.legend(loc="lower left")
    return fig
