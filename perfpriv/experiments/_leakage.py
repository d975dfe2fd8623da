"""Experiments of the membership-inference chapters: leak fractions (Fig. 3a), their dispersion, the exact floor."""

from __future__ import annotations

import math

import numpy as np

from .. import engine, keyed, leakage
from .._validate import check_array_size, check_choice, check_int, check_real
from ..behaviour import Memoryless
from ..gaussian import GaussianMean
from ..sweep import Execution, check_execution, map_grid
from ._common import (Result, check_statistic, gaussian_levels, gaussian_provenance, mean_se, mechanism_provenance,
                      on_grid, result, run_provenance)

__all__ = ["LeakFractions", "figure3a_simulation", "LeakDispersion", "leak_dispersion", "ExactFloorCheck",
           "exact_floor_check"]


@result
class LeakFractions(Result):
    """Simulated leak fractions of Algorithm 1 rounds at a fixed population (Fig. 3a).

    Attributes
    ----------
    taus, gammas : numpy.ndarray, shapes (K,) and (G,)
        Thresholds τ and noise scales γ.
    p, se : numpy.ndarray, shape (G, K)
        Mean leak fraction over ``rounds`` independent rounds and its standard error.
    theory : numpy.ndarray, shape (G, K)
        Lemma 8's marginal leak probability :math:`p_τ` at the same (γ, τ)
        (:meth:`theory_at`).
    n, rounds : int
        Population of every round and rounds per (γ, τ).
    settings : dict
        Provenance: d, R, seed, conventions, statistic, policy, and the
        ``mechanism`` simulated (its statistic resolved; its τ replaced by
        each of ``taus``).
    """

    taus: np.ndarray
    gammas: np.ndarray
    p: np.ndarray
    se: np.ndarray
    theory: np.ndarray
    n: int
    rounds: int
    settings: dict

    def theory_at(self, taus) -> np.ndarray:
        """Lemma 8's :math:`p_τ(n, γ)` (eq. 11) at this result's n and noise scales, for thresholds ``taus``.

        Under the simulated mechanism's data model, statistic and :math:`p_τ` options.

        Parameters
        ----------
        taus : array_like
            Thresholds τ > 0, a number or a 1-D grid.

        Returns
        -------
        numpy.ndarray, shape (G, len(taus))
        """
        taus = _thresholds(taus)
        return _p_tau(self.settings["mechanism"], self.n, self.gammas, taus)


def _thresholds(taus):
    """Thresholds τ > 0 as a 1-D float array (a number is a grid of one)."""
    taus = np.atleast_1d(np.asarray(check_real("taus", taus, low=0, low_open=True), float))
    if taus.ndim != 1:
        raise ValueError(f"taus must be a number or a 1-D grid; got shape {taus.shape}")
    return taus


def _p_tau(mechanism, n, gammas, taus):
    """Lemma 8's :math:`p_τ` at every (γ, τ), shape (G, K): a resolved GaussianMean's data model and options."""
    options = mechanism.options()
    model = {k: options[k] for k in ("mu", "Sigma") if options[k] is not None}
    return np.asarray(leakage.marginal_leak_probability(n, gammas[:, None], tau=taus[None, :], d=mechanism.d,
                                                        R=mechanism.R, statistic=mechanism.statistic,
                                                        method=mechanism.leak, **model).p, float)


def _check_population(n, conventions, mechanism):
    """``n`` (a round's population, nobody joining) at most the population cap of ``conventions``, by name."""
    cap = mechanism_provenance(mechanism, conventions, n0=2)["policy"]["cap"]
    if cap is not None and n > cap:
        raise ValueError(f"n must be an integer in [2, {cap}] (the population cap of conventions="
                         f"{conventions!r}); got {n}")


def _leak_fraction_cells(tau, *, keys, mechanism, n, rounds, conventions):
    """Mean and standard error of the leak fraction of one-round runs, one τ per cell: (cells, 2, G)."""
    out = []
    levels = gaussian_levels(mechanism)
    for i, t in enumerate(np.atleast_1d(tau)):
        mech = GaussianMean(levels, **dict(mechanism.options(), tau=float(t)))
        run = engine.simulate(mech, Memoryless(q=0.0, r=0.0), T=1, n0=n, trials=rounds, conventions=conventions,
                              seed=keys[i])
        out.append(np.stack(mean_se(run.leak_fraction[..., 0])))           # (2, G)
    return np.stack(out)


def figure3a_simulation(mechanism, n, taus=None, *, rounds, conventions="paper", seed=0,
                        options=None) -> LeakFractions:
    """Leak fraction of Algorithm 1 rounds at a fixed population N, against τ (the points of Fig. 3a).

    For every τ, ``rounds`` one-round runs of Algorithm 1 with q = r = 0 (every round has exactly ``n``
    records) are simulated for all γ in one :func:`perfpriv.engine.simulate` call (common random
    numbers); the mean fraction of leaked records estimates Lemma 8's :math:`p_τ(n, γ)` (eq. 11).

    Parameters
    ----------
    mechanism : perfpriv.gaussian.GaussianMean
        The model simulated (the paper's: d = 12, R = 10, μ = 0, Σ = I): its levels are the γ (a
        number or a 1-D grid), its τ the threshold unless ``taus`` is given.
    n : int
        Population N, from 2 to the population cap (20000; 100 in the paper's caption).
    taus : array_like, optional
        Thresholds τ > 0, each replacing the mechanism's (default: the mechanism's τ alone).
    rounds : int
        Rounds per (γ, τ), >= 2.
    conventions, seed
        As in :func:`perfpriv.engine.simulate`; each τ is keyed by its value
        (:func:`perfpriv.sweep.map_grid`).
    options : perfpriv.sweep.Execution, optional
        Workers over the τ values and an ``on_cells`` callback, called with 1 as each τ is
        finished (default: joblib's workers, no progress bar); the result does not depend on them.

    Returns
    -------
    LeakFractions

    References
    ----------
    Paper, Lemma 8 (eq. 11), Fig. 3a.

    Examples
    --------
    >>> mech = GaussianMean([1.0, 4.0], tau=0.05, d=12, R=10.0)
    >>> sim = figure3a_simulation(mech, 50, [0.05, 0.5], rounds=20, seed=1)
    >>> sim.p.shape, bool(np.all(np.abs(sim.p - sim.theory) < 5 * sim.se + 0.02))
    ((2, 2), True)
    """
    gammas = gaussian_levels(mechanism)
    mechanism = on_grid(mechanism)
    n = check_int("n", n, low=2)
    taus = np.array([mechanism.tau]) if taus is None else _thresholds(taus)
    rounds = check_int("rounds", rounds, low=2)
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    options = check_execution(options, progress=False)
    _check_population(n, conventions, mechanism)
    out = map_grid(_leak_fraction_cells, {"tau": taus}, seed=keyed.root_key(seed), options=options,
                   mechanism=mechanism, n=n, rounds=rounds, conventions=conventions)
    p, se = out[:, 0].T, out[:, 1].T                                          # (G, K)
    prov = mechanism_provenance(mechanism, conventions, n0=n)
    resolved = mechanism.resolved(conventions)
    settings = dict(d=mechanism.d, R=mechanism.R, seed=seed, **prov, mechanism=resolved)
    return LeakFractions(taus, gammas, p, se, _p_tau(resolved, n, gammas, taus), n, rounds, settings)


@result
class LeakDispersion(Result):
    """Number of leaked records in one round of Algorithm 1, over many rounds (:func:`leak_dispersion`).

    Attributes
    ----------
    counts : numpy.ndarray of int
        Leaked records per simulated round (population ``n`` each time).
    mean, variance : float
        Their sample mean and variance.
    binomial_variance : float
        n p (1 − p) with p = mean / n: the variance if records leaked independently.
    ratio : float
        variance / binomial_variance (1 for a binomial; larger = over-dispersed);
        NaN when no round leaked any record, or every round leaked every record
        (then both variances are 0: there is no dispersion to compare).
    ratio_se : float
        Approximate standard error of ``ratio`` (from the sample variance of a
        normal sample, sqrt(2/(m − 1)) relative); NaN when ``ratio`` is NaN.
    n : int
    gamma, tau : float
    settings : dict
        Provenance: d, R, trials, seed, conventions, statistic.
    """

    counts: np.ndarray
    mean: float
    variance: float
    binomial_variance: float
    ratio: float
    ratio_se: float
    n: int
    gamma: float
    tau: float
    settings: dict


def leak_dispersion(gamma, *, tau, n=1000, trials=400, d=12, R=10.0, statistic=None, conventions="paper",
                    seed=0) -> LeakDispersion:
    """Leak counts of single rounds of Algorithm 1 and their dispersion against a binomial.

    All records of a round see the same noise draw :math:`η_t`, so their leak
    indicators are dependent (Lemma 7 conditions on the data, Lemma 8
    averages over it); this measures how far the count of one round is from
    a binomial with the same mean -- which Theorem 3's proof assumes away.

    Parameters
    ----------
    gamma, tau : float
        Noise scale γ > 0 and threshold τ > 0.
    n : int
        Population of the round, from 2 to the population cap (20000).
    trials : int
        Simulated rounds, >= 3.
    d, R, statistic, conventions, seed
        As in :class:`perfpriv.gaussian.GaussianMean` and :func:`perfpriv.engine.simulate`; the run is
        keyed by (γ, τ, n).

    Returns
    -------
    LeakDispersion

    References
    ----------
    Paper, Lemmas 7-8 and the proof of Theorem 3 (appendix D.4).

    Examples
    --------
    >>> res = leak_dispersion(2.0, tau=0.02, n=200, trials=50)
    >>> res.counts.shape
    (50,)
    """
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n = check_int("n", n, low=2)
    trials = check_int("trials", trials, low=3)
    mech = GaussianMean(gamma, tau=tau, d=d, R=R, statistic=check_statistic(statistic))
    _check_population(n, conventions, mech)
    run = engine.simulate(mech, Memoryless(q=0.0, r=0.0), T=1, n0=n, trials=trials, conventions=conventions,
                          seed=keyed.cell_key(seed, gamma, tau, n))
    counts = np.asarray(run.leaked[:, 0], dtype=np.int64)
    mean = float(counts.mean())
    var = float(counts.var(ddof=1))
    p = mean / n
    bvar = n * p * (1 - p)
    ratio = var / bvar if bvar > 0 else float("nan")     # no record or every record leaked: 0/0
    settings = dict(d=d, R=R, trials=trials, seed=seed, **run_provenance(run))
    return LeakDispersion(counts, mean, var, bvar, ratio, ratio * math.sqrt(2.0 / (trials - 1)), n, gamma, tau,
                          settings)


@result
class ExactFloorCheck(Result):
    """Leak fractions of Algorithm 1 rounds at a huge noise scale under the exact statistic (:func:`exact_floor_check`).

    Attributes
    ----------
    ns, taus : numpy.ndarray, shapes (K,) and (J,)
        Populations N (integers) and thresholds τ.
    p, se : numpy.ndarray, shape (J, K)
        Mean leak fraction over ``rounds`` independent rounds and its standard error.
    floor : numpy.ndarray, shape (J, K)
        :func:`perfpriv.leakage.exact_leak_floor`, the γ → ∞ limit of the leak probability.
    theory : numpy.ndarray, shape (J, K)
        Lemma 8's :math:`p_τ` at ``gamma`` under the exact statistic (quadrature).
    gamma, rounds : float, int
        The noise scale of the simulated rounds, and rounds per (τ, N).
    settings : dict
        Provenance: d, R, seed, conventions, statistic, policy.
    """

    ns: np.ndarray
    taus: np.ndarray
    p: np.ndarray
    se: np.ndarray
    floor: np.ndarray
    theory: np.ndarray
    gamma: float
    rounds: int
    settings: dict


def _floor_cells(n, *, keys, taus, gamma, rounds, d, R):
    """Mean and standard error of the leak fraction of one-round runs, one N per cell: (cells, 2, J)."""
    out = []
    for i, size in enumerate(np.atleast_1d(n)):
        rows = []
        for t in taus:
            mech = GaussianMean(gamma, tau=float(t), d=d, R=R, statistic="exact")
            run = engine.simulate(mech, Memoryless(q=0.0, r=0.0), T=1, n0=int(size), trials=rounds, seed=keys[i])
            rows.append(mean_se(run.leak_fraction[:, 0]))
        out.append(np.array(rows).T)                                          # (2, J)
    return np.stack(out)


def exact_floor_check(ns, *, taus=(0.02,), gamma=1e4, rounds=2000, d=12, R=10.0, seed=0,
                      n_jobs=None) -> ExactFloorCheck:
    r"""Simulated leak fractions at a huge γ under the exact statistic, against its closed-form floor.

    At a huge γ the shared term :math:`-\|η\|^{2}/(2γ^{2})` of Λ dominates every record's own terms,
    so a round leaks all its records or none: the mean leak fraction of ``rounds`` independent one-round
    runs (q = r = 0) estimates :func:`perfpriv.leakage.exact_leak_floor` with a standard error of about
    sqrt(floor (1 − floor)/rounds).

    Parameters
    ----------
    ns, taus : array_like
        Populations N >= 2 (whole numbers) and thresholds τ > 0.
    gamma : float
        Noise scale of the simulated rounds (large: γ = 1e4 leaves Λ within
        ~1e-8 of its limit at the paper's d and R).
    rounds : int
        Independent rounds per (τ, N), >= 2.
    d, R : int, float
        Dimension and clipping radius (12 and 10 in the paper).
    seed, n_jobs
        Root seed (each N keyed by its value; the τ of one N share its rounds) and workers over the
        populations, on which the result does not depend.

    Returns
    -------
    ExactFloorCheck

    References
    ----------
    Paper eq. 8 and Lemma 7; the exact remove-one statistic of the authors'
    code; issue 12, §2.

    Examples
    --------
    >>> res = exact_floor_check([50, 1000], rounds=200, seed=1)
    >>> res.floor.round(3).tolist(), bool(np.all(np.abs(res.p - res.floor) <= 4.5 * res.se + 1e-9))
    ([[0.395, 0.0]], True)
    """
    ns = np.atleast_1d(np.asarray(check_real("ns", ns, low=2), float))
    if not np.all(ns == np.rint(ns)):
        raise ValueError(f"ns must be whole numbers of records; got {ns.tolist()}")
    d = check_int("d", d, low=1)
    check_array_size("the records of a round (max(ns) * d normals)", ns=float(ns.max()), d=d)
    ns = ns.astype(np.int64)
    taus = np.atleast_1d(np.asarray(check_real("taus", taus, low=0, low_open=True), float))
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    rounds = check_int("rounds", rounds, low=2)
    run = Execution(n_jobs=n_jobs, progress=False)
    out = map_grid(_floor_cells, {"n": ns}, seed=keyed.root_key(seed), options=run, taus=taus, gamma=gamma,
                   rounds=rounds, d=d, R=R)
    p, se = out[:, 0].T, out[:, 1].T                                          # (J, K)
    floor = np.asarray(leakage.exact_leak_floor(ns[None, :], d=d, tau=taus[:, None]), float)
    theory = np.asarray(leakage.marginal_leak_probability(ns[None, :], gamma, tau=taus[:, None], d=d, R=R,
                                                          statistic="exact").p, float)
    prov = gaussian_provenance("paper", n0=int(ns.max()), tau=float(taus[0]), d=d, R=R, statistic="exact")
    settings = dict(d=d, R=R, seed=seed, **prov)
    return ExactFloorCheck(ns, taus, p, se, floor, theory, gamma, rounds, settings)
