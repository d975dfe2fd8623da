"""perfpriv.performative at the ends of its stated ranges: the start and spreads of federated rounds, diverging steps.

Every test runs with warnings as errors.
"""

import math
import warnings

import numpy as np
import pytest

from perfpriv import engine
from perfpriv.behaviour import Memoryless
from perfpriv.performative import BilevelRegression, federated
from perfpriv.performative.participation import ClientLaw, PrivateFederatedRound
from perfpriv.engine import Policy

pytestmark = pytest.mark.usefixtures("no_warnings")


def test_expected_distance_states_the_range_of_the_start():
    clients = federated.GaussianClients.example(N=4, m_mean=1.0, eps_mean=0.5, m_sd=0.5)
    for scheme, K in (("full", None), ("I", 2), ("II", 2)):
        mom = federated.expected_distance(clients, federated.FedAvg(scheme=scheme, K=K, steps=1.0), T=3,
                                          theta0=-1e100)
        assert np.all(np.isfinite(mom.sq_distance)) and mom.sq_distance[0] == pytest.approx(1e200, rel=1e-12)
    for bad in (1e300, -1e300):
        with pytest.raises(ValueError, match=r"theta0 must be in \[-1e\+100, 1e\+100\]"):
            federated.expected_distance(clients, T=2, theta0=bad)


def test_participation_round_states_the_range_of_its_locations_and_spreads():
    # PrivateFederatedRound(m=1e300) squared m in record_spread (OverflowError inside draw_participation)
    for name in ("m", "m_sd", "eps_sd", "sigma"):
        with pytest.raises(ValueError, match=rf"^{name} must be in \[.*1e\+100\]"):
            ClientLaw(**{name: 1e300})
    with pytest.raises(ValueError, match="theta0"):
        PrivateFederatedRound(0.6, tau=0.3, R=10.0, theta0=1e300)


NAN, INF = float("nan"), float("inf")
#: ClientLaw's fields and values each must refuse by the field's name (issue 31: they were PrivateFederatedRound's
#: keywords, checked by its constructor with the same messages)
CLIENT_LAW_BAD = {
    "m": [NAN, INF, -1e300, "x", None, [], [1.0, NAN]],
    "m_sd": [-1e-9, NAN, INF, 1e300, "x", None, [1.0, 2.0]],
    "eps": [1.0, -1.0, 1.5, NAN, INF, "x", None, [0.5, 0.5]],
    "eps_sd": [-1e-9, NAN, INF, 1e300, "x", None, [0.1, 0.2]],
    "sigma": [-1e-9, NAN, INF, 1e300, "x", None, [1.0, 2.0]],
}


@pytest.mark.parametrize("name, bad", [(n, b) for n, bads in CLIENT_LAW_BAD.items() for b in bads])
def test_client_law_refuses_a_bad_field_by_name(name, bad):
    with pytest.raises((ValueError, TypeError)) as info:
        ClientLaw(**{name: bad})
    message = str(info.value)
    assert message.startswith(f"{name} must") and "\n" not in message and len(message) < 400, message


def test_diverging_local_steps_of_private_federated_rounds_are_a_clear_error_not_nan():
    # a local step eta multiplies a client's model by 1 - eta(1 - eps_i); at eta = 1e300 the local
    # models overflow in round 1 (they used to give overflow warnings and NaN squared errors)
    law = dict(tau=0.3, R=10.0, clients=ClientLaw(eps=0.8, eps_sd=0.3))
    kwargs = dict(T=3, n0=20, policy=Policy(cap=60), trials=2, seed=1)
    users = Memoryless(q=0.5, r=0.2)
    with pytest.raises(ValueError, match=r"^fedavg.steps: .*overflowed in round 1"):
        engine.simulate(PrivateFederatedRound([1e-3, 0.6], fedavg=federated.FedAvg(steps=1e300), **law), users, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        huge = federated.FedAvg(steps=1e100)                                                 # huge, but finite
        run = engine.simulate(PrivateFederatedRound([1e-3, 0.6], fedavg=huge, **law), users, **kwargs)
    assert np.all(np.isfinite(run.sq_error)) and np.all(run.sq_error > 1e150)


# ------------------------------------------------------------ issue 32: steps, spreads, names and seeds
def test_local_steps_that_amplify_the_models_are_refused_by_name():
    # steps=1e300 overflowed to inf, then NaN, within two local iterations (with RuntimeWarnings)
    c = federated.GaussianClients.example(N=3, eps_mean=0.5, sigma=0.0)       # c_i |1 − ε_i| = 0.5
    for call in (federated.p_fedavg, federated.expected_distance):
        kw = dict(T=2, trials=2) if call is federated.p_fedavg else dict(T=2)
        with pytest.raises(ValueError, match="steps must keep the local iterations stable"):
            call(c, federated.FedAvg(steps=1e300), **kw)
        with pytest.raises(ValueError, match="steps"):
            call(c, federated.FedAvg(steps=4.0 * (1 + 1e-12)), **kw)
    # at the edge η = 2/0.5 = 4 the local factor is a = 1 − 4·0.5 = −1: θ ← −θ + η m (noiseless, equal clients)
    mom = federated.expected_distance(c, federated.FedAvg(steps=4.0), T=2, theta0=1.0)
    m = float(c.m[0, 0])
    assert mom.mean.ravel().tolist() == [1.0, -1.0 + 4.0 * m, -(-1.0 + 4.0 * m) + 4.0 * m]


def test_record_spread_states_the_range_of_the_model():
    rnd = PrivateFederatedRound(1.0, tau=0.02, R=10.0, clients=ClientLaw(m_sd=1.0, eps_sd=2.0, sigma=3.0),
                                fedavg=federated.FedAvg(batch=4))
    assert rnd.record_spread(0.5) == 1.0 + (2.0 * 0.5) ** 2 + 9.0 / 4                   # m_sd² + (s_ε θ)² + σ²/b
    assert rnd.record_spread(-1e100) == pytest.approx(4e200, rel=1e-15)                 # the edge: (2e100)²
    wide = PrivateFederatedRound(1.0, tau=0.02, R=10.0, clients=ClientLaw(eps_sd=1e60))
    assert wide.record_spread(1e100) == math.inf                                         # (1e160)² beyond the doubles
    with pytest.raises(ValueError, match=r"theta must be in \[-1e\+100, 1e\+100\]"):
        rnd.record_spread(1e300)                                                        # overflowed with a warning


def test_constant_step_rule_names_its_step():
    with pytest.raises(ValueError, match=r"eta must be in \(0, inf\)"):                  # said "beta"
        federated.StepRule.constant(-1.0)


def test_generators_are_accepted_as_seeds_and_give_their_streams():
    # the refusal listed Generator as allowed, and refused one
    a = federated.GaussianClients.example(N=4, m_sd=1.0, seed=np.random.default_rng(5))
    b = federated.GaussianClients.example(N=4, m_sd=1.0, seed=5)
    np.testing.assert_array_equal(a.m, b.m)          # default_rng(5) is the stream of seed 5
    p = BilevelRegression.synthetic(seed=np.random.default_rng(2))
    q = BilevelRegression.synthetic(seed=2)
    np.testing.assert_array_equal(p.A, q.A)
    np.testing.assert_array_equal(p.b, q.b)


def test_agent_references_take_a_generator_seed():
    from perfpriv import engine, regression
    from perfpriv.behaviour import Memoryless
    kw = dict(T=2, n0=10, trials=2)
    for mech in (PrivateFederatedRound(1.0, tau=0.02, R=10.0), regression.RidgeRelease(1.0, tau=0.02, data=regression.RidgeData(d=2))):
        a = engine.simulate_agents(mech, Memoryless(q=0.3, r=0.6), **kw, seed=np.random.default_rng(3))
        b = engine.simulate_agents(mech, Memoryless(q=0.3, r=0.6), **kw, seed=3)
        np.testing.assert_array_equal(a.population, b.population)
