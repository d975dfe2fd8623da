"""Figures of the privacy-schedules chapter (beyond the paper; its §5 suggests the question).

They draw optimized schedules (:mod:`perfpriv.optimize`) and their comparisons and gain maps
(:mod:`perfpriv.experiments`).
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from .._validate import check_real
from ._common import check_text, assign, check_items, check_sequence, check_type, math, new_figure, params, plain_log

__all__ = ["figure_schedules", "figure_schedule_comparison", "figure_gain_map"]

_COLORS = ("tab:gray", "tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")


def _symbol(parameter):
    return r"\gamma" if parameter == "gamma" else r"\varepsilon"


def _text_color(rgba):
    """Black or white, whichever contrasts more with a cell of colour ``rgba`` (relative luminance)."""
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    lum = 0.2126 * linear(rgba[0]) + 0.7152 * linear(rgba[1]) + 0.0722 * linear(rgba[2])
    return "black" if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) else "white"


def figure_schedules(results, *, title=None):
    """Optimized schedules (left) and their mean-field populations (right).

    Parameters
    ----------
    results : dict of str to perfpriv.optimize.ScheduleOptimum
        Name -> result (all of one model and horizon). The best constant of
        the first result is drawn as a dashed line.
    title : str, optional
        Figure title.
    """
    items = check_items("results", results, "ScheduleOptimum", mapping=True)
    check_text("title", title, optional=True)
    first = items[0][1]
    sym = _symbol(first.parameter)
    T = first.schedule.size
    rounds = np.arange(1, T + 1)
    fig, axes = new_figure(1, 2, width=4.3, height=3.3)
    ax, bx = axes[0, 0], axes[0, 1]
    ax.axhline(first.constant, color="k", ls="--", lw=1, label=f"best constant {assign(sym + '^*', first.constant)}")
    for k, (name, res) in enumerate(items):
        color = _COLORS[(k + 1) % len(_COLORS)]
        ax.step(rounds, res.schedule, where="mid", color=color, lw=2,
                label=f"{name} (gain {100 * res.gain:.1f}%)")
        bx.plot(np.arange(T + 1), res.population, "-", color=color, lw=2, label=name)
    ax.set_yscale("log")
    ax.set_xlabel("round $t$")
    ax.set_ylabel(f"privacy level {math(sym + '_t')}" + (" (noise)" if first.parameter == "gamma" else " (budget)"))
    ax.legend(loc="best")
    bx.set_xlabel("round $t$")
    bx.set_ylabel("mean-field population $N_t$")
    bx.legend(loc="best")
    if title:
        fig.suptitle(title)
    return fig


def figure_schedule_comparison(comparison, *, title=None, z=1.96, exclude=()):
    """Regret of schedules from the mean field and from simulation, with error bars.

    Left: simulated mean regret ± ``z`` standard errors (horizontal bars) and
    the mean-field regret (black diamonds). Right: simulated regret minus that
    of the reference schedule, over paired trials, ± ``z`` standard errors.

    Parameters
    ----------
    comparison : perfpriv.experiments.ScheduleComparison
        A result of :func:`perfpriv.experiments.compare_schedules`.
    title : str, optional
    z : float
        Width of the error bars in standard errors (1.96: 95% intervals).
    exclude : sequence of str
        Schedules left out of the right panel (e.g. a baseline so much worse
        that it would flatten the other differences).
    """
    c = check_type(comparison, "comparison", "ScheduleComparison")
    check_text("title", title, optional=True)
    z = check_real("z", z, low=0, high=100, scalar=True)     # standard errors of the bars
    exclude = [check_text("each entry of exclude", n) for n in check_sequence("exclude", exclude, empty=True)]
    y = np.arange(len(c.names))
    colors = [_COLORS[i % len(_COLORS)] for i in range(len(c.names))]
    # horizontal bars: the schedules' names read on the axis, not rotated into each other
    fig, axes = new_figure(1, 2, width=4.3, height=0.45 * len(c.names) + 1.6)
    ax, bx = axes[0, 0], axes[0, 1]
    ax.barh(y, c.simulated, xerr=z * c.se, color=colors, alpha=0.7, capsize=4,
            label=f"simulated ({c.trials} runs, ±{z:g} se)")
    ax.plot(c.mean_field, y, "D", color="k", label="mean field")
    ax.set_yticks(y, c.names)
    ax.invert_yaxis()
    ax.set_xlabel("regret (sum of squared errors)")
    ax.set_xscale("log")
    plain_log(ax, x=True)   # plain labels (2, 5, 10): matplotlib's minor labels run into each other
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=2, frameon=False)
    keep = [i for i, n in enumerate(c.names) if n != c.reference and n not in exclude]
    bx.barh(np.arange(len(keep)), c.difference[keep], xerr=z * c.difference_se[keep],
            color=[colors[i] for i in keep], alpha=0.7, capsize=4)
    bx.axvline(0.0, color="k", lw=0.8)
    bx.xaxis.set_major_locator(MaxNLocator(nbins=4))   # few labels: long negative numbers in a narrow panel
    bx.set_yticks(np.arange(len(keep)), [c.names[i] for i in keep])
    bx.invert_yaxis()
    bx.set_xlabel(f"simulated regret − {c.reference}")
    bx.set_title("paired differences (same seeds)")
    if title:
        fig.suptitle(title)
    return fig


def figure_gain_map(maps, *, titles=None):
    """Heatmaps of the gain of the optimal schedule over the best constant, in percent.

    Parameters
    ----------
    maps : sequence of perfpriv.experiments.GainMap
        Results of :func:`perfpriv.experiments.gain_map`, one panel each.
    titles : sequence of str, optional
    """
    maps = check_items("maps", maps)
    for m in maps:          # by its fields: a GainMap of perfpriv.experiments, or any map with them
        if not all(hasattr(m, field) for field in ("qs", "rs", "gain", "T", "tau")):
            raise TypeError(f"each entry of maps must be a GainMap (from perfpriv.experiments.gain_map); "
                            f"got {type(m).__name__}")
    if titles is not None:
        titles = [check_text("each entry of titles", t) for t in check_sequence("titles", titles)]
        if len(titles) != len(maps):
            raise ValueError(f"titles must hold one title per map ({len(maps)}); got {len(titles)}")
    fig, axes = new_figure(1, len(maps), width=min(3.6, 7.8 / len(maps)), height=3.2)
    vmax = max(100 * float(np.nanmax(m.gain)) for m in maps)
    for k, m in enumerate(maps):
        ax = axes[0, k]
        im = ax.imshow(100 * m.gain, origin="lower", vmin=0.0, vmax=max(vmax, 1e-9), aspect="auto",
                       extent=(-0.5, m.rs.size - 0.5, -0.5, m.qs.size - 0.5))
        for i, j in np.ndindex(m.gain.shape):
            # the annotation contrasts with its cell (dark on the bright end of the colour scale)
            ax.text(j, i, f"{100 * m.gain[i, j]:.1f}", ha="center", va="center", fontsize=9,
                    color=_text_color(im.cmap(im.norm(100 * m.gain[i, j]))))
        ax.set_xticks(np.arange(m.rs.size), [f"{v:g}" for v in m.rs])
        ax.set_yticks(np.arange(m.qs.size), [f"{v:g}" for v in m.qs])
        ax.set_xlabel("$r$ (join)")
        ax.set_ylabel("$q$ (leave)")
        ax.grid(False)
        ax.set_title(titles[k] if titles else
                     (assign("T", m.T) if np.isnan(m.tau) else params(T=m.T, tau=m.tau)))
    fig.colorbar(im, ax=axes[0, -1], label="gain over best constant (%)")
    return fig
