"""scipy.ndimage's measurements on an OpenCL device: ``sum_labels`` (``sum``), ``mean``, ``variance``,
``standard_deviation``, ``minimum``, ``maximum``, ``minimum_position``, ``maximum_position``, ``extrema``,
``center_of_mass`` and ``find_objects`` run cliper's ``measure`` operation (two device passes, every sum in
float64 as scipy's bincount); ``median``, ``histogram``, ``value_indices`` and the general case of
``labeled_comprehension`` need every label's values sorted or listed and run on the host with numpy, as scipy
does. Signatures, index rules and result types are scipy's. Re-exported by :mod:`cliper.ndimage`.

Labels that are not whole numbers from 0 to 2**28 - 1 (negative, fractional, huge) are renumbered on the host
first, as scipy renumbers them with ``numpy.unique``.

>>> import numpy as np, scipy.ndimage
>>> from cliper import ndimage
>>> rng = np.random.default_rng(0)
>>> image = rng.random((37, 45))
>>> labels, n = scipy.ndimage.label(image > 0.7)
>>> index = np.arange(1, n + 1)
>>> np.allclose(ndimage.mean(image, labels, index), scipy.ndimage.mean(image, labels, index), rtol=1e-12)
True
>>> ndimage.center_of_mass(image, labels, 3) == scipy.ndimage.center_of_mass(image, labels, 3)
True
"""

import numpy as np

from ._array import asarray, ndarray
from ._ops import run

__all__ = [
    "center_of_mass",
    "extrema",
    "find_objects",
    "histogram",
    "labeled_comprehension",
    "maximum",
    "maximum_position",
    "mean",
    "median",
    "minimum",
    "minimum_position",
    "standard_deviation",
    "sum",
    "sum_labels",
    "value_indices",
    "variance",
]

# The statistics with a value per axis (bbox: a start and a stop per axis), as the table's columns hold them.
_VECTORS = {"minimum_position": 1, "maximum_position": 1, "center_of_mass": 1, "bbox": 2}

# The largest label the device measures directly (kernels/measure.cl's MOST_LABEL).
_MOST_LABEL = 1 << 28


def _host(a):
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


class _Regions:
    """scipy's reading of ``(input, labels, index)``: the image and a label image the device can measure (whole
    numbers from 0), the rows asked for, and whether ``index`` was a scalar (or absent: one region)."""

    def __init__(self, input, labels=None, index=None):
        if self._on_device(input, labels, index):
            return
        image = _host(input)
        if image.dtype.kind == "c":
            raise TypeError("Complex type not supported")
        self.input_dtype = image.dtype
        if labels is None:
            lab = np.ones(image.shape, np.int8)
            rows, self.scalar, self.index_shape = [1], True, ()
        else:
            image, lab = np.broadcast_arrays(image, _host(labels))
            if index is None:
                lab = (lab > 0).astype(np.int8)
                rows, self.scalar, self.index_shape = [1], True, ()
            else:
                self.scalar = np.isscalar(index) or np.ndim(index) == 0
                wanted = np.asarray(index)
                self.index_shape = wanted.shape
                lab, rows = self._numbered(lab, wanted.ravel())
        self.image = np.ascontiguousarray(image)
        self.labels = np.ascontiguousarray(lab)
        self.rows = np.asarray(rows, dtype=np.float64).ravel().tolist()
        self.device = None
        self.ndim = self.image.ndim

    def _on_device(self, input, labels, index):
        """The fast path: an image and labels already on the device, of one float type and shape, and an index of
        whole numbers — measured where they are, with no host copy. Labels that are not whole numbers match no
        index entry, as in scipy."""
        if not (isinstance(input, ndarray) and isinstance(labels, ndarray) and index is not None):
            return False
        if input.dtype != labels.dtype or input.dtype not in (np.float32, np.float64) or input.shape != labels.shape:
            return False
        wanted = np.asarray(index)
        if wanted.dtype.kind not in "iuf" or not np.all((wanted >= 0) & (wanted < _MOST_LABEL) & (wanted % 1 == 0)):
            return False
        self.input_dtype = input.dtype
        self.scalar = np.isscalar(index) or np.ndim(index) == 0
        self.index_shape = wanted.shape
        self.rows = wanted.astype(np.float64).ravel().tolist()
        self.device = (input, labels)
        self.ndim = input.ndim
        return True

    @staticmethod
    def _numbered(lab, wanted):
        """The labels and the rows of ``wanted`` as whole numbers the device measures: as they are when both are
        whole numbers in range, else renumbered by ``numpy.unique`` (1, 2, …; a row of 0 is a label absent)."""
        def whole(a):
            a = np.asarray(a)
            if a.size == 0:
                return True
            if a.dtype.kind == "b":
                return True
            if a.dtype.kind not in "iuf":
                return False
            return bool(np.all((a >= 0) & (a < _MOST_LABEL) & (np.floor(a) == a)))

        if whole(lab) and whole(wanted):
            return lab, wanted
        unique, inverse = np.unique(lab, return_inverse=True)
        at = np.clip(np.searchsorted(unique, wanted), 0, max(unique.size - 1, 0))
        found = unique.size > 0 and (unique[at] == wanted)
        return inverse.reshape(lab.shape) + 1, np.where(found, at + 1, 0)

    def measure(self, stats):
        """The table of ``stats`` (column name → values per row) from the device."""
        if self.device is not None:
            image, labels = self.device
        else:
            # float32 when the image is and every label is exact in float32; else float64
            single = self.image.dtype == np.float32 and (self.labels.size == 0 or self.labels.max() < 2**24)
            dtype = np.float32 if single else np.float64
            labels = asarray(self.labels.astype(dtype))
            image = asarray(self.image.astype(dtype, copy=False))
        table = run("measure", [labels, image], {"stats": list(stats), "index": self.rows}).get()
        ndim = self.ndim
        columns = {}
        k = 1  # column 0 is the label
        for stat in stats:
            if stat in _VECTORS:
                width = _VECTORS[stat] * ndim
                columns[stat] = table[:, k:k + width]
            else:
                width = 1
                columns[stat] = table[:, k]
            k += width
        return columns

    def values(self, column, dtype):
        """A per-row statistic in scipy's form: a scalar of ``dtype`` for a scalar index, else an array of
        ``index``'s shape."""
        if self.scalar:
            return dtype.type(column[0])
        return column.astype(dtype).reshape(self.index_shape)

    def each_label(self):
        """The host's view for the host-only statistics: for each row, the image's values under that label
        (``None`` for an absent one)."""
        if self.device is not None:
            image, labels = (a.get() for a in self.device)
        else:
            image, labels = self.image, self.labels
        flat_labels = labels.ravel()
        flat_image = image.ravel()
        order = np.argsort(flat_labels, kind="stable")
        sorted_labels = flat_labels[order]
        for row in self.rows:
            lo, hi = np.searchsorted(sorted_labels, [row, row], side="left")[0], np.searchsorted(
                sorted_labels, row, side="right")
            yield flat_image[order[lo:hi]], order[lo:hi]


def _sum_dtype(dtype):
    """The type numpy's sum of ``dtype`` values has (scipy's single-region sums are ``vals.sum()``)."""
    return np.zeros(1, dtype).sum().dtype


def sum_labels(input, labels=None, index=None):
    """scipy.ndimage.sum_labels: the sum of the values of each label (float64 per label of an index array; the
    input's sum type for one region).

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.sum_labels(np.arange(6.0).reshape(2, 3), np.array([[1, 1, 0], [2, 2, 2]]), [1, 2])
    array([ 1., 12.])
    """
    regions = _Regions(input, labels, index)
    column = regions.measure(["sum"])["sum"]
    if regions.scalar:
        return _sum_dtype(regions.input_dtype).type(column[0])
    return column.reshape(regions.index_shape)


def sum(input, labels=None, index=None):
    """scipy.ndimage.sum: ``sum_labels``.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> float(ndimage.sum(np.ones((4, 5))))
    20.0
    """
    return sum_labels(input, labels, index)


def _float64_stat(name, input, labels, index):
    regions = _Regions(input, labels, index)
    column = regions.measure([name])[name]
    return regions.values(column, np.dtype(np.float64))


def mean(input, labels=None, index=None):
    """scipy.ndimage.mean: float64 per label (NaN for a label with no element, as scipy's).

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.mean(np.arange(6.0).reshape(2, 3), np.array([[1, 1, 0], [2, 2, 2]]), [1, 2])
    array([0.5, 4. ])
    """
    return _float64_stat("mean", input, labels, index)


def variance(input, labels=None, index=None):
    """scipy.ndimage.variance: the mean squared deviation from each label's mean (float64).

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> float(ndimage.variance(np.array([1.0, 2.0, 3.0, 4.0])))
    1.25
    """
    return _float64_stat("variance", input, labels, index)


def standard_deviation(input, labels=None, index=None):
    """scipy.ndimage.standard_deviation: the square root of ``variance`` (float64).

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> float(ndimage.standard_deviation(np.array([1.0, 3.0])))
    1.0
    """
    return _float64_stat("standard_deviation", input, labels, index)


def _extreme(name, input, labels, index):
    regions = _Regions(input, labels, index)
    column = regions.measure([name])[name]
    return regions.values(column, regions.input_dtype)


def minimum(input, labels=None, index=None):
    """scipy.ndimage.minimum: in the input's type; NaN is ignored unless every value is NaN, and a label with no
    element gives 0, as scipy's.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.minimum(np.array([5.0, 2.0, 7.0, 1.0]), np.array([1, 1, 2, 2]), [1, 2])
    array([2., 1.])
    """
    return _extreme("minimum", input, labels, index)


def maximum(input, labels=None, index=None):
    """scipy.ndimage.maximum: in the input's type; NaN when a value is NaN, 0 for a label with no element.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.maximum(np.array([5.0, 2.0, 7.0, 1.0]), np.array([1, 1, 2, 2]), [1, 2])
    array([5., 7.])
    """
    return _extreme("maximum", input, labels, index)


def _tuples(regions, column, dtype):
    # numpy scalars of ``dtype``, a tuple per row, as scipy returns them; made by one walk over the flat array and
    # grouped by zip (5× faster than tuple() of each row for 10⁵ labels)
    values = np.asarray(column).astype(dtype)
    width = values.shape[1] if values.ndim == 2 else 1
    flat = iter(list(values.ravel()))
    rows = list(zip(*[flat] * width))
    return rows[0] if regions.scalar else rows


def _position_of(name, input, labels, index):
    regions = _Regions(input, labels, index)
    return _tuples(regions, regions.measure([name])[name], np.int64)


def minimum_position(input, labels=None, index=None):
    """scipy.ndimage.minimum_position: the index (a tuple) of the first minimum in C order of each label.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.minimum_position(np.array([[4.0, 1.0], [0.5, 3.0]]))
    (np.int64(1), np.int64(0))
    """
    return _position_of("minimum_position", input, labels, index)


def maximum_position(input, labels=None, index=None):
    """scipy.ndimage.maximum_position: the index (a tuple) of the first maximum in C order of each label.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.maximum_position(np.array([[4.0, 1.0], [0.5, 3.0]]), np.array([[1, 1], [2, 2]]), [1, 2])
    [(np.int64(0), np.int64(0)), (np.int64(1), np.int64(1))]
    """
    return _position_of("maximum_position", input, labels, index)


def extrema(input, labels=None, index=None):
    """scipy.ndimage.extrema: ``(minimums, maximums, minimum positions, maximum positions)`` in one measurement.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.extrema(np.array([[4.0, 1.0], [0.5, 3.0]]))
    (np.float64(0.5), np.float64(4.0), (np.int64(1), np.int64(0)), (np.int64(0), np.int64(0)))
    """
    regions = _Regions(input, labels, index)
    t = regions.measure(["minimum", "maximum", "minimum_position", "maximum_position"])
    return (
        regions.values(t["minimum"], regions.input_dtype),
        regions.values(t["maximum"], regions.input_dtype),
        _tuples(regions, t["minimum_position"], np.int64),
        _tuples(regions, t["maximum_position"], np.int64),
    )


def center_of_mass(input, labels=None, index=None):
    """scipy.ndimage.center_of_mass: the value-weighted mean index along each axis (a tuple of float64 per label).

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.center_of_mass(np.array([[0.0, 1.0], [0.0, 3.0]]))
    (np.float64(0.75), np.float64(1.0))
    """
    regions = _Regions(input, labels, index)
    return _tuples(regions, regions.measure(["center_of_mass"])["center_of_mass"], np.float64)


def find_objects(input, max_label=0):
    """scipy.ndimage.find_objects: for each label 1 … ``max_label`` (default the largest), a tuple of slices that
    bounds it, or ``None`` where the label has no element. Measured on the device; a device array (labels held as
    whole floats) is measured where it is.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.find_objects(np.array([[0, 1, 1], [3, 0, 1]]))
    [(slice(0, 2, None), slice(1, 3, None)), None, (slice(1, 2, None), slice(0, 1, None))]
    """
    if isinstance(input, ndarray):
        # Labels on the device (a device holds them as floats): measured where they are, the largest label by a
        # device reduction.
        labels = input
        top = int(input.max().get()) if input.size else 0
    else:
        labels = _host(input)
        if labels.dtype.kind not in "iub":
            # scipy's C code takes the labels as integers and refuses other types with this TypeError
            raise TypeError(f"'numpy.{labels.dtype}' object cannot be interpreted as an integer")
        top = int(labels.max()) if labels.size else 0
    count = top if max_label < 1 else int(max_label)
    if count == 0:
        return []
    index = np.arange(1, count + 1)
    if isinstance(labels, ndarray) or (top < 2**24 and count < 2**28):
        # The labels alone (a box reads no image): one float32 upload of host labels exact in float32 (labels
        # below 1 match no row, as scipy ignores them).
        device_labels = labels if isinstance(labels, ndarray) else asarray(labels.astype(np.float32))
        rows = index.astype(np.float64).tolist()
        table = run("measure", [device_labels], {"stats": ["count", "bbox"], "index": rows}).get()
        ndim = labels.ndim
        boxes = {"count": table[:, 1], "bbox": table[:, 2:2 + 2 * ndim]}
    else:
        # Larger labels: renumbered by _Regions where they pass what a device label holds.
        boxes = _Regions(np.zeros(labels.shape, np.float32), labels, index).measure(["count", "bbox"])
    ndim = labels.ndim
    # Python ints through one tolist (an absent label's NaN box made 0 first; it becomes None)
    bounds = np.where(np.isnan(boxes["bbox"]), 0, boxes["bbox"]).astype(np.int64).tolist()
    return [None if n == 0 else tuple(map(slice, box[:ndim], box[ndim:]))
            for n, box in zip(boxes["count"].tolist(), bounds)]


def median(input, labels=None, index=None):
    """scipy.ndimage.median: computed on the host with numpy (a median needs each label's values sorted), with
    scipy's rules — the mean of the two middle values, the input's type for float input.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.median(np.array([5.0, 2.0, 7.0, 1.0]), np.array([1, 1, 1, 2]), [1, 2])
    array([5., 1.])
    """
    regions = _Regions(input, labels, index)
    dtype = regions.input_dtype if regions.input_dtype.kind == "f" else np.dtype(np.float64)
    values = [np.median(v) if v.size else 0.0 for v, _ in regions.each_label()]
    return regions.values(np.asarray(values, np.float64), dtype)


def histogram(input, min, max, bins, labels=None, index=None):
    """scipy.ndimage.histogram: ``numpy.histogram(values, bins, (min, max))``'s counts of each label's values,
    computed on the host; ``None`` for a label with no element, as scipy's ``labeled_comprehension`` default.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.histogram(np.array([0.5, 1.5, 1.7, 3.9]), 0, 4, 4)
    array([1, 2, 0, 1])
    """
    def counts(values):
        return np.histogram(values, bins, (min, max))[0]

    return labeled_comprehension(input, labels, index, counts, object, None)


# The reductions labeled_comprehension runs on the device: numpy's function → the measure statistic.
_DEVICE_REDUCTIONS = {
    np.sum: "sum",
    np.mean: "mean",
    np.var: "variance",
    np.std: "standard_deviation",
    np.min: "minimum",
    np.amin: "minimum",
    np.max: "maximum",
    np.amax: "maximum",
    len: "count",
}


def labeled_comprehension(input, labels, index, func, out_dtype, default, pass_positions=False):
    """scipy.ndimage.labeled_comprehension: ``func`` of each label's values (and flat positions when
    ``pass_positions``), ``default`` for a label with no element. numpy's ``sum``, ``mean``, ``var``, ``std``,
    ``min``/``amin``, ``max``/``amax`` and ``len`` run as device measurements; any other function is called on
    the host, as scipy calls it.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.labeled_comprehension(np.arange(6.0), np.array([1, 1, 2, 2, 2, 0]), [1, 2, 3], np.mean, float, -1)
    array([ 0.5,  3. , -1. ])
    """
    as_scalar = np.isscalar(index)
    values = _host(input)
    if labels is None:
        if index is not None:
            raise ValueError("index without defined labels")
        return func(values.ravel(), np.arange(values.size)) if pass_positions else func(values.ravel())
    if index is None:
        # scipy applies func once, to every value whose label is above 0
        values, lab = np.broadcast_arrays(values, _host(labels))
        positions = np.arange(values.size).reshape(values.shape)
        return func(values[lab > 0], positions[lab > 0]) if pass_positions else func(values[lab > 0])
    stat = _DEVICE_REDUCTIONS.get(func) if not pass_positions else None
    regions = _Regions(input, labels, index)
    if stat is not None:
        table = regions.measure(["count", stat])
        values = np.where(table["count"] > 0, table[stat], default if default is not None else 0)
        result = np.asarray(values).astype(out_dtype)
    else:
        result = np.empty(len(regions.rows), dtype=out_dtype)
        for k, (values, positions) in enumerate(regions.each_label()):
            if values.size == 0:
                result[k] = default
            elif pass_positions:
                result[k] = func(values, positions)
            else:
                result[k] = func(values)
    if as_scalar:
        return result[0]
    return result.reshape(regions.index_shape)


def value_indices(arr, *, ignore_value=None):
    """scipy.ndimage.value_indices: a dict of each distinct value of an integer array → the tuple of index
    arrays where it occurs (``numpy.nonzero``'s form), computed on the host with one stable sort.

    >>> import numpy as np
    >>> from cliper import ndimage
    >>> ndimage.value_indices(np.array([[1, 0], [1, 2]]), ignore_value=0)
    {np.int64(1): (array([0, 1]), array([0, 0])), np.int64(2): (array([1]), array([1]))}
    """
    a = _host(arr)
    if a.dtype.kind not in "iu":
        raise ValueError("Parameter 'arr' must be an integer array")
    flat = a.ravel()
    order = np.argsort(flat, kind="stable")
    values, starts = np.unique(flat[order], return_index=True)
    ends = list(starts[1:]) + [flat.size]
    result = {}
    for value, lo, hi in zip(values, starts, ends):
        if ignore_value is not None and value == ignore_value:
            continue
        result[a.dtype.type(value)] = np.unravel_index(order[lo:hi], a.shape)
    return result
