r"""Interactive explorers, one per chapter, live and kernel-free.

Each :math:`\cdot _{\mathrm{explorer}}` function returns an :class:`Explorer`: sliders for the model's
parameters above a figure that is redrawn when a slider is released (this needs a live kernel: Binder
or Live Code); its drawing function (``*_draw``, ``draw_*``) returns the
:class:`matplotlib.figure.Figure` of one state. ``explorer.static()`` returns its kernel-free version,
a :class:`StaticExplorer`: the same figure precomputed over a grid of its main controls' values,
switched by the browser on the published page and offline.
"""

from ._common import Explorer, float_slider, int_slider
from ._static import StaticExplorer, grid  # noqa: F401  (importable, not in __all__)
# control builders of the explorers, used by the tests (plumbing, not public: they are not in __all__)
from ._common import checkbox, label_html, log_slider  # noqa: F401
from ._static import Grid  # noqa: F401
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

__all__ = ["Explorer", "StaticExplorer", "float_slider", "int_slider",
           *_bernoulli_all, *_gaussian_all, *_dynamics_all, *_schedules_all, *_feedback_all, *_learning_all, *_performative_all]
