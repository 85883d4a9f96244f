"""scipy.ndimage's Fourier filters (``fourier_gaussian``, ``fourier_uniform``, ``fourier_ellipsoid``,
``fourier_shift``) on an OpenCL device: each multiplies a spectrum by a transfer function in one device kernel
(the ``fourier-*`` operations), with scipy's signatures, result types and exceptions. Re-exported by
:mod:`cliper.ndimage`.

>>> import numpy as np, scipy.ndimage
>>> from cliper import ndimage
>>> spectrum = np.fft.fft2(np.random.default_rng(0).random((13, 17)))
>>> np.allclose(ndimage.fourier_gaussian(spectrum, 2.0), scipy.ndimage.fourier_gaussian(spectrum, 2.0), atol=1e-12)
True
"""

import numpy as np

from ._array import asarray, ndarray
from ._ops import run

__all__ = ["fourier_ellipsoid", "fourier_gaussian", "fourier_shift", "fourier_uniform"]

_REAL_OR_COMPLEX = (np.complex64, np.complex128, np.float32, np.float64)


def _values(value, ndim):
    """One float per axis: a scalar repeated, or exactly ``ndim`` of them (scipy's RuntimeError otherwise)."""
    if isinstance(value, str) or not np.iterable(value):
        return [float(value)] * ndim
    values = [float(v) for v in value]
    if len(values) != ndim:
        raise RuntimeError("sequence argument must have length equal to input rank")
    return values


def _output_dtype(output, dtype, complex_result):
    """scipy's result type: the input's when it is complex (or, for the filters, float32), else complex128 for
    the shift and float64 for the filters; an ``output`` type must be one scipy accepts."""
    if output is None:
        if dtype.kind == "c" or (dtype == np.float32 and not complex_result):
            return dtype
        return np.dtype(np.complex128 if complex_result else np.float64)
    allowed = _REAL_OR_COMPLEX[:2] if complex_result else _REAL_OR_COMPLEX
    chosen = output.dtype if isinstance(output, np.ndarray) else np.dtype(output)
    if chosen.type not in allowed:
        raise RuntimeError("output type not supported")
    return chosen


def _fourier(name, input, key, value, n, axis, output, complex_result=False):
    """Runs the operation ``name`` (its per-axis parameter ``key`` = ``value``) on ``input``, a spectrum, as scipy
    does; device arrays in give a device array out."""
    on_device = isinstance(input, ndarray)
    dtype = input.dtype if on_device else np.asarray(input).dtype
    if dtype.kind not in "biufc":
        raise RuntimeError("array type not supported")
    x = asarray(input)
    axis = _axis(axis, x.ndim)
    result_dtype = _output_dtype(output, np.dtype(dtype), complex_result)
    if isinstance(output, ndarray):
        raise TypeError("output= cannot be a cliper.ndarray: the result is a new device array")
    if isinstance(output, np.ndarray) and output.shape != tuple(x.shape):
        raise RuntimeError("output shape not correct")
    params = {key: _values(value, x.ndim), "n": int(n), "axis": axis}
    result = run(name, [x], params)
    if output is None and on_device:
        return result
    values = result.get()
    if values.dtype.kind == "c" and result_dtype.kind != "c":
        raise RuntimeError("output type not supported: complex values in a real output")
    values = values.astype(result_dtype, copy=False)
    if isinstance(output, np.ndarray):
        np.copyto(output, values, casting="unsafe")
        return output
    return asarray(values, result.device) if on_device else values


def _axis(axis, ndim):
    """numpy's normalize_axis_index: negative from the end, numpy's AxisError when out of range."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def fourier_gaussian(input, sigma, n=-1, axis=-1, output=None):
    """scipy.ndimage.fourier_gaussian: the spectrum ``input`` (an FFT; with ``n`` > 0 a real FFT along ``axis`` of
    a signal of ``n`` samples) times a Gaussian's transform, exp(−2π²σ²f²) per axis, computed on the device.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> half = np.fft.rfft(np.random.default_rng(1).random((9, 11)), axis=0)
    >>> expected = scipy.ndimage.fourier_gaussian(half, [1.5, 0.5], n=9, axis=0)
    >>> np.allclose(ndimage.fourier_gaussian(half, [1.5, 0.5], n=9, axis=0), expected, atol=1e-12)
    True
    """
    return _fourier("fourier-gaussian", input, "sigma", sigma, n, axis, output)


def fourier_uniform(input, size, n=-1, axis=-1, output=None):
    """scipy.ndimage.fourier_uniform: the spectrum times a box's transform, sin(π·size·f)/(π·size·f) per axis,
    computed on the device (a size ≤ 0 keeps only the zero frequency, as scipy's).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> spectrum = np.fft.fftn(np.random.default_rng(2).random((7, 10)))
    >>> np.allclose(ndimage.fourier_uniform(spectrum, 3), scipy.ndimage.fourier_uniform(spectrum, 3), atol=1e-12)
    True
    """
    return _fourier("fourier-uniform", input, "size", size, n, axis, output)


def fourier_ellipsoid(input, size, n=-1, axis=-1, output=None):
    """scipy.ndimage.fourier_ellipsoid: the spectrum times the transform of an ellipsoid (a box in 1-D, an ellipse
    in 2-D, an ellipsoid in 3-D) of diameters ``size``, computed on the device; at most three axes.

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> spectrum = np.fft.fftn(np.random.default_rng(3).random((12, 9)))
    >>> expected = scipy.ndimage.fourier_ellipsoid(spectrum, [6, 4])
    >>> np.allclose(ndimage.fourier_ellipsoid(spectrum, [6, 4]), expected, atol=1e-10)
    True
    """
    if np.ndim(input) > 3:
        raise NotImplementedError("Only 1d, 2d and 3d inputs are supported")
    return _fourier("fourier-ellipsoid", input, "size", size, n, axis, output)


def fourier_shift(input, shift, n=-1, axis=-1, output=None):
    """scipy.ndimage.fourier_shift: the spectrum times exp(−2πi·shift·f) per axis (a circular shift by ``shift``
    samples), computed on the device; the result is complex (complex128 for real input, as scipy's).

    >>> import numpy as np, scipy.ndimage
    >>> from cliper import ndimage
    >>> spectrum = np.fft.fftn(np.random.default_rng(4).random((8, 11)))
    >>> expected = scipy.ndimage.fourier_shift(spectrum, [1.5, -2])
    >>> np.allclose(ndimage.fourier_shift(spectrum, [1.5, -2]), expected, atol=1e-12)
    True
    """
    return _fourier("fourier-shift", input, "shift", shift, n, axis, output, complex_result=True)
