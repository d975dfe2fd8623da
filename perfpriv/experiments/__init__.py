"""The numerical experiments of the chapters and figures: data only, no drawing.

Every check a chapter runs against the paper -- a formula against
simulation, a bound against what it bounds -- and every simulation behind a
figure is one function here. Each returns a small frozen result (compared
by identity, ``eq=False``) of named arrays with a short ``repr`` and its
provenance in ``settings`` (sizes, seed, conventions, membership statistic,
population policy), so that a chapter can print and assert the numbers and
:mod:`perfpriv.plots` can draw them.

The experiments call the library and never re-derive it: simulations run
on :func:`perfpriv.engine.simulate` with a grid of levels in one call (the
levels share their random numbers round by round), cells of a heatmap go
through :func:`perfpriv.sweep.map_grid` (each keyed by the root seed and
its own coordinates, so that results do not depend on ``n_jobs`` or on the
batch sizes), and theory comes from :mod:`perfpriv.dynamics`,
:mod:`perfpriv.leakage`, :mod:`perfpriv.bernoulli` and :mod:`perfpriv.optimize`.

Defaults are *book scale* (each experiment in seconds); the paper's settings
(:data:`perfpriv.cli.SCALES`) are one argument away.

Membership inference (chapters 04-05)
    :func:`figure3a_simulation` (Fig. 3a: leak fractions against τ),
    :func:`leak_dispersion` (the leak count of one round against a binomial),
    :func:`exact_floor_check` (the exact statistic's leak floor at small N).
Survival (chapter 05)
    :func:`growth_curves` (Figs. 3b-3c: C(γ) from eq. 13 and simulation),
    :func:`theorem3_check` (Theorem 3's bounds), :func:`mean_field_paths`
    (the mean field with and without the cap, Lemma 12).
Finite horizon (chapter 06)
    :func:`lemma9_check`, :func:`horizon_curves` (cumulative error against γ),
    :func:`gamma_star_map` (Figs. 4-5; resumable cell by cell),
    :func:`pac_coverage` (Theorem 4); stored maps of a paper-scale run
    read back (:func:`read_gamma_star_maps`) and the theory/simulation gap
    measured on them, per τ (:func:`gamma_star_gaps`, :func:`capped_rounds`).
Bernoulli (chapters 01-02)
    :func:`curve_runs` (Figs. 1 and 6: error and population against the round),
    :func:`final_error_curve` (the final-round error against ε).
Privacy schedules (chapter 07)
    :func:`compare_schedules` (γ or ε schedules, paired simulation against
    the mean field), :func:`gain_map`.
Monte Carlo agreement (every chapter's checks)
    :func:`mc_agreement` (a sample's mean against its expected value),
    :func:`paired_agreement` (two samples on common random numbers, with the
    se of their differences), :func:`agreement` (an estimate with a standard
    error from a formula); each returns an :class:`Agreement` whose
    ``check()`` asserts that the estimate lies within ``z`` standard errors.
"""

from ._agreement import Agreement, agreement, mc_agreement, paired_agreement
from ._bernoulli import FinalErrors, curve_runs, final_error_curve
from ._horizon import (
    THEORY_MAPS,
    MAPS,
    GammaStarMap,
    HorizonCurves,
    Lemma9Check,
    PacCoverage,
    gamma_star_map,
    horizon_curves,
    lemma9_check,
    pac_coverage,
)
from ._gaps import GAP_PROBABILITIES, GammaStarGaps, capped_rounds, gamma_star_gaps, read_gamma_star_maps
from ._leakage import (ExactFloorCheck, LeakDispersion, LeakFractions, exact_floor_check, figure3a_simulation,
                       leak_dispersion)
from ._schedules import GainMap, ScheduleComparison, compare_schedules, gain_map
from ._survival import (
    UNCAPPED,
    GrowthCurves,
    MeanFieldPaths,
    Theorem3Check,
    growth_curves,
    mean_field_paths,
    theorem3_check,
)

__all__ = [
    "LeakFractions", "figure3a_simulation", "LeakDispersion", "leak_dispersion", "ExactFloorCheck", "exact_floor_check",
    "GrowthCurves", "growth_curves", "Theorem3Check", "theorem3_check", "MeanFieldPaths", "mean_field_paths",
    "UNCAPPED",
    "Lemma9Check", "lemma9_check", "HorizonCurves", "horizon_curves", "GammaStarMap", "gamma_star_map",
    "THEORY_MAPS", "MAPS", "PacCoverage", "pac_coverage",
    "read_gamma_star_maps", "capped_rounds", "GammaStarGaps", "gamma_star_gaps", "GAP_PROBABILITIES",
    "curve_runs", "FinalErrors", "final_error_curve",
    "ScheduleComparison", "compare_schedules", "GainMap", "gain_map",
    "Agreement", "agreement", "mc_agreement", "paired_agreement",
]
