"""Explorer of the learning-tasks chapter: private ridge regression with users who leave.

Theory only (the mean field of :class:`perfpriv.regression.RidgeRelease`). The mechanism holds every
value of the noise slider as one grid of levels, so that its tables are computed once (about two
seconds) and a slider move only reruns the mean-field recursion.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._validate import check_int, check_real
from ..plots import new_figure
from ._common import Explorer, named_control, float_slider, int_slider, log_slider

__all__ = ["learning_explorer", "draw_learning"]

#: The noise multipliers of the explorer: the values of its log slider (:math:`10^{-4}` .. :math:`10^{-1}`, step :math:`10^{0.05}`).
LEARNING_GAMMAS = 10.0 ** np.round(np.arange(-4.0, -1.0 + 1e-9, 0.05), 2)


@lru_cache(maxsize=4)
def _mechanism(tau):
    from .. import regression

    return regression.RidgeRelease(LEARNING_GAMMAS, tau=tau).resolved("paper")


def _nearest(gamma):
    return int(np.argmin(np.abs(np.log(LEARNING_GAMMAS) - np.log(gamma))))


def draw_learning(*, q=0.5, r=0.5, gamma=0.0056, T=10, tau=0.02, n0=200, cap=2000):
    """Draw the explorer's figure for one set of slider values.

    Left: mean-field populations under the chosen γ, under γ* and with
    almost no noise :math:`(γ = 10^{-4})`. Right: the mean-field cumulative excess risk
    against γ, with the chosen γ and γ* marked.
    """
    from .. import engine
    from ..behaviour import Memoryless

    # gamma picks the nearest value of the explorer's grid (LEARNING_GAMMAS): any positive noise multiplier
    gamma = check_real("gamma", gamma, low=0, low_open=True, allow_inf=True, scalar=True)
    T = check_int("T", T, low=1)
    mech = _mechanism(check_real("tau", tau, scalar=True))
    path = engine.mean_field(mech, Memoryless(q=q, r=r), T=T, n0=n0, cap=cap)
    total = np.asarray(path.cumulative_error)
    k, best = _nearest(gamma), int(np.argmin(total))
    g = LEARNING_GAMMAS
    fig, axes = new_figure(1, 2, width=4.3, height=3.2)
    ax, bx = axes[0, 0], axes[0, 1]
    rounds = np.arange(T + 1)
    ax.plot(rounds, path.population[0], ":", color="tab:gray", lw=2, label=r"almost no noise, $\gamma=10^{-4}$")
    ax.plot(rounds, path.population[best], "-", color="tab:green", lw=2, label=rf"$\gamma^*$ = {g[best]:.3g}")
    ax.plot(rounds, path.population[k], "--", color="tab:blue", lw=2, label=rf"chosen $\gamma$ = {g[k]:.3g}")
    ax.set_yscale("log")
    ax.set_xlabel(r"round $t$")
    ax.set_ylabel(r"mean-field population $N_t$")
    ax.legend(loc="lower left", fontsize=8)
    bx.loglog(g, total, "-", color="k", lw=1.5)
    bx.plot(g[best], total[best], "*", color="tab:green", ms=14, mec="k", label=rf"$\gamma^*$, $\rho^*$ = {0.5 / g[best] ** 2:.3g}")
    bx.plot(g[k], total[k], "o", color="tab:blue", ms=8, label=rf"chosen, $\rho$ = {0.5 / g[k] ** 2:.3g}")
    bx.set_xlabel(r"noise multiplier $\gamma$ ($\rho = 1/(2\gamma^2)$)")
    bx.set_ylabel("cumulative excess risk")
    bx.set_title(rf"$q$={q:g}, $r$={r:g}, $\tau$={tau:g}, $T$={T}, $N_0$={n0}", fontsize=9)
    bx.legend(loc="upper center", fontsize=8)
    return fig


def learning_explorer():
    """Sliders q, r, γ, T: the regression task's mean-field population and cumulative error (chapter 09)."""
    controls = {
        "q": named_control("q", float_slider, "$q$ (leave)", 0.5, 0.01, 0.99, 0.01),
        "r": named_control("r", float_slider, "$r$ (join)", 0.5, 0.01, 0.99, 0.01),
        "gamma": named_control("gamma", log_slider, r"noise $\gamma$", 0.0056, 1e-4, 0.1),
        "T": named_control("T", int_slider, "rounds $T$", 10, 2, 30),
    }
    return Explorer("Private ridge regression", controls, draw_learning, source="perfpriv.widgets.draw_learning",
                    plotted="the mean-field population over the rounds at the chosen γ, at γ* and with almost no noise (left) and the cumulative excess risk against γ (right)",
                    static_grid={"gamma": [0.001, 0.0032, 0.0056, 0.01], "q": [0.1, 0.5, 0.9]})
