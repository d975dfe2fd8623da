"""Optimal privacy levels: epsilon* of the Bernoulli model and gamma* of the Gaussian model.

This module gathers the searches of ``perfpriv.epsilon_search`` (Figs. 2
and 7 of the paper: the privacy budget minimizing the final-horizon error) and
``perfpriv.gamma_search`` (Remark 3 and Figs. 4-5: the noise scale
minimizing the cumulative error, from theory and from simulation). Each
search returns a small result object whose first field is the optimum.
"""

from .epsilon_search import *  # noqa: F401,F403
from .epsilon_search import __all__ as _epsilon_all
from .gamma_search import *  # noqa: F401,F403
from .gamma_search import __all__ as _gamma_all

__all__ = list(_epsilon_all) + list(_gamma_all)
