"""Explorer of the performative-learning chapter: private federated rounds with leaking clients.

Each redraw simulates the two feedback loops of
:func:`perfpriv.performative.simulate_participation` for one noise scale
and a no-privacy reference, a few trials at the chapter's default size.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullFormatter

from .._validate import check_int, check_real
from ..plots import new_figure
from ._common import Explorer, named_control, float_slider, log_slider

__all__ = ["participation_explorer", "draw_participation"]


def draw_participation(gamma=0.6, *, q=0.5, r=0.2, eps_sd=0.3, eps=0.8, tau=0.3, R=10.0, m=2.0, m_sd=1.0,
                       step=0.5, T=60, n0=50, cap=200, trials=8, seed=1):
    """Draw the explorer's figure for one set of slider values.

    Left: mean number of clients over the rounds, for γ and for (almost) no
    privacy, :math:`γ = 10^{-3}`. Middle: the share of clients whose update leaked.
    Right: the model's squared distance to :math:`θ_{\\mathrm{PS}}`. The dotted lines mark the
    survival thresholds :math:`γ_c(θ)` at the initial model and at :math:`θ_{\\mathrm{PS}}` for :math:`N_0`
    clients (:meth:`perfpriv.performative.PrivateFederatedRound.survival_threshold`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from ..engine import Policy
    from ..performative import PrivateFederatedRound, simulate_participation

    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    n0 = check_int("n0", n0, low=2)          # the survival thresholds drawn need two clients
    levels = np.array([1e-3, gamma])
    run = simulate_participation(levels, tau=tau, R=R, q=q, r=r, T=T, n0=n0, trials=trials, seed=seed,
                                 policy=Policy(cap=cap), m=m, m_sd=m_sd, eps=eps, eps_sd=eps_sd, step=step)
    mech = PrivateFederatedRound(gamma, tau=tau, R=R, m=m, m_sd=m_sd, eps=eps, eps_sd=eps_sd, step=step)
    start, stable = mech.survival_threshold([0.0, float(mech.theta_ps[0])], n=n0, q=q, r=r) if r > 0 else (np.inf,) * 2
    rounds = np.arange(T + 1)
    fig, axes = new_figure(1, 3, width=3.2, height=3.0)
    ax, bx, cx = axes[0]
    for i, (label, color) in enumerate([("no privacy", "tab:gray"), (f"$\\gamma$ = {gamma:.3g}", "tab:blue")]):
        ax.plot(rounds, run.population[i].mean(axis=0), color=color, lw=2, label=label)
        bx.plot(rounds[1:], run.leak_fraction[i].mean(axis=0), color=color, lw=1.5)
        cx.semilogy(rounds[1:], run.sq_error[i].mean(axis=0), color=color, lw=1.5)
    ax.set_xlabel("round $t$")
    ax.set_ylabel("clients $N_t$")
    ax.legend(loc="best", fontsize=7)
    ax.set_title(f"$\\gamma_c$: {start:.2f} at $\\theta_0$, {stable:.2f} at $\\theta_{{\\rm PS}}$", fontsize=9)
    bx.set_xlabel("round $t$")
    bx.set_ylabel("share of leaked updates")
    bx.axhline(r / (q + r) if q + r > 0 else 0.0, color="k", ls=":", lw=1)
    bx.set_ylim(0, 1.02)
    cx.yaxis.set_minor_formatter(NullFormatter())
    cx.set_xlabel("round $t$")
    cx.set_ylabel(r"$\|\theta_t - \theta_{\rm PS}\|^2$")
    cx.set_title(f"$\\bar\\varepsilon$ = {eps:g}, $s_\\varepsilon$ = {eps_sd:g}", fontsize=9)
    return fig


def participation_explorer():
    """Sliders γ, q, r, shift heterogeneity :math:`s_ε` and mean sensitivity ε: both loops at once (chapter 10).

    Returns
    -------
    Explorer
    """
    controls = {
        "gamma": named_control("gamma", log_slider, r"noise $\gamma$", 0.6, 0.05, 10.0),
        "q": named_control("q", float_slider, "$q$ (leave)", 0.5, 0.0, 1.0, 0.05),
        "r": named_control("r", float_slider, "$r$ (join)", 0.2, 0.01, 1.0, 0.01),
        "eps_sd": named_control("eps_sd", float_slider, r"spread $s_\varepsilon$", 0.3, 0.0, 0.6, 0.05),
        "eps": named_control("eps", float_slider, r"sensitivity $\varepsilon$", 0.8, 0.0, 0.95, 0.05),
    }
    return Explorer("Private federated rounds", controls, draw_participation,
                    plotted="the number of clients (left), the share of leaked updates (middle) and the model's squared distance to the stable point (right) over the rounds, at γ and with no privacy",
                    source="perfpriv.widgets.draw_participation",
                    static_grid={"gamma": [0.1, 0.6, 1.5, 4.0], "eps_sd": [0.0, 0.3, 0.6]})
