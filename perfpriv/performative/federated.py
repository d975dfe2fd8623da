"""P-FedAvg: federated averaging when every client's data respond to its model (Performative Federated Learning).

N clients hold data whose law depends on the model they run: client i,
with weight :math:`p_i (Σ p_i = 1)`, draws :math:`Z \\sim D_i(θ)` and suffers ℓ(θ; Z). The
server wants the performatively stable point of the weighted objective,

.. math::

    \\theta_{PS} = \\arg\\min_\\theta \\sum_i p_i\\, \\mathbb{E}_{Z \\sim D_i(\\theta_{PS})}\\, \\ell(\\theta; Z).

P-FedAvg runs E local stochastic gradient steps at every client, on data drawn from the client's current
local model, and averages the local models of all clients, or of K sampled ones, every E steps (the
schemes of :class:`FedAvg`, run by :func:`p_fedavg`), with step sizes :math:`η_t = β/(t + t_0)`
(:class:`StepRule`).

The worked example of the P-FedAvg paper (its §5) is implemented in full: the loss
:math:`ℓ(θ; Z) = ½\\|θ - Z\\|^{2}` and :math:`D_i(θ) = \\mathcal{N}(m_i + ε_i θ, σ^{2} I)`
(:class:`GaussianClients`), whose stable point is :math:`θ_{\\mathrm{PS}} = \\bar m/(1 - \\bar ε)`
(:func:`stable_point`). Every step of P-FedAvg is then linear in the local models with additive Gaussian noise
and an independent random aggregation, so the means and covariances of the iterates follow an exact recursion
(:func:`expected_distance`), which the Monte Carlo simulator (:func:`p_fedavg`) is tested against.

References
----------
Paper 003 (performative federated learning): P-FedAvg, schemes I and II,
Proposition 2.8 (existence of :math:`θ_{\\mathrm{PS}}` iff :math:`\\bar ε < 1`), Theorems 3.1-3.3 (O(1/T)),
the Gaussian mean-estimation example. X. Li, K. Huang, W. Yang, S. Wang,
Z. Zhang (2020), On the convergence of FedAvg on non-IID data, ICLR
(the sampling schemes, rescaled objectives and step sizes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import keyed
from .._validate import check_array_size, check_choice, check_flag, check_int, check_real
from ._checks import model_vector
from .prediction import PerformativeProblem

__all__ = ["GaussianClients", "StepRule", "FedAvg", "FedAvgRun", "FedAvgMoments", "average_sensitivity",
           "stable_point", "p_fedavg", "expected_distance", "THETA0_BOUND"]

#: Participation schemes: every client, scheme I (with replacement, by :math:`p_i`), scheme II (uniform, without).
SCHEMES = ("full", "I", "II")


# ------------------------------------------------------------------ inputs
def _clients_arrays(m, eps, p):
    """Validated (m (N, d), eps (N,), p (N,), m was 1-D)."""
    m_arr = np.asarray(check_real("m", m), dtype=float)
    if m_arr.ndim not in (1, 2) or m_arr.shape[0] < 1:
        raise ValueError(f"m must be a vector (one location per client) or an (N, d) array; got shape {m_arr.shape}")
    flat = m_arr.ndim == 1
    m_arr = m_arr[:, None] if flat else m_arr
    N = m_arr.shape[0]
    eps_arr = np.asarray(check_real("eps", eps), dtype=float)
    if eps_arr.shape != (N,):
        raise ValueError(f"eps must hold one sensitivity per client, shape ({N},); got shape {eps_arr.shape}")
    if p is None:
        p_arr = np.full(N, 1.0 / N)
    else:
        p_arr = np.asarray(check_real("p", p, low=0.0, high=1.0), dtype=float)
        if p_arr.shape != (N,):
            raise ValueError(f"p must hold one weight per client, shape ({N},); got shape {p_arr.shape}")
        if abs(p_arr.sum() - 1.0) > 1e-9:
            raise ValueError(f"p must sum to 1 (client weights p_i); got sum {p_arr.sum():.10g}")
    return m_arr, eps_arr, p_arr, flat


def average_sensitivity(eps, p=None):
    r""":math:`\bar ε = Σ_i p_i ε_i`: the average sensitivity of the P-FedAvg paper.

    Parameters
    ----------
    eps, p
        As in :func:`stable_point`.

    Examples
    --------
    >>> average_sensitivity([0.5, 1.5], [0.75, 0.25])
    0.75
    """
    eps_arr = np.asarray(check_real("eps", eps), dtype=float)
    if eps_arr.ndim != 1:
        raise ValueError(f"eps must be a vector of client sensitivities; got shape {eps_arr.shape}")
    _, eps_arr, p_arr, _ = _clients_arrays(np.zeros(eps_arr.size), eps_arr, p)
    return float(p_arr @ eps_arr)


def stable_point(m, eps, p=None):
    r""":math:`θ_{\mathrm{PS}} = Σ_i p_i m_i / (1 - \bar ε)` of the Gaussian example (P-FedAvg paper, §5; Proposition 2.8).

    With :math:`ℓ(θ; Z) = ½\|θ - Z\|^{2}` and :math:`Z \sim \mathcal{N}(m_i + ε_i θ, σ^{2} I)` at client i,
    the decoupled objective :math:`Σ_i p_i \mathbb{E}\, ℓ(θ; Z_i)` is :math:`½\|θ - \bar m - \bar ε θ'\|^{2}`
    plus a constant (:math:`\bar m = Σ_i p_i m_i`): the squared-loss problem of
    :class:`~perfpriv.performative.prediction.PerformativeProblem` with mean :math:`\bar m` and sensitivity
    :math:`\bar ε`, whose retraining map :math:`θ' \mapsto \bar m + \bar ε θ'` contracts iff
    :math:`\bar ε < 1`.

    Parameters
    ----------
    m : array_like, shape (N,) or (N, d)
        Data location :math:`m_i` of every client (scalars or d-vectors).
    eps : array_like, shape (N,)
        Sensitivity :math:`ε_i` of every client (any real; only ε̄ matters).
    p : array_like, shape (N,), optional
        Weights :math:`p_i \ge 0` summing to 1 (default 1/N).

    Returns
    -------
    float or numpy.ndarray of shape (d,)

    Raises
    ------
    ValueError
        When ε̄ >= 1: no stable point to converge to (at ε̄ = 1 none unless m̄ = 0; for ε̄ > 1 the solution
        m̄/(1 − ε̄) repels every iteration).

    Examples
    --------
    >>> stable_point([1.0, 3.0], [0.5, 0.5])
    4.0
    >>> round(stable_point([10.0, 10.0], [0.8, 1.0], [0.5, 0.5]), 6)
    100.0
    """
    m_arr, eps_arr, p_arr, flat = _clients_arrays(m, eps, p)
    eps_bar = float(p_arr @ eps_arr)
    if not eps_bar < 1.0:
        raise ValueError(f"eps must have an average sensitivity eps_bar = sum(p_i eps_i) < 1 for a stable point "
                         f"that retraining or P-FedAvg can reach; got eps_bar = {eps_bar:.6g} (for eps_bar > 1 the "
                         "fixed point m_bar/(1 - eps_bar) exists but repels every iteration)")
    m_bar = p_arr @ m_arr
    point = PerformativeProblem.squared(m=m_bar, A=eps_bar).stable_point()
    return float(point[0]) if flat else point


# ----------------------------------------------------------------- clients
@dataclass(frozen=True, eq=False)
class GaussianClients:
    r"""The clients of the P-FedAvg paper's example: :math:`Z \sim N(m_i + ε_i θ, σ^{2} I)`, loss :math:`½\|θ - Z\|^{2}`.

    Attributes
    ----------
    m, eps, p : numpy.ndarray, shapes (N, d), (N,) and (N,)
        Data locations :math:`m_i`, sensitivities :math:`ε_i` and weights :math:`p_i` (:func:`stable_point`).
    sigma : float
        Noise σ of one data point.

    Examples
    --------
    >>> c = GaussianClients.example(N=25, m_mean=10.0, eps_mean=0.9)
    >>> c.N, round(c.average_sensitivity, 6), round(float(c.stable_point[0]), 6)
    (25, 0.9, 100.0)
    """

    m: np.ndarray
    eps: np.ndarray
    p: np.ndarray
    sigma: float = 1.0

    def __post_init__(self):
        m, eps, p, _ = _clients_arrays(self.m, self.eps, self.p)
        sigma = check_real("sigma", self.sigma, low=0.0, scalar=True)
        for name, value in (("m", m), ("eps", eps), ("p", p), ("sigma", sigma)):
            object.__setattr__(self, name, value)

    @classmethod
    def example(cls, N=25, *, m_mean=10.0, m_sd=0.0, eps_mean=0.9, eps_sd=0.0, sigma=1.0, p=None, d=1, seed=0):
        r"""Clients with weighted means :math:`\bar m`, :math:`\bar ε` and weighted spreads exactly as asked.

        The paper's experiment uses N = 25, :math:`\bar ε = 0.9`, :math:`\bar m = 10` and varies the spreads
        of m (data heterogeneity) and ε (shift heterogeneity). Draws are standardized so that
        :math:`Σ_i p_i m_i = \bar m` and :math:`Σ_i p_i (m_i - \bar m)^{2} = s_m^{2}`, :math:`s_m` = ``m_sd``
        (per coordinate), and the same for ε.

        Parameters
        ----------
        N, d : int
            Number of clients N >= 1 (N >= 2 when a spread is positive) and dimension of θ.
        m_mean, m_sd, eps_mean, eps_sd : float
            Weighted means and standard deviations of m and ε.
        sigma, p, seed
            Data noise σ >= 0, weights (default uniform) and the seed of the standardized draws.
        """
        N = check_int("N", N, low=1)
        d = check_int("d", d, low=1)
        check_array_size("the clients' means (N x d values)", N=N, d=d)
        m_mean = check_real("m_mean", m_mean, scalar=True)
        eps_mean = check_real("eps_mean", eps_mean, scalar=True)
        m_sd = check_real("m_sd", m_sd, low=0.0, scalar=True)
        eps_sd = check_real("eps_sd", eps_sd, low=0.0, scalar=True)
        if N < 2 and (m_sd > 0 or eps_sd > 0):
            raise ValueError("N must be >= 2 for a positive spread of m or eps")
        _, _, p_arr, _ = _clients_arrays(np.zeros(N), np.zeros(N), p)
        gen = keyed.as_generator(seed)

        def standardized(shape):
            u = gen.standard_normal(shape)
            u = u - p_arr @ u
            scale = np.sqrt(p_arr @ u**2)
            return u / np.where(scale > 0, scale, 1.0)

        m = m_mean + m_sd * standardized((N, d))
        eps = eps_mean + eps_sd * standardized(N)
        return cls(m, eps, p_arr, sigma)

    def __repr__(self) -> str:
        return (f"GaussianClients(N={self.N}, d={self.d}, eps_bar={self.average_sensitivity:.4g}, "
                f"sigma={self.sigma:g})")

    @property
    def N(self) -> int:
        """Number of clients."""
        return int(self.eps.size)

    @property
    def d(self) -> int:
        """Dimension of θ."""
        return int(self.m.shape[1])

    @property
    def average_sensitivity(self) -> float:
        r""":math:`\bar ε = Σ_i p_i ε_i`."""
        return float(self.p @ self.eps)

    @property
    def stable_point(self) -> np.ndarray:
        r""":math:`θ_{\mathrm{PS}} = \bar m/(1 - \bar ε)`, shape (d,) (ValueError when :math:`\bar ε \ge 1`)."""
        return np.atleast_1d(stable_point(self.m, self.eps, self.p))

    def local_gradients(self, theta):
        r""":math:`∇f_i(θ; θ) = (1 - ε_i)θ - m_i` of every client, shape (N, d)."""
        th = model_vector("theta", theta, self.d)
        return (1.0 - self.eps)[:, None] * th - self.m

    def dissimilarity(self, theta=None):
        r""":math:`ς^{2}(θ) = Σ_i p_i \|∇f_i(θ; θ) - ∇f(θ; θ)\|^{2}`, the gradient dissimilarity (at :math:`θ_{\mathrm{PS}}` by default).

        In the example it equals :math:`\mathrm{Var}_p(m) + 2 \mathrm{Cov}_p(m, ε)θ + \mathrm{Var}_p(ε)θ^{2}` per
        coordinate: a spread of the sensitivities counts :math:`|\theta|` times as much as
        a spread of the data locations.
        """
        theta = self.stable_point if theta is None else theta
        g = self.local_gradients(theta)
        dev = g - self.p @ g
        return float(self.p @ np.einsum("nd,nd->n", dev, dev))


# -------------------------------------------------------------- step sizes
@dataclass(frozen=True)
class StepRule:
    """Step sizes of the local iterations: :math:`η_t = β/(t + t_0)` (decaying) or :math:`η_t = β` (constant).

    ``t`` counts local iterations from 0.

    Examples
    --------
    >>> StepRule.decaying(2.0, 4.0)(np.arange(3)).tolist()
    [0.5, 0.4, 0.3333333333333333]
    """

    beta: float
    offset: float = 0.0
    kind: str = "decaying"

    def __post_init__(self):
        object.__setattr__(self, "kind", check_choice("kind", self.kind, ("decaying", "constant")))
        object.__setattr__(self, "beta", check_real("beta", self.beta, low=0, low_open=True, scalar=True))
        offset = check_real("offset", self.offset, low=0, low_open=True, scalar=True) if self.kind == "decaying" else 0.0
        object.__setattr__(self, "offset", offset)

    @classmethod
    def decaying(cls, beta, offset):
        """:math:`η_t = β/(t + t_0)`, β > 0, :math:`t_0 > 0` (``offset``; Li et al. and the P-FedAvg paper write γ)."""
        return cls(beta, offset, "decaying")

    @classmethod
    def constant(cls, eta):
        """:math:`η_t = η` for every t, η > 0 (checked under its name here: the rule stores it as ``beta``)."""
        return cls(check_real("eta", eta, low=0, low_open=True, scalar=True), 0.0, "constant")

    @classmethod
    def default(cls, clients, E, *, scaled=False):
        r"""Li et al.'s choice with the stable problem's constants: β = 2/μ̃, t₀ = max(8L/μ̃, E).

        μ̃ = 1 − ε̄ is the strong monotonicity of the example's gradient map
        θ ↦ (1 − ε̄)θ − m̄ and L = 1 its smoothness (:math:`L = N \max p_i` for the
        rescaled objectives of scheme II).
        """
        if not isinstance(clients, GaussianClients):
            raise TypeError(f"clients must be a GaussianClients; got {type(clients).__name__}")
        mu = 1.0 - clients.average_sensitivity
        if not mu > 0:
            clients.stable_point  # raises the ε̄ >= 1 error
        E = check_int("E", E, low=1)
        L = clients.N * float(clients.p.max()) if check_flag("scaled", scaled) else 1.0
        return cls.decaying(2.0 / mu, max(8.0 * L / mu, float(E)))

    @classmethod
    def coerce(cls, value, name="steps"):
        """``value`` as a StepRule: a StepRule is kept, a number is a constant step."""
        if isinstance(value, StepRule):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a StepRule or a constant step size; got {value!r:.60}")
        return cls.constant(check_real(name, value, low=0, low_open=True, scalar=True))

    def __call__(self, t):
        t = np.asarray(t, dtype=float)
        return self.beta / (t + self.offset) if self.kind == "decaying" else np.full(t.shape, self.beta)


# --------------------------------------------------------------- the algorithm
@dataclass(frozen=True)
class FedAvg:
    r"""How P-FedAvg runs: local iterations, participation, step sizes, minibatch and objectives.

    The participation schemes are those of Li et al. (2020) that the P-FedAvg paper analyses (its Theorems
    3.1-3.3). Every value is checked here, once; what depends on the clients (K <= N for scheme II, its equal
    weights, the default steps and their stability) is checked by :func:`p_fedavg` and
    :func:`expected_distance`.

    Parameters
    ----------
    E : int
        Local iterations between aggregations, E >= 1.
    scheme : {"full", "I", "II"}
        Participation: every client, scheme I or scheme II (:data:`SCHEMES`; weights: :func:`p_fedavg`).
    K : int, optional
        Sampled clients per aggregation, K >= 1 (schemes I and II only; K <= N for scheme II).
    steps : StepRule or float, optional
        Step sizes (default :meth:`StepRule.default` for the clients); a number is a constant step.
    batch : int
        Data points per local gradient, >= 1.
    scaled : bool
        Scheme II with the objectives rescaled to :math:`p_i N f_i` and the K models averaged with weights 1/K
        (needed when the weights are unequal: the weights :math:`p_k N/K` sum to one only when every
        :math:`p_k = 1/N`).

    Examples
    --------
    >>> FedAvg(E=5, scheme="I", K=10)
    FedAvg(E=5, scheme='I', K=10, steps=None, batch=1, scaled=False)
    >>> FedAvg(steps=0.1).steps
    StepRule(beta=0.1, offset=0.0, kind='constant')
    """

    E: int = 1
    scheme: str = "full"
    K: Any = None
    steps: Any = None
    batch: int = 1
    scaled: bool = False

    def __post_init__(self):
        E = check_int("E", self.E, low=1)
        scheme = check_choice("scheme", self.scheme, SCHEMES)
        batch = check_int("batch", self.batch, low=1)
        scaled = check_flag("scaled", self.scaled)
        K = self.K
        if scheme == "full":
            if K is not None:
                raise ValueError("K (the number of sampled clients) is used by schemes 'I' and 'II' only; "
                                 "full participation averages all N clients")
        else:
            if K is None:
                raise ValueError(f"scheme {scheme!r} needs K, the number of sampled clients")
            K = check_int("K", K, low=1)
        if scaled and scheme != "II":
            raise ValueError("scaled=True (objectives rescaled to p_i N f_i) belongs to scheme 'II'")
        steps = None if self.steps is None else StepRule.coerce(self.steps, "steps")
        for name, value in (("E", E), ("scheme", scheme), ("K", K), ("steps", steps), ("batch", batch),
                            ("scaled", scaled)):
            object.__setattr__(self, name, value)


# --------------------------------------------------------------- settings
#: The largest absolute value of a coordinate of a start :math:`θ_0` (its squares, in the exact moments,
#: stay below ~1e200).
THETA0_BOUND = 1e100


def _check_stable_steps(steps, drift):
    r"""Refuse a step rule whose largest step :math:`η_0` makes a local iteration blow up: :math:`η_0 \max_i c_i|1 - ε_i| \le 2`.

    So a step's factor :math:`a_i = 1 - η c_i(1 - ε_i)` is in [-1, 1] for :math:`ε_i \le 1`, below 3 beyond.
    """
    eta0 = float(steps(0))
    worst = float(np.max(drift))
    if not eta0 * worst <= 2.0:
        raise ValueError(f"steps must keep the local iterations stable: its largest step eta_0 = {eta0:g} times "
                         f"max_i c_i |1 - eps_i| = {worst:g} must be at most 2; got {steps!r:.80}")


def _settings(clients, fedavg, T, theta0):
    if not isinstance(clients, GaussianClients):
        raise TypeError(f"clients must be a GaussianClients; got {clients!r:.60}")
    if not isinstance(fedavg, FedAvg):
        raise TypeError(f"fedavg must be a perfpriv.performative.FedAvg (E, scheme, K, steps, batch, scaled); "
                        f"got {fedavg!r:.60}")
    T = check_int("T", T, low=1)
    E, scheme, K, batch, scaled = fedavg.E, fedavg.scheme, fedavg.K, fedavg.batch, fedavg.scaled
    N = clients.N
    if scheme == "II":
        K = check_int("K", K, low=1, high=N)
    uniform = np.allclose(clients.p, 1.0 / N, rtol=0, atol=1e-12)
    if scheme == "II" and not uniform and not scaled:
        raise ValueError("scheme 'II' needs p_i = 1/N (its weights p_k N/K do not sum to 1 otherwise); "
                         "pass scaled=True to rescale the objectives to p_i N f_i and average with 1/K")
    theta_ps = clients.stable_point  # raises for eps_bar >= 1
    steps = StepRule.default(clients, E, scaled=scaled) if fedavg.steps is None else fedavg.steps
    th0 = model_vector("theta0", theta0, clients.d, low=-THETA0_BOUND, high=THETA0_BOUND)
    # gradient scale of each client, and the weights of the global (virtual) model
    scale = clients.p * N if scaled else np.ones(N)
    weights = np.full(N, 1.0 / N) if scaled else clients.p
    _check_stable_steps(steps, scale * np.abs(1.0 - clients.eps))
    return dict(T=T, E=E, scheme=scheme, K=K, steps=steps, theta0=th0, batch=batch, scaled=scaled,
                theta_ps=theta_ps, scale=scale, weights=weights)


def _aggregation_moments(clients, s):
    r""":math:`\mathbb{E}[w]` and :math:`\mathbb{E}[ww^\top]` of the aggregation weights w of one aggregation step."""
    N, p, K = clients.N, clients.p, s["K"]
    if s["scheme"] == "full":
        return p, np.outer(p, p)
    if s["scheme"] == "I":
        # w = counts/K, counts ~ Multinomial(K, p)
        return p, (np.diag(p) - np.outer(p, p)) / K + np.outer(p, p)
    # scheme II: w_k = c_k 1{k in S}, |S| = K uniform without replacement; c_k = p_k N/K (= 1/K when scaled)
    c = np.full(N, 1.0 / K) if s["scaled"] else p * N / K
    pair = K * (K - 1) / (N * (N - 1)) if N > 1 else 0.0
    W2 = np.outer(c, c) * pair
    np.fill_diagonal(W2, c**2 * K / N)
    return c * K / N, W2


# --------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class FedAvgRun:
    """Simulated P-FedAvg paths (:func:`p_fedavg`).

    Attributes
    ----------
    theta : numpy.ndarray, shape (trials, T + 1, d)
        The global model :math:`\\bar θ_t = Σ_i w_i θ_i^t` after every local iteration
        (w = p; 1/N with rescaled objectives); at aggregation steps it is
        the server's model.
    theta_ps : numpy.ndarray, shape (d,)
        The stable point it should reach.
    clients : GaussianClients
    T, E, scheme, K, steps, batch, scaled, trials, seed
        Provenance.
    """

    theta: np.ndarray
    theta_ps: np.ndarray
    clients: GaussianClients
    T: int
    E: int
    scheme: str
    K: Any
    steps: StepRule
    batch: int
    scaled: bool
    trials: int
    seed: Any

    def __repr__(self) -> str:
        return (f"FedAvgRun(scheme={self.scheme!r}, E={self.E}, K={self.K}, T={self.T}, trials={self.trials}, "
                f"final mean sq_distance={float(self.mean_sq_distance[-1]):.4g})")

    @property
    def sq_distance(self) -> np.ndarray:
        r""":math:`\|\bar θ_t - θ_{\mathrm{PS}}\|^{2}` of every trial, shape (trials, T + 1)."""
        diff = self.theta - self.theta_ps
        return np.einsum("ktd,ktd->kt", diff, diff)

    @property
    def mean_sq_distance(self) -> np.ndarray:
        r"""Mean over trials of :math:`\|\bar θ_t - θ_{\mathrm{PS}}\|^{2}`, shape (T + 1,)."""
        return self.sq_distance.mean(axis=0)

    @property
    def se(self) -> np.ndarray:
        """Monte Carlo standard error of :attr:`mean_sq_distance`."""
        sq = self.sq_distance
        return sq.std(axis=0, ddof=1) / np.sqrt(sq.shape[0]) if sq.shape[0] > 1 else np.full(sq.shape[1], np.nan)


@dataclass(frozen=True, eq=False)
class FedAvgMoments:
    """Exact first and second moments of P-FedAvg's global model (:func:`expected_distance`).

    Attributes
    ----------
    mean : numpy.ndarray, shape (T + 1, d)
        :math:`\\mathbb{E}\\, \\bar θ_t`.
    sq_distance : numpy.ndarray, shape (T + 1,)
        :math:`\\mathbb{E}\\|\\bar θ_t - θ_{\\mathrm{PS}}\\|^{2}`.
    theta_ps : numpy.ndarray, shape (d,)
    clients, T, E, scheme, K, steps, batch, scaled
        Provenance.
    """

    mean: np.ndarray
    sq_distance: np.ndarray
    theta_ps: np.ndarray
    clients: GaussianClients
    T: int
    E: int
    scheme: str
    K: Any
    steps: StepRule
    batch: int
    scaled: bool

    def __repr__(self) -> str:
        return (f"FedAvgMoments(scheme={self.scheme!r}, E={self.E}, K={self.K}, T={self.T}, "
                f"final sq_distance={float(self.sq_distance[-1]):.4g})")


# ---------------------------------------------------------------- run
def p_fedavg(clients, fedavg=FedAvg(), *, T, theta0=0.0, trials=100, seed=None):
    r"""Simulate P-FedAvg on the Gaussian example (P-FedAvg paper, §2-3 and §5).

    Each local iteration t = 0, ..., T − 1 every client i draws a minibatch
    of ``batch`` points :math:`Z \sim \mathcal{N}(m_i + ε_i θ_i^t, σ^{2} I)` at its *own* current
    model and takes the step :math:`θ_i \leftarrow θ_i - η_t c_i (θ_i - \bar Z)` (:math:`c_i = 1`, or
    :math:`p_i N` with rescaled objectives). After every E-th iteration the server
    averages -- all clients with weights :math:`p_i` (``"full"``), K draws with
    replacement by :math:`p_i` with weights 1/K (``"I"``), or K distinct uniform
    clients with weights :math:`p_k N/K` (``"II"``) -- and broadcasts the average to
    every client.

    Parameters
    ----------
    clients : GaussianClients
    fedavg : FedAvg
        The algorithm (default ``FedAvg()``: full participation, E = 1, the steps of
        :meth:`StepRule.default`).
    T : int
        Local iterations.
    theta0 : float or array_like
        Initial model of every client, coordinates in [-1e100, 1e100] (:data:`THETA0_BOUND`).
    trials, seed
        Independent runs and the root of their keyed streams (trial -> iteration -> "data" | "sample").

    Returns
    -------
    FedAvgRun

    Raises
    ------
    ValueError
        When ε̄ >= 1 (no stable point), and for scheme II with unequal weights unless ``scaled=True``.

    Examples
    --------
    >>> c = GaussianClients.example(N=5, m_mean=1.0, eps_mean=0.5, m_sd=0.5)
    >>> run = p_fedavg(c, FedAvg(E=5), T=400, trials=50, seed=1)
    >>> run.theta.shape, bool(run.mean_sq_distance[-1] < 0.01 * run.mean_sq_distance[0])
    ((50, 401, 1), True)
    """
    s = _settings(clients, fedavg, T, theta0)
    trials = check_int("trials", trials, low=1)
    N, d = clients.N, clients.d
    check_array_size("the paths (trials x (T + 1) x d values)", trials=trials, T=s["T"] + 1, d=d)
    check_array_size("the clients' models (trials x N x d values)", trials=trials, N=N, d=d)
    keys = keyed.root_key(seed).child(np.arange(trials))
    x = np.broadcast_to(s["theta0"], (trials, N, d)).copy()
    path = np.empty((trials, s["T"] + 1, d))
    path[:, 0] = s["weights"] @ x
    c, m, eps = s["scale"][:, None], clients.m, clients.eps[:, None]
    noise = clients.sigma / np.sqrt(s["batch"])
    rows = np.arange(trials)[:, None]
    for t in range(s["T"]):
        eta = float(s["steps"](t))
        kt = keys.child(np.int64(t))
        xi = kt.child("data").normal(N * d).reshape(trials, N, d)
        z = m + eps * x + noise * xi
        x = x - eta * c * (x - z)
        if (t + 1) % s["E"] == 0:
            w = np.zeros((trials, N))
            if s["scheme"] == "full":
                w[:] = clients.p
            elif s["scheme"] == "I":
                u = kt.child("sample").uniform(s["K"])
                idx = np.minimum(np.searchsorted(np.cumsum(clients.p), u, side="right"), N - 1)
                np.add.at(w, (np.broadcast_to(rows, idx.shape), idx), 1.0 / s["K"])
            else:
                order = np.argsort(kt.child("sample").uniform(N), axis=1)[:, :s["K"]]
                coef = np.full(N, 1.0 / s["K"]) if s["scaled"] else clients.p * N / s["K"]
                w[np.broadcast_to(rows, order.shape), order] = coef[order]
            x = np.broadcast_to(np.einsum("kn,knd->kd", w, x)[:, None, :], x.shape).copy()
        path[:, t + 1] = np.einsum("n,knd->kd", s["weights"], x)
    return FedAvgRun(path, s["theta_ps"], clients, s["T"], s["E"], s["scheme"], s["K"], s["steps"], s["batch"],
                     s["scaled"], trials, seed)


def expected_distance(clients, fedavg=FedAvg(), *, T, theta0=0.0):
    r"""Exact :math:`\mathbb{E}\|\bar θ_t - θ_{\mathrm{PS}}\|^{2}` of P-FedAvg on the Gaussian example, for every t (no simulation).

    A local iteration maps client i's model to :math:`a_i θ_i + b_i` + noise, with
    :math:`a_i = 1 - η c_i (1 - ε_i)`, :math:`b_i = η c_i m_i` and noise variance :math:`(η c_i σ)^{2}`/batch;
    the mean μ and covariance Γ of the local models (per coordinate) follow :math:`μ \leftarrow aμ + b` and
    :math:`Γ \leftarrow \operatorname{diag}(a)\, Γ \operatorname{diag}(a) + \operatorname{diag}(\text{noise variances})`,
    Γ of the form :math:`v αα^\top + \operatorname{diag}(δ)` (O(N) a step). An aggregation gives every client
    :math:`y = w^\top θ`: :math:`\mathbb{E} y = \bar w^\top μ` and
    :math:`\mathbb{E} y^{2} = \operatorname{tr}(W(Γ + μμ^\top))` with :math:`\bar w = \mathbb{E} w`,
    :math:`W = \mathbb{E} ww^\top`; then
    :math:`\mathbb{E}\|g^\top θ - θ_{\mathrm{PS}}\|^{2} = Σ_{\text{coordinates}} [g^\top Γ g + (g^\top μ - θ_{\mathrm{PS}})^{2}]`
    for the global weights g (proof: chapter 10). W is :math:`pp^\top` (full participation),
    :math:`pp^\top + (\operatorname{diag} p - pp^\top)/K` (scheme I) or :math:`W_{kk} = c_k^{2} K/N`,
    :math:`W_{jk} = c_j c_k K(K - 1)/(N(N - 1))` (scheme II, aggregation weights :math:`c_k`).

    Parameters
    ----------
    clients, fedavg, T, theta0
        As in :func:`p_fedavg`.

    Returns
    -------
    FedAvgMoments

    Examples
    --------
    >>> c = GaussianClients.example(N=4, m_mean=1.0, eps_mean=0.5, sigma=0.0)
    >>> mom = expected_distance(c, FedAvg(steps=1.0), T=2)   # noiseless, η = 1: θ ← m̄ + ε̄θ
    >>> mom.mean.ravel().round(4).tolist()
    [0.0, 1.0, 1.5]
    """
    s = _settings(clients, fedavg, T, theta0)
    N, d = clients.N, clients.d
    c = s["scale"]
    g, ps = s["weights"], s["theta_ps"]
    wbar, W2 = _aggregation_moments(clients, s)
    W2_diag = np.diag(W2).copy()
    drift = c * (1.0 - clients.eps)                   # a_i = 1 − η drift_i
    push = c[:, None] * clients.m                      # b_i = η push_i
    noise2 = (c * clients.sigma) ** 2 / s["batch"]     # noise variance / η²
    etas = np.asarray(s["steps"](np.arange(s["T"])), dtype=float)
    # Γ_c = v_c ααᵀ + diag(δ) per coordinate c: rank one after an aggregation, plus the new noise
    mu = np.broadcast_to(s["theta0"], (N, d)).copy()
    alpha, delta, v = np.ones(N), np.zeros(N), np.zeros(d)
    means = np.empty((s["T"] + 1, d))
    dist = np.empty(s["T"] + 1)
    g2 = g * g

    def record(t):
        gm = g @ mu
        means[t] = gm
        dist[t] = float(v.sum() * (g @ alpha) ** 2 + g2 @ delta + np.sum((gm - ps) ** 2))

    record(0)
    E = s["E"]
    for t in range(s["T"]):
        eta = etas[t]
        a = 1.0 - eta * drift
        mu = a[:, None] * mu + eta * push
        alpha = a * alpha
        delta = a * a * delta + eta * eta * noise2
        if (t + 1) % E == 0:
            y_mean = wbar @ mu                                              # (d,)
            second = v * (alpha @ W2 @ alpha) + W2_diag @ delta + np.einsum("ic,ij,jc->c", mu, W2, mu)
            v = np.maximum(second - y_mean**2, 0.0)
            mu = np.broadcast_to(y_mean, (N, d)).copy()
            alpha, delta = np.ones(N), np.zeros(N)
        record(t + 1)
    return FedAvgMoments(means, dist, s["theta_ps"], clients, s["T"], s["E"], s["scheme"], s["K"], s["steps"],
                         s["batch"], s["scaled"])
