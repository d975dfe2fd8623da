"""Stored γ* maps (Figs. 4-5) read back, and the gap between theory and simulation measured on them.

Appendix A of the paper: as τ grows the simulated γ* falls below the theoretical one, through rare
extreme records whose occurrence the population cap limits (see :func:`gamma_star_gaps`).
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import numpy as np

from .. import engine
from ..behaviour import Memoryless
from ..gaussian import GaussianMean
from .._validate import check_choice, check_path, check_real
from ._common import Result, result
from ._horizon import THEORY_MAPS, GammaStarMap

__all__ = ["read_gamma_star_maps", "capped_rounds", "GammaStarGaps", "gamma_star_gaps", "GAP_PROBABILITIES"]

#: Probabilities of the quantiles of theory/simulation that :func:`gamma_star_gaps` reports.
GAP_PROBABILITIES = (0.1, 0.25, 0.5, 0.75, 0.9)

#: What a run of the paper's text leaves implicit, as the old records (no conventions) ran it.
_OLD_CONVENTIONS = dict(conventions="paper", statistic="paper", collapse="floor", floor=1, stop=1)


def _record_of(path: Path, record):
    """The run record beside ``path`` (``<stem>_run.json``, then ``run.json``), or the one given."""
    if record is False:
        return None
    if record is not None:
        return json.loads(Path(record).read_text())
    for candidate in (path.with_name(path.stem + "_run.json"), path.with_name("run.json")):
        if candidate.is_file():
            return json.loads(candidate.read_text())
    return None


def _timings_of(path: Path, figure) -> dict:
    """The timing of ``figure`` in ``<stem>_timings.json`` or ``timings.json`` beside ``path`` ({} if none)."""
    for candidate in (path.with_name(path.stem + "_timings.json"), path.with_name("timings.json")):
        if candidate.is_file():
            data = json.loads(candidate.read_text())
            info = dict(data.get("figures", {}).get(figure, {}))
            if info:
                info.setdefault("n_jobs", data.get("n_jobs"))
                return info
    return {}


def _figure_of(path: Path, rec) -> str | None:
    found = re.match(r"figure(\d)", path.stem)
    if found:
        return found.group(1)
    if rec is not None and len(rec.get("figures", {})) == 1:
        return next(iter(rec["figures"]))
    return None


def read_gamma_star_maps(path, *, record=None) -> list[GammaStarMap]:
    r"""Read the γ* maps of a stored Fig. 4 or Fig. 5 run back into :class:`GammaStarMap` results.

    Reads the ``.npz`` file of ``python -m perfpriv reproduce --figure 4|5``: keys ``qs``, ``rs``,
    ``gammas`` and, per map k, :math:`\tau_k`, ``empirical_k``, ``bound_k``, ``constrained_k``,
    ``mean_field_k`` and (since the engine's command line) ``values_k`` and ``se_k``, q x r x γ;
    older files hold the optima only (``values`` and ``se`` NaN).

    The settings (T, n0, trials, d, R, cap, seed, conventions, statistic, collapse) come from the run
    record beside the file (``<stem>_run.json``, else ``run.json``) or from ``record``; the run time
    (``seconds``, ``resumed``, ``n_jobs``) from ``<stem>_timings.json`` or ``timings.json`` beside it,
    else from an old record. An old record names no conventions: its runs used the paper's statistic
    and the floor convention, which the settings say, with ``"format": "optima only"``.

    Parameters
    ----------
    path : str or pathlib.Path
        The ``.npz`` file.
    record : str, pathlib.Path or False, optional
        The run record to use (``False``: none; the settings hold only what the file says).

    Returns
    -------
    list of GammaStarMap
        One map per τ, in the file's order (:math:`\tau_0`, :math:`\tau_1`, ...).

    Examples
    --------
    >>> from pathlib import Path
    >>> import perfpriv
    >>> stored = Path(perfpriv.__file__).parents[1] / "book" / "data" / "figure4_paper.npz"
    >>> maps = read_gamma_star_maps(stored) if stored.is_file() else []
    >>> [m.tau for m in maps] if maps else [0.02, 0.05]
    [0.02, 0.05]
    """
    path = check_path("path", path, file=True)
    if not zipfile.is_zipfile(path):
        raise ValueError(f"path must be a gamma* map file written by 'reproduce --figure 4|5' (an .npz archive); "
                         f"got a file that is not one: {path}")
    if record is not None and record is not False:
        record = check_path("record", record, file=True)
    rec = _record_of(path, record)
    figure = _figure_of(path, rec)
    info = (rec or {}).get("figures", {}).get(figure, {}) if figure else {}
    given = {k: v for k, v in info.get("settings", {}).items() if k not in ("qs", "rs", "gammas", "taus")}
    with np.load(path) as data:
        arrays = {k: np.asarray(data[k]) for k in data.files}
    count = len([k for k in arrays if k.startswith("tau_")])
    if count == 0 or not {"qs", "rs", "gammas"} <= set(arrays):
        raise ValueError(f"path must be a gamma* map file written by 'reproduce --figure 4|5' (keys qs, rs, gammas, "
                         f"tau_k, empirical_k, ...); got keys {sorted(arrays)} in {path}")
    qs, rs, gammas = (np.asarray(arrays[k], float) for k in ("qs", "rs", "gammas"))
    has_values = "values_0" in arrays
    if "conventions" in info:
        conv = dict(conventions=(rec or {}).get("conventions", "paper"), **info["conventions"])
    elif rec is not None:
        conv = dict(_OLD_CONVENTIONS)
    else:
        conv = {}
    settings = dict(given, seed=(rec or {}).get("seed"), source=str(path), figure=figure,
                    format="values" if has_values else "optima only", theory=THEORY_MAPS, empirical=True,
                    **{k: conv[k] for k in ("conventions", "statistic", "collapse") if k in conv},
                    policy={k: conv[k] for k in ("cap", "floor", "stop", "collapse", "penalty") if k in conv})
    timing = _timings_of(path, figure)
    if "seconds" in timing:
        settings.update(seconds=timing["seconds"], resumed=bool(timing.get("resumed", False)),
                        n_jobs=timing.get("n_jobs"))
    elif "seconds" in info:                     # the old records kept the time in the record itself
        settings.update(seconds=info["seconds"], resumed=False, n_jobs=(rec or {}).get("n_jobs"))
    nan = np.full((qs.size, rs.size, gammas.size), np.nan)
    maps = []
    for k in range(count):
        fields = [np.asarray(arrays[f"{name}_{k}"], float) for name in ("empirical", "bound", "constrained",
                                                                         "mean_field")]
        values = np.asarray(arrays[f"values_{k}"], float) if has_values else nan
        se = np.asarray(arrays[f"se_{k}"], float) if has_values else nan
        maps.append(GammaStarMap(qs, rs, *fields, float(arrays[f"tau_{k}"]), gammas, values, se, dict(settings)))
    return maps


def capped_rounds(m: GammaStarMap, *, at="bound") -> np.ndarray:
    """Releases made from a population at the cap, along the mean field at a map's γ* (cell by cell).

    For every (q, r) cell, :func:`perfpriv.engine.mean_field` is run at the cell's γ* of the map ``at``
    with the map's T, n0, d, R, cap and statistic; the count is the number of the T releases (from
    :math:`N_0`, ..., :math:`N_{T-1}`, Algorithm 1) made at the cap. A positive count means the cap binds:
    growth bought with noise stops paying off before the horizon ends.

    Parameters
    ----------
    m : GammaStarMap
        A map with its settings (T, n0, d, R, cap; statistic, default the paper's).
    at : {"bound", "constrained", "mean_field", "empirical"}
        Which γ* the population is run at.

    Returns
    -------
    numpy.ndarray of int
        Shape (len(qs), len(rs)); cells whose γ* is NaN count 0.

    Examples
    --------
    >>> from perfpriv import engine, experiments
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> m = experiments.gamma_star_map(GaussianMean(tau=0.02, d=12, R=10.0), Memoryless(q=[[0.3]], r=[[0.1, 0.9]]),
    ...                                T=10, n0=1000, policy=engine.Policy(cap=2000), maps=("bound",))
    >>> capped_rounds(m).tolist()   # r = 0.9 reaches 2000 users after 3 rounds; r = 0.1 shrinks
    [[0, 7]]
    """
    if not isinstance(m, GammaStarMap):
        raise TypeError(f"m must be a GammaStarMap (from gamma_star_map or read_gamma_star_maps); got {m!r:.80}")
    at = check_choice("at", at, (*THEORY_MAPS, "empirical"))
    s = m.settings
    missing = [k for k in ("T", "n0", "d", "R", "cap") if s.get(k) is None]
    if missing:
        raise ValueError(f"m must carry its settings {missing} (a map from gamma_star_map or read_gamma_star_maps "
                         f"with its run record)")
    gamma = np.asarray(getattr(m, at), float)
    ok = np.isfinite(gamma) & (gamma > 0)
    Q, Rr = np.meshgrid(m.qs, m.rs, indexing="ij")
    T, cap = int(s["T"]), float(s["cap"])
    mech = GaussianMean(engine.PerCell(np.where(ok, gamma, 1.0)), tau=m.tau, d=s["d"], R=s["R"],
                        statistic=s.get("statistic") or "paper")
    pop = engine.mean_field(mech, Memoryless(q=Q, r=Rr), T=T, n0=int(s["n0"]), cap=cap).population
    at_cap = pop[..., :T] >= cap * (1 - 1e-9)          # releases use N_0, ..., N_{T-1}
    return np.where(ok, at_cap.sum(axis=-1), 0).astype(int)


@result
class GammaStarGaps(Result):
    """Theory against simulation on γ* maps, per τ (:func:`gamma_star_gaps`).

    Every per-τ attribute has one entry per map (shape (K,)); ``ratio`` and the cell masks hold one
    q x r array per map. "Ratio" is theory/simulated γ*.

    Attributes
    ----------
    taus, cells : numpy.ndarray
        τ of each map and the number of cells compared (both optima finite).
    theory : str
        The theoretical map compared (one of :data:`THEORY_MAPS`).
    step : numpy.ndarray
        One step of each map's γ grid, as a factor (geometric mean of neighbour ratios).
    within_step, within_two : numpy.ndarray
        Share of cells with the theoretical γ* within one grid step, within a factor 2, of the simulated one.
    median_ratio, quantiles, probabilities : numpy.ndarray and tuple
        Median ratio, its quantiles (shape (K, len(probabilities))) and their probabilities
        (:data:`GAP_PROBABILITIES`).
    mean_field_within_step, mean_field_median_ratio : numpy.ndarray
        The same two numbers for the mean-field map (the gap left once the capped dynamics are
        followed round by round).
    unresolved : numpy.ndarray
        Share of cells where the simulated objective at the theoretical γ* (nearest grid point) is
        within ``z`` se of the simulated minimum, the se of the difference taken as for independent
        runs, :math:`\\sqrt{\\mathrm{se}_a^{2} + \\mathrm{se}_b^{2}}`: an upper bound (the γ of a cell
        share their random numbers; the stored maps keep no runs for a paired se). NaN without values.
    cap_binds, median_ratio_cap, median_ratio_free : numpy.ndarray
        Share of cells where the cap binds (:func:`capped_rounds` > 0), and the median ratio over them
        and over the others (NaN if not computed, or no such cell).
    within_step_free, capped_median : numpy.ndarray
        Share within one grid step among the cells where the cap does not bind; median number of
        the T releases made at the cap.
    cap_correlation : numpy.ndarray
        Spearman rank correlation over the cells between the releases made at the cap and the ratio
        (positive: more rounds at the cap, larger gap; NaN with fewer than 3 cells or a constant
        side, or if not computed).
    band_labels : tuple of str
        Bands of releases at the cap: ``"0"`` (the cap never binds), then ``"a-b"`` (releases a to b
        at the cap), cut at the fractions ``bands`` of T.
    band_cells, band_median_ratio : numpy.ndarray, shape (K, len(band_labels))
        Cells in each band and their median ratio (NaN where a band is empty); equal medians at
        equal bands across τ mean that τ moves the gap only through the time spent at the cap.
    outlier_driven : numpy.ndarray
        Share of cells whose simulated optimum rests on a few extreme runs: relative standard error
        at the simulated γ* above ``outlier_factor`` times the map's median. NaN without stored se.
    median_ratio_typical : numpy.ndarray
        Median ratio without the outlier-driven cells.
    ratio, within_step_cells, unresolved_cells, cap_cells, capped, outlier_cells : tuple of numpy.ndarray
        The per-cell ratio, masks (``within_step_cells``: the cells counted by ``within_step``) and
        releases at the cap (q x r per map).
    z, outlier_factor, settings : float and dict
        The inputs, and the first map's settings with the number of maps.
    """

    taus: np.ndarray
    theory: str
    cells: np.ndarray
    step: np.ndarray
    within_step: np.ndarray
    within_two: np.ndarray
    median_ratio: np.ndarray
    quantiles: np.ndarray
    probabilities: tuple
    mean_field_within_step: np.ndarray
    mean_field_median_ratio: np.ndarray
    unresolved: np.ndarray
    cap_binds: np.ndarray
    median_ratio_cap: np.ndarray
    median_ratio_free: np.ndarray
    within_step_free: np.ndarray
    capped_median: np.ndarray
    cap_correlation: np.ndarray
    band_labels: tuple
    band_cells: np.ndarray
    band_median_ratio: np.ndarray
    outlier_driven: np.ndarray
    median_ratio_typical: np.ndarray
    ratio: tuple
    within_step_cells: tuple
    unresolved_cells: tuple
    cap_cells: tuple
    capped: tuple
    outlier_cells: tuple
    z: float
    outlier_factor: float
    settings: dict


def _share(mask, keep):
    return float(np.mean(mask[keep])) if keep.any() else float("nan")


def _median(x, keep):
    return float(np.median(x[keep])) if keep.any() else float("nan")


def _step(gammas):
    g = np.asarray(gammas, float)
    return float(np.exp(np.mean(np.diff(np.log(g))))) if g.size > 1 else float("nan")


def _rank_correlation(x, y):
    """Spearman's rank correlation (NaN if either side is constant or there are fewer than 3 cells)."""
    from scipy import stats

    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.spearmanr(x, y)[0])


def _bands(counts, ratio, keep, bands, T, known):
    """Labels, cell counts and median ratios of the bands of releases at the cap (none without T)."""
    if T is None:
        return (), np.zeros(0), np.zeros(0)
    T = int(T)
    cuts = sorted({max(1, int(np.ceil(f * T))) for f in bands} - {1})
    edges = [1, *cuts, T + 1]                                 # band j: edges[j] <= releases < edges[j + 1]
    labels = ("0",) + tuple(f"{a}-{b - 1}" for a, b in zip(edges[:-1], edges[1:]))
    cells = np.full(len(labels), np.nan)
    median = np.full(len(labels), np.nan)
    if known:
        groups = [keep & (counts == 0)] + [keep & (counts >= a) & (counts < b) for a, b in zip(edges[:-1], edges[1:])]
        for j, g in enumerate(groups):
            cells[j] = g.sum()
            median[j] = np.median(ratio[g]) if g.any() else np.nan
    return labels, cells, median


def gamma_star_gaps(maps, *, theory="bound", z=2.0, outlier_factor=3.0, capped=None,
                    bands=(0.4, 0.6, 0.8)) -> GammaStarGaps:
    """How far a theoretical γ* is from the simulated one, per τ, and which cells carry the gap.

    For each map (one τ), the spread of theory/simulated γ* over the cells and three suspects (see
    :class:`GammaStarGaps`): **noise**, **the cap** and **outliers**. A gap carried by the cap shows as
    a median ratio near 1 where the cap does not bind; one carried by extreme runs, as a median ratio
    near 1 once the outlier-driven cells are left out.

    Parameters
    ----------
    maps : GammaStarMap or sequence of GammaStarMap
        Maps from :func:`perfpriv.experiments.gamma_star_map` or :func:`read_gamma_star_maps`.
    theory : {"bound", "constrained", "mean_field"}
        The theoretical map compared with the simulated one.
    z, outlier_factor : float
        Thresholds of ``unresolved`` (standard errors within which two objective values count as
        indistinguishable) and ``outlier_driven`` (relative se, in multiples of the map's median).
    capped : None, False or sequence of array_like
        Releases at the cap per cell, one q x r array per map; ``None``: :func:`capped_rounds` at the
        theoretical γ*; ``False`` skips the cap diagnostics (NaN).
    bands : sequence of float
        Increasing fractions of T in (0, 1] that cut the releases at the cap into ``band_labels``.

    Returns
    -------
    GammaStarGaps

    References
    ----------
    Paper, Remark 3, appendix A (Figs. 4-5 and the explanation of the gap).

    Examples
    --------
    >>> from perfpriv import experiments
    >>> from perfpriv.behaviour import Memoryless
    >>> from perfpriv.gaussian import GaussianMean
    >>> m = experiments.gamma_star_map(GaussianMean([0.25, 0.5, 1.0, 2.0], tau=0.05, d=12, R=10.0),
    ...                                Memoryless(q=[[0.3], [0.5]], r=[[0.4, 0.8]]), T=5, n0=100, trials=4, seed=1)
    >>> g = gamma_star_gaps(m, capped=False)
    >>> g.cells.tolist(), g.step.round(3).tolist()
    ([4], [2.0])
    """
    if not isinstance(maps, (GammaStarMap, list, tuple)):
        raise TypeError(f"maps must be a GammaStarMap or a sequence of them; got {maps!r:.80}")
    maps = [maps] if isinstance(maps, GammaStarMap) else list(maps)
    if not maps or not all(isinstance(m, GammaStarMap) for m in maps):
        raise TypeError("maps must be a GammaStarMap or a non-empty sequence of them")
    theory = check_choice("theory", theory, THEORY_MAPS)
    z = check_real("z", z, low=0, scalar=True)
    outlier_factor = check_real("outlier_factor", outlier_factor, low=1, scalar=True)
    bands = np.atleast_1d(np.asarray(check_real("bands", bands, low=0, high=1, low_open=True), float))
    if bands.ndim != 1 or np.any(np.diff(bands) <= 0):
        raise ValueError(f"bands must be increasing fractions of T in (0, 1]; got {bands.tolist()}")
    horizons = {m.settings.get("T") for m in maps}
    if len(horizons) > 1:
        raise ValueError(f"maps must share their horizon T (the bands of releases at the cap count rounds); "
                         f"got T = {sorted(map(str, horizons))}")
    T = horizons.pop()
    if capped is None:
        capped = [capped_rounds(m, at=theory) for m in maps]
    elif capped is not False:
        if isinstance(capped, (bool, np.bool_, str, bytes)) or not isinstance(capped, (list, tuple, np.ndarray)) \
                or (isinstance(capped, np.ndarray) and capped.ndim == 0):
            raise ValueError("capped must be None, False or a sequence of one q x r array of capped rounds per "
                             f"map; got {type(capped).__name__}")
        capped = [np.asarray(c) for c in capped]
        if len(capped) != len(maps) or any(c.shape != m.empirical.shape for c, m in zip(capped, maps)):
            raise ValueError("capped must hold one q x r array per map, shaped like the maps")
    rows = []
    for k, m in enumerate(maps):
        emp, th, mf = (np.asarray(a, float) for a in (m.empirical, getattr(m, theory), m.mean_field))
        keep = np.isfinite(emp) & np.isfinite(th) & (emp > 0) & (th > 0)
        ratio = np.where(keep, th / np.where(keep, emp, 1.0), np.nan)
        step = _step(m.gammas)
        lr = np.abs(np.log(np.where(keep, ratio, 1.0)))
        within = lr <= np.log(step) * (1 + 1e-9)
        keep_mf = keep & np.isfinite(mf) & (mf > 0)
        ratio_mf = np.where(keep_mf, mf / np.where(keep_mf, emp, 1.0), 1.0)
        # noise: the simulated objective at the theoretical optimum against the simulated minimum
        values, se = np.asarray(m.values, float), np.asarray(m.se, float)
        stored = np.isfinite(values).all(axis=-1) & np.isfinite(se).all(axis=-1) & keep
        lg = np.log(m.gammas)
        j = np.argmin(np.abs(np.log(np.where(keep, th, 1.0))[..., None] - lg), axis=-1)
        i = np.argmin(np.where(np.isfinite(values), values, np.inf), axis=-1)
        take = lambda a, idx: np.take_along_axis(a, idx[..., None], axis=-1)[..., 0]  # noqa: E731
        excess = take(values, j) - take(values, i)
        noise = np.hypot(take(se, j), take(se, i))
        unresolved = stored & (excess <= z * noise)
        rel = np.where(stored, take(se, i) / np.where(stored, take(values, i), 1.0), np.nan)
        outliers = stored & (rel > outlier_factor * (np.nanmedian(rel) if stored.any() else np.inf))
        if capped is False:
            counts = np.zeros(emp.shape, int)
            cap_known = False
        else:
            counts = np.asarray(capped[k]).astype(int)
            cap_known = True
        cap_mask = keep & (counts > 0)
        labels, band_cells, band_median = _bands(counts, ratio, keep, bands, T, cap_known)
        nan = float("nan")
        rows.append(dict(
            tau=float(m.tau), cells=int(keep.sum()), step=step,
            within_step=_share(within, keep), within_two=_share(lr <= np.log(2.0) * (1 + 1e-9), keep),
            median_ratio=_median(ratio, keep),
            quantiles=np.quantile(ratio[keep], GAP_PROBABILITIES) if keep.any()
            else np.full(len(GAP_PROBABILITIES), np.nan),
            mf_within=_share(np.abs(np.log(ratio_mf)) <= np.log(step) * (1 + 1e-9), keep_mf),
            mf_median=_median(ratio_mf, keep_mf),
            unresolved=_share(unresolved, keep) if stored.any() else nan,
            cap=_share(cap_mask, keep) if cap_known else nan,
            median_cap=_median(ratio, cap_mask) if cap_known else nan,
            median_free=_median(ratio, keep & ~cap_mask) if cap_known else nan,
            within_free=_share(within, keep & ~cap_mask) if cap_known else nan,
            capped_median=float(np.median(counts[keep])) if cap_known and keep.any() else nan,
            cap_correlation=_rank_correlation(counts[keep], ratio[keep]) if cap_known else nan,
            labels=labels, band_cells=band_cells, band_median=band_median, capped=counts,
            outliers=_share(outliers, keep) if stored.any() else nan,
            median_typical=_median(ratio, keep & ~outliers) if stored.any() else nan,
            ratio=ratio, within_cells=keep & within, unresolved_cells=unresolved, cap_cells=cap_mask,
            outlier_cells=outliers))
    col = lambda key: np.array([row[key] for row in rows])  # noqa: E731
    settings = dict(maps[0].settings, maps=len(maps))
    return GammaStarGaps(col("tau"), theory, col("cells"), col("step"), col("within_step"), col("within_two"),
                         col("median_ratio"), np.stack([row["quantiles"] for row in rows]), GAP_PROBABILITIES,
                         col("mf_within"), col("mf_median"), col("unresolved"), col("cap"), col("median_cap"),
                         col("median_free"), col("within_free"), col("capped_median"), col("cap_correlation"),
                         rows[0]["labels"], np.stack([row["band_cells"] for row in rows]),
                         np.stack([row["band_median"] for row in rows]), col("outliers"), col("median_typical"),
                         tuple(row["ratio"] for row in rows), tuple(row["within_cells"] for row in rows),
                         tuple(row["unresolved_cells"] for row in rows),
                         tuple(row["cap_cells"] for row in rows), tuple(row["capped"] for row in rows),
                         tuple(row["outlier_cells"] for row in rows),
                         float(z), float(outlier_factor), settings)
