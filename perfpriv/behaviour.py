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

__all__ = ["Behaviour", "Memoryless", "RULES"]

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

    # --------------------------------------------------------- simulation
    def initial_state(self, n0: int, batch: tuple) -> np.ndarray:
        """The state of a population of ``n0`` users, for a batch of that shape."""
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
    def mean_field_state(self, n0: float, batch: tuple) -> np.ndarray:
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
        leave = _random.binomial(keys.child("leave"), leaked, q)
        pool = n - leaked if self.rule == "leak" else n
        join = _random.binomial(keys.child("join"), pool, r)
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


def _out(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _short(x):
    arr = np.asarray(x)
    if arr.ndim == 0:
        return f"{float(arr):g}"
    return f"array{arr.shape}"
