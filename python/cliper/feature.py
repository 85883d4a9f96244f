"""scikit-image's ``skimage.feature.peak_local_max`` on a device, with scikit-image 0.26's signature, defaults
and rules: the ``peak-local-max`` operation of the command line and pipelines. The maximum filter, the thresholds,
the border and the candidates run on the device; their sort and spacing, which are sequential, on the host in Rust
(with ``labels``, each label's search runs on the host).

>>> import numpy as np, skimage.feature
>>> from cliper import feature
>>> image = np.round(np.random.default_rng(0).random((37, 45)) * 8) / 8
>>> ours = feature.peak_local_max(image, min_distance=3, threshold_rel=0.5)
>>> np.array_equal(ours, skimage.feature.peak_local_max(image, min_distance=3, threshold_rel=0.5))
True
"""

import warnings

import numpy as np

from ._array import asarray, ndarray
from ._ops import run
from .ndimage import _Files

__all__ = ["peak_local_max"]


def _host(a):
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def _border(exclude_border, ndim):
    """skimage's checks of ``exclude_border`` (its errors), as the operation's key: a bool, a width or a list."""
    if isinstance(exclude_border, (bool, np.bool_)):
        return bool(exclude_border)
    if isinstance(exclude_border, (int, np.integer)):
        if exclude_border < 0:
            raise ValueError("`exclude_border` cannot be a negative value")
        return int(exclude_border)
    if isinstance(exclude_border, tuple):
        if len(exclude_border) != ndim:
            raise ValueError("`exclude_border` should have the same length as the dimensionality of the image.")
        for width in exclude_border:
            if not isinstance(width, int):
                raise ValueError("`exclude_border`, when expressed as a tuple, must only contain ints.")
            if width < 0:
                raise ValueError("`exclude_border` can not be a negative value")
        return list(exclude_border)
    raise TypeError("`exclude_border` must be bool, int, or tuple with the same length as the dimensionality of "
                    "the image.")


def _count(n, name):
    if n is None or (isinstance(n, float) and np.isinf(n) and n > 0):
        return None
    if n < 0:
        raise ValueError(f"{name} must be ≥ 0 (skimage's slicing makes a negative count drop peaks from the end)")
    return int(n)


def _no_region(labels, widths):
    """skimage's loop finds no region: every label above 0 lies within the border (then it returns (0, 2))."""
    inner = np.asarray(labels).astype(int, casting="safe").copy()
    for axis, width in enumerate(widths):
        if width:
            index = [slice(None)] * inner.ndim
            index[axis] = slice(None, width)
            inner[tuple(index)] = 0
            index[axis] = slice(-width, None)
            inner[tuple(index)] = 0
    return not (inner > 0).any()


def peak_local_max(image, min_distance=1, threshold_abs=None, threshold_rel=None, exclude_border=True,
                   num_peaks=np.inf, footprint=None, labels=None, num_peaks_per_label=np.inf, p_norm=np.inf):
    """skimage.feature.peak_local_max: the coordinates of the peaks, an ``(N, image.ndim)`` int64 array in
    skimage's order (highest first, ties in C order; with ``labels`` label by label). Images of 1 to 3 axes.

    Differences, refused with ``ValueError``: negative ``num_peaks`` (skimage slices with it), and with ``labels``
    a threshold below the type's lowest value (skimage then returns other labels' elements, some twice) or NaN
    within a label.

    >>> import numpy as np
    >>> from cliper import feature
    >>> img = np.zeros((7, 7))
    >>> img[3, 4], img[3, 2] = 1, 1.5
    >>> feature.peak_local_max(img, min_distance=1)
    array([[3, 2],
           [3, 4]])
    >>> feature.peak_local_max(img, min_distance=2)
    array([[3, 2]])
    """
    host = _host(image)
    if (footprint is None or np.size(footprint) == 1) and min_distance < 1:
        warnings.warn("When min_distance < 1, peak_local_max acts as finding image > max(threshold_abs, "
                      "threshold_rel * max(image)).", RuntimeWarning, stacklevel=2)
    border = _border(exclude_border, host.ndim)
    params = {
        "min_distance": int(min_distance),
        "threshold_abs": None if threshold_abs is None else float(threshold_abs),
        "threshold_rel": None if threshold_rel is None else float(threshold_rel),
        "exclude_border": border,
        "num_peaks": _count(num_peaks, "num_peaks"),
        "num_peaks_per_label": _count(num_peaks_per_label, "num_peaks_per_label"),
        "p_norm": float(p_norm),
    }
    dtype = np.float32 if host.dtype == np.float32 else np.float64
    inputs = [image if isinstance(image, ndarray) and image.dtype == dtype else asarray(np.asarray(host, dtype))]
    if labels is not None:
        lab = _host(labels)
        if lab.dtype.kind not in "iub":
            raise TypeError(f"Cannot cast array data from {lab.dtype!r} to dtype('int64') according to the rule "
                            "'safe'")
        widths = border if isinstance(border, list) else [
            int(min_distance) if border is True else int(border)] * host.ndim
        if _no_region(lab, widths):
            return np.empty((0, 2), dtype=np.int64)
        if host.dtype.kind in "iu" and threshold_abs is not None and threshold_abs < np.iinfo(host.dtype).min:
            raise ValueError("threshold_abs is below the image type's lowest value: skimage would return other "
                             "labels' elements as peaks")
        if dtype == np.float32 and lab.size and lab.max() >= 2**24:
            dtype = np.float64
            inputs = [asarray(np.asarray(host, dtype))]
        inputs.append(asarray(np.asarray(lab, dtype)))
    with _Files() as files:
        if footprint is not None:
            fp = np.asarray(footprint)
            params["footprint"] = files.add((fp != 0).astype(np.uint8))
        table = run("peak-local-max", inputs, {k: v for k, v in params.items() if v is not None}).get()
    return table.astype(np.int64).reshape(-1, host.ndim)
