"""The command line ``python -m perfpriv``: book-scale reproduction, the record, interruption and resume, faults.

The full book-scale reproduction runs once per module (a subprocess in a
temporary folder, warnings turned into errors, seed :data:`SEED`) and the tests
inspect what it wrote. The resume test interrupts a run of Fig. 4 with SIGINT
(what Ctrl-C sends) once its first γ* cell is on disk, resumes it with another
number of workers, and compares every file with those of an uninterrupted run,
byte for byte; so do the tests that stop the last figure (Fig. 7). The
uninterrupted run of a figure is that figure's files in the full reproduction
(same scale, seed, conventions and formats: each figure's numbers depend only
on those, and its files are the same bytes whether it runs alone or among the
others), and its record is the full run's with that figure's entry alone
(:func:`uninterrupted_run_of`).

The file is one pytest-xdist group (``--dist loadgroup`` otherwise spreads its
tests one by one over the workers, and each worker would run the full
reproduction for itself).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

EXPECTED = {
    "1": ["figure1"], "2": ["figure2"], "3": ["figure3a", "figure3bc"], "4": ["figure4"],
    "5": ["figure5"], "6": ["figure6"], "7": ["figure7"],
}
#: panels of the multi-panel figures: 2 rows x (error, population); (b), (c); one row of 3 per tau
PANELS = {"figure1": "abcd", "figure6": "abcd", "figure3bc": "bc", "figure4": "abcdef", "figure5": "abcdefghi"}
#: book scale: 4 x 4 (q, r) cells per tau; Fig. 4 has 2 taus, Fig. 5 three
CELLS = {"4": 32, "5": 48}
#: the seed of the full book-scale run and of the runs compared with its figures (not the default, 0, so that a
#: seed lost on the way -- by a resume, say -- shows)
SEED = 3


#: the checkout these tests belong to: the commands they start import its perfpriv, not an installed one
ROOT = Path(__file__).resolve().parents[1]


def checkout_env():
    """The environment of the commands the tests start: this checkout first on ``PYTHONPATH``."""
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + path if path else "")}


def run_cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-W", "error", "-m", "perfpriv", *args], capture_output=True,
                          text=True, timeout=timeout, env=checkout_env())


def run_main(*args):
    """``python -m perfpriv ARGS`` in this process, warnings turned into errors (as ``-W error``).

    For the commands refused before any work: a subprocess would only add the interpreter's start-up and
    the library's import (seconds), which every other command of this file goes through.
    """
    from perfpriv import cli

    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        warnings.simplefilter("error")
        code = cli.main(list(args))
    return types.SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def files_of(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def uninterrupted_run_of(book_run, number):
    """The files of ``reproduce --figure NUMBER --scale book --seed SEED``, uninterrupted, from the full run.

    Its figure files and γ* cells are those of the full run (the same bytes, whether the figure runs alone
    or among the others); its record is the full run's with that figure's entry alone, written as the
    command writes it; ``timings.json`` (seconds) is not comparable between two runs: None.
    """
    out, _ = book_run
    names = tuple(EXPECTED[number])
    files = {name: data for name, data in files_of(out).items()
             if name.startswith(names) or name.startswith(f"cells/figure{number}/")}
    assert f"{names[0]}.png" in files
    record = json.loads((out / "run.json").read_text())
    record["figures"] = {number: record["figures"][number]}
    files["run.json"] = (json.dumps(record, indent=2) + "\n").encode()
    files["timings.json"] = None
    return files


def one_line_error(proc, *words):
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.fixture(scope="module")
def book_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    proc = run_cli("reproduce", "--figure", "all", "--scale", "book", "--out", str(out), "--seed", str(SEED))
    assert proc.returncode == 0, proc.stderr
    return out, proc


# ---------------------------------------------------------------- the files of a run
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
    expected = {"run.json", "timings.json", "cells"}
    for group in EXPECTED.values():
        for name in group:
            expected |= {f"{name}.png", f"{name}.npz"} | {f"{name}_panel_{x}.png" for x in PANELS.get(name, "")}
    assert names == expected
    assert sorted(p.name for p in (out / "cells").iterdir()) == ["figure4", "figure5"]
    for number, count in CELLS.items():
        assert len(list((out / "cells" / f"figure{number}").glob("*.npz"))) == count
    assert proc.stderr == ""  # no progress bar, no warning when stderr is not a terminal


def test_run_record_holds_settings_conventions_seed_and_versions(book_run):
    out, _ = book_run
    record = json.loads((out / "run.json").read_text())
    assert record["scale"] == "book" and record["seed"] == SEED and record["conventions"] == "paper"
    assert set(record["versions"]) >= {"perfpriv", "numpy", "matplotlib", "python"}
    keys = {"statistic", "collapse", "floor", "stop", "clip_estimate", "cap", "penalty"}
    assert set(record["conventions_settings"]["bernoulli"]) == keys
    assert record["conventions_settings"]["gaussian"]["statistic"] == "paper"
    assert sorted(record["figures"]) == sorted(EXPECTED)
    for number, info in record["figures"].items():
        assert info["status"] == "done" and info["settings"] and info["data"]
        assert sorted(info["files"]) == sorted(p.name for p in out.glob("figure*") if p.name.startswith(
            tuple(EXPECTED[number])))
        conv = info["conventions"]
        # the Bernoulli figures also say which published script "authors" follows (None for the paper's text)
        assert set(conv) - {"script"} == keys or all(set(v) == keys for v in conv.values())
    # the gamma* search stops a run at one user and charges the floor
    assert record["figures"]["4"]["conventions"]["stop"] == 1
    assert record["figures"]["4"]["conventions"]["collapse"] == "floor"
    # book scale = the chapters' sizes (chapter 06: 4 x 4 grid, 8 gammas, T = 10, N0 = 200, 5 trials)
    fig4 = record["figures"]["4"]["settings"]
    assert (len(fig4["qs"]), len(fig4["rs"]), len(fig4["gammas"]), fig4["T"], fig4["n0"], fig4["trials"]) == \
        (4, 4, 8, 10, 200, 5)
    timings = json.loads((out / "timings.json").read_text())
    assert timings["n_jobs"] == 1 and sorted(timings["figures"]) == sorted(EXPECTED)
    assert all(info["seconds"] > 0 for info in timings["figures"].values())


def test_figure2_numbers_are_those_of_the_library_call(book_run):
    from perfpriv import bernoulli, optimize
    from perfpriv.behaviour import Memoryless
    from perfpriv.cli import SCALES

    out, _ = book_run
    s = SCALES["book"]["maps"]
    with np.load(out / "figure2.npz") as data:
        # three cells, alone: a cell's numbers do not depend on the grid around it
        i, j = np.array([0, 5, 11]), np.array([11, 2, 7])
        res = optimize.optimal_epsilon(bernoulli.RandomizedResponse(s["epsilons"], mu=s["mu"]),
                                       Memoryless(q=data["q"][i], r=data["r"][j], rule="leak"), T=s["T"], n0=s["n0"],
                                       trials=s["trials"], seed=SEED)
        assert np.array_equal(data["values"][i, j], res.values) and np.array_equal(data["se"][i, j], res.se)
        assert np.array_equal(data["epsilon_star"][i, j], res.epsilon)


def test_every_gamma_star_cell_file_holds_its_cell_of_the_map(book_run):
    from perfpriv.cli import CellFiles

    out, _ = book_run
    with np.load(out / "figure4.npz") as data:
        store = CellFiles(out / "cells" / "figure4")
        assert len(store) == CELLS["4"]
        for k, tau in enumerate((0.02, 0.05)):
            assert data[f"tau_{k}"] == tau
            for i, q in enumerate(data["qs"]):
                for j, r in enumerate(data["rs"]):
                    values, se = store[(tau, q, r)]
                    assert np.array_equal(values, data[f"values_{k}"][i, j])
                    assert np.array_equal(se, data[f"se_{k}"][i, j])
                    assert data[f"empirical_{k}"][i, j] == data["gammas"][np.argmin(values)]


# ---------------------------------------------------------------- interruption and resume
def test_an_interrupted_run_resumed_writes_exactly_the_files_of_an_uninterrupted_one(tmp_path, book_run):
    args = ["reproduce", "--figure", "4", "--scale", "book", "--seed", str(SEED)]
    a = uninterrupted_run_of(book_run, "4")              # the uninterrupted run of the same command
    cut = tmp_path / "cut"
    proc = subprocess.Popen([sys.executable, "-W", "error", "-m", "perfpriv", *args, "--out", str(cut)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=checkout_env())
    start = time.monotonic()
    while not list(cut.glob("cells/figure4/*.npz")) and proc.poll() is None and time.monotonic() - start < 300:
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)                       # what Ctrl-C sends
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted:") and "Traceback" not in err, err
    assert "--resume" in lines[0] and "cells stored" in lines[0]
    names = {p.name for p in cut.rglob("*") if p.is_file()}
    assert not any(n.startswith(".") for n in names)     # no partial file left behind
    assert "figure4.png" not in names and 0 < len(list(cut.glob("cells/figure4/*.npz"))) < CELLS["4"]
    record = json.loads((cut / "run.json").read_text())   # the record was written before the work
    assert record["figures"]["4"]["status"] == "pending" and record["seed"] == SEED
    resumed = run_cli(*args, "--out", str(cut), "--resume", "--n-jobs", "2")
    assert resumed.returncode == 0, resumed.stderr
    b = files_of(cut)
    assert sorted(a) == sorted(b)
    assert [name for name in a if name != "timings.json" and a[name] != b[name]] == []
    assert json.loads(b["timings.json"])["figures"]["4"]["resumed"] is True
    # resuming a finished run does nothing: the files stay as they are
    again = run_cli(*args, "--out", str(cut), "--resume")
    assert again.returncode == 0 and "already there" in again.stdout
    assert files_of(cut) == b


def test_a_killed_job_stops_as_cleanly_as_ctrl_c(tmp_path):
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-W", "error", "-m", "perfpriv", "reproduce", "--figure", "5",
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=checkout_env())
    start = time.monotonic()
    while not list(out.glob("cells/figure5/*.npz")) and proc.poll() is None and time.monotonic() - start < 300:
        time.sleep(0.005)
    proc.terminate()                                      # SIGTERM
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 143, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("terminated:") and "--resume" in lines[0], err
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]
    assert json.loads((out / "run.json").read_text())["figures"]["5"]["status"] == "pending"


@pytest.mark.parametrize("change, word", [(["--seed", "1"], "seed"), (["--conventions", "authors"], "conventions"),
                                          (["--scale", "paper"], "scale")])
def test_a_folder_holding_another_run_is_refused_and_left_as_it_was(book_run, change, word):
    out, _ = book_run
    before = files_of(out)
    args = {"--figure": "6", "--scale": "book", "--seed": str(SEED)}
    args.update(dict(zip(change[::2], change[1::2])))
    proc = run_main("reproduce", *[x for kv in args.items() for x in kv], "--out", str(out))
    assert proc.returncode == 2
    one_line_error(proc, "holds another run", word)
    assert files_of(out) == before


def test_a_folder_with_figure_files_but_no_record_is_refused(tmp_path):
    (tmp_path / "figure1.png").write_bytes(b"not ours")
    proc = run_main("reproduce", "--figure", "6", "--out", str(tmp_path))
    assert proc.returncode == 2
    one_line_error(proc, "run.json")


def test_authors_conventions_are_recorded_with_every_setting_behind_them(tmp_path):
    proc = run_cli("reproduce", "--figure", "1", "--conventions", "authors", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["conventions"] == "authors"
    bern = record["conventions_settings"]["bernoulli"]
    assert (bern["floor"], bern["collapse"], bern["penalty"], bern["clip_estimate"]) == (0, "penalty", 10.0, True)
    gauss = record["conventions_settings"]["gaussian"]
    assert (gauss["statistic"], gauss["floor"], gauss["stop"], gauss["collapse"]) == ("exact", 1, 1, "ran")
    # Fig. 1 follows the authors' curve script, not their map script: floor 1, no stop, clipped estimates
    fig1 = record["figures"]["1"]["conventions"]
    assert (fig1["floor"], fig1["stop"], fig1["clip_estimate"], fig1["script"]) == (1, 0, True, "curves")
    data = np.load(tmp_path / "figure1.npz")
    assert all(np.all(data[f"mean_population_{k}"] >= 1) for k in range(2))


# ---------------------------------------------------------------- help and faults
@pytest.fixture(scope="module")
def reproduce_help():
    """``python -m perfpriv reproduce --help`` (read by two tests)."""
    return run_cli("reproduce", "--help")


def test_help_documents_the_command_and_every_option(reproduce_help):
    proc = run_cli("--help")
    assert proc.returncode == 0
    for word in ("reproduce", "--figure", "--scale", "--out", "--n-jobs", "--seed", "--conventions", "--resume",
                 "book", "paper", "authors", "all"):
        assert word in proc.stdout
    sub = reproduce_help
    assert sub.returncode == 0 and "--figure {1..7,all}" in sub.stdout


@pytest.mark.parametrize("args, words", [
    (["reproduce", "--figure", "9", "--out", "x"], ["--figure", "invalid choice: '9'"]),
    (["reproduce", "--figure", "2", "--scale", "huge", "--out", "x"], ["--scale", "huge"]),
    (["reproduce", "--figure", "2", "--conventions", "code", "--out", "x"], ["--conventions", "code"]),
    (["reproduce", "--figure", "2"], ["--out"]),
    (["reproduce", "--figure", "2", "--out", "x", "--n-jobs", "0"], ["--n-jobs", "got 0"]),
    (["reproduce", "--figure", "2", "--out", "x", "--seed", "-3"], ["--seed", "got -3"]),
    ([], ["COMMAND"]),
])
def test_bad_arguments_exit_with_code_2_and_one_line(args, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    proc = run_cli(*args)
    assert proc.returncode == 2
    one_line_error(proc, *words)
    assert proc.stdout == "" and not (tmp_path / "x").exists()


@pytest.mark.parametrize("where, words", [
    ("file", ["--out must be a folder"]),
    ("below-file", ["--out", "Not a directory"]),
    ("empty", ["--out must name a folder"]),
    ("blank", ["--out must name a folder"]),
    ("/proc/perfpriv-test", ["--out", "/proc/perfpriv-test"]),
    ("/sys/perfpriv-test", ["--out", "/sys/perfpriv-test"]),
    ("/proc", ["--out", "cannot write"]),
])
def test_output_folder_faults_are_one_line_errors_with_code_2(where, words, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.txt").write_text("x")
    out = {"file": str(tmp_path / "file.txt"), "below-file": str(tmp_path / "file.txt" / "sub"), "empty": "",
           "blank": "  "}.get(where, where)
    if where.startswith("/") and not os.path.isdir(os.path.dirname(where)):
        pytest.skip(f"{os.path.dirname(where)} does not exist here")
    proc = run_cli("reproduce", "--figure", "3", "--out", out)
    assert proc.returncode == 2
    one_line_error(proc, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]   # nothing written (not even in '.')


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

    from perfpriv import bernoulli, cli, experiments, gaussian, optimize, plots
    from perfpriv.behaviour import Memoryless

    Q, R = np.meshgrid([0.2, 0.6], [0.2, 0.6], indexing="ij")
    res = optimize.mean_field_optimal_epsilon(bernoulli.RandomizedResponse([0.5, np.inf], mu=(0.5, 1.0)),
                                              Memoryless(q=Q, r=R), T=5)
    runs = experiments.curve_runs(bernoulli.RandomizedResponse([0.5, np.inf]),
                                  [Memoryless(q=0.6, r=0.3), Memoryless(q=0.3, r=0.6)], T=5, trials=2)
    for fig in (plots.figure1(runs), plots.epsilon_star_map(res, q=[0.2, 0.6], r=[0.2, 0.6]),
                plots.figure_gamma_star(experiments.gamma_star_map(
                    gaussian.GaussianMean(tau=0.02, d=12, R=10.0),
                    Memoryless(q=np.array([0.1, 0.5])[:, None], r=np.array([0.2, 0.6])[None, :]),
                    maps=experiments.THEORY_MAPS))):
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


def test_stated_times_and_file_names_agree_between_help_and_readme(reproduce_help):
    from pathlib import Path

    from perfpriv import cli

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    help_text = reproduce_help.stdout
    assert cli.BOOK_TIME in readme and cli.BOOK_TIME in " ".join(help_text.split())
    for number, time in cli.PAPER_TIMES.items():
        row = next(line for line in readme.splitlines() if line.startswith(f"| {number} "))
        assert row.rstrip(" |").endswith(time), (row, time)
        assert f"Fig. {number} {time}" in " ".join(help_text.split())
    for name in ("figureK.png", "figureK_panel_X.png", "figureK.npz", "run.json", "figure3a", "figure3bc"):
        assert name in readme and name in help_text, name


# ---------------------------------------------------------------- a stop sent to the main process alone
#: the last (and only) figure of the runs below: Fig. 7 at book scale, a few seconds, three chunks of ε* cells
LAST = ("reproduce", "--figure", "7", "--scale", "book", "--seed", str(SEED))


class Stderr:
    """The stderr of a running command, read as it comes (a progress bar ends its lines with a carriage return)."""

    def __init__(self, proc):
        self._bytes, self._stream = b"", proc.stderr
        self._thread = threading.Thread(target=self._read, args=(proc.stderr.fileno(),), daemon=True)
        self._thread.start()

    def _read(self, fd):
        for chunk in iter(lambda: os.read(fd, 4096), b""):
            self._bytes += chunk

    @property
    def text(self):
        return self._bytes.decode("utf-8", "replace")

    def wait_for(self, proc, text, timeout=300):
        """Wait until ``text`` is on stderr (True) or the command ended (False)."""
        start = time.monotonic()
        while text not in self.text and proc.poll() is None and time.monotonic() - start < timeout:
            time.sleep(0.002)
        return text in self.text

    def lines(self):
        """The whole stderr once the command ended, progress updates as lines of their own."""
        self._thread.join(timeout=60)
        self._stream.close()
        return self.text.replace("\r", "\n").splitlines()


@pytest.fixture(scope="module")
def last_figure_whole(book_run):
    """The files of ``LAST`` run uninterrupted (Fig. 7 of the full run, :func:`uninterrupted_run_of`)."""
    return uninterrupted_run_of(book_run, "7")


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted:"), (signal.SIGTERM, 143, "terminated:")])
def test_a_stop_sent_to_the_main_process_during_the_last_figure_stops_it_within_seconds(
        tmp_path, last_figure_whole, sig, code, word):
    # `kill -INT PID` (or a terminal's Ctrl-C with one worker) reaches the main process alone; the run used
    # to finish the last figure regardless, for up to 80 s, and exit 0 without a word
    out = tmp_path / "cut"
    proc = subprocess.Popen([sys.executable, "-W", "error", "-m", "perfpriv", *LAST, "--progress", "on",
                             "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=checkout_env())
    err = Stderr(proc)
    # the progress bar names the figure as its computation starts: the run is inside its last figure
    assert err.wait_for(proc, "figure 7 (book scale)"), err.lines()
    proc.send_signal(sig)
    sent = time.monotonic()
    proc.wait(timeout=300)
    waited = time.monotonic() - sent
    lines = err.lines()
    assert proc.returncode == code, lines
    said = [x for x in lines if "interrupted" in x or "terminated" in x]
    assert len(said) == 1 and said[0] == lines[-1] and "Traceback" not in err.text, lines
    # stopped inside the figure, at the first safe point after the signal: seconds, not the whole figure
    assert said[0].startswith(f"{word} no figure finished;") and said[0].endswith("--resume"), said
    assert waited < 15, waited
    assert not [p for p in out.rglob("*") if p.name.startswith(".")]      # no partial file
    assert not (out / "figure7.png").exists()
    assert json.loads((out / "run.json").read_text())["figures"]["7"]["status"] == "pending"
    resumed = run_cli(*LAST, "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    got = files_of(out)
    assert sorted(got) == sorted(last_figure_whole)
    assert [name for name in got if name != "timings.json" and got[name] != last_figure_whole[name]] == []


@pytest.mark.parametrize("after", ["numpy", "perfpriv.cli", "joblib", "tqdm.auto"])
def test_a_double_ctrl_c_during_start_up_exits_130_in_one_line(tmp_path, after):
    # the moment is read from the interpreter's import log (-X importtime, one line per finished
    # import on stderr): numpy and perfpriv.cli load before the command starts, joblib and tqdm
    # with the run's set-up
    proc = subprocess.Popen([sys.executable, "-W", "error", "-X", "importtime", "-m", "perfpriv", "reproduce",
                             "--figure", "6", "--out", str(tmp_path / "early")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=checkout_env())
    log = []
    for line in proc.stderr:
        log.append(line)
        if line.split("|")[-1].strip() == after:
            break
    else:
        pytest.fail(f"{after} was never imported: {''.join(log[-5:])}")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    lines = [x for x in (''.join(log) + err).splitlines() if not x.startswith("import time:")]
    assert proc.returncode == 130, lines                  # not killed by the second SIGINT (-2)
    assert len(lines) == 1 and lines[0].startswith("interrupted") and "Traceback" not in err, lines


# ---------------------------------------------------------------- the public helpers' checks
def test_run_figure_accepts_a_generator_as_seed_drawing_one_integer_from_it():
    from perfpriv import cli

    got = cli.run_figure("6", "book", np.random.default_rng(1))["figure6"][1]
    root = int(np.random.default_rng(1).integers(0, 2**63 - 1))
    want = cli.run_figure("6", "book", root)["figure6"][1]
    assert sorted(got) == sorted(want)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (True, TypeError), ("1", TypeError), (1.5, ValueError)])
def test_run_figure_refuses_a_bad_seed_naming_it(seed, error):
    from perfpriv import cli

    with pytest.raises(error, match=r"^seed "):
        cli.run_figure("6", "book", seed)


def test_save_figure_takes_a_single_format_name(tmp_path):
    from perfpriv import cli
    from perfpriv.plots import new_figure

    fig, _ = new_figure(1, 2)
    names = [p.name for p in cli.save_figure(fig, {"x": np.arange(3)}, tmp_path, "f", formats="svg")]
    assert names == ["f.svg", "f_panel_a.svg", "f_panel_b.svg", "f.npz"]


@pytest.mark.parametrize("kwargs, error, name", [
    (dict(formats="p"), ValueError, "formats"), (dict(formats=()), ValueError, "formats"),
    (dict(formats=3), TypeError, "formats"), (dict(name="../x"), ValueError, "name"),
    (dict(name=""), ValueError, "name"), (dict(first_letter="ab"), ValueError, "first_letter"),
    (dict(out=3), TypeError, "out"), (dict(fig=None), TypeError, "fig"), (dict(data=[1, 2]), TypeError, "data"),
])
def test_save_figure_refuses_bad_arguments_naming_them(tmp_path, kwargs, error, name):
    from perfpriv import cli
    from perfpriv.plots import new_figure

    fig, _ = new_figure()
    args = dict(fig=fig, data={"x": 1.0}, out=tmp_path, name="f") | kwargs
    with pytest.raises(error, match=rf"^{name} "):
        cli.save_figure(**args)
    assert list(tmp_path.iterdir()) == []


def test_save_figure_refuses_a_missing_folder(tmp_path):
    from perfpriv import cli
    from perfpriv.plots import new_figure

    with pytest.raises(ValueError, match=r"^out must be an existing folder"):
        cli.save_figure(new_figure()[0], {}, tmp_path / "nowhere", "f")


@pytest.mark.parametrize("fig_ok, renderer, name", [(False, None, "fig"), (True, 3, "renderer")])
def test_panel_boxes_refuses_what_is_not_a_figure_or_a_renderer(fig_ok, renderer, name):
    from perfpriv import cli
    from perfpriv.plots import new_figure

    fig = new_figure()[0] if fig_ok else "figure"
    with pytest.raises(TypeError, match=rf"^{name} "):
        cli.panel_boxes(fig, renderer)
