"""One place for every argument check of perfpriv.

Each public function checks its arguments here before any arithmetic: bad input fails early with a
:class:`ValueError` (:class:`TypeError` for wrong types) naming the parameter, the value received and the
allowed range. The helpers return the value converted (``beta = check_real("beta", beta, low=0, high=0.5)``).
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable

import numpy as np

__all__ = [
    "check_real",
    "check_probability",
    "check_int",
    "check_int_array",
    "check_flag",
    "check_instance",
    "check_choice",
    "check_rng",
    "check_root_seed",
    "check_mean",
    "check_covariance",
    "check_allocation",
    "check_array_size",
    "check_population",
    "check_shape",
    "check_bracket",
    "check_same_shape",
    "check_order",
    "check_path",
    "check_n_jobs",
    "interval_text",
]


def _num_text(x) -> str:
    """Short, exact text of an interval end: ``0.5``, :math:`1e+100`, ``20000``, ``2**63 - 1``, ``10**18``.

    Examples
    --------
    >>> _num_text(0.5), _num_text(20000), _num_text(2**63 - 1), _num_text(10**18), _num_text(1e100)
    ('0.5', '20000', '2**63 - 1', '10**18', '1e+100')
    """
    if isinstance(x, numbers.Integral):
        x = int(x)
        if abs(x) < 10**15:
            return str(x)
        sign, m = ("-" if x < 0 else ""), abs(x)
        if (m + 1) & m == 0:                      # 2**k - 1, e.g. the int64 maximum
            return f"{sign}2**{(m + 1).bit_length() - 1} - 1" if not sign else f"-(2**{(m + 1).bit_length() - 1} - 1)"
        if m & (m - 1) == 0:
            return f"{sign}2**{m.bit_length() - 1}"
        k = len(str(m)) - 1
        if m == 10**k:
            return f"{sign}10**{k}"
        return str(x)
    return f"{float(x):g}"


def interval_text(low=None, high=None, *, low_open=False, high_open=False, allow_inf=False) -> str:
    """Human-readable interval such as ``(0, inf)``, ``[0, inf]`` or ``[0, 1]``."""
    lo = "-inf" if low is None else _num_text(low)
    hi = "inf" if high is None else _num_text(high)
    left = "(" if (low_open or low is None) else "["
    right = ")" if (high_open or (high is None and not allow_inf)) else "]"
    return f"{left}{lo}, {hi}{right}"


def _show(value: Any) -> str:
    """Short repr of a received value for error messages."""
    try:
        arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    except (TypeError, ValueError):  # ragged sequences
        arr = None
    if arr is not None and arr.ndim > 0 and arr.size > 6:
        return f"array of shape {arr.shape}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_float_array(name: str, value: Any) -> np.ndarray:
    if isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {_show(value)}")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a rectangular array of numbers (all rows of one "
                         f"length); got {_show(value)}") from None
    if raw.dtype == bool or raw.dtype.kind in "OUSVMmc" and raw.dtype != object:
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {_show(value)}")
    if raw.dtype == object:
        if any(isinstance(x, (bool, np.bool_, str, bytes)) or x is None for x in raw.reshape(-1)):
            raise TypeError(f"{name} must be a real number or an array of real numbers; got {_show(value)}")
    if np.iscomplexobj(raw):
        raise TypeError(f"{name} must be a real number or an array of real numbers; got {_show(value)}")
    try:
        arr = raw.astype(float)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be a real number or an array of real numbers; got {_show(value)}"
        ) from None
    if arr.ndim and arr.size == 0:
        raise ValueError(f"{name} must not be empty; got an array of shape {arr.shape}")
    return arr


def check_real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
    scalar: bool = False,
):
    r"""Check that ``value`` (scalar or array) is real and inside an interval.

    ``name`` is the parameter named in messages; ``low`` and ``high`` bound the interval (``None``:
    unbounded), ``low_open`` / ``high_open`` exclude an end, ``allow_inf`` allows :math:`+\infty`
    (e.g. ``epsilon=np.inf``; NaN never) and ``scalar`` requires one number. Returns a Python ``float``
    for scalar input, a float array otherwise.

    Raises
    ------
    ValueError
        If a value is NaN, infinite (unless allowed) or outside the interval.
    TypeError
        If ``value`` is not numeric, or not a scalar when ``scalar=True``.
    """
    arr = _as_float_array(name, value)
    if scalar and arr.ndim != 0:
        raise TypeError(f"{name} must be a single number; got {_show(value)}")
    rng_text = interval_text(low, high, low_open=low_open, high_open=high_open, allow_inf=allow_inf)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must be a number in {rng_text}; got NaN ({_show(value)})")
    if np.isinf(arr).any():
        if not allow_inf or np.isneginf(arr).any():
            raise ValueError(f"{name} must be finite and in {rng_text}; got {_show(value)}")
    finite = arr[np.isfinite(arr)] if arr.ndim else (arr if np.isfinite(arr) else None)
    if finite is not None and np.size(finite):
        bad = False
        if low is not None:
            bad |= bool(np.any(finite <= low) if low_open else np.any(finite < low))
        if high is not None:
            bad |= bool(np.any(finite >= high) if high_open else np.any(finite > high))
        if bad:
            raise ValueError(f"{name} must be in {rng_text}; got {_show(value)}")
    if high is not None and np.isposinf(arr).any():
        raise ValueError(f"{name} must be in {rng_text}; got {_show(value)}")
    return float(arr) if arr.ndim == 0 else arr


def check_probability(name: str, value: Any, *, open_low=False, open_high=False, scalar=False):
    """Check a probability in ``[0, 1]`` (ends optionally excluded)."""
    return check_real(name, value, low=0.0, high=1.0, low_open=open_low, high_open=open_high, scalar=scalar)


#: Integers are bounded by the int64 range (every size ends up in a numpy array).
INT_MAX = int(np.iinfo(np.int64).max)


def check_int(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> int:
    """Check an integer (Python or numpy integer, or an integral float) in ``[low, high]``.

    ``high`` defaults to (and can never exceed) the int64 maximum 2**63 - 1.
    """
    bounded = high is not None
    high = INT_MAX if high is None else min(int(high), INT_MAX)
    allowed = _int_range_text(low, high if bounded else None)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, numbers.Real)):
        raise TypeError(f"{name} must be an integer{allowed}; got {_show(value)}")
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        if not np.isfinite(value) or float(value) != int(value):
            raise ValueError(f"{name} must be an integer{allowed}; got {_show(value)}")
    ivalue = int(value)
    if not bounded and ivalue > high:
        raise ValueError(f"{name} must be an integer{allowed} and at most 2**63 - 1; got {_show(value)}")
    if (low is not None and ivalue < low) or ivalue > high:
        raise ValueError(f"{name} must be an integer{allowed}; got {_show(value)}")
    return ivalue


def _integer_array(value: Any) -> np.ndarray | None:
    """``value`` as a numpy integer array when it is one (or a nest of Python/numpy integers); else None."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return arr if arr.dtype.kind in "iu" else None


def check_int_array(name: str, value: Any, *, low: int | None = None, high: int | None = None) -> np.ndarray:
    """Check an integer or an array of integers (integral floats pass) in ``[low, high]``; return int64.

    ``high`` defaults to (and can never exceed) the int64 maximum, so that no size wraps around
    on its conversion. Booleans are not integers.

    Examples
    --------
    >>> check_int_array("ns", [50, 500.0], low=1).tolist()
    [50, 500]
    >>> check_int_array("ns", [50, 1.5], low=1)
    Traceback (most recent call last):
    ...
    ValueError: ns must hold integers >= 1; got [50, 1.5]
    """
    bounded = high is not None
    high = INT_MAX if high is None else min(int(high), INT_MAX)
    allowed = _int_range_text(low, high if bounded else None)
    exact = _integer_array(value)
    if exact is not None:                      # integers compare exactly (a float64 detour rounds above 2**53)
        if (low is not None and np.any(exact < low)) or np.any(exact > high):
            raise ValueError(f"{name} must hold integers{allowed}; got {_show(value)}")
        return exact.astype(np.int64)
    arr = check_real(name, value)
    if np.isinf(arr).any() or not np.all(arr == np.floor(arr)) or \
            (low is not None and np.any(arr < low)) or np.any(arr > float(high)) or \
            (not bounded and np.any(arr >= 2.0**63)):
        raise ValueError(f"{name} must hold integers{allowed}; got {_show(value)}")
    return np.asarray(arr).astype(np.int64)


def _int_range_text(low, high) -> str:
    """" >= 1", " in [0, 10]" or "" -- never the int64 maximum as a float."""
    if low is None and high is None:
        return ""
    if high is None:
        return f" >= {int(low)}"
    if low is None:
        return f" <= {int(high)}"
    return f" in [{int(low)}, {int(high)}]"


def check_instance(name: str, value: Any, cls: type, public: str, *, default: Any = None) -> Any:
    """``value`` if it is a ``cls`` (``None`` gives ``default`` when one is given), else a TypeError naming ``name``.

    ``public`` is how the message names the class: its public path and, in brackets, what it holds.

    Examples
    --------
    >>> check_instance("table", None, tuple, "tuple", default=(1, 2))
    (1, 2)
    """
    if value is None and default is not None:
        return default
    if not isinstance(value, cls):
        either = " or None" if default is not None else ""
        raise TypeError(f"{name} must be a {public}{either}; got {value!r:.60}")
    return value


def check_flag(name: str, value: Any) -> bool:
    """Check a boolean flag (True or False, numpy booleans included; nothing else passes as true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {_show(value)}")
    return bool(value)


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Check that ``value`` is one of ``choices``."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}; got {_show(value)}")
    return value


def check_rng(seed: Any = None, *, name: str = "seed") -> np.random.Generator:
    """Normalize ``seed`` to a :class:`numpy.random.Generator`.

    Accepts ``None``, an int, a :class:`numpy.random.SeedSequence`, a bit
    generator or a ``Generator`` (returned as is), like
    :func:`numpy.random.default_rng`.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool):
        raise TypeError(f"{name} must be None, an int >= 0, a SeedSequence or a numpy Generator; got {seed!r}")
    if isinstance(seed, numbers.Integral) and seed < 0:
        raise ValueError(f"{name} must be a non-negative integer; got {seed!r}")
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must be None, an int >= 0, a SeedSequence or a numpy Generator; got {_show(seed)}"
        ) from None


def check_root_seed(seed: Any, *, name: str = "seed", allow_none: bool = True) -> int | None:
    """An integer root seed (``seed + k`` for the k-th panel or run) from any accepted seed.

    An int >= 0 (integral floats included) as is, ``None`` (when allowed) stays; a ``SeedSequence``
    gives its first 63-bit state word, a ``Generator`` (or bit generator) one integer drawn from it.

    Examples
    --------
    >>> check_root_seed(3), check_root_seed(3.0), check_root_seed(None)
    (3, 3, None)
    >>> check_root_seed(np.random.default_rng(1)) == check_root_seed(np.random.default_rng(1))
    True
    >>> check_root_seed(True)
    Traceback (most recent call last):
    ...
    TypeError: seed must be None, an int >= 0, a SeedSequence or a numpy Generator; got True
    """
    allowed = ("None, " if allow_none else "") + "an int >= 0, a SeedSequence or a numpy Generator"
    if seed is None and allow_none:
        return None
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.generate_state(1, np.uint64)[0] >> np.uint64(1))
    if isinstance(seed, np.random.BitGenerator):
        seed = np.random.Generator(seed)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Real):
        raise TypeError(f"{name} must be {allowed}; got {_show(seed)}")
    return check_int(name, seed, low=0)


def check_mean(mu: Any, d: int, *, name: str = "mu") -> np.ndarray:
    """Check a mean vector of length ``d`` (``None`` means the zero vector)."""
    check_allocation("the mean vector (d values)", d, name="d")
    if mu is None:
        return np.zeros(d)
    arr = check_real(name, mu)
    arr = np.atleast_1d(np.asarray(arr, dtype=float))
    if arr.shape != (d,):
        raise ValueError(f"{name} must be a vector of length d={d}; got shape {arr.shape}")
    return arr


def check_covariance(Sigma: Any, d: int, *, name: str = "Sigma") -> np.ndarray:
    """Check a symmetric positive-definite ``d x d`` matrix (``None`` means the identity)."""
    if Sigma is None:
        check_allocation("the identity covariance (d x d values)", float(d) * d, name="d")
        return np.eye(d)
    arr = np.asarray(check_real(name, Sigma), dtype=float)
    if arr.shape != (d, d):
        raise ValueError(f"{name} must be a {d}x{d} matrix (d={d}); got shape {arr.shape}")
    if not np.allclose(arr, arr.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"{name} must be symmetric positive definite; got a non-symmetric matrix")
    eig = np.linalg.eigvalsh(arr)
    # positive definite to working precision: a smallest eigenvalue within rounding of
    # zero (relative to the largest) makes Sigma^-1 and the Mahalanobis error meaningless
    if not eig[0] > d * np.finfo(float).eps * abs(eig[-1]):
        raise ValueError(f"{name} must be symmetric positive definite; its smallest eigenvalue is "
                         f"{eig[0]:.3g} (largest {eig[-1]:.3g})")
    try:
        np.linalg.cholesky(arr)
    except np.linalg.LinAlgError:  # pragma: no cover - excluded by the eigenvalue test
        raise ValueError(f"{name} must be symmetric positive definite; its smallest eigenvalue is "
                         f"{eig[0]:.3g}") from None
    return arr


#: Largest array (bytes) that one call may allocate; a request beyond is refused before any work.
MAX_ARRAY_BYTES = 2**32


def check_allocation(what: str, count: Any, *, name: str, itemsize: int = 8) -> None:
    """Refuse, up front, an array of ``count`` items that cannot fit in memory (issue 16).

    ``count`` is a product of sizes as a Python int or float; beyond :data:`MAX_ARRAY_BYTES` (4.3 GB) a
    ``ValueError`` names the parameter ``name``, instead of a ``MemoryError`` (or swapping) inside numpy.

    Examples
    --------
    >>> check_allocation("the records of a round (n*d normals)", 10**6, name="n")
    >>> check_allocation("the mean-field path (T + 1 values)", 10**10, name="T")
    Traceback (most recent call last):
    ...
    ValueError: T is too large: the mean-field path (T + 1 values) would need 80 GB, more than the 4.3 GB one call may allocate
    """
    nbytes = float(count) * itemsize
    if not nbytes <= MAX_ARRAY_BYTES:
        raise ValueError(f"{name} is too large: {what} would need {nbytes / 1e9:.3g} GB, "
                         f"more than the {MAX_ARRAY_BYTES / 1e9:.2g} GB one call may allocate")


def check_array_size(what: str, *, itemsize: int = 8, **sizes: Any) -> None:
    """Refuse, up front, an array whose item count is the product of the named (already checked) sizes.

    :func:`check_allocation` on the product, naming the largest factor (ties: the first named), so that
    ``d=10**12`` is reported as ``d`` and not as the ``n`` beside it.

    Examples
    --------
    >>> check_array_size("the records (n x (d + 1) normals)", n=1000, d=13)
    >>> check_array_size("the records (n x (d + 1) normals)", n=3, d=10**12 + 1)
    Traceback (most recent call last):
    ...
    ValueError: d is too large: the records (n x (d + 1) normals) would need 2.4e+04 GB, more than the 4.3 GB one call may allocate
    """
    count = 1.0
    for value in sizes.values():
        count *= float(value)
    if not count * itemsize <= MAX_ARRAY_BYTES:
        name = max(sizes, key=lambda k: float(sizes[k]))
        check_allocation(what, count, name=name, itemsize=itemsize)


def check_population(name: str, value: Any) -> np.ndarray:
    """A population size (or an array of them) of the mean field: a float array of values in [0, inf].

    0 (a population that died out) and ``inf`` (an overflowed uncapped one) pass; the rest is refused as
    :func:`check_real` does. One comparison for the engine's numeric arrays.

    Examples
    --------
    >>> check_population("n", [0, 10, np.inf]).tolist()
    [0.0, 10.0, inf]
    >>> check_population("n", -1)
    Traceback (most recent call last):
    ...
    ValueError: n must be in [0, inf]; got -1
    """
    if isinstance(value, (np.ndarray, np.floating, np.integer, float, int)) and not isinstance(value, (bool, np.bool_)):
        arr = np.asarray(value)
        if arr.dtype.kind in "fiu" and bool(np.all(arr >= 0)):
            return arr.astype(float, copy=False)
    return np.asarray(check_real(name, value, low=0, allow_inf=True), dtype=float)


def check_shape(name: str, value: Any, *, trailing: int = 1) -> tuple:
    """Check a batch shape: a tuple (or list) of whole sizes >= 0 whose array, with ``trailing`` numbers per
    element, fits in memory; return it as a tuple of ``int``.

    Examples
    --------
    >>> check_shape("batch", [2, 3.0])
    (2, 3)
    >>> check_shape("batch", 5)
    Traceback (most recent call last):
    ...
    TypeError: batch must be a shape (a tuple of sizes >= 0); got 5
    """
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a shape (a tuple of sizes >= 0); got {_show(value)}")
    shape = tuple(check_int(name, size, low=0) for size in value)
    count = float(trailing)
    for size in shape:
        count *= float(size)
    check_allocation(f"an array of shape {name} x {trailing}", count, name=name)
    return shape


def check_bracket(bracket: Any, *, name: str = "bracket", within: tuple[float, float] | None = None,
                  what: str | None = None) -> tuple[float, float]:
    """Check a search interval ``(low, high)`` with ``0 < low < high < inf``; return it as floats.

    ``within=(a, b)`` also requires ``a <= low`` and ``high <= b`` (the range
    of the searched parameter, named ``what`` in the message).

    Examples
    --------
    >>> check_bracket([0.01, 1000])
    (0.01, 1000.0)
    >>> check_bracket([1e-300, 1e3], within=(1e-100, 1e100), what="gamma")
    Traceback (most recent call last):
    ...
    ValueError: bracket must be a pair (low, high) with 1e-100 <= low < high <= 1e+100 (the range of gamma); got [1e-300, 1000.0]
    """
    try:
        items = list(bracket) if not isinstance(bracket, (str, bytes)) else None
    except TypeError:
        items = None
    if items is None or any(isinstance(b, (bool, np.bool_)) or not isinstance(b, numbers.Real) for b in items):
        raise TypeError(f"{name} must be a pair (low, high) of numbers; got {_show(bracket)}")
    if len(items) != 2:
        raise ValueError(f"{name} must be a pair (low, high) with 0 < low < high; got {_show(bracket)}")
    lo, hi = float(items[0]), float(items[1])
    if not (0 < lo < hi < np.inf):
        raise ValueError(f"{name} must be a pair (low, high) with 0 < low < high < inf; got {_show(bracket)}")
    if within is not None and not (within[0] <= lo and hi <= within[1]):
        of = f" (the range of {what})" if what else ""
        raise ValueError(f"{name} must be a pair (low, high) with {_num_text(within[0])} <= low < high <= "
                         f"{_num_text(within[1])}{of}; got {_show(bracket)}")
    return lo, hi


def check_same_shape(**arrays: Any) -> tuple:
    """Check that the named arrays broadcast together; return the broadcast shape."""
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        names = list(arrays)
        both = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        raise ValueError(f"{both} must broadcast together; got shapes {shapes}") from None


def check_path(name: str, value: Any, *, file: bool = False):
    """Check a file-system path (``str`` or ``os.PathLike``); ``file=True``: an existing file. Returns a Path.

    Examples
    --------
    >>> check_path("path", 3)
    Traceback (most recent call last):
    ...
    TypeError: path must be a path (str or pathlib.Path); got 3
    """
    import os
    from pathlib import Path

    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or pathlib.Path); got {_show(value)}")
    path = Path(value)
    if file and not path.is_file():
        raise ValueError(f"{name} must be an existing file; got {_show(str(path))}")
    return path


#: Most workers one call may ask for (joblib starts that many processes, whatever the cores).
MAX_JOBS = 1024


def check_n_jobs(n_jobs: Any, *, name: str = "n_jobs") -> int | None:
    """Check a number of workers: ``None`` (joblib's default), ``-1`` (every core) or an int in [1, 1024].

    Examples
    --------
    >>> check_n_jobs(None), check_n_jobs(-1), check_n_jobs(2.0)
    (None, -1, 2)
    >>> check_n_jobs(0)
    Traceback (most recent call last):
    ...
    ValueError: n_jobs must be None, -1 (every core) or an integer in [1, 1024]; got 0
    """
    allowed = f"None, -1 (every core) or an integer in [1, {MAX_JOBS}]"
    if n_jobs is None:
        return None
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Real):
        raise TypeError(f"{name} must be {allowed}; got {_show(n_jobs)}")
    if not (np.isfinite(n_jobs) and float(n_jobs) == int(n_jobs)) or not (int(n_jobs) == -1 or
                                                                             1 <= int(n_jobs) <= MAX_JOBS):
        raise ValueError(f"{name} must be {allowed}; got {_show(n_jobs)}")
    return int(n_jobs)


def check_order(small_name: str, small: Any, large_name: str, large: Any) -> None:
    r"""Check ``small <= large`` for two already validated numbers (e.g. :math:`n0 \le \mathrm{cap}`).

    The message names both parameters and both values, since either may be the wrong one.
    """
    if not small <= large:
        raise ValueError(f"{large_name} must be >= {small_name}; got {large_name}={_show(large)}, "
                         f"{small_name}={_show(small)}")
