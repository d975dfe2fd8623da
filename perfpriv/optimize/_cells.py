"""The cells of a heatmap search: every cell of a behaviour searched in batches, each with its own key.

Shared by the simulated ε* and γ* searches: every cell of the users is keyed
by :func:`perfpriv.engine.cell_keys`, and :func:`perfpriv.sweep.map_grid` runs
batches of cells (:meth:`perfpriv.behaviour.Behaviour.take`), each one call of
:func:`perfpriv.optimize.level_search`: a cell's numbers are those it gets alone.
"""

from __future__ import annotations

import math

import numpy as np

from .. import engine, keyed
from ..behaviour import Behaviour
from ..sweep import map_grid
from ._levels import level_search

__all__ = ["search_cells", "check_users", "GAMMA_SEARCH_RANGE"]

#: Where a searched γ may lie: the mechanism's range (``perfpriv.gaussian.GAMMA_RANGE``, [1e-100, 1e100])
#: with a margin, since a search moves in log γ (exp(log(1e-100)) < 1e-100) and its surrogate spans
#: 0.05 beyond the bracket.
GAMMA_SEARCH_RANGE = (1e-99, 1e99)


def check_users(users):
    """The users of a search: a :class:`perfpriv.behaviour.Behaviour` (refused by name otherwise)."""
    if not isinstance(users, Behaviour):
        raise TypeError(f"users must be a perfpriv.behaviour.Behaviour (e.g. Memoryless(q=..., r=...)); "
                        f"got {type(users).__name__}")
    return users


def _batch(cell, *, keys, mechanism, users, search):
    """Scores of a batch of cells (flat positions ``cell``): shape (cells, 2, L), mean and standard error."""
    part = users.take(cell)
    best = level_search(mechanism, part, seed=keys if part.shape else keys[0], **search)
    size = len(cell)
    return np.stack([np.reshape(best.values, (size, -1)), np.reshape(best.se, (size, -1))], axis=1)


def search_cells(mechanism, users, *, seed, options, **search):
    """Mean score and its standard error of every level for every cell of ``users``, cell by cell keyed.

    ``mechanism`` holds the L candidate levels, ``seed`` is the root seed or one key per cell,
    ``options`` an Execution and ``**search`` goes to :func:`perfpriv.optimize.level_search`.
    Returns ``values, se`` of shape ``users.shape + (L,)``.
    """
    shape = tuple(users.shape)
    # a one-cell map is keyed by its coordinates too (as a cell of a larger map would be)
    cells = users if shape else users.take(np.zeros(1, int))
    keys = engine.cell_keys(seed, cells)
    count = math.prod(shape)
    # users without coordinates: every cell the root's numbers, as it would get alone
    flat = keyed.Key(*(np.broadcast_to(k, tuple(cells.shape)).reshape(count) for k in (keys.a, keys.b)))
    out = map_grid(_batch, {"cell": np.arange(count)}, seed=flat, options=options, mechanism=mechanism,
                   users=users, search=search)
    levels = out.shape[-1]
    return out[:, 0].reshape(shape + (levels,)), out[:, 1].reshape(shape + (levels,))
