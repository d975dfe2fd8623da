"""Figures of the paper, regenerated from perfpriv.

One function per figure (or panel group); each returns a
:class:`matplotlib.figure.Figure`. In a notebook, display one with
:func:`perfpriv.plots.show`, which emits the PNG only.
"""

from ._common import STYLE, new_figure, show, style
from ._bernoulli import *  # noqa: F401,F403
from ._bernoulli import __all__ as _bernoulli_all
from ._gaussian import *  # noqa: F401,F403
from ._gaussian import __all__ as _gaussian_all
from ._dynamics import *  # noqa: F401,F403
from ._dynamics import __all__ as _dynamics_all
from ._schedules import *  # noqa: F401,F403
from ._schedules import __all__ as _schedules_all
from ._learning import *  # noqa: F401,F403
from ._learning import __all__ as _learning_all

__all__ = ["STYLE", "new_figure", "show", "style",
           *_bernoulli_all, *_gaussian_all, *_dynamics_all, *_schedules_all, *_learning_all]
