"""numpy.fft's transforms on a device (cliper's ``fft``, ``rfft`` and ``fftshift`` operations), with numpy's
names, arguments and normalisations. Complex results are complex64 for float32/complex64 data, else complex128
(as numpy 2 does).

>>> import numpy as np
>>> from cliper import fft
>>> x = np.random.default_rng(0).random((6, 10)) + 1j
>>> np.allclose(fft.fftn(x), np.fft.fftn(x)) and np.allclose(fft.irfft(fft.rfft(x.real)), x.real)
True
"""

import numpy as np

from ._array import ndarray
from ._ops import as_complex, back, on_device, run

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "fftshift", "ifftshift"]


def _norm(norm):
    norm = "backward" if norm is None else norm
    if norm not in ("backward", "ortho", "forward"):
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return norm


def _axes(a, s, axes):
    ndim = np.ndim(a) if not isinstance(a, ndarray) else a.ndim
    if axes is None:
        axes = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    axes = [int(x) for x in axes]
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    if s is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    return [axis % ndim for axis in axes]


def _fitted(a, axes, lengths):
    """numpy's ``n``/``s``: each axis cropped or zero-padded to its length (on the host for numpy data)."""
    if lengths is None:
        return a
    shape = a.shape
    if all(shape[axis] == n for axis, n in zip(axes, lengths)):
        return a
    if isinstance(a, ndarray):
        raise NotImplementedError("n/s that change a device array's length: pad or crop it first")
    for axis, n in zip(axes, lengths):
        if n < 1:
            raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
        index = [slice(None)] * a.ndim
        index[axis] = slice(0, min(n, shape[axis]))
        a = a[tuple(index)]
        if n > a.shape[axis]:
            width = [(0, 0)] * a.ndim
            width[axis] = (0, n - a.shape[axis])
            a = np.pad(a, width)
    return a


def _complex(a, s, axes, norm, inverse):
    axes = _axes(a, s, axes)
    a = _fitted(as_complex(a), axes, s)
    (x,), stay = on_device(a)
    if x.size == 0:
        raise ValueError("Invalid number of FFT data points (0) specified.")
    return back(run("fft", [x], {"inverse": inverse, "axes": axes, "norm": _norm(norm)}), stay)


def fftn(a, s=None, axes=None, norm=None):
    """numpy.fft.fftn."""
    return _complex(a, s, axes, norm, False)


def ifftn(a, s=None, axes=None, norm=None):
    """numpy.fft.ifftn."""
    return _complex(a, s, axes, norm, True)


def fft(a, n=None, axis=-1, norm=None):
    """numpy.fft.fft: along one axis."""
    return _complex(a, None if n is None else [n], [axis], norm, False)


def ifft(a, n=None, axis=-1, norm=None):
    """numpy.fft.ifft."""
    return _complex(a, None if n is None else [n], [axis], norm, True)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """numpy.fft.fft2."""
    return _complex(a, s, axes, norm, False)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """numpy.fft.ifft2."""
    return _complex(a, s, axes, norm, True)


def rfftn(a, s=None, axes=None, norm=None):
    """numpy.fft.rfftn: real data to the half spectrum of its last transformed axis."""
    axes = _axes(a, s, axes)
    if not isinstance(a, ndarray):
        a = np.asarray(a)
        if a.dtype.kind == "c":
            raise TypeError("rfftn takes real data")
        a = a.astype(np.float32 if a.dtype == np.float32 else np.float64, copy=False)
    a = _fitted(a, axes, s)
    (x,), stay = on_device(a)
    return back(run("rfft", [x], {"axes": axes, "norm": _norm(norm)}), stay)


def irfftn(a, s=None, axes=None, norm=None):
    """numpy.fft.irfftn: a half spectrum back to real data (``s[-1]`` the real length of the last axis, default
    2·(m − 1))."""
    axes = _axes(a, s, axes)
    a = as_complex(a)
    last = axes[-1]
    length = 2 * (a.shape[last] - 1) if s is None else int(s[-1])
    if length < 1:
        raise ValueError(f"Invalid number of data points ({length}) specified")
    lengths = None if s is None else list(s[:-1]) + [length // 2 + 1]
    a = _fitted(a, axes, lengths)
    (x,), stay = on_device(a)
    return back(run("rfft", [x], {"inverse": True, "axes": axes, "norm": _norm(norm), "length": length}), stay)


def rfft(a, n=None, axis=-1, norm=None):
    """numpy.fft.rfft."""
    return rfftn(a, None if n is None else [n], [axis], norm)


def irfft(a, n=None, axis=-1, norm=None):
    """numpy.fft.irfft."""
    return irfftn(a, None if n is None else [n], [axis], norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """numpy.fft.rfft2."""
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """numpy.fft.irfft2."""
    return irfftn(a, s, axes, norm)


def _shift(x, axes, inverse):
    if isinstance(axes, (int, np.integer)):
        axes = [axes]
    (d,), stay = on_device(x if isinstance(x, ndarray) else np.asarray(x))
    params = {"inverse": inverse, "axes": None if axes is None else [int(a) for a in axes]}
    result = back(run("fftshift", [d], params), stay)
    if not stay and not isinstance(x, ndarray) and np.asarray(x).dtype != result.dtype:
        result = result.astype(np.asarray(x).dtype)
    return result


def fftshift(x, axes=None):
    """numpy.fft.fftshift: the zero frequency to the centre."""
    return _shift(x, axes, False)


def ifftshift(x, axes=None):
    """numpy.fft.ifftshift: its inverse (they differ for odd lengths)."""
    return _shift(x, axes, True)
