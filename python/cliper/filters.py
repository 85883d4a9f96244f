"""scikit-image's automatic thresholds (``skimage.filters``) on any OpenCL device: the histogram is built on the
device in one pass over the image, the search over its bins runs on the host (Li's method iterates over the
values, a pass per step). A device array (``cliper.asarray``) stays on the device: only the threshold comes back.

Each function takes what scikit-image's does and returns what it returns: a bin centre of scikit-image's
histogram — 256 uniform bins over the range for float images (a numpy scalar of the image's type), one bin per
integer from the minimum to the maximum for integer images (an ``int64``). An image with NaN or infinity is
refused with ``ValueError``, as scikit-image's histogram refuses a range that is not finite.

>>> import numpy as np
>>> from cliper import filters
>>> image = np.array([[10, 12, 11, 200], [11, 199, 201, 10]], dtype=np.uint8)
>>> int(filters.threshold_otsu(image))
12
>>> image > filters.threshold_otsu(image)
array([[False, False, False,  True],
       [False,  True,  True, False]])
"""

import numpy as np

from ._array import ndarray
from ._ops import on_device, run

__all__ = ["threshold_otsu", "threshold_yen", "threshold_triangle", "threshold_multiotsu", "threshold_li"]

# The integer types scikit-image bins one bin per integer and the device's counts hold (at most 65536 bins).
_SMALL_INTEGERS = {"uint8": "u8", "int8": "i8", "uint16": "u16", "int16": "i16"}
_MOST_BINS = 1 << 16


def _integer_type(values, dtype):
    """The step key that asks for scikit-image's integer rule, or ``None`` for a float image."""
    if dtype.kind not in "iub":
        return None
    if dtype.name in _SMALL_INTEGERS:
        return _SMALL_INTEGERS[dtype.name]
    # Wider integers: one bin per integer fits the device's counts when the values span at most 65536.
    span = int(values.max()) - int(values.min()) + 1 if values.size else 0
    if span > _MOST_BINS:
        raise NotImplementedError(f"an integer image spanning {span} values needs {span} bins; cliper counts at "
                                  f"most {_MOST_BINS} (cast it to float64 for {_MOST_BINS}-or-fewer uniform bins)")
    return "u16"


def _thresholds(image, method, nbins, classes=None, hist=None, centres=True):
    """The threshold(s) as a numpy array in the type scikit-image gives them, and the image on the host (``None``
    for a device array, which stays on the device: reading 8192² floats back cost more than the threshold). With
    ``centres`` (a bin centre) an integer image's threshold is an ``int64``, else a ``float64``."""
    if hist is not None:
        raise NotImplementedError(f"threshold_{method}: hist= (a histogram given instead of the image) is not "
                                  f"offered; pass the image")
    if image is None:
        raise Exception("Either image or hist must be provided.")
    on_the_device = isinstance(image, ndarray)
    host = None if on_the_device else np.asarray(image)
    dtype, shape = (image.dtype, image.shape) if on_the_device else (host.dtype, host.shape)
    if dtype.kind not in "biuf":
        raise TypeError(f"threshold_{method}: a {dtype} image has no threshold (real numbers only)")
    if int(np.prod(shape)) == 0:
        raise ValueError(f"threshold_{method}: an empty image (shape {shape}) has no threshold")
    if dtype == np.bool_:
        host, dtype = host.astype(np.uint8), np.dtype(np.uint8)
    params = {"method": method, "nbins": int(nbins)}
    if classes is not None:
        params["classes"] = int(classes)
    # A device array holds floats (float32 or float64), so only a host array can ask for the integer rule.
    integer_type = None if on_the_device else _integer_type(host, dtype)
    if integer_type is not None:
        params["integer_type"] = integer_type
    (x,), _ = on_device(image if on_the_device else host)
    values = run("threshold-value", [x], params).get()
    if integer_type is not None:
        return values.astype(np.int64 if centres else np.float64), host
    return values.astype(dtype if dtype.kind == "f" else np.float64), host


def threshold_otsu(image=None, nbins=256, *, hist=None):
    """skimage.filters.threshold_otsu: the threshold maximising the variance between the two classes.

    >>> import numpy as np
    >>> from cliper.filters import threshold_otsu
    >>> image = np.array([0.0, 0.1, 0.2, 0.1, 5.0, 5.2, 5.1, 5.0])
    >>> float(threshold_otsu(image))  # skimage's too: the centre of the bin just under the low cluster's 0.2
    0.19296875000000002
    """
    # scikit-image's answer for an image of one value: that value (of its type; on the device, the search's)
    host = None if image is None or isinstance(image, ndarray) else np.asarray(image)
    if host is not None and host.size and np.all(host == host.reshape(-1)[0]):
        return host.reshape(-1)[0]
    values, _ = _thresholds(image, "otsu", nbins, hist=hist)
    return values[0]


def threshold_yen(image=None, nbins=256, *, hist=None):
    """skimage.filters.threshold_yen: Yen's maximum correlation criterion.

    >>> import numpy as np
    >>> from cliper.filters import threshold_yen
    >>> int(threshold_yen(np.array([[1, 2, 2, 9], [8, 9, 9, 1]], dtype=np.uint8)))
    2
    """
    values, _ = _thresholds(image, "yen", nbins, hist=hist)
    return values[0]


def threshold_triangle(image, nbins=256):
    """skimage.filters.threshold_triangle: the bin farthest from the line joining the histogram's peak to the far
    end of its longer side.

    >>> import numpy as np
    >>> from cliper.filters import threshold_triangle
    >>> int(threshold_triangle(np.array([1, 1, 1, 1, 2, 3, 5, 8], dtype=np.uint8)))  # skimage's too
    2
    """
    values, host = _thresholds(image, "triangle", nbins)
    if host is not None and np.all(host == host.reshape(-1)[0]):
        return host.reshape(-1)[0]  # one value: scikit-image answers the image's first element, of its type
    return values[0]


def threshold_multiotsu(image=None, classes=3, nbins=256, *, hist=None):
    """skimage.filters.threshold_multiotsu: ``classes − 1`` thresholds maximising the variance between classes.

    >>> import numpy as np
    >>> from cliper.filters import threshold_multiotsu
    >>> threshold_multiotsu(np.array([1, 1, 5, 5, 9, 9, 9, 1], dtype=np.uint8)).tolist()
    [1, 5]
    """
    values, _ = _thresholds(image, "multiotsu", nbins, classes=classes, hist=hist)
    return values


def threshold_li(image, *, tolerance=None, initial_guess=None, iter_callback=None):
    """skimage.filters.threshold_li: Li's iterative minimum cross-entropy threshold, from the mean, with
    scikit-image's default tolerance. A float image is iterated over its values on the device (a pass per step; NaN
    left out, as scikit-image leaves it, and infinities too), an integer image over its histogram. The result is
    scikit-image's, within a few ulps of the image's type for float images (numpy sums pairwise, cliper in double);
    ``image > threshold`` splits the image as scikit-image's does.

    >>> import numpy as np
    >>> from cliper.filters import threshold_li
    >>> float(threshold_li(np.array([[1, 2, 2, 9], [8, 9, 9, 1]], dtype=np.uint8)))
    3.6451744489695383
    """
    for name, value in (("tolerance", tolerance), ("initial_guess", initial_guess), ("iter_callback", iter_callback)):
        if value is not None:
            raise NotImplementedError(f"threshold_li: {name}= is not offered; cliper starts from the mean with "
                                      f"scikit-image's default tolerance")
    # scikit-image's answers before iterating, in its types: NaN when nothing but NaN is left, the value of an
    # image of one value (infinities count), 0.0 for infinities of both signs and nothing finite. A device array
    # stays there: the library gives the same values, as numpy scalars of its type.
    if not isinstance(image, ndarray):
        host = np.asarray(image)
        kept = host[~np.isnan(host)] if host.dtype.kind == "f" else host.reshape(-1)
        if kept.size == 0:
            return np.nan
        if np.all(kept == kept[0]):
            return kept[0]
        if host.dtype.kind == "f" and not np.isfinite(kept).any():
            return 0.0
    values, _ = _thresholds(image, "li", 256, centres=False)
    return values[0]
