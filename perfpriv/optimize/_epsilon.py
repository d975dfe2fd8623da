r"""The privacy budget ε* that minimizes the final-horizon error (paper Figs. 2 and 7).

For a leaving rate ``q`` and a recruiting rate ``r``, a small ε adds noise to
every answer but keeps users (few leaks); a large ε gives clean answers from
a population that may be shrinking. :func:`optimal_epsilon` finds, on the
grid of ε values a :class:`perfpriv.bernoulli.RandomizedResponse` holds, the
one with the smallest mean (over trials) squared error
:math:`(\hat μ_T - μ_T)^{2}` at the final round T by simulation;
:func:`mean_field_optimal_epsilon` does the same with the mean-field error
(theory, which the paper does not show). Both give one ε* per cell of the
users (for example ``Memoryless(q=Q, r=R)`` over a meshgrid, for the maps of
Figs. 2 and 7).

Defaults follow the paper's ε* maps (``perfpriv.cli.SCALES["paper"]``): T = 200,
n0 = 400, 10 trials, cap 20000 (the paper's :math:`μ_t \sim \mathrm{Uniform}(0.5, 1)` is the
mechanism's ``mu=(0.5, 1.0)``).

Cells are simulated in batches by :func:`perfpriv.engine.simulate`, each
with its own key from the root seed and its coordinates
(:func:`perfpriv.engine.cell_keys`): a cell's numbers do not depend on the
other cells, on the batch size, on ``n_jobs`` or on the joblib backend,
and they are those of ``engine.simulate(mechanism, Memoryless(q=q, r=r),
..., seed=perfpriv.keyed.cell_key(seed, q, r))`` (common random numbers
across ε, including the :math:`μ_t` path).
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
        ε* per (q, r) cell (shape of ``q``; a float for scalar input); can
        be ``inf`` when ``inf`` is in the grid. Ties go to the first grid value.
    values : numpy.ndarray
        Objective per cell and ε, shape ``(*q.shape, len(epsilons))``: the mean
        final-round squared error over trials (or its mean-field value).
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

    For each cell of ``users`` (e.g. ``Memoryless(q=Q, r=R)`` over a meshgrid
    of leave and recruit probabilities), simulates the Bernoulli model for
    every ε of the mechanism's grid (``trials`` runs each, common random
    numbers across ε) and returns the ε with the smallest mean over trials
    of :math:`(\hat μ_T - μ_T)^{2}`.

    Parameters
    ----------
    mechanism : perfpriv.bernoulli.RandomizedResponse
        Its budgets are the grid searched (``np.inf``, no privacy, may be
        among them), its ``mu`` the law of :math:`μ_t` (the paper's maps:
        ``mu=(0.5, 1.0)``), its ``clip_estimate`` the estimator's clipping.
    users : perfpriv.behaviour.Behaviour
        One ε* per cell; any behaviour (the paper's: ``Memoryless(q=..., r=...,
        rule="leak")`` for Fig. 2, ``rule="agnostic"`` for Fig. 7).
    T : int
        Horizon; the error is that of round T (made from :math:`N_{T-1}` users).
    n0 : int
        Initial population.
    trials : int
        Runs per (cell, ε).
    policy : perfpriv.engine.Policy, optional
        Population policy; unset fields come from ``conventions`` (cap 20000).
    conventions : {"paper", "authors"}
        ``"authors"``: the published maps' conventions (population floored
        at 0, a dead trial charged the error 10, clipped estimates) -- where
        every trial collapses every ε ties at 10 and ε* is the first grid value.
    seed : None, int, SeedSequence, Generator or perfpriv.keyed.Key
        Root seed; each cell has its own key from its coordinates
        (:func:`perfpriv.engine.cell_keys`), or a Key array of the users'
        cell shape gives each cell its key.
    options : perfpriv.sweep.Execution, optional
        Workers, cells per batch (default 64), progress and a per-batch
        callback (:func:`perfpriv.sweep.map_grid`); the result does not
        depend on them.

    Returns
    -------
    EpsilonOptimum
        ``epsilon`` has the users' cell shape; ``values`` and ``se`` have
        shape ``users.shape + (len(epsilons),)``.

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

    The objective is the mean-field error of round T,
    :math:`E_μ[ν(1 - ν)]/(4β^{2} N_{T-1})` along :math:`N_t = \mathrm{clip}(N_{t-1} C(β), \mathrm{floor}, \mathrm{cap})`
    (:func:`perfpriv.engine.mean_field`). It ignores the randomness of the
    population (Jensen: E[1/N] >= 1/E[N]), so it is optimistic where the
    population is small.

    Parameters
    ----------
    mechanism : perfpriv.bernoulli.RandomizedResponse
        Its budgets are the grid searched (``np.inf``, no privacy, may be
        among them); its ``mu`` the law of :math:`μ_t`.
    users : perfpriv.behaviour.Behaviour
        One ε* per cell (e.g. ``Memoryless(q=Q, r=R)`` over a meshgrid; any behaviour).
    T, n0 : int
        Horizon and initial population.
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
