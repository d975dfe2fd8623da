"""Hashes of representative simulation results: a guard for speed work that must change no number.

Run ``python benchmarks/fingerprint.py`` before and after a change and compare
the printed hashes (``--save FILE`` writes them, ``--check FILE`` compares and
exits 1 on any difference). Every array of every result (population, errors,
leaks, alive flags, details, searched objectives) is hashed bit for bit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys

import numpy as np

from perfpriv import behaviour, bernoulli, engine, gaussian, optimize
from perfpriv.engine import Policy


def _arrays(obj, prefix=""):
    if isinstance(obj, np.ndarray) or np.isscalar(obj):
        yield prefix, np.asarray(obj)
    elif isinstance(obj, dict):
        for k in sorted(obj):
            yield from _arrays(obj[k], f"{prefix}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _arrays(v, f"{prefix}[{i}]")
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if isinstance(v, (np.ndarray, dict, list, tuple, float, int, np.generic)) and not isinstance(v, bool):
                yield from _arrays(v, f"{prefix}.{f.name}")
    else:
        for name in ("population", "sq_error", "leaked", "alive", "details", "values", "se", "gamma",
                     "objective", "mechanism_state", "error", "leak_probability", "cumulative_error"):
            v = getattr(obj, name, None)
            if v is not None and not callable(v):
                yield from _arrays(v, f"{prefix}.{name}")


def digest(obj) -> str:
    h = hashlib.sha256()
    for name, arr in _arrays(obj):
        if arr.dtype == object:
            continue
        h.update(name.encode())
        h.update(str(arr.dtype).encode() + str(arr.shape).encode())
        h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()[:16]


def cases():
    m, run = dict(tau=0.02, d=6, R=10.0), dict(T=12, trials=5, seed=3)   # the mechanism's and the run's settings
    users = behaviour.Memoryless(q=0.3, r=0.6)
    yield "gaussian projected", lambda: engine.simulate(gaussian.GaussianMean([0.5, 2.0, 8.0], draw="projected", **m),
                                                        users, n0=300, **run)
    yield "gaussian records", lambda: engine.simulate(gaussian.GaussianMean([0.5, 2.0, 8.0], draw="records", **m),
                                                      users, n0=300, **run)
    yield "gaussian exact", lambda: engine.simulate(gaussian.GaussianMean([1.0, 4.0], statistic="exact", **m),
                                                    behaviour.Memoryless(q=0.5, r=0.5), n0=80, **run)
    yield "gaussian authors", lambda: engine.simulate(gaussian.GaussianMean([1.0, 4.0], **m),
                                                      behaviour.Memoryless(q=0.99, r=0.01), n0=200,
                                                      conventions="authors", **run)
    yield "gaussian small N", lambda: engine.simulate(gaussian.GaussianMean(2.0, **m), behaviour.Memoryless(q=0.0, r=0.0),
                                                      n0=100, policy=Policy(cap=100), **run)
    big = gaussian.GaussianMean(20.0, tau=0.02, d=10, R=10.0, draw="projected")
    yield "gaussian big N", lambda: engine.simulate(big, behaviour.Memoryless(q=0.1, r=0.5), T=3, n0=20000, trials=1,
                                                    policy=Policy(cap=20000), seed=1)
    b = dict(T=30, n0=400, trials=4, seed=5)
    eps = np.geomspace(0.01, 20.0, 7)
    yield "bernoulli leak", lambda: bernoulli.simulate(eps, q=0.3, r=0.6, **b)
    yield "bernoulli agnostic", lambda: bernoulli.simulate(eps, q=0.3, r=0.6, rule="agnostic", **b)
    yield "bernoulli authors", lambda: engine.simulate(bernoulli.RandomizedResponse(eps), behaviour.Memoryless(q=0.9, r=0.1),
                                                       conventions="authors", **b)
    rr = bernoulli.RandomizedResponse([0.5, 2.0])
    yield "engine cells", lambda: engine.simulate(rr, behaviour.Memoryless(q=np.array([[0.1], [0.5]]),
                                                                         r=np.array([[0.3, 0.7]])), **b)
    beh = {
        "LeakCount": lambda: behaviour.LeakCount(k=2, q=0.4, r=0.5),
        "Heterogeneous": lambda: behaviour.Heterogeneous(q=[0.1, 0.6], weights=[0.5, 0.5], r=0.5),
        "BudgetAware": lambda: behaviour.BudgetAware(tolerance=3.0, r=0.5),
        "Contagion": lambda: behaviour.Contagion(q=0.3, r=0.5, kappa=0.2),
        "Memoryless agnostic": lambda: behaviour.Memoryless(q=0.3, r=0.5, rule="agnostic"),
    }
    for name, make in beh.items():
        yield f"behaviour {name}", (lambda make=make: engine.simulate(rr, make(), T=15, n0=300, trials=4, seed=2))
    gm = gaussian.GaussianMean([1.0, 3.0], tau=0.02, d=6, R=10.0)
    yield "behaviour Contagion gaussian", lambda: engine.simulate(gm, behaviour.Contagion(q=0.3, r=0.5, kappa=0.2),
                                                                  T=8, n0=200, trials=3, seed=4)
    yield "optimal_gamma_empirical", lambda: optimize.optimal_gamma_empirical(
        gaussian.GaussianMean(np.geomspace(0.2, 20.0, 8), tau=0.02, d=6, R=10.0), behaviour.Memoryless(q=0.3, r=0.6),
        T=8, n0=300, trials=4, seed=1)
    yield "optimal_gamma_empirical authors", lambda: optimize.optimal_gamma_empirical(
        gaussian.GaussianMean(np.geomspace(0.2, 20.0, 8), tau=0.02, d=12, R=10.0),
        behaviour.Memoryless(q=0.99, r=0.01), T=8, n0=50, trials=3, seed=1, conventions="authors")
    yield "mean_field bernoulli", lambda: engine.mean_field(rr, behaviour.Memoryless(q=0.3, r=0.6), T=20, n0=400)
    yield "mean_field gaussian", lambda: engine.mean_field(gm, behaviour.Memoryless(q=0.3, r=0.6), T=20, n0=400)


def main(argv):
    out = {}
    for name, run in cases():
        out[name] = digest(run())
        print(f"{out[name]}  {name}")
    if "--save" in argv:
        with open(argv[argv.index("--save") + 1], "w") as fh:
            json.dump(out, fh, indent=1)
    if "--check" in argv:
        with open(argv[argv.index("--check") + 1]) as fh:
            ref = json.load(fh)
        bad = [k for k in ref if ref[k] != out.get(k)]
        print("fingerprints: " + ("ALL IDENTICAL" if not bad else "CHANGED: " + ", ".join(bad)))
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
