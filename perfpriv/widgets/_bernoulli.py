"""Explorer of the Bernoulli warm-up (paper §3) and of its agnostic variant (appendix B).

The private run and the non-private baseline ε = inf are one engine call (a grid of two levels that
share their random numbers), so a redraw stays under a second at the default size.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from .. import bernoulli
from .._validate import check_choice, check_flag, check_int, check_real
from ..plots import assign, new_figure, params
from ._common import Explorer, named_control, checkbox, float_slider, int_slider, log_slider

__all__ = ["bernoulli_explorer", "bernoulli_draw"]

_INF_COLOR = (0.80, 0.10, 0.10, 1.0)


def bernoulli_draw(epsilon, no_privacy=False, *, q, r, T, n0, trials, rule="leak", seed=0, window=15):
    """Figure of one explorer state: population (left) and squared error (right).

    :func:`perfpriv.bernoulli.simulate` (thin lines: trials; thick: their mean) and
    :func:`perfpriv.bernoulli.mean_field` (dashed); the private run is blue, ε = inf red.

    Parameters
    ----------
    epsilon, no_privacy : float, bool
        Budget ε of the private run, in [1e-100, inf], drawn beside ε = inf; ``no_privacy``: ε = inf alone.
    q, r, T, n0, trials, rule, seed
        As in :func:`perfpriv.bernoulli.simulate` (one seed for every redraw, so that moving a slider
        changes only what that parameter changes).
    window : int
        Moving-average window of the error panel (capped at T).

    Examples
    --------
    >>> fig = bernoulli_draw(0.5, q=0.3, r=0.6, T=20, n0=100, trials=3)
    >>> len(fig.axes)
    2
    """
    rule = check_choice("rule", rule, bernoulli.RULES)
    no_privacy = check_flag("no_privacy", no_privacy)
    # below 1e-100 the randomized response's squared errors overflow their moving average (inf - inf)
    epsilon = check_real("epsilon", epsilon, low=1e-100, allow_inf=True, scalar=True)
    T = check_int("T", T, low=1)
    window = check_int("window", window, low=1)
    eps = np.inf if no_privacy else float(epsilon)
    values = [eps] if no_privacy else [eps, np.inf]
    run = bernoulli.simulate(np.array(values), q=q, r=r, T=T, n0=n0, trials=trials, rule=rule, seed=seed)
    path = bernoulli.mean_field(np.array(values), q=q, r=r, T=T, n0=n0, rule=rule)
    pop_mf, err_mf = path.population, path.sq_error
    ma = run.moving_average(window=min(window, T))
    rounds = np.arange(T + 1)
    fig, axes = new_figure(1, 2, width=4.3, height=3.1)
    # A fixed layout: constrained layout would cost more than the simulation itself
    # on every redraw (and any layout engine makes savefig draw the figure twice).
    # Margins in inches: room for the y labels beside their tick labels, and a two-line title.
    fig.set_layout_engine(None)
    fig.subplots_adjust(left=0.8 / 8.6, right=1 - 0.1 / 8.6, bottom=0.55 / 3.1, top=1 - 0.6 / 3.1,
                        wspace=0.85 / 3.8)
    ax_pop, ax_err = axes[0]
    for k, value in enumerate(values):
        color = _INF_COLOR if not np.isfinite(value) else "C0"
        label = assign("epsilon", value)
        if k == 0:
            for traj in run.population[k]:
                ax_pop.plot(rounds, traj, color=color, lw=0.5, alpha=0.25)
        ax_pop.plot(rounds, run.mean_population[k], color=color, lw=2, label=f"{label} (mean)")
        ax_pop.plot(rounds, pop_mf[k], color=color, lw=1.2, ls="--")
        ax_err.plot(np.arange(1, T + 1), ma[k], color=color, lw=2, label=label)
        ax_err.plot(np.arange(1, T + 1), err_mf[k], color=color, lw=1.2, ls="--")
    ax_pop.plot([], [], color="0.3", ls="--", label="mean field")
    ax_pop.set_yscale("log")
    ax_pop.set_xlabel("round $t$")
    ax_pop.set_ylabel("population $N_t$")
    ax_pop.legend(loc="best")
    ax_err.set_yscale("log")
    for ax in (ax_pop, ax_err):
        ax.yaxis.set_minor_locator(NullLocator())   # minor log ticks dominate the drawing time
    ax_err.set_xlabel("round $t$")
    ax_err.set_ylabel("squared error")
    beta = bernoulli.beta_from_epsilon(eps)
    C = bernoulli.growth_factor(beta, q=q, r=r, rule=rule)
    ec = bernoulli.critical_epsilon(q=q, r=r, rule=rule)
    growth = assign(r"C(\beta)", C, ".3f")
    fig.suptitle(f"{rule} rule: {params('.3f', beta=beta)}, {growth}, {assign('epsilon_c', ec)}\n"
                 f"{trials} trials (thin), their mean (thick), mean field (dashed); "
                 f"errors averaged over {min(window, T)} rounds")
    return fig


def bernoulli_explorer(rule="leak", *, epsilon=None, q=None, r=None, T=100, n0=400, trials=10,
                       seed=0):
    """Sliders for ε, q, r, T, n0 and the number of trials over a live simulation (:func:`bernoulli_draw`).

    Parameters
    ----------
    rule : {"leak", "agnostic"}
        Growth rule (§3 or appendix B).
    epsilon, q, r, T, n0, trials : optional
        Start values of the sliders; the defaults of ε, q, r show a case where privacy pays (leak:
        q = 0.3, r = 0.6, ε = 0.5; agnostic: q = 0.6, r = 0.4, ε = 0.5).
    seed : int
        Seed of every redraw.

    Examples
    --------
    Outside a notebook the initial drawing goes to standard output, hence the
    redirection:

    >>> import contextlib, io
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     ex = bernoulli_explorer()
    >>> ex
    <Bernoulli (leak rule) explorer: epsilon=0.5, no_privacy=False, q=0.3, r=0.6, T=100, n0=400, trials=10>
    """
    rule = check_choice("rule", rule, bernoulli.RULES)
    defaults = {"leak": (0.5, 0.3, 0.6), "agnostic": (0.5, 0.6, 0.4)}[rule]
    epsilon = defaults[0] if epsilon is None else epsilon
    q = defaults[1] if q is None else q
    r = defaults[2] if r is None else r
    controls = {
        "epsilon": named_control("epsilon", log_slider, r"budget $\varepsilon$", epsilon, 0.01, 20.0),
        "no_privacy": named_control("no_privacy", checkbox, r"no privacy ($\varepsilon = \infty$)"),
        "q": named_control("q", float_slider, "$q$ (leave)", q, 0.0, 1.0, 0.01),
        "r": named_control("r", float_slider, "$r$ (recruit)", r, 0.0, 1.0, 0.01),
        "T": named_control("T", int_slider, "rounds $T$", T, 10, 300, 10),
        "n0": named_control("n0", int_slider, "initial $N_0$", n0, 10, 2000, 10),
        "trials": named_control("trials", int_slider, "trials", trials, 1, 50),
    }

    def draw(**values):
        return bernoulli_draw(**values, rule=rule, seed=seed)

    # kernel-free version: the budget across its threshold, and r on both sides of q
    grid = {"leak": {"epsilon": [0.1, 0.2, 0.5, 0.7, 1.0, 2.0], "r": [0.3, 0.45, 0.6]},
            "agnostic": {"epsilon": [0.1, 0.2, 0.5, 1.0, 2.0, 5.0], "r": [0.25, 0.4, 0.7]}}[rule]
    if (epsilon, r) != defaults[::2]:
        grid = {"epsilon": sorted({*grid["epsilon"], epsilon}), "r": sorted({*grid["r"], r})}
    return Explorer(f"Bernoulli ({rule} rule)", controls, draw, columns=4,
                    plotted="the population over the rounds (left) and the squared error of the estimate (right), private run against no privacy",
                    source=f"perfpriv.widgets.bernoulli_draw(rule={rule!r})", static_grid=grid)
