"""Optimal privacy levels: ε*, γ* and optimal schedules.

* ε* of randomized response (Figs. 2 and 7): :func:`optimal_epsilon` (by
  simulation) and :func:`mean_field_optimal_epsilon` (theory);
* γ* of the Gaussian mechanism (Remark 3, Figs. 4-5): :func:`optimal_gamma`
  (Lemma 9's bound or the mean field) and :func:`optimal_gamma_empirical`
  (grid search over simulated cumulative errors);
* schedules (one level per round, §5): :func:`optimal_schedule`, for either
  mechanism and a family of schedules (free, two-phase or geometric);
* any mechanism, any behaviour: :func:`level_search`, the best of a
  mechanism's own levels for every cell of a behaviour, by simulation or
  mean field (the ε* and γ* searches score their cells with it).

Every search returns a small frozen result whose first field is the
optimum, with the objective values it compared and its settings.
"""

from ._epsilon import EpsilonOptimum, mean_field_optimal_epsilon, optimal_epsilon
from ._gamma import GammaOptimum, optimal_gamma, optimal_gamma_empirical
from ._levels import LevelOptimum, level_search
from ._schedules import ScheduleOptimum, optimal_schedule

__all__ = [
    "LevelOptimum",
    "level_search",
    "EpsilonOptimum",
    "optimal_epsilon",
    "mean_field_optimal_epsilon",
    "GammaOptimum",
    "optimal_gamma",
    "optimal_gamma_empirical",
    "ScheduleOptimum",
    "optimal_schedule",
]
