"""Device arrays (``cliper.ndarray``), devices, and how numpy arrays become device arrays and back.

A device computes in four element types: float32, float64, complex64 and complex128. numpy arrays of any other
type are converted as scipy.ndimage converts them for its own work: float16 to float32, every integer and bool
type to float64 (exact up to 2**53, as scipy's double), long double to float64.
"""

import contextvars

import numpy as np

from . import _cliper

_current_device = contextvars.ContextVar("cliper_device", default=None)


def _index_text(key):
    """A numpy basic index as cliper's ``slice`` text (``1, ::-2, ...``); IndexError for what basic indexing is
    not."""
    parts = []
    for k in key if isinstance(key, tuple) else (key,):
        if k is Ellipsis:
            parts.append("...")
        elif isinstance(k, slice):
            parts.append(":".join("" if v is None else str(int(v)) for v in (k.start, k.stop, k.step)))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            parts.append(str(int(k)))
        else:
            raise IndexError(f"cliper.ndarray takes basic indexing (integers, slices, ...), not {type(k).__name__}")
    return ",".join(parts) or "..."


def devices():
    """Every OpenCL device, as dicts (``id``, ``name``, ``platform``, ``kind``, ``memory``, ``compute_units``,
    ``double``, ``default``).

    >>> import cliper
    >>> any(d["default"] for d in cliper.devices())
    True
    """
    return _cliper.devices()


def _device_id(device):
    """The id (``"PLATFORM:DEVICE"``) a device argument names: ``None`` (the current one: ``with cliper.Device``,
    else the default), an id, an index into :func:`devices`, or a :class:`Device`."""
    if device is None:
        return _current_device.get()
    if isinstance(device, Device):
        return device.id
    if isinstance(device, (int, np.integer)) and not isinstance(device, bool):
        listed = devices()
        if not 0 <= device < len(listed):
            raise ValueError(f"device {device}: there are {len(listed)} devices (0 to {len(listed) - 1})")
        return listed[device]["id"]
    if isinstance(device, str):
        return device
    raise TypeError(f"a device is an id ('0:1'), an index or a cliper.Device, not {type(device).__name__}")


class Device:
    """A device, and a context in which calls without ``device=`` use it (as ``cupy.cuda.Device``).

    >>> import cliper, numpy as np
    >>> with cliper.Device(0):
    ...     x = cliper.asarray(np.ones(3))
    >>> x.device == cliper.devices()[0]["id"]
    True
    """

    def __init__(self, device=None):
        self.id = _device_id(device) if device is not None else _cliper.default_device()
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_current_device.set(self.id))
        return self

    def __exit__(self, *exc):
        _current_device.reset(self._tokens.pop())
        return False

    def __repr__(self):
        return f"cliper.Device({self.id!r})"


def get_device():
    """The device calls use now (``with cliper.Device(…)``, else the default).

    >>> import cliper
    >>> cliper.get_device().id == cliper.default_device()
    True
    """
    return Device(_current_device.get())


def default_device():
    """The id of the device used when none is named (``CLIPER_DEVICE`` narrows the choice)."""
    return _cliper.default_device()


def device_dtype(dtype):
    """The type a device computes ``dtype`` in: float32, float64, complex64 or complex128.

    >>> import numpy as np, cliper
    >>> [cliper.device_dtype(t).name for t in (np.uint8, np.float16, np.float32, np.int64, np.complex64)]
    ['float64', 'float32', 'float32', 'float64', 'complex64']
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return np.dtype(np.complex64 if dtype.itemsize <= 8 else np.complex128)
    if dtype.kind == "f" and dtype.itemsize <= 4:
        return np.dtype(np.float32)
    if dtype.kind in "biuf":
        return np.dtype(np.float64)
    raise TypeError(f"cliper computes numbers: a {dtype} array cannot go to a device")


def asarray(a, device=None):
    """``a`` on a device: a :class:`ndarray` (the same one when it already is, on that device).

    >>> import cliper, numpy as np
    >>> x = cliper.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> x.shape, x.dtype
    ((2, 3), dtype('float32'))
    >>> (x * 2 + 1).get()[1]
    array([ 7.,  9., 11.], dtype=float32)
    """
    target = _device_id(device)
    if isinstance(a, ndarray):
        if target is None or a.device == target:
            return a
        return ndarray(_cliper.upload(a.get(), target))
    host = np.asarray(a)
    host = np.ascontiguousarray(host, dtype=device_dtype(host.dtype))
    return ndarray(_cliper.upload(host, target))


def _operand_text(value):
    """A Python number as an expression's constant (complex constants are not part of the expression language)."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(float(value))
    raise TypeError(f"cliper arrays combine with real numbers and cliper arrays, not {type(value).__name__}")


def _expression(template, *operands):
    """Runs an element-wise expression (``"{} + {}"``) over device arrays and numbers: numbers become constants,
    numpy arrays go to the device of the first device array, and the arrays are the inputs a, b, …"""
    device = next(v.device for v in operands if isinstance(v, ndarray))
    handles, names = [], []
    for value in operands:
        if isinstance(value, (ndarray, np.ndarray)) and np.ndim(value) > 0:
            handles.append(asarray(value, device)._handle)
            names.append("abcdefgh"[len(handles) - 1])
        else:
            names.append(f"({_operand_text(value)})")
    return ndarray(_cliper.apply("expression", handles, {"expr": template.format(*names)}))


def _binary(template, reflected=False):
    def method(self, other):
        if not isinstance(other, (ndarray, np.ndarray, int, float, bool, np.number, np.bool_)):
            return NotImplemented
        return _expression(template, other, self) if reflected else _expression(template, self, other)

    return method


class ndarray:
    """An array on a device (cliper's counterpart of ``cupy.ndarray``): ``shape``, ``dtype``, ``.get()`` and
    ``numpy.asarray`` bring it back; arithmetic (``+ - * / **``, comparisons, ``abs``) runs on the device as one
    element-wise kernel; every ``cliper.ndimage`` function given one returns one, without a copy to the host.

    >>> import cliper, numpy as np
    >>> x = cliper.asarray(np.array([1.0, -2.0, 3.0]))
    >>> np.asarray(abs(x) >= 2)
    array([0., 1., 1.])
    """

    __slots__ = ("_handle",)
    __array_priority__ = 100  # numpy defers to our operators: np_array + device_array stays on the device.
    __hash__ = None

    def __init__(self, handle):
        self._handle = handle

    @property
    def shape(self):
        """The shape, a tuple."""
        return tuple(self._handle.shape)

    @property
    def dtype(self):
        """numpy's dtype of the elements: float32, float64, complex64 or complex128."""
        return np.dtype(self._handle.dtype)

    @property
    def ndim(self):
        """The number of axes."""
        return len(self._handle.shape)

    @property
    def size(self):
        """The number of elements."""
        size = 1
        for n in self._handle.shape:
            size *= n
        return size

    @property
    def device(self):
        """The id of the device holding it."""
        return self._handle.device

    def get(self):
        """A new numpy array with the elements (waits for the device)."""
        return self._handle.get()

    def synchronize(self):
        """Waits until the work computing this array (and all before it on its device) has finished."""
        self._handle.synchronize()

    def __array__(self, dtype=None, copy=None):
        host = self._handle.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self):
        return f"cliper.ndarray(shape={self.shape}, dtype={self.dtype}, device={self.device!r})"

    __add__ = _binary("{} + {}")
    __radd__ = _binary("{} + {}", reflected=True)
    __sub__ = _binary("{} - {}")
    __rsub__ = _binary("{} - {}", reflected=True)
    __mul__ = _binary("{} * {}")
    __rmul__ = _binary("{} * {}", reflected=True)
    __truediv__ = _binary("{} / {}")
    __rtruediv__ = _binary("{} / {}", reflected=True)
    __pow__ = _binary("{} ** {}")
    __rpow__ = _binary("{} ** {}", reflected=True)
    __lt__ = _binary("{} < {}")
    __le__ = _binary("{} <= {}")
    __gt__ = _binary("{} > {}")
    __ge__ = _binary("{} >= {}")
    __eq__ = _binary("{} == {}")
    __ne__ = _binary("{} != {}")

    def __neg__(self):
        return _expression("-{}", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _expression("abs({})", self)

    @property
    def T(self):
        """The axes reversed (numpy's ``.T``), on the device."""
        return ndarray(_cliper.apply("permute", [self._handle], {"axes": list(range(self.ndim))[::-1]}))

    def __getitem__(self, key):
        """numpy's basic indexing (integers, slices with any step, ``...``) as a copy on the device — numpy gives a
        view, cliper a new array (cliper's ``slice`` operation). Other keys (arrays, masks, ``None``) raise
        IndexError.

        >>> import numpy as np, cliper
        >>> x = np.arange(24.0).reshape(2, 3, 4)
        >>> bool((cliper.asarray(x)[1, ::-2, 1:3].get() == x[1, ::-2, 1:3]).all())
        True
        """
        try:
            return ndarray(_cliper.apply("slice", [self._handle], {"slice": _index_text(key)}))
        except ValueError as e:
            if "out of bounds" in str(e):
                raise IndexError(str(e)) from None
            raise

    def _reduce(self, operation, axis, keepdims, ddof=0):
        axes = None if axis is None else [int(a) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
        params = {"operation": operation, "axis": axes, "keepdims": bool(keepdims), "ddof": float(ddof)}
        return ndarray(_cliper.apply("reduce", [self._handle], params))

    def sum(self, axis=None, keepdims=False):
        """numpy's ``sum`` over ``axis`` (an int, a tuple, or every axis), on the device (real data)."""
        return self._reduce("sum", axis, keepdims)

    def prod(self, axis=None, keepdims=False):
        """numpy's ``prod``, on the device."""
        return self._reduce("prod", axis, keepdims)

    def min(self, axis=None, keepdims=False):
        """numpy's ``min`` (NaN when any element is NaN), on the device."""
        return self._reduce("min", axis, keepdims)

    def max(self, axis=None, keepdims=False):
        """numpy's ``max`` (NaN when any element is NaN), on the device."""
        return self._reduce("max", axis, keepdims)

    def mean(self, axis=None, keepdims=False):
        """numpy's ``mean``, on the device.

        >>> import numpy as np, cliper
        >>> x = np.arange(12.0).reshape(3, 4)
        >>> cliper.asarray(x).mean(axis=0).get().tolist()
        [4.0, 5.0, 6.0, 7.0]
        """
        return self._reduce("mean", axis, keepdims)

    def var(self, axis=None, ddof=0, keepdims=False):
        """numpy's ``var`` with ``ddof``, on the device."""
        return self._reduce("var", axis, keepdims, ddof)

    def std(self, axis=None, ddof=0, keepdims=False):
        """numpy's ``std`` with ``ddof``, on the device."""
        return self._reduce("std", axis, keepdims, ddof)

    def argmax(self, axis=None, keepdims=False):
        """numpy's ``argmax`` (the first maximum; the first NaN if any) as a numpy int64 array — a device holds no
        integers, so the indices come back to the host in numpy's type."""
        return self._reduce("argmax", axis, keepdims).get().astype(np.int64)

    def argmin(self, axis=None, keepdims=False):
        """numpy's ``argmin`` as a numpy int64 array (see ``argmax``)."""
        return self._reduce("argmin", axis, keepdims).get().astype(np.int64)

