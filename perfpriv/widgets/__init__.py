"""Interactive explorers, one per chapter (need a live kernel: Binder or Live Code).

Each ``*_explorer`` function returns an :class:`Explorer`: sliders for the
model's parameters above a figure that is redrawn when a slider is released.
"""

from ._common import Explorer, float_slider, int_slider, log_slider
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

__all__ = ["Explorer", "float_slider", "int_slider", "log_slider",
           *_bernoulli_all, *_gaussian_all, *_dynamics_all, *_schedules_all, *_learning_all]
