"""Evaluate a function over a parameter grid, in parallel and reproducibly.

Every heatmap of the book (the epsilon* maps of Figs. 2 and 7, the gamma* maps
of Figs. 4 and 5) is a function evaluated on each cell of a grid. This module
does that once, for all of them:

* the cells run through :mod:`joblib`, so ``n_jobs=2`` uses both cores of a
  laptop and ``with joblib.parallel_config(backend="dask"): ...`` (or
  ``"ray"``) moves the same sweep to a cluster without changing any code;
* each cell receives its own :class:`numpy.random.SeedSequence`, derived from
  one root seed and from the cell's *coordinate values* (not its position in
  the grid). A cell's result therefore does not depend on the grid around it,
  nor on ``n_jobs`` or the backend: results are bit-identical across them;
* a progress bar (tqdm) appears on an interactive terminal for sweeps longer
  than a moment, and never in tests or in stored notebook outputs.
"""

from __future__ import annotations

import itertools
import math
import numbers
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ._validate import check_choice, check_int

__all__ = ["cell_seed", "coordinate_key", "sweep", "SweepResult"]

#: Resolution at which coordinate values are identified: two grids whose
#: values agree to 1e-9 (e.g. the same point of two ``linspace`` calls) give a
#: cell the same seed.
_KEY_RESOLUTION = 1e9


def coordinate_key(value: Any) -> int:
    """Non-negative integer that identifies a coordinate value.

    Floats are rounded to 1e-9 (so that equal grid points computed by
    different ``linspace`` calls agree) and mapped to non-negative integers
    (zig-zag for negatives; ``inf`` and ``-inf`` get reserved keys).

    Examples
    --------
    >>> coordinate_key(0.3) == coordinate_key(0.1 + 0.2)
    True
    >>> coordinate_key(0.3) == coordinate_key(0.31)
    False
    """
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, str):
        return int.from_bytes(value.encode(), "little")
    if not isinstance(value, numbers.Real):
        raise TypeError(f"grid coordinates must be real numbers, booleans or strings; got {value!r:.80}")
    x = float(value)
    if math.isnan(x):
        raise ValueError("grid coordinates must not be NaN")
    if math.isinf(x):
        return 1 if x > 0 else 2  # reserved keys; finite values map to 8 and above
    # x * 1e9 overflows beyond ~1.8e299; there x is an integer anyway (exact product)
    k = int(round(x * _KEY_RESOLUTION)) if abs(x) < 1e290 else int(x) * int(_KEY_RESOLUTION)
    zigzag = 2 * k if k >= 0 else -2 * k - 1
    return 8 + zigzag


def cell_seed(seed: Any, *coordinates: Any) -> np.random.SeedSequence:
    """The seed of one grid cell: the root seed plus the cell's coordinates.

    Parameters
    ----------
    seed : None, int or numpy.random.SeedSequence
        Root seed of the whole sweep. ``None`` draws fresh entropy (then the
        sweep is not reproducible, as with numpy).
    *coordinates
        The values that identify the cell, e.g. ``q, r``.

    Returns
    -------
    numpy.random.SeedSequence
        Pass it as ``seed=`` to any perfpriv function (or to
        ``numpy.random.default_rng``).

    Examples
    --------
    >>> a = np.random.default_rng(cell_seed(7, 0.3, 0.6)).random()
    >>> b = np.random.default_rng(cell_seed(7, 0.3, 0.6)).random()
    >>> a == b
    True
    """
    if isinstance(seed, np.random.SeedSequence):
        entropy = seed.entropy
        base_key = tuple(seed.spawn_key)
    elif seed is None:
        entropy = np.random.SeedSequence().entropy
        base_key = ()
    else:
        entropy = check_int("seed", seed, low=0)
        base_key = ()
    key = base_key + tuple(coordinate_key(c) for c in coordinates)
    return np.random.SeedSequence(entropy=entropy, spawn_key=key)


@dataclass(frozen=True)
class SweepResult:
    """Values of a function on every cell of a grid.

    Attributes
    ----------
    values : numpy.ndarray
        Shape ``(*grid_shape, *result_shape)`` when every cell returned a
        number or an array of one common shape; an object array of shape
        ``grid_shape`` otherwise.
    axes : dict of str to numpy.ndarray
        The grid's axes, in order.
    seconds : float
        Wall-clock time of the sweep.
    """

    values: np.ndarray
    axes: dict
    seconds: float

    @property
    def shape(self) -> tuple:
        """Shape of the grid."""
        return tuple(len(v) for v in self.axes.values())


def _call(func: Callable, params: dict, seed: np.random.SeedSequence, fixed: dict):
    return func(**params, **fixed, seed=seed)


def _stack(results: list, grid_shape: tuple) -> np.ndarray:
    try:
        arrays = [np.asarray(r, dtype=float) for r in results]
        if len({a.shape for a in arrays}) == 1:
            return np.stack(arrays).reshape(grid_shape + arrays[0].shape)
    except (TypeError, ValueError):
        pass
    out = np.empty(len(results), dtype=object)
    out[:] = results
    return out.reshape(grid_shape)


def sweep(
    func: Callable[..., Any],
    grid: Mapping[str, Any],
    *,
    seed: Any = None,
    n_jobs: int | None = None,
    progress: str | bool = "auto",
    description: str | None = None,
    **fixed: Any,
) -> SweepResult:
    """Evaluate ``func`` on every cell of ``grid``, each cell with its own seed.

    Parameters
    ----------
    func : callable
        Called as ``func(**cell, **fixed, seed=cell_seed(seed, *cell.values()))``.
        It must be picklable (a module-level function) for process backends.
    grid : mapping of str to 1-D array_like
        Axis name -> values; the grid is their Cartesian product, in order.
    seed : None, int or numpy.random.SeedSequence
        Root seed; cells derive theirs with :func:`cell_seed`.
    n_jobs : int, optional
        Number of joblib workers (``-1``: all cores). ``None`` (default) means
        joblib's configured default: one worker, or what an enclosing
        ``joblib.parallel_config(backend=..., n_jobs=...)`` says.
    progress : {"auto", True, False}
        Show a tqdm progress bar. ``"auto"`` shows it only on an interactive
        terminal (never in tests or notebook outputs).
    description : str, optional
        Label of the progress bar.
    **fixed
        Further keyword arguments passed unchanged to every call.

    Returns
    -------
    SweepResult

    Examples
    --------
    >>> def noisy_sum(a, b, seed):
    ...     return a + b + np.random.default_rng(seed).normal(scale=1e-3)
    >>> res = sweep(noisy_sum, {"a": [0.0, 1.0], "b": [10.0, 20.0, 30.0]}, seed=3)
    >>> res.values.shape
    (2, 3)
    >>> np.round(res.values, 2).tolist()
    [[10.0, 20.0, 30.0], [11.0, 21.0, 31.0]]
    """
    import joblib

    if not callable(func):
        raise TypeError(f"func must be callable; got {func!r:.80}")
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError("grid must be a non-empty mapping of axis name to values")
    axes = {}
    for name, values in grid.items():
        arr = np.atleast_1d(np.asarray(values))
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"grid[{name!r}] must be a non-empty 1-D sequence; got shape {arr.shape}")
        axes[name] = arr
    if n_jobs is not None and n_jobs != -1:
        check_int("n_jobs", n_jobs, low=1)
    if progress not in (True, False):
        check_choice("progress", progress, ("auto",))
    if seed is None:
        seed = np.random.SeedSequence()
    elif not isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(check_int("seed", seed, low=0))
    grid_shape = tuple(len(v) for v in axes.values())
    names = list(axes)
    cells = [dict(zip(names, (v.item() if hasattr(v, "item") else v for v in combo)))
             for combo in itertools.product(*axes.values())]
    seeds = [cell_seed(seed, *cell.values()) for cell in cells]

    show = progress is True or (progress == "auto" and sys.stderr.isatty() and len(cells) > 1)
    start = time.perf_counter()
    tasks = (joblib.delayed(_call)(func, cell, s, fixed) for cell, s in zip(cells, seeds))
    iterator = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    if show:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, total=len(cells), desc=description or getattr(func, "__name__", "sweep"))
    results = list(iterator)
    seconds = time.perf_counter() - start
    return SweepResult(values=_stack(results, grid_shape), axes=axes, seconds=seconds)

