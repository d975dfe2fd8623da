r"""perfpriv: performative privacy -- repeated private mean estimation when
users whose data leaks leave the platform.

The library behind the *perfpriv* book. Submodules (loaded on first use):

``bernoulli``
    Randomized response, growth factors and simulators of the Bernoulli
    warm-up (paper §3 and appendices B-C).
``gaussian``
    Clipping, the Gaussian mechanism and Algorithm 1 (§4.1-4.2).
``projected``
    Algorithm 1's round from about one normal per record (isotropic Σ),
    the default draw of ``gaussian.simulate``.
``leakage``
    Membership-inference log-likelihood ratio, exact and Rényi leak
    probabilities, Gaussian-DP view, marginal leak probability (§4.3-4.4).
``behaviour``
    How users react to a leak: the paper's memoryless rules (``Memoryless``).
``engine``
    The performative loop: one batched simulator and one mean-field
    recursion (mechanism x behaviour x population policy).
``dynamics``
    Growth factor :math:`C_t(\gamma)`, survival threshold, error bounds, mean-field
    trajectories and the PAC horizon (§4.5, appendices D-E).
``optimize``
    Optimal privacy level epsilon*, noise scale gamma* and schedules.
``schedules``
    Families of privacy schedules (constant, two-phase, geometric).
``sweep``
    Grids of cells evaluated in parallel with joblib, each cell keyed by the
    root seed and its own coordinates.
``feedback``
    Richer user behaviour (memory, classes, budget-aware users, contagion):
    survival thresholds and optimal privacy levels under each.
``regression``, ``gradient``
    Learning tasks beyond the mean: private ridge regression with
    leave-one-out membership leakage, and private gradient descent with
    per-record accounting, both as mechanisms of the engine (chapter 09).
``experiments``
    The numerical checks and simulations behind the chapters and figures.
``performative``
    Performative prediction, P-FedAvg, federated bilevel FBi-RRM, and
    private federated rounds whose leaking clients leave (papers 002-003).
``plots``, ``widgets``, ``exercises``, ``notebook``
    Figures of the paper, interactive explorers, classroom self-checks,
    one-line error messages in Jupyter.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = (
    "bernoulli",
    "gaussian",
    "projected",
    "leakage",
    "behaviour",
    "engine",
    "dynamics",
    "optimize",
    "sweep",
    "schedules",
    "feedback",
    "regression",
    "gradient",
    "experiments",
    "performative",
    "plots",
    "widgets",
    "exercises",
    "notebook",
)

__all__ = list(_SUBMODULES) + ["__version__"]


def __getattr__(name: str):
    """Import a submodule on first access (``perfpriv.bernoulli`` etc.)."""
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'perfpriv' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
