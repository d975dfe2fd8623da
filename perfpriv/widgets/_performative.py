"""Explorer of the performative-learning chapter: private federated rounds with leaking clients.

Each redraw simulates both feedback loops (:func:`draw_participation`).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullFormatter

from .._validate import check_int, check_probability, check_real
from ..engine import Policy
from ..plots import new_figure
from ._common import Explorer, named_control, float_slider, log_slider

__all__ = ["participation_explorer", "draw_participation"]


def _model(mechanism, users):
    """The explorer's one noise scale γ and the users' (q, r), from the model's objects (refused by name otherwise)."""
    from ..behaviour import Memoryless
    from ..engine import level_grid
    from ..performative import PrivateFederatedRound

    levels = level_grid(mechanism, kind=PrivateFederatedRound)
    if levels.size != 1:
        raise ValueError(f"mechanism must hold one noise scale (PrivateFederatedRound(gamma, ...)), drawn against "
                         f"no privacy; got {levels.size} levels")
    if not isinstance(users, Memoryless):
        raise TypeError(f"users must be a perfpriv.behaviour.Memoryless (q, r); got {type(users).__name__}")
    if users.shape != () or users.rule != "leak":
        raise ValueError(f"users must hold one q and one r under the rule 'leak' (the survival thresholds drawn "
                         f"are theirs); got {users!r:.80}")
    return float(levels[0]), float(users.q), float(users.r)


def draw_participation(mechanism, users, *, T=60, n0=50, trials=8, policy=Policy(cap=200), seed=1):
    r"""Draw the explorer's figure: private federated rounds with leaking clients, at γ and without privacy.

    :func:`perfpriv.engine.simulate` of ``mechanism`` at its noise scale γ and at (almost) no
    privacy, :math:`γ = 10^{-3}` (the same mechanism otherwise, side by side with common random
    numbers), with ``users``. Left: mean number of clients over the rounds. Middle: the share of
    clients whose update leaked. Right: the model's squared distance to :math:`θ_{\mathrm{PS}}`.
    The dotted lines mark the survival thresholds :math:`γ_c(θ)` at the initial model and at
    :math:`θ_{\mathrm{PS}}` for :math:`N_0` clients
    (:meth:`perfpriv.performative.PrivateFederatedRound.survival_threshold`).

    Parameters
    ----------
    mechanism : perfpriv.performative.PrivateFederatedRound
        One noise scale γ > 0 and the clients' law (the explorer's: τ = 0.3, R = 10, m = 2,
        :math:`s_m` = 1, step 0.5, and the sliders' ε and :math:`s_ε`).
    users : perfpriv.behaviour.Memoryless
        One cell (q, r) of the rule ``"leak"``.
    T, n0, trials, policy, seed
        As in :func:`perfpriv.engine.simulate`; n0 >= 2 (the thresholds need two clients), a cap of 200
        clients and seed 1 (the chapter's stored explorer) by default.
    """
    from .. import engine
    from ..performative import PrivateFederatedRound

    gamma, q, r = _model(mechanism, users)
    n0 = check_int("n0", n0, low=2)          # the survival thresholds drawn need two clients
    both = PrivateFederatedRound(np.array([1e-3, gamma]), **mechanism.options())
    run = engine.simulate(both, users, T=T, n0=n0, trials=trials, policy=policy, seed=seed)
    start, stable = (mechanism.survival_threshold([0.0, float(mechanism.theta_ps[0])], n=n0, q=q, r=r) if r > 0
                     else (np.inf,) * 2)
    rounds = np.arange(run.population.shape[-1])
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
    cx.set_title(f"$\\bar\\varepsilon$ = {mechanism.clients.eps:g}, $s_\\varepsilon$ = {mechanism.clients.eps_sd:g}",
                 fontsize=9)
    return fig


def _draw_controls(gamma, q, r, eps_sd, eps):
    """The explorer's drawing: its slider values as the model's objects, drawn by :func:`draw_participation`.

    The clients' law is the chapter's (τ = 0.3, R = 10, m = 2, :math:`s_m` = 1, step 0.5).
    """
    from ..behaviour import Memoryless
    from ..performative import ClientLaw, FedAvg, PrivateFederatedRound

    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    mechanism = PrivateFederatedRound(gamma, tau=0.3, R=10.0, clients=ClientLaw(m=2.0, m_sd=1.0, eps=eps, eps_sd=eps_sd),
                                      fedavg=FedAvg(steps=0.5))
    return draw_participation(mechanism, Memoryless(q=check_probability("q", q, scalar=True),
                                                    r=check_probability("r", r, scalar=True)))


def participation_explorer():
    """Sliders γ, q, r, shift heterogeneity :math:`s_ε` and mean sensitivity ε: both loops at once (chapter 10).
    """
    controls = {
        "gamma": named_control("gamma", log_slider, r"noise $\gamma$", 0.6, 0.05, 10.0),
        "q": named_control("q", float_slider, "$q$ (leave)", 0.5, 0.0, 1.0, 0.05),
        "r": named_control("r", float_slider, "$r$ (join)", 0.2, 0.01, 1.0, 0.01),
        "eps_sd": named_control("eps_sd", float_slider, r"spread $s_\varepsilon$", 0.3, 0.0, 0.6, 0.05),
        "eps": named_control("eps", float_slider, r"sensitivity $\varepsilon$", 0.8, 0.0, 0.95, 0.05),
    }
    return Explorer("Private federated rounds", controls, _draw_controls,
                    plotted="the number of clients (left), the share of leaked updates (middle) and the model's squared distance to the stable point (right) over the rounds, at γ and with no privacy",
                    source="perfpriv.widgets.draw_participation",
                    static_grid={"gamma": [0.1, 0.6, 1.5, 4.0], "eps_sd": [0.0, 0.3, 0.6]})
