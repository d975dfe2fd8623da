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
  nor on ``n_jobs`` or the backend: on one machine results are bit-identical
  across them (workers on another kind of CPU may differ in the last bit,
  where numpy's vectorized ``exp`` and ``log`` round differently);
* a progress bar (tqdm) appears on an interactive terminal for sweeps longer
  than a moment, and never in tests or in stored notebook outputs.
"""

from __future__ import annotations

import itertools
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from . import keyed
from ._validate import check_int, check_n_jobs

__all__ = ["cell_seed", "key_seed", "sweep", "map_cells", "SweepResult"]

def cell_seed(seed: Any, *coordinates: Any) -> np.random.SeedSequence:
    """The seed of one grid cell: the root seed plus the cell's coordinate values.

    Parameters
    ----------
    seed : None, int, SeedSequence, Generator or perfpriv.keyed.Key
        Root seed of the whole sweep (anything :func:`numpy.random.default_rng`
        accepts; ``None`` draws fresh entropy, so the sweep is not reproducible).
    *coordinates
        The values that identify the cell, e.g. ``q, r`` (floats are
        identified at 1e-9, :func:`perfpriv.keyed.coordinate_key`).

    Returns
    -------
    numpy.random.SeedSequence
        Made from the cell's key (:func:`perfpriv.keyed.cell_key`): pass it
        as ``seed=`` to any perfpriv function (or to ``numpy.random.default_rng``).

    Examples
    --------
    >>> a = np.random.default_rng(cell_seed(7, 0.3, 0.6)).random()
    >>> b = np.random.default_rng(cell_seed(7, 0.1 + 0.2, 0.6)).random()
    >>> a == b
    True
    """
    return key_seed(keyed.cell_key(keyed.root_key(seed) if not isinstance(seed, keyed.Key) else seed,
                                     *coordinates))


def _check_progress(progress):
    """``"auto"``, True or False (real booleans: 0 and 1.0 are not flags)."""
    if isinstance(progress, (bool, np.bool_)):
        return bool(progress)
    if not isinstance(progress, str) or progress != "auto":
        raise ValueError(f"progress must be 'auto', True or False; got {progress!r:.80}")
    return progress


def key_seed(key: keyed.Key) -> np.random.SeedSequence:
    """A SeedSequence made from one scalar key (so that numpy-seeded functions can use it)."""
    if not isinstance(key, keyed.Key):
        raise TypeError(f"key must be a perfpriv.keyed.Key (from cell_key); got {key!r:.80}")
    if key.shape != ():
        raise ValueError(f"key must be a single key; got a Key array of shape {key.shape}")
    a, b = int(key.a), int(key.b)
    return np.random.SeedSequence([a & 0xFFFFFFFF, a >> 32, b & 0xFFFFFFFF, b >> 32])


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


def _check_accepts(func: Callable[..., Any], names: list) -> None:
    """Refuse, before any cell runs, grid axes or fixed arguments that ``func`` does not take."""
    import inspect

    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):   # a builtin without a signature: nothing to check
        return
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    accepted = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    unknown = [n for n in names if n not in accepted]
    if unknown:
        name = getattr(func, "__name__", repr(func))
        raise TypeError(f"func {name} does not take the argument(s) {', '.join(map(repr, unknown))} that the grid "
                        f"or the fixed arguments name (it takes {', '.join(sorted(accepted)) or 'none'}; "
                        "'seed' is always passed)")


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
    seed : None, int, SeedSequence or Generator
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
    _check_accepts(func, [*axes, *fixed, "seed"])
    n_jobs = check_n_jobs(n_jobs)
    progress = _check_progress(progress)
    root = keyed.root_key(seed)
    grid_shape = tuple(len(v) for v in axes.values())
    names = list(axes)
    cells = [dict(zip(names, (v.item() if hasattr(v, "item") else v for v in combo)))
             for combo in itertools.product(*axes.values())]
    seeds = [cell_seed(root, *cell.values()) for cell in cells]

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



def map_cells(func: Callable[..., Any], cells: Mapping[str, Any], *, seed: Any = None, chunk: int = 32,
              n_jobs: int | None = None, progress: str | bool = "auto", description: str | None = None,
              on_chunk: Callable[[int], Any] | None = None, **fixed: Any) -> np.ndarray:
    """Evaluate a *batched* ``func`` on a list of cells, in chunks, reproducibly.

    ``func(**{name: values_of_chunk}, keys=Key array of the chunk, **fixed)``
    receives the coordinates of up to ``chunk`` cells as arrays and one
    ``perfpriv.keyed.Key`` per cell (``cell_key(seed, *coords)``),
    and returns an array whose first axis runs over the chunk's cells. A
    cell's keys depend only on the root seed and its own coordinates, and a
    batched engine call gives every cell the numbers it would get alone, so
    the result does not depend on ``chunk``, ``n_jobs`` or the backend.

    Parameters
    ----------
    func : callable
        Module-level (picklable) batched function.
    cells : mapping of str to 1-D array_like
        Coordinates of the cells (all of one length).
    seed : None, int, SeedSequence or Generator
        Root seed.
    chunk : int
        Cells per call.
    n_jobs, progress, description
        As in :func:`sweep`.
    on_chunk : callable, optional
        Called in the calling process with the number of cells of each chunk
        as its result arrives (a progress count, or a place to stop cleanly).
    **fixed
        Passed unchanged to every call.

    Returns
    -------
    numpy.ndarray
        The chunks' results concatenated along the first axis.

    Examples
    --------
    >>> def first_uniform(q, keys):
    ...     return q + keys.uniform_at(0) * 0.0
    >>> map_cells(first_uniform, {"q": [0.1, 0.2, 0.3]}, seed=1, chunk=2).tolist()
    [0.1, 0.2, 0.3]
    """
    import joblib

    if not callable(func):
        raise TypeError(f"func must be callable; got {func!r:.80}")
    if not isinstance(cells, Mapping) or not cells:
        raise ValueError("cells must be a non-empty mapping of coordinate name to values")
    cols = {}
    for k, v in cells.items():
        if not isinstance(k, str):
            raise TypeError(f"cells must be keyed by coordinate names (str); got the key {k!r:.40}")
        try:
            arr = np.atleast_1d(np.asarray(v))
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.dtype == object or arr.dtype.kind not in "iuf":
            raise TypeError(f"cells[{k!r}] must be a 1-D array of numbers (a coordinate of each cell); "
                            f"got {v!r:.80}")
        cols[k] = arr
    sizes = {v.shape for v in cols.values()}
    if len(sizes) != 1 or next(iter(sizes))[0] == 0 or len(next(iter(sizes))) != 1:
        raise ValueError(f"cells must hold 1-D coordinate arrays of one non-zero length; got shapes "
                         f"{ {k: v.shape for k, v in cols.items()} }")
    chunk = check_int("chunk", chunk, low=1)
    n_jobs = check_n_jobs(n_jobs)
    progress = _check_progress(progress)
    if on_chunk is not None and not callable(on_chunk):
        raise TypeError(f"on_chunk must be a callable (or None); got {on_chunk!r:.80}")
    root = keyed.root_key(seed)
    count = next(iter(sizes))[0]
    keys = [keyed.cell_key(root, *(cols[k][i].item() for k in cols)) for i in range(count)]
    ka = np.array([int(k.a) for k in keys], dtype=np.uint64)
    kb = np.array([int(k.b) for k in keys], dtype=np.uint64)
    starts = range(0, count, chunk)
    tasks = (joblib.delayed(func)(**{k: v[s:s + chunk] for k, v in cols.items()},
                                  keys=keyed.Key(ka[s:s + chunk], kb[s:s + chunk]), **fixed)
             for s in starts)
    iterator = joblib.Parallel(n_jobs=n_jobs, return_as="generator")(tasks)
    show = progress is True or (progress == "auto" and sys.stderr.isatty() and count > chunk)
    if show:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, total=len(starts), unit="chunk",
                        desc=description or getattr(func, "__name__", "cells"))
    results = []
    for r in iterator:
        results.append(np.asarray(r))
        if on_chunk is not None:
            on_chunk(len(results[-1]))
    return np.concatenate(results, axis=0)
