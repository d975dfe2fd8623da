"""The (q, r) cells of a heatmap search: which to evaluate, and their layout.

Shared by the ε* and γ* searches: a search receives ``q`` and ``r`` as
arrays of one shape (e.g. a meshgrid), evaluates every *distinct* (q, r)
pair once -- batched, through :func:`perfpriv.sweep.map_grid`, each cell
keyed by its own coordinates -- and scatters the results back.
"""

from __future__ import annotations

import numpy as np

from ..behaviour import Behaviour, Memoryless
from .._validate import check_probability, check_same_shape

__all__ = ["check_cells", "unique_cells", "users_of_cells", "check_behaviour",
           "GAMMA_SEARCH_RANGE"]

#: Where a searched γ may lie: the mechanism's range (``perfpriv.gaussian.GAMMA_RANGE``, [1e-100, 1e100])
#: with a margin, since a search moves in log γ (exp(log(1e-100)) < 1e-100) and its surrogate spans
#: 0.05 beyond the bracket.
GAMMA_SEARCH_RANGE = (1e-99, 1e99)


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


def users_of_cells(behaviour, q, r, rule):
    """The users of a batch of cells: the paper's, or those of the callable ``behaviour(q, r)`` (checked).

    Parameters
    ----------
    behaviour : callable or None
        ``behaviour(q, r) -> Behaviour`` given arrays of one shape; ``None``:
        ``Memoryless(q=q, r=r, rule=rule)``.
    q, r : numpy.ndarray
        The cells' coordinates.
    rule : {"leak", "agnostic"}
        Growth rule of the paper's users.
    """
    if behaviour is None:
        return Memoryless(q=q, r=r, rule=rule)
    users = behaviour(q, r)
    if not isinstance(users, Behaviour):
        raise TypeError(f"behaviour must be a callable (q, r) -> perfpriv.behaviour.Behaviour; it returned "
                        f"{users!r:.60}")
    if tuple(users.shape) != np.shape(q):
        raise ValueError(f"behaviour(q, r) must give one cell per (q, r) pair (shape {np.shape(q)}); "
                         f"got a behaviour of cell shape {tuple(users.shape)}")
    return users


def check_behaviour(behaviour, rule):
    """A ``behaviour`` argument of a search: None or a callable, and not combined with ``rule``."""
    if behaviour is not None:
        if not callable(behaviour):
            raise TypeError(f"behaviour must be None or a callable (q, r) -> Behaviour; got {behaviour!r:.60}")
        if rule != "leak":
            raise ValueError("rule and behaviour are exclusive: the behaviour callable chooses its own rule "
                             f"(got rule={rule!r})")
