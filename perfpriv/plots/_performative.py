"""Figures of the performative-learning chapter (papers 002-003; beyond the paper).

Each draws a result of :mod:`perfpriv.performative` (or of :func:`perfpriv.engine.simulate` with its
:class:`perfpriv.performative.PrivateFederatedRound`).
"""

from __future__ import annotations

import numpy as np

from .._validate import check_flag, check_int, check_real
from ._common import check_indices, check_items, check_type, new_figure

__all__ = ["figure_retraining", "figure_level_response", "figure_fedavg_convergence", "figure_fedavg_factors",
           "figure_bilevel", "figure_participation"]

_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:gray")


def _plain_log_x(ax, values):
    """Major ticks of a log x axis at 1-2-5 numbers inside the data, printed plainly; no minor labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    lo, hi = float(np.min(values)), float(np.max(values))
    ticks = [b * 10.0**k for k in range(int(np.floor(np.log10(lo))) - 1, int(np.ceil(np.log10(hi))) + 1)
             for b in (1, 2, 5) if lo <= b * 10.0**k <= hi]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _quiet_minor_y(ax):
    """No labels on the minor ticks of a log y axis (they crowd short axes)."""
    from matplotlib.ticker import NullFormatter

    ax.yaxis.set_minor_formatter(NullFormatter())


def _nonempty(name, value, cls_name=None):
    return check_items(name, value, cls_name, mapping=True)


def figure_retraining(paths, problem, *, title=None):
    r"""Left: distance to :math:`θ_{\mathrm{PS}}` along retraining paths. Right: stable versus optimal on one problem.

    Parameters
    ----------
    paths : dict of str to perfpriv.performative.PerformativePath
        Label -> exact (``samples=None``) path; drawn as :math:`\|θ_t - θ_{\mathrm{PS}}\|` on a log scale.
    problem : perfpriv.performative.PerformativeProblem
        A one-dimensional problem; the right panel draws its performative risk
        :math:`\mathrm{PR}(θ)`, the decoupled risk :math:`\mathrm{DR}(\cdot; θ_{\mathrm{PS}})` of the data :math:`θ_{\mathrm{PS}}` induces, and
        marks :math:`θ_{\mathrm{PS}}` and :math:`θ_{\mathrm{PO}}`.
    title : str, optional
    """
    items = _nonempty("paths", paths, "PerformativePath")
    check_type(problem, "problem", "PerformativeProblem")
    if problem.p != 1:
        raise ValueError(f"problem must be one-dimensional (p = 1) for the right panel; got p = {problem.p}")
    fig, axes = new_figure(1, 2, width=4.3, height=3.2)
    ax, bx = axes[0, 0], axes[0, 1]
    for k, (label, path) in enumerate(items):
        dist = path.distance
        if dist.ndim != 1:
            raise ValueError("paths must be exact paths (samples=None)")
        ax.semilogy(np.arange(dist.size), np.maximum(dist, 1e-16), "o-", ms=3, color=_COLORS[k % len(_COLORS)],
                    label=label)
    ax.set_xlabel("deployment $t$")
    ax.set_ylabel(r"$\|\theta_t - \theta_{\rm PS}\|$")
    ax.legend(loc="best")
    ps, po = float(problem.stable_point()[0]), float(problem.optimal_point()[0])
    lo, hi = min(ps, po), max(ps, po)
    span = max(hi - lo, 1.0)
    grid = np.linspace(lo - 0.8 * span, hi + 0.8 * span, 200)[:, None]
    bx.plot(grid[:, 0], problem.performative_risk(grid), color="tab:blue", lw=2,
            label=r"performative risk PR$(\theta)$")
    bx.plot(grid[:, 0], problem.decoupled_risk(grid, np.array([ps])), "--", color="tab:orange", lw=1.5,
            label=r"decoupled risk DR$(\theta;\theta_{\rm PS})$")
    bx.axvline(ps, color="tab:orange", lw=1, ls=":")
    bx.axvline(po, color="tab:blue", lw=1, ls=":")
    bx.plot([ps], problem.performative_risk(np.array([ps])), "s", color="tab:orange", label=r"$\theta_{\rm PS}$")
    bx.plot([po], problem.performative_risk(np.array([po])), "D", color="tab:blue", label=r"$\theta_{\rm PO}$")
    bx.set_xlabel(r"model $\theta$")
    bx.set_ylabel("risk")
    bx.legend(loc="upper center", fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def figure_level_response(response, *, deployed=(), title=None):
    """The privacy level as a distribution map: long-run population (left) and the two risks (right).

    Parameters
    ----------
    response : perfpriv.performative.LevelResponse
        With positive finite levels (drawn on a log axis).
    deployed : sequence of int
        Indices of deployed levels whose decoupled risk DR(·; ℓ') is drawn.
    title : str, optional
    """
    check_type(response, "response", "LevelResponse")
    deployed = check_indices("deployed", deployed, np.size(response.levels))
    lv = response.levels
    if not np.all(np.isfinite(lv) & (lv > 0)):
        raise ValueError("response.levels must be positive and finite to be drawn on a log axis")
    sym = {"gamma": r"\gamma", "epsilon": r"\varepsilon"}.get(response.level_name, r"\ell")
    fig, axes = new_figure(1, 2, width=4.3, height=3.2)
    ax, bx = axes[0, 0], axes[0, 1]
    ax.semilogx(lv, response.population, "o-", color="tab:blue", ms=3)
    ax.set_yscale("log")
    _plain_log_x(ax, lv)
    ax.set_xlabel(f"deployed level ${sym}'$")
    ax.set_ylabel(f"population $N_T({sym}')$ after $T={response.T}$ rounds")
    bx.loglog(lv, response.performative_risk, "-", color="tab:blue", lw=2, label=f"PR$({sym})$")
    for k, j in enumerate(deployed):
        bx.loglog(lv, response.decoupled_risk[:, j], "--", color=_COLORS[(k + 1) % len(_COLORS)], lw=1.3,
                  label=f"DR$({sym};\\,{lv[j]:.3g})$")
    best = int(np.argmin(response.performative_risk))
    bx.plot(lv[best], response.performative_risk[best], "D", color="tab:blue", label=f"optimal ${sym}$ = {lv[best]:.3g}")
    for s in response.stable:
        i = int(np.flatnonzero(lv == s)[0])
        bx.plot(lv[i], response.performative_risk[i], "s", color="tab:red", label=f"stable ${sym}$ = {s:.3g}")
    bx.set_xlabel(f"level ${sym}$")
    bx.set_ylabel("expected error of a release")
    _plain_log_x(bx, lv)
    bx.legend(loc="best", fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def figure_fedavg_convergence(moments, runs=None, *, rate_line=True, title=None):
    r""":math:`\mathbb{E}\|\bar θ_t - θ_{\mathrm{PS}}\|^{2}` of P-FedAvg against the iteration t (log-log): exact lines, simulated points.

    Parameters
    ----------
    moments : dict of str to perfpriv.performative.FedAvgMoments
        Label -> exact moments (lines).
    runs : dict of str to perfpriv.performative.FedAvgRun, optional
        Label -> simulated runs (points with ± 2 standard errors), drawn in
        the color of the moments with the same label.
    rate_line : bool
        Draw a reference line ∝ 1/t through the first curve's last point.
    title : str, optional
    """
    items = _nonempty("moments", moments, "FedAvgMoments")
    runs = {} if runs is None else dict(_nonempty("runs", runs, "FedAvgRun"))
    rate_line = check_flag("rate_line", rate_line)
    fig, axes = new_figure(1, 1, width=5.6, height=3.6)
    ax = axes[0, 0]
    colors = {}
    for k, (label, mom) in enumerate(items):
        color = _COLORS[k % len(_COLORS)]
        colors[label] = color
        t = np.arange(1, mom.sq_distance.size)
        ax.loglog(t, mom.sq_distance[1:], "-", color=color, lw=1.8, label=label)
    for label, run in runs.items():
        color = colors.get(label, "k")
        t = np.unique(np.geomspace(1, run.T, 12).astype(int))
        ax.errorbar(t, run.mean_sq_distance[t], yerr=2 * run.se[t], fmt="o", ms=3.5, color=color, capsize=2,
                    mfc="white", label=f"{label}: simulated ({run.trials} runs)")
    if rate_line:
        mom = items[0][1]
        T = mom.sq_distance.size - 1
        t = np.geomspace(max(T / 20, 1), T, 20)
        ax.loglog(t, mom.sq_distance[-1] * T / t, ":", color="k", lw=1.2, label=r"$\propto 1/t$")
    ax.set_xlabel("local iteration $t$")
    ax.set_ylabel(r"$\mathbb{E}\,\|\bar\theta_t - \theta_{\rm PS}\|^2$")
    ax.legend(loc="lower left", fontsize=7)
    if title:
        ax.set_title(title)
    return fig


def figure_fedavg_factors(panels, *, title=None):
    r"""Final :math:`\mathbb{E}\|\bar θ_T - θ_{\mathrm{PS}}\|^{2}` of P-FedAvg against one factor per panel (E, K, heterogeneity...).

    Parameters
    ----------
    panels : dict of str to (array_like, dict of str to array_like)
        Panel x-label -> (x values, {curve label: final squared distances}).
    title : str, optional
    """
    items = _nonempty("panels", panels)
    for xlabel, panel in items:
        if not isinstance(xlabel, str) or not isinstance(panel, tuple) or len(panel) != 2 or \
                not isinstance(panel[1], dict) or not panel[1]:
            raise TypeError(f"panels must map each x-label to a pair (x values, {{curve label: values}}); "
                            f"got {xlabel!r:.30}: {panel!r:.60}")
        x = np.atleast_1d(check_real("panels", panel[0]))
        for y in panel[1].values():
            if np.shape(check_real("panels", y)) != x.shape:
                raise ValueError(f"panels: every curve of {xlabel!r} must have one value per x ({x.size})")
    fig, axes = new_figure(1, len(items), width=3.3, height=3.1)
    for p, (xlabel, (x, curves)) in enumerate(items):
        ax = axes[0, p]
        for k, (label, y) in enumerate(curves.items()):
            ax.plot(np.asarray(x, float), np.asarray(y, float), "o-", ms=3.5, color=_COLORS[k % len(_COLORS)],
                    label=label)
        ax.set_yscale("log")
        _quiet_minor_y(ax)
        ax.set_xlabel(xlabel)
        if p == 0:
            ax.set_ylabel(r"$\mathbb{E}\,\|\bar\theta_T - \theta_{\rm PS}\|^2$")
        ax.legend(loc="best", fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def figure_bilevel(paths, problem, *, eps_c=np.linspace(0.0, 2.0, 61), eps_d=np.linspace(0.0, 6.0, 61), title=None):
    """Left: FBi-RRM's fixed-point gap per round. Right: where it converges in the :math:`(ε_c, ε_d)` plane.

    Parameters
    ----------
    paths : dict of str to perfpriv.performative.BilevelPath
    problem : perfpriv.performative.BilevelRegression
        Its data and regularization define the right panel: the curve
        :math:`ρ(J(ε_c, ε_d)) = 1` (FBi-RRM converges below it) and the curve where the
        sufficient bound reaches 1, for equal sensitivities across clients.
    eps_c, eps_d : array_like
        Grids of the UL and LL sensitivities of the right panel.
    title : str, optional
    """
    items = _nonempty("paths", paths, "BilevelPath")
    check_type(problem, "problem", "BilevelRegression")
    eps_c, eps_d = (np.atleast_1d(check_real(n, v, low=0)) for n, v in (("eps_c", eps_c), ("eps_d", eps_d)))
    for n, v in (("eps_c", eps_c), ("eps_d", eps_d)):
        if v.ndim != 1 or v.size < 2:
            raise ValueError(f"{n} must be a 1-D grid of at least two sensitivities; got shape {v.shape}")
    fig, axes = new_figure(1, 2, width=4.3, height=3.3)
    ax, bx = axes[0, 0], axes[0, 1]
    for k, (label, path) in enumerate(items):
        g = np.where(np.isfinite(path.gap), path.gap, np.nan)
        ax.semilogy(np.arange(g.size), np.maximum(g, 1e-16), "-", color=_COLORS[k % len(_COLORS)], lw=1.8, label=label)
    ax.set_xlabel("round $r$")
    ax.set_ylabel(r"fixed-point gap $\|R(x_r) - x_r\|$")
    ax.legend(loc="best", fontsize=7)
    sc, sd = np.asarray(eps_c, float), np.asarray(eps_d, float)
    one_c = problem.with_sensitivities(1.0, 0.0)
    one_d = problem.with_sensitivities(0.0, 1.0)
    Jc, Jd = one_c.jacobian, one_d.jacobian
    rho = np.array([[np.max(np.abs(np.linalg.eigvals(ec * Jc + ed * Jd))) for ec in sc] for ed in sd])
    bx.contourf(sc, sd, rho < 1.0, levels=[-0.5, 0.5, 1.5], colors=["#f4d6d6", "#d6ecd6"])
    bx.contour(sc, sd, rho, levels=[1.0], colors="tab:green", linewidths=2)
    inv_c, inv_d = 1.0 / one_c.bound_threshold(), 1.0 / one_d.bound_threshold()
    ec = np.linspace(0, sc.max(), 50)
    ed = (1.0 - inv_c * ec) / inv_d
    keep = (ed >= 0) & (ed <= sd.max())
    bx.plot(ec[keep], ed[keep], "--", color="k", lw=1.2, label="sufficient bound = 1")
    bx.plot([], [], color="tab:green", lw=2, label=r"$\rho(J) = 1$ (exact)")
    bx.set_xlabel(r"UL sensitivity $\varepsilon_c$")
    bx.set_ylabel(r"LL sensitivity $\varepsilon_d$")
    bx.set_title(f"$\\lambda_x$ = {problem.lam_x:g}, $\\lambda_y$ = {problem.lam_y:g}; green: converges")
    bx.legend(loc="upper right", fontsize=7)
    if title:
        fig.suptitle(title)
    return fig


def figure_participation(runs, *, show=None, paths_of=None, last=20, theory=True, title=None):
    """The two loops together: population and error over the rounds, and the long-run error against γ.

    Parameters
    ----------
    runs : dict of str to perfpriv.engine.SimulationRun
        Label -> run of a :class:`perfpriv.performative.PrivateFederatedRound` over one grid of γ.
    show, paths_of : optional
        Indices of the γ grid (default: four spread over it) and label of the run (default: the first)
        drawn over the rounds.
    last : int
        The long-run error averages the last ``last`` rounds of each trial.
    theory : bool
        Draw each run's :meth:`perfpriv.performative.PrivateFederatedRound.stationary_error` at the
        population cap (dashed), where it exists.
    title : str, optional
    """
    items = _nonempty("runs", runs, "SimulationRun")
    last = check_int("last", last, low=1)
    theory = check_flag("theory", theory)
    if paths_of is None:
        paths_of = items[0][0]
    if not isinstance(paths_of, str) or paths_of not in runs:
        raise ValueError(f"paths_of must be one of the runs' labels {list(runs)}; got {paths_of!r}")
    first = runs[paths_of]
    drawn = False
    gam = np.atleast_1d(np.asarray(first.level, float))
    if first.population.ndim != 3 or gam.size < 2:
        raise ValueError("runs must hold simulations over a grid of at least two noise scales (shape (L, trials, T+1))")
    show = list(np.linspace(0, gam.size - 1, 4).round().astype(int)) if show is None else \
        check_indices("show", show, gam.size)
    if not show:
        raise ValueError("show must hold at least one index of the noise grid")
    fig, axes = new_figure(1, 3, width=3.3, height=3.2)
    ax, bx, cx = axes[0]
    rounds = np.arange(first.T + 1)
    for k, i in enumerate(show):
        color = _COLORS[k % len(_COLORS)]
        ax.plot(rounds, first.population[i].mean(axis=0), color=color, lw=1.8, label=f"$\\gamma$ = {gam[i]:.3g}")
        bx.semilogy(rounds[1:], first.sq_error[i].mean(axis=0), color=color, lw=1.5)
    ax.set_xlabel("round $t$")
    ax.set_ylabel("clients $N_t$ (mean)")
    ax.legend(loc="best", fontsize=7)
    bx.set_xlabel("round $t$")
    bx.set_ylabel(r"$\|\theta_t - \theta_{\rm PS}\|^2$ (mean)")
    bx.set_title(paths_of, fontsize=9)
    for k, (label, run) in enumerate(items):
        g = np.atleast_1d(np.asarray(run.level, float))
        tail = run.sq_error[..., -last:].mean(axis=-1)
        mean, se = tail.mean(axis=-1), tail.std(axis=-1, ddof=1) / np.sqrt(tail.shape[-1])
        color = _COLORS[k % len(_COLORS)] if len(items) > 1 else "k"
        cx.errorbar(g, mean, yerr=2 * se, fmt="o-", ms=3, capsize=2, color=color, label=label)
        best = int(np.argmin(mean))
        cx.plot(g[best], mean[best], "D", ms=7, mfc="none", color=color)
        if theory and run.policy.cap is not None:
            try:
                line = run.mechanism.stationary_error(run.policy.cap, g)
            except ValueError:
                line = None
            if line is not None:
                cx.plot(g, line, "--", color=color, lw=1)
                drawn = True
    cx.set_xscale("log")
    cx.set_yscale("log")
    _plain_log_x(cx, np.atleast_1d(np.asarray(first.level, float)))
    if drawn:
        cx.plot([], [], "--", color="gray", lw=1, label="theory, clients at the cap")
    cx.set_xlabel(r"noise scale $\gamma$")
    cx.set_ylabel(f"long-run error (last {last} rounds)")
    cx.legend(loc="best", fontsize=7)
    if title:
        fig.suptitle(title)
    return fig
