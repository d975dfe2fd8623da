r"""The best privacy level of any mechanism for any behaviour: a search over the mechanism's own levels.

:func:`level_search` knows nothing of the mechanism or the behaviour beyond
the engine's interface, so a new model (appendix B, "Your own model") is
searched as the paper's are; :func:`optimal_epsilon` and
:func:`optimal_gamma_empirical` score their batches of cells with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import engine
from .._stats import mean_se
from .._validate import check_choice, check_int

__all__ = ["LevelOptimum", "level_search", "SCORES", "METHODS"]

#: What a level is scored by: the sum of the T rounds' errors, or the error of round T alone.
SCORES = ("cumulative", "final")
#: How the error of a level is computed: simulated runs (mean over trials) or the mean-field recursion.
METHODS = ("simulation", "mean_field")


@dataclass(frozen=True, eq=False)
class LevelOptimum:
    """Result of :func:`level_search`.

    Attributes
    ----------
    level : float or numpy.ndarray
        The best level per cell (a float for one cell and constant levels), shape ``cells``
        (``cells + (T,)`` for schedules). Ties go to the first level.
    index : int or numpy.ndarray
        Position of the best level in :attr:`levels`, shape ``cells``.
    values, se : numpy.ndarray
        The score of every level, shape ``cells + (L,)`` (mean over trials, or the mean-field value), and
        its Monte Carlo standard error (inf for one trial; 0 for the mean field).
    levels : numpy.ndarray
        The levels searched, shape ``(L,)`` (or ``(L, T)`` for schedules).
    method, score : str
        See :func:`level_search`.
    outcome : perfpriv.engine.SimulationRun or perfpriv.engine.MeanFieldPath
        The run or path of every level (the populations behind the optimum).
    settings : dict
        Provenance: T, n0, trials, policy, conventions, seed.
    """

    level: object
    index: object
    values: np.ndarray
    se: np.ndarray
    levels: np.ndarray
    method: str
    score: str
    outcome: object
    settings: dict

    def __repr__(self) -> str:
        lv = self.level
        text = f"{lv:g}" if isinstance(lv, float) else f"<array {np.shape(lv)}>"
        return (f"LevelOptimum(level={text}, method={self.method!r}, score={self.score!r}, "
                f"{self.levels.shape[0]} levels)")


def level_search(mechanism, behaviour, *, T, n0, method="simulation", score="cumulative", trials=10, policy=None,
                 conventions="paper", seed=None):
    r"""The level of ``mechanism`` with the smallest mean error, for every cell of ``behaviour``.

    The mechanism's levels (a grid, or a :class:`perfpriv.engine.Schedule` with one schedule per row)
    are the candidates, all run in one call of :func:`perfpriv.engine.simulate` (common random numbers)
    or of :func:`perfpriv.engine.mean_field`. The score is the cumulative error :math:`\sum_{t=1}^{T} e_t`
    (the regret of the paper's §5 and Remark 3) or the last round's :math:`e_T` (Figs. 2 and 7).

    Parameters
    ----------
    mechanism, behaviour, T, n0, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate`: any model, with at least one candidate level; each
        cell of the behaviour gets its own best level. ``trials`` and ``seed`` serve the simulation
        only; the mean field uses the policy's ``cap`` and ``floor``.
    method : {"simulation", "mean_field"}
    score : {"cumulative", "final"}

    Returns
    -------
    LevelOptimum

    Raises
    ------
    ValueError
        If ``method``, ``score``, ``T``, ``n0`` or ``trials`` is out of range,
        or the policy does not fit ``n0`` (e.g. a cap below it).

    See Also
    --------
    optimal_epsilon, optimal_gamma_empirical : the paper's searches over maps of (q, r) cells.

    Examples
    --------
    >>> from perfpriv import behaviour, bernoulli
    >>> mech = bernoulli.RandomizedResponse([0.1, 0.5, 2.0, np.inf])
    >>> users = behaviour.Memoryless(q=[0.3, 0.6], r=[0.6, 0.3])
    >>> best = level_search(mech, users, T=30, n0=100, method="mean_field")
    >>> best.level.tolist()                  # (q, r) = (0.6, 0.3): no budget keeps the users
    [0.5, inf]
    >>> sim = level_search(mech, users, T=30, n0=100, trials=20, seed=1)
    >>> sim.values.shape, sim.level.tolist()
    ((2, 4), [0.5, inf])
    """
    method = check_choice("method", method, METHODS)
    score = check_choice("score", score, SCORES)
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    T = check_int("T", T, low=1)
    trials = check_int("trials", trials, low=1)
    policy = engine.check_policy(policy)
    if method == "simulation":
        outcome = engine.simulate(mechanism, behaviour, T=T, n0=n0, trials=trials, policy=policy,
                                  conventions=conventions, seed=seed,
                                  record="final" if score == "final" else "all")
        per_run = outcome.cumulative_error if score == "cumulative" else outcome.sq_error[..., -1]
        values, se = mean_se(per_run, axis=-1)                     # cells + (L,)
    else:
        n0 = check_int("n0", n0, low=1)
        resolved = policy.resolve(mechanism.resolved(conventions), conventions, n0=n0)
        outcome = engine.mean_field(mechanism, behaviour, T=T, n0=n0, cap=resolved.cap, floor=resolved.floor,
                                    conventions=conventions)      # round t's error from N_{t-1}, as simulated
        values = np.asarray(outcome.cumulative_error if score == "cumulative" else outcome.sq_error[..., -1],
                            float)
        se = np.zeros_like(values)
    levels = outcome.mechanism.levels
    grid = levels.values                                                # (L,) or, for schedules, (L, T)
    if grid.ndim != (2 if levels.per_round else 1):
        raise ValueError(f"mechanism's {levels.name} must be candidate levels (a number, a grid or a Schedule), "
                         f"not levels given per cell; got values of shape {grid.shape}")
    values = np.asarray(values, float).reshape(tuple(behaviour.shape) + (levels.count,))
    se = np.asarray(se, float).reshape(values.shape)
    index = np.argmin(values, axis=-1)
    best = grid[index]
    if index.ndim == 0:
        index = int(index)
        best = float(best) if np.ndim(best) == 0 else best
    settings = dict(T=T, n0=n0, trials=trials if method == "simulation" else None, policy=policy.describe(),
                    conventions=conventions, seed=seed if method == "simulation" else None)
    return LevelOptimum(best, index, values, se, grid, method, score, outcome, settings)
