"""The command line ``python -m perfpriv``: book-scale reproduction of every figure, help and errors.

The reproduction runs once per session (module fixture, a subprocess in a
temporary folder, warnings turned into errors) and the tests inspect what it
wrote. It is the slowest test of the suite (about half a minute on 2 cores).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

EXPECTED = {
    "1": ["figure1"], "2": ["figure2"], "3": ["figure3a", "figure3bc"], "4": ["figure4"],
    "5": ["figure5"], "6": ["figure6"], "7": ["figure7"],
}
#: panels of the multi-panel figures: 2 rows x (error, population); (b), (c); one row of 3 per tau
PANELS = {"figure1": "abcd", "figure6": "abcd", "figure3bc": "bc", "figure4": "abcdef", "figure5": "abcdefghi"}


def run_cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-W", "error", "-m", "perfpriv", *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def book_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    proc = run_cli("reproduce", "--figure", "all", "--scale", "book", "--out", str(out), "--n-jobs", "2",
                   "--seed", "0")
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_reproduce_all_at_book_scale_writes_every_figure_png_and_data(book_run):
    out, _ = book_run
    for names in EXPECTED.values():
        for name in names:
            png = out / f"{name}.png"
            assert png.stat().st_size > 5000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            with np.load(out / f"{name}.npz") as data:
                assert len(data.files) >= 4
                assert all(np.asarray(data[k]).size > 0 for k in data.files)
            for letter in PANELS.get(name, ""):
                assert (out / f"{name}_panel_{letter}.png").stat().st_size > 2000


def test_no_unexpected_files_and_nothing_on_stderr_without_a_terminal(book_run):
    out, proc = book_run
    names = {p.name for p in out.iterdir()}
    expected = {"run.json"}
    for group in EXPECTED.values():
        for name in group:
            expected |= {f"{name}.png", f"{name}.npz"} | {f"{name}_panel_{x}.png" for x in PANELS.get(name, "")}
    assert names == expected
    assert proc.stderr == ""  # no progress bar, no warning when stderr is not a terminal


def test_run_record_holds_settings_seed_and_timings(book_run):
    out, _ = book_run
    record = json.loads((out / "run.json").read_text())
    assert record["scale"] == "book" and record["seed"] == 0 and record["n_jobs"] == 2
    assert sorted(record["figures"]) == sorted(EXPECTED)
    for info in record["figures"].values():
        assert info["seconds"] > 0 and info["settings"]
    # book scale = the chapters' sizes (chapter 06: 4 x 4 grid, 8 gammas, T = 10, N0 = 200, 5 trials)
    fig4 = record["figures"]["4"]["settings"]
    assert (len(fig4["qs"]), len(fig4["rs"]), len(fig4["gammas"]), fig4["T"], fig4["n0"], fig4["trials"]) == \
        (4, 4, 8, 10, 200, 5)


def test_figure2_numbers_are_those_of_the_library_call(book_run):
    from perfpriv import optimize
    from perfpriv.cli import SCALES

    out, _ = book_run
    s = SCALES["book"]["maps"]
    with np.load(out / "figure2.npz") as data:
        Q, R = np.meshgrid(data["q"], data["r"], indexing="ij")
        res = optimize.optimal_epsilon(Q, R, s["epsilons"], T=s["T"], n0=s["n0"], trials=s["trials"],
                                       model="leak", mu=s["mu"], seed=0, n_jobs=1)
        assert np.array_equal(data["errors"], res.errors)   # and independent of --n-jobs 2
        assert np.array_equal(data["epsilon_star"], res.epsilon)


def test_help_documents_the_command_and_every_option():
    proc = run_cli("--help")
    assert proc.returncode == 0
    for word in ("reproduce", "--figure", "--scale", "--out", "--n-jobs", "--seed", "book", "paper", "all"):
        assert word in proc.stdout
    sub = run_cli("reproduce", "--help")
    assert sub.returncode == 0 and "--figure {1..7,all}" in sub.stdout


@pytest.mark.parametrize("args, words", [
    (["reproduce", "--figure", "9", "--out", "x"], ["--figure", "invalid choice: '9'"]),
    (["reproduce", "--figure", "2", "--scale", "huge", "--out", "x"], ["--scale", "huge"]),
    (["reproduce", "--figure", "2"], ["--out"]),
    (["reproduce", "--figure", "2", "--out", "x", "--n-jobs", "0"], ["--n-jobs", "got 0"]),
    (["reproduce", "--figure", "2", "--out", "x", "--seed", "-3"], ["--seed", "got -3"]),
    ([], ["COMMAND"]),
])
def test_bad_arguments_exit_with_code_2_and_one_line(args, words, tmp_path):
    proc = run_cli(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0]
    assert proc.stdout == ""


def test_out_must_not_be_a_file(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    proc = run_cli("reproduce", "--figure", "3", "--out", str(f))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "--out" in proc.stderr


def test_every_format_is_written_for_the_figure_and_its_panels(tmp_path):
    proc = run_cli("reproduce", "--figure", "3", "--out", str(tmp_path), "--format", "svg,pdf,png")
    assert proc.returncode == 0, proc.stderr
    for name in ("figure3a", "figure3bc_panel_b", "figure3bc_panel_c", "figure3bc"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (tmp_path / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
        assert b"<svg" in (tmp_path / f"{name}.svg").read_bytes()[:2000]
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["formats"] == ["svg", "pdf", "png"]
    bad = run_cli("reproduce", "--figure", "3", "--out", str(tmp_path), "--format", "png,jpg")
    assert bad.returncode == 2 and "--format" in bad.stderr and "jpg" in bad.stderr


def test_a_panel_keeps_its_colour_key():
    """The colour bar of a heatmap, or of a row of panels, is inside the box of the panel it belongs to."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from perfpriv import cli, optimize, plots

    Q, R = np.meshgrid([0.2, 0.6], [0.2, 0.6], indexing="ij")
    res = optimize.mean_field_optimal_epsilon(Q, R, [0.5, np.inf], T=5)
    for fig in (plots.figure1(T=5, trials=2, epsilons=[0.5, np.inf]), plots.epsilon_star_map(res, [0.2, 0.6], [0.2, 0.6]),
                plots.figure_gamma_star(plots.gamma_star_map(0.02, qs=[0.1, 0.5], rs=[0.2, 0.6], empirical=False))):
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        boxes = cli.panel_boxes(fig, renderer)
        bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
        assert bars
        for bar in bars:
            b = bar.get_tightbbox(renderer)
            assert any(box.x0 <= b.x0 + 1 and b.x1 <= box.x1 + 1 and box.y0 <= b.y0 + 1 and b.y1 <= box.y1 + 1
                       for box in boxes), "a colour bar is outside every panel's box"


def test_stated_times_and_file_names_agree_between_help_and_readme():
    from pathlib import Path

    from perfpriv import cli

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    help_text = run_cli("reproduce", "--help").stdout
    assert f"about {cli.BOOK_SECONDS} s" in readme and f"about {cli.BOOK_SECONDS} s" in help_text
    for number, time in cli.PAPER_TIMES.items():
        row = next(line for line in readme.splitlines() if line.startswith(f"| {number} "))
        assert row.rstrip(" |").endswith(time), (row, time)
        assert f"Fig. {number} {time}" in " ".join(help_text.split())
    for name in ("figureK.png", "figureK_panel_X.png", "figureK.npz", "run.json", "figure3a", "figure3bc"):
        assert name in readme and name in help_text, name
