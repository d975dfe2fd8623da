"""Explorer of the privacy-schedules chapter: the optimal γ schedule against the best constant.

Theory only (mean-field regret). For speed the optimal schedule is the
descent started from the best constant γ* on the spline surrogate of :math:`p_τ`,
evaluated exactly (``optimize.optimal_schedule(..., search=dict(starts="constant", polish=0))``);
the chapter uses the full multi-start search.
"""

from __future__ import annotations

import numpy as np

from .. import engine, optimize
from .._validate import check_int
from ..behaviour import Memoryless
from ..engine import Schedule
from ..gaussian import GaussianMean
from ..plots import assign, new_figure, params, plain_log
from ._common import Explorer, named_control, float_slider, int_slider, log_slider

__all__ = ["schedule_explorer", "draw_schedule"]


def draw_schedule(*, q=0.3, r=0.6, tau=0.02, T=10, n0=200, d=12, R=10.0, cap=20000):
    """Draw the schedule explorer's figure for one set of slider values.

    Left: the optimal schedule :math:`γ_t` and the best constant γ*. Right: the cumulative mean-field
    regret of both over the rounds, with the gap. The arguments are those of
    :func:`perfpriv.optimize.optimal_schedule` and of its ``Memoryless`` users and ``GaussianMean``.

    Examples
    --------
    >>> len(draw_schedule(T=3).axes)
    2
    """
    T = check_int("T", T, low=1)
    users = Memoryless(q=q, r=r)
    res = optimize.optimal_schedule(GaussianMean(tau=tau, d=d, R=R), users, T=T, n0=n0,
                                    policy=engine.Policy(cap=cap), search=dict(starts="constant", polish=0))
    both = Schedule(np.stack([res.gamma, np.full(T, res.constant)]))
    errors = engine.mean_field(GaussianMean(both, tau=tau, d=d, R=R), users, T=T, n0=n0, cap=cap).sq_error  # (2, T)
    rounds = np.arange(1, T + 1)
    fig, axes = new_figure(1, 2, width=4.3, height=3.2)
    ax, bx = axes[0, 0], axes[0, 1]
    ax.step(rounds, res.gamma, where="mid", color="tab:blue", lw=2, label=r"optimal schedule $\gamma_t$")
    ax.axhline(res.constant, color="k", ls="--", lw=1, label=f"best constant {assign('gamma_star', res.constant)}")
    ax.set_yscale("log")
    plain_log(ax, x=False, y=True)
    ax.set_xlabel("round $t$")
    ax.set_ylabel(r"noise scale $\gamma_t$")
    ax.legend(loc="best")
    opt, con = np.cumsum(errors, axis=-1)
    bx.plot(rounds, con, "--", color="k", lw=1.5, label=rf"constant $\gamma^*$: {res.constant_regret:.3g}")
    bx.plot(rounds, opt, "-", color="tab:blue", lw=2, label=f"schedule: {res.regret:.3g}")
    bx.set_xlabel("round $t$")
    bx.set_ylabel("cumulative mean-field regret")
    bx.set_title(f"gain {100 * res.gain:.1f}%")
    fig.suptitle(params(q=q, r=r, tau=tau, T=T, n0=n0))
    bx.legend(loc="best")
    return fig


def schedule_explorer():
    """Sliders q, r, τ, T: the optimal noise schedule and its regret gap over γ* (chapter 07)."""
    controls = {
        "q": named_control("q", float_slider, "$q$ (leave)", 0.3, 0.01, 0.99, 0.01),
        "r": named_control("r", float_slider, "$r$ (join)", 0.6, 0.01, 0.99, 0.01),
        "tau": named_control("tau", log_slider, r"threshold $\tau$", 0.02, 0.005, 0.5),
        "T": named_control("T", int_slider, "rounds $T$", 10, 2, 20),
    }
    return Explorer("Privacy schedule", controls, draw_schedule, source="perfpriv.widgets.draw_schedule",
                    plotted="the optimal noise schedule γ_t against the best constant γ* (left) and the cumulative mean-field regret of both over the rounds (right)",
                    static_grid={"T": [5, 10, 15, 20], "q": [0.1, 0.3, 0.6]})
