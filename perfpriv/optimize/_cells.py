"""The (q, r) cells of a heatmap search: which to evaluate, and their layout.

Shared by the ε* and γ* searches: a search receives ``q`` and ``r`` as
arrays of one shape (e.g. a meshgrid), evaluates every *distinct* (q, r)
pair once -- batched, through :func:`perfpriv.sweep.map_cells`, each cell
keyed by its own coordinates -- and scatters the results back.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_probability, check_same_shape

__all__ = ["check_cells", "unique_cells"]


def check_cells(q, r):
    """q and r as float arrays of one (broadcast) shape, validated."""
    qq = np.asarray(check_probability("q", q), dtype=float)
    rr = np.asarray(check_probability("r", r), dtype=float)
    shape = check_same_shape(q=qq, r=rr)
    return np.broadcast_to(qq, shape), np.broadcast_to(rr, shape), shape


def unique_cells(qq, rr):
    """Distinct (q, r) pairs of two same-shape arrays and the index of each entry.

    Returns
    -------
    uq, ur : numpy.ndarray
        The distinct pairs (1-D, in lexicographic order).
    inverse : numpy.ndarray of int
        Shape of ``qq``: the position of each entry's pair in ``uq``, ``ur``.
    """
    pairs, inverse = np.unique(np.stack([qq.reshape(-1), rr.reshape(-1)]), axis=1, return_inverse=True)
    return pairs[0], pairs[1], np.ravel(inverse).reshape(qq.shape)
