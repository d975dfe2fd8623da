"""Chapter 08's experiments: does a finite privacy budget still beat no privacy under richer feedback?

The paper's users (:class:`perfpriv.behaviour.Memoryless`) have no memory,
all react alike, read leaks rather than guarantees and ignore one another.
This module runs the paper's questions -- the survival threshold, the best
privacy level, whether it beats no privacy -- for the richer users of
:mod:`perfpriv.behaviour`, with both mechanisms, from theory (the engine's
mean field) and from simulation. It computes data only (no matplotlib): the
figures are in :mod:`perfpriv.plots`, the explorer in :mod:`perfpriv.widgets`.

* :class:`Family` -- a behaviour as a function of the map's coordinates
  (q, r), with its own parameter (memory k, spread of sensitivities,
  tolerance, contagion strength κ) and its neutral setting (the paper's users);
* :func:`critical_epsilon` -- the survival threshold :math:`ε_c` under a
  behaviour, from its long-run growth factor (the Gaussian model's
  :math:`γ_c` under any behaviour is :func:`perfpriv.dynamics.exact_critical_gamma`);
* :func:`threshold_table` -- those thresholds next to the paper's over (q, r);
* :func:`trajectories` -- population paths under a behaviour and under the
  paper's users, theory next to simulation;
* :func:`epsilon_map`, :func:`gamma_map` -- ε* (randomized response) and γ*
  (Gaussian mechanism) over a (q, r) grid, theory and simulation, and where
  a finite level beats no privacy (:class:`FeedbackMap`);
* :func:`summary` -- the chapter's answer across behaviours (:class:`Summary`);
* :func:`threshold_curve` -- :math:`ε_c` as a behaviour's parameter varies;
* :func:`compare_gaussian` -- the explorer's experiment: one behaviour
  against the paper's users in the Gaussian model, live.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import bernoulli, dynamics, engine, gaussian, optimize
from ._bisect import bisect_log_boundary
from ._stats import standard_error
from ._validate import check_choice, check_int, check_probability, check_real
from .behaviour import BudgetAware, Contagion, Heterogeneous, LeakCount, Memoryless
from .sweep import check_execution

__all__ = [
    "FAMILIES",
    "Family",
    "family",
    "two_classes",
    "critical_epsilon",
    "ThresholdTable",
    "threshold_table",
    "Trajectories",
    "trajectories",
    "FeedbackMap",
    "epsilon_map",
    "gamma_map",
    "Summary",
    "summary",
    "threshold_curve",
    "GaussianComparison",
    "compare_gaussian",
]

#: The behaviours of the chapter, by name: the paper's users and the four richer ones.
FAMILIES = ("paper", "memory", "heterogeneous", "budget", "contagion")

#: The parameter of each family, its neutral value (the paper's users) and its meaning.
#: Search interval of the Gaussian thresholds γ_c of :func:`threshold_table`.
_GAMMA_BRACKET = (1e-4, 1e4)

_PARAMETERS = {
    "paper": (None, None, ""),
    "memory": ("k", 1, "users tolerate k − 1 leaks"),
    "heterogeneous": ("spread", 0.0, "two equal classes with q ± spread·min(q, 1 − q)"),
    "budget": ("tolerance", math.inf, "users leave once their spent privacy exceeds the tolerance"),
    "contagion": ("kappa", 0.0, "q_t = min(1, q + κ δ_{t−1})"),
}

#: The Gaussian model's stand-in for "no privacy": :math:`γ = 10^{-3}` (as in chapters 06 and 07).
NO_PRIVACY_GAMMA = 1e-3


def two_classes(*, q, spread):
    """Sensitivities of two equal classes around q: q ± spread · min(q, 1 − q), shape ``q.shape + (2,)``.

    The mean sensitivity stays q and both classes stay in [0, 1]; spread 0
    gives two identical classes (the paper's users), spread 1 the widest
    pair (one class never leaves when q <= 1/2).

    Examples
    --------
    >>> two_classes(q=0.3, spread=0.5).round(3).tolist()
    [0.45, 0.15]
    """
    q = np.asarray(check_probability("q", q), float)
    spread = check_real("spread", spread, low=0, high=1, scalar=True)
    half = spread * np.minimum(q, 1.0 - q)
    return np.stack([q + half, q - half], axis=-1)


@dataclass(frozen=True)
class Family:
    """A behaviour as a function of the (q, r) coordinates of a map, with one parameter of its own.

    Calling it with arrays q and r (one shape) gives the behaviour of those
    cells (``family("memory", 3)(Q, R)``: the users of a whole map, which
    the searches of :mod:`perfpriv.optimize` take as ``users``):

    * ``"paper"``: :class:`~perfpriv.behaviour.Memoryless` (q, r);
    * ``"memory"``: :class:`~perfpriv.behaviour.LeakCount` with ``k`` (q, r);
    * ``"heterogeneous"``: :class:`~perfpriv.behaviour.Heterogeneous`, two
      classes of equal weight with sensitivities :func:`two_classes` (mean q);
    * ``"budget"``: :class:`~perfpriv.behaviour.BudgetAware` with
      ``tolerance`` (in the mechanism's unit: ε or ρ), reacting to leaks with
      the map's q on top;
    * ``"contagion"``: :class:`~perfpriv.behaviour.Contagion` with ``kappa``.

    Attributes
    ----------
    name : str
        One of :data:`FAMILIES`.
    parameter : float or None
        The family's parameter (``None`` for ``"paper"``).
    rule : {"leak", "agnostic"}
        Who recruits.
    """

    name: str
    parameter: Any = None
    rule: str = "leak"

    def __post_init__(self):
        check_choice("name (the family)", self.name, FAMILIES)
        check_choice("rule", self.rule, ("leak", "agnostic"))
        key, neutral, _ = _PARAMETERS[self.name]
        if self.name == "paper":
            if self.parameter is not None:
                raise ValueError(f"the paper's users take no parameter; got {self.parameter!r}")
            return
        if self.parameter is None:
            raise ValueError(f"family {self.name!r} needs its parameter {key}")
        _check_parameter(self.name, self.parameter, f"parameter ({key})")

    def __call__(self, q, r):
        """The behaviour of the cells (q, r) (arrays of one shape, or numbers).

        ``q`` and ``r`` are checked (probabilities, no booleans) before any conversion, so that every
        function of this module that takes a cell refuses ``q=True`` instead of reading it as q = 1.
        """
        q = np.asarray(check_probability("q", q), float)
        r = check_probability("r", r)
        if self.name == "paper":
            return Memoryless(q=q, r=r, rule=self.rule)
        if self.name == "memory":
            return LeakCount(k=int(self.parameter), q=q, r=r, rule=self.rule)
        if self.name == "heterogeneous":
            return Heterogeneous(q=two_classes(q=q, spread=self.parameter), weights=[0.5, 0.5], r=r, rule=self.rule)
        if self.name == "budget":
            return BudgetAware(tolerance=float(self.parameter), q=q, r=r, rule=self.rule)
        return Contagion(q=q, r=r, kappa=float(self.parameter), rule=self.rule)

    @property
    def symbol(self) -> str:
        """Name of the parameter (``"k"``, ``"spread"``, ``"tolerance"``, ``"kappa"``; empty for the paper's)."""
        return _PARAMETERS[self.name][0] or ""

    @property
    def label(self) -> str:
        """Short description, e.g. ``"memory (k = 3)"``."""
        if self.name == "paper":
            return "paper (memoryless)"
        value = self.parameter
        text = f"{value:g}" if isinstance(value, (int, float, np.floating, np.integer)) else str(value)
        sym = {"kappa": "κ", "tolerance": "b"}.get(self.symbol, self.symbol)
        return f"{self.name} ({sym} = {text})"

    @property
    def neutral(self) -> "Family":
        """The paper's users (the family at its neutral setting gives the same numbers)."""
        return Family("paper", rule=self.rule)

    @property
    def uses_cost(self) -> bool:
        """Whether the users count the mechanism's privacy cost (the budget family)."""
        return self.name == "budget"

    def __repr__(self) -> str:
        return f"Family({self.label!r}, rule={self.rule!r})"


def _check_parameter(name, value, label):
    """Check the parameter ``value`` of the family ``name``; ``label`` names it in the message."""
    if name == "memory":
        check_int(label, value, low=1)
    elif name == "heterogeneous":
        check_real(label, value, low=0, high=1, scalar=True)
    elif name == "budget":
        check_real(label, value, low=0, low_open=True, allow_inf=True, scalar=True)
    else:
        check_real(label, value, low=0, scalar=True)


def family(name, parameter=None, *, rule="leak") -> Family:
    """The family ``name`` with ``parameter`` (see :class:`Family`).

    Examples
    --------
    >>> f = family("memory", 3)
    >>> f.label, type(f(0.3, 0.6)).__name__
    ('memory (k = 3)', 'LeakCount')
    """
    return Family(name, parameter, rule)


def _as_family(users):
    if not isinstance(users, Family):
        raise TypeError(f"users must be a perfpriv.feedback.Family (e.g. family('memory', 3)); got {users!r:.60}")
    return users


# ------------------------------------------------------------------ thresholds
def critical_epsilon(users, *, q, r):
    r""":math:`ε_c` under a behaviour: randomized response keeps the population from shrinking for :math:`ε \le ε_c`.

    The long-run growth factor at leak probability p = 1/2 + β(ε) is at
    least 1 exactly up to :math:`ε_c` (:meth:`perfpriv.behaviour.Behaviour.critical_leak_probability`):
    :math:`ε_c = 2` artanh(2 :math:`β_c`) with :math:`β_c = \max(0, p_c - 1/2)`. For budget-aware
    users the threshold also depends on the cost ε of a round (their
    lifetime ⌊b/ε⌋ + 1 shrinks as ε grows) and is found by bisection on
    the reproduction number. ``inf``: survival at every ε, including no
    privacy; 0: at none.

    Parameters
    ----------
    users : Family
    q, r : float or array_like
        Leaving and recruiting probabilities (cells).

    Returns
    -------
    float or numpy.ndarray

    Examples
    --------
    >>> round(critical_epsilon(family("paper"), q=0.3, r=0.6), 4)      # Theorem 1
    0.6931
    >>> round(critical_epsilon(family("memory", 3), q=0.3, r=0.6), 4)  # the paper's with q/(1 + 2q)
    1.1632
    """
    users = _as_family(users)
    beh = users(q, r)
    shape = tuple(beh.shape)
    if not users.uses_cost:
        pc = np.asarray(beh.critical_leak_probability(), float)
        return _out(bernoulli.epsilon_from_beta(np.clip(pc - 0.5, 0.0, 0.5)))

    def survives(eps):
        p = 0.5 + np.asarray(bernoulli.beta_from_epsilon(eps), float)
        return np.asarray(beh.reproduction_number(p, cost=eps), float) >= 1.0

    lo, hi = 1e-8, 1e4
    eps = bisect_log_boundary(survives, lo, hi, shape, increasing=False)
    eps = np.where(survives(np.full(shape, np.inf)), np.inf, np.where(survives(np.full(shape, lo)), eps, 0.0))
    return _out(eps)


@dataclass(frozen=True, eq=False)
class ThresholdTable:
    """Survival thresholds of a behaviour next to the paper's, over (q, r) cells.

    Attributes
    ----------
    family : Family
    q, r : numpy.ndarray
        The cells (one shape).
    epsilon, epsilon_paper : numpy.ndarray
        :math:`ε_c` under the behaviour and under the paper's users (Theorem 1).
    gamma, gamma_paper : numpy.ndarray
        :math:`γ_c` at population ``settings["n"]`` under both (NaN when not computed).
    settings : dict
    """

    family: Family
    q: np.ndarray
    r: np.ndarray
    epsilon: np.ndarray
    epsilon_paper: np.ndarray
    gamma: np.ndarray
    gamma_paper: np.ndarray
    settings: dict

    def __repr__(self) -> str:
        return f"ThresholdTable({self.family.label!r}, cells={self.q.size})"


def threshold_table(users, *, q, r, gaussian_users=None, tau=0.02, n=1000, d=12, R=10.0, statistic="paper"):
    """:math:`ε_c` and :math:`γ_c` of a behaviour next to the paper's, for (q, r) cells.

    Parameters
    ----------
    users : Family
        The behaviour for randomized response.
    q, r : array_like
        Cells (broadcast to one shape).
    gaussian_users : Family, optional
        The behaviour for the Gaussian mechanism when it differs (a budget
        family's tolerance is in ρ there); default ``users``. ``False``: skip :math:`γ_c`.
    tau, n, d, R, statistic
        The Gaussian model and population of :math:`γ_c`.

    Returns
    -------
    ThresholdTable
    """
    users = _as_family(users)
    q, r = np.broadcast_arrays(np.asarray(check_probability("q", q), float),
                               np.asarray(check_probability("r", r), float))
    eps = np.asarray(critical_epsilon(users, q=q, r=r), float)
    eps0 = np.asarray(critical_epsilon(users.neutral, q=q, r=r), float)
    if gaussian_users is False:
        gam = gam0 = np.full(q.shape, np.nan)
    else:
        gu = users if gaussian_users is None else _as_family(gaussian_users)
        mech = gaussian.GaussianMean(tau=tau, d=d, R=R, statistic=statistic)
        gam = np.asarray(dynamics.exact_critical_gamma(mech, gu(q, r), n=n, bracket=_GAMMA_BRACKET), float)
        gam0 = np.asarray(dynamics.exact_critical_gamma(mech, gu.neutral(q, r), n=n, bracket=_GAMMA_BRACKET), float)
    return ThresholdTable(users, q, r, eps, eps0, gam, gam0, dict(tau=tau, n=n, d=d, R=R, statistic=statistic))


# ------------------------------------------------------------------ trajectories
@dataclass(frozen=True, eq=False)
class Trajectories:
    """Population paths under a behaviour and under the paper's users, theory next to simulation.

    Attributes
    ----------
    family : Family
    levels : numpy.ndarray
        The privacy levels (ε or γ), shape (L,).
    mean_field, mean_field_paper : numpy.ndarray, shape (L, T + 1)
        Mean-field population :math:`N_t`.
    simulated, simulated_paper : numpy.ndarray, shape (L, T + 1)
        Mean simulated population.
    se, se_paper : numpy.ndarray, shape (L, T + 1)
        Its standard error over the trials.
    leaks, leaks_paper : numpy.ndarray, shape (L, T)
        Mean simulated number of leaked users per round.
    leak_probability, leak_probability_paper : numpy.ndarray, shape (L, T)
        The mean field's :math:`p_t`.
    mechanism : str
        ``"bernoulli"`` or ``"gaussian"``.
    settings : dict
    """

    family: Family
    levels: np.ndarray
    mean_field: np.ndarray
    mean_field_paper: np.ndarray
    simulated: np.ndarray
    simulated_paper: np.ndarray
    se: np.ndarray
    se_paper: np.ndarray
    leaks: np.ndarray
    leaks_paper: np.ndarray
    leak_probability: np.ndarray
    leak_probability_paper: np.ndarray
    mechanism: str
    settings: dict

    def _departures_per_leak(self, N, K, paper):
        r = float(self.settings["r"])
        rule = self.family.rule
        recruits = r * (N[..., :-1] - K) if rule == "leak" else r * N[..., :-1]
        departures = N[..., :-1] + recruits - N[..., 1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            return departures / K

    @property
    def effective_q(self):
        """Departures per leaked user in each round, (mean field, simulation), each of shape (L, T).

        Every behaviour's realized growth is the paper's with q replaced by
        this :math:`q_t`: :math:`N_t = N_{t-1} + ρ\\text{-recruits} - q_t K_t`. For the paper's users
        :math:`q_t = q`; it drifts to :math:`q s_{k-1}` (memory), to the mean sensitivity
        :math:`Σ s_j q_j` (heterogeneous users), to q* (contagion); budget-aware
        users add their budget departures. Exact without cap and floor (the
        default of :func:`trajectories`).
        """
        mf_leaks = self.leak_probability * self.mean_field[..., :-1]
        return (self._departures_per_leak(self.mean_field, mf_leaks, False),
                self._departures_per_leak(self.simulated, self.leaks, False))

    @property
    def long_run_q(self) -> np.ndarray:
        """The limit of :attr:`effective_q` per level, from the behaviour's theory: (1 + ρ(p) − λ(p))/p.

        λ is the long-run growth factor (:meth:`perfpriv.behaviour.Behaviour.growth_factor`)
        at the leak probability and cost of the level (for the Gaussian
        mechanism, p of the mean field's last round).
        """
        st = self.settings
        beh = self.family(st["q"], st["r"])
        p = self.leak_probability[..., -1]
        cost = _mechanism(self.mechanism, self.levels, st["options"]).privacy_cost(self.levels)
        lam = np.asarray(beh.growth_factor(p, cost=cost), float)
        return (1.0 + np.asarray(beh.recruit_rate(p), float) - lam) / p

    def __repr__(self) -> str:
        return f"Trajectories({self.family.label!r}, {self.mechanism}, levels={self.levels.size}, T={self.settings['T']})"


def _mechanism(kind, levels, options):
    """The mechanism ``kind`` (``"bernoulli"`` or ``"gaussian"``) at ``levels`` with the settings ``options``."""
    if kind == "bernoulli":
        return bernoulli.RandomizedResponse(levels, **options)
    return gaussian.GaussianMean(levels, **options)


def _kind(mechanism):
    """``"bernoulli"`` or ``"gaussian"``: the kind of a mechanism of this module's studies."""
    if isinstance(mechanism, bernoulli.RandomizedResponse):
        return "bernoulli"
    if isinstance(mechanism, gaussian.GaussianMean):
        return "gaussian"
    raise TypeError(f"mechanism must be a perfpriv.bernoulli.RandomizedResponse or a perfpriv.gaussian.GaussianMean; "
                    f"got {type(mechanism).__name__}")


#: The policy of :func:`trajectories` by default: no cap and no floor (the mean field is then exact).
_UNCLIPPED = engine.Policy(cap=None, floor=0)


def trajectories(users, mechanism, *, q, r, T, n0, trials, policy=_UNCLIPPED, seed=None):
    """Simulated and mean-field population paths under ``users`` and under the paper's users.

    Both simulations use the same seed (common random numbers): their
    difference is the behaviour's. Without cap and floor (the default) the
    mean field of a constant leak probability (randomized response) is the
    exact expected population of the linear behaviours (Lemma 2's growth
    factor, eq. 4, with the behaviour's departures).

    Parameters
    ----------
    users : Family
        The behaviour: its users of the cell are ``users(q, r)``, and ``users.neutral(q, r)`` the
        paper's users beside them.
    mechanism : perfpriv.bernoulli.RandomizedResponse or perfpriv.gaussian.GaussianMean
        Its levels (ε or γ; a number or a 1-D grid) are the paths' levels; its
        other settings (``mu``; τ, d, R, ...) the model.
    q, r : float
        The cell: leaving and recruiting probabilities.
    T, n0, trials : int
        Horizon, initial population, simulated runs per level.
    policy : perfpriv.engine.Policy
        Population policy of the simulations; its resolved cap and floor
        clip the mean field (a floor of 0: none). Default
        ``Policy(cap=None, floor=0)``: no clip; a field left unset takes the
        paper's preset (cap 20000, floor 1).
    seed : int, optional

    Returns
    -------
    Trajectories

    Examples
    --------
    >>> tr = trajectories(family("contagion", 1.0), bernoulli.RandomizedResponse(0.5), q=0.2, r=0.6, T=30,
    ...                   n0=1000, trials=50, seed=1)
    >>> theory, simulated = tr.effective_q         # q_t -> q* = q / (1 - kappa p), p = 1/2 + tanh(1/4)/2
    >>> round(float(theory[0, -1]), 3), round(float(Contagion(q=0.2, r=0.6, kappa=1.0)
    ...                                           .stationary_leave_probability(0.5 + 0.5 * np.tanh(0.25))), 3)
    (0.53, 0.53)
    """
    users = _as_family(users)
    kind = _kind(mechanism)
    levels = engine.level_grid(mechanism)
    mech = _mechanism(kind, levels, mechanism.options())
    policy = engine.check_policy(policy)
    resolved = policy.resolve(mech, "paper", n0=n0)
    out = {}
    for tag, fam in (("", users), ("_paper", users.neutral)):
        beh = fam(q, r)
        run = engine.simulate(mech, beh, T=T, n0=n0, trials=trials, policy=policy, seed=seed)
        path = engine.mean_field(mech, beh, T=T, n0=n0, cap=resolved.cap, floor=resolved.floor or None)
        pop = run.population.astype(float)
        out["simulated" + tag] = pop.mean(axis=-2)
        out["se" + tag] = standard_error(pop, axis=-2)
        out["leaks" + tag] = run.leaked.mean(axis=-2)
        out["mean_field" + tag] = path.population
        out["leak_probability" + tag] = path.leak_probability
    return Trajectories(users, levels, mechanism=kind, settings=dict(
        q=q, r=r, T=T, n0=n0, trials=trials, cap=resolved.cap, floor=resolved.floor, policy=policy.describe(),
        seed=seed, options=mech.options()), **out)


# ------------------------------------------------------------------ maps
@dataclass(frozen=True, eq=False)
class FeedbackMap:
    """The best privacy level over a (q, r) grid under one behaviour, and where it beats no privacy.

    Rows of every array are q values, columns r values.

    Attributes
    ----------
    family : Family
    mechanism : str
        ``"bernoulli"`` (ε*, final-round error, the paper's Fig. 2 objective)
        or ``"gaussian"`` (γ*, cumulative error, Fig. 4's).
    qs, rs : numpy.ndarray
        Grid coordinates.
    levels : numpy.ndarray
        The simulated grid of levels; ``levels[none]`` is "no privacy"
        (ε = inf, or :math:`γ = 10^{-3}`).
    none : int
        Index of the no-privacy level.
    theory : numpy.ndarray
        The mean field's optimum per cell (on ``levels`` for ε; a continuous
        search for γ).
    theory_value, theory_none : numpy.ndarray
        The mean-field objective at the optimum and without privacy.
    simulated : numpy.ndarray
        The simulated optimum per cell (on ``levels``).
    values, se : numpy.ndarray, shape (q, r, L)
        Simulated objective per level and its standard error.
    settings : dict
    z : float
        Standard errors a private level must win by to count in :attr:`pays_simulated`
        (and to be :attr:`confirmed` or :attr:`contradicted`); 3 by default.
        It judges the result and changes nothing computed:
        ``dataclasses.replace(m, z=2.0)`` reads the same map at another z.
    """

    family: Family
    mechanism: str
    qs: np.ndarray
    rs: np.ndarray
    levels: np.ndarray
    none: int
    theory: np.ndarray
    theory_value: np.ndarray
    theory_none: np.ndarray
    simulated: np.ndarray
    values: np.ndarray
    se: np.ndarray
    settings: dict
    z: float = 3.0

    def __post_init__(self):
        object.__setattr__(self, "z", check_real("z", self.z, low=0, scalar=True))

    @property
    def symbol(self) -> str:
        """``"ε"`` or ``"γ"``."""
        return "ε" if self.mechanism == "bernoulli" else "γ"

    @property
    def pays_theory(self) -> np.ndarray:
        """Cells where the mean field's best private level beats no privacy (by more than 1e-9 relative)."""
        return self.theory_value < self.theory_none * (1 - 1e-9)

    @property
    def _private(self):
        return np.arange(self.levels.size) != self.none

    @property
    def best_private(self) -> np.ndarray:
        """Index (in :attr:`levels`) of the simulated best private level of each cell."""
        vals = np.where(self._private, self.values, np.inf)
        return np.argmin(vals, axis=-1)

    @property
    def advantage(self) -> np.ndarray:
        """Simulated objective without privacy minus at the best private level (> 0: privacy pays)."""
        best = np.take_along_axis(self.values, self.best_private[..., None], axis=-1)[..., 0]
        return self.values[..., self.none] - best

    @property
    def advantage_se(self) -> np.ndarray:
        """Standard error of :attr:`advantage` (the two levels' errors combined as if independent: conservative
        for common random numbers)."""
        se_best = np.take_along_axis(self.se, self.best_private[..., None], axis=-1)[..., 0]
        return np.hypot(se_best, self.se[..., self.none])

    @property
    def pays_simulated(self) -> np.ndarray:
        """Cells where a private level beats no privacy in simulation by more than ``z`` standard errors."""
        return self.advantage > self.z * self.advantage_se

    @property
    def loses_simulated(self) -> np.ndarray:
        """Cells where no privacy beats every private level by more than ``z`` standard errors."""
        return -self.advantage > self.z * self.advantage_se

    @property
    def confirmed(self) -> np.ndarray:
        """Cells where the mean field says privacy pays and simulation confirms it (beyond ``z`` se)."""
        return self.pays_theory & self.pays_simulated

    @property
    def contradicted(self) -> np.ndarray:
        """Cells where simulation and the mean field disagree beyond ``z`` standard errors (either way)."""
        return (self.pays_simulated & ~self.pays_theory) | (self.loses_simulated & self.pays_theory)

    @property
    def gain(self) -> np.ndarray:
        """The mean field's objective without privacy over that at its best private level (1: no gain)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.pays_theory, self.theory_none / self.theory_value, 1.0)

    def __repr__(self) -> str:
        return (f"FeedbackMap({self.family.label!r}, {self.mechanism}, grid={self.qs.size}x{self.rs.size}, "
                f"privacy pays: theory {int(self.pays_theory.sum())}, confirmed {int(self.confirmed.sum())})")


def _map_settings(trials, policy, mechanism, n0):
    """trials >= 2 (a map compares levels by their standard errors, which one run cannot give) and the
    policy, resolved for the mean field (unset fields: the paper's, cap 20000 and floor 1)."""
    trials = check_int("trials", trials, low=2)
    n0 = check_int("n0", n0, low=2)
    policy = engine.check_policy(policy)
    return trials, policy, policy.resolve(mechanism, "paper", n0=n0)


def _map_keys(seed, Q, Rr):
    """Each cell's key from the root seed and the map's (q, r), whatever the family's parameters
    (:func:`perfpriv.engine.cell_keys` of the paper's users on the map)."""
    return engine.cell_keys(seed, Memoryless(q=Q, r=Rr))


def _grid(qs, rs):
    qs = np.atleast_1d(np.asarray(check_probability("qs", qs), float))
    rs = np.atleast_1d(np.asarray(check_probability("rs", rs), float))
    if qs.ndim != 1 or rs.ndim != 1:
        raise ValueError("qs and rs must be 1-D grids of probabilities")
    Q, Rr = np.meshgrid(qs, rs, indexing="ij")
    return qs, rs, Q, Rr


def epsilon_map(users, mechanism, qs, rs, *, T=50, n0=200, trials=40, policy=None, seed=None, options=None):
    """ε* under a behaviour over a (q, r) grid: theory, simulation, and where a finite ε beats no privacy.

    The objective is the paper's Fig. 2 one: the error of the last round's
    estimate (:func:`perfpriv.optimize.optimal_epsilon` and
    :func:`perfpriv.optimize.mean_field_optimal_epsilon`, with the family's
    users on every cell). ``inf`` (no privacy) is added to the grid if absent.

    Parameters
    ----------
    users : Family
        The users of every cell: ``users(q, r)``.
    mechanism : perfpriv.bernoulli.RandomizedResponse
        Its budgets are the simulated grid, its ``mu`` the law of
        :math:`μ_t` (the paper's maps: ``mu=(0.5, 1.0)``).
    qs, rs : 1-D array_like
        Grid of leaving and joining probabilities.
    T, n0, trials : int
        Horizon, initial population, runs per (cell, ε) (>= 2: the map
        compares levels by their standard errors).
    policy : perfpriv.engine.Policy, optional
        Population policy of the runs; its cap and floor clip the mean field
        (unset: the paper's, cap 20000).
    seed : int, optional
        Root seed; every cell is keyed by the map's (q, r), whatever the family.
    options : perfpriv.sweep.Execution, optional
        Workers and cells per batch (:func:`perfpriv.sweep.map_grid`; the
        result does not depend on them).

    Returns
    -------
    FeedbackMap
    """
    users = _as_family(users)
    qs, rs, Q, Rr = _grid(qs, rs)
    grid = engine.level_grid(mechanism, kind=bernoulli.RandomizedResponse)
    eps = np.unique(np.r_[grid, np.inf])
    mech = bernoulli.RandomizedResponse(eps, **mechanism.options())
    trials, policy, resolved = _map_settings(trials, policy, mech, n0)
    sim = optimize.optimal_epsilon(mech, users(Q, Rr), T=T, n0=n0, trials=trials, seed=_map_keys(seed, Q, Rr),
                                   policy=policy, options=check_execution(options, chunk=64, progress=False))
    theory = optimize.mean_field_optimal_epsilon(mech, users(Q, Rr), T=T, n0=n0, policy=policy)
    none = int(np.flatnonzero(np.isinf(eps))[0])
    private = np.where(np.arange(eps.size) != none, theory.values, np.inf)
    best = np.argmin(private, axis=-1)
    theory_value = np.take_along_axis(theory.values, best[..., None], axis=-1)[..., 0]
    theory_none = theory.values[..., none]
    star = np.where(theory_value < theory_none * (1 - 1e-9), eps[best], np.inf)
    return FeedbackMap(users, "bernoulli", qs, rs, eps, none, star, np.minimum(theory_value, theory_none),
                       theory_none, np.asarray(sim.epsilon, float), sim.values, sim.se,
                       dict(T=T, n0=n0, trials=trials, mu=mechanism.mu, cap=resolved.cap, policy=policy.describe(),
                            seed=seed))


def gamma_map(users, mechanism, qs, rs, *, T=10, n0=100, trials=20, policy=None, seed=None, options=None):
    """γ* under a behaviour over a (q, r) grid: theory, simulation, and where noise beats no privacy.

    The objective is the cumulative squared Mahalanobis error over the T
    rounds (Fig. 4's). Theory: the mean field's γ*
    (:func:`perfpriv.optimize.optimal_gamma`, ``objective="mean_field"``,
    Algorithm 1's round indexing), a continuous search. Simulation: the
    grid search of :func:`perfpriv.optimize.optimal_gamma_empirical`, with
    collapsed runs scored by the floor convention. "No privacy" is
    :math:`γ = 10^{-3}` (as in chapters 06 and 07), added to the grid.

    Parameters
    ----------
    users : Family
        The users of every cell: ``users(q, r)``.
    mechanism : perfpriv.gaussian.GaussianMean
        The Gaussian model (τ, d, R, ...); its noise scales are the
        simulated grid.
    qs, rs : 1-D array_like
    T, n0, trials : int
        Horizon, initial population, runs per (cell, γ) (paper: 50, 1000, 50).
    policy, seed, options
        As in :func:`epsilon_map`.

    Returns
    -------
    FeedbackMap
    """
    users = _as_family(users)
    qs, rs, Q, Rr = _grid(qs, rs)
    gammas = engine.level_grid(mechanism, kind=gaussian.GaussianMean)
    grid = np.unique(np.r_[NO_PRIVACY_GAMMA, gammas])
    if grid.size < 2:
        raise ValueError(f"mechanism must hold at least one noise scale other than NO_PRIVACY_GAMMA = "
                         f"{NO_PRIVACY_GAMMA:g}; got {gammas!r:.60}")
    model = {k: v for k, v in mechanism.options().items()}
    trials, policy, resolved = _map_settings(trials, policy, gaussian.GaussianMean(grid, **model), n0)
    sim = optimize.optimal_gamma_empirical(gaussian.GaussianMean(grid, **model), users(Q, Rr), T=T, n0=n0,
                                           trials=trials, seed=_map_keys(seed, Q, Rr), policy=policy,
                                           options=check_execution(options, chunk=4, progress=False))
    search = gaussian.GaussianMean(np.geomspace(float(grid[1]) / 4, float(grid[-1]) * 4, 31), **model)
    theory = optimize.optimal_gamma(search, users(Q, Rr), T=T, n0=n0, objective="mean_field", rounds="algorithm",
                                    policy=policy)
    mech = gaussian.GaussianMean(NO_PRIVACY_GAMMA, **model)
    none_value = np.asarray(engine.mean_field(mech, users(Q, Rr), T=T, n0=n0, cap=resolved.cap,
                                              floor=resolved.floor).cumulative_error, float)
    theory_value = np.asarray(theory.value, float)
    star = np.where(theory_value < none_value * (1 - 1e-9), np.asarray(theory.gamma, float), NO_PRIVACY_GAMMA)
    return FeedbackMap(users, "gaussian", qs, rs, grid, 0, star, np.minimum(theory_value, none_value), none_value,
                       np.asarray(sim.gamma, float), sim.values, sim.se,
                       dict(tau=mechanism.tau, T=T, n0=n0, trials=trials, d=mechanism.d, R=mechanism.R,
                            cap=resolved.cap, policy=policy.describe(), seed=seed))


# ------------------------------------------------------------------ the chapter's answer
@dataclass(frozen=True, eq=False)
class Summary:
    r"""Does a finite privacy level still beat no privacy, and where? One row per behaviour.

    Every count is over the cells of one (q, r) grid (the same for every map).

    Attributes
    ----------
    labels : list of str
        The behaviours (rows), with their rule.
    cells : int
        Cells per map.
    bernoulli_theory : numpy.ndarray of int
        Cells where the mean field's best finite ε beats no privacy.
    bernoulli_confirmed : numpy.ndarray of int
        Of those, the cells where simulation confirms it beyond ``z`` standard errors.
    bernoulli_contradicted : numpy.ndarray of int
        Cells where simulation contradicts the mean field beyond ``z`` standard errors.
    survival : numpy.ndarray of int
        Cells where privacy decides survival: some ε keeps the population
        from shrinking but no privacy does not (:math:`0 < ε_c < \infty`, :func:`critical_epsilon`).
    survival_match : numpy.ndarray
        Share of cells where "privacy pays" (mean field) coincides with "0 < :math:`ε_c` < inf".
    epsilon_ratio : numpy.ndarray
        Median over cells (where both are finite) of the mean field's ε* over
        the paper's users' ε* (same rule); NaN without a reference row or
        where no cell has both optima finite and positive.
    gaussian_theory, gaussian_confirmed, gaussian_contradicted : numpy.ndarray of int
        The same counts for γ in the Gaussian model (-1: not computed).
    gamma_ratio : numpy.ndarray
        Median over cells of the mean field's γ* over the paper's users' (NaN: not computed,
        or no cell with both optima finite and positive).
    maps : dict
        ``{"bernoulli": [FeedbackMap, ...], "gaussian": [FeedbackMap or None, ...]}``.
    """

    labels: list
    cells: int
    bernoulli_theory: np.ndarray
    bernoulli_confirmed: np.ndarray
    bernoulli_contradicted: np.ndarray
    survival: np.ndarray
    survival_match: np.ndarray
    epsilon_ratio: np.ndarray
    gaussian_theory: np.ndarray
    gaussian_confirmed: np.ndarray
    gaussian_contradicted: np.ndarray
    gamma_ratio: np.ndarray
    maps: dict = field(repr=False)

    def table(self) -> str:
        """The summary as text, numbers rounded for print."""
        n = self.cells
        lines = [f"{'':34s} randomized response (ε)                                Gaussian mechanism (γ)",
                 f"{'':34s} privacy pays   confirmed   0<ε_c<∞   pays iff   ε* vs    privacy pays  confirmed  γ* vs",
                 f"{'behaviour':34s} (mean field)   (sim.)      cells     0<ε_c<∞    paper    (mean field)  (sim.)     paper",
                 "-" * 122]

        def ratio(x):
            return "  —  " if not np.isfinite(x) else f"{x:4.2f}x"

        for i, lab in enumerate(self.labels):
            if self.gaussian_theory[i] >= 0:
                g = (f"{self.gaussian_theory[i]:5d}/{n}      {self.gaussian_confirmed[i]:3d}/{n}    "
                     f"{ratio(self.gamma_ratio[i])}")
            else:
                g = f"{'not computed':>18s}"
            lines.append(f"{lab:34s} {self.bernoulli_theory[i]:5d}/{n}       {self.bernoulli_confirmed[i]:3d}/{n}"
                         f"      {self.survival[i]:3d}/{n}    {100 * self.survival_match[i]:4.0f}%     "
                         f"{ratio(self.epsilon_ratio[i])}   {g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Summary(behaviours={len(self.labels)}, cells={self.cells})"


def _reference(maps, m):
    """The map of the paper's users with the same rule as ``m`` (or None)."""
    for other in maps:
        if other is not None and other.family == m.family.neutral:
            return other
    return None


def _median_ratio(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    ok = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
    return float(np.median(a[ok] / b[ok])) if ok.any() else float("nan")


def _maps(name, maps, mechanism, *, none):
    """``maps`` as a list of FeedbackMap of ``mechanism`` (``None`` entries allowed if ``none``)."""
    kind = f"FeedbackMap of {mechanism!r} (from {'epsilon_map' if mechanism == 'bernoulli' else 'gamma_map'})"
    if isinstance(maps, (str, bytes, FeedbackMap)) or not hasattr(maps, "__iter__"):
        raise TypeError(f"{name} must be a sequence of {kind}; got {maps!r:.60}")
    maps = list(maps)
    for m in maps:
        if (m is None and not none) or (m is not None and not (isinstance(m, FeedbackMap)
                                                              and m.mechanism == mechanism)):
            raise TypeError(f"{name} must hold one {kind}{' or None' if none else ''} per behaviour; "
                            f"got {m!r:.60}")
    return maps


def summary(bernoulli_maps, gaussian_maps=None) -> Summary:
    """Collect the chapter's answer from one ε map (and optionally one γ map) per behaviour.

    Parameters
    ----------
    bernoulli_maps : sequence of FeedbackMap
        One ε map per behaviour, all on one (q, r) grid. The paper's users
        (with each rule used) should be among them: they are the reference
        of the ratios.
    gaussian_maps : sequence of FeedbackMap or None, optional
        The γ maps of the same behaviours, in the same order (``None``
        entries: not computed).

    Returns
    -------
    Summary
    """
    bm = _maps("bernoulli_maps", bernoulli_maps, "bernoulli", none=False)
    gm = [None] * len(bm) if gaussian_maps is None else _maps("gaussian_maps", gaussian_maps, "gaussian", none=True)
    if len(bm) != len(gm) or not bm:
        raise ValueError("gaussian_maps must hold one entry (a map or None) per Bernoulli map, in the same order")
    cells = {m.pays_theory.size for m in bm} | {g.pays_theory.size for g in gm if g is not None}
    if len(cells) != 1:
        raise ValueError(f"all maps must have the same number of cells; got {sorted(cells)}")
    labels, rows = [], []
    for m, g in zip(bm, gm):
        label = m.family.label if m.family.name != "budget" or g is None else \
            f"budget (b = {m.family.parameter:g} in ε, {g.family.parameter:g} in ρ)"
        labels.append(label + (", agnostic" if m.family.rule == "agnostic" else ""))
        Q, Rr = np.meshgrid(m.qs, m.rs, indexing="ij")
        eps_c = np.asarray(critical_epsilon(m.family, q=Q, r=Rr), float)
        survives = (eps_c > 0) & np.isfinite(eps_c)
        ref = _reference(bm, m)
        gref = None if g is None else _reference([x for x in gm if x is not None], g)
        rows.append((int(m.pays_theory.sum()), int(m.confirmed.sum()), int(m.contradicted.sum()),
                     int(survives.sum()), float(np.mean(m.pays_theory == survives)),
                     _median_ratio(m.theory, ref.theory) if ref is not None else float("nan"),
                     -1 if g is None else int(g.pays_theory.sum()), -1 if g is None else int(g.confirmed.sum()),
                     -1 if g is None else int(g.contradicted.sum()),
                     _median_ratio(g.theory, gref.theory) if gref is not None else float("nan")))
    cols = [np.array(c) for c in zip(*rows)]
    return Summary(labels, cells.pop(), *cols, maps={"bernoulli": bm, "gaussian": gm})


def threshold_curve(name, values, *, q, r, rule="leak"):
    """:math:`ε_c` of the family ``name`` as its parameter runs over ``values`` (paper's :math:`ε_c` at the neutral value).

    Parameters
    ----------
    name : str
        A family of :data:`FAMILIES` other than ``"paper"``.
    values : 1-D array_like
        Parameter values (k, spread, tolerance in ε, κ).
    q, r : float
        The cell.
    rule : {"leak", "agnostic"}

    Returns
    -------
    numpy.ndarray
        :math:`ε_c` for each value.

    Examples
    --------
    >>> threshold_curve("contagion", [0.0, 1.0, 2.0], q=0.2, r=0.6).round(3).tolist()   # q < r (1 - κ/2)?
    [1.099, 0.264, 0.0]
    """
    check_choice("name", name, FAMILIES[1:])
    check_choice("rule", rule, ("leak", "agnostic"))
    checked = np.atleast_1d(check_real("values", values, allow_inf=name == "budget"))
    if checked.ndim != 1:
        raise ValueError(f"values must be a 1-D array of parameter values; got shape {checked.shape}")
    values = np.atleast_1d(values)
    for v in values:
        _check_parameter(name, v, f"values ({_PARAMETERS[name][0]})")
    return np.array([float(critical_epsilon(Family(name, v, rule), q=q, r=r)) for v in values])


# ------------------------------------------------------------------ the explorer's experiment
@dataclass(frozen=True, eq=False)
class GaussianComparison:
    """One behaviour against the paper's users in the Gaussian model (what the explorer draws).

    Attributes
    ----------
    family : Family
    gammas : numpy.ndarray
        Noise scales of the mean-field curves.
    error, error_paper : numpy.ndarray
        Mean-field cumulative error at each γ, under the behaviour and the paper's users.
    gamma_star, gamma_star_paper : float
        Their minimizers on ``gammas``.
    mean_field, mean_field_paper : numpy.ndarray, shape (T + 1,)
        Mean-field population at the behaviour's γ*.
    simulated, simulated_paper : numpy.ndarray, shape (trials, T + 1)
        Simulated populations at that γ (common random numbers).
    settings : dict
    """

    family: Family
    gammas: np.ndarray
    error: np.ndarray
    error_paper: np.ndarray
    gamma_star: float
    gamma_star_paper: float
    mean_field: np.ndarray
    mean_field_paper: np.ndarray
    simulated: np.ndarray
    simulated_paper: np.ndarray
    settings: dict

    def __repr__(self) -> str:
        return (f"GaussianComparison({self.family.label!r}, gamma*={self.gamma_star:.3g}, "
                f"paper gamma*={self.gamma_star_paper:.3g})")


#: The noise scales of :func:`compare_gaussian` for a mechanism without levels: 25 log-spaced values of [0.05, 20].
_COMPARE_GAMMAS = np.geomspace(0.05, 20.0, 25)


def compare_gaussian(users, mechanism, *, q, r, T=10, n0=100, trials=20, policy=None, seed=0):
    """The Gaussian model under ``users`` and under the paper's users: γ curves, γ*, and paths at γ*.

    Sized for a live redraw: the mean-field cumulative error (Fig. 4's
    objective, from the recursion of :func:`perfpriv.engine.mean_field` with
    Lemma 8's :math:`p_τ`, eq. 11) over the mechanism's noise scales, its minimizer γ* on them,
    and ``trials`` simulated runs at the behaviour's γ* (the same seed for
    both users: common random numbers).

    Parameters
    ----------
    users : Family
        The behaviour: ``users(q, r)``, against the paper's users ``users.neutral(q, r)``.
    mechanism : perfpriv.gaussian.GaussianMean
        The data model (τ, d, R, ...); its levels, a 1-D grid, are the
        noise scales of the curves (no level: 25 log-spaced values of
        [0.05, 20]).
    q, r : float
        The cell.
    T, n0, trials : int
        Horizon, initial population, simulated runs.
    policy : perfpriv.engine.Policy, optional
        Population policy of the runs; its resolved cap and floor clip the
        mean field (unset: the paper's, cap 20000 and floor 1).
    seed : int

    Returns
    -------
    GaussianComparison
    """
    users = _as_family(users)
    if not isinstance(mechanism, gaussian.GaussianMean):
        raise TypeError(f"mechanism must be a perfpriv.gaussian.GaussianMean; got {type(mechanism).__name__}")
    g = _COMPARE_GAMMAS.copy() if mechanism.levels is None else engine.level_grid(mechanism)
    model = mechanism.options()
    mech = gaussian.GaussianMean(g, **model)
    policy = engine.check_policy(policy)
    resolved = policy.resolve(mech, "paper", n0=n0)
    err = {}
    for tag, fam in (("", users), ("_paper", users.neutral)):
        err[tag] = np.asarray(engine.mean_field(mech, fam(q, r), T=T, n0=n0, cap=resolved.cap,
                                                floor=resolved.floor).cumulative_error, float)
    star = float(g[int(np.argmin(err[""]))])
    star0 = float(g[int(np.argmin(err["_paper"]))])
    one = gaussian.GaussianMean(star, **model)
    out = {}
    for tag, fam in (("", users), ("_paper", users.neutral)):
        beh = fam(q, r)
        out["mean_field" + tag] = engine.mean_field(one, beh, T=T, n0=n0, cap=resolved.cap,
                                                    floor=resolved.floor).population
        out["simulated" + tag] = engine.simulate(one, beh, T=T, n0=n0, trials=trials, policy=policy,
                                                 seed=seed).population
    return GaussianComparison(users, g, err[""], err["_paper"], star, star0, settings=dict(
        q=q, r=r, tau=mechanism.tau, T=T, n0=n0, d=mechanism.d, R=mechanism.R, trials=trials, cap=resolved.cap,
        policy=policy.describe(), seed=seed), **out)


def _out(x):
    x = np.asarray(x, float)
    return float(x) if x.ndim == 0 else x
