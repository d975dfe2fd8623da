"""Explorer of the richer-feedback chapter: switch the users' behaviour and rerun the Gaussian model.

The mean-field cumulative error over a grid of noise scales γ (under the
chosen behaviour and under the paper's users) and a small simulation at the
behaviour's γ*, both live (:func:`perfpriv.feedback.compare_gaussian`).
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


def draw_feedback(behaviour="memory", k=3, spread=0.8, tolerance=2000.0, kappa=1.0, *, q=0.3, r=0.6, tau=0.02,
                  T=10, n0=100, d=12, R=10.0, trials=20, cap=20000, seed=0):
    """Draw the feedback explorer's figure for one set of control values.

    Left: the mean-field cumulative error as a function of γ under the
    chosen behaviour (solid) and the paper's users (dashed), with their γ*.
    Right: the population at the behaviour's γ*: simulated runs (thin),
    their mean and the mean field, for both.

    Parameters
    ----------
    behaviour : str
        A family name (``"memory"``, ``"heterogeneous"``, ``"budget"``,
        ``"contagion"``) or a menu entry of :data:`BEHAVIOURS`.
    k, spread, tolerance, kappa : float
        The parameter of each behaviour (only the chosen one is used;
        ``tolerance`` is in zCDP ρ, the Gaussian mechanism's unit).
    q, r, tau : float
        Leaving and recruiting probabilities, leak threshold τ.
    T, n0, d, R, trials, cap, seed
        Size of the experiment (book scale by default).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from .. import feedback

    choices = (*BEHAVIOURS, *BEHAVIOURS.values())
    if not isinstance(behaviour, str) or behaviour not in choices:
        raise ValueError(f"behaviour must be one of {', '.join(map(repr, choices))}; got {behaviour!r:.40}")
    name = BEHAVIOURS.get(behaviour, behaviour)
    # every behaviour's parameter is checked, the chosen one or not, with the ranges of perfpriv.feedback.family
    # (k = 1.5 must be refused, not read as memory 1)
    parameters = {"memory": check_int("k", k, low=1),
                  "heterogeneous": check_real("spread", spread, low=0, high=1, scalar=True),
                  "budget": check_real("tolerance", tolerance, low=0, low_open=True, allow_inf=True, scalar=True),
                  "contagion": check_real("kappa", kappa, low=0, scalar=True)}
    parameter = parameters[name]
    users = feedback.family(name, parameter)
    res = feedback.compare_gaussian(users, q=q, r=r, tau=tau, T=T, n0=n0, d=d, R=R, trials=trials, cap=cap,
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
    rounds = np.arange(T + 1)
    for sims, path, color, ls, lab in ((res.simulated, res.mean_field, "tab:blue", "-", family_label(users)),
                                       (res.simulated_paper, res.mean_field_paper, "k", "--", "paper's users")):
        for run in sims:
            bx.plot(rounds, np.maximum(run, 0.8), "-", color=color, lw=0.5, alpha=0.25)
        bx.plot(rounds, path, ls, color=color, lw=2, label=f"{lab}: mean field")
        bx.plot(rounds, sims.mean(axis=0), "o", color=color, ms=3.5, label=f"{lab}: simulated mean")
    bx.set_yscale("log")
    bx.set_xlabel("round $t$")
    bx.set_ylabel("population $N_t$")
    bx.set_title(rf"at $\gamma$ = {res.gamma_star:.2g}: $q$ = {q:g}, $r$ = {r:g}, $\tau$ = {tau:g}", fontsize=9)
    bx.legend(loc="best", frameon=False, fontsize=7)
    return fig


def feedback_explorer():
    """Behaviour menu, its parameter, q, r and τ: γ* and the population under richer users (chapter 08).

    Returns
    -------
    Explorer
    """
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
    return Explorer("Richer feedback", controls, draw_feedback, columns=4, source="perfpriv.widgets.draw_feedback",
                    plotted="the mean-field cumulative error against the noise scale γ under the chosen users and the paper's (left) and the population at the best γ* (right)",
                    static_grid={"behaviour": list(BEHAVIOURS), "q": [0.1, 0.3, 0.9]})
