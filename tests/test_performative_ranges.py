"""perfpriv.performative at the ends of its stated ranges: the start and spreads of federated rounds, diverging steps.

Every test runs with warnings as errors.
"""

import warnings

import numpy as np
import pytest

from perfpriv.performative import federated, simulate_participation
from perfpriv.performative.participation import PrivateFederatedRound

pytestmark = pytest.mark.usefixtures("no_warnings")


def test_expected_distance_states_the_range_of_the_start():
    clients = federated.GaussianClients.example(N=4, m_mean=1.0, eps_mean=0.5, m_sd=0.5)
    for scheme, K in (("full", None), ("I", 2), ("II", 2)):
        mom = federated.expected_distance(clients, T=3, scheme=scheme, K=K, steps=1.0, theta0=-1e100)
        assert np.all(np.isfinite(mom.sq_distance)) and mom.sq_distance[0] == pytest.approx(1e200, rel=1e-12)
    for bad in (1e300, -1e300):
        with pytest.raises(ValueError, match=r"theta0 must be in \[-1e\+100, 1e\+100\]"):
            federated.expected_distance(clients, T=2, theta0=bad)


def test_participation_round_states_the_range_of_its_locations_and_spreads():
    # PrivateFederatedRound(m=1e300) squared m in record_spread (OverflowError inside draw_participation)
    for name in ("m", "m_sd", "eps_sd", "sigma", "theta0"):
        with pytest.raises(ValueError, match=name):
            PrivateFederatedRound(0.6, tau=0.3, R=10.0, **{name: 1e300})


def test_diverging_local_steps_of_private_federated_rounds_are_a_clear_error_not_nan():
    # a local step eta multiplies a client's model by 1 - eta(1 - eps_i); at eta = 1e300 the local
    # models overflow in round 1 (they used to give overflow warnings and NaN squared errors)
    kwargs = dict(tau=0.3, R=10.0, q=0.5, r=0.2, T=3, n0=20, cap=60, trials=2, seed=1, eps=0.8, eps_sd=0.3)
    with pytest.raises(ValueError, match=r"^step: .*overflowed in round 1"):
        simulate_participation([1e-3, 0.6], step=1e300, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run = simulate_participation([1e-3, 0.6], step=1e100, **kwargs)   # huge, but finite: a value
    assert np.all(np.isfinite(run.sq_error)) and np.all(run.sq_error > 1e150)
