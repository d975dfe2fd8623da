"""Mean-field ingredients of learning mechanisms, tabulated over the population size.

For the mean estimation of the paper, the leak probability p(n, level) and
the expected error e(n, level) of a round with n users have closed forms or
cheap quadratures. For a learning task -- a ridge fit, a run of private
gradient descent -- they are expectations over whole datasets and have none.
:class:`TabulatedMechanism` gives such a mechanism the two functions the
mean field of :func:`perfpriv.engine.mean_field` needs, from a table: the
subclass computes (p, e) exactly or by a fixed-seed Monte Carlo at integer
population sizes on a geometric grid (:data:`GRID_RATIO` apart), each grid
point once and only when a caller needs it; between grid points both are
interpolated linearly in log n (p) and in (log n, log e) (e, which decays
like a power of n).

Conventions shared with :class:`perfpriv.gaussian.GaussianMean`: where a
lone user's remove-one release is undefined (``lone_user_leaks``), the
release proves her membership and p(1) = 1, with p linear in log n between
n = 1 and n = 2 so that the mean field is continuous in n; n = inf (an overflowed uncapped population)
has p = 0 and e = 0; n < 1 (a population that died out) has e = inf.
"""

from __future__ import annotations

import numpy as np

from . import engine
from .behaviour import Memoryless

__all__ = ["TabulatedMechanism", "GRID_RATIO", "grid_point", "grid_points"]

#: Ratio of consecutive table points (four per doubling of the population).
GRID_RATIO = 2.0 ** 0.25


def grid_point(k: int) -> int:
    """The k-th table point: round(2^(k/4)), k >= 0 (1, 1, 1, 2, 2, 2, 3, 3, 4, 5, ...)."""
    return int(round(GRID_RATIO ** k))


def grid_points(n_max: float) -> np.ndarray:
    """The distinct table points from 1 up to the first one at or above ``n_max``."""
    pts = [1]
    k = 0
    while pts[-1] < n_max:
        k += 1
        v = grid_point(k)
        if v > pts[-1]:
            pts.append(v)
    return np.array(pts, dtype=np.int64)


class TabulatedMechanism(engine.Mechanism):
    """An engine mechanism whose mean-field p(n, level) and e(n, level) come from a table.

    Subclasses implement :meth:`_table_points` (the exact or Monte Carlo
    values at one integer n >= 1 for a batch of levels) and may override
    :meth:`_extrapolate` beyond the largest table point they accept
    (:attr:`table_n_max`).
    """

    #: Largest population at which the table is computed; beyond, :meth:`_extrapolate`.
    table_n_max = 20000
    #: Whether a lone user always leaks (p(1) = 1): true when her remove-one release is undefined.
    lone_user_leaks = True

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
        """Table points needed for populations up to ``n_max`` (ending at :attr:`table_n_max`)."""
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
        """(p, e) at one table point (computed once, then cached)."""
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
        n, level = np.broadcast_arrays(np.asarray(n, float), np.asarray(level, float))
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
        """p(n, level): probability that a user of a round with n users leaks (table, interpolated)."""
        return self._evaluate(n, level, 0)

    def expected_error(self, n, level):
        """e(n, level): expected error of a release from n users (table, interpolated)."""
        return self._evaluate(n, level, 1)

    def growth_factor(self, n, level, *, q, r):
        """Expected growth 1 + r − (q + r) p(n, level) of a round with n users (eq. 12's form).

        Uses :meth:`perfpriv.behaviour.Memoryless.growth_factor` (the leak rule).
        """
        return Memoryless(q=q, r=r).growth_factor(self.leak_probability(n, level))

