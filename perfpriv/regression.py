r"""Private ridge regression with users who leave: a learning task beyond the mean.

Each round, the N current users hold records :math:`(x_i, y_i)` (:func:`sample_data`): features
:math:`x \sim \mathcal{N}(0, I_d)` clipped to the ℓ2 ball of radius :math:`B_x`, labels
:math:`y = x^\top θ + ε` with :math:`ε \sim \mathcal{N}(0, σ_ε^{2})`, computed from the clipped features (as
in the authors' code, so that the model stays linear) and clipped to :math:`[-B_y, B_y]`, and θ a fresh
direction on the unit sphere every round (or a fixed vector). The platform fits ridge regression with
per-record regularization λ,

    :math:`\hat β = \arg\min_β (1/n) Σ_i (y_i - x_i^\top β)^{2} + λ\|β\|^{2} = (X^\top X + nλI)^{-1} X^\top y`,

and releases :math:`o = \hat β + η` with :math:`η \sim \mathcal{N}(0, σ_n^{2} I)` (:func:`release`). Its error
is the excess risk :math:`\|o - θ\|^{2}` (the excess test mean-squared error for Σ = I).

The noise form
--------------
``noise="calibrated"`` (the book's): :math:`σ_n = γ Δ(n)`, Δ(n) the ℓ2-sensitivity of β̂ over add/remove-one
neighbours (:func:`ridge_sensitivity`). With n public, under replace-one adjacency, the round is ρ-zCDP with
:math:`ρ = 2/γ^{2}`; under add/remove adjacency the two release laws have unequal variances and no ρ holds
(:func:`achieved_rho`, :func:`release_renyi_divergence`). ``noise="sqrt_n"`` (the authors' published code):
:math:`σ_n = γ/\sqrt n`, the mean-estimation form of the paper's eq. 6 without sensitivity calibration, whose
privacy is infinite when labels are not clipped (:func:`published_privacy`).

Membership
----------
A user's record leaks when the log-likelihood ratio Λ of the release with and without it exceeds τ
(:func:`membership_llr`, from the leave-one-out shifts of :func:`leave_one_out`): ``statistic="paper"``
compares both at the same variance (the form of the paper's Lemma 6), ``"exact"`` at the noise of n − 1
records. This is the mean-estimation statistic of :mod:`perfpriv.leakage` with the shift δ in the role of
:math:`(\bar z - μ_{\bar z})/(n - 1)` (:func:`leak_probability`).

Shared parameters
-----------------
They mean the same in every function (numbers or arrays broadcast together; a float comes back for scalar
input); a function's own entry says only what differs.

``X``, ``y``
    A dataset: features, shape (n, d) (clip them first for a sensitivity guarantee), and labels, shape (n,).
``n``, ``d``
    Number of records (the population) n >= 1 and dimension d >= 1.
``lam``, ``x_bound``, ``y_bound``
    Per-record regularization λ > 0 and the clipping bounds :math:`B_x > 0` of the features' ℓ2 norm and
    :math:`B_y > 0` of the labels (``y_bound=inf``: labels not clipped, no sensitivity bound: ``inf``).
``gamma``, ``noise``
    Noise multiplier γ > 0 and the noise form, ``"calibrated"`` or ``"sqrt_n"`` (above).
``noise_sd``
    Label noise :math:`σ_ε \ge 0`.
``seed``, ``rng``
    None, an int, a SeedSequence or a numpy.random.Generator.

:class:`RidgeRelease` is the task as a mechanism of :mod:`perfpriv.engine`.
"""

from __future__ import annotations

import collections
import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from scipy import optimize, special

from . import engine, keyed, leakage
from ._records import clip
from ._learning import (OneRoundCheck, TabulatedMechanism, Tabulation,
                        key_normals, one_round_check, round_groups,
                        stable)
from ._stats import euclidean_norms, log_normal_density
from ._validate import (check_allocation, check_array_size, check_choice, check_flag, check_instance, check_int, check_int_array,
                        check_real, check_rng)

__all__ = [
    "STATISTICS",
    "sample_data",
    "ridge_fit",
    "leave_one_out",
    "ridge_sensitivity",
    "removal_sensitivity",
    "WorstCase",
    "worst_case_dataset",
    "SensitivityProfile",
    "sensitivity_profile",
    "gamma_from_rho",
    "rho_from_gamma",
    "noise_std",
    "achieved_rho",
    "release_renyi_divergence",
    "release",
    "membership_llr",
    "leak_probability",
    "ols_excess_risk",
    "RidgeData",
    "Tabulation",
    "RidgeRelease",
    "PublishedPrivacy",
    "published_privacy",
    "OneRoundCheck",
    "one_round_check",
]

STATISTICS = leakage.STATISTICS
#: ``"calibrated"``: :math:`σ_n = γ Δ(n)` (ρ = 2/γ²-zCDP, replace-one); ``"sqrt_n"``: :math:`σ_n = γ/\sqrt n` (the authors').
NOISE_FORMS = ("calibrated", "sqrt_n")
#: ``"excess"``: :math:`\|o - θ\|^{2}`; ``"test_mse"``: mean squared error on a fresh test set (the authors').
ERRORS = ("excess", "test_mse")
#: How the leave-one-out fit is regularized: penalty (n−1)λ, or nλ kept (:func:`leave_one_out`).
LOO_RULES = ("refit", "keep_penalty")

#: The data model and options of each convention (what ``None`` arguments become).
PRESETS = {
    "paper": dict(x_bound=5.0, y_bound=5.0, lam=0.05, noise="calibrated", statistic="paper",
                  error="excess", loo="refit"),
    "authors": dict(x_bound=10.0, y_bound=math.inf, lam=1e-5, noise="sqrt_n", statistic="exact",
                    error="test_mse", loo="keep_penalty"),
}

#: Size of the authors' fresh test set, and their per-round charge after a stop at N <= d.
AUTHORS_TEST_SIZE = 2000
AUTHORS_PENALTY = 1000.0


# ------------------------------------------------------------------ checks
def _check_xy(X, y):
    """A dataset (n, d) and its labels, entries within ±PATH_BOUND (1e300 overflowed inside the fit)."""
    X = np.asarray(check_real("X", X, low=-PATH_BOUND, high=PATH_BOUND), dtype=float)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"X must be an (n, d) array with n >= 1 records and d >= 1; got shape {X.shape}")
    y = np.asarray(check_real("y", y, low=-PATH_BOUND, high=PATH_BOUND), dtype=float).reshape(-1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must hold one label per row of X ({X.shape[0]}); got {y.shape[0]}")
    return X, y


def _lam(lam):
    return check_real("lam", lam, low=0, low_open=True, scalar=True)


def _bounds(x_bound, y_bound, *, finite=True, high=None):
    x_bound = check_real("x_bound", x_bound, low=0, low_open=True, high=high, scalar=True)
    y_bound = check_real("y_bound", y_bound, low=0, low_open=True, high=high, scalar=True, allow_inf=not finite)
    return x_bound, y_bound


#: The range of the bounds and noise multipliers of the simulated paths (draws, fits, releases; the closed
#: forms take every double): every squared norm and noise scale stays below ~1e200 n, inside the doubles.
PATH_BOUND = 1e100
PATH_GAMMA = (1e-100, 1e100)
#: Most grid points of :func:`worst_case_dataset`'s search in t (each runs a 200-point search and a polish).
WORST_CASE_GRID = 10**5


# ------------------------------------------------------------- data model
def _make_data(G, theta, x_bound, y_bound, noise_sd):
    """Records from standard normals ``G`` (n, d+1): clipped features, labels from them."""
    d = theta.shape[-1]
    X = clip(G[:, :d], x_bound)
    y = X @ theta + noise_sd * G[:, d]
    if math.isfinite(y_bound):
        np.clip(y, -y_bound, y_bound, out=y)
    return X, y


def _unit(v):
    return v / np.linalg.norm(v)


def sample_data(n, *, d, x_bound, y_bound, noise_sd=1.0, theta=None, seed=None):
    r"""Draw one round's dataset of the regression model (module docstring).

    Parameters
    ----------
    n, d, x_bound, y_bound, noise_sd, seed
        As in the module docstring.
    theta : array_like, shape (d,), optional
        True parameter θ; by default a uniform direction on the unit sphere.

    Returns
    -------
    X, y, theta : numpy.ndarray, shapes (n, d), (n,) and (d,)
        Clipped features, labels :math:`y = \operatorname{clip}(Xθ + ε, B_y)` and θ.

    Examples
    --------
    >>> X, y, theta = sample_data(50, d=3, x_bound=2.0, y_bound=3.0, seed=0)
    >>> X.shape, bool(np.all(np.linalg.norm(X, axis=1) <= 2.0 + 1e-12)), bool(np.all(np.abs(y) <= 3.0))
    ((50, 3), True, True)
    """
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    x_bound, y_bound = _bounds(x_bound, y_bound, finite=False)
    noise_sd = check_real("noise_sd", noise_sd, low=0, scalar=True)
    check_array_size("one dataset (n x (d + 1) normals)", n=n, d=d + 1)
    rng = check_rng(seed)
    if theta is None:
        theta = _unit(rng.standard_normal(d))
    else:
        theta = np.asarray(check_real("theta", theta), dtype=float).reshape(-1)
        if theta.shape != (d,):
            raise ValueError(f"theta must be a vector of length d={d}; got shape {theta.shape}")
    G = rng.standard_normal((n, d + 1))
    X, y = _make_data(G, theta, x_bound, y_bound, noise_sd)
    return X, y, theta


# ------------------------------------------------------------------- fits
def _fit(X, y, lam):
    """Ridge fits of a dataset (n, d) or a stack of datasets (k, n, d)."""
    n, d = X.shape[-2:]
    A = np.swapaxes(X, -1, -2) @ X + n * lam * np.eye(d)
    return np.linalg.solve(A, (np.swapaxes(X, -1, -2) @ y[..., None]))[..., 0]


def ridge_fit(X, y, *, lam):
    r"""Ridge estimate :math:`\hat β = (X^\top X + nλI)^{-1}X^\top y`, the minimizer of :math:`(1/n)Σ_i(y_i - x_i^\top β)^{2} + λ\|β\|^{2}`.

    Parameters
    ----------
    X, y, lam
        As in the module docstring.

    Returns
    -------
    numpy.ndarray, shape (d,)

    Examples
    --------
    >>> ridge_fit([[1.0, 0.0], [0.0, 2.0]], [1.0, 2.0], lam=0.5).round(4).tolist()
    [0.5, 0.8]
    """
    X, y = _check_xy(X, y)
    return _fit(X, y, _lam(lam))


def _solve_rows(A, B):
    r"""Rows of B (..., n, d) mapped by :math:`A^{-1}` (..., d, d): :math:`(A^{-1} B^\top)^\top`."""
    return np.swapaxes(np.linalg.solve(A, np.swapaxes(B, -1, -2)), -1, -2)


#: Condition number of XᵀX + nλI above which :func:`leave_one_out` refits instead of using the deletion formula.
_ILL_CONDITIONED = 1e6


def _loo(X, y, lam, keep_penalty):
    r"""Shifts :math:`δ_i = \hat β - \hat β_{-i}` of every record, and :math:`\hat β` (see :func:`leave_one_out`).

    ``X`` is one dataset (n, d) or a stack (k, n, d); all solves are batched.
    """
    n, d = X.shape[-2:]
    eye = np.eye(d)
    Xt = np.swapaxes(X, -1, -2)
    A = Xt @ X + n * lam * eye
    if not np.all(np.linalg.cond(A) <= _ILL_CONDITIONED):
        # the normal equations lose more than half the digits (one record dwarfs the others and the penalty):
        # every shift from two least-squares fits (the deletion formula was 17% off at 1e8)
        return _loo_by_refits(X, y, lam, keep_penalty)
    beta = np.linalg.solve(A, (Xt @ y[..., None]))[..., 0]
    if n == 1:
        # β̂₋₁ is the fit of the empty dataset, 0 (whatever its penalty): δ = β̂
        return beta[..., None, :].copy(), beta
    resid = y - np.einsum("...ij,...j->...i", X, beta)
    with np.errstate(divide="ignore", invalid="ignore"):   # h_i = 1 only for records refitted below
        shifts, h = _deletion_shifts(X, y, A, beta, resid, lam, keep_penalty)
    return _refit_high_leverage(shifts, h, X, y, lam, keep_penalty), beta


def _deletion_shifts(X, y, A, beta, resid, lam, keep_penalty):
    """The deletion (Sherman–Morrison) shifts of :func:`leave_one_out` and the leverages they divide by."""
    eye = np.eye(X.shape[-1])
    if keep_penalty:
        U = _solve_rows(A, X)                               # rows: A⁻¹ x_i
        h = np.einsum("...ij,...ij->...i", U, X)
        shifts = U * (resid / (1.0 - h))[..., None]
    else:
        M = A - lam * eye                                   # XᵀX + (n−1)λI; A₋ᵢ = M − x_i x_iᵀ
        U = _solve_rows(M, X)                               # rows: M⁻¹ x_i
        h = np.einsum("...ij,...ij->...i", U, X)
        w = np.linalg.solve(M, (lam * beta)[..., None])[..., 0]  # M⁻¹ λβ̂
        coef = (resid - np.einsum("...ij,...j->...i", X, w)) / (1.0 - h)
        shifts = U * coef[..., None] - w[..., None, :]
    return shifts, h


def _ridge_lstsq(X, y, penalty):
    r"""The ridge fit :math:`\arg\min_β \|Xβ - y\|^{2} + p\|β\|^{2}` (p = ``penalty`` > 0) by least squares on the augmented rows :math:`[X; \sqrt p\, I]`.

    One dataset (m, d) or a stack (..., m, d). QR, not the normal equations: its error grows with the
    condition number of the rows, not with its square, so a dominating record is fitted accurately.
    """
    m, d = X.shape[-2:]
    rows = np.concatenate([X, np.broadcast_to(math.sqrt(penalty) * np.eye(d), X.shape[:-2] + (d, d))], axis=-2)
    Q, R = np.linalg.qr(rows)
    qty = np.einsum("...mi,...m->...i", Q[..., :m, :], y)      # the penalty rows' right-hand side is 0
    return np.linalg.solve(R, qty[..., None])[..., 0]


#: Values of the datasets held at once by :func:`_refit_shifts` (each refit copies its dataset).
_REFIT_VALUES = 2_000_000


def _refit_shifts(X, y, sets, records, lam, keep_penalty, full):
    r""":math:`δ_i` of record ``records[k]`` of dataset ``sets[k]`` by least-squares refits, in batches.

    ``X`` (K, n, d), ``y`` (K, n) and the fits ``full`` (K, d); penalties as in :func:`leave_one_out`.
    """
    K, n, d = X.shape
    out = np.empty((len(sets), d))
    if n == 1:
        out[:] = full[sets]
        return out
    penalty = (n if keep_penalty else n - 1) * lam
    step = max(1, _REFIT_VALUES // (n * d))
    for start in range(0, len(sets), step):
        f, i = sets[start:start + step], records[start:start + step]
        keep = np.arange(n) != i[:, None]                               # (batch, n): every row but record i
        others = X[f][keep].reshape(len(f), n - 1, d)
        out[start:start + step] = full[f] - _ridge_lstsq(others, y[f][keep].reshape(len(f), n - 1), penalty)
    return out


def _loo_by_refits(X, y, lam, keep_penalty):
    """Every shift of :func:`_loo` as the difference of two least-squares fits (:func:`_ridge_lstsq`), and β̂."""
    n, d = X.shape[-2:]
    Xf, yf = X.reshape(-1, n, d), y.reshape(-1, n)
    full = _ridge_lstsq(Xf, yf, n * lam)
    sets, records = np.repeat(np.arange(len(Xf)), n), np.tile(np.arange(n), len(Xf))
    shifts = _refit_shifts(Xf, yf, sets, records, lam, keep_penalty, full)
    return shifts.reshape(X.shape), full.reshape(X.shape[:-2] + (d,))


def _refit_high_leverage(shifts, h, X, y, lam, keep_penalty):
    r"""Shifts of records of leverage :math:`h_i > 1/2` recomputed as the difference of two least-squares fits.

    The deletion formula divides by :math:`1 - h_i`, which cancels for a record that dominates the others
    (:math:`h_i` → 1: with one row 1e8 times the others it returned ±inf). Such records are rare at large n
    (:math:`Σ h_i \le d`, so fewer than 2d of them) and most records at small n.
    """
    n, d = X.shape[-2:]
    sets, records = np.nonzero(h.reshape(-1, n) > 0.5)
    if not sets.size:
        return shifts
    Xf, yf = X.reshape(-1, n, d), y.reshape(-1, n)
    concerned = np.unique(sets)
    full = np.zeros((len(Xf), d))
    full[concerned] = _ridge_lstsq(Xf[concerned], yf[concerned], n * lam)
    out = shifts.reshape(-1, n, d).copy()
    out[sets, records] = _refit_shifts(Xf, yf, sets, records, lam, keep_penalty, full)
    return out.reshape(shifts.shape)


def leave_one_out(X, y, *, lam, keep_penalty=False):
    r"""Leave-one-out shifts :math:`δ_i = \hat β - \hat β_{-i}` of every record at once (Sherman–Morrison).

    :math:`\hat β_{-i}` is the ridge fit of the n − 1 other records with the same rule (penalty (n − 1)λ).
    With :math:`M = X^\top X + (n - 1)λI`, :math:`u_i = M^{-1}x_i`, :math:`h_i = x_i^\top u_i`,
    :math:`w = λM^{-1}\hat β` and the residuals :math:`e_i = y_i - x_i^\top \hat β`, two d×d solves give

        :math:`δ_i = u_i (e_i - x_i^\top w)/(1 - h_i) - w`.

    Parameters
    ----------
    X, y, lam
        As in the module docstring.
    keep_penalty : bool
        Keep the total penalty nλ (the authors' code): the textbook deletion formula
        :math:`δ_i = A^{-1}x_i e_i/(1 - x_i^\top A^{-1}x_i)`, :math:`A = X^\top X + nλI`.

    Returns
    -------
    numpy.ndarray, shape (n, d)
        Row i is β̂ − β̂₋ᵢ (for n = 1, β̂ itself: the empty fit is 0).

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> y = [1.0, 0.0, 2.0]
    >>> full = ridge_fit(X, y, lam=0.1)
    >>> refit = ridge_fit([X[0], X[1]], y[:2], lam=0.1)
    >>> bool(np.allclose(leave_one_out(X, y, lam=0.1)[2], full - refit))
    True
    """
    X, y = _check_xy(X, y)
    return _loo(X, y, _lam(lam), check_flag("keep_penalty", keep_penalty))[0]


# ------------------------------------------------------------- sensitivity
def _psi(n, lam, x_bound):
    r""":math:`\sup \|A_n^{-1}x\|` over :math:`\|x\| \le B_x` and :math:`A_n = C + xx^\top`, :math:`C \succeq nλI` (step 4 of the proof)."""
    nl = n * lam
    return np.where(x_bound ** 2 <= nl, x_bound / (nl + x_bound ** 2), 0.5 / np.sqrt(nl))


def _log_psi(log_nl, log_x):
    r""":math:`\log ψ_n` of :func:`_psi` from log(nλ) and :math:`\log B_x` (no overflow)."""
    return np.where(2.0 * log_x <= log_nl, log_x - np.logaddexp(log_nl, 2.0 * log_x), math.log(0.5) - 0.5 * log_nl)


def _log_removal(n, lam, x_bound, y_bound):
    r""":math:`\log Δ^{-}(n)`, term by term as :func:`_removal`: finite for every valid input (issue 16)."""
    n = np.asarray(n, float)
    ln, ll, lx, ly = np.log(n), math.log(lam), math.log(x_bound), math.log(y_bound)
    lpsi = _log_psi(ln + ll, lx)
    lfit = ly + _log_psi(ll, lx)
    t1 = np.minimum(0.5 * (ln - np.log(np.maximum(n - 1.0, 1.0))) + ly + 2.0 * lx - 0.5 * ll
                    - np.logaddexp(ln + ll, 2.0 * lx), lx + lfit + lpsi)
    return np.where(n > 1, np.logaddexp(np.logaddexp(ly + lpsi, t1), lfit - ln), ly + lpsi)


def _removal(n, lam, x_bound, y_bound):
    """:math:`Δ^{-}(n)`, exactly the formula of :func:`_direct_removal` where it is representable (:func:`stable`)."""
    return stable(lambda: _direct_removal(n, lam, x_bound, y_bound), lambda: _log_removal(n, lam, x_bound, y_bound))


def _direct_removal(n, lam, x_bound, y_bound):
    r""":math:`Δ^{-}(n)`: the bound of the theorem on :math:`\|\hat β(D) - \hat β(D_-)\|`, :math:`|D| = n`, :math:`|D_-| = n - 1` (n >= 1)."""
    n = np.asarray(n, float)
    psi = _psi(n, lam, x_bound)
    fit = y_bound * float(_psi(1.0, lam, x_bound))        # sup ‖β̂₋‖ = B_y ψ_1 (step 2 of the proof)
    m = np.maximum(n - 1.0, 1.0)
    root = math.sqrt(lam)
    t1 = np.minimum(np.sqrt(n / m) * y_bound * x_bound ** 2 / (root * (n * lam + x_bound ** 2)),
                    x_bound * fit * psi)
    return np.where(n > 1, y_bound * psi + t1 + fit / n, y_bound * psi)


def removal_sensitivity(n, *, lam, x_bound, y_bound):
    r"""Bound on :math:`\|\hat β(D) - \hat β(D \setminus \{z\})\|` for every dataset D of n records (the chapter's theorem).

    With :math:`\|x\| \le B_x`, :math:`|y| \le B_y`, :math:`m = n - 1`, :math:`ψ_n = B_x/(nλ + B_x^{2})` when
    :math:`B_x^{2} \le nλ` and :math:`1/(2\sqrt{nλ})` otherwise, and :math:`b = B_y ψ_1` (a bound on :math:`\|\hat β\|` of
    any dataset),

        :math:`Δ^{-}(n) = B_y ψ_n + \min\bigl(\sqrt{n/m}\, B_y B_x^{2}/(\sqrt λ (nλ + B_x^{2})),\ B_x b ψ_n\bigr) + b/n`,

    and :math:`Δ^{-}(1) = B_y ψ_1` (removing the only record leaves the empty fit 0). Proof: chapter 09.

    Parameters
    ----------
    n, lam, x_bound, y_bound
        As in the module docstring; n is the size of the larger dataset.

    Examples
    --------
    >>> round(float(removal_sensitivity(1000, lam=0.05, x_bound=5.0, y_bound=5.0)), 4)
    4.0713
    """
    n = check_real("n", n, low=1)
    lam = _lam(lam)
    x_bound, y_bound = _bounds(x_bound, y_bound, finite=False)
    if math.isinf(y_bound):
        out = np.full(np.shape(n), np.inf)
    else:
        out = _removal(n, lam, x_bound, y_bound)
    return float(out) if np.ndim(out) == 0 else out


def _log_sensitivity(n, lam, x_bound, y_bound):
    """log Δ(n) of :func:`_sensitivity` (finite y_bound)."""
    n = np.asarray(n, float)
    return np.maximum(_log_removal(n, lam, x_bound, y_bound), _log_removal(n + 1.0, lam, x_bound, y_bound))


def _sensitivity(n, lam, x_bound, y_bound):
    n = np.asarray(n, float)
    if math.isinf(y_bound):
        return np.full(n.shape, np.inf)
    return np.maximum(_removal(n, lam, x_bound, y_bound), _removal(n + 1.0, lam, x_bound, y_bound))


def ridge_sensitivity(n, *, lam, x_bound, y_bound):
    r"""ℓ2-sensitivity Δ(n) of the ridge estimate of n records under add/remove-one neighbours.

    A dataset of n records has neighbours of n − 1 records (one removed) and of n + 1 (one added), so
    :math:`Δ(n) = \max(Δ^{-}(n), Δ^{-}(n + 1))` with the removal bound of :func:`removal_sensitivity`. For
    n >= 2 this is :math:`Δ^{-}(n)` (:math:`Δ^{-}` decreases from n = 2 on); for n = 1 adding a record can
    move the fit more than removing it. Δ(n) is non-increasing in n, so the noise :math:`σ_n = γΔ(n)` of the
    calibrated release never grows with the population.

    Parameters
    ----------
    n, lam, x_bound, y_bound
        As in the module docstring.

    References
    ----------
    Chapter 09's sensitivity theorem; Chaudhuri, Monteleoni and Sarwate
    (2011) for output perturbation of regularized ERM.

    Examples
    --------
    >>> round(float(ridge_sensitivity(1000, lam=0.05, x_bound=5.0, y_bound=5.0)), 4)
    4.0713
    >>> ridge_sensitivity(1000, lam=1e-5, x_bound=10.0, y_bound=np.inf)
    inf
    """
    n = check_real("n", n, low=1)
    lam = _lam(lam)
    x_bound, y_bound = _bounds(x_bound, y_bound, finite=False)
    out = _sensitivity(n, lam, x_bound, y_bound)
    return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True, eq=False)
class WorstCase:
    """A dataset whose first record moves the ridge fit the most within a search family.

    Attributes
    ----------
    X, y : numpy.ndarray, shapes (n, 1) and (n,)
        The dataset; record 0 is the one removed.
    shift : float
        :math:`\\|\\hat β(D) - \\hat β(D_-)\\|`, :math:`D_-` = D without record 0 (recomputed from the two fits).
    bound : float
        :func:`removal_sensitivity` at n.
    n, lam, x_bound, y_bound
        Provenance.
    """

    X: np.ndarray
    y: np.ndarray
    shift: float
    bound: float
    n: int
    lam: float
    x_bound: float
    y_bound: float

    def __repr__(self):
        return f"WorstCase(n={self.n}, shift={self.shift:.4g}, bound={self.bound:.4g}, ratio={self.ratio:.3f})"

    @property
    def ratio(self) -> float:
        """shift / bound: how close the bound is to this dataset (<= 1)."""
        return self.shift / self.bound


def _family_shift(log_a, t, n, lam, y_bound):
    """Shift of the one-direction family: n − 1 records :math:`(a, B_y)`, removed record :math:`(t, -B_y)`."""
    m = n - 1
    a = math.exp(log_a)
    beta = a * y_bound / (a * a + lam)                       # fit of the n − 1 others
    A = m * a * a + t * t + n * lam
    return abs(((-y_bound - t * beta) * t - lam * beta) / A)


def worst_case_dataset(n, *, lam, x_bound, y_bound, grid=60):
    r"""An adversarial dataset for the removal bound: the best of a one-direction family.

    Searches the one-dimensional datasets whose n − 1 kept records are :math:`(a, B_y)` and whose removed
    record is :math:`(t, -B_y), 0 < a, t \le B_x` (a log grid in a, a grid in t, then a bounded 1-D polish):
    an unconstrained search over all coordinates of small datasets lands on this family (the tests check
    it). The result is a lower bound on the true sensitivity, to compare with :func:`removal_sensitivity`.

    Parameters
    ----------
    n, lam, x_bound, y_bound
        As in the module docstring, with n >= 2 and :math:`B_x, B_y \le 1e100` (:data:`PATH_BOUND`).
    grid : int
        Grid points in t (and 200 in log a), 2 <= grid <= 10**5 (:data:`WORST_CASE_GRID`).

    Returns
    -------
    WorstCase

    Examples
    --------
    >>> w = worst_case_dataset(1000, lam=0.05, x_bound=5.0, y_bound=5.0)
    >>> 0.5 < w.ratio <= 1.0
    True
    """
    n = check_int("n", n, low=2)
    lam = _lam(lam)
    x_bound, y_bound = _bounds(x_bound, y_bound, high=PATH_BOUND)
    grid = check_int("grid", grid, low=2, high=WORST_CASE_GRID)
    check_allocation("the worst dataset (n records)", n, name="n")
    # log a from 1e-6 √λ (six decades below the best a of a lone direction, √λ) to log B_x, and at
    # least six decades below B_x when B_x is tiny or λ huge (the range must not be empty)
    hi = math.log(x_bound)
    lo = min(math.log(1e-6 * math.sqrt(lam)), hi - math.log(1e6))
    best = (-1.0, 0.0, 0.0)
    for t in np.linspace(0.0, x_bound, grid + 1)[1:]:
        logs = np.linspace(lo, hi, 200)
        vals = [_family_shift(g, t, n, lam, y_bound) for g in logs]
        g0 = float(logs[int(np.argmax(vals))])
        res = optimize.minimize_scalar(lambda g: -_family_shift(g, t, n, lam, y_bound),
                                       bounds=(max(lo, g0 - 0.2), min(hi, g0 + 0.2)), method="bounded")
        for g, v in ((g0, max(vals)), (float(res.x), -float(res.fun))):
            if v > best[0]:
                best = (v, g, t)
    a, t = min(math.exp(best[1]), x_bound), best[2]      # exp(log B_x) may exceed B_x by an ulp
    X = np.full((n, 1), a)
    X[0, 0] = t
    y = np.full(n, y_bound)
    y[0] = -y_bound
    shift = float(euclidean_norms(_fit(X, y, lam) - _fit(X[1:], y[1:], lam)))
    return WorstCase(X=X, y=y, shift=shift, bound=float(_removal(n, lam, x_bound, y_bound)), n=n, lam=lam,
                     x_bound=x_bound, y_bound=y_bound)


@dataclass(frozen=True, eq=False)
class SensitivityProfile:
    r"""The removal bound, the worst dataset found and the shifts of typical data, against n.

    Attributes
    ----------
    n, bound, worst : numpy.ndarray
        Sizes, :func:`removal_sensitivity` and the :func:`worst_case_dataset` shifts.
    median, q99, maximum : numpy.ndarray
        Quantiles of :math:`\|δ_i\|` over the records of Gaussian datasets of the model.
    d, lam, x_bound, y_bound, noise_sd, records, seed
        Provenance.
    """

    n: np.ndarray
    bound: np.ndarray
    worst: np.ndarray
    median: np.ndarray
    q99: np.ndarray
    maximum: np.ndarray
    d: int
    lam: float
    x_bound: float
    y_bound: float
    noise_sd: float
    records: int
    seed: Any

    def __repr__(self):
        return (f"SensitivityProfile(n={self.n.tolist()}, d={self.d}, lam={self.lam:g}, "
                f"median/bound={np.round(self.median / self.bound, 5).tolist()})")


def sensitivity_profile(ns, *, d=12, lam, x_bound, y_bound, noise_sd=1.0, records=4000, seed=0):
    r"""How the worst case compares with typical records: bound, adversarial and typical shifts.

    Parameters
    ----------
    ns : 1-D array_like of int
        Dataset sizes (>= 2).
    d, lam, x_bound, y_bound, noise_sd, seed
        As in the module docstring; :math:`B_x, B_y \le 1e100` (:data:`PATH_BOUND`).
    records : int
        Records of typical data per size (whole datasets, at least one); at most ~5e8 (their
        norms fill the 4.3 GB one call may allocate).

    Returns
    -------
    SensitivityProfile

    Examples
    --------
    >>> p = sensitivity_profile([50, 500], d=3, lam=0.05, x_bound=5.0, y_bound=5.0, records=500, seed=0)
    >>> bool(np.all(p.maximum <= p.bound)), bool(np.all(p.worst <= p.bound))
    (True, True)
    """
    ns = np.atleast_1d(check_int_array("ns", ns, low=2))
    d = check_int("d", d, low=1)
    lam = _lam(lam)
    x_bound, y_bound = _bounds(x_bound, y_bound, high=PATH_BOUND)
    noise_sd = check_real("noise_sd", noise_sd, low=0, scalar=True)
    records = check_int("records", records, low=1)
    check_allocation("one dataset (n (d + 1) normals)", float(ns.max()) * (d + 1), name="ns")
    check_array_size("the typical records' shift norms (records values per size)", records=records)
    rng = check_rng(seed)
    med, q99, mx, worst = [], [], [], []
    for n in ns:
        norms = []
        for _ in range(max(1, math.ceil(records / n))):
            X, y, _ = sample_data(int(n), d=d, x_bound=x_bound, y_bound=y_bound, noise_sd=noise_sd, seed=rng)
            sh = _loo(X, y, lam, False)[0]
            norms.append(euclidean_norms(sh))
        norms = np.concatenate(norms)
        med.append(np.median(norms))
        q99.append(np.quantile(norms, 0.99))
        mx.append(norms.max())
        worst.append(worst_case_dataset(int(n), lam=lam, x_bound=x_bound, y_bound=y_bound).shift)
    return SensitivityProfile(n=ns, bound=np.asarray(_removal(ns, lam, x_bound, y_bound), float),
                              worst=np.array(worst), median=np.array(med), q99=np.array(q99), maximum=np.array(mx),
                              d=d, lam=lam, x_bound=x_bound, y_bound=y_bound, noise_sd=noise_sd, records=records,
                              seed=seed)


#: Neighbouring relations of :func:`achieved_rho` (described there).
ADJACENCIES = ("replace", "add_remove", "add_remove_public_n")


def gamma_from_rho(rho):
    r"""Noise multiplier :math:`γ = \sqrt{2/ρ}` of a ρ-zCDP calibrated release (:math:`σ_n = γΔ(n)`, replace-one adjacency).

    Replace-one neighbours have fits at most :math:`2Δ^{-}(n) \le 2Δ(n)` apart (chapter 09), and the Gaussian
    mechanism of ℓ2-sensitivity s is :math:`s^{2}/(2σ^{2})`-zCDP (Bun and Steinke 2016, Proposition 1.6):
    :math:`ρ = (2Δ)^{2}/(2γ^{2}Δ^{2}) = 2/γ^{2}`.

    Examples
    --------
    >>> gamma_from_rho(2.0)
    1.0
    """
    rho = check_real("rho", rho, low=0, low_open=True, allow_inf=True)
    with np.errstate(divide="ignore"):
        out = np.sqrt(2.0 / np.asarray(rho, float))
    return float(out) if out.ndim == 0 else out


def rho_from_gamma(gamma):
    """zCDP budget :math:`ρ = 2/γ^{2}` of the calibrated release with noise multiplier γ (replace-one, n public).

    Examples
    --------
    >>> rho_from_gamma(0.1)
    200.0
    """
    gamma = check_real("gamma", gamma, low=0, low_open=True)
    out = stable(lambda: 2.0 / np.asarray(gamma, float) ** 2, lambda: math.log(2.0) - 2.0 * np.log(gamma))
    return float(out) if out.ndim == 0 else out


def release_renyi_divergence(alpha, shift, sigma_p, sigma_q, *, d):
    r"""Rényi divergence :math:`D_α(\mathcal{N}(a, σ_p^{2} I_d) \,\|\, \mathcal{N}(b, σ_q^{2} I_d))` of two isotropic Gaussian release laws.

    With :math:`s = \|a - b\|` and :math:`σ_α^{2} = ασ_q^{2} + (1 - α)σ_p^{2}`,

        :math:`D_α = α s^{2}/(2σ_α^{2}) + d \log(σ_q/σ_p) + d/(2(α - 1)) \log(σ_q^{2}/σ_α^{2})`

    when :math:`σ_α^{2} > 0`, and ``inf`` otherwise (Gil, Alajaji and Linder 2013,
    Table 2, per coordinate). With :math:`σ_p = σ_q` it is :math:`αs^{2}/(2σ^{2})`, the Gaussian
    mechanism's; with :math:`σ_p > σ_q` it is infinite for :math:`α \ge σ_p^{2}/(σ_p^{2} - σ_q^{2})`.

    Parameters
    ----------
    alpha, shift, sigma_p, sigma_q : float or array_like
        Order α > 1, distance s >= 0 of the means, standard deviations > 0 of the two laws.
    d : int
        Dimension.

    Examples
    --------
    >>> release_renyi_divergence(2.0, 1.0, 1.0, 1.0, d=3)
    1.0
    >>> release_renyi_divergence(3.0, 0.0, 1.0, 0.8, d=1)     # sigma_alpha^2 = 3(0.64) - 2 < 0
    inf
    """
    alpha = np.asarray(check_real("alpha", alpha, low=1, low_open=True), float)
    # bounded so that the squares below stay finite (1e100 already means "no privacy" at any alpha)
    shift = np.asarray(check_real("shift", shift, low=0, high=1e100), float)
    sp = np.asarray(check_real("sigma_p", sigma_p, low=0, low_open=True, high=1e100), float)
    sq = np.asarray(check_real("sigma_q", sigma_q, low=0, low_open=True, high=1e100), float)
    d = check_int("d", d, low=1)
    var_a = sq ** 2 + (1.0 - alpha) * (sp ** 2 - sq ** 2)      # exactly σ² for equal variances
    ok = var_a > 0
    safe = np.where(ok, var_a, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (alpha * shift ** 2 / (2.0 * safe) + d * np.log(sq / sp)
               + d / (2.0 * (alpha - 1.0)) * np.log1p((sq ** 2 - safe) / safe))
    out = np.where(ok, out, np.inf)
    return float(out) if out.ndim == 0 else out


def _sigma(n, gamma, noise, lam, x_bound, y_bound):
    n = np.asarray(n, float)
    if noise == "sqrt_n":
        return np.asarray(gamma, float) / np.sqrt(n)
    with np.errstate(over="ignore", under="ignore"):    # γΔ beyond the doubles: inf (or 0), the true limit
        return np.asarray(gamma, float) * _sensitivity(n, lam, x_bound, y_bound)


def noise_std(n, gamma, *, noise="calibrated", lam, x_bound, y_bound):
    r"""Standard deviation :math:`σ_n` of each coordinate of the release's noise.

    Parameters
    ----------
    n, gamma, noise, lam, x_bound, y_bound
        As in the module docstring: :math:`σ_n = γΔ(n)` (:func:`ridge_sensitivity`; needs a finite
        ``y_bound``) or :math:`σ_n = γ/\sqrt n` (the authors').

    Examples
    --------
    >>> round(float(noise_std(1000, 0.01, lam=0.05, x_bound=5.0, y_bound=5.0)), 5)
    0.04071
    >>> round(float(noise_std(100, 1.0, noise="sqrt_n", lam=1e-5, x_bound=10.0, y_bound=np.inf)), 4)
    0.1
    """
    n = check_real("n", n, low=1)
    gamma = check_real("gamma", gamma, low=0, low_open=True)
    noise = check_choice("noise", noise, NOISE_FORMS)
    lam = _lam(lam)
    x_bound, y_bound = _bounds(x_bound, y_bound, finite=(noise == "calibrated"))
    out = _sigma(n, gamma, noise, lam, x_bound, y_bound)
    return float(out) if np.ndim(out) == 0 else out


def achieved_rho(gamma, n, *, adjacency, noise="sqrt_n", lam, x_bound, y_bound):
    r"""The zCDP ρ a release of n users actually guarantees, under a stated neighbouring relation.

    * ``adjacency="replace"`` (n public, one record changed): the two fits are at most :math:`2Δ^{-}(n)`
      apart (chapter 09) and share :math:`σ_n`, so :math:`ρ = 2Δ^{-}(n)^{2}/σ_n^{2}`: :math:`2/γ^{2}` for the
      calibrated noise at n >= 2 (:math:`\le 2/γ^{2}` at n = 1), and :math:`2nΔ^{-}(n)^{2}/γ^{2}` for
      :math:`σ_n = γ/\sqrt n`.
    * ``adjacency="add_remove"``: the neighbour is released at its own :math:`σ_{n±1}`; both noise forms
      depend on n, so the two laws have unequal variances and :func:`release_renyi_divergence` is infinite
      for large orders: ρ = ``inf`` (finite only where :math:`σ_{n-1} = σ_n = σ_{n+1}`, then
      :math:`Δ(n)^{2}/(2σ_n^{2})`).
    * ``adjacency="add_remove_public_n"``: both neighbours released at the noise of the announced n (the
      reading of the paper's Lemma 6, which compares both at variance :math:`γ^{2}/N`):
      :math:`ρ = Δ(n)^{2}/(2σ_n^{2})`, :math:`1/(2γ^{2})` for the calibrated noise.

    Labels not clipped (``y_bound=inf``) give ``inf`` under every relation.

    Parameters
    ----------
    gamma, n, noise, lam, x_bound, y_bound
        As in the module docstring.
    adjacency : {"replace", "add_remove", "add_remove_public_n"}
        The neighbouring relation (:data:`ADJACENCIES`).

    Examples
    --------
    >>> achieved_rho(0.1, 1000, adjacency="replace", noise="calibrated", lam=0.05, x_bound=5.0, y_bound=5.0)
    200.0
    >>> achieved_rho(0.1, 1000, adjacency="add_remove", noise="calibrated", lam=0.05, x_bound=5.0, y_bound=5.0)
    inf
    >>> f"{achieved_rho(1.0, 1000, adjacency='add_remove_public_n', lam=1e-5, x_bound=10.0, y_bound=10.0):.3g}"
    '5.17e+09'
    >>> achieved_rho(1.0, 1000, adjacency="replace", lam=1e-5, x_bound=10.0, y_bound=np.inf)
    inf
    """
    gamma = check_real("gamma", gamma, low=0, low_open=True)
    n = check_real("n", n, low=1)
    adjacency = check_choice("adjacency", adjacency, ADJACENCIES)
    noise = check_choice("noise", noise, NOISE_FORMS)
    lam = _lam(lam)
    x_bound, y_bound = _bounds(x_bound, y_bound, finite=False)
    shape = np.broadcast_shapes(np.shape(n), np.shape(gamma))
    if math.isinf(y_bound):
        out = np.full(shape, np.inf)
    elif adjacency == "replace":                  # (2Δ⁻)²/(2σ²)
        rem = _removal(n, lam, x_bound, y_bound)

        def log_sigma():
            if noise == "sqrt_n":
                return np.log(gamma) - 0.5 * np.log(n)
            return np.log(gamma) + _log_sensitivity(np.asarray(n, float), lam, x_bound, y_bound)

        out = stable(lambda: 2.0 * rem ** 2 / _sigma(n, gamma, noise, lam, x_bound, y_bound) ** 2,
                     lambda: math.log(2.0) + 2.0 * _log_removal(n, lam, x_bound, y_bound) - 2.0 * log_sigma())
        out = np.broadcast_to(out, shape).astype(float)
    else:
        delta = _sensitivity(n, lam, x_bound, y_bound)
        if noise == "calibrated":                 # Δ²/(2 (γΔ)²) = 1/(2γ²)
            out = stable(lambda: delta ** 2 / (2.0 * _sigma(n, gamma, noise, lam, x_bound, y_bound) ** 2),
                         lambda: math.log(0.5) - 2.0 * np.log(gamma) + 0.0 * delta)
        else:                                     # nΔ²/(2γ²)
            log_delta = _log_sensitivity(n, lam, x_bound, y_bound)
            out = stable(lambda: delta ** 2 / (2.0 * _sigma(n, gamma, noise, lam, x_bound, y_bound) ** 2),
                         lambda: np.log(n) + 2.0 * log_delta - math.log(2.0) - 2.0 * np.log(gamma))
        if adjacency == "add_remove":             # unequal variances between neighbours: no finite ρ
            nn = np.asarray(n, float)
            s0 = _sigma(nn, 1.0, noise, lam, x_bound, y_bound)
            same = _sigma(nn + 1.0, 1.0, noise, lam, x_bound, y_bound) == s0
            same = same & ((nn < 2) | (_sigma(np.maximum(nn - 1.0, 1.0), 1.0, noise, lam, x_bound, y_bound) == s0))
            out = np.where(np.broadcast_to(same, shape), out, np.inf)
    return float(out) if np.ndim(out) == 0 else out


def release(X, y, gamma, *, lam, x_bound, y_bound, noise="calibrated", rng=None):
    r"""Release β̂ + :math:`\mathcal{N}(0, σ_n^{2}I)`: the ridge fit of clipped records with Gaussian noise.

    Features are clipped to ``x_bound`` and labels to ``y_bound`` first (a record outside the bounds would
    void the sensitivity bound).

    Parameters
    ----------
    X, y, gamma, lam, x_bound, y_bound, noise, rng
        As in the module docstring (``gamma`` a number; ρ: :func:`achieved_rho`).

    Returns
    -------
    o, eta : numpy.ndarray, shape (d,)
        The release and its noise (what :func:`membership_llr` needs).
    sigma : float
        :math:`σ_n`.

    Examples
    --------
    >>> X, y, _ = sample_data(200, d=3, x_bound=5.0, y_bound=5.0, seed=1)
    >>> o, eta, sigma = release(X, y, 0.01, lam=0.05, x_bound=5.0, y_bound=5.0, rng=2)
    >>> bool(np.allclose(o - eta, ridge_fit(X, y, lam=0.05))), round(sigma, 4)
    (True, 0.0969)
    """
    X, y = _check_xy(X, y)
    gamma = check_real("gamma", gamma, low=0, low_open=True, scalar=True)
    lam = _lam(lam)
    noise = check_choice("noise", noise, NOISE_FORMS)
    x_bound, y_bound = _bounds(x_bound, y_bound, finite=(noise == "calibrated"))
    rng = check_rng(rng, name="rng")
    Xc = clip(X, x_bound)
    yc = np.clip(y, -y_bound, y_bound)
    n, d = Xc.shape
    sigma = float(_sigma(n, gamma, noise, lam, x_bound, y_bound))
    eta = sigma * rng.standard_normal(d)
    return _fit(Xc, yc, lam) + eta, eta, sigma


# ---------------------------------------------------------------- membership
def membership_llr(shifts, eta, sigma, *, statistic="paper", kappa=None):
    r"""Membership log-likelihood ratio Λ of every record, from its shift and the realized noise.

    :math:`Λ_i = \log \mathcal{N}(o; \hat β, σ^{2}I) - \log \mathcal{N}(o; \hat β_{-i}, κσ^{2}I)` with :math:`o = \hat β + η` and
    :math:`δ_i = \hat β - \hat β_{-i}`:

        :math:`Λ_i = (d/2) \log κ - \|η\|^{2}/(2σ^{2}) + \|η + δ_i\|^{2}/(2κσ^{2})`

    (``statistic="paper"``: κ = 1, :math:`Λ_i = (2⟨η, δ_i⟩ + \|δ_i\|^{2})/(2σ^{2})`). Evaluated by
    :func:`perfpriv.leakage.llr_coefficients` at n' records with :math:`n'/(n' - 1) = κ`, noise scale
    :math:`γ' = σ\sqrt{n'}` and record deviation :math:`(n' - 1)δ_i` (module docstring).

    Parameters
    ----------
    shifts : array_like, shape (n, d)
        :math:`δ_i` of every record (:func:`leave_one_out`).
    eta, sigma
        The release's noise η, shape (d,), and :math:`σ_n > 0` (:func:`release`).
    statistic, kappa
        ``"paper"`` or ``"exact"``, with :math:`κ = σ_{n-1}^{2}/σ_n^{2} \ge 1` (required by ``"exact"``).

    Returns
    -------
    numpy.ndarray, shape (n,)

    Examples
    --------
    >>> membership_llr([[1.0, 0.0]], [0.5, 0.0], 1.0).tolist()    # (2*0.5 + 1)/2
    [1.0]
    """
    shifts = np.asarray(check_real("shifts", shifts, low=-PATH_BOUND, high=PATH_BOUND), dtype=float)
    if shifts.ndim == 1:
        shifts = shifts[None, :]
    if shifts.ndim != 2:
        raise ValueError(f"shifts must be an array of shape (n, d) (or one shift of shape (d,)); "
                         f"got shape {shifts.shape}")
    d = shifts.shape[1]
    eta = np.asarray(check_real("eta", eta, low=-PATH_BOUND, high=PATH_BOUND), dtype=float).reshape(-1)
    if eta.shape != (d,):
        raise ValueError(f"eta must be a vector of length d={d} (the shifts' dimension); got shape {eta.shape}")
    sigma = check_real("sigma", sigma, low=0, low_open=True, scalar=True)
    statistic = check_choice("statistic", statistic, STATISTICS)
    kappa = _kappa(statistic, kappa)
    return _llr(shifts, eta, sigma, kappa)


def _kappa(statistic, kappa):
    """κ of ``statistic``: 1 for the paper's (a given ``kappa`` is still checked: it is ignored, not wrong)."""
    if statistic == "paper":
        if kappa is not None:
            check_real("kappa", kappa, low=1, scalar=True)
        return 1.0
    if kappa is None:
        raise ValueError("kappa (the variance ratio sigma_{n-1}^2/sigma_n^2 >= 1) must be given for "
                         "statistic='exact'")
    return check_real("kappa", kappa, low=1, scalar=True)


def _llr(shifts, eta, sigma, kappa, nprime=None):
    """Λ of every shift (κ = 1: the paper's statistic; ``nprime``: n' exactly when known)."""
    d = shifts.shape[1]
    if kappa == 1.0:
        nprime, stat = 2.0, "paper"
    else:
        nprime, stat = (kappa / (kappa - 1.0) if nprime is None else float(nprime)), "exact"
    g = sigma * math.sqrt(nprime)
    dev = (nprime - 1.0) * shifts
    if 1e-150 <= g <= 1e150:
        A, B, C = leakage.llr_coefficients(float(eta @ eta), nprime, g, d, stat)
        return A * np.einsum("ij,ij->i", dev, dev) + B * (dev @ eta) + C
    # σ near 1e±300: 2γ² under- or overflows (A, B = inf: inf − inf). Every coefficient but the log κ term
    # scales as 1/σ², so evaluate them at σ = 1 and divide the finite quadratic by σ² at the end
    # (±inf, or 0, when Λ is beyond the doubles: the true limits).
    A, B, C = leakage.llr_coefficients(float(eta @ eta), nprime, math.sqrt(nprime), d, stat)
    c0 = 0.0 if stat == "paper" else 0.5 * d * math.log(nprime / (nprime - 1.0))
    quad = A * np.einsum("ij,ij->i", dev, dev) + B * (dev @ eta) + (C - c0)
    with np.errstate(over="ignore", under="ignore"):
        return c0 + quad / sigma / sigma


#: Beyond this noncentrality the exact statistic's :math:`\chi ^{2}` law is replaced by its normal limit.
_NC_NORMAL = 1e10


def _exact_tail(shift_norm, sigma, tau, kappa, d):
    r"""P(Λ > τ) of the exact statistic (κ > 1): noncentral :math:`\chi ^{2}` (:func:`leak_probability`)."""
    u2 = (np.asarray(shift_norm, float) / np.asarray(sigma, float)) ** 2
    a = 1.0 - 1.0 / kappa
    x = (2.0 / a) * (0.5 * d * math.log(kappa) + u2 / (2.0 * (kappa - 1.0)) - tau)
    nc = u2 / (kappa - 1.0) ** 2
    x, nc = np.broadcast_arrays(x, nc)
    out = np.zeros(x.shape)
    pos = x > 0
    small = pos & (nc <= _NC_NORMAL)
    out[small] = special.chndtr(x[small], d, nc[small])
    big = pos & (nc > _NC_NORMAL)
    if big.any():   # W − nc ≈ 2√nc g + χ²_d: normal to O(d/√nc)
        out[big] = special.ndtr((x[big] - nc[big] - d) / (2.0 * np.sqrt(nc[big])))
    return np.clip(out, 0.0, 1.0)


def leak_probability(shift_norm, sigma, *, tau, statistic="paper", kappa=None, d=None):
    """:math:`P(Λ > τ \\mid \\text{data})` of a record whose leave-one-out shift has norm :math:`\\|δ\\|` (Lemma 7's form).

    ``"paper"``: :math:`Λ \\mid \\text{data} \\sim \\mathcal{N}(μ^{2}/2, μ^{2})` with :math:`μ = \\|δ\\|/σ`,
    so the probability is :math:`\\bar Φ(τ/μ - μ/2)` (:func:`perfpriv.leakage.leak_probability`, the
    paper's Lemma 7, at :math:`s = \\|δ\\|`, n = 2, :math:`γ = σ\\sqrt 2`). ``"exact"``: with
    :math:`u = \\|δ\\|/σ` and :math:`a = 1 - 1/κ`,

    .. math::

        P(\\Lambda > \\tau \\mid \\text{data}) = F_{\\chi^2_d(u^2/(\\kappa-1)^2)}\\Big(\\tfrac{2}{a}\\big[\\tfrac{d}{2}\\log\\kappa + \\tfrac{u^2}{2(\\kappa - 1)} - \\tau\\big]\\Big),

    the noncentral-:math:`χ^{2}` law of the exact statistic (for :math:`κ = n/(n - 1)` the one
    of :mod:`perfpriv.leakage` with :math:`s = (n - 1)\\|δ\\|`, :math:`γ = σ\\sqrt n`; beyond a
    noncentrality of 1e10, its normal limit).

    Parameters
    ----------
    shift_norm, sigma : float or array_like
        :math:`\\|δ\\| \\ge 0` and :math:`σ_n > 0`.
    tau : float
        τ > 0.
    statistic, kappa, d
        As in :func:`membership_llr`; d (the dimension) is required by ``"exact"``.

    References
    ----------
    Paper Lemma 6, Lemma 7, Remark 1.

    Examples
    --------
    >>> round(float(leak_probability(0.5, 0.25, tau=0.5)), 4)     # mu = 2: 1 - Phi(0.25 - 1)
    0.7734
    """
    shift_norm = check_real("shift_norm", shift_norm, low=0)
    sigma = check_real("sigma", sigma, low=0, low_open=True)
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    statistic = check_choice("statistic", statistic, STATISTICS)
    kappa = _kappa(statistic, kappa)
    if d is not None:                   # checked whichever statistic reads it
        d = check_int("d", d, low=1)
    if kappa > 1.0 and d is None:
        raise ValueError("d must be given (dimension >= 1) for statistic='exact'")
    out = _leak(shift_norm, sigma, tau, kappa, d)
    return float(out) if np.ndim(out) == 0 else out


def _leak(shift_norm, sigma, tau, kappa, d):
    if kappa == 1.0:
        return np.asarray(leakage.leak_probability(np.asarray(shift_norm, float), 2.0,
                                                   np.asarray(sigma, float) * math.sqrt(2.0), tau=tau), float)
    return _exact_tail(shift_norm, sigma, tau, kappa, d)


def ols_excess_risk(n, *, d, noise_sd=1.0):
    r"""Expected excess risk :math:`\mathbb{E}\|\hat β - θ\|^{2} = σ_ε^{2} d/(n - d - 1)` of least squares (closed form).

    For :math:`x \sim \mathcal{N}(0, I_d)` and labels without clipping, :math:`\hat β - θ` given X is
    :math:`\mathcal{N}(0, σ_ε^{2}(X^\top X)^{-1})`, and :math:`\mathbb{E}[(X^\top X)^{-1}] = I/(n - d - 1)`
    (the mean of an inverse Wishart). The ridge estimate with small λ is close to it; the private release adds
    :math:`d σ_n^{2}`.

    Parameters
    ----------
    n, d, noise_sd
        As in the module docstring, with n > d + 1.

    Examples
    --------
    >>> round(float(ols_excess_risk(113, d=12)), 4)
    0.12
    """
    d = check_int("d", d, low=1)
    n = check_real("n", n, low=d + 1, low_open=True)
    noise_sd = check_real("noise_sd", noise_sd, low=0, scalar=True)
    out = stable(lambda: noise_sd ** 2 * d / (np.asarray(n, float) - d - 1),
                 lambda: 2.0 * np.log(noise_sd) + math.log(d) - np.log(np.asarray(n, float) - d - 1))
    return float(out) if np.ndim(out) == 0 else out


# -------------------------------------------------------------- mechanism
@dataclass(frozen=True)
class RidgeData:
    r"""The data model of :class:`RidgeRelease`: a round's records and the test set of its error.

    Records as in :func:`sample_data`; ``error="test_mse"`` scores a release on ``test_size`` fresh points.

    Parameters
    ----------
    d, x_bound, y_bound, noise_sd
        As in the module docstring (d = 12, the paper's, by default); bounds ``None``: from the mechanism's
        conventions (:class:`RidgeRelease`, Notes).
    theta : array_like, shape (d,), optional
        A fixed θ (kept as a tuple of floats); by default a fresh direction every round.
    test_size : int
        Size of the fresh test set of ``error="test_mse"`` (the authors' 2000).

    Examples
    --------
    >>> RidgeData(d=3, x_bound=2.0)
    RidgeData(d=3, x_bound=2.0, y_bound=None, noise_sd=1.0, theta=None, test_size=2000)
    """

    d: int = 12
    x_bound: Any = None
    y_bound: Any = None
    noise_sd: float = 1.0
    theta: Any = None
    test_size: int = AUTHORS_TEST_SIZE

    def __post_init__(self):
        d = check_int("d", self.d, low=1)
        check_allocation("the normal equations of a fit (d x d values)", float(d) ** 2, name="d")
        x_bound = None if self.x_bound is None else check_real("x_bound", self.x_bound, low=0, low_open=True,
                                                               scalar=True)
        y_bound = None if self.y_bound is None else check_real("y_bound", self.y_bound, low=0, low_open=True,
                                                               scalar=True, allow_inf=True)
        noise_sd = check_real("noise_sd", self.noise_sd, low=0, scalar=True)
        theta = self.theta
        if theta is not None:
            theta = np.asarray(check_real("theta", theta), dtype=float).reshape(-1)
            if theta.shape != (d,):
                raise ValueError(f"theta must be a vector of length d={d}; got shape {theta.shape}")
            theta = tuple(float(v) for v in theta)
        test_size = check_int("test_size", self.test_size, low=1)
        check_allocation("the test set (test_size x d values)", float(test_size) * d, name="test_size")
        for name, value in (("d", d), ("x_bound", x_bound), ("y_bound", y_bound), ("noise_sd", noise_sd),
                            ("theta", theta), ("test_size", test_size)):
            object.__setattr__(self, name, value)


#: The ridge release's table when none is given: 4000 records and 64 datasets per point, seed 0.
_DEFAULT_TABLE = Tabulation(records=4000, datasets=64, seed=0)


class RidgeRelease(TabulatedMechanism):
    r"""Private ridge regression with the membership test, for :mod:`perfpriv.engine`.

    A round with N users draws a fresh dataset of the model (module docstring), releases
    β̂ + :math:`\mathcal{N}(0, σ_N^{2}I)`, counts the records whose Λ (:func:`membership_llr`) exceeds τ, and
    scores :math:`\|o - θ\|^{2}` (or the test MSE). Records, θ, the noise direction and the test set of a
    (cell, trial, round) come from its keyed streams, shared by all levels (common random numbers); a level
    with fewer users uses a prefix of the records.

    Parameters
    ----------
    gamma : float, 1-D array_like or perfpriv.engine.Schedule
        Noise multiplier(s), 1e-100 <= γ <= 1e100 (:data:`PATH_GAMMA`).
    tau : float
        Vulnerability threshold τ > 0.
    data : RidgeData, optional
        The data model (default ``RidgeData()``: d = 12, θ fresh each round, the bounds from ``conventions``).
    lam, noise, statistic, error, loo : optional
        λ, the noise form, the statistic (:func:`membership_llr`), the error (:data:`ERRORS`) and the
        leave-one-out rule (:data:`LOO_RULES`); ``None`` (as ``data``'s bounds): from ``conventions`` (Notes).
    table : Tabulation, optional
        Monte Carlo of the mean field: per point, the shifts of ``records`` records and the fits of
        ``datasets`` datasets (default ``Tabulation(records=4000, datasets=64, seed=0)``).

    Notes
    -----
    ``conventions="paper"`` (the book's calibrated release): :math:`B_x = B_y = 5`, λ = 0.05,
    :math:`σ_N = γΔ(N)`, the paper's statistic, error :math:`\|o - θ\|^{2}`, a population floored at one
    user and never stopped. ``"authors"`` (the published regression code): :math:`B_x = 10`, labels not
    clipped, :math:`λ = 10^{-5}`, :math:`σ_N = γ/\sqrt N`, the exact statistic with the deletion formula at a
    kept penalty, the test MSE on 2000 fresh points, a trial stopped once N <= d and each remaining round
    charged 1000.

    Examples
    --------
    >>> m = RidgeRelease(0.01, tau=0.02).resolved("paper")
    >>> m.options()["noise"], round(float(m.sigma(1000, 0.01)), 5)
    ('calibrated', 0.04071)
    """

    name = "ridge_release"
    level_name = "gamma"

    def __init__(self, gamma, *, tau, data=None, lam=None, noise=None, statistic=None, error=None, loo=None,
                 table=None):
        self.levels = engine.make_levels(gamma, "gamma", low=PATH_GAMMA[0], high=PATH_GAMMA[1])
        self.tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
        self.data = check_instance("data", data, RidgeData, "perfpriv.regression.RidgeData (d, x_bound, y_bound, "
                                   "noise_sd, theta, test_size)", default=RidgeData())
        self.lam = None if lam is None else _lam(lam)
        self.noise = None if noise is None else check_choice("noise", noise, NOISE_FORMS)
        self.statistic = None if statistic is None else check_choice("statistic", statistic, STATISTICS)
        self.error = None if error is None else check_choice("error", error, ERRORS)
        self.loo = None if loo is None else check_choice("loo", loo, LOO_RULES)
        self.table = check_instance("table", table, Tabulation,
                                    "perfpriv.regression.Tabulation (records, datasets, seed)", default=_DEFAULT_TABLE)
        check_array_size("a dataset of the table (table.records x (d + 1) normals)",
                         **{"table.records": self.table.records, "data.d": self.d + 1})
        if self._complete():
            self._check_resolved()

    # ------------------------------------------------- data and table
    d = property(lambda self: self.data.d, doc="Dimension d (``data.d``).")
    x_bound = property(lambda self: self.data.x_bound, doc=":math:`B_x` (``data.x_bound``; None: not resolved).")
    y_bound = property(lambda self: self.data.y_bound, doc=":math:`B_y` (``data.y_bound``; None: not resolved).")
    noise_sd = property(lambda self: self.data.noise_sd, doc=":math:`σ_ε` (``data.noise_sd``).")
    test_size = property(lambda self: self.data.test_size, doc="Size of the test set (``data.test_size``).")
    table_records = property(lambda self: self.table.records, doc="``table.records``.")
    table_datasets = property(lambda self: self.table.datasets, doc="``table.datasets``.")
    table_seed = property(lambda self: self.table.seed, doc="``table.seed``.")

    @property
    def theta(self):
        """The fixed θ of ``data`` as an array, or None (a fresh direction every round)."""
        return None if self.data.theta is None else np.array(self.data.theta, dtype=float)

    # -------------------------------------------------------- options
    _OPTIONS = ("x_bound", "y_bound", "lam", "noise", "statistic", "error", "loo")
    #: The options that live in ``data``.
    _DATA_OPTIONS = ("x_bound", "y_bound")

    def _complete(self):
        return all(getattr(self, k) is not None for k in self._OPTIONS)

    def _check_resolved(self):
        if self.noise == "calibrated" and math.isinf(self.y_bound):
            raise ValueError("y_bound must be finite for noise='calibrated' (unclipped labels have an "
                             "unbounded sensitivity); use noise='sqrt_n' for the authors' uncalibrated release")

    def resolved(self, conventions):
        if self._complete():
            return self
        conventions = check_choice("conventions", conventions, engine.CONVENTIONS)
        out = RidgeRelease.__new__(RidgeRelease)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_table_cache"})
        preset = PRESETS[conventions]
        bounds = {k: preset[k] for k in self._DATA_OPTIONS if getattr(out.data, k) is None}
        if bounds:
            out.data = dataclasses.replace(out.data, **bounds)
        for k, v in preset.items():
            if k not in self._DATA_OPTIONS and getattr(out, k) is None:
                setattr(out, k, v)
        out._check_resolved()
        return out

    def policy_preset(self, conventions):
        if conventions == "authors":
            return dict(cap=20000, floor=1, stop=self.d, collapse="penalty", penalty=AUTHORS_PENALTY)
        return dict(cap=20000, floor=1, stop=0, collapse="floor", penalty=0.0)

    def options(self):
        """The settings as keywords: ``RidgeRelease(levels, **m.options())`` is ``m`` at other levels.

        Options left to the conventions are None (:meth:`resolved` fills them in).
        """
        return dict(tau=self.tau, data=self.data, **{k: getattr(self, k) for k in self._OPTIONS
                                                     if k not in self._DATA_OPTIONS}, table=self.table)

    def __repr__(self):
        g = self.levels.describe()
        text = f"{g:g}" if isinstance(g, float) else f"<{'schedule' if self.levels.per_round else 'grid'} " \
                                                      f"{np.shape(g)}>"
        return (f"RidgeRelease(gamma={text}, tau={self.tau:g}, d={self.d}, noise={self.noise!r}, "
                f"statistic={self.statistic!r})")

    def _need_resolved(self):
        if not self._complete():
            raise ValueError("this RidgeRelease has options left to its conventions; call "
                             ".resolved('paper') or .resolved('authors') first (engine.simulate and "
                             "engine.mean_field do it for you)")

    # ----------------------------------------------------- quantities
    def sigma(self, n, gamma):
        """:math:`σ_n` of the release at population n >= 1 and noise multiplier γ in [1e-100, 1e100] (:data:`PATH_GAMMA`)."""
        self._need_resolved()
        n = check_real("n", n, low=1)
        gamma = check_real("gamma", gamma, low=PATH_GAMMA[0], high=PATH_GAMMA[1])
        return _sigma(n, gamma, self.noise, self.lam, self.x_bound, self.y_bound)

    def kappa(self, n, gamma=1.0):
        """Variance ratio :math:`κ = σ_{n-1}^{2}/σ_n^{2}` of the exact statistic (n >= 2)."""
        n = check_real("n", n, low=2)
        return (self.sigma(np.asarray(n, float) - 1.0, gamma) / self.sigma(n, gamma)) ** 2

    def rho(self, n, gamma, *, adjacency="replace"):
        """zCDP budget the release of n users guarantees under ``adjacency`` (:func:`achieved_rho`)."""
        self._need_resolved()
        return achieved_rho(gamma, n, adjacency=adjacency, noise=self.noise, lam=self.lam, x_bound=self.x_bound,
                            y_bound=self.y_bound)

    def _records(self, key, n_max):
        """Records, θ and noise direction of one key: the standard normals of its streams."""
        G = key_normals(key, "records", n_max, self.d + 1)
        theta = self.theta if self.theta is not None else _unit(key.child("theta").normal(self.d))
        X, y = _make_data(G, theta, self.x_bound, self.y_bound, self.noise_sd)
        return X, y, theta

    def _round(self, X, y, theta, xi, gammas, test):
        """Errors and leak counts of the releases of one dataset at several γ."""
        N = X.shape[0]
        shifts, beta = _loo(X, y, self.lam, self.loo == "keep_penalty")
        err = np.empty(len(gammas))
        leaked = np.empty(len(gammas), dtype=np.int64)
        for j, g in enumerate(gammas):
            sigma = float(self.sigma(N, g))
            eta = sigma * xi
            v = beta + eta - theta
            vv = float(v @ v)
            if self.error == "excess":
                err[j] = vv
            else:
                see, seg, sgg = test
                nv = math.sqrt(vv)
                err[j] = (see - 2.0 * nv * seg + vv * sgg) / self.test_size
            if N == 1:
                leaked[j] = 1
                continue
            kappa = float(self.kappa(N, g)) if self.statistic == "exact" else 1.0
            nprime = N if self.noise == "sqrt_n" else None      # κ = N/(N − 1) exactly
            lam_i = _llr(shifts, eta, sigma, kappa, nprime)
            leaked[j] = int(np.count_nonzero(lam_i > self.tau))
        return err, leaked

    def draw_round(self, n, level, keys, live, t, need_error=True):
        self._need_resolved()
        shape, nn, gg, groups = round_groups(n, level, keys, live)
        err = np.zeros(nn.size)
        leaked = np.zeros(nn.size, dtype=np.int64)
        for key, pairs in groups:
            X, y, theta = self._records(key, int(nn[pairs].max()))
            xi = key.child("noise").normal(self.d)
            test = None
            if self.error == "test_mse":
                h = key.child("test").normal(2 * self.test_size).reshape(self.test_size, 2)
                e = self.noise_sd * h[:, 0]
                test = (float(e @ e), float(e @ h[:, 1]), float(h[:, 1] @ h[:, 1]))
            for N in np.unique(nn[pairs]):
                sel = pairs[nn[pairs] == N]
                err[sel], leaked[sel] = self._round(X[:N], y[:N], theta, xi, gg[sel], test)
        return engine.RoundOutcome(err.reshape(shape), leaked.reshape(shape))

    def agent_round(self, n, level, rng, t=1, state=None):
        r"""One round with one refit per record (:meth:`perfpriv.engine.Mechanism.agent_round`).

        Fits by least squares on the data stacked with :math:`\sqrt{penalty} I`, refits without each record
        (no Sherman–Morrison) and takes Λ as the difference of two Gaussian log densities; a lone user leaks.
        """
        self._need_resolved()
        n = check_int("n", n, low=1)
        g, dd = float(check_real("gamma", level, low=PATH_GAMMA[0], high=PATH_GAMMA[1], scalar=True)), self.d

        def fit(X, y, penalty):
            return np.linalg.lstsq(np.vstack([X, math.sqrt(penalty) * np.eye(dd)]),
                                   np.concatenate([y, np.zeros(dd)]), rcond=None)[0]

        theta = self.theta if self.theta is not None else _unit(rng.standard_normal(dd))
        X = clip(rng.standard_normal((n, dd)), self.x_bound)
        y = X @ theta + self.noise_sd * rng.standard_normal(n)
        if math.isfinite(self.y_bound):
            y = np.clip(y, -self.y_bound, self.y_bound)
        beta = fit(X, y, n * self.lam)
        sigma = float(self.sigma(n, g))
        o = beta + sigma * rng.standard_normal(dd)
        if self.error == "excess":
            err = float(np.sum((o - theta) ** 2))
        else:
            Xt = rng.standard_normal((self.test_size, dd))
            yt = Xt @ theta + self.noise_sd * rng.standard_normal(self.test_size)
            err = float(np.mean((yt - Xt @ o) ** 2))
        if n == 1:
            return engine.AgentRound(np.ones(1, dtype=bool), err)   # the lone user's release proves membership
        var_out = sigma ** 2 if self.statistic == "paper" else float(self.sigma(n - 1, g)) ** 2
        llrs = np.empty(n)
        for j in range(n):
            keep = np.arange(n) != j
            beta_out = fit(X[keep], y[keep], (n if self.loo == "keep_penalty" else n - 1) * self.lam)
            llrs[j] = log_normal_density(o, beta, sigma ** 2) - log_normal_density(o, beta_out, var_out)
        return engine.AgentRound(llrs > self.tau, err)

    # ---------------------------------------------------- mean field
    #: Records per batch of simulated datasets in the table's Monte Carlo (memory bound).
    _BATCH = 200_000

    def _shared_key(self, n):
        """Key of the summary at size n in :data:`_SHARED_SUMMARIES`; None unless the table seed is an int."""
        seed = self.table_seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            return None
        theta = None if self.theta is None else self.theta.tobytes()
        return (int(seed), self.d, self.x_bound, self.y_bound, self.noise_sd, self.lam, self.loo,
                self.table_records, self.table_datasets, self._BATCH, theta, n)

    def _summary(self, n: int):
        r"""Shift norms of >= table_records records and the mean fit error :math:`\mathbb{E}\|\hat β - θ\|^{2}`, at size n.

        Not a function of γ or τ: releases with the same table settings share it (:data:`_SHARED_SUMMARIES`).
        """
        cache = self.__dict__.setdefault("_summary_cache", {})
        if n not in cache:
            shared = self._shared_key(n)
            if shared is not None and shared in _SHARED_SUMMARIES:
                _SHARED_SUMMARIES.move_to_end(shared)
                cache[n] = _SHARED_SUMMARIES[shared]
                return cache[n]
            rng = keyed.as_generator(keyed.root_key(self.table_seed, name="table_seed").child("ridge", n))
            k_total = max(self.table_datasets, math.ceil(self.table_records / n))
            k_shift = math.ceil(self.table_records / n)
            norms, errs = [], []
            done = 0
            while done < k_total:
                k = min(k_total - done, max(1, self._BATCH // n))
                if self.theta is not None:
                    theta = np.broadcast_to(self.theta, (k, self.d))
                else:
                    raw = rng.standard_normal((k, self.d))
                    theta = raw / np.linalg.norm(raw, axis=1, keepdims=True)
                G = rng.standard_normal((k, n, self.d + 1))
                X = clip(G[..., :self.d], self.x_bound)
                y = np.einsum("kij,kj->ki", X, theta) + self.noise_sd * G[..., self.d]
                if math.isfinite(self.y_bound):
                    np.clip(y, -self.y_bound, self.y_bound, out=y)
                want = min(k, max(k_shift - done, 0))
                if want:
                    shifts, beta_s = _loo(X[:want], y[:want], self.lam, self.loo == "keep_penalty")
                    norms.append(np.sqrt(np.einsum("...j,...j->...", shifts, shifts)).reshape(-1))
                beta = _fit(X, y, self.lam)
                errs.append(np.sum((beta - theta) ** 2, axis=1))
                done += k
            norms = np.concatenate(norms)
            norms.flags.writeable = False
            cache[n] = (norms, float(np.mean(np.concatenate(errs))))
            if shared is not None:
                _share_summary(shared, cache[n])
        return cache[n]

    def _values(self, n, gamma, norms, fit_error):
        sigma = float(self.sigma(n, gamma))
        e = fit_error + self.d * sigma ** 2 + (self.noise_sd ** 2 if self.error == "test_mse" else 0.0)
        if n < 2:
            return 1.0, e
        kappa = float(self.kappa(n, gamma)) if self.statistic == "exact" else 1.0
        p = float(np.mean(_leak(norms, sigma, self.tau, kappa, self.d)))
        return p, e

    def _table_points(self, n, levels):
        self._need_resolved()
        norms, fit_error = self._summary(n)
        return [self._values(n, float(level), norms, fit_error) for level in levels]

    def _extrapolate(self, n, level, p_last, e_last, n_last):
        """Beyond the table: shifts and fit error scale like 1/n (their large-n law)."""
        norms, fit_error = self._summary(n_last)
        out = [self._values(float(m), level, norms * n_last / m, fit_error * n_last / m) for m in n]
        arr = np.array(out, dtype=float).reshape(-1, 2)
        return arr[:, 0], arr[:, 1]


#: The table summaries of :meth:`RidgeRelease._summary` of every release of this process, by
#: :meth:`RidgeRelease._shared_key` (points of small n take about a second each at d = 12, and each γ* map or
#: explorer grid builds new releases of the same settings). Least recently used summaries leave beyond
#: :data:`_SHARED_SUMMARY_BYTES` of norms.
_SHARED_SUMMARIES: "collections.OrderedDict" = collections.OrderedDict()
_SHARED_SUMMARY_BYTES = 64 * 2**20


def _share_summary(key, summary):
    _SHARED_SUMMARIES[key] = summary
    _SHARED_SUMMARIES.move_to_end(key)
    while len(_SHARED_SUMMARIES) > 1 and sum(v[0].nbytes for v in _SHARED_SUMMARIES.values()) > \
            _SHARED_SUMMARY_BYTES:
        _SHARED_SUMMARIES.popitem(last=False)


# ------------------------------------------------------- the published variant
@dataclass(frozen=True, eq=False)
class PublishedPrivacy:
    r"""What the authors' uncalibrated release guarantees, and what its records actually reveal.

    Attributes
    ----------
    gammas, n
        Their noise scales :math:`(σ_n = γ/\sqrt n)` and the dataset size.
    rho_published : float
        zCDP of the release as published (labels not clipped): inf.
    rho_clipped : numpy.ndarray
        zCDP had labels been clipped at ``y_bound``: :math:`2nΔ^{-}(n)^{2}/γ^{2}` (replace-one, n public).
    mu_median, mu_q99, mu_max : numpy.ndarray
        Quantiles of the realized per-record :math:`μ_i = \|δ_i\|/σ_n` over Gaussian datasets.
    leak : numpy.ndarray
        Marginal leak probability of a record (the exact statistic, τ).
    tau, d, lam, x_bound, y_bound, records, seed
        Provenance.
    """

    gammas: np.ndarray
    n: int
    rho_published: float
    rho_clipped: np.ndarray
    mu_median: np.ndarray
    mu_q99: np.ndarray
    mu_max: np.ndarray
    leak: np.ndarray
    tau: float
    d: int
    lam: float
    x_bound: float
    y_bound: float
    records: int
    seed: Any

    def __repr__(self):
        return (f"PublishedPrivacy(n={self.n}, gammas={len(self.gammas)} values, rho_published={self.rho_published}, "
                f"rho_clipped in [{self.rho_clipped.min():.3g}, {self.rho_clipped.max():.3g}])")


def published_privacy(gammas, *, tau=0.02, n=1000, d=12, y_bound=10.0, records=4000, seed=0):
    r"""How much of the published regression's privacy was privacy.

    The authors' code (``conventions="authors"``) releases ridge (λ = 1e-5, features clipped at 10, labels not
    clipped) plus :math:`\mathcal{N}(0, γ^{2}/n I)`: without label clipping no finite ρ holds. With labels
    clipped at ``y_bound`` (as the authors' theory script assumes) it would be
    :math:`ρ = 2nΔ^{-}(n)^{2}/γ^{2}` (replace-one, n public: :func:`achieved_rho`). Against these worst-case
    numbers the per-record GDP parameter :math:`μ_i = \|δ_i\|\sqrt n/γ` of typical Gaussian data is small: the
    release protects typical records, without a guarantee for any dataset.

    Parameters
    ----------
    gammas : 1-D array_like
        The authors' noise scales (their grid: ``geomspace(0.2, 20, 30)``), in [1e-100, 1e100]
        (:data:`PATH_GAMMA`).
    tau : float
        τ for the leak probability.
    n, d, seed
        As in the module docstring (n >= 2).
    y_bound : float
        The label bound of the hypothetical clipped variant.
    records : int
        Records of typical data (whole datasets of n, at least one); ``len(gammas) * records`` at most
        ~5e8 (their μ fill the 4.3 GB one call may allocate).

    Returns
    -------
    PublishedPrivacy

    Examples
    --------
    >>> p = published_privacy([1.0], n=200, records=400, seed=0)
    >>> p.rho_published, f"{float(p.rho_clipped[0]):.2g}"
    (inf, '4.3e+09')
    """
    gammas = np.atleast_1d(np.asarray(check_real("gammas", gammas, low=PATH_GAMMA[0], high=PATH_GAMMA[1]),
                                       float))
    tau = check_real("tau", tau, low=0, low_open=True, scalar=True)
    n = check_int("n", n, low=2)
    d = check_int("d", d, low=1)
    y_bound = check_real("y_bound", y_bound, low=0, low_open=True, scalar=True)
    records = check_int("records", records, low=1)
    check_array_size("the records' GDP parameters (gammas x records values)", gammas=gammas.size, records=records)
    rng = check_rng(seed)
    preset = PRESETS["authors"]
    lam, x_bound = preset["lam"], preset["x_bound"]
    norms = []
    for _ in range(max(1, math.ceil(records / n))):
        X, y, _ = sample_data(n, d=d, x_bound=x_bound, y_bound=np.inf, seed=rng)
        sh = _loo(X, y, lam, True)[0]
        norms.append(np.sqrt(np.einsum("ij,ij->i", sh, sh)))
    norms = np.concatenate(norms)
    sigma = gammas / math.sqrt(n)
    mu = norms[None, :] / sigma[:, None]
    leak = np.array([np.mean(_exact_tail(norms, s, tau, n / (n - 1.0), d)) for s in sigma])
    delta = np.float64(_removal(n, lam, x_bound, y_bound))
    with np.errstate(over="ignore"):                     # 2nΔ⁻²/γ² beyond the doubles: inf, the true limit
        rho_clipped = 2.0 * n * (delta / gammas) ** 2
    return PublishedPrivacy(gammas=gammas, n=n, rho_published=math.inf, rho_clipped=rho_clipped,
                            mu_median=np.median(mu, axis=1), mu_q99=np.quantile(mu, 0.99, axis=1),
                            mu_max=mu.max(axis=1), leak=leak, tau=tau, d=d, lam=lam, x_bound=x_bound,
                            y_bound=y_bound, records=records, seed=seed)
