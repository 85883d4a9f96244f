"""scikit-image's ``skimage.measure.regionprops_table`` on a device, with scikit-image 0.26's signature, property
names, column names and types: the ``regionprops`` operation of the command line and pipelines (the same two
device passes as scipy's measurements, :mod:`cliper.ndimage`).

Properties computed: ``label``, ``area``, ``num_pixels``, ``bbox``, ``centroid``, ``centroid_weighted``,
``intensity_mean``, ``intensity_min``, ``intensity_max``, ``intensity_std``, ``equivalent_diameter_area``,
``inertia_tensor``, ``inertia_tensor_eigvals``, ``eccentricity`` and ``orientation`` (2-D), ``extent``, the
moments ``moments``, ``moments_central``, ``moments_normalized``, ``moments_hu`` (2-D) and their ``_weighted``
forms, ``area_convex``, ``solidity`` and ``feret_diameter_max`` (2-D and 3-D: exact convex hulls on the host; a
3-D region flat in a plane or on a line has skimage's empty hull, 0 and ``inf``, and its Feret diameter raises
``ValueError`` as skimage's); in pixel units (``spacing`` of ones). Other properties (``image_convex``,
perimeters, Euler numbers) raise ``ValueError``.

>>> import numpy as np, skimage.measure
>>> from cliper import measure
>>> labels = skimage.measure.label(np.random.default_rng(0).random((37, 45)) > 0.6)
>>> ours = measure.regionprops_table(labels, properties=("label", "area", "centroid", "orientation"))
>>> theirs = skimage.measure.regionprops_table(labels, properties=("label", "area", "centroid", "orientation"))
>>> all(np.allclose(ours[k], theirs[k], rtol=1e-9, atol=1e-12) for k in theirs)
True
"""

import itertools

import numpy as np

from ._array import asarray, ndarray
from ._ops import run

__all__ = ["regionprops_table"]

# Columns per property (of an image of ndim axes) and the type skimage gives them.
_WIDTH = {"bbox": lambda n: 2 * n, "centroid": lambda n: n, "centroid_weighted": lambda n: n,
          "inertia_tensor": lambda n: n * n, "inertia_tensor_eigvals": lambda n: n,
          "moments_hu": lambda n: 7, "moments_weighted_hu": lambda n: 7}
# Properties of 4^ndim columns, named by their powers along each axis (moments-0-1, …).
_MOMENTS = ("moments", "moments_central", "moments_normalized",
            "moments_weighted", "moments_weighted_central", "moments_weighted_normalized")
_ONLY_2D = ("eccentricity", "orientation", "moments_hu", "moments_weighted_hu")
_INTEGER = ("label", "num_pixels", "bbox")
_INTENSITY = ("intensity_mean", "intensity_min", "intensity_max", "intensity_std", "centroid_weighted",
              "moments_weighted", "moments_weighted_central", "moments_weighted_normalized", "moments_weighted_hu")


def _names(prop, ndim, separator):
    if prop in _MOMENTS:
        return [prop + "".join(f"{separator}{p}" for p in powers) for powers in itertools.product(range(4), repeat=ndim)]
    width = _WIDTH.get(prop)
    if width is None:
        return [prop]
    if prop == "inertia_tensor":
        return [f"{prop}{separator}{i}{separator}{j}" for i in range(ndim) for j in range(ndim)]
    return [f"{prop}{separator}{k}" for k in range(width(ndim))]


def _device(a, dtype):
    if isinstance(a, ndarray) and a.dtype == dtype:
        return a
    values = a.get() if isinstance(a, ndarray) else np.asarray(a)
    return asarray(np.ascontiguousarray(values, dtype=dtype))


def regionprops_table(label_image, intensity_image=None, properties=("label", "bbox"), *, cache=True,
                      separator="-", extra_properties=None, spacing=None):
    """skimage.measure.regionprops_table: a dict of column name → numpy array, a row per label above 0 present,
    in increasing order. A device array of labels (whole floats, as a device holds labels) is measured where it
    is, with no host copy.

    >>> import numpy as np
    >>> from cliper import measure
    >>> measure.regionprops_table(np.array([[0, 1, 1], [2, 2, 0]]), properties=("label", "area", "bbox"))
    {'label': array([1, 2]), 'area': array([2., 2.]), 'bbox-0': array([0, 1]), 'bbox-1': array([1, 0]), 'bbox-2': array([1, 2]), 'bbox-3': array([3, 2])}
    """
    if extra_properties:
        raise NotImplementedError("extra_properties: cliper computes its own properties on the device only")
    on_device = isinstance(label_image, ndarray)
    labels = label_image if on_device else np.asarray(label_image)
    if not on_device and labels.dtype.kind not in "iub":
        raise TypeError("Non-integer image types are ambiguous")
    if spacing is not None and not np.all(np.asarray(spacing, dtype=float) == 1):
        raise NotImplementedError("spacing other than 1: cliper's regionprops measure in pixels")
    properties = list(properties)
    if intensity_image is None and any(p in _INTENSITY for p in properties):
        bad = next(p for p in properties if p in _INTENSITY)
        raise AttributeError(f"Attribute '{bad}' unavailable when `intensity_image` has not been specified.")
    ndim = labels.ndim
    flat = next((p for p in properties if p in _ONLY_2D), None)
    if flat is not None and ndim != 2:
        raise NotImplementedError(f"Property {flat} is not implemented for 3D images")
    wanted = [p for p in properties if p != "label"]
    if on_device:
        # Labels on the device (whole floats, as a device holds them) are measured where they are; the intensity
        # image joins them in their type.
        dtype = labels.dtype
        device_labels = labels
    else:
        intensity_dtype = None if intensity_image is None else (
            intensity_image.dtype if isinstance(intensity_image, ndarray) else np.asarray(intensity_image).dtype)
        single = intensity_dtype == np.float32
        dtype = np.float32 if single and (labels.size == 0 or labels.max() < 2**24) else np.float64
        device_labels = _device(labels, dtype)
    inputs = [device_labels] + ([] if intensity_image is None else [_device(intensity_image, dtype)])
    table = run("regionprops", inputs, {"properties": ["label"] + wanted}).get()
    result = {}
    k = 0
    # One transposed copy makes every column contiguous: float columns are then views of it, not 10⁵-row
    # strided copies each.
    columns = np.ascontiguousarray(table.T)
    for prop in ["label"] + wanted:
        for name in _names(prop, ndim, separator):
            column = columns[k] if table.size else np.zeros(0)
            result[name] = column.astype(np.int64 if prop in _INTEGER else np.float64, copy=False)
            k += 1
    return {name: result[name] for prop in properties for name in _names(prop, ndim, separator)}
