"""Self-checks for the book's exercises, for classroom use.

Every exercise of the book whose answer is a number has an id of the form
``"<exercise label>.<part>"``. :func:`check` says whether a reader's answer is
right, within a tolerance, without printing the answer itself::

    >>> from perfpriv import exercises
    >>> exercises.check("ch01-ex-critical.beta_c", 0.1154)
    ch01-ex-critical.beta_c: correct.
    True
    >>> exercises.check("ch01-ex-critical.beta_c", 0.25)
    ch01-ex-critical.beta_c: not yet -- check your computation and try again.
    False

The stored answers are plain numbers (so that checking needs no computation),
and each exercise also records the perfpriv call that produces its answer:
the test suite proves that every stored answer equals what the library
computes (``tests/test_exercises.py``).

A notebook that writes its own model (appendix B, a course's handout) adds its
self-checks with :func:`register`, which runs the exercise's ``compute`` once
and refuses an answer it does not reproduce.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ._validate import check_flag, check_real

__all__ = ["Exercise", "check", "exercise_ids", "describe", "register"]


@dataclass(frozen=True)
class Exercise:
    """One numeric answer of an exercise.

    Attributes
    ----------
    id : str
        ``"<label>.<part>"``, e.g. ``"ch01-ex-critical.beta_c"``.
    prompt : str
        What the number is (shown by :func:`describe`, never the answer).
    answer : float
        The stored answer.
    compute : callable
        ``compute() -> float``: the perfpriv call that gives the answer.
    rtol, atol : float
        A reader's answer ``x`` is correct when
        ``|x - answer| <= atol + rtol * |answer|``.
    """

    id: str
    prompt: str
    answer: float
    compute: Callable[[], float]
    rtol: float = 5e-3
    atol: float = 0.0

    def __post_init__(self):
        for name in ("id", "prompt"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str; got {getattr(self, name)!r:.80}")
        if not callable(self.compute):
            raise TypeError(f"compute must be a callable compute() -> float; got {self.compute!r:.80}")
        for name, kw in (("answer", dict(allow_inf=True)), ("rtol", dict(low=0)), ("atol", dict(low=0))):
            object.__setattr__(self, name, check_real(name, getattr(self, name), scalar=True, **kw))


def _module(name):
    """An accessor of the perfpriv module ``name``, imported on first use (this module imports fast)."""
    return lambda: importlib.import_module(f".{name}", __package__)


(_bernoulli, _gaussian, _leakage, _dynamics, _behaviour, _feedback, _performative, _regression, _gradient,
 _optimize, _experiments) = map(_module, ("bernoulli", "gaussian", "leakage", "dynamics", "behaviour",
                                          "feedback", "performative", "regression", "gradient", "optimize",
                                          "experiments"))


def _rr_leak(epsilon: float) -> float:
    return float(_bernoulli().RandomizedResponse(epsilon).leak_probability(1, epsilon))


def _bisect(predicate, lo, hi, iterations=60):
    """The boundary of ``predicate`` on [lo, hi], true below it (predicate(lo) true, predicate(hi) false)."""
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if predicate(mid) else (lo, mid)
    return 0.5 * (lo + hi)


def _classes_r_min() -> float:
    beh = _behaviour()
    return 1.0 - _bisect(lambda s: beh.Heterogeneous(q=[0.8, 0.2], weights=[0.5, 0.5], r=1.0 - s)
                         .critical_leak_probability() > 0.5, 0.0, 1.0)


def _contagion_kappa_max() -> float:
    beh = _behaviour()
    return _bisect(lambda k: beh.Contagion(q=0.2, r=0.6, kappa=k).critical_leak_probability() > 0.5, 0.0, 4.0)


def _sampling_ratio() -> float:
    pf = _performative()
    unit = pf.GaussianClients(np.zeros((25, 1)), np.zeros(25), None, 1.0)
    d = {s: pf.expected_distance(unit, pf.FedAvg(scheme=s, K=k, steps=1.0), T=1).sq_distance[1]
         for s, k in (("full", None), ("I", 10), ("II", 10))}
    return float((d["II"] - d["full"]) / (d["I"] - d["full"]))


def _threshold_growth() -> float:
    pf = _performative()
    mech = pf.PrivateFederatedRound(1.0, tau=0.3, R=10.0, clients=pf.ClientLaw(m=2.0, m_sd=1.0, eps=0.8, eps_sd=0.3))
    g = mech.survival_threshold([0.0, 10.0], n=50, q=0.5, r=0.2)
    return float(g[1] / g[0])


def _model(q, r, tau=0.02, statistic=None):
    """The chapters' Gaussian model (d = 12, R = 10) at threshold ``tau`` and users (q, r)."""
    return (_gaussian().GaussianMean(tau=tau, d=12, R=10.0, statistic=statistic),
            _behaviour().Memoryless(q=q, r=r))


def _threshold_ratio() -> float:
    dyn = _dynamics()
    small = dyn.exact_critical_gamma(*_model(0.5, 0.5), n=50)
    large = dyn.exact_critical_gamma(*_model(0.5, 0.5), n=1000)
    return float(small / large)


def _fpr_by_hand() -> float:
    from scipy.stats import norm

    mu = float(_leakage().gdp_mu(2.0, 5, 1.0))
    return float(norm.sf(2.0 / mu + mu / 2))


def _critical_1000(statistic: str) -> float:
    return float(_dynamics().exact_critical_gamma(*_model(0.45, 0.11, statistic=statistic), n=1000))


def _floor_r_min() -> float:
    floor = float(_leakage().exact_leak_floor(100, d=12, tau=0.035))
    return 0.45 * floor / (1.0 - floor)


def _survival_gamma() -> float:
    grid = np.geomspace(0.5, 20, 9)
    run = _gaussian().simulate(grid, tau=0.05, q=0.5, r=0.2, T=20, n0=300, d=12, R=10.0, trials=8, seed=50)
    return float(grid[np.argmax(run.population[..., -1].mean(axis=-1) >= 300)])


def _growth_at_sixth() -> float:
    dyn = _dynamics()
    model = _model(0.2, 0.6, tau=0.05)
    gc = dyn.critical_gamma(*model, n=250)
    return float(dyn.growth_factor(*model, n=250, gamma=gc / 6))


def _sim_thresholds() -> tuple:
    dyn = _dynamics()
    return (float(dyn.exact_critical_gamma(*_model(0.4, 0.6), n=1000)),
            float(dyn.critical_gamma(*_model(0.4, 0.6), n=1000)))


def _sim_growth(which: int) -> float:
    return float(_dynamics().growth_factor(*_model(0.4, 0.6), n=1000, gamma=_sim_thresholds()[which]))


def _limit_ratio() -> float:
    ends = _dynamics().infinite_horizon_gamma(*_model(0.2, 0.5), n0=1000, bracket=(5.0, 20.0), grid=5)
    return float(ends.limits[-1] / ends.limits[0])


def _first_round_at_floor() -> float:
    path = _bernoulli().mean_field(np.inf, q=0.25, r=0.4, T=60, n0=400).population
    return float(np.argmax(path <= 1))


def _agnostic_survival_edge(beta: float) -> float:
    """ch02-ex-threshold: the r at which the agnostic growth factor at this beta crosses 1 (q = 0.7)."""
    bern = _bernoulli()
    return _bisect(lambda r: bern.growth_factor(beta, q=0.7, r=r, rule="agnostic") < 1.0, 0.0, 1.0)


def _strip_edge(T: int) -> float:
    """ch02-ex-strip: the largest r of the stated grid at which the mean-field optimal budget is finite."""
    from . import behaviour, bernoulli, optimize

    eps = np.r_[np.geomspace(0.05, 10.0, 40), np.inf]
    r = np.linspace(0.5, 0.6, 101)
    res = optimize.mean_field_optimal_epsilon(bernoulli.RandomizedResponse(eps, mu=(0.5, 1.0)),
                                              behaviour.Memoryless(q=np.full_like(r, 0.5), r=r, rule="agnostic"),
                                              T=T, n0=400)
    return float(r[np.isfinite(res.epsilon)].max())


def _regret_optima() -> tuple[float, float]:
    """ch01-ex-regret: the budgets minimizing the final-round and the cumulative error (its stated run)."""
    eps = np.r_[np.geomspace(0.01, 5.0, 15), np.inf]
    run = _bernoulli().simulate(eps, q=0.3, r=0.6, T=100, n0=400, trials=30, seed=11)
    final = run.sq_error[..., -1].mean(axis=-1)
    cumulative = run.sq_error.sum(axis=-1).mean(axis=-1)
    return float(eps[np.argmin(final)]), float(eps[np.argmin(cumulative)])


def _lemma9_by_hand(terms: int) -> float:
    """The first ``terms`` terms of Lemma 9's sum at :math:`C_1` = 1.2 (d = 12, Sigma = I, gamma = 1, N0 = 200)."""
    error = float(_gaussian().mahalanobis_error(1.0, 200, np.eye(12)))
    return float(error * np.sum(1.2 ** -np.arange(1, terms + 1)))


def _ch07_schedule(q, r, T, bracket=None, **search):
    """The chapter-07 optimal gamma schedule (tau = 0.02, N0 = 200, d = 12, R = 10, cap 20000)."""
    return _optimize().optimal_schedule(_gaussian().GaussianMean(tau=0.02, d=12, R=10.0),
                                        _behaviour().Memoryless(q=q, r=r), T=T, n0=200, bracket=bracket,
                                        search=search)


def _ch07_runs_needed() -> float:
    mild = _ch07_schedule(0.3, 0.6, 10, starts="constant")
    pilot = _experiments().compare_schedules({"constant": np.full(10, mild.constant), "optimal": mild.gamma},
                                             _gaussian().GaussianMean(tau=0.02, d=12, R=10.0),
                                             _behaviour().Memoryless(q=0.3, r=0.6), n0=200, trials=100, seed=9)
    spread = pilot.difference_se[1] * math.sqrt(pilot.trials)
    return float((1.96 * spread / (mild.regret - mild.constant_regret)) ** 2)


def _ch07_floored_gain() -> float:
    best = _ch07_schedule(0.5, 0.4, 10)
    return float(_ch07_schedule(0.5, 0.4, 10, bracket=(best.constant / 2, 1e3)).gain)


_ENTRIES = [
    # chapter 01 -- the threshold by hand (q = 0.25, r = 0.4: a pair the chapter's tables do not print)
    Exercise("ch01-ex-critical.beta_c", "critical beta for q = 0.25, r = 0.4 (leak rule)",
             0.11538461538461539, lambda: float(_bernoulli().critical_beta(q=0.25, r=0.4))),
    Exercise("ch01-ex-critical.epsilon_c", "critical epsilon for q = 0.25, r = 0.4 (leak rule)",
             0.4700036292457356, lambda: float(_bernoulli().critical_epsilon(q=0.25, r=0.4))),
    Exercise("ch01-ex-critical.growth_no_privacy", "growth factor without privacy, q = 0.25, r = 0.4",
             0.75, lambda: float(_bernoulli().growth_factor(0.5, q=0.25, r=0.4))),
    Exercise("ch01-ex-critical.rounds", "first round at which the mean-field population (N0 = 400, "
             "no privacy) reaches the floor of 1", 21.0, _first_round_at_floor, rtol=0.0, atol=0.5),
    # chapter 01 -- final error or whole trajectory (a grid value: any answer within 5 % of it)
    Exercise("ch01-ex-regret.final", "budget of the grid minimizing the mean final-round error "
             "((q, r) = (0.3, 0.6), T = 100, N0 = 400, 30 trials, seed 11)",
             0.3485527984255849, lambda: _regret_optima()[0], rtol=0.05),
    Exercise("ch01-ex-regret.cumulative", "budget of the grid minimizing the mean cumulative error R_T "
             "(same run)", 0.5433155633584393, lambda: _regret_optima()[1], rtol=0.05),
    # chapter 02 -- the agnostic threshold by hand (q = 0.7, r = 0.4: a pair the chapter's tables do not print)
    Exercise("ch02-ex-threshold.beta_c", "critical beta of the agnostic rule for q = 0.7, r = 0.4",
             1 / 14, lambda: float(_bernoulli().critical_beta(q=0.7, r=0.4, rule="agnostic"))),
    Exercise("ch02-ex-threshold.epsilon_c", "critical epsilon of the agnostic rule for q = 0.7, r = 0.4",
             math.log(4 / 3), lambda: float(_bernoulli().critical_epsilon(q=0.7, r=0.4, rule="agnostic"))),
    Exercise("ch02-ex-threshold.r_no_privacy", "smallest r at which the agnostic population survives without "
             "privacy (q = 0.7)", 0.7, lambda: _agnostic_survival_edge(0.5)),
    Exercise("ch02-ex-threshold.r_collapse", "r below which the agnostic population collapses at every budget "
             "(q = 0.7)", 0.35, lambda: _agnostic_survival_edge(0.0)),
    # chapter 02 -- how thin is the strip above the diagonal (mean field, the stated grids; one r step = 0.001)
    Exercise("ch02-ex-strip.T50", "largest r with a finite mean-field optimal budget, q = 0.5, T = 50",
             0.583, lambda: _strip_edge(50), rtol=0.0, atol=0.0015),
    Exercise("ch02-ex-strip.T100", "largest r with a finite mean-field optimal budget, q = 0.5, T = 100",
             0.54, lambda: _strip_edge(100), rtol=0.0, atol=0.0015),
    Exercise("ch02-ex-strip.T200", "largest r with a finite mean-field optimal budget, q = 0.5, T = 200",
             0.519, lambda: _strip_edge(200), rtol=0.0, atol=0.0015),
    # chapter 03 -- Lemma 3.2 by hand (Sigma = diag(1, 4), N = 100, gamma = 2, R = 10)
    Exercise("ch03-ex-lemma3.error", "expected squared Mahalanobis error, Sigma = diag(1, 4), N = 100, gamma = 2",
             0.07, lambda: float(_gaussian().mahalanobis_error(2.0, 100, np.diag([1.0, 4.0])))),
    Exercise("ch03-ex-lemma3.rho", "zCDP rho of one contribution at gamma = 2, R = 10",
             50.0, lambda: float(_gaussian().rho_from_gamma(2.0, 10.0))),
    Exercise("ch03-ex-lemma3.n", "smallest N with an expected error of at most 0.01 (Sigma = diag(1, 4), gamma = 2)",
             700.0, lambda: float(math.ceil(_gaussian().mahalanobis_error(2.0, 1, np.diag([1.0, 4.0])) / 0.01
                                            - 1e-9)), rtol=0.0, atol=0.5),
    Exercise("ch03-ex-lemma3.rho_mean", "zCDP rho of the published mean of N = 100 users at gamma = 2, R = 10",
             0.5, lambda: float(_gaussian().rho_from_gamma(2.0 * math.sqrt(100), 10.0))),
    # chapter 03 -- how much noise keeps the population alive (simulation, seed 50)
    Exercise("ch03-ex-survival.gamma", "smallest gamma of geomspace(0.5, 20, 9) whose mean N_20 is at least N_0 = 300",
             3.1622776601683795, lambda: _survival_gamma(), rtol=0.01),
    Exercise("ch03-ex-survival.rho", "per-contribution zCDP rho at that gamma (R = 10)",
             20.0, lambda: float(_gaussian().rho_from_gamma(_survival_gamma(), 10.0)), rtol=0.01),
    # chapter 04 -- one record by hand (N = 5, gamma = 1, s = 2, tau = 2)
    Exercise("ch04-ex-by-hand.a", "mean a of the log-likelihood ratio (N = 5, gamma = 1, s = 2)",
             0.625, lambda: float(_leakage().llr_moments(2.0, 5, 1.0).mean)),
    Exercise("ch04-ex-by-hand.mu", "Gaussian-DP parameter mu' of the record",
             1.118033988749895, lambda: float(_leakage().gdp_mu(2.0, 5, 1.0))),
    Exercise("ch04-ex-by-hand.leak", "exact leak probability at tau = 2 (Lemma 4.4)",
             0.10937900226669622, lambda: float(_leakage().leak_probability(2.0, 5, 1.0, tau=2.0)), rtol=0.02),
    Exercise("ch04-ex-by-hand.alpha", "optimal Renyi order alpha*",
             2.1, lambda: float(_leakage().optimal_renyi_order(s=2.0, n=5, gamma=1.0, tau=2.0))),
    Exercise("ch04-ex-by-hand.bound", "optimized Renyi bound (Corollary 4.1)",
             0.4694234685049672, lambda: float(_leakage().renyi_tail_bound(2.0, 5, 1.0, tau=2.0)), rtol=0.02),
    Exercise("ch04-ex-by-hand.fpr", "false-positive rate of the test Lambda > 2 for the record (Proposition 4.1)",
             0.0094405200780494, lambda: _fpr_by_hand(), rtol=0.03),
    # chapter 04 -- where the population stops shrinking (N = 1000, tau = 0.02, q = 0.45, r = 0.11)
    Exercise("ch04-ex-critical.gamma_paper", "noise scale with growth factor 1 under the paper's statistic",
             4.532372164714999, lambda: _critical_1000("paper"), rtol=0.004),
    Exercise("ch04-ex-critical.gamma_exact", "noise scale with growth factor 1 under the exact statistic",
             4.575962350382254, lambda: _critical_1000("exact"), rtol=0.004),
    Exercise("ch04-ex-critical.growth", "expected growth factor at that noise scale",
             1.0, lambda: float(_dynamics().growth_factor(*_model(0.45, 0.11), n=1000,
                                                          gamma=_critical_1000("paper"))), rtol=0.0, atol=0.005),
    # chapter 04 -- the exact statistic's floor by hand (d = 12, tau = 0.035: the chapter works at tau = 0.02)
    Exercise("ch04-ex-floor.n_max", "largest N whose exact-statistic leak floor is positive (d = 12, tau = 0.035)",
             171.0, lambda: float(np.floor(1.0 / (1.0 - math.exp(-2 * 0.035 / 12)))), rtol=0.0, atol=0.5),
    Exercise("ch04-ex-floor.floor", "the floor F_100 at N = 100 (d = 12, tau = 0.035)",
             0.04406905287633528, lambda: float(_leakage().exact_leak_floor(100, d=12, tau=0.035)), rtol=0.01),
    Exercise("ch04-ex-floor.r_min", "smallest r letting a population of 100 grow under some noise (q = 0.45, d = 12, tau = 0.035)",
             0.020745299494719063, lambda: _floor_r_min(), rtol=0.01),
    # chapter 05 -- the threshold by hand, the two thresholds simulated, the smallest population, the long run
    Exercise("ch05-ex-hand.gamma_c", "Theorem 5.1's gamma_c for R = 10, N = 250, tau = 0.05, q = 0.2, r = 0.6",
             0.8947188375177185, lambda: float(_dynamics().critical_gamma(*_model(0.2, 0.6, tau=0.05), n=250)),
             rtol=0.01),
    Exercise("ch05-ex-hand.growth", "growth factor C at gamma_c / 6 (same settings, d = 12): below or above one?",
             0.9995259261154967, _growth_at_sixth, rtol=0.0, atol=3e-4),
    Exercise("ch05-ex-sim.exact", "exact survival threshold (C = 1) for q = 0.4, r = 0.6, tau = 0.02, N = 1000, "
             "d = 12, R = 10", 0.1850656353061821, lambda: _sim_thresholds()[0], rtol=0.01),
    Exercise("ch05-ex-sim.gamma_c", "Theorem 5.1's gamma_c for q = 0.4, r = 0.6, tau = 0.02, N = 1000, R = 10",
             1.0988761288415272, lambda: _sim_thresholds()[1], rtol=0.01),
    Exercise("ch05-ex-sim.mean_exact", "expected N_1/N_0 at the exact threshold (an estimate within 0.01 counts)",
             1.0, lambda: _sim_growth(0), rtol=0.0, atol=0.01),
    Exercise("ch05-ex-sim.mean_gamma_c", "expected N_1/N_0 at gamma_c (an estimate within 0.01 counts)",
             1.1655673109969673, lambda: _sim_growth(1), rtol=0.0, atol=0.01),
    Exercise("ch05-ex-open.ratio", "exact survival threshold at N = 50 divided by the one at N = 1000 "
             "(q = r = 0.5, tau = 0.02, d = 12, R = 10)", 4.515280179794028, _threshold_ratio, rtol=2e-3),
    Exercise("ch05-ex-limit.ratio", "long-run limit of the uncapped per-round error at gamma = 20 divided by the "
             "one at gamma = 5 (q = 0.2, r = 0.5, tau = 0.02, N0 = 1000)", 11.975477405447949, _limit_ratio,
             rtol=0.01),
    Exercise("ch05-ex-limit.gamma", "noise level minimizing the long-run limit of the uncapped per-round error "
             "(same settings)", 2.130429765086129, lambda: float(_dynamics().infinite_horizon_gamma(
                 *_model(0.2, 0.5), n0=1000).gamma), rtol=0.02),
    # chapter 06 -- Lemma 9 by hand; the other membership statistic
    Exercise("ch06-ex-hand.bound", "Lemma 9's E_total hat for d = 12, Sigma = I, gamma = 1, N0 = 200, T = 10 "
             "and C_1 = 1.2", 0.5030966502660926, lambda: _lemma9_by_hand(10)),
    Exercise("ch06-ex-hand.first_term", "first term of Lemma 9's sum (same setting)",
             0.1, lambda: _lemma9_by_hand(1)),
    Exercise("ch06-ex-hand.first_release", "expected error of Algorithm 1's first release "
             "(d = 12, Sigma = I, gamma = 1, N0 = 200)",
             0.12, lambda: float(_gaussian().mahalanobis_error(1.0, 200, np.eye(12)))),
    Exercise("ch06-ex-sim.bound_exact", "gamma* of Lemma 9's bound under the exact statistic, q = 0.3, r = 0.2, "
             "tau = 0.02, T = 10, N0 = 100 (d = 12, R = 10)", 0.5459024416341064,
             lambda: float(_optimize().optimal_gamma(_gaussian().GaussianMean(tau=0.02, d=12, R=10.0, statistic="exact"),
                                                     _behaviour().Memoryless(q=0.3, r=0.2), T=10, n0=100).gamma)),
    Exercise("ch06-ex-sim.floor", "leak probability that no noise removes under the exact statistic at N = 100, "
             "d = 12, tau = 0.02", 0.21960755183760647,
             lambda: float(_leakage().exact_leak_floor(100, d=12, tau=0.02))),
    # chapter 07 -- privacy schedules (running example q = 0.5, r = 0.4, tau = 0.02, N0 = 200, d = 12, R = 10)
    Exercise("ch07-ex-hand.gamma_1", "optimal gamma_1 of a two-round schedule, q = 0.5, r = 0.4, tau = 0.02, N0 = 200",
             0.31612859404667304, lambda: float(_ch07_schedule(0.5, 0.4, 2).gamma[0]), rtol=0.01),
    Exercise("ch07-ex-sim.gain", "mean-field gain of the optimal schedule over gamma* (a fraction), q = 0.3, r = 0.6, "
             "T = 10, started from gamma* (starts='constant')", 0.031372027812263004,
             lambda: float(_ch07_schedule(0.3, 0.6, 10, starts="constant").gain), rtol=0.01),
    Exercise("ch07-ex-sim.runs", "paired runs needed for significance, from a pilot of 100 paired runs with seed 9 "
             "and the mean field's difference", 4.871407180812735, _ch07_runs_needed, rtol=0.02),
    Exercise("ch07-ex-floor.gain", "gain over gamma* (a fraction) of the optimal schedule with gamma_t >= gamma*/2, "
             "q = 0.5, r = 0.4, T = 10", 0.09844750714042305, _ch07_floored_gain, rtol=0.01),
    # chapter 08 -- richer feedback: memory, classes, budget-aware users, contagion
    Exercise("ch08-ex-memory.stay", "expected stay (rounds) of a user with k = 2, q = 0.5 at leak probability 0.6",
             5.0, lambda: float(_behaviour().LeakCount(k=2, q=0.5, r=0.4).expected_stay(0.6))),
    Exercise("ch08-ex-memory.p_c", "critical leak probability for k = 2, q = 0.5, r = 0.4 (leak rule)",
             0.5454545454545454, lambda: float(_behaviour().LeakCount(k=2, q=0.5, r=0.4).critical_leak_probability())),
    Exercise("ch08-ex-memory.epsilon_c", "survival threshold epsilon_c for k = 2, q = 0.5, r = 0.4",
             0.18232155679395456, lambda: float(_feedback().critical_epsilon(_feedback().family("memory", 2), q=0.5, r=0.4)),
             rtol=2e-3),
    Exercise("ch08-ex-classes.q_eff", "effective q of two equal classes with q = 0.8 and q = 0.2",
             0.32, lambda: float(_behaviour().Heterogeneous(q=[0.8, 0.2], weights=[0.5, 0.5], r=0.3).effective_q())),
    Exercise("ch08-ex-classes.r_min", "smallest r at which randomized response can save these two classes",
             0.32, _classes_r_min),
    Exercise("ch08-ex-budget.lifetime", "rounds a user with tolerance 5 takes part in at epsilon = 1",
             6.0, lambda: float(_behaviour().BudgetAware(tolerance=5.0, r=0.5).lifetimes(1.0)[0]), rtol=0.0, atol=0.5),
    Exercise("ch08-ex-budget.r0", "reproduction number of budget-aware users (b = 5, q = 0, r = 0.5) at epsilon = 1",
             0.8068242641099853,
             lambda: float(_behaviour().BudgetAware(tolerance=5.0, r=0.5).reproduction_number(_rr_leak(1.0), 1.0))),
    Exercise("ch08-ex-budget.epsilon_c", "survival threshold epsilon_c of budget-aware users (b = 5, q = 0, r = 0.5)",
             5.0 / 6.0, lambda: float(_feedback().critical_epsilon(_feedback().family("budget", 5.0), q=0.0, r=0.5))),
    Exercise("ch08-ex-contagion.kappa_max", "largest contagion strength kappa at which randomized response can save "
             "users with q = 0.2, r = 0.6", 4.0 / 3.0, _contagion_kappa_max),
    Exercise("ch08-ex-contagion.q_star", "stationary leaving probability q* at kappa = 1, epsilon = 0.5 "
             "(q = 0.2, r = 0.6)", 0.5297442541400257,
             lambda: float(_behaviour().Contagion(q=0.2, r=0.6, kappa=1.0).stationary_leave_probability(_rr_leak(0.5)))),
    # ---- chapter 10 -- performative learning (block owned by chapter 10) ----
    Exercise("ch10-ex-hand.ps", "stable point of the linear loss with m = 2, sensitivity 0.3",
             2.0 / 0.7, lambda: float(_performative().PerformativeProblem.linear(m=2.0, A=0.3).stable_point()[0])),
    Exercise("ch10-ex-hand.po", "optimal point of the linear loss with m = 2, sensitivity 0.3",
             5.0, lambda: float(_performative().PerformativeProblem.linear(m=2.0, A=0.3).optimal_point()[0])),
    Exercise("ch10-ex-fedavg.eps_bar", "average sensitivity of the three clients",
             0.47, lambda: _performative().average_sensitivity([0.2, 0.5, 1.1], [0.5, 0.3, 0.2])),
    Exercise("ch10-ex-fedavg.theta_ps", "stable point of the three clients",
             3.0 / 0.53, lambda: _performative().stable_point([1.0, 3.0, 8.0], [0.2, 0.5, 1.1], [0.5, 0.3, 0.2])),
    Exercise("ch10-ex-sampling.ratio", "excess aggregation variance of scheme II over scheme I, N = 25, K = 10",
             15 / 24, _sampling_ratio),
    Exercise("ch10-ex-bilevel.ll_threshold", "largest LL sensitivity alone that FBi-RRM tolerates "
             "(synthetic problem, seed 0, lambda_x = lambda_y = 1)", 4.6977417, lambda: _performative().BilevelRegression
             .synthetic(eps_c=0.0, eps_d=1.0, lam_x=1.0, lam_y=1.0, seed=0).threshold()),
    Exercise("ch10-ex-threshold.ratio", "survival threshold at theta_PS over the one at theta = 0",
             float(np.sqrt(5.5)), _threshold_growth),
    # ---- end of chapter 10 ----
    # ---- chapter 09 (beyond the mean: private regression and private gradient descent) ----
    Exercise("ch09-ex-sens.delta", "ridge sensitivity bound Delta(n) for n = 800, lambda = 0.05, B_x = B_y = 5",
             4.698721535435893, lambda: float(_regression().ridge_sensitivity(800, lam=0.05, x_bound=5.0,
                                                                            y_bound=5.0))),
    Exercise("ch09-ex-sens.sigma", "noise standard deviation sigma_n of the calibrated release for rho = 100 "
             "(replace-one, n public) at n = 800 (same fit and bounds)", 0.6644995721227973,
             lambda: float(_regression().noise_std(800, _regression().gamma_from_rho(100.0), lam=0.05,
                                                   x_bound=5.0, y_bound=5.0))),
    Exercise("ch09-ex-loo.leak", "leak probability (paper's statistic) of a record with shift norm 0.003 "
             "under noise sigma = 0.01, tau = 0.02", 0.5332067518526223,
             lambda: float(_regression().leak_probability(0.003, 0.01, tau=0.02))),
    Exercise("ch09-ex-gd.sigma", "noise sigma per step for rho = 0.5 over K = 100 steps with clipping C = 1",
             10.0, lambda: float(_gradient().sigma_for_rho(0.5, steps=100, clip=1.0))),
    Exercise("ch09-ex-gd.leak", "leak probability at tau = 0.02 of a record clipped at every step of that run",
             0.6843863034837774, lambda: float(_gradient().gdp_leak_probability((2 * 0.5) ** 0.5, tau=0.02))),
    # ---- end of chapter 09 ----
]

#: Every registered exercise, by id.
EXERCISES: dict[str, Exercise] = {e.id: e for e in _ENTRIES}


def register(exercise: Exercise, *, replace: bool = False) -> Exercise:
    """Add an exercise, so that :func:`check` and :func:`describe` know its id.

    The exercise's ``compute()`` is run once: an answer that it does not
    reproduce within the exercise's own tolerance is refused, as the test
    suite refuses it for the book's stored answers.

    Parameters
    ----------
    exercise : Exercise
        The exercise part; its id is ``"<label>.<part>"``, both non-empty.
    replace : bool
        Whether an exercise already registered under the same id may be
        replaced (a notebook cell run twice); otherwise that is an error.

    Returns
    -------
    Exercise
        ``exercise``, now registered.

    Examples
    --------
    >>> from perfpriv import exercises
    >>> part = exercises.Exercise("my-ex-half.value", "one half", 0.5, lambda: 1 / 2)
    >>> _ = exercises.register(part, replace=True)
    >>> exercises.check("my-ex-half.value", 0.5)
    my-ex-half.value: correct.
    True
    """
    if not isinstance(exercise, Exercise):
        raise TypeError(f"exercise must be a perfpriv.exercises.Exercise; got {exercise!r:.80}")
    replace = check_flag("replace", replace)
    label, dot, part = exercise.id.rpartition(".")
    if not (dot and label and part):
        raise ValueError(f"exercise.id must be '<label>.<part>' with both parts non-empty; got {exercise.id!r:.80}")
    if exercise.id in EXERCISES and not replace:
        raise ValueError(f"exercise.id {exercise.id!r} is already registered; pass replace=True to replace it")
    computed = check_real("exercise.compute()", exercise.compute(), allow_inf=True, scalar=True)
    if not abs(computed - exercise.answer) <= exercise.atol + exercise.rtol * abs(exercise.answer):
        raise ValueError(f"exercise.answer must be what exercise.compute() gives within rtol={exercise.rtol:g}, "
                         f"atol={exercise.atol:g}; got answer {exercise.answer!r} and compute() {computed!r}")
    EXERCISES[exercise.id] = exercise
    return exercise


def exercise_ids(chapter: str | None = None) -> list[str]:
    """Ids of the exercises with numeric answers (optionally of one chapter, e.g. ``"ch04"``).

    Examples
    --------
    >>> exercise_ids("ch03")[:2]
    ['ch03-ex-lemma3.error', 'ch03-ex-lemma3.rho']
    """
    if chapter is not None and not isinstance(chapter, str):
        raise TypeError(f"chapter must be a string such as 'ch04' (or None for every chapter); got {chapter!r:.60}")
    return [i for i in EXERCISES if chapter is None or i.startswith(chapter + "-")]


def describe(exercise_id: str) -> str:
    """What number the exercise asks for (never the answer)."""
    return _get(exercise_id).prompt


def _get(exercise_id: str) -> Exercise:
    if not isinstance(exercise_id, str):
        raise TypeError(f"exercise_id must be a string such as 'ch04-ex-by-hand.leak'; got {exercise_id!r:.60}")
    if exercise_id not in EXERCISES:
        known = ", ".join(sorted(EXERCISES))
        raise ValueError(f"exercise_id must be one of the registered ids ({known}); got {exercise_id!r}")
    return EXERCISES[exercise_id]


def check(exercise_id: str, answer, *, quiet: bool = False) -> bool:
    """Say whether ``answer`` is right for the exercise, without revealing it.

    Parameters
    ----------
    exercise_id : str
        Id of the exercise part, e.g. ``"ch04-ex-by-hand.leak"`` (see
        :func:`exercise_ids`).
    answer : float
        The reader's answer.
    quiet : bool
        Do not print the verdict line.

    Returns
    -------
    bool
        Whether the answer is within the exercise's tolerance.
    """
    exercise = _get(exercise_id)
    value = check_real("answer", answer, allow_inf=True, scalar=True)
    quiet = check_flag("quiet", quiet)
    correct = abs(value - exercise.answer) <= exercise.atol + exercise.rtol * abs(exercise.answer)
    if not quiet:
        verdict = "correct." if correct else "not yet -- check your computation and try again."
        print(f"{exercise_id}: {verdict}")
    return bool(correct)
