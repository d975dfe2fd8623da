r"""Randomized response and the Bernoulli warm-up (paper §3, appendices B and C).

At each round :math:`t = 1, \dots , T` a platform with :math:`N_{t-1}` users estimates the
mean :math:`\mu_t` of a Bernoulli variable.  Each user holds :math:`X \sim B(\mu_t)` and
answers through randomized response (RR): the true answer is kept with
probability :math:`1/2 + \beta` and flipped otherwise.  A kept answer is a *leak*.
Users react to leaks, which changes the population used at the next round
(``q``, ``r`` in [0, 1], numbers or arrays broadcast together, in every function):

``rule="leak"`` (§3, Lemma 2)
    a leaked user leaves with probability ``q``; a user whose answer was
    flipped recruits one new user with probability ``r``.
``rule="agnostic"`` (appendix B)
    a leaked user leaves with probability ``q``; *every* user recruits one new
    user with probability ``r``.

Contents
--------
Formulas: :func:`beta_from_epsilon`, :func:`epsilon_from_beta` (Lemma 1),
:func:`leak_probability`, :func:`privatize`, :func:`estimate_mean` (eq. 1,
Lemma 10), :func:`estimator_variance`, :func:`growth_factor` (Lemma 2, eq. 4,
appendix B), :func:`critical_beta`, :func:`critical_epsilon` (Theorem 1).

Simulation: :class:`RandomizedResponse`, the mechanism of :mod:`perfpriv.engine`, and the front end
:func:`simulate` (:func:`perfpriv.engine.simulate_agents`: one agent at a time); theory next to it:
:func:`mean_field`, the path of the engine's mean-field recursion.

Conventions
-----------
Privacy levels (a number, a grid or a :class:`perfpriv.engine.Schedule` of ε), timing, result shapes
and seeding are the engine's (:mod:`perfpriv.engine`); round t's ``estimate[..., t-1]`` estimates
``truth[..., t-1]`` = :math:`\mu_t`. The population policy and the law of :math:`\mu_t` (which the
paper leaves open) are :class:`RandomizedResponse`'s. The population process does not depend on
:math:`\mu_t` at all: a user leaks with probability :math:`1/2 + \beta` whatever her bit. Under the
paper's conventions estimates are not clipped: eq. 1 is unbiased and its squared error has the
exact mean :func:`estimator_variance`.

References
----------
"Performative Privacy: When Differential Privacy Maximizes Utility", the
book's source paper (``perfpriv2026`` in its bibliography): §3 (eqs. 1-5,
Lemmas 1-2, Theorem 1), appendix B (agnostic model), appendix C (Lemma 10,
proofs).
"""

from __future__ import annotations

import numpy as np

from . import engine, keyed
from ._kernels import mechanisms as _mechanisms
from ._validate import (
    check_choice,
    check_population,
    check_flag,
    check_int,
    check_probability,
    check_real,
    check_rng,
    check_same_shape,
)
from .behaviour import RULES, Memoryless

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
    "RandomizedResponse",
    "simulate",
    "mean_field",
]


# ------------------------------------ argument checks shared by this module
def _check_epsilon(epsilon, *, positive=False, name="epsilon"):
    """ε in [0, inf] (or (0, inf] when ``positive``); NaN and negatives fail."""
    return check_real(name, epsilon, low=0.0, low_open=positive, allow_inf=True)


def _check_beta(beta, *, positive=False, name="beta"):
    return check_real(name, beta, low=0.0, high=0.5, low_open=positive)


def _check_rule(rule):
    return check_choice("rule", rule, RULES)


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


# --------------------------- randomized response (Lemma 1, eq. 1, Lemma 10)
def beta_from_epsilon(epsilon):
    r"""Randomized-response parameter β that gives ε-local differential privacy.

    Lemma 1: :math:`\beta = \tanh(\varepsilon / 2) / 2`, i.e.
    :math:`(1/2 + \beta) / (1/2 - \beta) = \exp(\varepsilon)`.

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
    r"""Probability :math:`1/2 + \beta` that randomized response keeps (leaks) an answer.

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
    Paper §3 (definition of a leakage event, :math:`X = Y`).

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
        True answers :math:`X_i`.
    beta : float or array_like
        β in [0, 1/2] (broadcast against ``x``).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness (normalized by :func:`numpy.random.default_rng`).
    return_kept : bool
        Also return the boolean mask of kept (leaked) answers.

    Returns
    -------
    y : numpy.ndarray of int
        Responses :math:`Y_i`.
    kept : numpy.ndarray of bool
        Only when ``return_kept``: :math:`Y_i == X_i` (a leak).

    References
    ----------
    Paper §3, definition of :math:`Y_{i,t}`.

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
    return_kept = check_flag("return_kept", return_kept)
    shape = check_same_shape(x=xa, beta=b)
    gen = check_rng(rng, name="rng")
    kept = gen.random(shape) < 0.5 + np.asarray(b)
    y = np.where(kept, xa, 1 - xa).astype(int)
    return (y, kept) if return_kept else y


def _debias(nu, beta):
    r"""Eq. 1: :math:`(\nu - 1/2 + \beta) / (2 \beta)` -- the one place of this formula."""
    return (nu - 0.5 + beta) / (2.0 * beta)


def estimate_mean(y, beta, *, axis=None):
    r"""Unbiased estimate of μ from randomized responses (eq. 1, Lemma 10).

    :math:`\hat{\mu} = (\hat{\nu} - 1/2 + \beta) / (2 \beta)` with :math:`\hat{\nu}` the mean of
    the responses.  It may fall outside [0, 1]; it is not clipped (clipping
    would bias it).

    Parameters
    ----------
    y : array_like of {0, 1}
        Responses :math:`Y_i`.
    beta : float
        β in (0, 1/2].  At β = 0 the responses carry no information and the
        estimator is undefined (``ValueError``).
    axis : int or None
        Axis over which the responses are averaged, −y.ndim <= axis < y.ndim
        (default None: all).

    Returns
    -------
    float or numpy.ndarray
        :math:`\hat{\mu}`.

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
    if axis is not None:
        axis = check_int("axis", axis, low=-ya.ndim, high=ya.ndim - 1)
    out = _debias(np.mean(ya, axis=axis), b)
    return float(out) if np.ndim(out) == 0 else out


def _variance_factor(beta, s2):
    r""":math:`\mathbb{E}[\nu (1 - \nu)] / (4 \beta^2)` given :math:`s2 = \mathbb{E}[(2 \mu - 1)^2]`.

    :math:`\nu (1 - \nu) = 1/4 - \beta^2 (2 \mu - 1)^2` (:func:`estimator_variance`'s ν) is linear in ``s2``.
    """
    beta = np.asarray(beta, dtype=float)
    with np.errstate(over="ignore", under="ignore"):
        # below β ~ 1e-150, β² loses digits or underflows: 1/(16β²) − s2/4 with β divided
        # twice (inf where it overflows, an infinite variance); at β = 0 (ε = 0) the responses carry no
        # information and the variance is infinite
        small = (0.0625 / np.where(beta > 0, beta, 1.0)) / np.where(beta > 0, beta, 1.0) - 0.25 * np.asarray(s2)
        small = np.where(beta > 0, small, np.inf)
        return np.where(beta > 1e-150, (0.25 - beta**2 * s2) / (4.0 * np.maximum(beta, 1e-150) ** 2), small)


def estimator_variance(mu, beta, n):
    r"""Exact variance of the estimator of eq. 1 from ``n`` responses.

    :math:`\mathrm{Var}(\hat{\mu}) = \nu (1 - \nu) / (4 \beta^2 n)` with
    :math:`\nu = 2 \beta \mu + 1/2 - \beta` the probability of a 1-response: the sum
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


# ---------------- population growth (Lemma 2, eq. 4, appendix B, Theorem 1)
def growth_factor(beta, *, q, r, rule="leak"):
    r"""Expected one-round growth factor :math:`C(\beta) = \mathbb{E}[N_t \mid N_{t-1}] / N_{t-1}`.

    ``rule="leak"`` (Lemma 2, eq. 4)::

        C(beta) = 1 - q (1/2 + beta) + r (1/2 - beta) = 1 + (r - q)/2 - beta (q + r)

    ``rule="agnostic"`` (appendix B)::

        C(beta) = 1 - q (1/2 + beta) + r

    Without privacy (β = 1/2) every answer leaks: the leak model's population shrinks as soon as
    :math:`q > 0` (:math:`C = 1 - q`).

    Parameters
    ----------
    beta : float or array_like
        β in [0, 1/2] (see :func:`beta_from_epsilon`).
    q, r, rule
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray
        ``C``, broadcast over ``beta``, ``q`` and ``r``: the exact conditional mean of the unclipped
        population (departures and recruits are sums of independent indicators: no large-population
        approximation is needed, whatever appendix C says).

    References
    ----------
    Paper §3, Lemma 2 and eq. 4; appendix B; appendix C.2.

    Examples
    --------
    >>> round(growth_factor(0.1, q=0.3, r=0.6), 4)
    1.06
    >>> round(growth_factor(0.1, q=0.3, r=0.6, rule="agnostic"), 4)
    1.42
    """
    b = np.asarray(_check_beta(beta))
    users = Memoryless(q=q, r=r, rule=_check_rule(rule))
    return users.growth_factor(0.5 + b)


def critical_beta(*, q, r, rule="leak"):
    r"""Largest β keeping the population from shrinking in expectation (:math:`C(\beta) \ge 1`).

    ``rule="leak"`` (Theorem 1, eq. 5): ``beta_c = max{0, (r - q) / (2 (q + r))}``; C decreases
    in β, so :math:`C(\beta) \ge 1` iff :math:`\beta \le \beta_c` when :math:`r \ge q`. When
    :math:`q > r` the clip at 0 hides that *no* β survives (:math:`C(0) = 1 - (q - r)/2 < 1`). When
    :math:`q + r = 0`, C = 1 for every β: :math:`\beta_c = 1/2` (the limit :math:`q \to 0` at fixed
    :math:`r > 0`).

    ``rule="agnostic"`` (appendix B): :math:`C = 1 - q (1/2 + \beta) + r \ge 1` iff
    :math:`\beta \le r/q - 1/2`, clipped to [0, 1/2]: every β survives when :math:`q \le r`, none
    when :math:`r < q/2`; in between the population survives with enough privacy -- unlike the
    leak model, where :math:`q > r` always means collapse.

    Parameters
    ----------
    q, r, rule
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray
        :math:`\beta_c` in [0, 1/2].

    References
    ----------
    Paper §3, Theorem 1 (eq. 5) and appendix C.2; appendix B.

    Examples
    --------
    >>> round(critical_beta(q=0.3, r=0.6), 4)
    0.1667
    >>> critical_beta(q=0.6, r=0.3)
    0.0
    >>> critical_beta(q=0.0, r=0.0)
    0.5
    >>> round(critical_beta(q=0.6, r=0.4, rule="agnostic"), 4)
    0.1667
    """
    qq = np.asarray(check_probability("q", q), dtype=float)
    rr = np.asarray(check_probability("r", r), dtype=float)
    rule = _check_rule(rule)
    qq, rr = np.broadcast_arrays(qq, rr)
    if rule == "leak":
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


def critical_epsilon(*, q, r, rule="leak"):
    r"""Privacy budget at the survival threshold: ``epsilon_from_beta(critical_beta(q=q, r=r))``.

    Every :math:`ε \le ε_c` keeps :math:`C \ge 1` when such ε exist.  ``0`` when :math:`q > r`
    (leak model: no ε survives, see :func:`critical_beta`), ``inf`` when every
    ε survives (e.g. :math:`q = 0`, or :math:`q + r = 0`).

    Parameters
    ----------
    q, r, rule
        As in the module docstring.

    Returns
    -------
    float or numpy.ndarray
        :math:`ε_c` in [0, inf].

    References
    ----------
    Paper §3, Theorem 1 with Lemma 1.

    Examples
    --------
    >>> round(critical_epsilon(q=0.3, r=0.6), 4)
    0.6931
    >>> critical_epsilon(q=0.0, r=0.5)
    inf
    """
    beta = critical_beta(q=q, r=r, rule=rule)  # checks the arguments; its edge cases are kept
    qq, rr = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(r, dtype=float))
    b = np.asarray(beta, dtype=float)
    # 2 artanh(2β_c) in closed form, ln(r/q) (leak model) or ln(r/(q − r)) (agnostic), in the interior
    # 0 < β_c < 1/2 read off q and r: a tiny q neither rounds β_c to 1/2 (ε_c = inf) nor loses digits
    if _check_rule(rule) == "leak":
        low, inner = qq, (rr > qq) & (qq > 0)
    else:
        low, inner = qq - rr, (rr < qq) & (rr > 0.5 * qq)
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = np.log(np.where(inner, rr, 1.0)) - np.log(np.where(inner, low, 1.0))
    eps = np.where(inner, closed, epsilon_from_beta(b))
    return float(eps) if eps.ndim == 0 else eps


# ---------------------------------------------- the mechanism of the engine
def _mu_second_moment(mu_law):
    r""":math:`\mathbb{E}[(2μ - 1)^{2}]` for :math:`μ \sim \mathrm{Uniform}(a, b)` (a constant when a == b).

    :math:`(u^{2} + uv + v^{2})/3` with :math:`u = 2a - 1`, :math:`v = 2b - 1`.
    """
    a, b = mu_law
    u, v = 2.0 * a - 1.0, 2.0 * b - 1.0
    return (u * u + u * v + v * v) / 3.0


class RandomizedResponse(engine.Mechanism):
    r"""Randomized response as a mechanism of :mod:`perfpriv.engine` (paper §3).

    A round as in the module docstring, at level ε (:math:`β = \tanh(ε/2)/2`): the platform
    releases the estimate of eq. 1, and the round's error is :math:`(\hat μ_t - μ_t)^{2}`.

    One round is drawn exactly, from three binomials per (cell, level,
    trial): the leaks :math:`K \sim \mathrm{Binomial}(N, 1/2 + β)`; the ones among the kept
    answers, :math:`\mathrm{Binomial}(K, μ_t)`, and among the flipped ones,
    :math:`\mathrm{Binomial}(N - K, μ_t)` (a user's bit is independent of her coin); the
    1-responses are S = (kept ones) + (flipped zeros) and :math:`\hat μ = (S/N - 1/2 + β)/(2β)`.
    The population process depends only on K, so it is the same whether or
    not the errors are computed (``record="final"``).

    Parameters
    ----------
    epsilon : float, 1-D array_like or perfpriv.engine.Schedule
        Privacy level(s) ε in (0, inf]; ``np.inf`` is the non-private
        baseline (every answer kept). ε = 0 is refused: eq. 1 is undefined.
    mu : float or (float, float)
        Law of :math:`μ_t`: a constant, or ``(a, b)`` for Uniform(a, b) redrawn every
        round (default ``(0, 1)``, the authors' code; the paper leaves it
        open). All levels of a call share the :math:`μ_t` path (common random numbers).
    clip_estimate : bool, optional
        Clip μ̂ to [0, 1] (biased; the authors' code does). ``None``: from
        ``conventions`` (False for ``"paper"``, True for ``"authors"``).

    Notes
    -----
    ``conventions="authors"`` (the published ε* maps): the population is
    floored at 0, a trial stops when it dies and each of its remaining
    rounds is charged the error 10, and estimates are clipped.
    ``"paper"``: the population is clipped to [1, 20000] (§3's text).
    The authors' curve script (Figs. 1 and 6) is ``conventions="paper"`` with
    ``clip_estimate=True`` (``curve_script_options``); both published scripts draw
    every ε afresh (``common_numbers=False`` in :func:`perfpriv.engine.simulate`).

    References
    ----------
    Paper §3 (eq. 1-2, Lemma 1, Lemma 2, Fig. 1-2), appendices B-C.

    Examples
    --------
    >>> m = RandomizedResponse(1.0)
    >>> round(float(m.leak_probability(100, 1.0)), 4)
    0.7311
    >>> round(float(m.expected_error(100, 1.0)), 5)      # (1/4 - beta^2/3) / (4 beta^2 N), mu ~ U(0, 1)
    0.01087
    """

    name = "randomized_response"
    level_name = "epsilon"

    def __init__(self, epsilon, *, mu=(0.0, 1.0), clip_estimate=None):
        self.levels = engine.make_levels(epsilon, "epsilon", low=0.0, low_open=True, allow_inf=True)
        self.mu = _check_mu_law(mu)
        self.clip_estimate = None if clip_estimate is None else check_flag("clip_estimate", clip_estimate)
        self._s2 = _mu_second_moment(self.mu)

    def __repr__(self) -> str:
        lv = self.levels
        eps = lv.describe()
        text = f"{eps:g}" if isinstance(eps, float) else f"<{'schedule' if lv.per_round else 'grid'} {np.shape(eps)}>"
        return f"RandomizedResponse(epsilon={text}, mu={self.mu}, clip_estimate={self.clip_estimate})"

    def resolved(self, conventions):
        if self.clip_estimate is not None:
            return self
        out = RandomizedResponse.__new__(RandomizedResponse)
        out.__dict__.update(self.__dict__)
        out.clip_estimate = conventions == "authors"
        return out

    def policy_preset(self, conventions):
        if conventions == "authors":
            return dict(cap=20000, floor=0, stop=0, collapse="penalty", penalty=10.0)
        return dict(cap=20000, floor=1, stop=0, collapse="floor", penalty=0.0)

    def options(self):
        return dict(mu=self.mu, clip_estimate=self.clip_estimate)

    # ---------------------------------------------------------- simulation
    def draw_round(self, n, level, keys, live, t, need_error=True):
        n, live = keyed.check_batch(n, keys, live, per_record=False)      # binomial counts: no records
        beta = np.asarray(beta_from_epsilon(level), dtype=float)
        keep = 0.5 + beta
        users = np.where(live, n, 0)
        leaked = keyed.binomial(keys.child("leaks"), users, keep)
        if not need_error:
            return engine.RoundOutcome(np.zeros(np.shape(users)), leaked)
        a, b = self.mu
        if a == b:
            truth = np.full(np.shape(users), a)
        else:
            u = keys.child("truth").uniform_at(np.int64(0))
            truth = np.broadcast_to(a + (b - a) * u, np.shape(users))
        ones_kept, ones_flipped = keyed.binomials((keys.child("kept-ones"), leaked, truth),
                                                    (keys.child("flipped-ones"), users - leaked, truth))
        responses = ones_kept + (users - leaked - ones_flipped)
        est = _debias(responses / np.maximum(users, 1), beta)
        if self.clip_estimate:
            est = np.clip(est, 0.0, 1.0)
        with np.errstate(over="ignore"):  # ε → 0: the debiased estimate overflows, its error is inf
            err = (est - truth) ** 2
        return engine.RoundOutcome(err, leaked, {"estimate": est, "truth": np.array(truth)})

    def agent_round(self, n, level, rng, t=1, state=None):
        r"""Each user in turn draws her bit :math:`X \sim B(μ_t)` and keeps it (a leak) with probability 1/2 + β.

        Then as :class:`RandomizedResponse` (:meth:`perfpriv.engine.Mechanism.agent_round`).
        """
        n = check_int("n", n, low=1)
        beta = float(beta_from_epsilon(check_real("epsilon", level, low=0, low_open=True, allow_inf=True,
                                                  scalar=True)))
        a, b = self.mu
        mu_t = a if a == b else a + (b - a) * rng.random()
        kept = np.zeros(n, dtype=bool)
        ones = 0
        for j in range(n):
            x = 1 if rng.random() < mu_t else 0
            kept[j] = rng.random() < 0.5 + beta
            ones += x if kept[j] else 1 - x
        est = _debias(ones / n, beta)
        if self.clip_estimate:
            est = min(max(est, 0.0), 1.0)
        miss = est - mu_t           # a product, not ** 2: eps -> 0 overflows to inf, not OverflowError
        return engine.AgentRound(kept, miss * miss, {"estimate": est, "truth": mu_t})

    def kernel_draw(self):
        """:func:`perfpriv._kernels.mechanisms.randomized_response_draw`, with ``(mu_low, mu_high, clip)``."""
        a, b = self.mu
        return _mechanisms.RANDOMIZED_RESPONSE, np.array([a, b, 1.0 if self.clip_estimate else 0.0])

    def kernel_levels(self, level):
        """:math:`(β, 1/2 + β)` of every level ε (eq. 1 and Lemma 1)."""
        beta = np.asarray(beta_from_epsilon(level), dtype=float)
        return np.stack([beta, 0.5 + beta], axis=-1)

    def privacy_cost(self, level):
        """ε per answer: ε-LDP rounds compose additively (basic composition)."""
        check_population("level", level)
        return np.asarray(level, float)

    # ---------------------------------------------------------- mean field
    def leak_probability(self, n, level):
        """1/2 + β(ε): every user leaks with this probability, whatever the population."""
        check_population("n", n)
        beta = np.asarray(beta_from_epsilon(level), dtype=float)
        return np.broadcast_to(0.5 + beta, np.broadcast_shapes(np.shape(n), np.shape(beta)))

    def expected_error(self, n, level):
        """:math:`E_μ[ν(1 - ν)] / (4β^{2} n)`: the exact mean squared error of eq. 1 from n >= 0 answers (inf at n = 0)."""
        n = check_population("n", n)
        beta = np.asarray(beta_from_epsilon(level), dtype=float)
        with np.errstate(divide="ignore"):             # n = 0 (a population that died out): inf
            return _variance_factor(beta, self._s2) / n

    def leak_probability_grad(self, n, level):
        r""":math:`p = 1/2 + β(ε)`, :math:`dp/d\log n = 0`, :math:`dp/d\log ε = ε β'(ε)` with :math:`β' = \operatorname{sech}^{2}(ε/2)/4` (0 at ε = inf)."""
        eps = check_population("level", level)
        p = np.asarray(self.leak_probability(n, eps), float)
        return p, np.zeros(p.shape), np.broadcast_to(_eps_dbeta(eps), p.shape)

    def expected_error_grad(self, n, level):
        r""":math:`e = V(β)/n` with :math:`V = 1/(16β^{2}) - s_2/4`: :math:`de/d\log n = -e`, :math:`de/d\log ε = -ε β'(ε)/(8β^{3} n)`.

        At n = 0 (a population that died out): e = inf, de/dlog n = −inf, de/dlog ε = −inf. At ε = 0
        (β = 0): de/dlog ε = −inf (:math:`-2/(ε^{2} n)` as ε → 0); at ε = inf (β flat at 1/2): 0, whatever n.
        """
        eps = check_population("level", level)
        beta = np.asarray(beta_from_epsilon(eps), dtype=float)
        n = check_population("n", n)
        with np.errstate(divide="ignore", invalid="ignore"):
            e = _variance_factor(beta, self._s2) / n
            slope = -_eps_dbeta(eps) / (8.0 * beta**3 * n)
        return e, -e, np.where(np.isposinf(eps), 0.0, np.where((eps == 0) | (n == 0), -np.inf, slope))


def _eps_dbeta(eps):
    r""":math:`ε β'(ε) = ε \operatorname{sech}^{2}(ε/2)/4` (``eps``: a float array), with its limit 0 at ε = inf.

    cosh overflows to inf beyond ε ≈ 1420, where the product is 0 (ε · 0); at ε = inf it is inf · 0.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        out = eps * (0.25 / np.cosh(eps / 2.0) ** 2)
    return np.where(np.isposinf(eps), 0.0, out)


# --------------------------------------------------------------- front ends
def simulate(epsilon, *, q, r, T, n0, trials=30, rule="leak", seed=None):
    """Simulate repeated private mean estimation with a reacting population (§3, appendix B).

    The paper's front end of :func:`perfpriv.engine.simulate`, with the mechanism
    ``RandomizedResponse(epsilon)`` (:math:`μ_t \\sim` Uniform(0, 1)) and the users
    ``Memoryless(q=q, r=r, rule=rule)``, under the paper's conventions. For other settings (a
    :class:`perfpriv.engine.Policy`, the authors' conventions, ...) call it with the objects.

    Parameters
    ----------
    epsilon : float, 1-D array_like or perfpriv.engine.Schedule
        Privacy budget(s) ε in (0, inf] (:class:`RandomizedResponse`).
    q, r, rule
        As in the module docstring.
    T, n0, trials, seed
        As in :func:`perfpriv.engine.simulate`.

    Returns
    -------
    perfpriv.engine.SimulationRun

    References
    ----------
    Paper §3 ("Empirical Simulation", Fig. 1) and appendix B (Fig. 6).

    Examples
    --------
    >>> run = simulate([1.0, np.inf], q=0.3, r=0.6, T=20, n0=100, trials=5, seed=1)
    >>> run.population.shape, run.sq_error.shape
    ((2, 5, 21), (2, 5, 20))
    >>> alone = simulate(np.inf, q=0.3, r=0.6, T=20, n0=100, trials=5, seed=1)
    >>> bool(np.array_equal(alone.population, run.population[1]))   # the same numbers in a grid
    True
    """
    return engine.simulate(RandomizedResponse(epsilon), Memoryless(q=q, r=r, rule=rule), T=T, n0=n0, trials=trials,
                           seed=seed)


def curve_script_options(conventions="paper", *, cap=20000):
    """The run options of the error and population curves (Figs. 1 and 6) under ``conventions``.

    ``"authors"`` follows the authors' curve script, not their ε* map script (``conventions="authors"``
    elsewhere): population floored at 1, no trial stopped, estimates clipped to [0, 1].

    Parameters
    ----------
    conventions : {"paper", "authors"}
    cap : int or None
        The population cap of the curves (20000 in the paper).

    Returns
    -------
    dict
        ``conventions`` and ``policy`` of :func:`perfpriv.engine.simulate` and, for
        ``"authors"``, ``clip_estimate`` of :class:`RandomizedResponse`.

    Examples
    --------
    >>> curve_script_options("authors")
    {'conventions': 'paper', 'clip_estimate': True, 'policy': Policy(cap=20000, floor=1, stop=0)}
    """
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    if conventions == "authors":
        return dict(conventions="paper", clip_estimate=True, policy=engine.Policy(cap=cap, floor=1, stop=0))
    return dict(conventions=conventions, policy=engine.Policy(cap=cap))


def mean_field(epsilon, *, q, r, T, n0, rule="leak", cap=20000, floor=1, mu=(0.0, 1.0)):
    r"""The mean-field path of randomized response: population and expected error of each round.

    The population follows :math:`N_t = \mathrm{clip}(N_{t-1} C(β_t), \mathrm{floor}, \mathrm{cap})`, :math:`t = 0, \dots, T`:
    the expected growth of Lemma 2 / appendix B applied deterministically.
    It is not the exact mean of the random population: the clip is
    nonlinear and, near the floor, randomness matters.

    The expected squared error of round t = 1..T is :math:`E_μ[ν(1 - ν)] / (4β_t^{2} N_{t-1})`
    (:meth:`RandomizedResponse.expected_error`; estimates not clipped). The exact one is
    :math:`\mathbb{E}[\mathrm{Var}/N_{t-1}]` over the random population; by Jensen E[1/N] >= 1/E[N],
    so this tends to be optimistic, most when the population is small or collapsing.

    This front end runs :func:`perfpriv.engine.mean_field` on
    ``RandomizedResponse(epsilon, mu=mu)`` and ``Memoryless(q=q, r=r, rule=rule)``.

    Parameters
    ----------
    epsilon, mu
        As in :class:`RandomizedResponse` (a grid of ε gives one path per value).
    q, r, rule
        As in the module docstring (arrays of q, r are cells: leading axes of the result).
    T, n0, cap, floor
        As in :func:`perfpriv.engine.mean_field` (integer n0 >= 1).

    Returns
    -------
    perfpriv.engine.MeanFieldPath

    References
    ----------
    Paper §3, eq. 1 and 4, Lemma 2; appendix B.

    Examples
    --------
    >>> mean_field(np.inf, q=0.3, r=0.6, T=2, n0=100).population.round(2).tolist()
    [100.0, 70.0, 49.0]
    >>> mean_field(np.inf, q=0.0, r=0.0, T=3, n0=100, mu=0.5).sq_error.round(6).tolist()
    [0.0025, 0.0025, 0.0025]
    """
    n0 = check_int("n0", n0, low=1)  # an initial population of users (the engine's recursion takes reals)
    mech = RandomizedResponse(epsilon, mu=mu)
    return engine.mean_field(mech, Memoryless(q=q, r=r, rule=_check_rule(rule)), T=T, n0=n0, cap=cap,
                             floor=floor)
