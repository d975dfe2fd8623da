"""Experiments of the Bernoulli chapters (paper §3, appendix B): the final-round error against ε."""

from __future__ import annotations

import numpy as np

from .. import bernoulli, engine, optimize
from .._validate import check_choice, check_probability, check_real
from ..behaviour import RULES, Memoryless
from ..sweep import Execution
from ._common import Result, bernoulli_provenance, result

__all__ = ["FinalErrors", "final_error_curve"]


@result
class FinalErrors(Result):
    """Final-round squared error against ε: simulation beside the mean field (:func:`final_error_curve`).

    Attributes
    ----------
    epsilons : numpy.ndarray, shape (E,)
        Simulated budgets (``inf``: no privacy).
    mean, se : numpy.ndarray, shape (E,)
        Mean over trials of the squared error of the last estimate (round T)
        and its standard error (inf from one trial).
    epsilon_star : float
        The simulated ε* (grid argmin of ``mean``).
    fine : numpy.ndarray
        Dense ε grid of the mean-field curve.
    theory : numpy.ndarray
        Mean-field error of round T on ``fine`` (:func:`perfpriv.bernoulli.mean_field`).
    theory_inf : float
        The same at ε = inf.
    epsilon_c : float
        Theorem 1's critical budget (:func:`perfpriv.bernoulli.critical_epsilon`).
    q, r : float
    rule : str
    T, n0, trials : int
    settings : dict
        Provenance: cap, mu, seed, conventions, clip_estimate, policy.
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


def final_error_curve(*, q, r, epsilons=None, rule="leak", T=100, n0=400, trials=30, cap=20000, mu=(0.0, 1.0),
                      conventions="paper", seed=0, fine=None) -> FinalErrors:
    """The squared error of round T against ε, by simulation and from the mean field (§3's objective).

    The simulated points are :func:`perfpriv.optimize.optimal_epsilon` at one
    (q, r) cell (all ε of the grid in one batched engine call, sharing their
    random numbers; the cell keyed by the root seed and (q, r)); the curve is
    the mean-field error :math:`E_μ[ν(1 - ν)]/(4β^{2} N_{T-1})` of
    :func:`perfpriv.bernoulli.mean_field` (floor 1, the paper's
    conventions).

    Parameters
    ----------
    q, r : float
        Leaving and recruiting probabilities (keyword-only).
    epsilons : array_like, optional
        Simulated ε (default 15 values in [0.01, 20] and inf).
    rule : {"leak", "agnostic"}
        Growth rule.
    T, n0, trials, cap : int
        Horizon, initial population, trials per ε, population cap.
    mu : float or (float, float)
        Law of :math:`μ_t`.
    conventions : {"paper", "authors"}
        Of the simulation (:func:`perfpriv.bernoulli.simulate`).
    seed : None, int, SeedSequence or Generator
        Root seed.
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
    >>> f = final_error_curve(q=0.3, r=0.6, epsilons=[0.1, 1.0, np.inf], T=5, n0=50, trials=3)
    >>> f.mean.shape, f.theory.shape
    ((3,), (200,))
    """
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    rule = check_choice("rule", rule, RULES)
    eps = np.asarray(tuple(np.geomspace(0.01, 20.0, 15)) + (np.inf,) if epsilons is None
                     else np.atleast_1d(np.asarray(check_real("epsilons", epsilons, low=0, low_open=True,
                                                              allow_inf=True), float)))
    finite = eps[np.isfinite(eps)]
    if fine is None:
        top = max(20.0, float(finite.max())) if finite.size else 20.0
        fine = np.geomspace(max(0.01, float(finite.min())) if finite.size else 0.01, top, 200)
    fine = np.atleast_1d(np.asarray(check_real("fine", fine, low=0, low_open=True), float))
    res = optimize.optimal_epsilon(bernoulli.RandomizedResponse(eps, mu=mu), Memoryless(q=q, r=r, rule=rule), T=T,
                                   n0=n0, trials=trials, seed=seed, conventions=conventions,
                                   policy=engine.Policy(cap=cap), options=Execution(chunk=64, progress=False))
    mf = dict(q=q, r=r, T=T, n0=n0, rule=rule, cap=cap, mu=mu)
    theory = np.asarray(bernoulli.mean_field(fine, **mf).sq_error, float)[..., -1]
    theory_inf = float(bernoulli.mean_field(np.inf, **mf).sq_error[-1])
    ec = float(bernoulli.critical_epsilon(q=q, r=r, rule=rule))
    settings = dict(cap=cap, mu=mu, seed=seed, **bernoulli_provenance(conventions, n0=n0, mu=mu,
                                                                              policy=engine.Policy(cap=cap)))
    return FinalErrors(eps, np.asarray(res.values, float), np.asarray(res.se, float), float(res.epsilon), fine,
                       theory, theory_inf, ec, q, r, rule, int(T), int(n0), int(trials), settings)
