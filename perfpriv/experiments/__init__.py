"""The numerical experiments of the chapters and figures: data only, no drawing.

Every check a chapter runs against the paper -- a formula against simulation, a bound against what
it bounds -- and every simulation behind a figure is one function here. Each returns a small frozen
result (compared by identity, ``eq=False``) of named arrays with a short ``repr`` and its provenance
in ``settings`` (sizes, seed, conventions, membership statistic, population policy), for a chapter
to print and assert and for :mod:`perfpriv.plots` to draw.

The experiments call the library and never re-derive it: simulations run on
:func:`perfpriv.engine.simulate` with a grid of levels in one call (the levels share their random
numbers round by round), cells of a heatmap go through :func:`perfpriv.sweep.map_grid` (each keyed
by the root seed and its own coordinates, so that results depend neither on ``n_jobs`` nor on batch
sizes), and theory comes from :mod:`perfpriv.dynamics`, :mod:`perfpriv.leakage`,
:mod:`perfpriv.bernoulli` and :mod:`perfpriv.optimize`. Defaults are *book scale* (seconds each);
the paper's settings (:data:`perfpriv.cli.SCALES`) are one argument away.

Membership inference (chapters 04-05)
    :func:`figure3a_simulation` (Fig. 3a), :func:`leak_dispersion`, :func:`exact_floor_check`.
Survival (chapter 05)
    :func:`growth_curves` (Figs. 3b-3c), :func:`theorem3_check`, :func:`mean_field_paths`.
Finite horizon (chapter 06)
    :func:`lemma9_check`, :func:`horizon_curves`, :func:`gamma_star_map` (Figs. 4-5),
    :func:`pac_coverage`; stored paper-scale maps read back (:func:`read_gamma_star_maps`) and their
    theory/simulation gap (:func:`gamma_star_gaps`, :func:`capped_rounds`).
Bernoulli (chapters 01-02)
    :func:`curve_runs` (Figs. 1 and 6), :func:`final_error_curve`.
Privacy schedules (chapter 07)
    :func:`compare_schedules`, :func:`gain_map`.
Monte Carlo agreement (every chapter's checks)
    :func:`agreement`, :func:`mc_agreement`, :func:`paired_agreement`: an :class:`Agreement` whose
    ``check()`` asserts that an estimate lies within ``z`` standard errors.
"""

from ._agreement import Agreement, agreement, mc_agreement, paired_agreement
from ._bernoulli import FinalErrors, curve_runs, final_error_curve
from ._horizon import (THEORY_MAPS, MAPS, GammaStarMap, HorizonCurves, Lemma9Check, PacCoverage,
                       gamma_star_map, horizon_curves, lemma9_check, pac_coverage)
from ._gaps import GAP_PROBABILITIES, GammaStarGaps, capped_rounds, gamma_star_gaps, read_gamma_star_maps  # noqa: F401
from ._leakage import (ExactFloorCheck, LeakDispersion, LeakFractions, exact_floor_check, figure3a_simulation,
                       leak_dispersion)
from ._schedules import GainMap, ScheduleComparison, compare_schedules, gain_map
from ._survival import (UNCAPPED, GrowthCurves, MeanFieldPaths, Theorem3Check, growth_curves,  # noqa: F401
                        mean_field_paths, theorem3_check)

__all__ = ["LeakFractions", "figure3a_simulation", "LeakDispersion", "leak_dispersion", "ExactFloorCheck",
           "exact_floor_check", "GrowthCurves", "growth_curves", "Theorem3Check", "theorem3_check",
           "MeanFieldPaths", "mean_field_paths", "Lemma9Check", "lemma9_check", "HorizonCurves",
           "horizon_curves", "GammaStarMap", "gamma_star_map", "THEORY_MAPS", "MAPS", "PacCoverage",
           "pac_coverage", "read_gamma_star_maps", "capped_rounds", "GammaStarGaps", "gamma_star_gaps",
           "curve_runs", "FinalErrors", "final_error_curve", "ScheduleComparison", "compare_schedules",
           "GainMap", "gain_map", "Agreement", "agreement", "mc_agreement", "paired_agreement"]
