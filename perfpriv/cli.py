r"""Command line: regenerate the paper's figures into a folder, resumably.

::

    python -m perfpriv reproduce --figure {1..7,all} --scale {book,paper} --out DIR
                                 [--conventions {paper,authors}] [--format png,svg,pdf] [--n-jobs N]
                                 [--seed S] [--resume]

For every requested figure this writes, into ``DIR`` (``K`` the figure's number, ``X`` a panel letter):

* ``figureK.png`` -- the whole figure, drawn by :mod:`perfpriv.plots` (also ``.svg``, ``.pdf`` with
  ``--format``), and ``figureK_panel_X.png`` (``.svg``, ``.pdf``) -- each panel of a multi-panel
  figure with its colour bar, lettered a, b, ... in reading order;
* ``figureK.npz`` -- the numbers behind the figure (described by its ``data`` entry in ``run.json``),
  from the same library calls the figure draws;
* ``cells/figureK/`` (Figs. 4-5) -- one file per finished (τ, q, r) cell of the simulated γ* maps;
* ``run.json`` -- the record: command, scale, conventions and every setting behind them (statistic,
  collapse, floor, stop, cap, penalty, clip_estimate), seed, versions, and per figure its status,
  files, data and settings; written before any work starts, updated as each figure finishes, and
  independent of the machine and of interruptions;
* ``timings.json`` -- seconds per figure and ``n_jobs`` (the one file that differs between two runs).

Interruptions. Every file is written atomically (a temporary name in ``DIR``, then renamed). Ctrl-C
(exit code 130) and SIGTERM (143) stop cleanly with one line saying what finished and the command that
resumes, whether the signal reached the process group or the main process alone (``kill -INT PID``).
The stop takes effect at the next safe point -- a batch of γ* cells stored, a chunk of ε* cells, a run
of curves, a τ of Fig. 3a or a panel of Fig. 3 finished, a figure computed or its files written --
never in the middle of a computation; a second Ctrl-C stops at once. ``--resume`` skips the figures
and γ* cells already in ``DIR``, so that a resumed run writes exactly the files of an uninterrupted
one (bit for bit on one machine: each cell is keyed by the seed and its own coordinates). A folder
holding another run (other scale, conventions, seed, settings or versions) is refused, not mixed.

Fig. 3 is written as ``figure3a`` (:math:`p_{\tau}` against tau) and ``figure3bc`` (panels ``b``
and ``c``); Figs. 1 and 6 have four panels (a-d), Fig. 4 six and Fig. 5 nine (three per tau).
``--scale book`` uses the chapters' default sizes (all seven figures in about a minute on two cores),
``--scale paper`` the paper's settings (:data:`SCALES`; hours for the γ* maps of Figs. 4-5: the
measured times are in ``python -m perfpriv --help``). ``--conventions authors`` follows, where the
paper's text leaves a choice open, the authors' script behind each figure (``run.json``'s
``conventions.script``): curves for Figs. 1 and 6 (floor 1, no stop, clipped estimates), maps for
Figs. 2 and 7, Algorithm 1 for Figs. 3-5. ``--n-jobs`` sets the joblib workers of the (q, r) sweeps
(Figs. 2-5, 7); the numbers do not depend on it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Mapping, MutableMapping
from pathlib import Path

import numpy as np

from ._validate import check_choice, check_flag, check_path, check_root_seed

__all__ = ["main", "SCALES", "finished_gamma_star_maps"]

FIGURES = ("1", "2", "3", "4", "5", "6", "7")
#: File formats of ``--format``: PNG (pixels) and the vector formats for print.
FORMATS = ("png", "svg", "pdf")
#: Dots per inch of the PNG files (the book shows its figures at 80 px per inch, 2x for sharpness).
PNG_DPI = 200
#: What ``reproduce --figure all --scale book`` takes, alone or beside other work (README says the same).
BOOK_TIME = "30 s to 1.5 min on 2 shared cores"
#: Time of each figure at ``--scale paper --n-jobs 2`` on a 2-core machine (benchmarks/README.md).
PAPER_TIMES = {"1": "2 s", "2": "2.5 min", "3": "2 min", "4": "12 min (measured)",
               "5": "35 min (measured)",
               "6": "3 s", "7": "1 min"}
#: Prefix of the temporary files of atomic writes (removed when a run starts).
_TMP_PREFIX = ".perfpriv-partial-"

_Q_PAPER = np.linspace(0.01, 0.99, 30)
_GAMMAS_PAPER = np.geomspace(0.2, 20.0, 30)

#: Settings of each figure at each scale. ``book``: the sizes the chapters
#: use by default; ``paper``: the settings of the paper's figures (its §§3-4 and appendix A).
SCALES = {
    "book": {
        "curves": dict(T=100, n0=400, trials=30, window=15,
                       epsilons=np.r_[np.geomspace(0.01, 5.0, 10), np.inf],
                       settings=((0.6, 0.3), (0.3, 0.6)), cap=20000, mu=(0.0, 1.0)),
        "maps": dict(T=100, n0=400, trials=30, grid=np.linspace(0.05, 0.95, 12),
                     epsilons=np.r_[np.geomspace(0.01, 20.0, 10), np.inf], mu=(0.5, 1.0)),
        "fig3a": dict(n=100, gammas=np.array([0.5, 1.0, 2.0, 4.0]), rounds=100,
                      taus=np.linspace(0.01, 1.0, 12), d=12, R=10.0),
        "fig3bc": dict(small=(0.11, 0.52), large=(0.45, 0.11), taus=(0.02, 0.05),
                       gammas=np.geomspace(0.2, 20.0, 10), n0=1000, T=(1, 1), trials=20, ratio="first",
                       d=12, R=10.0, cap=20000),
        "gamma_maps": dict(qs=np.array([0.1, 0.3, 0.5, 0.7]), rs=np.array([0.2, 0.4, 0.6, 0.8]),
                           qs_fig4=np.array([0.1, 0.3, 0.5, 0.7]),
                           gammas=np.geomspace(0.1, 12.8, 8), T=10, n0=200, trials=5, d=12, R=10.0,
                           cap=20000),
    },
    "paper": {
        "curves": dict(T=200, n0=400, trials=30, window=15,
                       epsilons=np.r_[np.geomspace(0.01, 5.0, 10), np.inf],
                       settings=((0.6, 0.3), (0.3, 0.6)), cap=20000, mu=(0.0, 1.0)),
        "maps": dict(T=200, n0=400, trials=10, grid=_Q_PAPER, epsilons=np.geomspace(0.01, 20.0, 30),
                     mu=(0.5, 1.0)),
        "fig3a": dict(n=100, gammas=np.array([0.2, 0.5, 1.0, 2.0, 8.0, 20.0]), rounds=1000,
                      taus=np.linspace(0.01, 5.0, 40), d=12, R=10.0),
        "fig3bc": dict(small=(0.11, 0.52), large=(0.45, 0.11), taus=(0.02, 0.05), gammas=_GAMMAS_PAPER,
                       n0=1000, T=(50, 10), trials=50, ratio="rounds", d=12, R=10.0, cap=20000),
        "gamma_maps": dict(qs=_Q_PAPER, rs=_Q_PAPER, qs_fig4=np.linspace(0.01, 0.99, 10),
                           gammas=_GAMMAS_PAPER, T=50, n0=1000, trials=50, d=12, R=10.0, cap=20000),
    },
}

#: τ values of the γ* maps.
TAUS = {"4": (0.02, 0.05), "5": (0.01, 0.2, 0.1)}

#: What each data file holds.
DATA_DOC = {
    "1": "per (q, r) row k: q_k, r_k, mean_population_k (eps x T+1), moving_average_k (eps x T), "
         "mean_sq_error_k (eps x T); epsilons, window",
    "2": "q (rows), r (columns), epsilons, epsilon_star (q x r), values and se (mean final-round squared error "
         "and its standard error, q x r x eps)",
    "3a": "taus, gammas, p and se (simulated leak fraction, gamma x tau), theory (Lemma 8 at the same taus), n",
    "3bc": "per panel b/c: q, r, gammas, taus, theory, empirical, spread, se (tau x gamma)",
    "4": "per tau index k: tau_k, empirical_k, bound_k, constrained_k, mean_field_k (q x r), values_k and se_k "
         "(simulated cumulative error and its standard error, q x r x gamma); qs, rs, gammas. "
         "cells/figureK/: one file per finished (tau, q, r) cell (key, values and se)",
}
DATA_DOC["5"] = DATA_DOC["4"]
DATA_DOC["6"] = DATA_DOC["1"]
DATA_DOC["7"] = DATA_DOC["2"]


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit code 2), not the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Fault(Exception):
    """A problem with the command line or the output folder: one line, exit code 2."""


class _Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) acted on by the run: exit code 130.

    Not ``KeyboardInterrupt`` itself: CPython 3.11 ends a ``python -m`` process by SIGINT whenever a
    bare ``KeyboardInterrupt`` has passed through code run by ``exec`` (dataclasses, namedtuples),
    even caught, turning the clean exit code 130 into a kill.
    """


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a killed job): stopped as cleanly as Ctrl-C, exit code 143."""


#: The first Ctrl-C or SIGTERM of a run (its signal number) and whether its stop was raised. A signal is
#: only noted, and raised from a safe point: raised by the handler it could land anywhere (an import,
#: library code that swallows it); later signals are ignored so that they cannot interrupt the clean stop.
_STOP = {"signum": None, "raised": False}


def _stop_for(signum):
    import signal

    return _Terminated() if signum == signal.SIGTERM else _Interrupted()


def _note_signal(signum, frame=None):
    """Start-up and outside the run's loop: note the first signal; later ones are ignored."""
    if _STOP["signum"] is None:
        _STOP["signum"] = signum


def _check_start():
    """A safe point of the start-up: raise the noted stop, if any."""
    if _STOP["signum"] is not None and not _STOP["raised"]:
        _STOP["raised"] = True
        raise _stop_for(_STOP["signum"])


class _StopRequests:
    """Ctrl-C and SIGTERM inside the ``with`` block, noted and raised by :meth:`check` at a safe point.

    As the module's "Interruptions" says; a second signal, raised at once, stays noted should library
    code swallow it. Outside the main thread signals cannot be handled and the block does nothing.
    """

    def __init__(self):
        self.pending = None
        self._previous = {}

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.getsignal(sig)
                signal.signal(sig, self._note)
        if _STOP["signum"] is not None and not _STOP["raised"]:   # noted before the run's loop
            self.pending = _stop_for(_STOP["signum"])
        return self

    def _note(self, signum, frame):
        if _STOP["raised"]:
            return
        if self.pending is not None:             # a second signal: stop at once
            _STOP["raised"] = True
            raise self.pending
        _STOP["signum"] = signum
        self.pending = _stop_for(signum)

    def check(self):
        """Raise the noted signal, if any."""
        if self.pending is not None:
            stop, self.pending = self.pending, None
            _STOP["raised"] = True
            raise stop

    def __exit__(self, *exc):
        import signal

        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}
        return False


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else str(float(value))
    if isinstance(value, np.integer):
        return int(value)
    return value


def _formats(text: str) -> tuple:
    """``"png,svg"`` -> ``("png", "svg")``; an unknown format is a usage error."""
    names = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    bad = [n for n in names if n not in FORMATS]
    if not names or bad:
        raise argparse.ArgumentTypeError(f"formats must be among {', '.join(FORMATS)}; got {text!r}")
    return names


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m perfpriv``.

    Returns
    -------
    argparse.ArgumentParser
        Usage errors print one line and exit with code 2.

    Examples
    --------
    >>> args = build_parser().parse_args(["reproduce", "--figure", "all", "--out", "figures"])
    >>> args.figure, args.scale, args.conventions, args.format, args.n_jobs, args.seed, args.resume
    ('all', 'book', 'paper', ('png',), 1, 0, False)
    >>> build_parser().parse_args(["reproduce", "--figure", "2", "--out", "f", "--format", "png,pdf"]).format
    ('png', 'pdf')
    """
    parser = _OneLineParser(
        prog="python -m perfpriv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="perfpriv: performative privacy. Regenerate the figures of the paper\n"
                    "'Performative Privacy: When Differential Privacy Maximizes Utility'.",
        epilog="Example: python -m perfpriv reproduce --figure all --scale book --out figures/",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    sub.required = True
    rep = sub.add_parser(
        "reproduce",
        help="write paper figures and each of their panels (PNG, SVG, PDF), plus the numbers behind them (NPZ)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Write each requested figure of the paper into OUT. Files (K = figure, X = panel letter):\n"
            "  figureK.png            the whole figure (also .svg, .pdf with --format)\n"
            "  figureK_panel_X.png    each panel of a multi-panel figure, with its colour key\n"
            "  figureK.npz            the numbers behind the figure\n"
            "  cells/figureK/         Figs. 4-5: one file per finished gamma* cell\n"
            "  run.json               the record: settings, conventions, seed, versions, status of each figure\n"
            "  timings.json           seconds per figure\n"
            "Fig. 3 is written as figure3a (one panel) and figure3bc (panels b, c). Every file is written\n"
            "atomically; Ctrl-C stops cleanly and --resume continues an interrupted run.\n\n"
            "Figures: 1 Bernoulli error and population (leak model; panels a-d); 2 epsilon* map (leak);\n"
            "3 p_tau against tau (3a) and growth factor C(gamma) (3b, 3c); 4 gamma* maps, tau = 0.02,\n"
            "0.05 (panels a-f); 5 gamma* maps, tau = 0.01, 0.2, 0.1 (panels a-i); 6 as 1 for the\n"
            "agnostic model; 7 as 2 for the agnostic model."),
        epilog=(
            f"Scales: 'book' = the chapters' default sizes: all seven figures in {BOOK_TIME}.\n"
            "'paper' = the paper's settings (30x30 (q, r) grids, 30 epsilons or gammas,\n"
            "T = 200 (Bernoulli) / 50 (Gaussian), N0 = 400 / 1000, 10-50 trials, cap 20000), with\n"
            "--n-jobs 2 on 2 cores: " + ", ".join(f"Fig. {k} {v}" for k, v in PAPER_TIMES.items())
            + "\n(see benchmarks/README.md)."),
    )
    rep.add_argument("--figure", required=True, choices=FIGURES + ("all",), metavar="{1..7,all}",
                     help="which figure of the paper (1-7), or 'all'")
    rep.add_argument("--scale", default="book", choices=("book", "paper"),
                     help="experiment sizes: the chapters' ('book', default) or the paper's ('paper')")
    rep.add_argument("--conventions", default="paper", choices=("paper", "authors"),
                     help="choices the paper's text leaves open: the text's ('paper', default) or the "
                          "authors' published code, the script behind each figure ('authors': exact "
                          "membership statistic, their floors, stops and collapse scores, clipped Bernoulli "
                          "estimates; Figs. 1 and 6 as their curve script: floor 1, no stop)")
    rep.add_argument("--out", required=True, metavar="DIR",
                     help="output folder (created if missing); a folder holding another run is refused")
    rep.add_argument("--resume", action="store_true",
                     help="keep the figures and gamma* cells already in DIR (from an interrupted run with the "
                          "same settings) and compute only the rest")
    rep.add_argument("--format", type=_formats, default=("png",), metavar="LIST",
                     help="comma-separated file formats among png, svg, pdf (default png; "
                          "svg and pdf are vector, for print): --format png,svg,pdf")
    rep.add_argument("--n-jobs", type=int, default=1, metavar="N",
                     help="joblib workers for the (q, r) sweeps of Figs. 2-5, 7 (-1: all cores; default 1); "
                          "results do not depend on it")
    rep.add_argument("--seed", type=int, default=0, metavar="S",
                     help="root seed (non-negative integer, default 0)")
    rep.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                     help="progress bar on stderr (cells done / total, remaining time): 'auto' (only on a "
                          "terminal, default), 'on' or 'off'")
    # the top-level --help documents everything: append the command's own help
    parser.epilog = (parser.epilog + "\n\n" + "=" * 78 + "\nCommand 'reproduce'\n" + "=" * 78 + "\n"
                     + rep.format_help())
    return parser


# -------------------------------------------------------------- atomic files

def _atomic_write(path: Path, write) -> None:
    """Write ``path`` through a temporary file in its folder and ``os.replace`` (no partial files),
    holding Ctrl-C and SIGTERM back meanwhile (delivered right after)."""
    import signal

    tmp = path.with_name(f"{_TMP_PREFIX}{path.name}.{os.getpid()}")
    held = hasattr(signal, "pthread_sigmask")
    if held:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        if held:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _write_json(path: Path, obj) -> None:
    text = json.dumps(_jsonable(obj), indent=2) + "\n"
    _atomic_write(path, lambda f: f.write(text.encode()))


def _write_npz(path: Path, arrays: dict) -> None:
    _atomic_write(path, lambda f: np.savez_compressed(f, **{k: np.asarray(v) for k, v in arrays.items()}))


def _remove_partial_files(out: Path) -> None:
    """Remove what an interrupted atomic write may have left (in the folder and its cell folders only)."""
    for p in [*out.glob(f"{_TMP_PREFIX}*"), *out.glob(f"cells/*/{_TMP_PREFIX}*")]:
        try:
            p.unlink()
        except OSError:
            pass


class CellFiles(MutableMapping):
    """Finished cells of a γ* map, one ``.npz`` file each in a folder (written atomically).

    The ``store=`` of :func:`perfpriv.experiments.gamma_star_map`: key ``(tau, q, r)``, value an array.
    Each file holds its key, so it is only read back for the cell it was written for.

    Parameters
    ----------
    folder : pathlib.Path
        Where the cell files live (created on the first write).
    read : bool
        ``False``: cells already in the folder are ignored and overwritten (a run without ``--resume``).
    """

    def __init__(self, folder: Path, *, read: bool = True):
        self.folder = check_path("folder", folder)
        self.read = check_flag("read", read)

    @staticmethod
    def _name(key) -> str:
        tau, q, r = (float(k) for k in key)
        return f"tau{tau:.10g}_q{q:.10g}_r{r:.10g}.npz"

    def __getitem__(self, key):
        path = self.folder / self._name(key)
        if not self.read or not path.exists():
            raise KeyError(key)
        try:
            with np.load(path) as data:
                if not np.array_equal(data["key"], np.asarray(key, float)):
                    raise KeyError(key)
                return np.array(data["value"])
        except (OSError, ValueError, KeyError) as exc:   # unreadable file: compute the cell again
            raise KeyError(key) from exc

    def __setitem__(self, key, value):
        self.folder.mkdir(parents=True, exist_ok=True)
        _write_npz(self.folder / self._name(key), {"key": np.asarray(key, float), "value": np.asarray(value)})

    def __delitem__(self, key):
        try:
            (self.folder / self._name(key)).unlink()
        except FileNotFoundError:
            raise KeyError(key) from None

    def __iter__(self):
        if not self.folder.is_dir():
            return
        for p in sorted(self.folder.glob("tau*_q*_r*.npz")):
            with np.load(p) as data:
                yield tuple(float(x) for x in data["key"])

    def __len__(self):
        return len(list(self.folder.glob("tau*_q*_r*.npz"))) if self.folder.is_dir() else 0


class _ReadOnlyCells(MutableMapping):
    """A view of finished cells that refuses to be written: reading a run must never simulate."""

    def __init__(self, cells):
        self._cells = cells

    def __getitem__(self, key):
        return self._cells[key]

    def __setitem__(self, key, value):
        raise RuntimeError(f"cell {key} is not stored: finished_gamma_star_maps only reads a run")

    def __delitem__(self, key):
        raise RuntimeError("finished_gamma_star_maps only reads a run")

    def __iter__(self):
        return iter(self._cells)

    def __len__(self):
        return len(self._cells)


def finished_gamma_star_maps(out, figure) -> list:
    """The γ* maps (Figs. 4-5) whose every cell a run folder holds, even if the run has not finished.

    A paper-scale Fig. 5 takes hours and is run in pieces with ``--resume``. For each τ whose (q, r)
    cells are all in ``cells/figureK/``, this rebuilds the map exactly as the finished run would, with
    the record's scale, conventions and seed (:func:`perfpriv.experiments.gamma_star_map` on the stored
    cells; nothing is simulated). Thresholds with missing cells are left out.

    Parameters
    ----------
    out : str or pathlib.Path
        The run's output folder (``--out`` of ``reproduce``).
    figure : {"4", "5"}
        Which γ* figure.

    Returns
    -------
    list of perfpriv.experiments.GammaStarMap
        In the figure's order of τ; empty if no threshold is complete.
    """
    figure = check_choice("figure", str(figure), tuple(TAUS))
    out = check_path("out", out)
    record_path = out / "run.json"
    if not record_path.is_file():
        raise ValueError(f"out must be the folder of a reproduce run (holding run.json); got {str(out)!r}")
    record = json.loads(record_path.read_text())
    scale, conventions, seed = record["scale"], record["conventions"], record["seed"]
    s = SCALES[scale]["gamma_maps"]
    qs = np.asarray(s["qs_fig4"] if figure == "4" else s["qs"], float)
    rs = np.asarray(s["rs"], float)
    cells = CellFiles(out / "cells" / f"figure{figure}")
    have = set(cells)
    maps = []
    for tau in TAUS[figure]:
        if not all((float(tau), float(q), float(r)) in have for q in qs for r in rs):
            continue
        maps.append(_gamma_star_map(figure, s, tau, seed, conventions, _ReadOnlyCells(cells)))
    return maps


# ---------- one function per figure: (outputs, conventions) from the settings

def _bernoulli_conventions(conventions, *, n0, mu=(0.0, 1.0)):
    from . import bernoulli, engine

    mech = bernoulli.RandomizedResponse(1.0, mu=mu).resolved(conventions)
    pol = engine.Policy().resolve(mech, conventions, n0=n0)
    return dict(statistic=None, clip_estimate=bool(mech.clip_estimate), **pol.describe())


def _gaussian_conventions(conventions, *, n0, tau=0.02, d=12, R=10.0):
    from . import engine, gaussian

    mech = gaussian.GaussianMean(tau=tau, d=d, R=R).resolved(conventions)
    pol = engine.Policy().resolve(mech, conventions, n0=n0)
    return dict(statistic=mech.statistic, clip_estimate=None, **pol.describe())


def _authors_script(conventions, script):
    """Which published script's conventions a run followed (``run.json``): None for the paper's text."""
    return script if conventions == "authors" else None


def _from_settings(settings):
    """The conventions entry of a figure from an experiment's provenance."""
    return dict(statistic=settings.get("statistic"), clip_estimate=settings.get("clip_estimate"),
                **settings["policy"])


def _curves(rule, s, seed, conventions, checkpoint=lambda k: None):
    from . import behaviour, bernoulli, engine, experiments, plots, sweep

    users = [behaviour.Memoryless(q=q, r=r, rule=rule) for q, r in s["settings"]]
    runs = experiments.curve_runs(bernoulli.RandomizedResponse(s["epsilons"], mu=s["mu"]), users, T=s["T"],
                                  n0=s["n0"], trials=s["trials"], policy=engine.Policy(cap=s["cap"]),
                                  conventions=conventions, seed=seed,
                                  options=sweep.Execution(progress=False, on_cells=checkpoint))
    draw = plots.figure1 if rule == "leak" else plots.figure6
    fig = draw(runs, window=s["window"])
    data = {"epsilons": np.asarray(s["epsilons"], float), "window": s["window"]}
    for k, ((q, r), run) in enumerate(zip(s["settings"], runs)):
        data.update({f"q_{k}": q, f"r_{k}": r, f"mean_population_{k}": run.mean_population,
                     f"moving_average_{k}": run.moving_average(window=s["window"]),
                     f"mean_sq_error_{k}": run.mean_sq_error})
    run = runs[0]
    conv = dict(statistic=None, clip_estimate=bool(run.mechanism.clip_estimate), **run.policy.describe(),
                script=_authors_script(conventions, "curves"))
    return {f"figure{1 if rule == 'leak' else 6}": (fig, data)}, conv


def _map(rule, s, seed, conventions, checkpoint=None):
    from . import behaviour, bernoulli, optimize, plots, sweep

    g = np.asarray(s["grid"], float)
    Q, R = np.meshgrid(g, g, indexing="ij")
    res = optimize.optimal_epsilon(bernoulli.RandomizedResponse(s["epsilons"], mu=s["mu"]),
                                   behaviour.Memoryless(q=Q, r=R, rule=rule), T=s["T"], n0=s["n0"],
                                   trials=s["trials"], seed=seed, conventions=conventions,
                                   options=sweep.Execution(chunk=64, progress=False, on_cells=checkpoint))
    draw = plots.figure2 if rule == "leak" else plots.figure7
    fig = draw(res)
    data = {"q": g, "r": g, "epsilons": res.epsilons, "epsilon_star": res.epsilon, "values": res.values,
            "se": res.se}
    conv = dict(_bernoulli_conventions(conventions, n0=s["n0"], mu=s["mu"]), script=_authors_script(conventions, "maps"))
    return {f"figure{2 if rule == 'leak' else 7}": (fig, data)}, conv


def _figure3a(s, seed, conventions, checkpoint=None):
    from . import experiments, gaussian, plots, sweep

    mech = gaussian.GaussianMean(s["gammas"], tau=s["taus"][0], d=s["d"], R=s["R"])
    sim = experiments.figure3a_simulation(mech, s["n"], s["taus"], rounds=s["rounds"], conventions=conventions,
                                          seed=seed, options=sweep.Execution(progress=False, on_cells=checkpoint))
    fig = plots.figure3a(sim)
    data = {"taus": sim.taus, "gammas": sim.gammas, "p": sim.p, "se": sim.se, "theory": sim.theory, "n": sim.n}
    return {"figure3a": (fig, data)}, _from_settings(sim.settings)


def _figure3bc(s, seed, conventions, checkpoint=lambda k: None):
    from . import behaviour, engine, experiments, gaussian, plots

    mechs = [gaussian.GaussianMean(s["gammas"], tau=t, d=s["d"], R=s["R"]) for t in s["taus"]]
    curves = []
    for k, (qr, t) in enumerate(zip((s["small"], s["large"]), s["T"])):
        curves.append(experiments.growth_curves(mechs, behaviour.Memoryless(q=qr[0], r=qr[1]), n0=s["n0"], T=t,
                                                trials=s["trials"], ratio=s["ratio"],
                                                policy=engine.Policy(cap=s["cap"]), conventions=conventions,
                                                seed=seed + k))
        if k == 0:
            checkpoint(0)
    curves = tuple(curves)
    fig = plots.figure3bc(curves=curves)
    data = {}
    for panel, c in zip("bc", curves):
        for name in ("q", "r", "gammas", "taus", "theory", "empirical", "spread", "se"):
            data[f"{name}_{panel}"] = np.asarray(getattr(c, name))
    return {"figure3bc": (fig, data)}, _from_settings(curves[0].settings)


def _gamma_star_map(number, s, tau, seed, conventions, store, on_cells=None):
    """One threshold's map of Fig. 4 or 5 with the settings ``s`` of a scale (stored cells read from ``store``)."""
    from . import behaviour, engine, experiments, gaussian, sweep

    qs = np.asarray(s["qs_fig4"] if number == "4" else s["qs"], float)
    mech = gaussian.GaussianMean(s["gammas"], tau=tau, d=s["d"], R=s["R"])
    users = behaviour.Memoryless(q=qs[:, None], r=np.asarray(s["rs"], float)[None, :])
    return experiments.gamma_star_map(mech, users, T=s["T"], n0=s["n0"], trials=s["trials"],
                                      policy=engine.Policy(cap=s["cap"]), conventions=conventions, seed=seed,
                                      options=sweep.Execution(chunk=4, progress=False, on_cells=on_cells,
                                                              store=store))


def _gamma_maps(number, s, seed, conventions, store, on_cells):
    from . import plots

    qs = s["qs_fig4"] if number == "4" else s["qs"]
    maps = [_gamma_star_map(number, s, tau, seed, conventions, store, on_cells) for tau in TAUS[number]]
    fig = plots.figure_gamma_star(maps)
    data = {"qs": np.asarray(qs, float), "rs": np.asarray(s["rs"], float), "gammas": np.asarray(s["gammas"], float)}
    for k, m in enumerate(maps):
        data[f"tau_{k}"] = m.tau
        for name in ("empirical", "bound", "constrained", "mean_field", "values", "se"):
            data[f"{name}_{k}"] = getattr(m, name)
    return {f"figure{number}": (fig, data)}, _from_settings(maps[0].settings)


def _compute(number, scale, seed, conventions="paper", store=None, on_cells=None):
    """The outputs ``{name: (figure, data)}`` of one figure and the conventions settings it ran with."""
    s = SCALES[scale]
    # ``on_cells(0)``: nothing new is stored, but the caller may stop there (a safe point)
    checkpoint = (lambda k: None) if on_cells is None else (lambda k: on_cells(0))
    if number in ("1", "6"):
        return _curves("leak" if number == "1" else "agnostic", s["curves"], seed, conventions, checkpoint)
    if number in ("2", "7"):
        return _map("leak" if number == "2" else "agnostic", s["maps"], seed, conventions, checkpoint)
    if number == "3":
        out, conv_a = _figure3a(s["fig3a"], seed, conventions, checkpoint)
        if on_cells is not None:
            on_cells(1)
        more, conv_bc = _figure3bc(s["fig3bc"], seed, conventions, checkpoint)
        out.update(more)
        return out, {"3a": conv_a, "3bc": conv_bc}
    return _gamma_maps(number, s["gamma_maps"], seed, conventions, store, on_cells)


def run_figure(number, scale, seed, conventions="paper", store=None, on_cells=None):
    """Compute one figure of the paper with the settings of :data:`SCALES`.

    Parameters
    ----------
    number, scale, conventions : str
        ``"1"`` to ``"7"``; ``"book"`` or ``"paper"``; ``"paper"`` or ``"authors"`` (as on the command line).
    seed : int, SeedSequence or Generator
        Root seed: an int >= 0, or one integer drawn from a ``SeedSequence`` or ``Generator``.
    store : MutableMapping, optional
        Finished γ* cells of Figs. 4-5 (e.g. :class:`CellFiles`).
    on_cells : callable, optional
        Called with the number of cells (or panel groups) just finished.

    Returns
    -------
    dict
        ``{name: (matplotlib.figure.Figure, dict of arrays)}``, one entry per figure file
        (``figure3a`` and ``figure3bc`` for Fig. 3).

    Examples
    --------
    >>> out = run_figure("6", "book", 0)
    >>> list(out), sorted(out["figure6"][1])[:3]
    (['figure6'], ['epsilons', 'mean_population_0', 'mean_population_1'])
    """
    number = check_choice("number", number, FIGURES)
    scale = check_choice("scale", scale, tuple(SCALES))
    seed = check_root_seed(seed, allow_none=False)
    conventions = check_choice("conventions", conventions, ("paper", "authors"))
    if store is not None and not isinstance(store, MutableMapping):
        raise TypeError(f"store must be a MutableMapping of finished cells (e.g. CellFiles) or None; got {store!r:.80}")
    if on_cells is not None and not callable(on_cells):
        raise TypeError(f"on_cells must be a callable (or None); got {on_cells!r:.80}")
    return _compute(number, scale, seed, conventions, store, on_cells)[0]


def _units(number, scale):
    """Progress units of a figure: its γ* cells (Figs. 4-5), its panel groups otherwise."""
    if number in TAUS:
        g = SCALES[scale]["gamma_maps"]
        qs = g["qs_fig4"] if number == "4" else g["qs"]
        return len(qs) * len(g["rs"]) * len(TAUS[number])
    return 2 if number == "3" else 1


def _settings_of(number, scale):
    table = SCALES[scale]
    if number in ("1", "6"):
        return table["curves"]
    if number in ("2", "7"):
        return table["maps"]
    if number == "3":
        return {"3a": table["fig3a"], "3bc": table["fig3bc"]}
    s = dict(table["gamma_maps"])
    s["qs"] = s.pop("qs_fig4") if number == "4" else s["qs"]
    s.pop("qs_fig4", None)
    s["taus"] = TAUS[number]
    return s


def _panel_axes(fig):
    """The panels of a figure (colour bars excluded), in drawing order."""
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def _check_figure_and_renderer(fig, renderer=None):
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure; got {fig!r:.80}")
    if renderer is not None and not isinstance(renderer, RendererBase):
        raise TypeError(f"renderer must be a matplotlib renderer (e.g. FigureCanvasAgg(fig).get_renderer()); "
                        f"got {renderer!r:.80}")


def panel_boxes(fig, renderer) -> list:
    """One box per panel (display pixels): the panel with its colour bar and the figure legends beside it.

    A colour bar belongs to the panel whose image it keys (a bar of several panels: the nearest panel
    on its left in the same row); a figure legend to the panel it sits directly above or below and does
    not extend beyond. So a panel cut out of the figure keeps its colour key.

    Parameters
    ----------
    fig, renderer : matplotlib.figure.Figure, matplotlib.backend_bases.RendererBase
        A drawn figure and the renderer it was drawn with (e.g. ``FigureCanvasAgg(fig).get_renderer()``).

    Returns
    -------
    list of matplotlib.transforms.Bbox
        One box per panel, in drawing order.

    Raises
    ------
    TypeError
        If ``fig`` is not a Figure or ``renderer`` not a renderer.
    """
    from matplotlib.transforms import Bbox

    _check_figure_and_renderer(fig, renderer)
    panels = _panel_axes(fig)
    boxes = [ax.get_tightbbox(renderer) for ax in panels]
    for bar in (ax for ax in fig.axes if ax.get_label() == "<colorbar>"):
        bar_box = bar.get_tightbbox(renderer)
        mappable = getattr(getattr(bar, "_colorbar", None), "mappable", None)
        owner = getattr(mappable, "axes", None)
        if owner in panels:
            k = panels.index(owner)
        else:
            left = [(bar_box.x0 - b.x1, k) for k, b in enumerate(boxes)
                    if b.x1 <= bar_box.x0 + 1 and min(b.y1, bar_box.y1) - max(b.y0, bar_box.y0) > 0]
            if not left:
                continue
            k = min(left)[1]
        boxes[k] = Bbox.union([boxes[k], bar_box])
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        above_or_below = [(min(abs(box.y0 - b.y1), abs(b.y0 - box.y1)), k) for k, b in enumerate(boxes)
                          if b.x0 - 1 <= box.x0 and box.x1 <= b.x1 + 1]
        if above_or_below:
            k = min(above_or_below)[1]
            boxes[k] = Bbox.union([boxes[k], box])
    return boxes


def save_figure(fig, data, out: Path, name: str, first_letter: str = "a", formats=("png",)) -> list:
    """Write ``name.<format>``, one ``name_panel_X.<format>`` per panel (if several) and ``name.npz``.

    PNG panels are cut from the pixels of one drawing, vector panels are the same regions saved from
    the figure (``bbox_inches``); every file is written atomically.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    data : mapping of str to array_like
        What ``name.npz`` holds.
    out : str or path
        An existing folder.
    name : str
        File stem: letters, digits, ``_`` and ``-`` only.
    first_letter : str
        Letter of the first panel (one lowercase letter; ``"b"`` for Fig. 3's b and c).
    formats : str or sequence of str
        Among ``"png"``, ``"svg"`` and ``"pdf"``; a single name is one format.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.image import imsave
    from matplotlib.transforms import Bbox

    from .plots import style

    _check_figure_and_renderer(fig)
    if not isinstance(data, Mapping) or not all(isinstance(k, str) for k in data):
        raise TypeError(f"data must be a mapping of array names (str) to arrays; got {type(data).__name__}")
    out = check_path("out", out)
    if not out.is_dir():
        raise ValueError(f"out must be an existing folder; got {str(out)!r}")
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "_-" for c in name):
        raise ValueError(f"name must be a file stem of letters, digits, '_' and '-'; got {name!r:.80}")
    if not isinstance(first_letter, str) or len(first_letter) != 1 or not "a" <= first_letter <= "z":
        raise ValueError(f"first_letter must be one lowercase letter; got {first_letter!r:.40}")
    if isinstance(formats, str):
        formats = (formats,)
    try:
        formats = tuple(formats)
    except TypeError:
        raise TypeError(f"formats must be a format name or a sequence of them among {', '.join(FORMATS)}; "
                        f"got {formats!r:.80}") from None
    if not formats or any(not isinstance(f, str) or f not in FORMATS for f in formats):
        raise ValueError(f"formats must be among {', '.join(FORMATS)} (at least one); got {formats!r:.80}")
    formats = tuple(dict.fromkeys(formats))
    pad = 4
    with style():
        fig.set_dpi(PNG_DPI)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        pixels = np.asarray(canvas.buffer_rgba())
        boxes = panel_boxes(fig, canvas.get_renderer())
    out = Path(out)

    def png(path, image):
        _atomic_write(path, lambda f: imsave(f, image, format="png", dpi=PNG_DPI))
        return path

    def vector(path, fmt, **kw):
        with style():
            _atomic_write(path, lambda f: fig.savefig(f, format=fmt, dpi=PNG_DPI, **kw))
        return path

    paths = [png(out / f"{name}.png", pixels)] if "png" in formats else []
    paths += [vector(out / f"{name}.{fmt}", fmt) for fmt in formats if fmt != "png"]
    if len(boxes) > 1:
        height, width = pixels.shape[:2]
        for k, box in enumerate(boxes):
            letter = chr(ord(first_letter) + k)
            x0, x1 = max(int(box.x0) - pad, 0), min(int(math.ceil(box.x1)) + pad, width)
            y0, y1 = max(height - int(math.ceil(box.y1)) - pad, 0), min(height - int(box.y0) + pad, height)
            if "png" in formats:
                paths.append(png(out / f"{name}_panel_{letter}.png", pixels[y0:y1, x0:x1]))
            inches = Bbox.from_extents(x0 / PNG_DPI, (height - y1) / PNG_DPI, x1 / PNG_DPI, (height - y0) / PNG_DPI)
            paths += [vector(out / f"{name}_panel_{letter}.{fmt}", fmt, bbox_inches=inches)
                      for fmt in formats if fmt != "png"]
    npz = out / f"{name}.npz"
    _write_npz(npz, data)
    return paths + [npz]


# ------------------------------------------ the output folder and its record

def _prepare_out(text: str) -> Path:
    """The output folder, created and checked writable; a :class:`_Fault` otherwise."""
    if not text.strip():
        raise _Fault(f"--out must name a folder; got {text!r}")
    out = Path(text)
    if out.exists() and not out.is_dir():
        raise _Fault(f"--out must be a folder; {text!r} is a file")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _Fault(f"--out: cannot create the folder {text!r}: {exc.strerror or exc}") from None
    try:
        _atomic_write(out / ".perfpriv-write-test", lambda f: f.write(b""))
        (out / ".perfpriv-write-test").unlink()
    except OSError as exc:
        raise _Fault(f"--out: cannot write into {text!r}: {exc.strerror or exc}") from None
    return out


def _identity(args) -> dict:
    """What a run is: everything but the status of its figures (what must agree to share a folder)."""
    import matplotlib
    import scipy

    from . import __version__

    return {
        "command": "reproduce",
        "scale": args.scale,
        "conventions": args.conventions,
        "conventions_settings": {
            "bernoulli": _bernoulli_conventions(args.conventions, n0=400),
            "gaussian": _gaussian_conventions(args.conventions, n0=1000),
        },
        "seed": args.seed,
        "formats": list(args.format),
        "versions": {"perfpriv": __version__, "numpy": np.__version__, "scipy": scipy.__version__,
                     "matplotlib": matplotlib.__version__, "python": platform.python_version()},
    }


def _has_run_files(out: Path) -> bool:
    return (out / "cells").exists() or any(out.glob("figure*.npz")) or any(out.glob("figure*.png"))


def _differences(old: dict, new: dict, prefix="") -> list:
    diffs = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k, "<missing>"), new.get(k, "<missing>")
        if isinstance(a, dict) and isinstance(b, dict):
            diffs += _differences(a, b, f"{prefix}{k}.")
        elif a != b:
            diffs.append(f"{prefix}{k} {a!r:.40} (this run: {b!r:.40})")
    return diffs


def _load_record(out: Path, identity: dict) -> dict:
    """The record to continue: the folder's own (same identity) or a fresh one; refuses to mix runs."""
    path = out / "run.json"
    fresh = dict(_jsonable(identity), figures={})
    if not path.exists():
        if _has_run_files(out):
            raise _Fault(f"--out {str(out)!r} holds figure or cell files of a perfpriv run without its record "
                         "(run.json): use an empty folder, or delete those files")
        return fresh
    try:
        old = json.loads(path.read_text())
        if not isinstance(old, dict) or not isinstance(old.get("figures"), dict):
            raise ValueError("not a perfpriv record")
    except (OSError, ValueError) as exc:
        raise _Fault(f"--out {str(out)!r}: its run.json is not a readable perfpriv record ({exc}); use "
                     "another folder") from None
    mine = {k: v for k, v in old.items() if k != "figures"}
    diffs = _differences(mine, {k: v for k, v in fresh.items() if k != "figures"})
    if diffs:
        raise _Fault(f"--out {str(out)!r} holds another run ({'; '.join(diffs[:3])}"
                     f"{'; ...' if len(diffs) > 3 else ''}): use another folder, or delete it")
    fresh["figures"] = old["figures"]
    return fresh


def _entry(number, scale, status, files=(), conventions=None) -> dict:
    """The record of one figure (the same fields in the same order whatever happened before)."""
    entry = {"status": status, "files": sorted(files), "data": _data_doc(number),
             "settings": _jsonable(_settings_of(number, scale))}
    if number in TAUS:
        entry["cells"] = f"cells/figure{number}"
    if conventions is not None:
        entry["conventions"] = _jsonable(conventions)
    return entry


def _data_doc(number):
    return DATA_DOC["3a"] + "; " + DATA_DOC["3bc"] if number == "3" else DATA_DOC[number]


def _done(record, number, out: Path) -> bool:
    entry = record["figures"].get(number)
    return bool(entry) and entry.get("status") == "done" and all((out / f).exists() for f in entry["files"])


def _write_record(out: Path, record: dict) -> None:
    record = dict(record)
    record["figures"] = {k: record["figures"][k] for k in sorted(record["figures"], key=int)}
    _write_json(out / "run.json", record)


def _resume_command(args) -> str:
    parts = ["python -m perfpriv reproduce", f"--figure {args.figure}", f"--scale {args.scale}",
             f"--conventions {args.conventions}", f"--seed {args.seed}", f"--out {args.out}"]
    if args.n_jobs != 1:
        parts.append(f"--n-jobs {args.n_jobs}")
    return " ".join(parts + ["--resume"])


def _reproduce(args) -> int:
    import joblib
    from tqdm.auto import tqdm

    _check_start()                                    # a safe point: nothing is written yet

    if args.n_jobs == 0 or args.n_jobs < -1:
        raise _Fault(f"--n-jobs must be a positive integer or -1 (all cores); got {args.n_jobs}")
    if args.seed < 0:
        raise _Fault(f"--seed must be a non-negative integer; got {args.seed}")
    out = _prepare_out(args.out)
    _remove_partial_files(out)
    numbers = FIGURES if args.figure == "all" else (args.figure,)
    record = _load_record(out, _identity(args))
    todo = [n for n in numbers if not (args.resume and _done(record, n, out))]
    for n in todo:
        record["figures"][n] = _entry(n, args.scale, "pending")
    finished, current, cells_done = [], None, {}
    bar = None
    stops = _StopRequests()
    try:
        with stops:                                   # from the record on, a stop is one clean line
            _write_record(out, record)                        # the record first, before any work
            timings_path = out / "timings.json"
            try:
                timings = json.loads(timings_path.read_text()) if timings_path.exists() else {}
            except (OSError, ValueError):
                timings = {}
            timings = {"n_jobs": args.n_jobs, "figures": dict(timings.get("figures", {}))}
            disable = {"auto": None, "on": False, "off": True}[args.progress]   # tqdm's disable=
            start_all = time.perf_counter()
            bar = tqdm(total=sum(_units(n, args.scale) for n in todo), desc="cells", unit="cell", disable=disable,
                       file=sys.stderr, dynamic_ncols=True)
            with joblib.parallel_config(n_jobs=args.n_jobs):
                for number in todo:
                    stops.check()
                    current = number
                    bar.set_postfix_str(f"figure {number} ({args.scale} scale)")
                    store = CellFiles(out / "cells" / f"figure{number}", read=args.resume) if number in TAUS else None

                    def advance(k, number=number):
                        cells_done[number] = cells_done.get(number, 0) + k
                        bar.update(k)
                        stops.check()                 # the cells of this batch are stored (or nothing is
                                                      # kept until the files, k = 0): a safe point

                    start = time.perf_counter()
                    outputs, conventions = _compute(number, args.scale, args.seed, args.conventions, store, advance)
                    seconds = time.perf_counter() - start
                    files = []
                    for name, (fig, data) in outputs.items():
                        stops.check()                 # computed, nothing of it recorded yet (its γ* cells
                                                      # are stored): a safe point before each output's files
                        files += [p.name for p in save_figure(fig, data, out, name,
                                                              first_letter="b" if name == "figure3bc" else "a",
                                                              formats=args.format)]
                    if number not in TAUS:
                        bar.update(_units(number, args.scale) - cells_done.get(number, 0))
                    record["figures"][number] = _entry(number, args.scale, "done", files, conventions)
                    _write_record(out, record)
                    timings["figures"][number] = {"seconds": round(seconds, 3),
                                                  "seconds_with_files": round(time.perf_counter() - start, 3),
                                                  "resumed": bool(args.resume)}
                    _write_json(timings_path, timings)
                    finished.append(number)
                    current = None
                    stops.check()                     # the figure and its record are written: a safe point
    except KeyboardInterrupt as stop:
        if bar is not None:
            bar.close()
        _remove_partial_files(out)
        done = f"finished figure {', '.join(finished)}" if finished else "no figure finished"
        if current in TAUS:
            stored = len(CellFiles(out / "cells" / f"figure{current}"))
            done += f"; figure {current}: {stored} of {_units(current, args.scale)} cells stored"
        what = "terminated" if isinstance(stop, _Terminated) else "interrupted"
        print(f"{what}: {done}; resume with: {_resume_command(args)}", file=sys.stderr)
        return 143 if isinstance(stop, _Terminated) else 130
    bar.close()
    skipped = [n for n in numbers if n not in todo]
    print(f"wrote {sum(len(record['figures'][n]['files']) for n in finished)} figure files and the record "
          f"(run.json) to {out} in {time.perf_counter() - start_all:.1f} s"
          + (f"; figures {', '.join(skipped)} were already there" if skipped else ""))
    for number in finished:
        info = timings["figures"][number]
        print(f"  figure {number}: {info['seconds']:.1f} s (with writing the files: "
              f"{info['seconds_with_files']:.1f} s)")
    return 0


def main(argv=None) -> int:
    """Entry point of ``python -m perfpriv``; returns the exit code.

    0 done; 1 the output folder failed during the run; 2 a bad command line or output folder (one
    line on stderr); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), as in the module's docstring.
    """
    import signal
    import threading

    _STOP.update(signum=None, raised=False)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        # start-up: the first Ctrl-C or SIGTERM is noted and stops cleanly (130 or 143) at the next
        # safe point, a second one cannot kill; signals noted while the program was loading
        # (``python -m perfpriv`` notes them in its handler's ``received`` list) count too
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.getsignal(sig)
            signal.signal(sig, _note_signal)
            for early in getattr(previous[sig], "received", ()):
                _note_signal(early)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        _check_start()
        try:
            if args.command == "reproduce":
                return _reproduce(args)
        except (_Fault, ValueError) as exc:   # bad values found after parsing: one clear line, exit code 2
            print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:                # the folder became unwritable during the run
            print(f"{parser.prog} {args.command}: error: {exc}; resume with --resume once it is fixed",
                  file=sys.stderr)
            return 1
        return 0  # pragma: no cover (argparse requires a command)
    except KeyboardInterrupt as stop:         # before the work started (the run's own handler says more)
        _STOP["raised"] = True
        stop = stop if isinstance(stop, (_Interrupted, _Terminated)) else _stop_for(_STOP["signum"] or signal.SIGINT)
        print("interrupted before any figure was started; nothing to resume", file=sys.stderr)
        return 143 if isinstance(stop, _Terminated) else 130
    finally:
        for sig, handler in previous.items():
            # the command line: the run is over, a late signal must not turn its exit code into a kill
            signal.signal(sig, signal.SIG_IGN if argv is None else handler)
