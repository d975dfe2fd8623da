"""Figures of the paper, regenerated from perfpriv.

One function per figure (or panel group); each returns a
:class:`matplotlib.figure.Figure`. Figures only draw: their numbers come from
:mod:`perfpriv.experiments` (and the library below it). A figure of
simulations draws the result it is given (the experiment runs first, with the
model's objects); the figures of closed forms (growth factors, tail bounds,
the statistics' leak probabilities) evaluate them from their arguments.
In a notebook, display one with :func:`perfpriv.plots.show`, which emits the
PNG only.
"""

from ._common import new_figure, show
# drawing helpers shared with perfpriv.widgets and the tests (plumbing, not public: they are not in __all__)
from ._common import (COLUMN_WIDTH, PIXEL_DENSITY, assign, display_width, html, layout_problems,  # noqa: F401
                      math, number, params, plain_log, png_bytes, style)
# argument checks shared with perfpriv.widgets (not public: they are not in __all__)
from ._common import MAX_LOG_VALUE, check_callable, check_items, check_sequence, check_text  # noqa: F401
from ._bernoulli import *  # noqa: F401,F403
from ._bernoulli import __all__ as _bernoulli_all
from ._gaussian import *  # noqa: F401,F403
from ._gaussian import __all__ as _gaussian_all
from ._dynamics import *  # noqa: F401,F403
from ._dynamics import __all__ as _dynamics_all
from ._schedules import *  # noqa: F401,F403
from ._schedules import __all__ as _schedules_all
from ._feedback import *  # noqa: F401,F403
from ._feedback import __all__ as _feedback_all
from ._performative import *  # noqa: F401,F403
from ._performative import __all__ as _performative_all
from ._learning import *  # noqa: F401,F403
from ._learning import __all__ as _learning_all
# panels and labels that the explorers of perfpriv.widgets draw with (not public: not in __all__)
from ._dynamics import finish_horizon_axes  # noqa: F401
from ._feedback import family_label  # noqa: F401
from ._gaussian import population_error  # noqa: F401

__all__ = ["new_figure", "show",
           *_bernoulli_all, *_gaussian_all, *_dynamics_all, *_schedules_all, *_feedback_all, *_learning_all, *_performative_all]
