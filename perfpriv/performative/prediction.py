r"""Performative prediction in its simplest setting: a quadratic loss and a location family.

A *distribution map* D(θ) says how the data respond to the deployed model θ.
Here the data are a Gaussian location family whose mean moves linearly with
the model, and the loss is a quadratic in (θ, z):

    :math:`z \sim D(θ) = \mathcal{N}(m + Aθ, Σ)`,        :math:`ℓ(θ; z) = ½ θ^\top Hθ - θ^\top Bz + ½ z^\top Cz`,

with θ in :math:`\mathbb{R}^p`, z in :math:`\mathbb{R}^k`, H symmetric positive definite. Two risks matter
(Perdomo et al. 2020):

* the *decoupled risk* :math:`\mathrm{DR}(\theta; \theta') = \mathbb{E}_{z \sim D(\theta')}\, \ell(\theta; z)`: the loss of θ on the
  data that the deployed θ' induced -- what retraining minimizes;
* the *performative risk* :math:`\mathrm{PR}(θ) = \mathrm{DR}(θ; θ)`: the loss of θ on the data it
  induces itself -- what the platform actually suffers.

A *performatively stable* point is a fixed point of retraining,
:math:`θ_{\mathrm{PS}} = \arg\min_θ \mathrm{DR}(θ; θ_{\mathrm{PS}})`; a *performatively optimal* point minimizes
PR. Repeated risk minimization (RRM) iterates the best response
:math:`G(θ') = \arg\min_θ \mathrm{DR}(θ; θ')`; repeated gradient descent (RGD) takes one
gradient step on :math:`\mathrm{DR}(\cdot; θ_t)` per deployment. Everything here is in closed
form (:class:`PerformativeProblem`), which is what makes the class useful as a reference.

References
----------
J. C. Perdomo, T. Zrnic, C. Mendler-Dünner, M. Hardt (2020), Performative
prediction, ICML (Theorem 3.5: RRM contracts at rate εβ/μ; the paper writes γ for μ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .. import keyed
from .._learning import check_seed
from .._validate import check_array_size, check_flag, check_int, check_real

__all__ = ["PerformativeProblem", "PerformativePath", "repeated_risk_minimization",
           "repeated_gradient_descent"]


def _matrix(name, value, rows=None, cols=None):
    """A real 2-D matrix (a number is a 1x1 matrix), optionally of a given shape."""
    arr = np.asarray(check_real(name, value), dtype=float)
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a number or a 2-D matrix; got shape {arr.shape}")
    want = (arr.shape[0] if rows is None else rows, arr.shape[1] if cols is None else cols)
    if arr.shape != want:
        raise ValueError(f"{name} must have shape {want}; got {arr.shape}")
    return arr


def _spectral_radius(M) -> float:
    return float(np.max(np.abs(np.linalg.eigvals(M))))


def _norm2(M) -> float:
    return float(np.linalg.norm(M, 2))


class PerformativeProblem:
    r"""A quadratic loss with a Gaussian location distribution map (closed forms throughout).

    Parameters
    ----------
    H : array_like, shape (p, p)
        Curvature of the loss in θ, symmetric positive definite (:attr:`strong_convexity`).
    B : array_like, shape (p, k)
        Coupling of θ and z: :math:`∇_θ ℓ(θ; z) = Hθ - Bz`.
    C : array_like, shape (k, k)
        Symmetric; :math:`½z^\top Cz` is the part of the loss that depends on the data
        only (it does not move the best response, but it moves the
        performative optimum).
    m : array_like, shape (k,)
        Mean of the data when θ = 0.
    A : array_like, shape (k, p)
        Sensitivity of the map: :math:`D(θ) = \mathcal{N}(m + Aθ, Σ)`.
    Sigma : float or array_like, shape (k, k)
        Covariance Σ of the data (a number: Σ = Sigma·I), positive definite.

    Examples
    --------
    >>> prob = PerformativeProblem.squared(m=1.0, A=0.5, Sigma=1.0)
    >>> prob.stable_point().round(4).tolist(), prob.optimal_point().round(4).tolist()
    ([2.0], [2.0])
    >>> lin = PerformativeProblem.linear(m=1.0, A=0.25, Sigma=1.0)
    >>> lin.stable_point().round(4).tolist(), lin.optimal_point().round(4).tolist()
    ([1.3333], [2.0])
    """

    def __init__(self, H, B, C, m, A, Sigma):
        self.H = _matrix("H", H)
        p = self.H.shape[0]
        if self.H.shape != (p, p) or not np.allclose(self.H, self.H.T):
            raise ValueError(f"H must be a symmetric (p, p) matrix; got shape {self.H.shape}")
        if not np.linalg.eigvalsh(self.H)[0] > 0:
            raise ValueError("H must be positive definite (the loss must be strongly convex in theta); "
                             f"its smallest eigenvalue is {np.linalg.eigvalsh(self.H)[0]:.3g}")
        self.m = np.atleast_1d(np.asarray(check_real("m", m), dtype=float))
        if self.m.ndim != 1:
            raise ValueError(f"m must be a number or a vector; got shape {self.m.shape}")
        k = self.m.size
        self.B = _matrix("B", B, p, k)
        self.C = _matrix("C", C, k, k)
        if not np.allclose(self.C, self.C.T):
            raise ValueError("C must be symmetric")
        self.A = _matrix("A", A, k, p)
        sig = np.asarray(check_real("Sigma", Sigma), dtype=float)
        if sig.ndim == 0:
            if not sig > 0:
                raise ValueError(f"Sigma must be a positive variance or a (k, k) covariance; got {float(sig)}")
            sig = float(sig) * np.eye(k)
        self.Sigma = _matrix("Sigma", sig, k, k)
        if not np.allclose(self.Sigma, self.Sigma.T) or not np.linalg.eigvalsh(self.Sigma)[0] > 0:
            raise ValueError("Sigma must be symmetric positive definite")
        self._L = np.linalg.cholesky(self.Sigma)
        self.p, self.k = p, k

    # ------------------------------------------------------------ builders
    @classmethod
    def squared(cls, *, m, A, Sigma=1.0):
        r"""The squared loss :math:`½\|θ - z\|^{2}` (H = B = C = I): the example of the P-FedAvg paper.

        Its stable and optimal points coincide: :math:`\mathrm{PR}(θ) = ½\|(I - A)θ - m\|^{2} + ½ \operatorname{tr} Σ`.
        """
        return cls._identity_loss(m, A, Sigma, linear=False)

    @classmethod
    def linear(cls, *, m, A, Sigma=1.0):
        r"""The linear loss :math:`½\|θ\|^{2} - θ^\top z` (C = 0): same best response as the squared loss.

        Retraining cannot tell the two losses apart, but their performative
        risks differ, so the stable point :math:`θ_{\mathrm{PS}} = (I - A)^{-1}m` is no longer
        optimal: :math:`θ_{\mathrm{PO}} = (I - A - A^\top)^{-1}m` (Miller et al. 2021's example).
        """
        return cls._identity_loss(m, A, Sigma, linear=True)

    @classmethod
    def _identity_loss(cls, m, A, Sigma, *, linear):
        """H = B = I, C = I (squared) or 0 (linear); ``A`` a number (times I) or a (k, k) matrix."""
        m = np.atleast_1d(np.asarray(check_real("m", m), dtype=float))
        k = m.size
        eye = np.eye(k)
        A = check_real("A", A)
        A = _matrix("A", A, k, k) if np.ndim(A) else float(A) * eye
        return cls(eye, eye, np.zeros((k, k)) if linear else eye, m, A, Sigma)

    def __repr__(self) -> str:
        return (f"PerformativeProblem(p={self.p}, k={self.k}, sensitivity={self.sensitivity:.4g}, "
                f"rrm_factor={self.rrm_factor:.4g})")

    # ------------------------------------------------------- the constants
    @property
    def sensitivity(self) -> float:
        r""":math:`ε = \|A\|_2`: the Wasserstein-1 sensitivity of the map.

        :math:`W_1(D(θ), D(θ')) = \|A(θ - θ')\|` exactly (a translation).
        """
        return _norm2(self.A)

    @property
    def strong_convexity(self) -> float:
        r""":math:`μ = λ_{\min}(H)`: strong convexity of ℓ(·; z)."""
        return float(np.linalg.eigvalsh(self.H)[0])

    @property
    def smoothness(self) -> float:
        r""":math:`β = \max(\|H\|_2, \|B\|_2)`: joint smoothness of :math:`∇_θ ℓ` in θ and in z."""
        return max(_norm2(self.H), _norm2(self.B))

    @property
    def rrm_jacobian(self) -> np.ndarray:
        r""":math:`J = H^{-1}BA`: the best response is :math:`G(θ) = G(0) + Jθ`."""
        return np.linalg.solve(self.H, self.B @ self.A)

    @property
    def rrm_factor(self) -> float:
        r""":math:`\|H^{-1}BA\|_2`: the exact contraction factor of one RRM step (Euclidean norm)."""
        return _norm2(self.rrm_jacobian)

    @property
    def rrm_bound(self) -> float:
        """εβ/μ: Perdomo et al.'s bound on the RRM factor (Theorem 3.5)."""
        return self.sensitivity * self.smoothness / self.strong_convexity

    def rgd_factor(self, step) -> float:
        r""":math:`\|I - η(H - BA)\|_2`: the exact contraction factor of one RGD step of size η."""
        step = check_real("step", step, low=0, low_open=True, scalar=True)
        return _norm2(np.eye(self.p) - step * (self.H - self.B @ self.A))

    def rgd_bound(self, step) -> float:
        r""":math:`\sqrt{1 - 2η(μ - εβ) + η^{2}β^{2}(1 + ε)^{2}}`: a bound on :meth:`rgd_factor` from μ, β and ε.

        The gradient map :math:`g(θ) = ∇_θ \mathrm{DR}(θ; θ)` is :math:`(μ - εβ)`-strongly monotone and
        :math:`β(1 + ε)`-Lipschitz; one gradient step of size η then contracts by this
        factor, which is below 1 when :math:`ε < μ/β` and :math:`η < 2(μ - εβ)/(β^{2}(1 + ε)^{2})`.
        """
        step = check_real("step", step, low=0, low_open=True, scalar=True)
        g, b, e = self.strong_convexity, self.smoothness, self.sensitivity
        try:
            return float(np.sqrt(max(1.0 - 2 * step * (g - e * b) + step**2 * b**2 * (1 + e) ** 2, 0.0)))
        except OverflowError:         # step**2 beyond the double range: factor out the step
            inv = 1.0 / step
            with np.errstate(over="ignore"):
                return float(step * np.sqrt(max(inv * inv - 2 * inv * (g - e * b) + b**2 * (1 + e) ** 2, 0.0)))

    # ------------------------------------------------------------- risks
    def _theta(self, theta, name="theta"):
        arr = np.asarray(check_real(name, theta), dtype=float)
        if arr.ndim == 0:
            arr = arr[None]
        if arr.shape[-1] != self.p:
            raise ValueError(f"{name} must have {self.p} coordinates along its last axis; got shape {arr.shape}")
        return arr

    def data_mean(self, theta):
        """Mean of the induced data, :math:`\\mathbb{E}_{z \\sim D(\\theta)}\\, z = m + A\\theta`."""
        return self.m + self._theta(theta) @ self.A.T

    def best_response(self, theta):
        r""":math:`G(θ') = \arg\min_θ \mathrm{DR}(θ; θ') = H^{-1}B(m + Aθ')`: one step of repeated risk minimization."""
        mean = self.data_mean(theta)
        return np.linalg.solve(self.H, (mean @ self.B.T).T).T

    def decoupled_risk(self, theta, deployed):
        r""":math:`\mathrm{DR}(θ; θ') = ½θ^\top Hθ - θ^\top B μ' + ½(μ'^\top Cμ' + \operatorname{tr} CΣ)`, :math:`μ' = m + Aθ'`.

        Where a term overflows (models beyond about 1e154) the risk is computed in exact rational arithmetic
        and rounded to the nearest double (±inf, or the finite value when the large terms cancel).
        """
        th, dep = np.broadcast_arrays(self._theta(theta), self._theta(deployed, "deployed"))
        with np.errstate(over="ignore", invalid="ignore"):
            mu = self.data_mean(dep)
            quad = 0.5 * np.einsum("...i,ij,...j->...", th, self.H, th)
            lin = np.einsum("...i,ij,...j->...", th, self.B, mu)
            data = 0.5 * (np.einsum("...i,ij,...j->...", mu, self.C, mu) + np.trace(self.C @ self.Sigma))
            out = np.asarray(quad - lin + data, dtype=float)
        if not np.all(np.isfinite(out)):
            out = out.copy()
            flat_out, flat_th, flat_dep = out.reshape(-1), th.reshape(-1, self.p), dep.reshape(-1, self.p)
            for k in np.flatnonzero(~np.isfinite(flat_out)):
                flat_out[k] = self._exact_decoupled_risk(flat_th[k], flat_dep[k])
        return float(out) if np.ndim(out) == 0 else out

    def _exact_decoupled_risk(self, theta, deployed):
        """DR(θ; θ') of one pair of models in exact rational arithmetic, rounded to the nearest double."""
        def frac(a):
            return [Fraction(float(v)) for v in np.ravel(a)]

        p, k = self.p, self.m.size
        th, dep, m = frac(theta), frac(deployed), frac(self.m)
        H, B, A, C = frac(self.H), frac(self.B), frac(self.A), frac(self.C)
        mu = [m[i] + sum(A[i * p + j] * dep[j] for j in range(p)) for i in range(k)]
        quad = sum(th[i] * H[i * p + j] * th[j] for i in range(p) for j in range(p)) / 2
        lin = sum(th[i] * B[i * k + j] * mu[j] for i in range(p) for j in range(k))
        data = sum(mu[i] * C[i * k + j] * mu[j] for i in range(k) for j in range(k)) / 2
        trace = Fraction(float(np.trace(self.C @ self.Sigma))) / 2
        exact = quad - lin + data + trace
        try:
            return float(exact)
        except OverflowError:
            return math.inf if exact > 0 else -math.inf

    def performative_risk(self, theta):
        """PR(θ) = DR(θ; θ): the loss of θ on the data it induces."""
        return self.decoupled_risk(theta, theta)

    def gradient_map(self, theta):
        r""":math:`g(θ) = ∇_θ \mathrm{DR}(θ; θ')` at θ' = θ: :math:`(H - BA)θ - Bm` (what RGD follows)."""
        th = self._theta(theta)
        return th @ (self.H - self.B @ self.A).T - self.B @ self.m

    # ------------------------------------------------------ special points
    def stable_point(self, *, attracting=True):
        r""":math:`θ_{\mathrm{PS}}` with :math:`θ_{\mathrm{PS}} = G(θ_{\mathrm{PS}})`: the solution of :math:`(H - BA)θ = Bm`.

        Parameters
        ----------
        attracting : bool
            Refuse (ValueError) a fixed point that retraining cannot reach (the RRM Jacobian :math:`H^{-1}BA`
            has spectral radius >= 1). With ``False`` it is returned when it exists (stable in the
            definition's sense, but every RRM path that does not start on it moves away).

        Returns
        -------
        numpy.ndarray, shape (p,)
        """
        rho = _spectral_radius(self.rrm_jacobian)
        if check_flag("attracting", attracting) and rho >= 1.0:
            raise ValueError(f"repeated risk minimization has no attracting stable point: the spectral radius "
                             f"of H^-1 B A is {rho:.4g} >= 1 (the map is too sensitive; the squared loss "
                             "needs a sensitivity below 1); use attracting=False for the repelling fixed point")
        M = self.H - self.B @ self.A
        if abs(np.linalg.det(np.linalg.solve(self.H, M))) < 1e-12:
            raise ValueError("no stable point: H - B A is singular (every or no theta is a fixed point of retraining)")
        return np.linalg.solve(M, self.B @ self.m)

    def optimal_point(self):
        r""":math:`θ_{\mathrm{PO}} = \arg\min \mathrm{PR}`: the root of :math:`∇\mathrm{PR}(θ) = Qθ - Bm + A^\top Cm`, :math:`Q = H - BA - (BA)^\top + A^\top CA`.

        Raises ValueError when Q is not positive definite (the performative
        risk is then unbounded below or has no unique minimizer).
        """
        BA = self.B @ self.A
        Q = self.H - BA - BA.T + self.A.T @ self.C @ self.A
        low = float(np.linalg.eigvalsh(0.5 * (Q + Q.T))[0])
        if not low > 0:
            raise ValueError(f"the performative risk has no unique minimizer: its Hessian has smallest "
                             f"eigenvalue {low:.4g} <= 0 (the map is too sensitive for this loss)")
        return np.linalg.solve(Q, self.B @ self.m - self.A.T @ self.C @ self.m)

    # ------------------------------------------------------------ sampling
    def sample(self, theta, size, key):
        """``size`` draws from D(θ) (θ: batch + (p,)) by ``key`` (batch): shape batch + (size, k)."""
        th = self._theta(theta)
        xi = key.normal(size * self.k).reshape(th.shape[:-1] + (size, self.k))
        return self.data_mean(th)[..., None, :] + xi @ self._L.T


@dataclass(frozen=True, eq=False)
class PerformativePath:
    """Iterates of :func:`repeated_risk_minimization` or :func:`repeated_gradient_descent`.

    Attributes
    ----------
    theta : numpy.ndarray
        :math:`θ_0`, ..., :math:`θ_T`: shape (T + 1, p) for the exact iteration,
        (trials, T + 1, p) when each step uses ``samples`` data points.
    problem : PerformativeProblem
    method : str
        ``"rrm"`` or ``"rgd"``.
    T, samples, trials, step, seed
        Provenance (``samples=None``: exact expectations).
    """

    theta: np.ndarray
    problem: PerformativeProblem
    method: str
    T: int
    samples: Any
    trials: int
    step: Any
    seed: Any

    def __repr__(self) -> str:
        return (f"PerformativePath(method={self.method!r}, T={self.T}, samples={self.samples}, "
                f"trials={self.trials}, theta=<{self.theta.shape}>)")

    @property
    def distance(self) -> np.ndarray:
        r""":math:`\|θ_t - θ_{\mathrm{PS}}\|` (to the fixed point of retraining, attracting or not)."""
        ps = self.problem.stable_point(attracting=False)
        return np.linalg.norm(self.theta - ps, axis=-1)

    @property
    def performative_risk(self) -> np.ndarray:
        """:math:`\\mathrm{PR}(θ_t)` of every iterate."""
        return self.problem.performative_risk(self.theta)


def _iterate(problem, theta0, T, samples, trials, seed, update):
    if not isinstance(problem, PerformativeProblem):
        raise TypeError(f"problem must be a PerformativeProblem; got {problem!r:.60}")
    T = check_int("T", T, low=1)
    th0 = problem._theta(theta0, "theta0")
    if th0.shape != (problem.p,):
        raise ValueError(f"theta0 must be a vector of {problem.p} coordinates; got shape {th0.shape}")
    check_int("trials", trials, low=1)            # checked (and the seed) even when unused: samples=None
    check_seed(seed)
    check_array_size("the path ((T + 1) x p values)", T=T + 1, p=problem.p)
    if samples is None:
        path = np.empty((T + 1, problem.p))
        path[0] = th0
        with np.errstate(over="ignore", invalid="ignore"):
            for t in range(1, T + 1):
                path[t] = update(path[t - 1], problem.data_mean(path[t - 1]))
        return path, 1, None
    samples = check_int("samples", samples, low=1)
    trials = check_int("trials", trials, low=1)
    check_array_size("the paths (trials x (T + 1) x p values)", trials=trials, T=T + 1, p=problem.p)
    check_array_size("the data of a deployment (trials x samples draws of z)", trials=trials, samples=samples,
                     z=problem.m.size)
    keys = keyed.root_key(seed).child(np.arange(trials))
    path = np.empty((trials, T + 1, problem.p))
    path[:, 0] = th0
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(1, T + 1):
            z = problem.sample(path[:, t - 1], samples, keys.child(np.int64(t)).child("data"))
            path[:, t] = update(path[:, t - 1], z.mean(axis=-2))
    return path, trials, samples


def repeated_risk_minimization(problem, theta0, *, T, samples=None, trials=1, seed=None):
    r"""Repeated risk minimization: deploy :math:`θ_t`, observe :math:`D(θ_t)`, refit :math:`θ_{t+1} = \arg\min \mathrm{DR}(\cdot; θ_t)`.

    With ``samples=None`` the exact best response :math:`θ_{t+1} = G(θ_t)` is used;
    with ``samples=n`` each deployment draws n points from :math:`D(θ_t)` and refits
    the empirical risk exactly, :math:`θ_{t+1} = H^{-1}B \bar z_t`.

    Parameters
    ----------
    problem : PerformativeProblem
    theta0, T
        First deployed model :math:`θ_0`, shape (p,), and the number of deployments.
    samples, trials, seed : optional
        Data points per deployment, independent repetitions (with ``samples``) and the root of their keyed
        streams (trial -> round -> "data").

    Returns
    -------
    PerformativePath

    References
    ----------
    Perdomo et al. (2020), Definition 2.3 and Theorem 3.5 (contraction
    factor ≤ εβ/μ; here the exact factor is :attr:`PerformativeProblem.rrm_factor`).

    Examples
    --------
    >>> prob = PerformativeProblem.squared(m=1.0, A=0.5)
    >>> repeated_risk_minimization(prob, [0.0], T=3).theta.ravel().tolist()
    [0.0, 1.0, 1.5, 1.75]
    """
    def update(theta, zbar):
        return np.linalg.solve(problem.H, (zbar @ problem.B.T).T).T

    path, trials, samples = _iterate(problem, theta0, T, samples, trials, seed, update)
    return PerformativePath(path, problem, "rrm", int(T), samples, trials, None, seed)


def repeated_gradient_descent(problem, theta0, *, T, step, samples=None, trials=1, seed=None):
    r"""Repeated gradient descent: one gradient step on :math:`\mathrm{DR}(\cdot; θ_t)` per deployment.

    :math:`θ_{t+1} = θ_t - η(Hθ_t - B \bar z_t)`, with :math:`\bar z_t` the mean of :math:`D(θ_t)`
    (``samples=None``) or of ``samples`` points drawn from it.

    Parameters
    ----------
    problem, theta0, T, samples, trials, seed
        As in :func:`repeated_risk_minimization`.
    step : float
        Step size η > 0.

    Returns
    -------
    PerformativePath

    References
    ----------
    Perdomo et al. (2020), §3.2; the contraction factor is
    :meth:`PerformativeProblem.rgd_factor`, bounded by
    :meth:`PerformativeProblem.rgd_bound`.

    Examples
    --------
    >>> prob = PerformativeProblem.squared(m=1.0, A=0.5)
    >>> repeated_gradient_descent(prob, [0.0], T=2, step=1.0).theta.ravel().tolist()
    [0.0, 1.0, 1.5]
    """
    step = check_real("step", step, low=0, low_open=True, scalar=True)

    def update(theta, zbar):
        return theta - step * (theta @ problem.H.T - zbar @ problem.B.T)

    path, trials, samples = _iterate(problem, theta0, T, samples, trials, seed, update)
    return PerformativePath(path, problem, "rgd", int(T), samples, trials, step, seed)
