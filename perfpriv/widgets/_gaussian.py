"""Explorers of the Gaussian model (paper §4.1-4.4).

:func:`mia_explorer` (chapter 03) reruns a short Algorithm 1 whenever a slider is released;
:func:`llr_explorer` (chapter 04) only evaluates closed forms (Lemma 6, Lemma 7, eq. 10).
"""

from __future__ import annotations

import numpy as np

from .. import engine, gaussian
from ..behaviour import Behaviour, Memoryless
from ..plots import assign
from ..plots import llr_law_figure, population_error
from ._common import Explorer, named_control, float_slider, int_slider, log_slider

__all__ = ["mia_explorer", "mia_draw", "llr_explorer"]


#: The population cap of the explorer's short runs (:func:`mia_draw`, :func:`mia_explorer`).
_CAP = engine.Policy(cap=5000)


def _one_gamma(mechanism, role):
    """The one noise scale γ of a :class:`perfpriv.gaussian.GaussianMean` (refused by name otherwise)."""
    if not isinstance(mechanism, gaussian.GaussianMean):
        raise TypeError(f"mechanism must be a perfpriv.gaussian.GaussianMean; got {type(mechanism).__name__}")
    levels = mechanism.levels
    if levels is None or levels.per_round or levels.shape != ():
        raise ValueError(f"mechanism must hold one noise scale (GaussianMean(gamma, ...)), {role}; got "
                         f"{mechanism!r:.120}")
    return float(levels.values[0])


def _start_model(mechanism, users):
    """The explorer's start values: ``(γ, GaussianMean, Memoryless)``, the paper's model where not given."""
    mechanism = gaussian.GaussianMean(2.0, tau=0.05, d=12, R=10.0) if mechanism is None else mechanism
    users = Memoryless(q=0.5, r=0.2) if users is None else users
    gamma = _one_gamma(mechanism, "the start of the gamma slider")
    options = mechanism.options()
    if options["mu"] is not None or options["Sigma"] is not None:
        raise ValueError("mechanism must have the paper's data model mu = 0, Sigma = I: the explorer's slider "
                         "changes the dimension d")
    if not isinstance(users, Memoryless) or users.shape != ():
        raise TypeError(f"users must be a perfpriv.behaviour.Memoryless with one q and one r (or None), the start "
                        f"of the q and r sliders; got {users!r:.80}")
    return gamma, mechanism, users


def mia_draw(mechanism, users, *, n0, T=25, trials=4, policy=_CAP, seed=0):
    r"""Figure of one :func:`mia_explorer` state: population and error of Algorithm 1.

    One run of :func:`perfpriv.engine.simulate`: its mean population and mean
    squared error per round, with Lemma 3 at the mean population (the panels of
    :func:`perfpriv.plots.algorithm1_runs`).

    Parameters
    ----------
    mechanism, users
        A :class:`perfpriv.gaussian.GaussianMean` of one noise scale γ (the title shows the
        per-contribution :math:`ρ = 2R^{2}/γ^{2}`; records :math:`\mathcal{N}(μ, Σ)`, the explorer's
        :math:`\mathcal{N}(0, I_d)`) and one cell of a :class:`perfpriv.behaviour.Behaviour`.
    n0, T, trials, policy, seed
        As in :func:`perfpriv.engine.simulate`: a short run, capped at 5000 by default (one seed for
        every redraw, so that moving a slider changes only what that parameter changes).

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = gaussian.GaussianMean(2.0, tau=0.05, d=4, R=10.0)
    >>> fig = mia_draw(mech, Memoryless(q=0.5, r=0.2), n0=50, T=5, trials=2)
    >>> len(fig.axes)
    2
    """
    gamma = _one_gamma(mechanism, "the run drawn")
    if not isinstance(users, Behaviour):
        raise TypeError(f"users must be a perfpriv.behaviour.Behaviour (e.g. Memoryless(q=..., r=...)); got "
                        f"{type(users).__name__}")
    if users.shape != ():
        raise ValueError(f"users must be one cell of users (parameters that are numbers); got cells of shape "
                         f"{users.shape}")
    run = engine.simulate(mechanism, users, T=T, n0=n0, trials=trials, policy=policy, seed=seed)
    rho = gaussian.rho_from_gamma(gamma, mechanism.R)
    final = float(np.mean(np.asarray(run.population)[:, -1]))
    sigma = mechanism.options()["Sigma"]
    model = dict(d=mechanism.d) if sigma is None else dict(Sigma=sigma)
    return population_error(run, gamma=gamma, **model,
                            title=f"{assign('gamma', gamma)} ({assign('rho', rho)} per contribution), "
                                  f"mean {assign(f'N_{{{T}}}', final, '.0f')}")


def mia_explorer(mechanism=None, users=None, *, n0=200, T=25, trials=4, policy=_CAP, seed=0):
    """Sliders for :math:`γ, τ, d, R, N_0, q, r` over a short run of Algorithm 1 (chapter 03).

    Parameters
    ----------
    mechanism : perfpriv.gaussian.GaussianMean, optional
        Start of the γ, τ, d and R sliders (one noise scale, the paper's data model μ = 0, Σ = I) and
        the statistic of every rerun; default ``GaussianMean(2.0, tau=0.05, d=12, R=10.0)``.
    users : perfpriv.behaviour.Memoryless, optional
        Start of the q and r sliders (one cell) and the growth rule of every rerun; default
        ``Memoryless(q=0.5, r=0.2)``.
    n0, T, trials, policy, seed
        Start of the :math:`N_0` slider, and the rest of every rerun as in :func:`mia_draw` (small, so
        that a redraw stays well under a second).
    """
    gamma, mechanism, users = _start_model(mechanism, users)
    tau, d, R, statistic = mechanism.tau, mechanism.d, mechanism.R, mechanism.statistic
    q, r, rule = float(users.q), float(users.r), users.rule
    controls = {
        "gamma": named_control("gamma", log_slider, r"noise $\gamma$", gamma, 0.1, 30.0),
        "tau": named_control("tau", log_slider, r"threshold $\tau$", tau, 0.005, 2.0),
        "d": named_control("d", int_slider, "dimension $d$", d, 1, 30),
        "R": named_control("R", float_slider, "radius $R$", R, 1.0, 20.0, 0.5),
        "n0": named_control("n0", int_slider, "initial $N_0$", n0, 10, 2000, 10),
        "q": named_control("q", float_slider, "$q$ (leave)", q, 0.0, 1.0, 0.01),
        "r": named_control("r", float_slider, "$r$ (recruit)", r, 0.0, 1.0, 0.01),
    }

    def draw(gamma, tau, d, R, n0, q, r):
        return mia_draw(gaussian.GaussianMean(gamma, tau=tau, d=d, R=R, statistic=statistic),
                        Memoryless(q=q, r=r, rule=rule), n0=n0, T=T, trials=trials, policy=policy, seed=seed)

    return Explorer("Algorithm 1", controls, draw, columns=4,
                    plotted="the population over the rounds (left) and the squared Mahalanobis error of each release (right), one curve per run", source="perfpriv.widgets.mia_draw",
                    static_grid={"gamma": sorted({0.5, 1.0, 2.0, 4.0, 8.0, gamma}),
                                 "tau": sorted({0.02, 0.05, 0.2, tau})})


def llr_explorer(*, gamma=1.0, n=100, tau=0.3, s=3.5):
    r"""Sliders for γ, N, τ and s showing the law of Λ, its exact tail and the Rényi bound (chapter 04).

    Parameters
    ----------
    gamma, n, tau, s : optional
        Start values of the arguments of :func:`perfpriv.plots.llr_law_figure` (the record's deviation
        :math:`s = \|\bar z - μ_{\bar z}\|`).
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
