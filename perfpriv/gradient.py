"""Private gradient descent with per-record privacy accounting and users who leave.

Noisy full-batch gradient descent on a strongly convex empirical objective

    :math:`J(θ) = Σ_i ℓ(θ; x_i, y_i) + (λ/2)\\|θ\\|^{2}`,

with ``loss="logistic"`` (:math:`ℓ = \\log(1 + e^{-y x^\\top θ})`, :math:`y ∈ \\{-1, +1\\}`) or
``loss="squared"`` (:math:`ℓ = (y - x^\\top θ)^{2}/2`). Each step clips every record's
gradient to the ℓ2 ball of radius C and releases the noisy sum

    :math:`ĝ_t = Σ_i \\mathrm{clip}_C(∇ℓ_i(θ_t)) + σ ξ_t`,    :math:`ξ_t \\sim \\mathcal{N}(0, I_d)`,

then moves :math:`θ_{t+1} = Π_B(θ_t - η_t(ĝ_t + λθ_t))` (:math:`Π_B`: projection on the ball of radius B, or
none). :class:`Training` holds this configuration and :func:`noisy_gd` runs it; K steps are
:math:`ρ = KC^{2}/(2σ^{2})`-zCDP (:func:`zcdp_cost`). K counts the gradient steps of one training run (paper
001's T; the book keeps T for the rounds of the performative loop).

Per-record accounting
---------------------
An attacker who sees every :math:`ĝ_t` (equivalently, without projection, every iterate) tests whether
record i took part. With :math:`g_{i,t} = \\mathrm{clip}_C(∇ℓ_i(θ_t))` on the observed path, the
log-likelihood ratio of the transcript is

.. math::

    \\Lambda_i = \\sum_t \\frac{2\\langle \\sigma\\xi_t, g_{i,t}\\rangle + \\lVert g_{i,t}\\rVert^2}{2\\sigma^2},

exact for any adaptive path (the transcript's density factorizes over the steps). If the norms
:math:`\\|g_{i,t}\\|` do not depend on the noise (in particular when every gradient of record i is clipped),
:math:`Λ_i` is exactly :math:`N(μ_i^{2}/2, μ_i^{2})` with :math:`μ_i^{2} = Σ_t \\|g_{i,t}\\|^{2}/σ^{2}`:
record i is :math:`μ_i`-Gaussian DP and the paper's Lemma 7 gives its leak probability
(:func:`gdp_leak_probability`). Otherwise this is an approximation (individual privacy accounting), which
:func:`simulate_transcripts` measures. The worst case is :math:`μ = \\sqrt{KC^{2}}/σ = \\sqrt{2ρ}`.

Shared parameters: ``X, y`` are a dataset, shapes (n, d) and (n,) (labels ±1 for the logistic loss); ``loss``
and ``lam`` are ℓ and λ above; a ``seed`` is None, an int, a SeedSequence or a numpy.random.Generator.
Numbers or arrays broadcast together, and a float comes back for scalar input.

:class:`PrivateGD` is the retraining task as a mechanism of :mod:`perfpriv.engine`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from . import engine, keyed
from ._records import clip as clip_rows
from ._learning import (OneRoundCheck, TabulatedMechanism, Tabulation,
                        check_seed, key_normals, one_round_check,
                        round_groups, stable)
from ._stats import log_normal_density, standard_error
from ._validate import (check_allocation, check_array_size, check_choice, check_instance, check_int, check_real,
                        check_population, check_rng)
from .behaviour import Memoryless
from .regression import leak_probability as _release_leak_probability

__all__ = [
    "per_example_gradients",
    "zcdp_cost",
    "zcdp_to_dp",
    "sigma_for_rho",
    "objective",
    "minimize_objective",
    "utility_bound",
    "quadratic_expected_excess",
    "gdp_leak_probability",
    "GDRun",
    "Training",
    "noisy_gd",
    "TranscriptCheck",
    "simulate_transcripts",
    "GDData",
    "Tabulation",
    "PrivateGD",
    "UtilityData",
    "UtilityCheck",
    "utility_check",
    "LongRunUtility",
    "long_run_utility",
    "OneRoundCheck",
    "one_round_check",
]

LOSSES = ("logistic", "squared")
#: Step schedules of :class:`Training`.
SCHEDULES = ("constant", "strongly_convex")


# ------------------------------------------------------------------ checks
#: The largest absolute value of an entry of a dataset or a model θ (the bound of ``x_bound``):
#: margins xᵀθ stay below ~1e100 d and their squares, the squared loss and :math:`λ\|θ\|^{2}` below the largest double.
ENTRY_BOUND = 1e50
#: The largest absolute value of a label: the squared loss's (y − xᵀθ)² stays below :math:`\sim 1e200 d^{2}`
#: (a label of the squared loss carries noise of sd up to 1e50, the bound of ``noise_sd``, times a normal).
LABEL_BOUND = 1e100


def _check_xy(X, y, loss):
    X = np.asarray(check_real("X", X, low=-ENTRY_BOUND, high=ENTRY_BOUND), dtype=float)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be an (n, d) array with n >= 1 records and d >= 1; got shape {X.shape}")
    y = np.asarray(check_real("y", y, low=-LABEL_BOUND, high=LABEL_BOUND), dtype=float).reshape(-1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must hold one label per row of X ({X.shape[0]}); got {y.shape[0]}")
    if loss == "logistic" and not np.all(np.abs(y) == 1.0):
        raise ValueError("y must hold labels in {-1, +1} for loss='logistic'")
    return X, y


def _theta(theta, d, name="theta"):
    theta = np.asarray(check_real(name, theta, low=-ENTRY_BOUND, high=ENTRY_BOUND), dtype=float).reshape(-1)
    if theta.shape != (d,):
        raise ValueError(f"{name} must be a vector of length d={d}; got shape {theta.shape}")
    return theta


# ------------------------------------------------------------- the loss
def _dloss(z, y, loss):
    r""":math:`∂ℓ/∂(x^\top θ)` at margins z: :math:`-y\, σ(-yz)` (logistic) or :math:`z - y` (squared)."""
    if loss == "logistic":
        return -y * special.expit(-y * z)
    return z - y


def per_example_gradients(theta, X, y, *, loss):
    """Gradient :math:`∇ℓ(θ; x_i, y_i)` of every record (rows), without the regularizer.

    Parameters
    ----------
    theta, X, y, loss
        The model, shape (d,), and as in the module docstring.

    Returns
    -------
    numpy.ndarray, shape (n, d)

    Examples
    --------
    >>> per_example_gradients([0.0, 0.0], [[2.0, 0.0]], [1.0], loss="logistic").tolist()
    [[-1.0, -0.0]]
    """
    loss = check_choice("loss", loss, LOSSES)
    X, y = _check_xy(X, y, loss)
    theta = _theta(theta, X.shape[1])
    return _dloss(X @ theta, y, loss)[:, None] * X


def objective(theta, X, y, *, loss, lam):
    r""":math:`J(θ) = Σ_i ℓ(θ; x_i, y_i) + (λ/2)\|θ\|^{2}` (the sum form of paper 001).

    Examples
    --------
    >>> round(objective([0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], [1.0, -1.0], loss="logistic", lam=1.0), 4)
    1.3863
    """
    loss = check_choice("loss", loss, LOSSES)
    X, y = _check_xy(X, y, loss)
    theta = _theta(theta, X.shape[1])
    lam = check_real("lam", lam, low=0, scalar=True)
    return float(_objective(theta, X, y, loss, lam))


def _objective(theta, X, y, loss, lam):
    z = X @ theta
    if loss == "logistic":
        vals = np.logaddexp(0.0, -y * z)
    else:
        vals = 0.5 * (y - z) ** 2
    with np.errstate(over="ignore"):      # every term is >= 0: beyond the doubles the objective is +inf
        return vals.sum(axis=-1) + 0.5 * lam * np.sum(theta * theta, axis=-1)


def minimize_objective(X, y, *, loss, lam, radius=None):
    """The minimizer θ* of J over the ball of radius B (projected Newton; exact for squared loss).

    Parameters
    ----------
    X, y, loss, lam
        As in :func:`objective` (λ > 0).
    radius : float, optional
        B; ``None``: unconstrained.

    Returns
    -------
    numpy.ndarray, shape (d,)

    Examples
    --------
    >>> minimize_objective([[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0], loss="squared", lam=1.0).tolist()
    [0.5, 1.0]
    """
    loss = check_choice("loss", loss, LOSSES)
    X, y = _check_xy(X, y, loss)
    lam = check_real("lam", lam, low=0, low_open=True, scalar=True)
    radius = None if radius is None else check_real("radius", radius, low=0, low_open=True, scalar=True)
    return _minimize(X, y, loss, lam, radius)


def _newton(X, y, loss, lam):
    """Unconstrained minimizer of J (Newton's method; one solve for the squared loss)."""
    d = X.shape[1]
    if loss == "squared":
        return np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)
    theta = np.zeros(d)
    for _ in range(100):
        s = special.expit(-y * (X @ theta))
        grad = -(X.T @ (y * s)) + lam * theta
        H = (X.T * (s * (1 - s))) @ X + lam * np.eye(d)
        step = np.linalg.solve(H, grad)
        theta = theta - step
        if np.max(np.abs(step)) < 1e-14 * (1.0 + np.max(np.abs(theta))):
            break
    return theta


def _minimize(X, y, loss, lam, radius):
    theta = _newton(X, y, loss, lam)
    if radius is None or np.linalg.norm(theta) <= radius:
        return theta
    # the minimizer lies on the sphere: projected gradient descent with step 1/(smoothness)
    smooth = np.linalg.eigvalsh(X.T @ X)[-1] * (0.25 if loss == "logistic" else 1.0) + lam
    theta = theta * (radius / np.linalg.norm(theta))
    for _ in range(100_000):
        z = X @ theta
        grad = X.T @ _dloss(z, y, loss) + lam * theta
        new = theta - grad / smooth
        new *= min(1.0, radius / np.linalg.norm(new))
        if np.max(np.abs(new - theta)) < 1e-15 * (1.0 + radius):
            return new
        theta = new
    return theta


# ---------------------------------------------------------- privacy cost
ADJACENCIES = ("add_remove", "replace")


def zcdp_cost(steps, *, clip, sigma, adjacency="add_remove"):
    r"""zCDP of K noisy gradient steps: :math:`ρ = K C^{2}/(2σ^{2})` (add/remove), 4× that (replace-one).

    One step is the Gaussian mechanism of sensitivity C (2C under replace-one), :math:`C^{2}/(2σ^{2})`-zCDP
    (Bun and Steinke 2016, Prop. 1.6), and zCDP composes over the K adaptive steps (their Lemma 2.3). For
    :class:`PrivateGD`, whose step depends on N, it holds with N public (proof and discussion: chapter 09).

    Parameters
    ----------
    steps, clip, sigma : float or array_like
        K >= 1, C > 0 and σ > 0.
    adjacency : {"add_remove", "replace"}
        The neighbouring relation.

    Examples
    --------
    >>> zcdp_cost(100, clip=1.0, sigma=10.0)
    0.5
    >>> zcdp_cost(100, clip=1.0, sigma=10.0, adjacency="replace")
    2.0
    """
    steps = check_real("steps", steps, low=1)
    clip = check_real("clip", clip, low=0, low_open=True)
    sigma = check_real("sigma", sigma, low=0, low_open=True)
    adjacency = check_choice("adjacency", adjacency, ADJACENCIES)
    factor = 1.0 if adjacency == "add_remove" else 4.0
    out = stable(lambda: (factor * np.asarray(steps, float) * np.asarray(clip, float) ** 2
                          / (2.0 * np.asarray(sigma, float) ** 2)),
                 lambda: math.log(factor) + np.log(steps) + 2.0 * np.log(clip) - math.log(2.0) - 2.0 * np.log(sigma))
    return float(out) if out.ndim == 0 else out


def zcdp_to_dp(rho, *, delta):
    r"""(ε, δ)-DP of a ρ-zCDP mechanism: :math:`ε = ρ + 2\sqrt{ρ \log(1/δ)}`.

    Bun and Steinke (2016), Proposition 1.3, for every δ > 0. A target (ε, δ) is met when
    :math:`ρ + 2\sqrt{ρ \log(1/δ)} \le ε`; in particular :math:`ρ \le ε^{2}/(8 \log(1/δ))` suffices as long as
    :math:`ε \le 2(2 - \sqrt 2) \log(1/δ)` (:math:`\approx 2.34 \log(1/δ)`), since then
    :math:`ρ + ε/\sqrt 2 \le ε`. (An excerpt on private GD states this with the inequality on ρ reversed; a
    larger ρ is a weaker guarantee.)

    Parameters
    ----------
    rho : float or array_like
        ρ >= 0 (``inf`` gives ``inf``).
    delta : float
        δ in (0, 1).

    Examples
    --------
    >>> [round(zcdp_to_dp(r, delta=1e-5), 1) for r in (1.0, 200.0, 5000.0)]
    [7.8, 296.0, 5479.9]
    """
    rho = check_real("rho", rho, low=0, allow_inf=True)
    delta = check_real("delta", delta, low=0, high=1, low_open=True, high_open=True, scalar=True)
    r = np.asarray(rho, float)
    out = r + 2.0 * np.sqrt(r * math.log(1.0 / delta))
    return float(out) if out.ndim == 0 else out


def sigma_for_rho(rho, *, steps, clip):
    r"""Noise :math:`σ = C\sqrt{K/(2ρ)}` that makes K steps ρ-zCDP (inverse of :func:`zcdp_cost`; ρ = inf gives 0).

    Examples
    --------
    >>> sigma_for_rho(0.5, steps=100, clip=1.0)
    10.0
    """
    rho = check_real("rho", rho, low=0, low_open=True, allow_inf=True)
    steps = check_real("steps", steps, low=1)
    clip = check_real("clip", clip, low=0, low_open=True)
    out = stable(lambda: np.asarray(clip, float) * np.sqrt(np.asarray(steps, float) / (2.0 * np.asarray(rho, float))),
                 lambda: np.log(clip) + 0.5 * (np.log(steps) - math.log(2.0) - np.log(rho)))
    return float(out) if out.ndim == 0 else out


def gdp_leak_probability(mu, *, tau):
    """Leak probability Φ̄(τ/μ − μ/2) of a μ-Gaussian-DP record (the paper's Lemma 7 in μ).

    The privacy loss of a μ-GDP pair is :math:`N(μ^{2}/2, μ^{2})` under membership; the probability is 0 at
    μ = 0 and 1 at μ = inf, computed by :func:`perfpriv.regression.leak_probability` (a shift μ under unit
    noise).

    Examples
    --------
    >>> round(gdp_leak_probability(2.0, tau=0.5), 4)
    0.7734
    """
    mu = check_real("mu", mu, low=0, allow_inf=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    mu_arr = np.asarray(mu, float)
    finite = np.where(np.isfinite(mu_arr), mu_arr, 0.0)
    out = np.asarray(_release_leak_probability(finite, 1.0, tau=tau), float)
    out = np.where(np.isposinf(mu_arr), 1.0, out)
    return float(out) if out.ndim == 0 else out


def utility_bound(n, *, lipschitz, lam, radius, d, rho, steps, strong_convexity=None):
    r"""Paper 001's excess-objective bound for private GD on a strongly convex problem.

        :math:`\mathbb{E}[J(\hat θ)] - \min_{\|θ\|\le B} J \le 4(nL + λB)^{2}/(μK) + dL^{2}/(μρ)`,

    for K noisy steps calibrated to ρ-zCDP (:math:`σ^{2} = KL^{2}/(2ρ)`), per-record gradients of norm at most
    L (L-Lipschitz losses, or clipping at C = L), projection on the ball of radius B, and J μ-strongly convex.
    It follows from the projected-SGD bound :math:`2G^{2}/(μ(K + 1))` of Lacoste-Julien, Schmidt and Bach
    (2012) (step 2/(μ(t+1)), weighted average) with
    :math:`G^{2} = (nL + λB)^{2} + dσ^{2} \ge \mathbb{E}\|ĝ_t + λθ_t\|^{2}`.

    Parameters
    ----------
    n, d, steps : int
        Number of records, dimension and gradient steps K >= 1.
    lipschitz, lam, radius : float
        L > 0, λ > 0 and B > 0.
    rho : float or array_like
        ρ > 0 (``inf``: the non-private first term only).
    strong_convexity : float, optional
        μ >= λ (default λ).

    References
    ----------
    Paper 001 (convergence of PrivateGD in strongly convex problems); Lacoste-Julien, Schmidt and Bach (2012).

    Examples
    --------
    >>> round(utility_bound(100, lipschitz=1.0, lam=1.0, radius=1.0, d=5, rho=1.0, steps=1000), 3)
    45.804
    """
    n = check_int("n", n, low=1)
    L = check_real("lipschitz", lipschitz, low=0, low_open=True, scalar=True)
    lam = check_real("lam", lam, low=0, low_open=True, scalar=True)
    B = check_real("radius", radius, low=0, low_open=True, scalar=True)
    d = check_int("d", d, low=1)
    rho = check_real("rho", rho, low=0, low_open=True, allow_inf=True)
    T = check_int("steps", steps, low=1)
    mu = lam if strong_convexity is None else check_real("strong_convexity", strong_convexity, low=lam,
                                                          scalar=True)
    lL, lB, llam, lmu = math.log(L), math.log(B), math.log(lam), math.log(mu)
    out = stable(lambda: 4.0 * (n * L + lam * B) ** 2 / (mu * T) + d * L ** 2 / (mu * np.asarray(rho, float)),
                 lambda: np.logaddexp(math.log(4.0) + 2.0 * np.logaddexp(math.log(n) + lL, llam + lB) - lmu
                                      - math.log(T), math.log(d) + 2.0 * lL - lmu - np.log(rho)))
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------- one run
def _step_sizes(schedule, steps, step_size, mu):
    if schedule == "constant":
        return np.full(steps, float(step_size))
    return 2.0 / (mu * (np.arange(1, steps + 1) + 1.0))


def _weights(schedule, steps):
    r"""Output weights of the iterates: the last one, or 2(k + 1)/(K(K + 1)) on :math:`θ_k`, k < K."""
    w = np.zeros(steps + 1)
    if schedule == "constant":
        w[-1] = 1.0
    else:
        w[:-1] = 2.0 * np.arange(1, steps + 1) / (steps * (steps + 1.0))
    return w


def _gd(X, y, xi, sigma, *, loss, lam, clip, etas, weights, radius, theta0):
    r"""Batched noisy GD: B runs at once.

    X (B, n, d), y (B, n), xi (B, T, d) standard normals, sigma (B,) (0: no
    noise). Returns the output θ̂ (B, d), :math:`A = Σ_t ⟨ξ_t, g_{i,t}⟩` (B, n),
    :math:`S = Σ_t \|g_{i,t}\|^{2}` (B, n) and the number of clipped steps of each record.
    """
    Bn, n, d = X.shape
    theta = np.broadcast_to(theta0, (Bn, d)).astype(float).copy()
    out = weights[0] * theta
    A = np.zeros((Bn, n))
    S = np.zeros((Bn, n))
    clipped = np.zeros((Bn, n), dtype=np.int64)
    xnorm = np.sqrt(np.einsum("bij,bij->bi", X, X))
    for t, eta in enumerate(etas):
        z = np.einsum("bij,bj->bi", X, theta)
        s = _dloss(z, y, loss)                                # ∂ℓ/∂z
        gnorm = np.abs(s) * xnorm
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            factor = np.where(gnorm > clip, clip / gnorm, 1.0)
        clipped += gnorm > clip
        c = factor * s                                        # clipped g_i = c_i x_i
        total = np.einsum("bi,bij->bj", c, X)
        noise_t = xi[:, t, :]
        A += c * np.einsum("bij,bj->bi", X, noise_t)
        S += (c * xnorm) ** 2
        theta = theta - eta * (total + sigma[:, None] * noise_t + lam * theta)
        if radius is not None:
            norm = np.linalg.norm(theta, axis=1, keepdims=True)
            theta = theta * np.minimum(1.0, radius / np.maximum(norm, 1e-300))
        out = out + weights[t + 1] * theta
    return out, A, S, clipped


def _llr_from(A, S, sigma):
    """:math:`Λ_i = A_i/σ + S_i/(2σ^{2})` (σ = 0: +inf for records with a non-zero gradient, else 0)."""
    sigma = np.asarray(sigma, float)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = A / sigma + S / (2.0 * sigma ** 2)
    return np.where(sigma > 0, lam, np.where(S > 0, np.inf, 0.0))


def _mu_from(S, sigma):
    sigma = np.asarray(sigma, float)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.sqrt(S) / sigma
    return np.where(sigma > 0, mu, np.where(S > 0, np.inf, 0.0))


@dataclass(frozen=True, eq=False)
class GDRun:
    r"""One run of noisy gradient descent (:func:`noisy_gd`).

    Attributes
    ----------
    theta : numpy.ndarray, shape (d,)
        The output θ̂ (last iterate or weighted average).
    mu, llr, clipped : numpy.ndarray, shape (n,)
        Each record's Gaussian-DP parameter :math:`μ_i = \sqrt (Σ_t \|g_{i,t}\|^{2})/σ` along the run,
        realized transcript log-likelihood ratio :math:`Λ_i` and number of steps at which its gradient was
        clipped.
    sigma, rho : float
        Noise and the run's zCDP budget :math:`KC^{2}/(2σ^{2})`.
    settings : dict
        loss, lam, clip, steps, schedule, step_size, radius, seed.
    """

    theta: np.ndarray
    mu: np.ndarray
    llr: np.ndarray
    clipped: np.ndarray
    sigma: float
    rho: float
    settings: dict

    def __repr__(self):
        return (f"GDRun(d={self.theta.size}, n={self.mu.size}, sigma={self.sigma:.4g}, rho={self.rho:.4g}, "
                f"median mu={float(np.median(self.mu)):.4g})")

    def leaked(self, *, tau):
        """Which records' Λ exceeds τ."""
        tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
        return self.llr > tau

    def predicted_leak(self, *, tau):
        r"""Each record's leak probability :math:`\bar Φ(τ/μ_i - μ_i/2)` from its own :math:`μ_i` (individual accounting)."""
        return gdp_leak_probability(self.mu, tau=tau)


#: The range of the clipping bound C of a run: it keeps :math:`C^{2}`, :math:`σ^{2} = K C^{2}/(2ρ)` and the
#: squared clipped gradient norms in the doubles (at C = 1e-300 :math:`Λ_i = A_i/σ + S_i/(2σ^{2})` was 0/0).
CLIP_RANGE = (1e-100, 1e100)


def _check_penalty_step(schedule, step_size, lam):
    r"""Refuse ηλ > 2 for a constant step (:class:`Training`).

    The strongly convex schedule has :math:`η_t λ \le 2λ/(μ(t + 1)) \le 1`.
    """
    if schedule == "constant" and step_size * lam > 2.0:
        raise ValueError(f"step_size * lam must be at most 2 for clipped gradient descent to stay bounded "
                         f"(|1 - step_size * lam| <= 1); got step_size={step_size:g}, lam={lam:g}")


@dataclass(frozen=True)
class Training:
    r"""One training run of noisy gradient descent: its objective, clipping, steps and projection.

    The configuration that :func:`noisy_gd`, :func:`simulate_transcripts` and
    :func:`quadratic_expected_excess` share (paper 001's private GD, module docstring). The noise (σ, or the
    budget ρ of the run) and the start :math:`θ_0` are arguments of a run. Every value is checked here, once.

    Parameters
    ----------
    loss, lam
        The per-record loss ℓ (``"logistic"`` or ``"squared"``) and λ > 0 of the objective :func:`objective`.
    clip, steps
        Per-record gradient bound C in [1e-100, 1e100] (:data:`CLIP_RANGE`) and gradient steps K >= 1.
    schedule : {"constant", "strongly_convex"}
        Step sizes: ``"constant"``: :math:`η_t` = ``step_size``, the output is the last
        iterate; ``"strongly_convex"``: :math:`η_k = 2/(μ(k + 2))` at step k = 0..K−1, the
        output is the weighted average :math:`Σ_{k<K} 2(k + 1) θ_k/(K(K + 1))`
        (Lacoste-Julien et al. 2012, their :math:`x_t = θ_{t-1}`).
    step_size : float, optional
        η > 0 of the constant schedule (required there), with η λ <= 2 (beyond it the penalty term
        θ ← (1 − ηλ)θ expands while the clipped gradients stay bounded: the run diverges).
    radius : float, optional
        B > 0 of the projection (required by paper 001's bound); ``None``: no projection.
    strong_convexity : float, optional
        μ >= λ of the ``"strongly_convex"`` schedule (default λ).

    Examples
    --------
    >>> Training(loss="logistic", lam=1.0, clip=1.0, steps=20, step_size=0.02)
    Training(loss='logistic', lam=1.0, clip=1.0, steps=20, schedule='constant', step_size=0.02, radius=None, strong_convexity=None)
    """

    loss: str
    lam: float
    clip: float
    steps: int
    schedule: str = "constant"
    step_size: Any = None
    radius: Any = None
    strong_convexity: Any = None

    def __post_init__(self):
        loss = check_choice("loss", self.loss, LOSSES)
        lam = check_real("lam", self.lam, low=0, low_open=True, scalar=True)
        clip = check_real("clip", self.clip, low=CLIP_RANGE[0], high=CLIP_RANGE[1], scalar=True)
        steps = check_int("steps", self.steps, low=1)
        schedule = check_choice("schedule", self.schedule, SCHEDULES)
        step_size = self.step_size
        if schedule == "constant":
            if step_size is None:
                raise ValueError("step_size (eta > 0) must be given for schedule='constant'")
            step_size = check_real("step_size", step_size, low=0, low_open=True, scalar=True)
        radius = None if self.radius is None else check_real("radius", self.radius, low=0, low_open=True,
                                                               scalar=True)
        mu = None if self.strong_convexity is None else check_real("strong_convexity", self.strong_convexity,
                                                                   low=lam, scalar=True)
        _check_penalty_step(schedule, step_size, lam)
        for name, value in (("loss", loss), ("lam", lam), ("clip", clip), ("steps", steps), ("schedule", schedule),
                            ("step_size", step_size), ("radius", radius), ("strong_convexity", mu)):
            object.__setattr__(self, name, value)

    @property
    def mu(self) -> float:
        """μ of the strongly convex schedule: ``strong_convexity``, or λ when it is not given."""
        return self.lam if self.strong_convexity is None else self.strong_convexity

    def _etas(self) -> np.ndarray:
        r""":math:`η_0, \dots, η_{K-1}`: η every step (constant), or :math:`2/(μ(k + 2))` at step k (strongly convex)."""
        return _step_sizes(self.schedule, self.steps, self.step_size, self.mu)

    def _output_weights(self) -> np.ndarray:
        r"""Weights of :math:`θ_0, \dots, θ_K` in the output (the last iterate, or Lacoste-Julien et al.'s average)."""
        return _weights(self.schedule, self.steps)

    def _provenance(self) -> dict:
        """The run's provenance: loss, lam, clip, steps, schedule, step_size, radius."""
        return dict(loss=self.loss, lam=self.lam, clip=self.clip, steps=self.steps, schedule=self.schedule,
                    step_size=self.step_size, radius=self.radius)


def _check_training(training, name="training"):
    if not isinstance(training, Training):
        raise TypeError(f"{name} must be a perfpriv.gradient.Training (loss, lam, clip, steps, schedule, ...); "
                        f"got {training!r:.60}")
    return training


def noisy_gd(X, y, training, *, sigma=None, rho=None, theta0=None, seed=None):
    """Run noisy full-batch gradient descent once, with every record's privacy accounting.

    Parameters
    ----------
    X, y, training, seed
        A dataset and a seed, as in the module docstring, and a :class:`Training` run.
    sigma, rho : float, optional
        Noise σ >= 0 of each step (0: no privacy), or the run's zCDP budget ρ (σ from :func:`sigma_for_rho`;
        ``inf``: σ = 0); exactly one of them.
    theta0 : array_like, optional
        Start (default 0).

    Returns
    -------
    GDRun

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 3)); y = np.sign(X[:, 0] + 0.1)
    >>> training = Training(loss="logistic", lam=1.0, clip=1.0, steps=20, step_size=0.02)
    >>> run = noisy_gd(X, y, training, rho=1.0, seed=1)
    >>> round(run.rho, 6), bool(np.all(run.mu <= np.sqrt(2 * run.rho) + 1e-9))
    (1.0, True)
    """
    tr = _check_training(training)
    X, y = _check_xy(X, y, tr.loss)
    n, d = X.shape
    if (sigma is None) == (rho is None):
        raise ValueError("give exactly one of sigma (noise of a step, >= 0) and rho (zCDP budget of the run, > 0)")
    if sigma is None:
        sigma = sigma_for_rho(rho, steps=tr.steps, clip=tr.clip)
    sigma = check_real("sigma", sigma, low=0, scalar=True)
    theta0 = np.zeros(d) if theta0 is None else _theta(theta0, d, "theta0")
    check_array_size("the noise of the run (steps x d normals)", steps=tr.steps, d=d)
    rng = check_rng(seed)
    xi = rng.standard_normal((1, tr.steps, d))
    out, A, S, clipped = _gd(X[None], y[None], xi, np.array([sigma]), loss=tr.loss, lam=tr.lam, clip=tr.clip,
                             etas=tr._etas(), weights=tr._output_weights(), radius=tr.radius, theta0=theta0)
    rho_run = math.inf if sigma == 0 else zcdp_cost(tr.steps, clip=tr.clip, sigma=sigma)
    return GDRun(theta=out[0], mu=_mu_from(S, [sigma])[0], llr=_llr_from(A, S, [sigma])[0], clipped=clipped[0],
                 sigma=float(sigma), rho=float(rho_run), settings=dict(tr._provenance(), seed=seed))


# ---------------------------------------------- the quadratic case, exactly
def quadratic_expected_excess(X, y, training, *, sigma, theta0=None):
    r"""Exact :math:`\mathbb{E}[J(\hat θ)] - \min J` of noisy GD on the squared loss without clipping or projection.

    With :math:`H = X^\top X + λI` (eigenvalues :math:`h_k`), :math:`e_0 = θ_0 - θ^*` in its eigenbasis, the
    output weights :math:`w_t` and :math:`P_{a,t} = Π_{u=a}^{t-1}(1 - η_u h_k)` (chapter 09, with proof),

        :math:`\mathbb{E}[J(\hat θ)] - J(θ^*) = \tfrac12 Σ_k h_k (D_k^{2} + σ^{2} Σ_s c_{s,k}^{2})`,
        :math:`D_k = Σ_t w_t P_{0,t} e_{0,k}`, :math:`c_{s,k} = -η_s Σ_{t>s} w_t P_{s+1,t}`.

    Valid when no gradient is clipped and nothing is projected (check ``GDRun.clipped`` of a run of
    :func:`noisy_gd` with the same ``training``; the formula does not read C). A constant step must satisfy
    :math:`η \le 2/L`, :math:`L = h_{\max}` the smoothness of J (beyond it the top mode grows like
    :math:`|1 - η L|^t`: refused).

    Parameters
    ----------
    X, y, sigma, theta0
        As in :func:`noisy_gd`.
    training : Training
        A run of the squared loss without projection (``loss="squared"``, ``radius=None``).

    Returns
    -------
    float

    Examples
    --------
    >>> X = np.eye(2); y = np.array([1.0, 1.0])
    >>> one_step = Training(loss="squared", lam=1.0, clip=1.0, steps=1, step_size=0.5)
    >>> round(quadratic_expected_excess(X, y, one_step, sigma=0.0), 6)   # one exact step
    0.0
    """
    tr = _check_training(training)
    if tr.loss != "squared" or tr.radius is not None:
        raise ValueError(f"training must be a run of the squared loss without projection (loss='squared', "
                         f"radius=None) for the exact excess; got loss={tr.loss!r}, radius={tr.radius!r}")
    X, y = _check_xy(X, y, "squared")
    sigma = check_real("sigma", sigma, low=0, scalar=True)
    d = X.shape[1]
    theta0 = np.zeros(d) if theta0 is None else _theta(theta0, d, "theta0")
    return _quadratic_excess(X, y, tr.lam, sigma, tr.steps, tr.schedule, tr.step_size, tr.mu, theta0)


def _quadratic_excess(X, y, lam, sigma, steps, schedule, step_size, mu_sc, theta0):
    """:func:`quadratic_expected_excess` on checked values (its formula, and the rule η <= 2/L)."""
    d = X.shape[1]
    H = X.T @ X + lam * np.eye(d)
    h, V = np.linalg.eigh(H)
    if schedule == "constant" and step_size * h[-1] > 2.0:
        raise ValueError(f"step_size must be at most 2/L = {2.0 / h[-1]:.6g} (L = {h[-1]:.6g}, the largest eigenvalue "
                         f"of X^T X + lam I: the objective's smoothness); beyond it gradient descent diverges; "
                         f"got step_size={step_size:g}, lam={lam:g}")
    star = np.linalg.solve(H, X.T @ y)
    e0 = V.T @ (theta0 - star)
    etas = _step_sizes(schedule, steps, step_size, mu_sc)
    w = _weights(schedule, steps)
    factors = 1.0 - etas[:, None] * h[None, :]                  # (T, d): step u multiplies by 1 − η_u h
    # P[a, t] for a <= t as cumulative products: logs would fail for negative factors, so loop
    D = np.zeros(d)
    coef = np.zeros((steps, d))
    prod = np.ones(d)
    D += w[0] * e0
    for t in range(1, steps + 1):
        prod = prod * factors[t - 1]
        D += w[t] * prod * e0
    # c_s = −η_s Σ_{t>s} w_t Π_{u=s+1}^{t−1} f_u  (noise of step s enters after step s: index s = 0..T−1)
    tail = np.zeros(d)                                          # Σ_{t>s} w_t Π_{u=s+1}^{t−1} f_u, built backwards
    for s in range(steps - 1, -1, -1):
        tail = w[s + 1] + (factors[s + 1] * tail if s + 1 < steps else 0.0)
        coef[s] = -etas[s] * tail
    with np.errstate(over="ignore"):        # (σ c)² beyond the doubles (σ near 1e300): inf, the true limit
        return float(0.5 * np.sum(h * (D ** 2 + np.sum((sigma * coef) ** 2, axis=0))))


# -------------------------------------------- the transcript's likelihood ratio
@dataclass(frozen=True, eq=False)
class TranscriptCheck:
    """Λ of one record over many runs on the same data (:func:`simulate_transcripts`).

    Attributes
    ----------
    llr, mu : numpy.ndarray, shape (runs,)
        The record's realized transcript log-likelihood ratio Λ and its μ in each run.
    clipped_fraction : float
        Fraction of (run, step) pairs at which the record's gradient was clipped.
    index, runs, sigma, rho, seed, settings
        Provenance.
    """

    llr: np.ndarray
    mu: np.ndarray
    clipped_fraction: float
    index: int
    runs: int
    sigma: float
    rho: float
    seed: Any
    settings: dict

    def __repr__(self):
        return (f"TranscriptCheck(index={self.index}, runs={self.runs}, rho={self.rho:.4g}, "
                f"clipped_fraction={self.clipped_fraction:.3g})")

    def leak_frequency(self, *, tau):
        """Fraction of runs with Λ > τ and its binomial standard error."""
        tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
        f = float(np.mean(self.llr > tau))
        return f, math.sqrt(max(f * (1 - f), 1e-300) / self.runs)

    def predicted(self, *, tau):
        """Mean over runs of Φ̄(τ/μ − μ/2) with each run's μ (the individual-accounting prediction)."""
        return float(np.mean(gdp_leak_probability(self.mu, tau=tau)))

    def standardized(self):
        """:math:`(Λ - μ^{2}/2)/μ` of each run: standard normal when the accounting is exact."""
        return (self.llr - 0.5 * self.mu ** 2) / self.mu


def simulate_transcripts(X, y, training, *, index, runs, rho, seed=None):
    """Rerun noisy GD ``runs`` times on the same data and record one record's transcript Λ.

    Each run draws fresh noise; comparing the law of Λ with :math:`N(μ^{2}/2, μ^{2})` checks the Gaussian
    accounting of the module docstring (exact when the record's gradient norms do not depend on the noise).

    Parameters
    ----------
    X, y, training, seed
        As in :func:`noisy_gd`.
    index, runs, rho
        The target record, the number of runs and the finite zCDP budget ρ > 0 of a run.

    Returns
    -------
    TranscriptCheck

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((30, 2)); y = np.sign(X[:, 0])
    >>> training = Training(loss="logistic", lam=1.0, clip=0.05, steps=10, step_size=0.05)
    >>> chk = simulate_transcripts(X, y, training, index=0, runs=200, rho=2.0, seed=3)
    >>> chk.clipped_fraction
    1.0
    """
    tr = _check_training(training)
    X, y = _check_xy(X, y, tr.loss)
    n, d = X.shape
    index = check_int("index", index, low=0, high=n - 1)
    runs = check_int("runs", runs, low=2)
    check_array_size("the noise of the runs (runs x steps x d normals)", runs=runs, steps=tr.steps, d=d)
    check_array_size("the runs' records (runs x n values)", runs=runs, n=n)
    rho = check_real("rho", rho, low=0, low_open=True, scalar=True)
    sigma = float(sigma_for_rho(rho, steps=tr.steps, clip=tr.clip))
    rng = check_rng(seed)
    xi = rng.standard_normal((runs, tr.steps, d))
    Xb = np.broadcast_to(X, (runs, n, d))
    yb = np.broadcast_to(y, (runs, n))
    _, A, S, clipped = _gd(Xb, yb, xi, np.full(runs, sigma), loss=tr.loss, lam=tr.lam, clip=tr.clip,
                           etas=tr._etas(), weights=tr._output_weights(), radius=tr.radius, theta0=np.zeros(d))
    llr = _llr_from(A, S, np.full(runs, sigma))[:, index]
    mu = _mu_from(S, np.full(runs, sigma))[:, index]
    return TranscriptCheck(llr=llr, mu=mu, clipped_fraction=float(clipped[:, index].sum() / (runs * tr.steps)),
                           index=index, runs=runs, sigma=sigma, rho=rho, seed=seed, settings=tr._provenance())


# -------------------------------------------------------------- mechanism
@dataclass(frozen=True)
class GDData:
    r"""The data model of :class:`PrivateGD`: the records a round trains on (:meth:`PrivateGD.sample_data`).

    Features :math:`x \sim \mathcal{N}(0, I_d)` clipped to the ℓ2 ball of radius :math:`B_x` = ``x_bound``,
    θ of norm ``theta_norm`` in a fresh uniform direction every round, labels :math:`y = ±1` with
    :math:`P(y = 1 \mid x) = σ(x^\top θ)` (``loss="logistic"``) or :math:`y = x^\top θ + \mathcal{N}(0, s^{2})`,
    s = ``noise_sd`` (``"squared"``; the logistic loss does not read it).

    Parameters
    ----------
    d, x_bound
        Dimension d >= 1 and :math:`B_x` in (0, 1e50].
    theta_norm, noise_sd : float
        :math:`\|θ\| \ge 0` and s >= 0.

    Examples
    --------
    >>> GDData(d=3)
    GDData(d=3, x_bound=4.0, theta_norm=2.0, noise_sd=1.0)
    """

    d: int = 5
    x_bound: float = 4.0
    theta_norm: float = 2.0
    noise_sd: float = 1.0

    def __post_init__(self):
        d = check_int("d", self.d, low=1)
        x_bound = check_real("x_bound", self.x_bound, low=0, low_open=True, high=1e50, scalar=True)
        theta_norm = check_real("theta_norm", self.theta_norm, low=0, scalar=True)
        noise_sd = check_real("noise_sd", self.noise_sd, low=0, scalar=True)
        for name, value in (("d", d), ("x_bound", x_bound), ("theta_norm", theta_norm), ("noise_sd", noise_sd)):
            object.__setattr__(self, name, value)


#: The table of private gradient descent when none is given: 8000 records and 128 runs per point, seed 0.
_DEFAULT_TABLE = Tabulation(records=8000, datasets=128, seed=0)


class PrivateGD(TabulatedMechanism):
    r"""Retraining by private gradient descent, with the transcript membership test, for the engine.

    A round with N users draws a fresh dataset (:meth:`sample_data`), runs ``steps`` noisy GD steps from 0
    with the constant step :math:`η_N` = ``step_size``/(N + ``step_offset``) and noise
    :math:`σ = C\sqrt{K/(2ρ)}`, counts the records whose transcript Λ exceeds τ, and scores
    :math:`\|\hat θ - θ\|^{2}`. Records, θ and the noise of a (cell, trial, round) come from its keyed
    streams, shared by all ρ. The step depends on N, so the zCDP guarantee is that of a fixed schedule given N
    (:func:`zcdp_cost`).

    The step must contract: a noiseless step's Jacobian has eigenvalues :math:`1 - ηh`,
    :math:`h ∈ [λ, λ + κ λ_{\max}(X^\top X)]` (κ = 1/4 for the logistic loss, 1 for the squared loss), hence
    the constructor's rule at N = 1, :math:`η_1(λ + κB_x^{2}) < 2`; for N >= 2 the data model's
    :math:`λ_{\max}(X^\top X) \approx (\sqrt N + \sqrt d)^{2}` stays far below 4(N + 4) (chapter 09).

    Parameters
    ----------
    rho : float, 1-D array_like or perfpriv.engine.Schedule
        zCDP budget(s) of a training run, ρ > 0 (``inf``: no noise, every record with a non-zero gradient
        leaks).
    tau : float
        τ > 0.
    data : GDData, optional
        The data model (:meth:`sample_data`): d, :math:`B_x`, :math:`\|θ\|` and the label noise (default
        ``GDData()``: d = 5, :math:`B_x = 4`, :math:`\|θ\| = 2`, s = 1).
    loss, lam, clip, steps
        The run as in :class:`Training` (``steps``: gradient steps per round).
    step_size, step_offset : float
        The step is :math:`η_N` = ``step_size / (N + step_offset)`` (the sum objective's curvature grows
        like N); ``step_size`` > 0, ``step_offset`` >= 0, and the step at N = 1 must contract (above).
    table : Tabulation, optional
        Monte Carlo of the mean field, one run per dataset: p is the frequency of :math:`Λ_i > τ`, e the
        mean of :math:`\|\hat θ - θ\|^{2}` (default ``Tabulation(records=8000, datasets=128, seed=0)``).

    Examples
    --------
    >>> m = PrivateGD(1.0, tau=0.02)
    >>> round(float(m.sigma(1.0)), 4)     # C √(K/(2ρ)) with C = 2, K = 20
    6.3246
    """

    name = "private_gd"
    level_name = "rho"
    table_n_max = 4096
    #: the remove-one transcript of a lone user is GD on no data with the same noise: well defined
    lone_user_leaks = False

    def __init__(self, rho, *, tau, data=None, loss="logistic", lam=1.0, clip=2.0, steps=20, step_size=2.0,
                 step_offset=5.0, table=None):
        self.levels = engine.make_levels(rho, "rho", low=0, low_open=True, allow_inf=True)
        self.tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
        self.data = check_instance("data", data, GDData, "perfpriv.gradient.GDData (d, x_bound, theta_norm, noise_sd)",
                                   default=GDData())
        self.loss = check_choice("loss", loss, LOSSES)
        self.lam = check_real("lam", lam, low=0, low_open=True, scalar=True)
        self.clip = check_real("clip", clip, low=CLIP_RANGE[0], high=CLIP_RANGE[1], scalar=True)
        self.steps = check_int("steps", steps, low=1)
        self.step_size = check_real("step_size", step_size, low=0, low_open=True, scalar=True)
        self.step_offset = check_real("step_offset", step_offset, low=0, scalar=True)
        kappa = 0.25 if self.loss == "logistic" else 1.0
        eta1 = self.step_size / (1.0 + self.step_offset)
        if not eta1 * (self.lam + kappa * self.x_bound ** 2) < 2.0:
            raise ValueError(f"step_offset must make the step at N = 1 contract, step_size/(1 + step_offset) * "
                             f"(lam + {kappa:g} x_bound^2) < 2; got step_size={self.step_size:g}, "
                             f"step_offset={self.step_offset:g}, lam={self.lam:g}, data.x_bound={self.x_bound:g}")
        self.table = check_instance("table", table, Tabulation,
                                    "perfpriv.gradient.Tabulation (records, datasets, seed)", default=_DEFAULT_TABLE)
        check_array_size("a dataset of the table (table.records x (d + 1) normals)",
                         **{"table.records": self.table.records, "data.d": self.d + 1})

    # ------------------------------------------------- data and table
    d = property(lambda self: self.data.d, doc="Dimension d (``data.d``).")
    x_bound = property(lambda self: self.data.x_bound, doc=":math:`B_x` (``data.x_bound``).")
    theta_norm = property(lambda self: self.data.theta_norm, doc=":math:`\\|θ\\|` (``data.theta_norm``).")
    noise_sd = property(lambda self: self.data.noise_sd, doc="Label noise s (``data.noise_sd``).")
    table_records = property(lambda self: self.table.records, doc="``table.records``.")
    table_runs = property(lambda self: self.table.datasets, doc="Runs per table point (``table.datasets``).")
    table_seed = property(lambda self: self.table.seed, doc="``table.seed``.")

    def __repr__(self):
        g = self.levels.describe()
        text = f"{g:g}" if isinstance(g, float) else f"<{'schedule' if self.levels.per_round else 'grid'} " \
                                                      f"{np.shape(g)}>"
        return f"PrivateGD(rho={text}, tau={self.tau:g}, d={self.d}, loss={self.loss!r}, steps={self.steps})"

    def options(self):
        """The settings as keywords: ``PrivateGD(levels, **m.options())`` is ``m`` at other levels."""
        return dict(tau=self.tau, data=self.data, loss=self.loss, lam=self.lam, clip=self.clip, steps=self.steps,
                    step_size=self.step_size, step_offset=self.step_offset, table=self.table)

    def eta(self, n):
        """Step size :math:`η_N` = step_size/(N + step_offset) of a round with N users.

        Examples
        --------
        >>> [round(PrivateGD(1.0, tau=0.02).eta(n), 4) for n in (1, 2, 200)]
        [0.3333, 0.2857, 0.0098]
        """
        out = self.step_size / (check_population("n", n) + self.step_offset)
        return float(out) if out.ndim == 0 else out

    def sigma(self, rho):
        r"""Noise :math:`σ = C\sqrt{K/(2ρ)}` of a step, ρ > 0 (0 for ρ = inf)."""
        rho = np.asarray(check_real("rho", rho, low=0, low_open=True, allow_inf=True), float)
        return self.clip * np.sqrt(self.steps / (2.0 * rho))

    def sample_data(self, n, *, seed=None):
        r"""Draw one round's dataset of this data model (:class:`GDData`): what a round of :meth:`draw_round` trains on.

        Parameters
        ----------
        n : int
            Number of records n >= 1.
        seed : None, int, SeedSequence or numpy.random.Generator
            The records' standard normals, shape (n, d + 1), are drawn first, then θ's direction (d).

        Returns
        -------
        X, y, theta : numpy.ndarray, shapes (n, d), (n,) and (d,)

        Examples
        --------
        >>> X, y, theta = PrivateGD(1.0, tau=0.02, data=GDData(d=3)).sample_data(50, seed=0)
        >>> X.shape, round(float(np.linalg.norm(theta)), 12), sorted(set(y.tolist()))
        ((50, 3), 2.0, [-1.0, 1.0])
        """
        n = check_int("n", n, low=1)
        check_allocation(f"one dataset (n x (d + 1) normals, d = {self.d})", float(n) * (self.d + 1), name="n")
        rng = check_rng(seed)
        G = rng.standard_normal((n, self.d + 1))
        return self._data(G, rng.standard_normal(self.d))

    def _data(self, G, direction):
        """Clipped features, θ and labels from standard normals (…, n, d + 1) and a direction (…, d)."""
        d = self.d
        theta = self.theta_norm * direction / np.linalg.norm(direction, axis=-1, keepdims=True)
        X = clip_rows(G[..., :d], self.x_bound)
        z = np.einsum("...ij,...j->...i", X, theta)
        if self.loss == "logistic":
            y = np.where(special.ndtr(G[..., d]) < special.expit(z), 1.0, -1.0)
        else:
            y = z + self.noise_sd * G[..., d]
        return X, y, theta

    def _runs(self, X, y, xi, rhos, n):
        """Noisy GD for a batch: X (B, n, d), y (B, n), xi (B, T, d), rhos (B,)."""
        sig = self.sigma(rhos)
        etas = np.full(self.steps, self.eta(n))
        return _gd(X, y, xi, sig, loss=self.loss, lam=self.lam, clip=self.clip, etas=etas,
                   weights=_weights("constant", self.steps), radius=None, theta0=np.zeros(self.d)), sig

    def draw_round(self, n, level, keys, live, t, need_error=True):
        shape, nn, rr, groups = round_groups(n, level, keys, live)
        err = np.zeros(nn.size)
        leaked = np.zeros(nn.size, dtype=np.int64)
        d = self.d
        for key, pairs in groups:
            G = key_normals(key, "records", int(nn[pairs].max()), d + 1)
            X, y, theta = self._data(G, key.child("theta").normal(d))
            xi = key.child("noise").normal(self.steps * d).reshape(self.steps, d)
            for N in np.unique(nn[pairs]):
                sel = pairs[nn[pairs] == N]
                k = sel.size
                (out, A, S, _), sig = self._runs(np.broadcast_to(X[:N], (k, N, d)), np.broadcast_to(y[:N], (k, N)),
                                                 np.broadcast_to(xi, (k, self.steps, d)), rr[sel], N)
                err[sel] = np.sum((out - theta) ** 2, axis=1)
                leaked[sel] = np.count_nonzero(_llr_from(A, S, sig) > self.tau, axis=1)
        return engine.RoundOutcome(err.reshape(shape), leaked.reshape(shape))

    def agent_round(self, n, level, rng, t=1, state=None):
        r"""One retraining record by record (:meth:`perfpriv.engine.Mechanism.agent_round`).

        A Python loop over the records' clipped gradients; each record's Λ is the sum over steps of
        :math:`\log N(ĝ_t; S_t, σ^{2}I) - \log N(ĝ_t; S_t - g_{i,t}, σ^{2}I)`. The budget must be finite
        (the densities of a noiseless step are degenerate).
        """
        n = check_int("n", n, low=1)
        rho = float(check_real("rho", level, low=0, low_open=True, allow_inf=True, scalar=True))
        if not math.isfinite(rho):
            raise ValueError("rho: the agent-by-agent reference needs a finite rho (the densities of a noiseless "
                             "step are degenerate)")
        sigma = float(self.sigma(rho))
        d = self.d
        direction = rng.standard_normal(d)
        theta_true = self.theta_norm * direction / np.linalg.norm(direction)
        records = []
        for _ in range(n):
            x = rng.standard_normal(d)
            norm = np.linalg.norm(x)
            if norm > self.x_bound:
                x = x * (self.x_bound / norm)
            if self.loss == "logistic":
                label = 1.0 if rng.random() < 1.0 / (1.0 + math.exp(-float(x @ theta_true))) else -1.0
            else:
                label = float(x @ theta_true) + self.noise_sd * rng.standard_normal()
            records.append((x, label))
        theta = np.zeros(d)
        llr = np.zeros(n)
        for _ in range(self.steps):
            grads = []
            for x, label in records:
                z = float(x @ theta)
                # −y/(1 + e^{yz}) as −y σ(−yz): e^{yz} overflows at the margins of a huge noise (ρ -> 0)
                slope = -label * float(special.expit(-label * z)) if self.loss == "logistic" else z - label
                g = slope * x
                norm = np.linalg.norm(g)
                if norm > self.clip:
                    g = g * (self.clip / norm)
                grads.append(g)
            total = np.sum(grads, axis=0)
            released = total + sigma * rng.standard_normal(d)
            out = total - np.array(grads)
            llr += log_normal_density(released, total, sigma ** 2) - log_normal_density(released, out, sigma ** 2)
            theta = theta - (self.step_size / (n + self.step_offset)) * (released + self.lam * theta)
        return engine.AgentRound(llr > self.tau, float(np.sum((theta - theta_true) ** 2)))

    #: Records per batch of the table's Monte Carlo (memory bound).
    _BATCH = 200_000

    def _table_points(self, n, levels):
        """Monte Carlo at size n for all ``levels`` at once: the same datasets and noise for every ρ."""
        rng = keyed.as_generator(keyed.root_key(self.table_seed, name="table_seed").child("gd", n))
        runs = max(self.table_runs, math.ceil(self.table_records / n))
        L = len(levels)
        probs = [[] for _ in range(L)]
        errs = [[] for _ in range(L)]
        done = 0
        d = self.d
        while done < runs:
            k = min(runs - done, max(1, self._BATCH // (n * L)))
            X, y, theta = self._data(rng.standard_normal((k, n, d + 1)), rng.standard_normal((k, d)))
            xi = rng.standard_normal((k, self.steps, d))
            rep = lambda a: np.repeat(a, L, axis=0)  # noqa: E731  (run j, level l) at row j*L + l
            (out, A, S, _), sig = self._runs(rep(X), rep(y), rep(xi), np.tile(np.asarray(levels, float), k), n)
            leak = (_llr_from(A, S, sig) > self.tau).reshape(k, L, n)
            err = np.sum((out - rep(theta)) ** 2, axis=1).reshape(k, L)
            for l in range(L):
                probs[l].append(leak[:, l].reshape(-1).astype(float))
                errs[l].append(err[:, l])
            done += k
        return [(float(np.mean(np.concatenate(probs[l]))), float(np.mean(np.concatenate(errs[l]))))
                for l in range(L)]


# ------------------------------------------------------------------ experiments
@dataclass(frozen=True)
class UtilityData:
    r"""The synthetic dataset of :func:`utility_check`: n records in d dimensions, features and label noise.

    Features :math:`x \sim \mathcal{N}(0, I_d)` clipped to the ball of radius :math:`B_x` = ``x_bound``;
    labels :math:`y = x^\top θ + \mathcal{N}(0, s^{2})`, s = ``noise_sd``, :math:`θ = 1/\sqrt d`
    (squared loss), or logistic labels :math:`P(y = 1 \mid x) = σ(x^\top θ)` with
    :math:`θ = 2ξ/\sqrt d`, :math:`ξ \sim \mathcal{N}(0, I_d)` (logistic loss, which does not read
    ``noise_sd``). The records are drawn by :func:`utility_check` from its seed.

    Parameters
    ----------
    n, d : int
        Records n >= 1 and dimension d >= 1.
    x_bound, noise_sd : float
        :math:`B_x` in (0, 1e50] and s in [0, 1e50] (the excess grows like :math:`B_x^{2}` and :math:`s^{2}`,
        and its squared spread over the runs must stay finite).

    Examples
    --------
    >>> UtilityData(n=100, d=3)
    UtilityData(n=100, d=3, x_bound=2.0, noise_sd=0.5)
    """

    n: int = 100
    d: int = 3
    x_bound: float = 2.0
    noise_sd: float = 0.5

    def __post_init__(self):
        n = check_int("n", self.n, low=1)
        d = check_int("d", self.d, low=1)
        x_bound = check_real("x_bound", self.x_bound, low=0, low_open=True, high=1e50, scalar=True)
        noise_sd = check_real("noise_sd", self.noise_sd, low=0, high=1e50, scalar=True)
        check_array_size("the data (n x d normals)", n=n, d=d)
        check_allocation("the normal equations (d x d values)", float(d) ** 2, name="d")
        for name, value in (("n", n), ("d", d), ("x_bound", x_bound), ("noise_sd", noise_sd)):
            object.__setattr__(self, name, value)


@dataclass(frozen=True, eq=False)
class UtilityCheck:
    """Simulated excess objective of private GD against ρ, next to the exact value and the bounds.

    Attributes
    ----------
    rho : numpy.ndarray
    simulated, se : numpy.ndarray
        Mean of J(θ̂) − min J over the runs and its standard error.
    exact : numpy.ndarray or None
        :func:`quadratic_expected_excess` (squared loss, constant steps, no projection).
    ljsb : numpy.ndarray or None
        The SGD bound :math:`2G^{2}/(μ(K + 1))` (strongly convex schedule with projection).
    bound : numpy.ndarray or None
        Paper 001's bound :func:`utility_bound` (idem).
    clipped_fraction : numpy.ndarray
        Fraction of (run, step, record) gradients that were clipped (0: the runs are plain noisy GD).
    n, d, loss, lam, clip, steps, schedule, radius, strong_convexity, runs, seed
        Provenance.
    """

    rho: np.ndarray
    simulated: np.ndarray
    se: np.ndarray
    exact: Any
    ljsb: Any
    bound: Any
    clipped_fraction: np.ndarray
    n: int
    d: int
    loss: str
    lam: float
    clip: float
    steps: int
    schedule: str
    radius: Any
    strong_convexity: float
    runs: int
    seed: Any

    def __repr__(self):
        return (f"UtilityCheck(loss={self.loss!r}, n={self.n}, d={self.d}, steps={self.steps}, "
                f"rho={np.round(self.rho, 4).tolist()}, runs={self.runs})")


def utility_check(rhos, data=UtilityData(), *, loss="squared", lam=1.0, steps=50, runs=500, radius=None, seed=0):
    r"""Simulate private GD at several budgets and compare with the exact excess or paper 001's bound.

    On the data of :class:`UtilityData`. ``loss="squared"``: constant step :math:`1/λ_{\max}(H)`, no
    projection, clipping at :math:`C = 4 B_x` (never reached in practice: the runs are plain noisy GD, which
    ``clipped_fraction`` shows), and the exact excess :func:`quadratic_expected_excess`. ``loss="logistic"``:
    :math:`C = B_x` (the Lipschitz constant: clipping never binds), projection on the ball of radius
    ``radius`` and the strongly convex schedule with μ = λ -- the setting of :func:`utility_bound`, which is
    reported with the SGD bound it rests on.

    Parameters
    ----------
    rhos : 1-D array_like
        zCDP budgets of a run, at least 1e-100 (:math:`σ = C\sqrt{K/(2ρ)}` and the runs' squared errors stay finite).
    data, loss, lam, steps, runs
        The dataset (:class:`UtilityData`), the loss ℓ, λ, the gradient steps K and the runs per budget.
    radius : float, optional
        B (logistic; default 2).

    Returns
    -------
    UtilityCheck

    Examples
    --------
    >>> c = utility_check([1.0, 100.0], runs=50, seed=0)
    >>> c.exact.shape, bool(np.all(c.clipped_fraction == 0))
    ((2,), True)
    """
    rhos = np.atleast_1d(np.asarray(check_real("rhos", rhos, low=1e-100), float))
    if not isinstance(data, UtilityData):
        raise TypeError(f"data must be a perfpriv.gradient.UtilityData (n, d, x_bound, noise_sd); got {data!r:.60}")
    loss = check_choice("loss", loss, LOSSES)
    n, d, x_bound, noise_sd = data.n, data.d, data.x_bound, data.noise_sd
    lam = check_real("lam", lam, low=0, low_open=True, scalar=True)
    steps = check_int("steps", steps, low=1)
    runs = check_int("runs", runs, low=2)
    # checked whichever loss reads it (the squared loss runs unprojected)
    radius = None if radius is None else check_real("radius", radius, low=0, low_open=True, scalar=True)
    check_array_size("the noise of the runs (runs x steps x d normals)", runs=runs, steps=steps, d=d)
    check_array_size("the runs' data (runs x n x d values)", runs=runs, n=n, d=d)
    rng = check_rng(seed)
    X = clip_rows(rng.standard_normal((n, d)), x_bound)
    if loss == "squared":
        y = X @ (np.ones(d) / math.sqrt(d)) + noise_sd * rng.standard_normal(n)
        C = 4.0 * x_bound
        schedule, radius_ = "constant", None
        H = X.T @ X + lam * np.eye(d)
        step_size = 1.0 / np.linalg.eigvalsh(H)[-1]
        mu_sc = lam
    else:
        theta = 2.0 * rng.standard_normal(d) / math.sqrt(d)
        y = np.where(rng.random(n) < special.expit(X @ theta), 1.0, -1.0)
        C = x_bound
        schedule, step_size = "strongly_convex", None
        radius_ = 2.0 if radius is None else radius
        mu_sc = lam
    star = _minimize(X, y, loss, lam, radius_)
    J_star = float(_objective(star, X, y, loss, lam))
    etas = _step_sizes(schedule, steps, step_size, mu_sc)
    weights = _weights(schedule, steps)
    sim, se, clipped_fraction = [], [], []
    for rho in rhos:
        sigma = float(C * math.sqrt(steps / (2.0 * rho)))
        xi = rng.standard_normal((runs, steps, d))
        out, _, _, clipped = _gd(np.broadcast_to(X, (runs, n, d)), np.broadcast_to(y, (runs, n)), xi,
                                 np.full(runs, sigma), loss=loss, lam=lam, clip=C, etas=etas, weights=weights,
                                 radius=radius_, theta0=np.zeros(d))
        excess = np.array([_objective(th, X, y, loss, lam) for th in out]) - J_star
        sim.append(excess.mean())
        se.append(excess.std(ddof=1) / math.sqrt(runs))
        clipped_fraction.append(clipped.sum() / (runs * steps * n))
    exact = ljsb = bound = None
    if loss == "squared":
        exact = np.array([_quadratic_excess(X, y, lam, float(C * math.sqrt(steps / (2 * rho))), steps, "constant",
                                            float(step_size), lam, np.zeros(d)) for rho in rhos])
    else:
        sigma2 = C ** 2 * steps / (2.0 * rhos)
        ljsb = 2.0 * ((n * C + lam * radius_) ** 2 + d * sigma2) / (mu_sc * (steps + 1.0))
        bound = np.asarray(utility_bound(n, lipschitz=C, lam=lam, radius=radius_, d=d, rho=rhos, steps=steps), float)
    return UtilityCheck(rho=rhos, simulated=np.array(sim), se=np.array(se), exact=exact, ljsb=ljsb, bound=bound,
                        clipped_fraction=np.array(clipped_fraction), n=n, d=d, loss=loss, lam=lam, clip=C, steps=steps,
                        schedule=schedule, radius=radius_, strong_convexity=mu_sc, runs=runs, seed=seed)


@dataclass(frozen=True, eq=False)
class LongRunUtility:
    """Cumulative error of retraining by private GD against ρ, for several user behaviours.

    Attributes
    ----------
    rho : numpy.ndarray
    behaviours : list of (q, r)
    mean_field : numpy.ndarray, shape (len(behaviours), len(rho))
        :math:`Σ_t e(N_{t-1}, ρ)` along the mean-field path.
    population : numpy.ndarray, shape (len(behaviours), len(rho), T + 1)
        The mean-field populations.
    simulated, se : numpy.ndarray or None
        Mean cumulative error over ``trials`` simulated runs and its standard error.
    T, n0, trials, cap, seed, mechanism
        Provenance.
    """

    rho: np.ndarray
    behaviours: list
    mean_field: np.ndarray
    population: np.ndarray
    simulated: Any
    se: Any
    T: int
    n0: int
    trials: int
    cap: Any
    seed: Any
    mechanism: Any

    def __repr__(self):
        return (f"LongRunUtility(rho={len(self.rho)} values, behaviours={self.behaviours}, T={self.T}, n0={self.n0}, "
                f"trials={self.trials})")

    @property
    def best_mean_field(self) -> np.ndarray:
        """ρ minimizing the mean-field cumulative error, per behaviour."""
        return self.rho[np.argmin(self.mean_field, axis=1)]

    @property
    def best_simulated(self) -> np.ndarray:
        """ρ minimizing the simulated mean cumulative error, per behaviour."""
        if self.simulated is None:
            raise AttributeError("no simulation in this result (trials=0)")
        return self.rho[np.argmin(self.simulated, axis=1)]


def long_run_utility(mechanism, users, *, T, n0, trials=0, policy=None, seed=None):
    r"""Does a finite budget maximize the long-run utility of retraining? Mean field and simulation.

    For every cell (q, r) of ``users`` and every ρ of ``mechanism``, the cumulative error
    :math:`Σ_t \|\hat θ_t - θ_t\|^{2}` of T retraining rounds with :class:`PrivateGD`.

    Parameters
    ----------
    mechanism : PrivateGD
        Its levels are the budgets ρ compared: a number or a 1-D grid (``inf``: no noise).
    users : perfpriv.behaviour.Memoryless
        One behaviour per cell: numbers or 1-D arrays of q and r (q = r = 0: no participation feedback,
        the population stays at n0).
    T, n0, trials, seed
        As in :func:`perfpriv.engine.simulate`; ``trials=0``: the mean field only.
    policy : perfpriv.engine.Policy, optional
        The simulation's population policy (unset fields: the mechanism's preset, cap 20000); its cap
        and floor also bound the mean field.

    Returns
    -------
    LongRunUtility

    Examples
    --------
    >>> from perfpriv import engine
    >>> from perfpriv.behaviour import Memoryless
    >>> res = long_run_utility(PrivateGD([0.1, 1.0, np.inf], tau=0.02), Memoryless(q=0.0, r=0.0), T=3, n0=50,
    ...                        policy=engine.Policy(cap=200))
    >>> res.mean_field.shape
    (1, 3)
    """
    rhos = engine.level_grid(mechanism, kind=PrivateGD)
    if not isinstance(users, Memoryless):
        raise TypeError(f"users must be a perfpriv.behaviour.Memoryless; got {type(users).__name__}")
    if len(users.shape) > 1:
        raise ValueError(f"users must have at most one axis of cells (one per behaviour); got shape {users.shape}")
    q, r = (np.atleast_1d(a) for a in users.cell_coordinates())
    pairs = [(float(a), float(b)) for a, b in zip(q, r)]
    trials = check_int("trials", trials, low=0)
    check_seed(seed)
    resolved = engine.check_policy(policy).resolve(mechanism, "paper", n0=check_int("n0", n0, low=1))
    rule = Memoryless(q=q, r=r, rule=users.rule)
    mf = engine.mean_field(mechanism, rule, T=T, n0=n0, cap=resolved.cap, floor=resolved.floor)
    sim = se = None
    if trials:
        run = engine.simulate(mechanism, rule, T=T, n0=n0, trials=trials, policy=resolved, seed=seed)
        total = run.cumulative_error
        sim = total.mean(axis=-1)
        se = standard_error(total, axis=-1)
    return LongRunUtility(rho=rhos, behaviours=pairs, mean_field=np.asarray(mf.cumulative_error, float),
                          population=mf.population, simulated=sim, se=se, T=T, n0=n0, trials=trials,
                          cap=resolved.cap, seed=seed, mechanism=mechanism)
