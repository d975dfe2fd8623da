"""The timing helper of the benchmark scripts and the paper-scale cell they time (imported as ``_timing``)."""

import statistics
import time


def median_seconds(fn, repeats):
    """Median wall-clock seconds of ``fn()`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def paper_cell(settings, tau, q, r):
    """The paper-scale γ* search of one (τ, q, r) cell of Figs. 4-5 (``settings``: ``cli.SCALES[...]["gamma_maps"]``),
    one worker, seed 0: what ``reproduce --scale paper`` runs for that cell."""
    from perfpriv import behaviour, gaussian, optimize
    from perfpriv.engine import Policy

    mech = gaussian.GaussianMean(settings["gammas"], tau=tau, d=settings["d"], R=settings["R"])
    return optimize.optimal_gamma_empirical(mech, behaviour.Memoryless(q=[q], r=[r]), T=settings["T"],
                                            n0=settings["n0"], trials=settings["trials"],
                                            policy=Policy(cap=settings["cap"]), seed=0)
