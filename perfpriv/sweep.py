"""Run a function over the cells of a grid, in parallel and reproducibly.

Every heatmap of the book (the ε* maps of Figs. 2 and 7, the γ* maps of
Figs. 4 and 5) and every experiment over a list of values (the τ of
Fig. 3a, the sizes of Theorem 3's check) is a batched function evaluated on
the cells of a grid by :func:`map_grid`, each cell keyed by its coordinate
values. On one machine the results are bit-identical whatever the chunk
size, ``n_jobs`` or backend (workers on another kind of CPU may differ in the
last bit, where numpy's vectorized ``exp`` and ``log`` round differently).
The chunks run through :mod:`joblib`: ``with joblib.parallel_config(backend="dask"): ...``
(or ``"ray"``) moves a grid to a cluster unchanged. :class:`Execution` holds
how a grid runs.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping, MutableMapping

import numpy as np

from . import keyed
from ._validate import check_int, check_n_jobs

__all__ = ["map_grid", "Execution"]


def _check_progress(progress):
    """``"auto"``, True or False (real booleans: 0 and 1.0 are not flags)."""
    if isinstance(progress, (bool, np.bool_)):
        return bool(progress)
    if not isinstance(progress, str) or progress != "auto":
        raise ValueError(f"progress must be 'auto', True or False; got {progress!r:.80}")
    return progress


@dataclass(frozen=True)
class Execution:
    """How :func:`map_grid` runs a grid; no option changes a number.

    Parameters
    ----------
    n_jobs : int, optional
        Number of joblib workers (``-1``: all cores). ``None`` (default) means
        joblib's configured default: one worker, or what an enclosing
        ``joblib.parallel_config(backend=..., n_jobs=...)`` says.
    chunk : int, optional
        Cells per call of the function. ``None`` (default): the cells spread
        evenly over the workers (one chunk each), or one cell per chunk when
        ``on_cells`` is given, so that the caller hears of each cell.
    progress : {"auto", True, False}
        Show a tqdm progress bar. ``"auto"`` shows it only on an interactive
        terminal (never in tests or notebook outputs).
    description : str, optional
        Label of the progress bar (default: the function's name).
    on_cells : callable, optional
        Called in the calling process with the number of cells of each chunk
        as its result arrives (a progress count, or a place to stop cleanly).
    store : MutableMapping, optional
        Where a study that can resume keeps its finished cells
        (:func:`perfpriv.experiments.gamma_star_map` says how it keys them):
        cells found there are not run again, and each new cell is put there
        as its chunk finishes. :func:`map_grid` itself does not read it.

    Examples
    --------
    >>> Execution(n_jobs=2, chunk=8).chunk
    8
    >>> Execution(chunk=0)
    Traceback (most recent call last):
    ...
    ValueError: chunk must be an integer >= 1; got 0
    """

    n_jobs: int | None = None
    chunk: int | None = None
    progress: str | bool = "auto"
    description: str | None = None
    on_cells: Callable[[int], Any] | None = None
    store: MutableMapping | None = None

    def __post_init__(self):
        object.__setattr__(self, "n_jobs", check_n_jobs(self.n_jobs))
        if self.chunk is not None:
            object.__setattr__(self, "chunk", check_int("chunk", self.chunk, low=1))
        object.__setattr__(self, "progress", _check_progress(self.progress))
        if self.description is not None and not isinstance(self.description, str):
            raise TypeError(f"description must be a str (or None); got {self.description!r:.80}")
        if self.on_cells is not None and not callable(self.on_cells):
            raise TypeError(f"on_cells must be a callable (or None); got {self.on_cells!r:.80}")
        if self.store is not None and not isinstance(self.store, MutableMapping):
            raise TypeError(f"store must be a mutable mapping (e.g. a dict; or None); got {self.store!r:.60}")


def _check_accepts(func: Callable[..., Any], names: list) -> None:
    """Refuse, before any cell runs, coordinates or fixed arguments that ``func`` does not take."""
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
        raise TypeError(f"func {name} does not take the argument(s) {', '.join(map(repr, unknown))} that the cells "
                        f"or the fixed arguments name (it takes {', '.join(sorted(accepted)) or 'none'}; "
                        "'keys' is always passed)")


def _check_cells(cells, product):
    """The coordinate columns of the cells (1-D numeric arrays of one length) and the grid's shape."""
    if not isinstance(cells, Mapping) or not cells:
        raise ValueError("cells must be a non-empty mapping of coordinate name to values")
    cols = {}
    for k, v in cells.items():
        if not isinstance(k, str):
            raise TypeError(f"cells must be keyed by coordinate names (str); got the key {k!r:.40}")
        if k == "keys":
            raise ValueError("cells must not name a coordinate 'keys' (the argument that holds the cells' keys)")
        try:
            arr = np.atleast_1d(np.asarray(v))
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.dtype == object or arr.dtype.kind not in "iuf":
            raise TypeError(f"cells[{k!r}] must be a 1-D array of numbers (a coordinate of each cell); "
                            f"got {v!r:.80}")
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"cells[{k!r}] must be a non-empty 1-D sequence of coordinates; got shape {arr.shape}")
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise ValueError(f"cells[{k!r}] must not hold NaN (a cell's key is made from its coordinates)")
        cols[k] = arr
    if product:
        shape = tuple(v.size for v in cols.values())
        mesh = np.meshgrid(*cols.values(), indexing="ij")
        return {k: m.reshape(-1) for k, m in zip(cols, mesh)}, shape
    sizes = {v.size for v in cols.values()}
    if len(sizes) != 1:
        raise ValueError(f"cells must hold coordinate arrays of one length (or use product=True); got lengths "
                         f"{ {k: v.size for k, v in cols.items()} }")
    return cols, (sizes.pop(),)


def check_execution(options: Any, **defaults: Any) -> Execution:
    """``options`` as an :class:`Execution`: the one check of a study's ``options`` argument.

    ``None`` gives ``Execution(**defaults)``; a given :class:`Execution` is used
    as it is, its ``description`` (a label only) taken from ``defaults`` when it
    has none. Anything else is a TypeError naming ``options``.
    """
    if options is None:
        return Execution(**defaults)
    if not isinstance(options, Execution):
        raise TypeError(f"options must be a perfpriv.sweep.Execution (or None); got {options!r:.80}")
    if options.description is None and defaults.get("description") is not None:
        return dataclasses.replace(options, description=defaults["description"])
    return options


def map_grid(func: Callable[..., Any], cells: Mapping[str, Any], *, seed: Any = None, product: bool = False,
             options: Execution | None = None, **fixed: Any) -> np.ndarray:
    """Evaluate a batched ``func`` on the cells of a grid, each cell keyed by the seed and its coordinates.

    Parameters
    ----------
    func : callable
        ``func(**{name: coordinates of a chunk}, keys=Key array of the chunk, **fixed)``: up to
        ``options.chunk`` cells as 1-D arrays and one key per cell (:func:`perfpriv.keyed.cell_key` of
        the seed and its coordinates, in the order of ``cells``; numpy draws take
        ``perfpriv.keyed.as_generator(keys[i])``), returning an array whose first axis runs over the
        chunk's cells. Module-level (picklable) for process backends.
    cells : mapping of str to 1-D array_like of numbers
        The coordinates of the cells: with ``product=False`` one array per
        name, all of one length (cell i has the i-th value of each); with
        ``product=True`` the axes of a grid, whose cells are their Cartesian
        product in order (the last axis varying fastest).
    seed : None, int, SeedSequence, Generator or perfpriv.keyed.Key
        Root seed; or a Key array of one key per cell (in the cells' order, or of the grid's shape)
        for the cells instead of their coordinates' (e.g. :func:`perfpriv.engine.cell_keys`).
    product : bool
        Whether ``cells`` holds the axes of a product grid.
    options : Execution, optional
        How the grid runs (default ``Execution()``).
    **fixed
        Passed unchanged to every call.

    Returns
    -------
    numpy.ndarray
        The chunks' results concatenated along the first axis: shape
        ``(cells, *result_shape)``, or ``(*axis_lengths, *result_shape)``
        with ``product=True``.

    Examples
    --------
    >>> def first_uniform(q, keys):
    ...     return q + keys.uniform_at(0) * 0.0
    >>> map_grid(first_uniform, {"q": [0.1, 0.2, 0.3]}, seed=1, options=Execution(chunk=2)).tolist()
    [0.1, 0.2, 0.3]
    >>> def total(a, b, keys):
    ...     return a + b
    >>> map_grid(total, {"a": [0.0, 1.0], "b": [10.0, 20.0, 30.0]}, seed=3, product=True).tolist()
    [[10.0, 20.0, 30.0], [11.0, 21.0, 31.0]]
    """
    import joblib

    if not callable(func):
        raise TypeError(f"func must be callable; got {func!r:.80}")
    if not isinstance(product, (bool, np.bool_)):
        raise TypeError(f"product must be True or False; got {product!r:.80}")
    options = check_execution(options)
    cols, shape = _check_cells(cells, bool(product))
    _check_accepts(func, [*cols, *fixed, "keys"])
    count = math.prod(shape)
    if isinstance(seed, keyed.Key) and seed.shape != ():
        if seed.shape not in {(count,), shape}:
            raise ValueError(f"seed must be one root key or one key per cell ({count} cells); got keys of shape "
                             f"{seed.shape}")
        ka, kb = seed.a.reshape(-1), seed.b.reshape(-1)
    else:
        root = keyed.root_key(seed)
        keys = [keyed.cell_key(root, *(cols[k][i].item() for k in cols)) for i in range(count)]
        ka = np.array([int(k.a) for k in keys], dtype=np.uint64)
        kb = np.array([int(k.b) for k in keys], dtype=np.uint64)
    chunk = options.chunk
    if chunk is None:
        workers = max(1, joblib.effective_n_jobs(options.n_jobs))
        chunk = 1 if options.on_cells is not None else math.ceil(count / workers)
    starts = range(0, count, chunk)
    tasks = (joblib.delayed(func)(**{k: v[s:s + chunk] for k, v in cols.items()},
                                  keys=keyed.Key(ka[s:s + chunk], kb[s:s + chunk]), **fixed)
             for s in starts)
    iterator = joblib.Parallel(n_jobs=options.n_jobs, return_as="generator")(tasks)
    progress = options.progress
    if progress is True or (progress == "auto" and sys.stderr.isatty() and count > chunk):
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, total=len(starts), unit="chunk",
                        desc=options.description or getattr(func, "__name__", "cells"))
    results = []
    for r in iterator:
        results.append(np.asarray(r))
        if options.on_cells is not None:
            options.on_cells(len(results[-1]))
    out = np.concatenate(results, axis=0)
    return out.reshape(shape + out.shape[1:]) if product else out
