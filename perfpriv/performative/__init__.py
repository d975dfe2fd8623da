"""Performative learning around the book's model: prediction, federated learning, bilevel.

The book's platform changes *who takes part* with every release. The
classical performative feedback is different: the deployed model changes
*the data distribution* it will be evaluated on. This package implements
the classical kind in its simplest settings, connects it to the book's
model, and puts the two feedback loops into one system:

``prediction``
    Performative prediction with a quadratic loss and a Gaussian location
    family :math:`D(θ) = \\mathcal{N}(m + Aθ, Σ)`: decoupled and performative risk,
    performatively stable and optimal points, repeated risk minimization
    and repeated gradient descent, the contraction condition on the
    sensitivity (Perdomo et al. 2020).
``federated``
    P-FedAvg (Performative Federated Learning): clients with weights :math:`p_i` and distribution maps
    :math:`\\mathcal{N}(m_i + ε_i θ, σ^{2})`, E local steps, full participation and the two
    partial-participation schemes, decaying step sizes; its stable point
    :math:`θ_{\\mathrm{PS}} = Σ_i p_i m_i / (1 - \\bar ε)`, a Monte Carlo simulator and the exact
    second moments of the iterates.
``bilevel``
    FBi-RRM (Federated Bilevel Performative Prediction) on a federated bilevel strategic regression, with
    its exact contraction factor and sensitivity threshold.
``stateful``
    The book's model read as performative prediction over the privacy
    level: decoupled versus performative risk of a level, and why the only
    "stable" privacy level is no privacy.
``participation``
    Both loops at once: P-FedAvg rounds whose clients privatize their
    updates with the Gaussian mechanism and leave after a leak, as a
    mechanism of the book's one population loop (:mod:`perfpriv.engine`).
"""

from __future__ import annotations

from . import bilevel, federated, participation, prediction, stateful
from .bilevel import BilevelRegression, BilevelPath, fbi_rrm
from .federated import (
    FedAvg,
    FedAvgMoments,
    FedAvgRun,
    GaussianClients,
    StepRule,
    average_sensitivity,
    expected_distance,
    p_fedavg,
    stable_point,
)
from .participation import (
    PrivateFederatedRound,
    StatefulMechanism,
)
from .prediction import (
    PerformativePath,
    PerformativeProblem,
    repeated_gradient_descent,
    repeated_risk_minimization,
)
from .stateful import LevelResponse, level_response

__all__ = [
    "prediction", "federated", "bilevel", "stateful", "participation",
    "PerformativeProblem", "PerformativePath", "repeated_risk_minimization", "repeated_gradient_descent",
    "GaussianClients", "StepRule", "FedAvg", "FedAvgRun", "FedAvgMoments", "stable_point", "average_sensitivity",
    "p_fedavg", "expected_distance",
    "BilevelRegression", "BilevelPath", "fbi_rrm",
    "LevelResponse", "level_response",
    "StatefulMechanism", "PrivateFederatedRound",
]
