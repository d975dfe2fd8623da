"""Figures of the survival and finite-horizon chapters (paper §4.5, Lemma 9, appendices A, D-E).

Each draws the result of one experiment of :mod:`perfpriv.experiments`. The γ* maps of Figs. 4-5
are :func:`figure_gamma_star` of one :func:`perfpriv.experiments.gamma_star_map` per threshold τ,
e.g. at the paper's settings (:data:`perfpriv.cli.SCALES`)::

    maps = [experiments.gamma_star_map(
                GaussianMean(np.geomspace(0.2, 20, 30), tau=tau, d=12, R=10.0),
                Memoryless(q=np.linspace(0.01, 0.99, 10)[:, None], r=np.linspace(0.01, 0.99, 30)[None, :]),
                n0=1000, T=50, trials=50)
            for tau in (0.02, 0.05)]
    figure_gamma_star(maps)
"""

from __future__ import annotations

import numpy as np

from .. import experiments
from .._validate import check_choice, check_probability, check_real
from ._common import (MAX_LOG_VALUE, check_axes, assign, check_items, check_type, new_figure, params, plain_log)

__all__ = [
    "figure3bc",
    "figure_theorem3",
    "figure_leak_dispersion",
    "figure_mean_field",
    "figure_horizon",
    "figure_gamma_star",
]


# -------------------------------- Figures 3b-3c: growth factor against gamma

def _draw_growth(ax, curves, title: str):
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    for i, tau in enumerate(curves.taus):
        c = colors[i % len(colors)]
        ax.plot(curves.gammas, curves.theory[i], "-", color=c, lw=2, label=f"theory, {assign('tau', tau)}")
        ax.errorbar(curves.gammas, curves.empirical[i], yerr=curves.spread[i], fmt="o--", color=c,
                    ms=4, capsize=3, label=f"simulated, {assign('tau', tau)}")
    ax.axhline(1 - curves.q, color="firebrick", lw=1, label="$1 - q$")
    ax.axhline(1 + curves.r, color="forestgreen", lw=1, label="$1 + r$")
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_xscale("log")
    plain_log(ax)
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel(r"growth factor $C(\gamma)$")
    ax.set_title(title)


def figure3bc(curves):
    """Figures 3b and 3c: growth factor C(γ) against γ, theory and simulation.

    Parameters
    ----------
    curves : (GrowthCurves, GrowthCurves)
        :func:`perfpriv.experiments.growth_curves` for the small-q panel (3b) and the large-q panel (3c);
        the paper's (q, r) are (0.11, 0.52) and (0.45, 0.11) (``python -m perfpriv reproduce --figure 3``).

    Raises
    ------
    TypeError
        If ``curves`` is not a sequence of GrowthCurves.
    ValueError
        If it is not a pair.
    """
    curves = check_items("curves", curves, "GrowthCurves")
    if len(curves) != 2:
        raise ValueError(f"curves must be a pair (small-q panel, large-q panel) of GrowthCurves; got {len(curves)}")
    fig, axes = new_figure(1, 2, width=4.3, height=3.2, sharey=True)
    for ax, c, name in zip(axes[0], curves, ("(b) small $q$", "(c) large $q$")):
        _draw_growth(ax, c, f"{name}: {params(q=c.q, r=c.r)}")
    # one legend for both panels, below them (off the curves)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    return fig


# ----------------------------------- Theorem 3: bounds on E[1/N_t | N_{t-1}]

def figure_theorem3(checks):
    r"""Simulated :math:`\mathbb{E}[1/N_t]` divided by the lower bound of Theorem 3, against :math:`N_{t-1}`.

    Parameters
    ----------
    checks : sequence of perfpriv.experiments.Theorem3Check
        One panel each. The lower bound holds where the ratio is >= 1, the
        upper bound where it is <= kappa (dashed line).
    """
    checks = check_items("checks", checks, "Theorem3Check")
    fig, axes = new_figure(1, len(checks), width=8.6 / max(len(checks), 2), height=3.0)
    for ax, c in zip(axes[0], checks):
        rel = c.inverse / c.lower
        err = c.se / c.lower
        ax.errorbar(c.sizes, rel, yerr=err, fmt="o-", ms=4, capsize=3, label="simulated / lower bound")
        ax.axhline(1.0, color="k", lw=1, label="lower bound (Jensen)")
        ax.axhline(c.kappa, color="tab:red", ls="--", lw=1, label=r"upper bound $\kappa_{q,r}$")
        ax.set_xscale("log")
        plain_log(ax)
        ax.set_xlabel("$N_{t-1}$ (before the round)")
        ax.set_title(f"{params(q=c.q, r=c.r, gamma=c.gamma)}\n{assign('kappa', c.kappa, '.5g')}")
    axes[0, 0].set_ylabel(r"$\mathbb{E}[1/N_t]\cdot C\,N_{t-1}$")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3)
    return fig


# -------------------------------- Leak count of one round against a binomial

def figure_leak_dispersion(results):
    """Histogram of leak counts per round against the binomial with the same mean.

    Parameters
    ----------
    results : sequence of perfpriv.experiments.LeakDispersion
        One panel each.
    """
    from scipy.stats import binom

    results = check_items("results", results, "LeakDispersion")
    fig, axes = new_figure(1, len(results), width=8.6 / max(len(results), 2), height=3.0)
    for ax, res in zip(axes[0], results):
        lo, hi = res.counts.min(), res.counts.max()
        p = res.mean / res.n
        ks = np.arange(max(0, int(min(lo, res.mean - 4 * np.sqrt(res.binomial_variance)))),
                       int(max(hi, res.mean + 4 * np.sqrt(res.binomial_variance))) + 1)
        bins = np.linspace(ks[0] - 0.5, ks[-1] + 0.5, min(40, len(ks)) + 1)
        ax.hist(res.counts, bins=bins, density=True, alpha=0.6, label="simulated rounds")
        ax.plot(ks, binom.pmf(ks, res.n, p), "k-", lw=1.2, label="binomial, same mean")
        ax.set_xlabel("leaked records in one round")
        ax.set_ylabel("frequency")
        ax.set_title(f"{params(n=res.n, gamma=res.gamma, tau=res.tau)}\nvariance ratio {res.ratio:.3g}")
    # one legend below the panels: inside them it covers the peak of a narrow binomial
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


# -------------------------------------- Mean-field trajectories and Lemma 12

def figure_mean_field(paths):
    r"""Mean-field population with and without the cap, :math:`C_t` along it, and :math:`p_τ` against N.

    Left: the mean-field population :math:`N_0 Π C_k` (:math:`p_τ` at each :math:`N_k`) with and without
    the cap, and simulated runs of Algorithm 1.
    Middle: :math:`C_t` at the mean-field population of the previous round (increasing without a cap,
    Lemma 12; constant once the cap binds). Right: :math:`p_τ` against N (decreasing).

    Parameters
    ----------
    paths : perfpriv.experiments.MeanFieldPaths
        A result of :func:`perfpriv.experiments.mean_field_paths`.

    Raises
    ------
    TypeError
        If ``paths`` is not a MeanFieldPaths.
    """
    m = check_type(paths, "paths", "MeanFieldPaths")
    fig, axes = new_figure(1, 3, width=8.6 / 3, height=3.1)
    t = np.arange(m.free.size)
    for k, row in enumerate(m.simulated):
        axes[0, 0].plot(t, row, color="0.6", lw=0.8, label="simulated runs" if k == 0 else None)
    axes[0, 0].plot(t, m.free, "-", color="tab:blue", lw=2, label="mean field, no cap (stops at $10^8$)")
    axes[0, 0].plot(t, m.capped, "--", color="tab:orange", lw=2, label=f"mean field, cap {m.cap}")
    axes[0, 0].set_yscale("log")
    axes[0, 0].set_xlabel("round $t$")
    axes[0, 0].set_ylabel("population $N_t$")
    for c, style_, lab in ((m.growth_free, "-", "no cap"), (m.growth_capped, "--", f"cap {m.cap}")):
        axes[0, 1].plot(t[1:], c, style_, lw=2, label=lab)
    axes[0, 1].set_xlabel("round $t$")
    axes[0, 1].set_ylabel(r"$C_t(\gamma)$ at mean-field $N_{t-1}$")
    axes[0, 2].plot(m.sizes, m.p, "o-")
    axes[0, 2].set_xscale("log")   # powers of ten: plain labels (10000, 100000) run together in this narrow panel
    axes[0, 2].set_xlabel("population $N$")
    axes[0, 2].set_ylabel(r"marginal leak probability $p_\tau$")
    axes[0, 2].set_title(params(gamma=m.gamma, tau=m.tau))
    # the panels share their line styles: one legend below them
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3)
    return fig


# ---------------------------- Lemma 9 and the cumulative error against gamma

def figure_horizon(curves):
    """Cumulative error against γ: Lemma 9's bound, mean field, simulation; γ* and :math:`γ_c` marked.

    Parameters
    ----------
    curves : perfpriv.experiments.HorizonCurves
        A result of :func:`perfpriv.experiments.horizon_curves` (the
        simulated points are drawn if it has them).

    Raises
    ------
    TypeError
        If ``curves`` is not a HorizonCurves.
    """
    h = check_type(curves, "curves", "HorizonCurves")
    fig, axes = new_figure(1, 1, width=8.0, height=3.8)
    ax = axes[0, 0]
    grow = h.growth > 1
    ax.plot(h.fine, np.where(grow, h.bound, np.nan), "-", color="tab:blue", lw=2, label="Lemma 9 bound ($C_1 > 1$)")
    ax.plot(h.fine, np.where(grow, np.nan, h.bound), ":", color="tab:blue", lw=1.5, label=r"same formula, $C_1 \leq 1$")
    ax.plot(h.fine, h.mean_field, "-", color="tab:green", lw=1.5, label="mean field (cap, Algorithm 1 rounds)")
    if np.isfinite(h.simulated).any():
        ax.errorbar(h.gammas, h.simulated, yerr=h.se, fmt="o--", color="k", ms=4, capsize=2,
                    label=f"simulated ({h.collapse})")
        ax.axvline(h.gamma_empirical, color="k", ls="--", lw=1, label=f"simulated {assign('gamma_star', h.gamma_empirical, '.2g')}")
    else:
        ax.axvline(h.gamma_mean_field, color="tab:green", ls="-.", lw=1,
                   label=f"mean field {assign('gamma_star', h.gamma_mean_field, '.3g')}")
    ax.axvline(h.gamma_bound, color="tab:blue", ls="-.", lw=1, label=f"bound {assign('gamma_star', h.gamma_bound, '.2g')}")
    finish_horizon_axes(ax, h.gamma_c, q=h.q, r=h.r, tau=h.tau, T=h.T, n0=h.n0)
    return fig


def finish_horizon_axes(ax, gamma_c, *, q, r, tau, T, n0):
    """Mark Theorem 2's :math:`γ_c` and label a cumulative-error-against-γ panel.

    Shared by :func:`figure_horizon` and the chapter-06 explorer.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel, its curves drawn.
    gamma_c : float
        Theorem 2's threshold at N0, in [0, inf]; drawn if positive and at most 1e100 (a log axis).
    q, r, tau, T, n0
        The setting, for the title.
    """
    check_axes(ax)
    gamma_c = check_real("gamma_c", gamma_c, low=0, allow_inf=True, scalar=True)
    if 0 < gamma_c <= MAX_LOG_VALUE:
        ax.axvline(gamma_c, color="tab:red", ls=":", lw=1.5, label=assign("gamma_c", gamma_c, ".3g"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax, y=True)
    ax.set_xlabel(r"noise scale $\gamma$")
    ax.set_ylabel("cumulative error over $T$ rounds")
    ax.set_title(params(q=q, r=r, tau=tau, T=T, n0=n0))
    if ax.get_legend_handles_labels()[0]:          # nothing labelled (no curve, no gamma_c): no empty legend
        ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5))


# -------------------------------------------------- Figures 4-5: gamma* maps

def _heat(ax, m, values, title, vmin, vmax):
    from matplotlib.colors import LogNorm

    mesh = ax.pcolormesh(m.qs, m.rs, values.T, shading="nearest", norm=LogNorm(vmin=vmin, vmax=vmax))
    ax.grid(False)
    ax.set_xlabel("leave probability $q$")
    ax.set_ylabel("join probability $r$")
    ax.set_title(title)
    return mesh


def figure_gamma_star(maps, *, q_line=None, theory="bound"):
    """Figures 4-5 layout: per τ, empirical heatmap, theoretical heatmap, γ* against r.

    Parameters
    ----------
    maps : GammaStarMap or sequence of GammaStarMap
        Results of :func:`perfpriv.experiments.gamma_star_map`, one row each.
    q_line : float, optional
        The q of the line plot (default: the grid value closest to 0.3).
    theory : {"bound", "constrained", "mean_field"}
        Which theoretical map to show in the middle panel.
    """
    maps = [maps] if isinstance(maps, experiments.GammaStarMap) else check_items("maps", maps)
    for m in maps:
        if not isinstance(m, experiments.GammaStarMap):
            raise TypeError(f"maps must be a GammaStarMap of perfpriv.experiments or a sequence of them; "
                            f"got an entry of type {type(m).__name__}")
    if q_line is not None:
        q_line = check_probability("q_line", q_line, scalar=True)
    theory = check_choice("theory", theory, experiments.THEORY_MAPS)
    fig, axes = new_figure(len(maps), 3, width=8.6 / 3, height=2.7)
    for row, m in zip(axes, maps):
        th = getattr(m, theory)
        allv = np.concatenate([m.empirical[np.isfinite(m.empirical)], th[np.isfinite(th)], m.gammas])
        vmin, vmax = max(allv.min(), 1e-3), allv.max()
        for ax, values, title in ((row[0], m.empirical, r"simulated $\gamma^*$, " + assign("tau", m.tau)),
                                  (row[1], th, r"theory $\gamma^*$" + f" ({theory.replace('_', ' ')}), "
                                   + assign("tau", m.tau))):
            mesh = _heat(ax, m, values, title, vmin, vmax)
            bar = fig.colorbar(mesh, ax=ax, fraction=0.08, pad=0.03)    # each map with its key
            plain_log(bar.ax, x=False, y=True)
        iq = int(np.argmin(np.abs(m.qs - (0.3 if q_line is None else q_line))))
        ax = row[2]
        ax.plot(m.rs, m.empirical[iq], "o--", color="k", label="simulated")
        ax.plot(m.rs, m.bound[iq], "-", color="tab:blue", label="bound")
        ax.plot(m.rs, m.mean_field[iq], "-", color="tab:green", label="mean field")
        ax.plot(m.rs, m.constrained[iq], ":", color="tab:red", label=r"bound, $\gamma \geq \gamma_c$")
        ax.set_yscale("log")
        plain_log(ax, x=False, y=True)
        ax.set_xlabel("join probability $r$")
        ax.set_ylabel(r"$\gamma^*$ (scale of the maps)")
        ax.set_title(assign("q", m.qs[iq], ".2g"))
    # the line panels share their styles: one legend below the figure, off the data
    fig.legend(*axes[0, 2].get_legend_handles_labels(), loc="outside lower center", ncol=4)
    return fig
