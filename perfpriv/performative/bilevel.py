r"""FBi-RRM on a federated bilevel strategic regression (Federated Bilevel Performative Prediction).

M clients share an upper-level (UL) model x; each client fits a
lower-level (LL) response :math:`y_i^*(x)` to its LL data, and the UL objective
judges x on the UL data together with the distance of x to the response:

    :math:`y_i^*(x) = \arg\min_y Σ_j q_j (d_{ij} - c_{ij}^\top y)^{2} + (λ_y/2)\|y - x\|^{2}`,
    :math:`F_i(x) = Σ_j q_j (b_{ij} - a_{ij}^\top x)^{2} + (λ_x/2)\|x - y_i^*(x)\|^{2}`

(the FBi-RRM paper's strategic-regression example, with :math:`q_j = 1/n`). The data are
*performative*: when the server deploys x', the people behind client i's
data move their outcomes towards the deployed model's predictions,

    :math:`b_{ij}(x') = b^{0}_{ij} + ε_{c,i} a_{ij}^\top x'`,     :math:`d_{ij}(x') = d^{0}_{ij} + ε_{d,i} c_{ij}^\top x'`,

with UL sensitivity :math:`ε_c` and LL sensitivity :math:`ε_d` per client (the text of
the FBi-RRM paper does not state its shift model; this label shift is the book's
choice, the simplest one that keeps every step in closed form).

FBi-RRM deploys :math:`x_r`, lets every client solve its local bilevel problem on
the data :math:`x_r` induced, and averages: :math:`x_{r+1} = R(x_r) = Σ_i p_i x_i(x_r)`.
Both levels are quadratic, so :math:`y_i^*(x) = P_i x + u_i(x')` is affine and
:math:`x_i(x')` solves a linear system; R is affine, :math:`R(x) = R(0) + Jx`, with

    :math:`J = Σ_i p_i K_i^{-1} (2ε_{c,i} H_i + λ_x ε_{d,i} M_i^\top (2G_i + λ_y I)^{-1} 2G_i)`,

:math:`H_i = Σ_j q_j a_{ij} a_{ij}^\top`, :math:`G_i = Σ_j q_j c_{ij} c_{ij}^\top`,
:math:`P_i = λ_y(2G_i + λ_y I)^{-1}`, :math:`M_i = I - P_i` and :math:`K_i = 2H_i + λ_x M_i^\top M_i`. FBi-RRM
converges iff ρ(J) < 1; J is linear in the sensitivities, hence an exact threshold
(:meth:`BilevelRegression.threshold`), compared with a sufficient condition of the paper's form by
:meth:`BilevelRegression.bound_threshold`.

References
----------
Paper 002 (federated bilevel performative prediction): FBi-RRM, the
operator R, its contraction condition and the bilevel strategic regression
(M = 10 clients, :math:`d = 5, N = 50, λ_x = λ_y = 10^{-3}`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import keyed
from .._validate import check_allocation, check_array_size, check_flag, check_int, check_real

__all__ = ["BilevelRegression", "BilevelPath", "fbi_rrm"]


def _per_client(name, value, M):
    arr = np.asarray(check_real(name, value, low=0.0), dtype=float)
    if arr.ndim == 0:
        arr = np.full(M, float(arr))
    if arr.shape != (M,):
        raise ValueError(f"{name} must be a number or one value per client, shape ({M},); got shape {arr.shape}")
    return arr


class BilevelRegression:
    r"""A federated bilevel strategic regression with performative labels (closed forms).

    Parameters
    ----------
    A, b : array_like, shapes (M, n, d) and (M, n)
        UL features :math:`a_{ij}` and base labels :math:`b^{0}_{ij}` of every client.
    C, dd : array_like, shapes (M, n, d) and (M, n)
        LL features :math:`c_{ij}` and base labels :math:`d^{0}_{ij}`.
    eps_c, eps_d : float or array_like of shape (M,)
        UL and LL sensitivities :math:`ε_{c,i}, ε_{d,i} \ge 0`.
    lam_x, lam_y : float
        Regularization :math:`λ_x, λ_y > 0`.
    p : array_like, shape (M,), optional
        Client weights (default 1/M).

    Examples
    --------
    >>> prob = BilevelRegression.synthetic(eps_c=0.5, eps_d=0.5, seed=0)
    >>> round(prob.spectral_radius, 3), round(prob.threshold(), 3)
    (0.5, 2.0)
    """

    def __init__(self, A, b, C, dd, *, eps_c, eps_d, lam_x, lam_y, p=None):
        A = np.asarray(check_real("A", A), dtype=float)
        if A.ndim != 3:
            raise ValueError(f"A must have shape (M, n, d) (clients, samples, features); got {A.shape}")
        M, n, d = A.shape
        b = np.asarray(check_real("b", b), dtype=float)
        C = np.asarray(check_real("C", C), dtype=float)
        dd = np.asarray(check_real("dd", dd), dtype=float)
        if b.shape != (M, n) or C.shape != (M, n, d) or dd.shape != (M, n):
            raise ValueError(f"b, C, dd must have shapes {(M, n)}, {(M, n, d)}, {(M, n)}; got {b.shape}, "
                             f"{C.shape}, {dd.shape}")
        self.A, self.b, self.C, self.dd = A, b, C, dd
        self.M, self.n, self.d = M, n, d
        self.eps_c = _per_client("eps_c", eps_c, M)
        self.eps_d = _per_client("eps_d", eps_d, M)
        self.lam_x = check_real("lam_x", lam_x, low=0, low_open=True, scalar=True)
        self.lam_y = check_real("lam_y", lam_y, low=0, low_open=True, scalar=True)
        if p is None:
            self.p = np.full(M, 1.0 / M)
        else:
            self.p = np.asarray(check_real("p", p, low=0.0, high=1.0), dtype=float)
            if self.p.shape != (M,) or abs(self.p.sum() - 1.0) > 1e-9:
                raise ValueError(f"p must hold {M} weights summing to 1; got shape {self.p.shape}, "
                                 f"sum {self.p.sum():.6g}")
        eye = np.eye(d)
        self.H = np.einsum("mnj,mnk->mjk", A, A) / n            # Σ q a aᵀ
        self.G = np.einsum("mnj,mnk->mjk", C, C) / n            # Σ q c cᵀ
        self._S = 2.0 * self.G + self.lam_y * eye              # LL normal matrix
        self.P = self.lam_y * np.linalg.inv(self._S)            # y* = P x + u
        self.Mres = eye - self.P                                # x − y* = M x − u
        self.K = 2.0 * self.H + self.lam_x * np.einsum("mji,mjk->mik", self.Mres, self.Mres)

    @classmethod
    def synthetic(cls, M=10, n=50, d=5, *, eps_c=0.5, eps_d=0.5, lam_x=1e-3, lam_y=1e-3, heterogeneity=0.5,
                  noise=0.1, seed=0):
        r"""Client data from perturbed linear models (the FBi-RRM paper's protocol, as far as its text gives it).

        UL labels :math:`b^{0} = a\cdot β_i` + noise, LL labels :math:`d^{0} = c\cdot β'_i` + noise, features
        :math:`\mathcal{N}(0, I_d)`, with :math:`β_i = β + hδ_i` and :math:`β'_i = β' + hδ'_i` (h = ``heterogeneity``),
        β, β', δ, δ' standard normal :math:`/\sqrt d`.
        """
        M = check_int("M", M, low=1)
        n = check_int("n", n, low=1)
        d = check_int("d", d, low=1)
        check_array_size("the clients' data (M x n x d normals)", M=M, n=n, d=d)
        check_allocation("the normal equations (d x d values)", float(d) ** 2, name="d")
        heterogeneity = check_real("heterogeneity", heterogeneity, low=0.0, scalar=True)
        noise = check_real("noise", noise, low=0.0, scalar=True)
        gen = keyed.as_generator(seed)
        beta_u, beta_l = gen.standard_normal((2, d)) / np.sqrt(d)
        bu = beta_u + heterogeneity * gen.standard_normal((M, d)) / np.sqrt(d)
        bl = beta_l + heterogeneity * gen.standard_normal((M, d)) / np.sqrt(d)
        A = gen.standard_normal((M, n, d))
        C = gen.standard_normal((M, n, d))
        b = np.einsum("mnd,md->mn", A, bu) + noise * gen.standard_normal((M, n))
        dd = np.einsum("mnd,md->mn", C, bl) + noise * gen.standard_normal((M, n))
        return cls(A, b, C, dd, eps_c=eps_c, eps_d=eps_d, lam_x=lam_x, lam_y=lam_y)

    def with_sensitivities(self, eps_c, eps_d):
        """The same data and regularization with other sensitivities."""
        return BilevelRegression(self.A, self.b, self.C, self.dd, eps_c=eps_c, eps_d=eps_d, lam_x=self.lam_x,
                                 lam_y=self.lam_y, p=self.p)

    def __repr__(self) -> str:
        return (f"BilevelRegression(M={self.M}, n={self.n}, d={self.d}, lam_x={self.lam_x:g}, lam_y={self.lam_y:g}, "
                f"spectral_radius={self.spectral_radius:.4g})")

    # ------------------------------------------------------------ one client
    def _x(self, x, name="x"):
        arr = np.asarray(check_real(name, x), dtype=float).reshape(-1)
        if arr.shape != (self.d,):
            raise ValueError(f"{name} must be a vector of d={self.d} coordinates; got shape {arr.shape}")
        return arr

    def labels(self, deployed):
        """UL and LL labels :math:`(b_{ij}(x'), d_{ij}(x'))` induced by the deployed model x', shapes (M, n)."""
        x = self._x(deployed, "deployed")
        b = self.b + self.eps_c[:, None] * (self.A @ x)
        dd = self.dd + self.eps_d[:, None] * (self.C @ x)
        return b, dd

    def lower_response(self, x, deployed):
        r""":math:`y_i^*(x) = \arg\min_y g_i(x, y)` on the LL data deployed induced, shape (M, d)."""
        x = self._x(x)
        _, dd = self.labels(deployed)
        rhs = 2.0 * np.einsum("mnd,mn->md", self.C, dd) / self.n + self.lam_y * x
        return np.linalg.solve(self._S, rhs[..., None])[..., 0]

    def upper_objective(self, x, deployed):
        r""":math:`F_i(x) = Σ_j q_j (b_{ij} - a_{ij}^\top x)^{2} + (λ_x/2)\|x - y_i^*(x)\|^{2}` of every client, shape (M,)."""
        x = self._x(x)
        b, _ = self.labels(deployed)
        resid = b - self.A @ x
        gap = x - self.lower_response(x, deployed)
        return np.mean(resid**2, axis=1) + 0.5 * self.lam_x * np.sum(gap**2, axis=1)

    def local_solutions(self, deployed):
        r""":math:`x_i(x') = \arg\min_x F_i(x)` on the data x' induced, shape (M, d) (one linear solve each)."""
        b, dd = self.labels(deployed)
        u = np.linalg.solve(self._S, (2.0 * np.einsum("mnd,mn->md", self.C, dd) / self.n)[..., None])[..., 0]
        rhs = 2.0 * np.einsum("mnd,mn->md", self.A, b) / self.n + self.lam_x * np.einsum("mji,mj->mi", self.Mres, u)
        return np.linalg.solve(self.K, rhs[..., None])[..., 0]

    def rrm_map(self, x):
        """:math:`R(x) = Σ_i p_i x_i(x)`: one FBi-RRM round from the deployed x."""
        return self.p @ self.local_solutions(self._x(x, "x"))

    # ------------------------------------------------------------- contraction
    def _client_jacobians(self):
        """:math:`(J_{c,i}, J_{d,i})`: derivatives of :math:`x_i(x')` per unit UL and LL sensitivity, shape (M, d, d) each."""
        Kinv = np.linalg.inv(self.K)
        Jc = 2.0 * Kinv @ self.H
        Sinv2G = np.linalg.solve(self._S, 2.0 * self.G)
        Jd = self.lam_x * Kinv @ np.einsum("mji,mjk->mik", self.Mres, Sinv2G)
        return Jc, Jd

    @property
    def jacobian(self) -> np.ndarray:
        """:math:`J = dR/dx = Σ_i p_i (ε_{c,i} J_{c,i} + ε_{d,i} J_{d,i})` (R is affine)."""
        Jc, Jd = self._client_jacobians()
        return np.einsum("m,mij->ij", self.p * self.eps_c, Jc) + np.einsum("m,mij->ij", self.p * self.eps_d, Jd)

    @property
    def spectral_radius(self) -> float:
        """ρ(J): FBi-RRM converges from every start iff ρ(J) < 1, asymptotically at rate ρ(J)."""
        return float(np.max(np.abs(np.linalg.eigvals(self.jacobian))))

    @property
    def contraction_factor(self) -> float:
        r""":math:`\|J\|_2`: R is a contraction of the Euclidean norm iff :math:`\|J\|_2 < 1`."""
        return float(np.linalg.norm(self.jacobian, 2))

    def threshold(self) -> float:
        r""":math:`s^* = 1/ρ(J)`: FBi-RRM with sensitivities :math:`s\cdot (ε_c, ε_d)` converges iff :math:`s < s^*`."""
        rho = self.spectral_radius
        return float("inf") if rho == 0 else 1.0 / rho

    def bound_threshold(self) -> float:
        r"""The largest s for which the sufficient condition :math:`Σ_i p_i L_i(s)/μ_i < 1` holds.

        :math:`L_i(s) = s(2ε_{c,i}\|H_i\| + λ_x ε_{d,i}\|M_i^\top(2G_i + λ_y I)^{-1}2G_i\|)` bounds how fast
        client i's UL gradient moves with the deployed model, :math:`μ_i = λ_{\min}(K_i)` is its UL strong
        convexity, and :math:`\|x_i(x) - x_i(x')\| \le L_i/μ_i \|x - x'\|`: a condition of the form of the
        FBi-RRM paper's contraction theorem. :math:`s^* \ge` this value, with equality in dimension 1 and for
        isotropic designs (every :math:`A_i^\top A_i/n` and :math:`C_i^\top C_i/n` a multiple of I).
        """
        Sinv2G = np.linalg.solve(self._S, 2.0 * self.G)
        Ld = np.array([np.linalg.norm(self.Mres[i].T @ Sinv2G[i], 2) for i in range(self.M)])
        Lc = np.array([np.linalg.norm(self.H[i], 2) for i in range(self.M)])
        gam = np.array([np.linalg.eigvalsh(0.5 * (self.K[i] + self.K[i].T))[0] for i in range(self.M)])
        total = float(np.sum(self.p * (2.0 * self.eps_c * Lc + self.lam_x * self.eps_d * Ld) / gam))
        return float("inf") if total == 0 else 1.0 / total

    def stable_point(self, *, attracting=True):
        """The FBPS point x = R(x), solution of (I − J)x = R(0).

        ``attracting=True`` refuses (ValueError) a fixed point that FBi-RRM
        cannot reach (ρ(J) >= 1).
        """
        rho = self.spectral_radius
        if check_flag("attracting", attracting) and rho >= 1.0:
            raise ValueError(f"FBi-RRM has no attracting stable point: rho(J) = {rho:.4g} >= 1; the sensitivities "
                             f"must be scaled below {self.threshold():.4g} times their values")
        return np.linalg.solve(np.eye(self.d) - self.jacobian, self.rrm_map(np.zeros(self.d)))


@dataclass(frozen=True, eq=False)
class BilevelPath:
    r"""Iterates of :func:`fbi_rrm`.

    Attributes
    ----------
    x : numpy.ndarray, shape (rounds + 1, d)
        :math:`x_0`, ..., x_rounds.
    gap : numpy.ndarray, shape (rounds + 1,)
        Fixed-point residual :math:`\|R(x_r) - x_r\|` (zero exactly at the FBPS point).
    problem : BilevelRegression
    rounds : int
    """

    x: np.ndarray
    gap: np.ndarray
    problem: BilevelRegression
    rounds: int

    def __repr__(self) -> str:
        return f"BilevelPath(rounds={self.rounds}, final gap={float(self.gap[-1]):.3g})"

    @property
    def distance(self) -> np.ndarray:
        r""":math:`\|x_r - x_s\|` to the fixed point of R (attracting or not)."""
        return np.linalg.norm(self.x - self.problem.stable_point(attracting=False), axis=1)

    def rate(self, last=10) -> float:
        """Geometric mean of the gap ratios over the ``last`` rounds (→ ρ(J) as rounds grow)."""
        last = check_int("last", last, low=1, high=self.rounds)
        g = self.gap[-last - 1:]
        if np.any(g <= 0) or not np.all(np.isfinite(g)):
            raise ValueError("the gap reached 0 or overflowed: use fewer rounds to measure the rate")
        return float(np.exp(np.mean(np.diff(np.log(g)))))


def fbi_rrm(problem, x0=None, *, rounds):
    r"""FBi-RRM: :math:`x_{r+1} = Σ_i p_i \arg\min_x F_i(x; \text{data induced by } x_r)` (Federated Bilevel Performative Prediction).

    Parameters
    ----------
    problem : BilevelRegression
    x0, rounds
        First deployed model, shape (d,) (default 0), and the number of communication rounds.

    Returns
    -------
    BilevelPath

    Examples
    --------
    >>> prob = BilevelRegression.synthetic(eps_c=0.5, eps_d=0.5, seed=0)
    >>> path = fbi_rrm(prob, rounds=40)
    >>> bool(path.gap[-1] < 1e-10), round(path.rate(), 2)
    (True, 0.5)
    """
    if not isinstance(problem, BilevelRegression):
        raise TypeError(f"problem must be a BilevelRegression; got {problem!r:.60}")
    rounds = check_int("rounds", rounds, low=1)
    check_array_size("the path ((rounds + 1) x d values)", rounds=rounds + 1, d=problem.d)
    x = np.zeros(problem.d) if x0 is None else problem._x(x0, "x0")
    xs = np.empty((rounds + 1, problem.d))
    gap = np.empty(rounds + 1)
    with np.errstate(over="ignore", invalid="ignore"):
        for r in range(rounds + 1):
            xs[r] = x
            nxt = problem.rrm_map(x) if np.all(np.isfinite(x)) else np.full(problem.d, np.nan)
            gap[r] = np.linalg.norm(nxt - x)
            x = nxt
    return BilevelPath(xs, gap, problem, rounds)
