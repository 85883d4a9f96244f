"""scikit-image's ``skimage.segmentation.watershed`` computed by cliper, with scikit-image 0.26's signature,
defaults, result type and refusals.

The flood is exactly sequential (the queue's order decides every tie), so cliper runs it on the host in Rust, in
the device's buffers (the ``watershed`` operation of the command line and pipelines); numpy arrays in give numpy
arrays out, device arrays (:class:`cliper.ndarray`) in give a device array out.
"""

import tempfile
import os

import numpy as np

from ._array import asarray, ndarray
from ._ops import run

__all__ = ["watershed"]


def _host(a):
    """The values on the host (a device array is read back)."""
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def _grid_seeds(shape, count):
    """skimage.util.regular_seeds(shape, count): about ``count`` points on a regular grid (spaced alike along every
    axis, the shortest axes first when they cannot hold that spacing), numbered 1, 2, … in C order (int64)."""
    shape = np.asarray(shape)
    ndim = len(shape)
    seeds = np.zeros(tuple(shape), dtype=int)
    size = float(np.prod(shape))
    if size <= count:
        where = (slice(None),) * ndim
    else:
        order = np.argsort(np.argsort(shape))
        dims = np.sort(shape)
        steps = np.full(ndim, (size / count) ** (1.0 / ndim))
        if (dims < steps).any():
            for axis in range(ndim):
                steps[axis] = dims[axis]
                rest = float(np.prod(dims[axis + 1:]))
                steps[axis + 1:] = (rest / count) ** (1.0 / (ndim - axis - 1))
                if (dims >= steps).all():
                    break
        starts = (steps // 2).astype(int)
        steps = np.round(steps).astype(int)
        spaced = [slice(start, None, step) for start, step in zip(starts, steps)]
        where = tuple(spaced[i] for i in order)
    seeds[where] = 1 + np.arange(seeds[where].size).reshape(seeds[where].shape)
    return seeds


def watershed(image, markers=None, connectivity=1, offset=None, mask=None, compactness=0, watershed_line=False):
    """skimage.segmentation.watershed: the basins of ``image`` flooded from ``markers`` (an array of labels, 0 for
    none; a number of markers on a regular grid; or None, the local minima labelled), lowest values first, ties in
    scikit-image's queue order — so plateaus split exactly as scikit-image splits them. ``connectivity`` is a number
    of orthogonal steps or a footprint (with ``offset``, its centre); ``mask`` limits the flood; ``compactness`` > 0
    is the compact watershed; ``watershed_line`` leaves 0 where basins meet. Returns the labels in the markers'
    type (int32 for ``markers=None``). Images of 1 to 3 axes.

    >>> import numpy as np, skimage.segmentation
    >>> from cliper import segmentation
    >>> rng = np.random.default_rng(0)
    >>> image = np.round(rng.random((37, 45)) * 4)
    >>> markers = np.zeros(image.shape, np.int32)
    >>> markers[5, 5], markers[30, 40], markers[20, 10] = 1, 2, 3
    >>> np.array_equal(segmentation.watershed(image, markers, watershed_line=True),
    ...                skimage.segmentation.watershed(image, markers, watershed_line=True))
    True
    """
    on_device = isinstance(image, ndarray)
    device = image.device if on_device else None
    values = np.asarray(_host(image), dtype=np.float64)
    if not 1 <= values.ndim <= 3:
        raise NotImplementedError(f"cliper's watershed takes images of 1 to 3 axes, not {values.ndim}")
    inside = None
    if mask is not None:
        inside = np.asarray(_host(mask), dtype=bool)
        if inside.shape != values.shape:
            raise ValueError(f"`mask` (shape {inside.shape}) must have same shape as `image` (shape {values.shape})")
    params = {"compactness": float(compactness), "watershed_line": bool(watershed_line)}
    if markers is None:
        labels, dtype = values, np.dtype(np.int32)
        params["minima"] = True
    elif not isinstance(markers, (np.ndarray, ndarray, list, tuple)):
        share = 1.0 if inside is None else inside.sum() / values.size
        labels = _grid_seeds(values.shape, int(markers / share))
        if inside is not None:
            labels *= inside
        dtype = labels.dtype
    else:
        labels = np.asanyarray(_host(markers))
        if labels.shape != values.shape:
            raise ValueError(f"`markers` (shape {labels.shape}) must have same shape as `image` (shape "
                             f"{values.shape})")
        if labels.dtype.kind not in "biu":
            if isinstance(markers, ndarray) and np.array_equal(labels, np.round(labels)):
                labels = labels.astype(np.int64)
            else:
                raise TypeError(f"markers of type {labels.dtype}: give integer labels")
        dtype = labels.dtype
    if not isinstance(connectivity, (np.ndarray, list, tuple)) and np.isscalar(connectivity):
        params["connectivity"] = int(connectivity)
        footprint = None
    else:
        footprint = np.array(connectivity, bool)
        if footprint.ndim != values.ndim:
            raise ValueError("Connectivity dimension must be same as image")
        if offset is None and any(n % 2 == 0 for n in footprint.shape):
            raise ValueError("Connectivity array must have an unambiguous center")
        if markers is None:
            raise ValueError("markers=None needs connectivity as a number (scikit-image labels the minima with "
                             "generate_binary_structure)")
    if offset is not None:
        params["offset"] = [int(o) for o in np.atleast_1d(offset)]
    if values.size == 0:
        result = np.zeros(values.shape, dtype)
        return asarray(result, device) if on_device else result
    arrays = [values, np.asarray(labels, dtype=np.float64)]
    if inside is not None:
        arrays.append(inside.astype(np.float64))
    with tempfile.TemporaryDirectory(prefix="cliper-") as folder:
        if footprint is not None:
            params["structure"] = os.path.join(folder, "footprint.npy")
            np.save(params["structure"], footprint.astype(np.uint8))
        handles = [asarray(a, device) for a in arrays]
        result = run("watershed", handles, params)
    labelled = result.get().astype(dtype)
    return asarray(labelled, device) if on_device else labelled
