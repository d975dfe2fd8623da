"""Figures of the Bernoulli warm-up (paper §3, Figs. 1-2) and of the agnostic model (appendix B, Figs. 6-7).

Every function returns a :class:`matplotlib.figure.Figure` built with
:func:`perfpriv.plots.new_figure` and never calls ``plt.show``. The
experiments behind a figure are run by :mod:`perfpriv.bernoulli` and
:mod:`perfpriv.optimize`; a figure function either receives their result
(so that a chapter can compute once, check its claims on the numbers and then
draw them) or runs them itself from size arguments.

Sizes default to the book's scale, which draws each figure in a few seconds.
``scale="paper"`` switches every default to the settings of the paper (its
text, and for Figs. 2 and 7 the authors' published code); explicit keyword
arguments override either.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.cm import ScalarMappable
from matplotlib.patches import Patch
from matplotlib.ticker import NullLocator

from .. import bernoulli, experiments, optimize
from ..behaviour import Memoryless
from .._validate import check_choice, check_flag, check_int, check_probability, check_real, interval_text
from ._common import (MAX_LOG_VALUE, check_axes, check_items, check_seed, check_sequence, check_settings,
                      check_text, check_type, check_values, new_figure, params)

__all__ = [
    "CURVE_SCALES",
    "MAP_SCALES",
    "figure1",
    "figure2",
    "figure6",
    "figure7",
    "growth_factor_figure",
    "final_error_figure",
    "epsilon_star_map",
]

_INF_COLOR = (0.80, 0.10, 0.10, 1.0)   # the non-private baseline, as in the paper
_CMAP = "viridis"

#: Default sizes of the population/error curves (Figs. 1 and 6).
#: ``"book"`` runs in about a second; ``"paper"`` follows the paper's text
#: (10 values of epsilon, 30 trials, window 15) with the horizon of the
#: authors' code; ``"code"`` is the authors' published script
#: (epsilon in {0.01, 0.1, 1, 5}, 50 trials, window 10).
CURVE_SCALES = {
    "book": dict(T=100, n0=400, trials=30, window=15,
                 epsilons=tuple(np.geomspace(0.01, 5.0, 10)) + (np.inf,)),
    "paper": dict(T=200, n0=400, trials=30, window=15,
                  epsilons=tuple(np.geomspace(0.01, 5.0, 10)) + (np.inf,)),
    "code": dict(T=200, n0=400, trials=50, window=10,
                 epsilons=(0.01, 0.1, 1.0, 5.0)),
}

#: Default sizes of the epsilon* maps (Figs. 2 and 7). ``"paper"`` is the
#: authors' published code: a 30 x 30 grid of (q, r) in [0.01, 0.99],
#: 30 values of epsilon in [0.01, 20] (no infinity), 10 trials, T = 200.
MAP_SCALES = {
    "book": dict(T=100, n0=400, trials=30, grid=np.linspace(0.05, 0.95, 12),
                 epsilons=tuple(np.geomspace(0.01, 20.0, 10)) + (np.inf,)),
    "paper": dict(T=200, n0=400, trials=10, grid=np.linspace(0.01, 0.99, 30),
                  epsilons=tuple(np.geomspace(0.01, 20.0, 30))),
}


def _sizes(table, scale, **given):
    check_choice("scale", scale, tuple(table))
    sizes = dict(table[scale])
    sizes.update({k: v for k, v in given.items() if v is not None})
    return sizes


#: Finite privacy budgets the figures of this module draw: below 1e-100 the randomized response's squared
#: errors overflow (their moving averages and error bars are inf - inf); above :data:`MAX_LOG_VALUE` the log
#: colour scale and the log ε axis overflow.
_EPSILON_RANGE = (1e-100, MAX_LOG_VALUE)


def _check_epsilons(epsilons):
    r"""Budgets a figure draws: a number or a 1-D sequence, each inf or in :math:`_\mathrm{EPSILON}_{\mathrm{RANGE}}`, as a float array."""
    eps = check_values("epsilons", epsilons, low=0, low_open=True, allow_inf=True)
    finite = eps[np.isfinite(eps)]
    lo, hi = _EPSILON_RANGE
    outside = finite[(finite < lo) | (finite > hi)]
    if outside.size:
        more = f" and {outside.size - 1} more outside" if outside.size > 1 else ""
        raise ValueError(f"epsilons must be inf or in {interval_text(lo, hi)} (the budgets a figure can draw); "
                         f"got {outside[0]:.3g}{more}")
    return eps


def _epsilon_norm(epsilons):
    eps = np.asarray(epsilons, dtype=float)
    finite = eps[np.isfinite(eps)]
    if finite.size == 0:
        return LogNorm(vmin=0.01, vmax=20.0)
    lo, hi = float(finite.min()), float(finite.max())
    if hi <= lo:
        lo, hi = lo / 2.0, hi * 2.0
    return LogNorm(vmin=lo, vmax=hi)


def _epsilon_color(value, norm):
    import matplotlib

    if not np.isfinite(value):
        return _INF_COLOR
    return matplotlib.colormaps[_CMAP](norm(value) * 0.92)


def _panel_letter(k: int) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[k] if k < 26 else str(k + 1)


# --------------------------------------------------------------------------
# Figs. 1 and 6: squared error and population against the round
# --------------------------------------------------------------------------

def _curves(results, settings, *, rule, scale, T, n0, trials, window, epsilons, cap, mu, conventions, seed, title):
    sizes = _sizes(CURVE_SCALES, scale, T=T, n0=n0, trials=trials, window=window, epsilons=epsilons)
    check_int("window", sizes["window"], low=1)
    eps = _check_epsilons(sizes["epsilons"])
    settings = check_settings("settings", settings)
    seed = check_seed(seed)
    if results is None:
        results = [
            bernoulli.simulate(eps, q=q, r=r, T=sizes["T"], n0=sizes["n0"], trials=sizes["trials"], rule=rule,
                               mu=mu, seed=None if seed is None else seed + k,
                               **bernoulli.curve_script_options(conventions, cap=cap))
            for k, (q, r) in enumerate(settings)
        ]
    else:
        results = check_items("results", results, "SimulationRun")
        if len(results) != len(settings):
            raise ValueError(f"results must hold one simulation per (q, r) setting ({len(settings)}); "
                             f"got {len(results)}")
        # sizes of the given runs (the title must describe what is drawn)
        first = results[0]
        eps = np.atleast_1d(np.asarray(first.level, dtype=float))
        pop = np.asarray(first.population)
        sizes.update(T=pop.shape[-1] - 1, trials=pop.shape[-2], n0=int(pop[..., 0].flat[0]))
    norm = _epsilon_norm(eps)
    fig, axes = new_figure(len(settings), 2, width=4.1, height=2.9)
    for row, ((q, r), res) in enumerate(zip(settings, results)):
        # moving average (over rounds) of the mean (over trials) squared error, rounds 1..T
        err_mean = np.atleast_2d(np.asarray(res.moving_average(window=sizes["window"]), dtype=float))
        pop_mean = np.atleast_2d(np.asarray(res.mean_population, dtype=float))   # rounds 0..T
        rounds = np.arange(pop_mean.shape[-1])
        err_rounds = np.arange(1, err_mean.shape[-1] + 1)
        ax_err, ax_pop = axes[row]
        for k, value in enumerate(eps):
            color = _epsilon_color(value, norm)
            lw = 1.8 if not np.isfinite(value) else 1.2
            ax_err.plot(err_rounds, err_mean[k], color=color, lw=lw)
            ax_pop.plot(rounds, pop_mean[k], color=color, lw=lw)
        ax_err.set_yscale("log")
        ax_err.set_xlabel("round $t$")
        ax_err.set_ylabel(f"squared error (moving avg., {sizes['window']})")
        ax_err.set_title(f"({_panel_letter(2 * row)}) error, {params(q=q, r=r)}")
        ax_pop.set_xlabel("round $t$")
        ax_pop.set_ylabel("mean population $N_t$")
        ax_pop.set_yscale("log")
        ax_pop.set_title(f"({_panel_letter(2 * row + 1)}) population, {params(q=q, r=r)}")
        for ax in (ax_err, ax_pop):
            ax.yaxis.set_minor_locator(NullLocator())   # unlabelled minor log ticks: clutter, slow
        # the colour key: finite budgets on the bar, no privacy (red) as the bar's end above them
        has_inf = bool(np.isinf(eps).any())
        import matplotlib

        cmap = matplotlib.colormaps[_CMAP].with_extremes(over=_INF_COLOR) if has_inf else _CMAP
        mappable = ScalarMappable(norm=norm, cmap=cmap)
        cbar = fig.colorbar(mappable, ax=axes[row].tolist(), location="right", pad=0.01, shrink=0.9,
                            extend="max" if has_inf else "neither", extendfrac=0.1)
        cbar.set_label(r"$\varepsilon$")
        if has_inf:
            cbar.ax.text(0.5, 1.13, r"$\infty$", transform=cbar.ax.transAxes, ha="center", va="bottom",
                         color=_INF_COLOR)
    fig.suptitle(f"{title}: {sizes['trials']} trials, {params(n0=sizes['n0'], T=sizes['T'])}")
    return fig


def figure1(results=None, *, settings=((0.6, 0.3), (0.3, 0.6)), scale="book", T=None, n0=None,
            trials=None, window=None, epsilons=None, cap=20000, mu=(0.0, 1.0), conventions="paper", seed=0):
    r"""Fig. 1 of the paper: moving-averaged squared error and population against the round.

    One row per ``(q, r)`` setting (the paper's (0.6, 0.3) then (0.3, 0.6)):
    the left panel is the squared error of the unbiased estimator (eq. 1)
    averaged over a moving window and over trials, the right panel the mean
    population :math:`N_t`. Finite privacy levels are coloured on a log scale (colour
    bar); epsilon = inf, the non-private baseline, is red (the top end of the bar).

    Parameters
    ----------
    results : sequence of perfpriv.engine.SimulationRun, optional
        One :func:`perfpriv.bernoulli.simulate` result per setting, run over
        the grid ``epsilons``. If omitted they are simulated here.
    settings : sequence of (q, r)
        Leaving rate q and recruiting rate r of each row (probabilities).
    scale : {"book", "paper", "code"}
        Default sizes (:data:`CURVE_SCALES`); explicit arguments override them.
    T, n0, trials, window : int, optional
        Horizon T, initial population :math:`N_0`, number of trials, moving-average window.
    epsilons : sequence of float, optional
        Privacy levels: ``np.inf`` or finite values in [1e-100, 1e100] (below, the squared errors
        overflow; above, the log colour scale).
    cap : int
        Upper bound on the population (20000 in the paper).
    mu : (float, float)
        :math:`\mu_t` is drawn uniformly on this interval each round.
    conventions : {"paper", "authors"}
        Of the simulations: ``"authors"`` follows the authors' curve script (floor 1, no stop,
        clipped estimates; :func:`perfpriv.bernoulli.curve_script_options`).
    seed : int >= 0 or None
        Row k uses ``seed + k``.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``results`` or ``settings`` is not a sequence, or an entry of ``results`` not a simulation run.
    ValueError
        If an entry of ``settings`` is not a pair (q, r) of probabilities, ``results`` does not hold one
        run per setting, or a size, budget or seed is out of range.

    References
    ----------
    Paper, §3 "Empirical simulation" and Fig. 1.

    Examples
    --------
    >>> fig = figure1(T=5, trials=2, epsilons=[0.5, np.inf])
    >>> len(fig.axes) >= 4
    True
    """
    return _curves(results, settings, rule="leak", scale=scale, T=T, n0=n0, trials=trials,
                   window=window, epsilons=epsilons, cap=cap, mu=mu, conventions=conventions, seed=seed,
                   title="Leak model (Fig. 1)")


def figure6(results=None, *, settings=((0.6, 0.3), (0.3, 0.6)), scale="book", T=None, n0=None,
            trials=None, window=None, epsilons=None, cap=20000, mu=(0.0, 1.0), conventions="paper", seed=0):
    """Fig. 6 of the paper: the panels of :func:`figure1` under the agnostic growth rule.

    Parameters (and the errors raised) are those of :func:`figure1`; the simulations use
    ``rule="agnostic"`` (every participant recruits with probability r).

    Returns
    -------
    matplotlib.figure.Figure

    References
    ----------
    Paper, appendix B and Fig. 6.

    Examples
    --------
    >>> fig = figure6(T=5, trials=2, epsilons=[0.5, np.inf])
    >>> len(fig.axes) >= 4
    True
    """
    return _curves(results, settings, rule="agnostic", scale=scale, T=T, n0=n0, trials=trials,
                   window=window, epsilons=epsilons, cap=cap, mu=mu, conventions=conventions, seed=seed,
                   title="Agnostic model (Fig. 6)")


# --------------------------------------------------------------------------
# Figs. 2 and 7: the optimal privacy budget over the (r, q) square
# --------------------------------------------------------------------------

def _map_result(result, *, rule, scale, T, n0, trials, grid, epsilons, mu, conventions, seed):
    """Run (or take) :func:`perfpriv.optimize.optimal_epsilon` over a (q, r) grid; the result and its 1-D grid."""
    sizes = _sizes(MAP_SCALES, scale, T=T, n0=n0, trials=trials, grid=grid, epsilons=epsilons)
    g = check_values("grid", sizes["grid"], low=0, high=1)     # the values of q and of r
    if result is not None:
        shape = np.shape(check_type(result, "result", "EpsilonOptimum").epsilon)
        if shape != (g.size, g.size):
            raise ValueError(f"grid must be the 1-D grid of q and r values used for result "
                             f"(length {shape[0] if shape else 0}); got length {g.size}")
        return result, g
    eps = _check_epsilons(sizes["epsilons"])
    Q, R = np.meshgrid(g, g, indexing="ij")      # rows: q, columns: r
    mech = bernoulli.RandomizedResponse(eps, mu=(0.5, 1.0) if mu is None else mu)
    res = optimize.optimal_epsilon(mech, Memoryless(q=Q, r=R, rule=rule), T=sizes["T"], n0=sizes["n0"],
                                   trials=sizes["trials"], seed=seed, conventions=conventions)
    return res, g


def epsilon_star_map(result, *, q, r, ax=None, rule="leak", thresholds=True, colorbar=True,
                     title=None):
    """Draw an ε* map: a result of :func:`perfpriv.optimize.optimal_epsilon` on a (q, r) grid.

    The recruiting rate r runs along the horizontal axis and the leaving
    rate q along the vertical one (the paper's "(r, q) parameter space").
    Finite ε* are coloured on a log scale; cells where ε = inf (no privacy)
    is best are red. With ``thresholds=True`` the lines where the survival
    threshold of the growth rule changes are drawn: r = q (both rules) and,
    for the agnostic rule, r = q/2.

    Parameters
    ----------
    result : EpsilonOptimum
        ``result.epsilon`` has shape (len(q), len(r)): cell (i, j) is
        (q[i], r[j]) (``np.meshgrid(q, r, indexing="ij")``).
    q, r : 1-D array_like
        The grids of leaving and recruiting rates.
    ax : matplotlib Axes, optional
        Where to draw; a new one-panel figure otherwise.
    rule : {"leak", "agnostic"}
        Which threshold lines to draw.
    thresholds : bool
        Draw the threshold lines.
    colorbar : bool
        Add a colour bar.
    title : str, optional
        Panel title.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from perfpriv import behaviour, bernoulli, optimize
    >>> Q, R = np.meshgrid([0.2, 0.6], [0.2, 0.6], indexing="ij")
    >>> res = optimize.mean_field_optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf]),
    ...                                           behaviour.Memoryless(q=Q, r=R), T=5)
    >>> fig = epsilon_star_map(res, q=[0.2, 0.6], r=[0.2, 0.6])
    >>> len(fig.axes)
    2
    """
    check_type(result, "result", "EpsilonOptimum")
    q = np.atleast_1d(check_probability("q", q))
    r = np.atleast_1d(check_probability("r", r))
    if q.ndim != 1 or r.ndim != 1:
        raise ValueError(f"q and r must be 1-d grids; got shapes {q.shape} and {r.shape}")
    if ax is not None:
        check_axes(ax)
    thresholds = check_flag("thresholds", thresholds)
    colorbar = check_flag("colorbar", colorbar)
    check_text("title", title, optional=True)
    if np.shape(result.epsilon) != (q.size, r.size):
        raise ValueError(f"result.epsilon must have shape (len(q), len(r)) = ({q.size}, {r.size}); "
                         f"got {np.shape(result.epsilon)}")
    check_choice("rule", rule, ("leak", "agnostic"))
    if ax is None:
        fig, axes = new_figure(1, 1, width=4.6, height=3.8)
        ax = axes[0, 0]
    else:
        fig = ax.figure
    best = np.asarray(result.epsilon, dtype=float)
    eps = np.asarray(result.epsilons, dtype=float)
    norm = _epsilon_norm(eps)
    finite = np.ma.masked_where(~np.isfinite(best), best)
    mesh = ax.pcolormesh(r, q, finite, norm=norm, cmap=_CMAP, shading="nearest")
    if np.isinf(best).any():
        inf_cells = np.ma.masked_where(np.isfinite(best), np.ones_like(best))
        ax.pcolormesh(r, q, inf_cells, cmap=ListedColormap([_INF_COLOR]), shading="nearest",
                      vmin=0, vmax=1)
    line = np.linspace(0.0, 1.0, 2)
    if thresholds:
        ax.plot(line, line, ls="--", color="white", lw=1.2, label="$r = q$")
        if rule == "agnostic":
            ax.plot(line / 2.0, line, ls=":", color="white", lw=1.4, label="$r = q/2$")
    dr = 0.5 * (r[1] - r[0]) if r.size > 1 else 0.05
    dq = 0.5 * (q[1] - q[0]) if q.size > 1 else 0.05
    ax.set_xlim(r.min() - dr, r.max() + dr)
    ax.set_ylim(q.min() - dq, q.max() + dq)
    ax.set_xlabel("recruiting rate $r$")
    ax.set_ylabel("leaving rate $q$")
    ax.grid(False)
    handles = []
    if np.isinf(best).any():
        handles.append(Patch(color=_INF_COLOR, label=r"$\varepsilon^*=\infty$"))
    if thresholds:
        line_handles, _ = ax.get_legend_handles_labels()
        handles.extend(line_handles)
    if handles:
        # below the map, off the cells; a grey frame so that the white threshold lines show
        legend = ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=len(handles),
                           facecolor="0.45", framealpha=1.0, edgecolor="0.45", handlelength=2.2,
                           columnspacing=1.2)
        for text in legend.get_texts():
            text.set_color("white")
    if colorbar:
        cbar = fig.colorbar(mesh, ax=ax, pad=0.02)
        cbar.set_label(r"$\varepsilon^*$ (log scale)")
    if title is not None:
        ax.set_title(title)
    return fig


def figure2(result=None, *, scale="book", T=None, n0=None, trials=None, grid=None, epsilons=None,
            mu=None, conventions="paper", seed=0, thresholds=True):
    r"""Fig. 2 of the paper: the privacy budget ε* minimizing the final squared error, leak model.

    Parameters
    ----------
    result : perfpriv.optimize.EpsilonOptimum, optional
        A result of :func:`perfpriv.optimize.optimal_epsilon` over a (q, r)
        grid (``rule="leak"``). If omitted it is computed here.
    scale : {"book", "paper"}
        Default sizes (:data:`MAP_SCALES`); explicit arguments override them.
    T, n0, trials : int, optional
        Horizon, initial population, trials per (q, r, ε).
    grid : array_like, optional
        Values used for both q and r (probabilities; the grid of ``result`` when it is given).
    epsilons : array_like, optional
        ε values compared: ``np.inf`` or finite values in [1e-100, 1e100] (the log colour scale).
    mu : optional
        Law of :math:`\mu_t` passed on to the optimizer (its default if None).
    conventions : {"paper", "authors"}
        Of the optimizer's simulations (:func:`perfpriv.optimize.optimal_epsilon`).
    seed : int
        Seed of the optimizer.
    thresholds : bool
        Draw the line r = q.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``result`` is not an EpsilonOptimum.
    ValueError
        If ``grid`` is not a grid of probabilities (of the size of ``result``), or a budget or size is out
        of range.

    References
    ----------
    Paper, §3 and Fig. 2.

    Examples
    --------
    >>> fig = figure2(T=5, trials=2, grid=[0.2, 0.6], epsilons=[0.5, np.inf])
    >>> len(fig.axes)
    2
    """
    res, g = _map_result(result, rule="leak", scale=scale, T=T, n0=n0, trials=trials, conventions=conventions, grid=grid,
                         epsilons=epsilons, mu=mu, seed=seed)
    return epsilon_star_map(res, q=g, r=g, rule="leak", thresholds=thresholds,
                            title=r"Leak model: $\varepsilon^*$ (Fig. 2)")


def figure7(result=None, *, scale="book", T=None, n0=None, trials=None, grid=None, epsilons=None,
            mu=None, conventions="paper", seed=0, thresholds=True):
    """Fig. 7 of the paper: the ε* map of :func:`figure2` under the agnostic growth rule.

    Parameters (and the errors raised) are those of :func:`figure2`; ``thresholds`` draws r = q and
    r = q/2, between which the agnostic population survives only with enough
    privacy.

    Returns
    -------
    matplotlib.figure.Figure

    References
    ----------
    Paper, appendix B and Fig. 7.

    Examples
    --------
    >>> fig = figure7(T=5, trials=2, grid=[0.2, 0.6], epsilons=[0.5, np.inf])
    >>> len(fig.axes)
    2
    """
    res, g = _map_result(result, rule="agnostic", scale=scale, T=T, n0=n0, trials=trials, conventions=conventions,
                         grid=grid, epsilons=epsilons, mu=mu, seed=seed)
    return epsilon_star_map(res, q=g, r=g, rule="agnostic", thresholds=thresholds,
                            title=r"Agnostic model: $\varepsilon^*$ (Fig. 7)")


# --------------------------------------------------------------------------
# extra panels of the chapters
# --------------------------------------------------------------------------

def _inf_x(finite_max=20.0):
    """Where ε = inf is drawn: three times the largest finite budget shown (60 on an axis ending at 20)."""
    return max(60.0, 3.0 * float(finite_max))


def _inf_axis(ax, finite_max=20.0):
    """Log ε axis with an extra tick '∞' to the right of the finite values (up to ``finite_max``)."""
    ax.set_xscale("log")
    inf_x = _inf_x(finite_max)
    top = int(math.floor(math.log10(finite_max * 1.01)))
    decades = list(range(-2, max(top, -2) + 1))
    picks = sorted({decades[round(i * (len(decades) - 1) / 4)] for i in range(5)})  # at most five, both ends
    ticks = [10.0**k for k in picks]
    ax.set_xticks(ticks + [inf_x])
    ax.set_xticklabels([f"{t:g}" for t in ticks] + [r"$\infty$"])
    ax.axvspan(finite_max * 1.4, inf_x * 1.6, color="0.92", zorder=0)
    ax.set_xlim(None, inf_x * 1.6)


def growth_factor_figure(settings=((0.6, 0.3), (0.3, 0.6), (0.45, 0.55)), *,
                         rules=("leak", "agnostic"), epsilon_range=(0.01, 20.0)):
    """Growth factor C against ε for several (q, r), one panel per growth rule.

    Lines are :func:`perfpriv.bernoulli.growth_factor` at β = β(ε) (Lemma 1);
    the value at ε = inf (β = 1/2) is the point above '∞'; a dot marks the
    critical budget :math:`ε_c` of :func:`perfpriv.bernoulli.critical_epsilon` where
    it is finite and positive. Above the grey line C = 1 the population grows
    in expectation.

    Parameters
    ----------
    settings : sequence of (q, r)
        Leaving and recruiting rates.
    rules : sequence of {"leak", "agnostic"}
        One panel per growth rule.
    epsilon_range : (float, float)
        Finite ε range of the horizontal axis, 0 < low < high <= 1e100 (ε = inf is drawn apart).

    Returns
    -------
    matplotlib.figure.Figure

    References
    ----------
    Paper, Lemma 2 / eq. 4, Theorem 1 and appendix B.

    Examples
    --------
    >>> fig = growth_factor_figure()
    >>> len(fig.axes)
    2
    """
    pair = check_sequence("epsilon_range", epsilon_range)
    if len(pair) != 2:
        raise ValueError(f"epsilon_range must be a pair (low, high) of budgets; got {epsilon_range!r:.60}")
    # finite (the value at inf is drawn apart, at 3 x the top) and at most 1e100: the axis's log-scale
    # margin stays a double
    lo = check_real("epsilon_range[0]", pair[0], low=0.0, low_open=True, high=1e100, scalar=True)
    hi = check_real("epsilon_range[1]", pair[1], low=lo, low_open=True, high=1e100, scalar=True)
    rules = check_sequence("rules", rules)
    for rule in rules:
        check_choice("rules", rule, ("leak", "agnostic"))
    settings = check_settings("settings", settings)
    eps = np.geomspace(lo, hi, 300)
    fig, axes = new_figure(1, len(rules), width=4.2, height=3.2, sharey=True)
    colors = ["C0", "C1", "C2", "C3", "C4", "C5"]
    for ax, rule in zip(axes[0], rules):
        for k, (q, r) in enumerate(settings):
            color = colors[k % len(colors)]
            C = bernoulli.growth_factor(bernoulli.beta_from_epsilon(eps), q=q, r=r, rule=rule)
            ax.plot(eps, C, color=color, label=params(q=q, r=r))
            ax.plot([_inf_x(hi)], [bernoulli.growth_factor(0.5, q=q, r=r, rule=rule)], "o", color=color, ms=4)
            ec = float(bernoulli.critical_epsilon(q=q, r=r, rule=rule))
            if 0.0 < ec < np.inf and lo <= ec <= hi:
                ax.plot([ec], [1.0], "D", color=color, ms=6, mec="black")
        ax.axhline(1.0, color="0.4", lw=1)
        _inf_axis(ax, hi)
        ax.set_xlabel(r"privacy budget $\varepsilon$")
        ax.set_title(f"{rule} rule")
    axes[0, 0].set_ylabel(r"growth factor $C(\beta(\varepsilon))$")
    axes[0, 0].legend(loc="best")
    return fig


def final_error_figure(settings=((0.3, 0.6),), *, rule="leak", scale="book", T=None, n0=None,
                       trials=None, epsilons=None, cap=20000, mu=(0.0, 1.0), conventions="paper", seed=0,
                       results=None):
    r"""Final-round squared error against ε: simulation next to the mean-field prediction.

    Dots: mean over trials of the squared error of the last estimate
    (round T), with bars of two standard errors. Line: the mean-field error
    of round T on a fine ε grid; the point above '∞' is the non-private
    baseline. A dotted vertical line marks :math:`ε_c` (Theorem 1) when finite. The
    numbers are :func:`perfpriv.experiments.final_error_curve`.

    Parameters
    ----------
    settings : sequence of (q, r)
        One panel per setting (pairs of probabilities).
    rule : {"leak", "agnostic"}
        Growth rule.
    scale : {"book", "paper"}
        Default T, n0, trials (those of :data:`MAP_SCALES`).
    T, n0, trials : int, optional
        Horizon, initial population, trials per ε.
    epsilons : array_like, optional
        ε values simulated (default 15 values in [0.01, 20] and inf): ``np.inf`` or finite values in
        [1e-100, 1e100] (below, the squared errors overflow; above, the log ε axis).
    cap : int
        Population cap.
    mu : float or (float, float)
        Law of :math:`\mu_t`.
    conventions : {"paper", "authors"}
        Of the simulations.
    seed : int
        Root seed (each setting keyed by its (q, r)).
    results : sequence of perfpriv.experiments.FinalErrors, optional
        Results to draw instead (``settings`` and the sizes are then ignored).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``results`` or ``settings`` is not a sequence, or an entry of ``results`` not a FinalErrors.
    ValueError
        If an entry of ``settings`` is not a pair (q, r) of probabilities, or a budget or size is out of
        range.

    References
    ----------
    Paper §3 (the final-horizon error it optimizes); the mean-field curve
    is the book's addition.

    Examples
    --------
    >>> fig = final_error_figure(T=5, trials=3, epsilons=[0.1, 1.0, np.inf])
    >>> len(fig.axes)
    1
    """
    if results is None:
        settings = check_settings("settings", settings)
        epsilons = None if epsilons is None else _check_epsilons(epsilons)
        sizes = _sizes(MAP_SCALES, scale, T=T, n0=n0, trials=trials)
        results = [experiments.final_error_curve(q=q, r=r, epsilons=epsilons, rule=rule, T=sizes["T"],
                                                 n0=sizes["n0"], trials=sizes["trials"], cap=cap, mu=mu,
                                                 conventions=conventions, seed=seed)
                   for q, r in settings]
    results = check_items("results", results, "FinalErrors")
    fig, axes = new_figure(1, len(results), width=4.3, height=3.3)
    for k, res in enumerate(results):
        ax = axes[0, k]
        finite_max = float(np.max(np.concatenate([res.fine, res.epsilons[np.isfinite(res.epsilons)]])))
        x = np.where(np.isfinite(res.epsilons), res.epsilons, _inf_x(finite_max))
        ax.errorbar(x, res.mean, yerr=2 * res.se, fmt="o", color="C0", ms=4, capsize=2,
                    label=f"simulation ({res.trials} trials)")
        ax.plot(res.fine, res.theory, color="C1", label="mean field")
        ax.plot([_inf_x(finite_max)], [res.theory_inf], "s", color="C1", ms=5)
        ec = res.epsilon_c
        if 0.0 < ec < np.inf:
            ax.axvline(ec, color="0.3", ls=":", lw=1.2, label=rf"$\varepsilon_c={ec:.2f}$")
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(NullLocator())
        _inf_axis(ax, finite_max)
        ax.set_xlabel(r"privacy budget $\varepsilon$")
        ax.set_ylabel(f"squared error at round $T={res.T}$")
        ax.set_title(f"{res.rule} rule, {params(q=res.q, r=res.r)}")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    return fig
