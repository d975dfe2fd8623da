"""The book's model read as performative prediction over the privacy level.

In performative prediction the deployed model θ' fixes the data distribution D(θ'). In the book's model the
deployed *privacy level* ℓ' (ε or γ) fixes, after enough rounds, the population N(ℓ') that the platform
serves -- but only through the population's history: the model is stateful. Reading it after T rounds of the
mean field gives a distribution map :math:`ℓ' \\mapsto N_T(ℓ')`, and with it the two risks of performative
prediction:

* decoupled risk :math:`\\mathrm{DR}(ℓ; ℓ') = e(N_T(ℓ'), ℓ)`: the error of a release at level
  ℓ made from the population that ℓ' built (what a platform minimizes if it
  re-tunes its level for the users it has now, treating them as given);
* performative risk :math:`\\mathrm{PR}(ℓ) = \\mathrm{DR}(ℓ; ℓ)`: the error at the population ℓ builds.

Since the error of a release decreases with the level's accuracy at any
fixed population, the best response to every deployed level is the least
private level available: the only performatively stable privacy level is
no privacy, while the performatively optimal one is finite
(:func:`level_response`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import engine

__all__ = ["LevelResponse", "level_response"]


@dataclass(frozen=True, eq=False)
class LevelResponse:
    """Decoupled and performative risks of a grid of privacy levels (:func:`level_response`).

    Attributes
    ----------
    levels, population : numpy.ndarray, shape (L,)
        The grid of levels ℓ (ε, γ, ...) and the mean-field population :math:`N_T(\\ell')` at each.
    decoupled_risk, performative_risk : numpy.ndarray, shapes (L, L) and (L,)
        ``decoupled_risk[i, j]`` = :math:`\\mathrm{DR}(\\ell_i; \\ell_j)` and its diagonal (module docstring).
    best_response : numpy.ndarray of int, shape (L,)
        ``best_response[j]``: index of the level minimizing DR(·; levels[j]).
    stable, optimal
        Levels whose best response is themselves (fixed points of re-tuning), and the level minimizing PR.
    level_name, T, n0, cap, floor, mechanism, behaviour
        Provenance.
    """

    levels: np.ndarray
    population: np.ndarray
    decoupled_risk: np.ndarray
    performative_risk: np.ndarray
    best_response: np.ndarray
    stable: np.ndarray
    optimal: float
    level_name: str
    T: int
    n0: float
    cap: Any
    floor: Any
    mechanism: Any
    behaviour: Any

    def __repr__(self) -> str:
        return (f"LevelResponse({self.level_name}: {self.levels.size} levels, stable={np.round(self.stable, 4).tolist()}, "
                f"optimal={self.optimal:.4g}, T={self.T})")


def level_response(mechanism, behaviour, *, T, n0, cap=20000, floor=1, conventions="paper"):
    """Decoupled and performative risk of every level of a mechanism's grid, from the mean field.

    Parameters
    ----------
    mechanism, behaviour
        The model (:class:`perfpriv.engine.Mechanism` with a 1-D grid of constant levels, e.g.
        ``RandomizedResponse(np.geomspace(...))``; :class:`perfpriv.behaviour.Behaviour` with scalar
        parameters).
    T, n0, cap, floor, conventions
        As in :func:`perfpriv.engine.mean_field` (the population is read after T rounds).

    Returns
    -------
    LevelResponse

    Examples
    --------
    >>> from perfpriv import bernoulli, behaviour
    >>> res = level_response(bernoulli.RandomizedResponse([0.3, 1.0, 3.0, np.inf]),
    ...                      behaviour.Memoryless(q=0.3, r=0.6), T=40, n0=400)
    >>> res.stable.tolist(), res.optimal
    ([inf], 0.3)
    """
    if not isinstance(mechanism, engine.Mechanism):
        raise TypeError(f"mechanism must be a perfpriv mechanism; got {mechanism!r:.60}")
    levels = mechanism.levels
    if levels is None or levels.per_round or levels.shape == ():
        raise ValueError(f"the mechanism's {mechanism.level_name} must be a 1-D grid of constant levels (at least "
                         f"two); got {None if levels is None else levels.describe()!r:.60}")
    if getattr(behaviour, "shape", ()) != ():
        raise ValueError(f"behaviour must have scalar parameters (one cell); got parameters of shape {behaviour.shape}")
    path = engine.mean_field(mechanism, behaviour, T=T, n0=n0, cap=cap, floor=floor, conventions=conventions)
    grid = np.asarray(levels.values, dtype=float)
    pop = np.asarray(path.population[..., -1], dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        dr = np.asarray(path.mechanism.expected_error(pop[None, :], grid[:, None]), dtype=float)
    dr = np.broadcast_to(dr, (grid.size, grid.size)).copy()
    best = np.argmin(dr, axis=0)
    stable = grid[best == np.arange(grid.size)]
    pr = np.diag(dr).copy()
    return LevelResponse(grid, pop, dr, pr, best, stable, float(grid[int(np.argmin(pr))]), levels.name,
                         path.T, path.n0, cap, floor, path.mechanism, behaviour)
