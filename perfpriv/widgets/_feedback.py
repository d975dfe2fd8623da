"""Explorer of the richer-feedback chapter: switch the users' behaviour and rerun the Gaussian model.

Both panels are live (:func:`perfpriv.feedback.compare_gaussian`), see :func:`draw_feedback`.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

from .._validate import check_int, check_real
from ..plots import family_label, new_figure
from ._common import Explorer, named_control, float_slider, int_slider, log_slider

__all__ = ["feedback_explorer", "draw_feedback"]

#: Menu entries of the explorer -> family names of :mod:`perfpriv.feedback`.
BEHAVIOURS = {"memory (k)": "memory", "heterogeneous (spread)": "heterogeneous",
              "budget-aware (tolerance ρ)": "budget", "contagion (κ)": "contagion"}


def draw_feedback(users, mechanism, *, q, r, T=10, n0=100, trials=20, policy=None, seed=0):
    """Draw the feedback explorer's figure: one behaviour against the paper's users in the Gaussian model.

    Left: the mean-field cumulative error against γ under ``users`` (solid) and the paper's users
    (dashed), with their γ*. Right: the population at the behaviour's γ*: simulated runs (thin), their
    mean and the mean field, for both.

    Parameters
    ----------
    users, mechanism, q, r, T, n0, trials, policy, seed
        As in :func:`perfpriv.feedback.compare_gaussian`, e.g. ``users=feedback.family("memory", 3)``
        (a budget's tolerance is in zCDP ρ, the Gaussian mechanism's unit); book scale by default.
    """
    from .. import feedback

    res = feedback.compare_gaussian(users, mechanism, q=q, r=r, T=T, n0=n0, trials=trials, policy=policy,
                                    seed=seed)
    fig, axes = new_figure(1, 2, width=4.3, height=3.3)
    ax, bx = axes[0, 0], axes[0, 1]
    ax.plot(res.gammas, res.error, "-", color="tab:blue", lw=2, label=family_label(users))
    ax.plot(res.gammas, res.error_paper, "--", color="k", lw=1.5, label="paper's users")
    for g, err, color in ((res.gamma_star, res.error, "tab:blue"), (res.gamma_star_paper, res.error_paper, "k")):
        ax.plot([g], [float(np.interp(np.log(g), np.log(res.gammas), err))], "o", color=color, ms=6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel("mean-field cumulative error")
    ax.legend(loc="upper center", frameon=False, fontsize=8)
    ax.set_title(rf"$\gamma^*$ = {res.gamma_star:.2g} (paper's users: {res.gamma_star_paper:.2g})", fontsize=9)
    rounds = np.arange(res.simulated.shape[-1])
    for sims, path, color, ls, lab in ((res.simulated, res.mean_field, "tab:blue", "-", family_label(users)),
                                       (res.simulated_paper, res.mean_field_paper, "k", "--", "paper's users")):
        for run in sims:
            bx.plot(rounds, np.maximum(run, 0.8), "-", color=color, lw=0.5, alpha=0.25)
        bx.plot(rounds, path, ls, color=color, lw=2, label=f"{lab}: mean field")
        bx.plot(rounds, sims.mean(axis=0), "o", color=color, ms=3.5, label=f"{lab}: simulated mean")
    bx.set_yscale("log")
    bx.set_xlabel("round $t$")
    bx.set_ylabel("population $N_t$")
    bx.set_title(rf"at $\gamma$ = {res.gamma_star:.2g}: $q$ = {q:g}, $r$ = {r:g}, $\tau$ = {mechanism.tau:g}",
                 fontsize=9)
    bx.legend(loc="best", frameon=False, fontsize=7)
    return fig


def _draw_controls(behaviour, k, spread, tolerance, kappa, q, r, tau):
    """The explorer's drawing: its control values as the model's objects, drawn by :func:`draw_feedback`.

    ``behaviour`` is a family name or a menu entry of :data:`BEHAVIOURS`; every behaviour's
    parameter is checked, the chosen one or not, with the ranges of :func:`perfpriv.feedback.family`
    (k = 1.5 is refused, not read as memory 1); the data model is the paper's (d = 12, R = 10).
    """
    from .. import feedback, gaussian

    choices = (*BEHAVIOURS, *BEHAVIOURS.values())
    if not isinstance(behaviour, str) or behaviour not in choices:
        raise ValueError(f"behaviour must be one of {', '.join(map(repr, choices))}; got {behaviour!r:.40}")
    name = BEHAVIOURS.get(behaviour, behaviour)
    parameters = {"memory": check_int("k", k, low=1),
                  "heterogeneous": check_real("spread", spread, low=0, high=1, scalar=True),
                  "budget": check_real("tolerance", tolerance, low=0, low_open=True, allow_inf=True, scalar=True),
                  "contagion": check_real("kappa", kappa, low=0, scalar=True)}
    return draw_feedback(feedback.family(name, parameters[name]), gaussian.GaussianMean(tau=tau, d=12, R=10.0),
                         q=q, r=r)


def feedback_explorer():
    """Behaviour menu, its parameter, q, r and τ: γ* and the population under richer users (chapter 08)."""
    controls = {
        "behaviour": widgets.Dropdown(options=list(BEHAVIOURS), value="memory (k)", description="users",
                                      style={"description_width": "initial"}),
        "k": named_control("k", int_slider, "memory $k$", 3, 1, 8),
        "spread": named_control("spread", float_slider, "spread $h$", 0.8, 0.0, 1.0, 0.05),
        "tolerance": named_control("tolerance", log_slider, r"tolerance $b$", 2000.0, 100.0, 1e5),
        "kappa": named_control("kappa", float_slider, r"contagion $\kappa$", 1.0, 0.0, 3.0, 0.1),
        "q": named_control("q", float_slider, "$q$ (leave)", 0.3, 0.01, 0.99, 0.01),
        "r": named_control("r", float_slider, "$r$ (join)", 0.6, 0.01, 0.99, 0.01),
        "tau": named_control("tau", log_slider, r"threshold $\tau$", 0.02, 0.005, 0.5),
    }
    # the static page: every behaviour (at its default parameter) for three leaving probabilities
    return Explorer("Richer feedback", controls, _draw_controls, columns=4, source="perfpriv.widgets.draw_feedback",
                    plotted="the mean-field cumulative error against the noise scale γ under the chosen users and the paper's (left) and the population at the best γ* (right)",
                    static_grid={"behaviour": list(BEHAVIOURS), "q": [0.1, 0.3, 0.9]})
