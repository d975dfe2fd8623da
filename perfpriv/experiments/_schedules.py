"""Experiments of the privacy-schedules chapter (beyond the paper; its §5 suggests time-varying privacy)."""

from __future__ import annotations

import numpy as np

from .. import bernoulli, engine, optimize
from .._stats import mean_se
from .._validate import check_choice, check_int, check_probability, check_real
from ..behaviour import Memoryless
from ..engine import Schedule
from ..gaussian import GaussianMean
from ..sweep import Execution, map_grid
from ._common import Result, memoryless_rates, result, run_provenance, with_defaults

__all__ = ["ScheduleComparison", "compare_schedules", "GainMap", "gain_map"]


@result
class ScheduleComparison(Result):
    """Regret of several schedules, from the mean field and from paired simulation.

    Attributes
    ----------
    names, schedules : tuple of str, numpy.ndarray
        Schedule names in the order given, and the schedules (γ or ε per round; shape (K, T)).
    mean_field, simulated : numpy.ndarray, shape (K,)
        Mean-field regret of each schedule (:func:`perfpriv.engine.mean_field`'s cumulative error) and
        mean over trials of the simulated regret.
    se : numpy.ndarray, shape (K,)
        Its standard error (NaN from one trial).
    difference, difference_se : numpy.ndarray, shape (K,)
        Simulated regret minus that of ``reference``, over paired trials, and its standard error (NaN
        from one trial).
    reference, trials, settings : str, int and dict
        The inputs and the provenance: q, r, rule, n0, seed, the mechanism template, conventions,
        policy, and the mechanism's resolved options (statistic and draw, or clip_estimate).
    """

    names: tuple
    schedules: np.ndarray
    mean_field: np.ndarray
    simulated: np.ndarray
    se: np.ndarray
    difference: np.ndarray
    difference_se: np.ndarray
    reference: str
    trials: int
    settings: dict


def _named(schedules, reference, *, allow_inf):
    if not isinstance(schedules, dict) or not schedules:
        raise ValueError("schedules must be a non-empty dict {name: schedule}")
    names = list(schedules)
    reference = names[0] if reference is None else reference
    if not isinstance(reference, str) or reference not in schedules:
        raise ValueError(f"reference must be one of {names}; got {reference!r}")
    rows = []
    for k in names:
        v = np.atleast_1d(np.asarray(check_real(f"schedules[{k!r}]", schedules[k], low=0, low_open=True,
                                                allow_inf=allow_inf), float))
        if v.ndim != 1:
            raise ValueError(f"schedules[{k!r}] must be a 1-D array (one level per round); got shape {v.shape}")
        rows.append(v)
    if len({v.size for v in rows}) != 1:
        raise ValueError(f"schedules must all have the same number of rounds T; got lengths "
                         f"{ {k: v.size for k, v in zip(names, rows)} }")
    return names, reference, np.stack(rows)


def _compare(names, scheds, mf, per_trial, reference, settings):
    ref = names.index(reference)
    diff = per_trial - per_trial[ref]
    trials = per_trial.shape[1]
    mean, se = mean_se(per_trial, axis=1)
    dmean, dse = mean_se(diff, axis=1)
    return ScheduleComparison(tuple(names), scheds, np.asarray(mf, float).reshape(len(names)),
                              mean, se, dmean, dse, reference, trials, settings)


def compare_schedules(schedules, mechanism, users, *, n0, trials=100, reference=None, policy=None,
                      conventions="paper", seed=None):
    r"""Mean-field and simulated regret of named privacy schedules (Algorithm 1 or randomized response).

    All schedules run in one :func:`perfpriv.engine.simulate` call (rows of a
    :class:`perfpriv.engine.Schedule`) and share their random numbers round by round (the :math:`μ_t`
    path included): differences are over paired trials. A run's regret is the sum over the T rounds
    of its releases' squared error (Mahalanobis, or :math:`(\hat μ_t - μ_t)^{2}`). Under the Gaussian
    mechanism a run down to one user stops (a lone user always leaks) and its remaining rounds are
    scored by the policy's ``collapse`` (the paper's preset ``"floor"``: a one-record release at that
    round's γ, :math:`γ_t^{2} \mathrm{Tr} Σ^{-1} + d`, as the mean field's floor of one user).

    Parameters
    ----------
    schedules : dict of str to array_like
        Name -> schedule (:math:`γ_1..γ_T` or :math:`ε_1..ε_T`, all of one length T; ``np.inf`` is ε
        without privacy).
    mechanism : perfpriv.gaussian.GaussianMean or perfpriv.bernoulli.RandomizedResponse
        The model; its own level, if any, is a template replaced by the schedules.
    users : perfpriv.behaviour.Memoryless
        One leaving probability q and one joining probability r (either rule).
    n0, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate` (:math:`N_0 \ge 2`; ``trials`` >= 2 for standard
        errors). The policy also clips the mean field; unset fields: cap 20000, ``stop=1`` under
        the Gaussian mechanism, then the preset of ``conventions``.
    reference : str, optional
        Schedule the differences are taken against (default: the first).

    Returns
    -------
    ScheduleComparison

    References
    ----------
    Paper §5 (time-varying privacy), Algorithm 1, Lemma 3; §3 (eq. 1, Lemma 2).

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> users = Memoryless(q=0.3, r=0.6)
    >>> cmp = compare_schedules({"constant": [1.0] * 3, "decay": [2.0, 1.0, 0.5]},
    ...                         GaussianMean(tau=0.02, d=12, R=10), users, n0=100, trials=5, seed=0)
    >>> cmp.simulated.shape, cmp.reference
    ((2,), 'constant')
    >>> cmp = compare_schedules({"eps=1": [1.0] * 20, "none": [np.inf] * 20}, bernoulli.RandomizedResponse(1.0),
    ...                         users, n0=100, trials=20, seed=0)
    >>> bool(cmp.mean_field[1] > cmp.mean_field[0])   # over 20 rounds privacy wins
    True
    """
    if not isinstance(mechanism, (GaussianMean, bernoulli.RandomizedResponse)):
        raise TypeError("mechanism must be a perfpriv.gaussian.GaussianMean or a perfpriv.bernoulli.RandomizedResponse; "
                        f"got {type(mechanism).__name__}")
    gaussian_model = isinstance(mechanism, GaussianMean)
    names, reference, scheds = _named(schedules, reference, allow_inf=not gaussian_model)
    q, r = memoryless_rates(users, name="users")
    n0 = check_int("n0", n0, low=2)
    trials = check_int("trials", trials, low=1)
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    T = scheds.shape[1]
    policy = with_defaults(policy, cap=20000, **(dict(stop=1) if gaussian_model else {}))
    mech = type(mechanism)(Schedule(scheds), **mechanism.options())
    run = engine.simulate(mech, users, T=T, n0=n0, trials=trials, policy=policy, conventions=conventions, seed=seed)
    mf = engine.mean_field(mech.resolved(conventions), users, T=T, n0=n0, cap=run.policy.cap,
                           floor=run.policy.floor).cumulative_error
    settings = dict(q=q, r=r, rule=users.rule, n0=n0, seed=seed, mechanism=repr(mechanism), **run_provenance(run))
    return _compare(names, scheds, mf, run.cumulative_error, reference, settings)


@result
class GainMap(Result):
    """How much the optimal schedule gains over the best constant, on a (q, r) grid (:func:`gain_map`).

    Attributes
    ----------
    qs, rs, T, settings : numpy.ndarray, int and dict
        Grid axes, horizon and provenance (the mechanism, n0, family, policy, bracket, search settings).
    gain : numpy.ndarray, shape (len(qs), len(rs))
        1 − regret(optimal schedule) / regret(best constant).
    constant, first, last : numpy.ndarray
        γ* (or ε*) of each cell, and the first and last value of its optimal schedule.
    tau : float
        NaN for the Bernoulli model.
    """

    qs: np.ndarray
    rs: np.ndarray
    gain: np.ndarray
    constant: np.ndarray
    first: np.ndarray
    last: np.ndarray
    T: int
    tau: float
    settings: dict


def _gain_cells(q, r, *, keys, mechanism, T, n0, search):
    """Gain, best constant, first and last level of each cell's optimal schedule (``keys`` unused)."""
    out = []
    for qi, ri in zip(q.tolist(), r.tolist()):
        res = optimize.optimal_schedule(mechanism, Memoryless(q=qi, r=ri), T=T, n0=n0, **search)
        out.append([res.gain, res.constant, res.schedule[0], res.schedule[-1]])
    return np.asarray(out, float)


def gain_map(mechanism, qs, rs, *, T, n0, family="free", policy=None, bracket=None, search=None, n_jobs=None):
    """Gain of the optimal schedule over the best constant on a (q, r) grid.

    Parameters
    ----------
    mechanism : perfpriv.gaussian.GaussianMean or perfpriv.bernoulli.RandomizedResponse
        The model (its own level is a template); the Gaussian mechanism is searched with
        ``starts="constant"`` and ``polish=0`` (the fast setting) unless ``search`` says otherwise.
        The users of every cell are the paper's (rule "leak").
    qs, rs : array_like
        Values of q and r (1-D).
    T, n0, family, policy, bracket, search
        As in :func:`perfpriv.optimize.optimal_schedule` (the policy's cap and floor clip the mean
        field; unset: cap 20000, floor 1).
    n_jobs : int, optional
        Workers over the cells (:func:`perfpriv.sweep.map_grid`); deterministic.

    Returns
    -------
    GainMap

    References
    ----------
    Paper §5 (time-varying privacy); Remark 3 (the constant γ*).

    Examples
    --------
    >>> m = gain_map(bernoulli.RandomizedResponse(1.0), [0.3], [0.6], T=10, n0=100)
    >>> bool(m.gain[0, 0] > 0)
    True
    """
    if not isinstance(mechanism, (GaussianMean, bernoulli.RandomizedResponse)):
        raise TypeError("mechanism must be a perfpriv.gaussian.GaussianMean or a perfpriv.bernoulli.RandomizedResponse "
                        f"(the schedule search's two mechanisms); got {mechanism!r:.80}")
    gaussian_model = isinstance(mechanism, GaussianMean)
    run = Execution(n_jobs=n_jobs, progress=False)
    qs = np.atleast_1d(np.asarray(check_probability("qs", qs), dtype=float))
    rs = np.atleast_1d(np.asarray(check_probability("rs", rs), dtype=float))
    T = check_int("T", T, low=1)
    if search is not None and not isinstance(search, dict):
        raise TypeError(f"search must be None or a dict (optimize.optimal_schedule's); got {type(search).__name__}")
    chosen = dict(dict(starts="constant", polish=0) if gaussian_model else {}, **(search or {}))
    policy = engine.check_policy(policy)
    res = map_grid(_gain_cells, {"q": qs, "r": rs}, seed=0, product=True, options=run, mechanism=mechanism, T=T,
                   n0=n0, search=dict(family=family, policy=policy, bracket=bracket, search=chosen))
    gain, const, first, last = np.moveaxis(res, -1, 0)
    settings = dict(mechanism=mechanism, n0=n0, family=family, policy=policy.describe(), bracket=bracket,
                    search=chosen)
    return GainMap(qs, rs, gain, const, first, last, T, float(mechanism.tau) if gaussian_model else float("nan"),
                   settings)
