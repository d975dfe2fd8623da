"""perfpriv.feedback at the ends of its ranges: standard errors of one trial, thresholds at a huge κ."""

import warnings

import numpy as np
import pytest

from perfpriv import bernoulli, feedback


def test_the_standard_error_of_a_single_trial_is_infinite_not_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr = feedback.trajectories(feedback.family("memory", 3), bernoulli.RandomizedResponse([0.5]), q=0.3, r=0.6,
                                   T=2, n0=10, trials=1, seed=0)
    assert np.all(np.isposinf(tr.se))
    with pytest.raises(ValueError, match="trials"):                # a map compares standard errors: two runs at least
        feedback.epsilon_map(feedback.family("paper"), bernoulli.RandomizedResponse([1.0], mu=(0.5, 1.0)), [0.3], [0.6],
                             T=2, n0=10, trials=1)


def test_contagion_threshold_with_a_huge_kappa_does_not_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")                             # threshold_curve(values=1e300): b * b overflowed
        assert feedback.threshold_curve("contagion", [1e300], q=0.2, r=0.6).tolist() == [0.0]
