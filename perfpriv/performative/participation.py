r"""Both feedback loops at once: private federated rounds whose clients leave after a leak.

One round of the book's population loop (:func:`perfpriv.engine.simulate`) is here one aggregation period
of P-FedAvg with N current clients (:class:`PrivateFederatedRound`):

1. every client draws its data law (:class:`ClientLaw`), starts from the deployed model θ and runs E
   local stochastic gradient steps of the squared loss (a full-participation :class:`~perfpriv.performative.FedAvg`)
   on data :math:`Z \sim \mathcal{N}(m_i + ε_i θ_i, σ^{2}/b \cdot I)` (b = ``batch``) drawn at its *current local model*
   (the performative shift of the P-FedAvg paper);
2. its record is its average descent direction over the period,
   :math:`g_i = (θ_i^E - θ)/h` with :math:`h = Σ η` the period's total step, clipped to
   the ball of radius R;
3. the server releases the private mean of the records with the Gaussian
   mechanism of the book (eq. 6): :math:`o = \operatorname{mean}(\operatorname{clip}(g_i)) + \mathcal{N}(0, γ^{2}/N\, I)`, and
   deploys :math:`θ' = θ + h o`;
4. every client runs the book's membership test on the release (eq. 8,
   :func:`perfpriv.leakage.llr_coefficients`): a client whose Λ exceeds τ has leaked, and the behaviour
   (:class:`perfpriv.behaviour.Memoryless`) decides who leaves and who is recruited.

The round's error is :math:`\|θ' - θ_{\mathrm{PS}}\|^{2}`, :math:`θ_{\mathrm{PS}} = m/(1 - ε)` the stable point of
the clients' law (:func:`perfpriv.performative.stable_point`). Clients are drawn afresh every round (the
analogue of the book's Assumption 1), so that the population is a count, as the engine expects; the
deployed model is a state carried from one round to the next (:class:`StatefulMechanism`).
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import engine, keyed, leakage
from .._stats import log_normal_density
from .._validate import check_array_size, check_choice, check_instance, check_int, check_probability, check_real, check_shape
from ..gaussian import GAMMA_RANGE
from ._checks import model_vector
from .federated import THETA0_BOUND, FedAvg, StepRule, stable_point

__all__ = ["StatefulMechanism", "ClientLaw", "PrivateFederatedRound"]

#: The local step of :class:`PrivateFederatedRound` when its ``fedavg`` leaves ``steps`` open.
DEFAULT_STEP = 0.5


@dataclass(frozen=True)
class ClientLaw:
    r"""The law every round's clients are drawn from in :class:`PrivateFederatedRound`.

    Client i draws its data location :math:`m_i \sim \mathcal{N}(m, s_m^{2} I)` and its sensitivity
    :math:`ε_i \sim \mathcal{N}(ε, s_ε^{2})`; its data points are :math:`Z \sim \mathcal{N}(m_i + ε_i θ, σ^{2} I)`
    at its model θ. Every value is checked here, once; the mechanism checks that m has its d coordinates.

    Parameters
    ----------
    m : float or 1-D array_like
        Mean data location: a number (every coordinate) or d coordinates, each within 1e100 in absolute
        value (:data:`~perfpriv.performative.federated.THETA0_BOUND`); kept as a float or a tuple of floats.
    m_sd : float
        Standard deviation :math:`s_m` of each coordinate of :math:`m_i`, in [0, 1e100].
    eps : float
        Mean sensitivity ε in (−1, 1): the stable point m/(1 − ε) must exist and attract.
    eps_sd : float
        Standard deviation :math:`s_ε` of :math:`ε_i`, in [0, 1e100].
    sigma : float
        Noise σ of one data point, in [0, 1e100].

    Examples
    --------
    >>> ClientLaw(m=2.0, eps=0.8, eps_sd=0.3)
    ClientLaw(m=2.0, m_sd=1.0, eps=0.8, eps_sd=0.3, sigma=1.0)
    >>> ClientLaw(m=[2.0, -1.0]).m
    (2.0, -1.0)
    """

    m: Any = 1.0
    m_sd: float = 1.0
    eps: float = 0.5
    eps_sd: float = 0.0
    sigma: float = 1.0

    def __post_init__(self):
        # locations and spreads up to THETA0_BOUND, so that the record spread (their squares) stays finite
        m = np.asarray(check_real("m", self.m, low=-THETA0_BOUND, high=THETA0_BOUND), dtype=float).reshape(-1)
        if m.size == 0:
            raise ValueError(f"m must be a number or a vector of coordinates; got shape {np.shape(self.m)}")
        m = float(m[0]) if m.size == 1 else tuple(float(v) for v in m)
        m_sd = check_real("m_sd", self.m_sd, low=0.0, high=THETA0_BOUND, scalar=True)
        eps = check_real("eps", self.eps, low=-1.0, high=1.0, low_open=True, high_open=True, scalar=True)
        eps_sd = check_real("eps_sd", self.eps_sd, low=0.0, high=THETA0_BOUND, scalar=True)
        sigma = check_real("sigma", self.sigma, low=0.0, high=THETA0_BOUND, scalar=True)
        for name, value in (("m", m), ("m_sd", float(m_sd)), ("eps", float(eps)), ("eps_sd", float(eps_sd)),
                            ("sigma", float(sigma))):
            object.__setattr__(self, name, value)


def _local_training(fedavg):
    """``fedavg`` as the local training of a round: full participation, its steps filled in (DEFAULT_STEP)."""
    check_instance("fedavg", fedavg, FedAvg, "perfpriv.performative.FedAvg (E, steps, batch of the local training)")
    if fedavg.scheme != "full":
        raise ValueError(f"fedavg must have scheme 'full' (every current client trains and is averaged each round; "
                         f"the engine's behaviour decides who takes part); got scheme {fedavg.scheme!r}")
    if fedavg.steps is None:
        fedavg = dataclasses.replace(fedavg, steps=StepRule.constant(DEFAULT_STEP))
    return fedavg


class StatefulMechanism(engine.Mechanism):
    """Base of the mechanisms of this module: a state carried across rounds by the engine.

    Subclasses implement

    ``initial_state(batch) -> numpy.ndarray``
        The state of every (cell, level, trial) of a batch of that shape, shape ``batch + state_shape``;
    ``advance(state, n, level, keys, live, t, need_error) -> (RoundOutcome, new_state)``
        One round, as :meth:`perfpriv.engine.Mechanism.draw_round`, from and to a state.

    :func:`perfpriv.engine.simulate` advances the state one round at a time, freezes it for stopped trials,
    and returns the final one as ``run.mechanism_state`` (shape ``cells + levels + (trials,) + state_shape``).
    A collapsed platform keeps serving its last model, so the preset repeats the last error after a
    collapse; the mean field is refused (it does not follow states).
    """

    stateful = True

    def resolved(self, conventions):
        out = copy.copy(self)
        out._fill_options(conventions)
        return out

    def _fill_options(self, conventions):
        """Fill options left open from ``conventions`` (subclasses)."""

    def initial_state(self, batch):  # pragma: no cover - interface
        raise NotImplementedError

    def advance(self, state, n, level, keys, live, t, need_error=True):  # pragma: no cover - interface
        raise NotImplementedError

    def draw_round(self, n, level, keys, live, t, need_error=True):
        raise ValueError(f"{type(self).__name__} carries a state across rounds: run it through "
                         "perfpriv.engine.simulate, which calls advance(state, ...)")

    def policy_preset(self, conventions):
        return dict(cap=20000, floor=1, stop=0, collapse="repeat", penalty=0.0)

    def leak_probability(self, n, level):
        raise ValueError(f"the mean field of {type(self).__name__} needs its state (the deployed model), which "
                         "perfpriv.engine.mean_field does not carry; simulate it with perfpriv.engine.simulate")

    def expected_error(self, n, level):
        raise ValueError(f"the expected error of {type(self).__name__} depends on its state (the deployed model); "
                         "use collapse='repeat' or 'penalty' and perfpriv.engine.simulate")


class PrivateFederatedRound(StatefulMechanism):
    """One private P-FedAvg aggregation period as a mechanism of the engine (see module docstring).

    Parameters
    ----------
    gamma : float, 1-D array_like or perfpriv.engine.Schedule
        Per-client noise scale(s) γ of the released mean of the records.
    tau, R : float
        Membership threshold τ > 0 and clipping radius R > 0 of a client's record.
    clients : ClientLaw, optional
        The law every round's clients are drawn from (default ``ClientLaw()``: m = 1, :math:`s_m` = 1,
        ε = 0.5, :math:`s_ε` = 0, σ = 1); its m has one coordinate or d.
    fedavg : perfpriv.performative.FedAvg, optional
        The clients' local training, E steps per round on ``batch`` points per gradient (default ``FedAvg()``:
        E = 1, batch = 1); scheme ``"full"`` (who takes part is the behaviour's); ``steps`` left open is a
        constant 0.5 (:data:`DEFAULT_STEP`); a :class:`~perfpriv.performative.federated.StepRule` is indexed
        by the local iteration k = (t − 1)E + s − 1. Steps that make the models overflow (each multiplies a
        local model by :math:`1 - η(1 - ε_i)`) raise ``ValueError`` naming ``fedavg.steps`` in that round.
    theta0, d
        The model deployed before round 1 (a number or d coordinates within 1e100 in absolute value) and its
        dimension.
    statistic : {"paper", "exact"}, optional
        Membership statistic (default from ``conventions``).

    Examples
    --------
    >>> from perfpriv import engine
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = PrivateFederatedRound(1.0, tau=0.5, R=20.0, clients=ClientLaw(m=1.0, eps=0.5))
    >>> run = engine.simulate(mech, Memoryless(q=0.3, r=0.2), T=20, n0=50, trials=4,
    ...                       policy=engine.Policy(cap=200), seed=0)
    >>> run.population.shape, run.details["theta"].shape, mech.theta_ps.tolist()
    ((4, 21), (4, 20), [2.0])
    >>> PrivateFederatedRound(1.0, tau=0.5, R=20.0, fedavg=FedAvg(E=2)).fedavg.steps
    StepRule(beta=0.5, offset=0.0, kind='constant')
    """

    name = "private_federated_round"
    level_name = "gamma"

    def __init__(self, gamma, *, tau, R, clients=ClientLaw(), fedavg=FedAvg(), theta0=0.0, d=1, statistic=None):
        self.levels = engine.make_levels(gamma, "gamma", low=GAMMA_RANGE[0], high=GAMMA_RANGE[1])
        self.tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
        self.R = check_real("R", R, low=0, low_open=True, scalar=True)
        self.d = check_int("d", d, low=1)
        self.clients = check_instance("clients", clients, ClientLaw,
                                      "perfpriv.performative.ClientLaw (m, m_sd, eps, eps_sd, sigma)")
        self.fedavg = _local_training(fedavg)
        self._m = model_vector("m", clients.m, self.d)      # the law's location in d coordinates
        self.theta0 = model_vector("theta0", theta0, self.d, low=-THETA0_BOUND, high=THETA0_BOUND)
        self.statistic = None if statistic is None else check_choice("statistic", statistic, leakage.STATISTICS)
        self.theta_ps = np.atleast_1d(stable_point(self._m[None, :], [clients.eps]))

    def __repr__(self) -> str:
        g = self.levels.describe()
        text = f"{g:g}" if isinstance(g, float) else f"<{'schedule' if self.levels.per_round else 'grid'} {np.shape(g)}>"
        law, fed = self.clients, self.fedavg
        return (f"PrivateFederatedRound(gamma={text}, tau={self.tau:g}, R={self.R:g}, eps={law.eps:g}, "
                f"eps_sd={law.eps_sd:g}, m_sd={law.m_sd:g}, E={fed.E}, d={self.d})")

    def _fill_options(self, conventions):
        if self.statistic is None:
            self.statistic = "exact" if conventions == "authors" else "paper"

    def options(self):
        return dict(tau=self.tau, R=self.R, clients=self.clients, fedavg=self.fedavg, theta0=self.theta0.tolist(),
                    d=self.d, statistic=self.statistic)

    def record_spread(self, theta):
        r"""Per-coordinate variance v(θ) of a record when E = 1: :math:`s_m^{2} + s_ε^{2}θ^{2} + σ^{2}/b` (b = ``fedavg.batch``).

        With one local step the record is :math:`g = Z - θ = m_i + (ε_i - 1)θ` + noise, Gaussian with this
        variance (for d = 1, or :math:`s_ε = 0`, exactly the i.i.d. N(μ(θ), v(θ) I) records of the book's
        Assumption 1). ``theta`` is a model coordinate, \|θ| <= 1e100
        (:data:`~perfpriv.performative.federated.THETA0_BOUND`); a variance beyond the doubles is ``inf``.
        """
        th = np.asarray(check_real("theta", theta, low=-THETA0_BOUND, high=THETA0_BOUND), dtype=float)
        with np.errstate(over="ignore"):                 # (s_ε θ)² beyond the doubles: inf, the true limit
            law = self.clients
            return law.m_sd**2 + (law.eps_sd * th) ** 2 + law.sigma**2 / self.fedavg.batch

    def leak_probability_at(self, theta, n, gamma):
        """Leak probability of a client when the deployed model is θ (E = 1, d = 1 or :math:`s_ε = 0`).

        The records are then i.i.d. :math:`\\mathcal{N}(μ(θ), v(θ) I)` (:meth:`record_spread`), and Λ is
        homogeneous of degree 0 in records, noise and γ, so the probability is the book's :math:`p_τ` (Lemma
        8, :func:`perfpriv.leakage.marginal_leak_probability`) at the standardized noise
        :math:`γ/\\sqrt{v(θ)}`, clipping neglected.
        """
        self._check_gaussian_records()
        n = check_real("n", n, low=2)
        gamma = check_real("gamma", gamma, low=0, low_open=True)
        v = np.asarray(self.record_spread(theta), dtype=float)
        scaled = np.asarray(gamma, float) / np.sqrt(v)
        res = leakage.marginal_leak_probability(n, scaled, tau=self.tau, d=self.d, R=1e3 * (1 + float(np.max(scaled))),
                                                statistic=self.statistic or "paper", method="quadrature")
        return res.p

    def survival_threshold(self, theta, *, n, q, r):
        r""":math:`γ_c(θ) = \sqrt v(θ)\cdot u_c(n)`: the noise at which the growth factor 1 + r − (q + r)p is 1.

        :math:`u_c(n)` solves :math:`p_τ(n, u) = r/(q + r)` for standardized records (the survival threshold
        of the book's chapter 05 at unit record variance); more noise than :math:`γ_c(θ)` makes the client
        population grow in expectation while the deployed model is θ. Exact where :meth:`leak_probability_at`
        is.

        Parameters
        ----------
        theta : float or array_like
            Deployed model(s) (d = 1: numbers); an array of them gives an array of thresholds.
        n : float
            Number of clients n >= 2.
        q, r : float
            As in :class:`perfpriv.behaviour.Memoryless` (r > 0).
        """
        from scipy import optimize

        self._check_gaussian_records()
        q = check_probability("q", q, scalar=True)
        r = check_probability("r", r, scalar=True)
        n = check_real("n", n, low=2, scalar=True)
        if r == 0:
            raise ValueError("r must be > 0: without recruits no noise level keeps the growth factor at 1 "
                             "(every leak is a loss that nothing replaces)")
        target = r / (q + r)
        v = np.asarray(self.record_spread(theta), dtype=float)
        if target >= 1.0:
            return 0.0 * v if v.ndim else 0.0

        def gap(log_u):
            return float(leakage.marginal_leak_probability(n, math.exp(log_u), tau=self.tau, d=self.d, R=1e3 * (1 + math.exp(log_u)),
                                                           statistic=self.statistic or "paper",
                                                           method="quadrature").p) - target
        # p_τ(n, u) falls with u: the root lies in [1e-4, 1e4] at every τ the book uses; at extreme τ the
        # bracket is widened by factors of 1e4 up to [1e-100, 1e100], beyond which u_c is reported as 0 (even
        # that little noise keeps the population) or inf (no noise does)
        step, lo, hi = math.log(1e4), math.log(1e-4), math.log(1e4)
        g_lo, g_hi = gap(lo), gap(hi)
        while g_lo < 0 and lo > math.log(1e-100):
            hi, g_hi, lo = lo, g_lo, lo - step
            g_lo = gap(lo)
        while g_hi > 0 and hi < math.log(1e100):
            lo, g_lo, hi = hi, g_hi, hi + step
            g_hi = gap(hi)
        if g_lo < 0:
            u = 0.0
        elif g_hi > 0:
            u = math.inf
        else:
            u = math.exp(optimize.brentq(gap, lo, hi, xtol=1e-12))
        with np.errstate(invalid="ignore"):
            out = np.where(v == 0, 0.0, np.sqrt(v) * u)        # identical records: nothing to infer
        return float(out) if out.ndim == 0 else out

    def stationary_error(self, n, gamma):
        r"""Long-run :math:`E\|θ_t - θ_{\mathrm{PS}}\|^2` with n clients every round (E = 1, constant step h, no clipping).

        With :math:`e = θ - θ_{\mathrm{PS}}`, :math:`a = 1 - h(1 - ε)` and b = ``fedavg.batch``, the fixed
        point of the recursion :math:`e' = a e + h\,(\text{mean of the record noises} + \text{release noise})`
        is (proof: chapter 10)

            :math:`E\|e\|^{2} = h^{2} (d(s_m^{2} + σ^{2}/b + γ^{2}) + s_ε^{2}\|θ_{\mathrm{PS}}\|^{2}) / (n(1 - a^{2}) - h^{2} s_ε^{2})`,

        the analogue of Lemma 3's :math:`(γ^{2} \mathrm{Tr} Σ^{-1} + d)/N` for a model trained by private
        federated rounds. Raises ValueError when the recursion has no fixed point (:math:`|a| \geq 1`, or
        :math:`n(1 - a^{2}) \le h^{2} s_ε^{2}`: the shift heterogeneity feeds the error back faster than the
        rounds damp it).

        Parameters
        ----------
        n, gamma : float or array_like
            Clients per round, n >= 1, and noise scale γ > 0.

        Returns
        -------
        float or numpy.ndarray
            The stationary :math:`E\|θ_t - θ_{\mathrm{PS}}\|^2`; inf where it exceeds the double range.
        """
        self._check_gaussian_records()
        law, step = self.clients, self.fedavg.steps
        if step.kind != "constant":
            raise ValueError("a stationary error needs a constant step (decaying steps make the error vanish)")
        n = np.asarray(check_real("n", n, low=1), dtype=float)
        gamma = np.asarray(check_real("gamma", gamma, low=0), dtype=float)
        h = step.beta
        a = 1.0 - h * (1.0 - law.eps)
        den = n * (1.0 - a * a) - h * h * law.eps_sd**2
        if not abs(a) < 1 or np.any(den <= 0):
            raise ValueError(f"the model error has no stationary law: a = 1 - h(1 - eps) = {a:.4g} and "
                             f"n(1 - a^2) - h^2 eps_sd^2 = {float(np.min(den)):.4g} (need |a| < 1 and a positive value)")
        with np.errstate(over="ignore"):     # an error beyond the double range (gamma ~ 1e154 and above): inf
            num = h * h * (self.d * (law.m_sd**2 + law.sigma**2 / self.fedavg.batch + gamma**2)
                           + law.eps_sd**2 * float(self.theta_ps @ self.theta_ps))
            out = num / den
        return float(out) if np.ndim(out) == 0 else out

    def _check_finite(self, what, values, t):
        """Refuse a round whose clients' local steps diverged (no step is stable for every :math:`ε_i`)."""
        if not np.all(np.isfinite(values)):
            law, fed = self.clients, self.fedavg
            raise ValueError(f"fedavg.steps: the {what} overflowed in round {t} (the clients' local steps diverge); "
                             f"choose smaller local steps: each multiplies a client's model by 1 - step*(1 - eps_i) "
                             f"(got steps={fed.steps!r}, E={fed.E}, eps={law.eps:g}, eps_sd={law.eps_sd:g})")

    def _check_gaussian_records(self):
        E, eps_sd = self.fedavg.E, self.clients.eps_sd
        if E != 1 or (self.d > 1 and eps_sd > 0):
            raise ValueError("the records are exactly i.i.d. Gaussian only for E=1 (and d=1 or eps_sd=0); got "
                             f"E={E}, d={self.d}, eps_sd={eps_sd:g}")

    def initial_state(self, batch):
        """The deployed model :math:`θ_0` of every run of a batch of that shape: shape ``batch + (d,)``."""
        batch = check_shape("batch", batch, trailing=self.d)
        return np.broadcast_to(self.theta0, batch + (self.d,)).copy()

    def advance(self, state, n, level, keys, live, t, need_error=True):
        d, E, law = self.d, self.fedavg.E, self.clients
        if not isinstance(state, np.ndarray) or state.dtype.kind not in "fiu" or state.ndim < 1 or state.shape[-1] != d:
            raise ValueError(f"state must be the deployed models, a numeric array ending with d = {d} coordinates "
                             f"(initial_state); got {type(state).__name__} of shape {np.shape(state)}")
        if not np.isfinite(state).all():
            raise ValueError("state must hold finite models (no NaN or inf coordinates)")
        n, live = keyed.check_batch(n, keys, live)
        level = check_real("gamma", level, low=0, allow_inf=True)
        t = check_int("t", t, low=1)
        batch = state.shape[:-1]
        check_array_size("the clients' records of a round (largest n x runs x ((E + 1) d + 1) numbers)",
                         n=float(n.max()) if n.size else 0.0, runs=float(np.prod(batch, dtype=np.float64)),
                         numbers=(E + 1) * d + 1)
        nn = np.broadcast_to(np.where(live, n, 0), batch).reshape(-1).astype(np.int64)
        gg = np.broadcast_to(np.asarray(level, float), batch).reshape(-1)
        theta = state.reshape(-1, d)
        B = nn.size

        def entry_key(purpose):
            k = keys.child(purpose)
            return (np.broadcast_to(k.a, batch).reshape(-1), np.broadcast_to(k.b, batch).reshape(-1))

        owner = np.repeat(np.arange(B), nn)
        idx = np.arange(owner.size, dtype=np.int64) - np.repeat(np.cumsum(nn) - nn, nn)
        ca, cb = entry_key("clients")
        attrs = keyed.Key(ca[owner], cb[owner]).normal_records(idx, d + 1)
        m_i = self._m + law.m_sd * attrs[:, :d]
        eps_i = law.eps + law.eps_sd * attrs[:, d:]
        da, db = entry_key("data")
        xi = keyed.Key(da[owner], db[owner]).normal_records(idx, E * d).reshape(-1, E, d)
        start = theta[owner]
        local = start.copy()
        k0 = (t - 1) * E
        etas = self.fedavg.steps(np.arange(k0, k0 + E))
        noise = law.sigma / math.sqrt(self.fedavg.batch)
        with np.errstate(over="ignore", invalid="ignore"):
            for s in range(E):
                z = m_i + eps_i * local + noise * xi[:, s]
                local = local - etas[s] * (local - z)
            h = float(np.sum(etas))
        self._check_finite("local models", local, t)
        rec = (local - start) / h
        norms = np.sqrt(np.einsum("ij,ij->i", rec, rec))
        clipped = norms > self.R
        rec = rec * np.where(clipped, self.R / np.where(norms > 0, norms, 1.0), 1.0)[:, None]
        sums = np.zeros((B, d))
        np.add.at(sums, owner, rec)
        safe_n = np.maximum(nn, 1)
        mean = sums / safe_n[:, None]
        na, nb = entry_key("noise")
        eta_noise = keyed.Key(na, nb).normal(d) * (gg / np.sqrt(safe_n))[:, None]
        release = mean + eta_noise
        with np.errstate(over="ignore", invalid="ignore"):
            new_theta = theta + h * release
        self._check_finite("deployed model", new_theta, t)
        dev = rec - mean[owner]
        dev_sq = np.einsum("ij,ij->i", dev, dev)
        inner = np.einsum("ij,ij->i", dev, eta_noise[owner])
        leaked = np.zeros(B, dtype=np.int64)
        multi = nn[owner] >= 2
        if np.any(multi):
            own = owner[multi]
            A, Bc, C = leakage.llr_coefficients(np.einsum("ij,ij->i", eta_noise, eta_noise)[own], nn[own], gg[own], d,
                                                self.statistic)
            lam = A * dev_sq[multi] + Bc * inner[multi] + C
            leaked += np.bincount(own[lam > self.tau], minlength=B)
        leaked[nn == 1] = 1                   # a lone client's release is its record: it leaks
        diff = new_theta - self.theta_ps
        with np.errstate(over="ignore", invalid="ignore"):
            err = np.einsum("ij,ij->i", diff, diff)
        self._check_finite("squared distance to theta_PS", err, t)
        spread = np.bincount(owner, weights=dev_sq, minlength=B) / safe_n
        frac_clipped = np.bincount(owner, weights=clipped.astype(float), minlength=B) / safe_n
        shown = np.where((nn > 0)[:, None], new_theta, theta)   # a stopped trial keeps its model
        details = {"theta": shown[:, 0].reshape(batch), "spread": spread.reshape(batch),
                   "clipped": frac_clipped.reshape(batch)}
        out = engine.RoundOutcome(err.reshape(batch), leaked.reshape(batch), details)
        return out, new_theta.reshape(batch + (d,))

    def agent_round(self, n, level, rng, t=1, state=None):
        r"""One aggregation period client by client (:meth:`perfpriv.engine.Mechanism.agent_round`).

        Loops over the clients from the deployed model ``state``; each client's Λ is the difference of the
        release's log densities with and without its record (eq. 8, either statistic); a lone client leaks.
        The new model is the returned state (``details["theta"]``: its first coordinate).
        """
        n = check_int("n", n, low=1)
        t = check_int("t", t, low=1)
        g = float(check_real("gamma", level, low=GAMMA_RANGE[0], high=GAMMA_RANGE[1], scalar=True))
        d, E, law = self.d, self.fedavg.E, self.clients
        theta = self.theta0.copy() if state is None else np.asarray(state, float)
        etas = [float(self.fedavg.steps(np.array((t - 1) * E + s))) for s in range(E)]
        h = sum(etas)
        records = []
        for _ in range(n):
            m_i = self._m + law.m_sd * rng.standard_normal(d)
            eps_i = law.eps + law.eps_sd * rng.standard_normal()
            local = theta.copy()
            for s in range(E):
                z = m_i + eps_i * local + law.sigma / math.sqrt(self.fedavg.batch) * rng.standard_normal(d)
                local = local - etas[s] * (local - z)
            g_i = (local - theta) / h
            norm = float(np.linalg.norm(g_i))
            if norm > self.R:
                g_i = g_i * (self.R / norm)
            records.append(g_i)
        Zc = np.array(records)
        total = Zc.sum(axis=0)
        mean_in = total / n
        o = mean_in + rng.standard_normal(d) * (g / math.sqrt(n))
        theta = theta + h * o
        diff = theta - self.theta_ps
        details = {"theta": theta[0]}
        if n == 1:
            return engine.AgentRound(np.ones(1, dtype=bool), float(diff @ diff), details, theta)
        var_in = g ** 2 / n
        var_out = var_in if self.statistic == "paper" else g ** 2 / (n - 1)
        lam = log_normal_density(o, mean_in, var_in) - log_normal_density(o, (total - Zc) / (n - 1), var_out)
        return engine.AgentRound(lam > self.tau, float(diff @ diff), details, theta)
