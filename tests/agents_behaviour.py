"""Agent-by-agent references of the behaviours of :mod:`perfpriv.behaviour` (the tests' oracle).

Written independently of :mod:`perfpriv.engine` and of the behaviours' own
``step``: every round the mechanism decides, record by record, who leaked
(randomized response: each user keeps her answer with probability
1/2 + β; the Gaussian mechanism: each record's log-likelihood ratio, from
the two log densities of the release, against τ); then every user, one at a
time, applies her rule with her own explicit history (leak count, class,
privacy spent), from a numpy Generator. The behaviour objects are read for
their parameters only. The engine and these references agree in law, not
number by number; they are slow (one Python step per user and round), so
use small populations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np



@dataclass
class RR:
    """Randomized response at level ε (one answer per user)."""

    epsilon: float

    @property
    def cost(self):
        return self.epsilon

    def round(self, n, rng):
        beta = 0.5 if math.isinf(self.epsilon) else 0.5 * math.tanh(self.epsilon / 2)
        kept = rng.random(n) < 0.5 + beta
        return kept, 0.0


@dataclass
class Gauss:
    """The Gaussian mechanism of eq. 6 on N(0, I_d) records clipped at R, the paper's statistic (Lemma 6)."""

    gamma: float
    tau: float
    d: int
    R: float

    @property
    def cost(self):
        return 2 * self.R**2 / self.gamma**2

    def round(self, n, rng):
        Z = rng.standard_normal((n, self.d))
        norms = np.linalg.norm(Z, axis=1, keepdims=True)
        Z = Z * np.minimum(1.0, self.R / np.maximum(norms, 1e-300))
        var = self.gamma**2 / n
        total = Z.sum(axis=0)
        o = total / n + rng.standard_normal(self.d) * math.sqrt(var)
        if n == 1:
            return np.ones(1, dtype=bool), float(o @ o)
        # eq. 8 for every record: the log density of o given Z minus that given Z without the record,
        # both with the noise variance gamma^2/N (the paper's Lemma 6)
        mean_in = total / n
        mean_out = (total[None, :] - Z) / (n - 1)
        log_in = -0.5 * float((o - mean_in) @ (o - mean_in)) / var
        log_out = -0.5 * ((o[None, :] - mean_out) ** 2).sum(axis=1) / var
        return log_in - log_out > self.tau, float(o @ o)


def _largest_remainder(n0, weights):
    raw = n0 * np.asarray(weights, float)
    base = np.floor(raw).astype(int)
    order = sorted(range(len(raw)), key=lambda j: (-(raw[j] - base[j]), j))
    for j in order[: n0 - base.sum()]:
        base[j] += 1
    return base


@dataclass
class Run:
    """Trajectories of the reference: ``population`` (trials, T+1), ``leaked`` and ``sq_error`` (trials, T)."""

    population: np.ndarray
    leaked: np.ndarray
    sq_error: np.ndarray


def simulate_agents(mechanism, users, *, T, n0, trials, seed, cap=None, floor=1):
    """Simulate ``users`` (a perfpriv behaviour with scalar parameters) one agent at a time.

    A user is a list ``[class, leaks, spent]``. Each round t, with the N
    users present: the mechanism marks who leaked; then each user in turn
    -- if she leaked, counts the leak and, if she reacts to it, leaves with
    her leaving probability (her class's q; from her k-th leak on for
    ``LeakCount``; q_t = min(1, q + κ D_{t-1}/N_{t-2}) for ``Contagion``);
    adds the round's cost to her spending and leaves if it now exceeds her
    class's tolerance (``BudgetAware``); recruits one new user (class drawn
    from the weights, no leak, nothing spent) with probability r if she did
    not leak (leak rule) or in any case (agnostic rule). Recruits beyond
    ``cap`` are turned away at random; below ``floor`` a fresh user joins.
    """
    kind = type(users).__name__
    rule = users.rule
    r = float(users.r)
    k = getattr(users, "k", 1)
    if kind == "Heterogeneous":
        q_class = [float(x) for x in np.asarray(users.q).reshape(-1)]
        weights = np.asarray(users.weights, float)
    elif kind == "BudgetAware":
        weights = np.asarray(users.weights, float)
        q_class = [float(users.q)] * len(weights)
    else:
        weights = np.ones(1)
        q_class = [float(users.q)]
    tolerance = [float(x) for x in users.tolerance] if kind == "BudgetAware" else [math.inf] * len(weights)
    kappa = float(users.kappa) if kind == "Contagion" else 0.0
    cost = mechanism.cost
    population = np.zeros((trials, T + 1), dtype=np.int64)
    leaked_all = np.zeros((trials, T), dtype=np.int64)
    errors = np.zeros((trials, T))
    for i, rng in enumerate(np.random.default_rng(seed).spawn(trials)):
        agents = []
        for cls, count in enumerate(_largest_remainder(n0, weights)):
            agents += [[cls, 0, 0.0] for _ in range(count)]
        population[i, 0] = len(agents)
        d_prev, n_prev = 0, len(agents)
        for t in range(1, T + 1):
            n = len(agents)
            flags, err = mechanism.round(n, rng)
            errors[i, t - 1] = err
            leaked_all[i, t - 1] = int(flags.sum())
            share = d_prev / n_prev if n_prev > 0 else 0.0
            staying, recruits, departures = [], [], 0
            for agent, leaked in zip(agents, flags):
                stays = True
                if leaked:
                    agent[1] += 1
                    q_t = min(1.0, q_class[agent[0]] + kappa * share)
                    if agent[1] >= k and rng.random() < q_t:
                        stays = False
                        departures += 1
                agent[2] += cost
                if stays and agent[2] > tolerance[agent[0]]:
                    stays = False
                if ((not leaked) or rule == "agnostic") and rng.random() < r:
                    recruits.append([int(rng.choice(len(weights), p=weights)), 0, 0.0])
                if stays:
                    staying.append(agent)
            if cap is not None and len(staying) + len(recruits) > cap:
                keep = max(cap - len(staying), 0)
                chosen = rng.choice(len(recruits), size=keep, replace=False)
                recruits = [recruits[j] for j in chosen]
            agents = staying + recruits
            while len(agents) < floor:
                agents.append([int(rng.choice(len(weights), p=weights)), 0, 0.0])
            d_prev, n_prev = departures, n
            population[i, t] = len(agents)
    return Run(population, leaked_all, errors)


__all__ = ["RR", "Gauss", "Run", "simulate_agents"]
