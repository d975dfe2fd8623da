"""perfpriv._stats: means, standard errors and norms of samples with extreme values."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfpriv._stats import euclidean_norms


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.floats(min_value=-1e300, max_value=1e300, allow_subnormal=False), min_size=1, max_size=6),
       st.integers(min_value=-300, max_value=300))
def test_euclidean_norms_match_mpmath_at_every_scale(entries, exponent):
    with np.errstate(over="ignore"):
        x = np.asarray(entries, float) * 10.0 ** (exponent // 2)
    if not np.all(np.isfinite(x)):
        return
    mpmath.mp.dps = 40
    exact = mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(v)) ** 2 for v in x))
    got = float(euclidean_norms(x[None, :])[0])
    assert got == pytest.approx(float(exact), rel=1e-14, abs=0)      # float(exact) may be inf only if it overflows
    assert float(euclidean_norms(x)) == got


def test_euclidean_norms_of_moderate_rows_are_the_plain_ones_bit_for_bit():
    rows = np.random.default_rng(0).normal(size=(1000, 3)) * np.geomspace(1e-100, 1e100, 1000)[:, None]
    np.testing.assert_array_equal(euclidean_norms(rows), np.sqrt(np.einsum("ij,ij->i", rows, rows)))
    assert euclidean_norms(np.zeros((2, 4))).tolist() == [0.0, 0.0]


def test_one_standard_error_convention_a_single_run_resolves_nothing():
    """mean_se and standard_error agree everywhere: inf from one run, NaN from a NaN, scaled huge samples."""
    from perfpriv._stats import mean_se, standard_error
    samples = np.array([[2.0, np.nan], [1e300, 3e300], [np.inf, 1.0], [1.0, 3.0]])
    np.testing.assert_array_equal(standard_error(samples), mean_se(samples)[1])
    assert standard_error(samples).tolist()[1:] == [1e300, np.inf, 1.0]
    assert np.isnan(standard_error(samples)[0])
    one = mean_se(np.array([[2.0], [np.nan]]))
    assert one[1][0] == np.inf and np.isnan(one[1][1])
    assert standard_error([[2.0]]).tolist() == [np.inf]
