"""Chapter 08's experiments: does a finite privacy budget still beat no privacy under richer feedback?

The paper's questions (survival threshold, best privacy level, whether it beats no privacy) for the
richer users of :mod:`perfpriv.behaviour`, a :class:`Family` each, with both mechanisms, from the
mean field and from simulation. Data only: figures in :mod:`perfpriv.plots`, explorer in
:mod:`perfpriv.widgets`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import bernoulli, dynamics, engine, gaussian, optimize
from ._bisect import bisect_log_boundary
from ._stats import float_or_array as _out
from ._stats import standard_error
from ._validate import check_choice, check_int, check_probability, check_real
from .behaviour import BudgetAware, Contagion, Heterogeneous, LeakCount, Memoryless
from .sweep import check_execution

__all__ = [
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

#: Search interval of the Gaussian thresholds γ_c of :func:`threshold_table`.
_GAMMA_BRACKET = (1e-4, 1e4)
#: The parameter of each family, its neutral value (the paper's users) and its meaning.
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

    The mean stays q and both stay in [0, 1]; spread 0 gives the paper's users, spread 1 the widest
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

    Called with arrays q and r of one shape it gives the behaviour of those cells
    (``family("memory", 3)(Q, R)``: the ``users`` of a whole map for :mod:`perfpriv.optimize`):

    * ``"paper"``: :class:`~perfpriv.behaviour.Memoryless` (q, r);
    * ``"memory"``: :class:`~perfpriv.behaviour.LeakCount` with ``k`` (q, r);
    * ``"heterogeneous"``: :class:`~perfpriv.behaviour.Heterogeneous`, two equal classes with
      sensitivities :func:`two_classes` (mean q);
    * ``"budget"``: :class:`~perfpriv.behaviour.BudgetAware` with ``tolerance`` (in the mechanism's
      unit: ε or ρ), reacting to leaks with the map's q on top;
    * ``"contagion"``: :class:`~perfpriv.behaviour.Contagion` with ``kappa``.

    Attributes
    ----------
    name, parameter, rule : str, float or None, str
        One of :data:`FAMILIES`, its parameter (``None`` for ``"paper"``) and who recruits
        (``"leak"`` or ``"agnostic"``).
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
        """The behaviour of the cells (q, r) (arrays of one shape, or numbers; ``q=True`` is refused)."""
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


def critical_epsilon(users, *, q, r):
    r""":math:`ε_c` under a behaviour: randomized response keeps the population from shrinking for :math:`ε \le ε_c`.

    The long-run growth factor at leak probability p = 1/2 + β(ε) is at least 1 exactly up to
    :math:`ε_c` (:meth:`perfpriv.behaviour.Behaviour.critical_leak_probability`): :math:`ε_c = 2`
    artanh(2 :math:`β_c`) with :math:`β_c = \max(0, p_c - 1/2)`. For budget-aware users (lifetime
    ⌊b/ε⌋ + 1) it is found by bisection on the reproduction number. ``inf``: survival at every ε,
    including no privacy; 0: at none.

    Parameters
    ----------
    users, q, r
        A :class:`Family` and the leaving and recruiting probabilities of its cells.

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
    family, q, r, settings : Family, numpy.ndarray and dict
        The behaviour, the cells (arrays of one shape) and the Gaussian model of :math:`γ_c`.
    epsilon, epsilon_paper : numpy.ndarray
        :math:`ε_c` under the behaviour and under the paper's users (Theorem 1).
    gamma, gamma_paper : numpy.ndarray
        :math:`γ_c` at population ``settings["n"]`` under both (NaN when not computed).
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
    users, q, r
        The behaviour for randomized response and the cells (broadcast to one shape).
    gaussian_users : Family, optional
        The behaviour for the Gaussian mechanism when it differs (a budget family's tolerance is in ρ
        there); default ``users``. ``False``: skip :math:`γ_c`.
    tau, n, d, R, statistic
        The Gaussian model and population of :math:`γ_c` (:func:`perfpriv.dynamics.exact_critical_gamma`).

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


@dataclass(frozen=True, eq=False)
class Trajectories:
    """Population paths under a behaviour and under the paper's users, theory next to simulation.

    Attributes
    ----------
    family, levels, mechanism, settings : Family, numpy.ndarray, str and dict
        The behaviour, the privacy levels (ε or γ, shape (L,)), ``"bernoulli"`` or ``"gaussian"``, and
        the inputs.
    mean_field, simulated, se : numpy.ndarray, shape (L, T + 1)
        Mean-field population :math:`N_t`, mean simulated population and its standard error.
    leaks, leak_probability : numpy.ndarray, shape (L, T)
        Mean simulated number of leaked users per round, and the mean field's :math:`p_t`.
    mean_field_paper, simulated_paper, se_paper, leaks_paper, leak_probability_paper : numpy.ndarray
        The same under the paper's users.
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

    def _departures_per_leak(self, N, K):
        r = float(self.settings["r"])
        rule = self.family.rule
        recruits = r * (N[..., :-1] - K) if rule == "leak" else r * N[..., :-1]
        departures = N[..., :-1] + recruits - N[..., 1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            return departures / K

    @property
    def effective_q(self):
        """Departures per leaked user in each round, (mean field, simulation), each of shape (L, T).

        Every behaviour's growth is the paper's with q replaced by this :math:`q_t`:
        :math:`N_t = N_{t-1} + ρ\\text{-recruits} - q_t K_t`. It is q for the paper's users and drifts to
        :math:`q s_{k-1}` (memory), :math:`Σ s_j q_j` (heterogeneous), q* (contagion); budget-aware
        users add their budget departures. Exact without cap and floor (:func:`trajectories`' default).
        """
        mf_leaks = self.leak_probability * self.mean_field[..., :-1]
        return (self._departures_per_leak(self.mean_field, mf_leaks),
                self._departures_per_leak(self.simulated, self.leaks))

    @property
    def long_run_q(self) -> np.ndarray:
        """The limit of :attr:`effective_q` per level, from the behaviour's theory: (1 + ρ(p) − λ(p))/p.

        λ is :meth:`perfpriv.behaviour.Behaviour.growth_factor` at the level's leak probability and cost
        (Gaussian mechanism: p of the mean field's last round).
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

    Both simulations use the same seed (common random numbers): their difference is the behaviour's.
    Without cap and floor (the default) the mean field of a constant leak probability (randomized
    response) is the exact expected population of the linear behaviours (Lemma 2's growth factor,
    eq. 4, with the behaviour's departures).

    Parameters
    ----------
    users, q, r : Family, float, float
        The behaviour ``users(q, r)`` of one cell, beside the paper's users ``users.neutral(q, r)``.
    mechanism : perfpriv.bernoulli.RandomizedResponse or perfpriv.gaussian.GaussianMean
        The model; its levels (ε or γ; a number or a 1-D grid) are the paths' levels.
    T, n0, trials, policy, seed
        As in :func:`perfpriv.engine.simulate` (``trials`` runs per level); the policy's resolved cap and
        floor clip the mean field (floor 0: none; unset fields: cap 20000, floor 1). Default: no clip.

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


@dataclass(frozen=True, eq=False)
class FeedbackMap:
    """The best privacy level over a (q, r) grid under one behaviour, and where it beats no privacy.

    Attributes
    ----------
    family : Family
    mechanism : str
        ``"bernoulli"`` (ε*, final-round error, Fig. 2's objective) or ``"gaussian"`` (γ*, cumulative
        error, Fig. 4's).
    qs, rs : numpy.ndarray
        Grid coordinates: the rows and columns of every map.
    levels, none : numpy.ndarray, int
        The simulated grid of levels and the index of "no privacy" (ε = inf, or :math:`γ = 10^{-3}`).
    theory, theory_value, theory_none : numpy.ndarray
        The mean field's optimum per cell (on ``levels`` for ε; a continuous search for γ), and its
        objective there and without privacy.
    simulated, values, se : numpy.ndarray
        The simulated optimum per cell (on ``levels``), and the simulated objective per level and its
        standard error (shape (q, r, L)).
    settings : dict
    z : float
        Standard errors a private level must win by in :attr:`pays_simulated`, :attr:`confirmed` and
        :attr:`contradicted` (default 3); ``dataclasses.replace(m, z=2.0)`` reads the map at another z.
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
        """Standard error of :attr:`advantage`, combined as if independent (conservative here)."""
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


def _grid(qs, rs):
    qs = np.atleast_1d(np.asarray(check_probability("qs", qs), float))
    rs = np.atleast_1d(np.asarray(check_probability("rs", rs), float))
    if qs.ndim != 1 or rs.ndim != 1:
        raise ValueError("qs and rs must be 1-D grids of probabilities")
    Q, Rr = np.meshgrid(qs, rs, indexing="ij")
    return qs, rs, Q, Rr


def epsilon_map(users, mechanism, qs, rs, *, T=50, n0=200, trials=40, policy=None, seed=None, options=None):
    """ε* under a behaviour over a (q, r) grid: theory, simulation, and where a finite ε beats no privacy.

    The objective is Fig. 2's, the error of the last round's estimate
    (:func:`perfpriv.optimize.optimal_epsilon`, :func:`perfpriv.optimize.mean_field_optimal_epsilon`).
    ``inf`` (no privacy) is added to the grid if absent.

    Parameters
    ----------
    users, qs, rs
        The users of every cell, ``users(q, r)`` (a :class:`Family`), and the 1-D grids of q and r.
    mechanism : perfpriv.bernoulli.RandomizedResponse
        Its budgets are the simulated grid (the paper's maps: ``mu=(0.5, 1.0)``).
    T, n0, trials, policy, seed
        As in :func:`perfpriv.engine.simulate`: ``trials`` >= 2 runs per (cell, ε), as levels are
        compared by their standard errors; the policy's cap and floor clip the mean field (unset: the
        paper's, cap 20000); every cell is keyed by the map's (q, r), whatever the family.
    options : perfpriv.sweep.Execution, optional
        Workers and cells per batch (:func:`perfpriv.sweep.map_grid`); the result does not depend on them.

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
    sim = optimize.optimal_epsilon(mech, users(Q, Rr), T=T, n0=n0, trials=trials,
                                   seed=engine.cell_keys(seed, Memoryless(q=Q, r=Rr)),   # whatever the family
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

    The objective is Fig. 4's cumulative squared Mahalanobis error. Theory: the mean field's γ*, a
    continuous search (:func:`perfpriv.optimize.optimal_gamma`, ``objective="mean_field"``, Algorithm
    1's indexing); simulation: :func:`perfpriv.optimize.optimal_gamma_empirical` on the grid, collapsed
    runs scored by the floor convention. "No privacy" is :data:`NO_PRIVACY_GAMMA`, added to the grid.

    Parameters
    ----------
    mechanism : perfpriv.gaussian.GaussianMean
        The model; its noise scales are the simulated grid.
    users, qs, rs, T, n0, trials, policy, seed, options
        As in :func:`epsilon_map`, ``trials`` per (cell, γ) (paper: T, n0, trials = 50, 1000, 50).

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
                                           trials=trials, seed=engine.cell_keys(seed, Memoryless(q=Q, r=Rr)),
                                           policy=policy, options=check_execution(options, chunk=4,
                                                                                  progress=False))
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


@dataclass(frozen=True, eq=False)
class Summary:
    r"""Does a finite privacy level still beat no privacy, and where? One row per behaviour.

    Attributes
    ----------
    labels : list of str
        The behaviours (rows), with their rule.
    cells : int
        Cells per map: every count is over the cells of one (q, r) grid, the same for every map.
    bernoulli_theory, bernoulli_confirmed, bernoulli_contradicted : numpy.ndarray of int
        Cells where the mean field's best finite ε beats no privacy, those where simulation confirms
        it, and those where simulation contradicts the mean field (beyond ``z`` standard errors).
    survival : numpy.ndarray of int
        Cells where privacy decides survival: :math:`0 < ε_c < \infty` (:func:`critical_epsilon`).
    survival_match : numpy.ndarray
        Share of cells where "privacy pays" (mean field) coincides with "0 < :math:`ε_c` < inf".
    epsilon_ratio : numpy.ndarray
        Median over cells of the mean field's ε* over the paper's users' ε* (same rule); NaN without
        a reference row or where no cell has both optima finite and positive.
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
        One ε map per behaviour, all on one (q, r) grid, among them the paper's users (with each rule
        used): the reference of the ratios.
    gaussian_maps : sequence of FeedbackMap or None, optional
        The γ maps of the same behaviours, in the same order (``None`` entries: not computed).

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
    q, r, rule
        The cell and who recruits (see :class:`Family`).

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


@dataclass(frozen=True, eq=False)
class GaussianComparison:
    """One behaviour against the paper's users in the Gaussian model (what the explorer draws).

    Attributes
    ----------
    family, gammas, settings : Family, numpy.ndarray and dict
        The behaviour, the noise scales of the mean-field curves and the inputs.
    error, gamma_star : numpy.ndarray, float
        Mean-field cumulative error at each γ and its minimizer on ``gammas``.
    mean_field, simulated : numpy.ndarray, shapes (T + 1,) and (trials, T + 1)
        Mean-field and simulated populations at the behaviour's γ*.
    error_paper, gamma_star_paper, mean_field_paper, simulated_paper : numpy.ndarray or float
        The same under the paper's users (populations at the behaviour's γ*, common random numbers).
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

    Sized for a live redraw: the mean-field cumulative error (Fig. 4's objective,
    :func:`perfpriv.engine.mean_field` with Lemma 8's :math:`p_τ`, eq. 11) over the mechanism's noise
    scales, its minimizer γ*, and ``trials`` runs at the behaviour's γ* (one seed for both users).

    Parameters
    ----------
    users, q, r
        As in :func:`trajectories`.
    mechanism : perfpriv.gaussian.GaussianMean
        The model; its levels (a 1-D grid; none: 25 log-spaced values of [0.05, 20]) are the noise
        scales of the curves.
    T, n0, trials, policy, seed
        As in :func:`trajectories` (default policy: the paper's preset, cap 20000 and floor 1).

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


