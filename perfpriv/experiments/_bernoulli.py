"""Experiments of the Bernoulli chapters (paper §3, appendix B): the runs of Figs. 1 and 6, the final-round error
against ε."""

from __future__ import annotations

import numpy as np

from .. import bernoulli, engine, optimize
from .._validate import check_real, check_root_seed
from ..behaviour import Behaviour
from ..sweep import Execution, check_execution
from ._common import Result, bernoulli_provenance, memoryless_rates, result, with_defaults

__all__ = ["curve_runs", "FinalErrors", "final_error_curve"]


def _check_users_list(users):
    """A non-empty list or tuple of :class:`perfpriv.behaviour.Behaviour`, one run each."""
    if not isinstance(users, (list, tuple)):
        raise TypeError(f"users must be a list of perfpriv.behaviour.Behaviour (one run each, e.g. "
                        f"[Memoryless(q=0.6, r=0.3), Memoryless(q=0.3, r=0.6)]); got {users!r:.80}")
    if not users:
        raise ValueError("users must hold at least one behaviour; got an empty list")
    for entry in users:
        if not isinstance(entry, Behaviour):
            raise TypeError(f"each entry of users must be a perfpriv.behaviour.Behaviour (e.g. Memoryless(q=..., "
                            f"r=...)); got {type(entry).__name__}")
    return list(users)


def curve_runs(mechanism, users, *, T=100, n0=400, trials=30, policy=None, conventions="paper", seed=0,
               options=None) -> list:
    r"""The runs behind Figs. 1 and 6: every privacy level simulated for each of a list of users.

    Entry k of ``users`` is one :func:`perfpriv.engine.simulate` run of all the mechanism's budgets
    (sharing their random numbers), seeded ``seed + k``: the squared error of eq. 1's estimate and
    :math:`N_t` every round, as :func:`perfpriv.plots.figure1` and :func:`perfpriv.plots.figure6`
    draw them. The paper's sizes are ``perfpriv.cli.SCALES[scale]["curves"]`` (T = 100 for
    ``"book"``, 200 for ``"paper"``; 10 budgets on [0.01, 5] and inf, 30 trials).

    Parameters
    ----------
    mechanism : perfpriv.bernoulli.RandomizedResponse
        Its budgets ε (a number or a 1-D grid; ``np.inf``: no privacy) and the law of :math:`μ_t`
        (the paper's curves: ``mu=(0.0, 1.0)``).
    users : list of perfpriv.behaviour.Behaviour
        One run per entry; the paper's rows are ``Memoryless(q=0.6, r=0.3)`` and
        ``Memoryless(q=0.3, r=0.6)``, with ``rule="agnostic"`` for Fig. 6.
    T, n0, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate` (unset policy fields: cap 20000, then the preset), but
        ``"authors"`` follows the authors' curve script (``bernoulli.curve_script_options``:
        floor 1, no stop, estimates clipped unless the mechanism says otherwise), and entry k uses
        the integer ``seed + k`` (:func:`perfpriv._validate.check_root_seed`).
    options : perfpriv.sweep.Execution, optional
        Its ``on_cells`` is called with 1 after each run (a progress count, or a place to stop
        cleanly); the runs do not depend on it.

    Returns
    -------
    list of perfpriv.engine.SimulationRun
        One per entry of ``users``, in order.

    References
    ----------
    Paper §3 ("Empirical simulation", Fig. 1) and appendix B (Fig. 6).

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> runs = curve_runs(bernoulli.RandomizedResponse([0.5, np.inf]),
    ...                   [Memoryless(q=0.6, r=0.3), Memoryless(q=0.3, r=0.6)], T=5, n0=50, trials=2)
    >>> len(runs), runs[0].population.shape, runs[1].seed
    (2, (2, 2, 6), 1)
    """
    eps = engine.level_grid(mechanism, kind=bernoulli.RandomizedResponse)
    users = _check_users_list(users)
    seed = check_root_seed(seed)
    options = check_execution(options)
    script = bernoulli.curve_script_options(conventions)       # checks conventions
    policy = with_defaults(policy, **script["policy"].describe())
    clip = script.get("clip_estimate") if mechanism.clip_estimate is None else mechanism.clip_estimate
    mech = bernoulli.RandomizedResponse(eps, mu=mechanism.mu, clip_estimate=clip)
    runs = []
    for k, entry in enumerate(users):
        runs.append(engine.simulate(mech, entry, T=T, n0=n0, trials=trials, policy=policy,
                                    conventions=script["conventions"], seed=None if seed is None else seed + k))
        if options.on_cells is not None:
            options.on_cells(1)
    return runs


@result
class FinalErrors(Result):
    """Final-round squared error against ε: simulation beside the mean field (:func:`final_error_curve`).

    Attributes
    ----------
    epsilons : numpy.ndarray, shape (E,)
        Simulated budgets (``inf``: no privacy).
    mean, se : numpy.ndarray, shape (E,)
        Mean over trials of the squared error of round T's estimate and its standard error (inf from
        one trial).
    fine, theory, theory_inf : numpy.ndarray and float
        Dense ε grid (array), the mean-field error of round T on it (:func:`perfpriv.engine.mean_field`)
        and at ε = inf (float).
    epsilon_star, epsilon_c : float
        The simulated ε* (grid argmin of ``mean``) and Theorem 1's critical budget
        (:func:`perfpriv.bernoulli.critical_epsilon`).
    q, r, rule, T, n0, trials, settings : float, str, int and dict
        The inputs and the provenance (cap, mu, seed, conventions, clip_estimate, policy).
    """

    epsilons: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    epsilon_star: float
    fine: np.ndarray
    theory: np.ndarray
    theory_inf: float
    epsilon_c: float
    q: float
    r: float
    rule: str
    T: int
    n0: int
    trials: int
    settings: dict


def final_error_curve(mechanism, users, *, T=100, n0=400, trials=30, policy=None, conventions="paper", seed=0,
                      fine=None) -> FinalErrors:
    """The squared error of round T against ε, by simulation and from the mean field (§3's objective).

    The simulated points are :func:`perfpriv.optimize.optimal_epsilon` at one (q, r) cell; the curve
    is the mean-field error :math:`E_μ[ν(1 - ν)]/(4β^{2} N_{T-1})` (Lemma 2's growth).

    Parameters
    ----------
    mechanism : perfpriv.bernoulli.RandomizedResponse
        Its budgets are the simulated ε (a number or a 1-D grid; ``np.inf``: no privacy; the book's:
        15 values on ``geomspace(0.01, 20)`` and inf); ``clip_estimate`` ``None``: from ``conventions``.
    users : perfpriv.behaviour.Memoryless
        One q, one r and the growth rule (``"leak"`` or ``"agnostic"``).
    T, n0, trials, policy, conventions, seed
        As in :func:`perfpriv.engine.simulate` (unset policy fields: the preset, cap 20000); the
        policy's cap and floor (unset: 20000 and 1) also clip the mean field.
    fine : array_like, optional
        Dense grid of the mean-field curve (default 200 values over the finite ε).

    Returns
    -------
    FinalErrors

    References
    ----------
    Paper §3 (the final-horizon error it optimizes), Lemma 2, Theorem 1.

    Examples
    --------
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = bernoulli.RandomizedResponse([0.1, 1.0, np.inf])
    >>> f = final_error_curve(mech, Memoryless(q=0.3, r=0.6), T=5, n0=50, trials=3)
    >>> f.mean.shape, f.theory.shape
    ((3,), (200,))
    """
    eps = engine.level_grid(mechanism, kind=bernoulli.RandomizedResponse)
    q, r = memoryless_rates(users, name="users")
    policy = engine.check_policy(policy)
    finite = eps[np.isfinite(eps)]
    if fine is None:
        top = max(20.0, float(finite.max())) if finite.size else 20.0
        fine = np.geomspace(max(0.01, float(finite.min())) if finite.size else 0.01, top, 200)
    fine = np.atleast_1d(np.asarray(check_real("fine", fine, low=0, low_open=True), float))
    prov = bernoulli_provenance(conventions, n0=n0, mu=mechanism.mu, clip_estimate=mechanism.clip_estimate,
                                policy=policy)
    res = optimize.optimal_epsilon(bernoulli.RandomizedResponse(eps, **mechanism.options()), users, T=T, n0=n0,
                                   trials=trials, seed=seed, conventions=conventions, policy=policy,
                                   options=Execution(chunk=64, progress=False))
    clip = policy.resolve(mechanism, "paper", n0=n0)            # the mean field's clip: the paper's preset
    mf = dict(T=T, n0=n0, cap=clip.cap, floor=clip.floor)
    theory = np.asarray(engine.mean_field(bernoulli.RandomizedResponse(fine, mu=mechanism.mu), users,
                                          **mf).sq_error, float)[..., -1]
    theory_inf = float(engine.mean_field(bernoulli.RandomizedResponse(np.inf, mu=mechanism.mu), users,
                                         **mf).sq_error[-1])
    ec = float(bernoulli.critical_epsilon(q=q, r=r, rule=users.rule))
    settings = dict(cap=prov["policy"]["cap"], mu=mechanism.mu, seed=seed, **prov)
    return FinalErrors(eps, np.asarray(res.values, float), np.asarray(res.se, float), float(res.epsilon), fine,
                       theory, theory_inf, ec, q, r, users.rule, int(T), int(n0), int(trials), settings)
