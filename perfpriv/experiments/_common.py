"""What every experiment shares: the result base class and provenance."""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .. import engine
from .._stats import mean_se  # noqa: F401  (re-exported: the experiments' mean and standard error)
from .._validate import check_choice
from ..behaviour import Memoryless
from ..bernoulli import RandomizedResponse
from ..gaussian import GaussianMean

__all__ = ["result", "Result", "check_statistic", "gaussian_provenance", "bernoulli_provenance", "run_provenance",
           "mean_se", "gaussian_levels", "on_grid", "memoryless_rates", "mechanism_provenance",
           "with_defaults"]


def result(cls):
    """Decorator of result classes: a frozen dataclass, compared by identity, with :class:`Result`'s repr."""
    return dataclass(frozen=True, eq=False, repr=False)(cls)


class Result:
    """Base class of the experiments' results: a short repr (scalars, small arrays, shapes; no settings)."""

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            if f.name == "settings":
                continue
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray) and v.ndim == 0:
                v = v.item()
            if isinstance(v, np.ndarray):
                text = (str(np.round(v.astype(float), 4).tolist()) if v.size <= 4 and v.dtype != object
                        else f"<{v.dtype.name} {v.shape}>")
            elif isinstance(v, float):
                text = f"{v:.6g}"
            elif isinstance(v, (int, str, bool, type(None))):
                text = repr(v)
            elif isinstance(v, tuple) and len(v) <= 6:
                text = repr(v)
            else:
                text = f"<{type(v).__name__}>"
            parts.append(f"{f.name}={text}")
        text = ", ".join(parts)
        return f"{type(self).__name__}({text if len(text) <= 300 else text[:297] + '...'})"


def gaussian_levels(mechanism, *, name="mechanism", one=False) -> np.ndarray:
    """The noise scales of a :class:`perfpriv.gaussian.GaussianMean` that a study runs on.

    ``one=True``: one γ (returned as a float); otherwise a number or a 1-D grid (a 1-D array). No
    levels, a schedule or levels per cell: ``ValueError`` naming ``name``; another object: ``TypeError``.
    """
    if not isinstance(mechanism, GaussianMean):
        raise TypeError(f"{name} must be a perfpriv.gaussian.GaussianMean; got {type(mechanism).__name__}")
    levels = mechanism.levels
    what = "one noise scale (GaussianMean(gamma, ...))" if one else \
        "a noise scale or a 1-D grid of them (GaussianMean(gammas, ...))"
    if levels is None or levels.per_round or isinstance(levels.given, engine.PerCell) or \
            (one and levels.shape != ()):
        kind = "no noise scale" if levels is None else "a schedule" if levels.per_round else \
            "levels per cell" if isinstance(levels.given, engine.PerCell) else f"{levels.count} noise scales"
        raise ValueError(f"{name} must hold {what}; got a mechanism with {kind}")
    return float(levels.values[0]) if one else np.asarray(levels.values, float).copy()


def on_grid(mechanism):
    """``mechanism`` (a :class:`perfpriv.gaussian.GaussianMean`) with its levels as a 1-D grid."""
    levels = gaussian_levels(mechanism)
    if mechanism.levels.shape != ():
        return mechanism
    return GaussianMean(levels, **mechanism.options())


def memoryless_rates(behaviour, *, name="behaviour") -> tuple:
    """``(q, r)`` as floats of a :class:`perfpriv.behaviour.Memoryless` with one leaving and one joining rate."""
    if not isinstance(behaviour, Memoryless):
        raise TypeError(f"{name} must be a perfpriv.behaviour.Memoryless (the paper's users, q and r); "
                        f"got {type(behaviour).__name__}")
    if np.ndim(behaviour.q) or np.ndim(behaviour.r):
        raise ValueError(f"{name} must have one leaving rate q and one joining rate r (numbers); got arrays of "
                         f"shapes {np.shape(behaviour.q)} and {np.shape(behaviour.r)}")
    return float(behaviour.q), float(behaviour.r)


def with_defaults(policy, **defaults) -> engine.Policy:
    """``policy`` (None or a :class:`perfpriv.engine.Policy`) with its unset fields taken from ``defaults``."""
    fields = dict(defaults)
    fields.update(engine.check_policy(policy).describe())
    return engine.Policy(**fields)


def check_statistic(statistic):
    """``None`` (from the conventions), ``"paper"`` or ``"exact"``."""
    if statistic is None:
        return None
    return check_choice("statistic", statistic, ("paper", "exact"))


def gaussian_provenance(conventions, *, n0, tau, d, R, statistic=None, policy=None) -> dict:
    """:func:`mechanism_provenance` of ``GaussianMean(tau=tau, d=d, R=R, statistic=statistic)``."""
    return mechanism_provenance(GaussianMean(tau=tau, d=d, R=R, statistic=statistic), conventions, n0=n0,
                                policy=policy)


def mechanism_provenance(mechanism, conventions, *, n0, policy=None) -> dict:
    """``{"conventions", "statistic", "policy"}`` that a GaussianMean resolves under ``conventions``."""
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    mech = mechanism.resolved(conventions)
    pol = engine.check_policy(policy).resolve(mech, conventions, n0=n0)
    return dict(conventions=conventions, statistic=mech.statistic, policy=pol.describe())


def bernoulli_provenance(conventions, *, n0, mu=(0.0, 1.0), clip_estimate=None, policy=None) -> dict:
    """``{"conventions", "clip_estimate", "policy"}`` a randomized-response experiment resolves."""
    conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
    mech = RandomizedResponse(1.0, mu=mu, clip_estimate=clip_estimate).resolved(conventions)
    pol = engine.check_policy(policy).resolve(mech, conventions, n0=n0)
    return dict(conventions=conventions, clip_estimate=bool(mech.clip_estimate), policy=pol.describe())


def run_provenance(run) -> dict:
    """The conventions behind a :class:`perfpriv.engine.SimulationRun` (its resolved options and policy)."""
    out = dict(conventions=run.conventions, policy=run.policy.describe())
    out.update({k: v for k, v in run.mechanism.options().items() if k in ("statistic", "clip_estimate", "draw")})
    return out
