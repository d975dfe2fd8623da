"""Command line: regenerate the paper's figures into a folder.

::

    python -m perfpriv reproduce --figure {1..7,all} --scale {book,paper} --out DIR
                                 [--format png,svg,pdf] [--n-jobs N] [--seed S]

For every requested figure this writes, into ``DIR`` (``K`` is the figure's
number, ``X`` a panel letter):

* ``figureK.png`` -- the whole figure, as drawn by :mod:`perfpriv.plots`, and
  ``figureK.svg`` / ``figureK.pdf`` with ``--format`` (vector, for print);
* ``figureK_panel_X.png`` (and ``.svg``, ``.pdf``) -- each panel of a
  multi-panel figure with its colour key (colour bar), cut from the whole
  figure; panels are lettered a, b, ... in reading order;
* ``figureK.npz`` -- the numbers behind the figure (named arrays, see
  :data:`DATA_DOC`), computed by the same library calls the figure draws;
* ``run.json`` -- the settings of every figure, the seed, ``n_jobs``, the
  versions and the wall-clock seconds of each figure.

Fig. 3 is written as two figures, ``figure3a`` (p_tau against tau, one panel)
and ``figure3bc`` (its panels ``b`` and ``c``); Figs. 1 and 6 have four panels
(a-d), Fig. 4 six and Fig. 5 nine (three per tau).

``--scale book`` uses the chapters' default sizes: all seven figures in about
:data:`BOOK_SECONDS` seconds on a 2-core machine. ``--scale paper`` uses the
paper's settings (DESIGN.md, "Paper scale": the authors' published experiment
code where the text leaves them open): seconds to a minute for Figs. 1-3, 6
and 7, about 1.5 hours for Fig. 4 and about 8 hours for Fig. 5 with
``--n-jobs 2`` (:data:`PAPER_TIMES`; measured, see ``benchmarks/README.md``).

``--n-jobs`` sets the joblib workers of the (q, r) sweeps (Figs. 2, 4, 5, 7),
through ``joblib.parallel_config``; the numbers do not depend on it. Seeds:
every figure is seeded from ``--seed`` (each heatmap cell from the seed and its
own coordinates), so two runs with the same seed write the same numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

__all__ = ["main", "build_parser", "SCALES", "FIGURES", "FORMATS", "BOOK_SECONDS", "PAPER_TIMES", "run_figure",
           "save_figure", "panel_boxes"]

FIGURES = ("1", "2", "3", "4", "5", "6", "7")
#: File formats of ``--format``: PNG (pixels) and the vector formats for print.
FORMATS = ("png", "svg", "pdf")
#: Dots per inch of the PNG files (the book shows its figures at 80 px per inch, 2x for sharpness).
PNG_DPI = 200
#: Seconds that ``reproduce --figure all --scale book`` takes on a 2-core machine (README says the same).
BOOK_SECONDS = 15
#: Time of each figure at ``--scale paper --n-jobs 2`` on a 2-core machine (benchmarks/README.md).
PAPER_TIMES = {"1": "1.6 s", "2": "7 s", "3": "40 s", "4": "85 min (measured)", "5": "about 8 h (estimated)",
               "6": "1.4 s", "7": "7 s"}

_Q_PAPER = np.linspace(0.01, 0.99, 30)
_GAMMAS_PAPER = np.geomspace(0.2, 20.0, 30)

#: Settings of each figure at each scale. ``book``: the sizes the chapters
#: use by default; ``paper``: DESIGN.md's "Paper scale".
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

#: tau values of the gamma* maps.
TAUS = {"4": (0.02, 0.05), "5": (0.01, 0.2, 0.1)}

#: What each data file holds.
DATA_DOC = {
    "1": "per (q, r) row k: q_k, r_k, mean_population_k (eps x T+1), moving_average_k (eps x T), "
         "mean_sq_error_k (eps x T); epsilons, window",
    "2": "q (rows), r (columns), epsilons, epsilon_star (q x r), errors and stderr (q x r x eps)",
    "3a": "taus, gammas, p and se (simulated leak fraction, gamma x tau), theory (Lemma 8 at the same taus)",
    "3bc": "per panel b/c: q, r, gammas, taus, theory, empirical, spread, se (tau x gamma)",
    "4": "per tau index k: tau_k, qs, rs, gammas, empirical_k, bound_k, constrained_k, mean_field_k (q x r)",
}
DATA_DOC["5"] = DATA_DOC["4"]
DATA_DOC["6"] = DATA_DOC["1"]
DATA_DOC["7"] = DATA_DOC["2"]


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit code 2), not the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
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
    >>> args.figure, args.scale, args.format, args.n_jobs, args.seed
    ('all', 'book', ('png',), 1, 0)
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
            "  run.json               settings, seed, n_jobs, versions and seconds per figure\n"
            "Fig. 3 is written as figure3a (one panel) and figure3bc (panels b, c).\n\n"
            "Figures: 1 Bernoulli error and population (leak model; panels a-d); 2 epsilon* map (leak);\n"
            "3 p_tau against tau (3a) and growth factor C(gamma) (3b, 3c); 4 gamma* maps, tau = 0.02,\n"
            "0.05 (panels a-f); 5 gamma* maps, tau = 0.01, 0.2, 0.1 (panels a-i); 6 as 1 for the\n"
            "agnostic model; 7 as 2 for the agnostic model."),
        epilog=(
            f"Scales: 'book' = the chapters' default sizes: all seven figures in about {BOOK_SECONDS} s on\n"
            "2 cores. 'paper' = the paper's settings (30x30 (q, r) grids, 30 epsilons or gammas,\n"
            "T = 200 (Bernoulli) / 50 (Gaussian), N0 = 400 / 1000, 10-50 trials, cap 20000), with\n"
            "--n-jobs 2 on 2 cores: " + ", ".join(f"Fig. {k} {v}" for k, v in PAPER_TIMES.items())
            + "\n(see benchmarks/README.md)."),
    )
    rep.add_argument("--figure", required=True, choices=FIGURES + ("all",), metavar="{1..7,all}",
                     help="which figure of the paper (1-7), or 'all'")
    rep.add_argument("--scale", default="book", choices=("book", "paper"),
                     help="experiment sizes: the chapters' ('book', default) or the paper's ('paper')")
    rep.add_argument("--out", required=True, type=Path, metavar="DIR",
                     help="output folder (created if missing; files of the same name are overwritten)")
    rep.add_argument("--format", type=_formats, default=("png",), metavar="LIST",
                     help="comma-separated file formats among png, svg, pdf (default png; "
                          "svg and pdf are vector, for print): --format png,svg,pdf")
    rep.add_argument("--n-jobs", type=int, default=1, metavar="N",
                     help="joblib workers for the (q, r) sweeps of Figs. 2, 4, 5, 7 (-1: all cores; "
                          "default 1); results do not depend on it")
    rep.add_argument("--seed", type=int, default=0, metavar="S",
                     help="root seed (non-negative integer, default 0)")
    rep.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                     help="progress bars on stderr: 'auto' (only on a terminal, default), 'on' or 'off'")
    # the top-level --help documents everything: append the command's own help
    parser.epilog = (parser.epilog + "\n\n" + "=" * 78 + "\nCommand 'reproduce'\n" + "=" * 78 + "\n"
                     + rep.format_help())
    return parser


# ---------------------------------------------------------------------------
# one function per figure: (figures, data) from the settings
# ---------------------------------------------------------------------------

def _curves(model, s, seed):
    from . import bernoulli, plots

    runs = [bernoulli.simulate(s["epsilons"], q, r, T=s["T"], n0=s["n0"], trials=s["trials"], model=model,
                               cap=s["cap"], mu=s["mu"], seed=seed + k)
            for k, (q, r) in enumerate(s["settings"])]
    draw = plots.figure1 if model == "leak" else plots.figure6
    fig = draw(runs, settings=s["settings"], window=s["window"], cap=s["cap"], mu=s["mu"])
    data = {"epsilons": np.asarray(s["epsilons"], float), "window": s["window"]}
    for k, ((q, r), run) in enumerate(zip(s["settings"], runs)):
        data.update({f"q_{k}": q, f"r_{k}": r, f"mean_population_{k}": run.mean_population,
                     f"moving_average_{k}": run.moving_average(window=s["window"]),
                     f"mean_sq_error_{k}": run.mean_sq_error})
    return fig, data


def _map(model, s, seed, progress):
    from . import optimize, plots

    g = np.asarray(s["grid"], float)
    Q, R = np.meshgrid(g, g, indexing="ij")
    res = optimize.optimal_epsilon(Q, R, s["epsilons"], T=s["T"], n0=s["n0"], trials=s["trials"], model=model,
                                   mu=s["mu"], seed=seed, progress=progress)
    draw = plots.figure2 if model == "leak" else plots.figure7
    fig = draw(res, grid=g)
    return fig, {"q": g, "r": g, "epsilons": res.epsilons, "epsilon_star": res.epsilon, "errors": res.errors,
                 "stderr": res.stderr}


def _figure3a(s, seed):
    from . import leakage, plots

    sim = plots.figure3a_simulation(s["n"], s["gammas"], s["taus"], rounds=s["rounds"], d=s["d"], R=s["R"],
                                    seed=seed)
    fig = plots.figure3a(n=s["n"], gammas=s["gammas"], taus=s["taus"], rounds=s["rounds"], d=s["d"], R=s["R"],
                         simulated=sim)
    theory = leakage.marginal_leak_probability(s["n"], np.asarray(s["gammas"])[:, None],
                                               np.asarray(s["taus"])[None, :], d=s["d"], R=s["R"]).p
    return fig, {"taus": sim["taus"], "gammas": np.asarray(s["gammas"], float), "p": sim["p"], "se": sim["se"],
                 "theory": theory, "n": s["n"]}


def _figure3bc(s, seed):
    from . import plots

    curves = tuple(plots.growth_curves(qr[0], qr[1], s["taus"], s["gammas"], n0=s["n0"], T=t, trials=s["trials"],
                                       d=s["d"], R=s["R"], cap=s["cap"], ratio=s["ratio"], seed=seed + k)
                   for k, (qr, t) in enumerate(zip((s["small"], s["large"]), s["T"])))
    fig = plots.figure3bc(curves=curves)
    data = {}
    for panel, c in zip("bc", curves):
        for name in ("q", "r", "gammas", "taus", "theory", "empirical", "spread", "se"):
            data[f"{name}_{panel}"] = np.asarray(getattr(c, name))
    return fig, data


def _gamma_maps(number, s, seed, bar):
    from . import plots

    qs = s["qs_fig4"] if number == "4" else s["qs"]
    maps = []
    for tau in TAUS[number]:
        maps.append(plots.gamma_star_map(tau, qs, s["rs"], gammas=s["gammas"], T=s["T"], n0=s["n0"],
                                         trials=s["trials"], d=s["d"], R=s["R"], cap=s["cap"], seed=seed))
        bar.update(1)
    fig = plots.figure_gamma_star(maps)
    data = {"qs": np.asarray(qs, float), "rs": np.asarray(s["rs"], float), "gammas": np.asarray(s["gammas"], float)}
    for k, m in enumerate(maps):
        data[f"tau_{k}"] = m.tau
        for name in ("empirical", "bound", "constrained", "mean_field"):
            data[f"{name}_{k}"] = getattr(m, name)
    return fig, data


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


def run_figure(number, scale, seed, progress=False, bar=None):
    """Compute one figure of the paper with the settings of :data:`SCALES`.

    Parameters
    ----------
    number : {"1", ..., "7"}
        Figure of the paper.
    scale : {"book", "paper"}
        Experiment sizes.
    seed : int
        Root seed (non-negative).
    progress : {"auto", True, False}
        Progress bars of the (q, r) sweeps.
    bar : tqdm progress bar, optional
        Advanced by one per panel group computed.

    Returns
    -------
    dict
        ``{name: (matplotlib.figure.Figure, dict of arrays)}``, one entry per
        figure file (``figure3a`` and ``figure3bc`` for Fig. 3).

    Examples
    --------
    >>> out = run_figure("6", "book", 0)
    >>> list(out), sorted(out["figure6"][1])[:3]
    (['figure6'], ['epsilons', 'mean_population_0', 'mean_population_1'])
    """
    s = SCALES[scale]
    if bar is None:
        bar = _NullBar()
    if number in ("1", "6"):
        out = {f"figure{number}": _curves("leak" if number == "1" else "agnostic", s["curves"], seed)}
    elif number in ("2", "7"):
        out = {f"figure{number}": _map("leak" if number == "2" else "agnostic", s["maps"], seed, progress)}
    elif number == "3":
        out = {"figure3a": _figure3a(s["fig3a"], seed)}
        bar.update(1)
        out["figure3bc"] = _figure3bc(s["fig3bc"], seed)
        bar.update(1)
        return out
    else:
        return {f"figure{number}": _gamma_maps(number, s["gamma_maps"], seed, bar)}
    bar.update(1)
    return out


class _NullBar:
    def update(self, n=1):
        pass


def _steps(number):
    return {"3": 2, "4": len(TAUS["4"]), "5": len(TAUS["5"])}.get(number, 1)


def _panel_axes(fig):
    """The panels of a figure (colour bars excluded), in drawing order."""
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def panel_boxes(fig, renderer) -> list:
    """One box per panel (display pixels): the panel with its colour bar and the figure legends beside it.

    A colour bar belongs to the panel whose image it keys (or, for a bar of
    several panels, to the nearest panel on its left in the same row); a
    figure-level legend belongs to the panel that it sits directly above or
    below and does not extend beyond. So a panel cut out of the figure keeps
    its colour key.
    """
    from matplotlib.transforms import Bbox

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

    PNG panels are cut from the pixels of one drawing; vector panels are the
    same regions saved from the figure (``bbox_inches``). Returns the paths.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.image import imsave
    from matplotlib.transforms import Bbox

    from .plots import style

    pad = 4
    with style():
        fig.set_dpi(PNG_DPI)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        pixels = np.asarray(canvas.buffer_rgba())
        boxes = panel_boxes(fig, canvas.get_renderer())
    paths = []
    if "png" in formats:
        whole = out / f"{name}.png"
        imsave(whole, pixels, dpi=PNG_DPI)
        paths.append(whole)
    with style():
        for fmt in formats:
            if fmt != "png":
                path = out / f"{name}.{fmt}"
                fig.savefig(path, format=fmt, dpi=PNG_DPI)
                paths.append(path)
    if len(boxes) > 1:
        height, width = pixels.shape[:2]
        for k, box in enumerate(boxes):
            letter = chr(ord(first_letter) + k)
            x0, x1 = max(int(box.x0) - pad, 0), min(int(math.ceil(box.x1)) + pad, width)
            y0, y1 = max(height - int(math.ceil(box.y1)) - pad, 0), min(height - int(box.y0) + pad, height)
            if "png" in formats:
                path = out / f"{name}_panel_{letter}.png"
                imsave(path, pixels[y0:y1, x0:x1], dpi=PNG_DPI)
                paths.append(path)
            inches = Bbox.from_extents(x0 / PNG_DPI, (height - y1) / PNG_DPI, x1 / PNG_DPI, (height - y0) / PNG_DPI)
            with style():
                for fmt in formats:
                    if fmt != "png":
                        path = out / f"{name}_panel_{letter}.{fmt}"
                        fig.savefig(path, format=fmt, dpi=PNG_DPI, bbox_inches=inches)
                        paths.append(path)
    npz = out / f"{name}.npz"
    np.savez_compressed(npz, **{k: np.asarray(v) for k, v in data.items()})
    return paths + [npz]


def _reproduce(args) -> int:
    import joblib
    from tqdm.auto import tqdm

    import matplotlib

    from . import __version__

    if args.n_jobs == 0 or args.n_jobs < -1:
        raise ValueError(f"--n-jobs must be a positive integer or -1 (all cores); got {args.n_jobs}")
    if args.seed < 0:
        raise ValueError(f"--seed must be a non-negative integer; got {args.seed}")
    out = args.out
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out must be a folder; {str(out)!r} is a file")
    out.mkdir(parents=True, exist_ok=True)
    numbers = FIGURES if args.figure == "all" else (args.figure,)
    show = {"auto": None, "on": False, "off": True}[args.progress]   # tqdm's disable=
    sweep_progress = {"auto": "auto", "on": True, "off": False}[args.progress]
    record = {"command": "reproduce", "scale": args.scale, "seed": args.seed, "n_jobs": args.n_jobs,
              "formats": list(args.format),
              "perfpriv": __version__, "numpy": np.__version__, "matplotlib": matplotlib.__version__,
              "python": platform.python_version(), "figures": {}}
    written = []
    with tqdm(total=sum(_steps(n) for n in numbers), desc="figures", unit="panel", disable=show,
              file=sys.stderr) as bar, joblib.parallel_config(n_jobs=args.n_jobs):
        for number in numbers:
            bar.set_postfix_str(f"figure {number} ({args.scale} scale)")
            start = time.perf_counter()
            results = run_figure(number, args.scale, args.seed, progress=sweep_progress, bar=bar)
            seconds = time.perf_counter() - start
            for name, (fig, data) in results.items():
                written += save_figure(fig, data, out, name, first_letter="b" if name == "figure3bc" else "a",
                                       formats=args.format)
            record["figures"][number] = {
                "seconds": round(seconds, 3),
                "seconds_with_files": round(time.perf_counter() - start, 3),
                "files": sorted(
                p.name for p in written if p.name.startswith(tuple(results))),
                "data": DATA_DOC["3a"] + "; " + DATA_DOC["3bc"] if number == "3" else DATA_DOC[number],
                "settings": _jsonable(_settings_of(number, args.scale))}
    (out / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {len(written) + 1} files to {out}")
    for number, info in record["figures"].items():
        print(f"  figure {number}: {info['seconds']:.1f} s (with writing the files: "
              f"{info['seconds_with_files']:.1f} s)")
    return 0


def main(argv=None) -> int:
    """Entry point of ``python -m perfpriv``; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "reproduce":
            return _reproduce(args)
    except ValueError as exc:   # bad values found after parsing: one clear line, exit code 2
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0  # pragma: no cover (argparse requires a command)
