"""What the learning mechanisms (:mod:`perfpriv.regression`, :mod:`perfpriv.gradient`) share.

The mean-field ingredients, tabulated over the population size (:class:`TabulatedMechanism`), and the
plumbing of a simulated round (:func:`round_groups`, :func:`key_normals`).
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass
from typing import Any

from . import engine, keyed
from ._validate import MAX_ARRAY_BYTES, check_int, check_int_array, check_population
from .behaviour import Memoryless

__all__ = ["TabulatedMechanism", "Tabulation", "GRID_RATIO", "grid_point", "grid_points", "round_groups",
           "key_normals", "OneRoundCheck", "one_round_check"]

#: Ratio of consecutive table points (four per doubling of the population).
GRID_RATIO = 2.0 ** 0.25


def grid_point(k: int) -> int:
    """The k-th table point: round(2^(k/4)), k >= 0 (1, 1, 1, 2, 2, 2, 3, 3, 4, 5, ...)."""
    return int(round(GRID_RATIO ** k))


def grid_points(n_max: float) -> np.ndarray:
    r"""The distinct table points from 1 up to the first one at or above :math:`n_{\max}`."""
    pts = [1]
    k = 0
    while pts[-1] < n_max:
        k += 1
        v = grid_point(k)
        if v > pts[-1]:
            pts.append(v)
    return np.array(pts, dtype=np.int64)


@dataclass(frozen=True)
class Tabulation:
    """The Monte Carlo of a learning mechanism's mean-field table: its size and its seed.

    At each table point (a population size n) the mechanism draws at least ``records`` records, in at least
    ``datasets`` whole datasets of n records, from the streams of ``seed``; what it computes from them and its
    default table are given by ``table`` of :class:`perfpriv.regression.RidgeRelease` and
    :class:`perfpriv.gradient.PrivateGD`.

    Parameters
    ----------
    records, datasets : int
        At least ``records`` >= 1 records and ``datasets`` >= 1 datasets per table point.
    seed : None, int, sequence of int, SeedSequence, Generator, BitGenerator or perfpriv.keyed.Key
        As :func:`perfpriv.keyed.root_key` takes it (an int: the same table in every process, which
        releases of the same settings share; a Generator is consumed once here, as the root key does).

    Examples
    --------
    >>> Tabulation(records=300, datasets=8)
    Tabulation(records=300, datasets=8, seed=0)
    """

    records: int
    datasets: int
    seed: Any = 0

    def __post_init__(self):
        object.__setattr__(self, "records", check_int("records", self.records, low=1))
        object.__setattr__(self, "datasets", check_int("datasets", self.datasets, low=1))
        keyed.root_key(self.seed, name="seed")   # checked now, used by the table


class TabulatedMechanism(engine.Mechanism):
    """An engine mechanism whose mean-field p(n, level) and e(n, level) come from a table.

    For the mean estimation of the paper, p and e have closed forms or cheap quadratures; for a learning task
    -- a ridge fit, a run of private gradient descent -- they are expectations over whole datasets and have
    none. Subclasses compute (p, e) exactly or by a fixed-seed Monte Carlo (:meth:`_table_points`, at one
    integer n >= 1 for a batch of levels) at integer population sizes on a geometric grid (:data:`GRID_RATIO`
    apart), each grid point once and only when a caller needs it, and may override :meth:`_extrapolate` beyond
    :attr:`table_n_max`. Between grid points p is interpolated linearly in log n, e in (log n, log e) (e
    decays like a power of n).

    Conventions shared with :class:`perfpriv.gaussian.GaussianMean`: where a lone user's remove-one release is
    undefined (``lone_user_leaks``), the release proves her membership and p(1) = 1, with p linear in log n
    between n = 1 and n = 2 so that the mean field is continuous in n; n = inf (an overflowed uncapped
    population) has p = 0 and e = 0; n < 1 (a population that died out) has e = inf.
    """

    #: Largest population at which the table is computed; beyond, :meth:`_extrapolate`.
    table_n_max = 20000
    #: Whether a lone user always leaks (p(1) = 1): true when her remove-one release is undefined.
    lone_user_leaks = True

    @property
    def max_population(self) -> int:
        """Largest population whose round (n x (d + 1) numbers) fits in one call's memory.

        As :attr:`perfpriv.engine.Mechanism.max_population`; :func:`one_round_check` refuses ``ns`` above it.
        """
        return int(MAX_ARRAY_BYTES // (8 * (self.d + 1)))

    def _table_points(self, n: int, levels):  # pragma: no cover - interface
        """[(p, e), ...] at integer n >= 1 for each of ``levels`` (one batch)."""
        raise NotImplementedError

    def _extrapolate(self, n, level, p_last, e_last, n_last):
        """(p, e) beyond the table: p kept, e scaled like 1/n (override for better laws)."""
        return np.full(np.shape(n), p_last), e_last * n_last / np.asarray(n, float)

    # ------------------------------------------------------------ table
    def _cache(self) -> dict:
        cache = self.__dict__.get("_table_cache")
        if cache is None:
            cache = {}
            self.__dict__["_table_cache"] = cache
        return cache

    def _points(self, n_max: float) -> np.ndarray:
        r"""Table points needed for populations up to :math:`n_{\max}` (ending at :attr:`table_n_max`)."""
        pts = grid_points(min(float(n_max), float(self.table_n_max)))
        if pts[-1] > self.table_n_max:
            pts = np.append(pts[pts < self.table_n_max], int(self.table_n_max))
        return pts

    def _fill(self, needs: dict) -> None:
        """Compute the missing table values: ``needs`` maps a level to the largest n it needs."""
        cache = self._cache()
        by_n: dict = {}
        for level, n_max in needs.items():
            for k in self._points(n_max):
                if (int(k), level) not in cache:
                    by_n.setdefault(int(k), []).append(level)
        for k, levels in sorted(by_n.items()):
            for level, (p, e) in zip(levels, self._table_points(k, np.array(levels, float))):
                cache[(k, level)] = (float(p), float(e))

    def table_value(self, n: int, level: float):
        """(p, e) at one table point (computed once, then cached): ``n`` a whole number of records >= 1."""
        n = check_int("n", n, low=1)
        check_population("level", level)
        key = (int(n), float(level))
        if key not in self._cache():
            self._fill({float(level): int(n)})
            if key not in self._cache():     # n is not a grid point: compute it alone
                p, e = self._table_points(int(n), np.array([float(level)]))[0]
                self._cache()[key] = (float(p), float(e))
        return self._cache()[key]

    def _interpolate(self, n, level: float):
        """p and e at real populations ``n`` (1-D float array) for one level (table filled)."""
        n = np.asarray(n, float)
        p = np.ones(n.shape)
        e = np.full(n.shape, np.inf)
        huge = np.isposinf(n)
        p[huge], e[huge] = 0.0, 0.0
        ok = np.isfinite(n) & (n >= 1.0)
        if not ok.any():
            return p, e
        cache = self._cache()
        inside = ok & (n <= self.table_n_max)
        if inside.any():
            pts = self._points(float(n[inside].max()))
            vals = np.array([cache[(int(k), level)] for k in pts])   # (K, 2)
            pk = vals[:, 0].copy()
            if self.lone_user_leaks:
                pk[0] = 1.0                               # n = 1: the lone user leaks
            ek = vals[:, 1]
            x = np.log(pts.astype(float))
            xi = np.log(n[inside])
            p[inside] = np.interp(xi, x, pk)
            with np.errstate(divide="ignore"):
                le = np.log(ek)
            if np.all(np.isfinite(le)):
                e[inside] = np.exp(np.interp(xi, x, le))
            else:
                e[inside] = np.interp(xi, x, ek)
        beyond = ok & (n > self.table_n_max)
        if beyond.any():
            n_last = int(self.table_n_max)
            p_last, e_last = cache[(n_last, level)]
            pb, eb = self._extrapolate(n[beyond], level, p_last, e_last, n_last)
            p[beyond], e[beyond] = pb, eb
        return p, e

    def _evaluate(self, n, level, which: int):
        n, level = np.broadcast_arrays(check_population("n", n), check_population("level", level))
        out = np.empty(n.shape)
        flat_n, flat_l, flat_o = n.reshape(-1), level.reshape(-1), out.reshape(-1)
        levels = np.unique(flat_l)
        needs = {}
        for lv in levels:
            sel = flat_n[(flat_l == lv) & np.isfinite(flat_n) & (flat_n >= 1.0)]
            if sel.size:
                needs[float(lv)] = float(min(sel.max(), self.table_n_max))
        self._fill(needs)
        for lv in levels:
            sel = flat_l == lv
            flat_o[sel] = self._interpolate(flat_n[sel], float(lv))[which]
        return out

    # ------------------------------------------------------- mean field
    def leak_probability(self, n, level):
        """p(n, level): probability that a user of a round with n >= 0 users leaks (table, interpolated)."""
        return self._evaluate(n, level, 0)

    def expected_error(self, n, level):
        """e(n, level): expected error of a release from n >= 0 users (table, interpolated; inf for n < 1)."""
        return self._evaluate(n, level, 1)

    def expected_error_grad(self, n, level):
        """(e, de/dlog n, de/dlog level) by central differences of the table (n >= 0).

        Where e = inf (n < 1: a population that died out) both derivatives are 0, not NaN.
        """
        n = check_population("n", n)
        with np.errstate(invalid="ignore"):
            e, de_dn, de_dl = super().expected_error_grad(n, level)
        dead = ~np.isfinite(e)
        if dead.any():
            de_dn, de_dl = np.where(dead, 0.0, de_dn), np.where(dead, 0.0, de_dl)
        return e, de_dn, de_dl

    def growth_factor(self, n, level, *, q, r):
        """Expected growth 1 + r − (q + r) p(n, level) of a round with n users (eq. 12's form, Memoryless)."""
        return Memoryless(q=q, r=r).growth_factor(self.leak_probability(n, level))


# ------------------------------------------------------------ simulation plumbing
def round_groups(n, level, keys, live):
    """Flatten one round's batch and group its live (level, trial) pairs by their shared key.

    ``n, level, keys, live`` are those of :meth:`perfpriv.engine.Mechanism.draw_round`. Returns the batch
    shape, the flattened populations and levels, and a list of (scalar key of a (cell, trial, round), flat
    indices of its live pairs: the levels that share its random numbers).
    """
    n, live = keyed.check_batch(n, keys, live)
    shape = np.broadcast_shapes(np.shape(n), np.shape(level), keys.shape)
    nn = np.broadcast_to(n, shape).reshape(-1)
    ll = np.broadcast_to(np.asarray(level, float), shape).reshape(-1)
    lv = np.broadcast_to(True if live is None else live, shape).reshape(-1) & (nn >= 1)
    gid = np.broadcast_to(np.arange(int(np.prod(keys.shape))).reshape(keys.shape), shape).reshape(-1)
    ka, kb = keys.a.reshape(-1), keys.b.reshape(-1)
    groups = [(keyed.Key(ka[g], kb[g]), np.flatnonzero(lv & (gid == g))) for g in np.unique(gid[lv])]
    return shape, nn, ll, groups


def key_normals(key, purpose: str, records: int, width: int):
    """``width`` standard normals for each of the first ``records`` records of one key's stream.

    Record i owns its own counters, so a dataset of fewer users is a prefix of a larger one.
    """
    k = key.child(purpose)
    return keyed.Key(np.full(records, k.a), np.full(records, k.b)).normal_records(np.arange(records), width)


# ------------------------------------------------------------ theory vs one round
@dataclass(frozen=True, eq=False)
class OneRoundCheck:
    """The mean field's p(n, level) and e(n, level) against one simulated round (:func:`one_round_check`).

    Attributes
    ----------
    n, levels : numpy.ndarray
        Population sizes and the mechanism's levels.
    p_theory, p_simulated, p_se : numpy.ndarray, shape (len(n), len(levels))
        Leak probability of the table and the simulated leaked fraction with its standard error.
    e_theory, e_simulated, e_se : numpy.ndarray
        The same for the error of the release.
    trials, seed, mechanism
        Provenance.
    """

    n: np.ndarray
    levels: np.ndarray
    p_theory: np.ndarray
    p_simulated: np.ndarray
    p_se: np.ndarray
    e_theory: np.ndarray
    e_simulated: np.ndarray
    e_se: np.ndarray
    trials: int
    seed: Any
    mechanism: Any

    def __repr__(self):
        return f"OneRoundCheck(n={self.n.tolist()}, levels={len(self.levels)}, trials={self.trials})"

    @property
    def p_z(self) -> np.ndarray:
        """(simulated − theory)/se of the leak probability."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.p_se > 0, (self.p_simulated - self.p_theory) / self.p_se, 0.0)


def stable(direct, logarithm):
    """``direct()`` where it is finite and non-zero, else ``exp(logarithm())`` (issue 16).

    At extreme but valid values (a bound of 1e300, a budget of 1e-300) an intermediate of a closed form
    overflows or underflows; its logarithm, a sum of logs, does not, and its exponential is the answer to
    about 1e-13 relative, inf or 0 only where the answer itself is beyond the doubles.
    """
    with np.errstate(all="ignore"):
        try:
            out = np.asarray(direct(), float)
        except (OverflowError, ZeroDivisionError):
            return np.exp(np.asarray(logarithm(), float))
        bad = ~np.isfinite(out) | (out == 0)
        if bad.any():
            out = np.where(bad, np.exp(np.asarray(logarithm(), float)), out)
    return out


def check_seed(seed, name="seed"):
    """Check ``seed`` (as :func:`perfpriv.keyed.root_key` takes it) without drawing from it (``trials=0``)."""
    if not isinstance(seed, (keyed.Key, np.random.Generator, np.random.BitGenerator)):
        keyed.as_seed_sequence(seed, name=name)
    return seed


def one_round_check(mechanism, ns, *, trials, seed=None, conventions="paper"):
    """Simulate one round at each population size and compare with the mechanism's mean field.

    Parameters
    ----------
    mechanism : TabulatedMechanism
        With a 1-D grid of levels (or one level).
    ns : 1-D array_like of int
        Population sizes >= 1.
    trials, seed, conventions
        Simulated rounds per (n, level) (>= 2), as in :func:`perfpriv.engine.simulate`.

    Returns
    -------
    OneRoundCheck
    """
    if not isinstance(mechanism, TabulatedMechanism):
        raise TypeError(f"mechanism must be a tabulated learning mechanism (regression.RidgeRelease, "
                        f"gradient.PrivateGD); got {mechanism!r:.60}")
    ns = np.atleast_1d(check_int_array("ns", ns, low=1, high=mechanism.max_population))
    trials = check_int("trials", trials, low=2)
    mech = mechanism.resolved(conventions)
    levels = np.atleast_1d(mech.levels.values).reshape(-1)
    rows = {k: np.empty((ns.size, levels.size)) for k in ("pt", "ps", "pse", "et", "es", "ese")}
    rule = Memoryless(q=0.0, r=0.0)
    root = keyed.root_key(seed)
    for i, n in enumerate(ns):
        run = engine.simulate(mech, rule, T=1, n0=int(n), trials=trials,
                              policy=engine.Policy(cap=None, stop=0, collapse="repeat"), conventions=conventions,
                              seed=root.child("one-round", int(n)))
        frac = (run.leaked[..., 0] / n).reshape(levels.size, trials)
        err = run.sq_error[..., 0].reshape(levels.size, trials)
        rows["pt"][i] = mech.leak_probability(float(n), levels)
        rows["et"][i] = mech.expected_error(float(n), levels)
        rows["ps"][i], rows["pse"][i] = frac.mean(1), frac.std(1, ddof=1) / np.sqrt(trials)
        rows["es"][i], rows["ese"][i] = err.mean(1), err.std(1, ddof=1) / np.sqrt(trials)
    return OneRoundCheck(n=ns, levels=levels, p_theory=rows["pt"], p_simulated=rows["ps"], p_se=rows["pse"],
                         e_theory=rows["et"], e_simulated=rows["es"], e_se=rows["ese"], trials=trials, seed=seed,
                         mechanism=mech)
