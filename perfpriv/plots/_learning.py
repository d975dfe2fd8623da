"""Figures of the learning-tasks chapter: private ridge regression and private gradient descent.

Every function draws a result object computed by :mod:`perfpriv.regression`
or :mod:`perfpriv.gradient` (the chapter computes once, checks its claims on
the numbers, then draws them) and returns a ``matplotlib.figure.Figure``.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import LogNorm
from scipy import stats

from .._validate import check_probability, check_real
from ._common import check_items, check_type, new_figure, plain_log

__all__ = [
    "figure_ridge_sensitivity",
    "figure_one_round",
    "figure_gamma_star_map",
    "figure_published_privacy",
    "figure_gd_utility",
    "figure_individual_privacy",
    "figure_transcript_checks",
    "figure_long_run_utility",
]

_C = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")


def _two_panels():
    """A figure of two panels side by side, the chapter's size: (figure, left axes, right axes)."""
    fig, axes = new_figure(1, 2, width=4.3, height=3.3)
    return fig, axes[0, 0], axes[0, 1]


def figure_ridge_sensitivity(profile, *, title=None):
    """The removal bound :math:`Δ^{-}(n)`, the worst dataset found, and the shifts of typical records.

    Parameters
    ----------
    profile : perfpriv.regression.SensitivityProfile
    title : str, optional
    """
    check_type(profile, "profile", "SensitivityProfile")
    p = profile
    fig, ax, bx = _two_panels()
    ax.loglog(p.n, p.bound, "k-", lw=2, label=r"bound $\Delta^-(n)$ (theorem)")
    ax.loglog(p.n, p.worst, "o--", color=_C[3], label="worst dataset found")
    ax.loglog(p.n, p.maximum, "s-", color=_C[0], ms=4, label=r"typical data: largest $\|\delta_i\|$")
    ax.loglog(p.n, p.q99, "^-", color=_C[1], ms=4, label="typical data: 99% quantile")
    ax.loglog(p.n, p.median, "v-", color=_C[2], ms=4, label="typical data: median")
    ax.set_xlabel(r"records $n$")
    ax.set_ylabel(r"leave-one-out shift $\|\hat\beta - \hat\beta_{-i}\|$")
    ax.legend(loc="lower left", fontsize=7)
    bx.semilogx(p.n, p.worst / p.bound, "o--", color=_C[3], label="worst found / bound")
    bx.semilogx(p.n, p.median / p.bound, "v-", color=_C[2], label="typical median / bound")
    bx.set_yscale("log")
    bx.set_ylim(min(1e-5, float(np.min(p.median / p.bound)) / 2), 2.0)
    bx.axhline(1.0, color="k", lw=1)
    bx.set_xlabel(r"records $n$")
    bx.set_ylabel("fraction of the bound")
    bx.legend(loc="lower left", fontsize=8)
    fig.suptitle(title or (rf"ridge, $\lambda$={p.lam:g}, $B_x$={p.x_bound:g}, $B_y$={p.y_bound:g}, "
                           rf"$d$={p.d}"))
    return fig


def figure_one_round(check, *, symbol=r"\gamma", title=None):
    r"""Mean-field leak probability and error against the level, with one simulated round per point.

    Parameters
    ----------
    check : perfpriv.regression.OneRoundCheck (or perfpriv.gradient's)
    symbol : str
        Mathtext of the level (``r"\gamma"`` or ``r"\rho"``).
    title : str, optional
    """
    check_type(check, "check", "OneRoundCheck")
    c = check
    fig, ax, bx = _two_panels()
    lo, hi = float(np.min(c.levels)), float(np.max(c.levels))
    if lo == hi:  # one level: fix a decade around it before plotting (autoscaling a zero-width range warns)
        for axis in (ax, bx):
            axis.set_xscale("log")
            axis.set_xlim(lo / np.sqrt(10.0), lo * np.sqrt(10.0))
    for i, n in enumerate(c.n):
        col = _C[i % len(_C)]
        ax.semilogx(c.levels, c.p_theory[i], "-", color=col, label=rf"mean field, $N$={n}")
        ax.errorbar(c.levels, c.p_simulated[i], yerr=1.96 * c.p_se[i], fmt="o", color=col, ms=4, capsize=2)
        bx.loglog(c.levels, c.e_theory[i], "-", color=col)
        bx.errorbar(c.levels, c.e_simulated[i], yerr=1.96 * c.e_se[i], fmt="o", color=col, ms=4, capsize=2)
    ax.set_xlabel(rf"${symbol}$")
    ax.set_ylabel(r"leak probability $p_\tau$")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="best", fontsize=8)
    bx.set_xlabel(rf"${symbol}$")
    bx.set_ylabel("expected error of the release")
    fig.suptitle(title or f"lines: mean field; points: {c.trials} simulated rounds (95% intervals)")
    return fig


def figure_gamma_star_map(simulated, theory, *, q, r, title=None):
    r"""γ* over (q, r): the simulated grid search next to the mean-field theory, and one row of each.

    Parameters
    ----------
    simulated, theory : perfpriv.optimize.LevelOptimum
        :func:`perfpriv.optimize.level_search` of the same mechanism (a grid
        of γ) and the same :class:`perfpriv.behaviour.Memoryless` grid of
        cells (``q`` down the rows, ``r`` across the columns), by simulation
        and by mean field.
    q, r : 1-D array_like
        The leave and recruit probabilities of the rows and columns.
    title : str, optional
    """
    check_type(simulated, "simulated", "LevelOptimum")
    check_type(theory, "theory", "LevelOptimum")
    if simulated.method != "simulation" or theory.method != "mean_field":
        raise ValueError(f"simulated must be a search by simulation and theory one by mean field; got "
                         f"{simulated.method!r} and {theory.method!r}")
    q, r = (np.atleast_1d(np.asarray(check_probability(name, v), float)) for name, v in (("q", q), ("r", r)))
    for name, v in (("q", q), ("r", r)):
        if v.ndim != 1:
            raise ValueError(f"{name} must be a 1-D sequence of probabilities (the map's "
                             f"{'rows' if name == 'q' else 'columns'}); got shape {v.shape}")
    shape = (q.size, r.size)
    if np.shape(simulated.level) != shape or np.shape(theory.level) != shape:
        raise ValueError(f"the searches must have one level per (q, r) cell, shape {shape}; got "
                         f"{np.shape(simulated.level)} and {np.shape(theory.level)}")
    gammas = np.asarray(theory.levels, float)
    fig, axes = new_figure(1, 3, width=2.95, height=3.0)
    norm = LogNorm(vmin=float(gammas[0]), vmax=float(gammas[-1]))
    mesh = None
    trials = simulated.settings["trials"]
    for ax, values, name in ((axes[0, 0], simulated.level, f"simulated ({trials} runs per cell)"),
                             (axes[0, 1], theory.level, "mean-field theory")):
        mesh = ax.pcolormesh(q, r, values.T, norm=norm, shading="nearest", cmap="viridis")
        ax.set_xlabel(r"leave probability $q$")
        ax.set_ylabel(r"recruit probability $r$")
        ax.set_title(name, fontsize=9)
        ax.grid(False)
    bar = fig.colorbar(mesh, ax=axes[0, :2].tolist(), pad=0.02, shrink=0.9)
    bar.set_label(r"$\gamma^*$  ($\rho^* = 2/\gamma^{*2}$, replace-one zCDP)")
    cx = axes[0, 2]
    for k, i in enumerate(sorted({0, len(q) // 2, len(q) - 1})):
        col = _C[k]
        cx.semilogy(r, theory.level[i], "-", color=col, label=rf"$q$={q[i]:.2g}")
        cx.semilogy(r, simulated.level[i], "o", color=col, ms=5, mfc="none")
    cx.set_xlabel(r"recruit probability $r$")
    cx.set_ylabel(r"$\gamma^*$ (line: theory, circles: simulated)", fontsize=8)
    cx.set_ylim(float(gammas[0]) / 1.5, float(gammas[-1]) * 30)
    cx.legend(loc="upper center", fontsize=7, ncol=3, handlelength=1.2, columnspacing=0.8)
    settings = theory.settings
    fig.suptitle(title or rf"private ridge regression: $\gamma^*$, $T$={settings['T']}, $N_0$={settings['n0']}")
    return fig


def figure_published_privacy(result, *, title=None):
    """The authors' release: its worst-case zCDP against what typical records reveal.

    Parameters
    ----------
    result : perfpriv.regression.PublishedPrivacy
    title : str, optional
    """
    check_type(result, "result", "PublishedPrivacy")
    p = result
    fig, ax, bx = _two_panels()
    ax.loglog(p.gammas, p.rho_clipped, "k-o", ms=4, label=rf"labels clipped at $|y|\leq${p.y_bound:g} (replace-one)")
    ax.loglog(p.gammas, 0.5 * p.mu_max ** 2, "-s", color=_C[3], ms=4, label=r"$\mu_i^2/2$ of the most exposed record")
    ax.loglog(p.gammas, 0.5 * p.mu_median ** 2, "-v", color=_C[2], ms=4, label=r"$\mu_i^2/2$ of the median record")
    ax.set_xlabel(r"published noise scale $\gamma$ ($\sigma_N = \gamma/\sqrt{N}$)")
    ax.set_ylabel(r"zCDP $\rho$ (as published: $\infty$)")
    ax.legend(loc="center left", fontsize=7)
    bx.semilogx(p.gammas, p.leak, "-o", color=_C[0], ms=4)
    bx.set_xlabel(r"published noise scale $\gamma$")
    bx.set_ylabel(rf"leak probability ($\tau = {p.tau:g}$)")
    bx.set_ylim(0, 1)
    fig.suptitle(title or rf"the published regression at $N$={p.n}: no guarantee, moderate realized exposure")
    return fig


def figure_gd_utility(checks, *, title=None):
    """Excess objective of private GD against ρ: simulation, the exact value, and the bounds.

    Parameters
    ----------
    checks : sequence of perfpriv.gradient.UtilityCheck
        One panel each (e.g. the squared loss with its exact excess, the
        logistic loss with paper 001's bound).
    title : str, optional
    """
    checks = check_items("checks", checks, "UtilityCheck")
    fig, axes = new_figure(1, len(checks), width=4.3, height=3.3)
    for ax, c in zip(axes[0], checks):
        ax.errorbar(c.rho, c.simulated, yerr=1.96 * c.se, fmt="o", color=_C[0], ms=5, capsize=2,
                    label=f"simulated ({c.runs} runs)")
        if c.exact is not None:
            ax.plot(c.rho, c.exact, "-", color="k", lw=1.5, label="exact (linear-Gaussian recursion)")
        if c.ljsb is not None:
            ax.plot(c.rho, c.ljsb, "--", color=_C[1], label=r"SGD bound $2G^2/(\mu(K+1))$")
        if c.bound is not None:
            ax.plot(c.rho, c.bound, "-", color=_C[3], lw=2, label="the excerpt's bound")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(r"zCDP budget $\rho$ of the run")
        ax.set_ylabel(r"$\mathbb{E}\,J(\hat\theta) - \min J$")
        ax.set_title(f"{c.loss} loss, $n$={c.n}, $d$={c.d}, $K$={c.steps} steps", fontsize=9)
        ax.legend(loc="lower left", fontsize=7)
        plain_log(ax, x=True, y=True)     # no minor labels (3x10^0, 4x10^0) running into each other
    if title:
        fig.suptitle(title)
    return fig


def figure_individual_privacy(run, *, tau, title=None):
    """Per-record accounting of one private GD run: :math:`μ_i` against the worst case, and who leaks.

    Parameters
    ----------
    run : perfpriv.gradient.GDRun
    tau : float
        Threshold τ of the membership test.
    title : str, optional
    """
    check_type(run, "run", "GDRun")
    tau = check_real("tau", tau, scalar=True)
    worst = float(np.sqrt(2 * run.rho))
    fig, ax, bx = _two_panels()
    ax.hist(run.mu, bins=30, color=_C[0], alpha=0.8)
    ax.axvline(worst, color=_C[3], lw=2, label=rf"worst case $\sqrt{{2\rho}}$ = {worst:.3g}")
    ax.set_xlabel(r"record's Gaussian-DP parameter $\mu_i$")
    ax.set_ylabel("records")
    ax.legend(loc="upper left", fontsize=8)
    rms = run.mu * run.sigma / np.sqrt(run.settings["steps"])
    leaked = run.llr > tau
    pred = run.predicted_leak(tau=tau)
    order = np.argsort(rms)
    bx.plot(rms[order], pred[order], "-", color="k", lw=1.5, label=r"$\bar\Phi(\tau/\mu_i - \mu_i/2)$")
    bx.plot(rms[leaked], np.full(leaked.sum(), 1.02), "|", color=_C[3], ms=8, label=r"leaked in this run ($\Lambda_i>\tau$)")
    bx.plot(rms[~leaked], np.full((~leaked).sum(), -0.02), "|", color=_C[2], ms=8, label="did not leak")
    bx.set_xlabel(r"root-mean-square clipped gradient of the record")
    bx.set_ylabel(rf"leak probability, $\tau$={tau:g}")
    bx.set_ylim(-0.08, 1.08)
    bx.legend(loc="center right", fontsize=7)
    fig.suptitle(title or rf"one run: $n$={run.mu.size}, $\rho$={run.rho:.3g}, $K$={run.settings['steps']}")
    return fig


def figure_transcript_checks(checks, labels, *, tau, title=None):
    """Law of the transcript log-likelihood ratio: standardized histograms against N(0, 1).

    Parameters
    ----------
    checks : sequence of perfpriv.gradient.TranscriptCheck
    labels : sequence of str
        One panel title each.
    tau : float
        The threshold whose leak frequency and prediction are printed in each panel.
    title : str, optional
    """
    checks = check_items("checks", checks, "TranscriptCheck")
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__iter__") or \
            not all(isinstance(lab, str) for lab in labels):
        raise TypeError(f"labels must be a sequence of strings (one per check); got {labels!r:.60}")
    labels = list(labels)
    if len(checks) != len(labels):
        raise ValueError(f"checks and labels must be of the same length; got {len(checks)} and {len(labels)}")
    tau = check_real("tau", tau, scalar=True)
    fig, axes = new_figure(1, len(checks), width=2.95, height=3.0)
    grid = np.linspace(-4, 4, 200)
    for ax, c, lab in zip(axes[0], checks, labels):
        z = c.standardized()
        ax.hist(z[np.isfinite(z)], bins=60, range=(-4, 4), density=True, color=_C[0], alpha=0.7)
        ax.plot(grid, stats.norm.pdf(grid), "k-", lw=1.5)
        freq, se = c.leak_frequency(tau=tau)
        ax.set_title(f"{lab}\n" + r"$P(\Lambda>\tau)$" + f": {freq:.3f} simulated, {c.predicted(tau=tau):.3f} predicted",
                     fontsize=8)
        ax.set_xlabel(r"$(\Lambda - \mu^2/2)/\mu$")
    axes[0, 0].set_ylabel("density (line: N(0, 1))")
    if title:
        fig.suptitle(title)
    return fig


def figure_long_run_utility(result, *, title=None):
    """Cumulative error of T retraining rounds against ρ, with and without participation feedback.

    Parameters
    ----------
    result : perfpriv.gradient.LongRunUtility
    title : str, optional
    """
    check_type(result, "result", "LongRunUtility")
    res = result
    fig, ax, bx = _two_panels()
    finite = np.isfinite(res.rho)
    x = np.where(finite, res.rho, np.max(res.rho[finite]) * 10 if finite.any() else 1.0)
    for k, (q, r) in enumerate(res.behaviours):
        col = _C[k % len(_C)]
        label = "no feedback ($q = r = 0$)" if q == 0 and r == 0 else f"$q$={q:g}, $r$={r:g}"
        ax.plot(x, res.mean_field[k], "-", color=col, label=f"{label}: mean field")
        if res.simulated is not None:
            ax.errorbar(x, res.simulated[k], yerr=1.96 * res.se[k], fmt="o", color=col, ms=4, capsize=2)
        best = int(np.argmin(res.mean_field[k]))
        ax.plot(x[best], res.mean_field[k, best], "*", color=col, ms=14, mec="k")
        bx.plot(np.arange(res.T + 1), res.population[k, best], "-", color=col, label=label)
        bx.plot(np.arange(res.T + 1), res.population[k, -1], ":", color=col)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ticks = list(x[finite]) + ([x[~finite][0]] if (~finite).any() else [])
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{v:.2g}" for v in res.rho[finite]] + ([r"$\infty$"] if (~finite).any() else []),
                       fontsize=7)
    ax.minorticks_off()
    top = np.nanmax([np.nanmax(res.mean_field), np.nanmax(res.simulated) if res.simulated is not None else 0])
    ax.set_ylim(top=top * 40)
    ax.set_xlabel(r"zCDP budget $\rho$ per retraining ($\infty$: no noise)")
    ax.set_ylabel(r"cumulative error $\sum_t \|\hat\theta_t - \theta_t\|^2$")
    ax.legend(loc="upper right", fontsize=7)
    bx.set_yscale("log")
    bx.set_xlabel(r"round $t$")
    bx.set_ylabel(r"mean-field population $N_t$")
    last = r"no noise ($\rho=\infty$)" if not np.isfinite(res.rho[-1]) else rf"$\rho$ = {res.rho[-1]:.2g}"
    bx.legend(loc="lower left", fontsize=7, title=r"solid: $\rho^*$; dotted: " + last, title_fontsize=7)
    fig.suptitle(title or (f"retraining by private GD, $T$={res.T} rounds, $N_0$={res.n0}"
                           + (f", {res.trials} simulated runs (95% intervals)" if res.trials else "")))
    return fig
