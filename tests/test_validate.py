"""The shared argument checks: messages name the parameter, value and range."""

import numpy as np
import pytest

from perfpriv import _validate as v


def test_check_real_accepts_scalars_and_arrays_inside_the_interval():
    assert v.check_real("x", 0.5, low=0, high=1) == 0.5
    out = v.check_real("x", [0.0, 1.0], low=0, high=1)
    assert isinstance(out, np.ndarray) and out.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("bad", [np.nan, -0.1, 1.1, [0.5, np.nan], [0.2, 2.0]])
def test_check_real_rejects_values_outside_with_the_parameter_name(bad):
    with pytest.raises(ValueError, match=r"^prob must .*\[0, 1\]"):
        v.check_real("prob", bad, low=0, high=1)


def test_check_real_open_ends_and_infinity():
    with pytest.raises(ValueError, match=r"gamma must be in \(0, inf\)"):
        v.check_real("gamma", 0.0, low=0, low_open=True)
    with pytest.raises(ValueError, match="epsilon must be finite"):
        v.check_real("epsilon", np.inf, low=0)
    assert v.check_real("epsilon", np.inf, low=0, allow_inf=True) == np.inf
    with pytest.raises(ValueError, match="epsilon"):
        v.check_real("epsilon", -np.inf, low=0, allow_inf=True)


def test_check_real_rejects_non_numbers_with_type_error():
    with pytest.raises(TypeError, match="tau must be a real number"):
        v.check_real("tau", "0.1")
    with pytest.raises(TypeError, match="tau must be a single number"):
        v.check_real("tau", [0.1, 0.2], scalar=True)


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (2.5, ValueError), (True, TypeError), ("3", TypeError)])
def test_check_int(bad, exc):
    with pytest.raises(exc, match="T must be an integer"):
        v.check_int("T", bad, low=1)
    assert v.check_int("T", 3.0, low=1) == 3
    assert v.check_int("T", np.int64(7), low=1) == 7


def test_check_choice_lists_the_allowed_values():
    assert v.check_choice("rule", "leak", ("leak", "agnostic")) == "leak"
    with pytest.raises(ValueError, match="rule must be one of 'leak', 'agnostic'; got 'lek'"):
        v.check_choice("rule", "lek", ("leak", "agnostic"))


def test_check_rng_normalizes_seeds_reproducibly():
    a = v.check_rng(5).standard_normal(3)
    b = v.check_rng(np.random.default_rng(5)).standard_normal(3)
    assert np.array_equal(a, b)
    g = np.random.default_rng(1)
    assert v.check_rng(g) is g
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        v.check_rng(-1)
    with pytest.raises(TypeError, match="seed"):
        v.check_rng("abc")


def test_check_covariance_requires_symmetric_positive_definite():
    assert np.array_equal(v.check_covariance(None, 3), np.eye(3))
    with pytest.raises(ValueError, match="Sigma must be a 2x2 matrix"):
        v.check_covariance(np.eye(3), 2)
    with pytest.raises(ValueError, match="symmetric"):
        v.check_covariance([[1.0, 0.5], [0.0, 1.0]], 2)
    with pytest.raises(ValueError, match="positive definite"):
        v.check_covariance([[1.0, 2.0], [2.0, 1.0]], 2)


def test_check_mean_shape():
    assert np.array_equal(v.check_mean(None, 2), np.zeros(2))
    with pytest.raises(ValueError, match="mu must be a vector of length d=3"):
        v.check_mean([0.0, 1.0], 3)


def test_an_integer_array_above_two_to_the_53_is_kept_exactly():
    # a float64 detour would round 2**62 + 1 to 2**62 (and make distinct counters equal)
    values = [2**62 + 1, 2**62 + 2, 2**63 - 1]
    assert v.check_int_array("counters", values, low=0).tolist() == values
    assert v.check_int_array("counters", np.array(values, dtype=np.uint64), low=0).tolist() == values
    with pytest.raises(ValueError, match="counters must hold integers >= 0"):
        v.check_int_array("counters", np.array([2**63], dtype=np.uint64), low=0)
    with pytest.raises(ValueError, match="counters must hold integers <= 5"):
        v.check_int_array("counters", [6], high=5)
