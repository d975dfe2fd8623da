"""Explorers of the survival and finite-horizon chapters (paper §4.5, Lemma 9, Remark 3).

Theory only (the growth factor of eq. 13 and mean-field trajectories, each evaluated on its whole
grid in one call), so that a redraw stays well under a second; the simulations are in the chapters.
"""

from __future__ import annotations

import numpy as np

from .. import dynamics, engine, experiments
from ..behaviour import Memoryless
from ..gaussian import GaussianMean
from .._validate import check_allocation, check_int, check_real
from ..plots import figure_horizon, new_figure, plain_log
from ..plots import assign
from ..plots import MAX_LOG_VALUE
from ._common import Explorer, named_control, float_slider, int_slider, log_slider

__all__ = ["survival_explorer", "horizon_explorer", "draw_survival", "draw_horizon"]

_GAMMAS = np.geomspace(0.1, 30.0, 48)
_MAX_LOG = MAX_LOG_VALUE       # largest noise scale (and radius) drawn on the log axis


def draw_survival(gamma=3.0, *, tau=0.02, q=0.3, r=0.6, n0=1000, T=30, d=12, R=10.0, cap=20000):
    """Draw the survival explorer's figure for one set of slider values.

    Left: C(γ) at N = n0 against γ (eq. 13) with the chosen γ, the
    explicit threshold :math:`γ_c` of Theorem 2 and the exact threshold C = 1.
    Right: the mean-field population over T rounds with and without the cap.

    Examples
    --------
    >>> len(draw_survival(T=5).axes)
    2
    """
    # gamma and R up to 1e100: beyond, the log axis of gamma (and the thresholds, of the order of R) overflows
    gamma = check_real("gamma", gamma, low=0, low_open=True, high=_MAX_LOG, scalar=True)
    R = check_real("R", R, low=0, low_open=True, high=_MAX_LOG, scalar=True)
    n0 = check_int("n0", n0, low=2)
    T = check_int("T", T, low=1)
    # two mean-field paths of T + 1 rounds: T = 10**12 is refused by name, not by numpy's allocation error
    check_allocation("the mean-field paths (2 x (T + 1) rounds)", 2 * (T + 1), name="T")
    fig, axes = new_figure(1, 2, width=4.3, height=3.4)
    ax = axes[0, 0]
    mech, users = GaussianMean(gamma, tau=tau, d=d, R=R), Memoryless(q=q, r=r)
    c_all = np.asarray(dynamics.growth_factor(mech, users, n=n0, gamma=np.append(_GAMMAS, gamma)), dtype=float)
    c, c_here = c_all[:-1], float(c_all[-1])
    ax.plot(_GAMMAS, c, "-", lw=2, label=r"$C(\gamma)$ at $N = N_0$")
    ax.plot([gamma], [c_here], "o", color="k", label=f"{assign('gamma', gamma)}: {assign('C', c_here, '.3f')}")
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.axhline(1 - q, color="firebrick", lw=0.8, label="$1 - q$")
    ax.axhline(1 + r, color="forestgreen", lw=0.8, label="$1 + r$")
    gc = float(dynamics.critical_gamma(mech, users, n=n0))
    if 0 < gc <= _MAX_LOG:
        ax.axvline(gc, color="tab:red", ls="--", lw=1.2, label=f"Thm 2: {assign('gamma_c', gc)}")
    ge = float(dynamics.exact_critical_gamma(mech, users, n=n0))
    if 0 < ge <= _MAX_LOG:
        ax.axvline(ge, color="tab:green", ls="-.", lw=1.2, label=f"exact $C = 1$ at {assign('gamma', ge)}")
    ax.set_xscale("log")
    plain_log(ax)
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel(r"growth factor $C(\gamma)$")
    # below the panel: the curve runs through every corner of it
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=9)
    ax = axes[0, 1]
    t = np.arange(T + 1)
    free = np.asarray(engine.mean_field(mech, users, T=T, n0=n0, cap=experiments.UNCAPPED).population, float)
    capped = np.asarray(engine.mean_field(mech, users, T=T, n0=n0, cap=cap).population, float)
    ax.plot(t, free, "-", lw=2, label="mean field, no cap (stops at $10^8$)")
    ax.plot(t, capped, "--", lw=2, label=f"mean field, cap {cap}")
    ax.set_yscale("log")
    ax.set_xlabel("round $t$")
    ax.set_ylabel("population $N_t$")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, fontsize=9)
    return fig


def survival_explorer():
    """Sliders :math:`γ, τ, q, r, N_0`: growth factor, survival thresholds, mean-field population (chapter 05).
    """
    controls = {
        "gamma": named_control("gamma", log_slider, r"noise $\gamma$", 3.0, 0.1, 30.0),
        "tau": named_control("tau", log_slider, r"threshold $\tau$", 0.02, 0.005, 0.5),
        "q": named_control("q", float_slider, "$q$ (leave)", 0.3, 0.01, 0.99, 0.01),
        "r": named_control("r", float_slider, "$r$ (join)", 0.6, 0.01, 0.99, 0.01),
        "n0": named_control("n0", int_slider, "initial $N_0$", 1000, 50, 5000, 50),
    }
    return Explorer("Survival threshold", controls, draw_survival, source="perfpriv.widgets.draw_survival",
                    plotted="the growth factor C(γ) against the noise scale γ with the survival thresholds (left) and the mean-field population over the rounds with and without the cap (right)",
                    static_grid={"gamma": [0.3, 1.0, 3.0, 10.0, 30.0], "tau": [0.01, 0.02, 0.05]})


def draw_horizon(*, q=0.3, r=0.6, tau=0.02, T=10, n0=100, d=12, R=10.0, cap=20000):
    r"""Draw the horizon explorer's figure for one set of slider values.

    Lemma 9's bound :math:`Ê_{\mathrm{total}}(γ)` and the mean-field cumulative error against γ, with
    their minimizers γ* and Theorem 2's :math:`γ_c`: :func:`perfpriv.plots.figure_horizon` of
    :func:`perfpriv.experiments.horizon_curves` without simulation (the mean-field γ* is the grid
    minimizer; the chapter refines it).

    Examples
    --------
    >>> len(draw_horizon(T=3).axes)
    1
    """
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=2)
    check_allocation("the mean-field paths (one of T + 1 rounds per noise scale)", len(_GAMMAS) * (T + 1), name="T")
    curves = experiments.horizon_curves(GaussianMean(_GAMMAS, tau=tau, d=d, R=R), Memoryless(q=q, r=r), T=T, n0=n0,
                                        policy=engine.Policy(cap=cap), empirical=False, fine=_GAMMAS)
    return figure_horizon(curves)


def horizon_explorer():
    """Sliders :math:`q, r, τ, T, N_0`: cumulative error against γ with γ* and :math:`γ_c` (chapter 06)."""
    controls = {
        "q": named_control("q", float_slider, "$q$ (leave)", 0.3, 0.01, 0.99, 0.01),
        "r": named_control("r", float_slider, "$r$ (join)", 0.6, 0.01, 0.99, 0.01),
        "tau": named_control("tau", log_slider, r"threshold $\tau$", 0.02, 0.005, 0.5),
        "T": named_control("T", int_slider, "rounds $T$", 10, 2, 50),
        "n0": named_control("n0", int_slider, "initial $N_0$", 100, 50, 5000, 50),
    }
    return Explorer("Finite horizon", controls, draw_horizon, source="perfpriv.widgets.draw_horizon",
                    plotted="the cumulative error over the horizon against the noise scale γ: the finite-horizon bound and the mean field, with their minimizers γ* and the threshold γ_c",
                    static_grid={"T": [2, 5, 10, 20, 50], "q": [0.1, 0.3, 0.6]})
