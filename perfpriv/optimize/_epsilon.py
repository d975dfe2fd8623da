r"""The privacy budget ε* that minimizes the final-horizon error (paper Figs. 2 and 7).

For a leaving rate ``q`` and a recruiting rate ``r``, a small ε adds noise to
every answer but keeps users (few leaks); a large ε gives clean answers from
a population that may be shrinking. :func:`optimal_epsilon` finds, on a grid
of ε values, the one with the smallest mean (over trials) squared error
:math:`(\hat μ_T - μ_T)^{2}` at the final round T by simulation;
:func:`mean_field_optimal_epsilon` does the same with the mean-field error
(theory, which the paper does not show). Both accept scalar (q, r) or
arrays of (q, r) values (for example a meshgrid, for the maps of Figs. 2
and 7).

Defaults follow the paper's ε* maps (``perfpriv.cli.SCALES["paper"]``): T = 200,
n0 = 400, 10 trials, cap 20000, :math:`μ_t \sim \mathrm{Uniform}(0.5, 1)`.

Cells are simulated in batches by :func:`perfpriv.engine.simulate` (the
behaviour's q and r as arrays), each with its own key from the root seed
and its coordinates (:func:`perfpriv.sweep.map_grid`): a cell's numbers do
not depend on the other cells, on the batch size, on ``n_jobs`` or on the
joblib backend, and they are those of
``bernoulli.simulate(epsilons, q=q, r=r, ..., seed=perfpriv.keyed.cell_key(seed, q, r))``
(common random numbers across ε, including the :math:`μ_t` path).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import engine, keyed
from .._validate import check_choice, check_int
from ..behaviour import RULES, Behaviour
from ..bernoulli import RandomizedResponse
from ..sweep import Execution, map_grid
from ._cells import check_behaviour, check_cells, unique_cells, users_of_cells
from ._levels import level_search

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


def _check_epsilons(epsilons):
    levels = engine.make_levels(epsilons, "epsilons", low=0.0, low_open=True, allow_inf=True)
    if levels.shape == ():
        return np.atleast_1d(levels.values).astype(float)
    return levels.values.astype(float)


def _pick(shape, eps, values):
    idx = np.argmin(values, axis=-1)
    best = eps[idx]
    return float(best) if shape == () else best


def _final_error_cells(q, r, *, keys, epsilons, T, n0, trials, rule, mu, clip_estimate, conventions, policy,
                       behaviour=None):
    """Mean final-round error and its standard error for a batch of cells: shape (cells, 2, E)."""
    mech = RandomizedResponse(epsilons, mu=mu, clip_estimate=clip_estimate)
    best = level_search(mech, users_of_cells(behaviour, q, r, rule), T=T, n0=n0, trials=trials, score="final",
                        policy=policy, conventions=conventions, seed=keys)
    return np.stack([best.values, best.se], axis=1)


def optimal_epsilon(epsilons, *, q, r, T=200, n0=400, trials=10, rule="leak", mu=(0.5, 1.0), seed=None,
                    clip_estimate=None, policy=None, conventions="paper", n_jobs=None, progress="auto", chunk=64,
                    behaviour=None, on_cells=None):
    r"""ε in a grid minimizing the mean final-round squared error, by simulation.

    For each (q, r) cell, simulates the Bernoulli model for every ε of the
    grid (``trials`` runs each, common random numbers across ε) and returns
    the ε with the smallest mean over trials of :math:`(\hat μ_T - μ_T)^{2}`.

    Parameters
    ----------
    q, r : float or array_like
        Leaving and recruiting probabilities in [0, 1] (keyword-free first
        arguments here: they are the map's coordinates); arrays of one
        shape give one ε* per cell.
    epsilons : 1-D array_like
        Candidate ε values in (0, inf]; ``np.inf`` (no privacy) may be included.
    T : int
        Horizon; the error is that of round T (made from :math:`N_{T-1}` users).
    n0 : int
        Initial population.
    trials : int
        Runs per (cell, ε).
    rule : {"leak", "agnostic"}
        Growth rule (Fig. 2 / Fig. 7).
    mu : float or (float, float)
        Law of :math:`μ_t` (default Uniform(0.5, 1), as in the paper's maps).
    seed : None, int, SeedSequence or Generator
        Root seed; each cell has its own key from its coordinates.
    clip_estimate : bool, optional
        Clip μ̂ to [0, 1] (default: from ``conventions``).
    policy : perfpriv.engine.Policy, optional
        Population policy; unset fields come from ``conventions`` (cap 20000).
    conventions : {"paper", "authors"}
        ``"authors"``: the published maps' conventions (population floored
        at 0, a dead trial charged the error 10, clipped estimates) -- where
        every trial collapses every ε ties at 10 and ε* is the first grid value.
    n_jobs, progress, chunk
        Parallel evaluation of the cells (:func:`perfpriv.sweep.map_grid`);
        the result does not depend on them.
    behaviour : callable, optional
        ``behaviour(q, r) -> perfpriv.behaviour.Behaviour``: the users of
        the cells, given arrays of (q, r) (one chunk of cells at a time;
        e.g. ``lambda q, r: behaviour.LeakCount(k=3, q=q, r=r)``). ``None``
        (default): the paper's users, ``Memoryless(q=q, r=r, rule=rule)``.
        Exclusive with a non-default ``rule``. Must be picklable for
        ``n_jobs`` > 1 (a module-level function or class, not a lambda).
    on_cells : callable, optional
        Called with the number of (distinct) cells of each chunk as it
        finishes (progress, or a place where a caller may stop cleanly).
    Returns
    -------
    EpsilonOptimum
        ``epsilon`` has the shape of ``q``; ``values`` and ``se`` have shape
        ``(*q.shape, len(epsilons))``.

    References
    ----------
    Paper §3, Fig. 2 (leak model) and appendix B, Fig. 7 (agnostic model).

    Examples
    --------
    >>> res = optimal_epsilon(q=0.3, r=0.6, epsilons=[0.1, 0.5, np.inf], n0=100, seed=0)
    >>> res.epsilon
    0.5
    >>> grid = optimal_epsilon(q=[[0.3, 0.6]], r=[[0.6, 0.3]], epsilons=[0.1, 0.5, np.inf], n0=100, seed=0)
    >>> grid.epsilon.shape, grid.values.shape
    ((1, 2), (1, 2, 3))
    """
    qq, rr, shape = check_cells(q, r)
    eps = _check_epsilons(epsilons)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=1)
    trials = check_int("trials", trials, low=1)
    rule = check_choice("rule", rule, RULES)
    check_behaviour(behaviour, rule)
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    policy = engine.check_policy(policy)
    RandomizedResponse(eps, mu=mu, clip_estimate=clip_estimate)  # checks mu, clip_estimate now
    uq, ur, inverse = unique_cells(qq, rr)
    run = Execution(n_jobs=n_jobs, chunk=chunk, progress=progress, description=f"epsilon* ({rule})",
                    on_cells=on_cells)
    out = map_grid(_final_error_cells, {"q": uq, "r": ur}, seed=keyed.root_key(seed), options=run, epsilons=eps,
                   T=T, n0=n0, trials=trials, rule=rule, mu=mu, clip_estimate=clip_estimate,
                   conventions=conventions, policy=policy, **({} if behaviour is None else {"behaviour": behaviour}))
    values, se = out[inverse, 0], out[inverse, 1]
    settings = dict(T=T, n0=n0, trials=trials, rule=rule, mu=mu, conventions=conventions, policy=policy.describe(),
                    clip_estimate=clip_estimate, seed=seed)
    if behaviour is not None:
        settings["behaviour"] = behaviour
    return EpsilonOptimum(_pick(shape, eps, values), values, eps, se, "simulation", settings)


def _epsilon_grid(mechanism):
    """The ε grid of a search: the levels of a :class:`perfpriv.bernoulli.RandomizedResponse` (one or more)."""
    if not isinstance(mechanism, RandomizedResponse):
        raise TypeError(f"mechanism must be a perfpriv.bernoulli.RandomizedResponse; got {type(mechanism).__name__}")
    levels = mechanism.levels
    if levels is None or levels.per_round or isinstance(levels.given, engine.PerCell):
        kind = "no budget" if levels is None else "a schedule" if levels.per_round else "levels per cell"
        raise ValueError(f"mechanism must hold the budgets to search (RandomizedResponse(epsilons, ...), a number "
                         f"or a 1-D grid); got a mechanism with {kind}")
    return np.atleast_1d(np.asarray(levels.values, float))


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
    eps = _epsilon_grid(mechanism)
    if not isinstance(users, Behaviour):
        raise TypeError(f"users must be a perfpriv.behaviour.Behaviour (e.g. Memoryless(q=..., r=...)); "
                        f"got {type(users).__name__}")
    n0 = check_int("n0", n0, low=1)
    resolved = engine.check_policy(policy).resolve(mechanism, "paper", n0=n0)
    grid = RandomizedResponse(eps, **mechanism.options())
    path = engine.mean_field(grid, users, T=T, n0=n0, cap=resolved.cap, floor=resolved.floor)
    values = path.sq_error[..., -1]
    settings = dict(T=T, n0=n0, rule=users.rule, mu=mechanism.mu, cap=resolved.cap, floor=resolved.floor,
                    users=users)
    return EpsilonOptimum(_pick(tuple(users.shape), eps, values), values, eps, np.zeros(values.shape), "mean_field",
                          settings)
