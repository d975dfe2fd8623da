"""How users react to a round: who leaves after a leak, who brings someone new.

A *behaviour* is the second ingredient of the loop of :mod:`perfpriv.engine`:
from a round's population and its number of leaked users it makes the next
round's population, in simulation (random departures and recruits from the
round's keyed streams) and in the mean field (the same rule on expectations).

The paper's users are :class:`Memoryless`; :class:`LeakCount`,
:class:`Heterogeneous`, :class:`BudgetAware` and :class:`Contagion` keep a
small state per user *type* (the layout of :class:`Behaviour`).

At a constant leak probability p each behaviour has a long-run growth factor
(:meth:`Behaviour.growth_factor`); for users who act independently (all but
:class:`Contagion`) it exceeds 1 if and only if the reproduction number
R₀ = ρ(p) · S(p) does (Euler-Lotka; :meth:`Behaviour.reproduction_number`,
:meth:`Behaviour.critical_leak_probability`).

Symbols: ``q`` — probability that a leaked user leaves; ``r`` — probability
that a user recruits one new user (a non-leaked user under ``rule="leak"``,
every user under ``rule="agnostic"``); ``p`` — probability that a user
leaks in a round; ``cost`` — the privacy a round costs each participant
(:meth:`perfpriv.engine.Mechanism.privacy_cost`).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np

from . import keyed
from ._stats import float_or_array as _out
from ._kernels import behaviours as _behaviours
from ._validate import (check_array_size, check_choice, check_int, check_int_array, check_order, check_population,
                        check_probability, check_real, check_same_shape, check_shape)

__all__ = ["Behaviour", "Memoryless", "LeakCount", "Heterogeneous", "BudgetAware", "Contagion", "RULES",
           "AgentModel"]

#: The paper's growth rules: §3 and Algorithm 1 ("leak"), appendix B ("agnostic").
RULES = ("leak", "agnostic")


def _pack(shape, *columns):
    """The compiled step's parameters: columns broadcast to ``shape`` (``(values, width)``: with a trailing
    axis), side by side, flattened to ``(cells, Q)``."""
    parts = []
    for col in columns:
        if isinstance(col, tuple):
            values, width = col
            parts.append(np.broadcast_to(np.asarray(values, float), tuple(shape) + (width,)))
        else:
            parts.append(np.broadcast_to(np.asarray(col, float), tuple(shape))[..., None])
    out = np.concatenate(parts, axis=-1) if parts else np.zeros(tuple(shape) + (0,))
    return np.ascontiguousarray(out, dtype=np.float64).reshape(-1, out.shape[-1])


def _purposes(kind):
    """The two hashes of each stream purpose of a compiled behaviour kind (a writable uint64 array)."""
    return np.array([keyed.purpose_hashes(name) for name in _behaviours.PURPOSES[kind]],
                    dtype=np.uint64).reshape(-1, 2)


def _at(x, shape, ndim, tail=()):
    """Parameter ``x`` of cell shape ``shape`` (+ ``tail``), with unit axes for a batch of ``ndim`` axes
    (``cells + levels + trials``: a cell parameter lines up with the leading axes)."""
    shape, tail = tuple(shape), tuple(tail)
    arr = np.broadcast_to(np.asarray(x, float), shape + tail)
    return arr.reshape(shape + (1,) * (ndim - len(shape)) + tail)


def _check_p(p):
    """A leak probability ``p`` (number or array) as floats, refused by name outside [0, 1]."""
    if isinstance(p, (np.ndarray, np.floating, float)):
        arr = np.asarray(p, dtype=float)
        if arr.dtype.kind == "f" and bool(((arr >= 0.0) & (arr <= 1.0)).all()):
            return arr
    return np.asarray(check_probability("p", p), dtype=float)


def _check_bounds(floor, cap):
    """Check a population floor and cap (each ``None`` or a number >= 0, the cap possibly inf, floor <= cap)."""
    def plain(x):
        return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and x >= 0

    if (floor is None or plain(floor)) and (cap is None or plain(cap)) and (floor is None or cap is None or floor <= cap):
        return                          # the engine's own values, every round: a few comparisons
    if floor is not None:
        floor = check_real("floor", floor, low=0, scalar=True)
    if cap is not None:
        cap = check_real("cap", cap, low=0, allow_inf=True, scalar=True)
    if floor is not None and cap is not None:
        check_order("floor", floor, "cap", cap)


def _check_start(n0, batch, types, *, mean_field=False):
    """``(n0, batch)`` of ``initial_state`` (n0 whole >= 0) or ``mean_field_state`` (real, inf too)."""
    if mean_field:
        n0 = check_real("n0", n0, low=0, allow_inf=True, scalar=True)
    else:
        n0 = check_int("n0", n0, low=0)
    return n0, check_shape("batch", batch, trailing=types)


def _check_context(context):
    """A round's context (``t`` >= 1, ``cost`` None or >= 0, ``cap``, ``floor``) checked; ``{}`` for None."""
    if context is None:
        return {}
    if not hasattr(context, "get") or not hasattr(context, "keys"):
        raise TypeError(f"context must be None or a mapping of t, cost, cap and floor; got {type(context).__name__}")
    t = context.get("t", 1)
    if not (isinstance(t, (int, np.integer)) and not isinstance(t, bool) and t >= 1):
        check_int("t", t, low=1)
    cost = context.get("cost")
    if cost is not None and not (isinstance(cost, (float, np.floating)) and cost >= 0):
        check_real("cost", cost, low=0, allow_inf=True)
    _check_bounds(context.get("floor"), context.get("cap"))
    return context


@dataclass(frozen=True)
class AgentModel:
    r"""A behaviour's users one at a time: what :func:`perfpriv.engine.simulate_agents` reads.

    Every user has a class c, a leak count and the privacy she has spent. From her k-th leak on, a
    leaked user leaves with probability :math:`\min(1, q_c + κ\,δ)` (δ: last round's share of leak
    departures); a user whose spending exceeds :math:`\mathrm{tolerance}_c` (``None``: users do not
    count privacy) leaves; users recruit with probability r under ``rule``, and start in the classes of
    ``weights``.

    Examples
    --------
    >>> m = Heterogeneous(q=[0.9, 0.1], weights=[0.7, 0.3], r=0.3).agent_model()
    >>> m.initial_classes(5)                # 3.5 and 1.5 users: the largest remainders
    [0, 0, 0, 0, 1]
    """

    q: tuple
    weights: tuple
    r: float
    rule: str = "leak"
    k: int = 1
    tolerance: tuple | None = None
    kappa: float = 0.0

    @property
    def counts_cost(self) -> bool:
        """Whether the users count the privacy they spend (a finite tolerance)."""
        return self.tolerance is not None

    def initial_classes(self, n0):
        """The class of each of ``n0`` initial users (largest-remainder split over ``weights``)."""
        n0 = check_int("n0", n0, low=0)
        counts = _allocate(np.int64(n0), np.asarray(self.weights, float))
        return [c for c, count in enumerate(counts.tolist()) for _ in range(count)]

    def recruit_class(self, rng):
        """The class of a new user, drawn from ``weights`` with the Generator ``rng``."""
        if len(self.weights) == 1:
            return 0
        return int(rng.choice(len(self.weights), p=self.weights))


def _bound_first_type(state, n, floor, cap):
    """``state`` with its first type's count moved (removed at most to 0) so that the population ``n`` is in
    [floor, cap] (``floor=None``: none); with one type ``clip(n, floor, cap)``."""
    if state.shape[-1] == 1:
        n = state[..., 0]
        if cap is not None:
            n = np.minimum(n, cap)
        if floor is not None:
            n = np.maximum(n, floor)
        return n[..., None]
    first = state[..., 0]
    removed = 0 if cap is None else np.minimum(np.maximum(n - cap, 0), first)
    added = 0 if floor is None else np.maximum(floor - (n - removed), 0)
    out = np.array(state, dtype=np.result_type(state, removed, added))
    out[..., 0] = first - removed + added
    return out


class Behaviour:
    """Base class of user behaviours (the interface :mod:`perfpriv.engine` uses).

    A simulation state is an ``int64`` array of shape ``batch + (types,)``
    (:class:`BudgetAware`: floats holding whole numbers), a mean-field state a
    float array of the same layout. Subclasses implement :meth:`kernel_step`
    (a compiled step of :mod:`perfpriv._kernels.behaviours`), :meth:`mean_field_step`
    (and :meth:`mean_field_step_grad` for schedule gradients) and :meth:`expected_stay`;
    they override :meth:`growth_factor` and :meth:`critical_leak_probability`
    where a closed form is known or the defaults do not hold. The methods of a
    subclass document only what they add to the contract here.
    """

    #: number of user types the state counts (None: it depends on the horizon)
    types = 1
    #: whether the behaviour needs the mechanism's per-round privacy cost
    uses_cost = False
    #: who recruits (see :data:`RULES`)
    rule = "leak"

    @property
    def shape(self) -> tuple:
        """Shape of the behaviour's parameters (a batch of cells when they are arrays; ``_shape`` if set)."""
        return getattr(self, "_shape", ())

    def cell_coordinates(self) -> tuple:
        """The values that identify each cell (arrays of :attr:`shape`): the engine keys a cell's
        random numbers by them, so that a cell's numbers do not depend on its neighbours."""
        return ()

    #: The constructor's arguments that hold one value per cell (read by :meth:`take`), each with the
    #: number of its trailing axes that are not cells (:class:`Heterogeneous`'s ``q``: one, its classes).
    cell_parameters: dict = {}

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        obj._given = (args, kwargs)      # the constructor's arguments as given (for take)
        return obj

    def take(self, index):
        """The behaviour of some of the cells: those at the flat positions ``index`` of :attr:`shape`.

        ``index`` holds at least one position in ``[0, prod(shape))`` of the cells flattened in C order.
        The arguments named in :attr:`cell_parameters` are broadcast to the cells and indexed, the others
        passed on as given (the part's numbers are the whole's, bit for bit): a behaviour of the same
        class with cells ``(len(index),)`` (one cell and no :attr:`cell_parameters`: itself). The
        searches of :mod:`perfpriv.optimize` run a heatmap's cells in batches this way.

        Examples
        --------
        >>> users = Memoryless(q=[[0.1, 0.2], [0.3, 0.4]], r=0.6)
        >>> part = users.take([3, 0])
        >>> part.q.tolist(), part.r.tolist(), part.shape
        ([0.4, 0.1], [0.6, 0.6], (2,))
        """
        shape = tuple(self.shape)
        size = math.prod(shape)
        try:
            idx = np.asarray(index)
            ok = idx.ndim == 1 and idx.size > 0 and idx.dtype.kind in "iu"
        except (TypeError, ValueError):
            ok = False
        if not ok or (idx.size and (idx.min() < 0 or idx.max() >= size)):
            raise ValueError(f"index must be a non-empty 1-D sequence of cell positions in [0, {size}); "
                             f"got {index!r:.80}")
        if not self.cell_parameters:
            if shape == ():
                return self
            raise TypeError(f"{type(self).__name__} has cells of shape {shape} but declares no cell_parameters "
                            "(the constructor's arguments that hold one value per cell)")
        given_args, given_kwargs = self._given
        bound = inspect.signature(type(self).__init__).bind(self, *given_args, **given_kwargs)
        bound.apply_defaults()
        args = {n: v for n, v in bound.arguments.items() if n != "self"}
        for name, tail in self.cell_parameters.items():
            value = np.asarray(args[name])
            trailing = value.shape[value.ndim - tail:] if tail else ()
            args[name] = np.broadcast_to(value, shape + trailing).reshape((size,) + trailing)[idx]
        return type(self)(**args)

    # --------------------------------------------------------- simulation
    def initial_state(self, n0: int, batch: tuple, T: int | None = None) -> np.ndarray:
        """The state of a population of ``n0`` users, for a batch of that shape (horizon ``T``)."""
        n0, batch = _check_start(n0, batch, self.types)
        state = np.zeros(tuple(batch) + (self.types,), dtype=np.int64)
        state[..., 0] = n0
        return state

    def population(self, state) -> np.ndarray:
        """Number of users of a state (sum over types)."""
        return self._check_state(state).sum(axis=-1)

    def remaining(self, state) -> np.ndarray:
        """Users of a state who may still take part: what the population policy's ``stop`` reads.

        By default the population. A behaviour whose users can be away and come back (appendix B's
        returning users) counts them too, and overriding this makes the engine run it round by round
        in Python (its compiled loop reads the population).
        """
        return self.population(state)

    def _per_run_rows(self):
        """Length of the first axis of one run's state (the types; :class:`BudgetAware`: classes + 1)."""
        return self.types

    def _check_state(self, state):
        """A state of this behaviour, checked by name: a numeric array of counts in [0, inf] whose trailing
        :attr:`_state_axes` axes are one run's state (the first of length :meth:`_per_run_rows`)."""
        rows, axes = self._per_run_rows(), self._state_axes
        if isinstance(state, np.ndarray) and state.dtype.kind in "fiu" and state.ndim >= axes \
                and state.shape[state.ndim - axes] == rows and bool((state >= 0).all()):
            return state
        if not isinstance(state, np.ndarray) or state.dtype.kind not in "fiu":
            raise TypeError(f"state must be a numeric array of {type(self).__name__}'s states (initial_state, "
                            f"mean_field_state); got {type(state).__name__}")
        if state.ndim < axes or state.shape[state.ndim - axes] != rows:
            raise ValueError(f"state must end with one run's {type(self).__name__} state (its last {axes} axes, "
                             f"the first of length {rows}); got shape {state.shape}")
        raise ValueError("state must hold counts in [0, inf] (no NaN, nothing negative)")

    #: number of trailing axes of one run's simulation state (:class:`BudgetAware`: 2, classes x cohorts)
    _state_axes = 1

    def step(self, state, leaked, keys, context=None):
        """Next state after one round's departures and recruits: :meth:`kernel_step` on every element.

        ``state`` (:meth:`initial_state`), ``leaked`` and the round's ``keys`` broadcast together; the
        engine's ``context`` (:mod:`perfpriv.engine`) gives ``t`` (default 1), ``cost``, and ``cap`` and
        ``floor`` (default: none; applied inside the step). Returns states of the state's dtype.
        """
        compiled = self.kernel_step()
        if compiled is None:  # pragma: no cover - every behaviour of perfpriv has a compiled step
            raise NotImplementedError(f"{type(self).__name__} has no compiled step (kernel_step)")
        kind, params = compiled
        ctx = _check_context(context)
        state = self._check_state(state)
        axes = self._state_axes
        per_run = state.shape[state.ndim - axes:]
        leaked = check_int_array("leaked", leaked, low=0)
        if not isinstance(keys, keyed.Key):
            raise TypeError(f"keys must be a perfpriv.keyed.Key (the round keys); got {type(keys).__name__}")
        if np.any(leaked > self.population(state)):
            raise ValueError("leaked must be at most the population of each element of the batch (the users who "
                             "took part in the round)")
        batch = np.broadcast_shapes(state.shape[:state.ndim - axes], leaked.shape, keys.shape)
        cells, q = tuple(self.shape), params.shape[-1]
        if len(batch) < len(cells) or batch[:len(cells)] != np.broadcast_shapes(batch[:len(cells)], cells):
            raise ValueError(f"the batch {batch} must start with the behaviour's cell shape {cells}")
        size = int(np.prod(batch, dtype=np.int64))
        cell_params = _at(params.reshape(cells + (q,)), cells, len(batch), (q,))
        flat_params = np.ascontiguousarray(np.broadcast_to(cell_params, batch + (q,)), dtype=np.float64).reshape(size, q)
        flat_state = np.array(np.broadcast_to(state, batch + per_run), dtype=np.float64, order="C").reshape(size, -1)
        cost = ctx.get("cost")
        if cost is None:
            if self.uses_cost:
                raise ValueError(f"{type(self).__name__} needs a mechanism that reports its privacy cost per round")
            cost = 0.0
        flat = lambda x, dtype: np.ascontiguousarray(np.broadcast_to(np.asarray(x, dtype), batch),  # noqa: E731
                                                     dtype=dtype).reshape(size)
        cap, floor = ctx.get("cap"), ctx.get("floor")
        population = np.empty(size, dtype=np.int64)
        _behaviours.step_batch(kind, flat_params, flat_state, flat(leaked, np.int64), flat(keys.a, np.uint64),
                               flat(keys.b, np.uint64), _purposes(kind), int(ctx.get("t", 1)),
                               flat(cost, np.float64), -1 if cap is None or cap == np.inf else int(cap), int(floor or 0), population)
        return flat_state.reshape(batch + per_run).astype(state.dtype)

    def bound(self, state, floor, cap, keys=None):
        """Apply the population floor and cap to a state, through its first type.

        The excess over ``cap`` is turned away from the first type's count (the newest users; never
        below 0), and a population below ``floor`` (0: no floor) regains fresh users in the first type.
        """
        _check_bounds(floor, cap)
        return _bound_first_type(state, self.population(state), floor if floor else None, cap)

    def agent_model(self) -> AgentModel:
        """The users of this behaviour one at a time, for :func:`perfpriv.engine.simulate_agents`.

        Read from the parameters of this module's behaviours (``q``, ``r``, ``rule``, ``weights``, ``k``,
        ``tolerance``, ``kappa``), for one cell; a behaviour of another kind overrides it.
        """
        if type(self).__module__ != __name__:
            raise NotImplementedError(f"{type(self).__name__} has no agent_model: the agent-by-agent reference "
                                      "cannot run it")
        if tuple(self.shape) != ():
            raise ValueError(f"behaviour must have scalar parameters (one cell) for the agent-by-agent reference; "
                             f"{type(self).__name__} has cells of shape {tuple(self.shape)}")
        weights = tuple(float(w) for w in getattr(self, "weights", (1.0,)))
        q = np.broadcast_to(np.asarray(self.q, float).reshape(-1), (len(weights),))
        tolerance = getattr(self, "tolerance", None)
        return AgentModel(q=tuple(q.tolist()), weights=weights, r=float(self.r), rule=self.rule,
                          k=getattr(self, "k", 1), kappa=float(getattr(self, "kappa", 0.0)),
                          tolerance=None if tolerance is None else tuple(tolerance.tolist()))

    def kernel_step(self):
        """The compiled step, ``(kind, params)``, or ``None`` (a behaviour without one cannot be simulated).

        ``kind`` selects the step of :func:`perfpriv._kernels.behaviours.behaviour_step`; ``params``, floats
        of shape ``(cells, Q)``, holds every cell's parameters (cells in C order). The step reads one
        run's state as :meth:`initial_state` lays it out, flattened.
        """
        return None

    # --------------------------------------------------------- mean field
    def mean_field_state(self, n0: float, batch: tuple, T: int | None = None) -> np.ndarray:
        """Mean-field state of ``n0`` users."""
        n0, batch = _check_start(n0, batch, self.types, mean_field=True)
        state = np.zeros(tuple(batch) + (self.types,))
        state[..., 0] = n0
        return state

    def mean_field_step(self, state, p, context=None):  # pragma: no cover - interface
        """Expected next state given the leak probability ``p`` of every user."""
        raise NotImplementedError

    def mean_field_bound(self, state, floor, cap):
        """Floor and cap of a mean-field state, through its first type as :meth:`bound` (``floor=None``: no floor)."""
        _check_bounds(floor, cap)
        return _bound_first_type(state, self.population(state), floor, cap)

    def mean_field_step_grad(self, n, p):  # pragma: no cover - interface
        """Derivatives of a one-type step: (d n'/d n at fixed p, d n'/d p)."""
        raise NotImplementedError(f"{type(self).__name__} has no mean-field gradient "
                                  "(schedule optimization needs a one-type behaviour)")

    # --------------------------------------------------------- theory
    def recruit_rate(self, p):
        """ρ(p): expected recruits per user and round, r(1 − p) (leak rule) or r (agnostic rule).

        ``p`` broadcasts against the behaviour's cell parameters as numpy arrays do.
        """
        _check_p(p)
        p = np.asarray(p, float)
        r = np.asarray(self.r, float)
        return _out(r * (1.0 - p) if self.rule == "leak" else r + 0.0 * p)

    def expected_stay(self, p, cost=None):  # pragma: no cover - interface
        """Expected number of rounds a new user takes part in, when every round leaks her with probability p."""
        raise NotImplementedError

    def reproduction_number(self, p, cost=None):
        """R₀ = ρ(p) · S(p): the recruits a new user brings over her whole stay (module docstring).

        ``inf`` when users never leave and recruit.
        """
        _check_p(p)
        rho = np.asarray(self.recruit_rate(p), float)
        stay = np.asarray(self.expected_stay(p, cost), float)
        with np.errstate(invalid="ignore"):
            return _out(np.where(rho == 0, 0.0, rho * stay))

    def growth_factor(self, p, cost=None):
        """Long-run growth factor of the mean field per round at a constant leak probability ``p``.

        The default: a round without cap or floor maps the counts per type :math:`x` to :math:`A(p) x`
        (read from :meth:`mean_field_step`, one unit state per type), so the population grows by the
        Perron root of the nonnegative :math:`A(p)`. ``p`` in [0, 1] broadcasts against the cells
        (``cost``: module docstring). Returns a float or an array of the cells' shape broadcast with ``p``.
        """
        _check_p(p)
        if self.types is None:
            raise ValueError(f"{type(self).__name__} has no fixed number of user types: the default "
                             "growth_factor (the Perron root of the mean-field step) needs one; override it")
        p = np.asarray(p, float)
        batch = np.broadcast_shapes(tuple(self.shape), p.shape)
        types = int(self.types)
        p_batch = np.broadcast_to(p, batch)
        context = {"cost": cost, "floor": None, "cap": None}
        columns = []
        for j in range(types):
            unit = np.zeros(batch + (types,))
            unit[..., j] = 1.0
            columns.append(np.asarray(self.mean_field_step(unit, p_batch, context), float))
        root, _ = _perron(np.stack(columns, axis=-1))               # A[..., i, j]: type j's users -> type i
        return _out(root)

    #: Bisection steps of the default :meth:`critical_leak_probability` (an interval of :math:`2^{-60}`).
    CRITICAL_BISECTIONS = 60

    def critical_leak_probability(self, cost=None):
        r""":math:`p_c`: the population does not shrink in the long run if and only if :math:`p \le p_c`.

        The default bisects where :meth:`growth_factor` (at ``cost``) crosses 1, for every cell at once
        (:attr:`CRITICAL_BISECTIONS` steps): 1 if it never falls below 1, 0 if it is below 1 at
        ``p = 0``. It assumes a growth factor that does not increase with ``p``, as for the library's
        behaviours. Returns a float or an array of the cells' shape.
        """
        def grows(p):
            return np.asarray(self.growth_factor(p, cost), float) >= 1.0

        cells = tuple(self.shape)
        lo, hi = np.zeros(cells), np.ones(cells)
        never = grows(hi)                                             # p_c = 1
        for _ in range(self.CRITICAL_BISECTIONS):
            mid = 0.5 * (lo + hi)
            up = grows(mid)
            lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
        pc = np.where(never, 1.0, np.where(grows(np.zeros(cells)), lo, 0.0))
        return _out(pc)

    def _leak_rule(self):
        """1.0 under the leak rule (only users who did not leak recruit), 0.0 under the agnostic rule."""
        return 1.0 if self.rule == "leak" else 0.0

    def _needs_cost(self, cost):
        if cost is None:
            raise ValueError(f"{type(self).__name__} needs the per-round privacy cost (cost=...): "
                             "its users leave once their accumulated cost passes their tolerance")
        return np.asarray(check_real("cost", cost, low=0, allow_inf=True), float)


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
    factor is E[N'] / N = 1 + r − (q + r) p (leak; eq. 3-4 and Lemma 8's
    eq. 12) or 1 + r − q p (agnostic).

    Parameters
    ----------
    q, r : float or array_like
        Leaving probability of a leaked user and recruiting probability, in [0, 1]; arrays
        broadcast to a batch of cells (one engine call simulates them all).
    rule : {"leak", "agnostic"}
        Who recruits.

    Examples
    --------
    >>> b = Memoryless(q=0.3, r=0.6)
    >>> round(float(b.growth_factor(0.25)), 4)      # 1 + r - (q + r) p
    1.375
    >>> Memoryless(q=0.3, r=0.6, rule="agnostic").growth_factor(1.0)
    1.3
    >>> round(float(b.critical_leak_probability()), 4)      # r / (q + r): Theorem 1 as a leak probability
    0.6667
    """

    cell_parameters = {"q": 0, "r": 0}

    def __init__(self, *, q, r, rule: str = "leak"):
        self.q = check_probability("q", q)
        self.r = check_probability("r", r)
        self.rule = check_choice("rule", rule, RULES)
        self._shape = check_same_shape(q=self.q, r=self.r)

    def __repr__(self) -> str:
        return f"Memoryless(q={_short(self.q)}, r={_short(self.r)}, rule={self.rule!r})"

    def cell_coordinates(self) -> tuple:
        return (np.broadcast_to(self.q, self._shape), np.broadcast_to(self.r, self._shape))

    def grid_axes(self) -> tuple:
        """The axes ``(qs, rs)`` of users whose cells form a (q, r) grid.

        A grid is ``Memoryless(q=qs[:, None], r=rs[None, :])`` (or any q and r
        that broadcast to it): q varies along the first cell axis only, r
        along the second only. One cell is a 1 x 1 grid. The ε* and γ* maps
        are searched over such users and drawn on these axes.

        Returns
        -------
        qs, rs : numpy.ndarray
            1-D, of lengths ``shape[0]`` and ``shape[1]``.

        Raises
        ------
        ValueError
            If the cells are not such a grid (naming ``users`` and the cells' shape).

        Examples
        --------
        >>> qs, rs = Memoryless(q=[[0.1], [0.5]], r=[[0.2, 0.4, 0.6]]).grid_axes()
        >>> qs.tolist(), rs.tolist()
        ([0.1, 0.5], [0.2, 0.4, 0.6])
        """
        Q, R = (np.asarray(x, float) for x in self.cell_coordinates())
        if Q.ndim == 0:
            Q, R = Q.reshape(1, 1), R.reshape(1, 1)
        if Q.ndim != 2 or np.any(Q != Q[:, :1]) or np.any(R != R[:1, :]):
            raise ValueError(f"users must span a (q, r) grid: q varying along the first axis only, r along the "
                             f"second (Memoryless(q=qs[:, None], r=rs[None, :])); got cells of shape {Q.shape}")
        return Q[:, 0].copy(), R[0, :].copy()

    def _qr(self, ndim):
        """q and r with trailing axes for a batch of ``ndim`` axes after the cell axes."""
        return _at(self.q, self._shape, ndim), _at(self.r, self._shape, ndim)

    def growth_factor(self, p, cost=None):
        """:math:`1 + r - (q + r) p` (leak rule, eq. 3 / eq. 12) or :math:`1 + r - q p` (agnostic, app. B).

        Without memory the long-run factor is the one-round factor E[N']/N (computed as one plus the
        excess, so that nothing cancels).
        """
        _check_p(p)
        return _out(self._growth(np.asarray(p, float), np.asarray(self.q, float), np.asarray(self.r, float)))

    def _growth(self, p, q, r):
        """The one place of the growth formula (leak: eq. 3 and eq. 12; agnostic: appendix B)."""
        excess = r - (q + r) * p if self.rule == "leak" else r - q * p
        return 1.0 + excess

    def expected_stay(self, p, cost=None):
        """1/(q p): a user leaves at each round with probability q p (``inf`` if q p = 0)."""
        _check_p(p)
        qp = np.asarray(self.q, float) * np.asarray(p, float)
        with np.errstate(divide="ignore"):
            return _out(np.where(qp > 0, 1.0 / np.where(qp > 0, qp, 1.0), np.inf))

    def critical_leak_probability(self, cost=None):
        """:math:`p_c = r/(q + r)` (leak rule; Theorem 1 as a leak probability) or min(1, r/q) (agnostic).

        1 when users never leave (q = 0): any leak probability keeps them.
        """
        q, r = np.broadcast_arrays(np.asarray(self.q, float), np.asarray(self.r, float))
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.rule == "leak":
                pc = np.where(q > 0, r / np.where(q + r > 0, q + r, 1.0), 1.0)
            else:
                pc = np.where(q > 0, np.minimum(1.0, r / np.where(q > 0, q, 1.0)), 1.0)
        return _out(pc)

    # --------------------------------------------------------- simulation
    def kernel_step(self):
        """:func:`perfpriv._kernels.behaviours.memoryless_step`, with ``(q, r, leak rule)`` per cell."""
        return _behaviours.MEMORYLESS, _pack(self._shape, self.q, self.r, self._leak_rule())

    # --------------------------------------------------------- mean field
    def mean_field_step(self, state, p, context=None):
        state = self._check_state(state)
        _check_context(context)
        n = state[..., 0]
        q, r = self._qr(n.ndim)
        with np.errstate(over="ignore"):  # an uncapped population may grow past the double range: inf
            return (n * self._growth(_check_p(p), q, r))[..., None]

    def mean_field_step_grad(self, n, p):
        check_population("n", n)
        _check_p(p)
        q, r = self._qr(np.ndim(n))
        dn = self._growth(np.asarray(p, float), q, r)
        dp = -(q + r) * n if self.rule == "leak" else -q * n
        return dn, dp


# ---------------------------------------------------------------- richer users
def _weights(weights, size, name="weights"):
    w = np.atleast_1d(np.asarray(check_real(name, weights, low=0), dtype=float))
    if w.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence (one share per class); got shape {w.shape}")
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


def _perron(A):
    """Perron root and its eigenvector (normalized to sum 1) of nonnegative matrices ``A[..., i, j]``."""
    vals, vecs = np.linalg.eig(A)
    k = np.argmax(vals.real, axis=-1)
    lam = np.take_along_axis(vals.real, k[..., None], axis=-1)[..., 0]
    vec = np.abs(np.take_along_axis(vecs.real, k[..., None, None], axis=-1)[..., 0])
    return lam, vec / vec.sum(axis=-1, keepdims=True)


class _Typed(Behaviour):
    """Behaviours whose state counts users of several types (bounded by their own step)."""

    def bound(self, state, floor, cap, keys=None):
        """The state unchanged: the floor and cap act inside the step, on the types' counts."""
        _check_bounds(floor, cap)
        return state

    def mean_field_bound(self, state, floor, cap):
        """The state unchanged: the floor and cap act inside the mean-field step."""
        _check_bounds(floor, cap)
        return state


class LeakCount(_Typed):
    """Users with memory: a user tolerates k − 1 leaks, and leaves with probability q at each later one.

    Recruits start with no leak and recruit as in :class:`Memoryless`, which
    k = 1 reproduces number for number from the same seed. The state counts
    users by their past leaks, capped at k − 1; a round's K leaks fall on a
    uniformly random set of K users (leaks are exchangeable), split across
    types by a multivariate hypergeometric law.

    Mean field: with leak probability p, type c moves :math:`p n_c` users to type
    c + 1 (c < k − 1); type k − 1 loses :math:`q p n_{k-1}`; recruits r(1 − p)N
    (or rN) join type 0. A user leaves after k − 1 + G leaks, G geometric
    with mean 1/q, so she stays (k − 1 + 1/q)/p rounds on average.

    Parameters
    ----------
    k : int
        The leak at which users start reacting, k >= 1.
    q, r, rule
        As in :class:`Memoryless` (arrays of q and r: cells).

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
    >>> round(float(b.critical_leak_probability()), 4)   # r m / (1 + r m), m = k - 1 + 1/q = 3
    0.4737
    """

    cell_parameters = {"q": 0, "r": 0}

    def __init__(self, *, k, q, r, rule="leak"):
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

    def kernel_step(self):
        """:func:`perfpriv._kernels.behaviours.leak_count_step`, with ``(q, r, leak rule, k)`` per cell."""
        return _behaviours.LEAK_COUNT, _pack(self.shape, self.q, self.r, self._leak_rule(), self.k)

    def mean_field_step(self, state, p, context=None):
        state = self._check_state(state)
        ctx = _check_context(context)
        n = state.sum(axis=-1)
        p = _check_p(p)
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

    # --------------------------------------------------------- theory
    def _lifetime_leaks(self):
        """m = k − 1 + 1/q: the expected number of leaks a user lives through (``inf`` if q = 0)."""
        q = np.asarray(self.q, float)
        with np.errstate(divide="ignore"):
            return np.where(q > 0, (self.k - 1) + 1.0 / np.where(q > 0, q, 1.0), np.inf)

    def effective_q(self):
        """q/(1 + (k − 1) q) = 1/m: the paper's q with the same survival threshold as these users."""
        q = np.asarray(self.q, float)
        return _out(q / (1.0 + (self.k - 1) * q))

    def expected_stay(self, p, cost=None):
        """m/p rounds, m = k − 1 + 1/q (``inf`` if q p = 0)."""
        _check_p(p)
        m = self._lifetime_leaks()
        p = np.asarray(p, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _out(np.where((p > 0) & np.isfinite(m), m / np.where(p > 0, p, 1.0), np.inf))

    def _matrix(self, p):
        """The mean-field recursion n' = A n at a constant p (no cap, no floor): shape ... + (k, k)."""
        p, q, r = np.broadcast_arrays(np.asarray(p, float), np.asarray(self.q, float), np.asarray(self.r, float))
        k = self.k
        A = np.zeros(p.shape + (k, k))
        for c in range(k - 1):
            A[..., c, c] += 1.0 - p
            A[..., c + 1, c] += p
        A[..., k - 1, k - 1] += 1.0 - q * p
        A[..., 0, :] += (r * (1.0 - p) if self.rule == "leak" else r)[..., None]
        return A

    def growth_factor(self, p, cost=None):
        """Long-run growth factor at leak probability p: the Perron root λ of the k-type recursion.

        :math:`λ = 1 + ρ(p) - q p s_{k-1}`: the paper's factor with q scaled by the share
        :math:`s_{k-1}` of users who react (:meth:`reactive_share`).
        """
        _check_p(p)
        if self.k == 1:
            return self._memoryless.growth_factor(p)
        return _out(_perron(self._matrix(p))[0])

    def reactive_share(self, p):
        """Long-run share :math:`s_{k-1}` of users with k − 1 or more past leaks (the ones who react)."""
        _check_p(p)
        if self.k == 1:
            return _out(np.ones(np.broadcast_shapes(np.shape(p), self.shape)))
        return _out(_perron(self._matrix(p))[1][..., -1])

    def critical_leak_probability(self, cost=None):
        """:math:`p_c = r m/(1 + r m)` (leak rule) or min(1, r m) (agnostic), m = k − 1 + 1/q.

        The paper's threshold r/(q + r) with q replaced by 1/m (:meth:`effective_q`).
        """
        m = self._lifetime_leaks()
        r = np.asarray(self.r, float)
        m, r = np.broadcast_arrays(m, r)
        finite = np.isfinite(m)
        rm = np.where(finite, r * np.where(finite, m, 0.0), 0.0)
        pc = rm / (1.0 + rm) if self.rule == "leak" else np.minimum(1.0, rm)
        return _out(np.where(finite, pc, 1.0))


class Heterogeneous(_Typed):
    """Classes of users with different sensitivities: class j leaves after a leak with probability :math:`q_j`.

    The initial users (by largest remainder) and the recruits (drawn) split
    over S classes with shares ``weights``; users recruit as in :class:`Memoryless`,
    which one class reproduces number for number. Thin-skinned users leave
    faster, so the mix drifts toward the thick-skinned classes.

    Mean field: :math:`n_j' = n_j (1 - q_j p) + w_j r (1 - p) N` (leak rule), so
    the growth factor of a mix with shares :math:`s_j` is :math:`1 + r - (Σ_j s_j q_j + r) p`:
    the paper's formula with q replaced by the population's mean
    sensitivity (:meth:`mean_sensitivity`), which falls as the mix drifts.

    Parameters
    ----------
    q : array_like, shape (S,) or cells + (S,)
        Leaving probability of each class, in [0, 1]; the last axis runs
        over the classes, leading axes (if any) over cells.
    weights : sequence of float
        Shares of the classes (normalized to sum to 1).
    r, rule
        As in :class:`Memoryless` (an array of r: cells).

    Examples
    --------
    >>> b = Heterogeneous(q=[0.9, 0.1], weights=[0.5, 0.5], r=0.3)
    >>> s = b.mean_field_state(100.0, ())
    >>> b.mean_field_step(s, 0.5, {"floor": None, "cap": None}).round(2).tolist()
    [35.0, 55.0]
    >>> round(float(b.effective_q()), 4)       # weighted harmonic mean of the q_j: 1 / (0.5/0.9 + 0.5/0.1)
    0.18
    """

    cell_parameters = {"q": 1, "r": 0}

    def __init__(self, *, q, weights, r, rule="leak"):
        q = np.atleast_1d(np.asarray(check_probability("q", q), dtype=float))
        self.q = q
        self.weights = _weights(weights, q.shape[-1])
        self.r = check_probability("r", r)
        self.rule = check_choice("rule", rule, RULES)
        self.types = int(q.shape[-1])
        self._shape = check_same_shape(**{"q (its cell axes)": q[..., 0], "r": self.r})

    def __repr__(self):
        q = np.round(self.q, 4).tolist() if self.q.ndim == 1 else f"array{self.q.shape}"
        return (f"Heterogeneous(q={q}, weights={np.round(self.weights, 4).tolist()}, "
                f"r={_short(self.r)}, rule={self.rule!r})")

    def _params(self, ndim):
        """Class sensitivities (… + (S,)) and r, with unit axes for a batch of ``ndim`` axes."""
        return _at(self.q, self._shape, ndim, (self.types,)), _at(self.r, self._shape, ndim)

    def initial_state(self, n0, batch, T=None):
        n0, batch = _check_start(n0, batch, self.types)
        return np.broadcast_to(_allocate(np.int64(n0), self.weights), tuple(batch) + (self.types,)).copy()

    def mean_field_state(self, n0, batch, T=None):
        n0, batch = _check_start(n0, batch, self.types, mean_field=True)
        return np.broadcast_to(float(n0) * self.weights, tuple(batch) + (self.types,)).copy()

    def kernel_step(self):
        """:func:`perfpriv._kernels.behaviours.heterogeneous_step`, with ``(r, leak rule, S, q_0.., w_0..)`` per cell.

        Class 0 leaves by the stream :class:`Memoryless` uses, so that one class reproduces it exactly.
        """
        S = self.types
        return _behaviours.HETEROGENEOUS, _pack(self._shape, self.r, self._leak_rule(), S, (self.q, S),
                                                (self.weights, S))

    def mean_field_step(self, state, p, context=None):
        state = self._check_state(state)
        ctx = _check_context(context)
        n = state.sum(axis=-1)
        p = _check_p(p)
        qc, r = self._params(n.ndim)
        new = state * (1.0 - qc * p[..., None])
        total = r * (n * (1.0 - p) if self.rule == "leak" else n)
        recruits = total[..., None] * self.weights
        new = _mf_cap(new + recruits, recruits, ctx.get("cap"))
        return _mf_floor(new, ctx.get("floor"), self.weights)

    def mean_sensitivity(self, state):
        """The population's mean leaving probability :math:`Σ_j s_j q_j` of a state (its classes' shares :math:`s_j`).

        ``state`` has shape ``cells + ... + (S,)`` (e.g. the mean-field state of a run).
        """
        state = np.asarray(self._check_state(state), float)
        qc = _at(self.q, self._shape, state.ndim - 1, (self.types,))
        return _out((state * qc).sum(axis=-1) / state.sum(axis=-1))

    # --------------------------------------------------------- theory
    def effective_q(self):
        """:math:`(Σ_j w_j / q_j)^{-1}`: the recruits' weighted harmonic mean sensitivity (0 if some
        :math:`q_j = 0`)."""
        q = np.asarray(self.q, float)
        with np.errstate(divide="ignore"):
            inv = np.where(q > 0, 1.0 / np.where(q > 0, q, 1.0), np.inf)
        H = np.where(self.weights > 0, inv * self.weights, 0.0).sum(axis=-1)
        return _out(np.where(np.isfinite(H), 1.0 / H, 0.0))

    def expected_stay(self, p, cost=None):
        """:math:`Σ_j w_j /(q_j p)`: the mean stay of a recruit, whose class is drawn with the weights."""
        _check_p(p)
        qe = np.asarray(self.effective_q(), float)
        return Memoryless(q=qe, r=0.0).expected_stay(p)

    def _matrix(self, p):
        p = np.asarray(p, float)
        shape = np.broadcast_shapes(p.shape, self._shape)
        q = np.broadcast_to(self.q, shape + (self.types,))
        p = np.broadcast_to(p, shape)
        r = np.broadcast_to(np.asarray(self.r, float), shape)
        A = np.zeros(shape + (self.types, self.types))
        idx = np.arange(self.types)
        A[..., idx, idx] = 1.0 - q * p[..., None]
        rho = r * (1.0 - p) if self.rule == "leak" else r
        return A + rho[..., None, None] * self.weights[:, None]

    def growth_factor(self, p, cost=None):
        """Long-run growth factor: the Perron root λ of the class recursion, :math:`1 = ρ Σ_j w_j/(λ - 1 + q_j p)`."""
        _check_p(p)
        return _out(_perron(self._matrix(p))[0])

    def stationary_mix(self, p):
        """Long-run shares of the classes at leak probability p (∝ :math:`w_j/(λ - 1 + q_j p)`), shape ... + (S,)."""
        _check_p(p)
        return _perron(self._matrix(p))[1]

    def critical_leak_probability(self, cost=None):
        """:math:`p_c = r H/(1 + r H)` (leak rule) or min(1, r H) (agnostic), :math:`H = Σ_j w_j/q_j`.

        The paper's threshold with q replaced by the harmonic mean of the
        classes' sensitivities (:meth:`effective_q`), which is at most their
        arithmetic mean: spreading sensitivities helps a population survive.
        """
        return Memoryless(q=self.effective_q(), r=self.r, rule=self.rule).critical_leak_probability()


class BudgetAware(_Typed):
    """Users who count the privacy they spend: each leaves once her accumulated cost passes her tolerance.

    Every round a user takes part in costs her the mechanism's per-round
    privacy cost (:meth:`perfpriv.engine.Mechanism.privacy_cost`: :math:`ρ = 2R^{2}/γ^{2}`
    of zCDP for the Gaussian mechanism, ε of local DP for randomized
    response; both compose additively). A user with tolerance b at a
    constant cost c takes part in L = ⌊b/c⌋ + 1 rounds (she learns she is
    over budget after the round that put her there): the budget-based rule
    the paper chose not to use. ``q`` adds the paper's reaction to leaks on
    top (q = 0 isolates the budget rule). Recruits start with no cost; an
    infinite tolerance reproduces :class:`Memoryless` number for number.

    The state counts users by tolerance class and by cohort (the round they
    joined; 0: the initial users): a cohort's users share their cost, so
    whole cohorts leave at once, deterministically.

    Parameters
    ----------
    tolerance : float or sequence of float
        Privacy tolerance(s) (> 0, ``inf`` allowed), in the mechanism's unit.
        A sequence is a discrete law over users, with ``weights``.
    r, q, rule
        As in :class:`Memoryless` (arrays of r and q: cells); ``q`` acts on top of the budget rule.
    weights : sequence of float, optional
        Shares of the tolerance classes (default: equal).

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
    >>> float(b.lifetimes(1.0)[0]), round(float(BudgetAware(tolerance=2.5, r=0.5).reproduction_number(0.0, 1.0)), 2)
    (3.0, 1.5)
    """

    uses_cost = True
    types = None

    cell_parameters = {"q": 0, "r": 0}

    def __init__(self, *, tolerance, r, q=0.0, weights=None, rule="leak"):
        tol = np.atleast_1d(np.asarray(check_real("tolerance", tolerance, low=0, low_open=True, allow_inf=True),
                                       dtype=float))
        if tol.ndim != 1:
            raise ValueError(f"tolerance must be a number or a 1-D sequence (one per class); got shape {tol.shape}")
        self.tolerance = tol
        self.weights = _weights(np.ones(tol.size) if weights is None else weights, tol.size)
        self.r = check_probability("r", r)
        self.q = check_probability("q", q)
        self.rule = check_choice("rule", rule, RULES)
        self.classes = int(tol.size)
        self._shape = check_same_shape(q=self.q, r=self.r)

    def __repr__(self):
        tol = self.tolerance.tolist() if self.classes > 1 else float(self.tolerance[0])
        return f"BudgetAware(tolerance={tol}, r={_short(self.r)}, q={_short(self.q)}, rule={self.rule!r})"

    # The state, shape (..., classes + 1, T + 1): rows 0..C-1 count the users of each tolerance
    # class by cohort (cohort 0: the initial users, cohort t: recruits of round t); row C holds the
    # privacy each cohort has spent so far (counts are whole numbers held exactly in floats).
    _state_axes = 2

    def _empty(self, batch, T):
        if T is None:
            raise ValueError("BudgetAware needs the horizon T (its state counts users by cohort)")
        T = check_int("T", T, low=1)
        batch = tuple(batch)
        check_array_size("the budget-aware state ((classes + 1) x (T + 1) counts of every run)",
                         T=T + 1, classes=self.classes + 1, runs=int(np.prod(batch, dtype=np.int64)))
        return np.zeros(batch + (self.classes + 1, T + 1))

    def initial_state(self, n0, batch, T=None):
        n0, batch = _check_start(n0, batch, self.classes + 1)
        state = self._empty(batch, T)
        state[..., :-1, 0] = _allocate(np.int64(n0), self.weights)
        return state

    def mean_field_state(self, n0, batch, T=None):
        n0, batch = _check_start(n0, batch, self.classes + 1, mean_field=True)
        state = self._empty(batch, T)
        state[..., :-1, 0] = float(n0) * self.weights
        return state

    def _per_run_rows(self):
        return self.classes + 1

    def population(self, state):
        return self._check_state(state)[..., :-1, :].sum(axis=(-1, -2))

    def spent(self, state):
        """Privacy spent so far by each cohort (row C of the state)."""
        return self._check_state(state)[..., -1, :]

    def by_class(self, state):
        """Users of each tolerance class in a state, shape ``batch + (classes,)``."""
        return self._check_state(state)[..., :-1, :].sum(axis=-1)

    def kernel_step(self):
        """:func:`perfpriv._kernels.behaviours.budget_aware_step`, with ``(q, r, leak rule, C, tolerances, weights)``.

        Departures are drawn as :class:`Memoryless` draws them ("leave"), then spread over the cohorts.
        """
        C = self.classes
        return _behaviours.BUDGET_AWARE, _pack(self._shape, self.q, self.r, self._leak_rule(), C,
                                               (self.tolerance, C), (self.weights, C))

    def mean_field_step(self, state, p, context=None):
        state = self._check_state(state)
        ctx = _check_context(context)
        t = int(ctx.get("t", 1))
        cost = ctx.get("cost")
        if cost is None:
            raise ValueError("BudgetAware needs a mechanism that reports its privacy cost per round")
        counts = state[..., :-1, :]
        C, S = counts.shape[-2:]
        n = counts.sum(axis=(-1, -2))
        q, r = _at(self.q, self._shape, n.ndim), _at(self.r, self._shape, n.ndim)
        # every cohort present in round t (joined before it) pays the round's cost; the others pay
        # nothing (a where, not a product: an infinite cost times 0 would be NaN)
        present = np.arange(S) < t
        spent = state[..., -1, :] + np.where(present, np.asarray(cost, float)[..., None], 0.0)
        p = _check_p(p)
        new = counts * (1.0 - (q * p)[..., None, None])
        total = r * (n * (1.0 - p) if self.rule == "leak" else n)
        recruits = total[..., None] * self.weights
        # budget: a cohort whose spending exceeds a class's tolerance loses that class
        new = np.where(spent[..., None, :] > self.tolerance[:, None], 0.0, new)
        cohort = min(t, S - 1)                     # this round's recruits (and fresh users) join cohort t
        cap, floor = ctx.get("cap"), ctx.get("floor")
        if cap is not None:                        # recruits beyond the cap are turned away
            total = new.sum(axis=(-1, -2)) + recruits.sum(axis=-1)
            recruits = _mf_cap(recruits, recruits, cap - (total - recruits.sum(axis=-1)))
        new[..., cohort] += recruits
        if floor:
            short = np.maximum(floor - new.sum(axis=(-1, -2)), 0)
            new[..., cohort] += short[..., None] * self.weights
        out = np.empty(np.broadcast_shapes(state.shape, new.shape[:-2] + (C + 1, S)))
        out[..., :-1, :] = new
        out[..., -1, :] = np.broadcast_to(spent, out[..., -1, :].shape)
        return out

    # --------------------------------------------------------- theory
    def lifetimes(self, cost):
        r""":math:`L_j = \lfloor b_j/c \rfloor + 1`: rounds a user of class j takes part in at a constant cost c, shape ... + (classes,).

        ``inf`` for an infinite tolerance or a zero cost; 1 for an infinite
        cost (no privacy: she leaves after her first round). When :math:`b_j` is an
        exact multiple of c, the simulation's and the mean field's running sum
        of costs (rounded) decides between the two neighbouring lifetimes:
        avoid such ties when comparing with this formula.
        """
        c = self._needs_cost(cost)[..., None]
        b = self.tolerance
        with np.errstate(divide="ignore", invalid="ignore"):
            L = np.floor(b / np.where(c > 0, c, 1.0)) + 1.0
        L = np.where(np.isposinf(c), 1.0, L)
        return np.where(np.isposinf(b) | (c == 0), np.inf, L)

    def _stay_terms(self, p, cost):
        """Per-class expected stay :math:`Σ_{a=1}^{L_j} (1 - q p)^{a-1}`, shape ... + (classes,)."""
        L = self.lifetimes(cost)
        qp = (np.asarray(self.q, float) * np.asarray(p, float))[..., None]
        qp, L = np.broadcast_arrays(qp, L)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            geo = -np.expm1(L * np.log1p(-np.minimum(qp, 1.0))) / np.where(qp > 0, qp, 1.0)
            geo = np.where(np.isposinf(L), 1.0 / np.where(qp > 0, qp, 1.0), geo)
        geo = np.where(qp >= 1.0, 1.0, geo)
        return np.where(qp > 0, geo, L)

    def expected_stay(self, p, cost=None):
        """:math:`Σ_j w_j Σ_{a=1}^{L_j} (1 - q p)^{a-1}`: leaks can end a stay early, the budget ends it at :math:`L_j`."""
        _check_p(p)
        return _out((self._stay_terms(p, cost) * self.weights).sum(axis=-1))

    def growth_factor(self, p, cost=None):
        """Long-run growth factor: the root λ > 0 of Euler-Lotka's :math:`1 = ρ Σ_j w_j Σ_{a=1}^{L_j} x^{a-1} λ^{-a}, x = 1 - q p`.

        A finite lifetime caps the growth: λ < 1 whenever :math:`ρ L_j < 1` for
        every class, whatever the leaks. Found by bisection (to 1e-13).
        """
        _check_p(p)
        L = self.lifetimes(cost)
        p = np.asarray(p, float)
        x = (1.0 - np.asarray(self.q, float) * p)[..., None]
        rho = np.asarray(self.recruit_rate(p), float)[..., None]
        x, rho, L = np.broadcast_arrays(x, rho, L)
        w = self.weights
        forever = (np.isposinf(L) & (w > 0)).any(axis=-1)
        x0, rho0 = x[..., 0], rho[..., 0]

        def lotka(lam):
            lam = lam[..., None]
            ratio = x / lam
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                finite = -np.expm1(L * np.log(np.where(ratio > 0, ratio, 1.0))) / (lam - x)
                finite = np.where(ratio > 0, finite, 1.0 / lam)
                finite = np.where(np.abs(lam - x) <= 1e-14 * lam, L / lam, finite)
                term = np.where(np.isposinf(L), np.where(lam > x, 1.0 / (lam - x), np.inf), finite)
                contrib = np.where(rho > 0, rho * term, 0.0)
            return (contrib * w).sum(axis=-1)

        lo = np.where(forever, np.maximum(rho0, x0), rho0)
        hi = x0 + rho0
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            above = lotka(np.where(mid > 0, mid, 1e-300)) > 1.0
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        lam = np.where(rho0 > 0, 0.5 * (lo + hi), np.where(forever, x0, 0.0))
        return _out(lam)

    def critical_leak_probability(self, cost=None):
        """:math:`p_c` at a constant cost: the largest p with R₀(p) >= 1 (0 if even p = 0 is not enough).

        :math:`R_0` decreases in p; with q = 0 it is :math:`ρ(p) \\bar L` (:math:`\\bar L = Σ_j w_j L_j`), so
        :math:`p_c = 1 - 1/(r \\bar L)` under the leak rule. Found by bisection.
        """
        c = self._needs_cost(cost)
        shape = np.broadcast_shapes(c.shape, self._shape)
        lo, hi = np.zeros(shape), np.ones(shape)
        ok_hi = np.asarray(self.reproduction_number(1.0, c), float) >= 1.0
        ok_lo = np.asarray(self.reproduction_number(0.0, c), float) >= 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            above = np.asarray(self.reproduction_number(mid, c), float) >= 1.0
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        return _out(np.where(ok_hi, 1.0, np.where(ok_lo, lo, 0.0)))


class Contagion(_Typed):
    r"""Distrust that spreads: the leaving probability rises with last round's departures.

    In round t a leaked user leaves with probability
    :math:`q_t = \min(1, q + κ \cdot δ_{t-1})`, where :math:`δ_{t-1} = D_{t-1}/N_{t-2}` is the
    share of the previous round's users who left after it (0 in the first
    round): an epidemic of distrust (the paper's §5 suggests epidemic
    models). κ = 0 reproduces :class:`Memoryless` number for number. The
    state is (N, D_prev, N_prev). At a constant p the mean field's :math:`q_t`
    converges to q* (:meth:`stationary_leave_probability`).

    Parameters
    ----------
    q, r, rule
        As in :class:`Memoryless` (q the baseline; arrays: cells).
    kappa : float or array_like
        Contagion strength κ >= 0.

    Examples
    --------
    >>> b = Contagion(q=0.2, r=0.3, kappa=2.0)
    >>> s = b.mean_field_state(100.0, ())
    >>> s = b.mean_field_step(s, 0.5, {"floor": None, "cap": None}); s.round(2).tolist()
    [105.0, 10.0, 100.0]
    >>> round(float(b.leave_probability(s)), 3)      # 0.2 + 2 x 10/100
    0.4
    >>> round(float(b.stationary_leave_probability(0.25)), 3)   # 0.2 / (1 - 2 x 0.25)
    0.4
    """

    types = 3

    cell_parameters = {"q": 0, "r": 0, "kappa": 0}

    def __init__(self, *, q, r, kappa, rule="leak"):
        self.q = check_probability("q", q)
        self.r = check_probability("r", r)
        self.kappa = check_real("kappa", kappa, low=0)
        self.rule = check_choice("rule", rule, RULES)
        self._shape = check_same_shape(q=self.q, r=self.r, kappa=self.kappa)

    def __repr__(self):
        return f"Contagion(q={_short(self.q)}, r={_short(self.r)}, kappa={_short(self.kappa)}, rule={self.rule!r})"

    def initial_state(self, n0, batch, T=None):
        state = super().initial_state(n0, batch, T)
        state[..., 2] = state[..., 0]
        return state

    def mean_field_state(self, n0, batch, T=None):
        state = super().mean_field_state(n0, batch, T)
        state[..., 2] = state[..., 0]
        return state

    def population(self, state):
        return self._check_state(state)[..., 0]

    def leave_probability(self, state):
        r""":math:`q_t = \min(1, q + κ D_{t-1}/N_{t-2})` for the round that starts in ``state``."""
        state = np.asarray(self._check_state(state), float)
        ndim = state.ndim - 1
        q, kappa = _at(self.q, self._shape, ndim), _at(self.kappa, self._shape, ndim)
        prev = state[..., 2]
        frac = np.where(prev > 0, state[..., 1] / np.where(prev > 0, prev, 1.0), 0.0)
        return _out(np.minimum(1.0, q + kappa * frac))

    def kernel_step(self):
        """:func:`perfpriv._kernels.behaviours.contagion_step`, with ``(q, r, kappa, leak rule)`` per cell."""
        return _behaviours.CONTAGION, _pack(self._shape, self.q, self.r, self.kappa, self._leak_rule())

    def mean_field_step(self, state, p, context=None):
        state = self._check_state(state)
        ctx = _check_context(context)
        n = state[..., 0]
        p = _check_p(p)
        r = _at(self.r, self._shape, n.ndim)
        qt = self.leave_probability(state)
        leave = qt * p * n
        join = r * (n * (1.0 - p) if self.rule == "leak" else n)
        nxt = n - leave + join
        cap, floor = ctx.get("cap"), ctx.get("floor")
        if cap is not None:
            nxt = np.minimum(nxt, cap)
        if floor is not None:
            nxt = np.maximum(nxt, floor)
        return np.stack(np.broadcast_arrays(nxt, leave, n), axis=-1)

    # --------------------------------------------------------- theory
    def stationary_leave_probability(self, p):
        r"""q*: the limit of the mean field's :math:`q_{t+1} = \min(1, q + κ p q_t)` at a constant p.

        q/(1 − κ p) capped at 1 when κ p < 1, else 1 (the contagion runs
        away); 0 when q = 0 (no departures to spread).
        """
        _check_p(p)
        p, q, kappa = np.broadcast_arrays(np.asarray(p, float), np.asarray(self.q, float),
                                          np.asarray(self.kappa, float))
        kp = kappa * p
        with np.errstate(divide="ignore", invalid="ignore"):
            qs = np.where(kp < 1.0, np.minimum(1.0, q / np.where(kp < 1.0, 1.0 - kp, 1.0)), 1.0)
        return _out(np.where(q > 0, qs, 0.0))

    def _stationary(self, p):
        return Memoryless(q=self.stationary_leave_probability(p), r=np.broadcast_to(self.r, np.shape(
            self.stationary_leave_probability(p))), rule=self.rule)

    def expected_stay(self, p, cost=None):
        """1/(q* p): the stay of a user once the contagion has settled at q*."""
        _check_p(p)
        return self._stationary(p).expected_stay(p)

    def growth_factor(self, p, cost=None):
        """Long-run growth factor: the paper's 1 + r − (q* + r) p (leak rule) with q* in place of q."""
        _check_p(p)
        return self._stationary(p).growth_factor(p)

    def critical_leak_probability(self, cost=None):
        """:math:`p_c`: the largest p at which q* p <= ρ(p), in closed form.

        Leak rule: the smaller root of :math:`r κ p^{2} - (r + r κ + q) p + r = 0`,
        raised to r/(1 + r) where q* saturates at 1 first; agnostic rule:
        min(1, max(r/(q + κ r), r)). κ = 0 gives the paper's r/(q + r).
        """
        q, r, kappa = np.broadcast_arrays(np.asarray(self.q, float), np.asarray(self.r, float),
                                          np.asarray(self.kappa, float))
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.rule == "leak":
                b = r + r * kappa + q
                # b² overflows for a huge kappa: there the discriminant as b sqrt(1 − (2r/b)² κ)
                big = b > 1e150
                t = 2.0 * r / np.where(big, b, 1.0)
                with np.errstate(over="ignore"):         # b * b of the big cells is not used
                    small = np.sqrt(np.maximum(b * b - 4.0 * r * r * kappa, 0.0))
                disc = np.where(big, b * np.sqrt(np.maximum(1.0 - t * t * kappa, 0.0)), small)
                root = np.where(b + disc > 0, 2.0 * r / np.where(b + disc > 0, b + disc, 1.0), 1.0)
                pc = np.maximum(root, r / (1.0 + r))
            else:
                den = q + kappa * r
                unsat = np.where(den > 0, r / np.where(den > 0, den, 1.0), np.inf)
                pc = np.minimum(1.0, np.maximum(unsat, r))
        return _out(np.where(q > 0, pc, 1.0))


def _short(x):
    arr = np.asarray(x)
    if arr.ndim == 0:
        return f"{float(arr):g}"
    return f"array{arr.shape}"
