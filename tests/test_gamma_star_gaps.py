"""Stored γ* maps read back, and the theory/simulation gap statistics, against hand-computed values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfpriv import dynamics, experiments
from perfpriv.behaviour import Memoryless
from perfpriv.engine import Policy
from perfpriv.gaussian import GaussianMean
from perfpriv.experiments import GammaStarMap

BOOK_DATA = Path(__file__).resolve().parents[1] / "book" / "data"


def synthetic_map(values=True):
    """2 x 2 cells, γ grid (1, 2, 4, 8) (one step = a factor 2), with every number chosen by hand."""
    qs, rs, gammas = np.array([0.2, 0.4]), np.array([0.3, 0.6]), np.array([1.0, 2.0, 4.0, 8.0])
    empirical = np.array([[1.0, 2.0], [4.0, 8.0]])
    bound = np.array([[1.5, 2.0], [16.0, 4.1]])            # ratios 1.5, 1, 4, 0.5125
    mean_field = np.array([[1.0, 2.0], [5.0, 8.0]])        # ratios 1, 1, 1.25, 1
    constrained = bound * 2
    vals = np.array([[[1.0, 1.3, 2.0, 3.0], [3.0, 1.0, 2.0, 3.0]],
                     [[5.0, 4.0, 3.0, 3.1], [9.0, 8.0, 3.5, 3.0]]])
    se = np.array([[[0.1, 0.1, 0.1, 0.1], [0.1, 2.0, 0.1, 0.1]],
                   [[0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.2, 0.3]]])
    if not values:
        vals, se = np.full(vals.shape, np.nan), np.full(se.shape, np.nan)
    settings = dict(T=5, n0=100, trials=10, d=12, R=10.0, cap=20000, statistic="paper")
    return GammaStarMap(qs, rs, empirical, bound, constrained, mean_field, 0.05, gammas, vals, se, settings)


def test_gap_statistics_equal_the_hand_computed_ones():
    m = synthetic_map()
    g = experiments.gamma_star_gaps(m, capped=[np.array([[0, 3], [5, 0]])])
    assert g.cells.tolist() == [4] and g.step == pytest.approx([2.0])
    # |log ratio| <= log 2 for 1.5, 1 and 0.5125, not for 4
    assert g.within_step == pytest.approx([0.75]) and g.within_two == pytest.approx([0.75])
    assert g.within_step_cells[0].tolist() == [[True, True], [False, True]]
    assert g.median_ratio == pytest.approx([1.25])                     # (1 + 1.5) / 2
    # numpy's linear quantiles of (0.5125, 1, 1.5, 4): position p * 3
    expected = [0.5125 + 0.3 * 0.4875, 0.5125 + 0.75 * 0.4875, 1.25, 1.5 + 0.25 * 2.5, 1.5 + 0.7 * 2.5]
    assert g.quantiles[0] == pytest.approx(expected)
    assert g.mean_field_within_step == pytest.approx([1.0]) and g.mean_field_median_ratio == pytest.approx([1.0])
    # noise: excess at the grid point nearest the bound's γ* against 2 se of the difference
    # (0,0): nearest to 1.5 is 2, excess 0.3 > 2 sqrt(0.02) = 0.283 -> resolved
    # (0,1): same point, excess 0; (1,0): 16 -> 8, excess 0.1 < 0.283; (1,1): 4.1 -> 4, 0.5 < 2 sqrt(0.13)
    assert g.unresolved_cells[0].tolist() == [[False, True], [True, True]] and g.unresolved == pytest.approx([0.75])
    # outliers: se/value at the optimum = 0.1, 2, 1/30, 0.1; median 0.1, factor 3 -> only (0,1)
    assert g.outlier_cells[0].tolist() == [[False, True], [False, False]]
    assert g.outlier_driven == pytest.approx([0.25]) and g.median_ratio_typical == pytest.approx([1.5])
    # the cap binds in (0,1) and (1,0): ratios 1 and 4 there, 1.5 and 0.5125 elsewhere
    assert g.cap_binds == pytest.approx([0.5]) and g.median_ratio_cap == pytest.approx([2.5])
    assert g.median_ratio_free == pytest.approx([(1.5 + 0.5125) / 2]) and g.within_step_free == pytest.approx([1.0])
    assert g.ratio[0] == pytest.approx(np.array([[1.5, 1.0], [4.0, 0.5125]]))
    # releases at the cap (0, 3, 5, 0) against the ratios (1.5, 1, 4, 0.5125): ranks (1.5, 3, 4, 1.5) and
    # (3, 2, 4, 1), Pearson correlation of the ranks 3 / sqrt(4.5 * 5)
    assert g.capped_median == pytest.approx([1.5]) and g.cap_correlation == pytest.approx([3 / np.sqrt(22.5)])
    # T = 5 cut at 0.4, 0.6, 0.8 of T: releases 1, 2, 3 and 4-5 at the cap
    assert g.band_labels == ("0", "1-1", "2-2", "3-3", "4-5")
    assert g.band_cells[0].tolist() == [2, 0, 0, 1, 1]
    assert np.allclose(g.band_median_ratio[0], [(1.5 + 0.5125) / 2, np.nan, np.nan, 1.0, 4.0], equal_nan=True)


def test_a_larger_z_calls_more_cells_unresolved_and_a_tiny_one_fewer():
    m = synthetic_map()
    assert experiments.gamma_star_gaps(m, z=3.0, capped=False).unresolved == pytest.approx([1.0])
    # z = 0: only an exact tie (cell (0,1)) is unresolved
    assert experiments.gamma_star_gaps(m, z=0.0, capped=False).unresolved == pytest.approx([0.25])


def test_other_theory_maps_and_missing_cells():
    m = synthetic_map()
    g = experiments.gamma_star_gaps(m, theory="mean_field", capped=False)
    assert g.median_ratio == pytest.approx([1.0]) and g.within_step == pytest.approx([1.0])
    bound = m.bound.copy()
    bound[1, 0] = np.nan                                      # e.g. r = 0 under the constraint
    hole = GammaStarMap(m.qs, m.rs, m.empirical, bound, m.constrained, m.mean_field, m.tau, m.gammas, m.values,
                        m.se, m.settings)
    g = experiments.gamma_star_gaps(hole, capped=False)
    assert g.cells.tolist() == [3] and g.median_ratio == pytest.approx([1.0])   # of 1.5, 1, 0.5125
    assert np.isnan(g.ratio[0][1, 0])


def test_maps_without_stored_values_give_nan_noise_and_outlier_diagnostics():
    g = experiments.gamma_star_gaps(synthetic_map(values=False), capped=False)
    assert g.median_ratio == pytest.approx([1.25])
    for name in ("unresolved", "outlier_driven", "median_ratio_typical", "cap_binds", "median_ratio_cap",
                 "cap_correlation", "band_cells", "band_median_ratio"):
        assert np.isnan(getattr(g, name)).all(), name


def test_capped_rounds_counts_releases_at_the_cap_along_a_hand_rolled_mean_field():
    qs, rs, tau, T, n0, cap = np.array([0.3]), np.array([0.1, 0.6, 0.9]), 0.02, 12, 1000, 3000
    m = experiments.gamma_star_map(GaussianMean(tau=tau, d=12, R=10.0), Memoryless(q=qs[:, None], r=rs[None, :]),
                                   T=T, n0=n0, policy=Policy(cap=cap), maps=("bound",))
    got = experiments.capped_rounds(m)
    for k, r in enumerate(rs):
        gamma, n, count = float(m.bound[0, k]), float(n0), 0
        for _ in range(T):                      # release from n, then the population moves
            count += n >= cap
            c = float(dynamics.growth_factor(GaussianMean(gamma, tau=tau, d=12, R=10.0), Memoryless(q=0.3, r=r), n=n))
            n = min(cap, max(1.0, n * c))
        assert got[0, k] == count, (r, got[0, k], count)
    assert got[0, 0] == 0 and got[0, 2] > got[0, 1] > 0    # r = 0.1 shrinks; faster growth, earlier cap


def test_gap_statistics_compute_the_cap_from_the_maps_settings_by_default():
    m = experiments.gamma_star_map(GaussianMean([0.2, 0.4, 0.8], tau=0.02, d=12, R=10.0),
                                   Memoryless(q=np.array([[0.3]]), r=np.array([[0.1, 0.9]])), T=10, n0=1000,
                                   policy=Policy(cap=2000), trials=3, seed=0)
    g = experiments.gamma_star_gaps(m)
    assert g.cap_cells[0].tolist() == (experiments.capped_rounds(m) > 0).tolist() == [[False, True]]


def test_bad_arguments_are_refused_naming_them():
    m = synthetic_map()
    with pytest.raises(ValueError, match="theory"):
        experiments.gamma_star_gaps(m, theory="nope")
    with pytest.raises(ValueError, match="capped"):
        experiments.gamma_star_gaps(m, capped=[np.zeros((3, 3))])
    with pytest.raises(TypeError, match="maps"):
        experiments.gamma_star_gaps([])
    with pytest.raises(ValueError, match="bands"):
        experiments.gamma_star_gaps(m, bands=(0.6, 0.4), capped=False)
    other = GammaStarMap(m.qs, m.rs, m.empirical, m.bound, m.constrained, m.mean_field, 0.1, m.gammas, m.values,
                         m.se, dict(m.settings, T=7))
    with pytest.raises(ValueError, match="horizon T"):
        experiments.gamma_star_gaps([m, other], capped=False)
    with pytest.raises(ValueError, match="settings"):
        experiments.capped_rounds(GammaStarMap(m.qs, m.rs, m.empirical, m.bound, m.constrained, m.mean_field,
                                               m.tau, m.gammas, m.values, m.se, {}))


# ---------------------------------------------------------------- reading stored runs
def test_the_old_stored_figure4_reads_back_with_its_arrays_and_record():
    path = BOOK_DATA / "figure4_paper.npz"
    maps = experiments.read_gamma_star_maps(path)
    with np.load(path) as data:
        assert [m.tau for m in maps] == [float(data["tau_0"]), float(data["tau_1"])]
        for k, m in enumerate(maps):
            for name in ("empirical", "bound", "constrained", "mean_field"):
                assert np.array_equal(getattr(m, name), data[f"{name}_{k}"], equal_nan=True)
            assert np.array_equal(m.qs, data["qs"]) and np.array_equal(m.gammas, data["gammas"])
            assert m.values.shape == m.empirical.shape + m.gammas.shape and np.isnan(m.values).all()
    s = maps[0].settings
    assert (s["T"], s["n0"], s["trials"], s["cap"], s["format"]) == (50, 1000, 50, 20000, "optima only")
    assert (s["statistic"], s["collapse"], s["figure"]) == ("paper", "floor", "4")
    assert s["seconds"] == json.loads((BOOK_DATA / "figure4_paper_run.json").read_text())["figures"]["4"]["seconds"]


def test_a_file_without_its_record_keeps_only_what_it_holds(tmp_path):
    m = synthetic_map()
    path = tmp_path / "figure5.npz"
    np.savez(path, qs=m.qs, rs=m.rs, gammas=m.gammas, tau_0=m.tau, empirical_0=m.empirical, bound_0=m.bound,
             constrained_0=m.constrained, mean_field_0=m.mean_field, values_0=m.values, se_0=m.se)
    (back,) = experiments.read_gamma_star_maps(path)
    assert np.array_equal(back.values, m.values) and back.settings["format"] == "values"
    assert "T" not in back.settings and back.settings["figure"] == "5"
    (tmp_path / "figure5_run.json").write_text(json.dumps({"seed": 7, "conventions": "paper", "figures": {"5": {
        "settings": {"T": 5, "n0": 100, "trials": 10, "d": 12, "R": 10.0, "cap": 20000},
        "conventions": {"statistic": "exact", "collapse": "ran", "cap": 20000, "floor": 1, "stop": 1}}}}))
    (back,) = experiments.read_gamma_star_maps(path)
    assert (back.settings["T"], back.settings["seed"], back.settings["statistic"]) == (5, 7, "exact")
    g = experiments.gamma_star_gaps(back, capped=False)
    assert g.median_ratio == pytest.approx([1.25])
    assert "seconds" not in back.settings
    (tmp_path / "figure5_timings.json").write_text(json.dumps({"n_jobs": 2, "figures": {"5": {
        "seconds": 1234.5, "seconds_with_files": 1240.0, "resumed": True}}}))
    (back,) = experiments.read_gamma_star_maps(path)
    assert (back.settings["seconds"], back.settings["resumed"], back.settings["n_jobs"]) == (1234.5, True, 2)


def test_a_file_of_another_kind_is_refused_naming_the_path(tmp_path):
    path = tmp_path / "figure2.npz"
    np.savez(path, q=np.zeros(3))
    with pytest.raises(ValueError, match="path"):
        experiments.read_gamma_star_maps(path)


@pytest.fixture(scope="module")
def book_figure4(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig4")
    proc = subprocess.run([sys.executable, "-m", "perfpriv", "reproduce", "--figure", "4", "--scale", "book",
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return out


def test_a_run_of_the_command_line_reads_back_with_values_settings_and_consistent_optima(book_figure4):
    path = book_figure4 / "figure4.npz"
    maps = experiments.read_gamma_star_maps(path)            # the record is run.json beside it
    record = json.loads((book_figure4 / "run.json").read_text())["figures"]["4"]
    assert [m.tau for m in maps] == record["settings"]["taus"]
    with np.load(path) as data:
        for k, m in enumerate(maps):
            for name in ("empirical", "bound", "constrained", "mean_field", "values", "se"):
                assert np.array_equal(getattr(m, name), data[f"{name}_{k}"], equal_nan=True)
            # the stored simulated optimum is the grid minimum of the stored objective
            assert np.array_equal(m.gammas[np.argmin(m.values, axis=-1)], m.empirical)
    s = maps[0].settings
    for key in ("T", "n0", "trials", "d", "R", "cap"):
        assert s[key] == record["settings"][key]
    assert s["statistic"] == record["conventions"]["statistic"] and s["format"] == "values"
    timings = json.loads((book_figure4 / "timings.json").read_text())
    assert s["seconds"] == timings["figures"]["4"]["seconds"] and s["resumed"] is False
    g = experiments.gamma_star_gaps(maps)                     # the cap from the stored settings
    assert g.taus.tolist() == record["settings"]["taus"] and np.isfinite(g.unresolved).all()


@pytest.mark.parametrize("figure, taus, n_q", [("4", [0.02, 0.05], 10), ("5", [0.01, 0.2, 0.1], 30)])
def test_the_stored_paper_scale_figure_is_its_cells_and_its_optima_are_the_argmin_of_its_errors(figure, taus, n_q):
    # book/data/paper/figureK.npz (the engine's runs, chapter 06) against the cell files it was built from
    # (600 for Fig. 4, 2 700 for Fig. 5), and its simulated optima against the simulated errors it stores
    maps = experiments.read_gamma_star_maps(BOOK_DATA / "paper" / f"figure{figure}.npz")
    assert [m.tau for m in maps] == taus
    cells = sorted((BOOK_DATA / "paper" / f"run-figure{figure}" / "cells" / f"figure{figure}").glob("*.npz"))
    assert len(cells) == len(taus) * n_q * 30
    by_tau = {m.tau: m for m in maps}
    for path in cells:
        with np.load(path) as data:
            tau, q, r = data["key"]
            m = by_tau[float(tau)]
            i, j = int(np.flatnonzero(m.qs == q)[0]), int(np.flatnonzero(m.rs == r)[0])
            assert np.array_equal(data["value"], np.stack([m.values[i, j], m.se[i, j]]))
    for m in maps:
        assert m.values.shape == (n_q, 30, 30) and np.isfinite(m.values).all() and np.all(m.se > 0)
        assert np.array_equal(m.empirical, m.gammas[np.argmin(m.values, axis=2)])
        s = m.settings
        assert (s["T"], s["n0"], s["trials"], s["cap"], s["format"]) == (50, 1000, 50, 20000, "values")
        assert (s["statistic"], s["collapse"], s["seed"]) == ("paper", "floor", 0)


@pytest.mark.parametrize("figure, cell", [("4", "tau0.05_q0.99_r0.01.npz"),
                                          ("5", "tau0.01_q0.4155172414_r0.01.npz"),
                                          ("5", "tau0.1_q0.4155172414_r0.01.npz"),
                                          ("5", "tau0.2_q0.4155172414_r0.01.npz")])
def test_a_stored_paper_scale_cell_is_recomputed_to_rounding(figure, cell):
    # speed work on the simulators must move no number: recompute one stored paper-scale cell (a shrinking
    # one, ~2 s) with the command line's settings and compare every stored value and standard error.
    # Equality is asked to 1e-12, not to the last bit: numpy's float64 exp, log and sums take different
    # SIMD paths on different CPUs (AVX2 / AVX-512), so a cell computed on one machine and recomputed on
    # another differs by an ULP here and there (observed: 4e-16 relative in 2 of 30 gammas).  On one machine
    # results are bit-identical, and the determinism tests (tests/test_determinism.py, tests/test_sweep.py and
    # benchmarks/fingerprint.py --check) ask exactly that.  A real change to a simulator moves these values
    # by far more than 1e-12, and the argmin over gamma must not move at all.
    from perfpriv.cli import SCALES, TAUS

    with np.load(BOOK_DATA / "paper" / f"run-figure{figure}" / "cells" / f"figure{figure}" / cell) as data:
        key, stored = data["key"], data["value"]
    tau, q, r = (float(x) for x in key)
    assert tau in TAUS[figure]
    s = SCALES["paper"]["gamma_maps"]
    m = experiments.gamma_star_map(GaussianMean(s["gammas"], tau=tau, d=s["d"], R=s["R"]),
                                   Memoryless(q=np.array([[q]]), r=np.array([[r]])), T=s["T"], n0=s["n0"],
                                   trials=s["trials"], policy=Policy(cap=s["cap"]), conventions="paper", seed=0)
    recomputed = np.stack([m.values[0, 0], m.se[0, 0]])
    np.testing.assert_allclose(recomputed, stored, rtol=1e-12, atol=0)
    assert np.argmin(recomputed[0]) == np.argmin(stored[0])


def test_the_finished_thresholds_of_a_run_read_back_as_the_finished_run_stores_them(book_figure4, tmp_path):
    # every threshold complete: the maps equal the ones the finished run wrote (figure4.npz)
    from perfpriv import cli

    maps = cli.finished_gamma_star_maps(book_figure4, "4")
    with np.load(book_figure4 / "figure4.npz") as data:
        assert [m.tau for m in maps] == list(cli.TAUS["4"])
        for k, m in enumerate(maps):
            for name in ("empirical", "bound", "constrained", "mean_field", "values", "se"):
                assert np.array_equal(getattr(m, name), data[f"{name}_{k}"], equal_nan=True)
    # a run still going: one cell of the second threshold missing leaves that threshold out, and the
    # reader simulates nothing (it reads complete thresholds only, through a store that refuses writes)
    partial = tmp_path / "run"
    (partial / "cells").mkdir(parents=True)
    (partial / "run.json").write_text((book_figure4 / "run.json").read_text())
    cells = cli.CellFiles(partial / "cells" / "figure4")
    done = cli.CellFiles(book_figure4 / "cells" / "figure4")
    keys = sorted(done)
    for key in keys:
        if key != max(k for k in keys if k[0] == cli.TAUS["4"][1]):
            cells[key] = done[key]
    again = cli.finished_gamma_star_maps(partial, 4)
    assert [m.tau for m in again] == [cli.TAUS["4"][0]]
    assert np.array_equal(again[0].values, maps[0].values)
    with pytest.raises(ValueError, match="out"):
        cli.finished_gamma_star_maps(tmp_path, "4")
    with pytest.raises(ValueError, match="figure"):
        cli.finished_gamma_star_maps(book_figure4, "3")


def test_read_gamma_star_maps_refuses_a_file_that_is_not_an_npz_archive(tmp_path):
    for name, content in (("notes.txt", b"hello"), ("array.npy", None)):
        path = tmp_path / name
        if content is None:
            np.save(path, np.arange(3.0))
        else:
            path.write_bytes(content)
        # was numpy's "This file contains pickled (object) data" (text) or an ndarray used as a context manager
        with pytest.raises(ValueError, match=r"^path must be a gamma\* map file .* not one"):
            experiments.read_gamma_star_maps(path)


def test_a_capped_that_is_no_sequence_of_arrays_is_refused_by_name():
    # issue 32 E: capped=0.5 failed with "'float' object is not iterable" inside the function
    m = synthetic_map()
    for bad in (0.5, True, "x", np.float64(2.0), np.array(3)):
        with pytest.raises(ValueError, match="capped must be None, False or a sequence"):
            experiments.gamma_star_gaps(m, capped=bad)
    assert experiments.gamma_star_gaps(m, capped=np.array([[[0, 3], [5, 0]]])).cells.tolist() == [4]
