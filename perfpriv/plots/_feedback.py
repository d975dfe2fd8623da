"""Figures of the richer-feedback chapter (beyond the paper; its §5 suggests richer users).

Each draws a result of :mod:`perfpriv.feedback`, one behaviour against the paper's users.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import LogNorm

from .._validate import check_real
from ._common import assign, check_items, check_type, new_figure

__all__ = ["figure_effective_q", "figure_feedback_paths", "figure_thresholds", "figure_feedback_maps"]

_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink")
_SYMBOL = {"k": "$k$", "spread": "spread $h$", "tolerance": "tolerance $b$", "kappa": r"$\kappa$"}


def family_label(family) -> str:
    """A behaviour family's label in mathtext, e.g. ``"memory ($k = 3$)"`` (figures and legends).

    Examples
    --------
    >>> from perfpriv import feedback
    >>> print(family_label(feedback.family("contagion", 1.0)), family_label(feedback.family("paper")), sep="; ")
    contagion ($\\kappa = 1$); paper (memoryless)
    """
    check_type(family, "family", "Family")
    if family.name == "paper":
        return "paper (memoryless)"
    name = {"kappa": "kappa", "tolerance": "b", "spread": "h"}.get(family.symbol, family.symbol)
    return f"{family.name} ({assign(name, family.parameter, 'g')})"


def _level_text(mechanism):
    return r"\varepsilon" if mechanism == "bernoulli" else r"\gamma"


def figure_effective_q(trajectories, *, title=None):
    """Departures per leaked user, :math:`q_t`, over the rounds: one line per behaviour.

    Lines: the mean field; markers: simulation; dotted: the long-run limit
    of the behaviour's theory; grey: the paper's constant q.

    Parameters
    ----------
    trajectories : sequence of perfpriv.feedback.Trajectories
        One per behaviour, all at one cell (q, r); the first level of each is drawn.
    title : str, optional
    """
    items = check_items("trajectories", trajectories, "Trajectories")
    fig, axes = new_figure(1, 1, width=6.4, height=3.6)
    ax = axes[0, 0]
    q = float(items[0].settings["q"])
    ax.axhline(q, color="0.5", lw=1.2, label=f"paper: $q$ = {q:g}")
    for k, tr in enumerate(items):
        color = _COLORS[k % len(_COLORS)]
        theory, simulated = tr.effective_q
        rounds = np.arange(1, theory.shape[-1] + 1)
        ax.plot(rounds, theory[0], "-", color=color, lw=2, label=family_label(tr.family))
        ax.plot(rounds, simulated[0], "o", color=color, ms=3.5, alpha=0.8)
        ax.axhline(float(np.atleast_1d(tr.long_run_q)[0]), color=color, ls=":", lw=1.2)
    ax.set_xlabel("round $t$")
    ax.set_ylabel("departures per leak $q_t$")
    ax.set_ylim(bottom=0)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    sym = _level_text(items[0].mechanism)
    ax.set_title(title or f"${sym}$ = {items[0].levels[0]:g}, $q$ = {q:g}, $r$ = {items[0].settings['r']:g}\n"
                 "lines: mean field; dots: simulation; dotted: long-run limit", fontsize=9)
    return fig


def figure_feedback_paths(trajectories, *, title=None, z=2.0):
    """Population :math:`N_t` under a behaviour (solid) and under the paper's users (dashed), per privacy level.

    Bands: simulated mean ± ``z`` standard errors; lines: the mean field.

    Parameters
    ----------
    trajectories : perfpriv.feedback.Trajectories
    title : str, optional
    z : float
    """
    tr = check_type(trajectories, "trajectories", "Trajectories")
    z = check_real("z", z, low=0, high=100, scalar=True)     # standard errors of the band
    fig, axes = new_figure(1, 1, width=6.4, height=3.6)
    ax = axes[0, 0]
    T = tr.mean_field.shape[-1] - 1
    rounds = np.arange(T + 1)
    sym = _level_text(tr.mechanism)
    for k, level in enumerate(tr.levels):
        color = _COLORS[k % len(_COLORS)]
        text = r"\infty" if np.isinf(level) else f"{level:g}"
        for tag, ls, name in (("", "-", family_label(tr.family)), ("_paper", "--", "paper's users")):
            mean, se = getattr(tr, "simulated" + tag)[k], getattr(tr, "se" + tag)[k]
            ax.fill_between(rounds, np.maximum(mean - z * se, 0.5), mean + z * se, color=color, alpha=0.18, lw=0)
            ax.plot(rounds, getattr(tr, "mean_field" + tag)[k], ls, color=color, lw=1.8,
                    label=f"${sym} = {text}$, {name}")
    ax.set_yscale("log")
    ax.set_xlabel("round $t$")
    ax.set_ylabel("population $N_t$")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False, fontsize=7)
    ax.set_title(title or f"$q$ = {tr.settings['q']:g}, $r$ = {tr.settings['r']:g}: lines mean field, "
                 f"bands simulation ± {z:g} se")
    return fig


def figure_thresholds(curves, *, paper, title=None):
    """Survival threshold :math:`ε_c` as each behaviour's parameter varies, next to the paper's.

    Parameters
    ----------
    curves : dict of str to (Family, values, eps_c)
        Panel title -> the family (for its parameter's name), the parameter
        values and :math:`ε_c` at each (e.g. from :func:`perfpriv.feedback.threshold_curve`).
    paper : float
        The paper's :math:`ε_c` at the same cell (Theorem 1), drawn dashed.
    title : str, optional
    """
    items = check_items("curves", curves, mapping=True)
    for name, curve in items:
        if not isinstance(curve, tuple) or len(curve) != 3:
            raise TypeError(f"curves must map each panel title to (Family, values, eps_c); got {name!r:.30}: "
                            f"{curve!r:.60}")
        check_type(curve[0], "curves", "Family")
        if np.shape(check_real("curves", curve[1], allow_inf=True)) != \
                np.shape(check_real("curves", curve[2], allow_inf=True)):      # eps_c = inf: survival at every eps
            raise ValueError(f"curves: the values and eps_c of {name!r} must have one shape")
    paper = check_real("paper", paper, low=0, scalar=True)
    fig, axes = new_figure(1, len(items), width=2.5, height=2.7, sharey=True)
    finite = [float(paper)] + [float(v) for _, (_, _, e) in items for v in np.ravel(e) if np.isfinite(v) and v > 0]
    top = 1.6 * max(finite)
    for k, (name, (fam, values, eps)) in enumerate(items):
        ax = axes[0, k]
        values, eps = np.asarray(values, float), np.asarray(eps, float)
        shown = np.where(np.isinf(eps), top, eps)
        ax.plot(values, shown, "o-" if values.size < 12 else "-", color=_COLORS[k % len(_COLORS)], lw=2, ms=4)
        if np.any(np.isinf(eps)):
            ax.plot(values[np.isinf(eps)], shown[np.isinf(eps)], "^", color="k", ms=6,
                    label=r"$\varepsilon_c = \infty$")
        ax.axhline(paper, color="k", ls="--", lw=1, label="paper's users" if k == 0 else None)
        if k == 0 or np.any(np.isinf(eps)):
            ax.legend(loc="upper left", frameon=False)
        ax.set_xlabel(_SYMBOL.get(fam.symbol, fam.symbol))
        if fam.symbol == "tolerance":
            ax.set_xscale("log")
        ax.set_title(name)
        ax.set_ylim(0, top * 1.05)
    axes[0, 0].set_ylabel(r"survival threshold $\varepsilon_c$")
    if title:
        fig.suptitle(title)
    return fig


def figure_feedback_maps(maps, *, title=None):
    """ε* (or γ*) maps of several behaviours: the mean field (top) and simulation (bottom).

    Colour: the best level, on a log scale. A grey hatched cell has no finite optimum (no privacy is
    best); a white frame marks a cell where a finite level beats no privacy in simulation by more than
    the map's ``z`` standard errors. The cells carry no text (illegible with five maps side by side).

    Parameters
    ----------
    maps : sequence of perfpriv.feedback.FeedbackMap
        One column each (one mechanism, one grid).
    title : str, optional
    """
    from matplotlib.patches import Patch, Rectangle

    maps = check_items("maps", maps, "FeedbackMap")
    first = maps[0]
    sym = _level_text(first.mechanism)
    private = first.levels[np.arange(first.levels.size) != first.none]
    lo, hi = float(np.min(private)), float(np.max(private))
    norm = LogNorm(vmin=lo, vmax=hi)
    fig, axes = new_figure(2, len(maps), width=2.25, height=2.35)
    im = None
    for j, m in enumerate(maps):
        for i, (row, values) in enumerate((("mean field", m.theory), ("simulation", m.simulated))):
            ax = axes[i, j]
            values = np.asarray(values, float)
            none = ~(values != m.levels[m.none]) | ~np.isfinite(values)
            extent = (-0.5, m.rs.size - 0.5, -0.5, m.qs.size - 0.5)
            shown = np.ma.masked_where(none, np.clip(np.where(none, lo, values), lo, hi))
            im = ax.imshow(shown, origin="lower", norm=norm, aspect="auto", cmap="viridis", extent=extent)
            for a, b in zip(*np.nonzero(none)):
                ax.add_patch(Rectangle((b - 0.5, a - 0.5), 1.0, 1.0, facecolor=_NONE_COLOR, edgecolor=_HATCH_COLOR,
                                       hatch=_HATCH, lw=0.0))
            if i == 1:
                for a, b in zip(*np.nonzero(m.pays_simulated)):
                    ax.add_patch(_frame(b, a))
            ax.set_xlim(extent[:2])
            ax.set_ylim(extent[2:])
            ax.set_xticks(np.arange(m.rs.size), [f"{v:g}" for v in m.rs], fontsize=7)
            ax.set_yticks(np.arange(m.qs.size), [f"{v:g}" for v in m.qs], fontsize=7)
            ax.grid(False)
            if i == 1:
                ax.set_xlabel("$r$ (join)")
            if j == 0:
                ax.set_ylabel(f"{row}\n$q$ (leave)")
            if i == 0:
                ax.set_title(family_label(m.family).replace(" (", "\n("), fontsize=9)
    bar = fig.colorbar(im, ax=axes[:, -1], label=f"best level ${sym}^*$", shrink=0.8)
    ticks = private[:: max(1, private.size // 5)]
    bar.set_ticks(ticks, labels=[f"{t:.2g}" for t in ticks])
    bar.minorticks_off()
    handles = [Patch(facecolor=_NONE_COLOR, edgecolor=_HATCH_COLOR, hatch=_HATCH, lw=0.0,
                     label="no finite optimum: no privacy is best"),
               Patch(facecolor=_FRAMED_COLOR, edgecolor="w", lw=1.6,
                     label="framed: a finite level wins in simulation (beyond the noise)")]
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    return fig


#: How a heat map marks a cell with no finite optimum: a light grey with a hatch (colour key, no text).
_NONE_COLOR, _HATCH_COLOR, _HATCH = "#d9d9d9", "#7f7f7f", "////"
#: The face under the white frame in the legend (the middle of viridis, so that the frame shows).
_FRAMED_COLOR = "#21918c"


def _frame(x, y):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.46, y - 0.46), 0.92, 0.92, fill=False, edgecolor="w", lw=1.6)
