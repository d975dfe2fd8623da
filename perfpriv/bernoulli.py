"""Randomized response and the Bernoulli warm-up (paper §3, appendices B and C).

At each round ``t = 1, ..., T`` a platform with ``N_{t-1}`` users estimates the
mean ``mu_t`` of a Bernoulli variable.  Each user holds ``X ~ B(mu_t)`` and
answers through randomized response (RR): the true answer is kept with
probability ``1/2 + beta`` and flipped otherwise.  A kept answer is a *leak*.
Users react to leaks, which changes the population used at the next round:

``model="leak"`` (§3, Lemma 2)
    a leaked user leaves with probability ``q``; a user whose answer was
    flipped recruits one new user with probability ``r``.
``model="agnostic"`` (appendix B)
    a leaked user leaves with probability ``q``; *every* user recruits one new
    user with probability ``r``.

Contents
--------
Formulas: :func:`beta_from_epsilon`, :func:`epsilon_from_beta` (Lemma 1),
:func:`leak_probability`, :func:`privatize`, :func:`estimate_mean` (eq. 1,
Lemma 10), :func:`estimator_variance`, :func:`growth_factor` (Lemma 2, eq. 4,
appendix B), :func:`critical_beta`, :func:`critical_epsilon` (Theorem 1).

Simulation: :func:`simulate` (fast, exact in distribution, vectorized over
trials and an ε grid), :func:`simulate_agents` (one explicit agent at a time,
the slow reference), both returning a :class:`BernoulliRun`.

Theory next to simulation: :func:`mean_field_population`,
:func:`mean_field_error`.

Conventions shared by the simulators
------------------------------------
*Timing.*  ``population[..., 0] = n0 = N_0``.  Round ``t`` (``t = 1..T``) asks
the ``N_{t-1}`` current users, produces the estimate ``estimate[..., t-1]`` of
``truth[..., t-1] = mu_t``, and its leaks and recruits produce
``population[..., t] = N_t``.  So ``sq_error[..., t-1]`` is driven by
``N_{t-1}`` and the last population ``N_T`` is never used for an estimate.

*Population bounds.*  After every round ``N_t`` is clipped to ``[1, cap]``
(the paper uses floor 1 and ``cap = 20000``).

*Law of mu_t.*  The paper leaves it open.  ``mu=(a, b)`` draws ``mu_t`` i.i.d.
``Uniform(a, b)`` every round and in every trial (default ``(0, 1)``, as in the
authors' experiment code); a float keeps ``mu_t`` constant.  The population
process does not depend on ``mu_t`` at all: a user leaks with probability
``1/2 + beta`` whatever her bit.

*Estimates are not clipped* to ``[0, 1]`` by default: eq. 1 is the unbiased
estimator and its squared error has the exact mean :func:`estimator_variance`.
The authors' code clips it; ``clip_estimate=True`` reproduces that.

*Privacy schedules.*  With ``per_round=True`` the last axis of ``epsilon``
runs over the rounds: a 1-D array of length ``T`` is one schedule
``eps_1, ..., eps_T`` (round t, driven by ``N_{t-1}``, uses ``epsilon[t-1]``
for its answers, its estimate and its leaks), a 2-D array ``(E, T)`` a grid
of E schedules.  Without it a 1-D ``epsilon`` keeps its meaning of a grid of
constant budgets.  The same keyword exists in :func:`mean_field_population`
and :func:`mean_field_error`.  A constant schedule gives exactly the numbers
of the constant ε with the same seed; any other schedule draws from a
stream keyed by all its values (see :mod:`perfpriv.schedules`).

*Seeding.*  ``seed`` is anything :func:`numpy.random.default_rng` accepts.  It is
turned into a root :class:`numpy.random.SeedSequence`; the ``mu_t`` path comes
from the child with key ``(0,)`` and is shared by every ε (common random
numbers), and the randomness of one ε comes from a child whose key is made of
the 64 bits of the float ε.  Hence a run over an ε grid equals, ε by ε, the
runs of each ε alone with the same seed, and adding ε values to a grid does
not change the others.  (A ``Generator`` passed as seed is consumed once to
make the root entropy.)

References
----------
Paper ``papers/000_6858eaefe28505f4.txt``: §3 (eqs. 1-5, Lemmas 1-2,
Theorem 1), appendix B (agnostic model), appendix C (Lemma 10, proofs).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import (
    check_choice,
    check_order,
    check_int,
    check_probability,
    check_real,
    check_rng,
)

__all__ = [
    "beta_from_epsilon",
    "epsilon_from_beta",
    "leak_probability",
    "privatize",
    "estimate_mean",
    "estimator_variance",
    "growth_factor",
    "critical_beta",
    "critical_epsilon",
    "BernoulliRun",
    "simulate",
    "simulate_agents",
    "mean_field_population",
    "mean_field_error",
    "MODELS",
]

#: Growth rules: ``"leak"`` (§3) and ``"agnostic"`` (appendix B).
MODELS = ("leak", "agnostic")


# --------------------------------------------------------------------------
# argument checks shared by this module
# --------------------------------------------------------------------------
def _check_epsilon(epsilon, *, positive=False, name="epsilon"):
    """ε in [0, inf] (or (0, inf] when ``positive``); NaN and negatives fail."""
    return check_real(name, epsilon, low=0.0, low_open=positive, allow_inf=True)


def _check_beta(beta, *, positive=False, name="beta"):
    return check_real(name, beta, low=0.0, high=0.5, low_open=positive)


def _check_model(model):
    return check_choice("model", model, MODELS)


def _check_mu_law(mu):
    """Return ``(a, b)`` with 0 <= a <= b <= 1 (a == b for a constant mu)."""
    if isinstance(mu, (tuple, list)) or (isinstance(mu, np.ndarray) and mu.ndim == 1):
        if len(mu) != 2:
            raise ValueError(
                f"mu must be a float in [0, 1] (constant mean) or a pair (a, b) with "
                f"0 <= a <= b <= 1 (Uniform(a, b)); got {mu!r}"
            )
        a = check_probability("mu[0]", mu[0], scalar=True)
        b = check_probability("mu[1]", mu[1], scalar=True)
        if a > b:
            raise ValueError(f"mu=(a, b) must satisfy a <= b; got mu={tuple(mu)!r}")
        return a, b
    a = check_probability("mu", mu, scalar=True)
    return a, a


def _check_sizes(T, n0, cap, trials=None):
    T = check_int("T", T, low=1)
    n0 = check_int("n0", n0, low=1)
    cap = check_int("cap", cap, low=1)
    check_order("n0", n0, "cap", cap)
    if trials is not None:
        trials = check_int("trials", trials, low=1)
    return T, n0, cap, trials


# --------------------------------------------------------------------------
# randomized response (Lemma 1, eq. 1, Lemma 10)
# --------------------------------------------------------------------------
def beta_from_epsilon(epsilon):
    """Randomized-response parameter β that gives ε-local differential privacy.

    Lemma 1: ``beta = tanh(epsilon / 2) / 2``, i.e.
    ``(1/2 + beta) / (1/2 - beta) = exp(epsilon)``.

    Parameters
    ----------
    epsilon : float or array_like
        ε >= 0, the local privacy budget.  ``np.inf`` is the non-private
        baseline (β = 1/2: every answer is reported truthfully); ``0`` gives
        β = 0 (answers are pure coin flips).

    Returns
    -------
    float or numpy.ndarray
        β in [0, 1/2], same shape as ``epsilon``.  Accurate to a few ulps for
        every ε (``tanh`` does not cancel; β rounds to 1/2 for ε >~ 37).

    References
    ----------
    Paper §3, Lemma 1 (eq. 2) and its proof in appendix C.

    Examples
    --------
    >>> round(beta_from_epsilon(1.0), 4)
    0.2311
    >>> beta_from_epsilon(np.inf)
    0.5
    """
    eps = _check_epsilon(epsilon)
    beta = 0.5 * np.tanh(np.asarray(eps) / 2.0)
    return float(beta) if np.ndim(beta) == 0 else beta


def epsilon_from_beta(beta):
    """Privacy budget ε of randomized response with parameter β (inverse of Lemma 1).

    ``epsilon = 2 artanh(2 beta) = log((1/2 + beta) / (1/2 - beta))``.

    Parameters
    ----------
    beta : float or array_like
        β in [0, 1/2]; the answer is kept with probability 1/2 + β.

    Returns
    -------
    float or numpy.ndarray
        ε in [0, inf]; β = 1/2 gives ``inf``.

    References
    ----------
    Paper §3, Lemma 1.

    Examples
    --------
    >>> round(epsilon_from_beta(beta_from_epsilon(2.0)), 6)
    2.0
    >>> epsilon_from_beta(0.5)
    inf
    """
    b = np.asarray(_check_beta(beta), dtype=float)
    top = b >= 0.5
    safe = np.where(top, 0.0, b)
    eps = np.where(top, np.inf, 2.0 * np.arctanh(2.0 * safe))
    return float(eps) if eps.ndim == 0 else eps


def leak_probability(beta):
    """Probability ``1/2 + beta`` that randomized response keeps (leaks) an answer.

    Parameters
    ----------
    beta : float or array_like
        β in [0, 1/2].

    Returns
    -------
    float or numpy.ndarray
        1/2 + β.

    References
    ----------
    Paper §3 (definition of a leakage event, ``X = Y``).

    Examples
    --------
    >>> leak_probability(0.25)
    0.75
    """
    b = _check_beta(beta)
    out = 0.5 + np.asarray(b)
    return float(out) if out.ndim == 0 else out


def privatize(x, beta, rng=None, *, return_kept=False):
    """Randomized response: keep each bit with probability 1/2 + β, flip it otherwise.

    Parameters
    ----------
    x : array_like of {0, 1}
        True answers ``X_i``.
    beta : float or array_like
        β in [0, 1/2] (broadcast against ``x``).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness (normalized by :func:`numpy.random.default_rng`).
    return_kept : bool
        Also return the boolean mask of kept (leaked) answers.

    Returns
    -------
    y : numpy.ndarray of int
        Responses ``Y_i``.
    kept : numpy.ndarray of bool
        Only when ``return_kept``: ``Y_i == X_i`` (a leak).

    References
    ----------
    Paper §3, definition of ``Y_{i,t}``.

    Examples
    --------
    >>> y = privatize([0, 1, 1, 0], 0.5, rng=0)   # beta = 1/2: no noise
    >>> y.tolist()
    [0, 1, 1, 0]
    """
    xa = np.asarray(x)
    if xa.dtype == bool:
        xa = xa.astype(int)
    if not np.all((xa == 0) | (xa == 1)):
        raise ValueError("x must contain only 0 and 1 (the true bits X_i)")
    b = _check_beta(beta)
    gen = check_rng(rng, name="rng")
    shape = np.broadcast_shapes(xa.shape, np.shape(b))
    kept = gen.random(shape) < 0.5 + np.asarray(b)
    y = np.where(kept, xa, 1 - xa).astype(int)
    return (y, kept) if return_kept else y


def _debias(nu, beta):
    """Eq. 1: ``(nu - 1/2 + beta) / (2 beta)`` -- the one place of this formula."""
    return (nu - 0.5 + beta) / (2.0 * beta)


def estimate_mean(y, beta, *, axis=None):
    """Unbiased estimate of μ from randomized responses (eq. 1, Lemma 10).

    ``mu_hat = (nu_hat - 1/2 + beta) / (2 beta)`` with ``nu_hat`` the mean of
    the responses.  It may fall outside [0, 1]; it is not clipped (clipping
    would bias it).

    Parameters
    ----------
    y : array_like of {0, 1}
        Responses ``Y_i``.
    beta : float
        β in (0, 1/2].  At β = 0 the responses carry no information and the
        estimator is undefined (``ValueError``).
    axis : int or None
        Axis over which the responses are averaged (default: all).

    Returns
    -------
    float or numpy.ndarray
        ``mu_hat``.

    References
    ----------
    Paper §3, eq. 1; appendix C, Lemma 10 (unbiasedness).

    Examples
    --------
    >>> estimate_mean([1, 1, 0, 1], 0.5)
    0.75
    >>> round(estimate_mean([1, 1, 0, 1], 0.25), 4)
    1.0
    """
    ya = np.asarray(y)
    if ya.size == 0:
        raise ValueError("y must contain at least one response")
    if not np.all((ya == 0) | (ya == 1)):
        raise ValueError("y must contain only 0 and 1 (randomized responses)")
    b = _check_beta(beta, positive=True)
    out = _debias(np.mean(ya, axis=axis), b)
    return float(out) if np.ndim(out) == 0 else out


def _variance_factor(beta, s2):
    """``E[nu (1 - nu)] / (4 beta^2)`` given ``s2 = E[(2 mu - 1)^2]``.

    With ``nu = 2 beta mu + 1/2 - beta = 1/2 + beta (2 mu - 1)`` one has
    ``nu (1 - nu) = 1/4 - beta^2 (2 mu - 1)^2``, linear in ``(2 mu - 1)^2``:
    averaging over a law of mu only needs its second moment ``s2``.
    """
    return (0.25 - beta**2 * s2) / (4.0 * beta**2)


def estimator_variance(mu, beta, n):
    """Exact variance of the estimator of eq. 1 from ``n`` responses.

    ``Var(mu_hat) = nu (1 - nu) / (4 beta^2 n)`` with
    ``nu = 2 beta mu + 1/2 - beta`` the probability of a 1-response: the sum
    of the responses is ``Binomial(n, nu)``.  Because the estimator is
    unbiased, this is also its mean squared error.

    Parameters
    ----------
    mu : float or array_like
        True mean μ in [0, 1].
    beta : float or array_like
        β in (0, 1/2] (the variance is infinite at β = 0: ``ValueError``).
    n : float or array_like
        Number of responses ``N`` (> 0; real values allowed for mean-field use).

    Returns
    -------
    float or numpy.ndarray
        The variance, broadcast over the arguments.

    References
    ----------
    Paper §3, eq. 1; appendix C (computation of ``E[Y]``).

    Examples
    --------
    >>> round(estimator_variance(0.3, 0.5, 100), 6)   # no privacy: mu (1 - mu) / n
    0.0021
    >>> round(estimator_variance(0.5, 0.25, 100), 6)
    0.01
    """
    m = check_probability("mu", mu)
    b = _check_beta(beta, positive=True)
    nn = check_real("n", n, low=0.0, low_open=True)
    s2 = (2.0 * np.asarray(m) - 1.0) ** 2
    out = _variance_factor(np.asarray(b), s2) / np.asarray(nn)
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------
# population growth (Lemma 2, eq. 4, appendix B, Theorem 1)
# --------------------------------------------------------------------------
def growth_factor(beta, q, r, model="leak"):
    """Expected one-round growth factor ``C(beta) = E[N_t | N_{t-1}] / N_{t-1}``.

    ``model="leak"`` (Lemma 2, eq. 4)::

        C(beta) = 1 - q (1/2 + beta) + r (1/2 - beta) = 1 + (r - q)/2 - beta (q + r)

    ``model="agnostic"`` (appendix B)::

        C(beta) = 1 - q (1/2 + beta) + r

    Parameters
    ----------
    beta : float or array_like
        β in [0, 1/2] (see :func:`beta_from_epsilon`).
    q : float or array_like
        Leaving probability of a leaked user, in [0, 1].
    r : float or array_like
        Recruiting probability, in [0, 1] (of a non-leaked user for
        ``"leak"``, of every user for ``"agnostic"``).
    model : {"leak", "agnostic"}
        Growth rule.

    Returns
    -------
    float or numpy.ndarray
        ``C``, broadcast over ``beta``, ``q`` and ``r``.  It is exact in
        expectation (no large-population approximation is needed, whatever
        appendix C says): departures and recruits are sums of independent
        Bernoulli indicators.  It is the conditional mean of the unclipped
        population; the simulators' floor 1 and cap bend it at the bounds.

    Notes
    -----
    Without privacy (β = 1/2, ε = inf) every answer leaks: the leak model
    gives ``C = 1 - q`` (nobody recruits), so the non-private population
    shrinks as soon as ``q > 0``; the agnostic model gives ``C = 1 - q + r``.

    References
    ----------
    Paper §3, Lemma 2 and eq. 4; appendix B; appendix C.2.

    Examples
    --------
    >>> round(growth_factor(0.1, 0.3, 0.6), 4)
    1.06
    >>> round(growth_factor(0.1, 0.3, 0.6, model="agnostic"), 4)
    1.42
    """
    b = np.asarray(_check_beta(beta))
    qq = np.asarray(check_probability("q", q))
    rr = np.asarray(check_probability("r", r))
    model = _check_model(model)
    leak = 0.5 + b
    if model == "leak":
        out = 1.0 - qq * leak + rr * (0.5 - b)
    else:
        out = 1.0 - qq * leak + rr
    return float(out) if np.ndim(out) == 0 else out


def critical_beta(q, r, model="leak"):
    """Largest β keeping the population from shrinking in expectation (``C(beta) >= 1``).

    ``model="leak"`` (Theorem 1, eq. 5): ``beta_c = max{0, (r - q) / (2 (q + r))}``.
    ``C`` decreases in β, so ``C(beta) >= 1`` iff ``beta <= beta_c`` -- when
    ``r >= q``.  When ``q > r`` the clip at 0 hides that *no* β survives:
    ``C(0) = 1 - (q - r)/2 < 1`` (collapse at every privacy level).
    When ``q + r = 0`` nobody ever leaves or joins, ``C = 1`` for every β and
    there is no threshold: we return ``beta_c = 1/2`` (every β, including the
    non-private β = 1/2, keeps ``C >= 1``), consistently with the limit
    ``q -> 0`` at fixed ``r > 0``.

    ``model="agnostic"`` (appendix B): ``C = 1 - q (1/2 + beta) + r >= 1`` iff
    ``beta <= r/q - 1/2``; returned clipped to [0, 1/2].  So ``beta_c = 1/2``
    (any privacy level survives) when ``q <= r`` (also for ``q = 0``), and
    ``beta_c = 0`` with collapse at every β when ``r < q/2``.  In between
    (``q/2 <= r < q``) the agnostic population survives with enough privacy
    -- unlike the leak model, where ``q > r`` always means collapse.

    Parameters
    ----------
    q, r : float or array_like
        Leaving and recruiting probabilities in [0, 1] (broadcast).
    model : {"leak", "agnostic"}
        Growth rule.

    Returns
    -------
    float or numpy.ndarray
        ``beta_c`` in [0, 1/2].

    References
    ----------
    Paper §3, Theorem 1 (eq. 5) and appendix C.2; appendix B.

    Examples
    --------
    >>> round(critical_beta(0.3, 0.6), 4)
    0.1667
    >>> critical_beta(0.6, 0.3)
    0.0
    >>> critical_beta(0.0, 0.0)
    0.5
    >>> round(critical_beta(0.6, 0.4, model="agnostic"), 4)
    0.1667
    """
    qq = np.asarray(check_probability("q", q), dtype=float)
    rr = np.asarray(check_probability("r", r), dtype=float)
    model = _check_model(model)
    qq, rr = np.broadcast_arrays(qq, rr)
    if model == "leak":
        s = qq + rr
        empty = s == 0
        raw = (rr - qq) / (2.0 * np.where(empty, 1.0, s))
        out = np.where(empty, 0.5, np.maximum(0.0, raw))
    else:
        still = qq == 0
        with np.errstate(over="ignore"):  # r/q overflows for subnormal q: beta_c = 1/2
            raw = rr / np.where(still, 1.0, qq) - 0.5
        out = np.where(still, 0.5, np.clip(raw, 0.0, 0.5))
    return float(out) if out.ndim == 0 else out


def critical_epsilon(q, r, model="leak"):
    """Privacy budget at the survival threshold: ``epsilon_from_beta(critical_beta(q, r))``.

    Every ε <= ε_c keeps ``C >= 1`` when such ε exist.  ``0`` when ``q > r``
    (leak model: no ε survives, see :func:`critical_beta`), ``inf`` when every
    ε survives (e.g. ``q = 0``, or ``q + r = 0``).

    Parameters
    ----------
    q, r : float or array_like
        Leaving and recruiting probabilities in [0, 1].
    model : {"leak", "agnostic"}
        Growth rule.

    Returns
    -------
    float or numpy.ndarray
        ε_c in [0, inf].

    References
    ----------
    Paper §3, Theorem 1 with Lemma 1.

    Examples
    --------
    >>> round(critical_epsilon(0.3, 0.6), 4)
    0.6931
    >>> critical_epsilon(0.0, 0.5)
    inf
    """
    return epsilon_from_beta(critical_beta(q, r, model=model))


# --------------------------------------------------------------------------
# seeding
# --------------------------------------------------------------------------
def _root_seed_sequence(seed: Any) -> np.random.SeedSequence:
    """Root SeedSequence of ``seed`` (anything ``default_rng`` accepts)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
        gen = check_rng(seed)
        return np.random.SeedSequence(gen.integers(0, 2**32, size=4, dtype=np.uint64).tolist())
    check_rng(seed)  # type and sign checks with a clear message
    return np.random.SeedSequence(seed)


def _child_seed(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """Child of ``root`` with spawn key ``root.spawn_key + key`` (deterministic)."""
    return np.random.SeedSequence(
        entropy=root.entropy,
        spawn_key=tuple(root.spawn_key) + tuple(int(k) for k in key),
        pool_size=root.pool_size,
    )


def _epsilon_key(epsilon: float) -> tuple:
    """Two 32-bit words of the float64 bits of ε (exact, unique, inf included)."""
    bits = int(np.float64(float(epsilon) + 0.0).view(np.uint64))
    return (bits >> 32, bits & 0xFFFFFFFF)


_MU_STREAM, _EPS_STREAM, _CELL_STREAM, _AGENT_STREAM = 0, 1, 2, 3
_SCHEDULE_STREAM, _AGENT_SCHEDULE_STREAM = 4, 5


def _row_key(row) -> tuple:
    """Spawn key of one ε row: a constant row (or a scalar) is keyed by its value
    exactly as a constant ε; any other schedule by a SHA-256 digest of all its
    float64 values (four 32-bit words), on a separate stream."""
    row = np.atleast_1d(np.asarray(row, dtype=float))
    if np.all(row == row[0]):
        return (0,) + _epsilon_key(row[0])
    digest = hashlib.sha256((row + 0.0).astype("<f8").tobytes()).digest()
    return (1,) + tuple(int.from_bytes(digest[4 * i:4 * i + 4], "little") for i in range(4))


def _row_seed(root, row, *, agent=False):
    kind, *key = _row_key(row)
    if kind == 0:
        return _child_seed(root, _AGENT_STREAM if agent else _EPS_STREAM, *key)
    return _child_seed(root, _AGENT_SCHEDULE_STREAM if agent else _SCHEDULE_STREAM, *key)


def _mu_path(gen, mu_law, trials, T):
    """``mu_t`` of every trial and round, shape (trials, T)."""
    a, b = mu_law
    if a == b:
        return np.full((trials, T), a)
    return gen.uniform(a, b, size=(trials, T))


# --------------------------------------------------------------------------
# the fast simulator
# --------------------------------------------------------------------------
class _BlockDraws:
    """All binomials from one generator (one call per draw, whole arrays)."""

    def __init__(self, gen):
        self.gen = gen

    def binomial(self, n, p):
        return self.gen.binomial(n, p)


class _PerEpsilonDraws:
    """Binomials of row ``i`` (the i-th ε) from the i-th generator."""

    def __init__(self, gens):
        self.gens = gens

    def binomial(self, n, p):
        p = np.broadcast_to(p, np.shape(n))
        out = np.empty(np.shape(n), dtype=np.int64)
        for i, g in enumerate(self.gens):
            out[i] = g.binomial(n[i], p[i])
        return out


def _run_core(beta, q, r, *, T, n0, trials, model, cap, mu_path, draws,
              clip_estimate=False, final_only=False):
    """Simulate the Bernoulli model for a vector of β values.

    Parameters are validated by the caller.  ``beta`` has shape (E,) (one
    constant β per row) or (E, T) (a schedule per row: round t uses
    ``beta[:, t-1]``), ``mu_path`` shape (trials, T).  Returns ``(population, estimate)`` of
    shapes (E, trials, T+1) and (E, trials, T), or, when ``final_only``, the
    final estimate of shape (E, trials) and ``N_{T-1}`` (population rounds
    draw only the leak count then: the bits do not affect the population).

    Per round, given ``N`` users, mean ``mu`` and keep probability
    ``p = 1/2 + beta``: ones ``X ~ Bin(N, mu)``; kept ones ``K1 ~ Bin(X, p)``
    and kept zeros ``K0 ~ Bin(N - X, p)``; 1-responses ``S = K1 + (N - X - K0)``;
    leaks ``K = K1 + K0``; leak model: departures ``D ~ Bin(K, q)``, recruits
    ``A ~ Bin(N - K, r)``; agnostic: ``D ~ Bin(K, q)``, ``A ~ Bin(N, r)``
    (independent of ``D``); then ``N <- clip(N - D + A, 1, cap)``.
    """
    E = beta.shape[0]
    per_round = beta.ndim == 2
    b = beta[:, None]
    keep = 0.5 + b
    qr = np.array([q, r])
    N = np.full((E, trials), n0, dtype=np.int64)
    if not final_only:
        population = np.empty((E, trials, T + 1), dtype=np.int64)
        population[..., 0] = N
        estimate = np.empty((E, trials, T))
    for t in range(T):
        last = t == T - 1
        if per_round:
            b = beta[:, t, None]
            keep = 0.5 + b
        if final_only and not last:
            K = draws.binomial(N, keep)
        else:
            X = draws.binomial(N, np.broadcast_to(mu_path[:, t], N.shape))
            K10 = draws.binomial(np.stack([X, N - X], axis=-1), keep[..., None])
            K = K10[..., 0] + K10[..., 1]
            S = K10[..., 0] + (N - X - K10[..., 1])
            est = _debias(S / N, b)
            if clip_estimate:
                est = np.clip(est, 0.0, 1.0)
            if final_only:
                return est, N
            estimate[..., t] = est
        other = N - K if model == "leak" else N
        DA = draws.binomial(np.stack([K, other], axis=-1), qr)
        N = np.clip(N - DA[..., 0] + DA[..., 1], 1, cap)
        if not final_only:
            population[..., t + 1] = N
    return population, estimate


@dataclass(frozen=True, eq=False)
class BernoulliRun:
    """Result of :func:`simulate` / :func:`simulate_agents`.

    For a scalar ε (or one schedule) the arrays have shape (trials, ...);
    for a grid of ε values (or of E schedules) a leading axis of length
    ``len(epsilon)`` is added.

    Attributes
    ----------
    epsilon : float or numpy.ndarray
        Privacy budget(s) ε: a float, a 1-D grid, or -- for a run made with
        ``per_round=True`` -- the schedule(s), shape (T,) or (E, T).
    beta : float or numpy.ndarray
        Matching β (Lemma 1), same shape as ``epsilon``.
    q, r : float
        Leaving and recruiting probabilities.
    model : str
        ``"leak"`` or ``"agnostic"``.
    population : numpy.ndarray of int, shape (..., trials, T+1)
        ``N_0 = n0, N_1, ..., N_T``.
    estimate : numpy.ndarray, shape (..., trials, T)
        ``mu_hat_t`` for rounds t = 1..T (computed from ``N_{t-1}`` users).
    truth : numpy.ndarray, shape (..., trials, T)
        ``mu_t`` (the same path for every ε of one call).
    sq_error : numpy.ndarray, shape (..., trials, T)
        ``(mu_hat_t - mu_t)^2``.
    """

    epsilon: Any
    beta: Any
    q: float
    r: float
    model: str
    population: np.ndarray
    estimate: np.ndarray
    truth: np.ndarray
    sq_error: np.ndarray

    @property
    def mean_population(self) -> np.ndarray:
        """Mean over trials of ``N_t``, shape (..., T+1)."""
        return self.population.mean(axis=-2)

    @property
    def mean_sq_error(self) -> np.ndarray:
        """Mean over trials of the squared error, shape (..., T)."""
        return self.sq_error.mean(axis=-2)

    def moving_average(self, window: int = 15) -> np.ndarray:
        """Trailing moving average of the mean (over trials) squared error.

        Entry ``t-1`` (round t) is the mean of :attr:`mean_sq_error` over rounds
        ``max(1, t - window + 1), ..., t``: a causal window of ``window``
        rounds that shrinks at the start, so the output keeps one value per
        round (shape (..., T)) and never looks ahead.  (The paper's Figs. 1
        and 6 use window 15, its code window 10.)

        Parameters
        ----------
        window : int
            Window length >= 1 (1 returns :attr:`mean_sq_error`).

        Returns
        -------
        numpy.ndarray
            Shape (..., T).
        """
        window = check_int("window", window, low=1)
        m = self.mean_sq_error
        csum = np.cumsum(m, axis=-1)
        T = m.shape[-1]
        idx = np.arange(T)
        lower = idx - window
        prev = np.where(lower >= 0, np.take(csum, np.maximum(lower, 0), axis=-1), 0.0)
        return (csum - prev) / np.minimum(idx + 1, window)


def _check_schedule_shape(eps_arr, T, per_round, *, max_ndim=2):
    """Shape rules of ``epsilon`` with ``per_round`` (module docstring)."""
    if not per_round:
        return
    if eps_arr.ndim == 0 or eps_arr.ndim > max_ndim or eps_arr.shape[-1] != T:
        raise ValueError(
            f"epsilon must be a schedule with per_round=True: its last axis runs over the "
            f"T={T} rounds (shape (T,) for one schedule"
            + (", (E, T) for E schedules" if max_ndim == 2 else ", or (..., T)")
            + f"); got shape {eps_arr.shape}")


def _prepare(epsilon, q, r, T, n0, trials, model, cap, mu, per_round=False):
    eps = _check_epsilon(epsilon, positive=True)
    eps_arr = np.asarray(eps, dtype=float)
    per_round = bool(per_round)
    q = check_probability("q", q, scalar=True)
    r = check_probability("r", r, scalar=True)
    T, n0, cap, trials = _check_sizes(T, n0, cap, trials)
    if per_round:
        _check_schedule_shape(eps_arr, T, per_round)
    elif eps_arr.ndim > 1:
        raise ValueError(f"epsilon must be a number or a 1-D array (a grid of constant budgets; "
                         f"pass per_round=True for schedules); got shape {eps_arr.shape}")
    model = _check_model(model)
    mu_law = _check_mu_law(mu)
    return eps, eps_arr, q, r, T, n0, trials, model, cap, mu_law


def _rows(eps_arr, per_round):
    """ε as rows: shape (E,) for constants, (E, T) for schedules."""
    return np.atleast_2d(eps_arr) if per_round else np.atleast_1d(eps_arr)


def _package(eps, eps_arr, q, r, model, population, estimate, mu_path, per_round=False):
    truth = np.broadcast_to(mu_path, estimate.shape).copy()
    sq = (estimate - truth) ** 2
    beta = beta_from_epsilon(eps)
    if eps_arr.ndim == (1 if per_round else 0):
        population, estimate, truth, sq = population[0], estimate[0], truth[0], sq[0]
    return BernoulliRun(epsilon=eps, beta=beta, q=q, r=r, model=model, population=population,
                        estimate=estimate, truth=truth, sq_error=sq)


def _setup_run(epsilon, q, r, T, n0, trials, model, cap, mu, per_round, seed):
    """What both simulators share: checked arguments, one row of ε per run, the
    root seed and the mu_t path (the same for the fast and the agent simulator)."""
    eps, eps_arr, q, r, T, n0, trials, model, cap, mu_law = _prepare(
        epsilon, q, r, T, n0, trials, model, cap, mu, per_round)
    root = _root_seed_sequence(seed)
    flat = _rows(eps_arr, bool(per_round))
    mu_path = _mu_path(np.random.default_rng(_child_seed(root, _MU_STREAM)), mu_law, trials, T)
    return eps, eps_arr, q, r, T, n0, trials, model, cap, flat, root, mu_path


def simulate(epsilon, q, r, *, T, n0, trials=30, model="leak", cap=20000, mu=(0.0, 1.0),
             seed=None, clip_estimate=False, per_round=False):
    """Simulate repeated private mean estimation with a reacting population (fast).

    Exact in distribution, with a handful of binomial draws per round whatever
    the population size (see the module docstring for the per-round draws,
    the timing convention, the clip to ``[1, cap]``, the law of ``mu_t`` and
    the seeding).  Vectorized over trials; over an ε grid each ε has its own
    random stream (keyed by the value of ε), so ``simulate(eps_grid, ...)``
    equals, ε by ε, ``simulate(eps, ...)`` with the same seed, and repeated
    ε values in a grid give identical runs.  All ε of one call share the same
    ``mu_t`` path (``truth``).

    Parameters
    ----------
    epsilon : float, 1-D array_like, or schedule(s) with ``per_round=True``
        Privacy budget(s) ε in (0, inf]; ``np.inf`` is the non-private
        baseline.  (ε = 0 is rejected: the estimator of eq. 1 is undefined.)
        A 1-D array is a grid of constant budgets unless ``per_round``.
    q : float
        Leaving probability of a leaked user, in [0, 1].
    r : float
        Recruiting probability in [0, 1] (see ``model``).
    T : int
        Number of rounds (>= 1).
    n0 : int
        Initial population ``N_0`` (>= 1).
    trials : int
        Independent repetitions (>= 1).
    model : {"leak", "agnostic"}
        Growth rule (§3 / appendix B).
    cap : int
        Largest population (>= n0); the floor is 1.
    mu : float or (float, float)
        Law of ``mu_t``: ``(a, b)`` = Uniform(a, b) redrawn every round,
        a float = constant.
    seed : None, int, SeedSequence or Generator
        Randomness; same seed, same numbers.
    clip_estimate : bool
        Clip ``mu_hat`` to [0, 1] (as the authors' code does; biased).
    per_round : bool
        If True, ``epsilon`` is a privacy schedule: shape (T,) (round t uses
        ``epsilon[t-1]``) or (E, T) for a grid of E schedules.  A constant
        schedule reproduces the constant-ε run exactly (same seed).

    Returns
    -------
    BernoulliRun

    References
    ----------
    Paper §3 ("Empirical Simulation", Fig. 1) and appendix B (Fig. 6).

    Examples
    --------
    >>> run = simulate([1.0, np.inf], q=0.3, r=0.6, T=20, n0=100, trials=5, seed=1)
    >>> run.population.shape, run.sq_error.shape
    ((2, 5, 21), (2, 5, 20))
    >>> bool(np.all(run.population[1, :, 0] == 100))
    True
    >>> sched = simulate([3.0] * 10 + [1.0] * 10, q=0.3, r=0.6, T=20, n0=100, trials=5, seed=1,
    ...                  per_round=True)
    >>> sched.population.shape
    (5, 21)
    """
    (eps, eps_arr, q, r, T, n0, trials, model, cap, flat, root, mu_path) = _setup_run(
        epsilon, q, r, T, n0, trials, model, cap, mu, per_round, seed)
    gens = [np.random.default_rng(_row_seed(root, e)) for e in flat]
    beta = np.asarray(beta_from_epsilon(flat), dtype=float)
    population, estimate = _run_core(beta, q, r, T=T, n0=n0, trials=trials, model=model, cap=cap,
                                     mu_path=mu_path, draws=_PerEpsilonDraws(gens),
                                     clip_estimate=bool(clip_estimate))
    return _package(eps, eps_arr, q, r, model, population, estimate, mu_path, bool(per_round))


def simulate_agents(epsilon, q, r, *, T, n0, trials=30, model="leak", cap=20000, mu=(0.0, 1.0),
                    seed=None, clip_estimate=False, per_round=False):
    """Same model as :func:`simulate`, one explicit agent at a time (slow reference).

    Every round, every current user in turn draws her bit ``X ~ B(mu_t)``,
    answers by randomized response (keeps the bit with probability
    ``1/2 + beta``), and then -- if her answer was kept (leaked) -- leaves with
    probability ``q``; she recruits one new user with probability ``r`` if her
    answer was flipped (``model="leak"``) or in any case
    (``model="agnostic"``).  The learner applies eq. 1 to the responses.  The
    ``mu_t`` path is the same as :func:`simulate`'s for the same seed; the
    rest is drawn from a different stream, so the two simulators agree in
    distribution, not number by number.  Cost grows with the population: use
    small ``n0``, ``cap`` and ``T``.

    Parameters
    ----------
    epsilon, q, r, T, n0, trials, model, cap, mu, seed, clip_estimate, per_round
        As in :func:`simulate` (``per_round=True``: ``epsilon`` is a schedule).

    Returns
    -------
    BernoulliRun

    References
    ----------
    Paper §3 (population evolution) and appendix B.

    Examples
    --------
    >>> run = simulate_agents(1.0, q=0.3, r=0.6, T=3, n0=10, trials=2, seed=0)
    >>> run.population.shape
    (2, 4)
    """
    (eps, eps_arr, q, r, T, n0, trials, model, cap, flat, root, mu_path) = _setup_run(
        epsilon, q, r, T, n0, trials, model, cap, mu, per_round, seed)
    E = flat.shape[0]
    population = np.empty((E, trials, T + 1), dtype=np.int64)
    estimate = np.empty((E, trials, T))
    for i, e in enumerate(flat):
        betas = np.broadcast_to(np.asarray(beta_from_epsilon(e), dtype=float), (T,))
        gen = np.random.default_rng(_row_seed(root, e, agent=True))
        u = gen.random  # one uniform per decision
        for k in range(trials):
            n = n0
            population[i, k, 0] = n
            for t in range(T):
                beta = float(betas[t])
                keep_p = 0.5 + beta
                mu_t = mu_path[k, t]
                ones_reported = 0
                stays = 0
                for _agent in range(n):
                    x = 1 if u() < mu_t else 0
                    kept = u() < keep_p
                    y = x if kept else 1 - x
                    ones_reported += y
                    leaves = kept and u() < q
                    if model == "leak":
                        recruits = (not kept) and u() < r
                    else:
                        recruits = u() < r
                    stays += (0 if leaves else 1) + (1 if recruits else 0)
                est = _debias(ones_reported / n, beta)
                estimate[i, k, t] = min(max(est, 0.0), 1.0) if clip_estimate else est
                n = min(max(stays, 1), cap)
                population[i, k, t + 1] = n
    return _package(eps, eps_arr, q, r, model, population, estimate, mu_path, bool(per_round))


# --------------------------------------------------------------------------
# mean-field theory
# --------------------------------------------------------------------------
def _mu_second_moment(mu_law):
    """``E[(2 mu - 1)^2]`` for ``mu ~ Uniform(a, b)`` (or a constant when a == b)."""
    a, b = mu_law
    u, v = 2.0 * a - 1.0, 2.0 * b - 1.0
    return (u * u + u * v + v * v) / 3.0


def mean_field_population(epsilon, q, r, *, T, n0, model="leak", cap=20000, per_round=False):
    """Mean-field population path ``N_t = clip(N_{t-1} C(beta), 1, cap)``, t = 0..T.

    The expected growth of Lemma 2 / appendix B applied deterministically, with
    the simulator's floor and cap.  Not the exact mean of the random
    population: the clip is nonlinear and, near the floor, randomness matters.

    Parameters
    ----------
    epsilon : float or array_like
        ε in [0, inf] (broadcast with ``q`` and ``r``).  With
        ``per_round=True`` the last axis of ``epsilon`` (length T) is a
        schedule: ``N_t = clip(N_{t-1} C(beta_t), 1, cap)`` with
        ``beta_t = beta(epsilon[..., t-1])``.
    q, r : float or array_like
        Leaving and recruiting probabilities in [0, 1].
    T : int
        Number of rounds (>= 1).
    n0 : int
        Initial population (>= 1).
    model : {"leak", "agnostic"}
        Growth rule.
    cap : int
        Largest population (>= n0).
    per_round : bool
        Whether ``epsilon``'s last axis runs over the rounds (a schedule).

    Returns
    -------
    numpy.ndarray
        Shape ``broadcast(epsilon, q, r).shape + (T+1,)`` (with
        ``per_round``: ``broadcast(epsilon[..., 0], q, r).shape + (T+1,)``);
        entry 0 is ``n0``.

    References
    ----------
    Paper §3, Lemma 2 and eq. 4; appendix B.

    Examples
    --------
    >>> mean_field_population(np.inf, 0.3, 0.6, T=2, n0=100).round(2).tolist()
    [100.0, 70.0, 49.0]
    >>> mean_field_population([np.inf, 0.5], 0.3, 0.6, T=2, n0=100, per_round=True).round(2).tolist()
    [100.0, 70.0, 72.79]
    """
    return _mean_field_population(epsilon, q, r, T=T, n0=n0, model=model, cap=cap,
                                  per_round=per_round)[0]


def _mean_field_population(epsilon, q, r, *, T, n0, model, cap, per_round, positive=False):
    """:func:`mean_field_population` returning also the validated ε and β (β with a
    trailing round axis of length 1 or T, ready to broadcast against ``N[..., :-1]``)."""
    eps = _check_epsilon(epsilon, positive=positive)
    T, n0, cap, _ = _check_sizes(T, n0, cap)
    per_round = bool(per_round)
    eps_arr = np.asarray(eps, dtype=float)
    _check_schedule_shape(eps_arr, T, per_round, max_ndim=np.inf)
    beta = np.asarray(beta_from_epsilon(eps), dtype=float)
    if per_round:
        qq = np.asarray(check_probability("q", q), dtype=float)[..., None]
        rr = np.asarray(check_probability("r", r), dtype=float)[..., None]
        C = np.asarray(growth_factor(beta, qq, rr, model=model), dtype=float)
        out = np.empty(C.shape[:-1] + (T + 1,))
        out[..., 0] = n0
        for t in range(1, T + 1):
            out[..., t] = np.clip(out[..., t - 1] * C[..., t - 1], 1.0, cap)
        return out, beta
    C = np.asarray(growth_factor(beta, q, r, model=model), dtype=float)
    out = np.empty(C.shape + (T + 1,))
    out[..., 0] = n0
    for t in range(1, T + 1):
        out[..., t] = np.clip(out[..., t - 1] * C, 1.0, cap)
    return out, beta[..., None]


def mean_field_error(epsilon, q, r, *, T, n0, model="leak", cap=20000, mu=(0.0, 1.0),
                     per_round=False):
    """Mean-field expected squared error of rounds t = 1..T.

    ``E_mu[nu (1 - nu)] / (4 beta^2 N_{t-1})`` with ``N_{t-1}`` the
    :func:`mean_field_population` and the average over the law of ``mu_t``
    in closed form (``nu (1 - nu) = 1/4 - beta^2 (2 mu - 1)^2``; for
    ``Uniform(a, b)``, ``E[(2 mu - 1)^2] = (u^2 + u v + v^2) / 3`` with
    ``u = 2a - 1, v = 2b - 1``).  The exact expected error is
    ``E[Var / N_{t-1}]`` over the random population; by Jensen,
    ``E[1/N] >= 1/E[N]``, so this approximation tends to be optimistic,
    most when the population is small or collapsing.  The estimator is not
    clipped here.

    Parameters
    ----------
    epsilon : float or array_like
        ε in (0, inf] (broadcast with ``q`` and ``r``); with ``per_round``
        a schedule along the last axis (round t uses ``epsilon[..., t-1]``
        for its error and for its growth).
    q, r, T, n0, model, cap, per_round
        As in :func:`mean_field_population`.
    mu : float or (float, float)
        Law of ``mu_t`` as in :func:`simulate`.

    Returns
    -------
    numpy.ndarray
        Shape ``broadcast(epsilon, q, r).shape + (T,)``.

    References
    ----------
    Paper §3, eq. 1, Lemma 2 (theory beside the paper's simulations).

    Examples
    --------
    >>> err = mean_field_error(np.inf, 0.0, 0.0, T=3, n0=100, mu=0.5)
    >>> err.round(6).tolist()
    [0.0025, 0.0025, 0.0025]
    """
    mu_law = _check_mu_law(mu)
    pop, beta = _mean_field_population(epsilon, q, r, T=T, n0=n0, model=model, cap=cap,
                                       per_round=per_round, positive=True)
    return _variance_factor(beta, _mu_second_moment(mu_law)) / pop[..., :-1]
