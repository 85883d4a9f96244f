"""scipy.ndimage's functions on an OpenCL device, with scipy's signatures, defaults, result types and exceptions.

Each function runs one of cliper's operations (``cliper.chain::DEFINITIONS``, the same definitions the command
line and pipeline files read) by name; this file only says how scipy's arguments become that operation's
parameters. numpy arrays in give numpy arrays out (in the input's type, or ``output``'s, as scipy); device arrays
(:class:`cliper.ndarray`) in give device arrays out, without a copy to the host.

Where scipy computes in float64, cliper computes integer and float64 inputs in float64 and float32 inputs in
float32 (the difference is within float32's rounding). docs/python.md lists what differs from scipy, and why.

>>> import numpy as np, scipy.ndimage
>>> from cliper import ndimage
>>> x = np.random.default_rng(1).random((31, 45))
>>> np.allclose(ndimage.gaussian_filter(x, 1.5), scipy.ndimage.gaussian_filter(x, 1.5), atol=1e-12)
True
"""

import itertools
import numbers
import operator
import os
import tempfile
import threading
import warnings
from collections.abc import Iterable

import numpy as np

from ._array import asarray, device_dtype, ndarray
from ._ops import run
from ._fourier import fourier_ellipsoid, fourier_gaussian, fourier_shift, fourier_uniform
from ._measurements import (
    center_of_mass,
    extrema,
    find_objects,
    histogram,
    labeled_comprehension,
    maximum,
    maximum_position,
    mean,
    median,
    minimum,
    minimum_position,
    standard_deviation,
    sum,
    sum_labels,
    value_indices,
    variance,
)

__all__ = [
    "affine_transform",
    "binary_closing",
    "binary_dilation",
    "binary_erosion",
    "binary_fill_holes",
    "binary_opening",
    "black_tophat",
    "center_of_mass",
    "convolve",
    "convolve1d",
    "correlate",
    "correlate1d",
    "distance_transform_bf",
    "distance_transform_cdt",
    "distance_transform_edt",
    "extrema",
    "find_objects",
    "fourier_ellipsoid",
    "fourier_gaussian",
    "fourier_shift",
    "fourier_uniform",
    "gaussian_filter",
    "gaussian_filter1d",
    "gaussian_gradient_magnitude",
    "gaussian_laplace",
    "generate_binary_structure",
    "generic_filter",
    "grey_closing",
    "grey_dilation",
    "grey_erosion",
    "grey_opening",
    "histogram",
    "iterate_structure",
    "label",
    "labeled_comprehension",
    "laplace",
    "map_coordinates",
    "maximum",
    "maximum_filter",
    "maximum_filter1d",
    "maximum_position",
    "mean",
    "median",
    "median_filter",
    "minimum",
    "minimum_filter",
    "minimum_filter1d",
    "minimum_position",
    "morphological_gradient",
    "morphological_laplace",
    "percentile_filter",
    "prewitt",
    "rank_filter",
    "rotate",
    "shift",
    "sobel",
    "spline_filter",
    "spline_filter1d",
    "standard_deviation",
    "sum",
    "sum_labels",
    "uniform_filter",
    "uniform_filter1d",
    "value_indices",
    "variance",
    "watershed_ift",
    "white_tophat",
    "zoom",
]

_FILTER_MODES = ("reflect", "constant", "nearest", "mirror", "wrap", "grid-constant", "grid-mirror", "grid-wrap")
_INTERP_MODES = _FILTER_MODES


# ---------------------------------------------------------------------------------------------------------------
# scipy's argument rules


def _normalize_sequence(value, rank):
    """One value per axis: a scalar repeated, or a sequence of exactly ``rank`` (scipy's RuntimeError otherwise)."""
    if isinstance(value, str) or not np.iterable(value):  # a 0-d array is a scalar too
        return [value] * rank
    values = list(value)
    if len(values) != rank:
        raise RuntimeError("sequence argument must have length equal to input rank")
    return values


def _check_axes(axes, ndim):
    """scipy's axes: None is every axis; integers (``operator.index``: a float is scipy's TypeError), negative
    from the end, each once and in range (scipy's ValueErrors, in its words, otherwise)."""
    if axes is None:
        return tuple(range(ndim))
    if np.isscalar(axes):
        axes = (axes,)
    elif not isinstance(axes, Iterable):
        raise ValueError("axes must be an integer, iterable of integers, or None")
    normalized = []
    for axis in axes:
        axis = operator.index(axis)
        if not -ndim <= axis < ndim:
            raise ValueError(f"specified axis: {axis} is out of range")
        normalized.append(axis % ndim)
    if len(set(normalized)) != len(normalized):
        raise ValueError("axes must be unique")
    return tuple(normalized)


def _check_mode(mode, allowed=_FILTER_MODES):
    if mode not in allowed:
        raise RuntimeError("boundary mode not supported")
    return mode


def _origins(origin, rank, lengths):
    """One origin per axis, each inside its filter (scipy's ValueError otherwise)."""
    origins = [int(o) for o in _normalize_sequence(origin, rank)]
    for o, n in zip(origins, lengths):
        if not (-(n // 2) <= o <= (n - 1) // 2):
            raise ValueError("invalid origin")
    return origins


def _input(input, complex_ok=True):
    """The input as a device array, and what scipy would return for it: its dtype, and whether it came from the
    device (then the result stays there)."""
    if isinstance(input, ndarray):
        return input, input.dtype, True
    host = np.asarray(input)
    if host.dtype.kind == "c" and not complex_ok:
        raise TypeError("Complex type not supported")
    if host.dtype.kind not in "biufc":
        raise RuntimeError("array type not supported")
    return asarray(host), host.dtype, False


def _deliver(result, dtype, output, on_device, rounds=False):
    """The result as scipy returns it: in ``dtype`` (the input's) or ``output``'s type, or written into
    ``output`` (a numpy array of the result's shape); integers by C's conversion (truncation), or rounded to the
    nearest for interpolation (``rounds``), as scipy's C code does."""
    if output is None and on_device:
        return result
    if isinstance(output, ndarray):
        raise TypeError("output= cannot be a cliper.ndarray: the result is a new device array")
    target = output if isinstance(output, np.ndarray) else None
    if target is not None:
        dtype = target.dtype
        if target.shape != result.shape:
            raise RuntimeError("output shape not correct")
    elif output is not None:
        dtype = np.dtype(output)
    values = result.get()
    values = _cast(values, dtype, rounds)
    if target is not None:
        np.copyto(target, values, casting="unsafe")
        return target
    return asarray(values, result.device) if on_device else values


def _cast(values, dtype, rounds):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu" and values.dtype.kind == "f":
        if rounds:
            values = np.where(values > 0, values + 0.5, values - 0.5)
        return _wrapped(values, dtype)
    if dtype.kind == "b":
        # scipy's C code stores a real into a bool as into an unsigned char: truncated (the interpolations round
        # only integer types, not bool), so only a magnitude of at least 1 is True; NaN converts to 0 on the
        # platforms numpy runs on.
        if values.dtype.kind in "fc":
            return np.abs(values) >= 1.0
        return values != 0
    if dtype.kind != "c" and values.dtype.kind == "c":
        raise RuntimeError("output type not compatible with complex input: complex values in a real output")
    return values.astype(dtype, copy=False)


def _wrapped(values, dtype):
    """Reals as integers of ``dtype`` as scipy's C code writes them on every platform numpy runs on: truncated
    to a 64-bit integer, then wrapped modulo the type's range (numpy's own conversion of a value out of range is
    undefined). uint64 takes its upper half from the reals themselves."""
    with np.errstate(invalid="ignore"):
        wide = values.astype(np.int64)
        if dtype == np.uint64:
            return np.where(values >= 2.0**63, values.astype(np.uint64), wide.astype(np.uint64))
        return wide.astype(dtype)


def _permute(x, order):
    if list(order) == list(range(x.ndim)):
        return x
    return run("permute", [x], {"axes": list(order)})


def _over_axes(x, axes, compute):
    """``compute(y)`` on ``x`` with ``axes`` moved last (in their order): the operations span the trailing axes
    (their ``rank``); the result's axes are put back."""
    order = [a for a in range(x.ndim) if a not in axes] + list(axes)
    if order == list(range(x.ndim)):
        return compute(x)  # already last: the common call does no permutation at all
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return _permute(compute(_permute(x, order)), inverse)


class _Files:
    """Array parameters (weights, footprints, structures) as the .npy files an operation's definition reads,
    in a private folder made on the first file (a call without one touches no disk) and removed afterwards."""

    _count = itertools.count()

    def __init__(self):
        self.folder = None

    def __enter__(self):
        return self

    def add(self, array):
        if self.folder is None:
            self.folder = tempfile.mkdtemp(prefix="cliper-")
        path = os.path.join(self.folder, f"{next(self._count)}-{threading.get_ident()}.npy")
        np.save(path, np.ascontiguousarray(array))
        return path

    def __exit__(self, *exc):
        if self.folder is not None:
            for entry in os.listdir(self.folder):
                os.remove(os.path.join(self.folder, entry))
            os.rmdir(self.folder)
        return False


def _csv(values):
    return ",".join(repr(float(v)) for v in values)


# ---------------------------------------------------------------------------------------------------------------
# Correlation and convolution


def _weights(weights):
    """The weights as the device reads them: float64, or complex128 when complex."""
    w = np.asarray(weights)
    if w.dtype.kind == "c":
        return w.astype(np.complex128)
    if w.dtype.kind not in "biuf":
        raise RuntimeError("array type not supported")
    return w.astype(np.float64)


def _centred(w, origins):
    """Weights whose centre (scipy's ``size // 2``) is where ``origins`` put it: zeros added on one side, so a
    correlation without origin equals scipy's with it."""
    pads = []
    for n, o in zip(w.shape, origins):
        centre = n // 2 + o
        # Padded by (left, right), the centre index (n + left + right) // 2 is centre + left.
        pads.append((max(0, n - 1 - 2 * centre), max(0, 2 * centre - n)))
    return np.pad(w, pads)


def _complex_output(output):
    """scipy's rule for an ``output`` of a complex result: a real type given as a type is promoted to complex
    (with scipy's warning); a real type given by name, or a real array, is refused."""
    if output is None:
        return None
    if isinstance(output, (type, np.dtype)):
        if np.dtype(output).kind != "c":
            warnings.warn("promoting specified output dtype to complex", stacklevel=4)
            return np.promote_types(output, np.complex64)
        return output
    kind = np.dtype(output).kind if isinstance(output, str) else np.asarray(output).dtype.kind
    if kind != "c":
        raise RuntimeError("output must have complex dtype")
    return output


def _by_increasing_axis(origin, axes):
    """scipy lays weights over ``axes`` in increasing order but takes the origins in the order ``axes`` names
    them: the origins reordered to go with the sorted axes, and those axes."""
    origins = _normalize_sequence(origin, len(axes))
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    return [operator.index(origins[i]) for i in order], tuple(sorted(axes))


def _correlate(input, weights, output, mode, cval, origin, axes, convolution=False):
    """The correlation of ``input`` with ``weights`` (complex ones already conjugated by the caller), or the
    convolution, over ``axes``, with scipy's checks in scipy's order and its result types (complex when either
    is complex)."""
    if not isinstance(mode, str) and isinstance(mode, Iterable):
        raise RuntimeError("A sequence of modes is not supported")
    _check_mode(mode)
    w = _weights(weights)
    x, dtype, on_device = _input(input)
    if w.dtype.kind == "c" or x.dtype.kind == "c":
        if np.iscomplexobj(cval) and x.dtype.kind != "c":
            raise ValueError("Cannot provide a complex-valued cval when the input is real.")
        output = _complex_output(output)
        dtype = np.promote_types(dtype, np.complex64)
    axes = _check_axes(axes, x.ndim)
    if w.ndim != len(axes):
        raise RuntimeError(f"weights.ndim ({w.ndim}) must match len(axes) ({len(axes)})")
    if w.size == 0:
        raise RuntimeError("no filter weights given")
    origins, axes = _by_increasing_axis(origin, axes)
    if convolution:
        origins = _convolution_origins(origins, w.shape)
        w = w[tuple(slice(None, None, -1) for _ in range(w.ndim))]
    w = _centred(w, _origins(origins, len(axes), w.shape))
    if np.imag(cval) != 0 and mode in ("constant", "grid-constant"):
        result = _complex_cval_correlation(x, w, mode, cval, axes)
    else:
        result = _device_correlation(x, w, mode, float(np.real(cval)), axes)
    return _deliver(result, dtype, output, on_device)


def _device_correlation(x, w, mode, cval, axes):
    """One correlation on the device (``w`` centred, over ``axes``); complex weights on a real input make the
    input complex first, as the device correlates arrays of one type."""
    if w.dtype.kind == "c" and x.dtype.kind != "c":
        x = asarray(np.asarray(x.get(), dtype=np.result_type(x.dtype, np.complex64)), x.device)
    if w.dtype.kind == "c" and x.dtype == np.complex64:
        w = w.astype(np.complex64)
    with _Files() as files:
        params = {"kernel": files.add(w), "mode": "corr", "border": mode, "value": cval}
        return _over_axes(x, axes, lambda y: run("convolve", [y], params))


def _complex_cval_correlation(x, w, mode, cval, axes):
    """A complex input padded with a complex ``cval``: the real part padded with its real part, the imaginary
    part with its imaginary part, as scipy does. The device's border value is real, so the two parts are split
    and joined on the host (docs/python.md)."""
    host = x.get()
    real = _device_correlation(asarray(host.real.copy(), x.device), w, mode, float(np.real(cval)), axes).get()
    imag = _device_correlation(asarray(host.imag.copy(), x.device), w, mode, float(np.imag(cval)), axes).get()
    return asarray(real + 1j * imag, x.device)


def correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.correlate: the multidimensional correlation with ``weights`` (complex weights conjugated,
    as numpy.correlate and scipy do).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.arange(35.0).reshape(5, 7); w = np.array([[0, 1, 0], [1, -4, 1], [0, 2, 0]])
    >>> np.allclose(ndimage.correlate(x, w, mode="nearest"), scipy.ndimage.correlate(x, w, mode="nearest"))
    True
    >>> wc = np.array([[1, 0], [0, 1 + 1j]])
    >>> np.allclose(ndimage.correlate(x, wc), scipy.ndimage.correlate(x, wc))
    True
    """
    w = np.asarray(weights)
    return _correlate(input, w.conj() if w.dtype.kind == "c" else w, output, mode, cval, origin, axes)


def _convolution_origins(origin, shape):
    """scipy's origins of a convolution as those of the correlation with the flipped weights: negated, and one
    less along even sizes (whose centre moves with the flip)."""
    return [-o - 1 if n % 2 == 0 else -o for o, n in zip(origin, shape)]


def convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.convolve: the multidimensional convolution with ``weights`` (a correlation with the weights
    reversed, scipy's origin rule for even sizes included).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.arange(24.0).reshape(4, 6); w = np.array([[1, 2], [3, 4]])
    >>> np.allclose(ndimage.convolve(x, w, mode="constant"), scipy.ndimage.convolve(x, w, mode="constant"))
    True
    """
    return _correlate(input, np.asarray(weights), output, mode, cval, origin, axes, convolution=True)


def _weights1d(weights):
    """1-D weights, checked as scipy checks them (complex ones before the shape)."""
    w = np.asarray(weights)
    if w.dtype.kind != "c" and (w.ndim != 1 or w.shape[0] < 1):
        raise RuntimeError("no filter weights given")
    return w


def correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.correlate1d: the correlation with ``weights`` along one axis.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.arange(12.0).reshape(3, 4)
    >>> np.allclose(ndimage.correlate1d(x, [1, 2, 4], axis=0), scipy.ndimage.correlate1d(x, [1, 2, 4], axis=0))
    True
    """
    w = _weights1d(weights)
    return _correlate(input, w.conj() if w.dtype.kind == "c" else w, output, mode, cval, origin, _axis(axis, input))


def convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.convolve1d: the convolution with ``weights`` along one axis.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.arange(8.0)
    >>> np.allclose(ndimage.convolve1d(x, [1, 2]), scipy.ndimage.convolve1d(x, [1, 2]))
    True
    """
    return _correlate(input, _weights1d(weights), output, mode, cval, origin, _axis(axis, input), convolution=True)


def _axis(axis, input):
    """A 1-D function's ``axis`` (scipy's message for one out of range)."""
    ndim = input.ndim if isinstance(input, ndarray) else np.ndim(input)
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return (axis % ndim,)


# ---------------------------------------------------------------------------------------------------------------
# Smoothing and derivatives


def _gaussian_kernel1d(sigma, order, radius):
    """scipy's 1-D Gaussian (derivative) weights of ``radius``: exp(-x²/2σ²) normalised, times the polynomial of
    the derivative of ``order``."""
    if order < 0:
        raise ValueError("order must be non-negative")
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    phi = np.exp(-0.5 / (sigma * sigma) * x**2)
    phi /= phi.sum()
    if order == 0:
        return phi
    # d^n/dx^n of exp(-x²/2σ²) = q_n(x) · exp(…), with q_0 = 1 and q_{n+1} = q_n' − x q_n / σ².
    q = np.zeros(order + 1)
    q[0] = 1.0
    derivative = np.diag(np.arange(1, order + 1), 1)
    shift = np.diag(np.ones(order), -1) / -(sigma * sigma)
    for _ in range(order):
        q = derivative.dot(q) + shift.dot(q)
    return (x[:, None] ** np.arange(order + 1)).dot(q) * phi


def gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *, radius=None):
    """scipy.ndimage.gaussian_filter1d.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.gaussian_filter1d(x, 2.0, axis=0, order=1)
    >>> np.allclose(ndimage.gaussian_filter1d(x, 2.0, axis=0, order=1), expected)
    True
    """
    return gaussian_filter(input, sigma, order, output, mode, cval, truncate, radius=radius, axes=(axis,))


def gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *, radius=None, axes=None):
    """scipy.ndimage.gaussian_filter: Gaussian smoothing (or its derivatives of ``order``) over ``axes``.

    With scipy's truncation (4σ), one mode and no ``radius`` it is cliper's ``gaussian-filter`` operation;
    otherwise the separable passes of scipy's own weights, one correlation per axis.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((20, 30))
    >>> expected = scipy.ndimage.gaussian_filter(x, (1, 2), order=(0, 1))
    >>> np.allclose(ndimage.gaussian_filter(x, (1, 2), order=(0, 1)), expected)
    True
    """
    x, dtype, on_device = _input(input)
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    sigmas = [float(s) for s in _normalize_sequence(sigma, n)]
    orders = [int(o) for o in _normalize_sequence(order, n)]
    modes = [_check_mode(m) for m in _normalize_sequence(mode, n)]
    radii = _normalize_sequence(radius, n)
    if any(r is not None and (not isinstance(r, numbers.Integral) or r < 0) for r in radii):
        raise ValueError("Radius must be a nonnegative integer.")
    chosen = [(a, s, o, m, r) for a, s, o, m, r in zip(axes, sigmas, orders, modes, radii) if s > 1e-15]
    if any(o < 0 for o in orders):
        raise ValueError("order must be non-negative")
    if not chosen:
        return _deliver(x, dtype, output, on_device)
    uniform = len({m for _, _, _, m, _ in chosen}) == 1 and all(r is None for *_, r in chosen) and truncate == 4.0
    if uniform and len(chosen) <= 3:
        params = {
            "sigma": _csv(s for _, s, _, _, _ in chosen),
            "order": ",".join(str(o) for _, _, o, _, _ in chosen),
            "border": chosen[0][3],
            "value": float(cval),
            "rank": len(chosen),
        }
        result = _over_axes(x, [a for a, *_ in chosen], lambda y: run("gaussian-filter", [y], params))
        return _deliver(result, dtype, output, on_device)
    result = x
    for a, s, o, m, r in chosen:
        r = int(truncate * s + 0.5) if r is None else int(r)
        if r < 0:
            raise ValueError("Radius must be a nonnegative integer.")
        weights = _gaussian_kernel1d(s, o, r)[::-1]
        result = correlate1d(result, weights, a, None, m, cval)
    return _deliver(result, dtype, output, on_device)


def uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.uniform_filter1d: the mean over ``size`` samples along one axis.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.uniform_filter1d(x, 4, mode="nearest")
    >>> np.allclose(ndimage.uniform_filter1d(x, 4, mode="nearest"), expected)
    True
    """
    if size < 1:
        raise RuntimeError("incorrect filter size")
    return uniform_filter(input, size, output, mode, cval, origin, axes=(axis,))


def uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.uniform_filter: the mean over a ``size`` window.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((17, 23))
    >>> np.allclose(ndimage.uniform_filter(x, 5, mode="wrap"), scipy.ndimage.uniform_filter(x, 5, mode="wrap"))
    True
    """
    x, dtype, on_device = _input(input)
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    sizes = [int(s) for s in _normalize_sequence(size, n)]
    # scipy filters only along the axes whose size is above one: a size of 0 or 1 leaves an axis as it is.
    origins = [_origins([o], 1, [s])[0] if s > 1 else 0 for o, s in zip(_normalize_sequence(origin, n), sizes)]
    modes = [_check_mode(m) for m in _normalize_sequence(mode, n)]
    chosen = [(a, s, o, m) for a, s, o, m in zip(axes, sizes, origins, modes) if s > 1]
    if not chosen:
        return _deliver(x, dtype, output, on_device)
    same = len({(s, o, m) for _, s, o, m in chosen}) == 1 and chosen[0][2] == 0 and len(chosen) <= 3
    # scipy sums the window, then divides by its size: a window of equal integers gives that integer exactly,
    # where the sum of weights 1/size rounds below it (0.9999999999999999 for six ones), which an integer result
    # truncates to one less. So the device sums with weights of one and divides after.
    if same and x.dtype.kind != "c":
        n = chosen[0][1]
        ones = np.ones([n] * len(chosen))
        total = _device_correlation(x, ones, chosen[0][3], float(cval), tuple(a for a, *_ in chosen))
        return _deliver(total / float(n ** len(chosen)), dtype, output, on_device)
    result = x
    for a, s, o, m in chosen:
        if x.dtype.kind == "c":  # the device's division is real: complex inputs keep weights of 1/size
            result = correlate1d(result, np.full(s, 1.0 / s), a, None, m, cval, o)
        else:
            result = correlate1d(result, np.ones(s), a, None, m, cval, o) / float(s)
    return _deliver(result, dtype, output, on_device)


_SMOOTHING = {"sobel": [1.0, 2.0, 1.0], "prewitt": [1.0, 1.0, 1.0]}


def _derivative(name, input, axis, output, mode, cval):
    """sobel or prewitt: the device's ``derivative`` operation with one mode; with a mode per axis (scipy's
    sequence), scipy's own separable passes, [-1, 0, 1] along ``axis`` and the smoothing along the others."""
    x, dtype, on_device = _input(input)
    (axis,) = _axis(axis, x)
    modes = _normalize_sequence(mode, x.ndim)
    if not on_device and _result_dtype(dtype, output) == np.uint64:
        # scipy writes each pass in the result's type: a negative difference wraps to near 2**64, beyond
        # float64's integers, and the smoothing pass sums those; only the same passes give scipy's numbers.
        target = _result_dtype(dtype, output)
        result = correlate1d(input, [-1.0, 0.0, 1.0], axis, target, modes[axis], cval)
        for other in range(x.ndim):
            if other != axis:
                result = correlate1d(result, _SMOOTHING[name], other, target, modes[other], cval)
        if isinstance(output, np.ndarray):
            np.copyto(output, result)
            return output
        return result
    if len(set(modes)) == 1 and x.ndim <= 3:
        params = {"filter": name, "axis": axis - x.ndim, "border": _check_mode(modes[0]), "value": float(cval)}
        return _deliver(run("derivative", [x], params), dtype, output, on_device)
    result = correlate1d(x, [-1.0, 0.0, 1.0], axis, None, modes[axis], cval)
    for other in range(x.ndim):
        if other != axis:
            result = correlate1d(result, _SMOOTHING[name], other, None, modes[other], cval)
    return _deliver(result, dtype, output, on_device)


def sobel(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """scipy.ndimage.sobel: the Sobel derivative along ``axis`` (smoothing [1, 2, 1] along the others).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.allclose(ndimage.sobel(x, axis=0), scipy.ndimage.sobel(x, axis=0))
    True
    """
    return _derivative("sobel", input, axis, output, mode, cval)


def prewitt(input, axis=-1, output=None, mode="reflect", cval=0.0):
    """scipy.ndimage.prewitt: the Prewitt derivative along ``axis``.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.prewitt(x, mode=["wrap", "constant"])
    >>> np.allclose(ndimage.prewitt(x, mode=["wrap", "constant"]), expected)
    True
    """
    return _derivative("prewitt", input, axis, output, mode, cval)


def laplace(input, output=None, mode="reflect", cval=0.0, *, axes=None):
    """scipy.ndimage.laplace: the sum of second differences [1, -2, 1] over ``axes``.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.allclose(ndimage.laplace(x), scipy.ndimage.laplace(x))
    True
    """
    x, dtype, on_device = _input(input)
    axes = _check_axes(axes, x.ndim)
    modes = _normalize_sequence(mode, len(axes))
    if len(set(modes)) != 1 or not 1 <= len(axes) <= 3:
        result = None
        for a, m in zip(axes, modes):
            term = correlate1d(x, [1.0, -2.0, 1.0], a, None, m, cval)
            result = term if result is None else result + term
        return _deliver(result, dtype, output, on_device)
    params = {"kernel": "laplacian", "border": _check_mode(modes[0]), "value": float(cval), "rank": len(axes)}
    result = _over_axes(x, axes, lambda y: run("convolve", [y], params))
    return _deliver(result, dtype, output, on_device)


def gaussian_laplace(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None, **kwargs):
    """scipy.ndimage.gaussian_laplace: the Laplacian of the Gaussian-smoothed input (the sum over ``axes`` of
    second Gaussian derivatives).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((12, 14))
    >>> np.allclose(ndimage.gaussian_laplace(x, 1.5), scipy.ndimage.gaussian_laplace(x, 1.5))
    True
    """
    x, dtype, on_device = _input(input)
    axes = _check_axes(axes, x.ndim)
    sigmas = _normalize_sequence(sigma, len(axes))
    modes = _normalize_sequence(mode, len(axes))
    if kwargs or len(set(modes)) != 1 or not 1 <= len(axes) <= 3 or not _exact_sum(dtype, output, on_device):

        def term(i):
            orders = [2 if j == i else 0 for j in range(len(axes))]
            return gaussian_filter(x, sigmas, orders, None, modes[i], cval, axes=axes, **kwargs)

        return _summed(term, len(axes), dtype, output, on_device, squared=False)
    params = {"kernel": "log:" + _csv(sigmas), "border": _check_mode(modes[0]), "value": float(cval), "rank": len(axes)}
    result = _over_axes(x, axes, lambda y: run("convolve", [y], params))
    return _deliver(result, dtype, output, on_device)


def gaussian_gradient_magnitude(input, sigma, output=None, mode="reflect", cval=0.0, *, axes=None, **kwargs):
    """scipy.ndimage.gaussian_gradient_magnitude: √Σ (∂/∂axis of the Gaussian-smoothed input)².

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((12, 14))
    >>> np.allclose(ndimage.gaussian_gradient_magnitude(x, 2), scipy.ndimage.gaussian_gradient_magnitude(x, 2))
    True
    """
    x, dtype, on_device = _input(input)
    axes = _check_axes(axes, x.ndim)
    sigmas = _normalize_sequence(sigma, len(axes))
    modes = _normalize_sequence(mode, len(axes))
    one_pass = not kwargs and len(set(modes)) == 1 and 1 <= len(axes) <= 3 and _exact_sum(dtype, output, on_device)
    # A complex input is scipy's sum of squares (not of squared magnitudes): the terms' own path.
    if not one_pass or x.dtype.kind == "c":

        def term(i):
            orders = [1 if j == i else 0 for j in range(len(axes))]
            return gaussian_filter(x, sigmas, orders, None, modes[i], cval, axes=axes, **kwargs)

        return _summed(term, len(axes), dtype, output, on_device, squared=True)
    params = {"derivative": "gaussian:" + _csv(sigmas), "border": _check_mode(modes[0]), "value": float(cval)}
    params["rank"] = len(axes)
    result = _over_axes(x, axes, lambda y: run("gradient-magnitude", [y], params))
    return _deliver(result, dtype, output, on_device)


def _result_dtype(dtype, output):
    """The type scipy writes a result in: ``output``'s (an array's or a type), else the input's."""
    if output is None:
        return np.dtype(dtype)
    return output.dtype if isinstance(output, np.ndarray) else np.dtype(output)


def _exact_sum(dtype, output, on_device):
    """Whether a sum of per-axis terms (scipy's generic_laplace and generic_gradient_magnitude, which write each
    term in the result's type) can be summed in the device's type instead without a difference: when the result
    is in that type (float64, complex128, or a device array's own type)."""
    return on_device or _result_dtype(dtype, output) in (np.float64, np.complex128)


def _summed(term, count, dtype, output, on_device, squared):
    """scipy's generic_laplace (``squared`` False) or generic_gradient_magnitude (True): each term ``term(i)``
    (a device array) in the result's type, squared there, summed there, and the square root taken at the end.
    On the device when the result is in the device's type and real; otherwise the terms come to the host and
    are summed there in the result's type (integers wrap and truncate, float32 rounds, complex squares are
    complex: as scipy's)."""
    target = _result_dtype(dtype, output)
    if _exact_sum(dtype, output, on_device) and target.kind != "c":
        total = None
        for i in range(count):
            t = term(i)
            t = t * t if squared else t
            total = t if total is None else total + t
        return _deliver(total**0.5 if squared else total, dtype, output, on_device)
    total, device = None, None
    for i in range(count):
        computed = term(i)
        device = computed.device
        t = _cast(computed.get(), target, False)
        t = np.multiply(t, t) if squared else t
        total = t if total is None else np.add(total, t, dtype=target, casting="unsafe")
    if squared:
        total = np.sqrt(total)
        total = _cast(total, target, False) if total.dtype != target else total
    if isinstance(output, np.ndarray):
        np.copyto(output, total, casting="unsafe")
        return output
    return asarray(total, device) if on_device else total


# ---------------------------------------------------------------------------------------------------------------
# Rank filters and grey morphology


def _window_files(files, n, size, footprint, structure):
    """The window's keys (``size`` or a ``footprint`` file, and a grey ``structure`` file) and its shape, with
    scipy's checks and messages."""
    params = {}
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=5)
    if structure is not None:
        s = np.asarray(structure, dtype=np.float64)
        if s.ndim != n:
            raise RuntimeError("structure array has incorrect shape")
        params["structure"] = files.add(s)
        shape = s.shape
        if footprint is None:
            params["size"] = list(shape)
    if footprint is not None:
        fp = np.asarray(footprint, dtype=bool)
        if fp.ndim != n:
            raise RuntimeError(f"footprint.ndim ({fp.ndim}) must match len(axes) ({n})")
        if not fp.any():
            raise ValueError("All-zero footprint is not supported.")
        shape = fp.shape
        params["footprint"] = files.add(fp.astype(np.uint8))
    elif structure is None:
        shape = [operator.index(s) for s in _normalize_sequence(size, n)]
        if any(s < 1 for s in shape):
            raise RuntimeError("incorrect filter size")
        params["size"] = shape
    return params, shape


def _window(name, input, size, footprint, output, mode, cval, origin, axes, extra=None, structure=None):
    """A rank filter or grey morphology (``name``, an operation or shortcut) over a ``size`` or ``footprint``
    window (and a grey ``structure``), with one mode for every axis (scipy's rule for non-separable windows)."""
    x, dtype, on_device = _input(input, complex_ok=False)
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    if size is None and footprint is None and structure is None:
        raise RuntimeError("no footprint or filter size provided")
    # scipy lays a footprint (and a rank filter's box) over the axes in increasing order, but takes origins (and
    # a minimum's, maximum's or grey morphology's box sizes: its separable case) in the order ``axes`` names them.
    order = sorted(range(n), key=lambda i: axes[i])
    origin = [_normalize_sequence(origin, n)[i] for i in order]
    if size is not None and name not in ("median", "rank-filter", "percentile", "generic-filter"):
        size = [_normalize_sequence(size, n)[i] for i in order]
    axes = tuple(sorted(axes))
    with _Files() as files:
        params, shape = _window_files(files, n, size, footprint, structure)
        params["origin"] = _origins(origin, n, shape)
        if not isinstance(mode, str) and isinstance(mode, Iterable):
            raise RuntimeError("A sequence of modes is not supported by non-separable rank filters")
        params.update({"border": _check_mode(mode), "value": float(cval), **(extra or {})})
        if x.size == 0:
            return _deliver(x, dtype, output, on_device)
        if n > 3:
            raise RuntimeError(f"{name}: cliper's rank filters span at most 3 axes, not {n}")
        params["rank"] = n
        result = _over_axes(x, axes, lambda y: run(name, [y], params))
    return _deliver(result, dtype, output, on_device)


def _min_or_max(name, input, size, footprint, output, mode, cval, origin, axes):
    """minimum_filter or maximum_filter: a footprint of all ones is a box (scipy's separable case, which takes a
    mode per axis: then one 1-D pass per axis); any other footprint is one window with one mode."""
    if size is None and footprint is None:
        raise RuntimeError("no footprint provided")
    if footprint is not None:
        fp = np.asarray(footprint, dtype=bool)
        if not fp.any():
            raise ValueError("All-zero footprint is not supported.")
        if size is not None:
            warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=3)
        if not fp.all():
            return _window(name, input, None, fp, output, mode, cval, origin, axes)
        size, footprint = fp.shape, None
    if isinstance(mode, str) or not isinstance(mode, Iterable):
        return _window(name, input, size, None, output, mode, cval, origin, axes)
    x, dtype, on_device = _input(input, complex_ok=False)
    axes = _check_axes(axes, x.ndim)
    sizes = [operator.index(s) for s in _normalize_sequence(size, len(axes))]
    origins = _normalize_sequence(origin, len(axes))
    result = x
    for axis, n, o, m in zip(axes, sizes, origins, _normalize_sequence(mode, len(axes))):
        if n > 1:
            result = _window(name, result, n, None, None, m, cval, o, (axis,))
    return _deliver(result, dtype, output, on_device)


def median_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.median_filter.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((19, 21))
    >>> np.array_equal(ndimage.median_filter(x, 3), scipy.ndimage.median_filter(x, 3))
    True
    """
    return _window("median", input, size, footprint, output, mode, cval, origin, axes)


def minimum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.minimum_filter.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.minimum_filter(x, footprint=np.tri(3))
    >>> np.array_equal(ndimage.minimum_filter(x, footprint=np.tri(3)), expected)
    True
    """
    return _min_or_max("minimum", input, size, footprint, output, mode, cval, origin, axes)


def maximum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.maximum_filter.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.maximum_filter(x, (3, 5), mode=["reflect", "wrap"])
    >>> np.array_equal(ndimage.maximum_filter(x, (3, 5), mode=["reflect", "wrap"]), expected)
    True
    """
    return _min_or_max("maximum", input, size, footprint, output, mode, cval, origin, axes)


def minimum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.minimum_filter1d.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.array_equal(ndimage.minimum_filter1d(x, 4, axis=0), scipy.ndimage.minimum_filter1d(x, 4, axis=0))
    True
    """
    if size < 1:
        raise RuntimeError("incorrect filter size")
    return minimum_filter(input, size, None, output, mode, cval, origin, axes=(axis,))


def maximum_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    """scipy.ndimage.maximum_filter1d.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.array_equal(ndimage.maximum_filter1d(x, 3), scipy.ndimage.maximum_filter1d(x, 3))
    True
    """
    if size < 1:
        raise RuntimeError("incorrect filter size")
    return maximum_filter(input, size, None, output, mode, cval, origin, axes=(axis,))


def rank_filter(input, rank, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.rank_filter: the ``rank``-th smallest value under the window (negative from the largest).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.array_equal(ndimage.rank_filter(x, -2, size=3), scipy.ndimage.rank_filter(x, -2, size=3))
    True
    """
    return _window("rank-filter", input, size, footprint, output, mode, cval, origin, axes, {"index": operator.index(rank)})


def percentile_filter(input, percentile, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.percentile_filter.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.percentile_filter(x, 30, size=(3, 5))
    >>> np.array_equal(ndimage.percentile_filter(x, 30, size=(3, 5)), expected)
    True
    """
    return _window("percentile", input, size, footprint, output, mode, cval, origin, axes, {"percentile": float(percentile)})


# numpy's reductions that run on the device as generic_filter's function (by identity: numpy.amin is
# numpy.min's alias, numpy.average without weights is the mean).
_WINDOW_FUNCTIONS = {
    np.sum: "sum",
    np.prod: "prod",
    np.mean: "mean",
    np.average: "mean",
    np.var: "var",
    np.std: "std",
    np.min: "min",
    np.amin: "min",
    np.max: "max",
    np.amax: "max",
    np.ptp: "ptp",
    np.median: "median",
}

# scipy's border modes as numpy.pad's, for generic_filter's host path.
_PAD_MODES = {
    "reflect": "symmetric",
    "grid-mirror": "symmetric",
    "mirror": "reflect",
    "nearest": "edge",
    "wrap": "wrap",
    "grid-wrap": "wrap",
    "constant": "constant",
    "grid-constant": "constant",
}


def generic_filter(input, function, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0,
                   extra_arguments=(), extra_keywords=None, *, axes=None):
    """scipy.ndimage.generic_filter: ``function`` of the values under the window (a float64 1-D array of the
    footprint's values in C order), for every element.

    numpy's reductions — ``np.sum``, ``np.prod``, ``np.mean`` (``np.average``), ``np.var``, ``np.std``,
    ``np.min``/``np.amin``, ``np.max``/``np.amax``, ``np.ptp``, ``np.median`` — without extra arguments run on
    the device (the ``generic-filter`` operation, numpy's rules: NaN through min, max and median, ddof 0, an even
    window's median the mean of its middle pair); a device array in gives a device array out. Any other callable
    (or ``scipy.LowLevelCallable``-free Python function) is called on the host for every element, as scipy does,
    with ``extra_arguments`` and ``extra_keywords``.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.allclose(ndimage.generic_filter(x, np.std, size=(3, 5)), scipy.ndimage.generic_filter(x, np.std, size=(3, 5)))
    True
    >>> ndimage.generic_filter(np.arange(5.0), lambda w, k: k * w[0], size=2, extra_arguments=(10,))
    array([ 0.,  0., 10., 20., 30.])
    """
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning, stacklevel=2)
        size = None
    extra_keywords = {} if extra_keywords is None else extra_keywords
    name = _WINDOW_FUNCTIONS.get(function) if callable(function) else None
    fp = None if footprint is None else np.asarray(footprint, dtype=bool)
    if name is not None and not extra_arguments and not extra_keywords and (fp is None or fp.any()):
        return _window("generic-filter", input, size, fp, output, mode, cval, origin, axes, {"function": name})
    if isinstance(input, ndarray):
        raise TypeError("generic_filter: a Python function runs on the host; give a numpy array (x.get())")
    host = np.asarray(input)
    if np.iscomplexobj(host):
        raise TypeError("Complex type not supported")
    axes = _check_axes(axes, host.ndim)
    n = len(axes)
    if fp is None:
        if size is None:
            raise RuntimeError("no footprint or filter size provided")
        fp = np.ones([operator.index(s) for s in _normalize_sequence(size, n)], dtype=bool)
    if fp.ndim != n:
        raise RuntimeError(f"footprint.ndim ({fp.ndim}) must match len(axes) ({n})")
    _check_mode(mode)
    # scipy's _expand_footprint and _expand_origin: the footprint's axes lie over ``axes`` in increasing order,
    # the origins in the order ``axes`` names them.
    full = np.expand_dims(fp, tuple(a for a in range(host.ndim) if a not in axes))
    origins = [int(o) for o in _normalize_sequence(origin, n)]
    if n < host.ndim:
        placed = [0] * host.ndim
        for o, a in zip(origins, axes):
            placed[a] = o
        origins = placed
    if any(not 0 <= s // 2 + o < s for s, o in zip(full.shape, origins)):
        raise ValueError("invalid origin")
    values = _generic_on_host(host, function, full, mode, cval, origins, extra_arguments, extra_keywords)
    if isinstance(output, np.ndarray):
        if output.shape != host.shape:
            raise RuntimeError("output shape not correct")
        np.copyto(output, _cast(values, output.dtype, False), casting="unsafe")
        return output
    return _cast(values, host.dtype if output is None else np.dtype(output), False)


def _generic_on_host(host, function, footprint, mode, cval, origins, args, kwargs):
    """generic_filter's loop for a Python function: the input extended by the border mode (numpy.pad's
    equivalent of scipy's), and ``function`` called on each element's window values (float64, C order), as
    scipy's C loop calls it. ``footprint`` and ``origins`` span every axis."""
    pads = [(s // 2 + o, s - 1 - (s // 2 + o)) for s, o in zip(footprint.shape, origins)]
    values = host.astype(np.float64)
    if _PAD_MODES[mode] == "constant":
        padded = np.pad(values, pads, mode="constant", constant_values=float(cval))
    else:
        padded = np.pad(values, pads, mode=_PAD_MODES[mode])
    windows = np.lib.stride_tricks.sliding_window_view(padded, footprint.shape)
    taken = footprint.ravel()
    result = np.empty(host.shape, np.float64)
    for index in np.ndindex(host.shape):
        result[index] = function(windows[index].ravel()[taken], *args, **kwargs)
    return result


def _grey(name, input, size, footprint, structure, output, mode, cval, origin, axes):
    if size is None and footprint is None and structure is None:
        raise ValueError("size, footprint, or structure must be specified")
    return _window(name, input, size, footprint, output, mode, cval, origin, axes, structure=structure)


def grey_erosion(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.grey_erosion.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.array_equal(ndimage.grey_erosion(x, size=(3, 3)), scipy.ndimage.grey_erosion(x, size=(3, 3)))
    True
    """
    return _grey("grey-erosion", input, size, footprint, structure, output, mode, cval, origin, axes)


def grey_dilation(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.grey_dilation.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.grey_dilation(x, structure=np.ones((3, 3)))
    >>> np.allclose(ndimage.grey_dilation(x, structure=np.ones((3, 3))), expected)
    True
    """
    return _grey("grey-dilation", input, size, footprint, structure, output, mode, cval, origin, axes)


def grey_opening(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.grey_opening.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.array_equal(ndimage.grey_opening(x, size=(3, 3)), scipy.ndimage.grey_opening(x, size=(3, 3)))
    True
    """
    return _grey("grey-opening", input, size, footprint, structure, output, mode, cval, origin, axes)


def grey_closing(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.grey_closing.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.array_equal(ndimage.grey_closing(x, size=(3, 3)), scipy.ndimage.grey_closing(x, size=(3, 3)))
    True
    """
    return _grey("grey-closing", input, size, footprint, structure, output, mode, cval, origin, axes)


def morphological_gradient(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.morphological_gradient.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.morphological_gradient(x, size=(3, 3))
    >>> np.allclose(ndimage.morphological_gradient(x, size=(3, 3)), expected)
    True
    """
    return _grey("morphological-gradient", input, size, footprint, structure, output, mode, cval, origin, axes)


def morphological_laplace(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.morphological_laplace.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.morphological_laplace(x, size=(3, 3))
    >>> np.allclose(ndimage.morphological_laplace(x, size=(3, 3)), expected)
    True
    """
    return _grey("morphological-laplace", input, size, footprint, structure, output, mode, cval, origin, axes)


def white_tophat(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.white_tophat.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.allclose(ndimage.white_tophat(x, size=(3, 3)), scipy.ndimage.white_tophat(x, size=(3, 3)))
    True
    """
    return _grey("white-tophat", input, size, footprint, structure, output, mode, cval, origin, axes)


def black_tophat(input, size=None, footprint=None, structure=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """scipy.ndimage.black_tophat.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.allclose(ndimage.black_tophat(x, size=(3, 3)), scipy.ndimage.black_tophat(x, size=(3, 3)))
    True
    """
    return _grey("black-tophat", input, size, footprint, structure, output, mode, cval, origin, axes)


# ---------------------------------------------------------------------------------------------------------------
# Binary morphology, labels, distances


def generate_binary_structure(rank, connectivity):
    """scipy.ndimage.generate_binary_structure: the 3×…×3 neighbourhood of elements within ``connectivity``
    steps of the centre (a numpy array; no device work).

    >>> from cliper import ndimage
    >>> ndimage.generate_binary_structure(2, 1).astype(int)
    array([[0, 1, 0],
           [1, 1, 1],
           [0, 1, 0]])
    """
    if connectivity < 1:
        connectivity = 1
    if rank < 1:
        return np.array(True, dtype=bool)
    grid = np.indices([3] * rank) - 1
    return np.add.reduce(np.abs(grid), 0) <= connectivity


def iterate_structure(structure, iterations, origin=None):
    """scipy.ndimage.iterate_structure: ``structure`` dilated by itself ``iterations - 1`` times."""
    structure = np.asarray(structure)
    if iterations < 2:
        return structure.copy()
    ni = iterations - 1
    shape = [n + ni * (n - 1) for n in structure.shape]
    pos = [ni * (n // 2) for n in structure.shape]
    out = np.zeros(shape, bool)
    out[tuple(slice(p, p + n) for p, n in zip(pos, structure.shape))] = structure != 0
    out = binary_dilation(out, structure, iterations=ni)
    if origin is None:
        return out
    origin = _normalize_sequence(origin, structure.ndim)
    return out, [iterations * o for o in origin]


def _binary(name, input, structure, iterations, mask, output, border_value, origin, axes):
    """A binary morphology operation with scipy's checks (``iterations`` an integer: scipy's TypeError)."""
    iterations = operator.index(iterations)
    if not isinstance(input, ndarray) and np.ndim(input) == 0:
        return _zero_dimensional(input, output)
    x, _, on_device = _input(input, complex_ok=False)
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    params = {"border_value": int(bool(border_value))}
    with _Files() as files:
        if structure is None:
            shape = [3] * n
            params["connectivity"] = 1
        else:
            s = np.asarray(structure, dtype=bool)
            if s.ndim != n:
                raise RuntimeError("structure and input must have same dimensionality")
            if not s.flags.c_contiguous or s.size < 1:
                s = np.ascontiguousarray(s)
            if s.size < 1:
                raise RuntimeError("structure must not be empty")
            shape = s.shape
            params["structure"] = files.add(s.astype(np.uint8))
        params["origin"] = _origins(origin, n, shape)
        if n > 3:
            raise RuntimeError(f"{name}: cliper's morphology spans at most 3 axes, not {n}")
        params["rank"] = n
        if mask is None:
            params["iterations"] = int(iterations) if iterations >= 1 else 0
            result = _over_axes(x, axes, lambda y: run(name, [y], params))
        else:
            result = _masked(x, axes, name, params, np.asarray(mask) != 0, iterations)
    return _deliver(result, bool, output, on_device)


def _zero_dimensional(input, output):
    """A 0-d input (which a device holds as one element of one axis): its structure is its one element (scipy's
    generate_binary_structure(0, …)), so every binary operation keeps the element's truth, decided here."""
    truth = np.asarray(input) != 0
    if isinstance(output, np.ndarray):
        np.copyto(output, truth, casting="unsafe")
        return output
    return truth.astype(bool if output is None else output)


def _masked(x, axes, name, params, mask, iterations):
    """scipy's ``mask``: only the elements under it change, iteration after iteration (until nothing changes
    when ``iterations`` < 1)."""
    if name not in ("binary-erosion", "binary-dilation"):
        raise NotImplementedError("mask= is taken by binary_erosion and binary_dilation")
    current = (np.asarray(x.get()) != 0).astype(np.float64)
    params = {**params, "iterations": 1}
    count = 0
    while True:
        step = _over_axes(asarray(current, x.device), axes, lambda y: run(name, [y], params)).get()
        updated = np.where(mask, step, current)
        count += 1
        if np.array_equal(updated, current) or (iterations >= 1 and count >= iterations):
            return asarray(updated, x.device)
        current = updated


def binary_erosion(input, structure=None, iterations=1, mask=None, output=None, border_value=0, origin=0, brute_force=False, *, axes=None):
    """scipy.ndimage.binary_erosion (non-zero is true; the result is bool).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((13, 17)) > 0.3
    >>> np.array_equal(ndimage.binary_erosion(a, iterations=2), scipy.ndimage.binary_erosion(a, iterations=2))
    True
    """
    return _binary("binary-erosion", input, structure, iterations, mask, output, border_value, origin, axes)


def binary_dilation(input, structure=None, iterations=1, mask=None, output=None, border_value=0, origin=0, brute_force=False, *, axes=None):
    """scipy.ndimage.binary_dilation.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((13, 17)) > 0.4
    >>> np.array_equal(ndimage.binary_dilation(a, iterations=2), scipy.ndimage.binary_dilation(a, iterations=2))
    True
    """
    return _binary("binary-dilation", input, structure, iterations, mask, output, border_value, origin, axes)


def binary_opening(input, structure=None, iterations=1, output=None, origin=0, mask=None, border_value=0, brute_force=False, *, axes=None):
    """scipy.ndimage.binary_opening.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((13, 17)) > 0.4
    >>> np.array_equal(ndimage.binary_opening(a), scipy.ndimage.binary_opening(a))
    True
    """
    return _binary("binary-opening", input, structure, iterations, mask, output, border_value, origin, axes)


def binary_closing(input, structure=None, iterations=1, output=None, origin=0, mask=None, border_value=0, brute_force=False, *, axes=None):
    """scipy.ndimage.binary_closing.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((13, 17)) > 0.4
    >>> np.array_equal(ndimage.binary_closing(a), scipy.ndimage.binary_closing(a))
    True
    """
    return _binary("binary-closing", input, structure, iterations, mask, output, border_value, origin, axes)


def _connected(name, input, structure, axes):
    """``label`` or ``fill-holes`` with scipy's structure rules; the device result and whether input was there."""
    x, _, on_device = _input(input, complex_ok=False)
    axes = _check_axes(axes, x.ndim)
    n = len(axes)
    params = {}
    with _Files() as files:
        if structure is not None:
            s = np.asarray(structure, dtype=bool)
            if s.ndim != n:
                raise RuntimeError("structure and input must have equal rank")
            if any(k != 3 for k in s.shape):
                raise ValueError("structure dimensions must be equal to 3")
            if name == "label" and not s.any():
                # scipy joins no neighbours then (every element its own component); the device's structure
                # names at least one element, and its centre alone joins none either.
                s[(1,) * n] = True
            params["structure"] = files.add(s.astype(np.uint8))
        if x.size == 0:
            return x, on_device
        if n > 3:
            raise RuntimeError(f"{name}: cliper spans at most 3 axes, not {n}")
        params["rank"] = n
        return _over_axes(x, axes, lambda y: run(name, [y], params)), on_device


_IFT_MARKER_TYPES = (np.int8, np.int16, np.int32, np.int64, np.intc, np.intp)


def watershed_ift(input, markers, structure=None, output=None):
    """scipy.ndimage.watershed_ift: every element takes the label of the marker joined to it by the path whose
    largest step in value is smallest (the image foresting transform), ties as scipy's bucket queue breaks them —
    negative (background) markers last. ``input`` must be uint8 or uint16 (a device array: values 0 to 65535),
    ``markers`` signed integers; the result has the markers' type (or ``output``'s). Runs on the host in Rust.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> image = (np.random.default_rng(0).random((13, 17)) * 5).astype(np.uint8) * 40
    >>> markers = np.zeros(image.shape, np.int16)
    >>> markers[2, 2], markers[10, 14], markers[0, 16] = 1, 2, -1
    >>> np.array_equal(ndimage.watershed_ift(image, markers), scipy.ndimage.watershed_ift(image, markers))
    True
    """
    on_device = isinstance(input, ndarray)
    if on_device:
        image = input.get()
    else:
        image = np.asarray(input)
        if image.dtype.type not in (np.uint8, np.uint16):
            raise TypeError("only 8 and 16 unsigned inputs are supported")
    if structure is None:
        structure = generate_binary_structure(image.ndim, 1)
    structure = np.asarray(structure, dtype=bool)
    if structure.ndim != image.ndim:
        raise RuntimeError("structure and input must have equal rank")
    if any(n != 3 for n in structure.shape):
        raise RuntimeError("structure dimensions must be equal to 3")
    labels = markers.get() if isinstance(markers, ndarray) else np.asarray(markers)
    if image.shape != labels.shape:
        raise RuntimeError("input and markers must have equal shape")
    if isinstance(markers, ndarray) and np.array_equal(labels, np.round(labels)):
        labels = labels.astype(np.int64)
    if labels.dtype.type not in _IFT_MARKER_TYPES:
        raise RuntimeError("marker should be of integer type")
    if isinstance(output, np.ndarray):
        if output.dtype.type not in _IFT_MARKER_TYPES:
            raise RuntimeError("output should be of integer type")
        if output.shape != image.shape:
            raise RuntimeError("output shape not correct")
    if not 1 <= image.ndim <= 3:
        raise RuntimeError(f"watershed_ift: cliper takes 1 to 3 axes, not {image.ndim}")
    dtype = labels.dtype if output is None or isinstance(output, np.ndarray) else np.dtype(output)
    if image.size == 0:
        result = labels.astype(dtype)
    else:
        with _Files() as files:
            params = {"structure": files.add(structure.astype(np.uint8))}
            handles = [asarray(np.asarray(a, dtype=np.float64)) for a in (image, labels)]
            result = run("watershed-ift", handles, params).get().astype(dtype)
    if isinstance(output, np.ndarray):
        output[...] = result.astype(output.dtype)
        return output
    return asarray(result, input.device) if on_device else result


def label(input, structure=None, output=None):
    """scipy.ndimage.label: ``(labels, num_features)``, the connected components of the non-zero elements
    numbered 1, 2, … in scipy's order; only ``num_features`` when ``output`` is an array (filled in place).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((20, 20)) > 0.6
    >>> labels, n = ndimage.label(a)
    >>> expected, m = scipy.ndimage.label(a)
    >>> n == m and np.array_equal(labels, expected)
    True
    """
    if isinstance(input, ndarray):
        host_dtype = input.dtype
    else:
        host_dtype = np.asarray(input).dtype
        if host_dtype.kind == "c":
            raise TypeError("Complex type not supported")
    result, on_device = _connected("label", input, structure, None)
    values = result.get()
    count = int(values.max()) if values.size else 0
    if isinstance(output, np.ndarray):
        if output.shape != values.shape:
            raise ValueError("output shape not correct")
        np.copyto(output, values, casting="unsafe")
        return count
    dtype = np.int32 if output is None else np.dtype(output)
    if output is not None and np.dtype(output).itemsize < 4 and count >= np.iinfo(np.dtype(output)).max:
        raise RuntimeError("insufficient bit-depth in requested output type")
    labels = values.astype(dtype)
    return (asarray(labels, result.device) if on_device else labels), count


def binary_fill_holes(input, structure=None, output=None, origin=0, *, axes=None):
    """scipy.ndimage.binary_fill_holes: the zero regions that do not reach the edge become one (bool).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((13, 17)) > 0.4
    >>> np.array_equal(ndimage.binary_fill_holes(a), scipy.ndimage.binary_fill_holes(a))
    True
    """
    result, on_device = _connected("fill-holes", input, structure, axes)
    return _deliver(result, bool, output, on_device)


def _distance_arg_check(distances, indices, return_distances, return_indices):
    """scipy's refusal of inconsistent distance-transform arguments (one RuntimeError naming every problem)."""
    problems = []
    if not return_distances and not return_indices:
        problems.append("at least one of return_distances/return_indices must be True")
    if isinstance(distances, np.ndarray) and not return_distances:
        problems.append("return_distances must be True if distances is supplied")
    if isinstance(indices, np.ndarray) and not return_indices:
        problems.append("return_indices must be True if indices is supplied")
    if problems:
        raise RuntimeError(", ".join(problems))


def _check_out(array, shape, dtype, messages, error):
    """A caller's ``distances=``/``indices=`` array checked as scipy does: ``messages`` for a wrong shape and a
    wrong dtype, raised as ``error`` (scipy's type for the function)."""
    if array.shape != shape:
        raise error(messages[0])
    if array.dtype.type != dtype:
        raise error(messages[1])


def _distance_results(x, on_device, compute, dt_type, outputs, returns, error):
    """scipy's results of a distance transform: the distances (``compute(False)``, as ``dt_type``) and the indices
    (``compute(True)``, int32 of shape ``(ndim,) + shape``), each returned or written into the caller's array
    (``outputs``: distances, indices), as a tuple, one array, or None. ``error``: scipy's exception type for a
    wrong output array."""
    distances, indices = outputs
    return_distances, return_indices = returns
    # scipy's messages: cdt's distances differ from the others'.
    dt_messages = (
        ("distances has wrong shape", "distances must be of int32 type")
        if error is ValueError
        else ("distances array has wrong shape", f"distances array must be {np.dtype(dt_type).name}")
    )
    results = []
    if return_indices:
        if isinstance(indices, np.ndarray):
            _check_out(indices, (x.ndim,) + x.shape, np.int32, ("indices array has wrong shape", "indices array must be int32"), error)
        found = compute(True)
        if isinstance(indices, np.ndarray):
            np.copyto(indices, found.get().astype(np.int32))
        else:
            results.append(found if on_device else found.get().astype(np.int32))
    if return_distances:
        if isinstance(distances, np.ndarray):
            _check_out(distances, x.shape, dt_type, dt_messages, error)
        found = compute(False)
        if isinstance(distances, np.ndarray):
            np.copyto(distances, found.get().astype(dt_type))
        else:
            results.insert(0, found if on_device else found.get().astype(dt_type))
    if len(results) == 2:
        return tuple(results)
    return results[0] if results else None


def _distance_input(input):
    x, _, on_device = _input(input, complex_ok=False)
    if x.ndim > 3:
        raise RuntimeError(f"cliper's distance transforms span at most 3 axes, not {x.ndim}")
    return x, on_device


def distance_transform_edt(input, sampling=None, return_distances=True, return_indices=False, distances=None, indices=None):
    """scipy.ndimage.distance_transform_edt: each non-zero element's Euclidean distance to the nearest zero
    (``sampling``: the spacing per axis), and with ``return_indices`` that zero's index (int32, shape
    ``(ndim,) + shape``; ties to the lower position axis by axis, as scipy — with a spacing whose squares are not
    whole numbers a near-tie may round the other way). Without any zero: +inf distances (scipy measures to a point
    outside the array) and scipy's indices (-1 on the first axis, 0 on the others).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((13, 17)) > 0.4
    >>> d, i = ndimage.distance_transform_edt(a, sampling=(1, 2), return_indices=True)
    >>> expected = scipy.ndimage.distance_transform_edt(a, sampling=(1, 2), return_indices=True)
    >>> np.allclose(d, expected[0]), np.array_equal(i, expected[1])
    (True, True)
    """
    _distance_arg_check(distances, indices, return_distances, return_indices)
    x, on_device = _distance_input(input)
    params = {}
    if sampling is not None:
        params["sampling"] = _csv(_normalize_sequence(sampling, x.ndim))

    def compute(want_indices):
        return run("distance-transform", [x], {**params, "indices": want_indices})

    return _distance_results(x, on_device, compute, np.float64, (distances, indices), (return_distances, return_indices), RuntimeError)


def distance_transform_bf(input, metric="euclidean", sampling=None, return_distances=True, return_indices=False, distances=None, indices=None):
    """scipy.ndimage.distance_transform_bf: each non-zero element's distance to the nearest zero by brute force —
    'euclidean' (float64, with ``sampling``), 'taxicab'/'cityblock'/'manhattan' or 'chessboard' (uint32) — and
    with ``return_indices`` that zero's index, ties to the highest position as scipy. Every pair of elements is
    compared on the device (in float64: scipy's arithmetic), so it is for small arrays, as scipy's.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((13, 17)) > 0.2
    >>> d, i = ndimage.distance_transform_bf(a, metric="chessboard", return_indices=True)
    >>> expected = scipy.ndimage.distance_transform_bf(a, metric="chessboard", return_indices=True)
    >>> np.array_equal(d, expected[0]), np.array_equal(i, expected[1])
    (True, True)
    """
    _distance_arg_check(distances, indices, return_distances, return_indices)
    was_on_device = isinstance(input, ndarray)
    host = input.get() if was_on_device else np.asarray(input)
    metric = metric.lower()
    if metric not in ("euclidean", "taxicab", "cityblock", "manhattan", "chessboard"):
        raise RuntimeError("distance metric not supported")
    # float64 on the device: the distances and their ties in scipy's own arithmetic.
    x, _ = _distance_input(host.astype(bool).astype(np.float64))
    params = {"metric": metric}
    if sampling is not None:
        params["sampling"] = _csv(_normalize_sequence(sampling, x.ndim))
    dt_type = np.float64 if metric == "euclidean" else np.uint32

    def compute(want_indices):
        return run("distance-transform-bf", [x], {**params, "indices": want_indices})

    return _distance_results(x, was_on_device, compute, dt_type, (distances, indices), (return_distances, return_indices), RuntimeError)


def distance_transform_cdt(input, metric="chessboard", return_distances=True, return_indices=False, distances=None, indices=None):
    """scipy.ndimage.distance_transform_cdt: each non-zero element's chamfer distance (int32) to the nearest zero
    — the fewest steps of ``metric`` ('chessboard': every neighbour; 'taxicab', 'cityblock', 'manhattan': the
    faces; or a 3 × … × 3 structure array) — -1 where none can be reached, and with ``return_indices`` that
    zero's index. scipy's two raster passes (sequential: they run on the host), so its ties too. A structure
    array is read as scipy's C code reads it: its first bytes as booleans — its truth values for bool and uint8
    arrays; a wider type's bytes (an int64 or float64 array loses steps there, as in scipy).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> a = np.random.default_rng(0).random((13, 17)) > 0.2
    >>> d, i = ndimage.distance_transform_cdt(a, metric="taxicab", return_indices=True)
    >>> expected = scipy.ndimage.distance_transform_cdt(a, metric="taxicab", return_indices=True)
    >>> np.array_equal(d, expected[0]), np.array_equal(i, expected[1])
    (True, True)
    """
    _distance_arg_check(distances, indices, return_distances, return_indices)
    x, on_device = _distance_input(input)
    with _Files() as files:
        params = {"rank": max(x.ndim, 1)}
        if isinstance(metric, str):
            if metric not in ("chessboard", "taxicab", "cityblock", "manhattan"):
                raise ValueError("invalid metric provided")
            params["metric"] = metric
        else:
            try:
                s = np.asarray(metric)
            except Exception as e:
                raise ValueError("invalid metric provided") from e
            if any(k != 3 for k in s.shape):
                raise ValueError("metric sizes must be equal to 3")
            if s.ndim != x.ndim:
                raise RuntimeError("structure and input must have equal rank")
            # scipy's C code reads the array's first bytes as its booleans, whatever its type (its test suite
            # pins that: a float64 ones((3, 3)) there has no step at all); the same bytes, the same steps here.
            s = np.frombuffer(np.ascontiguousarray(s).tobytes(), np.uint8)[: s.size].reshape(s.shape) != 0
            # Only the steps matter (the centre is never one): the centre marks a structure without any step,
            # which the structure file must not be (it names at least one element).
            s[(1,) * s.ndim] = True
            params = {"structure": files.add(s.astype(np.uint8))}

        def compute(want_indices):
            return run("distance-transform-cdt", [x], {**params, "indices": want_indices})

        return _distance_results(x, on_device, compute, np.int32, (distances, indices), (return_distances, return_indices), ValueError)


# ---------------------------------------------------------------------------------------------------------------
# Interpolation


def _interp(name, input, params, output, order, mode, cval, prefilter, extra_inputs=()):
    if not 0 <= order <= 5:
        raise RuntimeError("spline order not supported")
    _check_mode(mode, _INTERP_MODES)
    x, dtype, on_device = _input(input, complex_ok=True)
    params = {**params, "order": int(order), "mode": mode, "cval": float(np.real(cval)), "prefilter": bool(prefilter)}
    result = run(name, [x, *extra_inputs], params)
    return _deliver(result, dtype, output, on_device, rounds=True)


def zoom(input, zoom, output=None, order=3, mode="constant", cval=0.0, prefilter=True, *, grid_mode=False):
    """scipy.ndimage.zoom.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((9, 11))
    >>> np.allclose(ndimage.zoom(x, 1.7), scipy.ndimage.zoom(x, 1.7))
    True
    """
    ndim = np.ndim(input) if not isinstance(input, ndarray) else input.ndim
    if ndim < 1:
        raise RuntimeError("input and output rank must be > 0")
    factors = _normalize_sequence(zoom, ndim)
    if grid_mode and mode in ("constant", "wrap"):
        # scipy's warning: these modes pad as if the samples were points, which grid_mode says they are not.
        message = f"It is recommended to use mode = grid-{mode} instead of {mode} when grid_mode is True."
        warnings.warn(message, stacklevel=2)
    params = {"zoom": _csv(factors), "grid_mode": bool(grid_mode)}
    return _interp("zoom", input, params, output, order, mode, cval, prefilter)


def shift(input, shift, output=None, order=3, mode="constant", cval=0.0, prefilter=True):
    """scipy.ndimage.shift.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.shift(x, (1.5, -2.25), mode="nearest")
    >>> np.allclose(ndimage.shift(x, (1.5, -2.25), mode="nearest"), expected)
    True
    """
    ndim = np.ndim(input) if not isinstance(input, ndarray) else input.ndim
    if ndim < 1:
        raise RuntimeError("input and output rank must be > 0")
    params = {"shift": _csv(_normalize_sequence(shift, ndim))}
    return _interp("shift", input, params, output, order, mode, cval, prefilter)


def rotate(input, angle, axes=(1, 0), reshape=True, output=None, order=3, mode="constant", cval=0.0, prefilter=True):
    """scipy.ndimage.rotate: by ``angle`` degrees in the plane of ``axes``.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.allclose(ndimage.rotate(x, 30, order=1), scipy.ndimage.rotate(x, 30, order=1))
    True
    """
    ndim = np.ndim(input) if not isinstance(input, ndarray) else input.ndim
    axes = list(axes)
    if len(axes) != 2:
        raise ValueError("axes should contain exactly two values")
    if not all(isinstance(a, numbers.Integral) for a in axes):
        raise ValueError("axes should contain only integer values")
    axes = [a + ndim if a < 0 else a for a in axes]
    if axes[0] == axes[1] or not all(0 <= a < ndim for a in axes):
        raise ValueError("invalid rotation plane specified")
    params = {"angle": float(angle), "axes": axes, "reshape": bool(reshape)}
    return _interp("rotate", input, params, output, order, mode, cval, prefilter)


def affine_transform(input, matrix, offset=0.0, output_shape=None, output=None, order=3, mode="constant", cval=0.0, prefilter=True):
    """scipy.ndimage.affine_transform: output o reads the input at ``matrix @ o + offset``.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.affine_transform(x, [[0.9, 0.1], [-0.1, 1.1]], offset=(1, 2))
    >>> np.allclose(ndimage.affine_transform(x, [[0.9, 0.1], [-0.1, 1.1]], offset=(1, 2)), expected)
    True
    """
    ndim = np.ndim(input) if not isinstance(input, ndarray) else input.ndim
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim not in (1, 2) or m.shape[0] < 1:
        raise RuntimeError("no proper affine matrix provided")
    if isinstance(output, np.ndarray) and output_shape is None:
        output_shape = output.shape
    homogeneous = m.ndim == 2 and m.shape[1] == ndim + 1 and m.shape[0] in (ndim, ndim + 1)
    if m.shape[0] != ndim and not homogeneous:
        raise RuntimeError("affine matrix has wrong number of rows")
    if m.ndim == 2 and not homogeneous and m.shape[1] != ndim:
        # Output and input of different ranks: the device's affine-transform maps a grid onto one of its own
        # rank, so the points are computed here and interpolated by map_coordinates on the device.
        if output_shape is None or len(output_shape) != m.shape[1]:
            raise RuntimeError("affine matrix has wrong number of columns")
        grid = np.indices(output_shape, dtype=np.float64).reshape(len(output_shape), -1)
        points = m @ grid + np.asarray(_normalize_sequence(offset, ndim), dtype=np.float64)[:, None]
        coordinates = points.reshape((ndim, *output_shape))
        return map_coordinates(input, coordinates, output, order, mode, cval, prefilter)
    rows = [m] if m.ndim == 1 else list(m)
    params = {"matrix": ";".join(_csv(row) for row in rows), "offset": _csv(_normalize_sequence(offset, ndim))}
    if output_shape is not None:
        params["output_shape"] = [int(n) for n in output_shape]
    return _interp("affine-transform", input, params, output, order, mode, cval, prefilter)


def map_coordinates(input, coordinates, output=None, order=3, mode="constant", cval=0.0, prefilter=True):
    """scipy.ndimage.map_coordinates: ``input`` interpolated at ``coordinates`` (shape ``(input.ndim, …)``).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> expected = scipy.ndimage.map_coordinates(x, [[0.5, 3.2], [1.0, 7.7]], order=2)
    >>> np.allclose(ndimage.map_coordinates(x, [[0.5, 3.2], [1.0, 7.7]], order=2), expected)
    True
    """
    ndim = np.ndim(input) if not isinstance(input, ndarray) else input.ndim
    c = coordinates if isinstance(coordinates, ndarray) else np.asarray(coordinates)
    if c.shape[0] != ndim:
        raise RuntimeError("invalid shape for coordinate array")
    device = input.device if isinstance(input, ndarray) else None
    # The device reads coordinates in the data's precision: float32 ones for float32 (and complex64) data.
    dtype = input.dtype if isinstance(input, ndarray) else np.asarray(input).dtype
    real = np.float32 if device_dtype(dtype) in (np.float32, np.complex64) else np.float64
    if isinstance(c, ndarray):
        c = c if c.dtype == real else asarray(c.get().astype(real), c.device)
    else:
        c = asarray(np.asarray(c, dtype=real), device)
    return _interp("map-coordinates", input, {}, output, order, mode, cval, prefilter, (c,))


def _spline_output(output):
    """spline_filter's ``output``: a dtype (float64 by default) or an array to fill."""
    if isinstance(output, np.ndarray):
        return output.dtype, output
    return np.dtype(output), None


def spline_filter1d(input, order=3, axis=-1, output=np.float64, mode="mirror"):
    """scipy.ndimage.spline_filter1d: B-spline coefficients along one axis (float64 unless ``output`` says).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.allclose(ndimage.spline_filter1d(x, order=4, axis=0), scipy.ndimage.spline_filter1d(x, order=4, axis=0))
    True
    """
    if not 0 <= order <= 5:
        raise RuntimeError("spline order not supported")
    x, _, on_device = _input(input)
    (axis,) = _check_axes((axis,), x.ndim)
    dtype, target = _spline_output(output)
    if order in (0, 1):
        return _deliver(x, dtype, target, on_device and target is None and dtype == x.dtype)
    params = {"order": int(order), "mode": _check_mode(mode), "axis": axis - x.ndim}
    return _deliver(run("spline-filter", [x], params), dtype, target, on_device)


def spline_filter(input, order=3, output=np.float64, mode="mirror"):
    """scipy.ndimage.spline_filter: B-spline coefficients along every axis.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> x = np.random.default_rng(0).random((13, 17))
    >>> np.allclose(ndimage.spline_filter(x), scipy.ndimage.spline_filter(x))
    True
    """
    x, _, on_device = _input(input)
    dtype, target = _spline_output(output)
    result = x
    for axis in range(x.ndim):
        result = spline_filter1d(result, order, axis, result.dtype, mode)
    return _deliver(result, dtype, target, on_device)
