"""perfpriv.behaviour.Memoryless: the paper's users, in simulation and in the mean field.

The simulated step against its definition (binomial departures among the leaked,
recruits among the non-leaked or all users) with exact moments, the mean-field step and
its derivatives against the growth rule and finite differences, cell shapes, bounds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfpriv import keyed
from perfpriv.behaviour import RULES, Behaviour, Memoryless

Z = 4.5


@pytest.mark.parametrize("rule", RULES)
def test_growth_factor_is_the_expected_ratio_of_the_rule(rule):
    b = Memoryless(q=0.3, r=0.6, rule=rule)
    p = np.linspace(0, 1, 11)
    expect = 1 - 0.3 * p + 0.6 * ((1 - p) if rule == "leak" else 1.0)
    np.testing.assert_allclose(b.growth_factor(p), expect, rtol=1e-15)
    assert isinstance(b.growth_factor(0.5), float)


@pytest.mark.parametrize("rule", RULES)
def test_one_step_has_the_exact_mean_and_variance_of_its_binomials(rule):
    # N' = N − Bin(K, q) + Bin(N − K or N, r) with independent binomials
    n, k, q, r, m = 500, 200, 0.35, 0.55, 40_000
    b = Memoryless(q=q, r=r, rule=rule)
    keys = keyed.root_key(1).child(np.arange(m))
    state = b.initial_state(n, (m,))
    nxt = b.step(state, np.full(m, k), keys)[..., 0].astype(float)
    pool = n - k if rule == "leak" else n
    mean = n - k * q + pool * r
    var = k * q * (1 - q) + pool * r * (1 - r)
    assert abs(nxt.mean() - mean) < Z * math.sqrt(var / m)
    d = nxt - nxt.mean()
    mu4 = np.mean(d**4)
    assert abs(np.mean(d**2) - var) < Z * math.sqrt((mu4 - var**2) / m)


def test_step_uses_the_leave_and_join_streams_of_its_keys():
    b = Memoryless(q=0.5, r=0.5)
    keys = keyed.root_key(2).child(np.arange(5))
    state = b.initial_state(100, (5,))
    leaked = np.array([0, 10, 50, 90, 100])
    out = b.step(state, leaked, keys)[..., 0]
    leave = keyed.binomial(keys.child("leave"), leaked, 0.5)
    join = keyed.binomial(keys.child("join"), 100 - leaked, 0.5)
    np.testing.assert_array_equal(out, 100 - leave + join)
    # nobody leaves when q = 0, nobody joins when r = 0
    np.testing.assert_array_equal(Memoryless(q=0.0, r=0.0).step(state, leaked, keys)[..., 0], 100)


def test_bound_clips_to_floor_and_cap_and_floor_zero_lets_it_die():
    b = Memoryless(q=0.5, r=0.5)
    state = np.array([[0], [1], [50], [300]])
    assert b.bound(state, 1, 100)[..., 0].tolist() == [1, 1, 50, 100]
    assert b.bound(state, 0, None)[..., 0].tolist() == [0, 1, 50, 300]
    mf = np.array([[0.2], [5.0], [1e9]])
    assert b.mean_field_bound(mf, 1.0, 1e6)[..., 0].tolist() == [1.0, 5.0, 1e6]
    assert b.mean_field_bound(mf, None, None)[..., 0].tolist() == [0.2, 5.0, 1e9]


@pytest.mark.parametrize("rule", RULES)
def test_mean_field_step_and_its_derivatives(rule):
    b = Memoryless(q=0.3, r=0.6, rule=rule)
    n, p = np.array([10.0, 200.0]), np.array([0.2, 0.7])
    np.testing.assert_allclose(b.mean_field_step(n[:, None], p)[..., 0], n * b.growth_factor(p), rtol=1e-15)
    dn, dp = b.mean_field_step_grad(n, p)
    h = 1e-6
    fd_n = (b.mean_field_step((n + h)[:, None], p) - b.mean_field_step((n - h)[:, None], p))[..., 0] / (2 * h)
    fd_p = (b.mean_field_step(n[:, None], p + h) - b.mean_field_step(n[:, None], p - h))[..., 0] / (2 * h)
    np.testing.assert_allclose(dn, fd_n, rtol=1e-7)
    np.testing.assert_allclose(dp, fd_p, rtol=1e-7)


def test_array_parameters_are_cells():
    b = Memoryless(q=np.array([0.1, 0.2, 0.3]), r=np.array([[0.5], [0.6]]))
    assert b.shape == (2, 3)
    assert "array(3,)" in repr(b) and "rule='leak'" in repr(b)
    assert Memoryless(q=0.3, r=0.6).shape == ()
    assert repr(Memoryless(q=0.3, r=0.6)) == "Memoryless(q=0.3, r=0.6, rule='leak')"


def test_q_and_r_are_keyword_only_and_checked():
    with pytest.raises(TypeError):
        Memoryless(0.3, 0.6)
    with pytest.raises(ValueError, match="^q must be in"):
        Memoryless(q=1.5, r=0.6)
    with pytest.raises(ValueError, match="^r must be in"):
        Memoryless(q=0.5, r=-0.1)
    with pytest.raises(ValueError, match="^rule must be one of"):
        Memoryless(q=0.5, r=0.1, rule="memory")


def test_the_base_class_has_no_gradient_and_one_type():
    base = Behaviour()
    assert base.types == 1 and base.shape == ()
    with pytest.raises(NotImplementedError, match="no mean-field gradient"):
        base.mean_field_step_grad(1.0, 0.5)


def _behaviours_for_method_checks():
    from perfpriv import behaviour as B
    return [B.Memoryless(q=0.3, r=0.6), B.LeakCount(k=2, q=0.3, r=0.6), B.Heterogeneous(q=[0.1, 0.5], weights=[0.5, 0.5], r=0.6),
            B.BudgetAware(tolerance=[1.0, 3.0], r=0.6, q=0.1), B.Contagion(q=0.3, r=0.6, kappa=0.5)]


@pytest.mark.parametrize("users", _behaviours_for_method_checks(), ids=lambda b: type(b).__name__)
def test_public_step_methods_refuse_values_the_engine_never_passes(users):
    # the engine-facing methods used to accept them silently: p = 2 gave a negative mean-field population,
    # leaked > population a negative simulated one, floor > cap or a NaN cap a NaN state
    from perfpriv import keyed
    state = users.mean_field_state(100.0, (2,), T=5)
    context = {"cost": 0.5}
    for p, kind, match in ((2.0, ValueError, r"^p must be in \[0, 1\]"), (-1e-12, ValueError, r"^p must be"),
                           (np.array([np.nan, 0.5]), ValueError, r"^p must be a number"),
                           ("x", TypeError, r"^p must be a real number")):
        with pytest.raises(kind, match=match):
            users.mean_field_step(state, p, context)
    np.testing.assert_array_equal(users.mean_field_step(state, np.array([0.2, 0.2]), context),
                                  users.mean_field_step(state, 0.2, context))
    for method, st in ((users.mean_field_bound, state), (users.bound, users.initial_state(100, (2,), T=5))):
        for floor, cap, match in ((5, 1, r"^cap must be >= floor"), (np.nan, 10, r"^floor must be a number"),
                                  (1, np.nan, r"^cap must be a number"), (-1, 10, r"^floor must be in"),
                                  (True, 10, r"^floor must be a real number")):
            with pytest.raises((ValueError, TypeError), match=match):
                method(st, floor, cap)
        method(st, 1, np.inf)
        method(st, None, None)
    sim = users.initial_state(100, (2,), T=5)
    keys = keyed.root_key(0).child(np.arange(2))
    for leaked, match in ((np.array([-1, 3]), r"^leaked must hold integers >= 0"),
                          (np.array([101, 3]), r"^leaked must be at most the population"),
                          (np.array([1.5, 3]), r"^leaked must hold integers")):
        with pytest.raises(ValueError, match=match):
            users.step(sim, leaked, keys, context)
    with pytest.raises(TypeError, match=r"^keys must be a perfpriv.keyed.Key"):
        users.step(sim, np.array([1, 3]), 0, context)
    assert users.step(sim, np.array([100, 0]), keys, context).shape == sim.shape


@pytest.mark.parametrize("users", _behaviours_for_method_checks(), ids=lambda b: type(b).__name__)
def test_state_and_context_methods_refuse_what_no_engine_state_holds(users):
    # issue 32: population('x') raised AttributeError, population(-state) returned a negative count,
    # step(NaN state) returned 9.2e18-user states, step/mean_field_step(context='x') an AttributeError, a
    # context t = 'x' int()'s own message, cost = NaN NaN users
    keys = keyed.root_key(0).child(np.arange(2))
    sim, mf = users.initial_state(100, (2,), T=5), users.mean_field_state(100.0, (2,), T=5)
    context = {"cost": 0.5}
    for bad, kind, match in (("x", TypeError, r"^state must be a numeric array"),
                             (np.zeros((2, 7, 9, 9)), ValueError, r"^state must end with one run's"),
                             (-sim, ValueError, r"^state must hold counts in \[0, inf\]"),
                             (sim * np.nan, ValueError, r"^state must hold counts")):
        with pytest.raises(kind, match=match):
            users.population(bad)
        with pytest.raises(kind, match=match):
            users.step(bad, np.array([1, 3]), keys, context)
        with pytest.raises(kind, match=match):
            users.mean_field_step(bad if not isinstance(bad, np.ndarray) else bad.astype(float), 0.1, context)
    for ctx, kind, match in (("x", TypeError, r"^context must be None or a mapping"),
                             ({"t": "x", "cost": 0.5}, TypeError, r"^t must be an integer"),
                             ({"t": 0, "cost": 0.5}, ValueError, r"^t must be"),
                             ({"t": 1, "cost": np.nan}, ValueError, r"^cost must be a number"),
                             ({"t": 1, "cost": -1.0}, ValueError, r"^cost must be"),
                             ({"t": 1, "cost": 0.5, "cap": -1}, ValueError, r"^cap must be")):
        with pytest.raises(kind, match=match):
            users.step(sim, np.array([1, 3]), keys, ctx)
        with pytest.raises(kind, match=match):
            users.mean_field_step(mf, 0.1, ctx)
    # the valid calls are unchanged: an infinite cap is no cap
    np.testing.assert_array_equal(users.step(sim, np.array([1, 3]), keys, dict(context, cap=np.inf)),
                                  users.step(sim, np.array([1, 3]), keys, context))
    assert users.population(sim).tolist() == [100, 100]


# ---------------------------------------------------------------- the default growth factor
class _AwayAndBack(Behaviour):
    """Two types: active A and away W. A' = A(1 - qp + r(1 - p)) + sW, W' = qpA (linear at constant p)."""

    types = 2

    def __init__(self, *, q, r, s):
        self.q, self.r, self.s = q, r, s

    @property
    def shape(self):
        return ()

    def mean_field_step(self, state, p, context=None):
        a, w = state[..., 0], state[..., 1]
        left = self.q * p * a
        return np.stack([a - left + self.r * (1 - p) * a + self.s * w, left], axis=-1)


@pytest.mark.parametrize("p", [0.0, 0.05, 0.3, 0.8, 1.0])
def test_the_default_growth_factor_is_the_perron_root_of_the_mean_field_step(p):
    # closed form: lambda^2 - a lambda - s q p = 0 with a = 1 - qp + r(1 - p)
    q, r, s = 0.4, 0.3, 0.6
    a = 1 - q * p + r * (1 - p)
    want = (a + math.sqrt(a * a + 4 * s * q * p)) / 2
    assert _AwayAndBack(q=q, r=r, s=s).growth_factor(p) == pytest.approx(want, rel=1e-12)


def test_the_default_growth_factor_agrees_with_the_library_behaviours_own():
    from perfpriv.behaviour import Heterogeneous, LeakCount

    p = np.array([0.0, 0.2, 0.5, 0.9])
    users = Memoryless(q=0.3, r=0.6)
    np.testing.assert_allclose(Behaviour.growth_factor(users, p), 1 + 0.6 * (1 - p) - 0.3 * p, rtol=1e-12)
    agnostic = Memoryless(q=0.3, r=0.6, rule="agnostic")
    np.testing.assert_allclose(Behaviour.growth_factor(agnostic, p), 1 + 0.6 - 0.3 * p, rtol=1e-12)
    for other in (LeakCount(k=3, q=0.4, r=0.5), Heterogeneous(q=[0.1, 0.5], weights=[0.3, 0.7], r=0.4)):
        np.testing.assert_allclose(Behaviour.growth_factor(other, p), other.growth_factor(p), rtol=1e-10)


def test_the_default_growth_factor_refuses_a_behaviour_without_a_fixed_number_of_types():
    class Open(_AwayAndBack):
        types = None

    with pytest.raises(ValueError, match="types"):
        Open(q=0.1, r=0.2, s=0.3).growth_factor(0.5)
    with pytest.raises(ValueError, match="p"):
        _AwayAndBack(q=0.1, r=0.2, s=0.3).growth_factor(1.5)


def test_the_default_critical_leak_probability_is_where_the_growth_factor_crosses_one():
    from perfpriv.behaviour import Heterogeneous, LeakCount

    cases = [Memoryless(q=[0.3, 0.6, 0.0, 0.5], r=[0.6, 0.3, 0.2, 0.0]),     # r/(q+r); q = 0: 1; r = 0: 0
             Memoryless(q=[0.3, 0.6, 0.0], r=[0.6, 0.1, 0.4], rule="agnostic"),   # min(1, r/q)
             LeakCount(k=3, q=0.4, r=0.5), Heterogeneous(q=[0.1, 0.5], weights=[0.3, 0.7], r=0.4)]
    for users in cases:
        np.testing.assert_allclose(Behaviour.critical_leak_probability(users), users.critical_leak_probability(),
                                   rtol=1e-12, atol=1e-15)
    # the two-type users away for a round: the paper's threshold with q(1 - s) for q
    q, r, s = 0.4, 0.3, 0.6
    assert _AwayAndBack(q=q, r=r, s=s).critical_leak_probability() == pytest.approx(r / (r + q * (1 - s)),
                                                                                     rel=1e-12)


class _TwoTypes(Behaviour):
    """Two types of users whose population is their sum; the defaults of bound and mean_field_bound."""

    types = 2

    def step(self, state, leaked, keys, context=None):   # pragma: no cover - not called
        return state


def test_the_default_bound_moves_the_first_types_count_and_keeps_the_others():
    b = _TwoTypes()
    state = np.array([[30, 70], [5, 3], [0, 50]])
    assert b.bound(state, 10, 60).tolist() == [[0, 70], [7, 3], [0, 50]]    # the cap takes at most the first count
    assert b.mean_field_bound(state.astype(float), None, 60).tolist() == [[0.0, 70.0], [5.0, 3.0], [0.0, 50.0]]
    assert b.bound(state, 0, None).tolist() == state.tolist()                # floor 0: no floor
    one = Memoryless(q=0.3, r=0.6)                                           # one type: a clip of the count
    assert one.bound(np.array([[5], [500]]), 10, 100).tolist() == [[10], [100]]
    assert one.mean_field_bound(np.array([[np.inf]]), None, None).tolist() == [[np.inf]]


def test_grid_axes_reads_the_q_and_r_axes_of_a_grid_of_cells_and_refuses_other_cells():
    qs, rs = Memoryless(q=[[0.1], [0.5]], r=[[0.2, 0.4, 0.6]]).grid_axes()
    assert qs.tolist() == [0.1, 0.5] and rs.tolist() == [0.2, 0.4, 0.6]
    Q, R = np.meshgrid([0.3, 0.7], [0.1, 0.9], indexing="ij")          # the full arrays give the same axes
    assert [a.tolist() for a in Memoryless(q=Q, r=R).grid_axes()] == [[0.3, 0.7], [0.1, 0.9]]
    assert [a.tolist() for a in Memoryless(q=0.3, r=0.6).grid_axes()] == [[0.3], [0.6]]    # one cell: 1 x 1
    for q, r in ((Q.T, R.T), ([0.1, 0.2], 0.6), (np.full((2, 2, 2), 0.3), 0.6)):        # transposed, 1-D, 3-D
        with pytest.raises(ValueError, match=r"^users must span a \(q, r\) grid: .*got cells of shape"):
            Memoryless(q=q, r=r).grid_axes()
