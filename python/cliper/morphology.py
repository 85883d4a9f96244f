"""scikit-image's ``skimage.morphology`` functions that cliper computes on a device, with scikit-image 0.26's
signatures, defaults, result types and refusals.

The labelling (scipy.ndimage.label's union-find), the count per object and the removal all run on the device
(the ``remove-small-objects`` / ``remove-small-holes`` operations of the command line and pipelines).
``skeletonize`` is the ``skeletonize`` operation: Zhang's thinning on the device, Lee's on the host (its recheck
is sequential).
"""

import warnings

import numpy as np

from ._array import asarray, ndarray
from ._ops import on_device, run

__all__ = ["remove_small_objects", "remove_small_holes", "skeletonize"]

_DEPRECATED = object()


def _values(ar):
    """The array's values on the host, where scikit-image's type rules are checked. A device array holds floats:
    one of zeros and ones is taken as a mask (bool), one of whole numbers as labels (int64)."""
    if not isinstance(ar, ndarray):
        return np.asarray(ar)
    values = ar.get()
    if np.all((values == 0) | (values == 1)):
        return values.astype(bool)
    if np.all(np.isfinite(values)) and np.all(values == np.round(values)):
        return values.astype(np.int64)
    return values


def _checked(ar):
    """The values, refused as scikit-image refuses them: a type other than bool or integer, negative labels."""
    values = _values(ar)
    if values.dtype != bool and not np.issubdtype(values.dtype, np.integer):
        raise TypeError("Only bool or integer image types are supported. Got %s." % values.dtype)
    if values.dtype != bool and values.size and values.min() < 0:
        raise ValueError("Negative value labels are not supported. Try relabeling the input with "
                         "`scipy.ndimage.label` or `skimage.morphology.label`.")
    return values


def _as_given(result, ar):
    """The result where the input was: a device array stays on its device."""
    return asarray(result, ar.device) if isinstance(ar, ndarray) else result


def _max_size(name, old_name, old, max_size):
    """skimage 0.26's renaming: the deprecated parameter is passed on as ``max_size`` (so it removes sizes up to and
    including the value, as 0.26 does), with its FutureWarning."""
    if old is _DEPRECATED:
        return max_size
    warnings.warn(f"Parameter `{old_name}` is deprecated since version 0.26.0 and will be removed in 2.0.0 "
                  f"(or later). To avoid this warning, please use the parameter `max_size` instead. "
                  f"(`{name}`)", FutureWarning, stacklevel=3)
    return old


def remove_small_objects(ar, min_size=_DEPRECATED, connectivity=1, *, max_size=64, out=None):
    """skimage.morphology.remove_small_objects: objects of ``max_size`` elements or fewer set to 0 — connected
    components of a bool array (``connectivity`` 1 to ``ar.ndim``, as generate_binary_structure), or each label of
    an integer array (non-negative). Same shape and type as ``ar``; ``out`` receives it.

    >>> import numpy as np, skimage.morphology
    >>> from cliper import morphology
    >>> a = np.random.default_rng(0).random((37, 45)) > 0.6
    >>> np.array_equal(morphology.remove_small_objects(a, max_size=5),
    ...                skimage.morphology.remove_small_objects(a, max_size=5))
    True
    """
    max_size = _max_size("remove_small_objects", "min_size", min_size, max_size)
    values = _checked(ar)
    if values.dtype != bool and values.size and values.max() == 1 and max_size > 0:
        warnings.warn("Only one label was provided to `remove_small_objects`. Did you mean to use a boolean "
                      "array?", UserWarning, stacklevel=2)
    if max_size == 0:
        result = values.copy()
    else:
        (x,), _ = on_device(values)
        params = {"max_size": int(max_size), "connectivity": int(connectivity), "labelled": values.dtype != bool}
        result = run("remove-small-objects", [x], params).get().astype(values.dtype)
    if out is not None:
        out[...] = result
        return out
    return _as_given(result, ar)


def remove_small_holes(ar, area_threshold=_DEPRECATED, connectivity=1, *, max_size=64, out=None):
    """skimage.morphology.remove_small_holes: holes (connected components of zeros, those touching the edge too)
    of ``max_size`` elements or fewer filled; the result is bool (an integer input is taken as its non-zero mask,
    with scikit-image's warning).

    >>> import numpy as np, skimage.morphology
    >>> from cliper import morphology
    >>> a = np.random.default_rng(1).random((37, 45)) > 0.3
    >>> np.array_equal(morphology.remove_small_holes(a, max_size=4),
    ...                skimage.morphology.remove_small_holes(a, max_size=4))
    True
    """
    max_size = _max_size("remove_small_holes", "area_threshold", area_threshold, max_size)
    values = _checked(ar)
    if values.dtype != bool:
        warnings.warn("Any labeled images will be returned as a boolean array. Did you mean to use a boolean "
                      "array?", UserWarning, stacklevel=2)
    mask = values.astype(bool)
    if max_size == 0:
        result = mask.copy()
    else:
        (x,), _ = on_device(mask)
        result = run("remove-small-holes", [x], {"max_size": int(max_size), "connectivity": int(connectivity)})
        result = result.get().astype(bool)
    if out is not None:
        out[...] = result
        return out
    return _as_given(result, ar)


def skeletonize(image, *, method=None):
    """skimage.morphology.skeletonize: every connected component of the non-zero elements (``image.astype(bool)``)
    thinned to a line one element wide; the result is bool. ``method`` is ``'zhang'`` (2-D only; the 2-D default) or
    ``'lee'`` (2-D or 3-D; the 3-D default). The same result as scikit-image 0.26's, element for element.

    >>> import numpy as np, skimage.morphology
    >>> from cliper import morphology
    >>> from scipy import ndimage
    >>> a = ndimage.gaussian_filter(np.random.default_rng(0).random((37, 45)), 2) > 0.5
    >>> np.array_equal(morphology.skeletonize(a), skimage.morphology.skeletonize(a))
    True
    """
    mask = (image.get() if isinstance(image, ndarray) else np.asarray(image)).astype(bool)
    if method not in {"zhang", "lee", None}:
        raise ValueError(f'skeletonize method should be either "lee" or "zhang", got {method}.')
    if mask.ndim == 3 and method == "zhang":
        raise ValueError('skeletonize method "zhang" only works for 2D images.')
    if mask.ndim not in (2, 3):
        raise ValueError(f"skeletonize requires a 2D or 3D image as input, got {mask.ndim}D.")
    (x,), _ = on_device(mask)
    result = run("skeletonize", [x], {"method": method}).get().astype(bool)
    return _as_given(result, image)
