"""Performative learning around the book's model: prediction, federated learning, bilevel.

The book's platform changes *who takes part* with every release. The
classical performative feedback is different: the deployed model changes
*the data distribution* it will be evaluated on. This package implements
the classical kind in its simplest settings, connects it to the book's
model, and puts the two feedback loops into one system:

``prediction``
    Performative prediction with a quadratic loss and a Gaussian location family (Perdomo et al. 2020).
``federated``
    P-FedAvg (Performative Federated Learning) on Gaussian clients, simulated and in exact moments.
``bilevel``
    FBi-RRM (Federated Bilevel Performative Prediction) on a federated bilevel strategic regression.
``stateful``
    The book's model read as performative prediction over the privacy level.
``participation``
    Both loops at once: private P-FedAvg rounds whose clients leave after a leak, as an engine mechanism.
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
    ClientLaw,
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
    "StatefulMechanism", "ClientLaw", "PrivateFederatedRound",
]
