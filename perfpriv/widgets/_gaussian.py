"""Explorers of the Gaussian model (paper §4.1-4.4).

:func:`mia_explorer` (chapter 03) reruns a short Algorithm 1 with
:func:`perfpriv.gaussian.simulate` whenever a slider is released and redraws
the population and the squared Mahalanobis error per round.
:func:`llr_explorer` (chapter 04) draws the conditional law of the
membership statistic Λ (Lemma 6), its exact tail above τ (Lemma 7) and the
optimized Rényi bound (eq. 10); it only evaluates closed forms.
"""

from __future__ import annotations

import numpy as np

from .. import engine, gaussian
from ..plots import assign
from ..plots import llr_law_figure, population_error
from ._common import Explorer, named_control, float_slider, int_slider, log_slider

__all__ = ["mia_explorer", "mia_draw", "llr_explorer"]


def mia_draw(gamma, *, tau, d, R, n0, q, r, T=25, trials=4, cap=5000, statistic=None, seed=0):
    r"""Figure of one :func:`mia_explorer` state: population and error of Algorithm 1.

    Parameters
    ----------
    gamma : float
        Noise scale γ (the title shows the per-contribution :math:`ρ = 2R^{2}/γ^{2}`).
    tau : float
        Threshold τ.
    d : int
        Dimension; records are :math:`\mathcal{N}(0, I_d)`.
    R : float
        Clipping radius.
    n0 : int
        Initial population :math:`N_0`.
    q, r : float
        Leaving and recruiting probabilities.
    T, trials, cap : int
        Rounds, trials and population cap of the short run.
    statistic : {None, "paper", "exact"}
        Membership statistic (``None``: the paper's).
    seed : int
        Seed (the same for every redraw, so that moving one slider changes
        only what that parameter changes).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> fig = mia_draw(2.0, tau=0.05, d=4, R=10.0, n0=50, q=0.5, r=0.2, T=5, trials=2)
    >>> len(fig.axes)
    2
    """
    run = gaussian.simulate(gamma, tau=tau, q=q, r=r, T=T, n0=n0, d=d, R=R, trials=trials,
                            policy=engine.Policy(cap=cap), statistic=statistic, seed=seed)
    rho = gaussian.rho_from_gamma(gamma, R)
    final = float(np.mean(np.asarray(run.population)[:, -1]))
    return population_error(run, gamma=gamma, d=d,
                            title=f"{assign('gamma', gamma)} ({assign('rho', rho)} per contribution), "
                                  f"mean {assign(f'N_{{{T}}}', final, '.0f')}")


def mia_explorer(*, gamma=2.0, tau=0.05, d=12, R=10.0, n0=200, q=0.5, r=0.2, T=25, trials=4, cap=5000,
                 statistic=None, seed=0):
    """Sliders for :math:`γ, τ, d, R, N_0, q, r` over a short run of Algorithm 1 (chapter 03).

    Parameters
    ----------
    gamma, tau, d, R, n0, q, r : optional
        Initial slider values.
    T, trials, cap : int
        Size of each rerun (kept small so that a redraw stays well under a
        second).
    statistic : {None, "paper", "exact"}
        Membership statistic (``None``: the paper's).
    seed : int
        Seed of every rerun.

    Returns
    -------
    perfpriv.widgets.Explorer
    """
    controls = {
        "gamma": named_control("gamma", log_slider, r"noise $\gamma$", gamma, 0.1, 30.0),
        "tau": named_control("tau", log_slider, r"threshold $\tau$", tau, 0.005, 2.0),
        "d": named_control("d", int_slider, "dimension $d$", d, 1, 30),
        "R": named_control("R", float_slider, "radius $R$", R, 1.0, 20.0, 0.5),
        "n0": named_control("n0", int_slider, "initial $N_0$", n0, 10, 2000, 10),
        "q": named_control("q", float_slider, "$q$ (leave)", q, 0.0, 1.0, 0.01),
        "r": named_control("r", float_slider, "$r$ (recruit)", r, 0.0, 1.0, 0.01),
    }

    def draw(**values):
        return mia_draw(**values, T=T, trials=trials, cap=cap, statistic=statistic, seed=seed)

    return Explorer("Algorithm 1", controls, draw, columns=4,
                    plotted="the population over the rounds (left) and the squared Mahalanobis error of each release (right), one curve per run", source="perfpriv.widgets.mia_draw",
                    static_grid={"gamma": sorted({0.5, 1.0, 2.0, 4.0, 8.0, gamma}),
                                 "tau": sorted({0.02, 0.05, 0.2, tau})})


def llr_explorer(*, gamma=1.0, n=100, tau=0.3, s=3.5):
    r"""Sliders for γ, N, τ and s showing the law of Λ, its exact tail and the Rényi bound (chapter 04).

    Parameters
    ----------
    gamma, n, tau, s : optional
        Initial values: noise scale γ, dataset size N, threshold τ and the
        record's deviation :math:`s = \|\bar z - μ_{\bar z}\|`.

    Returns
    -------
    perfpriv.widgets.Explorer
    """
    controls = {
        "gamma": named_control("gamma", log_slider, r"noise $\gamma$", gamma, 0.05, 20.0),
        "n": named_control("n", int_slider, "size $N$", n, 2, 2000),
        "tau": named_control("tau", log_slider, r"threshold $\tau$", tau, 0.001, 5.0),
        "s": named_control("s", log_slider, "deviation $s$", s, 0.05, 20.0),
    }
    return Explorer("Law of the membership statistic", controls, llr_law_figure, columns=4,
                    plotted="the densities of the membership statistic Λ with and without the record (left) and its exact tail above the threshold τ with the Rényi bound (right)",
                    source="perfpriv.plots.llr_law_figure",
                    static_grid={"tau": sorted({0.05, 0.1, 0.3, 0.6, 1.0, 2.0, tau}),
                                 "gamma": sorted({0.5, 1.0, 2.0, gamma})})
