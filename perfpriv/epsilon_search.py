"""The privacy budget ε* that minimizes the final-horizon error (paper Figs. 2 and 7).

For a leaving rate ``q`` and a recruiting rate ``r``, a small ε adds noise to
every answer but keeps users (few leaks), a large ε gives clean answers from
a population that may be shrinking.  :func:`optimal_epsilon` finds, on a grid
of ε values, the one with the smallest mean (over trials) squared error
``(mu_hat_T - mu_T)^2`` at the final round ``T`` by simulation;
:func:`mean_field_optimal_epsilon` does the same with the mean-field error of
:func:`perfpriv.bernoulli.mean_field_error` (theory, which the paper does not
show).  Both accept scalar ``(q, r)`` or arrays of ``(q, r)`` values (for
example a meshgrid, for the maps of Figs. 2 and 7).

Defaults follow the paper's ε* maps (DESIGN.md, "Paper scale"): ``T = 200``,
``n0 = 400``, 10 trials, cap 20000, ``mu_t ~ Uniform(0.5, 1)``.

Seeding and parallelism: the ``(q, r)`` cells are evaluated through
:func:`perfpriv.sweep.sweep` (joblib; ``n_jobs=`` or an enclosing
``joblib.parallel_config``), and each cell gets its own generator, seeded by
:func:`perfpriv.sweep.cell_seed` from the root seed and the cell's
coordinates ``(q, r)``. A cell's result therefore does not depend on the
other cells of the grid, their order, ``n_jobs`` or the joblib backend
(bit-identical).  Within a cell one generator drives the whole (ε, trial)
block (vectorized draws; the ``mu_t`` path is shared by all ε -- common
random numbers -- which makes the comparison between ε values less noisy).
Consequently the numbers of a cell are equal in distribution, not number by
number, to those of :func:`perfpriv.bernoulli.simulate` with the same seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import check_probability, check_same_shape
from .sweep import sweep
from .bernoulli import (
    _BlockDraws,
    _check_epsilon,
    _check_model,
    _check_mu_law,
    _check_sizes,
    _mu_path,
    _root_seed_sequence,
    _run_core,
    beta_from_epsilon,
    mean_field_error,
)

__all__ = ["EpsilonOptimum", "optimal_epsilon", "mean_field_optimal_epsilon"]


@dataclass(frozen=True, eq=False)
class EpsilonOptimum:
    """Result of :func:`optimal_epsilon` / :func:`mean_field_optimal_epsilon`.

    Attributes
    ----------
    epsilon : float or numpy.ndarray
        ε* per ``(q, r)`` cell (shape of ``q``; a float for scalar input).
        Can be ``inf`` when ``inf`` is in the grid.
    errors : numpy.ndarray
        Objective per cell and ε, shape ``(*q.shape, len(epsilons))``: the mean
        final-round squared error over trials (or its mean-field value).
    epsilons : numpy.ndarray
        The ε grid searched, shape (len(epsilons),).
    stderr : numpy.ndarray
        Monte Carlo standard error of ``errors`` (same shape; 0 for the
        mean-field search, NaN when ``trials == 1``).
    """

    epsilon: object
    errors: np.ndarray
    epsilons: np.ndarray
    stderr: np.ndarray

    @property
    def index(self):
        """Index of ε* in :attr:`epsilons` (int or int array)."""
        idx = np.argmin(self.errors, axis=-1)
        return int(idx) if np.ndim(idx) == 0 else idx


def _check_grid(q, r, epsilons):
    qq = np.asarray(check_probability("q", q), dtype=float)
    rr = np.asarray(check_probability("r", r), dtype=float)
    if qq.shape != rr.shape:
        shape = check_same_shape(q=qq, r=rr)
        qq, rr = np.broadcast_to(qq, shape), np.broadcast_to(rr, shape)
    eps = np.asarray(_check_epsilon(epsilons, positive=True, name="epsilons"), dtype=float)
    if eps.ndim != 1 or eps.size == 0:
        raise ValueError(f"epsilons must be a non-empty 1-D array of values in (0, inf]; "
                         f"got shape {eps.shape}")
    return qq, rr, eps


def _pick(qq, eps, errors, stderr):
    idx = np.argmin(errors, axis=-1)
    best = eps[idx]
    if qq.ndim == 0:
        best = float(best)
    return EpsilonOptimum(epsilon=best, errors=errors, epsilons=eps, stderr=stderr)


def _sweep_seed(seed):
    """Root of a sweep: ``None``, a non-negative int or a SeedSequence, from anything default_rng accepts."""
    if seed is None or isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and seed >= 0:
        return int(seed)
    return _root_seed_sequence(seed)  # Generators, sequences of ints; raises a clear ValueError otherwise


def _sweep_qr(cell, qq, rr, *, seed, n_jobs, progress, description, **fixed):
    """Evaluate ``cell(q, r, seed=..., **fixed)`` on the (q, r) cells of two same-shape arrays.

    The cells go through :func:`perfpriv.sweep.sweep` on the product of the
    distinct q and r values, so each cell is seeded by
    :func:`perfpriv.sweep.cell_seed` from ``seed`` and its own ``(q, r)``.
    Product cells that were not asked for (when ``qq``, ``rr`` are not a
    meshgrid) are skipped: ``cell`` receives ``skip=True`` and must return
    quickly an array of the usual shape. Returns an array of shape
    ``qq.shape + cell_shape``.
    """
    qu, ru = np.unique(qq), np.unique(rr)
    iq, ir = np.searchsorted(qu, qq), np.searchsorted(ru, rr)
    wanted = np.zeros((qu.size, ru.size), dtype=bool)
    wanted[iq, ir] = True
    if wanted.all():
        res = sweep(cell, {"q": qu, "r": ru}, seed=seed, n_jobs=n_jobs, progress=progress,
                    description=description, **fixed)
    else:
        res = sweep(_skipping, {"q": qu, "r": ru}, seed=seed, n_jobs=n_jobs, progress=progress,
                    description=description,
                    cell=cell, wanted=frozenset(zip(qu[iq].ravel().tolist(), ru[ir].ravel().tolist())),
                    **fixed)
    return res.values[iq, ir]


def _skipping(q, r, *, seed, cell, wanted, **fixed):
    return cell(q, r, seed=seed, skip=(q, r) not in wanted, **fixed)


def _epsilon_cell(q, r, *, seed, beta, T, n0, trials, model, cap, mu_law, clip_estimate, skip=False):
    """Mean final-round squared error and its standard error for every β, one (q, r) cell: shape (2, E)."""
    if skip:
        return np.full((2, beta.size), np.nan)
    gen = np.random.default_rng(seed)
    path = _mu_path(gen, mu_law, trials, T)
    est, _ = _run_core(beta, q, r, T=T, n0=n0, trials=trials, model=model, cap=cap,
                       mu_path=path, draws=_BlockDraws(gen), clip_estimate=clip_estimate, final_only=True)
    sq = (est - path[:, -1]) ** 2  # (E, trials)
    stderr = sq.std(axis=-1, ddof=1) / np.sqrt(trials) if trials > 1 else np.full(beta.size, np.nan)
    return np.stack([sq.mean(axis=-1), stderr])


def optimal_epsilon(q, r, epsilons, *, T=200, n0=400, trials=10, model="leak", cap=20000,
                    mu=(0.5, 1.0), seed=None, clip_estimate=False, n_jobs=None, progress="auto"):
    """ε in a grid minimizing the mean final-round squared error, by simulation.

    For each ``(q, r)`` cell, simulates the model of
    :mod:`perfpriv.bernoulli` for every ε of the grid (``trials`` runs each)
    and returns the ε with the smallest mean over trials of
    ``(mu_hat_T - mu_T)^2`` (ties: the first in the grid).

    Parameters
    ----------
    q, r : float or array_like
        Leaving and recruiting probabilities in [0, 1]; arrays of the same
        shape (e.g. a meshgrid) give one ε* per cell.
    epsilons : 1-D array_like
        Candidate ε values in (0, inf]; ``np.inf`` (no privacy) may be included.
    T : int
        Horizon (>= 1); the error is that of round T (computed from ``N_{T-1}``).
    n0 : int
        Initial population (>= 1).
    trials : int
        Runs per (cell, ε) (>= 1).
    model : {"leak", "agnostic"}
        Growth rule (Fig. 2 / Fig. 7).
    cap : int
        Population cap (>= n0); the floor is 1.
    mu : float or (float, float)
        Law of ``mu_t`` (default Uniform(0.5, 1) as in the paper's maps).
    seed : None, int, SeedSequence or Generator
        Root seed; each cell is seeded from its own ``(q, r)`` with
        :func:`perfpriv.sweep.cell_seed` (module docstring).
    clip_estimate : bool
        Clip ``mu_hat`` to [0, 1] as the authors' code does.
    n_jobs : int, optional
        joblib workers for the (q, r) cells (``-1``: all cores; ``None``:
        joblib's default or an enclosing ``joblib.parallel_config``). The
        result does not depend on it.
    progress : {"auto", True, False}
        Progress bar of the sweep (``"auto"``: only on an interactive terminal).

    Returns
    -------
    EpsilonOptimum
        ``epsilon`` has the shape of ``q`` (float for scalars); ``errors`` and
        ``stderr`` have shape ``(*q.shape, len(epsilons))``.

    References
    ----------
    Paper §3, Fig. 2 (leak model) and appendix B, Fig. 7 (agnostic model).

    Examples
    --------
    >>> res = optimal_epsilon(0.3, 0.6, [0.1, 0.5, np.inf], n0=100, seed=0)
    >>> res.epsilon
    0.5
    >>> res.errors.shape
    (3,)
    >>> grid = optimal_epsilon([[0.3, 0.6]], [[0.6, 0.3]], [0.1, 0.5, np.inf], n0=100, seed=0)
    >>> grid.epsilon.shape, grid.errors.shape
    ((1, 2), (1, 2, 3))
    """
    qq, rr, eps = _check_grid(q, r, epsilons)
    T, n0, cap, trials = _check_sizes(T, n0, cap, trials)
    model = _check_model(model)
    mu_law = _check_mu_law(mu)
    beta = np.asarray(beta_from_epsilon(eps), dtype=float)
    out = _sweep_qr(_epsilon_cell, qq, rr, seed=_sweep_seed(seed), n_jobs=n_jobs, progress=progress,
                    description=f"epsilon* ({model})", beta=beta, T=T, n0=n0, trials=trials, model=model,
                    cap=cap, mu_law=mu_law, clip_estimate=bool(clip_estimate))
    errors, stderr = out[..., 0, :], out[..., 1, :]
    return _pick(qq, eps, errors, stderr)


def mean_field_optimal_epsilon(q, r, epsilons, *, T=200, n0=400, model="leak", cap=20000,
                               mu=(0.5, 1.0)):
    """ε in a grid minimizing the mean-field final-round error (theory).

    The objective is :func:`perfpriv.bernoulli.mean_field_error` at round T:
    ``E_mu[nu (1 - nu)] / (4 beta^2 N_{T-1})`` with the deterministic
    population ``N_t = clip(N_{t-1} C(beta), 1, cap)``.  It ignores the
    randomness of the population (Jensen: ``E[1/N] >= 1/E[N]``), so it is
    optimistic where the population is small.

    Parameters
    ----------
    q, r, epsilons, T, n0, model, cap, mu
        As in :func:`optimal_epsilon`.

    Returns
    -------
    EpsilonOptimum
        With ``stderr`` equal to 0.

    References
    ----------
    Paper §3, eq. 1 and Lemma 2; Figs. 2 and 7 for the simulated counterpart.

    Examples
    --------
    >>> res = mean_field_optimal_epsilon(0.3, 0.6, [0.1, 0.5, np.inf], n0=100)
    >>> res.epsilon
    0.5
    >>> res.errors.round(5).tolist()
    [0.005, 0.0002, 0.16667]
    """
    qq, rr, eps = _check_grid(q, r, epsilons)
    errors = mean_field_error(eps, qq[..., None], rr[..., None], T=T, n0=n0, model=model,
                              cap=cap, mu=mu)[..., -1]
    return _pick(qq, eps, errors, np.zeros_like(errors))
