"""How users react to a round: who leaves after a leak, who brings someone new.

A *behaviour* is the second ingredient of the performative loop of
:mod:`perfpriv.engine` (the first is a mechanism, the third a population
policy). Given what a round did to the population -- how many users there
were and how many of them leaked -- it decides how many users the next
round has, both in simulation (random departures and recruits, drawn from
the round's keyed streams of :mod:`perfpriv._random`) and in the mean field
(the same rule applied to expectations).

The paper's rules are :class:`Memoryless`. The state of a behaviour is an
integer array with one trailing entry per user type (one type here: the
population count), so that richer behaviours -- users who remember past
leaks, classes of users with different sensitivities -- fit the same loop.

Symbols: ``q`` — probability that a leaked user leaves; ``r`` — probability
that a user recruits one new user (a non-leaked user under ``rule="leak"``,
every user under ``rule="agnostic"``).
"""

from __future__ import annotations

import numpy as np

from . import _random
from ._validate import check_choice, check_probability

__all__ = ["Behaviour", "Memoryless", "LeakCount", "Heterogeneous", "BudgetAware", "Contagion", "RULES"]

#: The paper's growth rules: §3 and Algorithm 1 ("leak"), appendix B ("agnostic").
RULES = ("leak", "agnostic")


class Behaviour:
    """Base class of user behaviours (the interface :mod:`perfpriv.engine` uses).

    A behaviour's simulation state is an ``int64`` array of shape
    ``batch + (types,)``; its mean-field state a float array of the same
    layout. Subclasses implement :meth:`step` and :meth:`mean_field_step`
    (and, for schedule gradients, :meth:`mean_field_step_grad`).
    """

    #: number of user types the state counts
    types = 1

    @property
    def shape(self) -> tuple:
        """Shape of the behaviour's parameters (a batch of cells when they are arrays)."""
        return ()

    def cell_coordinates(self) -> tuple:
        """The values that identify each cell (arrays of :attr:`shape`): the engine keys a cell's
        random numbers by them, so that a cell's numbers do not depend on its neighbours."""
        return ()

    # --------------------------------------------------------- simulation
    def initial_state(self, n0: int, batch: tuple, T: int | None = None) -> np.ndarray:
        """The state of a population of ``n0`` users, for a batch of that shape (horizon ``T``)."""
        state = np.zeros(tuple(batch) + (self.types,), dtype=np.int64)
        state[..., 0] = n0
        return state

    def population(self, state) -> np.ndarray:
        """Number of users of a state (sum over types)."""
        return state.sum(axis=-1)

    def step(self, state, leaked, keys, context=None):  # pragma: no cover - interface
        """Next state before the population policy: draw departures and recruits."""
        raise NotImplementedError

    def bound(self, state, floor, cap, keys=None):
        """Apply the population floor and cap to a state (one type: clip the count)."""
        n = state[..., 0]
        if cap is not None:
            n = np.minimum(n, cap)
        if floor:
            n = np.maximum(n, floor)
        return n[..., None]

    # --------------------------------------------------------- mean field
    def mean_field_state(self, n0: float, batch: tuple, T: int | None = None) -> np.ndarray:
        """Mean-field state of ``n0`` users."""
        state = np.zeros(tuple(batch) + (self.types,))
        state[..., 0] = n0
        return state

    def mean_field_step(self, state, p, context=None):  # pragma: no cover - interface
        """Expected next state given the leak probability ``p`` of every user."""
        raise NotImplementedError

    def mean_field_bound(self, state, floor, cap):
        """Floor and cap of a mean-field state (one type: clip the count)."""
        n = state[..., 0]
        if cap is not None:
            n = np.minimum(n, cap)
        if floor is not None:
            n = np.maximum(n, floor)
        return n[..., None]

    def mean_field_step_grad(self, n, p):  # pragma: no cover - interface
        """Derivatives of a one-type step: (d n'/d n at fixed p, d n'/d p)."""
        raise NotImplementedError(f"{type(self).__name__} has no mean-field gradient "
                                  "(schedule optimization needs a one-type behaviour)")


class Memoryless(Behaviour):
    """The paper's users: a leaked user leaves with probability q, users recruit with probability r.

    Each round, every user who leaked leaves with probability ``q``
    (independently, and regardless of her past: no memory). Under
    ``rule="leak"`` (§3, Lemma 2; Algorithm 1, lines 12-15) every user who
    did *not* leak recruits one new user with probability ``r``; under
    ``rule="agnostic"`` (appendix B) every user does, leaked or not. So
    with N users of whom K leaked,

        leak:      N' = N − Binomial(K, q) + Binomial(N − K, r),
        agnostic:  N' = N − Binomial(K, q) + Binomial(N, r),

    and, when every user leaks with probability p, the expected growth
    factor is E[N'] / N = 1 + r − (q + r) p (leak; eq. 3 and eq. 12) or
    1 + r − q p (agnostic).

    Parameters
    ----------
    q : float or array_like
        Leaving probability of a leaked user, in [0, 1].
    r : float or array_like
        Recruiting probability, in [0, 1]. Arrays of ``q`` and ``r``
        broadcast to a batch of cells (one engine call simulates them all).
    rule : {"leak", "agnostic"}
        Who recruits.

    References
    ----------
    Paper §3 (Lemma 2, eq. 3-4), Algorithm 1 (lines 12-15), Lemma 8
    (eq. 12), appendix B.

    Examples
    --------
    >>> b = Memoryless(q=0.3, r=0.6)
    >>> round(float(b.growth_factor(0.25)), 4)      # 1 + r - (q + r) p
    1.375
    >>> Memoryless(q=0.3, r=0.6, rule="agnostic").growth_factor(1.0)
    1.3
    """

    def __init__(self, *, q, r, rule: str = "leak"):
        self.q = check_probability("q", q)
        self.r = check_probability("r", r)
        self.rule = check_choice("rule", rule, RULES)
        self._shape = np.broadcast_shapes(np.shape(self.q), np.shape(self.r))

    def __repr__(self) -> str:
        return f"Memoryless(q={_short(self.q)}, r={_short(self.r)}, rule={self.rule!r})"

    @property
    def shape(self) -> tuple:
        return self._shape

    def cell_coordinates(self) -> tuple:
        return (np.broadcast_to(self.q, self._shape), np.broadcast_to(self.r, self._shape))

    def _qr(self, ndim):
        """q and r with trailing axes for a batch of ``ndim`` axes after the cell axes."""
        q = np.asarray(self.q, float)
        r = np.asarray(self.r, float)
        extra = ndim - len(self._shape)
        return q.reshape(np.shape(q) + (1,) * extra), r.reshape(np.shape(r) + (1,) * extra)

    def growth_factor(self, p):
        """Expected growth factor E[N']/N when every user leaks with probability ``p``.

        ``1 + r − (q + r) p`` (leak rule, eq. 3 / eq. 12) or ``1 + r − q p``
        (agnostic rule, appendix B), computed as one plus the excess so that
        nothing cancels; ``p``, ``q`` and ``r`` broadcast as numpy arrays do.
        """
        return _out(self._growth(np.asarray(p, float), np.asarray(self.q, float), np.asarray(self.r, float)))

    def _growth(self, p, q, r):
        """The one place of the growth formula (leak: eq. 3 and eq. 12; agnostic: appendix B)."""
        excess = r - (q + r) * p if self.rule == "leak" else r - q * p
        return 1.0 + excess

    # --------------------------------------------------------- simulation
    def step(self, state, leaked, keys, context=None):
        n = state[..., 0]
        q, r = self._qr(n.ndim)
        pool = n - leaked if self.rule == "leak" else n
        leave, join = _random.binomials((keys.child("leave"), leaked, q), (keys.child("join"), pool, r))
        return (n - leave + join)[..., None]

    # --------------------------------------------------------- mean field
    def mean_field_step(self, state, p, context=None):
        n = state[..., 0]
        q, r = self._qr(n.ndim)
        with np.errstate(over="ignore"):  # an uncapped population may grow past the double range: inf
            return (n * self._growth(np.asarray(p, float), q, r))[..., None]

    def mean_field_step_grad(self, n, p):
        q, r = self._qr(np.ndim(n))
        dn = self._growth(np.asarray(p, float), q, r)
        dp = -(q + r) * n if self.rule == "leak" else -q * n
        return dn, dp


# ---------------------------------------------------------------- richer users
def _vector(name, value, check):
    arr = np.atleast_1d(np.asarray(check(name, value), dtype=float))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence; got shape {arr.shape}")
    return arr


def _weights(weights, size, name="weights"):
    from ._validate import check_real
    w = _vector(name, weights, lambda n, v: check_real(n, v, low=0))
    if w.size != size:
        raise ValueError(f"{name} must have one entry per class ({size}); got {w.size}")
    if not w.sum() > 0:
        raise ValueError(f"{name} must not all be zero")
    return w / w.sum()


def _allocate(total, weights):
    """Split integers ``total`` (array) into classes with shares ``weights``: largest remainder."""
    total = np.asarray(total, dtype=np.int64)
    raw = total[..., None] * weights
    base = np.floor(raw).astype(np.int64)
    short = total - base.sum(axis=-1)
    order = np.argsort(-(raw - base), axis=-1, kind="stable")
    ranks = np.argsort(order, axis=-1, kind="stable")
    return base + (ranks < short[..., None])


def _split_multinomial(keys, total, weights):
    """Multinomial(total; weights) per element, exact, by the chain of conditional binomials."""
    total = np.asarray(total, dtype=np.int64)
    out = np.zeros(total.shape + (weights.size,), dtype=np.int64)
    left = total.copy()
    mass = 1.0
    for j in range(weights.size - 1):
        p = min(1.0, weights[j] / mass) if mass > 0 else 0.0
        take = _random.binomial(keys.child(np.int64(j)), left, p)
        out[..., j] = take
        left = left - take
        mass -= weights[j]
    out[..., -1] = left
    return out


def _cap_recruits(new, recruits, cap, keys):
    """Turn away the excess over ``cap`` among this round's recruits (a random subset of them)."""
    if cap is None:
        return new
    excess = np.maximum(new.sum(axis=-1) - cap, 0)
    if not np.any(excess):
        return new
    removed = _random.multivariate_hypergeometric(keys.child("cap"), recruits, np.minimum(excess,
                                                                                          recruits.sum(axis=-1)))
    return new - removed


def _floor_to(new, floor, cls):
    """Bring an emptied state back to ``floor`` users of class ``cls`` (a fresh user)."""
    if not floor:
        return new
    short = np.maximum(floor - new.sum(axis=-1), 0)
    if np.any(short):
        new = new.copy()
        new[..., cls] += short
    return new


def _mf_cap(new, recruits, cap):
    """Mean field: the excess over the cap is removed from the recruits, in proportion."""
    if cap is None:
        return new
    tot = new.sum(axis=-1)
    excess = np.maximum(tot - cap, 0.0)
    rec = recruits.sum(axis=-1)
    frac = np.where(rec > 0, np.minimum(excess / np.where(rec > 0, rec, 1.0), 1.0), 0.0)
    return new - recruits * frac[..., None]


def _mf_floor(new, floor, share):
    if floor is None:
        return new
    short = np.maximum(floor - new.sum(axis=-1), 0.0)
    return new + short[..., None] * share


class _Typed(Behaviour):
    """Behaviours whose state counts users of several types (bounded by their own step)."""

    def bound(self, state, floor, cap, keys=None):
        return state

    def mean_field_bound(self, state, floor, cap):
        return state


class LeakCount(_Typed):
    """Users with memory: a user leaves (with probability q) only at her k-th leak.

    A user counts the leaks she has suffered. Her first k − 1 leaks she
    tolerates; at her k-th leak -- and at every later one -- she leaves with
    probability q, as the paper's users do at their first. Recruits start
    with no leak. Users who did not leak recruit with probability r (leak
    rule) or every user does (agnostic rule), as in :class:`Memoryless`.
    With k = 1 this *is* :class:`Memoryless`.

    The state counts users by their number of past leaks, capped at k − 1
    (types 0, ..., k − 1). A round's K leaks fall on a uniformly random set
    of K users (the mechanism's leaks are exchangeable), so they split
    across types by a multivariate hypergeometric law. Recruits beyond the
    cap are turned away at random; a platform floored at one user regains a
    fresh one.

    Mean field: with leak probability p, type c moves p n_c users to type
    c + 1 (c < k − 1); type k − 1 loses q p n_{k−1}; recruits r(1 − p)N
    (or rN) join type 0.

    Parameters
    ----------
    k : int
        The leak at which users start reacting, k >= 1.
    q, r : float or array_like
        Leaving and recruiting probabilities (arrays: cells).
    rule : {"leak", "agnostic"}

    References
    ----------
    Paper §3 (the limitation "no memory" of its model) and Algorithm 1.

    Examples
    --------
    >>> b = LeakCount(k=2, q=0.5, r=0.3)
    >>> s = b.mean_field_state(100.0, ())
    >>> s2 = b.mean_field_step(s, 0.5, {"floor": None, "cap": None})
    >>> s2.round(2).tolist()                        # 50 + 15 recruits, 50 move to type 1
    [65.0, 50.0]
    """

    def __init__(self, *, k, q, r, rule="leak"):
        from ._validate import check_int
        self.k = check_int("k", k, low=1)
        self._memoryless = Memoryless(q=q, r=r, rule=rule)
        self.q, self.r, self.rule = self._memoryless.q, self._memoryless.r, self._memoryless.rule
        self.types = self.k

    def __repr__(self):
        return f"LeakCount(k={self.k}, q={_short(self.q)}, r={_short(self.r)}, rule={self.rule!r})"

    @property
    def shape(self):
        return self._memoryless.shape

    def cell_coordinates(self):
        return self._memoryless.cell_coordinates()

    def _qr(self, ndim):
        return self._memoryless._qr(ndim)

    def step(self, state, leaked, keys, context=None):
        ctx = context or {}
        n = state.sum(axis=-1)
        q, r = self._qr(n.ndim)
        by_type = _random.multivariate_hypergeometric(keys.child("split"), state, leaked)
        leave = _random.binomial(keys.child("leave"), by_type[..., -1], q)
        pool = n - leaked if self.rule == "leak" else n
        join = _random.binomial(keys.child("join"), pool, r)
        new = state - by_type
        new[..., 1:] += by_type[..., :-1]
        new[..., -1] += by_type[..., -1] - leave
        new[..., 0] += join
        recruits = np.zeros_like(new)
        recruits[..., 0] = join
        new = _cap_recruits(new, recruits, ctx.get("cap"), keys)
        return _floor_to(new, ctx.get("floor"), 0)

    def mean_field_state(self, n0, batch, T=None):
        state = np.zeros(tuple(batch) + (self.types,))
        state[..., 0] = n0
        return state

    def initial_state(self, n0, batch, T=None):
        state = np.zeros(tuple(batch) + (self.types,), dtype=np.int64)
        state[..., 0] = n0
        return state

    def mean_field_step(self, state, p, context=None):
        ctx = context or {}
        n = state.sum(axis=-1)
        p = np.asarray(p, float)
        q, r = self._qr(n.ndim)
        moved = state * p[..., None]
        new = state - moved
        new[..., 1:] += moved[..., :-1]
        new[..., -1] += moved[..., -1] * (1.0 - q)
        recruits = np.zeros_like(new)
        recruits[..., 0] = r * (n * (1.0 - p) if self.rule == "leak" else n)
        new = new + recruits
        new = _mf_cap(new, recruits, ctx.get("cap"))
        share = np.zeros(self.types)
        share[0] = 1.0
        return _mf_floor(new, ctx.get("floor"), share)


class Heterogeneous(_Typed):
    """Classes of users with different sensitivities: class j leaves after a leak with probability q_j.

    The initial population and the recruits split over S classes with
    shares ``weights`` (the initial split by largest remainder, recruits'
    classes drawn independently). A leaked user of class j leaves with
    probability q_j; users who did not leak recruit with probability r (leak
    rule; every user under the agnostic rule). Because thin-skinned users
    leave faster, the population's mix drifts toward the thick-skinned
    classes. One class is :class:`Memoryless`.

    Mean field: n_j' = n_j (1 − q_j p) + w_j r (1 − p) N (leak rule), so
    the growth factor of a mix with shares s_j is 1 + r − (Σ_j s_j q_j + r) p:
    the paper's formula with q replaced by the population's mean
    sensitivity, which falls as the mix drifts.

    Parameters
    ----------
    q : sequence of float
        Leaving probability of each class, in [0, 1].
    weights : sequence of float
        Shares of the classes (normalized to sum to 1).
    r : float
        Recruiting probability.
    rule : {"leak", "agnostic"}

    Examples
    --------
    >>> b = Heterogeneous(q=[0.9, 0.1], weights=[0.5, 0.5], r=0.3)
    >>> s = b.mean_field_state(100.0, ())
    >>> b.mean_field_step(s, 0.5, {"floor": None, "cap": None}).round(2).tolist()
    [35.0, 55.0]
    """

    def __init__(self, *, q, weights, r, rule="leak"):
        self.q = _vector("q", q, check_probability)
        self.weights = _weights(weights, self.q.size)
        self.r = check_probability("r", r, scalar=True)
        self.rule = check_choice("rule", rule, RULES)
        self.types = int(self.q.size)

    def __repr__(self):
        return (f"Heterogeneous(q={np.round(self.q, 4).tolist()}, weights={np.round(self.weights, 4).tolist()}, "
                f"r={self.r:g}, rule={self.rule!r})")

    def initial_state(self, n0, batch, T=None):
        return np.broadcast_to(_allocate(np.int64(n0), self.weights), tuple(batch) + (self.types,)).copy()

    def mean_field_state(self, n0, batch, T=None):
        return np.broadcast_to(float(n0) * self.weights, tuple(batch) + (self.types,)).copy()

    def step(self, state, leaked, keys, context=None):
        ctx = context or {}
        n = state.sum(axis=-1)
        by_class = _random.multivariate_hypergeometric(keys.child("split"), state, leaked)
        leave = np.stack([_random.binomial(keys.child("leave").child(np.int64(j)), by_class[..., j], self.q[j])
                          for j in range(self.types)], axis=-1)
        pool = n - leaked if self.rule == "leak" else n
        join = _random.binomial(keys.child("join"), pool, self.r)
        recruits = _split_multinomial(keys.child("classes"), join, self.weights)
        new = state - leave + recruits
        new = _cap_recruits(new, recruits, ctx.get("cap"), keys)
        return _floor_to(new, ctx.get("floor"), int(np.argmax(self.weights)))

    def mean_field_step(self, state, p, context=None):
        ctx = context or {}
        n = state.sum(axis=-1)
        p = np.asarray(p, float)
        new = state * (1.0 - self.q * p[..., None])
        total = self.r * (n * (1.0 - p) if self.rule == "leak" else n)
        recruits = total[..., None] * self.weights
        new = _mf_cap(new + recruits, recruits, ctx.get("cap"))
        return _mf_floor(new, ctx.get("floor"), self.weights)

    def mean_sensitivity(self, state):
        """The population's mean leaving probability Σ_j s_j q_j of a state (its classes' shares s_j)."""
        state = np.asarray(state, float)
        return (state * self.q).sum(axis=-1) / state.sum(axis=-1)


class BudgetAware(_Typed):
    """Users who count the privacy they spend: each leaves once her accumulated cost passes her tolerance.

    Every round a user takes part in costs her the mechanism's per-round
    privacy cost (:meth:`perfpriv.engine.Mechanism.privacy_cost`: ρ = 2R²/γ²
    of zCDP for the Gaussian mechanism, ε of local DP for randomized
    response; both compose additively over rounds). After a round, the
    users whose total cost exceeds their tolerance leave. This is the
    budget-based rule the paper chose not to use (it reacts to realized
    leaks instead). ``q`` adds the paper's reaction to leaks *on top*
    (q = 0, the default, isolates the budget rule): the two describe
    different users -- one reads privacy guarantees, the other news of a
    breach -- and a platform may face both. Users who did not leak recruit
    with probability r; recruits start with no cost. With an infinite
    tolerance this is :class:`Memoryless` (with its q).

    The state counts users by tolerance class and by the round they joined
    (cohort 0: the initial users; cohort t: recruits of round t): a cohort's
    accumulated cost is the same for all its users, so whole cohorts leave
    at once, deterministically.

    Parameters
    ----------
    tolerance : float or sequence of float
        Privacy tolerance(s) (> 0, ``inf`` allowed), in the mechanism's unit.
        A sequence is a discrete law over users, with ``weights``.
    r : float
        Recruiting probability.
    q : float
        Probability of leaving after a leak, on top of the budget rule.
    weights : sequence of float, optional
        Shares of the tolerance classes (default: equal).
    rule : {"leak", "agnostic"}

    Examples
    --------
    >>> b = BudgetAware(tolerance=2.5, r=0.0)           # leaves after paying more than 2.5
    >>> s = b.mean_field_state(100.0, (), T=4)
    >>> for t in range(1, 5):
    ...     s = b.mean_field_step(s, 0.0, {"t": t, "cost": 1.0, "floor": None, "cap": None})
    ...     print(t, round(float(b.population(s)), 1))
    1 100.0
    2 100.0
    3 0.0
    4 0.0
    """

    def __init__(self, *, tolerance, r, q=0.0, weights=None, rule="leak"):
        from ._validate import check_real
        self.tolerance = _vector("tolerance", tolerance,
                                 lambda n, v: check_real(n, v, low=0, low_open=True, allow_inf=True))
        self.weights = _weights(np.ones(self.tolerance.size) if weights is None else weights, self.tolerance.size)
        self.r = check_probability("r", r, scalar=True)
        self.q = check_probability("q", q, scalar=True)
        self.rule = check_choice("rule", rule, RULES)
        self.classes = int(self.tolerance.size)

    def __repr__(self):
        tol = self.tolerance.tolist() if self.classes > 1 else float(self.tolerance[0])
        return f"BudgetAware(tolerance={tol}, r={self.r:g}, q={self.q:g}, rule={self.rule!r})"

    # The state, shape (..., classes + 1, T + 1): rows 0..C-1 count the users of each tolerance
    # class by cohort (cohort 0: the initial users, cohort t: recruits of round t); row C holds the
    # privacy each cohort has spent so far (counts are whole numbers held exactly in floats).
    def _empty(self, batch, T):
        if T is None:
            raise ValueError("BudgetAware needs the horizon T (its state counts users by cohort)")
        return np.zeros(tuple(batch) + (self.classes + 1, int(T) + 1))

    def initial_state(self, n0, batch, T=None):
        state = self._empty(batch, T)
        state[..., :-1, 0] = _allocate(np.int64(n0), self.weights)
        return state

    def mean_field_state(self, n0, batch, T=None):
        state = self._empty(batch, T)
        state[..., :-1, 0] = float(n0) * self.weights
        return state

    def population(self, state):
        return state[..., :-1, :].sum(axis=(-1, -2))

    def spent(self, state):
        """Privacy spent so far by each cohort (row C of the state)."""
        return state[..., -1, :]

    def step(self, state, leaked, keys, context=None):
        return self._step(state, leaked, keys, context or {}, mean_field=False)

    def mean_field_step(self, state, p, context=None):
        return self._step(state, p, None, context or {}, mean_field=True)

    def _step(self, state, leaked_or_p, keys, ctx, mean_field):
        t = int(ctx.get("t", 1))
        cost = ctx.get("cost")
        if cost is None:
            raise ValueError("BudgetAware needs a mechanism that reports its privacy cost per round")
        counts = state[..., :-1, :]
        cohorts = counts.shape[-1]
        n = counts.sum(axis=(-1, -2))
        # every cohort present in round t pays its cost (users who joined after it have 0 users yet)
        spent = state[..., -1, :] + np.asarray(cost, float)[..., None] \
            * (np.arange(cohorts) < t)
        if mean_field:
            p = np.asarray(leaked_or_p, float)
            new = counts * (1.0 - self.q * p[..., None, None])
            total = self.r * (n * (1.0 - p) if self.rule == "leak" else n)
            recruits = total[..., None] * self.weights
        else:
            leaked = np.asarray(leaked_or_p, dtype=np.int64)
            flat = counts.reshape(counts.shape[:-2] + (-1,)).astype(np.int64)
            by_type = _random.multivariate_hypergeometric(keys.child("split"), flat, leaked).reshape(counts.shape)
            C, S = counts.shape[-2:]
            type_keys = keys.child("leave")[..., None, None].child(np.arange(C)[:, None] * S + np.arange(S))
            new = counts - _random.binomial(type_keys, by_type, self.q)
            pool = n.astype(np.int64) - leaked if self.rule == "leak" else n.astype(np.int64)
            join = _random.binomial(keys.child("join"), pool, self.r)
            recruits = _split_multinomial(keys.child("classes"), join, self.weights).astype(float)
        # budget: a cohort whose spending exceeds a class's tolerance loses that class
        new = np.where(spent[..., None, :] > self.tolerance[:, None], 0.0, new)
        cohort = min(t, cohorts - 1)
        rec_full = np.zeros_like(new)
        rec_full[..., cohort] = recruits
        new = new + rec_full
        shape = new.shape
        flat_new, flat_rec = new.reshape(shape[:-2] + (-1,)), rec_full.reshape(shape[:-2] + (-1,))
        cap, floor = ctx.get("cap"), ctx.get("floor")
        if mean_field:
            flat_new = _mf_cap(flat_new, flat_rec, cap)
            share = np.zeros(shape[-2:])
            share[:, cohort] = self.weights
            flat_new = _mf_floor(flat_new, floor, share.reshape(-1))
        else:
            flat_new = _cap_recruits(flat_new.astype(np.int64), flat_rec.astype(np.int64), cap, keys)
            flat_new = _floor_to(flat_new, floor, int(np.argmax(self.weights)) * shape[-1] + cohort).astype(float)
        out = np.empty(state.shape)
        out[..., :-1, :] = flat_new.reshape(shape)
        out[..., -1, :] = np.broadcast_to(spent, out[..., -1, :].shape)
        return out


class Contagion(_Typed):
    """Distrust that spreads: the leaving probability rises with last round's departures.

    In round t a leaked user leaves with probability
    q_t = min(1, q + κ · D_{t−1}/N_{t−1}), where D_{t−1} users left the
    N_{t−1} of the previous round (0 in the first round): a wave of
    departures makes the remaining users jumpier, as in an epidemic of
    distrust (the paper's §5 suggests epidemic models). Users who did not
    leak recruit with probability r. With κ = 0 this is :class:`Memoryless`.

    The state is (N, D_prev, N_prev); the population is its first entry.

    Parameters
    ----------
    q, r : float
        Baseline leaving and recruiting probabilities.
    kappa : float
        Contagion strength κ >= 0.
    rule : {"leak", "agnostic"}

    Examples
    --------
    >>> b = Contagion(q=0.2, r=0.3, kappa=2.0)
    >>> s = b.mean_field_state(100.0, ())
    >>> s = b.mean_field_step(s, 0.5, {"floor": None, "cap": None}); s.round(2).tolist()
    [105.0, 10.0, 100.0]
    >>> round(float(b.leave_probability(s)), 3)      # 0.2 + 2 x 10/100
    0.4
    """

    types = 3

    def __init__(self, *, q, r, kappa, rule="leak"):
        from ._validate import check_real
        self.q = check_probability("q", q, scalar=True)
        self.r = check_probability("r", r, scalar=True)
        self.kappa = check_real("kappa", kappa, low=0, scalar=True)
        self.rule = check_choice("rule", rule, RULES)

    def __repr__(self):
        return f"Contagion(q={self.q:g}, r={self.r:g}, kappa={self.kappa:g}, rule={self.rule!r})"

    def initial_state(self, n0, batch, T=None):
        state = np.zeros(tuple(batch) + (3,), dtype=np.int64)
        state[..., 0] = n0
        state[..., 2] = n0
        return state

    def mean_field_state(self, n0, batch, T=None):
        state = np.zeros(tuple(batch) + (3,))
        state[..., 0] = n0
        state[..., 2] = n0
        return state

    def population(self, state):
        return state[..., 0]

    def leave_probability(self, state):
        """q_t = min(1, q + κ D_{t−1}/N_{t−1}) for the round that starts in ``state``."""
        state = np.asarray(state, float)
        prev = state[..., 2]
        frac = np.where(prev > 0, state[..., 1] / np.where(prev > 0, prev, 1.0), 0.0)
        return np.minimum(1.0, self.q + self.kappa * frac)

    def step(self, state, leaked, keys, context=None):
        ctx = context or {}
        n = state[..., 0]
        qt = self.leave_probability(state)
        leave = _random.binomial(keys.child("leave"), leaked, qt)
        pool = n - leaked if self.rule == "leak" else n
        join = _random.binomial(keys.child("join"), pool, self.r)
        nxt = n - leave + join
        cap, floor = ctx.get("cap"), ctx.get("floor")
        if cap is not None:
            nxt = np.minimum(nxt, cap)
        if floor:
            nxt = np.maximum(nxt, floor)
        return np.stack([nxt, leave, n], axis=-1)

    def mean_field_step(self, state, p, context=None):
        ctx = context or {}
        n = state[..., 0]
        p = np.asarray(p, float)
        qt = self.leave_probability(state)
        leave = qt * p * n
        join = self.r * (n * (1.0 - p) if self.rule == "leak" else n)
        nxt = n - leave + join
        cap, floor = ctx.get("cap"), ctx.get("floor")
        if cap is not None:
            nxt = np.minimum(nxt, cap)
        if floor is not None:
            nxt = np.maximum(nxt, floor)
        return np.stack([nxt, leave, n], axis=-1)


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _short(x):
    arr = np.asarray(x)
    if arr.ndim == 0:
        return f"{float(arr):g}"
    return f"array{arr.shape}"
