"""The performative loop: one simulator and one mean-field recursion for every model.

A platform repeatedly computes a private release from its current users;
what the release reveals changes who takes part next. Every model of the
book is this loop with three ingredients:

*mechanism*
    turns one round's population into a release error and a number of
    leaked records (:class:`Mechanism`: :class:`perfpriv.bernoulli.RandomizedResponse`,
    :class:`perfpriv.gaussian.GaussianMean`, ...);
*behaviour*
    turns leaks into departures and recruits (:class:`perfpriv.behaviour.Memoryless`
    and richer ones);
*population policy*
    the population's floor and cap, when a trial stops and how the rounds
    after a collapse are scored (:class:`Policy`, with the presets of
    ``conventions="paper" | "authors"``).

:func:`simulate` runs the random loop, batched: every (cell, privacy level,
trial) advances round by round in array operations, from the keyed streams
of :mod:`perfpriv.keyed` (common random numbers across levels), so that a
(cell, level, trial) run gives the same numbers alone or inside any batch.
:func:`simulate_agents` is the slow, obvious reference the fast loop is
tested against (one explicit user at a time). :func:`mean_field` runs the
deterministic recursion that replaces the random population by its
expectation (the paper's "mean-field approximation"):
:math:`N_t = \\operatorname{bound}(N_{t-1}\\, C(\\ell_t; N_{t-1}))`
(:math:`ℓ_t` the round's privacy level), and for schedules the gradient of the
cumulative error in every round's level (an adjoint pass).

A mechanism may carry a state across rounds (a deployed model that shifts
the data, say): it sets :attr:`Mechanism.stateful` and implements
:meth:`Mechanism.initial_state` and :meth:`Mechanism.advance`; :func:`simulate`
freezes the state of a stopped trial and returns the final ones as
``run.mechanism_state``. The mean field refuses stateful mechanisms.

Privacy levels
--------------
A mechanism's level (ε, γ, ...) is a number, a 1-D grid of constant levels
(simulated side by side), or a :class:`Schedule` (shape (T,) or (L, T)): a
plain 1-D array is always a grid, a schedule is always wrapped.

Result shapes
-------------
``population`` has shape ``cells + levels + (trials, T + 1)`` for
:func:`simulate` and ``cells + levels + (T + 1,)`` for :func:`mean_field`:
``cells`` is the shape of the behaviour's parameters (empty for scalars),
``levels`` is ``(L,)`` for a grid and empty for one level or schedule. Round
t = 1..T uses the :math:`N_{t-1}` users present at its start (Algorithm 1's
indexing): ``sq_error[..., t-1]`` is the release made from ``population[..., t-1]`` users.

The batch a round sees
----------------------
Inside :func:`simulate` a run is a *batch* of shape ``cells + (L, trials)``
(``L = 1`` for one level or schedule: the axis is always there). In round
``t`` a mechanism's :meth:`Mechanism.draw_round` (or :meth:`Mechanism.advance`)
and a behaviour's :meth:`perfpriv.behaviour.Behaviour.step` receive:

* ``n`` and ``live``: the population at the round's start and whether the
  trial still runs, shape ``cells + (L, trials)``;
* ``level``: shape ``(L, 1)`` (``cells + (1, 1)`` for :class:`PerCell` levels);
* ``keys``: the round's ``perfpriv.keyed.Key``, shape ``cells + (1, trials)``
  (broadcast over the levels: common random numbers), or ``cells + (L, trials)``
  when the levels draw independent numbers;
* the behaviour's ``state`` (``cells + (L, trials, types)``) and a ``context``
  dict: ``t``, ``T``, ``level``, ``cost`` (:meth:`Mechanism.privacy_cost`),
  ``floor`` and ``cap``.

Behaviour parameters (shape ``cells``) take ``ndim - len(cells)`` trailing
unit axes to meet the batch; a mechanism's :class:`RoundOutcome` arrays
broadcast to ``cells + (L, trials)``. The mean field's batch is ``cells + (L,)``, without keys.

Examples
--------
>>> from perfpriv import bernoulli, behaviour, engine
>>> path = engine.mean_field(bernoulli.RandomizedResponse(0.5), behaviour.Memoryless(q=0.3, r=0.6),
...                          T=30, n0=400)
>>> path.population.shape, round(float(path.population[-1]))      # 400 C^30 with C = 1.03979 (Lemma 2)
((31,), 1289)
>>> run = engine.simulate(bernoulli.RandomizedResponse([0.5, 1.0]), behaviour.Memoryless(q=0.3, r=0.6),
...                       T=30, n0=400, trials=20, seed=1)
>>> run.population.shape
(2, 20, 31)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from . import keyed
from ._kernels import behaviours as _behaviours
from ._kernels import mechanisms as _mechanisms
from ._kernels import rounds as _rounds
from ._kernels import warm as _warm_kernels
from ._validate import (check_array_size, check_choice, check_flag, check_int, check_order, check_population,
                        check_real)
from .behaviour import Behaviour

__all__ = [
    "compile_kernels",
    "cell_keys",
    "level_grid",
    "Schedule",
    "PerCell",
    "Levels",
    "make_levels",
    "Policy",
    "RoundOutcome",
    "Mechanism",
    "SimulationRun",
    "MeanFieldPath",
    "simulate",
    "simulate_agents",
    "AgentRound",
    "mean_field",
]

#: Presets of the population policy and of the mechanisms' options: ``"paper"``
#: follows the paper's text, ``"authors"`` the authors' published code.
CONVENTIONS = ("paper", "authors")

#: How a round after a collapse (a stopped trial) is scored: see :attr:`Policy.collapse`.
COLLAPSE = ("floor", "repeat", "ran", "penalty")

_ROUNDS = ("algorithm", "paper")


# ------------------------------------------------------------------ levels
class Schedule:
    """Privacy levels that change over the rounds: round t uses ``values[..., t-1]``.

    Parameters
    ----------
    values : array_like, shape (T,) or (L, T)
        One schedule, or a grid of L schedules (simulated side by side).

    Examples
    --------
    >>> Schedule([4.0, 4.0, 1.0]).values.shape
    (3,)
    """

    __slots__ = ("values",)

    def __init__(self, values):
        # real numbers (infinite levels allowed: e.g. epsilon = inf, no privacy); each mechanism checks
        # its own range when the schedule is used (make_levels)
        arr = (np.array(check_real("values", values, allow_inf=True), dtype=float)
               if not isinstance(values, Schedule) else values.values)
        if arr.ndim not in (1, 2) or arr.shape[-1] < 1:
            raise ValueError(f"values of a Schedule must have shape (T,) (one level per round) or (L, T) "
                             f"(L schedules); got shape {arr.shape}")
        self.values = arr

    @property
    def T(self) -> int:
        """Number of rounds the schedule covers."""
        return int(self.values.shape[-1])

    def __repr__(self) -> str:
        v = self.values
        if v.ndim == 1 and v.size <= 6:
            return f"Schedule({np.round(v, 4).tolist()})"
        return f"Schedule(shape={v.shape})"


class PerCell:
    """One privacy level per cell of a batch (the behaviour's parameter arrays).

    With ``q`` and ``r`` arrays of shape C (cells), ``PerCell(values)`` of
    shape C gives cell c the level ``values[c]``: results have no level
    axis. The searches use it to refine a different level in every cell of
    a heatmap in one vectorized call.

    Parameters
    ----------
    values : array_like
        One level per cell.

    Examples
    --------
    >>> PerCell([0.5, 2.0]).values.tolist()
    [0.5, 2.0]
    """

    __slots__ = ("values",)

    def __init__(self, values):
        arr = np.array(check_real("values", values, allow_inf=True), dtype=float)
        if arr.ndim < 1 or arr.size == 0:
            raise ValueError(f"values of PerCell must hold one level per cell (an array with the cells' shape); "
                             f"got shape {arr.shape}")
        self.values = arr

    def __repr__(self) -> str:
        return f"PerCell(shape={self.values.shape})"


@dataclass(frozen=True, eq=False)
class Levels:
    """Validated privacy levels of a mechanism (see :func:`make_levels`).

    Attributes
    ----------
    values : numpy.ndarray
        Shape (L,) for constant levels, (L, T) for schedules, cells + (1,)
        for levels given per cell (:class:`PerCell`).
    per_round : bool
        Whether ``values`` runs over the rounds.
    shape : tuple
        Leading shape of results: () for one level or one schedule, (L,) for a grid.
    name : str
        Name of the level (``"epsilon"``, ``"gamma"``, ...).
    given : object
        The level as the user gave it (float, array, or Schedule).
    """

    values: np.ndarray
    per_round: bool
    shape: tuple
    name: str
    given: Any

    @property
    def count(self) -> int:
        """Number of level rows L."""
        return int(self.values.shape[-2] if self.per_round else self.values.shape[-1])

    def at(self, t: int) -> np.ndarray:
        """Levels of round t (1 <= t <= a schedule's length), shape (L,) (cells + (1,) for PerCell levels)."""
        t = check_int("t", t, low=1, high=self.values.shape[-1] if self.per_round else None)
        return self.values[..., t - 1] if self.per_round else self.values

    def check_horizon(self, T: int) -> None:
        """A schedule must cover exactly T rounds."""
        if self.per_round and self.values.shape[-1] != T:
            raise ValueError(f"{self.name} is a Schedule of {self.values.shape[-1]} rounds; "
                             f"it must have one level per round, T={T}")

    def describe(self):
        """The levels for a result's provenance: a float, a 1-D grid or the schedule values."""
        if isinstance(self.given, (Schedule, PerCell)):
            return self.given.values.copy()
        if self.shape == ():
            return float(self.values[0])
        return self.values.copy()


def level_grid(mechanism, *, kind=None, name="mechanism") -> np.ndarray:
    """The privacy levels of a mechanism as a 1-D grid of candidates: what a search or a study runs on.

    Parameters
    ----------
    mechanism : Mechanism
        Holding a number or a 1-D grid of levels.
    kind : type, optional
        The mechanism class required (e.g. :class:`perfpriv.gaussian.GaussianMean`).
    name : str
        Parameter name for error messages.

    Returns
    -------
    numpy.ndarray
        The levels, 1-D (a number gives a grid of one).

    Raises
    ------
    TypeError
        If ``mechanism`` is not a ``kind``.
    ValueError
        If it holds no level, a schedule or levels per cell.

    Examples
    --------
    >>> from perfpriv.bernoulli import RandomizedResponse
    >>> level_grid(RandomizedResponse(0.5)).tolist(), level_grid(RandomizedResponse([0.5, np.inf])).tolist()
    ([0.5], [0.5, inf])
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (the parameter named in messages); got {name!r:.60}")
    if kind is not None and not (isinstance(kind, type) and issubclass(kind, Mechanism)):
        raise TypeError(f"kind must be a mechanism class (e.g. perfpriv.gaussian.GaussianMean) or None; got {kind!r:.60}")
    if kind is not None and not isinstance(mechanism, kind):
        raise TypeError(f"{name} must be a {kind.__module__}.{kind.__name__}; got {type(mechanism).__name__}")
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"{name} must be a perfpriv mechanism; got {type(mechanism).__name__}")
    levels = mechanism.levels
    if levels is None or levels.per_round or isinstance(levels.given, PerCell):
        held = "no level" if levels is None else "a schedule" if levels.per_round else "levels per cell"
        raise ValueError(f"{name} must hold the {mechanism.level_name} values to run (a number or a 1-D grid); got "
                         f"a {type(mechanism).__name__} with {held}")
    return np.array(levels.values, dtype=float, ndmin=1)       # a copy: results do not share the mechanism's


def make_levels(value, name: str, **bounds) -> Levels:
    """Validate a privacy level: a number, a 1-D grid, or a :class:`Schedule`.

    Parameters
    ----------
    value : float, 1-D array_like or Schedule
        The level(s); a 2-D plain array is refused (module docstring, "Privacy levels").
    name : str
        Parameter name for messages.
    **bounds
        Allowed range, passed to ``perfpriv._validate.check_real``.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise TypeError(f"name must be the parameter's name (an identifier string); got {name!r:.60}")
    if isinstance(value, PerCell):
        vals = np.asarray(check_real(name, value.values, **bounds), dtype=float)
        return Levels(vals[..., None], False, (), name, value)
    if isinstance(value, Schedule):
        vals = check_real(name, value.values, **bounds)
        vals = np.asarray(vals, dtype=float)
        shape = () if vals.ndim == 1 else (vals.shape[0],)
        return Levels(np.atleast_2d(vals), True, shape, name, value)
    vals = check_real(name, value, **bounds)
    arr = np.asarray(vals, dtype=float)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-D grid of levels; wrap per-round levels in "
                         f"perfpriv.engine.Schedule (shape (T,) or (L, T)); got shape {arr.shape}")
    if arr.ndim == 1 and arr.size == 0:
        raise ValueError(f"{name} must hold at least one level; got an empty array")
    shape = () if arr.ndim == 0 else (arr.size,)
    return Levels(np.atleast_1d(arr), False, shape, name, value)


# ------------------------------------------------------------------ policy
#: A field of :class:`Policy` left to the preset of the run's ``conventions``.
UNSET = type("Unset", (), {"__repr__": lambda self: "UNSET", "__reduce__": lambda self: "UNSET"})()

@dataclass(frozen=True, repr=False)
class Policy:
    """What happens to the population between rounds, and how a collapse is scored.

    A field left unset takes the preset of the run's ``conventions``
    (:meth:`Mechanism.policy_preset`); :func:`simulate` stores the policy it
    used, every field set, as ``run.policy``.

    Attributes
    ----------
    cap : int or None
        Largest population (the paper's 20000); ``None``: no cap.
    floor : int
        Smallest population after a round: 1 (the paper's §3 text and
        Theorem 3: a platform keeps at least one user) or 0 (Algorithm 1
        read literally: the population can die out).
    stop : int
        A trial stops once its population is at or below ``stop`` (0: only
        a dead population stops; the authors' Algorithm 1 code stops at 1).
    collapse : {"floor", "repeat", "ran", "penalty"}
        How the rounds of a stopped trial are scored: ``"floor"``, the
        expected error of a one-user release (the mean field's convention);
        ``"repeat"``, the platform keeps serving its last release (its error
        repeats); ``"ran"``, over the rounds the trial ran (each missing round
        is charged the mean error of the rounds it ran, so a sum over rounds
        is that mean times T); ``"penalty"``, a fixed error per missing round.
    penalty : float
        Error charged per missing round when ``collapse="penalty"``.

    Examples
    --------
    >>> from perfpriv import bernoulli
    >>> Policy(cap=5000).resolve(bernoulli.RandomizedResponse(1.0), "paper", n0=100)
    Policy(cap=5000, floor=1, stop=0, collapse='floor', penalty=0.0)
    """

    #: The fields, in order.
    FIELDS = ("cap", "floor", "stop", "collapse", "penalty")

    cap: Any = UNSET
    floor: Any = UNSET
    stop: Any = UNSET
    collapse: Any = UNSET
    penalty: Any = UNSET

    def __post_init__(self):
        checked = dict(
            cap=lambda v: None if v is None else check_int("cap", v, low=1),
            floor=lambda v: check_int("floor", v, low=0, high=1),
            stop=lambda v: check_int("stop", v, low=0),
            collapse=lambda v: check_choice("collapse", v, COLLAPSE),
            penalty=lambda v: float(check_real("penalty", v, low=0, scalar=True)))
        for name, check in checked.items():
            value = getattr(self, name)
            if value is not UNSET:
                object.__setattr__(self, name, check(value))

    def resolve(self, mechanism, conventions: str, *, n0: int) -> "Policy":
        """This policy, every field set: the unset ones from ``mechanism``'s preset of ``conventions``.

        ``n0`` (the initial population) must be at most ``cap`` and above ``stop``.
        """
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a perfpriv mechanism (e.g. gaussian.GaussianMean); "
                            f"got {mechanism!r:.80}")
        conventions = check_choice("conventions", conventions, CONVENTIONS)
        n0 = check_int("n0", n0, low=1)
        values = dict(Mechanism.policy_preset(mechanism, conventions))     # the fields a preset leaves out
        values.update(mechanism.policy_preset(conventions))
        values.update(self.describe())
        full = Policy(**{k: values[k] for k in self.FIELDS})
        if full.cap is not None:
            check_order("n0", n0, "cap", full.cap)
        if full.stop >= n0:
            raise ValueError(f"stop must be below n0 (a trial stops once N <= stop); got stop={full.stop}, "
                             f"n0={n0}")
        return full

    def __repr__(self) -> str:
        return "Policy(" + ", ".join(f"{k}={v!r}" for k, v in self.describe().items()) + ")"

    def describe(self) -> dict:
        """The fields that are set, as a plain dict (for ``run.json`` files and results' settings)."""
        return {k: getattr(self, k) for k in self.FIELDS if getattr(self, k) is not UNSET}

    def score_stopped(self, sq_error, alive, mechanism, levels) -> None:
        """Fill, in place, the errors ``sq_error`` (``batch + (T,)``) of rounds without a release.

        ``alive`` (same shape) says which rounds had one; the others are scored by :attr:`collapse`
        (``"floor"``: ``mechanism``'s one-user error at the ``levels`` of the batch rows, axis ``batch[-2]``).
        """
        dead = ~alive
        if not dead.any():
            return
        T = sq_error.shape[-1]
        if self.collapse == "penalty":
            sq_error[dead] = self.penalty
        elif self.collapse == "floor":
            for t in range(1, T + 1):
                col = dead[..., t - 1]
                if col.any():
                    one = np.asarray(mechanism.one_record_error(levels.at(t)[..., None]), float)
                    one = np.broadcast_to(one, col.shape) if one.ndim <= col.ndim else one
                    sq_error[..., t - 1] = np.where(col, one, sq_error[..., t - 1])
        elif self.collapse == "repeat":
            for t in range(2, T + 1):
                col = dead[..., t - 1]
                sq_error[..., t - 1] = np.where(col, sq_error[..., t - 2], sq_error[..., t - 1])
        else:  # "ran"
            ran = alive.sum(axis=-1)
            total = np.where(alive, sq_error, 0.0).sum(axis=-1)
            mean = np.where(ran > 0, total / np.maximum(ran, 1), 0.0)
            sq_error[dead] = np.broadcast_to(mean[..., None], sq_error.shape)[dead]


def check_policy(policy) -> Policy:
    """``policy`` as a :class:`Policy`: ``None`` is ``Policy()`` (every field from the preset)."""
    if policy is None:
        return Policy()
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be None or a perfpriv.engine.Policy (e.g. Policy(cap=5000)); "
                        f"got {type(policy).__name__}")
    return policy


# --------------------------------------------------------------- mechanism
@dataclass(frozen=True, eq=False)
class RoundOutcome:
    """What a mechanism's round returns to the engine (arrays of the batch shape).

    Attributes
    ----------
    sq_error : numpy.ndarray
        Squared error of each release.
    leaked : numpy.ndarray of int
        Number of leaked records of each release.
    details : dict
        Further per-release arrays the mechanism records (e.g. estimates).
    """

    sq_error: np.ndarray
    leaked: np.ndarray
    details: dict = field(default_factory=dict)


class Mechanism:
    """Base class of the mechanisms the engine runs (the interface).

    A mechanism holds its privacy levels (:attr:`levels`, a :class:`Levels`;
    ``None`` for a mechanism that describes the model only, whose level a
    search or a threshold chooses) and implements, for a batch of populations, one round of simulation
    (:meth:`draw_round`) and the mean-field quantities of a round
    (:meth:`leak_probability`, :meth:`expected_error`). Subclasses set
    :attr:`name` and :attr:`level_name`.
    """

    name = "mechanism"
    level_name = "level"
    levels: Levels | None

    def resolved(self, conventions: str) -> "Mechanism":
        """This mechanism with the options it left open filled in from ``conventions``."""
        return self

    def policy_preset(self, conventions: str) -> dict:
        """The population policy of ``conventions`` for this mechanism."""
        return dict(cap=20000, floor=1, stop=0, collapse="floor", penalty=0.0)

    def options(self) -> dict:
        """The mechanism's options, for provenance (statistic, draw, clip_estimate, ...)."""
        return {}

    def draw_round(self, n, level, keys, live, t, need_error=True) -> RoundOutcome:  # pragma: no cover
        """Simulate round t for populations ``n`` at levels ``level`` (see module docstring)."""
        raise NotImplementedError

    #: Whether the mechanism carries a state across rounds (module docstring); the defaults are stateless.
    stateful = False
    #: Largest population one release can hold in memory (None: no limit), for mechanisms that draw numbers
    #: per record; the engine refuses an ``n0`` or a ``cap`` above it by name.
    max_population = None

    def kernel_draw(self):
        """The compiled draw ``(kind, params)`` of :func:`perfpriv._kernels.mechanisms.mechanism_round`
        (``params``: the constants; per level: :meth:`kernel_levels`), or ``None`` (:meth:`draw_round`)."""
        return None

    def kernel_levels(self, level):
        """The per-level quantities the compiled draw reads: an array of shape ``level.shape + (P,)``."""
        raise NotImplementedError  # pragma: no cover - a mechanism with kernel_draw defines it

    def initial_state(self, batch):
        """State of every (cell, level, trial) of a batch before round 1 (``None``: stateless)."""
        return None

    def advance(self, state, n, level, keys, live, t, need_error=True):
        """One round from a state: ``(RoundOutcome, new state)`` (stateless: :meth:`draw_round`)."""
        return self.draw_round(n, level, keys, live, t, need_error), state

    def agent_round(self, n, level, rng, t=1, state=None) -> "AgentRound":
        """Round ``t`` of ``n`` users at one ``level``, record by record from the Generator ``rng``.

        An :class:`AgentRound` for :func:`simulate_agents`, independent of :meth:`draw_round` and the kernels
        (a stateful mechanism starts from ``initial_state(())``)."""
        raise NotImplementedError(f"{type(self).__name__} has no agent_round: the agent-by-agent reference "
                                  "(perfpriv.engine.simulate_agents) cannot run it")

    def leak_probability(self, n, level):  # pragma: no cover - interface
        """Probability that a user leaks in a round with ``n`` users (mean field)."""
        raise NotImplementedError

    def expected_error(self, n, level):  # pragma: no cover - interface
        """Expected squared error of a release from ``n`` users (mean field)."""
        raise NotImplementedError

    def privacy_cost(self, level):
        """What one round at ``level`` costs each participating user, in the mechanism's own
        privacy unit (``None`` if the mechanism does not say; budget-aware behaviours need it)."""
        check_population("level", level)
        return None

    def one_record_error(self, level):
        """Expected error of a release from one user: the score of a collapsed round ("floor")."""
        check_population("level", level)
        return self.expected_error(np.ones(np.shape(level)), level)

    # derivatives for schedule optimization (log space); defaults: central differences
    _H = 1e-5

    def leak_probability_grad(self, n, level):
        """(p, dp/dlog n, dp/dlog level) at ``n`` and ``level`` (central differences by default)."""
        n = check_population("n", n)
        level = check_population("level", level)
        up, dn = np.exp(self._H), np.exp(-self._H)
        nn = np.stack([n, n * up, n * dn, n, n])
        ll = np.stack([level, level, level, level * up, level * dn])
        nn, ll = np.broadcast_arrays(nn, ll)
        vals = np.asarray(self.leak_probability(nn, ll), float)
        return vals[0], (vals[1] - vals[2]) / (2 * self._H), (vals[3] - vals[4]) / (2 * self._H)

    def expected_error_grad(self, n, level):
        """(e, de/dlog n, de/dlog level) at ``n`` and ``level`` (central differences by default)."""
        n = check_population("n", n)
        level = check_population("level", level)
        up, dn = np.exp(self._H), np.exp(-self._H)
        e0 = np.asarray(self.expected_error(n, level), float)
        den = (np.asarray(self.expected_error(n * up, level)) - np.asarray(self.expected_error(n * dn, level)))
        del_ = (np.asarray(self.expected_error(n, level * up)) - np.asarray(self.expected_error(n, level * dn)))
        return e0, den / (2 * self._H), del_ / (2 * self._H)


# ------------------------------------------------------------------ results
def _short_repr(name, fields: Mapping) -> str:
    parts = []
    for k, v in fields.items():
        if isinstance(v, np.ndarray):
            if v.ndim == 0:
                v = v.item()
            elif v.size <= 4:
                parts.append(f"{k}={np.round(v.astype(float), 4).tolist()}")
                continue
            else:
                parts.append(f"{k}=<{v.dtype.name} {v.shape}>")
                continue
        if isinstance(v, float):
            parts.append(f"{k}={v:.6g}")
        else:
            text = repr(v)
            parts.append(f"{k}={text if len(text) <= 60 else text[:57] + '...'}")
    return f"{name}({', '.join(parts)})"


@dataclass(frozen=True, eq=False)
class SimulationRun:
    """Trajectories of :func:`simulate` (and of the agent-by-agent references).

    Attributes
    ----------
    population : numpy.ndarray of int, shape ``cells + levels + (trials, T + 1)``
        :math:`N_0 = n0`, then the population after each round.
    sq_error : numpy.ndarray, shape ``cells + levels + (trials, T)``
        Squared error of the release of round t (made from :math:`N_{t-1}` users).
        Rounds of a stopped trial carry the score of ``policy.collapse``.
    leaked : numpy.ndarray of int, same shape as ``sq_error``
        Number of leaked records of each release (0 after a stop).
    alive : numpy.ndarray of bool, same shape as ``sq_error``
        Whether round t had a release (the trial had not stopped).
    details : dict
        Per-release arrays a mechanism records (Bernoulli: ``estimate``, ``truth``).
    mechanism, behaviour : object
        The mechanism (with its levels and resolved options) and behaviour.
    level : float, numpy.ndarray
        The privacy level(s) as given (a float, a grid, or schedule values).
    T, n0, trials : int
    policy : Policy
    conventions : str
    seed : object
        The seed as given (``None`` for fresh entropy).
    method : str
        How rounds were drawn (``"engine"``; ``"agents"`` for the references;
        the Gaussian mechanism reports its draw, ``"projected"`` or ``"records"``).
    mechanism_state : numpy.ndarray or None
        The final state of a stateful mechanism (:attr:`Mechanism.stateful`), per
        (cell, level, trial); ``None`` for stateless mechanisms.
    """

    population: np.ndarray
    sq_error: np.ndarray
    leaked: np.ndarray
    alive: np.ndarray
    details: dict
    mechanism: Any
    behaviour: Any
    level: Any
    T: int
    n0: int
    trials: int
    policy: Policy
    conventions: str
    seed: Any
    method: str = "engine"
    mechanism_state: Any = None

    def __repr__(self) -> str:
        return _short_repr("SimulationRun", dict(
            mechanism=self.mechanism, behaviour=self.behaviour, T=self.T, n0=self.n0, trials=self.trials,
            population=self.population, policy=self.policy.describe(), conventions=self.conventions,
            method=self.method))

    # convenience views ------------------------------------------------------
    @property
    def cap(self):
        """Population cap of the run."""
        return self.policy.cap

    @property
    def floor(self):
        """Population floor of the run."""
        return self.policy.floor

    @property
    def leak_fraction(self) -> np.ndarray:
        """Fraction of each release's users who leaked (0 after a stop)."""
        users = self.population[..., :-1]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(users > 0, self.leaked / np.maximum(users, 1), 0.0)

    @property
    def mean_population(self) -> np.ndarray:
        """Mean over trials of :math:`N_t`, shape ``cells + levels + (T + 1,)``."""
        return self.population.mean(axis=-2)

    @property
    def mean_sq_error(self) -> np.ndarray:
        """Mean over trials of the squared error, shape ``cells + levels + (T,)``."""
        return self.sq_error.mean(axis=-2)

    @property
    def cumulative_error(self) -> np.ndarray:
        """Sum over the T rounds of each trial's squared error, shape ``cells + levels + (trials,)``."""
        return self.sq_error.sum(axis=-1)

    @property
    def collapsed(self) -> np.ndarray:
        """Per trial, whether it stopped before the horizon."""
        return ~self.alive[..., -1]

    @property
    def estimate(self) -> np.ndarray:
        """The released estimates (mechanisms that record them, e.g. randomized response)."""
        return self._detail("estimate")

    @property
    def truth(self) -> np.ndarray:
        """The true value of each round (mechanisms that record it)."""
        return self._detail("truth")

    def _detail(self, name):
        if name not in self.details:
            raise AttributeError(f"this run's mechanism ({type(self.mechanism).__name__}) records no "
                                 f"{name!r}; it records {sorted(self.details) or 'nothing else'}")
        return self.details[name]

    def moving_average(self, window: int = 15) -> np.ndarray:
        """Trailing moving average of :attr:`mean_sq_error` over ``window`` rounds.

        Entry t-1 (round t) averages rounds max(1, t − window + 1)..t: a
        causal window that shrinks at the start (one value per round, no
        look-ahead). The paper's Figs. 1 and 6 use 15 (its code 10).
        """
        window = check_int("window", window, low=1)
        m = self.mean_sq_error
        csum = np.cumsum(m, axis=-1)
        T = m.shape[-1]
        idx = np.arange(T)
        lower = idx - window
        prev = np.where(lower >= 0, np.take(csum, np.maximum(lower, 0), axis=-1), 0.0)
        return (csum - prev) / np.minimum(idx + 1, window)


@dataclass(frozen=True, eq=False)
class MeanFieldPath:
    """The mean-field recursion of :func:`mean_field`.

    Attributes
    ----------
    population : numpy.ndarray, shape ``cells + levels + (T + 1,)``
        :math:`N_0`, ..., :math:`N_T` (real numbers).
    sq_error : numpy.ndarray, shape ``cells + levels + (T,)``
        Expected error of each round's release (``rounds`` says which
        population it uses).
    leak_probability : numpy.ndarray, shape ``cells + levels + (T,)``
        p of each round (at :math:`N_{t-1}`).
    cumulative_error : float or numpy.ndarray
        Sum of ``sq_error`` over the rounds.
    gradient : numpy.ndarray or None
        With ``gradient=True``: d cumulative_error / d log level_t, shape of ``sq_error``.
    mechanism, behaviour, level, T, n0, cap, floor, rounds, conventions
        Provenance.
    """

    population: np.ndarray
    sq_error: np.ndarray
    leak_probability: np.ndarray
    cumulative_error: Any
    gradient: np.ndarray | None
    mechanism: Any
    behaviour: Any
    level: Any
    T: int
    n0: float
    cap: Any
    floor: Any
    rounds: str
    conventions: str

    @property
    def growth_factor(self) -> np.ndarray:
        """Realized mean-field growth :math:`N_t / N_{t-1}` of each round (after the cap and floor)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.population[..., 1:] / self.population[..., :-1]

    def __repr__(self) -> str:
        return _short_repr("MeanFieldPath", dict(
            mechanism=self.mechanism, behaviour=self.behaviour, T=self.T, n0=self.n0, cap=self.cap,
            floor=self.floor, rounds=self.rounds, population=self.population,
            cumulative_error=self.cumulative_error))


# ------------------------------------------------------------------ checks
def _check_parts(mechanism, behaviour):
    if not isinstance(mechanism, Mechanism):
        raise TypeError(f"mechanism must be a perfpriv mechanism (e.g. bernoulli.RandomizedResponse, "
                        f"gaussian.GaussianMean); got {mechanism!r:.80}")
    if not isinstance(behaviour, Behaviour):
        raise TypeError(f"behaviour must be a perfpriv behaviour (e.g. behaviour.Memoryless(q=..., r=...)); "
                        f"got {behaviour!r:.80}")
    if mechanism.levels is None:
        raise ValueError(f"mechanism: {type(mechanism).__name__} was built without a privacy level; give it "
                         f"its {mechanism.level_name} (a number, a 1-D grid or a Schedule) to simulate it or "
                         f"take its mean field")


def compile_kernels():
    """Compile numba's kernels of the round loop once, or load them from numba's on-disk cache.

    Nothing needs to call it: each kernel compiles at its first use (about half a minute for all of
    them after installing or upgrading perfpriv, then a second or two from the cache). Calling it up
    front moves that wait out of the first simulation: ``binder/postBuild`` and the CI script do.

    Examples
    --------
    >>> compile_kernels()
    """
    _warm_kernels()


def cell_keys(seed, behaviour) -> keyed.Key:
    """Root key(s) of a call: one per cell of ``behaviour``, from the root seed and the cell's own coordinates.

    A cell's key is :func:`perfpriv.keyed.cell_key` of ``seed`` and its
    :meth:`perfpriv.behaviour.Behaviour.cell_coordinates` (e.g. q and r; none: the root key), as in
    :func:`perfpriv.sweep.map_grid`, :func:`simulate` and the searches of :mod:`perfpriv.optimize`. A
    :class:`perfpriv.keyed.Key` array of the cells' shape as ``seed`` gives each cell its key instead.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> keys, one = cell_keys(7, Memoryless(q=[0.3, 0.5], r=0.6)), keyed.cell_key(7, 0.5, 0.6)
    >>> keys.shape, (int(keys.a[1]), int(keys.b[1])) == (int(one.a), int(one.b))
    ((2,), True)
    """
    if not isinstance(behaviour, Behaviour):
        raise TypeError(f"behaviour must be a perfpriv behaviour (e.g. behaviour.Memoryless(q=..., r=...)); "
                        f"got {behaviour!r:.80}")
    cells = tuple(behaviour.shape)
    if isinstance(seed, keyed.Key):
        if seed.shape == cells:
            return seed
        if seed.shape != ():
            raise ValueError(f"seed must be one key or one key per cell (shape {cells}); got keys of "
                             f"shape {seed.shape}")
        root = seed
    else:
        root = keyed.root_key(seed)
    if not cells:
        return root
    coords = behaviour.cell_coordinates()
    parts = [np.vectorize(lambda v: np.uint64(keyed.coordinate_key(float(v))), otypes=[np.uint64])(
        np.broadcast_to(np.asarray(c, float), cells)) for c in coords]
    return root.child(*parts)


# --------------------------------------------------------------- simulate
def simulate(mechanism, behaviour, *, T, n0, trials=1, policy=None, conventions="paper", seed=None, record="all",
             common_numbers=True):
    r"""Simulate the performative loop: every (cell, level, trial) of one call, round by round.

    Round t = 1..T: one release per (cell, level, trial) from the :math:`N_{t-1}` users, with its
    squared error and leaked records (:meth:`Mechanism.draw_round`); departures and recruits
    (:meth:`perfpriv.behaviour.Behaviour.step`); the policy's cap and floor. A trial at or below the
    policy's ``stop`` makes no more releases; its rounds are scored by the policy's ``collapse``.

    Parameters
    ----------
    mechanism, behaviour : Mechanism, perfpriv.behaviour.Behaviour
        The model: a mechanism with its level(s) (a number, a grid or a :class:`Schedule`) and users,
        e.g. ``Memoryless(q=0.3, r=0.6)``, whose array parameters add cell axes.
    T, n0, trials : int
        Rounds (>= 1), initial population :math:`N_0 \ge 1` and independent runs per (cell, level).
    policy : Policy, optional
        Unset fields (all for ``None``) take the preset of ``conventions``; ``Policy(cap=None)``: no cap.
    conventions : {"paper", "authors"}
        Preset of the policy and of the options the mechanism left open (e.g. the membership
        statistic): the paper's text or the authors' published code.
    seed : None, int, SeedSequence, Generator, or perfpriv.keyed.Key
        Root of the keyed streams; a Key array of the cells' shape: one root per cell (:func:`cell_keys`).
    record : {"all", "final"}
        ``"final"``: only the last round's error is computed (earlier entries are 0).
    common_numbers : bool
        ``True`` (default): the levels of a (cell, trial) share their random numbers round by
        round (differences between levels have less noise). ``False``: each level draws its own,
        keyed by its value (a grid) or row (a schedule), as the authors' scripts draw each level
        afresh; each level's law is the same either way.

    Returns
    -------
    SimulationRun

    Examples
    --------
    >>> from perfpriv import bernoulli, behaviour
    >>> run = simulate(bernoulli.RandomizedResponse(1.0), behaviour.Memoryless(q=0.3, r=0.6),
    ...                T=5, n0=100, trials=3, seed=0)
    >>> run.population[:, 0].tolist(), run.sq_error.shape
    ([100, 100, 100], (3, 5))
    """
    _check_parts(mechanism, behaviour)
    conventions = check_choice("conventions", conventions, CONVENTIONS)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=1)
    trials = check_int("trials", trials, low=1)
    record = check_choice("record", record, ("all", "final"))
    mech = mechanism.resolved(conventions)
    policy = check_policy(policy).resolve(mech, conventions, n0=n0)
    levels = mech.levels
    levels.check_horizon(T)
    cells = tuple(behaviour.shape)
    L = levels.count
    batch = cells + (L, trials)
    check_record_size(T, cells=int(np.prod(cells, dtype=np.int64)), levels=L, trials=trials)
    limit = mech.max_population
    if limit is not None:
        for name, value in (("n0", n0), ("cap", policy.cap)):
            if value is not None and value > limit:
                raise ValueError(f"{name}={value}: {type(mech).__name__} draws numbers for every record of a "
                                 f"round, so a population above {limit:.0e} does not fit in memory; use "
                                 f"{name} <= {limit:.0e}")
    common_numbers = check_flag("common_numbers", common_numbers)
    root = cell_keys(seed, behaviour)
    if not common_numbers:
        root = _level_keys(root, levels)                                                # cells + (L,)
    trial_keys = keyed.Key(root.a[..., None], root.b[..., None]).child(np.arange(trials))  # cells [+ (L,)] + (K,)

    compiled = _compiled_parts(mech, behaviour)
    if compiled is not None:
        population, sq_error, leaked_all, alive, details = _run_compiled(
            compiled, mech, behaviour, levels, root, cells, L, trials, T, n0, policy, record, common_numbers)
        mech_state = None
    else:
        population, sq_error, leaked_all, alive, details, mech_state = _run_rounds(
            mech, behaviour, levels, trial_keys, batch, T, n0, policy, record)
    policy.score_stopped(sq_error, alive, mech, levels)
    shape = cells + levels.shape + (trials,)
    population = population.reshape(shape + (T + 1,))
    sq_error = sq_error.reshape(shape + (T,))
    leaked_all = leaked_all.reshape(shape + (T,))
    alive = alive.reshape(shape + (T,))
    details = {k: v.reshape(shape + (T,)) for k, v in details.items()}
    return SimulationRun(population=population, sq_error=sq_error, leaked=leaked_all, alive=alive,
                         details=details, mechanism=mech, behaviour=behaviour, level=levels.describe(),
                         T=T, n0=n0, trials=trials, policy=policy, conventions=conventions, seed=seed,
                         method=getattr(mech, "draw_method", "engine"),
                         mechanism_state=None if mech_state is None else
                         mech_state.reshape(shape + np.shape(mech_state)[len(batch):]))


def _compiled_parts(mech, behaviour):
    """The compiled draw and step of a stateless mechanism and a behaviour, or None if either lacks one."""
    if mech.stateful:
        return None
    draw = mech.kernel_draw()
    step = behaviour.kernel_step() if draw is not None else None
    if draw is None or step is None or type(behaviour).remaining is not Behaviour.remaining:
        return None             # the compiled loop's stop reads the population
    return draw, step


def _purpose_hashes(names):
    """The two hashes of each stream purpose name (the words :meth:`keyed.Key.child` mixes in)."""
    return np.array([keyed.purpose_hashes(name) for name in names], dtype=np.uint64).reshape(-1, 2)


def _level_keys(root, levels):
    """One root key per (cell, level) when levels draw independent numbers: a grid's level keyed by its
    value (the same numbers in any grid), a schedule by its row; per-cell levels need nothing more."""
    if isinstance(levels.given, PerCell):
        return keyed.Key(root.a[..., None], root.b[..., None])
    if levels.per_round:
        words = np.arange(levels.count, dtype=np.uint64)
    else:
        words = np.array([keyed.coordinate_key(float(v)) for v in levels.values], dtype=np.uint64)
    return keyed.Key(root.a[..., None], root.b[..., None]).child("level").child(words)


def _run_compiled(compiled, mech, behaviour, levels, root, cells, L, trials, T, n0, policy, record,
                  common_numbers=True):
    """The T rounds of every (cell, level, trial) in one call of :func:`perfpriv._kernels.rounds.run`
    (``common_numbers=False``, ``root`` of shape cells + (L,): each (cell, level) a cell of its own)."""
    (mech_kind, mech_params), (beh_kind, beh_params) = compiled
    n_cells = int(np.prod(cells, dtype=np.int64))
    if levels.per_round:                        # (L, T): one row of levels per round
        values = levels.values.T[:, None, :]
    elif isinstance(levels.given, PerCell):     # cells + (1,): one level per cell
        values = levels.values.reshape(1, n_cells, 1)
    else:                                       # (L,)
        values = levels.values.reshape(1, 1, L)
    beh_params = np.ascontiguousarray(beh_params, dtype=np.float64).reshape(n_cells, -1)
    n_levels = L
    if not common_numbers and not isinstance(levels.given, PerCell):
        values = np.broadcast_to(values[:, None, 0, :], (values.shape[0], n_cells, L)).reshape(-1, n_cells * L, 1)
        beh_params = np.repeat(beh_params, L, axis=0)
        n_cells, n_levels = n_cells * L, 1
    level_table = np.ascontiguousarray(mech.kernel_levels(values), dtype=np.float64)
    cost_table = np.zeros(values.shape)
    if behaviour.uses_cost:
        cost = mech.privacy_cost(values)
        if cost is None:
            raise ValueError(f"{type(behaviour).__name__} needs a mechanism that reports its privacy cost per round")
        cost_table[...] = cost
    init_state = np.ascontiguousarray(behaviour.initial_state(n0, (), T), dtype=np.float64).reshape(-1)
    n_elements = n_cells * n_levels * trials
    names = _mechanisms.DETAILS[mech_kind]
    population = np.empty((n_elements, T + 1), dtype=np.int64)
    sq_error = np.zeros((n_elements, T))
    leaked = np.zeros((n_elements, T), dtype=np.int64)
    alive = np.zeros((n_elements, T), dtype=bool)
    details = np.zeros((n_elements, T, len(names)))
    # writable copies: a read-only array would be another argument type, compiled a second time
    cell_a = np.array(root.a, dtype=np.uint64).reshape(-1)
    cell_b = np.array(root.b, dtype=np.uint64).reshape(-1)
    if cell_a.size != n_cells:     # one key for all cells (a behaviour without cell axes)
        cell_a, cell_b = np.broadcast_to(cell_a, (n_cells,)).copy(), np.broadcast_to(cell_b, (n_cells,)).copy()
    # one (cell, trial) group: the parallel loop would only wait for its idle threads
    loop = _rounds.run if n_cells * trials > 1 else _rounds.run_serial
    loop(mech_kind, np.ascontiguousarray(mech_params, dtype=np.float64), level_table,
                _purpose_hashes(_mechanisms.PURPOSES[mech_kind]), beh_kind, beh_params,
                _purpose_hashes(_behaviours.PURPOSES[beh_kind]), init_state, cost_table, cell_a, cell_b, n_levels,
                trials, T, n0,
                -1 if policy.cap is None else policy.cap, policy.floor, policy.stop, record == "all",
                population, sq_error, leaked, alive, details)
    batch = cells + (L, trials)
    return (population.reshape(batch + (T + 1,)), sq_error.reshape(batch + (T,)), leaked.reshape(batch + (T,)),
            alive.reshape(batch + (T,)), {name: details[..., j].reshape(batch + (T,)) for j, name in enumerate(names)})


def _run_rounds(mech, behaviour, levels, trial_keys, batch, T, n0, policy, record):
    """The T rounds in Python (stateful mechanisms, no compiled draw); the behaviour's step is its
    compiled one all the same, so a run's populations are the same numbers in either loop."""
    state = behaviour.initial_state(n0, batch, T)
    mech_state = mech.initial_state(batch) if mech.stateful else None
    if mech_state is not None:
        mech_state = np.asarray(mech_state)
        if mech_state.shape[:len(batch)] != batch:
            raise ValueError(f"{type(mech).__name__}.initial_state({batch}) returned a state of shape "
                             f"{mech_state.shape}; it must start with the batch shape {batch}")
    n = behaviour.population(state)
    population = np.empty(batch + (T + 1,), dtype=np.int64)
    population[..., 0] = n
    sq_error = np.zeros(batch + (T,))
    leaked_all = np.zeros(batch + (T,), dtype=np.int64)
    alive = np.zeros(batch + (T,), dtype=bool)
    details: dict = {}
    live = behaviour.remaining(state) > policy.stop
    cost = None
    for t in range(1, T + 1):
        rk = trial_keys.child(np.int64(t))                          # cells + (K,), or cells + (L, K)
        # the levels' axis: shared keys (size 1) or, with independent numbers per level, the keys as they are
        rk_batch = rk if rk.a.ndim == len(batch) else keyed.Key(rk.a[..., None, :], rk.b[..., None, :])
        level = levels.at(t)[..., None]                            # (L, 1), or cells + (1, 1)
        alive[..., t - 1] = live
        need_error = record == "all" or t == T
        if mech_state is None:
            out = mech.draw_round(n, level, rk_batch, live, t, need_error=need_error)
        else:   # a stateful mechanism: its state advances with the run and freezes once a trial stops
            out, new_state = mech.advance(mech_state, n, level, rk_batch, live, t, need_error=need_error)
            new_state = np.asarray(new_state)
            if new_state.shape != mech_state.shape:
                raise ValueError(f"{type(mech).__name__}.advance returned a state of shape {new_state.shape}; "
                                 f"expected {mech_state.shape} (the state of every (cell, level, trial))")
            frozen = live.reshape(live.shape + (1,) * (mech_state.ndim - live.ndim))
            mech_state = np.where(frozen, new_state, mech_state)
        if need_error:  # record="final": earlier entries stay 0 whatever the mechanism computed
            sq_error[..., t - 1] = np.where(live, out.sq_error, 0.0)
        leaked = np.where(live, out.leaked, 0)
        leaked_all[..., t - 1] = leaked
        for name, value in out.details.items():
            if name not in details:
                details[name] = np.zeros(batch + (T,), dtype=np.asarray(value).dtype)
            details[name][..., t - 1] = value
        if cost is None or levels.per_round:    # constant levels: one cost for the whole run
            cost = mech.privacy_cost(level)
        context = {"t": t, "T": T, "level": level, "cost": cost, "floor": policy.floor, "cap": policy.cap}
        new = behaviour.bound(behaviour.step(state, leaked, rk_batch, context), policy.floor, policy.cap,
                              rk_batch)
        state = np.where(live.reshape(live.shape + (1,) * (state.ndim - live.ndim)), new, state)
        n = behaviour.population(state)
        population[..., t] = n
        live = live & (behaviour.remaining(state) > policy.stop)
    return population, sq_error, leaked_all, alive, details, mech_state


#: Largest number of (cell, level, trial, round) entries one call may record (memory guard).
MAX_RECORDED = 200_000_000


def check_record_size(T, **sizes):
    """Refuse a run whose recorded arrays would not fit: (product of ``sizes``) × (T + 1) entries.

    Parameters
    ----------
    T : int
        Number of rounds.
    **sizes : int
        The other axes of the run, by their parameter names (e.g. ``trials=30, levels=10``).

    Raises
    ------
    ValueError
        Naming ``T`` and every size, when the run would record more than :data:`MAX_RECORDED` entries.

    Examples
    --------
    >>> check_record_size(100, trials=30)
    >>> check_record_size(10**12, trials=1)
    Traceback (most recent call last):
    ...
    ValueError: T=1000000000000, trials=1: this call would record 1e+12 (cell, level, trial, round) entries (> 2e+08, about 30734 GiB): simulate fewer trials, levels, cells or rounds per call
    """
    T = check_int("T", T, low=1)
    sizes = {name: check_int(name, value, low=0) for name, value in sizes.items()}
    entries = float(np.prod([float(v) for v in sizes.values()], dtype=np.float64)) * (float(T) + 1.0)
    if entries > MAX_RECORDED:
        given = ", ".join([f"T={T}"] + [f"{name}={value}" for name, value in sizes.items()])
        raise ValueError(f"{given}: this call would record {entries:.3g} (cell, level, trial, round) entries "
                         f"(> {MAX_RECORDED:.0e}, about {entries * 33 / 2**30:.0f} GiB): simulate fewer "
                         "trials, levels, cells or rounds per call")


# ------------------------------------------------------------ agent by agent
@dataclass(frozen=True, eq=False)
class AgentRound:
    """What a mechanism's round returns to the agent-by-agent reference (:meth:`Mechanism.agent_round`).

    Attributes
    ----------
    leaked : numpy.ndarray of bool, shape (n,)
        Whether each of the round's n records leaked (record j is user j's).
    sq_error : float
        The round's squared error (or loss) of the release.
    details : dict
        Further numbers of the round, by name (floats; e.g. ``estimate``, ``truth``).
    state : object
        The mechanism's state after the round (a stateful mechanism's deployed model); ``None`` if
        the mechanism carries none.
    """

    leaked: np.ndarray
    sq_error: float
    details: dict = field(default_factory=dict)
    state: Any = None


def _agent_step(agents, flags, model, cost, share, policy, rng):
    """The users' decisions of one round, one user ``[class, leaks, spent]`` at a time, then the cap and
    floor (:func:`simulate_agents`): the next users and the round's leak departures."""
    staying, recruits, departures = [], [], 0
    for agent, leaked in zip(agents, flags):
        stays = True
        if leaked:
            agent[1] += 1
            if agent[1] >= model.k and rng.random() < min(1.0, model.q[agent[0]] + model.kappa * share):
                stays = False
                departures += 1
        if model.counts_cost:
            agent[2] += cost
            stays = stays and agent[2] <= model.tolerance[agent[0]]
        if (not leaked or model.rule == "agnostic") and rng.random() < model.r:
            recruits.append([model.recruit_class(rng), 0, 0.0])
        if stays:
            staying.append(agent)
    if policy.cap is not None and len(staying) + len(recruits) > policy.cap:
        chosen = rng.choice(len(recruits), size=max(policy.cap - len(staying), 0), replace=False)
        recruits = [recruits[j] for j in sorted(chosen)]
    agents = staying + recruits
    while len(agents) < policy.floor:
        agents.append([model.recruit_class(rng), 0, 0.0])
    return agents, departures


def simulate_agents(mechanism, behaviour, *, T, n0, trials, policy=None, conventions="paper", seed=None):
    r"""The loop of :func:`simulate`, one explicit user at a time: the slow reference, for any model.

    The tests' oracle, written apart from the kernels and the behaviours' ``step``: round t draws the
    :math:`N_{t-1}` records one by one (:meth:`Mechanism.agent_round`), each user applies her rule
    (:class:`perfpriv.behaviour.AgentModel`, :meth:`perfpriv.behaviour.Behaviour.agent_model`) with her
    own class, leaks and spent privacy (:meth:`Mechanism.privacy_cost`), then the policy: recruits
    beyond the cap turned away at random, fresh users up to the floor, no release at or below ``stop``.
    One numpy Generator per trial (children of :func:`perfpriv.keyed.as_generator` of the seed): it
    agrees with :func:`simulate` in law, not number by number. A Python step per user and round: small
    ``n0``, ``cap`` and ``T``.

    Parameters
    ----------
    mechanism, behaviour, policy, conventions, T, n0, trials
        As in :func:`simulate` (``trials`` has no default), with one privacy level (a number or one
        :class:`Schedule`), a mechanism that implements :meth:`Mechanism.agent_round` and one cell.
    seed : None, int, SeedSequence or Generator

    Returns
    -------
    SimulationRun
        Without cell or level axes, ``method="agents"``.

    Examples
    --------
    >>> from perfpriv import bernoulli, behaviour
    >>> run = simulate_agents(bernoulli.RandomizedResponse(np.inf), behaviour.Memoryless(q=1.0, r=0.0),
    ...                       T=2, n0=10, trials=2, policy=Policy(floor=0), seed=0)
    >>> run.population.tolist()        # every answer is true (a leak) and every leaked user leaves
    [[10, 0, 0], [10, 0, 0]]
    """
    _check_parts(mechanism, behaviour)
    conventions = check_choice("conventions", conventions, CONVENTIONS)
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=1)
    trials = check_int("trials", trials, low=1)
    mech = mechanism.resolved(conventions)
    levels = mech.levels
    if levels.shape != () or isinstance(levels.given, PerCell):
        raise ValueError(f"{levels.name} must be one privacy level (a number or one Schedule) for "
                         f"simulate_agents; the mechanism holds a grid of {levels.count} levels")
    levels.check_horizon(T)
    model = behaviour.agent_model()
    pol = check_policy(policy).resolve(mech, conventions, n0=n0)
    _check_agent_run(T, trials=trials, n0=n0, cap=pol.cap, d=getattr(mech, "d", 1))
    population = np.zeros((trials, T + 1), dtype=np.int64)
    sq_error = np.zeros((trials, T))
    leaked = np.zeros((trials, T), dtype=np.int64)
    alive = np.zeros((trials, T), dtype=bool)
    details: dict = {}
    finals = []
    for i, rng in enumerate(keyed.as_generator(seed).spawn(trials)):
        agents = [[c, 0, 0.0] for c in model.initial_classes(n0)]
        state = mech.initial_state(())
        departed, previous = 0, n0
        population[i, 0] = n0
        for t in range(1, T + 1):
            n = len(agents)
            if n <= pol.stop:
                population[i, t] = n
                continue
            alive[i, t - 1] = True
            level = float(levels.at(t).reshape(-1)[0])
            out = mech.agent_round(n, level, rng, t=t, state=state)
            flags = np.asarray(out.leaked, dtype=bool)
            if flags.shape != (n,):
                raise ValueError(f"{type(mech).__name__}.agent_round returned leaked flags of shape {flags.shape}; "
                                 f"expected ({n},), one per record")
            state = out.state
            sq_error[i, t - 1] = out.sq_error
            leaked[i, t - 1] = int(flags.sum())
            for name, value in out.details.items():
                details.setdefault(name, np.zeros((trials, T)))[i, t - 1] = value
            cost = 0.0
            if model.counts_cost:
                cost = mech.privacy_cost(level)
                if cost is None:
                    raise ValueError(f"behaviour: {type(behaviour).__name__} needs a mechanism that reports its "
                                     "privacy cost per round")
                cost = float(cost)
            share = departed / previous if previous > 0 else 0.0
            agents, departed = _agent_step(agents, flags, model, cost, share, pol, rng)
            previous = n
            population[i, t] = len(agents)
        finals.append(state)
    pol.score_stopped(sq_error[None], alive[None], mech, levels)
    return SimulationRun(population=population, sq_error=sq_error, leaked=leaked, alive=alive, details=details,
                         mechanism=mech, behaviour=behaviour, level=levels.describe(), T=T, n0=n0, trials=trials,
                         policy=pol, conventions=conventions, seed=seed, method="agents",
                         mechanism_state=None if finals[0] is None else np.stack(finals))


# -------------------------------------------------------------- mean field
#: The largest starting population an agent-by-agent reference takes: it loops over its agents in Python
#: (about a microsecond each, every round), so 10**7 agents are already minutes a round.
MAX_AGENTS = 10**7


def _check_agent_run(T, *, trials, n0, cap=None, **per_agent):
    """The sizes of an agent-by-agent run, checked by name: ``trials x (T + 1)`` recorded entries, a starting
    population (and a cap it can reach within T rounds) of at most :data:`MAX_AGENTS` users, and a round whose
    agents' numbers (the largest reachable population times ``per_agent``, e.g. ``d=12``) fit in memory."""
    check_record_size(T, trials=trials)
    if n0 > MAX_AGENTS:
        raise ValueError(f"n0 must be at most {MAX_AGENTS} for an agent-by-agent reference (it loops over its "
                         f"agents in Python); got {n0}: use simulate")
    reachable = n0 * 2.0 ** min(T, 1100)
    if cap is not None and min(float(cap), reachable) > MAX_AGENTS:
        raise ValueError(f"cap must be at most {MAX_AGENTS} for an agent-by-agent reference when the population "
                         f"can reach it in T={T} rounds; got {cap:.0f}: use simulate")
    largest = min(float(cap), reachable) if cap is not None else float(n0)
    what = " x ".join(["the largest reachable population"] + list(per_agent))
    check_array_size(f"the agents of a round ({what})", n0=largest, **per_agent)


def mean_field(mechanism, behaviour, *, T, n0, cap=20000, floor=1, rounds="algorithm", conventions="paper",
               leak_probability=None, gradient=False):
    """The mean-field recursion of the loop: expected population, error and leak probability.

    :math:`N_0 = n0` and, for t = 1..T, with :math:`p_t = p(N_{t-1}, \\ell_t)` the mechanism's leak
    probability of a user in a round of :math:`N_{t-1}` users, :math:`N_t` is the behaviour's expected
    next state given :math:`p_t`, clipped to ``[floor, cap]``. The round's expected error is
    :meth:`Mechanism.expected_error` at :math:`N_{t-1}` (``rounds="algorithm"``: Algorithm 1's
    indexing, as in :func:`simulate`) or at :math:`N_t` (``rounds="paper"``: the paper's Lemma 9 proof).

    Parameters
    ----------
    mechanism, behaviour, T, conventions
        As in :func:`simulate`.
    n0 : float
        :math:`N_0 \\ge 1`, a real number.
    cap, floor : float or None
        Population clip; ``None``: none (an uncapped population may reach ``inf``, a dying one
        0 -- then its error is ``inf``).
    rounds : {"algorithm", "paper"}
    leak_probability : callable, optional
        A stand-in for the mechanism's p(n, level) (e.g. a fast surrogate), the only replaceable
        part; with ``gradient=True`` it returns ``(p, dp/dlog n, dp/dlog level)``.
    gradient : bool
        Also return d cumulative_error / d log level_t for every round (an adjoint pass; one-type
        behaviours only).

    Returns
    -------
    MeanFieldPath

    Examples
    --------
    >>> from perfpriv import bernoulli, behaviour
    >>> path = mean_field(bernoulli.RandomizedResponse([0.5, 1.0]), behaviour.Memoryless(q=0.3, r=0.6),
    ...                   T=2, n0=100)
    >>> path.population.round(2).tolist()        # C = 1 + (r - q)/2 - beta (q + r): 1.0398 and 0.9420
    [[100.0, 103.98, 108.12], [100.0, 94.2, 88.75]]
    """
    _check_parts(mechanism, behaviour)
    conventions = check_choice("conventions", conventions, CONVENTIONS)
    T = check_int("T", T, low=1)
    n0 = check_real("n0", n0, low=1, scalar=True)
    rounds = check_choice("rounds", rounds, _ROUNDS)
    if cap is not None:
        cap = check_real("cap", cap, low=1, scalar=True, allow_inf=True)
        check_order("n0", n0, "cap", cap)
    if floor is not None:
        floor = check_real("floor", floor, low=0, scalar=True)
        check_order("floor", floor, "n0", n0)
    if leak_probability is not None and not callable(leak_probability):
        raise TypeError(f"leak_probability must be a callable p(n, level); got {leak_probability!r:.60}")
    gradient = check_flag("gradient", gradient)
    mech = mechanism.resolved(conventions)
    if mech.stateful:
        raise ValueError(f"{type(mech).__name__} carries a state across rounds; the mean field does not "
                         "follow mechanism states (simulate it with perfpriv.engine.simulate)")
    levels = mech.levels
    levels.check_horizon(T)
    if gradient and behaviour.types != 1:
        raise ValueError("gradient=True needs a one-type behaviour (e.g. Memoryless)")
    cells = tuple(behaviour.shape)
    batch = cells + (levels.count,)
    check_record_size(T, cells=int(np.prod(cells, dtype=np.int64)), levels=levels.count)
    state = behaviour.mean_field_state(n0, batch, T)
    N = np.empty(batch + (T + 1,))
    N[..., 0] = behaviour.population(state)
    P = np.empty(batch + (T,))
    E = np.empty(batch + (T,))
    grads = {}
    constant = not levels.per_round and leak_probability is None and not gradient
    for t in range(1, T + 1):
        n_prev = N[..., t - 1]
        level = np.broadcast_to(levels.at(t), batch)
        if gradient:
            lp = leak_probability or mech.leak_probability_grad
            p, dp_dlogn, dp_dlogl = (np.asarray(x, float) for x in lp(n_prev, level))
            grads.setdefault("p", []).append((dp_dlogn, dp_dlogl))
        else:
            p = np.asarray((leak_probability or mech.leak_probability)(n_prev, level), float)
        p = np.broadcast_to(np.clip(p, 0.0, 1.0), batch)
        P[..., t - 1] = p
        context = {"t": t, "T": T, "level": level, "cost": mech.privacy_cost(level), "floor": floor, "cap": cap}
        previous = state
        raw = behaviour.mean_field_step(state, p, context)
        state = behaviour.mean_field_bound(raw, floor, cap)
        N[..., t] = behaviour.population(state)
        if gradient:
            grads.setdefault("inside", []).append(behaviour.population(raw) == N[..., t])
        if constant and np.array_equal(state, previous):
            # a fixed point of the whole state (cap, floor, C = 1): the rest of the path repeats it
            # (an unchanged population alone is not one when the behaviour has several types)
            N[..., t + 1:] = N[..., t][..., None]
            P[..., t:] = p[..., None]
            break
    used = N[..., :-1] if rounds == "algorithm" else N[..., 1:]
    level_rows = levels.values if levels.per_round else levels.values[..., None]
    level_b = np.broadcast_to(level_rows, batch + (T,))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        E[...] = mech.expected_error(used, level_b)
    total = E.sum(axis=-1)
    grad = None
    if gradient:
        grad = _adjoint(mech, behaviour, N, P, grads, level_b, rounds)
    shape = cells + levels.shape
    out = lambda x, extra: x.reshape(shape + extra)  # noqa: E731
    cumulative = total.reshape(shape)
    return MeanFieldPath(population=out(N, (T + 1,)), sq_error=out(E, (T,)), leak_probability=out(P, (T,)),
                         cumulative_error=float(cumulative) if cumulative.ndim == 0 else cumulative,
                         gradient=None if grad is None else out(grad, (T,)), mechanism=mech,
                         behaviour=behaviour, level=levels.describe(), T=T, n0=n0, cap=cap, floor=floor,
                         rounds=rounds, conventions=conventions)


def _adjoint(mech, behaviour, N, P, grads, level_b, rounds):
    r"""The derivative of the sum of errors J in :math:`\log ℓ_t` by one backward pass through the recursion.

    Forward :math:`N_t = \operatorname{bound}(N_{t-1} g(p(N_{t-1}, ℓ_t)))` (the one-type step), error
    :math:`e(N_s, ℓ_t)`, s = t-1 (``"algorithm"``) or t (``"paper"``). With :math:`u_t = \log ℓ_t` and
    :math:`λ_t = dJ/dN_t` (:math:`λ_T` from the last error only):
    :math:`dJ/du_t = ∂e_t/∂u_t + λ_t\, ∂N_t/∂u_t`, :math:`λ_{t-1} = ∂e/∂N_{t-1} + λ_t\, ∂N_t/∂N_{t-1}`;
    :math:`∂N_t/∂(\cdot) = 0` where the cap or floor binds.
    """
    T = P.shape[-1]
    grad = np.zeros(P.shape)
    lam = np.zeros(P.shape[:-1])
    used_index = (lambda t: t - 1) if rounds == "algorithm" else (lambda t: t)
    e_parts = []
    for t in range(1, T + 1):
        n_used = N[..., used_index(t)]
        e, de_dlogn, de_dlogl = (np.asarray(x, float) for x in mech.expected_error_grad(n_used, level_b[..., t - 1]))
        e_parts.append((de_dlogn, de_dlogl, n_used))
    for t in range(T, 0, -1):
        de_dlogn, de_dlogl, n_used = e_parts[t - 1]
        n_prev = N[..., t - 1]
        dp_dlogn, dp_dlogl = grads["p"][t - 1]
        inside = grads["inside"][t - 1]
        dn_dn, dn_dp = behaviour.mean_field_step_grad(n_prev, P[..., t - 1])
        with np.errstate(invalid="ignore", divide="ignore"):
            dNt_du = np.where(inside, dn_dp * dp_dlogl, 0.0)
            dNt_dNprev = np.where(inside, dn_dn + dn_dp * dp_dlogn / np.where(n_prev > 0, n_prev, 1.0), 0.0)
            de_dN = de_dlogn / np.where(n_used > 0, n_used, 1.0)
        if rounds == "paper":
            # the error of round t depends on N_t: it enters λ_t before propagating
            lam = lam + de_dN
            grad[..., t - 1] = de_dlogl + lam * dNt_du
            lam = lam * dNt_dNprev
        else:
            grad[..., t - 1] = de_dlogl + lam * dNt_du
            lam = de_dN + lam * dNt_dNprev
    return grad
