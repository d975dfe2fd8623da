r"""Both feedback loops at once: private federated rounds whose clients leave after a leak.

One round of the book's population loop (:func:`perfpriv.engine.simulate`)
is here one aggregation period of P-FedAvg with N current clients:

1. every client draws its data law (location :math:`m_i \sim \mathcal{N}(m, s_m^{2} I)`, sensitivity
   :math:`ε_i \sim \mathcal{N}(ε, s_ε^{2})`), starts from the deployed model θ and runs E local
   stochastic gradient steps of the squared loss on data
   :math:`Z \sim \mathcal{N}(m_i + ε_i θ_i, σ^{2}/b \cdot I)` (b = ``batch``) drawn at its *current local model*
   (the performative shift of the P-FedAvg paper);
2. its record is its average descent direction over the period,
   :math:`g_i = (θ_i^E - θ)/h` with :math:`h = Σ η` the period's total step, clipped to
   the ball of radius R;
3. the server releases the private mean of the records with the Gaussian
   mechanism of the book (eq. 6): :math:`o = \operatorname{mean}(\operatorname{clip}(g_i)) + \mathcal{N}(0, γ^{2}/N\, I)`, and
   deploys :math:`θ' = θ + h o`;
4. every client runs the book's membership test on the release (eq. 8,
   :func:`perfpriv.leakage.llr_coefficients`): a client whose Λ exceeds τ has
   leaked; the behaviour (:class:`perfpriv.behaviour.Memoryless`) then
   removes each leaked client with probability q and lets every other one
   bring a new client with probability r.

The round's error is :math:`\|θ' - θ_{\mathrm{PS}}\|^{2}`, :math:`θ_{\mathrm{PS}} = m/(1 - ε)` the stable point of
the clients' law (:func:`perfpriv.performative.stable_point`).
Both loops at once are one call of the engine with the model's objects,
``engine.simulate(PrivateFederatedRound(gamma, tau=..., R=..., ...), Memoryless(q=..., r=...),
T=..., n0=..., trials=..., policy=...)``.
Clients are drawn afresh every round (the analogue of the book's
Assumption 1: fresh records every round), so that the population is a
count, as the engine expects.

The deployed model is state that the mechanism carries from one round to
the next: :class:`PrivateFederatedRound` is a *stateful* mechanism of the
engine (``stateful = True``, ``initial_state(batch)``, ``advance(state,
...) -> (outcome, state)``); :func:`perfpriv.engine.simulate` threads the
state of every (cell, level, trial) round by round, freezes it for stopped
trials, and returns the final one as ``run.mechanism_state``. The mean field
of a stateful mechanism would need the state too (the leak probability
depends on the deployed model), so ``engine.mean_field`` refuses it with a
clear error.

Symbols: ``gamma`` -- γ, per-client noise scale; ``tau`` -- τ; ``R`` --
clipping radius of a record; ``m``, ``m_sd``, ``eps``, ``eps_sd`` -- the law
of the clients' data locations and sensitivities; ``E`` -- local steps.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from .. import engine, keyed, leakage
from .._stats import log_normal_density
from .._validate import check_array_size, check_choice, check_int, check_probability, check_real, check_shape
from ..gaussian import GAMMA_RANGE
from ._checks import model_vector
from .federated import THETA0_BOUND, StepRule, stable_point

__all__ = ["StatefulMechanism", "PrivateFederatedRound"]


class StatefulMechanism(engine.Mechanism):
    """Base of the mechanisms of this module: a state carried across rounds by the engine.

    Subclasses implement

    ``initial_state(batch) -> numpy.ndarray``
        The state of every (cell, level, trial) of a batch of that shape,
        shape ``batch + state_shape``;
    ``advance(state, n, level, keys, live, t, need_error) -> (RoundOutcome, new_state)``
        One round, as :meth:`perfpriv.engine.Mechanism.draw_round`, from and
        to a state.

    :func:`perfpriv.engine.simulate` starts the state at round 1, advances
    it one round at a time, freezes it for stopped trials, and returns the
    final one as ``run.mechanism_state`` (shape ``cells + levels + (trials,)
    + state_shape``). A collapsed platform keeps serving its last model, so
    the preset scores the rounds after a collapse by repeating the last
    error; the mean field is refused (it does not follow states).
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
        # a collapsed platform keeps serving its last model: its error repeats
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
    tau : float
        Membership threshold τ > 0.
    R : float
        Clipping radius R > 0 of a client's record.
    m : float or array_like of shape (d,)
        Mean data location of the clients' law :math:`(E m_i)`; coordinates in [-1e100, 1e100], as
        for ``theta0`` (``perfpriv.performative.federated.THETA0_BOUND``: the record
        spread squares them).
    m_sd : float
        Data heterogeneity :math:`s_m` in [0, 1e100] (standard deviation of each coordinate of :math:`m_i`).
    eps : float
        Mean sensitivity :math:`ε = E ε_i` in (−1, 1) (the stable point m/(1 − ε) must exist and attract).
    eps_sd : float
        Shift heterogeneity :math:`s_ε` in [0, 1e100] (standard deviation of :math:`ε_i`).
    sigma : float
        Noise σ in [0, 1e100] of one data point.
    E : int
        Local steps per round.
    step : float or perfpriv.performative.federated.StepRule
        Local step sizes, indexed by the local iteration k = (t − 1)E + s − 1.
        A local step η multiplies a client's local model by :math:`1 - η(1 - ε_i)`:
        steps that make the local models (or the deployed one) overflow raise
        ``ValueError`` naming ``step`` in the round where it happens.
    batch : int
        Data points per local gradient.
    theta0 : float or array_like of shape (d,)
        The model deployed before round 1 (coordinates in [-1e100, 1e100]).
    d : int
        Dimension of the model.
    statistic : {"paper", "exact"}, optional
        Membership statistic (default from ``conventions``).

    Examples
    --------
    >>> from perfpriv import engine
    >>> from perfpriv.behaviour import Memoryless
    >>> mech = PrivateFederatedRound(1.0, tau=0.5, R=20.0, m=1.0, eps=0.5)
    >>> run = engine.simulate(mech, Memoryless(q=0.3, r=0.2), T=20, n0=50, trials=4,
    ...                       policy=engine.Policy(cap=200), seed=0)
    >>> run.population.shape, run.details["theta"].shape, mech.theta_ps.tolist()
    ((4, 21), (4, 20), [2.0])
    """

    name = "private_federated_round"
    level_name = "gamma"

    def __init__(self, gamma, *, tau, R, m=1.0, m_sd=1.0, eps=0.5, eps_sd=0.0, sigma=1.0, E=1, step=0.5,
                 batch=1, theta0=0.0, d=1, statistic=None):
        self.levels = engine.make_levels(gamma, "gamma", low=GAMMA_RANGE[0], high=GAMMA_RANGE[1])
        self.tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
        self.R = check_real("R", R, low=0, low_open=True, scalar=True)
        self.d = check_int("d", d, low=1)
        # locations and spreads up to THETA0_BOUND, so that the record spread (their squares) stays finite
        self.m = model_vector("m", m, self.d, low=-THETA0_BOUND, high=THETA0_BOUND)
        self.m_sd = check_real("m_sd", m_sd, low=0.0, high=THETA0_BOUND, scalar=True)
        self.eps = check_real("eps", eps, low=-1.0, high=1.0, low_open=True, high_open=True, scalar=True)
        self.eps_sd = check_real("eps_sd", eps_sd, low=0.0, high=THETA0_BOUND, scalar=True)
        self.sigma = check_real("sigma", sigma, low=0.0, high=THETA0_BOUND, scalar=True)
        self.E = check_int("E", E, low=1)
        self.step = StepRule.coerce(step, "step")
        self.batch = check_int("batch", batch, low=1)
        self.theta0 = model_vector("theta0", theta0, self.d, low=-THETA0_BOUND, high=THETA0_BOUND)
        self.statistic = None if statistic is None else check_choice("statistic", statistic, leakage.STATISTICS)
        self.theta_ps = np.atleast_1d(stable_point(self.m[None, :], [self.eps]))

    def __repr__(self) -> str:
        g = self.levels.describe()
        text = f"{g:g}" if isinstance(g, float) else f"<{'schedule' if self.levels.per_round else 'grid'} {np.shape(g)}>"
        return (f"PrivateFederatedRound(gamma={text}, tau={self.tau:g}, R={self.R:g}, eps={self.eps:g}, "
                f"eps_sd={self.eps_sd:g}, m_sd={self.m_sd:g}, E={self.E}, d={self.d})")

    def _fill_options(self, conventions):
        if self.statistic is None:
            self.statistic = "exact" if conventions == "authors" else "paper"

    def options(self):
        return dict(tau=self.tau, R=self.R, m=self.m.tolist(), m_sd=self.m_sd, eps=self.eps, eps_sd=self.eps_sd,
                    sigma=self.sigma, E=self.E, step=self.step, batch=self.batch, theta0=self.theta0.tolist(),
                    d=self.d, statistic=self.statistic)

    def record_spread(self, theta):
        r"""Per-coordinate variance v(θ) of a record when E = 1: :math:`s_m^{2} + s_ε^{2}θ^{2} + σ^{2}/b` (b = ``batch``).

        With one local step the record is :math:`g = Z - θ = m_i + (ε_i - 1)θ` + noise,
        Gaussian with this variance (per coordinate; for d = 1, or :math:`s_ε = 0`, the
        records are then exactly the i.i.d. N(μ(θ), v(θ) I) records of the
        book's Assumption 1).

        ``theta`` is a model coordinate, \|θ| <= 1e100 (:data:`~perfpriv.performative.federated.THETA0_BOUND`,
        the bound of the start :math:`θ_0`). A variance beyond the largest double :math:`(s_ε|θ| > 1e154)` is ``inf``.
        """
        th = np.asarray(check_real("theta", theta, low=-THETA0_BOUND, high=THETA0_BOUND), dtype=float)
        with np.errstate(over="ignore"):                 # (s_ε θ)² beyond the doubles: inf, the true limit
            return self.m_sd**2 + (self.eps_sd * th) ** 2 + self.sigma**2 / self.batch

    def leak_probability_at(self, theta, n, gamma):
        """Leak probability of a client when the deployed model is θ (E = 1, d = 1 or :math:`s_ε = 0`).

        The records are then i.i.d. :math:`\\mathcal{N}(μ(θ), v(θ) I)` (:meth:`record_spread`),
        and Λ is unchanged when records, noise and γ are all divided by :math:`\\sqrt{v(θ)}`
        (it is homogeneous of degree 0 in them), so the probability is the
        book's :math:`p_τ` (Lemma 8, :func:`perfpriv.leakage.marginal_leak_probability`)
        at the standardized noise :math:`γ/\\sqrt{v(θ)}`, clipping neglected.
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

        :math:`u_c(n)` solves :math:`p_τ(n, u) = r/(q + r)` for standardized records (the
        survival threshold of the book's chapter 05 at unit record variance);
        more noise than :math:`γ_c(θ)` makes the client population grow in
        expectation while the deployed model is θ. Exact for E = 1 (and d = 1
        or :math:`s_ε = 0`), with clipping neglected.

        Parameters
        ----------
        theta : float or array_like
            Deployed model(s) (d = 1: numbers).
        n : float
            Number of clients n >= 2.
        q, r : float
            The clients' leaving and recruiting probabilities (r > 0).

        Returns
        -------
        float or numpy.ndarray
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

        With :math:`e = θ - θ_{\mathrm{PS}}` and :math:`a = 1 - h(1 - ε)`, one round gives
        :math:`e' = a e + h\,(\text{mean of the record noises} + \text{release noise})`, whose
        conditional second moment is :math:`(d(s_m^{2} + σ^{2}/b + γ^{2}) + s_ε^{2}\|θ\|^{2})/n` (b = ``batch``).
        Taking expectations, with :math:`E\|θ\|^{2} = \|θ_{\mathrm{PS}}\|^{2} + E\|e\|^{2}` in the limit, the
        fixed point of the recursion is

            :math:`E\|e\|^{2} = h^{2} (d(s_m^{2} + σ^{2}/b + γ^{2}) + s_ε^{2}\|θ_{\mathrm{PS}}\|^{2}) / (n(1 - a^{2}) - h^{2} s_ε^{2})`,

        the analogue of Lemma 3's :math:`(γ^{2} \mathrm{Tr} Σ^{-1} + d)/N` for a model trained by
        private federated rounds. Raises ValueError when the recursion has no
        fixed point (:math:`|a| \geq 1`, or :math:`n(1 - a^{2}) \le h^{2} s_ε^{2}`: the shift
        heterogeneity feeds the model's own error back faster than the
        rounds damp it).

        Parameters
        ----------
        n : float or array_like
            Clients per round, n >= 1.
        gamma : float or array_like
            Noise scale γ > 0.

        Returns
        -------
        float or numpy.ndarray
            The stationary :math:`E\|θ_t - θ_{\mathrm{PS}}\|^2`; inf where it exceeds the double range.
        """
        self._check_gaussian_records()
        if self.step.kind != "constant":
            raise ValueError("a stationary error needs a constant step (decaying steps make the error vanish)")
        n = np.asarray(check_real("n", n, low=1), dtype=float)
        gamma = np.asarray(check_real("gamma", gamma, low=0), dtype=float)
        h = self.step.beta
        a = 1.0 - h * (1.0 - self.eps)
        den = n * (1.0 - a * a) - h * h * self.eps_sd**2
        if not abs(a) < 1 or np.any(den <= 0):
            raise ValueError(f"the model error has no stationary law: a = 1 - h(1 - eps) = {a:.4g} and "
                             f"n(1 - a^2) - h^2 eps_sd^2 = {float(np.min(den)):.4g} (need |a| < 1 and a positive value)")
        with np.errstate(over="ignore"):     # an error beyond the double range (gamma ~ 1e154 and above): inf
            num = h * h * (self.d * (self.m_sd**2 + self.sigma**2 / self.batch + gamma**2)
                           + self.eps_sd**2 * float(self.theta_ps @ self.theta_ps))
            out = num / den
        return float(out) if np.ndim(out) == 0 else out

    def _check_finite(self, what, values, t):
        """Refuse a round whose clients' local steps diverged (no stability rule covers every client).

        A local step η multiplies a client's local model by :math:`1 - η(1 - ε_i)`; with heterogeneous
        sensitivities :math:`ε_i` no step size is stable for every client drawn, so the divergence is
        detected where it happens, as a clear error instead of overflow warnings and NaN errors.
        """
        if not np.all(np.isfinite(values)):
            raise ValueError(f"step: the {what} overflowed in round {t} (the clients' local steps diverge); "
                             f"choose smaller local steps: each multiplies a client's model by 1 - step*(1 - eps_i) "
                             f"(got step={self.step!r}, E={self.E}, eps={self.eps:g}, eps_sd={self.eps_sd:g})")

    def _check_gaussian_records(self):
        if self.E != 1 or (self.d > 1 and self.eps_sd > 0):
            raise ValueError("the records are exactly i.i.d. Gaussian only for E=1 (and d=1 or eps_sd=0); got "
                             f"E={self.E}, d={self.d}, eps_sd={self.eps_sd:g}")

    def initial_state(self, batch):
        """The deployed model :math:`θ_0` of every run of a batch of that shape: shape ``batch + (d,)``."""
        batch = check_shape("batch", batch, trailing=self.d)
        return np.broadcast_to(self.theta0, batch + (self.d,)).copy()

    def advance(self, state, n, level, keys, live, t, need_error=True):
        d, E = self.d, self.E
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
        m_i = self.m + self.m_sd * attrs[:, :d]
        eps_i = self.eps + self.eps_sd * attrs[:, d:]
        da, db = entry_key("data")
        xi = keyed.Key(da[owner], db[owner]).normal_records(idx, E * d).reshape(-1, E, d)
        start = theta[owner]
        local = start.copy()
        k0 = (t - 1) * E
        etas = self.step(np.arange(k0, k0 + E))
        noise = self.sigma / math.sqrt(self.batch)
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

        Every client draws its law, runs its E local steps in a loop from the deployed model
        ``state`` and clips its record; the release is made and deployed. Each client's
        log-likelihood ratio is the difference of the log densities of the release under the mechanism
        with and without its record (eq. 8, the paper's equal-variance form or the exact remove-one
        form); a lone client leaks. The error is :math:`\|θ' - θ_{\mathrm{PS}}\|^{2}`; the new
        model is the returned state (``details["theta"]``: its first coordinate).
        """
        n = check_int("n", n, low=1)
        t = check_int("t", t, low=1)
        g = float(check_real("gamma", level, low=GAMMA_RANGE[0], high=GAMMA_RANGE[1], scalar=True))
        d, E = self.d, self.E
        theta = self.theta0.copy() if state is None else np.asarray(state, float)
        etas = [float(self.step(np.array((t - 1) * E + s))) for s in range(E)]
        h = sum(etas)
        records = []
        for _ in range(n):
            m_i = self.m + self.m_sd * rng.standard_normal(d)
            eps_i = self.eps + self.eps_sd * rng.standard_normal()
            local = theta.copy()
            for s in range(E):
                z = m_i + eps_i * local + self.sigma / math.sqrt(self.batch) * rng.standard_normal(d)
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
