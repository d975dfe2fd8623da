"""Figures of the Bernoulli warm-up (paper §3, Figs. 1-2) and of the agnostic model (appendix B, Figs. 6-7).

A figure only draws the result of the experiment behind it (:func:`perfpriv.experiments.curve_runs`,
:func:`perfpriv.optimize.optimal_epsilon` over a (q, r) grid, :func:`perfpriv.experiments.final_error_curve`),
which carries its model and sizes; the sizes of the paper's figures are :data:`perfpriv.cli.SCALES`.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.cm import ScalarMappable
from matplotlib.patches import Patch
from matplotlib.ticker import NullLocator

from .. import bernoulli
from ..behaviour import Memoryless
from .._validate import check_choice, check_flag, check_int, check_probability, check_real, interval_text
from ._common import (MAX_LOG_VALUE, check_axes, check_items, check_sequence, check_settings, check_text,
                      check_type, check_values, new_figure, params)

__all__ = [
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

#: Finite privacy budgets the figures of this module draw: below 1e-100 the randomized response's squared
#: errors overflow (their moving averages and error bars are inf - inf); above :data:`MAX_LOG_VALUE` the log
#: colour scale and the log ε axis overflow.
_EPSILON_RANGE = (1e-100, MAX_LOG_VALUE)


def _check_epsilons(epsilons, name):
    r"""Budgets of the result ``name`` that a figure draws: each inf or in :data:`_EPSILON_RANGE`, as a 1-D float array."""
    eps = check_values(name, epsilons, low=0, low_open=True, allow_inf=True)
    finite = eps[np.isfinite(eps)]
    lo, hi = _EPSILON_RANGE
    outside = finite[(finite < lo) | (finite > hi)]
    if outside.size:
        more = f" and {outside.size - 1} more outside" if outside.size > 1 else ""
        raise ValueError(f"{name} must hold budgets epsilon inf or in {interval_text(lo, hi)} (the budgets a figure "
                         f"can draw); got {outside[0]:.3g}{more}")
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


# ------------ Figs. 1 and 6: squared error and population against the round

def _paper_users(users, rule, name):
    """(q, r) of a result's users: the paper's :class:`perfpriv.behaviour.Memoryless`, one cell, the figure's rule."""
    if not isinstance(users, Memoryless):
        raise TypeError(f"{name} must be a result for the paper's users, a perfpriv.behaviour.Memoryless; got "
                        f"{type(users).__name__}")
    if np.ndim(users.q) or np.ndim(users.r):
        raise ValueError(f"{name} must be a result for one leaving rate q and one joining rate r; got users with "
                         f"q and r of shapes {np.shape(users.q)} and {np.shape(users.r)}")
    if users.rule != rule:
        raise ValueError(f"{name} must be a result of the {rule} rule (the figure's model); got rule={users.rule!r}")
    return float(users.q), float(users.r)


def _curves(results, *, rule, window, title):
    results = check_items("results", results, "SimulationRun")
    window = check_int("window", window, low=1)
    settings = []
    for run in results:
        if type(run.mechanism).__name__ != "RandomizedResponse":
            raise TypeError(f"each entry of results must be a run of a perfpriv.bernoulli.RandomizedResponse "
                            f"(experiments.curve_runs); got a run of {type(run.mechanism).__name__}")
        if run.mechanism.levels.per_round:
            raise ValueError("each entry of results must be a run of constant budgets (a number or a grid), "
                             "not of a schedule")
        settings.append(_paper_users(run.behaviour, rule, "each entry of results"))
    # the budgets and sizes of the given runs (the title must describe what is drawn)
    first = results[0]
    eps = _check_epsilons(np.atleast_1d(np.asarray(first.level, dtype=float)), "results")
    for run in results[1:]:
        if not np.array_equal(np.atleast_1d(np.asarray(run.level, dtype=float)), eps):
            raise ValueError("results must be runs of the same budgets (one colour per budget, shared by the rows); "
                             f"got {eps.size} and {np.size(run.level)} budgets")
    sizes = dict(T=first.T, trials=first.trials, n0=first.n0, window=window)
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


def figure1(results, *, window=15):
    r"""Fig. 1 of the paper: moving-averaged squared error and population against the round.

    One row per run (the paper's (q, r) = (0.6, 0.3) then (0.3, 0.6)): left, the squared error of
    the unbiased estimator (eq. 1) averaged over a moving window and over trials; right, the mean
    population :math:`N_t`. Finite budgets are coloured on a log scale, ε = inf (no privacy) red.

    Parameters
    ----------
    results : sequence of perfpriv.engine.SimulationRun
        :func:`perfpriv.experiments.curve_runs` of a :class:`perfpriv.bernoulli.RandomizedResponse`
        (budgets ``np.inf`` or in [1e-100, 1e100]), one cell of ``Memoryless(rule="leak")`` users a row.
    window : int
        Moving-average window, in rounds (the paper's text: 15; the authors' script: 10).

    Raises
    ------
    TypeError
        If ``results`` is not a sequence of runs of randomized response for the paper's users.
    ValueError
        If ``results`` is empty, holds runs of another growth rule, of several (q, r) cells, of a
        schedule or of different budgets, or a budget or ``window`` is out of range.

    References
    ----------
    Paper, §3 "Empirical simulation" and Fig. 1.

    Examples
    --------
    >>> from perfpriv import behaviour, experiments
    >>> runs = experiments.curve_runs(bernoulli.RandomizedResponse([0.5, np.inf]),
    ...                               [behaviour.Memoryless(q=0.6, r=0.3), behaviour.Memoryless(q=0.3, r=0.6)],
    ...                               T=5, trials=2)
    >>> fig = figure1(runs)
    >>> len(fig.axes) >= 4
    True
    """
    return _curves(results, rule="leak", window=window, title="Leak model (Fig. 1)")


def figure6(results, *, window=15):
    """Fig. 6 of the paper: the panels of :func:`figure1` under the agnostic growth rule.

    Parameters and errors as in :func:`figure1`, for ``Memoryless(rule="agnostic")`` users (every
    participant recruits with probability r).

    References
    ----------
    Paper, appendix B and Fig. 6.

    Examples
    --------
    >>> from perfpriv import behaviour, experiments
    >>> runs = experiments.curve_runs(bernoulli.RandomizedResponse([0.5, np.inf]),
    ...                               [behaviour.Memoryless(q=0.6, r=0.3, rule="agnostic")], T=5, trials=2)
    >>> fig = figure6(runs)
    >>> len(fig.axes) >= 2
    True
    """
    return _curves(results, rule="agnostic", window=window, title="Agnostic model (Fig. 6)")


# ---------- Figs. 2 and 7: the optimal privacy budget over the (r, q) square

def _map_axes(result, rule):
    """The 1-D grids (q, r) of an ε* map: from the users of a search over ``Memoryless(q=qs[:, None], r=rs[None, :])``."""
    check_type(result, "result", "EpsilonOptimum")
    users = result.settings.get("users")
    if not isinstance(users, Memoryless):
        raise TypeError(f"result must be an epsilon* map of the paper's users, Memoryless(q=..., r=...) over a (q, r) "
                        f"grid; got a search over {type(users).__name__}")
    if users.rule != rule:
        raise ValueError(f"result must be an epsilon* map of the {rule} rule (the figure's model); "
                         f"got rule={users.rule!r}")
    try:
        axes = users.grid_axes()
    except ValueError as err:
        raise ValueError(f"result must be a map over a (q, r) grid: its {err}") from None
    _check_epsilons(result.epsilons, "result")
    return axes


def epsilon_star_map(result, *, q, r, ax=None, rule="leak", thresholds=True, colorbar=True,
                     title=None):
    """Draw an ε* map: a result of :func:`perfpriv.optimize.optimal_epsilon` on a (q, r) grid.

    r along the horizontal axis, q along the vertical one (the paper's "(r, q) parameter space").
    Finite ε* are coloured on a log scale, cells where no privacy is best red. ``thresholds`` draws
    where the survival threshold of ``rule`` changes: r = q (both rules) and r = q/2 (agnostic).

    Parameters
    ----------
    result : EpsilonOptimum
        ``result.epsilon`` of shape (len(q), len(r)): cell (i, j) is (q[i], r[j]).
    q, r : 1-D array_like
        The grids of leaving and recruiting rates.
    ax : matplotlib Axes, optional
        Where to draw; a new one-panel figure otherwise.
    rule, thresholds, colorbar, title
        Growth rule of the threshold lines, whether to draw them and a colour bar, panel title.

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


def figure2(result, *, thresholds=True):
    r"""Fig. 2 of the paper: the privacy budget ε* minimizing the final squared error, leak model.

    Draws :func:`epsilon_star_map` with the (q, r) grid of the result's users.

    Parameters
    ----------
    result : perfpriv.optimize.EpsilonOptimum
        :func:`perfpriv.optimize.optimal_epsilon` (or its mean-field version) for
        ``Memoryless(q=Q, r=R, rule="leak")`` over a grid ``np.meshgrid(qs, rs, indexing="ij")``;
        budgets ``np.inf`` or in [1e-100, 1e100] (the log colour scale).
    thresholds : bool
        Draw the line r = q.

    Raises
    ------
    TypeError
        If ``result`` is not an EpsilonOptimum of the paper's users.
    ValueError
        If ``result`` is a map of the other growth rule, not over a (q, r) grid, or of a budget out of range.

    References
    ----------
    Paper, §3 and Fig. 2.

    Examples
    --------
    >>> from perfpriv import behaviour, optimize
    >>> Q, R = np.meshgrid([0.2, 0.6], [0.2, 0.6], indexing="ij")
    >>> best = optimize.optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf], mu=(0.5, 1.0)),
    ...                                 behaviour.Memoryless(q=Q, r=R), T=5, trials=2, seed=0)
    >>> fig = figure2(best)
    >>> len(fig.axes)
    2
    """
    q, r = _map_axes(result, "leak")
    return epsilon_star_map(result, q=q, r=r, rule="leak", thresholds=thresholds,
                            title=r"Leak model: $\varepsilon^*$ (Fig. 2)")


def figure7(result, *, thresholds=True):
    """Fig. 7 of the paper: the ε* map of :func:`figure2` under the agnostic growth rule.

    Parameters and errors as in :func:`figure2`, with users of ``rule="agnostic"``; ``thresholds``
    draws r = q and r = q/2, between which the population survives only with enough privacy.

    References
    ----------
    Paper, appendix B and Fig. 7.

    Examples
    --------
    >>> from perfpriv import behaviour, optimize
    >>> Q, R = np.meshgrid([0.2, 0.6], [0.2, 0.6], indexing="ij")
    >>> best = optimize.optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf], mu=(0.5, 1.0)),
    ...                                 behaviour.Memoryless(q=Q, r=R, rule="agnostic"), T=5, trials=2, seed=0)
    >>> fig = figure7(best)
    >>> len(fig.axes)
    2
    """
    q, r = _map_axes(result, "agnostic")
    return epsilon_star_map(result, q=q, r=r, rule="agnostic", thresholds=thresholds,
                            title=r"Agnostic model: $\varepsilon^*$ (Fig. 7)")


# --------------------------------------------- extra panels of the chapters

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

    Lines are :func:`perfpriv.bernoulli.growth_factor` at β = β(ε) (Lemma 1), the point above '∞'
    its value at β = 1/2; a diamond marks :func:`perfpriv.bernoulli.critical_epsilon` where it is finite
    and positive. Above the grey line C = 1 the population grows in expectation.

    Parameters
    ----------
    settings, rules
        Cells (q, r), one line each, and growth rules, one panel each.
    epsilon_range : (float, float)
        Finite ε range of the horizontal axis, 0 < low < high <= 1e100 (ε = inf is drawn apart).

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


def final_error_figure(results):
    r"""Final-round squared error against ε: simulation next to the mean-field prediction.

    One panel per result: the simulated mean error of round T ± 2 standard errors (dots), the
    mean-field error on a fine ε grid (line; the point above '∞' is no privacy) and :math:`ε_c`
    (Theorem 1, dotted) when finite.

    Parameters
    ----------
    results : sequence of perfpriv.experiments.FinalErrors
        :func:`perfpriv.experiments.final_error_curve` results, budgets ``np.inf`` or in [1e-100, 1e100].

    Raises
    ------
    TypeError
        If ``results`` is not a sequence, or an entry not a FinalErrors.
    ValueError
        If ``results`` is empty or a budget is out of range.

    References
    ----------
    Paper §3 (the final-horizon error it optimizes); the mean-field curve
    is the book's addition.

    Examples
    --------
    >>> from perfpriv import behaviour, experiments
    >>> curve = experiments.final_error_curve(bernoulli.RandomizedResponse([0.1, 1.0, np.inf]),
    ...                                       behaviour.Memoryless(q=0.3, r=0.6), T=5, trials=3)
    >>> fig = final_error_figure([curve])
    >>> len(fig.axes)
    1
    """
    results = check_items("results", results, "FinalErrors")
    for res in results:
        _check_epsilons(res.epsilons, "results")
        _check_epsilons(res.fine, "results")
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
