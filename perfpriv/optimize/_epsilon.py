r"""The privacy budget ε* that minimizes the final-horizon error (paper Figs. 2 and 7).

A small ε adds noise to every answer but keeps users (few leaks); a large ε gives clean answers from
a population that may be shrinking. :func:`optimal_epsilon` (simulation) and
:func:`mean_field_optimal_epsilon` (theory, which the paper does not show) pick the best ε of a
:class:`perfpriv.bernoulli.RandomizedResponse` grid per cell of the users. Defaults follow the
paper's ε* maps (``perfpriv.cli.SCALES["paper"]``): T = 200, n0 = 400, 10 trials, cap 20000, and
:math:`μ_t \sim \mathrm{Uniform}(0.5, 1)` is the mechanism's ``mu=(0.5, 1.0)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import engine
from ..sweep import check_execution
from .._validate import check_choice, check_int
from ..bernoulli import RandomizedResponse
from ._cells import check_users, search_cells

__all__ = ["EpsilonOptimum", "optimal_epsilon", "mean_field_optimal_epsilon"]


@dataclass(frozen=True, eq=False)
class EpsilonOptimum:
    """Result of :func:`optimal_epsilon` / :func:`mean_field_optimal_epsilon`.

    Attributes
    ----------
    epsilon : float or numpy.ndarray
        ε* per cell of the users (a float for one cell); ``inf`` if in the grid. Ties: the first.
    values : numpy.ndarray
        Mean final-round squared error over trials (or its mean-field value) per cell and ε,
        shape ``users.shape + (len(epsilons),)``.
    epsilons : numpy.ndarray
        The ε grid searched.
    se : numpy.ndarray
        Monte Carlo standard error of ``values`` (0 for the mean field, inf
        for one trial).
    objective : str
        ``"simulation"`` or ``"mean_field"``.
    settings : dict
        Provenance: T, n0, trials, rule, mu, conventions, policy, seed.
    """

    epsilon: object
    values: np.ndarray
    epsilons: np.ndarray
    se: np.ndarray
    objective: str
    settings: dict

    @property
    def index(self):
        """Index of ε* in :attr:`epsilons` (int or int array)."""
        idx = np.argmin(self.values, axis=-1)
        return int(idx) if np.ndim(idx) == 0 else idx

    def __repr__(self) -> str:
        eps = self.epsilon
        text = f"{eps:g}" if isinstance(eps, float) else f"<array {np.shape(eps)}>"
        return f"EpsilonOptimum(epsilon={text}, objective={self.objective!r}, grid={self.epsilons.size} values)"


def _pick(shape, eps, values):
    idx = np.argmin(values, axis=-1)
    best = eps[idx]
    return float(best) if shape == () else best


def optimal_epsilon(mechanism, users, *, T=200, n0=400, trials=10, policy=None, conventions="paper", seed=None,
                    options=None):
    r"""ε in a grid minimizing the mean final-round squared error, by simulation.

    For each cell of ``users`` (e.g. ``Memoryless(q=Q, r=R)`` over a meshgrid),
    the ε of the mechanism's grid with the smallest mean over trials of
    :math:`(\hat μ_T - μ_T)^{2}` (round T, from :math:`N_{T-1}` users; common
    random numbers across ε). Each cell has its own key
    (:func:`perfpriv.engine.cell_keys`): its numbers are those of
    ``engine.simulate(mechanism, Memoryless(q=q, r=r), ..., seed=perfpriv.keyed.cell_key(seed, q, r))``.

    Parameters
    ----------
    mechanism : perfpriv.bernoulli.RandomizedResponse
        Its budgets are the grid searched (``np.inf``, no privacy, may be
        among them), its ``mu`` the law of :math:`μ_t`, its ``clip_estimate`` the clipping.
    users : perfpriv.behaviour.Behaviour
        One ε* per cell; any behaviour (the paper's: ``Memoryless(q=..., r=...,
        rule="leak")`` for Fig. 2, ``rule="agnostic"`` for Fig. 7).
    T, n0, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate` (``trials`` per (cell, ε)). ``conventions="authors"``:
        the published maps' (floor 0, a dead trial charged the error 10, clipped estimates), where
        every trial collapses every ε ties at 10 and ε* is the first grid value.
    options : perfpriv.sweep.Execution, optional
        Workers, cells per batch (default 64), progress (:func:`perfpriv.sweep.map_grid`); no number
        depends on them.

    Returns
    -------
    EpsilonOptimum
        ``epsilon`` of the users' cell shape.

    References
    ----------
    Paper §3, Fig. 2 (leak model) and appendix B, Fig. 7 (agnostic model).

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = RandomizedResponse([0.1, 0.5, np.inf], mu=(0.5, 1.0))
    >>> optimal_epsilon(mech, Memoryless(q=0.3, r=0.6), n0=100, seed=0).epsilon
    0.5
    >>> grid = optimal_epsilon(mech, Memoryless(q=[[0.3, 0.6]], r=[[0.6, 0.3]]), n0=100, seed=0)
    >>> grid.epsilon.shape, grid.values.shape
    ((1, 2), (1, 2, 3))
    """
    eps = engine.level_grid(mechanism, kind=RandomizedResponse)
    users = check_users(users)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=1)
    trials = check_int("trials", trials, low=1)
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    policy = engine.check_policy(policy)
    policy.resolve(mechanism, conventions, n0=n0)        # checks the policy against n0, before any work
    options = check_execution(options, chunk=64, description=f"epsilon* ({users.rule})")
    values, se = search_cells(RandomizedResponse(eps, **mechanism.options()), users, seed=seed, options=options,
                              T=T, n0=n0, trials=trials, score="final", policy=policy, conventions=conventions)
    settings = dict(T=T, n0=n0, trials=trials, rule=users.rule, mu=mechanism.mu, conventions=conventions,
                    policy=policy.describe(), clip_estimate=mechanism.clip_estimate, seed=seed, users=users)
    return EpsilonOptimum(_pick(tuple(users.shape), eps, values), values, eps, se, "simulation", settings)


def mean_field_optimal_epsilon(mechanism, users, *, T=200, n0=400, policy=None):
    r"""ε in a grid minimizing the mean-field final-round error (theory).

    The objective is the mean-field error of round T, :math:`E_μ[ν(1 - ν)]/(4β^{2} N_{T-1})`
    (:func:`perfpriv.bernoulli.mean_field`: optimistic where the population is small).

    Parameters
    ----------
    mechanism, users
        As in :func:`optimal_epsilon`.
    T, n0 : int
        As in :func:`perfpriv.engine.mean_field`.
    policy : perfpriv.engine.Policy, optional
        Its ``cap`` and ``floor`` clip the mean field; unset, the paper's 20000 and 1.

    Returns
    -------
    EpsilonOptimum
        With ``se`` equal to 0.

    References
    ----------
    Paper §3, eq. 1 and Lemma 2; Figs. 2 and 7 for the simulated counterpart.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> res = mean_field_optimal_epsilon(RandomizedResponse([0.1, 0.5, np.inf]), Memoryless(q=0.3, r=0.6), n0=100)
    >>> res.epsilon, res.values.round(5).tolist()
    (0.5, [0.005, 0.0002, 0.16667])
    """
    eps = engine.level_grid(mechanism, kind=RandomizedResponse)
    users = check_users(users)
    n0 = check_int("n0", n0, low=1)
    resolved = engine.check_policy(policy).resolve(mechanism, "paper", n0=n0)
    grid = RandomizedResponse(eps, **mechanism.options())
    path = engine.mean_field(grid, users, T=T, n0=n0, cap=resolved.cap, floor=resolved.floor)
    values = path.sq_error[..., -1]
    settings = dict(T=T, n0=n0, rule=users.rule, mu=mechanism.mu, cap=resolved.cap, floor=resolved.floor,
                    users=users)
    return EpsilonOptimum(_pick(tuple(users.shape), eps, values), values, eps, np.zeros(values.shape), "mean_field",
                          settings)
